"""MF-Tree (seed 004) and the CMTL label tree as hierlab classifiers.

Both induce their own binary taxonomy from the data (the ``taxonomy`` argument, if given, only
names the allowed labels): ``taxonomy_`` is the induced tree, whose leaves are the classes.

* ``"mftree"``: :class:`MFTreeClassifier` induces the tree (Algorithm 1, or the approximate
  Algorithm 3 with ``tau > 0``) and predicts by routing top-down with the per-node ``G``
  (Algorithm 2); nothing else is trained.
* ``"cmtl"``: :class:`CMTLClassifier` induces the tree of Bengio et al. (2010) from held-out
  confusions, then trains one binary ``LinearSVC`` per internal node on the full training set
  and routes top-down (:class:`~hierlab.methods.topdown.TopDownClassifier`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from hierlab.core.params import Param, declared
from hierlab.core.registry import Inducer, register
from hierlab.core.solver import Callback
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.mftree.cards import CMTL_CARD, MFTREE_CARD
from hierlab.methods.mftree.cmtl import CMTLTree
from hierlab.methods.mftree.induction import MFTree
from hierlab.methods.topdown import TopDownClassifier, report_one_shot

__all__ = ["CMTLClassifier", "MFTreeClassifier"]


class _InducedTreeClassifier(HierarchicalClassifier):
    """Glue: induce a tree from the training labels, then replace the flat taxonomy of ``fit``
    by the induced one, keeping the user's label objects.

    A subclass implements :meth:`_induce`; ``tree_`` is the fitted induction object.
    """

    _induces_taxonomy = True

    def _routing(self) -> str:
        return "recursive"

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        names = np.asarray([str(n) for n in self.taxonomy_.names], dtype=object)[np.asarray(Y)]
        t0 = time.perf_counter()
        tree, extra = self._induce(X, names)
        elapsed = time.perf_counter() - t0
        self.tree_ = tree
        self._adopt(tree.taxonomy_, tree.classes_)
        extra = {"depth": tree.depth_, "n_nodes": tree.n_nodes_, **extra}
        report_one_shot(self, callbacks, elapsed, extra)

    def _induce(
        self, X: np.ndarray | sp.csr_matrix, names: np.ndarray
    ) -> tuple[Any, dict[str, Any]]:
        """Fit the induction object on the training label names (and what predicts with it).

        Returns
        -------
        tree : MFTree or CMTLTree
            Fitted: ``taxonomy_``, ``classes_``, ``depth_``, ``n_nodes_``.
        extra : dict
            Numbers for the reported state, beside the tree's depth and size.
        """
        raise NotImplementedError

    def _adopt(self, induced: Taxonomy, class_names: np.ndarray) -> None:
        """Make ``induced`` the fitted taxonomy; its leaves return the user's label objects."""
        old_tax = self.taxonomy_
        old_out = self._out_labels_
        out = np.empty(induced.n_nodes, dtype=object)
        out[:] = [str(n) for n in induced.names]
        for name in class_names:
            out[induced.name_index[str(name)]] = old_out[old_tax.name_index[str(name)]]
        self.taxonomy_ = induced  # classes_ (the sorted training labels) is unchanged
        self._out_labels_ = out


