"""CMTL: the confusion-matrix label tree of Bengio, Weston & Grangier (NIPS 2010).

The baseline label tree of seed 004 (Section 6, "confusion matrix based label embedding tree
learning"): train one-vs-rest linear classifiers on part of the training data, compute the
confusion matrix ``C`` on the held-out part, take the symmetric affinity ``A = (C + C^T) / 2``
and split the classes recursively by spectral clustering of ``A`` restricted to each node's
classes, into two groups, until every leaf holds one class. Classes that are often confused end
up close together.

Choices made here (documented, deterministic):

* ``C[i, j]`` is the fraction of held-out examples of class ``i`` predicted as ``j`` (rows
  normalised, so large classes do not dominate); the diagonal of ``A`` is set to 0 and a small
  ``smoothing`` is added off the diagonal so every class has a positive degree. ``C`` and
  ``A`` are held sparse (at most one entry per held-out example) and the smoothing as the
  rank-one term ``smoothing (1 1^T - I)``: no (classes x classes) array above
  :data:`~hierlab.methods.mftree.induction.LANCZOS_MIN_CLASSES` classes (800 MB each at 10^4).
* The splits run on one BLAS thread: with several, the eigenvectors' last bits (and so the
  side of a class whose entry is near 0) varied between processes (3,000 classes: four runs
  gave three different trees; on one thread, the same tree every time).
* Spectral bipartition is the normalised cut of Shi & Malik (2000): the eigenvector ``z`` of the
  second smallest eigenvalue of ``L = I - Dg^{-1/2} A Dg^{-1/2}``, ``v = Dg^{-1/2} z``, oriented
  as in MF-Tree (largest-magnitude entry positive), class ``k`` left iff ``v_k >= 0``. Since
  ``v`` is ``Dg``-orthogonal to ``1``, both sides are non-empty; the halves rule is the
  fallback. Above :data:`~hierlab.methods.mftree.induction.LANCZOS_MIN_CLASSES` classes the
  two eigenpairs come from Lanczos (the largest of ``Dg^{-1/2} A Dg^{-1/2}``), not a dense
  ``O(c^3)`` decomposition.
* The one-vs-rest classifier of the confusions is, by default, hierlab's
  :class:`~hierlab.methods.hr.estimators.OneVsRestSVMClassifier`: LinearSVC's model (squared
  hinge, regularised bias, ``C``) by the certified global dual CD, every class in one pass over
  the examples (IPC titles, 645 classes: 0.17x LinearSVC's time, the same accuracy).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_array
from threadpoolctl import threadpool_limits

from hierlab.core.exceptions import DataError
from hierlab.core.params import Param, validate_params
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_liblinear_scale, is_liblinear
from hierlab.methods.mftree import induction
from hierlab.methods.mftree.induction import (
    _grow,
    _halves,
    _orient,
    _positive_log,
    _tree_taxonomy,
)

__all__ = ["CMTLTree", "confusion_affinity", "spectral_bipartition"]


def spectral_bipartition(A: Any, smoothing: float = 0.0) -> np.ndarray:
    """Normalised-cut bipartition of a symmetric non-negative affinity.

    The affinity is ``A + smoothing (1 1^T - I)``: ``A`` dense or sparse, the smoothing a
    rank-one term never formed above
    :data:`~hierlab.methods.mftree.induction.LANCZOS_MIN_CLASSES` classes, where Lanczos
    multiplies by ``N = Dg^{-1/2} (A + smoothing (1 1^T - I)) Dg^{-1/2}`` in
    ``O(nnz(A) + c)``; below it, the dense ``L = I - N`` and its ``eigh``.

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (c, c)
        Symmetric non-negative affinity with a zero diagonal, ``c >= 2``.
    smoothing : float, default 0.0
        Added to every off-diagonal entry.

    Returns
    -------
    left : ndarray of bool, shape (c,)
        True for the classes of the first group (both groups non-empty).
    """
    c = A.shape[0]
    if c < 2:
        raise DataError("a node needs at least two classes to be partitioned")
    if c == 2:
        return np.array([True, False])
    deg = np.asarray(A.sum(axis=1)).ravel() + smoothing * (c - 1)
    if np.any(deg <= 0):
        return _halves(c)
    s = 1.0 / np.sqrt(deg)
    if c > induction.LANCZOS_MIN_CLASSES:  # the two largest of N = I - L, by Lanczos
        w, V = eigsh(
            _normalised_affinity(A, s, smoothing),
            k=2,
            which="LA",
            v0=np.random.default_rng(0).standard_normal(c),
            tol=0.0,
        )
        z = V[:, int(np.argmin(w))]  # the second largest of N: the second smallest of L
    else:
        Ad = A.toarray() if sp.issparse(A) else np.array(A, dtype=np.float64)
        if smoothing:
            Ad += smoothing
            np.fill_diagonal(Ad, 0.0)
        L = np.eye(c) - s[:, None] * Ad * s[None, :]
        _, V = sla.eigh((L + L.T) / 2.0, subset_by_index=[0, 1])
        z = V[:, 1]
    v = _orient(s * z)
    left = v >= 0
    if left.all() or not left.any():
        return _halves(c)
    return left


def _normalised_affinity(A: Any, s: np.ndarray, smoothing: float) -> LinearOperator:
    """``v -> s * ((A + smoothing (1 1^T - I)) (s * v))``, symmetrised as ``(A + A^T) / 2``:
    ``O(nnz(A) + c)`` a product, no ``(c, c)`` array formed for a sparse ``A``."""
    c = A.shape[0]
    AT = A.T

    def matvec(v: np.ndarray) -> np.ndarray:
        u = s * np.ravel(v)
        Au = 0.5 * (np.asarray(A @ u).ravel() + np.asarray(AT @ u).ravel())
        return s * (Au + smoothing * (u.sum() - u))

    return LinearOperator((c, c), matvec=matvec, dtype=np.float64)


def confusion_affinity(
    y_true: np.ndarray, y_pred: np.ndarray, n_classes: int
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Row-normalised confusion matrix and the symmetric affinity built from it, sparse.

    Parameters
    ----------
    y_true, y_pred : ndarray of int, shape (n_samples,)
        Class indices in ``[0, n_classes)``.
    n_classes : int

    Returns
    -------
    C : csr_matrix of shape (n_classes, n_classes)
        ``C[i, j]``: fraction of examples of class ``i`` predicted as ``j`` (at most
        ``n_samples`` entries).
    A : csr_matrix of shape (n_classes, n_classes)
        ``(C + C^T) / 2`` off the diagonal, 0 on it; CMTL adds its ``smoothing`` to every
        off-diagonal entry as a rank-one term (:func:`spectral_bipartition`).
    """
    k = n_classes
    M = sp.csr_matrix((np.ones(len(y_true)), (y_true, y_pred)), shape=(k, k))  # sums duplicates
    rows = np.asarray(M.sum(axis=1)).ravel()
    C = sp.csr_matrix(sp.diags(1.0 / np.where(rows > 0, rows, 1.0)) @ M)
    A = sp.csr_matrix((C + C.T) / 2.0)
    A.setdiag(0.0)
    A.eliminate_zeros()
    return C, A


