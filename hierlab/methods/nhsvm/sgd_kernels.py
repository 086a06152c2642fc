"""Compiled Pegasos epochs for the single-label path hinge of seed 003 (numba).

One call runs a whole epoch of :meth:`hierlab.methods.nhsvm.sgd.PegasosSGD._steps_sparse` on a CSR
``X``: the same mini-batches, the same arithmetic in the same order, without the per-batch
Python and scipy overhead (about 30 small scipy calls per step, which dominate on hundreds of
classes). The loss is the single-label hinge of :class:`hierlab.methods.nhsvm.model.
HierarchicalHinge` (eq. 3/10/12 ``"margin"`` and eq. 13), described by :class:`PathHinge`:

* node potentials ``p = a * x^T V^T`` (``W = a V``, ``V^T`` stored (n_features, n_nodes));
* leaf scores ``S_l = sum_{n in A+(l)} c_n p_n`` (the rows of ``C_cand``), the true score
  ``s_i = sum_{n in A+(y_i)} c_n p_n`` (row ``y_i`` of ``C``);
* ``Q_l = S_l - s_i + Δ(y_i, l)`` (margin) or ``(S_l - s_i) / Δ~(y_i, l) + 1`` (eq. 13, only
  where ``Δ~ > 0``); loss ``max(0, max_l Q_l)`` at the first arg-max ``j``; the row of ``Δ``
  is formed per example from the paths (:class:`~hierlab.core.losses.DeltaRows`), never as a
  (labels x leaves) table;
* subgradient coefficients ``G_i = (C_cand[j] - C[y_i]) (/ Δ~(y_i, j))`` when the loss is > 0.

Every sum runs in scipy's order (CSR rows, then their stored entries) or numpy's (pairwise
``np.sum``, :func:`_pairwise_sum`), so the iterates equal the numpy path's bit for bit.
The numpy form stays the reference (``HIERLAB_NO_JIT=1``); the tests compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import jit_enabled, njit, sparse_row_times
from hierlab.core.losses import DELTA_ROW, DeltaRows

__all__ = ["PathHinge", "path_hinge_epoch", "path_hinge_losses"]


@dataclass(frozen=True)
class PathHinge:
    """The arrays of the single-label path hinge (see the module docstring).

    Attributes
    ----------
    cand_indptr, cand_indices, cand_data : ndarray
        ``C_cand`` (n_leaves, n_nodes) in CSR: row ``l`` holds ``c_n`` on ``A+(leaf l)``.
    c_indptr, c_indices, c_data : ndarray
        ``C`` (n_nodes, n_nodes) in CSR: row ``m`` holds ``c_n`` on ``A+(m)``.
    y : ndarray of int64, shape (n_samples,)
        True node per row.
    k : ndarray of int64, shape (n_samples,)
        Row of ``D`` for each training row.
    D : ndarray of shape (n_labels, n_leaves) or (0, n_leaves)
        ``Δ`` (or ``Δ~``) of every training label, when small enough to keep
        (:meth:`~hierlab.core.losses.DeltaRows.table_if_small`); empty: rows on the fly.
    delta : tuple
        :meth:`~hierlab.core.losses.DeltaRows.args` of the structural error ``Δ(y, l)``
        (margin) or of the normalised ``Δ~`` divisor (eq. 13), formed a row per example.
    eq13 : bool
        Divide the score difference by ``Δ~`` (eq. 13) instead of adding ``Δ``.
    """

    cand_indptr: np.ndarray
    cand_indices: np.ndarray
    cand_data: np.ndarray
    c_indptr: np.ndarray
    c_indices: np.ndarray
    c_data: np.ndarray
    y: np.ndarray
    k: np.ndarray
    D: np.ndarray
    delta: tuple[Any, ...]
    eq13: bool

    @classmethod
    def from_matrices(
        cls, C_cand: Any, C: Any, y: np.ndarray, k: np.ndarray, D: np.ndarray,
        delta: DeltaRows, eq13: bool,
    ) -> PathHinge:
        """Build from the CSR matrices ``C_cand`` and ``C`` as the objective stores them."""
        Cc = sp.csr_matrix(C_cand)
        Cm = sp.csr_matrix(C)
        return cls(
            np.asarray(Cc.indptr, dtype=np.int64),
            np.asarray(Cc.indices, dtype=np.int64),
            np.asarray(Cc.data, dtype=np.float64),
            np.asarray(Cm.indptr, dtype=np.int64),
            np.asarray(Cm.indices, dtype=np.int64),
            np.asarray(Cm.data, dtype=np.float64),
            np.asarray(y, dtype=np.int64),
            np.asarray(k, dtype=np.int64),
            np.ascontiguousarray(D, dtype=np.float64),
            delta.args(),
            bool(eq13),
        )

    def args(self) -> tuple[Any, ...]:
        """The arrays in the order the kernels take them."""
        return (
            self.cand_indptr,
            self.cand_indices,
            self.cand_data,
            self.c_indptr,
            self.c_indices,
            self.c_data,
            self.y,
            self.k,
            self.D,
            self.delta,
            self.eq13,
        )


def _block_sum(a: Any, lo: int, n: int) -> float:  # pragma: no cover - compiled by numba
    """numpy's pairwise sum of ``a[lo:lo + n]`` for ``n <= 128`` (8 accumulators)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


