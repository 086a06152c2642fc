"""The label tree shared by RDM, RNMF and DRHL: linear routers inside, classes at the leaves.

Every internal node ``v`` holds a linear router over its children, trained on the rows that
reached ``v`` (LinearSVC, ``C``): child ``c`` scores ``w_c^T x + b_c`` and a row goes to the
best-scoring child (a binary node stores ``+w`` for its second child and ``-w`` for its first,
so the rule is LinearSVC's sign). A leaf holds one or more classes; with more than one, each
has a linear one-class SVM (Schoelkopf et al. 2001; ``OneClassSVM(kernel="linear", nu)``)
trained on the leaf's rows of that class, and the row takes the class whose one-class SVM
scores highest (seed 004: "1-class SVM classifiers at the leaf nodes to determine the class
labels"). A class may sit in several leaves (RDM clusters rows, DRHL passes ignored classes to
both children), and DRHL's nodes with the same class set are shared: the structure is a tree
or a DAG, walked from the root in topological order.

What a method supplies is its split (:class:`Split`): which rows go to which child, and the
rows and targets its router is trained on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.svm import LinearSVC, OneClassSVM

__all__ = ["SVM_TOL", "LabelTree", "Split", "grow_label_tree", "leaf_scores", "route"]

#: liblinear's own stopping tolerance for its dual solvers (``-e 0.1``), for the routers and
#: DRHL's node SVMs (LinearSVC's 1e-4 ran its 1,000-pass cap on most small nodes)
SVM_TOL = 0.1


@dataclass
class Split:
    """A split of a node.

    Attributes
    ----------
    child_rows : list of ndarray of int
        For each child, the node's rows (indices into the training set) that go to it.
    router_rows : ndarray of int
        Rows the router is trained on.
    router_target : ndarray of int, shape (len(router_rows),)
        Each router row's child index.
    child_keys : list of hashable, optional
        Children with equal keys (DRHL: the class set) share one node.
    router : tuple of (ndarray, float), optional
        A router the method already trained (DRHL), as binary ``(w, b)``.
    """

    child_rows: list[np.ndarray]
    router_rows: np.ndarray
    router_target: np.ndarray
    child_keys: list[Any] | None = None
    router: tuple[Any, float] | None = None


#: ``split(rows, classes, depth) -> Split | None`` (None: the node is a leaf)
SplitFn = Callable[[np.ndarray, np.ndarray, int], "Split | None"]


@dataclass
class LabelTree:
    """A fitted label tree (or DAG).

    Attributes
    ----------
    children : list of list of int
        Children of each node (empty for a leaf); node 0 is the root.
    node_classes : list of ndarray of int
        Class indices present at each node.
    depth : ndarray of int
        Longest path from the root to each node.
    coef : ndarray or csr_matrix of shape (n_nodes, n_features)
        Row ``c``: the router weights of child ``c`` at its parent (0 for the root); CSR for
        CSR rows (a LinearSVC's weights are zero off its rows' features).
    intercept : ndarray of shape (n_nodes,)
    leaf_models : dict of int to tuple
        Leaf ``v`` with several classes: ``(classes, W, b)``, the one-class SVMs' weights.
    order : ndarray of int
        Nodes in topological order (parents first).
    """

    children: list[list[int]] = field(default_factory=list)
    node_classes: list[np.ndarray] = field(default_factory=list)
    depth: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    coef: Any = None
    intercept: np.ndarray = field(default_factory=lambda: np.zeros(0))
    leaf_models: dict[int, tuple[np.ndarray, Any, np.ndarray]] = field(default_factory=dict)
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def max_depth(self) -> int:
        """The tree's depth: routing decisions on the longest root-to-leaf path."""
        return int(self.depth.max()) if len(self.depth) else 0

    @property
    def n_leaves(self) -> int:
        return sum(1 for ch in self.children if not ch)


def _router(X: Any, rows: np.ndarray, target: np.ndarray, C: float) -> tuple[Any, np.ndarray]:
    """LinearSVC on ``X[rows]`` -> ``target``; returns one weight row per child (k, d)."""
    k = int(target.max()) + 1
    clf = LinearSVC(C=C, dual=True, tol=SVM_TOL, max_iter=1000, random_state=0).fit(X[rows], target)
    W, b = clf.coef_, clf.intercept_
    if k == 2:
        W = np.vstack([-W[0], W[0]])
        b = np.array([-b[0], b[0]])
    return W, b


def _one_class(X: Any, rows: np.ndarray, yi: np.ndarray, classes: np.ndarray, nu: float) -> Any:
    """One linear one-class SVM per class at a leaf: ``(classes, W, b)``."""
    Ws, bs = [], []
    for c in classes:
        r = rows[yi[rows] == c]
        oc = OneClassSVM(kernel="linear", nu=nu).fit(X[r])
        w = oc.coef_
        Ws.append(np.asarray(w.toarray() if sp.issparse(w) else w).ravel())
        bs.append(float(np.ravel(oc.intercept_)[0]))
    W = sp.vstack([sp.csr_matrix(w) for w in Ws], format="csr") if sp.issparse(X) else np.vstack(Ws)
    return classes, W, np.asarray(bs)


