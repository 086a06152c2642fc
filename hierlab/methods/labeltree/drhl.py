"""DRHL: discriminative learning of a relaxed hierarchy (Gao & Koller, ICCV 2011).

A baseline of seed 004's Table 2 ([11]; the seed's text names it "Shi et al."). At each node the
classes ``S`` are coloured ``mu_k`` in {+1, -1, 0}: positive, negative, or *ignored* (a
confusing class left to both children), jointly with a binary SVM ``(w, b)``:

    min_{w, b, mu}  1/2 ||w||^2 + C sum_i |mu_{y_i}| xi_i - A sum_i |mu_{y_i}|
    s.t.  mu_{y_i} (w^T x_i + b) >= 1 - xi_i,  xi_i >= 0,  -B <= sum_k mu_k <= B,
          at least one class coloured +1 and one -1.

Alternating minimisation (Gao & Koller, Section 3.2): with ``mu`` fixed, ``(w, b)`` is the SVM
on the coloured classes' rows (LinearSVC, hinge, ``C``); with ``(w, b)`` fixed, the colouring
minimises (their supplementary eq. 1, ``rho = A / C``)

    sum_k f_k(mu_k),   f_k(+1) = C n_k (xibar+_k - rho),   f_k(-1) = C n_k (xibar-_k - rho),
    f_k(0) = 0,

with ``xibar+-_k`` the mean hinge loss of class ``k``'s rows labelled ``+-1``: a class is
coloured when its mean hinge loss is below ``rho``, ignored otherwise. That step is solved
exactly here by dynamic programming over the classes on the state (``sum_k mu_k``, a +1 seen,
a -1 seen) (:func:`color_classes`, checked against enumeration). The alternation stops when the
colouring repeats (or after ``max_iter`` rounds). The start: classes split by the sign of their
mean's projection on the principal direction of the class means.

Children: the right child holds ``S+ u S0``, the left ``S- u S0``, each with its classes' rows;
both are strictly smaller than ``S`` (a +1 and a -1 class exist), so the recursion ends at
single classes. Nodes with the same class set are shared (Gao & Koller's tree or DAG).
``B = max(1, floor(balance |S|))``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_liblinear_scale
from hierlab.methods.labeltree.base import LabelTreeClassifier
from hierlab.methods.labeltree.cards import DRHL_CARD
from hierlab.methods.labeltree.rnmf import class_means
from hierlab.methods.labeltree.tree import SVM_TOL, LabelTree, Split, grow_label_tree

__all__ = ["DRHLClassifier", "color_classes", "coloring_cost"]


def coloring_cost(mu: np.ndarray, f_pos: np.ndarray, f_neg: np.ndarray) -> float:
    """``sum_k f_k(mu_k)`` for a colouring ``mu`` in {-1, 0, +1}^K."""
    mu = np.asarray(mu)
    return float(np.where(mu > 0, f_pos, 0.0).sum() + np.where(mu < 0, f_neg, 0.0).sum())


def color_classes(f_pos: np.ndarray, f_neg: np.ndarray, B: int) -> np.ndarray:
    """The colouring of least ``sum_k f_k(mu_k)`` with ``|sum_k mu_k| <= B`` and at least one
    class on each side (exact: dynamic programming, ``O(K (2K + 1))`` time, int8 choices).

    Parameters
    ----------
    f_pos, f_neg : ndarray of shape (K,)
        Cost of colouring each class +1 / -1 (ignoring costs 0). ``K >= 2``.
    B : int
        Balance bound, ``>= 0``.

    Returns
    -------
    mu : ndarray of int, shape (K,)
    """
    K = len(f_pos)
    width = 2 * K + 1  # sum in [-K, K], offset K
    inf = np.inf
    cost = np.full((4, width), inf)  # flags: bit 0 = a +1 seen, bit 1 = a -1 seen
    cost[0, K] = 0.0
    choice = np.zeros((K, 4, width), dtype=np.int8)
    for k in range(K):
        new = np.full((4, width), inf)
        pick = np.zeros((4, width), dtype=np.int8)
        for flag in range(4):
            for mu, fk, shift, bit in ((0, 0.0, 0, 0), (1, f_pos[k], 1, 1), (-1, f_neg[k], -1, 2)):
                src = cost[flag]
                cand = np.full(width, inf)
                if shift >= 0:
                    cand[shift:] = src[: width - shift] + fk
                else:
                    cand[:shift] = src[-shift:] + fk
                to = flag | bit
                better = cand < new[to]
                new[to][better] = cand[better]
                pick[to][better] = (mu + 1) + 3 * flag  # the move and where it came from
        cost = new
        choice[k] = pick
    lo, hi = K - B, K + B
    s = lo + int(np.argmin(cost[3, lo : hi + 1]))
    mu_out = np.zeros(K, dtype=np.int64)
    flag = 3
    for k in range(K - 1, -1, -1):
        code = int(choice[k, flag, s])
        mu_k, prev = code % 3 - 1, code // 3
        mu_out[k] = mu_k
        s -= mu_k
        flag = prev
    return mu_out


def _hinge_means(f: np.ndarray, pos: np.ndarray, n_cls: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``max(0, 1 - f)`` and of ``max(0, 1 + f)`` over each class's rows."""
    n = np.bincount(pos, minlength=n_cls).astype(np.float64)
    hp = np.bincount(pos, weights=np.maximum(0.0, 1.0 - f), minlength=n_cls) / n
    hn = np.bincount(pos, weights=np.maximum(0.0, 1.0 + f), minlength=n_cls) / n
    return hp, hn


