"""Comparisons that run while the person browses, their results landing in the session's history.

A comparison fits several methods on several splits: minutes on a large data set. Run in the
script thread it freezes the page. Here it runs in a **worker process**
(``concurrent.futures.ProcessPoolExecutor``, ``spawn``: a fresh interpreter, one worker per
server), which

* keeps the page responsive: the person trains, explores or reads while it runs;
* owns its own ``warnings`` state: :func:`app.state.compare.run_engine` silences warnings with
  ``warnings.catch_warnings``, which is not thread-safe; in a thread of the server it would
  race with a visitor's fit recording its warnings (``app.state.runs``), in another process it
  cannot;
* never calls ``st.*`` (only the script thread may).

:func:`start_comparison` submits the job and keeps it in the session (``state.background``);
:func:`collect`, called by every script run and by a sidebar fragment that reruns every few
seconds while jobs are pending, moves finished jobs into ``state.comparisons`` (or records
their error). The fragment's reruns never interrupt a running script (Streamlit does not
pre-empt a script for a fragment's timer), so a live fit is never stopped by a comparison
finishing.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.state.compare import ComparisonSession, comparison_data, finish_comparison, run_engine
from hierlab import DataError, Taxonomy

if TYPE_CHECKING:
    from app.state.compare import ComparisonEntry
    from app.state.data import DatasetEntry

__all__ = [
    "BackgroundComparison",
    "BackgroundSession",
    "Cancelled",
    "collect",
    "pending",
    "shutdown",
    "start_comparison",
    "take_failed",
]

_LOCK = threading.Lock()
_EXECUTOR: ProcessPoolExecutor | None = None


def _quiet_worker() -> None:
    """The worker has no Streamlit runtime: its "missing ScriptRunContext" warnings (from
    importing the app's modules) are noise in the server's log."""
    logging.getLogger("streamlit").setLevel(logging.ERROR)


class Cancelled(Exception):
    """Raised in the worker when the person cancelled the comparison."""


def _report(path: str, done: int, total: int, method: str, split: int) -> None:
    """The worker's progress after each fit, written where the server reads it (atomically);
    a cancel marker beside it ends the comparison here."""
    if os.path.exists(path + ".cancel"):
        raise Cancelled(f"cancelled after {done} of {total} fits")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"done": done, "total": total, "method": method, "split": split}, f)
    os.replace(tmp, path)


def run_reporting(data: Any, configs: list[dict[str, Any]], plan: dict[str, Any], path: str) -> Any:
    """:func:`~app.state.compare.run_engine` in the worker, reporting each fit to ``path``."""
    _report(path, 0, 0, "", 0)

    def progress(done: int, total: int, method: str, split: int) -> None:
        _report(path, done, total, method, split)

    return run_engine(data, configs, plan, progress=progress)


def _executor() -> ProcessPoolExecutor:
    """The server's one worker process (started on first use, shared by the sessions)."""
    global _EXECUTOR
    with _LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_quiet_worker,
            )
        return _EXECUTOR


def shutdown() -> None:
    """Stop the worker process (waits for the job it runs)."""
    global _EXECUTOR
    with _LOCK:
        if _EXECUTOR is not None:
            _EXECUTOR.shutdown(wait=True, cancel_futures=True)
            _EXECUTOR = None


@dataclass
class BackgroundComparison:
    """A comparison running in the worker process.

    Attributes
    ----------
    id : int
        The id its :class:`~app.state.compare.ComparisonEntry` gets (reserved at the start).
    entry : DatasetEntry
    configs : list of dict
    plan : dict
    taxonomy : Taxonomy
    baseline : str or None
    future : Future
        The engine's result (``hierlab.evaluation.compare.Comparison``).
    started : float
        ``time.monotonic()`` at the start.
    error : str or None
        Why it failed, once it has.
    """

    id: int
    entry: DatasetEntry
    configs: list[dict[str, Any]]
    plan: dict[str, Any]
    taxonomy: Taxonomy
    baseline: str | None
    future: Future[Any]
    started: float = field(default_factory=time.monotonic)
    error: str | None = None
    progress_path: str = ""
    cancelled: bool = False

    @property
    def labels(self) -> str:
        """``"A, B"``: the compared configurations."""
        return ", ".join(str(c["label"]) for c in self.configs)

    def describe(self) -> str:
        """One line for the sidebar."""
        what = f"Comparison #{self.id} ({self.labels})"
        if self.error is not None:
            return f"{what} failed: {self.error}"
        return f"{what} running for {time.monotonic() - self.started:.0f} s"

    def progress(self) -> tuple[float, str]:
        """The share of fits done and one line: fits done of all, the last fit, the time."""
        took = time.monotonic() - self.started
        if self.cancelled:
            return 1.0, f"Cancelling: stops after the fit under way ({took:.0f} s)"
        try:
            rep = json.loads(Path(self.progress_path).read_text())
        except (OSError, ValueError):
            return 0.0, f"waiting for the worker ({took:.0f} s)"
        done, total = int(rep.get("done", 0)), int(rep.get("total", 0))
        if not total:
            return 0.0, f"starting ({took:.0f} s)"
        last = f", last: {rep['method']} split {rep['split']}" if done else ""
        return done / total, f"{done} of {total} fits done{last} · {took:.0f} s"

    def cancel(self) -> None:
        """Ask the worker to end the comparison after the fit under way."""
        if self.progress_path and not self.cancelled:
            Path(self.progress_path + ".cancel").touch()
            self.cancelled = True