def _pairwise_sum(a: Any, lo: int, n: int) -> float:  # pragma: no cover - compiled by numba
    """``np.sum(a[lo:lo + n])`` in numpy's own order: blocks of at most 128 summed by
    :func:`_block_sum`, longer runs split at ``n2 = n // 2 - (n // 2) % 8`` and the halves added.

    The lazy Pegasos path keeps ``||V||^2`` by such sums; summing in numpy's order keeps the
    compiled epoch bit-identical to it (the ``W_bar = q Q + beta V`` form amplifies any
    difference by ``beta / q``). The recursion runs on an explicit stack (numba's cache does
    not load self-recursive functions reliably).
    """
    if n <= 128:
        return _block_sum_c(a, lo, n)
    los = np.empty(128, dtype=np.int64)
    ns = np.empty(128, dtype=np.int64)
    stage = np.zeros(128, dtype=np.int64)
    vals = np.empty(128)
    top, vtop = 0, 0
    los[0], ns[0], stage[0] = lo, n, 0
    while top >= 0:
        lo_, n_ = los[top], ns[top]
        if n_ <= 128:
            vals[vtop] = _block_sum_c(a, lo_, n_)
            vtop += 1
            top -= 1
            continue
        n2 = n_ // 2
        n2 -= n2 % 8
        if stage[top] == 0:  # left half first
            stage[top] = 1
            top += 1
            los[top], ns[top], stage[top] = lo_, n2, 0
        elif stage[top] == 1:  # then the right half
            stage[top] = 2
            top += 1
            los[top], ns[top], stage[top] = lo_ + n2, n_ - n2, 0
        else:  # both done: left + right
            vals[vtop - 2] = vals[vtop - 2] + vals[vtop - 1]
            vtop -= 1
            top -= 1
    return vals[0]


def _row_loss(
    i: int, scale: float, VT: Any, x: Any, h: Any, p: Any, mark: Any, drow: Any
) -> tuple[float, int]:  # pragma: no cover - compiled by numba
    """Loss of row ``i`` and its arg-max leaf index (``-1`` when the loss is 0).

    ``x = (indptr, indices, data)`` of the CSR ``X``, ``h`` = :meth:`PathHinge.args`. Fills
    ``p`` (n_nodes,) with the potentials ``scale * x_i^T V^T`` and ``drow`` (n_leaves,) with
    ``Δ(y_i, .)``, from the table when it is kept, else formed from the paths (``mark``: a
    zeroed (n_nodes,) scratch).
    """
    x_indptr, x_indices, x_data = x
    cand_indptr, cand_indices, cand_data, c_indptr, c_indices, c_data, y, k, D, dl, eq13 = h
    if D.shape[0] > 0:  # the table is kept: the row is the table's, to the bit
        drow[:] = D[k[i]]
    else:
        DELTA_ROW(y[i], dl[0], dl[1], dl[2], dl[3], dl[4], dl[5], dl[6], mark, drow)
    m = p.shape[0]
    sparse_row_times(VT, x_indptr, x_indices, x_data, i, p)  # p = x_i^T V^T
    if scale != 1.0:
        for n in range(m):
            p[n] *= scale
    yi = y[i]
    s_true = 0.0
    for kk in range(c_indptr[yi], c_indptr[yi + 1]):
        s_true += c_data[kk] * p[c_indices[kk]]
    best = -np.inf
    jbest = -1
    for leaf in range(cand_indptr.shape[0] - 1):
        s = 0.0
        for kk in range(cand_indptr[leaf], cand_indptr[leaf + 1]):
            s += cand_data[kk] * p[cand_indices[kk]]
        diff = s - s_true
        if eq13:
            dn = drow[leaf]
            qv = diff / dn + 1.0 if dn > 0.0 else -np.inf
        else:
            qv = diff + drow[leaf]
        if qv > best or jbest < 0:
            best = qv
            jbest = leaf
    if best > 0.0:
        return best, jbest
    return max(best, 0.0), -1


