"""Dual coordinate descent for the HR-SVM leaf problems (seed 001, eq. 5-7; Hsieh et al. 2008).

For a leaf ``n`` with parent vector ``w_p = w_{pi(n)}`` held fixed, HR-SVM's block problem is

    min_w  1/2 ||w - w_p||^2 + C sum_i c_i (1 - y_i w^T x_i)_+                      (primal)

whose dual (eq. 5-6) is

    min_alpha  1/2 ||sum_i alpha_i y_i x_i||^2 - sum_i alpha_i (1 - y_i w_p^T x_i),
    0 <= alpha_i <= C c_i,                                                            (dual)

with the primal recovered by eq. (7): ``w = w_p + sum_i alpha_i y_i x_i``. Coordinate ``i``
moves by the closed form ``alpha_i <- clip(alpha_i - G / (x_i^T x_i), 0, C c_i)`` with the
gradient (seed erratum: the factor ``y_i`` on the whole inner product)

    G = y_i w^T x_i - 1,        w = w_p + a',   a' = sum_i alpha_i y_i x_i.

``c_i`` in {0, 1} switches example ``i`` off for this leaf (an example labelled with an
internal node above the leaf is neither positive nor negative for it).

Implementation. The loop over examples is sequential by nature; to keep it lean, a *block* of
leaves that share the same examples is solved at once: for example ``i`` the gradients and steps
of all the block's leaves are one gather ``W[idx]`` of shape (nnz_i, L), one vector-matrix
product and one scatter. Every leaf keeps its own state (shrinking set, stopping test,
converged flag), so a leaf's iterates do not depend on which other leaves share its block: a
serial run and a parallel run that splits the leaves differently agree to rounding.
Memory: the dual variables, gradients and step sizes are O(n) per leaf.

Random order: one permutation of the examples per pass, drawn from ``(seed, pass)``.
Shrinking (Hsieh et al. 2008, Section 3): after a pass, coordinate ``i`` of leaf ``n`` leaves
the active set when ``alpha_i = 0`` and ``G > M_n`` or ``alpha_i = C`` and ``G < m_n``
(``M_n``, ``m_n``: the previous pass's largest and smallest projected gradients). When a leaf's
projected-gradient spread ``M_n - m_n`` falls below ``tol`` on its active set, the set is reset to
all coordinates and the leaf goes on; it stops when the spread is below ``tol`` over all of them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import jit_enabled, njit, sparse_row_times, sparse_row_update

__all__ = [
    "CSRRows",
    "DualCDResult",
    "binary_dual_cd",
    "leaf_dual_objective",
    "leaf_primal_objective",
    "projected_gradient",
    "solve_leaves_dual_cd",
]


@dataclass
class DualCDResult:
    """Result of :func:`solve_leaves_dual_cd` for a block of ``L`` leaves.

    Attributes
    ----------
    W : ndarray of shape (L, n_features)
        The leaves' primal vectors ``w_n = w_p + sum_i alpha_in y_in x_i`` (eq. 7).
    alpha : ndarray of shape (n_samples, L)
        The dual variables.
    n_passes : ndarray of int, shape (L,)
        Passes over the examples run for each leaf.
    pg_spread : ndarray of shape (L,)
        ``max PG - min PG`` over all coordinates at the last full check (the stopping measure).
    converged : ndarray of bool, shape (L,)
        Whether each leaf met ``pg_spread <= tol`` over all its coordinates.
    """

    W: np.ndarray
    alpha: np.ndarray
    n_passes: np.ndarray
    pg_spread: np.ndarray
    converged: np.ndarray


def projected_gradient(G: np.ndarray, alpha: np.ndarray, upper: np.ndarray | float) -> np.ndarray:
    """Projected gradient of the box-constrained dual (Hsieh et al. 2008, eq. 8).

    Parameters
    ----------
    G : ndarray
        Gradients ``y_i w^T x_i - 1``.
    alpha : ndarray, same shape
        Dual variables.
    upper : ndarray or float
        Upper bounds ``C c_i`` (broadcastable).

    Returns
    -------
    ndarray, same shape: ``min(G, 0)`` at ``alpha = 0``, ``max(G, 0)`` at the upper bound, ``G``
    inside; 0 where the box is the single point ``{0}``.
    """
    up = np.broadcast_to(upper, G.shape)
    pg = np.where(alpha <= 0.0, np.minimum(G, 0.0), G)
    pg = np.where(alpha >= up, np.maximum(pg, 0.0), pg)
    return np.where(up <= 0.0, 0.0, pg)


class CSRRows:
    """The rows of a CSR matrix cut once for the coordinate loop.

    Parameters
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)

    Attributes
    ----------
    X : csr_matrix, float64
    indices : list of ndarray
        ``indices[i]``: the non-zero columns of row ``i`` (cut on first use: only the numpy
        pass reads them, the compiled one walks ``X`` itself).
    values : list of ndarray of shape (nnz_i, 1)
        The matching values, as columns (ready to broadcast against ``L`` leaves).
    sq_norms : ndarray of shape (n_samples,)
        ``Q_ii = x_i^T x_i``.
    """

    def __init__(self, X: sp.csr_matrix | np.ndarray) -> None:
        Xc = sp.csr_matrix(X, dtype=np.float64)
        Xc.sum_duplicates()
        self.X = Xc
        n = Xc.shape[0]
        row = np.repeat(np.arange(n), np.diff(Xc.indptr))
        self.sq_norms = np.bincount(row, weights=Xc.data**2, minlength=n)

    @functools.cached_property
    def indices(self) -> list[np.ndarray]:
        ip = self.X.indptr.tolist()
        return [self.X.indices[ip[i] : ip[i + 1]] for i in range(self.X.shape[0])]

    @functools.cached_property
    def values(self) -> list[np.ndarray]:
        ip = self.X.indptr.tolist()
        return [self.X.data[ip[i] : ip[i + 1], None] for i in range(self.X.shape[0])]


def solve_leaves_dual_cd(
    X: sp.csr_matrix | np.ndarray | CSRRows,
    Y: np.ndarray,
    upper: np.ndarray | float,
    W_parent: np.ndarray,
    alpha0: np.ndarray | None = None,
    *,
    tol: float = 1e-3,
    max_passes: int = 1000,
    shrinking: bool = True,
    seed: int | np.random.SeedSequence | None = 0,
    use_jit: bool | None = None,
) -> DualCDResult:
    """Solve the dual (eq. 5-6) of ``L`` leaf problems that share the examples ``X``.

    Parameters
    ----------
    X : csr_matrix, ndarray or CSRRows of shape (n_samples, n_features)
        The examples (dense input is converted to CSR rows; pass a :class:`CSRRows` to reuse
        the cut rows across calls).
    Y : ndarray of shape (n_samples, L)
        The labels ``y_in`` in {-1, +1}.
    upper : float or ndarray of shape (n_samples, L)
        Box upper bounds ``C c_in`` (0 switches a coordinate off).
    W_parent : ndarray of shape (L, n_features)
        The parent vectors ``w_{pi(n)}`` (zeros for a plain SVM).
    alpha0 : ndarray of shape (n_samples, L), optional
        Warm start (clipped into the box); zeros by default.
    tol : float, default 1e-3
        Stop a leaf when ``max PG - min PG <= tol`` over all its coordinates.
    max_passes : int, default 1000
        Largest number of passes over the examples.
    shrinking : bool, default True
        Use Hsieh et al.'s shrinking heuristic.
    seed : int or SeedSequence, optional
        Seed of the per-pass permutations (a leaf's iterates depend on it and on nothing else
        in the block).
    use_jit : bool, optional
        Compiled passes (numba, the same steps); None: as :func:`hierlab.core.jit.jit_enabled`.

    Returns
    -------
    DualCDResult
    """
    rows = X if isinstance(X, CSRRows) else CSRRows(X)
    Xc = rows.X
    kernel = _PASS_KERNEL if (jit_enabled() if use_jit is None else use_jit) else None
    n = Xc.shape[0]
    Yf = np.ascontiguousarray(Y, dtype=np.float64).reshape(n, -1)
    L = Yf.shape[1]
    U = np.ascontiguousarray(np.broadcast_to(np.asarray(upper, dtype=np.float64), (n, L)))
    nonzero_row = rows.sq_norms > 0.0
    inv_q = np.zeros(n)
    inv_q[nonzero_row] = 1.0 / rows.sq_norms[nonzero_row]
    A, WT = _starting_point(Xc, Yf, U, W_parent, alpha0, nonzero_row)
    entropy = _entropy(seed)
    state = _LeafProgress.start(nonzero_row, U)
    for p in range(max_passes):
        if state.done.all():
            break
        live = state.active & ~state.done[None, :]
        S = np.where(live, inv_q[:, None], 0.0)
        order = _pass_order(entropy, p, live)
        a_start = A.copy()
        if kernel is not None:
            kernel(order, Xc.indptr, Xc.indices, Xc.data, Yf, A, U, S, WT, state.G)
        else:
            _numpy_pass(order, rows, Yf, A, U, S, WT, state.G)
        state.after_pass(order, live, a_start, U, tol, shrinking)
    return DualCDResult(
        W=np.ascontiguousarray(WT.T),
        alpha=A,
        n_passes=state.n_passes,
        pg_spread=state.spread,
        converged=state.done,
    )


def _starting_point(
    Xc: sp.csr_matrix,
    Yf: np.ndarray,
    U: np.ndarray,
    W_parent: np.ndarray,
    alpha0: np.ndarray | None,
    nonzero_row: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The first dual point (``alpha0`` clipped into the box, or 0) and ``W^T`` by eq. (7).

    Returns
    -------
    A : ndarray of shape (n_samples, L), C order
    WT : ndarray of shape (n_features, L), C order
        ``W^T``: the gather ``W[idx]`` of a row's columns reads contiguous rows of length L.
    """
    n, d = Xc.shape
    L = Yf.shape[1]
    if alpha0 is None:
        A = np.zeros((n, L))
    else:
        A = np.clip(np.asarray(alpha0, dtype=np.float64).reshape(n, L), 0.0, U)
    # an empty row has G = -1 whatever w: its optimum is the upper bound, and it moves nothing
    A[~nonzero_row] = U[~nonzero_row]
    A = np.ascontiguousarray(A)
    WT = np.ascontiguousarray(
        np.asarray(W_parent, dtype=np.float64).reshape(L, d).T + Xc.T @ (A * Yf)
    )
    return A, WT


