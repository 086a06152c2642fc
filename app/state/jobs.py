"""Training and tuning jobs: fits that run in a thread of the server while the person browses.

A fit started on the Train page (or "Choose C for me", which tunes and then trains) runs in a
daemon thread; the page and the sidebar's jobs panel only read what it reports:

* :class:`Progress`, a solver callback, keeps every ``SolverState`` as a dict and the solver's
  own limits (``on_start``: ``max_iter``, ``max_time``, the stopping rule), from which
  :meth:`Job.progress` gives the share done, the time left as a range
  (:func:`hierlab.core.progress.estimate_eta`) and the maximum;
* a :class:`~hierlab.core.callbacks.StopFlag` is the Stop/Cancel button: :meth:`Job.stop` sets
  it from the script thread, the solver polls it inside its passes and returns with the iterate
  of its last reported state, and the run records that it stopped and which iterate it kept;
* the thread never touches the session: :func:`collect_jobs`, called by every script run and
  by the panel's refresh, moves a finished job's run into ``state.runs``.

No ``st.*`` call here (only the script thread may make them).
"""

from __future__ import annotations

import math
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from app.state.post_fit import PostFitCost, probe_post_fit
from app.state.runs import Run, RunSession, display_name, fit_run
from app.state.stages import PREDICTING
from app.state.views import training
from hierlab import FitStopped, Taxonomy, get_method, make_estimator, tune
from hierlab.core.callbacks import StopFlag
from hierlab.core.progress import Eta, estimate_eta
from hierlab.methods.calibrated import CALIBRATING, FITTING_MAPS
from hierlab.methods.nhsvm.estimators import OBJECTIVE_AT_SOLUTION

if TYPE_CHECKING:
    from app.state.data import DatasetEntry

__all__ = [
    "Job",
    "JobSession",
    "Progress",
    "collect_jobs",
    "live_jobs",
    "start_training",
]

#: how long a finished job stays listed in the panel (seconds)
KEEP_FINISHED = 600.0
#: seconds of node classifier fits (with two done), or of a stage after the solver, before
#: their rate gives the time left
WORK_MIN_ELAPSED = 0.25
#: the work after the solver, in words
AFTER_WORDS = "calibration and test predictions"
#: what the progress says of the work after the solver while it has not been measured
AFTER_SOLVER = f"then {AFTER_WORDS}: no estimate yet"
#: what follows each stage after the solver (said beside its progress)
STAGES_AFTER = {
    OBJECTIVE_AT_SOLUTION: AFTER_WORDS,
    CALIBRATING: "the calibration maps and the test predictions",
    FITTING_MAPS: "the test predictions",
    PREDICTING: "the evaluation",
}


@dataclass(eq=False)
class Progress:
    """A solver callback that records every state and the solver's limits (thread-safe reads:
    the list only grows).

    Attributes
    ----------
    states : list of dict
        ``SolverState.as_dict()`` of every state.
    limits : dict
        ``max_iter``, ``max_time``, ``tol``, ``rtol``, ``budget`` (what ``solve`` announced;
        before that, the declared values).
    fits : int
        Fits started (tuning fits one model per ``C``).
    """

    limits: dict[str, Any] = field(default_factory=dict)
    states: list[dict[str, Any]] = field(default_factory=list)
    fits: int = 0
    work: list[dict[str, Any]] = field(default_factory=list)
    work_total: int = 0
    work_cost: float = 0.0
    work_clock: float = 0.0
    partial: dict[str, float] | None = None
    partial_step: str | None = None
    stage: str | None = None
    stage_points: list[dict[str, Any]] = field(default_factory=list)
    stage_total: int = 0
    post: PostFitCost | None = None
    score_ratio: float | None = None

    def on_work(
        self, done: int, total: int, elapsed: float, cost: tuple[float, float] | None = None
    ) -> None:
        """A fit without solver states (one classifier per node): ``done`` of ``total``
        (``cost``: the work done and in all, which the time left is measured by)."""
        if done <= 1 and not (done == 1 and self.work and self.work[-1]["parts"] == 0):
            self.work, self.stage = [], None
        self.work_total = int(total)
        c_done, c_total = cost if cost is not None else (float(done), float(total))
        self.work_cost = float(c_total)
        self.work.append({"iteration": c_done, "parts": int(done), "elapsed": float(elapsed)})
        self.work_clock = time.monotonic()

    def on_pass(self, passes: float, elapsed: float, step: str | None = None) -> None:
        """Inside a long pass: the pass counter with its fraction, the solver's seconds, and
        what the solver does after that pass when it is no pass (``step``)."""
        self.partial = {"passes": float(passes), "elapsed": float(elapsed)}
        self.partial_step = step

    def on_stage(self, stage: str, done: int, total: int, elapsed: float) -> None:
        """The work after the solver (calibration, predictions): ``done`` of ``total``."""
        if stage != self.stage:
            self.stage, self.stage_points = stage, []
        self.stage_total = int(total)
        self.stage_points.append({"iteration": int(done), "elapsed": float(elapsed)})
        if stage == CALIBRATING and self.post is not None and self.post.score > 0:
            self.score_ratio = _scoring_ratio(self.stage_points, self.post.score)

    def on_start(self, info: dict[str, Any]) -> None:
        self.fits += 1
        self.states = []  # a new fit (the next C of a path): its own curve
        self.partial, self.stage = None, None
        self.limits = {k: v for k, v in info.items() if k != "solver"}

    def __call__(self, state: Any) -> bool:
        self.states.append(state.as_dict())
        self.partial = None
        return False


