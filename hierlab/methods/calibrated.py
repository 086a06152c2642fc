"""Calibrated probabilities for every classifier, read from its node scores.

:class:`CalibratedProbabilitiesMixin` is a base of
:class:`~hierlab.methods.base.HierarchicalClassifier`: ``decision_function``, ``node_proba``,
``predict_proba``, ``calibrate`` and the cut of a prediction at a probability threshold
(``predict(X, threshold=t)``). It reads the estimator through the hooks of
:class:`~hierlab.methods.scores.NodeScoresMixin` and keeps the maps in ``calibration_`` (plain
arrays, saved with the model); :mod:`hierlab.methods.probability` does the arithmetic.

What it needs of the estimator besides the score hooks: ``taxonomy_``, ``classes_``,
``_class_ids()``, ``_closure(ids)`` (ancestor-closed indicator), ``_encode(y)``,
``_induces_taxonomy``, ``multilabel_`` (multi-label models), and ``fit`` for the fold models.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold
from sklearn.utils.validation import check_is_fitted

from hierlab.core.exceptions import FitStopped, ParameterError
from hierlab.core.solver import report_stage
from hierlab.methods import probability
from hierlab.methods.guards import check_labels, check_X
from hierlab.methods.probability import (
    CALIBRATION_METHODS,
    apply_calibration,
    calibration_pairs,
    conditional_margins,
    deepest_above,
    fit_calibration,
    gather_pairs,
    leaf_probabilities,
    marginal_probabilities,
    path_min,
    point_masses,
    row_blocks,
    subtree_max,
    tree_probabilities,
)
from hierlab.methods.scores import NodeScoresMixin

if TYPE_CHECKING:
    from typing import Self

    from hierlab.core.taxonomy import Taxonomy

__all__ = ["CALIBRATING", "FITTING_MAPS", "CalibratedProbabilitiesMixin"]

#: the stages ``fit`` reports while it calibrates (``on_stage`` of its callbacks)
CALIBRATING = "calibration: scoring the training rows"
FITTING_MAPS = "calibration: fitting the maps"


class CalibratedProbabilitiesMixin(NodeScoresMixin):
    """Probabilities and their calibration (a base of ``HierarchicalClassifier``, whose
    ``calibration_`` attribute holds the maps)."""

    if TYPE_CHECKING:
        taxonomy: Taxonomy | None
        classes_: np.ndarray
        calibration_: dict[str, Any]
        _induces_taxonomy: bool

        def _class_ids(self) -> np.ndarray: ...

        def _closure(self, ids: Any) -> sp.csr_matrix: ...

        def _encode(self, y: Any) -> Any: ...

        def fit(self, X: Any, y: Any) -> Self: ...

    # ------------------------------------------------------------------ public API
    def decision_function(self, X: Any) -> np.ndarray:
        """scikit-learn scores for ``classes_``, consistent with ``predict``.

        One label per row, a tree: the smallest conditional margin along the class's path
        (:func:`~hierlab.methods.probability.conditional_margins`), positive exactly when the
        class lies on the predicted path (so the arg-max class is the prediction when the
        classes are leaves). Multi-label or a DAG: the best candidate score below the class.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes in a single
        label tree (the score of ``classes_[1]`` minus that of ``classes_[0]``)
        """
        check_is_fitted(self, "taxonomy_")
        F = self._calibration_scores(check_X(X, self, reset=False))
        mode = self._probability_mode()
        out = (path_min(F, self.taxonomy_) if mode == "tree" else F)[:, self._class_ids()]
        if out.shape[1] == 2 and mode != "marginal":
            return out[:, 1] - out[:, 0]
        return out

    def node_proba(self, X: Any) -> np.ndarray:
        """Calibrated node probabilities, shape (n_samples, n_nodes), ``taxonomy_.names`` order.

        One label per row, a tree: ``P(node in A+(y) | x)``, built top-down as ``P(root) = 1``,
        ``P(c) = P(p) q_c / Z_p`` where ``q_c`` is the calibrated estimate that the decision at
        ``p`` goes to ``c`` and ``Z_p`` the sum of the siblings' ``q`` (when no training label
        stops at ``p``) or ``max(1, sum)`` (when some do); so ``P(child) <= P(parent)`` and the
        children share at most the parent's probability. An induced tree (MF-Tree, CMTL):
        one map of the leaves' path margins, normalised over the leaves, summed up the tree
        (so the arg-max leaf is the prediction). Multi-label or a DAG: calibrated
        marginals with ``P(v) = min(q_v, P(parents))``. See :mod:`hierlab.methods.probability`
        and :meth:`calibrate` (``fit`` calibrates in-sample; cross-fitting is ``calibrate``).
        """
        check_is_fitted(self, "taxonomy_")
        cal = getattr(self, "calibration_", None)
        if cal is None:
            raise NotFittedError(
                f"this {type(self).__name__} has no calibration (a model saved before "
                "calibration existed, or trained by partial_fit): call calibrate(X, y) first"
            )
        X = check_X(X, self, reset=False)
        tax = self.taxonomy_
        out = np.empty((X.shape[0], tax.n_nodes))
        with self._weights_fixed():
            for idx in row_blocks(X.shape[0], tax.n_nodes):  # bounded temporaries on large X
                out[idx] = self._probabilities(cal, self._calibration_scores(_rows(X, idx)))
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_``, shape (n_samples, n_classes).

        One label per row, a tree: ``P(y = c | x)``, the mass :meth:`node_proba` leaves at
        ``c`` once its children have taken theirs (for leaves, ``node_proba`` itself); over all
        nodes these sum to one, over ``classes_`` to at most one (exactly one when the classes
        are the leaves). Multi-label or a DAG: the marginals ``P(c in A+(Y) | x)``.
        """
        P = self.node_proba(X)
        if self.calibration_["mode"] != "marginal":
            P = point_masses(P, self.taxonomy_)
        return P[:, self._class_ids()]

    def calibrate(
        self,
        X: Any,
        y: Any,
        *,
        method: str = "sigmoid",
        cv: int | str = 3,
        random_state: int | None = 0,
        n_jobs: int | None = None,
    ) -> Self:
        """Refit the calibration maps behind :meth:`node_proba` and :meth:`predict_proba`.

        ``fit`` already calibrates with Platt's sigmoid on the training margins (``cv="train"``:
        no extra fit, but margins on training data are optimistic, so the probabilities tend
        to be over-confident). This method cross-fits instead.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        method : {"sigmoid", "isotonic", "none"}, default "sigmoid"
            Platt scaling or isotonic regression per map; ``"none"`` is the uncalibrated
            ``expit(margin)`` (a baseline).
        cv : int >= 2, "prefit" or "train", default 3
            An int: cross-fitting on (X, y), normally the training data. ``cv`` clones of this
            estimator are fitted on ``cv - 1`` folds each and score the fold they did not see;
            the maps are fitted on those out-of-fold margins and then applied to this model's
            margins (costs ``cv`` extra fits on ``(cv - 1) / cv`` of the data). ``"prefit"``:
            (X, y) is held-out data, scored by this model. ``"train"``: (X, y) scored by this
            model, as ``fit`` does.
        random_state : int, optional
            Seed of the folds.
        n_jobs : int, optional
            Fit the folds in parallel (joblib).

        Returns
        -------
        self
        """
        check_is_fitted(self, "taxonomy_")
        if method not in CALIBRATION_METHODS:
            raise ParameterError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")
        X = check_X(X, self, reset=False)
        yo = check_labels(y)
        if len(yo) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(yo)} labels")
        Y = self._encode(yo)
        if cv in ("prefit", "train"):
            self._set_calibration(Y, _InSampleScores(self, X), X.shape[0], method, str(cv))
            return self
        if isinstance(cv, bool) or not isinstance(cv, int | np.integer) or cv < 2:
            raise ParameterError(f"cv must be an int >= 2, 'prefit' or 'train', got {cv!r}")
        if self._induces_taxonomy:
            raise ParameterError(
                f"{type(self).__name__} induces a new tree in every fit, so fold models cannot "
                "be pooled node by node: calibrate on held-out data with cv='prefit'"
            )
        folds = list(KFold(int(cv), shuffle=True, random_state=random_state).split(X))
        models = Parallel(n_jobs=n_jobs)(delayed(_fit_fold)(self, X[tr], yo[tr]) for tr, _ in folds)
        oof = _OutOfFoldScores(X, folds, models)
        self._set_calibration(Y, oof, X.shape[0], method, f"{int(cv)}-fold")
        return self

    # ------------------------------------------------------------------ the arithmetic's inputs
    def _calibrate_on_training_rows(
        self, Y: Any, X: np.ndarray | sp.csr_matrix, callbacks: Sequence[Any] = ()
    ) -> None:
        """``fit``'s maps: Platt's sigmoid on the training rows' own margins (``cv="train"``).

        The rows scored so far are reported to the callbacks (``on_stage``, see
        :func:`~hierlab.core.solver.report_stage`) after each block; a stop requested meanwhile
        ends the calibration: the model keeps no maps (``calibration_`` None, no
        probabilities) and ``stop_reason_`` says ``"callback"``.

        Parameters
        ----------
        Y : ndarray of int of shape (n_samples,), or csr_matrix of shape (n_samples, n_nodes)
            The training labels as node ids (or a multi-label indicator).
        X : ndarray or csr_matrix of shape (n_samples, n_features)
            The validated training rows.
        callbacks : sequence
            The fit's callbacks.
        """
        scores = _InSampleScores(self, X, list(callbacks))
        try:
            self._set_calibration(Y, scores, X.shape[0], "sigmoid", "train")
        except FitStopped:
            self.calibration_ = None  # type: ignore[assignment]
            self.stop_reason_ = "callback"

    def _probability_mode(self) -> str:
        """``"tree"`` (one label per row, a tree), ``"leaves"`` (an induced tree: its leaves
        are the classes) or ``"marginal"`` (multi-label or a DAG)."""
        if bool(getattr(self, "multilabel_", False)) or not self.taxonomy_.is_tree:
            return "marginal"
        return "leaves" if self._induces_taxonomy else "tree"

    def _calibration_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Conditional margins (tree mode) or subtree maxima (marginal mode), (n, n_nodes)."""
        S = self._node_scores(X)
        tax = self.taxonomy_
        mode = self._probability_mode()
        if mode != "marginal":
            C = conditional_margins(
                S, tax, self._routing(), self._candidates(), self._stop_scores()
            )
            return C if mode == "tree" else path_min(C, tax)
        if self._routing() == "recursive":  # no such family today; the path's weakest step
            return path_min(conditional_margins(S, tax, "recursive"), tax)
        return subtree_max(S, tax, self._candidates())

    def _probabilities(self, cal: dict[str, Any], F: np.ndarray) -> np.ndarray:
        """Node probabilities, shape (n_samples, n_nodes), from calibration scores ``F``."""
        tax = self.taxonomy_
        if cal["mode"] == "tree":
            Q = apply_calibration(cal, F, tax.parent)
            return tree_probabilities(Q, tax, np.asarray(cal["closed"], dtype=bool))
        if cal["mode"] == "leaves":
            Q = apply_calibration(cal, F, np.zeros(tax.n_nodes, dtype=np.int64))
            return leaf_probabilities(Q, tax)
        Q = apply_calibration(cal, F, np.arange(tax.n_nodes))
        return marginal_probabilities(Q, tax)

    def _set_calibration(self, Y: Any, score_rows: Any, n: int, method: str, how: str) -> None:
        """Fit the maps on ``score_rows(idx)`` (margins of rows ``idx``) against labels ``Y``."""
        tax = self.taxonomy_
        mode = self._probability_mode()
        leaves = np.asarray(tax.leaves) if mode == "leaves" else None  # one map for them all
        rows, nodes, target = calibration_pairs(self._closure(Y), tax, mode == "tree", leaves)
        # reported: blocks of a quarter of the usual size, so that the progress moves often
        reported = bool(getattr(score_rows, "callbacks", None))
        entries = probability.GATHER_ENTRIES // 4 if reported else None
        with self._weights_fixed():  # score_rows reads self's weights block by block
            values = gather_pairs(score_rows, rows, nodes, n, tax.n_nodes, entries)
        maps = getattr(score_rows, "maps", None) if reported else None
        if mode == "leaves":
            zeros = np.zeros(len(values), dtype=np.int64)
            cal = fit_calibration(values, zeros, target, 1, method, maps)
        elif mode == "tree":  # one map per parent: the decision taken there
            groups = np.asarray(tax.parent, dtype=np.int64)[nodes]
            order = np.argsort(groups, kind="stable")
            cal = fit_calibration(
                values[order], groups[order], target[order], tax.n_nodes, method, maps
            )
            stops = np.bincount(np.asarray(Y, dtype=np.int64), minlength=tax.n_nodes)
            cal["closed"] = stops == 0
        else:
            cal = fit_calibration(values, nodes, target, tax.n_nodes, method, maps)
        cal["mode"] = mode
        cal["cv"] = how
        self.calibration_ = cal

    def _stop_above(self, X: Any, ids: Any, t: float) -> Any:
        """Predictions cut back to the deepest node of their path with probability >= ``t``."""
        P = self.node_proba(X)
        tax = self.taxonomy_
        if not sp.issparse(ids):
            return deepest_above(P, np.asarray(ids, dtype=np.int64), tax, t)
        ind = sp.csr_matrix(ids)
        closed = self._closure(ind)
        keep = closed.multiply(sp.csr_matrix(P >= t)).tocsr()
        keep.eliminate_zeros()
        edges = _child_to_parent(tax)
        has_kept_child = (keep @ edges).tocsr()
        rows_closed = np.asarray((closed != ind).sum(axis=1)).ravel() <= 1  # ind is closed
        # leaves-style predictions (rows not closed) keep only the deepest kept nodes
        inner = sp.diags((~rows_closed).astype(np.float64)) @ has_kept_child
        not_root = np.ones(tax.n_nodes)
        not_root[0] = 0.0  # the root is never a prediction
        out = ((keep - keep.multiply(inner > 0)) @ sp.diags(not_root)).tocsr()
        out.eliminate_zeros()
        out.sort_indices()
        out.data = np.ones(len(out.data))
        return out


def _fit_fold(
    est: CalibratedProbabilitiesMixin, X: Any, y: np.ndarray
) -> CalibratedProbabilitiesMixin:
    """A clone of ``est`` fitted on one fold, on ``est``'s taxonomy (so node ids agree)."""
    model = clone(est)
    if est.taxonomy is None:
        model.set_params(taxonomy=est.taxonomy_)
    model._calibrate_in_fit = False  # popped by fit: its own maps would be thrown away
    return model.fit(X, y)


