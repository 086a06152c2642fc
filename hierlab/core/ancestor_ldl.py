"""Sparse ``L D L^T`` of matrices whose nonzeros lie on a tree's ancestor pairs: no fill.

The quadratic regularizers of seed 000 couple a node only with its ancestors: TRANSFER's
``Q = I + L`` (parent-child pairs, Section 5) and ORTHOGNL's ``K_sigma`` (every ancestor pair,
eq. 6). Eliminating such a symmetric matrix ``M`` children first (any order in which a node comes
before its ancestors), the Schur update of node ``c`` touches the pairs of ``c``'s ancestors
only, which are ancestor pairs again: the factor has no entry outside the pattern. With
``A(c)`` the active strict ancestors of ``c``,

    M = L D L^T,   L unit lower triangular (in that order) with L[a, c] != 0 only for a in A(c),

the factorisation costs ``O(sum_c |A(c)|^2)`` and a solve ``M z = b`` ``O(m + sum_c |A(c)|)``
(forward sweep children first, ``D^{-1}``, backward sweep parents first), against ``O(m^2)``
memory and ``O(m^2)`` per product for a dense inverse. Rows outside ``active`` are ignored: the
solve returns zero there (the inverse of the active block, as
:class:`~hierlab.core.regularizers.DualMetric` wants it).

The loops are compiled by numba when it is installed, with the same steps in Python otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.jit import jit_enabled, njit
from hierlab.core.taxonomy import Taxonomy

__all__ = ["AncestorFactor", "sparse_entries"]


def _factorize(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    diag: np.ndarray,
    dinv: np.ndarray,
) -> int:  # pragma: no cover - compiled by numba
    """Right-looking ``L D L^T`` in place: on entry ``val`` holds ``M[a, c]`` for the entries of
    column ``c`` (its active strict ancestors, by increasing depth) and ``diag`` the diagonal;
    on exit ``val`` holds ``L`` and ``dinv`` ``1 / D``. Returns -1, or the node whose pivot was
    not positive (``M`` not positive definite on the active block)."""
    for c in order:
        d = diag[c]
        if not d > 0.0:
            return c
        dinv[c] = 1.0 / d
        for e in range(ptr[c], ptr[c + 1]):
            val[e] /= d
        for e1 in range(ptr[c], ptr[c + 1]):
            a, l1 = idx[e1], val[e1]
            diag[a] -= l1 * l1 * d
            for e2 in range(ptr[c], e1):  # b above a on c's path: the entry (b, a)
                b = idx[e2]
                for f in range(ptr[a], ptr[a + 1]):
                    if idx[f] == b:
                        val[f] -= l1 * val[e2] * d
                        break
    return -1


def _solve_range(
    order: np.ndarray,
    lo: int,
    hi: int,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    b: np.ndarray,
    z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``z = M^{-1} b`` on the nodes ``order[lo:hi]`` (whole blocks: ``L`` links none of them
    to a node outside), whose entries of ``z`` it overwrites."""
    for r in range(lo, hi):
        z[order[r]] = b[order[r]]
    for r in range(lo, hi):  # L y = b, children first
        c = order[r]
        y = z[c]
        if y != 0.0:
            for e in range(ptr[c], ptr[c + 1]):
                z[idx[e]] -= val[e] * y
    for r in range(lo, hi):
        z[order[r]] *= dinv[order[r]]
    for r in range(hi - 1, lo - 1, -1):  # L^T z = D^{-1} y, parents first
        c = order[r]
        s = z[c]
        for e in range(ptr[c], ptr[c + 1]):
            s -= val[e] * z[idx[e]]
        z[c] = s