class CMTLTree(BaseEstimator):
    """Induce a binary label tree from held-out confusions (Bengio et al. 2010).

    Parameters
    ----------
    estimator : sklearn classifier, optional
        The one-vs-rest classifier (default: LinearSVC's one-vs-rest model with ``C``, by
        hierlab's :class:`~hierlab.methods.hr.estimators.OneVsRestSVMClassifier`).
    C : float, default 1.0
        Regularisation of the default classifier.
    holdout : float, default 0.25
        Fraction of the training data held out for the confusion matrix (stratified).
    smoothing : float, default 1e-4
        Off-diagonal affinity added to every pair of classes.
    random_state : int, optional
        Seed of the held-out split.

    Attributes
    ----------
    taxonomy_ : Taxonomy
        Leaves are the classes, internal nodes ``"node:<path code>"``.
    classes_ : ndarray of shape (n_classes,)
    confusion_ : csr_matrix of shape (n_classes, n_classes)
        Held-out confusions, rows normalised (:func:`confusion_affinity`).
    affinity_ : csr_matrix of shape (n_classes, n_classes)
        ``(confusion_ + confusion_^T) / 2`` off the diagonal; the affinity split is
        ``affinity_ + smoothing (1 1^T - I)``, never formed as a (classes x classes) array.
    node_classes_ : list of ndarray of int
        Class indices under each taxonomy node.
    depth_, n_nodes_ : int
    """

    #: declared once (:mod:`hierlab.core.params`); CMTLClassifier shares C, holdout and
    #: random_state
    _parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "estimator",
            "object",
            None,
            help="the one-vs-rest classifier of the confusions (default: LinearSVC's one-vs-rest "
            "model, by hierlab's ovr-svm)",
        ),
        _positive_log(
            "C",
            1.0,
            symbol="C",
            help="LinearSVC regularisation",
            note="LinearSVC regularisation of the confusion and node classifiers (0.1-10).",
        ),
        Param(
            "holdout",
            "float",
            0.25,
            low=0.0,
            high=1.0,
            low_open=True,
            high_open=True,
            help="held-out fraction (confusions)",
            note="Fraction of the training rows used to measure the confusions; 0.2-0.3.",
        ),
        Param(
            "smoothing", "float", 1e-4, low=0.0, help="off-diagonal affinity added to every pair"
        ),
        Param(
            "random_state",
            "seed",
            0,
            help="seed of the held-out split",
            note="Seed of the held-out split.",
        ),
    )

    def __init__(
        self,
        *,
        estimator: Any = None,
        C: float = 1.0,
        holdout: float = 0.25,
        smoothing: float = 1e-4,
        random_state: int | None = 0,
    ) -> None:
        self.estimator = estimator
        self.C = C
        self.holdout = holdout
        self.smoothing = smoothing
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> CMTLTree:
        """Train the one-vs-rest classifiers, compute the confusions, induce the tree.

        Parameters
        ----------
        X : array-like or csr_matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        validate_params(self)
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        self.classes_, yi = np.unique(np.asarray(y), return_inverse=True)
        yi = yi.ravel()
        c = len(self.classes_)
        self.confusion_, self.affinity_ = self._held_out_confusions(X, yi, c)
        A, smoothing = self.affinity_, float(self.smoothing)

        def split(node: int, cls: np.ndarray, depth: int, tau: int) -> tuple[Any, Any, Any, str]:
            return spectral_bipartition(A[cls][:, cls], smoothing), None, None, "cmtl"

        with threadpool_limits(limits=1):  # one BLAS thread: the same splits in every process
            tree = _grow(c, 0, split)
        tax, _, inv = _tree_taxonomy(tree, self.classes_)
        self.taxonomy_: Taxonomy = tax
        self.node_classes_ = [tree.classes[k] for k in inv]
        self.depth_ = int(tax.max_depth)
        self.n_nodes_ = int(tax.n_nodes)
        return self

    def _default_estimator(self) -> Any:
        """LinearSVC's one-vs-rest model (squared hinge, regularised bias, ``C``) by hierlab's
        certified global dual CD, every class in one pass over the examples."""
        from hierlab.methods.hr.estimators import OneVsRestSVMClassifier

        return OneVsRestSVMClassifier(C=float(self.C))

    def _held_out_confusions(
        self, X: Any, yi: np.ndarray, c: int
    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Fit the one-vs-rest classifier on a (stratified when possible) split, return the
        confusions and the affinity (:func:`confusion_affinity`) of the held-out part."""
        counts = np.bincount(yi, minlength=c)
        n_ho = int(np.ceil(float(self.holdout) * len(yi)))
        feasible = counts.min() >= 2 and c <= n_ho <= len(yi) - c
        strat = yi if feasible else None  # stratify whenever sklearn can
        tr, ho = train_test_split(
            np.arange(len(yi)),
            test_size=self.holdout,
            stratify=strat,
            random_state=self.random_state,
        )
        base = self._default_estimator() if self.estimator is None else self.estimator
        if is_liblinear(base):
            check_liblinear_scale(X, "CMTL")
        if c >= 2 and len(np.unique(yi[tr])) >= 2:
            clf = clone(base).fit(X[tr], yi[tr])
            pred = np.asarray(clf.predict(X[ho]), dtype=np.int64)
        else:
            pred = yi[ho]
        return confusion_affinity(yi[ho], pred, c)