@dataclass(eq=False)
class Job:
    """A training (or tuning, then training) job.

    Attributes
    ----------
    id : int
        The id its run gets (reserved at the start).
    kind : {"train", "tune"}
        ``"tune"``: choose C on a warm-started path, then train with it.
    method : str
    params : dict
    entry : DatasetEntry
    taxonomy : Taxonomy
    taxonomy_source : str
    progress_cb : Progress
    flag : StopFlag
    status : str
        ``"running"``, ``"stopping"`` (stop requested), ``"done"``, ``"stopped"``, ``"failed"``.
    path : list of dict
        Tuning: one row per C fitted (``C``, ``score``, ``fit_time``, ...), as each finishes.
    best_C : float or None
    run : Run or None
        The finished run (until :func:`collect_jobs` moves it into the history).
    error : str or None
    cluster : str or None
        The dask scheduler a tuning job's paths over C run on (None: this machine).
    started, finished : float
        ``time.monotonic()``.
    """

    id: int
    kind: str
    method: str
    params: dict[str, Any]
    entry: DatasetEntry
    taxonomy: Taxonomy
    taxonomy_source: str = "given"
    progress_cb: Progress = field(default_factory=Progress)
    flag: StopFlag = field(default_factory=StopFlag)
    status: str = "running"
    phase: str = "train"
    path: list[dict[str, Any]] = field(default_factory=list)
    n_Cs: int = 0
    best_C: float | None = None
    tune_time: float | None = None
    run: Run | None = None
    error: str | None = None
    collected: bool = False
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    thread: threading.Thread | None = field(default=None, repr=False)
    cluster: str | None = None

    @property
    def running(self) -> bool:
        return self.finished is None

    @property
    def title(self) -> str:
        """``"#4 FLATMULT on hieron-synthetic"`` (``"choosing C for"`` while tuning)."""
        what = display_name(self.method)
        if self.phase == "tune":
            return f"#{self.id} choosing C for {what} on {self.entry.name}"
        c = f" (C = {self.best_C:g})" if self.best_C is not None else ""
        return f"#{self.id} {what}{c} on {self.entry.name}"

    def stop(self) -> None:
        """Ask the fit to stop after the pass under way (keeps the best iterate so far)."""
        if self.running:
            self.flag.set()
            self.status = "stopping"

    def eta(self) -> Eta:
        """The time the solver under way has left (:func:`hierlab.core.progress.estimate_eta`;
        within a pass, less the time spent since its last state)."""
        lim = self.progress_cb.limits
        partial = self.progress_cb.partial
        return estimate_eta(
            list(self.progress_cb.states),
            max_iter=_finite(lim.get("max_iter")),
            max_time=_finite(lim.get("max_time")),
            tol=float(lim.get("tol") or 0.0),
            rtol=float(lim.get("rtol") or 0.0),
            certified=get_method(self.method).bounds or None,
            now=None if partial is None else partial["elapsed"],
        )

    def time_left(self, first: Eta, stage: str | None = None) -> tuple[Eta, str]:
        """The whole run's time left and its parts in words: ``first`` (the solver's, the
        node classifiers' or, with ``stage``, that stage's) plus the stages after it as the
        probe measured them (:class:`~app.state.post_fit.PostFitCost`, rescaled by the
        calibration's own rate once it has scored a few blocks). No estimate while either
        part has none."""
        cb = self.progress_cb
        rest = None if cb.post is None else cb.post.remaining(stage, cb.score_ratio)
        words = AFTER_WORDS if stage is None else STAGES_AFTER.get(stage)
        detail = _span(first)
        if words and rest is None:
            detail += f", then {words}: no estimate yet"
        elif words and rest is not None and rest[1] > 0:
            detail += f", then {words}{_span(Eta(rest[0], rest[1], 0.0, 'budget'))}"
        return whole_eta(first, rest), detail

    def budget_text(self) -> str:
        """``"at most 100 passes (epochs), 60 s"``: the maxima the solver runs under."""
        lim = self.progress_cb.limits
        parts = []
        it = _finite(lim.get("max_iter"))
        if it is not None and it < 10**9:
            name = str(lim.get("budget") or "max_iter")
            parts.append(f"{int(it)} {'iterations' if name == 'max_iter' else name}")
        t = _finite(lim.get("max_time"))
        if t is not None:
            parts.append(f"{t:g} s")
        return "at most " + ", ".join(parts) if parts else "no iteration or time limit"

    def progress(self) -> tuple[float, str]:
        """The share done and one line: passes, gap, solver time, the time left in all (the
        solver's and the work after it), the maximum."""
        elapsed = time.monotonic() - self.started if self.finished is None else 0.0
        if self.status == "stopping":
            return 1.0, "Stopping after this pass (keeps the best iterate so far) …"
        if self.phase == "tune":
            return self._tune_progress(elapsed)
        cb = self.progress_cb
        if cb.stage is not None and cb.stage_points:
            return self._stage_progress()
        states, partial = list(cb.states), cb.partial
        if cb.work and (not states or cb.work[-1]["parts"] >= cb.work_total):
            return self._work_progress()  # the parts under way, or all done
        if not states and partial is None:
            return 0.0, f"starting ({elapsed:.0f} s) · {self.budget_text()}"
        eta = self.eta()
        if partial is not None:  # a pass (or its certificate) under way since the last state
            parts = [_partial_text(partial["passes"], cb.partial_step)]
            parts.append(f"{partial['elapsed']:.1f} s")
        else:
            parts = [pass_text(states), f"{float(states[-1].get('elapsed') or 0.0):.1f} s"]
        last = states[-1] if states else {}
        gap = last.get("gap_estimate", last.get("gap"))
        if isinstance(gap, float) and math.isfinite(gap):
            parts.insert(1, f"gap {gap:.3g}")
        whole, detail = self.time_left(eta)
        parts += [_whole_text(whole), f"solver{detail}", self.budget_text()]
        return eta.fraction, " · ".join(parts)

    def _work_progress(self) -> tuple[float, str]:
        """A fit reported in parts (node classifiers, a large one problem by problem): parts
        done, time, the time left in all."""
        cb = self.progress_cb
        work, total = list(cb.work), cb.work_total
        origin = {"iteration": 0.0, "parts": 0, "elapsed": 0.0}  # the work starts with part 1
        points = work if work[0]["parts"] == 0 else [origin, *work]
        # the rate of the fits done, once there are two (a part is a whole liblinear call)
        measured = work[-1]["parts"]
        eta = estimate_eta(
            points, max_iter=cb.work_cost, certified=False, min_elapsed=WORK_MIN_ELAPSED
        )
        if measured < 2:
            eta = Eta(None, None, eta.fraction, "none")
        last = work[-1]
        since = time.monotonic() - cb.work_clock  # the part under way, for so long
        if last["parts"] >= total:
            eta = Eta(0.0, 0.0, 1.0, "done")
        whole, detail = self.time_left(eta)
        head = f"{last['parts']} of {total} node classifier fits · {last['elapsed']:.1f} s"
        if last["parts"] < total:
            head += f" · fit {last['parts'] + 1} running for {since:.0f} s"
        return eta.fraction, f"{head} · {_whole_text(whole)} · classifiers{detail}"

    def _stage_progress(self) -> tuple[float, str]:
        """The work after the solver (calibration, predictions): units done, time, the time
        left in all (this stage's from its own rate, the stages after it as measured)."""
        cb = self.progress_cb
        points, total = list(cb.stage_points), cb.stage_total
        last = points[-1]
        stage = str(cb.stage)
        parts = [stage, f"{last['elapsed']:.1f} s"]
        if total > 1:
            eta = estimate_eta(
                points, max_iter=total, certified=False, min_elapsed=WORK_MIN_ELAPSED
            )
            unit = "(example, node) pairs" if stage == FITTING_MAPS else "rows"
            parts[0] = f"{stage}: {last['iteration']:,} of {total:,} {unit}"
            whole, detail = self.time_left(eta, stage)
            parts += [_whole_text(whole), f"this stage{detail}"]
        done = last["iteration"] / total if total > 0 else 0.0
        return min(1.0, done), " · ".join(parts)

    def _tune_progress(self, elapsed: float) -> tuple[float, str]:
        done = len(self.path)
        frac = done / self.n_Cs if self.n_Cs else 0.0
        text = f"C {done + 1} of at most {self.n_Cs} ({elapsed:.0f} s)"
        if self.path:
            best = max(self.path, key=lambda r: r["score"])
            text += f" · best so far C = {best['C']:g} (score {best['score']:.4g})"
        return frac, text


