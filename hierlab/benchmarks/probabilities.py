"""Calibrated node probabilities on real data: AU(PRC) per method and precision against depth.

Run ``python -m hierlab.benchmarks.probabilities`` (20 Newsgroups and IPC, methods ``topdown``,
``ovr-lr``, ``hieron-batch``) or pick them: ``--data 20newsgroups ipc --methods topdown hr-lr
--cv 3``. For every data set and method it fits on the training split, calibrates (``--cv``:
cross-fitted Platt maps, or ``train``: the in-sample maps ``fit`` leaves), and prints

* AU(PRC): the pooled area under the precision-recall curve over (test example, node) pairs,
  root excluded, from ``node_proba`` (the measure of Clus-HMC and C-HMCNN), with the Brier score
  and the expected calibration error of the same pairs, and the fit and calibration times;
* the precision/depth table of ``predict(X, threshold=t)`` at t in {0, 0.5, 0.9}: hierarchical
  precision, recall and F1, accuracy (exact and ancestor rule), the share of predictions on the true
  path, the mean depth of the predictions and the share stopped above the method's prediction.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from hierlab.core.registry import make_estimator
from hierlab.datasets.ipc import load_ipc
from hierlab.datasets.real import load_20newsgroups
from hierlab.evaluation.curves import THRESHOLDS, probability_report

__all__ = ["main", "run"]

LOADERS: dict[str, Callable[[], Any]] = {"20newsgroups": load_20newsgroups, "ipc": load_ipc}
DEFAULT_METHODS = ("topdown", "ovr-lr", "hieron-batch")
#: the precision/depth table's columns (:func:`~hierlab.evaluation.curves.threshold_curve`)
COLUMNS = (
    "threshold",
    "hierarchical_precision",
    "hierarchical_recall",
    "hierarchical_f1",
    "accuracy",
    "accuracy_ancestor",
    "on_true_path",
    "mean_depth",
    "stopped",
)


def run(
    data: str, methods: tuple[str, ...] | list[str], cv: int | str = 3, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fit, calibrate and score every method on one data set.

    Parameters
    ----------
    data : {"20newsgroups", "ipc"}
    methods : sequence of str
        Registered method names.
    cv : int or "train", default 3
        Folds of the cross-fitted calibration, or ``"train"`` for ``fit``'s in-sample maps.
    seed : int, default 0
        Seed of the folds.

    Returns
    -------
    summary : DataFrame
        One row per method: ``au_prc``, ``brier``, ``ece``, ``fit_s``, ``calibrate_s`` and
        ``unscored`` (test rows whose class the method's taxonomy lacks: an induced tree).
    thresholds : DataFrame
        One row per method and threshold (the columns of
        :func:`~hierlab.evaluation.curves.threshold_curve`).
    """
    train, test = LOADERS[data]()
    rows: list[dict[str, Any]] = []
    tables = []
    for name in methods:
        est = make_estimator(name, taxonomy=train.taxonomy)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(train.X, train.y)
            fit_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            if cv != "train":
                est.calibrate(train.X, train.y, cv=cv, random_state=seed)
            cal_s = time.perf_counter() - t0
        rep = probability_report(est, test.X, test.y, THRESHOLDS)
        rows.append(
            {
                "method": name,
                "au_prc": rep["au_prc"],
                "brier": rep["brier"],
                "ece": rep["ece"],
                "fit_s": fit_s,
                "calibrate_s": cal_s,
                "unscored": rep["unscored_rows"],
            }
        )
        # each method's figures as soon as they exist (a long run keeps what it measured)
        print(f"{data} {name}: {rows[-1]}", file=sys.stderr, flush=True)
        print(rep["thresholds"][list(COLUMNS)].round(4).to_string(), file=sys.stderr, flush=True)
        tables.append(rep["thresholds"].assign(method=name))
    summary = pd.DataFrame(rows).set_index("method")
    table = pd.concat(tables, ignore_index=True).set_index(["method", "threshold"])
    return summary, table


def main(argv: list[str] | None = None) -> int:
    """Print the AU(PRC) table and the precision/depth table for each data set."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", default=list(LOADERS), choices=list(LOADERS))
    ap.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS))
    ap.add_argument("--cv", default="3", help="folds of the cross-fitted calibration, or 'train'")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    cv: int | str = args.cv if args.cv == "train" else int(args.cv)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        for data in args.data:
            summary, table = run(data, args.methods, cv=cv, seed=args.seed)
            print(f"\n== {data}: calibration {cv if cv == 'train' else f'{cv}-fold'} ==")
            print(summary.round({"au_prc": 4, "brier": 5, "ece": 4, "fit_s": 1, "calibrate_s": 1}))
            print(f"\n-- {data}: predict(X, threshold=t) --")
            print(table[list(COLUMNS[1:])].round(4))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
