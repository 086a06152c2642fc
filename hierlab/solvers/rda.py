"""Regularized dual averaging with optimality bounds (seed 000, Algorithm 1, with the errata).

For ``J(W) = phi(W) + Psi(W)`` with ``phi`` convex and ``Psi(W) = 1/2 tr(W^T P W)`` strongly
convex (the splitting of :class:`~hierlab.core.objective.Objective`), iteration ``t`` does

1. ``g(t)`` a subgradient of ``phi`` at ``w(t)``; ``gbar(t) = (1 - l_t) gbar(t-1) + l_t g(t)``;
2. ``w(t+1) = argmin_w gbar(t)^T w + Psi(w) = -P^{-1} gbar(t)`` (eq. 9, 11);
3. ``upper = min(upper, J(w(t)))``;
4. ``delta(t) = (1 - l_t) delta(t-1) + l_t (phi(w(t)) - g(t)^T w(t))`` and
   ``lower = max(lower, delta(t) + gbar(t)^T w(t+1) + Psi(w(t+1)))``,

starting from ``w(1) = 0``, ``lower = 0``. Paper: ``l_t = 1/t`` (``averaging="uniform"``). The
bound of step 4 holds for *any* convex weights on the past linearisations (the derivation in
Section 4.2 only uses ``phi(w) >= phi(w(t)) + g(t)^T (w - w(t))``), so
``averaging="linesearch"`` picks ``l_t in [0, 1]`` maximising the new lower bound, a concave
quadratic in ``l_t`` with a closed-form maximiser. When ``phi >= 0`` (every objective of seed
000: hinges and the convex, degree-2 homogeneous remainder ``Omega - Psi``), the zero function is
a minorant of ``phi`` and the line search applies from ``t = 1`` (the paper's ``l_1 = 1`` can
take a huge first step when ``Psi``'s modulus is small). This is the same algorithm with a
data-driven weight (equivalently, Frank-Wolfe with exact line search on the dual); it keeps
every certificate and typically closes the gap far faster.

With the paper's weights (``averaging="uniform"``) and ``phi >= 0``, eq. (9) is solved over the
closed convex domain ``W = {Psi(w) <= J(w(1))}`` (per block), which holds the optimum
(``Psi <= Omega <= J``, ``J(w*) <= J(0)``), so the problem and its solution are unchanged: the
argmin is ``-P^{-1} gbar`` scaled back onto the boundary when it lies outside. This caps the
transient of the printed step when ``Psi``'s modulus is much smaller than the curvature of
``phi`` (ORTHOGNL: ``lambda_min(Kbar)`` against ``lambda_max(K)``; on 20 Newsgroups with alpha = 1,
0.146 against 6.9, the unconstrained iterates reach ``J = 1e22`` before they come back). Step 4's
bound is also taken over a recent window of linearisations (iterations ``[s, t]``, ``s`` the
last power of two; the same derivation with other convex weights): the printed ``1/t`` average
keeps the transient's far, loose minorants with weight ``(s - 1) / t`` forever. The iterates
and the upper bound are the printed ones; only the certificate is tighter.

Both ``upper`` and ``lower`` are certified: ``lower <= J* <= upper`` at every iteration, and
:attr:`RDA.coef` is the iterate that attains ``upper``. When the objective is block-separable
(HIERMULT), the bounds, the weights ``l_t`` and the best iterate are kept per block; the
reported bounds are their sums.

The iteration at ``t`` evaluates ``J(w(t))`` and ``g(t)`` from one score matrix, so each
iteration costs two sparse-dense products (scores, ``Gamma^T X``) plus ``O(n_rows n_features)``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator

import numpy as np

from hierlab.core.exceptions import ParameterError
from hierlab.core.objective import Objective
from hierlab.core.solver import Solver, SolverState

__all__ = ["AVERAGING", "RDA", "check_budget"]

#: the weights of the newest linearisation RDA can use
AVERAGING = ("uniform", "linesearch")


def check_budget(max_iter: int, max_time: float | None) -> tuple[int, float | None]:
    """Validate a solver's budget: ``max_iter >= 1`` iterations, ``max_time > 0`` seconds or None.

    Returns
    -------
    max_iter : int
    max_time : float or None

    Raises
    ------
    ParameterError
    """
    if int(max_iter) < 1:
        raise ParameterError(f"max_iter must be >= 1, got {max_iter!r}")
    if max_time is not None and not max_time > 0:
        raise ParameterError(f"max_time must be positive, got {max_time!r}")
    return int(max_iter), max_time


class RDA(Solver):
    """RDA with upper and lower bounds on the optimum (seed 000, Algorithm 1).

    Parameters
    ----------
    max_iter : int, default 1000
        Iteration limit.
    max_time : float, optional
        Seconds of solver time after which the generator stops (unconverged).
    averaging : {"uniform", "linesearch"}, default "linesearch"
        Weight of the newest linearisation: ``1/t`` as in the paper, or the one maximising the
        lower bound (see the module docstring).
    block_tol : float, optional
        Algorithm 1's epsilon for each block of a separable problem: the state says
        ``converged`` once every block's certified gap is at most this (and an iterate has
        beaten ``w(1)``), as if each block problem ran Algorithm 1 on its own (HIERMULT's node
        problems). None: the caller stops on the summed gap.

    Attributes
    ----------
    coef : ndarray of shape (n_rows, n_features)
        The best iterate seen (the one that gave ``upper``; per block when separable).
    """

    def __init__(
        self,
        max_iter: int = 1000,
        max_time: float | None = None,
        averaging: str = "linesearch",
        block_tol: float | None = None,
    ) -> None:
        if averaging not in AVERAGING:
            raise ParameterError(f"averaging must be one of {AVERAGING}, got {averaging!r}")
        self.max_iter, self.max_time = check_budget(max_iter, max_time)
        self.averaging = averaging
        self.block_tol = None if block_tol is None else float(block_tol)
        self.coef = None

    def iterate(self, objective: Objective) -> Iterator[SolverState]:
        """Run Algorithm 1 on ``objective``; yield one state per iteration."""
        reg = objective.regularizer
        nb = objective.n_blocks
        bor = objective.block_of_row  # rows in no block map to nb
        W = objective.initial()
        best = W.copy()
        self.coef = best
        upper = np.full(nb, np.inf)
        lower = np.zeros(nb)  # J >= 0: K, C and the hinge are nonnegative
        gbar = np.zeros_like(W)
        delta = np.zeros(nb)
        spent = 0.0
        # With phi >= 0 the zero function is a valid minorant of phi, so (gbar, delta) = (0, 0)
        # is a legitimate first "linearisation" and the line search may weigh it from t = 1.
        zero_minorant = bool(getattr(objective, "phi_nonnegative", False))
        uniform = self.averaging == "uniform"
        window = _Window(W, nb) if uniform else None
        U = np.zeros_like(W)  # -P^{-1} gbar(t): the unconstrained minimiser of eq. (9)
        level = None  # the domain's level rho per block (uniform weights, phi >= 0)
        moved = False  # an iterate after w(1) has lowered ``upper`` (in some block)
        for t in range(1, self.max_iter + 1):
            t0 = time.perf_counter()
            ev = objective.evaluate(W)
            if t == 1 and uniform and zero_minorant:
                level = ev.J.copy()
            improved = ev.J < upper
            moved = moved or (t > 1 and bool(improved.any()))
            if improved.any():
                upper = np.where(improved, ev.J, upper)
                rows = np.r_[improved, False][bor]
                best[rows] = W[rows]
            G = ev.grad_phi
            b = ev.phi - objective.row_dot(G, W)
            Z = reg.psi_solve(G)  # P^{-1} g(t)
            if uniform or (t == 1 and not zero_minorant):
                lam = np.full(nb, 1.0 / t)
            else:
                lam = _line_search(objective, gbar, delta, W, G, Z, b)
            lam_rows = np.r_[lam, 0.0][bor][:, None]
            # in place, with the same roundings as (1 - l) gbar + l G: gbar is the solver's own
            gbar *= 1.0 - lam_rows
            gbar += lam_rows * G
            delta = (1.0 - lam) * delta + lam * b
            U = (1.0 - lam_rows) * U  # a new array: the last iterate W may be this U
            U -= lam_rows * Z  # = -P^{-1} gbar(t)
            W_next = U if level is None else _level_argmin(objective, U, level)
            lb = delta + objective.row_dot(gbar, W_next) + objective.psi_blocks(W_next)
            lower = np.maximum(lower, lb)
            if window is not None:
                lower = np.maximum(lower, window.add(objective, t, G, b, Z, level))
            self.coef = best
            U_, L = float(upper.sum()), float(lower.sum())
            spent += time.perf_counter() - t0
            blocks_done = self.block_tol is not None and moved
            blocks_done = blocks_done and bool(np.all(upper - lower <= self.block_tol))
            yield SolverState(
                iteration=t,
                elapsed=spent,
                upper=U_,
                lower=L,
                converged=blocks_done,
                extra={
                    "gap": U_ - L,
                    "objective": float(ev.J.sum()),
                    "loss": float(ev.loss.sum()),
                    "weight": float(lam.mean()),
                    "at_start": not moved,
                },
            )
            W = W_next
            if self.max_time is not None and spent >= self.max_time:
                return
        return

    @staticmethod
    def relative_gap(state: SolverState) -> float:
        """``(upper - lower) / |upper|`` of a state (``inf`` without a lower bound)."""
        if state.lower is None or state.upper == 0:
            return math.inf if state.lower is None else 0.0
        return (state.upper - state.lower) / abs(state.upper)


def _line_search(
    objective: Objective,
    gbar: np.ndarray,
    delta: np.ndarray,
    W: np.ndarray,
    G: np.ndarray,
    Z: np.ndarray,
    b: np.ndarray,
) -> np.ndarray:
    """The weight ``l_t in [0, 1]`` per block maximising the new lower bound (a concave
    quadratic in ``l_t``), given ``W = -P^{-1} gbar(t-1)`` and ``Z = P^{-1} g(t)``."""
    a = -objective.row_dot(gbar, W)
    c = -objective.row_dot(G, W)
    e = objective.row_dot(G, Z)
    curv = a - 2.0 * c + e
    slope = b - delta + a - c
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(curv > 0, slope / curv, np.where(slope > 0, 1.0, 0.0))
    return np.asarray(np.clip(lam, 0.0, 1.0))


def _level_argmin(objective: Objective, U: np.ndarray, level: np.ndarray) -> np.ndarray:
    """``argmin_{w in W} gbar^T w + Psi(w)`` over the domain ``W = {Psi_b(w) <= rho_b}``
    (per block) from the unconstrained minimiser ``U = -P^{-1} gbar``: ``U`` itself when it
    lies inside, else ``U`` scaled onto the boundary (the KKT point ``U / (1 + mu)``), shape
    of ``U``.

    The domain holds the optimum: ``Psi(w*) <= Omega(w*) <= J(w*) <= J(0) = rho`` (the
    remainder ``Omega - Psi`` and the loss are nonnegative), so Algorithm 1 on it solves the
    same problem (eq. 8 with a closed convex ``W``).
    """
    psi = objective.psi_blocks(U)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(psi > level, np.sqrt(level / psi), 1.0)
    if np.all(f == 1.0):
        return U
    return U * np.r_[f, 1.0][objective.block_of_row][:, None]


class _Window:
    """The lower bound of step 4 over a recent window of linearisations, ``t`` in ``[s, t]``
    with ``s`` the last power of two: the derivation of Section 4.2 holds for any convex
    weights on past linearisations, and uniform weights on the recent ones drop the early
    iterates' (far from ``w*``, loose) minorants that the printed ``1/t`` average keeps with
    weight ``(s - 1) / t`` forever. It tightens the certificate only: the iterates are the
    printed ones."""

    def __init__(self, W: np.ndarray, nb: int) -> None:
        self.g = np.zeros_like(W)
        self.U = np.zeros_like(W)
        self.d = np.zeros(nb)
        self.n = 0

    def add(
        self,
        objective: Objective,
        t: int,
        G: np.ndarray,
        b: np.ndarray,
        Z: np.ndarray,
        level: np.ndarray | None,
    ) -> np.ndarray:
        """Take ``(g(t), phi(w(t)) - g(t)^T w(t))``; the window's bound per block."""
        if t & (t - 1) == 0:  # t a power of two: a new window starts here
            self.g[:] = 0.0
            self.U[:] = 0.0
            self.d[:] = 0.0
            self.n = 0
        self.n += 1
        w = 1.0 / self.n
        self.g += w * (G - self.g)
        self.U += w * (-Z - self.U)
        self.d += w * (b - self.d)
        Ws = self.U if level is None else _level_argmin(objective, self.U, level)
        return self.d + objective.row_dot(self.g, Ws) + objective.psi_blocks(Ws)
