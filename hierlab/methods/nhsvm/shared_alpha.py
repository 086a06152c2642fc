"""Shared SVM (seed 003, Sections 6 and 7.2): alternate SGD on V with the closed-form alpha step.

The Shared SVM objective (eq. 14) over node vectors ``U`` and weights ``alpha`` is

    J(U, alpha) = lam * sum_n ||U_n||^2 / alpha_n + mean_i max_l [ s_U(l) - s_U(l_i) + Δ(l, l_i) ],
    s.t. sum_{n in A+(l)} alpha_n <= 1 for every leaf l, alpha >= 0,

with ``s_U(l) = sum_{n in A+(l)} U_n . x``. It is jointly convex (Lemma 1). For fixed ``alpha``
the change of variables ``U_n = sqrt(alpha_n) V_n`` turns it into the NHSVM problem in ``V``
(solved by Pegasos epochs); for fixed ``U`` the optimal ``alpha`` of eq. (20) has the closed
form of Algorithm 1 on trees (:func:`shared_alpha`).

Algorithm 1 as printed is garbled; the recursion of Appendix D (eq. 24-26) gives, bottom-up,
``N_n = ||U_n||^2`` for a leaf and ``N_n = (sqrt(||U_n||^2) + sqrt(S_n))^2`` with
``S_n = sum_{c in C(n)} N_c`` for an internal node, the share ``E_n = sqrt(||U_n||^2) /
(sqrt(||U_n||^2) + sqrt(S_n))`` (``E_leaf = 1``); then top-down ``alpha_n = L_p E_n`` and
``L_n = L_p (1 - E_n)`` with ``L = 1`` above the root. (The printed ``alpha_n = sqrt(L_p E_n)``
and ``E_leaf = 0`` do not satisfy eq. 20's constraints; the test checks the closed form against
a numerical minimisation of eq. 20.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from scipy.optimize import minimize

from hierlab.core.exceptions import ConvergenceError, ParameterError, TaxonomyError
from hierlab.core.solver import Solver, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.nhsvm.model import leaf_path_matrix
from hierlab.methods.nhsvm.sgd import PegasosSGD

__all__ = [
    "AlphaAlternation",
    "SharedSVMSolver",
    "alpha_step",
    "shared_alpha",
    "shared_alpha_floor",
    "shared_norm_objective",
]


def shared_alpha(U: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """Optimal ``alpha`` of eq. (20) for fixed node vectors ``U`` on a tree (Algorithm 1).

    Parameters
    ----------
    U : ndarray of shape (n_nodes, n_features) or (n_nodes,)
        Node vectors, or directly their squared norms ``||U_n||^2`` when 1-D.
    taxonomy : Taxonomy
        A tree; ids are sorted by depth (``parent[n] < n``), as Algorithm 1 assumes.

    Returns
    -------
    alpha : ndarray of shape (n_nodes,)
        ``sum_{n in A+(l)} alpha_n = 1`` on every root-to-leaf path; nodes whose subtree has
        ``U = 0`` pass their whole budget down (``alpha_n = 0``).
    """
    if not taxonomy.is_tree:
        raise TaxonomyError("Algorithm 1 (closed-form alpha of Shared SVM) needs a tree")
    U = np.asarray(U, dtype=np.float64)
    sq = U if U.ndim == 1 else np.einsum("ij,ij->i", U, U)
    M = taxonomy.n_nodes
    parent = taxonomy.parent
    own = np.sqrt(np.maximum(sq, 0.0))
    N = sq.astype(np.float64).copy()
    S = np.zeros(M)  # S_n = sum of N_c over the children c of n
    E = np.ones(M)
    # bottom-up in decreasing id order (parent[n] < n)
    for n in range(M - 1, -1, -1):
        if taxonomy.n_children[n] > 0:
            s = S[n]
            denom = own[n] + np.sqrt(s)
            if denom > 0.0:
                E[n] = own[n] / denom
                N[n] = denom**2
            else:
                E[n] = 0.0
                N[n] = 0.0
        if n > 0:
            S[parent[n]] += N[n]
    alpha = np.zeros(M)
    L = np.zeros(M)
    alpha[0] = E[0]
    L[0] = 1.0 - E[0]
    for n in range(1, M):
        p = parent[n]
        alpha[n] = L[p] * E[n]
        L[n] = L[p] * (1.0 - E[n])
    return alpha


def shared_alpha_floor(U: np.ndarray, taxonomy: Taxonomy, floor: np.ndarray) -> np.ndarray:
    """The alpha step of eq. (20) with a floor: ``min sum_n ||U_n||^2 / alpha_n`` s.t.
    ``sum_{n in A+(l)} alpha_n <= 1`` for every leaf and ``alpha_n >= floor_n`` (the root 0).

    Not in seed 003: Shared SVM with ``alpha_floor = beta`` uses ``floor = beta alpha0`` (an
    eq. 6/7 solution, whose paths sum to 1), so ``beta = 0`` is Algorithm 1 and ``beta = 1`` is
    NHSVM's fixed alpha. Solved through the smooth concave dual: for multipliers ``mu >= 0`` of
    the path constraints and ``v = P^T mu``, the minimiser over ``floor <= alpha <= 1`` (the
    upper bound is implied by the paths) is ``alpha_n = clip(sqrt(s_n / v_n), floor_n, 1)``
    (``floor_n`` where ``s_n = ||U_n||^2 = 0``),
    and ``g(mu) = sum_n (s_n / alpha_n + v_n alpha_n) - 1^T mu`` has gradient ``P alpha - 1``
    (maximised with L-BFGS-B). The result is then pulled towards ``floor`` just enough to
    satisfy every path constraint exactly.

    Parameters
    ----------
    U : ndarray of shape (n_nodes, n_features) or (n_nodes,)
        Node vectors, or their squared norms.
    taxonomy : Taxonomy
        A tree.
    floor : ndarray of shape (n_nodes,)
        Lower bounds (>= 0, paths summing to at most 1; ``floor[0]`` is ignored).

    Returns
    -------
    alpha : ndarray of shape (n_nodes,)
        ``alpha[0] = 0``.
    """
    if not taxonomy.is_tree:
        raise TaxonomyError("the alpha step of Shared SVM needs a tree")
    U = np.asarray(U, dtype=np.float64)
    sq = (U if U.ndim == 1 else np.einsum("ij,ij->i", U, U))[1:]
    f = np.maximum(np.asarray(floor, dtype=np.float64)[1:], 0.0)
    P = leaf_path_matrix(taxonomy)
    Pf = P @ f
    if np.any(Pf > 1.0 + 1e-9):
        raise ParameterError("the alpha floor must leave every path sum <= 1")
    top = float(sq.max()) if sq.size else 0.0
    if top <= 0.0:
        return np.r_[0.0, f]
    s = sq / top  # the minimiser does not depend on the scale of s
    pos = s > 0.0
    PT = P.T.tocsr()

    def alpha_of(mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v = np.maximum(PT @ mu, 1e-300)
        a = f.copy()
        # alpha <= 1 holds at every feasible point: the box keeps g finite where v = 0
        a[pos] = np.clip(np.sqrt(s[pos] / v[pos]), f[pos], 1.0)
        return a, v

    def neg_dual(mu: np.ndarray) -> tuple[float, np.ndarray]:
        a, v = alpha_of(mu)
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = np.where(pos, s / np.where(a > 0, a, 1.0), 0.0)
        g = float(np.sum(cost + v * a) - mu.sum())
        return -g, -(P @ a - 1.0)

    L = P.shape[0]
    res = minimize(
        neg_dual,
        np.ones(L),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * L,
        options={"maxiter": 20000, "gtol": 1e-12, "ftol": 0.0},
    )
    a, _ = alpha_of(res.x)
    if not np.all(np.isfinite(a)):
        raise ConvergenceError("the floored alpha step did not converge")
    # feasibility: alpha = f + t (a - f) with the largest t <= 1 keeping every path sum <= 1
    extra = P @ (a - f)
    room = 1.0 - Pf
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(extra > 0, room / np.where(extra > 0, extra, 1.0), np.inf)
    t = min(1.0, float(ratio.min())) if ratio.size else 1.0
    return np.r_[0.0, f + t * (a - f)]


def alpha_step(
    U: np.ndarray, taxonomy: Taxonomy, floor: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The alpha step of Shared SVM at fixed ``U``: Algorithm 1, then ``V = U / sqrt(alpha)``.

    Parameters
    ----------
    U : ndarray of shape (n_nodes, n_features)
    taxonomy : Taxonomy
        A tree.
    floor : ndarray of shape (n_nodes,), optional
        Lower bounds on alpha (:func:`shared_alpha_floor`); None (or all zero) is Algorithm 1.

    Returns
    -------
    alpha : ndarray of shape (n_nodes,)
        :func:`shared_alpha` with the root set to 0 (its vector scores every label alike).
    V : ndarray of shape (n_nodes, n_features)
        ``U_n / sqrt(alpha_n)``, and 0 where ``alpha_n = 0`` (then ``U_n = 0``).
    """
    if floor is not None and np.any(np.asarray(floor)[1:] > 0.0):
        alpha = shared_alpha_floor(U, taxonomy, floor)
    else:
        alpha = shared_alpha(U, taxonomy)
    alpha[0] = 0.0
    s = np.sqrt(alpha)[:, None]
    V = np.divide(U, s, out=np.zeros_like(U), where=s > 0.0)  # one array, no U / s temporary
    return alpha, V


