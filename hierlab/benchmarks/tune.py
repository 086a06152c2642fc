"""``hierlab.tune`` against scikit-learn's ``GridSearchCV`` on the same grid, side by side.

Three ways to choose ``C`` for one method on one data set (20 Newsgroups by default), timed in
one run on one machine:

- ``hierlab.tune``: the warm-started certified path on one validation split (20%), the refit of
  the best ``C`` on all rows included;
- ``GridSearchCV`` with the same single split (``ShuffleSplit(n_splits=1)``): cold fits at the
  estimator's own tolerance, refit included;
- ``GridSearchCV`` with 3-fold cross-validation (a common choice), refit included.

Run ``python -m hierlab.benchmarks.tune [--data 20newsgroups] [--method flatmult]``; it prints
each search's time, its ratio to ``tune`` and the ``C`` it chose. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, KFold, ShuffleSplit

from hierlab.core.registry import make_estimator
from hierlab.datasets.catalog import load_builtin
from hierlab.evaluation.scoring import hierarchical_scorer
from hierlab.evaluation.tune import DEFAULT_CS, tune

__all__ = ["compare_searches", "main"]


def compare_searches(
    method: str = "flatmult", data: str = "20newsgroups", Cs: Sequence[float] = DEFAULT_CS
) -> list[dict[str, object]]:
    """Time ``tune`` and two cold ``GridSearchCV`` searches over ``Cs``; one row per search."""
    train, _ = load_builtin(data)
    est = make_estimator(method, taxonomy=train.taxonomy)
    scoring = "hierarchical_f1"
    rows: list[dict[str, object]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        res = tune(est, train.X, train.y, Cs=Cs, scoring=scoring)
        took = time.perf_counter() - t0
        rows.append({"search": "hierlab.tune (warm path, 1 split)", "time": took,
                     "C": res.best_C, "fits": len(Cs) + 1})  # fmt: skip
        for name, cv, n_fits in (
            (
                "GridSearchCV (cold, same 1 split)",
                ShuffleSplit(1, test_size=0.2, random_state=0),
                1,
            ),
            ("GridSearchCV (cold, 3-fold)", KFold(3, shuffle=True, random_state=0), 3),
        ):
            gs = GridSearchCV(est, {"C": list(Cs)}, scoring=hierarchical_scorer(scoring), cv=cv)
            t0 = time.perf_counter()
            gs.fit(train.X, np.asarray(train.y, dtype=object))
            took = time.perf_counter() - t0
            best = float(gs.best_params_["C"])
            rows.append({"search": name, "time": took, "C": best,
                         "fits": len(Cs) * n_fits + 1})  # fmt: skip
    base = float(rows[0]["time"])  # type: ignore[arg-type]
    for r in rows:
        r["ratio"] = float(r["time"]) / base  # type: ignore[arg-type]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="20newsgroups")
    ap.add_argument("--method", default="flatmult")
    args = ap.parse_args(argv)
    rows = compare_searches(args.method, args.data)
    print(f"choosing C for {args.method} on {args.data}, grid {list(DEFAULT_CS)}")
    for r in rows:
        print(f"{r['search']:<38} {r['time']:8.1f} s  x{r['ratio']:5.2f}  fits {r['fits']:3d}  "
              f"C = {r['C']:g}")  # fmt: skip
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
