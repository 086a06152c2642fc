"""Benchmark: reading a wide numeric CSV (gene-expression shape) against plain pandas.

Run with ``python -m hierlab.benchmarks.wide_csv [--columns 20000] [--rows 12] [--repeat 3]``.
Measured side by side in one run (best of ``--repeat`` runs each):

* ``hierlab``: :func:`hierlab.io.read_dataset_bytes` of the whole file (decoding, the format
  guess, the header checks, labels, the taxonomy and the data set);
* ``pandas``: ``pandas.read_csv`` of the same numbers (the file without its label column) with a
  fixed dtype, ``dtype=float64``: the floor any CSV reader built on pandas stands on.

It prints both times and their ratio (the target: at most 2x at 20,000 columns) and checks
that both read the same matrix. No test asserts on these times.
"""

from __future__ import annotations

import argparse
import io

import numpy as np
import pandas as pd

from hierlab.benchmarks.taxonomy import best_of
from hierlab.io import read_dataset_bytes


def wide_csv(n_rows: int, n_columns: int, seed: int = 0) -> tuple[bytes, bytes]:
    """A labelled wide CSV and the same numbers without the label column.

    Returns
    -------
    labelled : bytes
        ``label,f0,...`` then one row per sample (labels ``a``/``b``/``c``, numbers with three
        decimals, as expression values are written).
    numbers : bytes
        The feature columns only, header included.
    """
    rng = np.random.default_rng(seed)
    values = np.round(rng.gamma(2.0, 3.0, size=(n_rows, n_columns)), 3)
    header = ",".join(f"g{j}" for j in range(n_columns))
    body = [",".join(map(repr, row.tolist())) for row in values]
    labels = ["abc"[i % 3] for i in range(n_rows)]
    numbers = header + "\n" + "\n".join(body) + "\n"
    labelled = "label," + header + "\n" + "\n".join(f"{y},{r}" for y, r in zip(labels, body))
    return (labelled + "\n").encode(), numbers.encode()


def run(n_rows: int = 12, n_columns: int = 20_000, repeat: int = 3) -> dict[str, float]:
    """Time both readers on one generated file; check they agree.

    Returns
    -------
    dict
        ``{"hierlab": seconds, "pandas": seconds, "ratio": hierlab / pandas, "bytes": size}``.
    """
    labelled, numbers = wide_csv(n_rows, n_columns)
    t_pd, df = best_of(lambda: pd.read_csv(io.BytesIO(numbers), dtype=np.float64), repeat)
    t_hl, ds = best_of(lambda: read_dataset_bytes(labelled, "wide.csv"), repeat)
    if not np.array_equal(np.asarray(ds.X), df.to_numpy()):
        raise AssertionError("hierlab and pandas read different numbers")
    return {"hierlab": t_hl, "pandas": t_pd, "ratio": t_hl / t_pd, "bytes": len(labelled)}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry: print the two times and their ratio."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--columns", type=int, default=20_000)
    ap.add_argument("--rows", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    res = run(args.rows, args.columns, args.repeat)
    print(
        f"wide CSV: {args.rows} rows x {args.columns:,} columns ({res['bytes'] / 1e3:.0f} KB), "
        f"best of {args.repeat}"
    )
    print(f"  hierlab read_dataset_bytes          {res['hierlab']:8.3f} s")
    print(f"  pandas.read_csv(dtype=float64)      {res['pandas']:8.3f} s")
    print(f"  ratio hierlab / pandas              {res['ratio']:8.2f}x")


if __name__ == "__main__":
    main()
