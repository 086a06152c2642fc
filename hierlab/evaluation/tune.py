"""Choosing C for the user: a warm-started, certified path over C scored on a validation split.

``tune(estimator, X, y)`` fits the estimator for every ``C`` of a grid, from the most regularised
to the least, on one seeded training part, and scores each fit on the held-out part with a
hierarchical scorer (:mod:`hierlab.evaluation.scoring`). The estimators solved by BCFW on the
dual (the seed-000 family: FLATMULT, TREELOSS, HIERMULT, TRANSFER, ORTHOGNL) start every fit
from the dual point of the previous one: the dual variables live on one simplex per block
whatever ``C`` is (``C`` scales the tables, not the simplices), so the last point stays feasible
and only the change of ``C`` has to be made up; each fit still ends with its own certificate
(``upper - lower`` for its own ``C``). Other estimators are fitted cold at each ``C``.
Finally the best ``C`` is refitted on all the data (``refit=True``).

The path stops early once ``patience`` values of ``C`` since the last improvement have scored
below the best (the largest ``C`` are the slowest fits, and past the best one the
score usually keeps falling), or once ``max_time`` seconds have gone; ``TuneResult.stopped`` says
why the path ended and which values were not fitted.

On a dask.distributed cluster (``client=`` or :func:`hierlab.connect`) the grid is cut into
``n_paths`` runs of consecutive ``C`` (one per worker thread by default), each a warm-started
path of its own on one worker, the split sent to the workers once. A path's first ``C`` is
fitted cold and ``patience`` counts within each path; ``n_paths``, not where the paths ran,
decides the result: ``tune(..., n_paths=k)`` on this machine gives the same table.

The cost is the path on one split, against ``len(Cs) x n_splits`` cold fits for a grid search
(``hierlab/benchmarks/tune.py`` measures both on 20 Newsgroups).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from hierlab.core.cluster import active_client, cluster_cores, job_cluster, run_tasks, share
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import Param
from hierlab.evaluation.scoring import hierarchical_scorer

__all__ = ["DEFAULT_CS", "TuneResult", "tune"]

#: the default grid: 10^-2 ... 10^2, two values per decade (scikit-learn's C)
DEFAULT_CS: tuple[float, ...] = tuple(float(c) for c in np.logspace(-2, 2, 9))


@dataclass
class TuneResult:
    """What :func:`tune` found.

    Attributes
    ----------
    best_C : float
        The ``C`` with the best validation score (the smallest such ``C`` on ties).
    path : pandas.DataFrame
        One row per ``C`` in the order fitted: ``C``, ``score`` (greater is better), ``fit_time``
        (seconds), ``n_iter``, ``gap`` (the certified gap, NaN for uncertified methods),
        ``warm`` (started from the previous fit's dual point).
    estimator : estimator or None
        The estimator refitted on all the data with ``best_C`` (``refit=True``).
    scoring : str
    time : float
        Seconds for the whole search, refit included.
    stopped : str
        Why the path ended: ``"grid"`` (every ``C`` fitted), ``"patience"``, ``"max_time"`` or
        ``"stopped"`` (a stop was requested; no refit then).
    skipped : tuple of float
        The values of the grid not fitted.
    """

    best_C: float
    path: pd.DataFrame
    estimator: Any = None
    scoring: str = "hierarchical_f1"
    time: float = 0.0
    stopped: str = "grid"
    skipped: tuple[float, ...] = ()


def _warm_capable(est: Any) -> bool:
    """Whether ``est`` can start a fit from a dual point: its solver is one of its class's
    ``_warm_solvers`` (BCFW on the seed-000 duals)."""
    return getattr(est, "solver", None) in getattr(est, "_warm_solvers", ())


def _path(
    est: Any,
    grid: Sequence[float],
    train: tuple[Any, Any],
    valid: tuple[Any, Any],
    scoring: str,
    warm_start: bool,
    patience: int | None = None,
    deadline: float | None = None,
    callbacks: Sequence[Any] = (),
) -> tuple[list[dict[str, Any]], str]:
    """Fit ``est`` at every ``C`` of ``grid`` on ``train`` (each from the last dual point when
    ``warm_start``) and score it on ``valid``; one row per ``C`` fitted, and why the path ended.

    The path ends early once ``patience`` scores since the last improvement fall below the best
    (ties count for nothing: a plateau of equal scores does not end it), when
    ``time.perf_counter()`` passes ``deadline`` (checked between fits), or once a callback says
    ``stop_requested()`` (a :class:`~hierlab.core.callbacks.StopFlag`: the fit under way stops
    early and is scored; ``"stopped"``, and :func:`tune` does not refit). ``callbacks`` go to
    every fit; a callback's ``on_path_row(row)`` gets each row as soon as its ``C`` is scored."""
    scorer = hierarchical_scorer(scoring)
    rows: list[dict[str, Any]] = []
    dual = None
    best, since_best = -np.inf, 0
    rows_to = [cb.on_path_row for cb in callbacks if callable(getattr(cb, "on_path_row", None))]
    stops = [cb.stop_requested for cb in callbacks if callable(getattr(cb, "stop_requested", None))]
    for C in grid:
        if rows and any(stop() for stop in stops):
            return rows, "stopped"
        if rows and deadline is not None and time.perf_counter() >= deadline:
            return rows, "max_time"
        est.set_params(C=C)
        warm = warm_start and dual is not None and _warm_capable(est)
        est._warm_dual = dual if warm else None
        est._keep_dual = warm_start
        t0 = time.perf_counter()
        est.fit(*train, callbacks=list(callbacks))
        fit_time = time.perf_counter() - t0
        dual = getattr(est, "_warm_dual", None)
        rows.append(
            {
                "C": C,
                "score": float(scorer(est, *valid)),
                "fit_time": fit_time,
                "n_iter": int(getattr(est, "n_iter_", 0)),
                "gap": float(getattr(est, "gap_", np.nan)),
                "warm": bool(warm),
            }
        )
        for tell in rows_to:
            tell(dict(rows[-1]))
        if rows[-1]["score"] > best:
            best, since_best = rows[-1]["score"], 0
        elif rows[-1]["score"] < best:  # a tie (a plateau) neither counts nor resets
            since_best += 1
            if patience is not None and since_best >= patience:
                return rows, "patience"
    return rows, "grid"


def tune(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    Cs: Sequence[float] | None = None,
    validation: float = 0.2,
    scoring: str = "hierarchical_f1",
    random_state: int = 0,
    refit: bool = True,
    warm_start: bool = True,
    path_rtol: float | None = 1e-2,
    patience: int | None = 2,
    max_time: float | None = None,
    n_paths: int | None = None,
    client: Any = None,
    callbacks: Sequence[Any] = (),
) -> TuneResult:
    """Choose ``C`` by a warm-started path scored on a validation split.

    Parameters
    ----------
    estimator : HierarchicalClassifier
        Any hierlab estimator with a ``C`` parameter (not modified; clones are fitted).
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels (node names), single-label.
    Cs : sequence of float, optional
        The grid (default :data:`DEFAULT_CS`); fitted in increasing order.
    validation : float, default 0.2
        Fraction of the rows held out for scoring (a seeded split, stratified when every
        label has at least two rows and both parts have room for every label).
    scoring : str, default "hierarchical_f1"
        A name of :data:`hierlab.evaluation.scoring.SCORERS`.
    random_state : int, default 0
        Seed of the split.
    refit : bool, default True
        Refit the best ``C`` on all rows.
    warm_start : bool, default True
        Start each fit from the previous fit's dual point (when the estimator's solver allows).
    path_rtol : float or None, default 1e-2
        For certified estimators (an ``rtol`` parameter), the relative gap the fits of the path
        stop at, when looser than the estimator's own: choosing ``C`` needs the validation
        score, which a 1% certified gap no longer moves; the refit uses the estimator's own
        ``rtol``. None: the estimator's own throughout.
    patience : int or None, default 2
        End the path once this many values of ``C`` since the last improvement score below the
        best so far (ties do not count; None: fit the whole grid). The validation score is
        usually unimodal in ``C``; where it is not, a larger patience or None searches further.
    max_time : float or None, default None
        Seconds the path may take; checked between fits (the fit under way finishes, the first
        ``C`` is always fitted). The refit is not counted; each of several paths
        has its own.
    n_paths : int or None, default None
        Cut the grid into this many runs of consecutive ``C``, each a warm-started path of its
        own (its first ``C`` cold); they run in parallel on a cluster. None: one path here,
        one per worker thread on a cluster.
    client : distributed.Client or str, optional
        A dask.distributed cluster (or its address) the paths run on; default: the cluster of
        :func:`hierlab.connect`, if any.
    callbacks : sequence of Callback, optional
        Given to each fit of a path run here, not on a cluster (see :func:`_path`).

    Returns
    -------
    TuneResult
    """
    grid = _check(estimator, Cs, validation, patience, max_time)
    t_start = time.perf_counter()
    y_arr = np.asarray(y, dtype=object)
    X_tr, X_va, y_tr, y_va = _split(X, y_arr, validation, random_state)
    est = _path_estimator(estimator, path_rtol)
    with job_cluster(client):
        split = (X_tr, y_tr, X_va, y_va)
        args = (scoring, warm_start, patience, max_time, tuple(callbacks))
        rows, stopped = _run_paths(est, _pieces(grid, n_paths), split, *args)
        path, best_C, final = _best(estimator, rows, X, y_arr, refit and stopped != "stopped")
    skipped = tuple(c for c in grid if c not in set(path["C"]))
    elapsed = time.perf_counter() - t_start
    return TuneResult(best_C, path, final, scoring, elapsed, stopped, skipped)


def _best(
    estimator: Any, rows: list[dict[str, Any]], X: Any, y: np.ndarray, refit: bool
) -> tuple[pd.DataFrame, float, Any]:
    """The path as a table, its best ``C`` and, when ``refit``, ``estimator`` refitted with it
    on all rows."""
    path = pd.DataFrame(rows)
    best_C = float(path["C"].iloc[int(np.argmax(path["score"].to_numpy()))])
    final = clone(estimator).set_params(C=best_C).fit(X, y) if refit else None
    return path, best_C, final


def _path_estimator(estimator: Any, path_rtol: float | None) -> Any:
    """A clone of ``estimator`` for the path: its ``rtol`` loosened to ``path_rtol``."""
    est = clone(estimator)
    own_rtol = est.get_params().get("rtol")
    if path_rtol is not None and own_rtol is not None and float(path_rtol) > float(own_rtol):
        est.set_params(rtol=float(path_rtol))
    return est


def _pieces(grid: list[float], n_paths: int | None) -> list[list[float]]:
    """The grid cut into ``n_paths`` runs of consecutive ``C`` (default: 1 here, one per
    worker thread on a cluster), none empty."""
    if n_paths is None:
        client = active_client()
        n_paths = 1 if client is None else cluster_cores(client)
    if isinstance(n_paths, bool) or int(n_paths) != n_paths or n_paths < 1:
        raise ParameterError(f"n_paths must be a positive integer, got {n_paths!r}")
    k = min(int(n_paths), len(grid))
    return [[float(c) for c in piece] for piece in np.array_split(np.asarray(grid), k)]


def _path_task(
    X_tr: Any,
    y_tr: Any,
    X_va: Any,
    y_va: Any,
    est: Any,
    grid: list[float],
    scoring: str,
    warm_start: bool,
    patience: int | None,
    max_time: float | None,
    callbacks: Sequence[Any] = (),
) -> tuple[list[dict[str, Any]], str]:
    """One path of :func:`tune` where it runs (its clock starts there): :func:`_path`."""
    deadline = None if max_time is None else time.perf_counter() + float(max_time)
    train, valid = (X_tr, y_tr), (X_va, y_va)
    return _path(
        clone(est), grid, train, valid, scoring, warm_start, patience, deadline, callbacks
    )


def _run_paths(
    est: Any,
    pieces: list[list[float]],
    split: tuple[Any, Any, Any, Any],
    *args: Any,
) -> tuple[list[dict[str, Any]], str]:
    """Every path of ``pieces`` (:func:`_path_task` with ``args``), on the cluster if one is
    in use, ``split`` sent there once; their rows in grid order and why they ended. The last
    of ``args``, the callbacks, only reach paths run here."""
    if active_client() is not None:
        args = (*args[:-1], ())
    items = [(est, piece, *args) for piece in pieces]
    runs = list(run_tasks(_path_task, items, share(*split), one_per_thread=True))
    rows = [row for r, _ in runs for row in r]
    return rows, _why_ended([why for _, why in runs])


def _why_ended(reasons: list[str]) -> str:
    """One reason for several paths: ``stopped`` over ``max_time`` over ``patience`` over
    ``grid``."""
    for why in ("stopped", "max_time", "patience"):
        if why in reasons:
            return why
    return "grid"


def _check(
    estimator: Any,
    Cs: Sequence[float] | None,
    validation: float,
    patience: int | None,
    max_time: float | None,
) -> list[float]:
    """The grid, increasing, after checking :func:`tune`'s arguments (``ParameterError``)."""
    if not hasattr(estimator, "get_params") or "C" not in estimator.get_params():
        raise ParameterError(f"tune: {type(estimator).__name__} has no parameter C to tune")
    values = DEFAULT_CS if Cs is None else Cs
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise ParameterError(f"tune: Cs must be a list of positive numbers, got {Cs!r}")
    try:
        grid = sorted(_C_GRID.validate(c, owner="tune") for c in values)
    except ParameterError as exc:
        raise ParameterError(f"Cs must be positive numbers: {exc}") from None
    if not grid:
        raise ParameterError("tune: Cs must hold at least one value of C")
    validation = _VALIDATION.validate(validation, owner="tune")
    if patience is not None and (
        isinstance(patience, bool) or int(patience) != patience or patience < 1
    ):
        raise ParameterError(f"patience must be a positive integer or None, got {patience!r}")
    if max_time is not None and not float(max_time) >= 0:
        raise ParameterError(f"max_time must be a number of seconds >= 0, got {max_time!r}")
    return grid


#: the values of tune's grid and validation fraction, declared as the estimators declare theirs
_C_GRID = Param("Cs", "float", 1.0, low=0.0, low_open=True, log=True)
_VALIDATION = Param("validation", "float", 0.2, low=0.0, high=1.0, low_open=True, high_open=True)


def _split(X: Any, y: np.ndarray, validation: float, random_state: int) -> list[Any]:
    """A seeded train/validation split, stratified when every label has two rows and each
    side has room for every label once."""
    n_rows = X.shape[0] if hasattr(X, "shape") and len(X.shape) == 2 else len(X)
    if n_rows != len(y):
        raise DataError(f"tune: X has {n_rows} rows but y has {len(y)} labels")
    n_valid = int(np.ceil(validation * len(y)))
    if not 1 <= n_valid <= len(y) - 2:
        raise ParameterError(
            f"tune: validation={validation} holds out {n_valid} of {len(y)} rows: both the "
            "fitted part (at least 2 rows) and the held-out part (at least 1) need rows"
        )
    Param("random_state", "seed", 0).validate(random_state, owner="tune")
    y_str = y.astype(str)
    _, counts = np.unique(y_str, return_counts=True)
    n_valid = int(np.ceil(validation * len(y_str)))
    fits = min(n_valid, len(y_str) - n_valid) >= len(counts)
    strat = y_str if counts.min() >= 2 and fits else None
    out: list[Any] = train_test_split(
        X, y, test_size=validation, random_state=random_state, stratify=strat
    )
    return out
