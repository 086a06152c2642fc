"""The node scores a classifier's prediction is read from, and the hooks a family overrides.

:class:`NodeScoresMixin` is a base of :class:`~hierlab.methods.base.HierarchicalClassifier`.
A family overrides, where the defaults do not fit:

* ``_node_scores(X)``: the scores, shape (n_samples, n_nodes); default ``X @ W.T + b`` with
  ``(W, b)`` from ``_score_weights()``, itself ``coef_`` and 0;
* ``_routing()``: ``"flat"`` (the prediction is the best-scoring of ``_candidates()``, the
  leaves by default) or ``"recursive"`` (the best child at every node, ``_stop_scores()`` the
  score of stopping);
* ``_scores_from_weights = False`` where ``_node_scores`` does not read ``_score_weights``.

The probabilities (:mod:`hierlab.methods.calibrated`) and the explanations
(:mod:`hierlab.evaluation.explain`) read these hooks; nothing else of the estimator.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hierlab.methods.guards import check_X

if TYPE_CHECKING:  # the host is a scikit-learn estimator; at run time a plain mixin
    from sklearn.base import BaseEstimator as _Estimator

    from hierlab.core.taxonomy import Taxonomy
else:
    _Estimator = object

__all__ = ["NodeScoresMixin"]


class NodeScoresMixin(_Estimator):
    """Node scores and the hooks that form them (a base of ``HierarchicalClassifier``).

    The host estimator provides ``taxonomy_`` (after ``fit``) and, for the default
    ``_score_weights``, ``coef_`` of shape (n_nodes, n_features).
    """

    if TYPE_CHECKING:
        taxonomy_: Taxonomy

    #: False where :meth:`_node_scores` does not read :meth:`_score_weights` (Hieron scores
    #: with its engine): :meth:`_weights_fixed` then forms nothing
    _scores_from_weights: bool = True

    def node_scores(self, X: Any) -> np.ndarray:
        """The method's own node scores, shape (n_samples, n_nodes), columns in
        ``taxonomy_.names`` order: path sums for path-sum models (TREELOSS, HSVM, NHSVM,
        Hieron), a node's score at its parent for top-down models (``w_c . x`` of ORTHOGNL,
        TRANSFER, HIERMULT, top-down, greedy Hieron; MF-Tree's routing score, ``+r`` left and
        ``-r`` right), ``w_n . x`` for the one-vs-rest leaves (HR, OVR).
        """
        check_is_fitted(self, "taxonomy_")
        return self._node_scores(check_X(X, self, reset=False))

    # ------------------------------------------------------------------ family hooks
    def _routing(self) -> str:
        """How the prediction reads :meth:`_node_scores`: ``"flat"`` or ``"recursive"``.

        ``"flat"``: the predicted node is the best-scoring of ``_candidates()``.
        ``"recursive"``: from the root, the best-scoring child (or stopping, when
        ``_stop_scores()`` scores higher) until a leaf.
        """
        return "flat"

    def _candidates(self) -> np.ndarray:
        """Flat routing: bool mask of the nodes that can be predicted, shape (n_nodes,)."""
        return np.asarray(self.taxonomy_.is_leaf, dtype=bool).copy()

    def _stop_scores(self) -> np.ndarray | None:
        """Recursive routing: the score of stopping at each node, shape (n_nodes,); None: never."""
        return None

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """``(W, b)`` with node scores ``X @ W.T + b``: W of shape (n_nodes, n_features), b of
        shape (n_nodes,); None when the scores are not linear in the features (kernels)."""
        coef = getattr(self, "coef_", None)
        if coef is None:
            return None
        return coef, np.zeros(coef.shape[0])

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The scores the prediction is read from, shape (n_samples, n_nodes) (validated X)."""
        fixed = self.__dict__.get("_fixed_weights")
        if fixed is not None:  # inside _weights_fixed(): formed once for every row block
            W, b, WT = fixed
            S = X @ (WT if sp.issparse(X) else W.T)  # the same sums as X @ W.T
        else:
            wb = self._score_weights()
            if wb is None:
                raise NotImplementedError(f"{type(self).__name__} has no linear node scores")
            W, b = wb
            S = X @ W.T
        S = S.toarray() if sp.issparse(S) else np.asarray(S)
        return S + np.asarray(b)[None, :]

    @contextmanager
    def _weights_fixed(self) -> Iterator[None]:
        """Within the block, :meth:`_node_scores` reads ``(W, b)`` of :meth:`_score_weights`
        formed once (with a C-ordered ``W^T`` for CSR rows, or ``W^T`` as CSR for a sparse
        ``W``), not once per row block: path-sum models form ``A @ coef_`` (n_nodes x
        n_features) in ``_score_weights``, and scipy copies a transposed ``W`` on every CSR
        product (or converts a sparse one: MF-Tree at 3,000 classes, 15 of 50 s). Same values,
        bit for bit."""
        if "_fixed_weights" in self.__dict__ or not self._scores_from_weights:
            yield
            return
        wb = self._score_weights()
        if wb is not None and sp.issparse(wb[0]):  # W^T as CSR: not converted per product
            self.__dict__["_fixed_weights"] = (wb[0], wb[1], sp.csr_matrix(wb[0].T))
        elif wb is not None:
            WT = np.ascontiguousarray(np.asarray(wb[0]).T)
            bias = wb[1]
            wb = None  # a formed A @ coef_ is dropped: W^T alone is kept (W is its view)
            self.__dict__["_fixed_weights"] = (WT.T, bias, WT)
        try:
            yield
        finally:
            self.__dict__.pop("_fixed_weights", None)
