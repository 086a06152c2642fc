"""Block-coordinate Frank-Wolfe on the dual of the seed-000 problems, with certified bounds.

Every training problem of seed 000 reads ``J(W) = R(W) + sum_b max_r (L_br - <W, U_br x_b^T>)``
(:class:`~hierlab.methods.orthogonal.model.DualBlocks`: one block ``b`` of labels per example, or per
example and internal node for HIERMULT; weights and ``C`` folded into ``L`` and ``U``). For a
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
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from hierlab.core._jit import jit_enabled, njit, sparse_row_times, sparse_row_update
from hierlab.core.exceptions import ConvergenceError, ParameterError
from hierlab.core.model import DualBlocks
from hierlab.core.objective import Objective
from hierlab.core.regularizers import L2, Orthogonal, Quadratic, Regularizer
from hierlab.core.solver import Solver, SolverState

__all__ = ["BCFW", "DualMetric"]


class DualMetric:
    """``P = Q^{-1}`` of the quadratic regularizer (active rows only), for the dual.

    For :class:`~hierlab.core.regularizers.Orthogonal` the quadratic is ``K_sigma = K o sigma`` and
    :meth:`sigma_step` maximises the dual over ``sigma`` (see the module docstring).

    Parameters
    ----------
    regularizer : L2, Quadratic or Orthogonal

    Attributes
    ----------
    P : ndarray of shape (n_rows, n_rows)
        ``Q^{-1}`` on the active rows, zero elsewhere.
    pdiag : ndarray of shape (n_rows,) or None
        The diagonal of ``P`` when ``P`` is diagonal (then products are element-wise).
    sigma : ndarray of shape (n_rows, n_rows) or None
        ORTHOGNL's current sign relaxation (``None`` otherwise).
    """

    def __init__(self, regularizer: Regularizer) -> None:
        act = np.asarray(regularizer.active, dtype=bool)
        self.idx = np.flatnonzero(act)
        m = len(act)
        self.sigma: np.ndarray | None = None
        self.pdiag: np.ndarray | None = None
        if isinstance(regularizer, L2):
            self.pdiag = act / regularizer.sigma
            self.P = np.diag(self.pdiag)
        elif isinstance(regularizer, Quadratic):
            self.P = self._inverse(regularizer.Q)
        elif isinstance(regularizer, Orthogonal):
            K = regularizer.K
            self.Kd = np.diag(np.diag(K))
            self.Koff = K - self.Kd
            self.sigma = np.zeros((m, m))
            self.P = self._inverse(self.Kd)
            self.pdiag = np.diag(self.P).copy() if not self.Koff.any() else None
        else:
            raise ParameterError(
                f"BCFW needs an L2, Quadratic or Orthogonal regularizer, got "
                f"{type(regularizer).__name__}"
            )

    def _inverse(self, Q: np.ndarray) -> np.ndarray:
        P = np.zeros_like(Q, dtype=np.float64)
        ix = np.ix_(self.idx, self.idx)
        block = np.linalg.inv(Q[ix])
        P[ix] = 0.5 * (block + block.T)
        return P

    def K_sigma(self, sigma: np.ndarray) -> np.ndarray:
        """``K o sigma`` (ORTHOGNL), shape (n_rows, n_rows)."""
        return self.Kd + self.Koff * sigma

    def apply(self, VT: np.ndarray) -> np.ndarray:
        """``W^T = V^T P`` for ``V^T`` of shape (n_features, n_rows)."""
        if self.pdiag is not None:
            return VT * self.pdiag
        return np.asarray(VT @ self.P)

    def sigma_step(self, G: np.ndarray, max_steps: int = 200, rtol: float = 1e-12) -> int:
        """Maximise the dual ``-1/2 tr(K_sigma^{-1} G)`` over the box ``sigma in [-1, 1]``.

        The function is concave in ``sigma`` (matrix-fractional), smooth, and lives on the
        ancestor pairs only (``K_ij > 0``), so it is maximised by L-BFGS-B with box bounds from
        the current ``sigma`` (gradient ``K_ij (W W^T)_ij`` per pair, ``W W^T = P G P``); the
        result is kept only if it does not lower the dual.

        Parameters
        ----------
        G : ndarray of shape (n_rows, n_rows)
            ``V V^T`` (fixed while ``sigma`` moves).
        max_steps : int
            L-BFGS-B iterations.
        rtol : float
            Relative tolerance on the dual value.

        Returns
        -------
        int
            Iterations taken (``P`` and ``sigma`` are updated in place).
        """
        if self.sigma is None or not self.Koff.any():
            return 0
        iu, ju = np.nonzero(np.triu(self.Koff > 0, k=1))
        kp = self.Koff[iu, ju]
        ix = np.ix_(self.idx, self.idx)
        Ga = G[ix]

        def neg_dual(z: np.ndarray) -> tuple[float, np.ndarray]:
            sig = self.sigma.copy()  # type: ignore[union-attr]
            sig[iu, ju] = sig[ju, iu] = z
            Pa = np.linalg.inv(self.K_sigma(sig)[ix])
            P = np.zeros_like(self.Kd)
            P[ix] = Pa
            M = P @ G @ P
            return 0.5 * float(np.sum(Pa * Ga)), -kp * M[iu, ju]

        z0 = self.sigma[iu, ju].copy()
        f0, _ = neg_dual(z0)
        res = minimize(
            neg_dual,
            z0,
            jac=True,
            method="L-BFGS-B",
            bounds=[(-1.0, 1.0)] * len(z0),
            options={"maxiter": max_steps, "ftol": rtol, "gtol": 1e-14},
        )
        if res.fun <= f0:
            sig = self.sigma.copy()
            z = np.clip(res.x, -1.0, 1.0)
            sig[iu, ju] = sig[ju, iu] = z
            self.sigma = sig
            self.P = self._inverse(self.K_sigma(sig))
        return int(res.nit)


class BCFW(Solver):
    """Block-coordinate (pairwise) Frank-Wolfe on the dual, with certified bounds.

    One :class:`~hierlab.core.solver.SolverState` per epoch (a pass over the examples in a
    random order): ``upper = min J(W)``, ``lower = max D`` (a dual objective value, see the
    module docstring), so ``lower <= J* <= upper`` at every epoch.

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
    dual_init : ndarray of shape (n_blocks, max_labels), optional
        Warm start: dual variables of an earlier run on the same blocks (the :attr:`alpha_` of
        a solve of the same examples, labels and losses, e.g. with other class attributes:
        the simplices do not depend on them, so the old point stays feasible). ``W`` starts at
        ``W(alpha)``. None: every block starts at its null label (``W = 0``).
    use_jit : bool, optional
        Run the per-example pass with the compiled kernel (numba; the same steps at machine
        speed). None: when :func:`hierlab.core._jit.jit_enabled`.

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
        if int(max_iter) < 1:
            raise ParameterError(f"max_iter must be >= 1, got {max_iter!r}")
        if int(inner) < 1:
            raise ParameterError(f"inner must be >= 1, got {inner!r}")
        if max_time is not None and not max_time > 0:
            raise ParameterError(f"max_time must be positive, got {max_time!r}")
        self.max_iter = int(max_iter)
        self.max_time = max_time
        self.inner = int(inner)
        self.inner_rtol = float(inner_rtol)
        self.random_state = random_state
        self.use_jit = use_jit
        self.dual_init = dual_init
        self.coef = None

    # ------------------------------------------------------------------ set-up
    @staticmethod
    def _rows(Xs: sp.csr_matrix) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
        """Per-example column indices and values (CSR row slices) and ``||x_k||^2``."""
        ip, ind, dat = Xs.indptr, Xs.indices, Xs.data
        cols = [ind[ip[k] : ip[k + 1]] for k in range(Xs.shape[0])]
        vals = [dat[ip[k] : ip[k + 1]] for k in range(Xs.shape[0])]
        sqn = np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel()
        return cols, vals, sqn

    def iterate(self, objective: Objective) -> Iterator[SolverState]:
        """Run BCFW on ``objective``; yield one state per epoch."""
        t_start = time.perf_counter()
        model, reg, C = objective.model, objective.regularizer, objective.C
        X, y = objective.X, objective.y
        n = X.shape[0]
        m, d = objective.shape
        blocks: DualBlocks = model.dual_blocks(y)
        metric = DualMetric(reg)
        # padded tables: U (R, m), L with -inf padding (never chosen), Lz with 0 padding
        R = max(len(L) for _, L in blocks.tables)
        Upad, Lpad, Lzero, null = [], [], [], []
        for U, L in blocks.tables:
            r = len(L)
            Up = np.zeros((R, m))
            Up[:r] = C * U
            Lp = np.full(R, -np.inf)
            Lp[:r] = C * L
            Lz = np.zeros(R)
            Lz[:r] = C * L
            Upad.append(Up)
            Lpad.append(Lp)
            Lzero.append(Lz)
            null.append(r - 1)
        bex, btab = blocks.block_example, blocks.block_table
        nb = len(bex)
        if self.dual_init is not None:
            alpha = np.array(self.dual_init, dtype=np.float64)
            if alpha.shape != (nb, R) or (alpha < 0).any():
                raise ParameterError(
                    f"dual_init must be non-negative of shape {(nb, R)}, got {alpha.shape}"
                )
            rows = np.asarray([len(L) for _, L in blocks.tables])[btab]
            if np.any(alpha[np.arange(R)[None, :] >= rows[:, None]] > 0):
                raise ParameterError("dual_init puts mass on labels a block does not have")
            alpha /= alpha.sum(axis=1, keepdims=True)
        else:
            alpha = np.zeros((nb, R))
            alpha[np.arange(nb), np.asarray(null)[btab]] = 1.0
        self.alpha_ = alpha
        bstart = np.searchsorted(bex, np.arange(n + 1))
        blist = [
            [(b, Upad[btab[b]], Lpad[btab[b]]) for b in range(bstart[k], bstart[k + 1])]
            for k in range(n)
        ]
        by_table = [np.flatnonzero(btab == t) for t in range(len(Upad))]
        # separable problems (HIERMULT): the objective block of each table (its rows' block)
        nob = objective.n_blocks
        bor = objective.block_of_row
        table_block = np.array(
            [int(bor[np.flatnonzero(np.abs(U).sum(axis=0))].min(initial=nob)) for U in Upad]
        )
        # Dense input is read through its CSR form: the loop and V = X^T B then do the same
        # floating-point operations for dense and sparse X (exact ties between labels, which the
        # pairwise line search creates, are then broken identically).
        Xs = sp.csr_matrix(X)
        cols, vals, sqn = self._rows(Xs)
        XT = objective.XT if objective.XT is not None else sp.csr_matrix(Xs.T)
        rng = np.random.default_rng(self.random_state)
        use_jit = jit_enabled() if self.use_jit is None else self.use_jit
        kernel = _PASS_KERNEL if use_jit else None
        Ust = np.ascontiguousarray(np.stack(Upad))  # (n_tables, R, m) for the kernel
        Lst = np.ascontiguousarray(np.stack(Lpad))
        bstart = np.asarray(bstart, dtype=np.int64)
        btab = np.asarray(btab, dtype=np.int64)
        eps = 1e-12 * max(float(np.max(np.abs(np.concatenate(Lzero)))), 1e-300)
        inf = np.inf
        inner = self.inner
        inner_rtol = self.inner_rtol

        def dual_point(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """``B`` (n, m) with ``V = X^T B`` and the linear dual term of each block."""
            B = np.zeros((n, m))
            ell = np.zeros(nob + 1)
            for t, bl in enumerate(by_table):
                if len(bl):
                    B[bex[bl]] += alpha[bl] @ Upad[t]
                    ell[table_block[t]] += float((alpha[bl] @ Lzero[t]).sum())
            return B, ell

        # W^T: rows of the sparse X index rows of WT; W(alpha) of the warm start
        if self.dual_init is None:
            WT = np.zeros((d, m))
        else:
            WT = np.ascontiguousarray(metric.apply(np.asarray(XT @ dual_point(alpha)[0])))
        upper = np.full(nob, np.inf)
        lower = np.full(nob, -np.inf)
        row_block = np.r_[np.arange(nob), -1][bor]  # rows in no block: -1
        best = np.zeros((m, d))
        self.coef = best
        spent = time.perf_counter() - t_start

        for epoch in range(1, self.max_iter + 1):
            t0 = time.perf_counter()
            steps = 0
            P = metric.P
            pdiag = metric.pdiag
            order = rng.permutation(n)
            if kernel is not None:
                steps = kernel(
                    order, Xs.indptr, Xs.indices, Xs.data, sqn, bstart, btab, Ust, Lst,
                    alpha, WT, P, pdiag if pdiag is not None else sqn[:0], pdiag is not None,
                    eps, inner, inner_rtol,
                )  # fmt: skip
                if steps < 0:
                    raise ConvergenceError(
                        f"BCFW diverged at iteration {epoch}: a step's curvature overflowed. "
                        "Check the data for very large values, or lower C."
                    )
                order = order[:0]
            # overflow (absurd C or feature scales) is caught once per epoch below
            with np.errstate(over="ignore", invalid="ignore"):
                for k in order:
                    c_k = cols[k]
                    v_k = vals[k]
                    sq = sqn[k]
                    Wk = WT[c_k]
                    S = v_k @ Wk
                    acc = None
                    for b, U, L in blist[k]:
                        al = alpha[b]
                        stop = eps
                        for _ in range(inner):
                            h = L - U @ S
                            a = h.argmax()
                            hv = np.where(al > 0, h, inf)
                            v = hv.argmin()
                            gp = h[a] - hv[v]
                            if gp <= stop:
                                break
                            if stop == eps:  # later steps must still gain a fraction of the first
                                stop = max(eps, inner_rtol * gp)
                            db = U[a] - U[v]
                            Pd = db * pdiag if pdiag is not None else P @ db
                            q = sq * float(db @ Pd)
                            if not q < inf:  # inf or NaN: the step cannot be represented
                                raise ConvergenceError(
                                    f"BCFW diverged at iteration {epoch}: a step's curvature "
                                    "overflowed. Check the data for very large values, or lower C."
                                )
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
                    if acc is not None:
                        Wk += np.multiply.outer(v_k, acc)
                        WT[c_k] = Wk
            # ---- exact recomputation of W(alpha) and the two bounds
            alpha /= alpha.sum(axis=1, keepdims=True)  # stay on the simplices (rounding)
            B, ell = dual_point(alpha)
            VT = np.asarray(XT @ B)
            sig_steps = 0
            if metric.sigma is not None:
                sig_steps = metric.sigma_step(VT.T @ VT)
            WT = metric.apply(VT)
            if not (np.isfinite(WT).all() and np.isfinite(alpha).all()):
                raise ConvergenceError(
                    f"BCFW diverged at iteration {epoch}: the weights overflowed. Check the data "
                    "for very large values, or lower C."
                )
            D = ell[:nob] - 0.5 * objective.row_dot(VT.T, WT.T)
            J = objective.block_values(WT.T)
            # separable problems keep each block's best primal and dual (their sums bound J*)
            improved = J < upper
            if improved.any():
                upper = np.where(improved, J, upper)
                if improved.all():
                    best = WT.copy().T  # (n_rows, n_features), Fortran order: X @ best.T cheap
                else:
                    best = best.copy(order="F")
                    rows = np.flatnonzero(improved[row_block] & (row_block >= 0))
                    best[rows] = WT[:, rows].T
                self.coef = best
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


def _pass_kernel(
    order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sqn: np.ndarray,
    bstart: np.ndarray,
    btab: np.ndarray,
    Ust: np.ndarray,
    Lst: np.ndarray,
    alpha: np.ndarray,
    WT: np.ndarray,
    P: np.ndarray,
    pdiag: np.ndarray,
    use_pdiag: bool,
    eps: float,
    inner: int,
    inner_rtol: float,
) -> int:  # pragma: no cover - compiled by numba (its Python form is the loop in iterate)
    """One BCFW epoch over the examples of ``order``, written for numba.

    The steps of :meth:`BCFW.iterate`'s loop in the same order: per example the scores
    ``S = W x_k``; per block of the example up to ``inner`` pairwise Frank-Wolfe steps between
    the most violated label ``a`` (argmax of ``h = L - U S``) and the worst active one ``v``,
    with the exact line search ``gamma = min(alpha_v, gap / (||x_k||^2 (u_a - u_v)^T P
    (u_a - u_v)))``; then ``W^T[cols] += x_k (sum of gamma P (u_a - u_v))``. Returns the number
    of steps, or -1 when a step's curvature overflowed.
    """
    m = WT.shape[1]
    R = Ust.shape[1]
    inf = np.inf
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
                hmax = -inf
                ia = 0
                hmin = inf
                iv = 0
                for r in range(R):
                    s = 0.0
                    for j in range(m):
                        s += Ust[t, r, j] * S[j]
                    h = Lst[t, r] - s
                    if h > hmax:
                        hmax = h
                        ia = r
                    if alpha[b, r] > 0.0 and h < hmin:
                        hmin = h
                        iv = r
                gp = hmax - hmin
                if gp <= stop:
                    break
                if stop == eps:
                    stop = max(eps, inner_rtol * gp)
                for j in range(m):
                    db[j] = Ust[t, ia, j] - Ust[t, iv, j]
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
                q = sq * dq
                if not q < inf:
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


_PASS_KERNEL = njit(_pass_kernel)
