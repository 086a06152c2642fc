"""Global dual coordinate descent for HR-SVM (seed 001, eq. 2): every leaf's duals at once.

Writing ``w_n = sum_{j in A+(n)} v_j`` (``A+(n)``: the ancestors of ``n`` and ``n`` itself,
the root included, so ``v_j = w_j - w_{pi(j)}``), eq. (2) is a linear SVM on path features,

    min_v  1/2 sum_j ||v_j||^2 + C sum_{n in T} sum_i c_in (1 - y_in sum_{j in A+(n)} v_j^T x_i)_+,

whose dual is the one :mod:`hierlab.methods.hr.model` certifies: ``0 <= alpha_in <= C c_in``,

    D(alpha) = sum alpha_in - 1/2 sum_j ||S_j||^2,   S_j = sum_{leaves n below j} sum_i
    alpha_in y_in x_i,   v_j = S_j.

Coordinate ``(i, n)`` has gradient ``G = y_in w_n^T x_i - 1`` and curvature ``|A+(n)| ||x_i||^2``
(the pair's path has ``|A+(n)|`` nodes), so it moves by the closed form of Hsieh et al. (2008),
``alpha_in <- clip(alpha_in - G / (|A+(n)| ||x_i||^2), 0, C c_in)``, and ``S_j += delta y_in x_i``
on its path. This is exact coordinate ascent on the whole dual, not block CD: the internal nodes
move with every step instead of waiting for an outer round, which is what the wide trees of real
data need (block CD's eq. 4 averages a parent over hundreds of children, and the outer rounds
crawl).

The squared hinge ``(1 - y_in w_n^T x_i)_+^2`` (liblinear's L2-loss SVM, LinearSVC's default) is
the same solver with Hsieh et al.'s other case: no upper bound on ``alpha_in`` and ``1/(2C)``
added to the diagonal, so ``G = y_in w_n^T x_i - 1 + alpha_in / (2C)``, the curvature grows by
``1/(2C)``, and the dual loses ``sum alpha_in^2 / (4C)``.

One pass visits every example once, in a random order; for example ``i`` it forms the node scores
``p = S x_i`` (shape (n_nodes,)) once, then visits every leaf (a random order per pass): the leaf's
score is the path sum of ``p``, and a step updates ``p`` on the path in ``O(depth)``. ``S`` itself
is updated once per example, on the touched nodes only. A pass costs ``O(nnz(X) n_nodes +
n_samples n_leaves depth)``, about one-vs-rest liblinear's pass over every leaf. With shrinking
(:class:`GlobalDualCD`), the passes between full ones visit each example's active pairs only and
form ``p`` on their paths only. The duals are kept sparse by example (a hinge dual is zero off
the support vectors); the loop is sequential by nature and compiled (numba), with the same steps
in Python when numba is absent. The bounds (:func:`_bounds`) never form a dense (n_samples,
n_leaves) array.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import (
    jit_enabled,
    njit,
    sparse_row_times,
    sparse_row_times_py,
)
from hierlab.core.objective import CHUNK
from hierlab.core.solver import Solver, SolverState
from hierlab.methods.hr.model import HRProblem, LeafDuals

__all__ = ["GlobalDualCD", "PassBlocks", "PathSumSolver"]


def _enter_row(
    i: int, a_ptr: np.ndarray, a_idx: np.ndarray, a_val: np.ndarray, pos_ptr: np.ndarray,
    pos_idx: np.ndarray, ex_ptr: np.ndarray, ex_idx: np.ndarray, a: np.ndarray,
    sign: np.ndarray, off: np.ndarray, on: bool,
) -> None:  # pragma: no cover - compiled by numba
    """Example ``i``'s duals into the dense scratch ``a`` and its labels into ``sign`` (+1 on
    its positive leaves) and ``off`` (its switched-off pairs); ``on=False`` clears the labels."""
    if on:
        for e in range(a_ptr[i], a_ptr[i + 1]):
            a[a_idx[e]] = a_val[e]
    for e in range(pos_ptr[i], pos_ptr[i + 1]):
        sign[pos_idx[e]] = 1.0 if on else -1.0
    for e in range(ex_ptr[i], ex_ptr[i + 1]):
        off[ex_idx[e]] = on


def _path_step(
    k: int, dy: float, s: float, anc_ptr: np.ndarray, anc_idx: np.ndarray, p: np.ndarray,
    acc: np.ndarray, mark: np.ndarray, touched: np.ndarray, nt: int,
) -> int:  # pragma: no cover - compiled by numba
    """A step ``delta y`` on coordinate ``(i, k)``: ``p += delta y ||x_i||^2`` and ``acc +=
    delta y`` on the leaf's path, its nodes recorded in ``touched``; the new size of it."""
    for e in range(anc_ptr[k], anc_ptr[k + 1]):
        j = anc_idx[e]
        p[j] += dy * s
        acc[j] += dy
        if not mark[j]:
            mark[j] = True
            touched[nt] = j
            nt += 1
    return nt