class _InSampleScores:
    """``score_rows(idx)``: margins of rows ``idx`` of ``X`` by ``est`` itself; with
    ``callbacks``, the rows scored so far are reported after each block, and a stop requested
    raises :class:`~hierlab.core.exceptions.FitStopped`."""

    def __init__(self, est: CalibratedProbabilitiesMixin, X: Any, callbacks: Any = ()) -> None:
        self.est = est
        self.X = X
        self.callbacks = list(callbacks)
        self.started = time.perf_counter()

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        out = self.est._calibration_scores(_rows(self.X, idx))
        if self.callbacks:
            done, n = int(idx[-1]) + 1 if len(idx) else 0, self.X.shape[0]
            elapsed = time.perf_counter() - self.started
            if report_stage(self.callbacks, CALIBRATING, done, n, elapsed):
                raise FitStopped(f"stopped while calibrating, after {done} of {n} rows")
        return out

    def maps(self, done: int, total: int) -> None:
        """The calibration maps fitted so far (those of ``done`` of the ``total`` pairs)
        reported; a stop requested raises :class:`~hierlab.core.exceptions.FitStopped`."""
        elapsed = time.perf_counter() - self.started
        if report_stage(self.callbacks, FITTING_MAPS, done, total, elapsed):
            raise FitStopped(
                f"stopped while fitting the calibration maps ({done} of {total} pairs)"
            )