def _entropy(seed: int | np.random.SeedSequence | None) -> int | Sequence[int]:
    """The entropy of ``seed`` (0 when it has none); with a pass's number it seeds the pass."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return ss.entropy if ss.entropy is not None else 0


def _pass_order(entropy: int | Sequence[int], p: int, live: np.ndarray) -> np.ndarray:
    """Pass ``p``'s random order of the examples that still have a live coordinate (int64)."""
    rows_on = np.asarray(live.any(axis=1), dtype=bool)
    perm = np.random.default_rng([*np.atleast_1d(entropy).tolist(), p]).permutation(len(rows_on))
    return np.asarray(perm[rows_on[perm]], dtype=np.int64)


def _numpy_pass(
    order: np.ndarray,
    rows: CSRRows,
    Yf: np.ndarray,
    A: np.ndarray,
    U: np.ndarray,
    S: np.ndarray,
    WT: np.ndarray,
    Gbuf: np.ndarray,
) -> None:
    """One pass of the coordinate loop in numpy, in place (the steps :func:`_pass_kernel`
    compiles): for every example ``i`` of ``order`` and the block's leaves at once,
    ``G = y_i w^T x_i - 1`` into ``Gbuf[i]``, ``alpha_i <- clip(alpha_i - G S_i, 0, U_i)`` and
    ``w += (delta alpha_i) y_i x_i`` (eq. 7)."""
    idx_list, val_list = rows.indices, rows.values
    dot, maximum, minimum = np.dot, np.maximum, np.minimum
    for i in order.tolist():  # Python ints index the row lists fastest
        idx = idx_list[i]
        v = val_list[i]
        Wi = WT[idx]
        yi = Yf[i]
        G = dot(v.T, Wi)[0]  # w_n^T x_i for the L leaves
        G *= yi
        G -= 1.0  # G = y_in w_n^T x_i - 1 (seed erratum)
        Gbuf[i] = G
        a = A[i]
        new = a - G * S[i]
        maximum(new, 0.0, out=new)
        minimum(new, U[i], out=new)
        delta = new - a
        if dot(delta, delta) != 0.0:
            A[i] = new
            delta *= yi
            Wi += v * delta  # eq. (7) kept up to date: w_n += delta_alpha y_in x_i
            WT[idx] = Wi


