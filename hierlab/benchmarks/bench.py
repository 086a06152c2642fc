"""``hierlab bench``: every registered method beside scikit-learn's LinearSVC, and scale curves.

The table times each method on one split next to a flat one-vs-rest ``LinearSVC`` fitted on the
same split in the same run, so the ratio is meaningful on any machine. HiClass's
``LocalClassifierPerParentNode(LinearSVC)`` joins the table when the optional ``hiclass`` is
installed. Scale curves fit methods on :func:`make_hierarchical_text` data of growing size
(documents, hence nnz) and growing class count and report the fitted log-log slopes.

Measurement rules (a shared, loaded machine):

- BLAS is limited to ``blas_threads`` threads (default 1, ``threadpoolctl``) for every fit,
  LinearSVC included, so methods built on dense algebra do not get cores LinearSVC cannot use.
- Every fit runs in a forked child process (``isolate=True``) that is killed after
  ``hard_timeout`` seconds: a method that hangs or explodes in memory is recorded as a failure
  and the table goes on. Each method also gets a soft ``budget``: its ``max_time`` parameter when
  its schema has one, and a :class:`~hierlab.core.callbacks.Timeout` callback (wall clock) passed to
  ``fit`` (honoured by every iterative method); ``budget_hit`` says when it was used up.
- Both wall-clock (``fit_time``) and CPU time of the fitting process (``fit_cpu``) are recorded,
  and (isolated runs, Linux) the child's peak resident set ``peak_rss_mb`` (the data it holds
  included) and ``fit_rss_mb``, what the fit and predict added above the child's start.
  With ``reference_each=True`` LinearSVC is refitted just before every method and the ratio uses
  that adjacent time, which cancels most of the drift of a machine shared with other jobs.
- In its child, every timed fit (LinearSVC's, HiClass's and each method's, and each point of
  the scale curves) follows an untimed warm-up fit of the same estimator on :data:`WARM_ROWS`
  rows spread over the training set: the fit time is the algorithm's, not the one-time
  loading of compiled code in a fresh process (numba's cached kernels and its runtime, 0.4-0.8 s
  for the BCFW methods on 20 Newsgroups), which a long-lived process pays once (the app pays it
  before the first visit, :mod:`app.serve`) and which scikit-learn pays at import, before the
  fork. The warm-up's wall time is kept (``warmup_time``) so that one-time cost stays visible.

Every method runs with its registry defaults unless ``params`` names others: the defaults are
the product (what a newcomer gets), so they are what the table measures.

Run it with ``hierlab bench`` (this module cannot import the CLI, which sits above it).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from hierlab.core.cluster import active_client, run_tasks
from hierlab.core.dataset import HierDataset
from hierlab.core.registry import get_method, list_methods, make_estimator

__all__ = [
    "DEFAULT_BUDGET",
    "bench_table",
    "loglog_slope",
    "scale_curves",
    "scale_curves_many",
    "scale_figure",
]

REFERENCE = "sklearn LinearSVC (OvR)"
HICLASS = "hiclass LCPN (LinearSVC)"

#: Default soft time budget per method (seconds) of ``hierlab bench``.
DEFAULT_BUDGET = 120.0
#: rows of the untimed warm-up fit before every timed one (module docstring)
WARM_ROWS = 500


def _flat_targets(data: HierDataset) -> np.ndarray:
    return np.asarray([str(v) for v in data.y])


def _score(y_true: np.ndarray, y_pred: np.ndarray, data: HierDataset) -> dict[str, float]:
    from hierlab.evaluation.metrics import accuracy, tree_induced_error

    tax = data.taxonomy
    yt = np.asarray([str(v) for v in y_true], dtype=object)
    yp = np.asarray([str(v) for v in y_pred], dtype=object)
    return {
        "accuracy": accuracy(yt, yp, tax),
        "tree_error": float(tree_induced_error(yt, yp, tax)),
    }


def _time_fit(est: Any, X: Any, y: Any, **fit_kwargs: Any) -> tuple[Any, float, float]:
    """Fit ``est`` and return it with the wall-clock and CPU seconds of the fit."""
    c0, t0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, **fit_kwargs)
    return est, time.perf_counter() - t0, time.process_time() - c0


def _warm_up(fit: Callable[[HierDataset], Any], train: HierDataset) -> float:
    """Run ``fit`` once on :data:`WARM_ROWS` rows spread evenly over ``train`` (so that a file
    sorted by class still gives many classes); its wall seconds, NaN when it failed (the timed
    fit then reports the failure).

    The rows are a slice of the same matrix, so the compiled kernels see the same types."""
    n = train.n_samples
    idx = np.unique(np.linspace(0, n - 1, min(WARM_ROWS, n)).astype(np.int64))
    part = train.subset(idx)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit(part)
    except Exception:  # a warm-up is best effort: the timed fit says what fails
        return math.nan
    return time.perf_counter() - t0


def _blas_limit(threads: int | None) -> Any:
    """A context limiting BLAS/OpenMP pools to ``threads`` (no-op for None)."""
    from contextlib import nullcontext

    if threads is None:
        return nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


def _can_fork() -> bool:
    return sys.platform != "win32" and "fork" in mp.get_all_start_methods()


def _status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in MB; None off Linux."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        return None
    return None


def _child_main(fn: Callable[[], dict[str, Any]], conn: Any, threads: int | None) -> None:
    """Run ``fn`` in the forked child; its row gets the child's peak RSS (``VmHWM``: the process
    holds the data too) and what the fit added to the resident set at the start (``fit_rss_mb``)."""
    start = _status_mb("VmRSS")
    try:
        with _blas_limit(threads):
            out = fn()
        peak = _status_mb("VmHWM")
        if peak is not None and start is not None:
            out.update(peak_rss_mb=peak, fit_rss_mb=max(0.0, peak - start))
    except BaseException as exc:  # every failure (SystemExit too) is a table entry
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" [{tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}]" if tb else ""
        out = {"error": f"{type(exc).__name__}: {exc}{where}"}
    conn.send(out)
    conn.close()


def _run_guarded(
    fn: Callable[[], dict[str, Any]],
    isolate: bool,
    hard_timeout: float | None,
    threads: int | None,
) -> dict[str, Any]:
    """Run ``fn`` (returns a row) in a forked child killed after ``hard_timeout`` seconds.

    Without ``isolate`` (or where fork does not exist) ``fn`` runs in this process and only the
    soft budget applies. Any exception becomes ``{"error": "<Type>: <message>"}``.
    """
    if not (isolate and _can_fork()):
        try:
            with _blas_limit(threads):
                return fn()
        except Exception as exc:  # a benchmark reports a failing method and goes on
            return {"error": f"{type(exc).__name__}: {exc}"}
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, send, threads), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    try:
        if recv.poll(hard_timeout):
            try:
                out: dict[str, Any] = recv.recv()
            except EOFError:
                proc.join(5)
                out = {"error": f"crashed (exit code {proc.exitcode}, e.g. out of memory)"}
        else:
            waited = time.perf_counter() - t0
            out = {"error": f"timeout: killed after {waited:.0f} s", "killed": True}
    finally:
        recv.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
    return out


def _reference_row(train: HierDataset, test: HierDataset) -> dict[str, Any]:
    warm = _warm_up(lambda d: LinearSVC().fit(d.X, _flat_targets(d)), train)
    ytr = _flat_targets(train)
    ref, fit_time, fit_cpu = _time_fit(LinearSVC(), train.X, ytr)
    t0 = time.perf_counter()
    pred = ref.predict(test.X)
    return {
        "method": REFERENCE,
        "seed": "sklearn",
        "fit_time": fit_time,
        "fit_cpu": fit_cpu,
        "warmup_time": warm,
        "predict_time": time.perf_counter() - t0,
        "n_iter": int(np.max(ref.n_iter_)),
        "converged": bool(np.max(ref.n_iter_) < ref.max_iter),
        **_score(test.y, pred, test),
    }


def _method_row(
    name: str,
    params: dict[str, Any],
    budget: float | None,
    train: HierDataset,
    test: HierDataset,
) -> dict[str, Any]:
    from hierlab.core.callbacks import Timeout

    spec = get_method(name)
    kwargs = dict(params)
    names = {p.name for p in spec.params}
    if budget is not None and "max_time" in names and kwargs.get("max_time") is None:
        kwargs["max_time"] = float(budget)
    def new() -> Any:
        return make_estimator(name, taxonomy=train.taxonomy, **kwargs)

    warm = _warm_up(lambda d: new().fit(d.X, d.y), train)
    est = new()
    timer = Timeout(budget, wall=True) if budget is not None else None
    est, fit_time, fit_cpu = _time_fit(
        est, train.X, train.y, callbacks=[timer] if timer is not None else []
    )
    t0 = time.perf_counter()
    pred = est.predict(test.X)
    predict_time = time.perf_counter() - t0
    hit = bool(timer is not None and timer.fired)
    if budget is not None and "max_time" in names and fit_time >= budget:
        hit = True
    return {
        "method": name,
        "fit_time": fit_time,
        "fit_cpu": fit_cpu,
        "warmup_time": warm,
        "predict_time": predict_time,
        "n_iter": int(getattr(est, "n_iter_", 0) or 0),
        "converged": bool(getattr(est, "converged_", True)),
        "budget_hit": hit,
        **_score(test.y, pred, test),
    }


def _hiclass_row(train: HierDataset, test: HierDataset) -> dict[str, Any]:
    from hiclass import LocalClassifierPerParentNode

    tax = train.taxonomy

    def paths(y: np.ndarray) -> list[list[str]]:
        return [
            [str(n) for n in tax.names[tax.ancestors(str(v), include_self=True)][1:]] for v in y
        ]

    depth = tax.max_depth

    def padded(y: np.ndarray) -> list[list[str]]:
        return [p + [""] * (depth - len(p)) for p in paths(y)]

    def new() -> Any:
        return LocalClassifierPerParentNode(local_classifier=LinearSVC())

    warm = _warm_up(lambda d: new().fit(d.X, padded(d.y)), train)
    est, fit_time, fit_cpu = _time_fit(new(), train.X, padded(train.y))
    t0 = time.perf_counter()
    out = est.predict(test.X)
    pred_time = time.perf_counter() - t0
    pred = [next((v for v in reversed(list(r)) if v), str(tax.names[0])) for r in out]
    return {
        "method": HICLASS,
        "seed": "hiclass",
        "fit_time": fit_time,
        "fit_cpu": fit_cpu,
        "warmup_time": warm,
        "predict_time": pred_time,
        **_score(test.y, np.asarray(pred), test),
    }


def hiclass_available() -> bool:
    """Whether the optional ``hiclass`` package can be imported."""
    try:
        import hiclass  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass
class _BenchRun:
    """One ``bench_table`` run: the split, the budgets, and every fit guarded the same way."""

    train: HierDataset
    test: HierDataset
    budget: float | None
    hard_timeout: float | None
    isolate: bool
    blas_threads: int | None
    progress: Callable[[str], None] | None

    def guarded(self, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """``fn``'s row, run under the hard timeout and the BLAS thread limit."""
        return _run_guarded(fn, self.isolate, self.hard_timeout, self.blas_threads)

    def note(self, text: str) -> None:
        """Report ``text`` to ``progress`` when there is one."""
        if self.progress:
            self.progress(text)

    def reference(self) -> dict[str, Any]:
        """A LinearSVC row (a failed fit still names the reference)."""
        self.note("LinearSVC")
        row = self.guarded(lambda: _reference_row(self.train, self.test))
        row.setdefault("method", REFERENCE)
        row.setdefault("seed", "sklearn")
        return row

    def method(self, name: str, params: dict[str, Any], ref: tuple[float, float]) -> dict[str, Any]:
        """The row of registry method ``name`` fitted with ``params``.

        ``ref`` are LinearSVC's (wall-clock, CPU) fit seconds for the ratios; an unknown name
        gives a row with only its error.
        """
        try:
            seed = get_method(name).seed
        except Exception as exc:  # unknown name: a row with its error
            return {"method": name, "error": f"{type(exc).__name__}: {exc}"}
        row = self.guarded(lambda: _method_row(name, params, self.budget, self.train, self.test))
        row.update(method=name, seed=seed, params=json.dumps(params, sort_keys=True, default=str))
        return _with_ref(row, ref)

    def hiclass(self, ref: tuple[float, float]) -> dict[str, Any]:
        """The HiClass LCPN row, against LinearSVC's ``ref`` times."""
        self.note("hiclass LCPN")
        row = self.guarded(lambda: _hiclass_row(self.train, self.test))
        row.update(method=HICLASS, seed="hiclass")
        return _with_ref(row, ref)


