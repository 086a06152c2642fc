"""Peak memory against the number of classes: ``python -m hierlab.benchmarks.memory_classes``.

No memory term may be quadratic in the number of classes. For each registered
single-label method (or those named), a short fit (``max_iter=2`` / one epoch: every structure
of the fit is built) and a predict on ``make_hierarchical_text`` problems of ``--leaves``
leaves (default 1,000 and 2,000) with two examples per class, so that the examples grow with
the classes too and an (examples x classes) array shows as well as a (classes x classes) one.
Printed per method: tracemalloc's peak of fit + predict at each size (MB), the ratio of the
last to the first, and the ratio a quadratic term would give, ``(m_last / m_first)^2``; a
linear method stays near ``m_last / m_first`` (less, for the constant part of the buffers).

``--copies``: the peak of a whole fit counted in copies of the weights
(:func:`weight_copies`).

A measurement, not a test: the peaks include fixed-size buffers (blocks of scores of at most
:data:`hierlab.core.objective.CHUNK` numbers, ...), so a threshold on them would be fragile.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from typing import Any

from hierlab.core.registry import list_methods, make_estimator
from hierlab.datasets.text import make_hierarchical_text

__all__ = ["main", "peak_memory", "weight_copies"]

#: the short fit: one or two iterations of whichever budget the method has
SHORT = {"max_iter": 2, "epochs": 1}


def peak_memory(
    name: str, n_classes: int, depth: int = 2, n_samples: int | None = None
) -> tuple[float, float]:
    """tracemalloc peak (bytes) of a short fit and a predict, and its wall time (s).

    Parameters
    ----------
    name : str
        A registered method.
    n_classes : int
        Leaves of the synthetic taxonomy (100 features).
    depth : int, default 2
    n_samples : int, optional
        Documents (train and test); None: ``2 * n_classes``.
    """
    tr, te = make_hierarchical_text(
        n_samples=2 * n_classes if n_samples is None else int(n_samples),
        n_classes=n_classes, n_features=100, depth=depth, doc_length=8, test_size=0.05,
        random_state=0,
    )  # fmt: skip
    est = make_estimator(name, taxonomy=tr.taxonomy)
    params = est.get_params()
    est.set_params(**{k: v for k, v in SHORT.items() if k in params})
    if "max_inner_iter" in params:  # HR-SVM / HR-LR: one outer round, short inner solves
        est.set_params(max_iter=1, max_inner_iter=20)
    return _traced_peak(lambda: (est.fit(tr.X, tr.y), est.predict(te.X)))


def _traced_peak(run: Any) -> tuple[float, float]:
    """tracemalloc's peak (bytes, above what was allocated before) of ``run()`` with warnings
    silenced (short fits are unconverged on purpose), and its wall time (s)."""
    start = time.perf_counter()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return float(peak), time.perf_counter() - start


def weight_copies(
    name: str, n_classes: int = 1000, n_features: int = 5000, n_samples: int = 4000
) -> tuple[float, float]:
    """tracemalloc peak of a whole fit (registry defaults, ``max_iter`` at most 3) in units
    of one (n_nodes x n_features) float64 array, and its wall time (s).

    Where the weights dominate (here 5,000 features), this counts the copies of ``W`` a fit
    holds at once: what sets the memory at 10^4 leaves (one copy: 1.7 GB at 2 x 10^4
    features).
    """
    tr, _ = make_hierarchical_text(
        n_samples=n_samples, n_classes=n_classes, n_features=n_features, depth=3,
        doc_length=20, test_size=0.05, random_state=0,
    )  # fmt: skip
    est = make_estimator(name, taxonomy=tr.taxonomy)
    if "max_iter" in est.get_params():
        est.set_params(max_iter=min(3, int(est.get_params()["max_iter"])))
    peak, seconds = _traced_peak(lambda: est.fit(tr.X, tr.y))
    return peak / (tr.taxonomy.n_nodes * tr.X.shape[1] * 8.0), seconds


def main(argv: list[str] | None = None) -> int:
    """Print the table; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="*", default=None, help="default: every method")
    ap.add_argument("--leaves", nargs="+", type=int, default=[1000, 2000])
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument(
        "--copies",
        action="store_true",
        help="instead: the peak of a whole fit in copies of W (1,000 leaves, 5,000 features)",
    )
    args = ap.parse_args(argv)
    names = args.methods or list_methods()
    if args.copies:
        print("peak of a whole fit (tracemalloc) in copies of one (nodes x features) array")
        for name in names:
            copies, secs = weight_copies(name)
            print(f"{name:16s}{copies:8.2f}  {secs:7.1f}", flush=True)
        return 0
    sizes = sorted(args.leaves)
    quad = (sizes[-1] / sizes[0]) ** 2
    head = "".join(f"{s:>10d}" for s in sizes)
    print(f"peak MB of fit + predict (tracemalloc) by leaves; quadratic ratio {quad:.1f}")
    print(f"{'method':16s}{head}  ratio  seconds")
    for name in names:
        try:
            peak_memory(name, 50, args.depth)  # compiled kernels and imports load first
            runs = [peak_memory(name, s, args.depth) for s in sizes]
        except Exception as exc:  # a method that fails is reported, the others still run
            print(f"{name:16s} failed: {exc}")
            continue
        peaks = "".join(f"{p / 2**20:10.2f}" for p, _ in runs)
        ratio = runs[-1][0] / max(runs[0][0], 1.0)
        secs = sum(t for _, t in runs)
        print(f"{name:16s}{peaks}  {ratio:5.2f}  {secs:7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