class MFTreeClassifier(_InducedTreeClassifier):
    """MF-Tree: induce a binary class tree by HSIC and route top-down (seed 004, Alg. 1-3).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Only used to validate the labels; the tree is induced (``taxonomy_``).
    kernel : {"linear", "rbf"}, default "linear"
        ``"rbf"`` goes through an explicit approximate feature map (see ``kernel_approximation``).
    gamma : float, optional
        RBF width, None for ``1 / n_features``.
    tau : int, default 0
        Approximate MF-Tree depth threshold (Algorithm 3); 0 is plain MF-Tree.
    split_rule : {"sign", "argmax"}, default "sign"
        Class split at an MF-Tree node: the sign of ``g1``, or ``argmax_j G_kj`` as printed in
        Algorithm 1 (deterministic sign of ``g2``: :mod:`hierlab.methods.mftree.induction`).
    routing : {"sign", "argmax"}, default "sign"
        Descent of a test example: the sign of ``p_1``, or ``argmax_j p_j`` (Algorithm 2).
    random_state : int, default 0
        Seed of the RBF feature map.
    n_components : int, default 300
        Dimension of the RBF feature map.
    kernel_approximation : {"nystroem", "rff"}, default "nystroem"

    Attributes
    ----------
    taxonomy_ : Taxonomy
        The induced tree (leaves = classes, internal nodes ``"node:<path code>"``).
    tree_ : MFTree
        The fitted induction object (``G_``, ``eigenvalues_``, ``split_kind_`` ...).
    split_info_ : pandas.DataFrame
        One row per internal node: its rule, sizes, eigenvalues and the HSIC of its split
        (``tree_.split_info_``).
    coef_ : ndarray or csr_matrix of shape (n_nodes, n_map_features)
        Routing vector of every internal node (zero rows at leaves); ``n_map_features`` is
        ``n_features`` for the linear kernel, ``n_components`` for RBF.
    intercept_ : ndarray of shape (n_nodes,)
    """

    #: the parameters of :class:`MFTree`, which does the work (the same declarations)
    _parameters: ClassVar[tuple[Param, ...]] = MFTree._parameters
    #: ``hierlab.explain`` reads each split as the difference of the two sides' class means
    _explain_by_class_means = True

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        kernel: str = "linear",
        gamma: float | None = None,
        tau: int = 0,
        split_rule: str = "sign",
        routing: str = "sign",
        random_state: int | None = 0,
        n_components: int = 300,
        kernel_approximation: str = "nystroem",
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau
        self.split_rule = split_rule
        self.routing = routing
        self.random_state = random_state
        self.n_components = n_components
        self.kernel_approximation = kernel_approximation

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The leaf each row reaches by MF-Tree's routing (Algorithm 2)."""
        return self.tree_.apply(X)

    def _sides(self) -> sp.csr_matrix:
        """(n_nodes, n_nodes) matrix: +1 at (left child, p), -1 at (right child, p)."""
        left, right = np.asarray(self.tree_.left_), np.asarray(self.tree_.right_)
        p = np.flatnonzero(left >= 0)
        m = len(left)
        rows = np.r_[left[p], right[p]]
        vals = np.r_[np.ones(len(p)), -np.ones(len(p))]
        return sp.csr_matrix((vals, (rows, np.r_[p, p])), shape=(m, m))

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """Child ``c`` of ``p`` scores ``+-(w_p . x + b_p)`` (+ left, - right); None for RBF."""
        if self.tree_.feature_map_ is not None:
            return None
        L = self._sides()
        return L @ self.coef_, L @ self.intercept_

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Routing scores (Algorithm 2) of every node's split, given to its two children."""
        if self.tree_.feature_map_ is None:  # linear: X W^T + b of _score_weights, the same
            return super()._node_scores(X)  # sums, W formed once for a calibration
        Z = self.tree_._map(X)
        r = Z @ self.coef_.T
        r = (r.toarray() if sp.issparse(r) else np.asarray(r)) + self.intercept_[None, :]
        return np.asarray(self._sides() @ r.T).T

    def _what_ran(self) -> tuple[str, str]:
        split = (
            "argmax_j G_kj as printed"
            if self.split_rule == "argmax"
            else "the sign of the first eigenvector"
        )
        route = "argmax p" if self.routing == "argmax" else "the sign of the centred p1"
        what = (
            f"MF-Tree of seed 004: HSIC splits by the top eigenvectors of D, classes split by "
            f"{split} (Algorithm 1); routing by p = G^T Y^T k, {route} (Algorithm 2)"
        )
        if int(self.tau) > 0:
            what += f", approximate above depth tau = {int(self.tau)} (Algorithm 3)"
        if self.kernel != "linear":
            what += f", {self.kernel} kernel by a {self.kernel_approximation} feature map"
        return "eigen", what

    def _induce(
        self, X: np.ndarray | sp.csr_matrix, names: np.ndarray
    ) -> tuple[Any, dict[str, Any]]:
        tree = MFTree(**{name: getattr(self, name) for name in declared(MFTree)}).fit(X, names)
        self.coef_ = tree.coef_
        self.intercept_ = tree.intercept_
        self.split_info_ = tree.split_info_
        return tree, {"tau": self.tau}


