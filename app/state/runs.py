"""Fitted runs: training a method on the current split, the run history, and the choice of
methods and their starting values on the Train page.

A run is ``hierlab.make_estimator`` + ``fit`` with the live plot's callbacks, scored with
``hierlab.evaluation.metrics.evaluate`` on the split's test rows.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from app.state.stages import predict_by_block
from app.state.views import RunViews, prepare_views
from hierlab import HierDataset, Taxonomy, get_method, list_methods, make_estimator
from hierlab.core.dataset import is_label_set
from hierlab.core.exceptions import IgnoredParameterWarning
from hierlab.core.registry import Check
from hierlab.evaluation.metrics import evaluate

if TYPE_CHECKING:
    from app.state.data import DatasetEntry
    from hierlab.lab.export import RunResult

__all__ = [
    "Run",
    "RunSession",
    "compatible_methods",
    "count_text",
    "default_baseline",
    "default_method",
    "delete_run",
    "display_name",
    "distinguishing_params",
    "fit_run",
    "iteration_budget",
    "json_default",
    "method_check",
    "n_passes",
    "resolved_params",
    "run_from_result",
    "run_label",
    "runs_json",
    "runs_table",
    "suggested_params",
    "trivial_reasons",
]


def params_text(params: dict[str, Any]) -> str:
    """``"C=1, max_iter=100"``: parameters as runs are labelled."""
    return ", ".join(
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items()
    )


def display_name(method: str) -> str:
    """The method as the papers and its card name it (:attr:`MethodSpec.display_name`):
    ``"FLATMULT"``, ``"HR-SVM"``, ``"Hieron (online)"``."""
    return get_method(method).display_name


def _same(a: Any, b: Any) -> bool:
    """Equal as parameter values (``1`` and ``1.0`` are; ``None`` only equals ``None``)."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b) or (math.isnan(float(a)) and math.isnan(float(b)))
    return bool(a == b) if type(a) is type(b) else False


