"""Block coordinate descent for HR-SVM and HR-LR (seed 001, Algorithm 1, eq. 4-8, Section 4.3).

The problem, its dual bound and the leaf labels are the model's
(:class:`~hierlab.methods.hr.model.HRProblem`). One outer iteration updates the nodes of even
depth, then those of odd depth. Given the other parity, the nodes of one parity are independent
(Section 4.3): internal nodes take the closed form of eq. (4),
``w_n = (w_{pi(n)} + sum_{c in C_n} w_c) / (|C_n| + 1)``; leaves solve their block problem, by
dual coordinate descent (eq. 5-7, :mod:`hierlab.methods.hr.dual_cd`) for the hinge and by L-BFGS on
eq. (8) (:func:`solve_logistic_leaf`) for the logistic loss, warm-started from the previous outer
iteration. Leaves are cut into blocks that run in parallel through joblib (threads), or on a
dask.distributed cluster (:func:`hierlab.connect`): there the problem (``X`` and the labels)
goes to every worker once per fit and a block's task carries its distinct parents' weights and
its duals (sparse), and brings back the duals and the weights that moved from the parents'.
Every outer iteration reports the smallest primal value so far and the best certified dual bound
(:meth:`~hierlab.methods.hr.model.HRProblem.certificate`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import joblib
import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from hierlab.core.cluster import active_client, cluster_cores, run_tasks, share
from hierlab.core.exceptions import ParameterError
from hierlab.core.solver import Solver, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.hr.dual_cd import CSRRows, solve_leaves_dual_cd
from hierlab.methods.hr.model import HRProblem, LeafDuals, logistic_leaf_objective

__all__ = ["BlockCoordinateDescent", "OneShot", "solve_logistic_leaf"]


def solve_logistic_leaf(
    X: Any,
    y: np.ndarray,
    C: float,
    w_parent: np.ndarray,
    weight: np.ndarray | None = None,
    w0: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int = 1000,
) -> tuple[np.ndarray, int]:
    """Minimise eq. (8) with L-BFGS (:func:`lbfgs`).

    Parameters
    ----------
    X, y, C, w_parent, weight
        As in :func:`logistic_leaf_objective`.
    w0 : ndarray of shape (n_features,), optional
        Warm start (``w_parent`` by default).
    tol : float
        Stop when the largest |gradient| component is below ``tol``.
    max_iter : int

    Returns
    -------
    w : ndarray of shape (n_features,)
    n_iter : int
    """
    x0 = np.array(w_parent if w0 is None else w0, dtype=np.float64)
    return lbfgs(
        partial(logistic_leaf_objective, X=X, y=y, C=C, w_parent=w_parent, weight=weight),
        x0,
        gtol=tol,
        max_iter=max_iter,
    )


def lbfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    gtol: float,
    max_iter: int,
    memory: int = 10,
    ftol: float = 1e3 * np.finfo(float).eps,
) -> tuple[np.ndarray, int]:
    """Limited-memory BFGS (Nocedal and Wright, Algorithm 7.4/7.5) with Armijo backtracking.

    For eq. (8), whose Hessian ``I + C X^T D X`` is at least the identity: the curvature
    ``s^T y >= ||s||^2 > 0`` holds for every step, so a backtracking line search keeps the
    inverse-Hessian model positive definite, and the first step ``-g`` (scale 1) is never
    longer than Newton's. The stop rules are L-BFGS-B's (``max |g| <= gtol``, or a relative
    decrease of ``f`` below ``ftol``); each iteration costs one or two evaluations and a few
    vector operations, where scipy's L-BFGS-B spent 2-3 ms a call on 2,350 variables.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> (f(x), grad f(x))``.
    x0 : ndarray of shape (n,)
    gtol, max_iter, memory, ftol : stop rules and the number of kept pairs ``(s, y)``.

    Returns
    -------
    x : ndarray of shape (n,)
    n_iter : int
    """
    x = np.asarray(x0, dtype=np.float64)
    f, g = fun(x)
    S: list[np.ndarray] = []
    Y: list[np.ndarray] = []
    rho: list[float] = []
    for it in range(max_iter):
        if not np.any(np.abs(g) > gtol):
            return x, it
        d = _two_loop(g, S, Y, rho)
        slope = float(g @ d)
        if slope >= 0.0:  # never for eq. (8); a steepest-descent restart otherwise
            S.clear()
            Y.clear()
            rho.clear()
            d, slope = -g, -float(g @ g)
        t = 1.0
        while True:
            x_new = x + t * d
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * t * slope:
                break
            t *= 0.5
            if t < 1e-12:
                return x, it + 1
        s, yv = x_new - x, g_new - g
        sy = float(s @ yv)
        if sy > 1e-12 * float(yv @ yv):
            S.append(s)
            Y.append(yv)
            rho.append(1.0 / sy)
            if len(S) > memory:
                del S[0], Y[0], rho[0]
        small = f - f_new <= ftol * max(abs(f), abs(f_new), 1.0)
        x, f, g = x_new, f_new, g_new
        if small:
            return x, it + 1
    return x, max_iter


def _two_loop(
    g: np.ndarray, S: list[np.ndarray], Y: list[np.ndarray], rho: list[float]
) -> np.ndarray:
    """``-H g`` by the two-loop recursion, ``H_0 = (s^T y / y^T y) I`` (identity at first)."""
    q = g.copy()
    a = np.empty(len(S))
    for k in range(len(S) - 1, -1, -1):
        a[k] = rho[k] * float(S[k] @ q)
        q -= a[k] * Y[k]
    if S:
        q *= 1.0 / (rho[-1] * float(Y[-1] @ Y[-1]))
    for k in range(len(S)):
        b = rho[k] * float(Y[k] @ q)
        q += (a[k] - b) * S[k]
    return -q


_ROWS_CACHE: dict[str, CSRRows] = {}


def _cached_rows(key: str, X: Any) -> CSRRows:
    """The cut rows of ``X``, built once per process and fit (``key``), one data set kept."""
    rows = _ROWS_CACHE.get(key)
    if rows is None:
        _ROWS_CACHE.clear()
        rows = CSRRows(X)
        _ROWS_CACHE[key] = rows
    return rows


def _svm_leaf_block(
    prob: HRProblem,
    key: str,
    b: np.ndarray,
    parents: tuple[np.ndarray, np.ndarray],
    alpha0: sp.csc_matrix,
    tol: float,
    max_passes: int,
    shrinking: bool,
    seed: list[int],
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], sp.csc_matrix, np.ndarray]:
    """Dual CD on the leaf columns ``b`` of ``prob`` (shared once per fit: the block's signs
    and weights are formed where the task runs). What travels is compact: the block's distinct
    parent rows ``P`` with each leaf's row ``pos`` (``W_parent = P[pos]``) and its duals as
    CSC in; the entries of the leaves' weights that differ from their parents' (``rows, cols,
    values``: :func:`_leaf_rows`) and the duals as CSC out."""
    P, pos = parents
    W_parent = P[pos]
    res = solve_leaves_dual_cd(
        _cached_rows(key, prob.X),
        prob.signs(b),
        prob.C * prob.weights(b),
        W_parent,
        alpha0.toarray(),
        tol=tol,
        max_passes=max_passes,
        shrinking=shrinking,
        seed=np.random.SeedSequence(seed),
    )
    r, c = np.nonzero(res.W != W_parent)
    return (r, c, res.W[r, c]), sp.csc_matrix(res.alpha), res.n_passes


def _parents(tree: _Tree, W: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P, pos)`` with ``P[pos] == tree.parent_rows(W, nodes)``: the distinct parents' rows
    (siblings share one), shape (n_parents, d), and each node's row in it."""
    uniq, pos = np.unique(tree.parent[nodes], return_inverse=True)
    P = np.where((uniq >= 0)[:, None], W[np.maximum(uniq, 0)], 0.0)
    return P, pos.reshape(-1)