@dataclass
class _LeafProgress:
    """Each leaf's own state between passes: active set, stopping test, shrinking thresholds.

    Attributes
    ----------
    active : ndarray of bool, shape (n_samples, L)
        Coordinates the next pass visits (shrinking removes some).
    can_move : ndarray of bool, shape (n_samples, L)
        Coordinates that can move at all (non-empty row, positive upper bound).
    done : ndarray of bool, shape (L,)
        Leaves that met the stopping test over all their coordinates.
    n_passes : ndarray of int, shape (L,)
    spread : ndarray of shape (L,)
        ``max PG - min PG`` at the last check over all coordinates.
    M_bar, m_bar : ndarray of shape (L,)
        The previous pass's largest and smallest projected gradients (shrinking thresholds).
    G : ndarray of shape (n_samples, L)
        The gradients computed by the last pass.
    """

    active: np.ndarray
    can_move: np.ndarray
    done: np.ndarray
    n_passes: np.ndarray
    spread: np.ndarray
    M_bar: np.ndarray
    m_bar: np.ndarray
    G: np.ndarray

    @classmethod
    def start(cls, nonzero_row: np.ndarray, U: np.ndarray) -> _LeafProgress:
        """Every coordinate that can move is active; nothing is done."""
        n, L = U.shape
        active = np.broadcast_to(nonzero_row[:, None], (n, L)) & (U > 0.0)
        return cls(
            active=active,
            can_move=active.copy(),
            done=np.zeros(L, dtype=bool),
            n_passes=np.zeros(L, dtype=np.int64),
            spread=np.full(L, np.inf),
            M_bar=np.full(L, np.inf),
            m_bar=np.full(L, -np.inf),
            G=np.zeros((n, L)),
        )

    def after_pass(
        self,
        order: np.ndarray,
        live: np.ndarray,
        a_start: np.ndarray,
        U: np.ndarray,
        tol: float,
        shrinking: bool,
    ) -> None:
        """Per-leaf bookkeeping of a pass, vectorised over the leaves: stopping test, shrinking,
        and the reset of a leaf's active set when it looks converged on it but not on all."""
        visited = np.zeros(len(live), dtype=bool)
        visited[order] = True
        on = live & visited[:, None]
        PG = projected_gradient(self.G, a_start, U)
        M = np.where(on, PG, -np.inf).max(axis=0)
        m = np.where(on, PG, np.inf).min(axis=0)
        leaves_run = ~self.done
        self.n_passes[leaves_run] += 1
        full = self.active.sum(axis=0) == self.can_move.sum(axis=0)
        small = (M - m) <= tol
        finished = leaves_run & small & full
        self.spread[leaves_run & full] = (M - m)[leaves_run & full]
        self.done |= finished
        reset = leaves_run & small & ~full
        if shrinking:
            self._shrink(on, a_start, U, leaves_run, M, m)
        if reset.any():
            self.active[:, reset] = self.can_move[:, reset]
            self.M_bar[reset] = np.inf
            self.m_bar[reset] = -np.inf

    def _shrink(
        self,
        on: np.ndarray,
        a_start: np.ndarray,
        U: np.ndarray,
        leaves_run: np.ndarray,
        M: np.ndarray,
        m: np.ndarray,
    ) -> None:
        """Hsieh et al.'s shrinking: drop the coordinates stuck at a bound, new thresholds."""
        shrink = on & (
            ((a_start <= 0.0) & (self.G > self.M_bar[None, :]))
            | ((a_start >= U) & (self.G < self.m_bar[None, :]))
        )
        shrink &= leaves_run[None, :]
        self.active = self.active & ~shrink
        self.M_bar = np.where(leaves_run, np.where(M > 0, M, np.inf), self.M_bar)
        self.m_bar = np.where(leaves_run, np.where(m < 0, m, -np.inf), self.m_bar)


