"""What the four label-tree baselines of seed 004 share: they predict one of the training labels.

DAGSVM, RDM, RNMF and DRHL learn their own structure over the classes (a decision DAG, or a tree
whose leaves may hold a class more than once), not a taxonomy whose leaves are the classes: the
user's taxonomy (flat when None) stays ``taxonomy_``, the training labels are the candidates of a
flat prediction, and :meth:`_class_scores` gives one score per class whose arg-max is the
prediction (the structure itself is ``dag_`` / ``tree_`` of each class).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from hierlab.core.exceptions import ModelFileError
from hierlab.core.solver import Callback
from hierlab.core.state import StateArray
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.labeltree.tree import LabelTree, leaf_scores, route
from hierlab.methods.topdown import report_one_shot

__all__ = ["ClassScoresClassifier", "LabelTreeClassifier", "seed_of"]


def seed_of(random_state: Any) -> int:
    """An int seed from scikit-learn's ``random_state`` (an int is kept, None is 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, int | np.integer):
        return int(random_state)
    return int(check_random_state(random_state).randint(0, 2**31 - 1))


class ClassScoresClassifier(HierarchicalClassifier):
    """A classifier over the training labels with one score per class (flat routing).

    A subclass sets ``class_nodes_`` in ``_fit`` (:meth:`_set_classes`) and implements
    :meth:`_class_scores` and :meth:`_predict_classes` (class indices into ``class_nodes_``,
    consistent: the prediction has the largest score).
    """

    _scores_from_weights = False
    #: the training labels' node ids (:mod:`hierlab.core.state`)
    _state_arrays: ClassVar[tuple[StateArray, ...]] = (
        StateArray("class_nodes_", "i", ("n_classes",), index_of="n_nodes"),
    )

    def _check_state(self) -> None:
        """``class_nodes_``: the taxonomy ids of ``classes_``, sorted."""
        if not np.array_equal(self.class_nodes_, np.unique(self._class_ids())):
            raise ModelFileError(
                f"{type(self).__name__}.class_nodes_: must be the node ids of classes_, sorted"
            )

    def _set_classes(self, Y: Any) -> np.ndarray:
        """Record the training labels' node ids (sorted) and return each row's class index."""
        ids = np.asarray(Y, dtype=np.int64)
        self.class_nodes_, yi = np.unique(ids, return_inverse=True)
        return np.asarray(yi, dtype=np.int64).ravel()

    def _candidates(self) -> np.ndarray:
        mask = np.zeros(self.taxonomy_.n_nodes, dtype=bool)
        mask[self.class_nodes_] = True
        return mask

    def _class_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Scores of shape (n_samples, n_classes), ``class_nodes_`` order."""
        raise NotImplementedError

    def _predict_classes(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Class indices of shape (n_samples,)."""
        raise NotImplementedError

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return np.asarray(self.class_nodes_[self._predict_classes(X)], dtype=np.int64)

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The class scores in the class nodes' columns, 0 elsewhere (not candidates)."""
        S = np.zeros((X.shape[0], self.taxonomy_.n_nodes))
        S[:, self.class_nodes_] = self._class_scores(X)
        return S