class BackgroundSession(ComparisonSession, Protocol):
    """What running comparisons in the worker needs of the session
    (:class:`app.state.session.AppState` has it): the comparison history and ids, the jobs
    running (``background``), the ids of those landed since the Compare page was last shown,
    and the dask scheduler to run on (None: this machine)."""

    background: list[BackgroundComparison]
    landed: list[int]
    cluster: str | None


def start_comparison(
    state: BackgroundSession,
    entry: DatasetEntry,
    configs: Sequence[dict[str, Any]],
    n_splits: int = 3,
    test_size: float = 0.3,
    seed: int = 0,
    baseline: str | None = None,
    taxonomy: Taxonomy | None = None,
) -> BackgroundComparison:
    """Start a comparison in the worker process; it lands in ``state.comparisons`` when done.

    Parameters are those of :func:`app.state.compare.compare_methods`.

    Raises
    ------
    DataError
        No configuration, or ``n_splits=0`` without an own split (checked before starting).
    """
    if not configs:
        raise DataError("choose at least one method to compare")
    data, plan = comparison_data(entry, n_splits, test_size, seed, taxonomy)
    cfgs = [dict(c) for c in configs]
    if state.cluster:  # run_engine runs it there, and the plan records where
        plan = {**plan, "cluster": state.cluster}
    fd, path = tempfile.mkstemp(prefix="hierlab-compare-", suffix=".json")
    os.close(fd)
    os.unlink(path)  # the worker writes it
    job = BackgroundComparison(
        id=state.new_id(),
        entry=entry,
        configs=cfgs,
        plan=plan,
        taxonomy=taxonomy or entry.taxonomy,
        baseline=baseline,
        future=_executor().submit(run_reporting, data, cfgs, plan, path),
        progress_path=path,
    )
    state.background.append(job)
    return job


def _cleanup(path: str) -> None:
    """Remove a finished job's progress file and cancel marker."""
    for p in (path, path + ".cancel", path + ".tmp"):
        if p and os.path.exists(p):
            os.unlink(p)


def pending(state: BackgroundSession) -> list[BackgroundComparison]:
    """The session's comparisons still running, or failed and not yet shown on Compare."""
    return list(state.background)


def take_failed(state: BackgroundSession) -> list[BackgroundComparison]:
    """Remove the failed jobs from the session and return them (the Compare page shows them)."""
    failed = [j for j in state.background if j.error is not None]
    state.background[:] = [j for j in state.background if j.error is None]
    return failed


def collect(state: BackgroundSession) -> list[ComparisonEntry]:
    """Move the finished jobs' comparisons into ``state.comparisons`` (oldest first).

    A failed job stays in ``state.background`` with its
    :attr:`~BackgroundComparison.error` (the sidebar shows it) until :func:`take_failed`.

    Returns
    -------
    list of ComparisonEntry
        The comparisons that landed in this call.
    """
    landed: list[ComparisonEntry] = []
    keep: list[BackgroundComparison] = []
    for job in state.background:
        if job.error is not None or not job.future.done():
            keep.append(job)
            continue
        _cleanup(job.progress_path)
        try:
            engine = job.future.result()
            comp = finish_comparison(
                job.id, job.entry, job.configs, job.plan, engine, job.taxonomy, job.baseline
            )
        except Exception as exc:  # the worker's error (or a broken worker): a message
            cancelled = job.cancelled and "Cancelled" in f"{type(exc).__name__}: {exc}"
            job.error = "cancelled by you" if cancelled else f"{type(exc).__name__}: {exc}"
            keep.append(job)
            continue
        state.comparisons.append(comp)
        state.landed.append(comp.id)
        landed.append(comp)
    state.background[:] = keep
    return landed