def shared_norm_objective(U: np.ndarray, alpha: np.ndarray) -> float:
    """``sum_n ||U_n||^2 / alpha_n`` (the first term of eq. 14 and 20; ``0 / 0 = 0``)."""
    sq = np.einsum("ij,ij->i", U, U) if U.ndim == 2 else np.asarray(U)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(sq > 0.0, sq / alpha, 0.0)
    return float(np.sum(terms))


class AlphaAlternation(Solver):
    """What the two Shared SVM solvers share: the alternation's schedule and its best state.

    Parameters
    ----------
    alpha0 : ndarray of shape (n_nodes,)
        Initial weights (eq. 6 or 7).
    rounds : int
        Maximum alpha steps (>= 1).
    epochs_per_alpha : int
        Epochs of a V-step (>= 1).
    tol : float
        Relative tolerance of the solver's stopping test.

    Attributes
    ----------
    coef : ndarray of shape (n_nodes, n_features)
        ``V`` of the best state (``U = sqrt(alpha) V``).
    alpha : ndarray of shape (n_nodes,)
        The weights that go with ``coef``.
    alpha_history : list of ndarray
        Alpha after each round.
    """

    def __init__(self, alpha0: np.ndarray, rounds: int, epochs_per_alpha: int, tol: float) -> None:
        if rounds < 1 or epochs_per_alpha < 1:
            raise ParameterError("rounds and epochs_per_alpha must be >= 1")
        self.alpha0 = np.asarray(alpha0, dtype=np.float64)
        self.rounds = int(rounds)
        self.epochs_per_alpha = int(epochs_per_alpha)
        self.tol = float(tol)
        self.coef: np.ndarray | None = None
        self.alpha = self.alpha0.copy()
        self.alpha_history: list[np.ndarray] = []

    def _initial_alpha(self) -> np.ndarray:
        """``alpha0`` with the root's weight 0 (its vector scores every label alike)."""
        alpha = self.alpha0.copy()
        alpha[0] = 0.0
        return alpha

    def _keep(self, J: float, best: float, V: np.ndarray, alpha: np.ndarray) -> float:
        """Keep ``(V, alpha)`` as the best state when its objective ``J`` beats ``best``.

        Returns
        -------
        float
            The new best objective.
        """
        if J < best:
            if self.coef is not None and self.coef.shape == V.shape:
                np.copyto(self.coef, V)  # in place: no third copy of W while it is made
            else:
                self.coef = V.copy()
            self.alpha = alpha.copy()
            return J
        return best

    def _keep_alpha_step(self, J: float, best: float, V: np.ndarray, alpha: np.ndarray) -> float:
        """Record an alpha step in ``alpha_history``, then :meth:`_keep` it."""
        self.alpha_history.append(alpha.copy())
        return self._keep(J, best, V, alpha)


