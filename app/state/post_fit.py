"""The cost of a run's work after its solver, measured before the fit starts.

After the solver, a run scores its training rows for the calibration maps (every node's margin
of every row), fits the maps (one per parent node, on (example, node) pairs), and predicts its
test rows in blocks (:mod:`app.state.stages`). On many classes that stretch is a good share of
the run (2,000 leaves: 9-13 s against a solver of 7-110 s), so the time left of a run must
count it from the start. :func:`probe_post_fit` times the same library steps on a sample of
``m`` training rows:

* ``score``: ``S = X_m W^T`` with a dense stand-in ``W`` of the model's shape (zeros on the
  sample's columns: a product's cost does not depend on its values), then
  :func:`~hierlab.methods.probability.conditional_margins` of ``S``;
* ``maps``: :func:`~hierlab.methods.probability.calibration_pairs` of every training label (as
  the fit forms them) and :func:`~hierlab.methods.probability.fit_calibration` of every
  ``k``-th map on its pairs (margins: unit noise, so that Platt's fit iterates as on real
  margins), times ``k``;
* ``predict``: the product and the arg-max over the leaves.

Each step is timed in the probing thread's CPU seconds (:func:`time.thread_time`): what it
costs, not how long it waited (the probe runs as the job starts, beside the page's rerun that
started it, which took the probe's wall time to 10-16 times its cost in app_pages). The
scoring and the predictions are scaled to their rows (``n_train``, ``n_test``), the maps
to their groups: ``T = n_train score / m + maps + n_test predict / m``. Over eight recorded
runs (IPC titles and 2,000 generated leaves, four methods each: ``tests/data/eta``) the
stretch took 0.49-2.09 times ``T`` (NHSVM's own objective at its solution included):
:meth:`PostFitCost.remaining` gives ``[0.45 T, 2.2 T]``. Once the calibration has
scored a few blocks, the stage's own rate gives its time left, and its rate against the
probe's rescales the stages after it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from app.state.stages import EVALUATING, PREDICTING
from hierlab.core.dataset import encode_labels, is_multilabel
from hierlab.methods import probability
from hierlab.methods.calibrated import CALIBRATING, FITTING_MAPS
from hierlab.methods.guards import check_labels

__all__ = ["HIGH", "LOW", "PROBE_ROWS", "PostFitCost", "probe_post_fit"]

#: training rows the probe times the scoring on
PROBE_ROWS = 256
#: entries of the stand-in weights the probe's product uses at once (128 MB)
PRODUCT_ENTRIES = 1 << 24
#: calibration maps the probe fits (every ``k``-th group)
MAP_GROUPS = 16
#: the range around the probe's estimate ``T``: ``[LOW T, HIGH T]``
LOW, HIGH = 0.45, 2.2
#: how far a measured stage rate may rescale the stages after it (either way)
RESCALE = 4.0


@dataclass(frozen=True)
class PostFitCost:
    """Seconds per row of each stage after the solver, measured by :func:`probe_post_fit`.

    Attributes
    ----------
    score : float
        Seconds per training row: its margins at every node.
    maps : float
        Seconds to fit every calibration map (their pairs included).
    predict : float
        Seconds per test row.
    n_train, n_test : int
    probe_time : float
        Seconds the probe took.
    """

    score: float
    maps: float
    predict: float
    n_train: int
    n_test: int
    probe_time: float = 0.0

    @property
    def seconds(self) -> float:
        """The probe's estimate ``T`` of the whole stretch."""
        return float(sum(self.stage_seconds().values()))

    def stage_seconds(self) -> dict[str, float]:
        """The probe's estimate of each stage, in the order they run."""
        return {
            CALIBRATING: self.score * self.n_train,
            FITTING_MAPS: self.maps,
            PREDICTING: self.predict * self.n_test,
        }

    def remaining(
        self, stage: str | None = None, ratio: float | None = None
    ) -> tuple[float, float]:
        """The stages after ``stage`` (all of them when None), ``(low, high)`` seconds.

        Parameters
        ----------
        stage : str, optional
            The stage under way (its own rate times it: not counted here); one the probe
            does not know (a fit's own, before the calibration) counts every stage after.
        ratio : float, optional
            Measured over probed seconds per training row of the scoring (once the
            calibration has scored a few blocks): the stages left are rescaled by it, within
            ``[1 / RESCALE, RESCALE]``.
        """
        est = self.stage_seconds()
        order = list(est)
        if stage == EVALUATING:
            return 0.0, 0.0
        # a stage of the fit before the calibration (the objective at the solution): all
        later = order[order.index(stage) + 1 :] if stage in order else order
        rest = sum(est[s] for s in later)
        scale = 1.0 if ratio is None else min(RESCALE, max(1.0 / RESCALE, ratio))
        return LOW * rest * scale, HIGH * rest * scale