class LabelTreeClassifier(ClassScoresClassifier):
    """A classifier that grows a :class:`~hierlab.methods.labeltree.tree.LabelTree`.

    A subclass implements :meth:`_grow`; ``tree_`` is the fitted tree, ``depth_`` its depth,
    ``induced_taxonomy_`` the class hierarchy it induces (:meth:`_induced_taxonomy`; the
    prediction stays flat over ``taxonomy_``'s training labels, since a class may sit in
    several leaves).
    Class scores (:meth:`_class_scores`): 0 for the classes outside the reached leaf; the leaf's
    classes ``1 + rank / m`` by their one-class SVM scores (``m`` classes, rank ``0 .. m-1``);
    the predicted class 2.
    """

    _state_arrays: ClassVar[tuple[StateArray, ...]] = (
        StateArray("tree_.coef", "f", ("n_tree_nodes", "n_features"), sparse=None),
        StateArray("tree_.intercept", "f", ("n_tree_nodes",)),
        StateArray("tree_.depth", "i", ("n_tree_nodes",)),
        StateArray("tree_.order", "i", ("n_tree_nodes",), index_of="n_tree_nodes"),
    )

    def _state_dims(self) -> dict[str, int]:
        children = getattr(getattr(self, "tree_", None), "children", None)
        n = len(children) if isinstance(children, list) else -1
        return {**super()._state_dims(), "n_tree_nodes": n}

    def _grow(self, X: np.ndarray | sp.csr_matrix, yi: np.ndarray) -> Any:
        raise NotImplementedError

    def _check_state(self) -> None:
        """The label tree: nodes, their classes, order, depths and weights fit together."""
        super()._check_state()
        check_label_tree(self.tree_, len(self.class_nodes_), int(self.n_features_in_),
                         f"{type(self).__name__}.tree_")  # fmt: skip

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        yi = self._set_classes(Y)
        t0 = time.perf_counter()
        with threadpool_limits(limits=1):  # many small products: BLAS threads only contend
            tree = self._grow(X, yi)
        self.tree_ = tree
        self.induced_taxonomy_ = self._induced_taxonomy(tree)
        self.depth_ = tree.max_depth
        self.n_nodes_ = len(tree.children)
        self.n_leaves_ = tree.n_leaves
        extra = {"depth": self.depth_, "n_nodes": self.n_nodes_, "n_leaves": self.n_leaves_}
        report_one_shot(self, callbacks, time.perf_counter() - t0, extra)

    def _induced_taxonomy(self, tree: LabelTree) -> Taxonomy:
        """The class hierarchy the tree induces: internal nodes ``"node:<id>"`` (the root
        ``"node:0"``), each leaf's classes below it by name. A class held by several leaves
        (RDM, DRHL) has several parents: a DAG; RNMF's is a tree."""
        names = [str(self.taxonomy_.names[i]) for i in self.class_nodes_]
        edges: list[tuple[str, str]] = []
        for v, ch in enumerate(tree.children):
            edges += [(f"node:{v}", f"node:{c}") for c in ch]
            if not ch:
                edges += [(f"node:{v}", names[k]) for k in tree.node_classes[v]]
        return Taxonomy(edges, root="node:0") if edges else Taxonomy([], nodes=["node:0"])

    def _predict_classes(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return route(self.tree_, X)[1]

    def _class_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        leaf, _ = route(self.tree_, X)
        S = np.zeros((X.shape[0], len(self.class_nodes_)))
        for v in np.unique(leaf):
            rows = np.flatnonzero(leaf == v)
            pred, classes, sc = leaf_scores(self.tree_, int(v), X[rows])
            rank = np.argsort(np.argsort(sc, axis=1), axis=1)
            if sc.shape[1] == len(classes):
                S[np.ix_(rows, classes)] = 1.0 + rank / len(classes)
            S[rows, pred] = 2.0
        return S


def check_label_tree(tree: Any, n_classes: int, n_features: int, where: str) -> None:
    """Refuse a loaded :class:`~hierlab.methods.labeltree.tree.LabelTree` that does not fit
    together: children indices, each node's classes (the union of its children's, all classes
    at the root), ``order`` (parents first), ``depth``, router and leaf-model shapes."""
    if not isinstance(tree, LabelTree):
        raise ModelFileError(f"{where}: holds a {type(tree).__name__}, not a LabelTree")
    n = len(tree.children)
    kids = [np.asarray(ch, dtype=np.int64) for ch in tree.children]
    if n < 1 or len(tree.node_classes) != n or any(np.any((c < 1) | (c >= n)) for c in kids):
        raise ModelFileError(f"{where}.children: indices outside the {n} nodes")
    classes = [np.asarray(c) for c in tree.node_classes]
    if any(c.dtype.kind not in "iu" or np.any((c < 0) | (c >= n_classes)) for c in classes):
        raise ModelFileError(f"{where}.node_classes: class indices outside [0, {n_classes})")
    if not np.array_equal(np.unique(classes[0]), np.arange(n_classes)):
        raise ModelFileError(f"{where}.node_classes: the root must hold every class")
    depth = np.zeros(n, dtype=np.int64)
    order = np.asarray(tree.order)
    if order.dtype.kind not in "iu" or not np.array_equal(np.sort(order), np.arange(n)):
        raise ModelFileError(f"{where}.order: must be a permutation of the {n} nodes")
    for v in order:
        for c in kids[v]:
            depth[c] = max(depth[c], depth[v] + 1)
        union = np.unique(np.concatenate([classes[c] for c in kids[v]])) if len(kids[v]) else None
        if union is not None and not np.array_equal(union, np.unique(classes[v])):
            raise ModelFileError(f"{where}.node_classes[{v}]: not the union of its children's")
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    if any(np.any(pos[kids[v]] <= pos[v]) for v in range(n)) or not np.array_equal(
        np.asarray(tree.depth), depth
    ):
        raise ModelFileError(f"{where}.order: parents must come first, depths follow")
    if tuple(np.shape(tree.coef)) != (n, n_features) or np.shape(tree.intercept) != (n,):
        raise ModelFileError(
            f"{where}.coef: shape {np.shape(tree.coef)}, expected ({n}, {n_features})"
        )
    for v in range(n):
        if not kids[v].size and (len(classes[v]) > 1) != (v in tree.leaf_models):
            raise ModelFileError(
                f"{where}.leaf_models: leaf {v} with {len(classes[v])} classes needs a leaf "
                "model exactly when it has several"
            )
    for v, model in tree.leaf_models.items():
        cls, W, b = model
        if kids[int(v)].size or not np.array_equal(np.asarray(cls), classes[int(v)]):
            raise ModelFileError(f"{where}.leaf_models[{v}]: not the classes of a leaf")
        if tuple(np.shape(W)) != (len(cls), n_features) or np.shape(b) != (len(cls),):
            raise ModelFileError(f"{where}.leaf_models[{v}]: weights of shape {np.shape(W)}")