def _update_s(
    i: int, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, ST: np.ndarray,
    acc: np.ndarray, mark: np.ndarray, touched: np.ndarray, nt: int,
) -> None:  # pragma: no cover - compiled by numba
    """``S^T[cols of x_i, touched] += x_i acc[touched]``, then ``acc`` and ``mark`` cleared.

    When at least a quarter of the nodes are touched (a logistic pass touches them all), each
    row of ``S^T`` is updated whole, in order (``acc`` is 0 off ``touched``: the same sums),
    not by gathering ``touched``'s nodes in the order the steps met them, whose scattered
    accesses into a row of ``n_nodes`` numbers leave the cache once a row outgrows it."""
    m = ST.shape[1]
    dense = 4 * nt >= m
    for e in range(indptr[i], indptr[i + 1]):
        c = indices[e]
        x = data[e]
        if dense:
            for j in range(m):
                ST[c, j] += x * acc[j]
        else:
            for f in range(nt):
                ST[c, touched[f]] += x * acc[touched[f]]
    for f in range(nt):
        acc[touched[f]] = 0.0
        mark[touched[f]] = False


def _by_example(
    rows_at: np.ndarray, rows_len: np.ndarray, out_ptr: np.ndarray, buf_idx: np.ndarray,
    buf_val: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled by numba
    """The rows written in the pass's order, put back in example order (``out_ptr`` filled)."""
    n = rows_at.shape[0]
    out_ptr[0] = 0
    for i in range(n):
        out_ptr[i + 1] = out_ptr[i] + rows_len[i]
    idx = np.zeros(out_ptr[n], dtype=np.int64)
    val = np.zeros(out_ptr[n])
    for i in range(n):
        b = out_ptr[i]
        for e in range(rows_len[i]):
            idx[b + e] = buf_idx[rows_at[i] + e]
            val[b + e] = buf_val[rows_at[i] + e]
    return idx, val


def _scores_on_paths(
    i: int, vis: np.ndarray, anc_ptr: np.ndarray, anc_idx: np.ndarray, indptr: np.ndarray,
    indices: np.ndarray, data: np.ndarray, ST: np.ndarray, p: np.ndarray, pmark: np.ndarray,
    nodes: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``p_j = S_j . x_i`` on the nodes of the paths of the leaves ``vis`` only."""
    nn = 0
    for k in vis:
        for e in range(anc_ptr[k], anc_ptr[k + 1]):
            j = anc_idx[e]
            if not pmark[j]:
                pmark[j] = True
                nodes[nn] = j
                nn += 1
                p[j] = 0.0
    for e in range(indptr[i], indptr[i + 1]):
        c, x = indices[e], data[e]
        for f in range(nn):
            p[nodes[f]] += x * ST[c, nodes[f]]
    for f in range(nn):
        pmark[nodes[f]] = False


def _visit_leaves(
    vis: np.ndarray, s: float, C: float, dii: float, hi: float, lo: float, anc_ptr: np.ndarray,
    anc_idx: np.ndarray, a: np.ndarray, sign: np.ndarray, off: np.ndarray, p: np.ndarray,
    acc: np.ndarray, mark: np.ndarray, touched: np.ndarray, act: np.ndarray, pg: np.ndarray,
    record: bool,
) -> tuple[int, int]:  # pragma: no cover - compiled by numba
    """Coordinates ``(i, k)`` for the leaves ``vis`` of one example (the module docstring's
    step; the squared hinge: ``C`` is infinite and ``dii = 1 / (2 C)`` adds ``dii alpha_in`` to
    the gradient and ``dii`` to the curvature); ``a`` updated in place. A coordinate stays
    active (written to ``act`` when ``record``) unless it sits at a bound with its gradient
    beyond the thresholds (``alpha = 0``, ``G > hi``; ``alpha = C``, ``G < lo``: shrinking).
    ``pg`` holds the running largest and smallest projected gradients. Returns the sizes of
    ``touched`` and ``act``."""
    nt, na = 0, 0
    for k in vis:
        if off[k] or s <= 0.0:
            continue
        ak, y = a[k], sign[k]
        P = 0.0  # the leaf's score: the path sum of p
        for e in range(anc_ptr[k], anc_ptr[k + 1]):
            P += p[anc_idx[e]]
        G = y * P - 1.0 + dii * ak
        if (ak <= 0.0 and G > hi) or (ak >= C and G < lo):
            continue  # shrunk: its projected gradient is 0, it would not move
        if record:
            act[na] = k
            na += 1
        g = min(G, 0.0) if ak <= 0.0 else (max(G, 0.0) if ak >= C else G)
        pg[0], pg[1] = max(pg[0], g), min(pg[1], g)
        if g != 0.0:  # clipped Newton step, curvature |A+(k)| ||x_i||^2 (+ dii)
            new = min(max(ak - G / ((anc_ptr[k + 1] - anc_ptr[k]) * s + dii), 0.0), C)
            dy = (new - ak) * y
            a[k] = new
            if dy != 0.0:
                nt = PATH_STEP(k, dy, s, anc_ptr, anc_idx, p, acc, mark, touched, nt)
    return nt, na


def _write_row(
    i: int, vis: np.ndarray, a_ptr: np.ndarray, a_idx: np.ndarray, a: np.ndarray, s: float,
    C: float, dii: float, off: np.ndarray, buf_idx: np.ndarray, buf_val: np.ndarray, nnz: int,
) -> int:  # pragma: no cover - compiled by numba
    """Example ``i``'s nonzero duals (visited leaves, then its other old ones) into the buffers,
    ``a`` cleared; an empty row's visited duals sit at their optimum (the box's top, or ``1 /
    dii`` for the squared hinge). Returns the new ``nnz``."""
    for k in vis:
        if s <= 0.0 and not off[k]:
            a[k] = C if dii <= 0.0 else min(C, 1.0 / dii)  # G = -1 + dii a whatever S
        if a[k] != 0.0:
            buf_idx[nnz], buf_val[nnz] = k, a[k]
            nnz += 1
            a[k] = 0.0
    for e in range(a_ptr[i], a_ptr[i + 1]):
        k = a_idx[e]
        if a[k] != 0.0:
            buf_idx[nnz], buf_val[nnz] = k, a[k]
            nnz += 1
            a[k] = 0.0
    return nnz


def _grown(buf_idx: np.ndarray, buf_val: np.ndarray, used: int, need: int) -> tuple[
    np.ndarray, np.ndarray
]:  # pragma: no cover - compiled by numba
    """The buffers, doubled (contents kept) when ``need`` more entries do not fit."""
    if buf_idx.shape[0] >= used + need:
        return buf_idx, buf_val
    grow = max(2 * buf_idx.shape[0], used + need)
    new_idx, new_val = np.zeros(grow, dtype=np.int64), np.zeros(grow)
    new_idx[:used], new_val[:used] = buf_idx[:used], buf_val[:used]
    return new_idx, new_val


def _pass_rows_kernel(
    order: np.ndarray,
    leaf_order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sq: np.ndarray,
    pos_ptr: np.ndarray,
    pos_idx: np.ndarray,
    ex_ptr: np.ndarray,
    ex_idx: np.ndarray,
    anc_ptr: np.ndarray,
    anc_idx: np.ndarray,
    C: float,
    dii: float,
    a_ptr: np.ndarray,
    a_idx: np.ndarray,
    a_val: np.ndarray,
    ST: np.ndarray,
    full: bool,
    record: bool,
    act_ptr: np.ndarray,
    act_idx: np.ndarray,
    hi: float,
    lo: float,
    work: np.ndarray,
    marks: np.ndarray,
    lists: np.ndarray,
    a: np.ndarray,
    sign: np.ndarray,
    off: np.ndarray,
    act: np.ndarray,
    pg: np.ndarray,
    at: np.ndarray,
    ln: np.ndarray,
    used: np.ndarray,
    buf_idx: np.ndarray,
    buf_val: np.ndarray,
    act_buf: np.ndarray,
    act_val: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """The steps of one pass of global dual CD for the examples ``order`` (a block of the
    pass's order; see the module docstring and :class:`PassBlocks`).

    A ``full`` pass visits every leaf (in ``leaf_order``) and forms ``p = S x_i`` on every node;
    otherwise each example visits its active leaves ``act_idx[act_ptr[i]:act_ptr[i + 1]]`` and
    ``p`` on their paths only; the active lists are written when ``record``. Reads the duals
    from the CSR-by-example ``(a_ptr, a_idx, a_val)``. ``C`` is the box's top (infinite for
    the squared hinge, whose ``dii = 1 / (2 C)``; 0 for the hinge). ``ST`` (n_features,
    n_nodes) is ``S^T``, updated in place. Each example's new duals and active leaves are
    appended to the buffers
    (grown as needed, returned), where ``at``/``ln`` (shape (2, n_samples)) record them and
    ``used`` (shape (2,)) counts them. The scratch of the pass, reset after each example:
    ``work`` (2, n_nodes) the scores ``p`` and the path sums ``acc``; ``marks`` (2, n_nodes)
    bool; ``lists`` (2, n_nodes) int: the touched nodes and those of the paths; ``a``,
    ``sign``, ``off``, ``act`` (n_leaves,); ``pg`` the running extreme projected gradients."""
    p, acc = work[0], work[1]
    mark, pmark = marks[0], marks[1]
    touched, nodes = lists[0], lists[1]
    nnz, nact = used[0], used[1]
    for i in order:
        ENTER_ROW(i, a_ptr, a_idx, a_val, pos_ptr, pos_idx, ex_ptr, ex_idx, a, sign, off, True)
        s = sq[i]
        if full:
            vis = leaf_order
            ROW_TIMES(ST, indptr, indices, data, i, p)  # p = S x_i
        else:
            vis = act_idx[act_ptr[i] : act_ptr[i + 1]]
            SCORES_ON_PATHS(i, vis, anc_ptr, anc_idx, indptr, indices, data, ST, p, pmark, nodes)
        nt, na = VISIT(vis, s, C, dii, hi, lo, anc_ptr, anc_idx, a, sign, off, p, acc, mark,
                       touched, act, pg, record)  # fmt: skip
        buf_idx, buf_val = GROWN(buf_idx, buf_val, nnz, vis.shape[0] + a_ptr[i + 1] - a_ptr[i])
        at[0, i] = nnz
        nnz = WRITE_ROW(i, vis, a_ptr, a_idx, a, s, C, dii, off, buf_idx, buf_val, nnz)
        ln[0, i] = nnz - at[0, i]
        act_buf, act_val = GROWN(act_buf, act_val, nact, na)
        act_buf[nact : nact + na] = act[:na]
        at[1, i], ln[1, i] = nact, na
        nact += na
        ENTER_ROW(i, a_ptr, a_idx, a_val, pos_ptr, pos_idx, ex_ptr, ex_idx, a, sign, off, False)
        UPDATE_S(i, indptr, indices, data, ST, acc, mark, touched, nt)
    used[0], used[1] = nnz, nact
    return buf_idx, buf_val, act_buf, act_val


def _keep_rows(
    order: np.ndarray,
    a_ptr: np.ndarray,
    a_idx: np.ndarray,
    a_val: np.ndarray,
    act_ptr: np.ndarray,
    act_idx: np.ndarray,
    at: np.ndarray,
    ln: np.ndarray,
    used: np.ndarray,
    buf_idx: np.ndarray,
    buf_val: np.ndarray,
    act_buf: np.ndarray,
    act_val: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    """The examples ``order`` a pass stopped before keep their duals and active leaves: copied
    into the buffers as :func:`_pass_rows_kernel` writes them (a feasible dual point with ``S``)."""
    nnz, nact = used[0], used[1]
    for i in order:
        k0, k1 = a_ptr[i], a_ptr[i + 1]
        buf_idx, buf_val = GROWN(buf_idx, buf_val, nnz, k1 - k0)
        at[0, i], ln[0, i] = nnz, k1 - k0
        buf_idx[nnz : nnz + k1 - k0] = a_idx[k0:k1]
        buf_val[nnz : nnz + k1 - k0] = a_val[k0:k1]
        nnz += k1 - k0
        k0, k1 = act_ptr[i], act_ptr[i + 1]
        act_buf, act_val = GROWN(act_buf, act_val, nact, k1 - k0)
        at[1, i], ln[1, i] = nact, k1 - k0
        act_buf[nact : nact + k1 - k0] = act_idx[k0:k1]
        nact += k1 - k0
    used[0], used[1] = nnz, nact
    return buf_idx, buf_val, act_buf, act_val


class PassBlocks:
    """One pass of global dual CD run a block of examples at a time (:func:`_pass_rows_kernel`), so
    that the solver reports its progress and honours a stop request between blocks (the
    steps, and so the result, do not depend on the blocks). Blocks are sized to about
    :attr:`seconds` of work from the time per example measured so far.

    Parameters
    ----------
    args : tuple
        :func:`_pass_rows_kernel`'s arguments from ``leaf_order`` to ``lo``.
    use_jit : bool or None
        Compiled blocks; None: as :func:`hierlab.core.jit.jit_enabled`.
    per_row : float, optional
        Seconds per example measured in an earlier pass (the first block's size otherwise:
        :attr:`first`).
    """

    #: seconds of work per block (a stop is honoured within about this long)
    seconds = 0.2
    #: examples of the first block (before any time is measured)
    first = 64

    def __init__(
        self, args: tuple[Any, ...], use_jit: bool | None, per_row: float | None = None
    ) -> None:
        self.args = args
        self.compiled = (jit_enabled() if use_jit is None else use_jit) and _PASS_ROWS is not None
        ST, anc_ptr = args[16], args[9]
        m, L = ST.shape[1], anc_ptr.shape[0] - 1
        a_idx, act_idx, n = args[14], args[20], args[13].shape[0] - 1
        self.scratch = (
            np.zeros((2, m)), np.zeros((2, m), dtype=np.bool_), np.zeros((2, m), dtype=np.int64),
            np.zeros(L), -np.ones(L), np.zeros(L, dtype=np.bool_), np.zeros(L, dtype=np.int64),
            np.array([-np.inf, np.inf]),
        )  # fmt: skip
        self.at, self.ln = np.zeros((2, n), dtype=np.int64), np.zeros((2, n), dtype=np.int64)
        self.used = np.zeros(2, dtype=np.int64)
        cap, cap_act = max(a_idx.shape[0] + n, 16), max(act_idx.shape[0] + n, 16)
        self.bufs = (
            np.zeros(cap, dtype=np.int64), np.zeros(cap),
            np.zeros(cap_act, dtype=np.int64), np.zeros(cap_act),  # values unused
        )  # fmt: skip
        self.per_row = per_row

    def run(self, rows: np.ndarray) -> None:
        """The steps for the examples ``rows`` (the next block of the pass's order)."""
        fn: Any = _PASS_ROWS if self.compiled else _pass_rows_kernel
        t0 = time.perf_counter()
        self.bufs = fn(rows, *self.args, *self.scratch, self.at, self.ln, self.used, *self.bufs)
        if len(rows):
            self.per_row = (time.perf_counter() - t0) / len(rows)

    def block(self) -> int:
        """Examples in the next block: about :attr:`seconds` of work."""
        if self.per_row is None or self.per_row <= 0:
            return self.first
        return max(1, int(min(self.seconds / self.per_row, 2.0**62)))

    def finish(
        self, rest: np.ndarray, out_ptr: np.ndarray, out_act_ptr: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
        """End the pass (the examples ``rest`` not visited keep their duals): the new duals
        by example (indices and values, ``out_ptr`` filled), the new active leaves
        (``out_act_ptr`` filled) and the pass's largest and smallest projected gradients."""
        a_ptr, a_idx, a_val, act_ptr, act_idx = (self.args[i] for i in (13, 14, 15, 19, 20))
        if len(rest):
            keep: Any = _KEEP_ROWS if self.compiled else _keep_rows
            self.bufs = keep(
                rest, a_ptr, a_idx, a_val, act_ptr, act_idx, self.at, self.ln, self.used,
                *self.bufs,
            )  # fmt: skip
        buf_idx, buf_val, act_buf, act_val = self.bufs
        idx, val = BY_EXAMPLE(self.at[0], self.ln[0], out_ptr, buf_idx, buf_val)
        act_new, _ = BY_EXAMPLE(self.at[1], self.ln[1], out_act_ptr, act_buf, act_val)
        pg = self.scratch[-1]
        return idx, val, act_new, float(pg[0]), float(pg[1])


#: the compiled helpers of the pass (the Python ones without numba)
ENTER_ROW: Any = njit(_enter_row) or _enter_row
SCORES_ON_PATHS: Any = njit(_scores_on_paths) or _scores_on_paths
VISIT: Any = njit(_visit_leaves) or _visit_leaves
WRITE_ROW: Any = njit(_write_row) or _write_row
GROWN: Any = njit(_grown) or _grown
ROW_TIMES: Any = sparse_row_times or sparse_row_times_py
PATH_STEP: Any = njit(_path_step) or _path_step
UPDATE_S: Any = njit(_update_s) or _update_s
BY_EXAMPLE: Any = njit(_by_example) or _by_example
_PASS_ROWS: Any = njit(_pass_rows_kernel)
_KEEP_ROWS: Any = njit(_keep_rows)


def _csr_parts(M: Any, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``indptr`` and ``indices`` (int64) of a sparse matrix as CSR; empty rows for None."""
    if M is None:
        return np.zeros(n_rows + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    R = sp.csr_matrix(M)
    R.eliminate_zeros()
    R.sort_indices()
    return R.indptr.astype(np.int64), R.indices.astype(np.int64)


def _path_sums(ST: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``W^T`` of the nodes of a CSR path list: ``out[f, k] = sum_{j in path k} S^T[f, j]``,
    shape (n_features, len(ptr) - 1), summed along each path in order (as the pass sums)."""
    out = np.zeros((ST.shape[0], ptr.shape[0] - 1))
    for f in range(ST.shape[0]):
        for k in range(ptr.shape[0] - 1):
            P = 0.0
            for e in range(ptr[k], ptr[k + 1]):
                P += ST[f, idx[e]]
            out[f, k] = P
    return out


def _path_sums_numpy(ST: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`_path_sums` one path position at a time (the same additions in the same order)."""
    depth = np.diff(ptr)
    out = np.zeros((ST.shape[0], len(depth)))
    for q in range(int(depth.max(initial=0))):
        ks = np.flatnonzero(depth > q)
        out[:, ks] += ST[:, idx[ptr[ks] + q]]
    return out


_PATH_SUMS = njit(_path_sums)


def path_sums(ST: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`_path_sums`, compiled when numba is on (else its numpy form, bit-identical)."""
    if jit_enabled() and _PATH_SUMS is not None:
        return np.asarray(_PATH_SUMS(ST, ptr, idx))
    return _path_sums_numpy(ST, ptr, idx)


def path_sums_by_node(ST: np.ndarray, ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """:func:`path_sums` transposed, shape (len(ptr) - 1, n_features) (``W`` by node), formed a
    block of :data:`~hierlab.core.objective.CHUNK` numbers of features at a time: the same
    sums, without a second (n_features, n_nodes) array to transpose (1.8 GB at 10^4 leaves)."""
    K, d = ptr.shape[0] - 1, ST.shape[0]
    out = np.empty((K, d))
    step = max(1, CHUNK // max(1, K))
    for f in range(0, d, step):
        out[:, f : f + step] = path_sums(ST[f : f + step], ptr, idx).T
    return out


def leaf_scores(
    Xc: sp.csr_matrix, ST: np.ndarray, anc_ptr: np.ndarray, anc_idx: np.ndarray
) -> np.ndarray:
    """The leaves' scores ``w_k^T x_i`` of a block of rows, shape (rows, n_leaves), from
    ``S`` without forming ``W``: the node scores ``x_i^T S^T`` summed along each leaf's path
    (the paths ``A+(k)`` as CSR; uncoupled, each leaf's own column)."""
    Z = np.asarray(Xc @ ST)
    L = anc_ptr.shape[0] - 1
    if L == ST.shape[1] and anc_idx.shape[0] == L and np.array_equal(anc_idx, np.arange(L)):
        return Z
    return path_sums(Z, anc_ptr, anc_idx)


def block_rows(n_leaves: int, chunk: int | None = None) -> int:
    """Rows per block of a certificate: ``chunk``, or as many as keep a block's (rows,
    n_leaves) scores within :data:`~hierlab.core.objective.CHUNK` numbers (32 MB)."""
    return int(chunk) if chunk is not None else max(1, CHUNK // max(1, n_leaves))


def _bounds(
    prob: HRProblem, X: sp.csr_matrix, ST: np.ndarray, alpha_sum: float, anc_ptr: np.ndarray,
    anc_idx: np.ndarray, chunk: int | None = None, labels: tuple[Any, Any] | None = None,
    alpha_sq: float = 0.0, progress: Any = None,
) -> tuple[float, float]:
    """``J(W)`` at ``W = A S`` and ``D(alpha) = sum alpha - 1/2 ||S||^2`` (model.py's bounds;
    the squared hinge ``(1 - y z)_+^2``: also ``- sum alpha^2 / (4 C)``, ``alpha_sq`` the sum of
    the squared duals).

    The regulariser is ``1/2 ||B W||^2 = 1/2 ||S||^2`` (``B = A^{-1}``); the hinge losses are
    summed over blocks of ``chunk`` rows (default :func:`block_rows`: 32 MB of scores), every
    pair first as a negative, then the positive and switched-off pairs corrected from their
    sparse indicators: nothing of shape (n_samples, n_leaves) is held beyond one block.

    Parameters
    ----------
    ST : ndarray of shape (n_features, n_nodes)
        ``S^T`` of the duals (the pass's running sums).
    alpha_sum : float
        ``sum alpha_in``.
    anc_ptr, anc_idx : ndarray
        The leaves' paths ``A+(n)`` (CSR, leaf by leaf).
    labels : (csr_matrix, csr_matrix or None), optional
        ``prob.positive`` and ``prob.excluded`` as CSR (by rows, for the blocks), when the
        caller holds them already.
    progress : callable, optional
        ``progress(share)`` after each block, ``share`` the rows done over all.
    """
    reg = 0.5 * float(np.einsum("ij,ij->", ST, ST))
    pos, exc = labels if labels is not None else _label_rows(prob)
    power = 2 if prob.loss == "squared_hinge" else 1

    def f(t: np.ndarray) -> float:  # the hinge (or its square) summed
        return float((np.maximum(0.0, t) ** power).sum())

    loss = 0.0
    chunk = block_rows(ST.shape[1], chunk)
    for r in range(0, X.shape[0], chunk):
        Z = leaf_scores(X[r : r + chunk], ST, anc_ptr, anc_idx)
        loss += f(1.0 + Z)
        ii, kk = pos[r : r + chunk].nonzero()
        z = Z[ii, kk]
        loss += f(1.0 - z) - f(1.0 + z)
        if exc is not None:
            ii, kk = exc[r : r + chunk].nonzero()
            loss -= f(1.0 + Z[ii, kk])
        if progress is not None:
            progress(min(1.0, (r + chunk) / X.shape[0]))
    return reg + prob.C * loss, alpha_sum - reg - alpha_sq / (4.0 * prob.C)


def pass_inputs(
    prob: HRProblem,
) -> tuple[sp.csr_matrix, np.ndarray, tuple[Any, Any], tuple[np.ndarray, ...]]:
    """What every global pass reads of the problem, built once per fit: ``X`` as float CSR
    (the caller's own is not modified), the rows' ``||x_i||^2``, the label indicators as CSR
    (:func:`_label_rows`) and their ``(pos_ptr, pos_idx, ex_ptr, ex_idx)``."""
    X = sp.csr_matrix(prob.X, dtype=np.float64)
    n = X.shape[0]
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    labels = _label_rows(prob)
    return X, sq, labels, (*_csr_parts(labels[0], n), *_csr_parts(labels[1], n))


def tree_paths(tax: Any) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The leaves' paths ``A+(n)`` (CSR by leaf) and every node's (CSR by node)."""
    A = sp.csr_matrix(tax.ancestor_matrix, dtype=np.float64)
    return (*_csr_parts(A[tax.leaves], len(tax.leaves)), _csr_parts(A, tax.n_nodes))


def _label_rows(prob: HRProblem) -> tuple[sp.csr_matrix, sp.csr_matrix | None]:
    """``prob.positive`` and ``prob.excluded`` (None when there is none) as CSR."""
    exc = None if prob.excluded is None else sp.csr_matrix(prob.excluded)
    return sp.csr_matrix(prob.positive), exc


class PathSumSolver(Solver):
    """What the global solvers share: the leaves' paths (the tree's, or each leaf alone when
    uncoupled) and the weights ``W = A S`` formed on request from the live sums ``S^T``."""

    def __init__(self, coupled: bool = True) -> None:
        self.coupled = coupled
        self._ST: np.ndarray | None = None  # the live sums S^T, set by iterate
        self._paths: tuple[np.ndarray, np.ndarray] | None = None
        self._rows: tuple[np.ndarray, int] | None = None  # uncoupled: the leaves' rows

    def _leaf_paths(self, tax: Any) -> tuple[np.ndarray, np.ndarray]:
        """The leaves' paths ``A+(k)`` as CSR (``anc_ptr``, ``anc_idx``) over the columns of
        ``S``; sets the node paths :attr:`coef` sums (uncoupled: leaf ``k`` is column ``k``
        alone, and the leaves' rows of the nodes)."""
        L = len(tax.leaves)
        if self.coupled:
            anc_ptr, anc_idx, self._paths = tree_paths(tax)
            return anc_ptr, anc_idx
        anc_ptr, anc_idx = np.arange(L + 1, dtype=np.int64), np.arange(L, dtype=np.int64)
        self._paths = (anc_ptr, anc_idx)
        self._rows = (tax.leaves, tax.n_nodes)
        return anc_ptr, anc_idx

    @property  # type: ignore[override]
    def coef(self) -> np.ndarray | None:
        """``W = A S`` at the last pass, shape (n_nodes, n_features), formed on request (every
        node's path sum of ``S``; uncoupled: the leaves' rows, internal rows 0)."""
        if self._ST is None or self._paths is None:
            return None
        if self._rows is None:
            return path_sums_by_node(self._ST, *self._paths)
        rows, n_nodes = self._rows  # uncoupled: each leaf's row is its column of S^T
        out = np.zeros((n_nodes, self._ST.shape[0]))
        out[rows] = self._ST.T
        return out


class GlobalDualCD(PathSumSolver):
    """Dual coordinate descent over every (example, leaf) pair of HR-SVM (module docstring).

    Each iteration is one pass; every ``certify_every`` passes the certificate (the bounds of
    :meth:`~hierlab.methods.hr.model.HRProblem.certificate`, by :func:`_bounds` without a dense
    (n_samples, n_leaves) array) at ``W = A S`` and the pass's duals gives a state: ``upper``
    ``J(W)`` at that pass (the iterate ``coef`` returns: no second copy of ``S`` is kept for
    an earlier, better pass), ``lower`` the largest ``D(alpha)`` so far.

    Parameters
    ----------
    max_iter : int, default 100
        Passes over the examples.
    random_state : int, default 0
        Seed of the passes' orders of examples and leaves.
    use_jit : bool, optional
        Compiled passes; None: as :func:`hierlab.core.jit.jit_enabled`.
    certify_every : int, default 2
        Passes between certificates (and states); the last pass is always certified. A
        certificate costs about one pass (the scores of every leaf), so every second pass keeps
        it to a third of the time.
    shrinking : bool, default True
        Shrinking (after Hsieh et al. 2008): a pair at a bound whose gradient points out of the
        box (``alpha = 0, G > 0`` or ``alpha = C, G < 0``) leaves its example's active list,
        and the passes between full ones visit the active pairs only, forming the node scores
        on their paths only. (Hsieh et al.'s thresholds, the last pass's extreme projected
        gradients, kept almost every pair of IPC titles active.) The bounds cover every pair.
    full_every : int, default 5
        With shrinking, every ``full_every``-th pass (the first included) visits every pair
        and rebuilds the active lists.
    coupled : bool, default True
        False: each leaf's path is the leaf alone, ``w_n = v_n`` and the internal nodes stay 0:
        eq. (2) without the parents, the one-vs-rest L1-loss SVM (seed 001's baseline "SVM"),
        solved for every leaf at once with the same passes and certificate.

    Attributes
    ----------
    coef : ndarray of shape (n_nodes, n_features)
        ``W = A S`` at the last pass (the last state's iterate), formed on request.
    alpha : LeafDuals or None
        The duals of the last pass.
    """

    keeps = "last"  # coef is W at the last pass (formed from the live sums)

    def __init__(
        self,
        max_iter: int = 100,
        random_state: int = 0,
        use_jit: bool | None = None,
        certify_every: int = 2,
        shrinking: bool = True,
        full_every: int = 5,
        coupled: bool = True,
    ) -> None:
        super().__init__(coupled)
        self.max_iter = max_iter
        self.random_state = random_state
        self.use_jit = use_jit
        self.certify_every = certify_every
        self.shrinking = shrinking
        self.full_every = full_every
        self._duals: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]] | None = None

    @property
    def duals(self) -> sp.csr_matrix | None:
        """The duals of the last pass by example, shape (n_samples, n_leaves) (None before)."""
        if self._duals is None:
            return None
        ptr, idx, val, shape = self._duals
        return sp.csr_matrix((val, idx, ptr), shape=shape)

    @property
    def alpha(self) -> LeafDuals | None:
        """The duals of the last pass by leaf (None before the first)."""
        duals = self.duals
        return None if duals is None else LeafDuals.from_sparse(duals)

    @staticmethod
    def _certificate(
        t: int,
        prob: Any,
        X: Any,
        ST: np.ndarray,
        a_val: np.ndarray,
        anc_ptr: np.ndarray,
        anc_idx: np.ndarray,
        labels: Any,
        squared: bool,
        best_lower: float,
        pg: float,
        progress: Any = None,
    ) -> tuple[float, SolverState]:
        """The bounds of the pass-``t`` iterate: the best lower bound so far and the state
        (``progress(share)`` after each block of rows of the bounds)."""
        primal, dual = _bounds(
            prob, X, ST, float(a_val.sum()), anc_ptr, anc_idx, labels=labels,
            alpha_sq=float(a_val @ a_val) if squared else 0.0, progress=progress,
        )  # fmt: skip
        best_lower = max(best_lower, dual)
        extra = {"primal": primal, "dual": dual, "pg_spread": pg}
        state = SolverState(
            iteration=t, elapsed=0.0, upper=float(primal), lower=float(best_lower), extra=extra
        )
        return best_lower, state

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one state per certified pass (``iteration`` counts passes); ``extra``: the
        certificate's ``primal`` and ``dual`` and the pass's projected-gradient spread
        ``pg_spread``."""
        prob: HRProblem = objective
        tax = prob.taxonomy
        X, sq, labels, (pos_ptr, pos_idx, ex_ptr, ex_idx) = pass_inputs(prob)
        n, d = X.shape
        L = len(tax.leaves)
        anc_ptr, anc_idx = self._leaf_paths(tax)
        ST = np.zeros((d, tax.n_nodes if self.coupled else L))
        a_ptr = np.zeros(n + 1, dtype=np.int64)
        a_idx, a_val = np.zeros(0, dtype=np.int64), np.zeros(0)
        rng = np.random.default_rng(self.random_state)
        best_lower = -np.inf
        self._ST = ST  # the live sums: coef is formed from them on request
        act_ptr, act_idx = np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        # shrink a pair at a bound whose gradient points out of the box at all (thresholds 0:
        # on IPC titles Hsieh et al.'s last-pass thresholds kept almost every pair active)
        hi, lo = (0.0, 0.0) if self.shrinking else (np.inf, -np.inf)
        squared = prob.loss == "squared_hinge"  # no box top; dii = 1 / (2 C) on the diagonal
        top, dii = (np.inf, 0.5 / float(prob.C)) if squared else (float(prob.C), 0.0)
        certified, pg = 0, 0.0  # the last pass with a certificate; its gradient spread
        per_row: float | None = None  # seconds per example in the last pass (block sizes)
        for t in range(1, self.max_iter + 2):
            stop = self.interrupted()
            if stop or t > self.max_iter:
                # a stop request between passes: certify the last pass's iterate (the model
                # kept) unless it was, then end
                if stop and t - 1 > certified:
                    certified = t - 1
                    best_lower, state = self._certificate(
                        t - 1, prob, X, ST, a_val, anc_ptr, anc_idx, labels, squared,
                        best_lower, pg, self._certifying(t - 1),
                    )  # fmt: skip
                    yield state
                return
            out_ptr, out_act_ptr = np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, np.int64)
            full = not self.shrinking or (t - 1) % self.full_every == 0
            order = rng.permutation(n)
            blocks = PassBlocks(
                (
                    rng.permutation(L), X.indptr, X.indices, X.data, sq, pos_ptr, pos_idx,
                    ex_ptr, ex_idx, anc_ptr, anc_idx, top, dii, a_ptr, a_idx, a_val, ST, full,
                    self.shrinking, act_ptr, act_idx, hi, lo,
                ),
                self.use_jit,
                per_row,
            )  # fmt: skip
            done = self._sweep(blocks, order, t)
            per_row = blocks.per_row
            a_idx, a_val, act_idx, pg_max, pg_min = blocks.finish(
                order[done:], out_ptr, out_act_ptr
            )
            a_ptr, act_ptr = out_ptr, out_act_ptr
            self._duals = (a_ptr, a_idx, a_val, (n, L))
            pg = float(pg_max - pg_min)
            if done < n:  # stopped inside the pass: certify the iterate it reached, and end
                best_lower, state = self._certificate(
                    t, prob, X, ST, a_val, anc_ptr, anc_idx, labels, squared, best_lower, pg,
                    self._certifying(t - 1 + done / n),
                )  # fmt: skip
                yield dataclasses.replace(
                    state, extra={**state.extra, "epoch": t - 1 + done / n, "partial": True}
                )
                return
            if t % self.certify_every and t < self.max_iter:
                continue
            certified = t
            best_lower, state = self._certificate(
                t, prob, X, ST, a_val, anc_ptr, anc_idx, labels, squared, best_lower, pg,
                self._certifying(t),
            )  # fmt: skip
            yield state

    def _certifying(self, passes: float) -> Any:
        """``progress(share)`` of the certificate of the iterate after ``passes`` passes: its
        share reported by :meth:`~hierlab.core.solver.Solver.within_pass` (a stop requested
        meanwhile waits for the certificate: the iterate kept is certified)."""
        return lambda share: self.within_pass(passes, f"certificate {share:.0%}")

    def _sweep(self, blocks: PassBlocks, order: np.ndarray, t: int) -> int:
        """Pass ``t`` over ``order`` a block at a time, its progress reported after each
        (:meth:`~hierlab.core.solver.Solver.within_pass`); the examples visited (fewer than
        all when a stop was requested)."""
        n, done = order.shape[0], 0
        while done < n:
            end = min(n, done + blocks.block())
            blocks.run(order[done:end])
            done = end
            if self.within_pass(t - 1 + done / n) and done < n:
                break
        return done
