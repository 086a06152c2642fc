"""RNMF: recursive non-negative matrix factorisation label tree (Liu et al., ICPR 2012).

The baseline [22] of seed 004: "recursive non-negative matrix factorization (RNMF) for building
a hierarchical label tree over the set of classes. The internal nodes of the tree employ linear
classifiers to propagate a data instance to its corresponding leaf node, where one or more one
class SVM classifiers is applied to accurately predict its class" (the paper's abstract); its
branching factor ``p`` sets the tree's shape: ``p = 1`` is a stump of ``c`` one-class SVMs,
``p = 2`` a binary tree (seed 004, Section 6.2.2).

At a node with classes ``S`` (``|S| > p``), the class structure is the non-negative matrix
``M`` of the classes' mean rows (``|S| x d``); its rank-``p`` factorisation

    min_{U >= 0, V >= 0} ||M - U V||_F^2,     U of shape (|S|, p), V of shape (p, d),

puts class ``k`` in child ``argmax_j U_kj`` (the class's dominant factor). The rows of ``M``
are scaled to unit length first, so that classes are grouped by the direction of their mean,
not its size (on IPC titles, 70 classes: depth 23 -> 10, accuracy 0.480 -> 0.489; NMF
clustering of documents normalises the same way, Xu, Liu & Gong 2003). Features with negative
values are shifted column-wise by their minimum over ``M`` before (an image descriptor can be
negative; NMF needs ``M >= 0``). A node with at most ``p`` classes is a leaf with one
one-class SVM per class. The factorisation is scikit-learn's ``NMF`` (coordinate descent,
NNDSVDa start: deterministic); if it leaves fewer than two children non-empty, the classes are
split in two by their share ``U_k0 / sum_j U_kj`` (the halves of that order).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import NMF
from sklearn.exceptions import ConvergenceWarning

from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_liblinear_scale
from hierlab.methods.labeltree.base import LabelTreeClassifier
from hierlab.methods.labeltree.cards import RNMF_CARD
from hierlab.methods.labeltree.tree import LabelTree, Split, grow_label_tree

__all__ = ["RNMFClassifier", "class_means", "nmf_partition", "unit_rows"]


def class_means(X: Any, yi: np.ndarray, classes: np.ndarray) -> Any:
    """Mean row of each class in ``classes``, shape (len(classes), n_features): CSR for CSR
    ``X`` (a class mean has only its rows' features), else dense."""
    pos = np.searchsorted(classes, yi)
    n = len(yi)
    counts = np.bincount(pos, minlength=len(classes)).astype(np.float64)
    P = sp.csr_matrix((1.0 / counts[pos], (pos, np.arange(n))), shape=(len(classes), n))
    M = P @ X
    return sp.csr_matrix(M) if sp.issparse(M) else np.asarray(M)


def unit_rows(M: Any) -> Any:
    """``M`` with every non-zero row scaled to unit Euclidean length (sparse stays sparse)."""
    if sp.issparse(M):
        norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        return sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ M)
    M = np.asarray(M, dtype=np.float64)
    norms = np.linalg.norm(M, axis=1)
    return M / np.where(norms > 0, norms, 1.0)[:, None]


def nmf_partition(M: Any, p: int, max_iter: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Children of the classes (rows of ``M``) by the rank-``p`` NMF (module docstring).

    Parameters
    ----------
    M : ndarray or csr_matrix of shape (n_classes, n_features)
        Class means; sparse stays sparse unless a feature is negative (then shifted, dense).

    Returns
    -------
    group : ndarray of int, shape (n_classes,)
        Child index of each class, ``0 .. g-1`` with ``g >= 2`` groups all non-empty.
    U : ndarray of shape (n_classes, p)
    """
    low = np.asarray(M.min(axis=0).toarray() if sp.issparse(M) else M.min(axis=0)).ravel()
    if (low < 0).any():
        dense = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)
        M = dense - np.minimum(low, 0.0)[None, :]
    M = unit_rows(M)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        U = NMF(n_components=p, init="nndsvda", solver="cd", max_iter=max_iter).fit_transform(M)
    group = np.argmax(U, axis=1)
    used = np.unique(group)
    if len(used) < 2:
        share = U[:, 0] / np.maximum(U.sum(axis=1), 1e-300)
        order = np.argsort(-share, kind="stable")
        group = np.zeros(M.shape[0], dtype=np.int64)
        group[order[M.shape[0] // 2 :]] = 1
        return group, U
    return np.searchsorted(used, group).astype(np.int64), U


class RNMFClassifier(LabelTreeClassifier):
    """RNMF label tree: NMF splits of the class means, LinearSVC routers, one-class SVM leaves.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Names the allowed labels (flat when None).
    p : int, default 2
        Branching factor: rank of each node's NMF; a node with at most ``p`` classes is a leaf.
    C : float, default 1.0
        The routers' LinearSVC C.
    nu : float, default 0.5
        The leaves' one-class SVMs' nu.
    max_iter : int, default 500
        NMF iterations per node.

    Attributes
    ----------
    tree_ : LabelTree
    depth_, n_nodes_, n_leaves_ : int
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param("p", "int", 2, low=1, symbol="p", help="branching factor (NMF rank per node)",
              note="p = 1: one leaf of c one-class SVMs; p = 2: a binary tree; seed 004 varies "
              "p in {2, 3, 4, 5}."),
        Param("C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
              help="routers' LinearSVC C", note="LinearSVC C of the internal nodes' routers."),
        Param("nu", "float", 0.5, low=0.0, high=1.0, low_open=True, symbol="nu",
              help="one-class SVMs' nu", note="nu of the leaves' linear one-class SVMs."),
        Param("max_iter", "int", 500, low=1, help="NMF iterations per node",
              note="Coordinate-descent iterations of each node's NMF."),
    )  # fmt: skip

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        p: int = 2,
        C: float = 1.0,
        nu: float = 0.5,
        max_iter: int = 500,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.p = p
        self.C = C
        self.nu = nu
        self.max_iter = max_iter

    def _grow(self, X: np.ndarray | sp.csr_matrix, yi: np.ndarray) -> LabelTree:
        check_liblinear_scale(X, "RNMF")
        p = int(self.p)

        def split(rows: np.ndarray, classes: np.ndarray, depth: int) -> Split | None:
            if len(classes) <= p:
                return None
            M = class_means(X[rows], yi[rows], classes)
            group, _ = nmf_partition(M, p, int(self.max_iter))
            target = group[np.searchsorted(classes, yi[rows])]
            kids = [rows[target == g] for g in range(int(group.max()) + 1)]
            return Split(kids, rows, target)

        return grow_label_tree(X, yi, split, C=float(self.C), nu=float(self.nu))

    def _what_ran(self) -> tuple[str, str]:
        return "nmf", (
            f"RNMF (Liu et al. 2012): rank-{self.p} NMF of the class means per node, "
            "LinearSVC routers, linear one-class SVMs at the leaves"
        )


register(
    "rnmf",
    RNMFClassifier,
    card=RNMF_CARD,
    seed="baseline",
    summary="RNMF (Liu et al. 2012): recursive NMF label tree, one-class SVMs at the leaves",
    paper={"p": 2},
)
