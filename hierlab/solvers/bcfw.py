"""Block-coordinate Frank-Wolfe on the dual of the seed-000 problems, with certified bounds.

Every training problem of seed 000 reads ``J(W) = R(W) + sum_b max_r (L_br - <W, U_br x_b^T>)``
(:class:`~hierlab.core.model.DualBlocks`: one block ``b`` of labels per example, or per example
and internal node for HIERMULT; weights and ``C`` folded into ``L`` and ``U``). For a
quadratic ``R(W) = 1/2 tr(W^T Q W)`` (L2: FLATMULT, HIERMULT, TREELOSS; TRANSFER's ``I + L``)
the Lagrange dual of the slack QP is

    D(alpha) = sum_b alpha_b . L_b - 1/2 tr(V^T Q^{-1} V),   V = sum_b (U_b^T alpha_b) x_b^T,

over one simplex ``alpha_b`` per block, with ``W(alpha) = Q^{-1} V``. This is the setting of
Lacoste-Julien, Jaggi, Schmidt and Pletscher (ICML 2013, "Block-coordinate Frank-Wolfe
optimization for structural SVMs"): each step picks one block, finds its most violated label by
loss-augmented inference at the current ``W`` (the Frank-Wolfe vertex) and moves ``alpha_b``
towards it with an exact line search. Here each visit of an example makes up to ``inner``
*pairwise* Frank-Wolfe steps on its blocks (mass moves from the worst active label to the most
violated one; Lacoste-Julien & Jaggi 2015), which only touch the example's ``m``-vector of scores:
``s_k <- s_k + gamma ||x_k||^2 Q^{-1} d``, so the sparse row is read and written once per visit.

**Cost at many classes.** A label's direction touches a few nodes (a sibling pair, or the two
root paths of FLATMULT/TREELOSS), so the tables are kept as sparse label rows
(:func:`_csr_tables`): finding the most violated label costs the non-zeros of the block's
labels, O(m D) for the flat models (D the depth), not O(m^2); with a diagonal metric a step
touches only the nodes of ``u_a - u_v``. The certificate's losses are evaluated a chunk of
examples at a time (:meth:`~hierlab.core.objective.Objective.summed_loss`). On IPC titles (645
leaves, 52,530 rows) one FLATMULT epoch went from about 100 s to 2.5 s and the peak from
10 GB to 1.4 GB. The flat models (FLATMULT, TREELOSS) keep no tables at all: a block's labels
are formed on the fly from the ancestor rows (:mod:`hierlab.solvers.bcfw_flat`, the same
arithmetic as the tables), and their dual variables are one active set per block (the labels
with mass), so nothing grows with (labels x candidates) or (examples x candidates).

**Certificate.** Any feasible ``alpha`` gives ``D(alpha) <= J*`` (weak duality) and any ``W``
gives ``J* <= J(W)``. After every epoch ``W(alpha)`` is recomputed exactly from the dual variables
(``V = X^T B``, one sparse-dense product, which also removes the drift of the incremental
updates), and the solver reports ``lower = max D`` and ``upper = min J(W)`` over the epochs;
:attr:`BCFW.coef` is the ``W`` that gave ``upper``. Their difference is the Frank-Wolfe duality
gap, the certificate of Lacoste-Julien et al.

**Progress within an epoch.** On large data an epoch runs in chunks of examples (the same steps
in the same order) and, every ``report_every`` seconds, yields a state marked ``exact=False``
that keeps the last exact bounds and adds the running duality-gap estimate of Lacoste-Julien et
al. (2013): the sum over examples of their blocks' Frank-Wolfe gaps ``max_r h_r - alpha_b . h``
measured at their last visit (at one ``W`` these sum to ``J(W(alpha)) - D(alpha)`` for a
quadratic regularizer; tested). A cold start first reports the exact state of ``W = 0``.

**ORTHOGNL.** ``Omega(W) = 1/2 sum_ij K_ij |w_i^T w_j|`` is not quadratic, but it is the maximum
over the box ``sigma_ij in [-1, 1]`` (``sigma`` symmetric, unit diagonal) of the quadratics
``1/2 tr(W^T K_sigma W)`` with ``K_sigma = K o sigma``, each positive definite when the
comparison matrix is (``x^T K_sigma x >= |x|^T Kbar |x| >= lambda_min ||x||^2``, seed 000 Theorem
1). So ``J = max_sigma J_sigma`` with ``J_sigma <= J`` convex, and by the minimax theorem

    J* = max_{sigma, alpha} D(alpha, sigma),
    D(alpha, sigma) = alpha . L - 1/2 tr(K_sigma^{-1} V V^T),

which is jointly concave (the matrix-fractional function ``tr(V^T K^{-1} V)`` is jointly convex in
``(V, K)``). Every ``D(alpha, sigma)`` is therefore a certified lower bound on the ORTHOGNL optimum.
The solver runs block-coordinate Frank-Wolfe on the product domain: the example blocks as above
with ``Q = K_sigma``, and once per epoch the ``sigma`` block, maximised exactly over the box
(L-BFGS-B on ``m x m`` matrices only: ``V V^T`` is computed once per epoch; the gradient in
``sigma_ij`` is ``K_ij (W W^T)_ij``, so its Frank-Wolfe vertex is the sign pattern of
``W W^T = K_sigma^{-1} V V^T K_sigma^{-1}``). At the optimum ``sigma_ij = sign(w_i^T w_j)``
wherever ``w_i^T w_j != 0``, ``J_sigma(W) = J(W)`` and the gap closes.

**The metric.** The solver never asks which regularizer it has: each one supplies its dual
metric (:meth:`~hierlab.core.regularizers.Regularizer.dual_metric`), ``P = Q^{-1}`` of a
quadratic (:class:`~hierlab.core.regularizers.DualMetric`) or ORTHOGNL's sign relaxation with
its ``sigma`` step (:class:`~hierlab.core.regularizers.SignRelaxedMetric`). ``P`` is diagonal,
dense, or (TRANSFER's ``I + L``, ORTHOGNL's ``K_sigma``: nonzeros on the tree's ancestor pairs)
held as ``Q``'s fill-free ``L D L^T`` (:mod:`hierlab.core.ancestor_ldl`): then a step's ``P d``
sweeps only the top-level subtrees ``d`` touches, and nothing of size (n_nodes, n_nodes) exists.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ConvergenceError, ParameterError
from hierlab.core.jit import jit_enabled, njit, sparse_row_times
from hierlab.core.model import DualBlocks, dense
from hierlab.core.objective import Objective
from hierlab.core.regularizers import DualMetric
from hierlab.core.solver import Solver, SolverState
from hierlab.solvers.bcfw_flat import CURVATURE, TAKE_STEP, UPDATE_W, FlatBlocks
from hierlab.solvers.rda import check_budget

__all__ = ["BCFW", "ESTIMATE_SLACK"]


#: how far above the certified gap BCFW's running Frank-Wolfe estimate may run: a caller that
#: stops at relative gap ``rtol`` certifies the epochs whose estimate is below this times it
#: (``certify_below``)
ESTIMATE_SLACK = 2.0


def _diverged(epoch: int, what: str = "a step's curvature overflowed") -> ConvergenceError:
    """The error raised when an epoch's arithmetic overflows (``what`` says where)."""
    return ConvergenceError(
        f"BCFW diverged at iteration {epoch}: {what}. Check the data for very large values, "
        "or lower C."
    )