def _partial_text(passes: float, step: str | None) -> str:
    """``"pass 7: 40% done"``, ``"pass 6 done"`` (at a pass's end), or ``"after pass 6:
    certificate 40%"`` (what the solver does after a pass: ``step``)."""
    k = int(passes)
    if step:
        return f"after pass {passes:.3g}: {step}"
    if passes == k:
        return f"pass {k} done"
    return f"pass {k + 1}: {passes - k:.0%} done"


def whole_eta(first: Eta, rest: tuple[float, float] | None) -> Eta:
    """``first`` plus ``rest`` (the stages after it, ``(low, high)`` seconds): no estimate
    while either has none; ``first``'s share done."""
    if rest is None or first.low is None:
        return Eta(None, None, first.fraction, "none")
    high = None if first.high is None else first.high + rest[1]
    return Eta(first.low + rest[0], high, first.fraction, first.basis)


def _whole_text(whole: Eta) -> str:
    """``"40 s - 2 min left in all"``, or ``"time left in all: no estimate yet"`` (the one part
    of the progress line that says "left")."""
    if whole.low is None:
        return "time left in all: no estimate yet"
    return f"{whole.text()} in all"


def _span(eta: Eta) -> str:
    """An estimate without the word "left", after its subject: ``" 20-40 s"``, ``" about
    5 s"``, ``" at least 3 min"``, ``": no estimate yet (at most 25 min)"``."""
    text = eta.text().removesuffix(" left")
    return f": {text}" if eta.low is None else f" {text}"