def _path_hinge_losses(
    VT: Any, scale: float, rows: Any, x: Any, h: Any
) -> Any:  # pragma: no cover - compiled by numba
    """Losses of the rows ``rows`` at ``W = scale * VT.T``, shape (len(rows),)."""
    out = np.empty(rows.shape[0])
    p = np.empty(VT.shape[1])
    mark, drow = np.zeros(VT.shape[1]), np.empty(h[0].shape[0] - 1)
    for r in range(rows.shape[0]):
        loss, _ = _row_loss_c(rows[r], scale, VT, x, h, p, mark, drow)
        out[r] = loss
    return out


def _batch_coefficients(
    idx: Any, a: float, VT: Any, x: Any, h: Any, p: Any, G: Any, losses: Any
) -> None:  # pragma: no cover - compiled by numba
    """Losses (``losses[:b]``) and subgradient coefficients (``G[:b]``) of the batch ``idx``.

    ``G[r] = (C_cand[j] - C[y_i]) (/ Δ~(y_i, j))`` for a positive loss, else 0.
    """
    cand_indptr, cand_indices, cand_data, c_indptr, c_indices, c_data, y, _k, _D, _dl, eq13 = h
    m = G.shape[1]
    mark, drow = np.zeros(m), np.empty(cand_indptr.shape[0] - 1)
    for r in range(idx.shape[0]):
        i = idx[r]
        loss, j = _row_loss_c(i, a, VT, x, h, p, mark, drow)
        losses[r] = loss
        for nn in range(m):
            G[r, nn] = 0.0
        if j < 0:
            continue
        for kk in range(cand_indptr[j], cand_indptr[j + 1]):
            G[r, cand_indices[kk]] += cand_data[kk]
        yi = y[i]
        for kk in range(c_indptr[yi], c_indptr[yi + 1]):
            G[r, c_indices[kk]] -= c_data[kk]
        if eq13:
            div = drow[j]
            for nn in range(m):
                G[r, nn] /= div


def _active_nodes(G: Any, b: int, U: Any) -> int:  # pragma: no cover - compiled by numba
    """Fill ``U`` with the nodes (ascending) where a row of ``G[:b]`` is nonzero; their number.

    A subgradient row is nonzero on two paths at most: the other nodes' steps are exact zeros
    (``v + 0 = v``), so the update skips them (O(nnz x path) instead of O(nnz x n_nodes))."""
    nu = 0
    for nn in range(G.shape[1]):
        for r in range(b):
            if G[r, nn] != 0.0:
                U[nu] = nn
                nu += 1
                break
    return nu