def _leaf_rows(
    parents: tuple[np.ndarray, np.ndarray], moved: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> np.ndarray:
    """The leaves' weights: their parents' rows with the entries that moved put back."""
    out = parents[0][parents[1]]
    r, c, v = moved
    out[r, c] = v
    return out


def _lr_leaf_block(
    prob: HRProblem,
    b: np.ndarray,
    W_parent: np.ndarray,
    W0: np.ndarray,
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray]:
    """L-BFGS on eq. (8) for the leaf columns ``b`` of ``prob`` (shared once per fit)."""
    Y, weight = prob.signs(b), prob.weights(b)
    out = np.empty_like(W0)
    iters = np.zeros(W0.shape[0], dtype=np.int64)
    for k in range(W0.shape[0]):
        out[k], iters[k] = solve_logistic_leaf(
            prob.X, Y[:, k], prob.C, W_parent[k], weight[:, k], W0[k], tol=tol, max_iter=max_iter
        )
    return out, iters


@dataclass(frozen=True)
class _Tree:
    """What a sweep needs of the tree, computed once per fit.

    Attributes
    ----------
    leaves : ndarray of int
        The leaves' node ids (the columns of the leaf labels, in this order).
    col_of : ndarray of int, shape (n_nodes,)
        The leaf column of every leaf node, -1 for internal nodes.
    parent : ndarray of int, shape (n_nodes,)
    is_leaf : ndarray of bool, shape (n_nodes,)
    parity_nodes : tuple of two ndarray of int
        The nodes of even, then of odd depth.
    child : csr_matrix of shape (n_nodes, n_nodes)
        ``child[p, c] = 1`` iff ``c`` is a child of ``p``: the children sums of eq. (4) are one
        sparse product.
    n_children : ndarray of float, shape (n_nodes,)
    """

    leaves: np.ndarray
    col_of: np.ndarray
    parent: np.ndarray
    is_leaf: np.ndarray
    parity_nodes: tuple[np.ndarray, np.ndarray]
    child: sp.csr_matrix
    n_children: np.ndarray

    @classmethod
    def of(cls, tax: Taxonomy) -> _Tree:
        """The structure of the tree ``tax``."""
        leaves = tax.leaves
        col_of = np.full(tax.n_nodes, -1, dtype=np.int64)
        col_of[leaves] = np.arange(len(leaves))
        parent = tax.parent
        child = sp.csr_matrix(
            (np.ones(tax.n_nodes - 1), (parent[parent >= 0], np.flatnonzero(parent >= 0))),
            shape=(tax.n_nodes, tax.n_nodes),
        )
        return cls(
            leaves=leaves,
            col_of=col_of,
            parent=parent,
            is_leaf=tax.is_leaf,
            parity_nodes=(np.flatnonzero(tax.depth % 2 == 0), np.flatnonzero(tax.depth % 2 == 1)),
            child=child,
            n_children=tax.n_children.astype(np.float64),
        )

    def parent_rows(self, W: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """``w_{pi(n)}`` of every node of ``nodes`` (zeros for the root), shape (len, d)."""
        par = self.parent[nodes]
        return np.where((par >= 0)[:, None], W[np.maximum(par, 0)], 0.0)


@dataclass(frozen=True)
class _FitData:
    """What the leaf tasks of one fit share: the problem (features and labels: sent to each
    worker once per fit on a cluster) and the key of their cut rows."""

    problem: Any
    key: str
    n_workers: int


class BlockCoordinateDescent(Solver):
    """Algorithm 1 of seed 001 with the odd/even-level parallel schedule of Section 4.3.

    Parameters
    ----------
    max_iter : int, default 50
        Outer iterations (one sweep over the even levels, then the odd ones).
    inner_tol : float, default 0.1
        Starting tolerance of the leaf solvers: dual CD stops a leaf when the spread of its
        projected gradients is below it, L-BFGS when its largest |gradient| is. It is lowered
        as the duality gap closes (to ``inner_tol_factor * relative gap``, and tenfold whenever
        the leaves met it without moving: at most one pass / L-BFGS iteration each), never below
        ``inner_tol_min``, so early sweeps are cheap and late ones accurate.
    inner_tol_min : float, default 1e-6
    inner_tol_factor : float, default 10.0
    max_inner_iter : int, default 1000
        Passes (dual CD) or iterations (L-BFGS) per leaf and outer iteration.
    shrinking : bool, default False
        Shrinking in the dual CD (Hsieh et al. 2008).
    n_jobs : int, optional
        joblib workers for the leaf blocks, without a cluster; on a cluster, its worker threads.
    leaf_block : int, default 256
        Largest number of leaves solved together in one task (dual CD vectorises over them).
    random_state : int, default 0
        Seed of the dual CD's random order.
    relaxation : float, default 1.0
        Over-relaxation ``omega`` in (0, 2) of the internal nodes' step:
        ``w_n <- w_n + omega (w_n^{eq. 4} - w_n)``. 1 is eq. (4) exactly. Given the other
        nodes the objective is a strictly convex quadratic in ``w_n``, so every omega in (0, 2)
        still decreases it (successive over-relaxation), and larger values cut the outer
        iterations when a parent has many children.

    Attributes
    ----------
    coef : ndarray of shape (n_nodes, n_features)
        The iterate with the smallest objective so far.
    alpha : LeafDuals of shape (n_samples, n_leaves) or None
        The leaves' dual variables (hinge loss), sparse by leaf.
    """

    def __init__(
        self,
        max_iter: int = 50,
        inner_tol: float = 0.1,
        inner_tol_min: float = 1e-6,
        inner_tol_factor: float = 10.0,
        max_inner_iter: int = 1000,
        shrinking: bool = False,
        n_jobs: int | None = None,
        leaf_block: int = 256,
        random_state: int = 0,
        relaxation: float = 1.0,
    ) -> None:
        if not 0.0 < relaxation < 2.0:
            raise ParameterError(f"relaxation must lie in (0, 2), got {relaxation!r}")
        self.relaxation = relaxation
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.inner_tol_min = inner_tol_min
        self.inner_tol_factor = inner_tol_factor
        self.max_inner_iter = max_inner_iter
        self.shrinking = shrinking
        self.n_jobs = n_jobs
        self.leaf_block = leaf_block
        self.random_state = random_state
        self.coef = None
        self.alpha: LeafDuals | None = None

    def _blocks(self, cols: np.ndarray, n_workers: int) -> list[np.ndarray]:
        """``cols`` cut into blocks of at most ``leaf_block`` leaves, as many as whole rounds of
        ``n_workers`` need (3 blocks on 2 workers would leave one idle in the second round);
        a leaf's iterates do not depend on its block."""
        n_blocks = max(n_workers, int(np.ceil(len(cols) / max(1, self.leaf_block))))
        n_blocks = -(-n_blocks // n_workers) * n_workers
        n_blocks = min(n_blocks, len(cols))
        return [b for b in np.array_split(cols, n_blocks) if len(b)]

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one state per outer iteration.

        ``upper``: smallest J(W) so far; ``lower``: largest certified dual bound D(alpha) so far
        (see :mod:`hierlab.methods.hr.model`); ``extra``: this iteration's ``primal``, ``dual``,
        the KKT residuals (``kkt`` is the largest), ``inner_tol``, and the leaf solvers' work
        (``inner_passes`` for dual CD, ``inner_iters`` for L-BFGS).
        """
        prob: HRProblem = objective
        if prob.loss not in ("hinge", "logistic"):
            raise ParameterError(
                f"block coordinate descent (seed 001's solver) solves the hinge and the logistic "
                f"loss, not {prob.loss!r}: use the global dual CD (solver='global-cd')"
            )
        tax = prob.taxonomy
        W = np.zeros((tax.n_nodes, prob.X.shape[1]))
        alpha = LeafDuals(prob.X.shape[0], len(tax.leaves)) if prob.loss == "hinge" else None
        # workers cut the rows of X once per fit (dual CD), under this key
        client = active_client()
        n_workers = (
            cluster_cores(client) if client is not None else joblib.effective_n_jobs(self.n_jobs)
        )
        fit = _FitData(share(prob)[0], uuid.uuid4().hex, int(n_workers))
        self.coef = W.copy()
        self.alpha = alpha
        try:
            yield from self._sweeps(prob, W, alpha, fit)
        finally:
            _ROWS_CACHE.pop(fit.key, None)

    def _sweeps(
        self, prob: HRProblem, W: np.ndarray, alpha: LeafDuals | None, fit: _FitData
    ) -> Iterator[SolverState]:
        """The outer iterations: even levels, odd levels, certificate, tolerance update."""
        tree = _Tree.of(prob.taxonomy)
        hinge = prob.loss == "hinge"
        best_upper = np.inf
        best_lower = -np.inf
        tol_now = float(self.inner_tol)
        # threads: the compiled dual CD pass releases the GIL, and W need not be pickled to
        # workers (a backend chosen with joblib.parallel_config, e.g. dask, still wins)
        # results as a generator: one block's dense duals at a time, not every block's at once
        with joblib.Parallel(n_jobs=self.n_jobs, prefer="threads", return_as="generator") as pool:
            parallel = partial(run_tasks, pool=pool, one_per_thread=True)
            for t in range(1, self.max_iter + 1):
                work = 0
                for r in (0, 1):
                    nodes = tree.parity_nodes[r]
                    self._internal_step(W, nodes[~tree.is_leaf[nodes]], tree)
                    lv = nodes[tree.is_leaf[nodes]]
                    if len(lv):
                        blocks = self._blocks(tree.col_of[lv], fit.n_workers)
                        if hinge:
                            assert alpha is not None
                            seed = [int(self.random_state), t, r]
                            pars = [_parents(tree, W, tree.leaves[b]) for b in blocks]
                            work += self._svm_leaves(
                                parallel, prob, W, alpha, blocks, pars, fit, tol_now, seed
                            )
                        else:
                            wpar = [tree.parent_rows(W, tree.leaves[b]) for b in blocks]
                            work += self._lr_leaves(parallel, prob, W, blocks, wpar, fit, tol_now)
                cert = prob.certificate(W, alpha)
                if cert["primal"] < best_upper:
                    best_upper = cert["primal"]
                    self.coef = W.copy()
                if np.isfinite(cert["dual"]):
                    best_lower = max(best_lower, cert["dual"])
                extra = dict(cert)
                extra["inner_tol"] = tol_now
                extra["inner_passes" if hinge else "inner_iters"] = work
                yield SolverState(
                    iteration=t,
                    elapsed=0.0,
                    upper=float(best_upper),
                    lower=float(best_lower) if np.isfinite(best_lower) else None,
                    extra=extra,
                )
                rel_gap = (best_upper - best_lower) / max(abs(best_upper), 1e-300)
                tol_now = self._next_inner_tol(tol_now, rel_gap, work, len(tree.leaves))

    def _internal_step(self, W: np.ndarray, inner: np.ndarray, tree: _Tree) -> None:
        """Eq. (4) at the internal nodes ``inner`` (over-relaxed by ``relaxation``), in place."""
        if not len(inner):
            return
        target = (tree.parent_rows(W, inner) + tree.child[inner] @ W) / (
            tree.n_children[inner] + 1.0
        )[:, None]
        if self.relaxation == 1.0:
            W[inner] = target
        else:
            W[inner] += self.relaxation * (target - W[inner])

    def _svm_leaves(
        self,
        parallel: Callable[..., Iterator[Any]],
        prob: HRProblem,
        W: np.ndarray,
        alpha: LeafDuals,
        blocks: list[np.ndarray],
        pars: list[tuple[np.ndarray, np.ndarray]],
        fit: _FitData,
        tol: float,
        seed: list[int],
    ) -> int:
        """Dual CD (eq. 5-7) on the leaf blocks, in place on ``W`` and ``alpha``; the passes."""
        items = (
            (fit.key, b, pb, alpha.block_csc(b), tol, self.max_inner_iter, self.shrinking, seed)
            for b, pb in zip(blocks, pars)
        )
        res = parallel(_svm_leaf_block, items, (fit.problem,))
        work = 0
        leaves = prob.taxonomy.leaves
        for b, pb, (moved, ab, passes) in zip(blocks, pars, res):
            W[leaves[b]] = _leaf_rows(pb, moved)
            alpha.set_block_csc(b, ab)
            work += int(passes.sum())
        return work

    def _lr_leaves(
        self,
        parallel: Callable[..., Iterator[Any]],
        prob: HRProblem,
        W: np.ndarray,
        blocks: list[np.ndarray],
        wpar: list[np.ndarray],
        fit: _FitData,
        tol: float,
    ) -> int:
        """L-BFGS on eq. (8) for the leaf blocks, in place on ``W``; the iterations run."""
        leaves = prob.taxonomy.leaves
        # L-BFGS does level-1 BLAS on d-vectors, where threaded BLAS only adds synchronisation
        with threadpool_limits(limits=1, user_api="blas"):
            items = ((b, wp, W[leaves[b]], tol, self.max_inner_iter) for b, wp in zip(blocks, wpar))
            res = parallel(_lr_leaf_block, items, (fit.problem,))
        work = 0
        for b, (Wb, iters) in zip(blocks, res):
            W[leaves[b]] = Wb
            work += int(iters.sum())
        return work

    def _next_inner_tol(self, tol_now: float, rel_gap: float, work: int, n_leaves: int) -> float:
        """The leaves' next tolerance: lowered with the gap, and at once when the leaves met it
        without moving (at most one pass / iteration each): otherwise a stall."""
        target = min(tol_now, self.inner_tol_factor * rel_gap)
        if work <= n_leaves:
            target = min(target, 0.1 * tol_now)
        return float(max(self.inner_tol_min, target))


class OneShot(Solver):
    """Runs a closed computation once and reports it as one solver state (the one-vs-rest
    baselines' liblinear leaves: ``fn() -> (coef, objective, extras)``)."""

    def __init__(self, fn: Callable[[], tuple[np.ndarray, float, dict[str, Any]]]) -> None:
        self.fn = fn

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield the single, converged state of the computation."""
        self.coef, upper, extra = self.fn()
        yield SolverState(1, 0.0, upper, None, extra, converged=True)