def _principal_projection(M: Any, n_iter: int = 50) -> np.ndarray:
    """``Mc v``: the centred class means projected on their principal direction ``v``, by power
    iteration on ``Mc^T Mc`` with ``Mc = M - 1 mbar^T`` applied implicitly (sparse stays
    sparse; no classes x classes or dense ``Mc`` array)."""
    mbar = np.asarray(M.mean(axis=0)).ravel()
    v = np.asarray(np.abs(M).sum(axis=0)).ravel() + 1.0  # deterministic start
    z = np.zeros(M.shape[0])
    for _ in range(n_iter):
        v /= max(float(np.linalg.norm(v)), 1e-300)
        z = np.asarray(M @ v).ravel() - mbar @ v
        v = np.asarray(M.T @ z).ravel() - mbar * z.sum()
    return z


def _initial_colouring(M: Any) -> np.ndarray:
    """+1 / -1 by each class mean's projection on the means' principal direction, split at 0
    (at the median when all projections share a sign; the halves if that still fails)."""
    z = _principal_projection(M)
    cut = 0.0 if (z > 0).any() and (z <= 0).any() else float(np.median(z))
    mu = np.where(z > cut, 1, -1)
    if (mu > 0).all() or (mu < 0).all():
        mu = np.where(np.arange(len(z)) < len(z) // 2, 1, -1)
    return mu.astype(np.int64)


class DRHLClassifier(LabelTreeClassifier):
    """DRHL (Gao & Koller 2011): relaxed binary splits, ignored classes go to both children.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Names the allowed labels (flat when None).
    rho : float, default 0.6
        ``A / C``: a class is coloured only when its mean hinge loss is below ``rho``
        (seed 004 varies rho in {0.5, 0.6, 0.7, 0.8}).
    C : float, default 1.0
        The node SVMs' C.
    balance : float, default 0.5
        ``B = max(1, floor(balance |S|))`` bounds ``|sum_k mu_k|``.
    max_iter : int, default 10
        Alternation rounds per node.

    Attributes
    ----------
    tree_ : LabelTree
    depth_, n_nodes_, n_leaves_ : int
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param("rho", "float", 0.6, low=0.0, symbol="rho",
              help="a class is coloured when its mean hinge loss is below rho (A / C)",
              note="Gao & Koller's A / C; seed 004 varies rho in {0.5, 0.6, 0.7, 0.8}."),
        Param("C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
              help="node SVMs' C", note="LinearSVC C of every node's SVM."),
        Param("balance", "float", 0.5, low=0.0, high=1.0, symbol="B",
              help="|sum of colours| <= max(1, balance x classes)",
              note="Balance of the colouring: B = max(1, floor(balance |S|))."),
        Param("max_iter", "int", 10, low=1, help="alternation rounds per node",
              note="SVM / colouring rounds per node; stops early when the colouring repeats."),
    )  # fmt: skip

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        rho: float = 0.6,
        C: float = 1.0,
        balance: float = 0.5,
        max_iter: int = 10,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.rho = rho
        self.C = C
        self.balance = balance
        self.max_iter = max_iter

    def _node(self, X: Any, yi: np.ndarray, rows: np.ndarray, classes: np.ndarray) -> Any:
        """Alternate SVM and colouring at one node; returns ``(mu, w, b)``."""
        pos = np.searchsorted(classes, yi[rows])
        Xr = X[rows]
        mu = _initial_colouring(class_means(Xr, yi[rows], classes))
        n_k = np.bincount(pos, minlength=len(classes)).astype(np.float64)
        B = max(1, int(np.floor(float(self.balance) * len(classes))))
        C, rho = float(self.C), float(self.rho)
        w: Any = None
        b = 0.0
        for _ in range(int(self.max_iter)):
            on = mu[pos] != 0
            svm = LinearSVC(loss="hinge", C=C, tol=SVM_TOL, max_iter=1000, random_state=0).fit(
                Xr[on], mu[pos][on]
            )
            w, b = svm.coef_.ravel(), float(svm.intercept_[0])  # classes_ = [-1, 1]
            f = np.asarray(Xr @ w).ravel() + b
            hp, hn = _hinge_means(f, pos, len(classes))
            new = color_classes(C * n_k * (hp - rho), C * n_k * (hn - rho), B)
            if np.array_equal(new, mu):
                break
            mu = new
        return mu, w, b

    def _grow(self, X: np.ndarray | sp.csr_matrix, yi: np.ndarray) -> LabelTree:
        check_liblinear_scale(X, "DRHL")

        def split(rows: np.ndarray, classes: np.ndarray, depth: int) -> Split | None:
            if len(classes) < 2:
                return None
            mu, w, b = self._node(X, yi, rows, classes)
            mu_rows = mu[np.searchsorted(classes, yi[rows])]
            left, right = rows[mu_rows <= 0], rows[mu_rows >= 0]
            keys = [frozenset(classes[mu <= 0].tolist()), frozenset(classes[mu >= 0].tolist())]
            on = mu_rows != 0
            target = (mu_rows[on] > 0).astype(np.int64)
            return Split([left, right], rows[on], target, child_keys=keys, router=(w, b))

        return grow_label_tree(X, yi, split, C=float(self.C))

    def _what_ran(self) -> tuple[str, str]:
        return "alternating", (
            f"DRHL (Gao & Koller 2011): relaxed colourings (rho = {self.rho}) by exact DP "
            "alternating with a LinearSVC per node; ignored classes go to both children"
        )


register(
    "drhl",
    DRHLClassifier,
    card=DRHL_CARD,
    seed="baseline",
    summary="DRHL (Gao & Koller 2011): relaxed hierarchy, classes may be ignored at a node",
    paper={"rho": 0.6},
)