def distinguishing_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters that tell a run apart from one with the method's defaults.

    Parameters
    ----------
    method : str
        Registry name.
    params : dict
        The run's parameters (by code name).

    Returns
    -------
    dict of str -> value
        By :attr:`~hierlab.core.params.Param.label` (the paper's symbol, else words: what the
        Train page's widgets are called), the values that differ from the defaults, among the
        parameters the run's settings use (``averaging`` is no difference under BCFW), in
        schema order.
    """
    spec = get_method(method)
    defaults = {**spec.defaults(), **spec.fixed}
    return {
        p.label: params[p.name]
        for p in spec.active_params(params)
        if p.name in params and not _same(params[p.name], defaults.get(p.name))
    }


def run_label(
    run_id: int, method: str, params: dict[str, Any], taxonomy_source: str = "given"
) -> str:
    """``"#3 FLATMULT (C=10)"``: the id, :func:`display_name` and
    :func:`distinguishing_params`, and ``[induced tree]`` when trained on an induced taxonomy."""
    shown = params_text(distinguishing_params(method, params))
    tax = " [induced tree]" if taxonomy_source == "induced" else ""
    return f"#{run_id} {display_name(method)}" + (f" ({shown})" if shown else "") + tax


@dataclass
class Run:
    """One trained model, kept in the session's run history.

    Attributes
    ----------
    id : int
    method : str
        Registry name.
    params : dict
        The method's parameters as validated.
    dataset_key, dataset_name : str
    split : dict
        The split the run used (see :attr:`DatasetEntry.split`).
    taxonomy_source : str
        ``"given"`` or ``"induced"``.
    taxonomy : Taxonomy
        The taxonomy the model was trained with.
    fit_time, predict_time, solver_time : float
        Seconds (``solver_time`` excludes callbacks such as the live plot).
    metrics : dict of str -> float
        Test-set metrics from ``hierlab.evaluation.metrics.evaluate``.
    history : DataFrame
        The solver's states (iteration, elapsed, upper, lower, gap, extras).
    estimator : HierarchicalClassifier
        The fitted estimator.
    y_test, y_pred : ndarray
        Test labels and predictions (node names).
    stopped : bool
        Stopped by the user before the solver's own stopping rule.
    kept : dict or None
        The solver state whose iterate the model holds (``kept_state_`` of the estimator:
        ``iteration``, ``upper``, ``lower``, ``gap``): after a stop, the certified iterate kept.
    converged : bool
    warnings : list of str
    trivial : list of str
        Why the model is trivial (every weight zero, one class predicted for every test row),
        from :func:`trivial_reasons`; empty for a model that discriminates.
    started : float
        Unix time.
    views : RunViews or None
        What Explore and Compare show of the run, computed once (:mod:`app.state.views`).
    """

    id: int
    method: str
    params: dict[str, Any]
    dataset_key: str
    dataset_name: str
    split: dict[str, Any]
    taxonomy_source: str
    taxonomy: Taxonomy
    fit_time: float
    predict_time: float
    solver_time: float
    metrics: dict[str, float]
    history: pd.DataFrame
    estimator: Any
    y_test: np.ndarray
    y_pred: np.ndarray
    stopped: bool = False
    kept: dict[str, Any] | None = None
    converged: bool = True
    warnings: list[str] = field(default_factory=list)
    trivial: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    views: RunViews | None = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        """``"#3 ORTHOGNL (C=10)"``: how runs are named in lists (:func:`run_label`)."""
        return run_label(self.id, self.method, self.params, self.taxonomy_source)

    @property
    def name(self) -> str:
        """The method's display name (:func:`display_name`)."""
        return display_name(self.method)

    @property
    def status(self) -> str:
        """``"stopped"``, ``"converged"`` or ``"max iter"``."""
        return "stopped" if self.stopped else ("converged" if self.converged else "max iter")

    def record(self) -> dict[str, Any]:
        """JSON-ready summary: parameters, times, metrics and the solver history."""
        return {
            "id": self.id,
            "method": self.method,
            "params": self.params,
            "dataset": self.dataset_name,
            "split": self.split,
            "taxonomy": self.taxonomy_source,
            "fit_time": self.fit_time,
            "predict_time": self.predict_time,
            "solver_time": self.solver_time,
            "n_iter": n_passes(self.history),
            "n_states": len(self.history),
            "converged": self.converged,
            "stopped": self.stopped,
            "kept_iterate": _kept_record(self.kept),
            "metrics": self.metrics,
            "trivial_model": list(self.trivial),
            "warnings": list(self.warnings),
            "algorithm": getattr(self.estimator, "algorithm_", None),
            "history": self.history.replace({np.nan: None}).to_dict(orient="list"),
            "started": self.started,
        }


class RunSession(Protocol):
    """What filing a run needs of the session (:class:`app.state.session.AppState` has it):
    the run history and the ids."""

    runs: list[Run]

    def new_id(self) -> int:
        """A fresh id for a run, job or comparison."""
        ...

    def run(self, run_id: int) -> Run | None:
        """The run with id ``run_id``."""
        ...


def n_passes(history: pd.DataFrame) -> int:
    """The solver's last iteration (pass, epoch) in ``history``: the chart's last x."""
    if "iteration" not in history or not len(history):
        return 0
    return int(pd.to_numeric(history["iteration"], errors="coerce").max())


def count_text(history: pd.DataFrame) -> str:
    """``"12 iterations"``, or ``"69 passes, 15 certified states"`` where the states are not
    one a pass (estimates between certificates, a certificate every few passes)."""
    n = n_passes(history)
    if "exact" in history:
        exact = int(history["exact"].map(lambda v: v is not False).sum())
    else:
        exact = len(history)
    if exact != n or exact != len(history):
        return f"{n} passes, {exact} certified states"
    return f"{n} iterations"


def _kept_record(kept: dict[str, Any] | None) -> dict[str, Any] | None:
    """The kept iterate's iteration and bounds (``upper``, ``lower``, ``gap``) for the record."""
    if kept is None:
        return None
    return {k: kept.get(k) for k in ("iteration", "upper", "lower", "gap", "epoch") if k in kept}


def _solver_time(history: pd.DataFrame, fit_time: float) -> float:
    """The solver's own clock at its last state (callbacks excluded), else the wall time."""
    if "elapsed" in history and len(history):
        return float(history["elapsed"].iloc[-1])
    return fit_time


# ---------------------------------------------------------------------------------- training
def _all_zero(W: Any) -> bool:
    """Whether a weight array (dense or sparse) holds no non-zero value."""
    if W is None or not hasattr(W, "shape") or 0 in W.shape:
        return False
    data = W.data if hasattr(W, "nnz") else np.asarray(W)
    return not np.any(np.asarray(data) != 0)


def trivial_reasons(estimator: Any, y_pred: np.ndarray, n_train_classes: int) -> list[str]:
    """Why a fitted model is trivial, in words (empty when it is not).

    Two tests: every weight is zero (``coef_`` and ``intercept_`` where the model has them),
    and one class is predicted for every test row while the training rows had several. The
    iterations the solver recorded are named, so that a run stopped after one pass says so.

    Parameters
    ----------
    estimator : fitted estimator
    y_pred : ndarray of shape (n_test,)
        Its predictions on the test rows (labels, or tuples for multi-label rows).
    n_train_classes : int
        Distinct labels among the training rows.
    """
    hist = getattr(estimator, "history_", None)
    n_iter = getattr(estimator, "n_iter_", None)
    n_iter = (
        n_iter if isinstance(n_iter, int | np.integer) else (len(hist) if hist is not None else 0)
    )
    after = f" after {int(n_iter)} iteration(s) of its solver"
    out = []
    coef = getattr(estimator, "coef_", None)
    if coef is not None and _all_zero(coef):
        intercept = getattr(estimator, "intercept_", None)
        if intercept is None or _all_zero(np.atleast_1d(np.asarray(intercept, dtype=float))):
            out.append(
                "every weight of the model is zero" + after + ": it scores every example "
                "alike, and its predictions carry no information"
            )
    labels = {str(v) for v in y_pred}
    if len(y_pred) > 1 and len(labels) == 1 and n_train_classes > 1:
        out.append(
            f"it predicts {next(iter(labels))!r} for every one of the {len(y_pred)} test rows"
            + after
            + f" (the training rows have {n_train_classes} classes)"
        )
    return out


def _n_classes(y: Any) -> int:
    """Distinct labels (multi-label rows count each of their labels)."""
    seen: set[str] = set()
    for v in y:
        seen.update(map(str, v) if is_label_set(v) else (str(v),))
    return len(seen)


def _timed_fit(est: Any, train: HierDataset, callbacks: Iterable[Any]) -> tuple[float, list[str]]:
    """Fit ``est``; the wall time and the convergence and ignored-parameter warnings raised."""
    shown = (ConvergenceWarning, IgnoredParameterWarning)
    with warnings.catch_warnings(record=True) as caught:
        for category in shown:
            warnings.simplefilter("always", category)
        t0 = time.perf_counter()
        est.fit(train.X, train.y, callbacks=list(callbacks))
        fit_time = time.perf_counter() - t0
    return fit_time, [str(w.message) for w in caught if issubclass(w.category, shown)]


def fit_run(
    state: RunSession | None,
    entry: DatasetEntry,
    method: str,
    params: dict[str, Any],
    callbacks: Iterable[Any] = (),
    taxonomy: Taxonomy | None = None,
    taxonomy_source: str = "given",
    stopped: Callable[[], bool] | None = None,
    run_id: int | None = None,
) -> Run:
    """Train ``method`` on the entry's training rows, evaluate on its test rows.

    Parameters
    ----------
    state : RunSession or None
        The session (:class:`~app.state.session.AppState`): gives the run its id unless
        ``run_id`` does (the caller adds the run to ``state.runs``).
    entry : DatasetEntry
    method : str
    params : dict
        Validated by the method's parameter declarations (``Param.validate``).
    callbacks : iterable
        Solver callbacks (the live plot).
    taxonomy : Taxonomy, optional
        Train with this taxonomy instead of the data set's (an induced tree).
    taxonomy_source : str
    stopped : callable, optional
        Tells whether the user stopped the solver (recorded in the run).
    run_id : int, optional
        The run's id, reserved when the fit started (a background job).
    """
    if run_id is None and state is None:
        raise ValueError("fit_run needs the session (state) or a run_id")
    tax = taxonomy if taxonomy is not None else entry.taxonomy
    spec = get_method(method)
    clean = {p.name: p.validate(params[p.name], method) for p in spec.params if p.name in params}
    est = make_estimator(method, taxonomy=tax, **clean)
    callbacks = list(callbacks)
    fit_time, msgs = _timed_fit(est, entry.train, callbacks)
    t0 = time.perf_counter()
    y_pred = predict_by_block(est, entry.test.X, callbacks)
    predict_time = time.perf_counter() - t0
    y_test = np.asarray(entry.test.y, dtype=object)
    history = est.history_.copy()
    was_stopped = bool(stopped()) if stopped is not None else False
    was_stopped = was_stopped or getattr(est, "stop_reason_", "") == "callback"
    run = Run(
        id=run_id if run_id is not None else state.new_id(),  # type: ignore[union-attr]
        method=method,
        params=clean,
        dataset_key=entry.key,
        dataset_name=entry.name,
        split=dict(entry.split),
        taxonomy_source=taxonomy_source,
        taxonomy=tax,
        fit_time=fit_time,
        predict_time=predict_time,
        solver_time=_solver_time(history, fit_time),
        metrics=evaluate(y_test, y_pred, tax),
        history=history,
        estimator=est,
        y_test=y_test,
        y_pred=y_pred,
        stopped=was_stopped,
        converged=bool(est.converged_) and not was_stopped,
        warnings=[] if was_stopped else msgs,
        trivial=trivial_reasons(est, y_pred, _n_classes(entry.train.y)),
        kept=getattr(est, "kept_state_", None),
    )
    prepare_views(run, entry.test)  # Explore's views now, its probabilities in the background
    return run


def run_from_result(state: RunSession, entry: DatasetEntry, result: RunResult) -> Run:
    """A run of the history from one trained in-process by ``hierlab.lab`` (a guided demo)."""
    return Run(
        id=state.new_id(),
        method=result.spec.method,
        params=dict(result.spec.params),
        dataset_key=entry.key,
        dataset_name=entry.name,
        split=dict(entry.split),
        taxonomy_source=result.spec.taxonomy,
        taxonomy=result.taxonomy,
        fit_time=result.fit_time,
        predict_time=result.predict_time,
        solver_time=_solver_time(result.history, result.fit_time),
        metrics=dict(result.metrics),
        history=result.history,
        estimator=result.estimator,
        y_test=np.asarray(entry.test.y, dtype=object),
        y_pred=result.y_pred,
        converged=bool(getattr(result.estimator, "converged_", True)),
        trivial=trivial_reasons(result.estimator, result.y_pred, _n_classes(entry.train.y)),
    )


# ---------------------------------------------------------------------------------- history
#: session values that name runs by id: widget selections (a list, or one id)
RUN_SELECTIONS = (
    "compare_runs",
    "compare_proba_runs",
    "explore_run",
    "home_first_run",
    "train_delete_runs",
)
#: session caches keyed by run: ``{"run": id, ...}`` (one run's figures) or ``{(id, ...): v}``
RUN_CACHES = ("explore_figures",)


def delete_run(state: RunSession, run_id: int, session: Any = None) -> Run | None:
    """Remove a run from the session, everywhere it appears.

    The history (and so Explore's and Compare's lists, the runs JSON and the exports, which
    read it), the finished job of the jobs panel that trained it, the widget selections that
    name it, and the figures cached for it (its views and probabilities live on the run).
    Comparisons are not runs: a comparison that re-fitted the run's configuration keeps its
    own results.

    Parameters
    ----------
    state : RunSession
        The session (:class:`~app.state.session.AppState`; its ``jobs``, when it has them,
        lose the finished job that trained the run).
    run_id : int
    session : mapping, optional
        Where the widgets and caches live (default ``st.session_state``).

    Returns
    -------
    Run or None
        The removed run (None when there was no such run).
    """
    run = state.run(run_id)
    if run is None:
        return None
    state.runs = [r for r in state.runs if r.id != run_id]
    # the jobs panel's finished job that produced it
    jobs = getattr(state, "jobs", None)
    if isinstance(jobs, list):
        jobs[:] = [j for j in jobs if getattr(getattr(j, "run", None), "id", None) != run_id]
    if session is None:
        import streamlit as st

        session = st.session_state
    for key in RUN_SELECTIONS:
        if key not in session:
            continue
        value = session[key]
        if isinstance(value, list):
            session[key] = [v for v in value if v != run_id]
        elif value == run_id:
            del session[key]
    for key in RUN_CACHES:
        cache = session.get(key) if hasattr(session, "get") else None
        if not isinstance(cache, dict):
            continue
        if cache.get("run") == run_id:
            cache.clear()
        for k in [k for k in cache if isinstance(k, tuple) and k and k[0] == run_id]:
            del cache[k]
    return run


def runs_table(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per run: id, label, method (display name), data, taxonomy, every parameter,
    times, iterations, metrics."""
    return pd.DataFrame(
        [
            {
                "run": r.id,
                "label": r.label,
                "method": r.name,
                "data": r.dataset_name,
                "taxonomy": r.taxonomy_source,
                "params": params_text(r.params),
                "fit s": round(r.fit_time, 3),
                "iterations": n_passes(r.history),
                "status": r.status + (" (trivial model)" if r.trivial else ""),
                **{k: round(v, 4) for k, v in r.metrics.items()},
            }
            for r in runs
        ]
    )


def runs_json(runs: Sequence[Run]) -> str:
    """Every run's :meth:`Run.record` as a JSON document."""
    return json.dumps([r.record() for r in runs], indent=1, default=json_default)


def json_default(o: Any) -> Any:
    """``json.dumps``'s fallback for numpy scalars and arrays (anything else as text)."""
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ---------------------------------------------------------------------------------- methods
def compatible_methods(ds: HierDataset | None, taxonomy: Taxonomy | None = None) -> list[str]:
    """Registered methods that accept the data set (multi-label, DAG)."""
    names = list_methods()
    if ds is None:
        return names
    tree = (taxonomy or ds.taxonomy).is_tree
    specs = [get_method(n) for n in names]
    return [s.name for s in specs if (s.multilabel or not ds.is_multilabel) and (s.dag or tree)]


def default_method(names: Sequence[str]) -> str | None:
    """The method selected first: the best ranked (:attr:`MethodSpec.rank`: a quick one with
    certified bounds, so the live chart shows both bounds closing), else any with bounds, else
    the first."""
    ranked = [n for n in names if get_method(n).rank is not None]
    if ranked:
        return min(ranked, key=lambda n: get_method(n).rank or 0)
    certified = [n for n in names if get_method(n).bounds]
    pool = certified or list(names)
    return pool[0] if pool else None


def default_baseline(names: Sequence[str]) -> str | None:
    """The baseline compared against first: the best ranked (:attr:`MethodSpec.rank`) of the
    baselines among ``names``, or None."""
    ranked = [n for n in names if get_method(n).seed == "baseline" and get_method(n).rank]
    return default_method(ranked)


def iteration_budget(method: str, params: dict[str, Any]) -> int | None:
    """The number of iterations the method will run at most (for the progress bar), as its
    registry entry says (:meth:`MethodSpec.iterations`); None where unknown (resolved at fit
    time: the live display then reads the solver's own limit)."""
    return get_method(method).iterations(params)


def method_check(method: str, params: dict[str, Any], taxonomy: Taxonomy) -> Check | None:
    """The method's own check of ``params`` on ``taxonomy`` (:meth:`MethodSpec.check`; ORTHOGNL:
    is ``alpha`` admissible), or None where it has none."""
    return get_method(method).check(taxonomy, params)


def suggested_params(method: str, taxonomy: Taxonomy) -> dict[str, Any]:
    """Initial widget values: the declared defaults, resolved by :func:`resolved_params`."""
    return resolved_params(method, get_method(method).defaults(), taxonomy)


def resolved_params(method: str, values: dict[str, Any], taxonomy: Taxonomy) -> dict[str, Any]:
    """``values`` as the widgets start on this taxonomy, as the method's check says
    (:class:`~hierlab.core.registry.Check`): a word as the number it resolves to (so the screen
    says what runs; a number box cannot hold a word), and settings that fail its check replaced
    by ones that pass (so the first click trains)."""
    found = method_check(method, values, taxonomy)
    return dict(values) if found is None else dict(found.suggested)
