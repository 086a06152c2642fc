"""Scale of the data layer: the text generator up to 10^6 documents x 10^4 classes, and readers.

Run ``python -m hierlab.benchmarks.datasets`` (``--quick`` stops at 10^5 documents).
It prints, measured side by side in one run:

- ``make_hierarchical_text`` time for growing document counts (10^4 classes, 10^5 words,
  depth 3) and the time per 10^6 tokens, whose ratio across sizes shows the linear scaling;
- the guide-table sampler against ``np.searchsorted`` on the Zipf background (the speed-up);
- reading the same data as CSV and svmlight (``load_dataset``) against pandas / scikit-learn's
  plain parsers (the overhead of validation and label resolution).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def _t(fn: Callable[..., T], *a: Any, **k: Any) -> tuple[T, float]:
    """``fn(*a, **k)`` and its wall-clock seconds."""
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def _tc(fn: Callable[..., T], *a: Any, **k: Any) -> tuple[T, float, float]:
    """``fn(*a, **k)``, its wall-clock and CPU seconds (the CPU time is what counts on a loaded
    shared machine)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0, time.process_time() - c0


def main(argv: list[str] | None = None) -> int:
    """Print the measurements; return 0."""
    from hierlab.datasets.text import CdfSampler, make_hierarchical_text, zipf_cdf

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="stop at 10^5 documents")
    args = ap.parse_args(argv)

    print("make_hierarchical_text (n_classes=10^4, n_features=10^5, depth=3, doc_length=50)")
    print(f"{'documents':>12} {'wall s':>8} {'CPU s':>8} {'nnz':>12} {'CPU s per 10^6 tokens':>22}")
    sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    per_token = []
    for n in sizes:
        (tr, te), dt, ct = _tc(
            make_hierarchical_text,
            n,
            n_classes=10_000,
            n_features=100_000,
            depth=3,
            random_state=0,
        )
        tokens = n * 50
        per_token.append(ct / tokens * 1e6)
        print(f"{n:>12,} {dt:>8.2f} {ct:>8.2f} {tr.X.nnz + te.X.nnz:>12,} {per_token[-1]:>22.4f}")
        del tr, te
    print(f"ratio of CPU per token, largest / smallest size: {per_token[-1] / per_token[0]:.2f}")

    rng = np.random.default_rng(0)
    cdf = zipf_cdf(100_000)
    u = rng.random(5_000_000)
    sampler = CdfSampler(cdf)
    _, t_guide = _t(sampler.sample, u)
    _, t_bs = _t(np.searchsorted, cdf, u, "right")
    print(
        f"\nZipf sampling, 5e6 draws over 1e5 words: guide table {t_guide:.3f} s, "
        f"searchsorted {t_bs:.3f} s, speed-up {t_bs / t_guide:.1f}x"
    )

    import pandas as pd
    from sklearn.datasets import dump_svmlight_file, load_svmlight_file

    from hierlab.io import load_dataset, write_csv_dataset, write_svmlight

    tr, _ = make_hierarchical_text(20_000, n_classes=200, n_features=300, depth=2, random_state=0)
    with tempfile.TemporaryDirectory() as d:
        csv_path = Path(d) / "x.csv"
        svm_path = Path(d) / "x.svmlight"
        write_csv_dataset(tr, csv_path)
        write_svmlight(tr, svm_path)
        _, t_csv = _t(load_dataset, csv_path)
        _, t_pd = _t(pd.read_csv, csv_path)
        _, t_svm = _t(load_dataset, svm_path, taxonomy=tr.taxonomy)
        num_path = Path(d) / "numeric.svmlight"  # the same rows, labels as numbers
        codes = tr.taxonomy.index(tr.y)
        dump_svmlight_file(tr.X, codes, str(num_path), zero_based=False)
        _, t_sk = _t(load_svmlight_file, str(num_path), dtype=np.float64)
    print(
        f"\nreading 20,000 x 300 (dense CSV {csv_path.name}): load_dataset {t_csv:.2f} s, "
        f"pandas.read_csv {t_pd:.2f} s, ratio {t_csv / t_pd:.1f}"
    )
    print(
        f"reading the same as svmlight: load_dataset {t_svm:.2f} s, "
        f"sklearn load_svmlight_file {t_sk:.2f} s (numeric labels only), ratio {t_svm / t_sk:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
