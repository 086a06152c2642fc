"""BCFW on the flat models: implicit labels against the explicit tables, side by side.

For FLATMULT and TREELOSS on ``make_hierarchical_text`` (two documents per class by default, so
there are as many distinct labels as classes), one process runs the same epochs twice: with
the implicit labels and active-set duals (:mod:`hierlab.solvers.bcfw_flat`, the default) and
with the explicit per-label tables (``FlatModel.implicit_blocks`` switched off). Both take the
same steps (tested), so the comparison is time and memory only: solver seconds per run and
the tracemalloc peak of the solve (the compiled kernels are loaded before timing).

Run ``python -m hierlab.benchmarks.bcfw_flat [--classes 500 1000 2000] [--epochs 3]``; it
prints, per method and size, both runs' seconds and peaks and their ratios. Nothing here is a
test.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Sequence
from typing import Any

import scipy.sparse as sp

from hierlab.core.objective import Objective
from hierlab.core.solver import solve
from hierlab.datasets.text import make_hierarchical_text
from hierlab.methods.orthogonal.estimators import FlatMulticlassClassifier, TreeLossClassifier
from hierlab.methods.orthogonal.model import FlatModel
from hierlab.solvers.bcfw import BCFW

__all__ = ["compare", "main"]

FLAT: dict[str, Any] = {"flatmult": FlatMulticlassClassifier, "treeloss": TreeLossClassifier}


def _objective(method: str, n_classes: int, per_class: int) -> Objective:
    tr, _ = make_hierarchical_text(
        n_samples=per_class * n_classes, n_classes=n_classes, n_features=200, depth=2,
        doc_length=10, test_size=0.01, random_state=0,
    )  # fmt: skip
    est = FLAT[method](taxonomy=tr.taxonomy)
    est.taxonomy_ = tr.taxonomy
    obj: Objective = est._objective(sp.csr_matrix(tr.X), tr.taxonomy.index(list(tr.y)))
    return obj


def _run(obj: Objective, epochs: int, implicit: bool) -> tuple[float, float, float]:
    """(seconds, tracemalloc peak in MB, final upper bound) of one solve."""
    saved = FlatModel.implicit_blocks
    if not implicit:
        FlatModel.implicit_blocks = lambda self, y, C: None  # type: ignore[method-assign]
    try:
        t0 = time.perf_counter()
        res = solve(BCFW(max_iter=epochs), obj, warn=False, tol=0.0, rtol=0.0)
        seconds = time.perf_counter() - t0
        tracemalloc.start()
        solve(BCFW(max_iter=1), obj, warn=False)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    finally:
        FlatModel.implicit_blocks = saved  # type: ignore[method-assign]
    assert res.final is not None
    return seconds, peak, res.final.upper


def compare(
    classes: Sequence[int] = (500, 1000, 2000), epochs: int = 3, per_class: int = 2
) -> list[dict[str, object]]:
    """One row per method and size: both runs' seconds and peaks, and their ratios."""
    _run(_objective("flatmult", 50, 2), 1, True)  # load the compiled kernels
    _run(_objective("treeloss", 50, 2), 1, False)
    rows = []
    for method in FLAT:
        for L in classes:
            obj = _objective(method, L, per_class)
            ti, pi, ui = _run(obj, epochs, True)
            te, pe, ue = _run(obj, epochs, False)
            rows.append(
                {
                    "method": method, "leaves": L, "implicit s": ti, "tables s": te,
                    "time ratio": ti / te, "implicit MB": pi, "tables MB": pe,
                    "memory ratio": pi / pe, "same upper": ui == ue,
                }
            )  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--classes", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = compare(args.classes, args.epochs)
    for r in rows:
        print(
            f"{r['method']:9s} {r['leaves']:5d} leaves: implicit {r['implicit s']:.2f} s vs "
            f"tables {r['tables s']:.2f} s (ratio {r['time ratio']:.2f}); peak "
            f"{r['implicit MB']:.1f} MB vs {r['tables MB']:.1f} MB "
            f"(ratio {r['memory ratio']:.2f}); same bound: {r['same upper']}"
        )


if __name__ == "__main__":
    main()