class SharedSVMSolver(AlphaAlternation):
    """Alternating minimisation of eq. (14): Pegasos epochs on ``V``, then Algorithm 1 on alpha.

    The objective handed to :meth:`iterate` is a
    :class:`~hierlab.methods.nhsvm.model.HierarchicalHinge` whose class attributes are
    ``sqrt(alpha)``; after every ``epochs_per_alpha`` epochs, ``U = sqrt(alpha) V`` is formed,
    ``alpha`` is recomputed in closed form, ``V = U / sqrt(alpha)`` is restored (so ``U`` and
    the loss are unchanged and the objective can only decrease) and the averaging restarts.

    Parameters
    ----------
    alpha0 : ndarray of shape (n_nodes,)
        Initial weights (e.g. eq. 6 with rho = 2).
    rounds : int, default 5
        Maximum alpha updates.
    epochs_per_alpha : int, default 5
        SGD epochs on ``V`` between two alpha steps.
    batch_size : int, default 64
    tol : float, default 1e-3
        Converged when an alpha round improves the objective by less than ``tol`` (relative).
    random_state : int, optional
    alpha_floor : float, default 0.0
        ``beta`` in ``[0, 1]``: every alpha step keeps ``alpha >= beta alpha0``
        (:func:`shared_alpha_floor`); 0 is the paper's Algorithm 1, 1 keeps ``alpha0``.
    plain : bool, default False
        Plain Pegasos V-steps (:class:`~hierlab.methods.nhsvm.sgd.PegasosSGD`'s ``plain``): the
        last iterate, not the average, is kept and feeds the alpha step.

    Attributes
    ----------
    coef, alpha, alpha_history
        As in :class:`AlphaAlternation`.
    """

    def __init__(
        self,
        alpha0: np.ndarray,
        rounds: int = 5,
        epochs_per_alpha: int = 5,
        batch_size: int = 64,
        tol: float = 1e-3,
        random_state: Any = None,
        alpha_floor: float = 0.0,
        plain: bool = False,
    ) -> None:
        super().__init__(alpha0, rounds, epochs_per_alpha, tol)
        self.plain = bool(plain)
        self.batch_size = int(batch_size)
        self.random_state = random_state
        if not 0.0 <= alpha_floor <= 1.0:
            raise ParameterError(f"alpha_floor must lie in [0, 1], got {alpha_floor}")
        self.alpha_floor = float(alpha_floor)

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one state per SGD epoch; ``extra["alpha_step"]`` marks the epochs after which
        alpha was updated."""
        tax = objective.taxonomy
        alpha = self._initial_alpha()
        objective.set_attributes(np.sqrt(alpha))
        sgd = PegasosSGD(
            epochs=1, batch_size=self.batch_size, random_state=self.random_state, plain=self.plain
        )
        V = np.zeros(objective.coef_shape[::-1]).T  # F-ordered: the epochs work in place
        V_bar = V.copy(order="K")
        n_avg = 0
        best = objective.value(V)
        self.coef, self.alpha = V.copy(), alpha.copy()
        round_start = best
        epoch = 0
        for rnd in range(1, self.rounds + 1):
            for _ in range(self.epochs_per_alpha):
                epoch += 1
                V, V_bar, n_avg, _ = sgd.run_epoch(objective, V, V_bar, n_avg, own=True)
                if self.plain:  # Pegasos as printed: the last iterate, not the average
                    V_bar = V
                val = objective.value(V_bar)
                best = self._keep(val, best, V_bar, alpha)
                last_epoch = _ == self.epochs_per_alpha - 1
                extra: dict[str, Any] = {"objective": val, "round": rnd, "alpha_step": False}
                if not last_epoch:
                    yield SolverState(epoch, 0.0, float(best), None, extra)
            # alpha step from the averaged iterate: U = sqrt(alpha) V_bar
            U = np.sqrt(alpha)[:, None] * V_bar
            V = V_bar = np.empty((0, 0))  # the next round starts from the alpha step's V
            floor = self.alpha_floor * self._initial_alpha() if self.alpha_floor > 0 else None
            alpha, V_new = alpha_step(U, tax, floor)
            shared_norm = shared_norm_objective(U, alpha)
            del U
            objective.set_attributes(np.sqrt(alpha))
            V = np.asfortranarray(V_new)
            del V_new
            V_bar = V.copy(order="K")
            n_avg = 0
            val = objective.value(V)
            best = self._keep_alpha_step(val, best, V, alpha)
            converged = rnd > 1 and (round_start - best) <= self.tol * abs(best)
            round_start = best
            extra = {
                "objective": val,
                "round": rnd,
                "alpha_step": True,
                "shared_norm": shared_norm,
            }
            yield SolverState(epoch, 0.0, float(best), None, extra, converged=converged)
            if converged:
                break
        objective.set_attributes(np.sqrt(self.alpha))
