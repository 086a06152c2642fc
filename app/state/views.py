"""What Explore and Compare show of a run, computed once per run and kept with it.

At the end of training (:func:`prepare_views`, called by :func:`app.state.runs.fit_run`) a run gets
its :class:`RunViews`: the per-node and per-level errors, the gamma histogram, each example's
tree distance and the non-empty confusion cells at every depth
(:func:`hierlab.evaluation.views.confused_pairs`, never a ``K x K`` table) — about a second on
IPC titles. Its calibrated-probability report (``hierlab.evaluation.curves.probability_report``:
node probabilities of every test row, the pooled PR curve, reliability, the threshold table;
tens of seconds at hundreds of classes) is computed by a background thread
(:class:`ProbabilityJob`), one run at a time, with its progress readable by the pages; it
waits between its blocks of rows while a training job runs (:func:`training`: on two cores
the report of the run just trained would otherwise halve the speed of the next fit, and
blur its time left). Only
what the pages draw is kept: the PR curve thinned to the points its chart draws, never the
``(n_samples, n_nodes)`` probability matrix.

:data:`COMPUTED` counts the computations (the tests check that a page never recomputes).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

from hierlab.evaluation.curves import probability_report
from hierlab.evaluation.metrics import (
    error_per_level,
    error_per_node,
    gamma_histogram,
    is_multilabel,
)
from hierlab.evaluation.views import confused_pairs

if TYPE_CHECKING:
    from hierlab import HierDataset, Taxonomy

__all__ = [
    "COMPUTED",
    "PR_POINTS",
    "THRESHOLDS",
    "ProbabilityJob",
    "RunViews",
    "ScoredRun",
    "Summary",
    "compute_summary",
    "has_probabilities",
    "prepare_views",
    "probability_job",
    "run_views",
    "single_label_tree",
    "training",
]

#: thresholds of the precision-against-depth table (Explore's slider)
THRESHOLDS: tuple[float, ...] = tuple(np.round(np.linspace(0.0, 1.0, 21), 2).tolist())
#: points kept of a PR curve (what ``hierlab.plots.pr_curve_figure`` draws of it)
PR_POINTS = 2000
#: rows of node probabilities computed per step (the progress moves after each)
PROBA_ROWS = 2000
#: how many computations of each kind ran in this process ("views", "probabilities")
COMPUTED: Counter[str] = Counter()

_POOL_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
#: set while no training job runs (the probability reports wait for it between blocks)
_NO_TRAINING = threading.Event()
_NO_TRAINING.set()
_TRAINING = {"jobs": 0}


@contextmanager
def training() -> Iterator[None]:
    """While a training job runs: the probability reports wait between their blocks."""
    with _POOL_LOCK:
        _TRAINING["jobs"] += 1
        _NO_TRAINING.clear()
    try:
        yield
    finally:
        with _POOL_LOCK:
            _TRAINING["jobs"] -= 1
            if _TRAINING["jobs"] <= 0:
                _NO_TRAINING.set()


def _after_training(job: ProbabilityJob) -> None:
    """Wait while a training job runs, saying so in the report's progress."""
    if not _NO_TRAINING.is_set():
        stage = job.stage
        job.stage = "waiting for the training under way"
        _NO_TRAINING.wait()
        job.stage = stage


def _pool() -> ThreadPoolExecutor:
    """The process's one probability thread (runs queue: one report in memory at a time)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hierlab-views")
        return _POOL


@dataclass
class ProbabilityJob:
    """A run's probability report, computed in the background thread.

    Attributes
    ----------
    future : Future
        The report (a dict, see :func:`_report`) or the error it raised.
    fraction : float
        Progress in [0, 1].
    stage : str
        What it is doing ("node probabilities of rows 0-2000 of 22513", ...).
    started : float
        ``time.monotonic()`` at submission.
    """

    future: Future[dict[str, Any]]
    fraction: float = 0.0
    stage: str = "waiting for the runs before it"
    started: float = field(default_factory=time.monotonic)

    def done(self) -> bool:
        """The report (or its error) is there."""
        return self.future.done()

    def describe(self) -> str:
        """``"node probabilities ... (42%, 3 s)"``: the progress bar's text."""
        return f"{self.stage} ({self.fraction:.0%}, {time.monotonic() - self.started:.0f} s)"


@dataclass
class Summary:
    """What Explore draws of a single-label run on a tree, computed once.

    Attributes
    ----------
    per_node : DataFrame
        ``error_per_node`` (node, id, depth, n, errors, error).
    per_level : DataFrame
        ``error_per_level`` (level, n, error).
    gamma_hist : DataFrame
        ``gamma_histogram``.
    true_ids, pred_ids : ndarray of int of shape (n_test,)
        Node ids of the test labels and predictions.
    gamma : ndarray of int of shape (n_test,)
        Tree distance between each test label and its prediction.
    pairs : dict of int -> DataFrame
        Per depth ``1 .. max_depth``, :func:`hierlab.evaluation.views.confused_pairs`.
    """

    per_node: pd.DataFrame
    per_level: pd.DataFrame
    gamma_hist: pd.DataFrame
    true_ids: np.ndarray
    pred_ids: np.ndarray
    gamma: np.ndarray
    pairs: dict[int, pd.DataFrame]


