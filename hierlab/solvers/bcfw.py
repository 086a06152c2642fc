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

**Certificate.** Any feasible ``alpha`` gives ``D(alpha) <= J*`` (weak duality) and any ``W``
gives ``J* <= J(W)``. After every epoch ``W(alpha)`` is recomputed exactly from the dual variables
(``V = X^T B``, one sparse-dense product, which also removes the drift of the incremental
updates), and the solver reports ``lower = max D`` and ``upper = min J(W)`` over the epochs;
:attr:`BCFW.coef` is the ``W`` that gave ``upper``. Their difference is the Frank-Wolfe duality
gap, the certificate of Lacoste-Julien et al.

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
its ``sigma`` step (:class:`~hierlab.core.regularizers.SignRelaxedMetric`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core._jit import jit_enabled, njit, sparse_row_times, sparse_row_update
from hierlab.core.exceptions import ConvergenceError, ParameterError
from hierlab.core.model import DualBlocks
from hierlab.core.objective import Objective
from hierlab.core.regularizers import DualMetric
from hierlab.core.solver import Solver, SolverState
from hierlab.solvers.rda import check_budget

__all__ = ["BCFW"]


def _diverged(epoch: int, what: str = "a step's curvature overflowed") -> ConvergenceError:
    """The error raised when an epoch's arithmetic overflows (``what`` says where)."""
    return ConvergenceError(
        f"BCFW diverged at iteration {epoch}: {what}. Check the data for very large values, "
        "or lower C."
    )


#: a block of one example in the Python pass: its id, then its table's ``U`` and ``L``
_Block = tuple[int, np.ndarray, np.ndarray]


def _stack_tables(
    tables: list[tuple[np.ndarray, np.ndarray]], C: float, m: int, R: int
) -> tuple[np.ndarray, np.ndarray]:
    """The label tables scaled by ``C``, stacked and zero-padded to ``R`` rows.

    Returns
    -------
    U : ndarray of shape (n_tables, R, m)
        Directions.
    L : ndarray of shape (n_tables, R)
        Losses. The passes read only the first ``len(L_t)`` rows of table ``t``; the padding
        carries no dual mass, so it adds nothing to ``V`` or to the dual value.
    """
    U = np.zeros((len(tables), R, m))
    L = np.zeros((len(tables), R))
    for t, (Ut, Lt) in enumerate(tables):
        U[t, : len(Lt)] = C * Ut
        L[t, : len(Lt)] = C * Lt
    return U, L


class _Dual:
    """The dual of one objective as BCFW walks it (one per solve).

    Built once: the label tables of the model's :class:`~hierlab.core.model.DualBlocks`
    (scaled by ``C``, stacked and padded, :func:`_stack_tables`), the blocks of every example,
    the examples' CSR rows and the regularizer's metric. Updated by the epochs: the dual
    variables ``alpha`` and ``W(alpha)^T``.
    Dense input is read through its CSR form: the passes and ``V = X^T B`` then do the same
    floating-point operations for dense and sparse ``X`` (exact ties between labels, which the
    pairwise line search creates, are then broken identically).
    """

    def __init__(self, objective: Objective, dual_init: np.ndarray | None = None) -> None:
        X = objective.X
        self.n, self.m, self.n_blocks = X.shape[0], objective.shape[0], objective.n_blocks
        blocks: DualBlocks = objective.model.dual_blocks(objective.y)
        #: labels of each table (the null label last)
        self.sizes = np.asarray([len(L) for _, L in blocks.tables], dtype=np.int64)
        self.R = int(self.sizes.max())
        self.U, self.L = _stack_tables(blocks.tables, objective.C, self.m, self.R)
        self.bex = blocks.block_example
        self.btab = np.asarray(blocks.block_table, dtype=np.int64)
        self.bstart = np.asarray(np.searchsorted(self.bex, np.arange(self.n + 1)), dtype=np.int64)
        # separable problems (HIERMULT): the objective block of each table (its rows' block)
        bor = objective.block_of_row
        self.table_block = np.array(
            [
                int(bor[np.flatnonzero(np.abs(U).sum(axis=0))].min(initial=self.n_blocks))
                for U in self.U
            ]
        )
        self.Xs = sp.csr_matrix(X)
        self.sqn = np.asarray(self.Xs.multiply(self.Xs).sum(axis=1)).ravel()  # ||x_k||^2
        self.XT = objective.XT if objective.XT is not None else sp.csr_matrix(self.Xs.T)
        self.eps = 1e-12 * max(float(np.max(np.abs(self.L))), 1e-300)
        self.metric: DualMetric = objective.regularizer.dual_metric()
        self.alpha = self.initial_alpha(dual_init)
        # W^T: rows of the sparse X index rows of WT; W(alpha) of a warm start
        if dual_init is None:
            self.WT = np.zeros((objective.shape[1], self.m))
        else:
            self.WT = self.weights()

    @functools.cached_property
    def rows(self) -> list[tuple[np.ndarray, np.ndarray, list[_Block]]]:
        """Per example, for the Python pass only (built on its first use): its CSR columns and
        values and its blocks ``(b, U_t, L_t)`` (table ``t`` without its padding)."""
        ip, ind, dat = self.Xs.indptr, self.Xs.indices, self.Xs.data
        tables = [(self.U[t, :r], self.L[t, :r]) for t, r in enumerate(self.sizes)]
        return [
            (
                ind[ip[k] : ip[k + 1]],
                dat[ip[k] : ip[k + 1]],
                [(b, *tables[self.btab[b]]) for b in range(self.bstart[k], self.bstart[k + 1])],
            )
            for k in range(self.n)
        ]

    def initial_alpha(self, dual_init: np.ndarray | None) -> np.ndarray:
        """The starting dual point, shape (n_blocks, R): ``dual_init`` checked and normalised,
        or every block at its null label."""
        nb, R = len(self.bex), self.R
        if dual_init is None:
            alpha = np.zeros((nb, R))
            alpha[np.arange(nb), (self.sizes - 1)[self.btab]] = 1.0
            return alpha
        alpha = np.array(dual_init, dtype=np.float64)
        if alpha.shape != (nb, R) or (alpha < 0).any():
            raise ParameterError(
                f"dual_init must be non-negative of shape {(nb, R)}, got {alpha.shape}"
            )
        rows = self.sizes[self.btab]
        if np.any(alpha[np.arange(R)[None, :] >= rows[:, None]] > 0):
            raise ParameterError("dual_init puts mass on labels a block does not have")
        alpha /= alpha.sum(axis=1, keepdims=True)
        return alpha

    def dual_point(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``B`` (n, m) with ``V = X^T B`` and the linear dual term of each objective block.

        Frank-Wolfe keeps ``alpha`` sparse (a block's mass sits on the labels its steps
        touched), so ``B`` is one sparse-dense product over the labels with mass, of cost
        ``O(nnz(alpha) m)``, not ``O(n_blocks R m)``."""
        blk, r = np.nonzero(alpha)
        a = alpha[blk, r]
        label = self.btab[blk] * self.R + r  # row of the label in the stacked tables
        shape = (self.n, len(self.sizes) * self.R)
        mass = sp.csr_matrix((a, (self.bex[blk], label)), shape=shape)
        B = np.asarray(mass @ self.U.reshape(-1, self.m))
        ell = np.bincount(
            self.table_block[self.btab[blk]],
            weights=a * self.L.reshape(-1)[label],
            minlength=self.n_blocks + 1,
        )
        return B, ell

    def weights(self) -> np.ndarray:
        """``W(alpha)^T``, shape (n_features, n_rows), C-contiguous."""
        B = self.dual_point(self.alpha)[0]
        return np.ascontiguousarray(self.metric.apply(np.asarray(self.XT @ B)))


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
        speed). None: when :func:`hierlab.core._jit.jit_enabled`.
    dual_init : ndarray of shape (n_blocks, max_labels), optional
        Warm start: dual variables of an earlier run on the same blocks (the :attr:`alpha_` of
        a solve of the same examples, labels and losses, e.g. with other class attributes:
        the simplices do not depend on them, so the old point stays feasible). ``W`` starts at
        ``W(alpha)``. None: every block starts at its null label (``W = 0``).

    Attributes
    ----------
    coef : ndarray of shape (n_rows, n_features)
        The ``W`` that gave ``upper``.
    alpha_ : ndarray of shape (n_blocks, max_labels)
        The dual variables (one simplex per block, padded with zeros).
    """

    def __init__(
        self,
        max_iter: int = 200,
        max_time: float | None = None,
        inner: int = 10,
        inner_rtol: float = 0.1,
        random_state: int = 0,
        use_jit: bool | None = None,
        dual_init: np.ndarray | None = None,
    ) -> None:
        self.max_iter, self.max_time = check_budget(max_iter, max_time)
        if int(inner) < 1:
            raise ParameterError(f"inner must be >= 1, got {inner!r}")
        self.inner = int(inner)
        self.inner_rtol = float(inner_rtol)
        self.random_state = random_state
        self.use_jit = use_jit
        self.dual_init = dual_init
        self.coef = None

    def iterate(self, objective: Objective) -> Iterator[SolverState]:
        """Run BCFW on ``objective``; yield one state per epoch."""
        t_start = time.perf_counter()
        dual = _Dual(objective, self.dual_init)
        self.alpha_ = dual.alpha
        nob = objective.n_blocks
        upper = np.full(nob, np.inf)
        lower = np.full(nob, -np.inf)
        row_block = np.r_[np.arange(nob), -1][objective.block_of_row]  # rows in no block: -1
        self.coef = np.zeros(objective.shape)
        rng = np.random.default_rng(self.random_state)
        use_jit = jit_enabled() if self.use_jit is None else self.use_jit
        spent = time.perf_counter() - t_start
        for epoch in range(1, self.max_iter + 1):
            t0 = time.perf_counter()
            order = rng.permutation(dual.n)
            if use_jit and _PASS_KERNEL is not None:
                steps = self._kernel_pass(dual, order, epoch)
            else:
                steps = self._python_pass(dual, order, epoch)
            D, J, sig_steps = self._certify(dual, objective, epoch)
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
                },
            )
            if self.max_time is not None and spent >= self.max_time:
                return

    # ------------------------------------------------------------------ one epoch
    def _kernel_pass(self, dual: _Dual, order: np.ndarray, epoch: int) -> int:
        """The examples of ``order`` through the compiled kernel; returns the steps taken."""
        Xs, pdiag = dual.Xs, dual.metric.pdiag
        steps = int(
            _PASS_KERNEL(
                order, Xs.indptr, Xs.indices, Xs.data, dual.sqn, dual.bstart, dual.btab,
                dual.sizes, dual.U, dual.L, dual.alpha, dual.WT, dual.metric.P,
                pdiag if pdiag is not None else dual.sqn[:0], pdiag is not None,
                dual.eps, self.inner, self.inner_rtol,
            )
        )  # fmt: skip
        if steps < 0:
            raise _diverged(epoch)
        return steps

    def _python_pass(self, dual: _Dual, order: np.ndarray, epoch: int) -> int:
        """The Python form of :func:`_pass_kernel` (``alpha`` and ``WT`` updated in place)."""
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
                for b, U, L in blocks:
                    al = dual.alpha[b, : len(L)]
                    acc, taken = self._pairwise_steps(dual, al, U, L, S, sq, acc, epoch)
                    steps += taken
                if acc is not None:
                    Wk += np.multiply.outer(v_k, acc)
                    WT[c_k] = Wk
        return steps

    def _pairwise_steps(
        self,
        dual: _Dual,
        al: np.ndarray,
        U: np.ndarray,
        L: np.ndarray,
        S: np.ndarray,
        sq: float,
        acc: np.ndarray | None,
        epoch: int,
    ) -> tuple[np.ndarray | None, int]:
        """Up to ``inner`` pairwise Frank-Wolfe steps on one block of one example.

        Mass moves from the worst active label ``v`` to the most violated one ``a`` with the
        exact line search; ``al`` (the block's simplex) and ``S`` (the example's scores) are
        updated in place, and ``sum gamma P (u_a - u_v)`` is added to ``acc``.

        Returns
        -------
        acc : ndarray of shape (n_rows,) or None
        steps : int
        """
        P, pdiag, eps = dual.metric.P, dual.metric.pdiag, dual.eps
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
            db = U[a] - U[v]
            Pd = db * pdiag if pdiag is not None else P @ db
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
    @staticmethod
    def _certify(
        dual: _Dual, objective: Objective, epoch: int
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """Recompute ``W(alpha)`` exactly (into ``dual.WT``) and evaluate both bounds.

        Returns
        -------
        D : ndarray of shape (n_blocks,)
            The dual value per objective block (a certified lower bound).
        J : ndarray of shape (n_blocks,)
            The primal value at ``W(alpha)``.
        sigma_steps : int
            Iterations of the metric's relaxation step (ORTHOGNL's ``sigma``).
        """
        alpha, metric = dual.alpha, dual.metric
        alpha /= alpha.sum(axis=1, keepdims=True)  # stay on the simplices (rounding)
        B, ell = dual.dual_point(alpha)
        VT = np.asarray(dual.XT @ B)
        sig_steps = metric.sigma_step(VT.T @ VT) if metric.sigma is not None else 0
        WT = metric.apply(VT)
        if not (np.isfinite(WT).all() and np.isfinite(alpha).all()):
            raise _diverged(epoch, "the weights overflowed")
        dual.WT = WT
        D = ell[: objective.n_blocks] - 0.5 * objective.row_dot(VT.T, WT.T)
        J = objective.block_values(WT.T)
        return D, J, sig_steps

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


# ---------------------------------------------------------------------- the compiled pass
def _pair(
    U: np.ndarray, L: np.ndarray, t: int, rows: int, S: np.ndarray, alpha: np.ndarray, b: int
) -> tuple[float, int, int]:  # pragma: no cover - compiled by numba
    """The pair gap ``h_a - h_v`` of block ``b`` (table ``t``, its first ``rows`` rows), with
    ``h = L - U S``: ``a`` the most violated label, ``v`` the worst label with mass."""
    m = S.shape[0]
    hmax = -np.inf
    ia = 0
    hmin = np.inf
    iv = 0
    for r in range(rows):
        s = 0.0
        for j in range(m):
            s += U[t, r, j] * S[j]
        h = L[t, r] - s
        if h > hmax:
            hmax = h
            ia = r
        if alpha[b, r] > 0.0 and h < hmin:
            hmin = h
            iv = r
    return hmax - hmin, ia, iv


def _direction(
    U: np.ndarray,
    t: int,
    ia: int,
    iv: int,
    P: np.ndarray,
    pdiag: np.ndarray,
    use_pdiag: bool,
    db: np.ndarray,
    Pd: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    """``db = u_a - u_v`` and ``Pd = P db`` (in place); returns ``db^T P db``."""
    m = db.shape[0]
    for j in range(m):
        db[j] = U[t, ia, j] - U[t, iv, j]
    if use_pdiag:
        for j in range(m):
            Pd[j] = db[j] * pdiag[j]
    else:
        for j in range(m):
            s = 0.0
            for i2 in range(m):
                s += P[j, i2] * db[i2]
            Pd[j] = s
    dq = 0.0
    for j in range(m):
        dq += db[j] * Pd[j]
    return dq


def _pass_kernel(
    order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sqn: np.ndarray,
    bstart: np.ndarray,
    btab: np.ndarray,
    sizes: np.ndarray,
    U: np.ndarray,
    L: np.ndarray,
    alpha: np.ndarray,
    WT: np.ndarray,
    P: np.ndarray,
    pdiag: np.ndarray,
    use_pdiag: bool,
    eps: float,
    inner: int,
    inner_rtol: float,
) -> int:  # pragma: no cover - compiled by numba (its Python form: BCFW._python_pass)
    """One BCFW epoch over the examples of ``order``, written for numba.

    The steps of :meth:`BCFW._python_pass` in the same order: per example the scores
    ``S = W x_k``; per block of the example up to ``inner`` pairwise Frank-Wolfe steps between
    the most violated label ``a`` (argmax of ``h = L - U S``) and the worst active one ``v``
    (:func:`_pair`), with the exact line search ``gamma = min(alpha_v, gap / (||x_k||^2
    (u_a - u_v)^T P (u_a - u_v)))`` (:func:`_direction`); then ``W^T[cols] += x_k (sum of
    gamma P (u_a - u_v))``. Returns the number of steps, or -1 when a step's curvature
    overflowed.
    """
    m = WT.shape[1]
    S = np.empty(m)
    acc = np.empty(m)
    db = np.empty(m)
    Pd = np.empty(m)
    steps = 0
    for oi in range(order.shape[0]):
        k = order[oi]
        sq = sqn[k]
        sparse_row_times(WT, indptr, indices, data, k, S)
        for j in range(m):
            acc[j] = 0.0
        moved = False
        for b in range(bstart[k], bstart[k + 1]):
            t = btab[b]
            stop = eps
            for _ in range(inner):
                gp, ia, iv = _PAIR(U, L, t, sizes[t], S, alpha, b)
                if gp <= stop:
                    break
                if stop == eps:
                    stop = max(eps, inner_rtol * gp)
                q = sq * _DIRECTION(U, t, ia, iv, P, pdiag, use_pdiag, db, Pd)
                if not q < np.inf:
                    return -1
                gam = alpha[b, iv]
                if q > 0.0 and gp < gam * q:
                    gam = gp / q
                alpha[b, ia] += gam
                alpha[b, iv] -= gam
                gs = gam * sq
                for j in range(m):
                    S[j] += gs * Pd[j]
                    acc[j] += gam * Pd[j]
                moved = True
                steps += 1
        if moved:
            sparse_row_update(WT, indptr, indices, data, k, acc)
    return steps


#: the kernel and its building blocks (None without numba; the Python pass then runs)
_PAIR: Any = njit(_pair)
_DIRECTION: Any = njit(_direction)
_PASS_KERNEL: Any = njit(_pass_kernel)