def _solve(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    b: np.ndarray,
    z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``z = M^{-1} b`` on the active rows (``order``), 0 elsewhere; ``b``, ``z`` of shape (m,)."""
    for j in range(z.shape[0]):
        z[j] = 0.0
    SOLVE_RANGE(order, 0, order.shape[0], ptr, idx, val, dinv, b, z)


def _solve_touched(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    blk_ptr: np.ndarray,
    blk_of: np.ndarray,
    touched: np.ndarray,
    nt: int,
    b: np.ndarray,
    z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """:func:`_solve` for a ``b`` that is zero off ``touched[:nt]``: only the blocks (connected
    components of the pattern, ``order[blk_ptr[k]:blk_ptr[k + 1]]``) holding a touched node are
    swept, the rest of ``z`` is 0. The same numbers as :func:`_solve` (the other blocks' are
    exact zeros there)."""
    for j in range(z.shape[0]):
        z[j] = 0.0
    for e in range(nt):
        k = blk_of[touched[e]]
        if k < 0:
            continue
        done = False
        for f in range(e):
            if blk_of[touched[f]] == k:
                done = True
                break
        if not done:
            SOLVE_RANGE(order, blk_ptr[k], blk_ptr[k + 1], ptr, idx, val, dinv, b, z)


def _solve_each_row(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    B: np.ndarray,
    Z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """:func:`_solve` for every row of ``B`` (k, m) (a vector each, contiguous) into ``Z``."""
    for f in range(B.shape[0]):
        SOLVE(order, ptr, idx, val, dinv, B[f], Z[f])


def _solve_block_rows(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    lo: int,
    hi: int,
    nodes: np.ndarray,
    R: np.ndarray,
    b: np.ndarray,
    Z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """For every row ``r`` of ``R`` (k, hi - lo), a vector on the block ``nodes =
    order[lo:hi]``: ``Z[r] = (M^{-1} r)`` on those nodes (``b``: scratch of shape (m,))."""
    for f in range(R.shape[0]):
        for q in range(hi - lo):
            b[nodes[q]] = R[f, q]
        SOLVE_RANGE(order, lo, hi, ptr, idx, val, dinv, b, b)
        for q in range(hi - lo):
            Z[f, q] = b[nodes[q]]


def _solve_by_node(
    order: np.ndarray,
    ptr: np.ndarray,
    idx: np.ndarray,
    val: np.ndarray,
    dinv: np.ndarray,
    B: np.ndarray,
    Z: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """:func:`_solve` for the columns of ``B`` (m, k) at once, row operations over ``k``."""
    k = B.shape[1]
    Z[:] = 0.0
    for c in order:
        Z[c] = B[c]
    for c in order:
        for e in range(ptr[c], ptr[c + 1]):
            a, v = idx[e], val[e]
            for f in range(k):
                Z[a, f] -= v * Z[c, f]
    for c in order:
        for f in range(k):
            Z[c, f] *= dinv[c]
    for r in range(order.shape[0] - 1, -1, -1):
        c = order[r]
        for e in range(ptr[c], ptr[c + 1]):
            a, v = idx[e], val[e]
            for f in range(k):
                Z[c, f] -= v * Z[a, f]


FACTORIZE: Any = njit(_factorize) or _factorize
SOLVE_RANGE: Any = njit(_solve_range) or _solve_range
SOLVE: Any = njit(_solve) or _solve
SOLVE_TOUCHED: Any = njit(_solve_touched) or _solve_touched
SOLVE_EACH_ROW: Any = njit(_solve_each_row) or _solve_each_row
SOLVE_BY_NODE: Any = njit(_solve_by_node) or _solve_by_node
SOLVE_BLOCK_ROWS: Any = njit(_solve_block_rows) or _solve_block_rows


def sparse_entries(M: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``M[rows[e], cols[e]]`` of a sparse matrix as a float array of shape (len(rows),)."""
    if len(rows) == 0:
        return np.zeros(0)
    return np.asarray(sp.csr_matrix(M)[rows, cols], dtype=np.float64).ravel()


class AncestorFactor:
    """``M = L D L^T`` of a symmetric matrix on a tree's ancestor pairs (module docstring).

    Parameters
    ----------
    M : sparse matrix or ndarray of shape (n_nodes, n_nodes)
        Symmetric; entries off the diagonal and off the ancestor pairs must be 0 (checked).
    taxonomy : Taxonomy
        A tree.
    active : ndarray of bool, shape (n_nodes,)
        The rows and columns of the block to factor; the others are ignored.

    Raises
    ------
    ParameterError
        ``M`` has a nonzero outside the ancestor pairs of the active block, or its active block
        is not positive definite.

    Attributes
    ----------
    order : ndarray of int
        The active nodes, deepest first (every node before its ancestors).
    ptr, idx, val : ndarray
        ``L`` by column: column ``c``'s nonzeros ``L[idx[e], c] = val[e]`` for ``e`` in
        ``ptr[c]:ptr[c + 1]`` (``ptr`` of shape (n_nodes + 1,)).
    dinv : ndarray of shape (n_nodes,)
        ``1 / D`` on the active nodes, 0 elsewhere.
    """

    def __init__(self, M: Any, taxonomy: Taxonomy, active: np.ndarray) -> None:
        m = taxonomy.n_nodes
        act = np.asarray(active, dtype=bool)
        Mc = sp.csr_matrix(M, dtype=np.float64)
        if Mc.shape != (m, m):
            raise ParameterError(f"the matrix has shape {Mc.shape}, the taxonomy {m} nodes")
        A = sp.csr_matrix(taxonomy.ancestor_matrix, dtype=np.float64)
        A = A.multiply(act[:, None]).multiply(act[None, :]).tocsr()  # active pairs only
        A.setdiag(0.0)
        A.eliminate_zeros()
        A.sort_indices()
        # the pattern: M's active block must live on the diagonal and the ancestor pairs
        block = Mc.multiply(act[:, None]).multiply(act[None, :]).tocsr()
        block.eliminate_zeros()
        off = block - sp.diags(block.diagonal())
        outside = abs(off) - abs(off).multiply((A + A.T) > 0)
        if outside.nnz and abs(outside).max() > 0:
            raise ParameterError(
                "the matrix has nonzeros outside the taxonomy's ancestor pairs: it cannot be "
                "factored without fill"
            )
        depth = taxonomy.depth
        # a parent's id is below its children's (Taxonomy's topological order): a row's sorted
        # ancestors are by increasing depth, as _factorize needs
        #: the pattern: entry e is the pair (ancestor pat_idx[e], node pat_row[e]), by node
        self.pat_ptr = A.indptr.astype(np.int64)
        self.pat_idx = A.indices.astype(np.int64)
        self.pat_row = np.repeat(np.arange(m), np.diff(self.pat_ptr))
        val = sparse_entries(block, self.pat_idx, self.pat_row)
        # blocks: the connected components of the pattern, one per topmost active ancestor
        # (its first active ancestor in id order); the order runs block by block, deepest first
        nodes = np.flatnonzero(act)
        has = np.diff(self.pat_ptr) > 0
        first = np.arange(m)
        first[has] = self.pat_idx[self.pat_ptr[:-1][has]]
        top = np.where(act, first, -1)
        self.order = nodes[np.lexsort((-depth[nodes], top[nodes]))].astype(np.int64)
        tops, start = np.unique(top[self.order], return_index=True)
        self.blk_ptr = np.concatenate([start, [len(self.order)]]).astype(np.int64)
        self.blk_of = np.full(m, -1, dtype=np.int64)
        self.blk_of[self.order] = np.repeat(np.arange(len(tops)), np.diff(self.blk_ptr))
        self.n = m
        self.refactor(block.diagonal(), val)

    def refactor(self, diag: np.ndarray, values: np.ndarray) -> None:
        """Factor another matrix with the same pattern: diagonal ``diag`` (n_nodes,) and
        ``values[e] = M[pat_idx[e], pat_row[e]]`` on the pattern's entries.

        Raises
        ------
        ParameterError
            The matrix is not positive definite on the active block.
        """
        ptr, idx = self.pat_ptr, self.pat_idx
        val = np.array(values, dtype=np.float64)
        d = np.array(diag, dtype=np.float64)
        dinv = np.zeros(self.n)
        bad = int(FACTORIZE(self.order, ptr, idx, val, d, dinv))
        if bad >= 0:
            raise ParameterError(
                f"the matrix is not positive definite on its active block (pivot of node "
                f"{bad} is {d[bad]:.4g})"
            )
        keep = val != 0.0  # TRANSFER's parent-only pattern stays so: drop the exact zeros
        kept = np.concatenate([[0], np.cumsum(keep)])
        self.ptr = np.concatenate([[0], np.cumsum(kept[ptr[1:]] - kept[ptr[:-1]])]).astype(np.int64)
        self.idx, self.val, self.dinv = idx[keep], val[keep], dinv

    @property
    def nnz(self) -> int:
        """Stored off-diagonal entries of ``L``."""
        return len(self.val)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(order, ptr, idx, val, dinv)``, the arguments of the compiled solves."""
        return self.order, self.ptr, self.idx, self.val, self.dinv

    def blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """``(blk_ptr, blk_of)``: block ``k`` is ``order[blk_ptr[k]:blk_ptr[k + 1]]``, node
        ``c`` lies in block ``blk_of[c]`` (-1: inactive)."""
        return self.blk_ptr, self.blk_of

    def _compiled(self) -> bool:
        return jit_enabled() and SOLVE is not _solve

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``M^{-1} B`` on the active rows (0 elsewhere), ``B`` of shape (n_nodes,) or
        (n_nodes, k)."""
        Bc = np.ascontiguousarray(B, dtype=np.float64)
        if Bc.ndim == 1:
            z = np.empty(self.n)
            (SOLVE if self._compiled() else _solve)(*self.arrays(), Bc, z)
            return z
        if self._compiled():
            Z = np.empty_like(Bc)
            SOLVE_BY_NODE(*self.arrays(), Bc, Z)
            return Z
        return self._solve_rows_numpy(Bc)

    def solve_rows(self, BT: np.ndarray) -> np.ndarray:
        """``(M^{-1} B)^T`` for ``BT = B^T`` of shape (k, n_nodes): a solve per (contiguous)
        row, no transposed copy."""
        Bc = np.ascontiguousarray(BT, dtype=np.float64)
        if self._compiled():
            Z = np.empty_like(Bc)
            SOLVE_EACH_ROW(*self.arrays(), Bc, Z)
            return Z
        return self._solve_rows_numpy(Bc.T).T

    def _solve_rows_numpy(self, B: np.ndarray) -> np.ndarray:
        """:func:`_solve_by_node` with numpy row operations (no numba)."""
        order, ptr, idx, val, dinv = self.arrays()
        Z = np.zeros_like(B)
        Z[order] = B[order]
        for c in order:
            sl = slice(ptr[c], ptr[c + 1])
            if sl.start < sl.stop:
                Z[idx[sl]] -= np.outer(val[sl], Z[c])
        Z[order] *= dinv[order, None]
        for c in order[::-1]:
            sl = slice(ptr[c], ptr[c + 1])
            if sl.start < sl.stop:
                Z[c] -= val[sl] @ Z[idx[sl]]
        return Z
