"""The HR-SVM / HR-LR model (seed 001, eq. 2-3 and 8): leaf labels, the objective, its dual.

The objective over the weight vectors ``W = {w_n}`` of every node ``n`` of a tree is

    J(W) = sum_n 1/2 ||w_n - w_{pi(n)}||^2 + C sum_{n in T} sum_i c_in loss(y_in w_n^T x_i)

with ``w_{pi(root)} = 0``, ``T`` the leaves, ``loss`` the hinge (HR-SVM, eq. 2) or the logistic
loss (HR-LR, eq. 3), ``y_in = +1`` iff leaf ``n`` is a label of example ``i`` and ``c_in`` in
{0, 1} (0 when ``i`` carries an internal label above ``n`` that no other label of ``i`` resolves:
such an example is neither a positive nor a negative of the leaf; see :func:`leaf_labels`).

Certificate. Writing the regulariser as ``1/2 ||B W||^2`` with ``(B W)_n = w_n - w_{pi(n)}``,
``B^{-1}`` is the ancestor matrix ``A`` (``A[n, j] = 1`` iff ``j`` in ``A+(n)``), so Lagrange
duality gives, for any ``0 <= alpha_in <= C c_in``,

    D(alpha) = sum_{n in T, i} phi(alpha_in) - 1/2 sum_j ||S_j||^2,
    S_j = sum_{leaves n below j} sum_i alpha_in y_in x_i,

with ``phi(a) = a`` for the hinge, ``phi(a) = a - a^2 / (4 C)`` (``alpha_in >= 0``, no upper
bound) for the squared hinge ``(1 - y z)_+^2`` and ``phi(a) = C H(a / C)`` (binary entropy in
nats) for the logistic loss. ``D(alpha) <= J*`` for every feasible ``alpha``: it is a
certified lower bound of the *global* optimum, equal to it at the fixed point of the block
scheme (where the leaves' duals are optimal and ``W = A A^T U``). For HR-SVM ``alpha`` is the
leaves' dual iterate; for HR-LR it is ``alpha_in = C c_in sigma(-y_in w_n^T x_i)`` (the
logistic loss's own dual point at ``W``), for the squared hinge ``alpha_in = 2 C c_in (1 - y_in
w_n^T x_i)_+``.
:meth:`HRProblem.certificate` computes both values and the KKT residuals.

The leaf block of eq. (3), eq. (8), is :func:`logistic_leaf_objective`; the solvers are in
:mod:`hierlab.methods.hr.solver` (block coordinate descent, L-BFGS leaves) and
:mod:`hierlab.methods.hr.dual_cd` (the hinge leaves' dual coordinate descent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, xlogy

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.hr.dual_cd import projected_gradient

__all__ = ["LEAF_LOSSES", "HRProblem", "LeafDuals", "leaf_labels", "logistic_leaf_objective"]

#: the losses of the leaves: the hinge (HR-SVM, eq. 2), its square (liblinear's L2-loss SVM)
#: and the logistic loss (HR-LR, eq. 3)
LEAF_LOSSES = ("hinge", "squared_hinge", "logistic")


class LeafDuals:
    """The leaves' dual variables ``alpha_in`` of HR-SVM, kept column by column, sparse.

    A hinge's dual variable is zero off the support vectors (``y_in w_n^T x_i > 1``), which on
    real data is most of the (example, leaf) pairs: a dense (n_samples, n_leaves) array would be
    the one memory term of the fit that grows with examples times classes (8 GB at 10^5
    examples and 10^4 leaves). Each leaf keeps the rows and values of its nonzeros; a block of
    leaves is formed dense only while it is solved or certified.

    Parameters
    ----------
    n_samples, n_leaves : int

    Attributes
    ----------
    shape : tuple of int
        ``(n_samples, n_leaves)``.
    """

    def __init__(self, n_samples: int, n_leaves: int) -> None:
        self.shape = (int(n_samples), int(n_leaves))
        empty_i, empty_v = np.zeros(0, dtype=np.int32), np.zeros(0)
        self._rows = [empty_i] * self.shape[1]
        self._vals = [empty_v] * self.shape[1]

    @classmethod
    def from_sparse(cls, M: Any) -> LeafDuals:
        """The duals held by a sparse matrix of shape (n_samples, n_leaves)."""
        Mc = sp.csc_matrix(M, dtype=np.float64)
        Mc.eliminate_zeros()
        Mc.sort_indices()
        out = cls(*Mc.shape)
        for c in range(Mc.shape[1]):
            lo, hi = Mc.indptr[c], Mc.indptr[c + 1]
            out._rows[c] = Mc.indices[lo:hi].astype(np.int32)
            out._vals[c] = Mc.data[lo:hi].copy()
        return out

    def block(self, cols: np.ndarray) -> np.ndarray:
        """``alpha[:, cols]``, dense, shape (n_samples, len(cols))."""
        out = np.zeros((self.shape[0], len(cols)))
        for j, c in enumerate(cols):
            out[self._rows[c], j] = self._vals[c]
        return out

    def set_block(self, cols: np.ndarray, A: np.ndarray) -> None:
        """Store ``alpha[:, cols] = A`` (A of shape (n_samples, len(cols))), nonzeros only."""
        for j, c in enumerate(cols):
            rows = np.flatnonzero(A[:, j])
            self._rows[c] = rows.astype(np.int32)
            self._vals[c] = A[rows, j]

    def block_csc(self, cols: np.ndarray) -> sp.csc_matrix:
        """``alpha[:, cols]`` as CSC, shape (n_samples, len(cols)): what travels to a worker."""
        pieces = [self._rows[c] for c in cols]
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in pieces])])
        rows = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        vals = np.concatenate([self._vals[c] for c in cols]) if pieces else np.zeros(0)
        return sp.csc_matrix((vals, rows, indptr), shape=(self.shape[0], len(cols)))

    def set_block_csc(self, cols: np.ndarray, M: sp.csc_matrix) -> None:
        """Store ``alpha[:, cols] = M`` (CSC with sorted rows and no explicit zeros)."""
        for j, c in enumerate(cols):
            lo, hi = M.indptr[j], M.indptr[j + 1]
            self._rows[c] = M.indices[lo:hi].astype(np.int32)
            self._vals[c] = M.data[lo:hi].copy()

    @property
    def nnz(self) -> int:
        """Stored nonzeros."""
        return int(sum(len(r) for r in self._rows))

    def tocsc(self) -> sp.csc_matrix:
        """The whole matrix, shape (n_samples, n_leaves), as CSC."""
        indptr = np.concatenate([[0], np.cumsum([len(r) for r in self._rows])])
        rows = np.concatenate(self._rows) if self._rows else np.zeros(0, dtype=np.int32)
        vals = np.concatenate(self._vals) if self._vals else np.zeros(0)
        return sp.csc_matrix((vals, rows, indptr), shape=self.shape)


def _label_indicator(Y: Any, n_nodes: int) -> sp.csr_matrix:
    """A 0/1 CSR indicator of shape (n_samples, n_nodes) from node ids or an indicator."""
    if sp.issparse(Y):
        ind = sp.csr_matrix(Y, dtype=np.float64)
        ind.data[:] = 1.0
        ind.sum_duplicates()
        ind.data[:] = 1.0
    else:
        ids = np.asarray(Y, dtype=np.int64)
        ind = sp.csr_matrix(
            (np.ones(len(ids)), (np.arange(len(ids)), ids)), shape=(len(ids), n_nodes)
        )
    if ind.shape[1] != n_nodes:
        raise DataError(f"label indicator has {ind.shape[1]} columns, taxonomy {n_nodes} nodes")
    return ind


def leaf_labels(Y: Any, taxonomy: Taxonomy) -> tuple[sp.csc_matrix, sp.csc_matrix | None]:
    """One-vs-rest leaf labels ``y_in`` and the switched-off pairs, from node ids or an indicator.

    Parameters
    ----------
    Y : ndarray of int of shape (n_samples,) or csr_matrix of shape (n_samples, n_nodes)
        Node ids (single-label) or a 0/1 indicator of each row's labels (multi-label; need not
        be closed under ancestors).
    taxonomy : Taxonomy

    Returns
    -------
    positive : csc_matrix of bool, shape (n_samples, n_leaves)
        ``positive[i, k]`` iff leaf ``taxonomy.leaves[k]`` is a label of row ``i``.
    excluded : csc_matrix of bool of shape (n_samples, n_leaves), or None
        Pairs ``(i, k)`` left out of leaf ``k``'s loss: row ``i`` has an internal label that is
        an ancestor of the leaf and has no other label of ``i`` below it. None when there is none.
    """
    n_nodes = taxonomy.n_nodes
    ind = _label_indicator(Y, n_nodes)
    leaves = taxonomy.leaves
    positive = (ind[:, leaves] > 0).tocsc()
    internal = ~taxonomy.is_leaf
    on_internal = ind.multiply(internal[None, :].astype(np.float64)).tocsr()
    on_internal.eliminate_zeros()
    if on_internal.nnz == 0:
        return positive, None
    A = taxonomy.ancestor_matrix
    strict = (A - sp.identity(n_nodes, format="csr")).tocsr()
    strict.eliminate_zeros()
    # label p of row i is resolved when another label of i lies strictly below p
    resolved = sp.csr_matrix((ind @ strict) > 0, dtype=np.float64)
    unresolved = sp.csr_matrix(on_internal - on_internal.multiply(resolved))
    unresolved.eliminate_zeros()
    if unresolved.nnz == 0:
        return positive, None
    excluded = ((unresolved @ A[leaves].T) > 0).tocsc()
    excluded = excluded - excluded.multiply(positive)
    excluded = sp.csc_matrix(excluded, dtype=bool)
    excluded.eliminate_zeros()
    return positive, (excluded if excluded.nnz else None)


@dataclass
class _DualTally:
    """Running sums of :meth:`HRProblem.certificate` over chunks of leaves."""

    S: np.ndarray
    loss: float = 0.0
    phi: float = 0.0
    kkt_stat: float = 0.0
    kkt_pg: float = 0.0


@dataclass
class HRProblem:
    """The data of eq. (2)/(3): features, taxonomy, leaf labels, ``C`` and the loss.

    Attributes
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    taxonomy : Taxonomy
        A tree.
    positive : csc_matrix of bool, shape (n_samples, n_leaves)
        ``y_in = +1`` entries, columns in the order of ``taxonomy.leaves``.
    excluded : csc_matrix of bool, shape (n_samples, n_leaves), or None
        Pairs with ``c_in = 0``.
    C : float
    loss : {"hinge", "squared_hinge", "logistic"}
    """

    X: Any
    taxonomy: Taxonomy
    positive: sp.csc_matrix
    excluded: sp.csc_matrix | None
    C: float
    loss: str = "hinge"

    @classmethod
    def from_labels(
        cls, X: Any, Y: Any, taxonomy: Taxonomy, C: float = 1.0, loss: str = "hinge"
    ) -> HRProblem:
        """Build the problem from node ids or a label indicator (see :func:`leaf_labels`).

        Raises
        ------
        ParameterError
            ``loss`` is not one of :data:`LEAF_LOSSES`, or ``C`` is not a positive number.
        DataError
            The taxonomy is a DAG.
        """
        if loss not in LEAF_LOSSES:
            raise ParameterError(f"loss must be one of {LEAF_LOSSES}, got {loss!r}")
        if not (np.isfinite(C) and C > 0):
            raise ParameterError(f"C must be a positive number, got {C!r}")
        if not taxonomy.is_tree:
            raise DataError("HR-SVM/HR-LR need a tree taxonomy")
        positive, excluded = leaf_labels(Y, taxonomy)
        Xc = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
        return cls(Xc, taxonomy, positive, excluded, float(C), loss)

    def signs(self, cols: np.ndarray) -> np.ndarray:
        """``y_in`` in {-1, +1} for the leaf columns ``cols``, dense (n_samples, len(cols))."""
        return np.where(self.positive[:, cols].toarray(), 1.0, -1.0)

    def weights(self, cols: np.ndarray) -> np.ndarray:
        """``c_in`` in {0, 1} for the leaf columns ``cols``, dense (n_samples, len(cols))."""
        if self.excluded is None:
            return np.ones((self.X.shape[0], len(cols)))
        return 1.0 - self.excluded[:, cols].toarray()

    def certificate(
        self, W: np.ndarray, alpha: LeafDuals | None = None, chunk: int = 256
    ) -> dict[str, float]:
        """Primal value, certified dual bound and KKT residuals at ``W`` (and ``alpha``).

        Parameters
        ----------
        W : ndarray of shape (n_nodes, n_features)
        alpha : LeafDuals of shape (n_samples, n_leaves), optional
            The leaves' dual variables (HR-SVM). For the logistic loss they are derived from
            ``W``; for the hinge without ``alpha`` the dual bound is not computed.
        chunk : int
            Leaves processed at once (bounds the dense (n_samples, chunk) buffers).

        Returns
        -------
        dict
            ``primal`` (J(W)), ``dual`` (D(alpha), a lower bound of the optimum, or nan),
            ``kkt_internal`` (largest |gradient| at internal nodes), ``kkt_leaf_stationarity``
            (largest |w_n - w_p - sum_i alpha_in y_in x_i|), ``kkt_leaf_pg`` (largest
            |projected gradient| of the leaves' duals; hinge only, 0 for logistic) and ``kkt``
            (their max).
        """
        tax = self.taxonomy
        leaves = tax.leaves
        reg, R = self._regulariser(W)
        internal = tax.internal_nodes
        kkt_internal = float(np.abs(R[internal]).max()) if len(internal) else 0.0
        A_leaf = tax.ancestor_matrix[leaves]  # (n_leaves, n_nodes)
        tally = _DualTally(S=np.zeros((tax.n_nodes, self.X.shape[1])))
        have_dual = self.loss != "hinge" or alpha is not None
        for s in range(0, len(leaves), chunk):
            cols = np.arange(s, min(s + chunk, len(leaves)))
            a, Yc = self._chunk_dual(W, alpha, cols, tally)
            if a is None:
                continue
            Uc = np.asarray(self.X.T @ (a * Yc)).T  # (len(cols), d): sum_i alpha_in y_in x_i
            tally.S += A_leaf[cols].T @ Uc
            resid = R[leaves[cols]] - Uc
            tally.kkt_stat = max(tally.kkt_stat, float(np.abs(resid).max()) if resid.size else 0.0)
        S = tally.S
        dual = tally.phi - 0.5 * float(np.einsum("ij,ij->", S, S)) if have_dual else float("nan")
        out = {
            "primal": reg + tally.loss,
            "dual": dual,
            "kkt_internal": kkt_internal,
            "kkt_leaf_stationarity": tally.kkt_stat if have_dual else float("nan"),
            "kkt_leaf_pg": tally.kkt_pg,
        }
        out["kkt"] = max(v for k, v in out.items() if k.startswith("kkt_") and np.isfinite(v))
        return out

    def _regulariser(self, W: np.ndarray) -> tuple[float, np.ndarray]:
        """``1/2 ||B W||^2`` and its gradient ``R = B^T B W``."""
        parent = self.taxonomy.parent
        diff = W.copy()
        has_parent = parent >= 0
        diff[has_parent] -= W[parent[has_parent]]
        reg = 0.5 * float(np.einsum("ij,ij->", diff, diff))
        R = diff.copy()
        np.subtract.at(R, parent[has_parent], diff[has_parent])
        return reg, R

    def _chunk_dual(
        self, W: np.ndarray, alpha: LeafDuals | None, cols: np.ndarray, tally: _DualTally
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """Add the loss and ``phi`` of the leaf columns ``cols`` to ``tally``.

        Returns the dual point ``alpha[:, cols]`` (None for the hinge without ``alpha``) and the
        signs ``y_in`` of the columns.
        """
        Yc = self.signs(cols)
        Cw = self.C * self.weights(cols)
        yz = Yc * np.asarray(self.X @ W[self.taxonomy.leaves[cols]].T)
        if self.loss == "hinge":
            tally.loss += float((Cw * np.maximum(0.0, 1.0 - yz)).sum())
            if alpha is None:
                return None, Yc
            a = alpha.block(cols)
            tally.phi += float(a.sum())
            pg = projected_gradient(yz - 1.0, a, Cw)
            tally.kkt_pg = max(tally.kkt_pg, float(np.abs(pg).max()) if pg.size else 0.0)
            return a, Yc
        if self.loss == "squared_hinge":  # the dual point at W: 2 C c (1 - y z)_+
            t = np.maximum(0.0, 1.0 - yz)
            tally.loss += float((Cw * t * t).sum())
            a = 2.0 * Cw * t
            tally.phi += float((a - a * a / (4.0 * self.C)).sum())
            return a, Yc
        tally.loss += float((Cw * np.logaddexp(0.0, -yz)).sum())
        a = Cw * expit(-yz)
        p = np.divide(a, Cw, out=np.zeros_like(a), where=Cw > 0)
        ent = -(xlogy(p, p) + xlogy(1.0 - p, 1.0 - p))
        tally.phi += float((Cw * ent).sum())
        return a, Yc


def logistic_leaf_objective(
    w: np.ndarray,
    X: Any,
    y: np.ndarray,
    C: float,
    w_parent: np.ndarray,
    weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Eq. (8) and its gradient.

    ``f(w) = 1/2 ||w - w_p||^2 + C sum_i c_i log(1 + exp(-y_i w^T x_i))`` and
    ``grad f = w - w_p - C sum_i c_i sigma(-y_i w^T x_i) y_i x_i`` (the seed's gradient drops
    the factor ``C``; it belongs there).

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {-1, +1}
    C : float
    w_parent : ndarray of shape (n_features,)
    weight : ndarray of shape (n_samples,), optional
        ``c_i`` (ones by default).

    Returns
    -------
    (float, ndarray of shape (n_features,))
    """
    yz = y * np.asarray(X @ w).ravel()
    cw = C if weight is None else C * weight
    diff = w - w_parent
    f = 0.5 * float(diff @ diff) + float(np.sum(cw * np.logaddexp(0.0, -yz)))
    r = cw * expit(-yz) * y
    g = diff - np.asarray(X.T @ r).ravel()
    return f, g