@dataclass
class RunViews:
    """A run's cached views: its :class:`Summary` and its probability report.

    Attributes
    ----------
    summary : Summary or None
        None when the run is multi-label or its taxonomy a DAG (Explore shows metrics only).
    proba : ProbabilityJob or None
        The probability report (None until started: the run's test rows were not at hand).
    """

    summary: Summary | None
    proba: ProbabilityJob | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the background job (a Future is not picklable)."""
        return {**self.__dict__, "proba": None}


class ScoredRun(Protocol):
    """What the views read of a run (:class:`app.state.runs.Run` is one): its fitted model,
    taxonomy, test labels and predictions, and the views kept with it."""

    estimator: Any
    taxonomy: Taxonomy
    y_test: np.ndarray
    y_pred: np.ndarray
    views: RunViews | None


def single_label_tree(run: ScoredRun) -> bool:
    """Explore's per-node views apply: one label per test row and a tree."""
    return bool(run.taxonomy.is_tree and not is_multilabel(run.y_test))


def compute_summary(run: ScoredRun) -> Summary:
    """The run's :class:`Summary`: one pass over the test rows per view."""
    COMPUTED["views"] += 1
    tax: Taxonomy = run.taxonomy
    true_ids = tax.index(np.asarray([str(v) for v in run.y_test], dtype=object))
    pred_ids = tax.index(np.asarray([str(v) for v in run.y_pred], dtype=object))
    return Summary(
        per_node=error_per_node(true_ids, pred_ids, tax),
        per_level=error_per_level(true_ids, pred_ids, tax),
        gamma_hist=gamma_histogram(true_ids, pred_ids, tax),
        true_ids=true_ids,
        pred_ids=pred_ids,
        gamma=np.asarray(tax.tree_distance(true_ids, pred_ids)),
        pairs={d: confused_pairs(true_ids, pred_ids, tax, d) for d in range(1, tax.max_depth + 1)},
    )


def run_views(run: ScoredRun, test: HierDataset | None = None) -> RunViews:
    """The run's views, computed on first use and kept with the run (``run.views``).

    With ``test`` (the run's test rows) the probability report is started in the background
    when it is not yet (only for a model with a calibration).
    """
    if run.views is None:
        run.views = RunViews(summary=compute_summary(run) if single_label_tree(run) else None)
    views: RunViews = run.views
    if test is not None and views.proba is None and has_probabilities(run):
        views.proba = probability_job(run, test)
    return views


def has_probabilities(run: ScoredRun) -> bool:
    """The run's model gives calibrated node probabilities (it has a ``calibration_``)."""
    return getattr(run.estimator, "calibration_", None) is not None


def prepare_views(run: ScoredRun, test: HierDataset) -> None:
    """At the end of training: the run's views now, its probability report in the background.
    Never raises (a failure is shown when a page asks for the views)."""
    try:
        run_views(run, test)
    except Exception:  # the pages compute again and show the error in place
        run.views = None


# ---------------------------------------------------------------------------------- probabilities
class _ChunkedProba:
    """The estimator, its ``node_proba`` computed :data:`PROBA_ROWS` rows at a time with the
    job's progress updated after each block (the report itself is unchanged)."""

    def __init__(self, estimator: Any, job: ProbabilityJob) -> None:
        self._est = estimator
        self._job = job

    def __getattr__(self, name: str) -> Any:
        return getattr(self._est, name)

    def node_proba(self, X: Any) -> np.ndarray:
        n = X.shape[0]
        out = np.empty((n, self._est.taxonomy_.n_nodes))
        for start in range(0, n, PROBA_ROWS):
            stop = min(n, start + PROBA_ROWS)
            _after_training(self._job)
            self._job.stage = f"node probabilities of test rows {start}-{stop} of {n}"
            out[start:stop] = self._est.node_proba(X[start:stop])
            self._job.fraction = 0.7 * stop / max(n, 1)
        _after_training(self._job)
        self._job.stage = "precision-recall and reliability over (example, node) pairs"
        return out


def _thin(curve: pd.DataFrame, points: int = PR_POINTS) -> pd.DataFrame:
    """The rows of a PR curve ``hierlab.plots.pr_curve_figure`` draws (evenly spaced, the last
    kept), with its ``attrs``."""
    keep = np.unique(np.linspace(0, len(curve) - 1, min(len(curve), points)).astype(int))
    out = curve.iloc[keep].reset_index(drop=True) if len(curve) else curve.copy()
    out.attrs = dict(curve.attrs)
    return out


def _report(run: ScoredRun, X: Any, y: Any, job: ProbabilityJob) -> dict[str, Any]:
    """The probability report of ``run`` on its test rows, without the probability matrix."""
    COMPUTED["probabilities"] += 1
    _after_training(job)
    rep = probability_report(_ChunkedProba(run.estimator, job), X, y, thresholds=THRESHOLDS)
    rep.pop("node_proba", None)
    rep["pr_curve"] = _thin(rep["pr_curve"])
    job.fraction, job.stage = 1.0, "done"
    return rep


def probability_job(run: ScoredRun, test: HierDataset) -> ProbabilityJob:
    """Start the probability report of ``run`` on ``test`` in the background thread."""
    job = ProbabilityJob(future=Future())
    job.future = _pool().submit(_report, run, test.X, test.y, job)
    return job