def _pass_kernel(
    order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    Y: np.ndarray,
    A: np.ndarray,
    U: np.ndarray,
    S: np.ndarray,
    WT: np.ndarray,
    Gbuf: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba (its Python form is the loop above)
    """One pass of the coordinate loop of :func:`solve_leaves_dual_cd`, written for numba.

    For every example ``i`` of ``order`` and every leaf ``l`` of the block: ``G = y_il w_l^T x_i
    - 1``, ``alpha_il <- clip(alpha_il - G S_il, 0, U_il)``, ``w_l += (delta alpha_il) y_il x_i``
    (eq. 7) — the numpy loop's steps, in the same order. ``S`` is ``1 / Q_ii`` on live
    coordinates and 0 elsewhere (they do not move).
    """
    L = WT.shape[1]
    g = np.empty(L)
    for oi in range(order.shape[0]):
        i = order[oi]
        sparse_row_times(WT, indptr, indices, data, i, g)
        moved = False
        for l in range(L):
            grad = g[l] * Y[i, l] - 1.0
            Gbuf[i, l] = grad
            a = A[i, l]
            new = a - grad * S[i, l]
            if new < 0.0:
                new = 0.0
            if new > U[i, l]:
                new = U[i, l]
            delta = new - a
            g[l] = delta * Y[i, l]
            if delta != 0.0:
                A[i, l] = new
                moved = True
        if moved:
            sparse_row_update(WT, indptr, indices, data, i, g)


_PASS_KERNEL = njit(_pass_kernel)


def leaf_primal_objective(
    X: sp.csr_matrix | np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    C: float,
    w_parent: np.ndarray | None = None,
    weight: np.ndarray | None = None,
) -> float:
    """``1/2 ||w - w_p||^2 + C sum_i c_i (1 - y_i w^T x_i)_+`` (the leaf block of eq. 2).

    Parameters
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {-1, +1}
    w : ndarray of shape (n_features,)
    C : float
    w_parent : ndarray of shape (n_features,), optional (zeros)
    weight : ndarray of shape (n_samples,), optional
        ``c_i`` (ones by default).
    """
    wp = np.zeros_like(w) if w_parent is None else w_parent
    hinge = np.maximum(0.0, 1.0 - y * np.asarray(X @ w).ravel())
    if weight is not None:
        hinge = hinge * weight
    return float(0.5 * np.dot(w - wp, w - wp) + C * hinge.sum())


def leaf_dual_objective(
    X: sp.csr_matrix | np.ndarray,
    y: np.ndarray,
    alpha: np.ndarray,
    w_parent: np.ndarray | None = None,
) -> float:
    """The dual *maximisation* value ``sum_i alpha_i (1 - y_i w_p^T x_i) - 1/2 ||a'||^2``.

    This is minus eq. (5); by weak duality it is a lower bound of :func:`leaf_primal_objective`
    for any ``alpha`` in the box (the two agree at the optimum).
    """
    a_prime = np.asarray(X.T @ (alpha * y)).ravel()
    margin = np.ones(len(y))
    if w_parent is not None:
        margin -= y * np.asarray(X @ w_parent).ravel()
    return float(np.dot(alpha, margin) - 0.5 * np.dot(a_prime, a_prime))


def binary_dual_cd(
    X: sp.csr_matrix | np.ndarray,
    y: np.ndarray,
    C: float = 1.0,
    w_parent: np.ndarray | None = None,
    *,
    tol: float = 1e-3,
    max_passes: int = 1000,
    shrinking: bool = True,
    seed: int | None = 0,
) -> DualCDResult:
    """One leaf: :func:`solve_leaves_dual_cd` with ``L = 1``.

    With ``w_parent = 0`` this is the L1-loss linear SVM without bias of Hsieh et al. (2008),
    the problem of ``LinearSVC(loss="hinge", fit_intercept=False)``.

    Parameters
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {-1, +1} (or two classes, the larger is +1)
    C : float
    w_parent : ndarray of shape (n_features,), optional
    tol, max_passes, shrinking, seed
        As in :func:`solve_leaves_dual_cd`.
    """
    y = np.asarray(y)
    labs = np.unique(y)
    if not np.all(np.isin(labs, [-1, 1])):
        if len(labs) != 2:
            raise ValueError(f"binary_dual_cd needs two classes, got {len(labs)}")
        y = np.where(y == labs[1], 1.0, -1.0)
    d = X.shape[1]
    wp = np.zeros((1, d)) if w_parent is None else np.asarray(w_parent, dtype=np.float64)[None]
    return solve_leaves_dual_cd(
        X,
        np.asarray(y, dtype=np.float64)[:, None],
        C,
        wp,
        tol=tol,
        max_passes=max_passes,
        shrinking=shrinking,
        seed=seed,
    )