def _ref_times(row: dict[str, Any]) -> tuple[float, float]:
    """The wall-clock and CPU fit seconds of a LinearSVC row (NaN when it failed)."""
    return row.get("fit_time", math.nan), row.get("fit_cpu", math.nan)


def _with_ref(row: dict[str, Any], ref: tuple[float, float]) -> dict[str, Any]:
    """``row`` with the LinearSVC times its ratios use."""
    row["ref_fit_time"], row["ref_fit_cpu"] = ref
    return row


_BENCH_COLUMNS = (
    "method",
    "seed",
    "fit_time",
    "fit_ratio",
    "fit_cpu",
    "cpu_ratio",
    "warmup_time",
    "predict_time",
    "accuracy",
    "tree_error",
    "n_iter",
    "converged",
    "budget_hit",
    "peak_rss_mb",
    "fit_rss_mb",
    "ref_fit_time",
    "ref_fit_cpu",
    "params",
    "error",
)


def _bench_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows of :func:`bench_table` as its table: every column present, ratios added.

    Parameters
    ----------
    rows : list of dict
        LinearSVC's row first, then one per method (error rows lack the times).

    Returns
    -------
    DataFrame
        The columns of :data:`_BENCH_COLUMNS` that occur, in that order.
    """
    df = pd.DataFrame(rows)
    for col in ("fit_time", "fit_cpu", "warmup_time", "predict_time", "accuracy", "tree_error"):
        if col not in df:
            df[col] = math.nan
        df[col] = df[col].astype(float)
    for col in ("params", "error"):
        if col not in df:
            df[col] = None
    df = df.drop(columns=["killed"], errors="ignore")
    df["fit_ratio"] = df["fit_time"] / df["ref_fit_time"].astype(float)
    df["cpu_ratio"] = df["fit_cpu"] / df["ref_fit_cpu"].astype(float)
    return df[[c for c in _BENCH_COLUMNS if c in df.columns]]


def bench_table(
    train: HierDataset,
    test: HierDataset,
    methods: Sequence[str] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    hiclass: bool = True,
    progress: Callable[[str], None] | None = None,
    *,
    budget: float | None = None,
    hard_timeout: float | None = None,
    reference_each: bool = False,
    isolate: bool = True,
    blas_threads: int | None = 1,
) -> pd.DataFrame:
    """Time and score every method beside ``LinearSVC`` (one-vs-rest) on one split.

    Parameters
    ----------
    train, test : HierDataset
        Single-label data.
    methods : sequence of str, optional
        Registry names (default: every registered method).
    params : dict, optional
        ``method -> constructor parameters`` (default: the registry defaults).
    hiclass : bool
        Add HiClass's per-parent-node LinearSVC when ``hiclass`` is importable.
    progress : callable, optional
        Called with each method's name before it is fitted.
    budget : float, optional
        Soft time budget per method in seconds: ``max_time`` where the method's schema has it,
        and a wall-clock :class:`~hierlab.core.callbacks.Timeout` callback for every method.
    hard_timeout : float, optional
        Kill a method's process after this many seconds (fit + predict) and record
        ``"timeout: ..."``. Default ``2 * budget + 60`` when a budget is given, else none.
        Needs ``isolate``.
    reference_each : bool, default False
        Refit LinearSVC right before every method and use that time in the ratio.
    isolate : bool, default True
        Fit every method in a forked child process (where ``fork`` exists).
    blas_threads : int or None, default 1
        Limit of BLAS/OpenMP threads during every fit (None: leave as is).

    Returns
    -------
    DataFrame
        One row per method, LinearSVC first: method, seed, params (JSON of the parameters
        given), fit_time, fit_cpu, predict_time, ref_fit_time (the LinearSVC time the ratio
        uses), fit_ratio = fit_time / ref_fit_time, cpu_ratio, warmup_time (the untimed
        warm-up fit's seconds, module docstring), accuracy, tree_error, n_iter,
        converged, budget_hit, error (text when the method failed or was killed; its times
        are then NaN).
    """
    if hard_timeout is None and budget is not None:
        hard_timeout = 2.0 * budget + 60.0
    given = params or {}
    run = _BenchRun(train, test, budget, hard_timeout, isolate, blas_threads, progress)
    first = run.reference()
    ref = _ref_times(first)
    rows = [_with_ref(first, ref)]
    for name in methods or list_methods():
        if reference_each and rows[-1]["method"] != REFERENCE:
            ref = _ref_times(run.reference())
        run.note(name)
        rows.append(run.method(name, dict(given.get(name, {})), ref))
    if hiclass and hiclass_available():
        if reference_each:
            ref = _ref_times(run.reference())
        rows.append(run.hiclass(ref))
    return _bench_frame(rows)


def loglog_slope(x: Sequence[float], t: Sequence[float]) -> float:
    """Least-squares slope of ``log t`` against ``log x`` (the exponent of a power law).

    Parameters
    ----------
    x, t : sequence of float, positive, same length >= 2

    Returns
    -------
    float
        ``b`` of the fit ``log t = a + b log x``; NaN with fewer than two finite points.
    """
    xa, ta = np.asarray(x, dtype=float), np.asarray(t, dtype=float)
    ok = np.isfinite(xa) & np.isfinite(ta) & (xa > 0) & (ta > 0)
    if ok.sum() < 2 or np.unique(xa[ok]).size < 2:
        return float("nan")
    lx, lt = np.log(xa[ok]), np.log(ta[ok])
    return float(np.polyfit(lx, lt, 1)[0])


def _scale_slopes(df: pd.DataFrame) -> dict[str, float]:
    docs = df[(df.curve == "docs") & df.fit_time.notna()]
    cls = df[(df.curve == "classes") & df.fit_time.notna()]
    return {
        "nnz": loglog_slope(docs.nnz, docs.fit_time),
        "classes": loglog_slope(cls.n_classes, cls.fit_time),
    }


_SCALE_COLUMNS = [
    "method",
    "curve",
    "n_docs",
    "n_classes",
    "n_nodes",
    "nnz",
    "fit_time",
    "fit_cpu",
    "warmup_time",
    "n_iter",
    "peak_rss_mb",
    "error",
]


@dataclass
class _ScaleRun:
    """The fits of :func:`scale_curves_many`: the shared settings and the curves that ended."""

    methods: Sequence[str]
    n_features: int
    params: dict[str, dict[str, Any]]
    random_state: int
    progress: Callable[[str], None] | None
    budget: float | None
    isolate: bool
    blas_threads: int | None
    #: (method, curve) -> why that method's curve ended
    stopped: dict[tuple[str, str], str] = field(default_factory=dict)

    def note(self, text: str) -> None:
        """Report ``text`` to ``progress`` when there is one."""
        if self.progress:
            self.progress(text)

    def point(self, curve: str, nd: int, nc: int) -> list[dict[str, Any]]:
        """The rows of one grid point: its data set built once and every method fitted on it.

        Parameters
        ----------
        curve : {"docs", "classes"}
        nd, nc : int
            Documents and classes asked of :func:`make_hierarchical_text`.

        Returns
        -------
        list of dict
            One row per method (skipped methods carry the reason as their error).
        """
        from hierlab.datasets.text import make_hierarchical_text

        point: dict[str, Any] = {"curve": curve, "n_classes": nc}
        if all((m, curve) in self.stopped for m in self.methods):
            return [
                {**point, "method": m, "n_docs": nd, "error": self.stopped[(m, curve)]}
                for m in self.methods
            ]
        self.note(f"data: {nd} documents, {nc} classes")
        train, _ = make_hierarchical_text(
            n_samples=nd,
            n_classes=nc,
            n_features=self.n_features,
            depth=3,
            test_size=0.01,
            random_state=self.random_state,
        )
        point.update(n_docs=train.n_samples, n_nodes=train.taxonomy.n_nodes, nnz=int(train.X.nnz))
        return [self.fit(m, train, point, nd) for m in self.methods]

    def fit(self, m: str, train: HierDataset, point: dict[str, Any], nd: int) -> dict[str, Any]:
        """Method ``m``'s row at ``point``, fitted on ``train`` unless its curve has ended.

        A failure, or a fit over the budget, ends that method's curve. ``nd`` is the number of
        documents asked for (the progress line).
        """
        curve = point["curve"]
        if (m, curve) in self.stopped:
            return {**point, "method": m, "error": self.stopped[(m, curve)]}
        self.note(f"{m}: {curve} curve, {nd} documents, {point['n_classes']} classes")

        def run() -> dict[str, Any]:
            def new() -> Any:
                return make_estimator(m, taxonomy=train.taxonomy, **self.params.get(m, {}))

            warm = _warm_up(lambda d: new().fit(d.X, d.y), train)
            fitted, t, c = _time_fit(new(), train.X, train.y)
            # the solver's passes: a slope above 1 is then read as more passes or costlier ones
            n_iter = int(getattr(fitted, "n_iter_", 0) or 0)
            return {"fit_time": t, "fit_cpu": c, "warmup_time": warm, "n_iter": n_iter}

        hard = 2.0 * self.budget + 60.0 if self.budget is not None else None
        res = _run_guarded(run, self.isolate, hard, self.blas_threads)
        res.pop("killed", None)
        t = res.get("fit_time")
        self.note(f"{m}: {_outcome(res)}")
        if "error" in res:
            self.stopped[(m, curve)] = "skipped (an earlier point failed)"
        elif self.budget is not None and t is not None and t > self.budget:
            self.stopped[(m, curve)] = "skipped (over budget)"
        return {**point, "method": m, **res}


def _scale_point(run: _ScaleRun, curve: str, nd: int, nc: int) -> list[dict[str, Any]]:
    """One grid point of the scale curves as a cluster task (its own budget: the points run
    at once, so a slow point does not end the larger ones; they are timed on a worker, in
    its own process)."""
    own = replace(run, stopped={}, isolate=False)
    return own.point(curve, nd, nc)


def _outcome(res: dict[str, Any]) -> str:
    """One line on a finished fit: its error, or its seconds and peak resident memory."""
    if "error" in res:
        return str(res["error"])
    rss = res.get("peak_rss_mb")
    return f"{res['fit_time']:.1f} s" + ("" if rss is None else f", peak {rss:.0f} MB")


def _scale_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows of :func:`scale_curves_many` as its table (every column present, in order)."""
    df = pd.DataFrame(rows)
    for col in ("fit_time", "fit_cpu", "warmup_time", "n_iter", "nnz", "n_nodes", "peak_rss_mb"):
        if col not in df:
            df[col] = math.nan
    if "error" not in df:
        df["error"] = None
    return df[_SCALE_COLUMNS]


def scale_curves_many(
    methods: Sequence[str] = ("topdown",),
    n_docs: Sequence[int] = (10_000, 30_000, 100_000, 300_000, 1_000_000),
    n_classes: Sequence[int] = (100, 300, 1_000, 3_000, 10_000),
    docs_at_fixed_classes: int = 100,
    docs_for_class_curve: int = 100_000,
    n_features: int = 20_000,
    params: dict[str, dict[str, Any]] | None = None,
    random_state: int = 0,
    progress: Callable[[str], None] | None = None,
    *,
    budget: float | None = None,
    isolate: bool = True,
    blas_threads: int | None = 1,
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """Fit time of several methods as documents (nnz) and classes grow, one data set per point.

    Each grid point's data set (:func:`make_hierarchical_text`, depth 3, 1% held out) is built
    once and every method is fitted on it. The "docs" curve varies ``n_docs`` at
    ``docs_at_fixed_classes`` classes; the "classes" curve varies ``n_classes`` at
    ``docs_for_class_curve`` documents.

    Parameters
    ----------
    methods : sequence of str
        Registry names.
    n_docs, n_classes : sequence of int
        The grids of the two curves (increasing).
    docs_at_fixed_classes : int
        Classes of the "docs" curve.
    docs_for_class_curve : int
        Documents of the "classes" curve.
    n_features : int
        Vocabulary size.
    params : dict, optional
        ``method -> constructor parameters``.
    random_state : int
    progress : callable, optional
        Called with a line before each fit.
    budget : float, optional
        Seconds; a fit that takes longer (or is killed at ``2 * budget + 60``) ends that
        method's curve: its larger points are recorded as skipped instead of run.
    isolate : bool, default True
        Fit in a forked child process (killed at the hard timeout). On a dask cluster
        (:func:`hierlab.connect`, ``--dask``) every grid point is a task, its data set built
        on the worker from the seed, and fitted in the worker's process.
    blas_threads : int or None, default 1

    Returns
    -------
    table : DataFrame
        Columns method, curve ("docs" or "classes"), n_docs (training documents), n_classes,
        n_nodes, nnz, fit_time (NaN when not measured), fit_cpu, warmup_time (the
        untimed warm-up fit's seconds), n_iter (the fitted
        ``n_iter_``: passes, epochs or rounds; 0 for a one-shot fit), peak_rss_mb, error.
    slopes : dict
        ``method -> {"nnz": slope of log time vs log nnz, "classes": slope vs log classes}``
        over the measured points (NaN with fewer than two).
    """
    run = _ScaleRun(
        methods, n_features, params or {}, random_state, progress, budget, isolate, blas_threads
    )
    points = [
        (curve, int(v) if curve == "docs" else int(docs_for_class_curve),
         int(docs_at_fixed_classes) if curve == "docs" else int(v))
        for curve, grid in (("docs", n_docs), ("classes", n_classes))
        for v in grid
    ]  # fmt: skip
    rows: list[dict[str, Any]] = []
    if active_client() is None:
        for curve, nd, nc in points:
            rows.extend(run.point(curve, nd, nc))
    else:  # one task per point: each worker builds its data set from the seed
        run.progress = None
        for point_rows in run_tasks(_scale_point, points, (run,), one_per_thread=True):
            rows.extend(point_rows)
    df = _scale_frame(rows)
    slopes = {m: _scale_slopes(df[df.method == m]) for m in methods}
    return df, slopes


def scale_curves(
    method: str = "topdown",
    n_docs: Sequence[int] = (10_000, 30_000, 100_000, 300_000, 1_000_000),
    n_classes: Sequence[int] = (100, 300, 1_000, 3_000, 10_000),
    docs_at_fixed_classes: int = 100,
    docs_for_class_curve: int = 100_000,
    n_features: int = 20_000,
    params: dict[str, Any] | None = None,
    random_state: int = 0,
    progress: Callable[[str], None] | None = None,
    *,
    budget: float | None = None,
    isolate: bool = True,
    blas_threads: int | None = 1,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Fit time of ``method`` as documents (nnz) and classes grow.

    One method of :func:`scale_curves_many` (see there for the parameters).

    Returns
    -------
    table : DataFrame
        Columns method, curve ("docs" or "classes"), n_docs, n_classes, n_nodes, nnz,
        fit_time, fit_cpu, n_iter, peak_rss_mb, error.
    slopes : dict
        ``{"nnz": slope of log time vs log nnz, "classes": slope vs log classes}``.
    """
    df, slopes = scale_curves_many(
        [method],
        n_docs=n_docs,
        n_classes=n_classes,
        docs_at_fixed_classes=docs_at_fixed_classes,
        docs_for_class_curve=docs_for_class_curve,
        n_features=n_features,
        params={method: dict(params or {})},
        random_state=random_state,
        progress=progress,
        budget=budget,
        isolate=isolate,
        blas_threads=blas_threads,
    )
    return df, slopes[method]


def scale_figure(df: pd.DataFrame, slopes: dict[str, Any], method: str | None = None) -> Any:
    """Two log-log panels: fit time vs nnz, and vs number of classes, one trace per method.

    Parameters
    ----------
    df : DataFrame
        From :func:`scale_curves` / :func:`scale_curves_many`.
    slopes : dict
        ``{"nnz": ..., "classes": ...}`` for one method, or ``method -> that`` for several.
    method : str, optional
        The method's name when ``slopes`` is for one method.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    if "nnz" in slopes and not isinstance(slopes["nnz"], dict):
        name = method or (str(df.method.iloc[0]) if "method" in df and len(df) else "method")
        slopes = {name: slopes}
        if "method" not in df:
            df = df.assign(method=name)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("fit time vs nnz", "fit time vs classes"))
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    # panel column, curve, x column, slope key, line dash
    panels = ((1, "docs", "nnz", "nnz", None), (2, "classes", "n_classes", "classes", "dash"))
    for k, (m, s) in enumerate(slopes.items()):
        color = palette[k % len(palette)]
        for col, curve, xcol, key, dash in panels:
            d = df[(df.method == m) & (df.curve == curve) & df.fit_time.notna()]
            line = {"color": color} if dash is None else {"color": color, "dash": dash}
            fig.add_trace(
                go.Scatter(
                    x=d[xcol],
                    y=d.fit_time,
                    mode="lines+markers",
                    name=f"{m}: slope {s[key]:.2f} in {key}",
                    line=line,
                ),
                1,
                col,
            )
    fig.update_xaxes(type="log", title_text="nnz of the training matrix", row=1, col=1)
    fig.update_xaxes(type="log", title_text="classes (leaves)", row=1, col=2)
    fig.update_yaxes(type="log", title_text="fit time (s)")
    fig.update_layout(title="hierlab scale curves (make_hierarchical_text)")
    return fig


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of ``df`` as JSON-safe dicts (NaN -> None, numpy scalars -> Python)."""
    out = []
    for rec in df.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for k, v in rec.items():
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                v = None
            clean[str(k)] = v
        out.append(clean)
    return out


def json_safe(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced by None (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
