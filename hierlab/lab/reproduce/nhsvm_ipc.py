"""``hierlab reproduce nhsvm-ipc``: seed 003, Table 4 (IPC column) on the IPC titles.

Seed 003 reports test accuracy on IPC (Table 2: 553 nodes, 228K features, 75K instances, 451
labels) for SSVM 52.6, NHSVM 52.2, HSVM 50.4 and FlatSVM 51.6, "following the same procedure
as Section 8.1": lambda chosen on a hold-out set from a grid, the chosen model retrained on all
the training data, mean ± sd over repeats. The patterns checked: NHSVM beats HSVM and FlatSVM,
FlatSVM beats HSVM (un-normalised HSVM does not exploit the hierarchy), SSVM >= NHSVM.

Here: ``hierlab.load_ipc`` titles, hierlab's ``ssvm``, ``nhsvm``, ``hsvm`` and ``hsvm`` on the
flat taxonomy (FlatSVM, as in ``hierlab reproduce nhsvm``), Pegasos SGD for ``--epochs``.
**The lambda mapping lives in** :func:`estimator_params` **only**: the grid is on the paper's
scale (``lambda ||W||^2 + sum_i loss_i``), which is also the scale of hierlab's ``lam``
(scikit-learn's ``C = 1 / (2 lambda)``), so ``lam = lambda_paper``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.taxonomy import Taxonomy
from hierlab.lab.reproduce._common import (
    Transcription,
    add_common_arguments,
    app_result,
    ipc_data,
    mean_sd,
    print_result,
    size_of,
    stderr_progress,
    verdicts,
    write_json,
)

NAME = "nhsvm-ipc"
HELP = "Seed 003 Table 4 (IPC) on the IPC titles: SSVM / NHSVM / HSVM / flat SVM accuracy"
#: the options of a classroom-sized run (seconds, not minutes; IPC sections D+E (3,000 titles)); the
#: defaults are the paper's sizes
CLASSROOM: dict[str, Any] = {"size": "classroom"}

#: Table 4 of seed 003, IPC column (mean ± sd as printed: "52.6±.069")
TABLE4 = Transcription(
    seed_file="003_387b6b34a68f4b02.txt",
    where="Table 4 (Accuracy on benchmark datasets), IPC column (Section 8.2)",
    anchor="Method IPC DMOZ WIKI d5 Imagenet",
    values={
        "SSVM": "52.6",
        "SSVM sd": ".069",
        "NHSVM": "52.2",
        "NHSVM sd": ".05",
        "HSVM": "50.4",
        "HSVM sd": ".09",
        "FlatSVM": "51.6",
        "FlatSVM sd": ".08",
    },
)
METHODS = ("SSVM", "NHSVM", "HSVM", "FlatSVM")

CLAIMS: dict[str, Callable[[Mapping[str, float]], bool]] = {
    "NHSVM beats HSVM": lambda v: v["NHSVM"] > v["HSVM"],
    "NHSVM beats FlatSVM": lambda v: v["NHSVM"] > v["FlatSVM"],
    "FlatSVM beats HSVM": lambda v: v["FlatSVM"] > v["HSVM"],
    "SSVM >= NHSVM": lambda v: v["SSVM"] >= v["NHSVM"],
}

#: per size: the lambda grid on the paper's scale, SGD epochs, repeats (fresh splits). On the
#: IPC titles paper-lambda >= ~1e-2 leaves Pegasos in the regime where every example violates
#: its margin, where lambda only rescales W (same predictions): the grids reach below it.
SETTINGS: dict[str, dict[str, Any]] = {
    "tiny": {"grid": (1.0,), "epochs": 2, "repeats": 1},
    "classroom": {"grid": (1e-5, 1e-3, 1e-1), "epochs": 5, "repeats": 1},
    "medium": {"grid": (1e-5, 1e-4, 1e-3, 1e-2, 1e-1), "epochs": 10, "repeats": 1},
    "full": {"grid": (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0), "epochs": 10, "repeats": 3},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``hierlab reproduce nhsvm-ipc``."""
    add_common_arguments(parser)
    parser.add_argument(
        "--lambdas", default="", help="comma-separated lambda grid, paper scale (default: by size)"
    )
    parser.add_argument("--epochs", type=int, default=0, help="SGD epochs (0: by size)")
    parser.add_argument("--repeats", type=int, default=0, help="fresh splits (0: by size)")


def published() -> dict[str, float]:
    """Table 4's IPC column: accuracy % per method and ``"<method> sd"``."""
    return TABLE4.numbers()