def _batch_gradient(
    idx: Any, x: Any, G: Any, slot: Any, cols: Any, gbuf: Any, U: Any, nu: int
) -> Any:  # pragma: no cover - compiled by numba
    """The batch's sorted columns ``J`` (as ``np.unique``) and ``gbuf[:len(J), :nu] = G^T
    X_B`` on the active nodes ``U[:nu]``.

    Summed over the batch's rows in order, as scipy's ``XJ.T @ G[:, U]``; ``slot`` (all -1 on
    entry and on return) maps a column to its row of ``gbuf``, which must hold ``len(J)`` rows.
    """
    x_indptr, x_indices, x_data = x
    n_cols = 0
    for r in range(idx.shape[0]):
        i = idx[r]
        for kk in range(x_indptr[i], x_indptr[i + 1]):
            f = x_indices[kk]
            if slot[f] < 0:
                slot[f] = 0
                cols[n_cols] = f
                n_cols += 1
    J = np.sort(cols[:n_cols])
    for jj in range(n_cols):
        slot[J[jj]] = jj
        for uu in range(nu):
            gbuf[jj, uu] = 0.0
    for r in range(idx.shape[0]):
        i = idx[r]
        for kk in range(x_indptr[i], x_indptr[i + 1]):
            sl = slot[x_indices[kk]]
            v = x_data[kk]
            for uu in range(nu):
                gbuf[sl, uu] += v * G[r, U[uu]]
    for jj in range(n_cols):
        slot[J[jj]] = -1
    return J


def _column_step(
    VT: Any, QT: Any, J: Any, gbuf: Any, sqbuf: Any, coef: float, b: int, bq: float,
    U: Any, nu: int,
) -> tuple[float, float]:  # pragma: no cover - compiled by numba
    """``V[J, U] += coef * gbuf / b`` and ``Q[J, U] -= bq * dV`` (when ``bq != 0``), on the
    batch's columns ``J`` and active nodes ``U[:nu]``.

    Returns ``(||V[J, U]||^2 before, after)``, each summed as ``np.sum`` of the (len(J), nu)
    block.
    """
    n_cols = J.shape[0]
    size = n_cols * nu
    for jj in range(n_cols):
        for uu in range(nu):
            v = VT[J[jj], U[uu]]
            sqbuf[jj * nu + uu] = v * v
    before = _pairwise_sum_c(sqbuf, 0, size)
    for jj in range(n_cols):
        f = J[jj]
        for uu in range(nu):
            nn = U[uu]
            dv = coef * (gbuf[jj, uu] / b)
            v = VT[f, nn] + dv
            VT[f, nn] = v
            sqbuf[jj * nu + uu] = v * v
            if bq != 0.0:
                QT[f, nn] -= bq * dv
    return before, _pairwise_sum_c(sqbuf, 0, size)


def _path_hinge_epoch(
    VT: Any,
    QT: Any,
    state: Any,
    perm: Any,
    batch_size: int,
    lam: float,
    radius: float,
    avg_c: float,
    x: Any,
    h: Any,
) -> float:  # pragma: no cover - compiled by numba
    """One epoch of ``PegasosSGD._steps_sparse`` in place; returns the summed batch losses.

    ``state`` = ``[a, sq, q, beta, t, n_avg]`` (float64, updated in place): ``W = a V``,
    ``sq = ||V||^2``, ``W_bar = q Q + beta V``, the step counter and the averaging count.
    """
    a, sq, q, beta = state[0], state[1], state[2], state[3]
    t, n_avg = int(state[4]), int(state[5])
    d, m = VT.shape
    n = perm.shape[0]
    G = np.zeros((batch_size, m))
    p = np.empty(m)
    slot = np.full(d, -1, dtype=np.int64)
    cols = np.empty(d, dtype=np.int64)
    width = 0  # rows of gbuf: the most distinct columns of any batch
    x_indptr = x[0]
    for s in range(0, n, batch_size):
        nnz = 0
        for r in range(s, min(n, s + batch_size)):
            nnz += x_indptr[perm[r] + 1] - x_indptr[perm[r]]
        width = max(width, min(nnz, d))
    gbuf = np.zeros((width, m))
    sqbuf = np.zeros(width * m)
    losses = np.empty(batch_size)
    U = np.empty(m, dtype=np.int64)
    loss_sum = 0.0
    for s in range(0, n, batch_size):
        t += 1
        idx = np.sort(perm[s : min(n, s + batch_size)])
        b = idx.shape[0]
        eta = 1.0 / (2.0 * lam * t)
        _batch_coefficients_c(idx, a, VT, x, h, p, G, losses)
        loss_sum += _pairwise_sum_c(losses, 0, b)
        nu = _active_nodes_c(G, b, U)
        J = _batch_gradient_c(idx, x, G, slot, cols, gbuf, U, nu)
        # shrink (1 - 2 lam eta): a scalar product, or the restart of Pegasos' first step
        shrink = 1.0 - 2.0 * lam * eta
        if shrink > 0.0:
            a *= shrink
        else:
            if beta != 0.0:
                QT += (beta / q) * VT
            VT[:] = 0.0
            a, sq, beta = 1.0, 0.0, 0.0
        if J.shape[0] > 0 and nu > 0:
            before, after = _column_step_c(
                VT, QT, J, gbuf, sqbuf, -eta / a, b, beta / q, U, nu
            )
            sq = (sq - before) + after
        nrm = abs(a) * np.sqrt(max(sq, 0.0))
        if nrm > radius:
            a *= radius / nrm
        n_avg += 1
        r_avg = (1.0 + avg_c) / (n_avg + avg_c)
        q *= 1.0 - r_avg
        beta = (1.0 - r_avg) * beta + r_avg * a
        if q <= 0.0:
            QT[:] = 0.0
            q = 1.0
    state[0], state[1], state[2], state[3] = a, sq, q, beta
    state[4], state[5] = t, n_avg
    return loss_sum