def _scoring_ratio(points: list[dict[str, Any]], probed: float) -> float | None:
    """Measured seconds per row of the calibration's scoring (between its first and last
    report) over the probe's; None before two reports."""
    if len(points) < 2:
        return None
    rows = points[-1]["iteration"] - points[0]["iteration"]
    secs = points[-1]["elapsed"] - points[0]["elapsed"]
    return None if rows <= 0 or secs <= 0 else (secs / rows) / probed


def pass_text(states: list[dict[str, Any]]) -> str:
    """``"pass 12"``, or ``"pass 12 (5 certified states)"`` where some states are estimates
    between certificates: the number the chart's last point shows."""
    it = int(states[-1].get("iteration") or 0)
    exact = [s for s in states if s.get("exact", True) is not False]
    if len(exact) < len(states):
        return f"pass {it} ({len(exact)} certified states)"
    return f"iteration {it}"


def _finite(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        return None
    f = float(v)
    return f if math.isfinite(f) and f > 0 else None


def _fit(job: Job, params: dict[str, Any]) -> None:
    """Train ``job``'s method with ``params``; the run lands in ``job.run``. The work after
    the solver is probed first (:func:`~app.state.post_fit.probe_post_fit`), so that the time
    left counts it from the start."""
    job.phase = "train"
    train = job.entry.train
    job.progress_cb.post = probe_post_fit(train.X, train.y, job.entry.test.n_samples, job.taxonomy)
    job.run = fit_run(
        None,
        job.entry,
        job.method,
        params,
        callbacks=[job.progress_cb, job.flag],
        taxonomy=job.taxonomy,
        taxonomy_source=job.taxonomy_source,
        run_id=job.id,  # stopped or not: the solver's own account (stop_reason_)
    )


def _tune(job: Job) -> dict[str, Any] | None:
    """Choose C on the training split (each C lands in ``job.path`` as it is scored); the
    params with the chosen C, or None when stopped during the search."""
    job.phase = "tune"
    est = make_estimator(job.method, taxonomy=job.taxonomy, **job.params)
    from hierlab.evaluation.tune import DEFAULT_CS

    job.n_Cs = len(DEFAULT_CS)
    res = tune(
        est,
        job.entry.train.X,
        job.entry.train.y,
        refit=False,
        callbacks=[job.progress_cb, job.flag, _PathRows(job.path)],
        client=job.cluster,  # on a cluster the paths report when they end, not per C
    )
    if not job.path:
        job.path.extend(res.path.to_dict("records"))
    job.best_C, job.tune_time = float(res.best_C), float(res.time)
    if res.stopped == "stopped":
        return None
    return {**job.params, "C": job.best_C}


class _PathRows:
    """A callback of the C search: each row of the path lands in ``rows`` as it is scored."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def on_path_row(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    def __call__(self, state: Any) -> bool:
        return False


def _work(job: Job) -> None:
    """The job's thread: tune (if asked), then train; records how it ended."""
    try:
        params: dict[str, Any] | None = job.params
        with training():  # an earlier run's probability report waits meanwhile
            if job.kind == "tune":
                params = _tune(job)
            if params is not None:
                _fit(job, params)
        stopped = job.run is None or job.run.stopped
        job.status = "stopped" if stopped else "done"
    except FitStopped:  # stopped before any model: nothing to keep
        job.status = "stopped"
    except Exception as exc:  # shown in the panel and on the page, never raised
        job.error = f"{type(exc).__name__}: {exc}"
        job.status = "failed"
        traceback.print_exc()
    finally:
        job.finished = time.monotonic()


class JobSession(RunSession, Protocol):
    """What training in a thread needs of the session (:class:`app.state.session.AppState`
    has it): the run history and ids, the jobs, the last "Choose C" search per data set key,
    and the dask scheduler "Choose C" runs on (None: this machine)."""

    jobs: list[Job]
    tuned: dict[str, dict[str, Any]]
    cluster: str | None


def start_training(
    state: JobSession,
    entry: DatasetEntry,
    method: str,
    params: dict[str, Any],
    taxonomy: tuple[Taxonomy, str],
    choose_C: bool = False,
) -> Job:
    """Start training ``method`` (after choosing C when ``choose_C``) in a thread."""
    spec = get_method(method)
    limits: dict[str, Any] = {
        **spec.stopping_rule(params),
        "max_iter": spec.iterations(params),
        "budget": spec.budget or "max_iter",
    }
    job = Job(
        id=state.new_id(),
        kind="tune" if choose_C else "train",
        method=method,
        params=dict(params),
        entry=entry,
        taxonomy=taxonomy[0],
        taxonomy_source=taxonomy[1],
        progress_cb=Progress(limits=limits),
        phase="tune" if choose_C else "train",
        cluster=state.cluster if choose_C else None,
    )
    job.thread = threading.Thread(target=_work, args=(job,), name=f"hierlab-job-{job.id}")
    job.thread.daemon = True
    state.jobs.append(job)
    job.thread.start()
    return job


def collect_jobs(state: JobSession) -> list[Job]:
    """Move finished jobs' runs into ``state.runs`` (once each); drop jobs finished more than
    :data:`KEEP_FINISHED` seconds ago from the list. Returns the jobs collected now."""
    now = time.monotonic()
    landed = []
    for job in state.jobs:
        if job.finished is None or job.collected:
            continue
        job.collected = True
        if job.run is not None:
            state.runs.append(job.run)
        if job.best_C is not None:
            state.tuned[job.entry.key] = {
                "method": job.method,
                "best_C": job.best_C,
                "path": list(job.path),
                "time": job.tune_time,
            }
        landed.append(job)
    state.jobs[:] = [
        j for j in state.jobs if j.finished is None or now - j.finished < KEEP_FINISHED
    ]
    return landed


def live_jobs(state: JobSession) -> list[Job]:
    """The session's jobs still running."""
    return [j for j in state.jobs if j.running]
