"""Benchmark: the seed-000 methods on 20 Newsgroups (6-group taxonomy) next to LinearSVC OvR.

Every method runs on the same split (the "bydate" train/test, sublinear TF-IDF) and is timed in
the same process right after scikit-learn's ``LinearSVC`` (one-vs-rest, default ``C = 1``).
The seed-000 methods (with each solver of ``--solvers``: BCFW by default, or RDA) get a time
budget of ``--budget`` times LinearSVC's training time (default 3) and stop earlier when the
certified gap closes to ``--rtol``; the table reports, per method: training time, ratio to
LinearSVC, accuracy (exact and ancestor rule), tree-induced error (half the graph distance,
seed 000), micro-F1, RDA iterations or BCFW epochs, the final certified gap (absolute and
relative to the objective), and whether the gap closed.

``C`` of the seed-000 methods weights the *mean* hinge (``C/N sum xi``, seed 000, eq. 4), so
``C = N`` matches the per-example ``C = 1`` of LinearSVC (which sums squared hinges); the
paper's ``C = 1`` is LinearSVC's ``C = 1/N``.

Run::

    python -m hierlab.benchmarks.orthogonal               # C = N, budget 3x LinearSVC
    python -m hierlab.benchmarks.orthogonal --C 1000 --budget 3 --rtol 0.01
    python -m hierlab.benchmarks.orthogonal --methods orthognl --profile
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.svm import LinearSVC

from hierlab.core.registry import make_estimator
from hierlab.evaluation.metrics import (
    accuracy,
    micro_f1,
    tree_induced_error,
    zero_one_error,
)

METHODS = ("flatmult", "hiermult", "transfer", "treeloss", "orthognl")


def load() -> tuple[Any, Any]:
    """20NG train/test with the 6-group taxonomy (``hierlab.datasets.load_20newsgroups``)."""
    from hierlab.datasets.real import load_20newsgroups

    return load_20newsgroups(taxonomy="6groups")


def scores(y_true: Any, y_pred: Any, tax: Any) -> dict[str, float]:
    """Accuracy (exact, and seed 000's ancestor rule), half tree-induced error and micro-F1
    (seed 000, Section 6)."""
    return {
        "accuracy": accuracy(y_true, y_pred, tax),
        "accuracy_ancestor": 1.0 - zero_one_error(y_true, y_pred, tax),
        "tree_err": tree_induced_error(y_true, y_pred, tax, half=True),
        "micro_f1": micro_f1(y_true, y_pred, tax),
    }


def _parser() -> argparse.ArgumentParser:
    """The options of ``python -m hierlab.benchmarks.orthogonal``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--C", type=float, default=None, help="C (default: N, LinearSVC's C=1)")
    ap.add_argument("--alpha", type=float, default=0.5, help="ORTHOGNL alpha (eq. 6)")
    ap.add_argument("--budget", type=float, default=3.0, help="time budget / LinearSVC time")
    ap.add_argument("--rtol", type=float, default=1e-2, help="relative gap to certify")
    ap.add_argument("--max-iter", type=int, default=100000)
    ap.add_argument("--averaging", default="linesearch", choices=("linesearch", "uniform"))
    ap.add_argument("--split", default="lambda_min", choices=("lambda_min", "jacobi"))
    ap.add_argument(
        "--solvers", nargs="+", default=["bcfw"], choices=("bcfw", "rda"), help="solvers to run"
    )
    ap.add_argument("--profile", action="store_true", help="cProfile each fit (top 12)")
    return ap


def _svc_row(train: Any, test: Any) -> dict[str, Any]:
    """The LinearSVC (one-vs-rest, ``C = 1``) row; its ``time_s`` is every ratio's unit."""
    t0 = time.perf_counter()
    svc = LinearSVC().fit(train.X, train.y)
    t_svc = time.perf_counter() - t0
    return {
        "method": "LinearSVC OvR",
        "C": 1.0,
        "time_s": t_svc,
        "ratio": 1.0,
        **scores(test.y, svc.predict(test.X), train.taxonomy),
        "iters": int(np.max(svc.n_iter_)),
        "gap": np.nan,
        "rel_gap": np.nan,
        "certified": "-",
    }


def _method_row(
    name: str, solver: str, args: argparse.Namespace, C: float, t_svc: float, train: Any, test: Any
) -> dict[str, Any]:
    """Fit seed-000 method ``name`` with ``solver`` (budget ``args.budget * t_svc``) and score it.

    With ``args.profile`` the fit is profiled and the 12 most expensive functions are printed.
    """
    kw: dict[str, Any] = {
        "solver": solver,
        "C": C,
        "tol": 0.0,
        "rtol": args.rtol,
        "max_iter": args.max_iter,
        "max_time": args.budget * t_svc,
        "averaging": args.averaging,
    }
    if name == "orthognl":
        kw["alpha"] = args.alpha
        kw["split"] = args.split
    est = make_estimator(name, taxonomy=train.taxonomy, **kw)
    prof = cProfile.Profile() if args.profile else None
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if prof is not None:
            prof.enable()
        est.fit(train.X, train.y)
        if prof is not None:
            prof.disable()
    el = time.perf_counter() - t0
    row = {
        "method": f"{name.upper()} ({solver})",
        "C": C,
        "time_s": el,
        "ratio": el / t_svc,
        **scores(test.y, est.predict(test.X), train.taxonomy),
        "iters": est.n_iter_,
        "gap": est.gap_,
        "rel_gap": est.gap_ / est.objective_,
        "certified": "yes" if est.converged_ else "no",
    }
    print(pd.DataFrame([row]).to_string(index=False, float_format="%.4g"), flush=True)
    if prof is not None:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
        print(s.getvalue())
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    args = _parser().parse_args(argv)
    t0 = time.perf_counter()
    train, test = load()
    print(
        f"20 Newsgroups: train {train.X.shape}, test {test.X.shape}, nnz {train.X.nnz}, "
        f"{train.taxonomy!r} (loaded in {time.perf_counter() - t0:.1f} s)"
    )
    rows: list[dict[str, Any]] = [_svc_row(train, test)]
    t_svc = rows[0]["time_s"]
    C = float(args.C) if args.C is not None else float(train.X.shape[0])
    for name, solver in [(n, s) for n in args.methods for s in args.solvers]:
        rows.append(_method_row(name, solver, args, C, t_svc, train, test))
    table = pd.DataFrame(rows)
    print()
    print(table.to_string(index=False, float_format="%.4g"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
