"""A solver race: seed 000's Algorithm 1 as printed, line-search RDA and BCFW on one problem.

Each solver gets the same training objective (one seed-000 method, one ``C``) and the same
budget of solver seconds, and the race records the certified gap ``upper - lower`` of every
state against the seconds spent: the lesson of Algorithm 1 is how much *certified* progress a
second buys. All three start at ``W = 0`` with the lower bound 0, where the gap is ``J(0)``;
the summary reports how many decades of that gap each solver closed per second.

======================  ===============================================================
``rda-paper``           Algorithm 1 of seed 000 with the weights ``l_t = 1/t`` as printed
                        (:class:`~hierlab.solvers.rda.RDA`, ``averaging="uniform"``)
``rda-linesearch``      the same iteration with the weight maximising the lower bound
``bcfw``                block-coordinate Frank-Wolfe on the dual
                        (:class:`~hierlab.solvers.bcfw.BCFW`; on large data its in-epoch
                        states carry the last exact bounds, marked ``exact=False``)
======================  ===============================================================

Every number in a trace is certified: ``lower <= J* <= upper`` (the bounds of the solvers'
own states); the traces differ only in how fast they get there.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from hierlab.core.dataset import encode_labels
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.objective import Objective
from hierlab.core.registry import make_estimator
from hierlab.core.solver import Solver, SolverState, solve
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import check_X
from hierlab.solvers.bcfw import BCFW
from hierlab.solvers.rda import RDA

__all__ = ["RACE_METHODS", "SOLVERS", "RaceResult", "make_solver", "race_objective", "run_race"]

#: the racers: name -> one line on what runs
SOLVERS: dict[str, str] = {
    "rda-paper": "Algorithm 1 of seed 000 (RDA), weights 1/t as printed",
    "rda-linesearch": "Algorithm 1 of seed 000 (RDA), weight maximising the lower bound",
    "bcfw": "block-coordinate Frank-Wolfe on the dual",
}

#: the methods whose objective both RDA and BCFW solve (seed 000)
RACE_METHODS = ("flatmult", "orthognl", "hiermult", "transfer", "treeloss")

#: the columns of a trace
COLUMNS = ("seconds", "iteration", "upper", "lower", "gap", "relative_gap", "exact")


@dataclass
class RaceResult:
    """What :func:`run_race` returns.

    Attributes
    ----------
    traces : dict of str to DataFrame
        Per solver, the common start (``W = 0``, 0 s) then one row per state: ``seconds``
        (solver time), ``iteration``, ``upper``,
        ``lower``, ``gap`` (``upper - lower``, certified), ``relative_gap`` (``gap / upper``)
        and ``exact`` (False for BCFW's in-epoch states, whose bounds are the last exact ones).
    method : str
    C : float
    max_time : float
        The budget of each solver, in solver seconds.
    J0 : float
        ``J(0)``, the common starting gap (``W = 0``, lower bound 0).
    algorithms : dict of str to str
        One line per solver on what ran.
    """

    traces: dict[str, pd.DataFrame]
    method: str
    C: float
    max_time: float
    J0: float
    algorithms: dict[str, str] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """One row per solver: the certified gap reached, iterations, seconds, and the gap
        closed per second (``log10(J(0) / gap) / seconds``, decades per second).

        Returns
        -------
        DataFrame indexed by solver with columns ``gap``, ``relative_gap``, ``upper``,
        ``lower``, ``iterations``, ``seconds``, ``decades_per_second``.
        """
        rows = []
        for name, df in self.traces.items():
            last = df.iloc[-1]
            gap, sec = float(last["gap"]), float(last["seconds"])
            closed = math.log10(self.J0 / gap) if gap > 0 and self.J0 > 0 else math.inf
            rows.append(
                {
                    "solver": name,
                    "gap": gap,
                    "relative_gap": float(last["relative_gap"]),
                    "upper": float(last["upper"]),
                    "lower": float(last["lower"]),
                    "iterations": int(last["iteration"]),
                    "seconds": sec,
                    "decades_per_second": closed / sec if sec > 0 else math.inf,
                }
            )
        return pd.DataFrame(rows).set_index("solver")


def make_solver(name: str, max_time: float, max_iter: int = 10**7) -> Solver:
    """The solver called ``name`` (a key of :data:`SOLVERS`) with a time budget."""
    if name == "rda-paper":
        return RDA(max_iter=max_iter, max_time=max_time, averaging="uniform")
    if name == "rda-linesearch":
        return RDA(max_iter=max_iter, max_time=max_time, averaging="linesearch")
    if name == "bcfw":
        return BCFW(max_iter=max_iter, max_time=max_time)
    raise ParameterError(f"unknown solver {name!r}; the race knows {', '.join(SOLVERS)}")


def race_objective(
    X: Any,
    y: Any,
    taxonomy: Taxonomy,
    method: str = "flatmult",
    C: float = 1.0,
    params: dict[str, Any] | None = None,
) -> Objective:
    """The training objective of ``method`` on ``(X, y)``: what every racer minimises.

    ``y`` holds node names (or node ids); ``X`` is validated as an estimator's ``fit`` does;
    ``params`` are further estimator parameters that shape the objective (e.g. ORTHOGNL's
    ``alpha``).
    """
    key = str(method).lower()
    if key not in RACE_METHODS:
        raise ParameterError(
            f"the race runs the seed-000 methods {', '.join(RACE_METHODS)}, not {method!r}"
        )
    est = make_estimator(key, taxonomy=taxonomy, C=C, **(params or {}))
    Xv = check_X(X)
    y_arr = np.asarray(y)
    ids = y_arr.astype(np.int64) if np.issubdtype(y_arr.dtype, np.integer) else None
    if ids is None:
        enc = encode_labels(y_arr, taxonomy)
        if sp.issparse(enc):
            raise DataError("the race needs one label per row (seed 000 is single-label)")
        ids = np.asarray(enc, dtype=np.int64)
    if len(ids) != Xv.shape[0]:
        raise DataError(f"X has {Xv.shape[0]} rows but y has {len(ids)} labels")
    if len(ids) and (ids.min() < 0 or ids.max() >= taxonomy.n_nodes):
        raise DataError(f"node ids must lie in 0 .. {taxonomy.n_nodes - 1}")
    if not float(C) > 0:
        raise ParameterError(f"C must be positive, got {C!r}")
    est.taxonomy_ = taxonomy
    obj: Objective = est._objective(Xv, ids)
    return obj


def _trace(states: list[SolverState], J0: float) -> pd.DataFrame:
    """The states as a trace (see :class:`RaceResult`), after the common start: ``W = 0`` at 0
    seconds, ``upper = J(0)`` and ``lower = 0`` (every seed-000 objective is >= 0). The
    bounds are the best so far, the start included."""
    rows = [{"seconds": 0.0, "iteration": 0, "upper": J0, "lower": 0.0, "exact": True}]
    for s in states:
        rows.append(
            {
                "seconds": s.elapsed,
                "iteration": s.iteration,
                "upper": s.upper,
                "lower": s.lower if s.lower is not None else np.nan,
                "exact": bool(s.extra.get("exact", True)),
            }
        )
    df = pd.DataFrame(rows, columns=list(COLUMNS))  # gap and relative_gap: set below
    # the start is an iterate of every racer: its bounds stay certified after it (a solver
    # whose first own state is worse than J(0), e.g. BCFW after one epoch, keeps J(0))
    df["upper"] = np.minimum.accumulate(df["upper"].to_numpy(dtype=float))
    df["lower"] = np.fmax.accumulate(df["lower"].to_numpy(dtype=float))
    df["gap"] = df["upper"] - df["lower"]
    up = df["upper"].to_numpy(dtype=float)
    df["relative_gap"] = np.divide(
        df["gap"].to_numpy(dtype=float), np.abs(up), out=np.zeros(len(df)), where=up != 0
    )
    return df


def _run_one(
    solver: Solver, objective: Objective, rtol: float, report: Callable[[float], None]
) -> list[SolverState]:
    """Every state of one racer (``report(seconds)`` after each); warnings silenced (an
    unconverged racer is the point of a race)."""
    states: list[SolverState] = []

    def record(state: SolverState) -> bool:
        states.append(state)
        report(state.elapsed)
        return False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        solve(solver, objective, callbacks=[record], tol=0.0, rtol=rtol, warn=False)
    return states


def _check_race(max_time: Any, solvers: Sequence[str]) -> list[str]:
    """The solvers' names, after checking them and the budget (:class:`ParameterError`)."""
    if not (isinstance(max_time, int | float) and math.isfinite(max_time) and max_time > 0):
        raise ParameterError(f"max_time must be a positive number of seconds, got {max_time!r}")
    names = [str(s) for s in solvers]
    if not names:
        raise ParameterError("the race needs at least one solver")
    for s in names:
        if s not in SOLVERS:
            raise ParameterError(f"unknown solver {s!r}; the race knows {', '.join(SOLVERS)}")
    return names


def run_race(
    X: Any,
    y: Any,
    taxonomy: Taxonomy,
    *,
    method: str = "flatmult",
    C: float = 1.0,
    max_time: float = 5.0,
    solvers: Sequence[str] = ("rda-paper", "rda-linesearch", "bcfw"),
    rtol: float = 0.0,
    params: dict[str, Any] | None = None,
    progress: Callable[[str, float], None] | None = None,
    warm_up: bool = True,
) -> RaceResult:
    """Run each solver on the same objective for ``max_time`` solver seconds.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Node names (or node ids), one per row.
    taxonomy : Taxonomy
    method : str, default "flatmult"
        A seed-000 method (:data:`RACE_METHODS`).
    C : float, default 1.0
        Weight of the summed hinge (scikit-learn's convention, as the estimators).
    max_time : float, default 5.0
        Solver seconds per racer (callbacks excluded).
    solvers : sequence of str
        Keys of :data:`SOLVERS`, in running order.
    rtol : float, default 0.0
        A racer stops early once its certified gap is below ``rtol * upper`` (0: it uses its
        whole budget).
    params : dict, optional
        Further parameters of the method's estimator that shape the objective (e.g.
        ``{"alpha": 0.6}`` for ORTHOGNL); its solver settings are the race's own.
    progress : callable, optional
        ``progress(solver, fraction)`` after every state, ``fraction`` in [0, 1] of the whole
        race's budget (for a progress bar).
    warm_up : bool, default True
        First run each solver for one iteration on a few rows, untimed, so that no racer is
        charged for loading its compiled kernels (numba) or first-call caches.

    Returns
    -------
    RaceResult

    Raises
    ------
    ParameterError
        Unknown method or solver, or a non-positive budget or C.
    DataError
        Labels that are not nodes of the taxonomy, or sizes that disagree.
    """
    names = _check_race(max_time, solvers)
    objective = race_objective(X, y, taxonomy, method, C, params)
    J0 = float(objective.value(objective.initial()))
    if warm_up:
        k = min(objective.X.shape[0], 50)
        small = race_objective(objective.X[:k], objective.y[:k], taxonomy, method, C, params)
        for name in names:
            solve(make_solver(name, float(max_time), max_iter=1), small, warn=False)
    traces: dict[str, pd.DataFrame] = {}
    for k, name in enumerate(names):

        def report(elapsed: float, _k: int = k, _name: str = name) -> None:
            if progress is not None:
                progress(_name, (_k + min(elapsed / float(max_time), 1.0)) / len(names))

        states = _run_one(make_solver(name, float(max_time)), objective, float(rtol), report)
        traces[name] = _trace(states, J0)
    return RaceResult(
        traces=traces,
        method=str(method).lower(),
        C=float(C),
        max_time=float(max_time),
        J0=J0,
        algorithms={n: SOLVERS[n] for n in names},
    )