def estimator_params(method: str, lam_paper: float, epochs: int) -> dict[str, Any]:
    """The one place where the paper's lambda becomes our estimators' parameters.

    Parameters
    ----------
    method : {"SSVM", "NHSVM", "HSVM", "FlatSVM"}
    lam_paper : float
        lambda of the seed's objective ``lambda ||W||^2 + sum_i loss_i``.
    epochs : int
        SGD epochs (SSVM: split into alpha rounds of ``max(1, epochs // 2)`` epochs).

    Returns
    -------
    dict
        ``make_estimator`` keywords: ``lam = lam_paper`` (hierlab's ``lam`` is the paper's,
        on the summed loss: no division by the number of rows).
    """
    p: dict[str, Any] = {"lam": float(lam_paper), "solver": "pegasos"}  # the paper's SGD
    if method == "SSVM":
        p.update(rounds=2, epochs_per_alpha=max(1, epochs // 2))
    else:
        p["epochs"] = int(epochs)
    return p


def _make(method: str, tax: Taxonomy, lam_paper: float, epochs: int, seed: int) -> Any:
    from hierlab.core.registry import make_estimator

    p = estimator_params(method, lam_paper, epochs)
    p["random_state"] = seed
    if method == "FlatSVM":
        tax = Taxonomy.flat([str(s) for s in tax.names[tax.leaves]])
        return make_estimator("hsvm", taxonomy=tax, **p)
    return make_estimator(method.lower(), taxonomy=tax, **p)


def _settings(args: argparse.Namespace) -> tuple[tuple[float, ...], int, int]:
    size_of(args.size)  # a ParameterError naming the sizes when unknown
    s = SETTINGS[str(args.size)]
    grid = tuple(float(v) for v in str(args.lambdas).split(",") if v.strip()) or s["grid"]
    return grid, int(args.epochs or s["epochs"]), int(args.repeats or s["repeats"])


def measure(args: argparse.Namespace, progress: Callable[[float, str], None]) -> dict[str, Any]:
    """Hold-out choice of lambda on the first split, then ``repeats`` splits; accuracy in %."""
    grid, epochs, repeats = _settings(args)
    acc: dict[str, list[float]] = {m: [] for m in METHODS}
    secs: dict[str, list[float]] = {m: [] for m in METHODS}
    chosen: dict[str, float] = {}
    desc = ""
    steps = repeats * len(METHODS) + (len(METHODS) * len(grid) if len(grid) > 1 else 0)
    done = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(repeats):
            progress(done / steps, f"loading split {r + 1}")
            train, test, d = ipc_data(args.size, args.seed + r)
            desc = desc or d
            tax = train.taxonomy
            if r == 0:
                for m in METHODS:
                    chosen[m] = grid[0]
                    if len(grid) == 1:
                        continue
                    perm = np.random.default_rng(args.seed).permutation(train.n_samples)
                    hold, fit = perm[: train.n_samples // 5], perm[train.n_samples // 5 :]
                    scores = []
                    for lam in grid:
                        progress(done / steps, f"{m}: hold-out lambda = {lam:g}")
                        est = _make(m, tax, lam, epochs, args.seed)
                        est.fit(train.X[fit], train.y[fit])
                        scores.append(float(np.mean(est.predict(train.X[hold]) == train.y[hold])))
                        done += 1
                    chosen[m] = grid[int(np.argmax(scores))]
            for m in METHODS:
                progress(done / steps, f"split {r + 1}: {m}")
                est = _make(m, tax, chosen[m], epochs, args.seed + r)
                c0 = time.process_time()  # CPU seconds: robust to a loaded machine
                est.fit(train.X, train.y)
                secs[m].append(time.process_time() - c0)
                acc[m].append(100.0 * float(np.mean(est.predict(test.X) == test.y)))
                done += 1
    nums: dict[str, float] = {}
    for m in METHODS:
        nums[m], nums[f"{m} sd"] = mean_sd(acc[m])
        nums[f"{m} time"] = float(np.mean(secs[m]))
    return {"numbers": nums, "chosen": chosen, "data": desc, "epochs": epochs, "repeats": repeats}


def tables(ours: Mapping[str, float], chosen: Mapping[str, float]) -> dict[str, pd.DataFrame]:
    """Our accuracies beside Table 4's IPC column, and the pattern verdicts."""
    pub = published()
    rows = [
        {
            "method": m,
            "accuracy % (ours)": round(ours[m], 2),
            "sd (ours)": round(ours[f"{m} sd"], 2),
            "accuracy % (paper)": pub[m],
            "sd (paper)": pub[f"{m} sd"],
            "lambda (paper scale, chosen)": chosen.get(m, np.nan),
            "train CPU s (ours)": round(ours[f"{m} time"], 2),
        }
        for m in METHODS
    ]
    return {
        "Table 4 (seed 003), IPC: ours beside the paper": pd.DataFrame(rows),
        "Published patterns": verdicts(CLAIMS, {"paper (IPC)": pub, "ours": ours}),
    }


DIFFERENCES = (
    "What differs: data = IPC *titles* (645 leaves, 785 nodes, ~25k features) instead of the "
    "seed's IPC documents (451 labels, 553 nodes, 228K features); a seeded 70/30 random "
    "split per repeat; the lambda grid is a part of the seed's 1e-8..1e2 (hold-out on 20% of "
    "the first split's training rows, kept for every repeat); NHSVM is eq. 6 / eq. 10 only "
    "(the seed also tries rho = 1, eq. 13 and directional constraints); SGD runs a fixed "
    "number of epochs; SSVM alternates 2 rounds of closed-form alpha with SGD; repeats are "
    "few (seed: 20)."
)


def run_tables(args: argparse.Namespace, progress: Callable[[float, str], None]) -> dict[str, Any]:
    """For the app (:func:`hierlab.lab.tables.run_reproduction`): tables, checks and notes."""
    res = measure(args, progress)
    write_json(args.json, {**res, "paper": published()})
    lines = [
        f"Data: {res['data']}; {res['epochs']} epochs; {res['repeats']} split(s).",
        f"Published: seed {TABLE4.seed_file[:3]}, {TABLE4.where}.",
        DIFFERENCES,
    ]
    return app_result(res["numbers"], CLAIMS, lines, tables(res["numbers"], res["chosen"]))


def run(args: argparse.Namespace) -> int:
    """Print our IPC accuracies beside Table 4's, the verdicts and what differs."""
    return print_result(run_tables(args, stderr_progress(NAME)))
