"""Block coordinate descent for HR-SVM and HR-LR (seed 001, Algorithm 1, eq. 2-8, Section 4.3).

The objective over the weight vectors ``W = {w_n}`` of every node ``n`` of a tree is

    J(W) = sum_n 1/2 ||w_n - w_{pi(n)}||^2 + C sum_{n in T} sum_i c_in loss(y_in w_n^T x_i)

with ``w_{pi(root)} = 0``, ``T`` the leaves, ``loss`` the hinge (HR-SVM, eq. 2) or the logistic
loss (HR-LR, eq. 3), ``y_in = +1`` iff leaf ``n`` is a label of example ``i`` and ``c_in`` in
{0, 1} (0 when ``i`` carries an internal label above ``n`` that no other label of ``i`` resolves:
such an example is neither a positive nor a negative of the leaf).

One outer iteration updates the nodes of even depth, then those of odd depth. Given the other
parity, the nodes of one parity are independent (Section 4.3): internal nodes take the closed
form of eq. (4), ``w_n = (w_{pi(n)} + sum_{c in C_n} w_c) / (|C_n| + 1)``; leaves solve their
block problem, by dual coordinate descent (eq. 5-7, :mod:`hierlab.solvers.dual_cd`) for the hinge
and by L-BFGS on eq. (8) for the logistic loss, warm-started from the previous outer iteration.
Leaves are cut into blocks that run in parallel through joblib, so the same code runs on a dask
cluster under ``joblib.parallel_backend("dask")``.

Certificate. Writing the regulariser as ``1/2 ||B W||^2`` with ``(B W)_n = w_n - w_{pi(n)}``,
``B^{-1}`` is the ancestor matrix ``A`` (``A[n, j] = 1`` iff ``j`` in ``A+(n)``), so Lagrange
duality gives, for any ``0 <= alpha_in <= C c_in``,

    D(alpha) = sum_{n in T, i} phi(alpha_in) - 1/2 sum_j ||S_j||^2,
    S_j = sum_{leaves n below j} sum_i alpha_in y_in x_i,

with ``phi(a) = a`` for the hinge and ``phi(a) = C H(a / C)`` (binary entropy in nats) for the
logistic loss. ``D(alpha) <= J*`` for every feasible ``alpha``: it is a certified lower bound of
the *global* optimum, equal to it at the fixed point of the block scheme (where the leaves' duals
are optimal and ``W = A A^T U``). For HR-SVM ``alpha`` is the leaves' dual iterate; for HR-LR it
is ``alpha_in = C c_in sigma(-y_in w_n^T x_i)`` (the logistic loss's own dual point at ``W``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import joblib
import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit, xlogy
from threadpoolctl import threadpool_limits

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.solver import Solver, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.solvers.dual_cd import CSRRows, projected_gradient, solve_leaves_dual_cd

__all__ = [
    "BlockCoordinateDescent",
    "HRProblem",
    "leaf_labels",
    "logistic_leaf_objective",
    "solve_logistic_leaf",
]

LOSSES = ("hinge", "logistic")


def leaf_labels(Y: Any, taxonomy: Taxonomy) -> tuple[sp.csc_matrix, sp.csc_matrix | None]:
    """One-vs-rest leaf labels ``y_in`` and the switched-off pairs, from node ids or an indicator.

    Parameters
    ----------
    Y : ndarray of int of shape (n_samples,) or csr_matrix of shape (n_samples, n_nodes)
        Node ids (single-label) or a 0/1 indicator of each row's labels (multi-label; need not
        be closed under ancestors).
    taxonomy : Taxonomy

    Returns
    -------
    positive : csc_matrix of bool, shape (n_samples, n_leaves)
        ``positive[i, k]`` iff leaf ``taxonomy.leaves[k]`` is a label of row ``i``.
    excluded : csc_matrix of bool of shape (n_samples, n_leaves), or None
        Pairs ``(i, k)`` left out of leaf ``k``'s loss: row ``i`` has an internal label that is
        an ancestor of the leaf and has no other label of ``i`` below it. None when there is none.
    """
    n_nodes = taxonomy.n_nodes
    if sp.issparse(Y):
        ind = sp.csr_matrix(Y, dtype=np.float64)
        ind.data[:] = 1.0
        ind.sum_duplicates()
        ind.data[:] = 1.0
    else:
        ids = np.asarray(Y, dtype=np.int64)
        ind = sp.csr_matrix(
            (np.ones(len(ids)), (np.arange(len(ids)), ids)), shape=(len(ids), n_nodes)
        )
    if ind.shape[1] != n_nodes:
        raise DataError(f"label indicator has {ind.shape[1]} columns, taxonomy {n_nodes} nodes")
    leaves = taxonomy.leaves
    positive = (ind[:, leaves] > 0).tocsc()
    internal = ~taxonomy.is_leaf
    on_internal = ind.multiply(internal[None, :].astype(np.float64)).tocsr()
    on_internal.eliminate_zeros()
    if on_internal.nnz == 0:
        return positive, None
    A = taxonomy.ancestor_matrix
    strict = (A - sp.identity(n_nodes, format="csr")).tocsr()
    strict.eliminate_zeros()
    # label p of row i is resolved when another label of i lies strictly below p
    resolved = sp.csr_matrix((ind @ strict) > 0, dtype=np.float64)
    unresolved = sp.csr_matrix(on_internal - on_internal.multiply(resolved))
    unresolved.eliminate_zeros()
    if unresolved.nnz == 0:
        return positive, None
    excluded = ((unresolved @ A[leaves].T) > 0).tocsc()
    excluded = excluded - excluded.multiply(positive)
    excluded = sp.csc_matrix(excluded, dtype=bool)
    excluded.eliminate_zeros()
    return positive, (excluded if excluded.nnz else None)


@dataclass
class HRProblem:
    """The data of eq. (2)/(3): features, taxonomy, leaf labels, ``C`` and the loss.

    Attributes
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    taxonomy : Taxonomy
        A tree.
    positive : csc_matrix of bool, shape (n_samples, n_leaves)
        ``y_in = +1`` entries, columns in the order of ``taxonomy.leaves``.
    excluded : csc_matrix of bool, shape (n_samples, n_leaves), or None
        Pairs with ``c_in = 0``.
    C : float
    loss : {"hinge", "logistic"}
    """

    X: Any
    taxonomy: Taxonomy
    positive: sp.csc_matrix
    excluded: sp.csc_matrix | None
    C: float
    loss: str = "hinge"

    @classmethod
    def from_labels(
        cls, X: Any, Y: Any, taxonomy: Taxonomy, C: float = 1.0, loss: str = "hinge"
    ) -> HRProblem:
        """Build the problem from node ids or a label indicator (see :func:`leaf_labels`)."""
        if loss not in LOSSES:
            raise ParameterError(f"loss must be one of {LOSSES}, got {loss!r}")
        if not (np.isfinite(C) and C > 0):
            raise ParameterError(f"C must be a positive number, got {C!r}")
        if not taxonomy.is_tree:
            raise DataError("HR-SVM/HR-LR need a tree taxonomy")
        positive, excluded = leaf_labels(Y, taxonomy)
        Xc = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
        return cls(Xc, taxonomy, positive, excluded, float(C), loss)

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def signs(self, cols: np.ndarray) -> np.ndarray:
        """``y_in`` in {-1, +1} for the leaf columns ``cols``, dense (n_samples, len(cols))."""
        return np.where(self.positive[:, cols].toarray(), 1.0, -1.0)

    def weights(self, cols: np.ndarray) -> np.ndarray:
        """``c_in`` in {0, 1} for the leaf columns ``cols``, dense (n_samples, len(cols))."""
        if self.excluded is None:
            return np.ones((self.n_samples, len(cols)))
        return 1.0 - self.excluded[:, cols].toarray()

    def certificate(
        self, W: np.ndarray, alpha: np.ndarray | None = None, chunk: int = 256
    ) -> dict[str, float]:
        """Primal value, certified dual bound and KKT residuals at ``W`` (and ``alpha``).

        Parameters
        ----------
        W : ndarray of shape (n_nodes, n_features)
        alpha : ndarray of shape (n_samples, n_leaves), optional
            The leaves' dual variables (HR-SVM). For the logistic loss they are derived from
            ``W``; for the hinge without ``alpha`` the dual bound is not computed.
        chunk : int
            Leaves processed at once (bounds the dense (n_samples, chunk) buffers).

        Returns
        -------
        dict with ``primal`` (J(W)), ``dual`` (D(alpha), a lower bound of the optimum, or nan),
        ``kkt_internal`` (largest |gradient| at internal nodes), ``kkt_leaf_stationarity``
        (largest |w_n - w_p - sum_i alpha_in y_in x_i|), ``kkt_leaf_pg`` (largest |projected
        gradient| of the leaves' duals; hinge only, 0 for logistic) and ``kkt`` (their max).
        """
        tax = self.taxonomy
        X = self.X
        C = self.C
        parent = tax.parent
        leaves = tax.leaves
        # regulariser and R = B^T B W (gradient of the regulariser)
        diff = W.copy()
        has_parent = parent >= 0
        diff[has_parent] -= W[parent[has_parent]]
        reg = 0.5 * float(np.einsum("ij,ij->", diff, diff))
        R = diff.copy()
        np.subtract.at(R, parent[has_parent], diff[has_parent])
        internal = tax.internal_nodes
        kkt_internal = float(np.abs(R[internal]).max()) if len(internal) else 0.0
        A_leaf = tax.ancestor_matrix[leaves]  # (n_leaves, n_nodes)
        S = np.zeros((tax.n_nodes, X.shape[1]))
        loss_sum = 0.0
        phi_sum = 0.0
        kkt_stat = 0.0
        kkt_pg = 0.0
        have_dual = self.loss == "logistic" or alpha is not None
        for s in range(0, len(leaves), chunk):
            cols = np.arange(s, min(s + chunk, len(leaves)))
            Yc = self.signs(cols)
            Cw = C * self.weights(cols)
            Z = np.asarray(X @ W[leaves[cols]].T)
            yz = Yc * Z
            if self.loss == "hinge":
                loss_sum += float((Cw * np.maximum(0.0, 1.0 - yz)).sum())
                if alpha is None:
                    continue
                a = alpha[:, cols]
                phi_sum += float(a.sum())
                pg = projected_gradient(yz - 1.0, a, Cw)
                kkt_pg = max(kkt_pg, float(np.abs(pg).max()) if pg.size else 0.0)
            else:
                loss_sum += float((Cw * np.logaddexp(0.0, -yz)).sum())
                a = Cw * expit(-yz)
                p = np.divide(a, Cw, out=np.zeros_like(a), where=Cw > 0)
                ent = -(xlogy(p, p) + xlogy(1.0 - p, 1.0 - p))
                phi_sum += float((Cw * ent).sum())
            Uc = np.asarray(X.T @ (a * Yc)).T  # (len(cols), d): sum_i alpha_in y_in x_i
            S += A_leaf[cols].T @ Uc
            resid = R[leaves[cols]] - Uc
            kkt_stat = max(kkt_stat, float(np.abs(resid).max()) if resid.size else 0.0)
        primal = reg + loss_sum
        dual = phi_sum - 0.5 * float(np.einsum("ij,ij->", S, S)) if have_dual else float("nan")
        out = {
            "primal": primal,
            "dual": dual,
            "kkt_internal": kkt_internal,
            "kkt_leaf_stationarity": kkt_stat if have_dual else float("nan"),
            "kkt_leaf_pg": kkt_pg,
        }
        out["kkt"] = max(v for k, v in out.items() if k.startswith("kkt_") and np.isfinite(v))
        return out


def logistic_leaf_objective(
    w: np.ndarray,
    X: Any,
    y: np.ndarray,
    C: float,
    w_parent: np.ndarray,
    weight: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """Eq. (8) and its gradient.

    ``f(w) = 1/2 ||w - w_p||^2 + C sum_i c_i log(1 + exp(-y_i w^T x_i))`` and
    ``grad f = w - w_p - C sum_i c_i sigma(-y_i w^T x_i) y_i x_i`` (the seed's gradient drops
    the factor ``C``; it belongs there).

    Parameters
    ----------
    w : ndarray of shape (n_features,)
    X : csr_matrix or ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {-1, +1}
    C : float
    w_parent : ndarray of shape (n_features,)
    weight : ndarray of shape (n_samples,), optional
        ``c_i`` (ones by default).

    Returns
    -------
    (float, ndarray of shape (n_features,))
    """
    yz = y * np.asarray(X @ w).ravel()
    cw = C if weight is None else C * weight
    diff = w - w_parent
    f = 0.5 * float(diff @ diff) + float(np.sum(cw * np.logaddexp(0.0, -yz)))
    r = cw * expit(-yz) * y
    g = diff - np.asarray(X.T @ r).ravel()
    return f, g


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
    """Minimise eq. (8) with L-BFGS (scipy's L-BFGS-B without bounds).

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
    res = minimize(
        logistic_leaf_objective,
        x0,
        args=(X, y, C, w_parent, weight),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": tol, "ftol": 1e3 * np.finfo(float).eps, "maxiter": max_iter},
    )
    return np.asarray(res.x), int(res.nit)


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
    key: str,
    X: Any,
    Y: np.ndarray,
    upper: np.ndarray,
    W_parent: np.ndarray,
    alpha0: np.ndarray,
    tol: float,
    max_passes: int,
    shrinking: bool,
    seed: list[int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    res = solve_leaves_dual_cd(
        _cached_rows(key, X),
        Y,
        upper,
        W_parent,
        alpha0,
        tol=tol,
        max_passes=max_passes,
        shrinking=shrinking,
        seed=np.random.SeedSequence(seed),
    )
    return res.W, res.alpha, res.n_passes


def _lr_leaf_block(
    X: Any,
    Y: np.ndarray,
    weight: np.ndarray,
    C: float,
    W_parent: np.ndarray,
    W0: np.ndarray,
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray]:
    out = np.empty_like(W0)
    iters = np.zeros(W0.shape[0], dtype=np.int64)
    for k in range(W0.shape[0]):
        out[k], iters[k] = solve_logistic_leaf(
            X, Y[:, k], C, W_parent[k], weight[:, k], W0[k], tol=tol, max_iter=max_iter
        )
    return out, iters


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
        joblib workers for the leaf blocks (under ``joblib.parallel_backend("dask")`` the dask
        workers).
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
    alpha : ndarray of shape (n_samples, n_leaves) or None
        The leaves' dual variables (hinge loss).
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
        self.alpha: np.ndarray | None = None

    def _blocks(self, cols: np.ndarray, n_workers: int) -> list[np.ndarray]:
        n_blocks = max(n_workers, int(np.ceil(len(cols) / max(1, self.leaf_block))))
        n_blocks = min(n_blocks, len(cols))
        return [b for b in np.array_split(cols, n_blocks) if len(b)]

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one state per outer iteration.

        ``upper``: smallest J(W) so far; ``lower``: largest certified dual bound D(alpha) so far
        (see the module docstring); ``extra``: this iteration's ``primal``, ``dual``, the KKT
        residuals (``kkt`` is the largest), ``inner_tol``, and the leaf solvers' work
        (``inner_passes`` for dual CD, ``inner_iters`` for L-BFGS).
        """
        prob: HRProblem = objective
        tax = prob.taxonomy
        n, d = prob.n_samples, prob.n_features
        W = np.zeros((tax.n_nodes, d))
        alpha = np.zeros((n, len(tax.leaves))) if prob.loss == "hinge" else None
        n_workers = int(joblib.effective_n_jobs(self.n_jobs))
        X_task: Any = prob.X
        key = uuid.uuid4().hex  # workers cut the rows of X once per fit (dual CD)
        self.coef = W.copy()
        self.alpha = alpha
        try:
            yield from self._sweeps(prob, W, alpha, key, X_task, n_workers)
        finally:
            _ROWS_CACHE.pop(key, None)

    def _sweeps(
        self,
        prob: HRProblem,
        W: np.ndarray,
        alpha: np.ndarray | None,
        key: str,
        X_task: Any,
        n_workers: int,
    ) -> Iterator[SolverState]:
        tax = prob.taxonomy
        leaves = tax.leaves
        col_of = np.full(tax.n_nodes, -1, dtype=np.int64)
        col_of[leaves] = np.arange(len(leaves))
        parent = tax.parent
        hinge = prob.loss == "hinge"
        parity_nodes = [np.flatnonzero(tax.depth % 2 == r) for r in (0, 1)]
        # children sums of eq. (4) as one sparse product
        child = sp.csr_matrix(
            (np.ones(tax.n_nodes - 1), (parent[parent >= 0], np.flatnonzero(parent >= 0))),
            shape=(tax.n_nodes, tax.n_nodes),
        )
        n_children = tax.n_children.astype(np.float64)
        best_upper = np.inf
        best_lower = -np.inf
        tol_now = float(self.inner_tol)
        # threads: the compiled dual CD pass releases the GIL, and W need not be pickled to
        # workers (a backend chosen with joblib.parallel_config, e.g. dask, still wins)
        with joblib.Parallel(n_jobs=self.n_jobs, prefer="threads") as parallel:
            for t in range(1, self.max_iter + 1):
                work = 0
                for r in (0, 1):
                    nodes = parity_nodes[r]
                    inner = nodes[~tax.is_leaf[nodes]]
                    if len(inner):
                        par = np.where(parent[inner] >= 0, parent[inner], 0)
                        wp = np.where((parent[inner] >= 0)[:, None], W[par], 0.0)
                        target = (wp + child[inner] @ W) / (n_children[inner] + 1.0)[:, None]
                        if self.relaxation == 1.0:
                            W[inner] = target
                        else:
                            W[inner] += self.relaxation * (target - W[inner])
                    lv = nodes[tax.is_leaf[nodes]]
                    if len(lv) == 0:
                        continue
                    cols = col_of[lv]
                    blocks = self._blocks(cols, n_workers)
                    wpar = [
                        np.where(
                            (parent[leaves[b]] >= 0)[:, None],
                            W[np.maximum(parent[leaves[b]], 0)],
                            0.0,
                        )
                        for b in blocks
                    ]
                    if hinge:
                        assert alpha is not None
                        seed = [int(self.random_state), t, r]
                        res = parallel(
                            joblib.delayed(_svm_leaf_block)(
                                key,
                                X_task,
                                prob.signs(b),
                                prob.C * prob.weights(b),
                                wp,
                                alpha[:, b],
                                tol_now,
                                self.max_inner_iter,
                                self.shrinking,
                                seed,
                            )
                            for b, wp in zip(blocks, wpar)
                        )
                        for b, (Wb, ab, passes) in zip(blocks, res):
                            W[leaves[b]] = Wb
                            alpha[:, b] = ab
                            work += int(passes.sum())
                    else:
                        # L-BFGS does level-1 BLAS on d-vectors: threaded BLAS only adds
                        # synchronisation there (see bench_hr for the measured effect)
                        with threadpool_limits(limits=1, user_api="blas"):
                            res_lr = parallel(
                                joblib.delayed(_lr_leaf_block)(
                                    X_task,
                                    prob.signs(b),
                                    prob.weights(b),
                                    prob.C,
                                    wp,
                                    W[leaves[b]],
                                    tol_now,
                                    self.max_inner_iter,
                                )
                                for b, wp in zip(blocks, wpar)
                            )
                        for b, (Wb, iters) in zip(blocks, res_lr):
                            W[leaves[b]] = Wb
                            work += int(iters.sum())
                cert = prob.certificate(W, alpha)
                if cert["primal"] < best_upper:
                    best_upper = cert["primal"]
                    self.coef = W.copy()
                if np.isfinite(cert["dual"]):
                    best_lower = max(best_lower, cert["dual"])
                rel_gap = (best_upper - best_lower) / max(abs(best_upper), 1e-300)
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
                # tighten the leaves' tolerance with the gap, and at once when the leaves met
                # it without moving (at most one pass / iteration each): otherwise a stall
                n_updated = len(leaves)
                target = min(tol_now, self.inner_tol_factor * rel_gap)
                if work <= n_updated:
                    target = min(target, 0.1 * tol_now)
                tol_now = float(max(self.inner_tol_min, target))