def grow_label_tree(
    X: Any, yi: np.ndarray, split: SplitFn, *, C: float = 1.0, nu: float = 0.5
) -> LabelTree:
    """Grow the tree from the root by ``split`` until it returns None (a leaf).

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    yi : ndarray of int, shape (n_samples,)
        Class indices.
    split : callable
        ``split(rows, classes, depth) -> Split | None``.
    C : float
        Routers' LinearSVC C.
    nu : float
        One-class SVMs' nu.
    """
    tree = LabelTree()
    rows_of: list[np.ndarray] = []
    coefs: list[Any] = []
    inter: list[float] = []
    memo: dict[Any, int] = {}

    def new(rows: np.ndarray) -> int:
        tree.children.append([])
        tree.node_classes.append(np.unique(yi[rows]))
        rows_of.append(rows)
        coefs.append(None)
        inter.append(0.0)
        return len(tree.children) - 1

    stack = [new(np.arange(X.shape[0]))]
    depth_first: dict[int, int] = {0: 0}
    while stack:
        v = stack.pop()
        rows = rows_of[v]
        s = split(rows, tree.node_classes[v], depth_first[v])
        if s is None or (s.router is None and len(np.unique(s.router_target)) < 2):
            continue
        if s.router is not None:
            w, b0 = s.router
            W, b = [-w, w], np.array([-b0, b0])
        else:
            W, b = _router(X, s.router_rows, s.router_target, C)
        keys = s.child_keys or [None] * len(s.child_rows)
        for k, (r, key) in enumerate(zip(s.child_rows, keys)):
            if key is not None and key in memo:
                c = memo[key]
            else:
                c = new(np.asarray(r, dtype=np.int64))
                depth_first[c] = depth_first[v] + 1
                stack.append(c)
                if key is not None:
                    memo[key] = c
            tree.children[v].append(c)
            w_c = np.asarray(W[k], dtype=np.float64).ravel()
            coefs[c], inter[c] = (sp.csr_matrix(w_c) if sp.issparse(X) else w_c), float(b[k])
        rows_of[v] = np.zeros(0, dtype=np.int64)  # an internal node's rows are not needed
    _finish(tree, X, yi, rows_of, coefs, inter, nu)
    return tree


def _finish(
    tree: LabelTree, X: Any, yi: np.ndarray, rows_of: list[np.ndarray], coefs: list[Any],
    inter: list[float], nu: float,
) -> None:  # fmt: skip
    """Stack the routers, order the nodes, train the leaves' one-class SVMs."""
    n, d = len(tree.children), X.shape[1]
    if sp.issparse(X):  # sparse rows: a router weighs only its node's features
        tree.coef = sp.vstack(
            [sp.csr_matrix((1, d)) if c is None else c for c in coefs], format="csr"
        )
    else:
        tree.coef = np.vstack([np.zeros(d) if c is None else c for c in coefs])
    tree.intercept = np.asarray(inter, dtype=np.float64)
    tree.order = _topological(tree.children)
    depth = np.zeros(n, dtype=np.int64)
    for v in tree.order:
        for c in tree.children[v]:
            depth[c] = max(depth[c], depth[v] + 1)
    tree.depth = depth
    for v in range(n):
        if not tree.children[v] and len(tree.node_classes[v]) > 1:
            tree.leaf_models[v] = _one_class(X, rows_of[v], yi, tree.node_classes[v], nu)


def _topological(children: list[list[int]]) -> np.ndarray:
    """Kahn's order of a DAG given by its children lists (node 0 the only root)."""
    indeg = np.zeros(len(children), dtype=np.int64)
    for ch in children:
        for c in ch:
            indeg[c] += 1
    out, queue = [], [0]
    while queue:
        v = queue.pop()
        out.append(v)
        for c in children[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                queue.append(c)
    return np.asarray(out, dtype=np.int64)


def route(tree: LabelTree, X: Any) -> tuple[np.ndarray, np.ndarray]:
    """The leaf each row reaches, and its class (one-class SVMs at a multi-class leaf).

    Returns
    -------
    leaf : ndarray of int, shape (n_samples,)
    cls : ndarray of int, shape (n_samples,)
        The predicted class index.
    """
    n = X.shape[0]
    at = np.zeros(n, dtype=np.int64)
    for v in tree.order:
        ch = tree.children[v]
        if not ch:
            continue
        rows = np.flatnonzero(at == v)
        if len(rows) == 0:
            continue
        S = X[rows] @ tree.coef[ch].T
        S = (S.toarray() if sp.issparse(S) else np.asarray(S)) + tree.intercept[ch][None, :]
        at[rows] = np.asarray(ch)[np.argmax(S, axis=1)]
    cls = np.empty(n, dtype=np.int64)
    for v in np.unique(at):
        rows = np.flatnonzero(at == v)
        cls[rows] = leaf_scores(tree, v, X[rows])[0]
    return at, cls


def leaf_scores(tree: LabelTree, v: int, Xl: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At leaf ``v``: the predicted class per row, the leaf's classes and their scores
    (one-class SVM decision values; 0 for a single-class leaf), shape (rows, classes)."""
    if v not in tree.leaf_models:
        classes = tree.node_classes[v]
        return np.full(Xl.shape[0], classes[0]), classes, np.zeros((Xl.shape[0], 1))
    classes, W, b = tree.leaf_models[v]
    S = Xl @ W.T
    S = (S.toarray() if sp.issparse(S) else np.asarray(S)) + b[None, :]
    return classes[np.argmax(S, axis=1)], classes, S