_block_sum_c: Any = njit(_block_sum)
_pairwise_sum_c: Any = njit(_pairwise_sum)
_row_loss_c: Any = njit(_row_loss)
_batch_coefficients_c: Any = njit(_batch_coefficients)
_active_nodes_c: Any = njit(_active_nodes)
_batch_gradient_c: Any = njit(_batch_gradient)
_column_step_c: Any = njit(_column_step)
_epoch_jit: Any = njit(_path_hinge_epoch)
_losses_jit: Any = njit(_path_hinge_losses)


def _csr_args(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.asarray(X.indptr, dtype=np.int64),
        np.asarray(X.indices, dtype=np.int64),
        np.asarray(X.data, dtype=np.float64),
    )


def path_hinge_epoch(
    X: sp.csr_matrix,
    hinge: PathHinge,
    VT: np.ndarray,
    QT: np.ndarray,
    state: np.ndarray,
    perm: np.ndarray,
    batch_size: int,
    lam: float,
    radius: float,
    avg_c: float,
) -> float:
    """Run one compiled epoch (see :func:`_path_hinge_epoch`); returns the summed batch losses.

    Parameters
    ----------
    X : csr_matrix of shape (n_samples, n_features)
    hinge : PathHinge
    VT, QT : ndarray of shape (n_features, n_nodes), C order
        ``V^T`` and ``Q^T`` of ``W = a V`` and ``W_bar = q Q + beta V``, updated in place.
    state : ndarray of shape (6,)
        ``[a, sq, q, beta, t, n_avg]``, updated in place.
    perm : ndarray of int64
        The epoch's row order (batches are its consecutive slices, each sorted).
    batch_size : int
    lam, radius, avg_c : float
        ``lambda`` of the mean-loss objective, the projection radius and the ``c`` of
        polynomial-decay averaging.
    """
    if _epoch_jit is None or not jit_enabled():  # pragma: no cover - callers check
        raise RuntimeError("the compiled Pegasos epoch needs numba")
    return float(
        _epoch_jit(
            VT,
            QT,
            state,
            np.asarray(perm, dtype=np.int64),
            int(batch_size),
            float(lam),
            float(radius),
            float(avg_c),
            _csr_args(X),
            hinge.args(),
        )
    )


def path_hinge_losses(
    X: sp.csr_matrix, hinge: PathHinge, VT: np.ndarray, rows: np.ndarray, scale: float = 1.0
) -> np.ndarray:
    """Losses of ``rows`` at ``W = scale * VT.T`` (compiled), shape (len(rows),)."""
    if _losses_jit is None or not jit_enabled():  # pragma: no cover - callers check
        raise RuntimeError("the compiled path hinge needs numba")
    return np.asarray(
        _losses_jit(
            np.ascontiguousarray(VT, dtype=np.float64),
            float(scale),
            np.asarray(rows, dtype=np.int64),
            _csr_args(X),
            hinge.args(),
        )
    )