class _OutOfFoldScores:
    """``score_rows(idx)``: margins of rows ``idx``, each from the fold model that did not see it.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    folds : list of (train, test) index arrays
    models : list of fitted estimators, one per fold
    """

    def __init__(self, X: Any, folds: list[Any], models: list[Any]) -> None:
        self.X = X
        self.models = models
        self.fold_of = np.empty(X.shape[0], dtype=np.int64)
        for k, (_, te) in enumerate(folds):
            self.fold_of[te] = k

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        out: np.ndarray | None = None
        for k, model in enumerate(self.models):
            sel = np.flatnonzero(self.fold_of[idx] == k)
            if len(sel) == 0:
                continue
            F = model._calibration_scores(self.X[idx[sel]])
            if out is None:
                out = np.empty((len(idx), F.shape[1]))
            out[sel] = F
        assert out is not None
        return out


def _rows(X: Any, idx: np.ndarray) -> Any:
    """``X[idx]``, without a copy when ``idx`` is every row in order."""
    if len(idx) == X.shape[0] and (len(idx) == 0 or (idx[0] == 0 and idx[-1] == len(idx) - 1)):
        return X
    return X[idx]


def _child_to_parent(tax: Taxonomy) -> sp.csr_matrix:
    """0/1 matrix of shape (n_nodes, n_nodes) with a 1 at (child, parent) for every edge."""
    ch, par = tax.parent_edges
    return sp.csr_matrix((np.ones(len(ch)), (ch, par)), shape=(tax.n_nodes, tax.n_nodes))