_CMTL_TREE = declared(CMTLTree)


class CMTLClassifier(_InducedTreeClassifier):
    """CMTL label tree (Bengio et al. 2010) with a binary LinearSVC per internal node.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Only used to validate the labels; the tree is induced (``taxonomy_``).
    C : float, default 1.0
        LinearSVC regularisation, for the one-vs-rest confusion classifiers and the node
        classifiers.
    holdout : float, default 0.25
        Fraction held out to estimate the confusion matrix.
    random_state : int, optional
        Seed of the held-out split.
    n_jobs : int, optional
        Parallel node classifiers.

    Attributes
    ----------
    taxonomy_ : Taxonomy
    tree_ : CMTLTree
    topdown_ : TopDownClassifier
    coef_ : ndarray or csr_matrix of shape (n_nodes, n_features)
        ``topdown_.coef_`` (CSR for CSR ``X``).
    """

    #: the declarations of :class:`CMTLTree` (C, holdout, random_state) and of
    #: :class:`~hierlab.methods.topdown.TopDownClassifier` (n_jobs), which do the work
    _parameters: ClassVar[tuple[Param, ...]] = (
        _CMTL_TREE["C"],
        _CMTL_TREE["holdout"],
        _CMTL_TREE["random_state"],
        declared(TopDownClassifier)["n_jobs"],
    )

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        holdout: float = 0.25,
        random_state: int | None = 0,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.holdout = holdout
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The leaf each row reaches through the node classifiers of ``topdown_``."""
        return np.asarray(self.topdown_._predict_ids(X), dtype=np.int64)

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """``topdown_``'s weights: the base class scores with them, so that a calibration
        forms ``W^T`` once (:meth:`_weights_fixed`), not once per block of rows (scipy
        transposes a sparse ``W`` on every product: at 10^4 classes, 10^8 numbers each)."""
        return self.topdown_._score_weights()

    def _sparse_weights(self) -> bool:
        """The node classifiers are LinearSVCs: ``topdown_.coef_`` is sparse for CSR ``X``."""
        return True

    def _induce(
        self, X: np.ndarray | sp.csr_matrix, names: np.ndarray
    ) -> tuple[Any, dict[str, Any]]:
        tree = CMTLTree(C=self.C, holdout=self.holdout, random_state=self.random_state)
        tree.fit(X, names)
        td = TopDownClassifier(taxonomy=tree.taxonomy_, C=self.C, n_jobs=self.n_jobs).fit(X, names)
        self.topdown_ = td
        self.coef_ = td.coef_
        return tree, {}

    def _what_ran(self) -> tuple[str, str]:
        return "liblinear", (
            "CMTL label tree (Bengio et al. 2010): spectral splits of held-out confusions "
            "(of a one-vs-rest SVM unless an estimator is given), one LinearSVC per internal "
            "node"
        )


register(
    "mftree",
    MFTreeClassifier,
    card=MFTREE_CARD,
    seed="004",
    summary="MF-Tree: induce a binary class tree by HSIC (top-2 eigenvectors), route top-down",
    # the schema shows kernel, gamma, tau and random_state; the RBF feature map keeps its
    # default size and kind here (MFTreeClassifier itself takes any)
    fixed={"n_components": 300, "kernel_approximation": "nystroem"},
    paper={"tau": 0, "split_rule": "argmax", "routing": "argmax"},
    inducer=Inducer(
        MFTree,
        ("tau",),
        about="MF-Tree (seed 004) splits the classes recursively by the top eigenvectors of "
        "D = Yᵀ K Y; the approximate MF-Tree (tau > 0) uses a cheap split by class size and "
        "class-mean distance above depth tau (Algorithm 3).",
    ),
)

register(
    "cmtl",
    CMTLClassifier,
    card=CMTL_CARD,
    seed="baseline",
    summary="CMTL label tree (Bengio et al. 2010): spectral splits of held-out confusions",
    paper={"C": 1.0},
)
