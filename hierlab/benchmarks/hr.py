"""Benchmark: HR-SVM, HR-LR and their one-vs-rest baselines (seed 001, Tables 2-3).

Data sets: 20 Newsgroups with the 6-group taxonomy (``load_20newsgroups()``, "bydate" split,
sublinear TF-IDF) and ``make_hierarchical_text`` with about 1,000 leaf classes. Every method runs
in the same process on the same split; the table reports training time, the ratio to OvR SVM's
time, micro-F1 and macro-F1 on the test part (``hierlab.evaluation.metrics``, over the leaf
classes), the outer iterations and the final certified relative duality gap of the HR methods.
A second table times HR-SVM with 1 and with 2 joblib workers (loky) on the same data and checks
that the two give the same weights.

Run::

    python -m hierlab.benchmarks.hr                         # both data sets
    python -m hierlab.benchmarks.hr --datasets 20ng --C 1
    python -m hierlab.benchmarks.hr --datasets text --text-classes 1000 --tol 0.02
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from hierlab.core.dataset import HierDataset
from hierlab.core.registry import make_estimator
from hierlab.evaluation.metrics import macro_f1, micro_f1

METHODS = ("ovr-svm", "hr-svm", "ovr-lr", "hr-lr")


def _datasets(args: argparse.Namespace) -> list[tuple[str, HierDataset, HierDataset]]:
    out = []
    for name in args.datasets.split(","):
        if name == "20ng":
            from hierlab.datasets.real import load_20newsgroups

            train, test = load_20newsgroups()
            out.append(("20NG (6 groups)", train, test))
        elif name == "text":
            from hierlab.datasets.text import make_hierarchical_text

            train, test = make_hierarchical_text(
                args.text_samples,
                n_classes=args.text_classes,
                n_features=args.text_features,
                depth=3,
                random_state=0,
            )
            label = f"hier. text ({len(train.taxonomy.leaves)} leaves)"
            out.append((label, train, test))
        else:
            raise SystemExit(f"unknown data set {name!r} (use 20ng, text)")
    return out


def _params(
    method: str, args: argparse.Namespace, n_jobs: int, solver: str | None = None
) -> dict[str, Any]:
    """Constructor keywords; the HR methods' block-CD parameters only with
    ``solver="block-cd"``; the "SVM" baseline is the seed's, liblinear per leaf."""
    p: dict[str, Any] = {"C": args.C}
    solver = solver or args.solver
    block = method.startswith("hr-") and solver == "block-cd"
    if method.startswith("hr-"):
        p["solver"] = solver
    if method == "ovr-svm":
        p["solver"] = "liblinear"
    if method.startswith("hr-"):
        p.update(max_iter=args.max_iter, tol=args.tol)
    if block:
        p.update(relaxation=args.relaxation)
        if args.max_inner_iter is not None:
            p["max_inner_iter"] = args.max_inner_iter
    if block or method.startswith("ovr-"):
        p["n_jobs"] = n_jobs
    return p


def _fit_eval(
    method: str, train: HierDataset, test: HierDataset, params: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    tax = train.taxonomy
    est = make_estimator(method, taxonomy=tax, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        est.fit(train.X, train.y)
        elapsed = time.perf_counter() - t0
    pred = est.predict(test.X)
    leaves = list(tax.names[tax.leaves])
    row: dict[str, Any] = {
        "method": method,
        "time_s": elapsed,
        "micro_f1": micro_f1(test.y, pred, tax),
        "macro_f1": macro_f1(test.y, pred, tax, labels=leaves),
        "outer_iter": int(est.n_iter_),
    }
    if method.startswith("hr-"):
        last = est.history_.iloc[-1]
        row["rel_gap"] = float((last["upper"] - last["lower"]) / abs(last["upper"]))
        row["converged"] = bool(est.converged_)
    return est, row


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", default="20ng,text")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--solver", default="global-cd", help="HR-SVM and HR-LR: global-cd or block-cd")
    ap.add_argument("--max-iter", type=int, default=30, help="HR: passes or outer iterations")
    ap.add_argument("--tol", type=float, default=1e-2, help="HR: certified relative gap")
    ap.add_argument("--relaxation", type=float, default=1.0, help="HR: omega of eq. (4)")
    ap.add_argument(
        "--max-inner-iter", type=int, default=None, help="HR: leaf passes/iterations cap"
    )
    ap.add_argument("--text-samples", type=int, default=12_000)
    ap.add_argument("--text-classes", type=int, default=1000)
    ap.add_argument("--text-features", type=int, default=10_000)
    ap.add_argument("--no-speedup", action="store_true", help="skip the 1 vs 2 workers table")
    args = ap.parse_args(argv)
    pd.set_option("display.width", 160)
    methods = args.methods.split(",")
    for name, train, test in _datasets(args):
        print(
            f"\n== {name}: {train.X.shape[0]} train / {test.X.shape[0]} test, "
            f"{train.X.shape[1]} features, {len(train.taxonomy.leaves)} leaves, "
            f"{train.taxonomy.n_nodes} nodes, C = {args.C}",
            flush=True,
        )
        rows = []
        for m in methods:
            _, row = _fit_eval(m, train, test, _params(m, args, 1))
            rows.append(row)
            print(f"   {m}: {row['time_s']:.1f} s", flush=True)
        df = pd.DataFrame(rows)
        if "ovr-svm" in set(df["method"]):
            base = float(df.loc[df["method"] == "ovr-svm", "time_s"].iloc[0])
            df.insert(2, "x_ovr_svm", df["time_s"] / base)
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)
        if not args.no_speedup and "hr-svm" in methods:
            times = {}
            coefs = {}
            for nj in (1, 2):
                params = _params("hr-svm", args, nj, solver="block-cd")  # its levels in parallel
                est, row = _fit_eval("hr-svm", train, test, params)
                times[nj] = row["time_s"]
                coefs[nj] = est.coef_
            diff = float(np.abs(coefs[1] - coefs[2]).max())
            print(
                f"   HR-SVM (block-cd) 1 worker {times[1]:.1f} s, 2 workers {times[2]:.1f} s: "
                f"speed-up {times[1] / times[2]:.2f}x; max |W1 - W2| = {diff:.2e}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
