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
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.registry import Param, register
from hierlab.core.solver import Callback, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.mftree.cmtl import CMTLTree
from hierlab.methods.mftree.induction import MFTree
from hierlab.methods.topdown import TopDownClassifier

__all__ = ["CMTLClassifier", "MFTreeClassifier"]


class _InducedTreeClassifier(HierarchicalClassifier):
    """Glue: replace the flat taxonomy of ``fit`` by the induced one, keep label objects."""

    def _adopt(self, induced: Taxonomy, class_names: np.ndarray) -> None:
        old_tax = self.taxonomy_
        old_out = self._out_labels_
        out = np.empty(induced.n_nodes, dtype=object)
        out[:] = [str(n) for n in induced.names]
        for name in class_names:
            out[induced._index[str(name)]] = old_out[old_tax._index[str(name)]]
        self.taxonomy_ = induced  # classes_ (the sorted training labels) is unchanged
        self._out_labels_ = out

    def _report(self, callbacks: Sequence[Callback], elapsed: float, extra: dict[str, Any]) -> None:
        state = SolverState(
            iteration=1,
            elapsed=elapsed,
            upper=float("nan"),
            lower=None,
            extra=extra,
            converged=True,
        )
        for cb in callbacks:
            cb(state)
        self.history_ = pd.DataFrame([state.as_dict()])
        self.n_iter_ = 1
        self.converged_ = True


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
    random_state : int, optional
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
    coef_ : ndarray or csr_matrix of shape (n_nodes, n_map_features)
        Routing vector of every internal node (zero rows at leaves); ``n_map_features`` is
        ``n_features`` for the linear kernel, ``n_components`` for RBF.
    intercept_ : ndarray of shape (n_nodes,)
    """

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        kernel: str = "linear",
        gamma: float | None = None,
        tau: int = 0,
        random_state: int | None = None,
        n_components: int = 300,
        kernel_approximation: str = "nystroem",
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau
        self.random_state = random_state
        self.n_components = n_components
        self.kernel_approximation = kernel_approximation

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        names = np.asarray([str(n) for n in self.taxonomy_.names], dtype=object)[np.asarray(Y)]
        t0 = time.perf_counter()
        tree = MFTree(
            kernel=self.kernel,
            gamma=self.gamma,
            tau=self.tau,
            n_components=self.n_components,
            kernel_approximation=self.kernel_approximation,
            random_state=self.random_state,
        ).fit(X, names)
        elapsed = time.perf_counter() - t0
        self.tree_ = tree
        self._adopt(tree.taxonomy_, tree.classes_)
        self.coef_ = tree.coef_
        self.intercept_ = tree.intercept_
        self._report(
            callbacks, elapsed, {"depth": tree.depth_, "n_nodes": tree.n_nodes_, "tau": self.tau}
        )

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return self.tree_.apply(X)


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
    coef_ : ndarray of shape (n_nodes, n_features)
    """

    def __init__(
        self,
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

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        names = np.asarray([str(n) for n in self.taxonomy_.names], dtype=object)[np.asarray(Y)]
        t0 = time.perf_counter()
        tree = CMTLTree(C=self.C, holdout=self.holdout, random_state=self.random_state).fit(
            X, names
        )
        td = TopDownClassifier(taxonomy=tree.taxonomy_, C=self.C, n_jobs=self.n_jobs).fit(X, names)
        elapsed = time.perf_counter() - t0
        self.tree_ = tree
        self.topdown_ = td
        self._adopt(tree.taxonomy_, tree.classes_)
        self.coef_ = td.coef_
        self._report(callbacks, elapsed, {"depth": tree.depth_, "n_nodes": tree.n_nodes_})

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return np.asarray(self.topdown_._predict_ids(X), dtype=np.int64)


register(
    "mftree",
    MFTreeClassifier,
    params=[
        Param("kernel", "str", "linear", choices=("linear", "rbf"), help="HSIC kernel on X"),
        Param(
            "gamma",
            "float",
            None,
            low=1e-8,
            high=1e4,
            log=True,
            help="RBF width (None: 1 / n_features)",
        ),
        Param(
            "tau",
            "int",
            0,
            low=0,
            high=30,
            help="approximate MF-Tree: size/mean split above this depth (0 = plain MF-Tree)",
        ),
        Param("random_state", "int", 0, low=0, high=2**31 - 1, help="seed of the RBF feature map"),
    ],
    seed="004",
    summary="MF-Tree: induce a binary class tree by HSIC (top-2 eigenvectors), route top-down",
)

register(
    "cmtl",
    CMTLClassifier,
    params=[
        Param("C", "float", 1.0, low=1e-6, high=1e6, log=True, help="LinearSVC regularisation"),
        Param("holdout", "float", 0.25, low=0.05, high=0.9, help="held-out fraction (confusions)"),
        Param("random_state", "int", 0, low=0, high=2**31 - 1, help="seed of the held-out split"),
    ],
    seed="baseline",
    summary="CMTL label tree (Bengio et al. 2010): spectral splits of held-out confusions",
)