#: ``B`` (examples x nodes) densified for ``X^T B`` up to this many entries (32 MB)
DENSE_B_ENTRIES = 2**22
#: a block of one example in the Python pass: its id, its table's ``U`` (sparse rows) and ``L``,
#: and the start of its dual variables in the flat ``alpha``
_Block = tuple[int, sp.csr_matrix, np.ndarray, int]


def _csr_tables(
    tables: list[tuple[Any, np.ndarray]], C: float, m: int
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """The label tables scaled by ``C``, as one sparse matrix of label rows.

    A label's direction ``U_r`` touches a few nodes (a sibling pair, or two root paths), so the
    tables are kept sparse: the memory is the number of non-zeros, not (labels x nodes), and a
    label's violation ``L_r - U_r . s`` costs its own non-zeros, not ``m``.

    Returns
    -------
    U : csr_matrix of shape (n_labels, m)
        Directions of every table's labels, table after table.
    L : ndarray of shape (n_labels,)
        Losses.
    lab_ptr : ndarray of int, shape (n_tables + 1,)
        Table ``t`` holds the labels ``lab_ptr[t]:lab_ptr[t + 1]`` (its null label last).
    """
    U = sp.vstack([sp.csr_matrix(Ut, shape=(len(Lt), m)) for Ut, Lt in tables], format="csr")
    U.sum_duplicates()
    U.eliminate_zeros()
    U = sp.csr_matrix(U * C, dtype=np.float64)
    L = C * np.concatenate([np.asarray(Lt, dtype=np.float64) for _, Lt in tables])
    sizes = np.array([len(Lt) for _, Lt in tables], dtype=np.int64)
    return U, L, np.r_[0, np.cumsum(sizes)].astype(np.int64)


class _Dual:
    """The dual of one objective as BCFW walks it (one per solve).

    Built once: the label tables of the model's :class:`~hierlab.core.model.DualBlocks`
    (scaled by ``C``, one sparse matrix of label rows, :func:`_csr_tables`), the blocks of every
    example, the examples' CSR rows and the regularizer's metric. Updated by the epochs: the
    dual variables ``alpha`` (flat: block ``b`` owns ``alpha[a_ptr[b]:a_ptr[b + 1]]``, one per
    label of its table) and ``W(alpha)^T``.
    Dense input is read through its CSR form: the passes and ``V = X^T B`` then do the same
    floating-point operations for dense and sparse ``X`` (exact ties between labels, which the
    pairwise line search creates, are then broken identically).
    Memory: the non-zeros of the tables, one dual variable per (block, label of its table), and
    ``W``; never a (labels x nodes) or (examples x nodes) dense array. For the flat models
    (``flat``, :class:`~hierlab.solvers.bcfw_flat.FlatBlocks`) no tables and only the labels
    with mass: O(m D + n x active); ``alpha`` is then unused and the flat or padded layouts
    are formed on request (:meth:`flat_alpha`, :meth:`padded`, O(n x candidates)).
    """

    def __init__(self, objective: Objective, dual_init: np.ndarray | None = None) -> None:
        X = objective.X
        self.n, self.m, self.n_blocks = X.shape[0], objective.shape[0], objective.n_blocks
        implicit = getattr(objective.model, "implicit_blocks", None)
        #: the flat models' blocks without tables (labels formed on the fly), or None
        self.flat: FlatBlocks | None = (
            implicit(objective.y, objective.C) if implicit is not None else None
        )
        if self.flat is not None:  # one block per example, each its own "table"
            self.sizes = self.flat.rows
            self.bex = self.btab = np.arange(self.n, dtype=np.int64)
            self.table_block = np.zeros(self.n, dtype=np.int64)
            max_loss = self.flat.max_loss
        else:
            blocks: DualBlocks = objective.model.dual_blocks(objective.y)
            self.U, self.L, self.lab_ptr = _csr_tables(blocks.tables, objective.C, self.m)
            #: labels of each table (the null label last)
            self.sizes = np.diff(self.lab_ptr)
            self.bex = np.asarray(blocks.block_example, dtype=np.int64)
            self.btab = np.asarray(blocks.block_table, dtype=np.int64)
            # separable problems (HIERMULT): the objective block of each table (its rows' block)
            bor = np.asarray(objective.block_of_row, dtype=np.int64)
            ip = self.U.indptr
            nonempty = np.diff(ip) > 0
            label_block = np.full(len(self.L), self.n_blocks, dtype=np.int64)
            if self.U.nnz:
                label_block[nonempty] = np.minimum.reduceat(bor[self.U.indices], ip[:-1][nonempty])
            self.table_block = np.minimum.reduceat(label_block, self.lab_ptr[:-1])
            max_loss = float(np.max(np.abs(self.L)))
        self.R = int(self.sizes.max())
        self.bstart = np.asarray(np.searchsorted(self.bex, np.arange(self.n + 1)), dtype=np.int64)
        self.a_ptr = np.r_[0, np.cumsum(self.sizes[self.btab])].astype(np.int64)
        self.Xs = sp.csr_matrix(X)
        #: dense X: ``V = X^T B`` as ``(B^T X)^T`` (same sums in the same order as the CSR
        #: product, bit for bit, without a sparse-sparse product of a full matrix)
        self.Xd = None if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        self.sqn = np.asarray(self.Xs.multiply(self.Xs).sum(axis=1)).ravel()  # ||x_k||^2
        self.XT = objective.XT if objective.XT is not None else sp.csr_matrix(self.Xs.T)
        self.eps = 1e-12 * max(max_loss, 1e-300)
        self.metric: DualMetric = objective.regularizer.dual_metric()
        if self.flat is not None:  # the flat models keep the labels with mass only
            self.flat.start_alpha(dual_init, self.a_ptr)
            self.alpha = np.zeros(0)  # unused: the active sets of ``flat`` hold the dual
        else:
            self.alpha = self.initial_alpha(dual_init)
        #: Frank-Wolfe gap of each example's blocks at its last visit (their sum: the running
        #: duality-gap estimate of Lacoste-Julien et al. 2013); NaN until visited
        self.fw_gap = np.full(self.n, np.nan)
        # W^T: rows of the sparse X index rows of WT; W(alpha) of a warm start
        if dual_init is None:
            self.WT = np.zeros((objective.shape[1], self.m))
        else:
            self.WT = self.weights()

    @functools.cached_property
    def rows(self) -> list[tuple[np.ndarray, np.ndarray, list[_Block]]]:
        """Per example, for the Python pass only (built on its first use): its CSR columns and
        values and its blocks ``(b, U_t, L_t, a_ptr[b])`` (table ``t``'s sparse rows)."""
        ip, ind, dat = self.Xs.indptr, self.Xs.indices, self.Xs.data
        lp = self.lab_ptr
        tables = [
            (self.U[lp[t] : lp[t + 1]], self.L[lp[t] : lp[t + 1]]) for t in range(len(self.sizes))
        ]
        return [
            (
                ind[ip[k] : ip[k + 1]],
                dat[ip[k] : ip[k + 1]],
                [
                    (b, *tables[self.btab[b]], int(self.a_ptr[b]))
                    for b in range(self.bstart[k], self.bstart[k + 1])
                ],
            )
            for k in range(self.n)
        ]

    def initial_alpha(self, dual_init: np.ndarray | None) -> np.ndarray:
        """The starting dual point (flat, see the class docstring): ``dual_init`` checked and
        normalised, or every block at its null label.

        ``dual_init`` is either flat, shape (n_alpha,), or padded, shape (n_blocks, R) (the
        layout of :attr:`BCFW.alpha_`)."""
        nb, R = len(self.bex), self.R
        rows = self.sizes[self.btab]
        if dual_init is None:
            alpha = np.zeros(int(self.a_ptr[-1]))
            alpha[self.a_ptr[1:] - 1] = 1.0
            return alpha
        if sp.issparse(dual_init):  # a sparse row (:attr:`BCFW.alpha_sparse_`)
            dual_init = sp.csr_matrix(dual_init).toarray().ravel()
        given = np.array(dual_init, dtype=np.float64)
        if given.ndim == 2 and given.shape == (nb, R):
            if np.any(given[np.arange(R)[None, :] >= rows[:, None]] != 0):
                raise ParameterError("dual_init puts mass on labels a block does not have")
            given = given[np.arange(R)[None, :] < rows[:, None]]
        if given.shape != (int(self.a_ptr[-1]),) or (given < 0).any():
            raise ParameterError(
                f"dual_init must be non-negative of shape {(int(self.a_ptr[-1]),)} "
                f"or {(nb, R)}, got {np.shape(dual_init)}"
            )
        total = np.add.reduceat(given, self.a_ptr[:-1]) if nb else given[:0]
        return given / np.repeat(total, rows)

    def normalise(self) -> None:
        """Put every block's dual variables back on its simplex (rounding)."""
        if self.flat is not None:
            self.flat.normalise(self.a_ptr)
        elif len(self.alpha):
            sizes = np.diff(self.a_ptr)
            totals = np.add.reduceat(self.alpha, self.a_ptr[:-1])
            if np.all(sizes == sizes[0]):  # one table size: in place, no (n x R) temporary
                self.alpha.reshape(len(sizes), int(sizes[0]))[:] /= totals[:, None]
            else:
                self.alpha /= np.repeat(totals, sizes)

    def finite(self) -> bool:
        """Whether every dual variable is finite."""
        a = self.flat.act_a if self.flat is not None else self.alpha
        return bool(np.isfinite(a).all())

    def flat_alpha(self) -> np.ndarray:
        """The dual variables, flat (block ``b``'s labels at ``a_ptr[b]:a_ptr[b + 1]``); for
        the flat models formed from the active sets, O(n x candidates), on request."""
        return self.flat.flat_alpha(self.a_ptr) if self.flat is not None else self.alpha

    def sparse_alpha(self) -> sp.csr_matrix:
        """The dual variables as a sparse row (1, n_alpha): the labels with mass only."""
        if self.flat is not None:
            return self.flat.sparse_alpha(self.a_ptr)
        return sp.csr_matrix(self.alpha.reshape(1, -1))

    def padded(self, alpha: np.ndarray) -> np.ndarray:
        """``alpha`` as (n_blocks, R): block ``b``'s labels, then zeros."""
        if self.flat is not None:
            return self.flat.padded()
        rows = self.sizes[self.btab]
        out = np.zeros((len(self.bex), self.R))
        out[np.arange(self.R)[None, :] < rows[:, None]] = alpha
        return out

    def dual_point(self, alpha: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """``B`` (n, m), sparse, with ``V = X^T B``, and the linear dual term of each objective
        block.

        Frank-Wolfe keeps ``alpha`` sparse (a block's mass sits on the labels its steps
        touched), so ``B`` is one sparse product over the labels with mass."""
        if self.flat is not None:  # from the active sets (``alpha`` is not used)
            return self.flat.dual_point(self.n)
        idx = np.flatnonzero(alpha)
        blk = np.searchsorted(self.a_ptr, idx, side="right") - 1
        a = alpha[idx]
        label = self.lab_ptr[self.btab[blk]] + (idx - self.a_ptr[blk])
        mass = sp.csr_matrix((a, (self.bex[blk], label)), shape=(self.n, len(self.L)))
        B = sp.csr_matrix(mass @ self.U)
        ell = np.bincount(
            self.table_block[self.btab[blk]], weights=a * self.L[label], minlength=self.n_blocks + 1
        )
        return B, ell

    def VT(self, B: sp.csr_matrix) -> np.ndarray:
        """``V^T = X^T B``, dense, shape (n_features, n_rows).

        For CSR ``X`` a ``B`` of at most :data:`DENSE_B_ENTRIES` entries is densified first:
        one sparse-dense product instead of scipy's two-pass sparse-sparse one (20 Newsgroups,
        27 nodes: 29 ms against 86 ms), the same sums in the same order (``B``'s zeros add
        nothing)."""
        if self.Xd is not None:  # C order: the passes read rows of W^T
            return np.ascontiguousarray(np.asarray(B.T @ self.Xd).T)
        if B.shape[0] * B.shape[1] <= DENSE_B_ENTRIES:
            return np.asarray(self.XT @ B.toarray())
        return dense(self.XT @ B)

    def weights(self) -> np.ndarray:
        """``W(alpha)^T``, shape (n_features, n_rows), C-contiguous."""
        B = self.dual_point(self.alpha)[0]
        return np.ascontiguousarray(self.metric.apply(self.VT(B)))


class BCFW(Solver):
    """Block-coordinate (pairwise) Frank-Wolfe on the dual, with certified bounds.

    One :class:`~hierlab.core.solver.SolverState` per epoch (a pass over the examples in a
    random order): ``upper = min J(W)``, ``lower = max D`` (a dual objective value, see the
    module docstring), so ``lower <= J* <= upper`` at every epoch. The metric of the dual comes
    from the objective's regularizer (:meth:`~hierlab.core.regularizers.Regularizer.
    dual_metric`).

    Parameters
    ----------
    max_iter : int, default 200
        Epochs.
    max_time : float, optional
        Seconds of solver time after which the generator stops (unconverged).
    inner : int, default 10
        At most this many pairwise Frank-Wolfe steps per block and visit (the first is the plain
        Frank-Wolfe step from the null label at the start). They only touch the block's
        ``m``-vector of scores, so they are cheap next to reading the sparse row.
    inner_rtol : float, default 0.1
        A visit stops once the pair gap falls below ``inner_rtol`` times its first pair gap.
    random_state : int, default 0
        Seed of the visiting order.
    use_jit : bool, optional
        Run the per-example pass with the compiled kernel (numba; the same steps at machine
        speed). None: when :func:`hierlab.core.jit.jit_enabled`.
    report_rows : int or None, default 2048
        Stream progress within an epoch on large data: with more than ``2 * report_rows``
        examples the pass runs ``report_rows`` examples at a time (the same steps in the same
        order) and, at most every ``report_every`` seconds of solver time, yields a state
        marked ``extra["exact"] = False`` whose ``extra["gap_estimate"]`` is the running
        block-coordinate Frank-Wolfe duality-gap estimate (the sum over examples of their
        blocks' Frank-Wolfe gaps at their last visit; Lacoste-Julien et al. 2013, Section 4).
        Its ``upper``/``lower`` stay those of the last exact checkpoint (certified), and a
        cold start first yields the exact state of ``W = 0`` (iteration 0: ``upper = J(0)``,
        ``lower = 0``, the dual value at the null labels). None: one state per epoch.
    report_every : float, default 0.5
        Seconds of solver time between in-epoch states (0: after every chunk).
    certify_every : int, default 1
        Epochs between exact checkpoints (the last epoch, and one that runs out of
        ``max_time``, are always certified). A checkpoint recomputes ``W(alpha)`` and both
        bounds, about one pass over the data: where it costs as much as an epoch's steps
        (TREELOSS on many classes) every second epoch saves a third of the time.
    certify_below : float, optional
        Also skip the checkpoint of an epoch whose running Frank-Wolfe gap estimate (as in
        ``report_rows``) is above ``certify_below`` times the last certified ``upper``: a caller
        that stops at that relative gap certifies only where the estimate says it may stop
        (the first epoch unless ``upper_hint`` is given, the last, and one that runs out of
        ``max_time`` are certified). The estimate is taken before each block's steps, so it
        runs above the certified gap (1.1-2.3 times it on 20 Newsgroups, IPC titles and a
        dense toy set): a caller stopping at relative gap ``rtol`` passes
        ``ESTIMATE_SLACK * rtol``.
    upper_hint : float, optional
        The scale ``certify_below`` compares with before the first checkpoint: a warm start
        that knows about where its objective is (the Shared SVM's ``J`` after its alpha step)
        skips the first epoch's checkpoint too when the estimate is far from a stop.
    dual_init : ndarray of shape (n_alpha,) or (n_blocks, max_labels), optional
        Warm start: dual variables of an earlier run on the same blocks (the :attr:`alpha_` of
        a solve of the same examples, labels and losses, e.g. with other class attributes:
        the simplices do not depend on them, so the old point stays feasible). ``W`` starts at
        ``W(alpha)``. None: every block starts at its null label (``W = 0``).

    Attributes
    ----------
    coef : ndarray of shape (n_rows, n_features)
        The ``W`` that gave ``upper``.
    alpha_ : ndarray of shape (n_blocks, max_labels)
        The dual variables (one simplex per block, padded with zeros); formed on request from
        the solver's flat :attr:`alpha_flat_` (one entry per label of each block's table).
    """

    @property
    def alpha_(self) -> np.ndarray:
        """The dual variables padded to (n_blocks, max_labels)."""
        return self._dual.padded(self._dual.alpha)

    @property
    def alpha_flat_(self) -> np.ndarray:
        """The dual variables, flat: block ``b``'s labels at ``a_ptr[b]:a_ptr[b + 1]``."""
        return self._dual.flat_alpha()

    @property
    def implicit_blocks_(self) -> FlatBlocks | None:
        """The implicit blocks (labels formed on the fly, :mod:`.bcfw_flat`) of the last run,
        or None when it used explicit tables."""
        return self._dual.flat

    @property
    def alpha_sparse_(self) -> sp.csr_matrix:
        """The dual variables as a sparse row of shape (1, n_alpha) (the flat layout): the
        labels with mass only, what a warm start (``dual_init``) needs."""
        return self._dual.sparse_alpha()

    def __init__(
        self,
        max_iter: int = 200,
        max_time: float | None = None,
        inner: int = 10,
        inner_rtol: float = 0.1,
        random_state: int = 0,
        use_jit: bool | None = None,
        dual_init: np.ndarray | None = None,
        report_rows: int | None = 2048,
        report_every: float = 0.5,
        certify_every: int = 1,
        certify_below: float | None = None,
        upper_hint: float | None = None,
    ) -> None:
        self.max_iter, self.max_time = check_budget(max_iter, max_time)
        if int(certify_every) < 1:
            raise ParameterError(f"certify_every must be >= 1, got {certify_every!r}")
        self.certify_every = int(certify_every)
        self.certify_below = None if certify_below is None else float(certify_below)
        self.upper_hint = None if upper_hint is None else float(upper_hint)
        if int(inner) < 1:
            raise ParameterError(f"inner must be >= 1, got {inner!r}")
        self.inner = int(inner)
        self.inner_rtol = float(inner_rtol)
        self.random_state = random_state
        self.use_jit = use_jit
        self.dual_init = dual_init
        if report_rows is not None and int(report_rows) < 1:
            raise ParameterError(f"report_rows must be >= 1 or None, got {report_rows!r}")
        if not report_every >= 0:
            raise ParameterError(f"report_every must be >= 0, got {report_every!r}")
        self.report_rows = None if report_rows is None else int(report_rows)
        self.report_every = float(report_every)
        self.coef = None

    def iterate(self, objective: Objective) -> Iterator[SolverState]:
        """Run BCFW on ``objective``; yield one exact state per epoch (and, on large data,
        estimate states within it: see ``report_rows``)."""
        t_start = time.perf_counter()
        dual = _Dual(objective, self.dual_init)
        self._dual = dual
        nob = objective.n_blocks
        upper = np.full(nob, np.inf)
        lower = np.full(nob, -np.inf)
        row_block = np.r_[np.arange(nob), -1][objective.block_of_row]  # rows in no block: -1
        self.coef = np.zeros(objective.shape)
        rng = np.random.default_rng(self.random_state)
        use_jit = jit_enabled() if self.use_jit is None else self.use_jit
        run_pass = self._kernel_pass if use_jit and _PASS_KERNEL is not None else self._python_pass
        chunk = self.report_rows
        stream = chunk is not None and dual.n > 2 * chunk
        step = chunk if stream and chunk is not None else max(dual.n, 1)
        spent = 0.0
        if stream and self.dual_init is None:
            if (start := self._objective_at_zero(objective)) is None:  # a stop was requested
                return
            upper, lower = start
            spent = time.perf_counter() - t_start
            yield self._zero_state(dual, upper, spent)
            t_start = time.perf_counter()
        spent += time.perf_counter() - t_start
        for epoch in range(1, self.max_iter + 1):
            t0 = time.perf_counter()
            since = 0.0  # solver seconds since the last state
            order = rng.permutation(dual.n)
            steps = 0
            for a in range(0, dual.n, step):
                if self.within_pass(epoch - 1 + a / dual.n):  # a stop: the last certified W
                    return
                t1 = time.perf_counter()
                steps += run_pass(dual, order[a : a + step], epoch)
                since += time.perf_counter() - t1
                if (
                    stream
                    and a + step < dual.n
                    and since >= self.report_every
                    and np.isfinite(upper).all()
                    and not np.isnan(dual.fw_gap).any()
                ):
                    spent += time.perf_counter() - t0
                    since = 0.0
                    done = epoch - 1 + (a + step) / dual.n
                    yield self._estimate_state(dual, upper, lower, epoch, done, steps, spent)
                    t0 = time.perf_counter()
            out_of_time = self.max_time is not None and spent + time.perf_counter() - t0 >= (
                self.max_time
            )
            if epoch < self.max_iter and not out_of_time and (
                epoch % self.certify_every or self._far(dual, upper)
            ):
                spent += time.perf_counter() - t0
                continue
            if (certified := self._certify(dual, objective, epoch)) is None:
                return  # stopped on request during the checkpoint
            D, J, sig_steps = certified
            upper = self._keep_best(dual.WT, J, upper, row_block)
            lower = np.maximum(lower, D)
            spent += time.perf_counter() - t0
            yield SolverState(
                iteration=epoch,
                elapsed=spent,
                upper=float(upper.sum()),
                lower=float(lower.sum()),
                extra={
                    "gap": float(upper.sum() - lower.sum()),
                    "objective": float(J.sum()),
                    "dual": float(D.sum()),
                    "steps": steps,
                    "sigma_steps": sig_steps,
                    "exact": True,
                    "epoch": float(epoch),
                },
            )
            if self.max_time is not None and spent >= self.max_time:
                return

    def _far(self, dual: _Dual, upper: np.ndarray) -> bool:
        """True when ``certify_below`` is set and the running Frank-Wolfe gap estimate is above
        it, relative to the last certified ``upper`` (before a first certificate: to
        ``upper_hint``, or never without one)."""
        if self.certify_below is None:
            return False
        ref = float(upper.sum()) if np.isfinite(upper).all() else self.upper_hint
        if ref is None:
            return False
        estimate = float(dual.fw_gap.sum())
        return bool(estimate > self.certify_below * abs(ref))

    @staticmethod
    def _zero_state(dual: _Dual, J0: np.ndarray, spent: float) -> SolverState:
        """The exact state of the cold start: ``W = 0`` with every block at its null label,
        ``upper = J(0)`` and the dual value 0; the Frank-Wolfe gap ``J(0) - 0`` is spread
        evenly over the examples until they are visited."""
        dual.fw_gap[:] = float(J0.sum()) / max(dual.n, 1)
        return SolverState(
            iteration=0,
            elapsed=spent,
            upper=float(J0.sum()),
            lower=0.0,
            extra={
                "gap": float(J0.sum()),
                "objective": float(J0.sum()),
                "dual": 0.0,
                "exact": True,
                "epoch": 0.0,
            },
        )

    @staticmethod
    def _estimate_state(
        dual: _Dual,
        upper: np.ndarray,
        lower: np.ndarray,
        epoch: int,
        done: float,
        steps: int,
        spent: float,
    ) -> SolverState:
        """An in-epoch state: the last exact bounds and the running Frank-Wolfe gap estimate
        (``done``: epochs run, a fraction within the current one)."""
        U, L = float(upper.sum()), float(lower.sum())
        return SolverState(
            iteration=epoch,
            elapsed=spent,
            upper=U,
            lower=L,
            extra={
                "gap": U - L,
                "gap_estimate": float(dual.fw_gap.sum()),
                "exact": False,
                "epoch": done,
                "steps": steps,
            },
        )

    # ------------------------------------------------------------------ one epoch
    def _kernel_pass(self, dual: _Dual, order: np.ndarray, epoch: int) -> int:
        """The examples of ``order`` through the compiled kernel; returns the steps taken."""
        if dual.flat is not None:
            return self._flat_kernel_pass(dual, dual.flat, order, epoch)
        Xs, U, pdiag = dual.Xs, dual.U, dual.metric.pdiag
        steps = int(
            _PASS_KERNEL(
                order, Xs.indptr, Xs.indices, Xs.data, dual.sqn, dual.bstart, dual.btab,
                dual.lab_ptr, U.indptr, U.indices, U.data, dual.L, dual.a_ptr, dual.alpha,
                dual.WT, dual.metric.kernel_arrays(), pdiag if pdiag is not None else dual.sqn[:0],
                pdiag is not None, dual.eps, self.inner, self.inner_rtol, dual.fw_gap,
            )
        )  # fmt: skip
        if steps < 0:
            raise _diverged(epoch)
        return steps

    def _flat_kernel_pass(
        self, dual: _Dual, flat: FlatBlocks, order: np.ndarray, epoch: int
    ) -> int:
        """:meth:`_kernel_pass` for the flat models' implicit labels (:mod:`.bcfw_flat`)."""
        steps = flat.kernel_pass(
            dual.Xs, dual.sqn, dual.WT, order, dual.metric.kernel_arrays(), dual.metric.pdiag,
            dual.eps,
            self.inner, self.inner_rtol, dual.fw_gap,
        )  # fmt: skip
        if steps < 0:
            raise _diverged(epoch)
        return steps

    def _python_pass(self, dual: _Dual, order: np.ndarray, epoch: int) -> int:
        """The Python form of :func:`_pass_kernel` (``alpha`` and ``WT`` updated in place)."""
        if dual.flat is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                return dual.flat.python_pass(
                    dual.Xs, dual.sqn, dual.WT, order,
                    lambda al, U, L, S, sq, acc: self._pairwise_steps(
                        dual, al, U, L, S, sq, acc, epoch
                    ),
                    dual.fw_gap,
                )  # fmt: skip
        steps = 0
        WT = dual.WT
        # overflow (absurd C or feature scales) is caught per step and once per epoch
        with np.errstate(over="ignore", invalid="ignore"):
            for k in order:
                c_k, v_k, blocks = dual.rows[k]
                sq = dual.sqn[k]
                Wk = WT[c_k]
                S = v_k @ Wk
                acc = None
                gk = 0.0
                for _, U, L, a0 in blocks:
                    al = dual.alpha[a0 : a0 + len(L)]
                    h = L - U @ S
                    gk += float(h.max() - al @ h)
                    acc, taken = self._pairwise_steps(dual, al, U, L, S, sq, acc, epoch)
                    steps += taken
                dual.fw_gap[k] = gk
                if acc is not None:
                    Wk += np.multiply.outer(v_k, acc)
                    WT[c_k] = Wk
        return steps

    def _pairwise_steps(
        self,
        dual: _Dual,
        al: np.ndarray,
        U: sp.csr_matrix,
        L: np.ndarray,
        S: np.ndarray,
        sq: float,
        acc: np.ndarray | None,
        epoch: int,
    ) -> tuple[np.ndarray | None, int]:
        """Up to ``inner`` pairwise Frank-Wolfe steps on one block of one example.

        Mass moves from the worst active label ``v`` to the most violated one ``a`` with the
        exact line search; ``al`` (the block's simplex, a view) and ``S`` (the example's scores)
        are updated in place, and ``sum gamma P (u_a - u_v)`` is added to ``acc``.

        Returns
        -------
        acc : ndarray of shape (n_rows,) or None
        steps : int
        """
        metric, eps = dual.metric, dual.eps
        stop = eps
        steps = 0
        for _ in range(self.inner):
            h = L - U @ S
            a = h.argmax()
            hv = np.where(al > 0, h, np.inf)
            v = hv.argmin()
            gp = h[a] - hv[v]
            if gp <= stop:
                break
            if stop == eps:  # later steps must still gain a fraction of the first
                stop = max(eps, self.inner_rtol * gp)
            db = dense(U[[a]] - U[[v]]).ravel()
            Pd = metric.times(db)
            q = sq * float(db @ Pd)
            if not q < np.inf:  # inf or NaN: the step cannot be represented
                raise _diverged(epoch)
            gam = al[v]
            if q > 0 and gp < gam * q:
                gam = gp / q
            al[a] += gam
            al[v] -= gam
            S += (gam * sq) * Pd
            if acc is None:
                acc = gam * Pd
            else:
                acc += gam * Pd
            steps += 1
        return acc, steps

    # ------------------------------------------------------------------ the certificate
    def _certify(
        self, dual: _Dual, objective: Objective, epoch: int
    ) -> tuple[np.ndarray, np.ndarray, int] | None:
        """Recompute ``W(alpha)`` exactly (into ``dual.WT``) and evaluate both bounds; None when
        a stop is requested between its steps (each about a pass over the data on many
        classes: the solver then returns, keeping the last certified ``W``).

        Returns
        -------
        D : ndarray of shape (n_blocks,)
            The dual value per objective block (a certified lower bound).
        J : ndarray of shape (n_blocks,)
            The primal value at ``W(alpha)``.
        sigma_steps : int
            Iterations of the metric's relaxation step (ORTHOGNL's ``sigma``).
        """
        metric = dual.metric
        if self.within_pass(epoch, "certificate (weights)"):
            return None
        dual.normalise()  # stay on the simplices (rounding)
        B, ell = dual.dual_point(dual.alpha)
        # the incremental W^T is replaced: dropped first, so that at most three (features x
        # nodes) arrays live at once (V^T, the new W^T, the best W kept in ``coef``)
        dual.WT = np.empty((0, 0))
        VT = dual.VT(B)
        del B
        sig_steps = metric.sigma_step(VT.T) if metric.sigma is not None else 0
        WT = metric.apply(VT)
        if not (np.isfinite(WT).all() and dual.finite()):
            raise _diverged(epoch, "the weights overflowed")
        dual.WT = WT
        if self.within_pass(epoch, "certificate (dual value)"):
            return None
        D = ell[: objective.n_blocks] - 0.5 * objective.row_dot(VT.T, WT.T)
        del VT
        if self.within_pass(epoch, "certificate (primal value)"):
            return None
        try:
            J = objective.block_values(WT.T, self._reporting(epoch, "certificate (primal value)"))
        except _Interrupted:
            return None
        return D, J, sig_steps

    def _objective_at_zero(self, objective: Objective) -> tuple[np.ndarray, np.ndarray] | None:
        """The bounds per block at ``W = 0``: ``J`` (a pass over the data on many classes,
        its share reported) and 0; None when a stop is requested before or meanwhile."""
        if self.interrupted():
            return None
        try:
            at_zero = self._reporting(0.0, "objective at the start")
            upper = objective.block_values(np.zeros(objective.shape), at_zero)
        except _Interrupted:
            return None
        return upper, np.zeros(objective.n_blocks)

    def _reporting(self, passes: float, step: str) -> Callable[[float], None]:
        """``progress(share)`` of a step that is no pass (the primal value: the scores of
        every example): its share reported by :meth:`~hierlab.core.solver.Solver.within_pass`
        as ``"<step> 40%"``; a stop requested meanwhile raises :class:`_Interrupted`."""

        def progress(share: float) -> None:
            if self.within_pass(passes, f"{step} {share:.0%}"):
                raise _Interrupted

        return progress

    def _keep_best(
        self, WT: np.ndarray, J: np.ndarray, upper: np.ndarray, row_block: np.ndarray
    ) -> np.ndarray:
        """Keep :attr:`coef` at the best ``W`` seen (per block for separable problems: each
        block's best primal and dual, whose sums bound ``J*``); returns the new ``upper``."""
        improved = J < upper
        if not improved.any():
            return upper
        if improved.all():
            best = WT.copy().T  # (n_rows, n_features), Fortran order: X @ best.T cheap
        else:
            best = np.asarray(self.coef).copy(order="F")
            rows = np.flatnonzero(improved[row_block] & (row_block >= 0))
            best[rows] = WT[:, rows].T
        self.coef = best
        return np.where(improved, J, upper)


class _Interrupted(Exception):
    """A stop requested inside a step of the certificate (raised by its progress report)."""


# ---------------------------------------------------------------------- the compiled pass
def _pair(
    u_ptr: np.ndarray,
    u_idx: np.ndarray,
    u_val: np.ndarray,
    L: np.ndarray,
    l0: int,
    rows: int,
    S: np.ndarray,
    alpha: np.ndarray,
    a0: int,
) -> tuple[float, int, int, float]:  # pragma: no cover - compiled by numba
    """The pair gap ``h_a - h_v`` of a block whose labels are ``l0 .. l0 + rows - 1`` (dual
    variables from ``a0``), with ``h = L - U S`` over the sparse label rows: ``a`` the most
    violated label, ``v`` the worst label with mass (both as offsets in the block); and the
    block's Frank-Wolfe gap ``h_a - alpha . h`` (Lacoste-Julien et al. 2013)."""
    hmax = -np.inf
    ia = 0
    hmin = np.inf
    iv = 0
    ah = 0.0
    for r in range(rows):
        s = 0.0
        for e in range(u_ptr[l0 + r], u_ptr[l0 + r + 1]):
            s += u_val[e] * S[u_idx[e]]
        h = L[l0 + r] - s
        if h > hmax:
            hmax = h
            ia = r
        if alpha[a0 + r] > 0.0:
            ah += alpha[a0 + r] * h
            if h < hmin:
                hmin = h
                iv = r
    return hmax - hmin, ia, iv, hmax - ah


def _direction(
    u_ptr: np.ndarray,
    u_idx: np.ndarray,
    u_val: np.ndarray,
    la: int,
    lv: int,
    db: np.ndarray,
    mark: np.ndarray,
    touched: np.ndarray,
) -> int:  # pragma: no cover - compiled by numba
    """``db = u_la - u_lv`` into the zeroed dense scratch ``db``; its support into
    ``touched`` (``mark`` flags the nodes already listed). Returns the support's size."""
    nt = 0
    for e in range(u_ptr[la], u_ptr[la + 1]):
        j = u_idx[e]
        if not mark[j]:
            mark[j] = True
            touched[nt] = j
            nt += 1
        db[j] += u_val[e]
    for e in range(u_ptr[lv], u_ptr[lv + 1]):
        j = u_idx[e]
        if not mark[j]:
            mark[j] = True
            touched[nt] = j
            nt += 1
        db[j] -= u_val[e]
    return nt


def _pass_kernel(
    order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sqn: np.ndarray,
    bstart: np.ndarray,
    btab: np.ndarray,
    lab_ptr: np.ndarray,
    u_ptr: np.ndarray,
    u_idx: np.ndarray,
    u_val: np.ndarray,
    L: np.ndarray,
    a_ptr: np.ndarray,
    alpha: np.ndarray,
    WT: np.ndarray,
    Pf: tuple[np.ndarray, ...],
    pdiag: np.ndarray,
    use_pdiag: bool,
    eps: float,
    inner: int,
    inner_rtol: float,
    fw_gap: np.ndarray,
) -> int:  # pragma: no cover - compiled by numba (its Python form: BCFW._python_pass)
    """One BCFW epoch over the examples of ``order``, written for numba.

    The steps of :meth:`BCFW._python_pass` in the same order: per example the scores
    ``S = W x_k``; per block of the example up to ``inner`` pairwise Frank-Wolfe steps between
    the most violated label ``a`` (argmax of ``h = L - U S``) and the worst active one ``v``
    (:func:`_pair`), with the exact line search ``gamma = min(alpha_v, gap / (||x_k||^2
    (u_a - u_v)^T P (u_a - u_v)))``; then ``W^T[cols] += x_k (sum of gamma P (u_a - u_v))``.
    The label rows are sparse (:func:`_csr_tables`): a step costs the non-zeros of the block's
    labels, plus ``m`` per step for a dense metric ``P``; with a diagonal metric it touches only
    the nodes of ``u_a - u_v``, and so does the final update of ``W``. ``fw_gap[k]`` gets
    the Frank-Wolfe gap of example ``k``'s blocks at the visit (before its steps). Returns the
    number of steps, or -1 when a step's curvature overflowed.
    """
    m = WT.shape[1]
    S = np.empty(m)
    acc = np.zeros(m)
    db = np.zeros(m)
    Pd = np.zeros(m)
    mark = np.zeros(m, dtype=np.bool_)
    touched = np.empty(m, dtype=np.int64)
    amark = np.zeros(m, dtype=np.bool_)
    atouched = np.empty(m, dtype=np.int64)
    steps = 0
    for oi in range(order.shape[0]):
        k = order[oi]
        sq = sqn[k]
        sparse_row_times(WT, indptr, indices, data, k, S)
        na = 0
        moved = False
        gk = 0.0
        for b in range(bstart[k], bstart[k + 1]):
            t = btab[b]
            l0 = lab_ptr[t]
            rows = lab_ptr[t + 1] - l0
            a0 = a_ptr[b]
            stop = eps
            for it in range(inner):
                gp, ia, iv, fw = _PAIR(u_ptr, u_idx, u_val, L, l0, rows, S, alpha, a0)
                if it == 0:
                    gk += fw
                if gp <= stop:
                    break
                if stop == eps:
                    stop = max(eps, inner_rtol * gp)
                nt = _DIRECTION(u_ptr, u_idx, u_val, l0 + ia, l0 + iv, db, mark, touched)
                q = CURVATURE(db, touched, nt, Pf, pdiag, use_pdiag, Pd, sq)
                if not q < np.inf:
                    return -1
                gam = alpha[a0 + iv]
                if q > 0.0 and gp < gam * q:
                    gam = gp / q
                alpha[a0 + ia] += gam
                alpha[a0 + iv] -= gam
                na = TAKE_STEP(
                    gam, gam * sq, db, Pd, pdiag, use_pdiag, mark, touched, nt, S, acc, amark,
                    atouched, na,
                )  # fmt: skip
                moved = True
                steps += 1
        fw_gap[k] = gk
        if moved:
            UPDATE_W(WT, indptr, indices, data, k, acc, use_pdiag, amark, atouched, na)
    return steps


#: the kernel and its building blocks (None without numba; the Python pass then runs)
_PAIR: Any = njit(_pair)
_DIRECTION: Any = njit(_direction)
_PASS_KERNEL: Any = njit(_pass_kernel)