def _sample(n: int, m: int) -> np.ndarray:
    """``m`` row indices spread evenly over ``n`` rows (all when ``n <= m``)."""
    if n <= m:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, m).astype(np.int64))


def _product(Xs: Any, n_nodes: int) -> tuple[np.ndarray, float]:
    """``X_s W^T`` with zeros for ``W``, shape (m, n_nodes), and the seconds it takes: the
    sample's columns only (the same multiply-adds as the whole ``W``), at most
    :data:`PRODUCT_ENTRIES` of the stand-in ``W`` at once (the seconds scaled to them all)."""
    if sp.issparse(Xs):
        Xs = sp.csr_matrix(Xs)
        used = np.unique(Xs.indices)
    else:
        Xs = np.asarray(Xs)
        used = np.flatnonzero(np.any(Xs != 0, axis=0))
    cols = used[: max(1, PRODUCT_ENTRIES // max(n_nodes, 1))]
    t = time.thread_time()
    S = np.asarray(Xs[:, cols] @ np.zeros((len(cols), n_nodes)))
    seconds = (time.thread_time() - t) * len(used) / max(1, len(cols))
    return S, seconds


def probe_post_fit(X_train: Any, y_train: Any, n_test: int, taxonomy: Any) -> PostFitCost | None:
    """Time the stages after the solver on a sample of the training rows (module note).

    Parameters
    ----------
    X_train : ndarray or sparse matrix of shape (n_train, n_features)
    y_train : array-like of shape (n_train,)
        Node names (or sets of them).
    n_test : int
        Test rows the run predicts.
    taxonomy : Taxonomy

    Returns
    -------
    PostFitCost or None
        None when the labels do not fit the taxonomy (the fit says why, not the probe).
    """
    t0 = time.perf_counter()
    n = X_train.shape[0]
    idx = _sample(n, PROBE_ROWS)
    if len(idx) == 0:
        return None
    try:
        labels = check_labels(y_train)
        Y = encode_labels(labels, taxonomy)
    except Exception:  # the fit reports bad labels, with their place
        return None
    tree = bool(taxonomy.is_tree) and not is_multilabel(labels)
    score, predict = _time_scores(X_train[idx], taxonomy, tree)
    maps = _time_maps(Y, taxonomy, tree)
    return PostFitCost(
        score=score / len(idx),
        maps=maps,
        predict=predict / len(idx),
        n_train=int(n),
        n_test=int(n_test),
        probe_time=time.perf_counter() - t0,
    )


def _time_scores(Xs: Any, taxonomy: Any, tree: bool) -> tuple[float, float]:
    """Seconds to score the rows ``Xs`` for the calibration (margins of every node) and to
    predict them (the arg-max over the leaves)."""
    S, product = _product(Xs, taxonomy.n_nodes)
    t = time.thread_time()
    if tree:
        probability.conditional_margins(S, taxonomy, "flat")
    score = product + time.thread_time() - t
    t = time.thread_time()
    leaves = np.asarray(taxonomy.is_leaf, dtype=bool)
    np.argmax(np.where(leaves[None, :], S, -np.inf), axis=1)
    return score, product + time.thread_time() - t


def _time_maps(Y: Any, taxonomy: Any, tree: bool) -> float:
    """Seconds to fit every calibration map: the pairs of every map (as the fit forms them),
    then the maps of every ``k``-th group fitted on their pairs (margins: unit noise, so that
    Platt's fit iterates as on real margins), times ``k``."""
    t = time.thread_time()
    if sp.issparse(Y):  # sets of labels: closed under ancestors
        closure = sp.csr_matrix(Y @ taxonomy.ancestor_matrix)
        closure.data[:] = 1.0
    else:
        closure = taxonomy.label_ancestor_indicator(Y)
    _, nodes, target = probability.calibration_pairs(closure, taxonomy, tree)
    groups = np.asarray(taxonomy.parent, dtype=np.int64)[nodes] if tree else nodes
    present = np.unique(groups)
    k = max(1, len(present) // MAP_GROUPS)
    keep = np.isin(groups, present[::k])
    pairs = time.thread_time() - t
    t = time.thread_time()
    g, tg = groups[keep], target[keep]
    order = np.argsort(g, kind="stable")
    values = np.random.default_rng(0).standard_normal(len(g))
    probability.fit_calibration(values, g[order], tg[order], taxonomy.n_nodes, "sigmoid")
    return pairs + (time.thread_time() - t) * len(present) / max(1, len(present[::k]))
