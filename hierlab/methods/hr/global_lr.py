"""Global dual coordinate descent for HR-LR (seed 001, eq. 3): every leaf's duals at once.

As for HR-SVM (:mod:`hierlab.methods.hr.global_cd`), ``w_n = sum_{j in A+(n)} v_j`` turns eq. (3)
into an L2-regularised logistic regression on path features,

    min_v  1/2 sum_j ||v_j||^2 + C sum_{n in T} sum_i c_in log(1 + exp(-y_in w_n^T x_i)),

whose dual is the one :mod:`hierlab.methods.hr.model` certifies: for ``0 <= alpha_in <= C c_in``,

    D(alpha) = sum phi(alpha_in) - 1/2 sum_j ||S_j||^2,   phi(a) = -a log(a / C)
               - (C - a) log(1 - a / C),   S_j = sum_{leaves n below j} sum_i alpha_in y_in x_i,

and ``v_j = S_j`` at the optimum. With ``coupled=False`` every leaf's path is the leaf alone:
the one-vs-rest logistic regression, every leaf's problem at once. Coordinate ``(i, n)`` is
the one-variable problem of Yu, Huang and Lin (2011, "Dual coordinate descent methods for
logistic regression and maximum entropy models", Algorithm 4), with ``a = |A+(n)| ||x_i||^2``
(the pair's path has ``|A+(n)|`` nodes) and ``b = y_in w_n^T x_i``:

    min_z  z log z + (C - z) log(C - z) + a/2 (z - alpha_in)^2 + b (z - alpha_in),  0 < z < C,

solved by their modified Newton method (on ``C - z`` instead when ``1/2 a (C - 2 alpha_in) + b <
0``, a step that would leave ``(0, C)`` shrinks ``z`` tenfold), to the inner tolerance that
liblinear's ``solve_l2r_lr_dual`` uses: 1e-2 at first, tenfold smaller after every pass whose
Newton steps number at most a tenth of the pairs (times ``sweeps``, below), never below 1e-8.
``S_j += delta y_in x_i`` on the pair's path, exactly as the hinge's steps.

A logistic dual lies inside its box, so every pair is nonzero: the duals are held dense, shape
(n_samples, n_leaves), rows by example (IPC titles: 52,530 x 645, 271 MB). That is the one term
of this solver that grows with examples times classes: uncoupled (one-vs-rest), the leaves are
solved a block at a time, so it is (n_samples, block), 256 MB at most
(:class:`GlobalLogisticCD`); coupled (HR-LR), it is the whole (6 GB at 10^4 leaves and 7.5 x
10^4 examples), released before ``W`` is formed (``keep_duals=False``). The certificate
(:func:`logistic_bounds`) holds one block of rows at a time. The pass (node scores ``p = S x_i``
once per example, every leaf's step from path sums of ``p``, ``S`` updated once per example) is
the hinge's, compiled by numba, with the same steps in Python when numba is absent; coupled,
it visits each example's leaves up to ``sweeps`` times (default 3) on the one ``p``: all of them,
then those whose dual the first visit moved by at least ``revisit C`` (default 1e-3). The leaves
of an example share their ancestors (the root with all of them), so its own block of duals is
coupled the more strongly the more leaves, and one visit leaves it far from its optimum; the
later visits cost ``O(moved pairs x depth)``, while ``p = S x_i`` and ``S``'s update
(``O(nnz(x_i) n_nodes)``, most of a pass) are paid once. ``hr-lr`` at its defaults, to a relative
gap of 1e-2: on ``make_hierarchical_text(27000, 3000, 20000)`` 11 passes, 133 s with one visit;
6, 73 s with these; on IPC titles 24 passes, 85 s; 18, 67 s (CPU seconds).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

from hierlab.core.jit import choose, njit
from hierlab.core.solver import SolverState
from hierlab.methods.hr import global_cd
from hierlab.methods.hr.global_cd import (
    PathSumSolver,
    _csr_parts,
    block_rows,
    leaf_scores,
    pass_inputs,
)
from hierlab.methods.hr.model import HRProblem

__all__ = [
    "GlobalLogisticCD",
    "leaf_blocks",
    "logistic_bounds",
    "logistic_dual_pass",
    "next_certificate",
]

#: liblinear's starting dual value (``min(0.001 C, 1e-8)``), its Newton limits and tolerances
_NEWTON_MAX = 100
_ETA = 0.1
INNER_EPS_START = 1e-2
INNER_EPS_MIN = 1e-8
#: uncoupled (one-vs-rest): the leaves are solved a block at a time, each block's dense duals
#: (n_samples, block) within this many numbers (256 MB) ...
ALPHA_ENTRIES = 2**25
#: ... in at most this many blocks (a block not started adds its whole ``J(0)`` to the gap, so
#: with blocks of about equal size, fewer than ``1 / rtol``, the gap does not close before
#: every block has run)
MAX_BLOCKS = 64
#: with ``certify_near``, at most this many passes between two certificates
MAX_CERTIFY_STEP = 8
#: coupled: visits of each example's leaves per pass (:class:`GlobalLogisticCD`'s ``sweeps``),
#: the later ones to the pairs the first moved by at least ``REVISIT C`` (``revisit``)
SWEEPS = 3
REVISIT = 1e-3


def _newton(
    z_old: float, a: float, b: float, C: float, eps: float
) -> tuple[float, int, float]:  # pragma: no cover - compiled by numba
    """Yu et al.'s modified Newton method on ``g(z) = z log z + (C - z) log(C - z) + a/2 (z -
    z_old)^2 + b (z - z_old)`` over ``(0, C)``; the new ``z``, the Newton steps taken and
    ``|g'(z_old)|`` (the pair's optimality measure: the dual's partial derivative)."""
    z = z_old
    gp = b + math.log(z / (C - z))
    g0 = abs(gp)
    if C - z < 0.5 * C:  # liblinear's restart nearer 0
        z = 0.1 * z
        gp = a * (z - z_old) + b + math.log(z / (C - z))
    it = 0
    while it <= _NEWTON_MAX:
        if abs(gp) < eps:
            break
        gpp = a + C / (C - z) / z
        tmp = z - gp / gpp
        z = z * _ETA if tmp <= 0.0 else tmp
        gp = a * (z - z_old) + b + math.log(z / (C - z))
        it += 1
    return z, it, g0


def _pair_step(
    alpha: float, a: float, b: float, C: float, eps: float
) -> tuple[float, int, float]:  # pragma: no cover - compiled by numba
    """Coordinate ``(i, n)``'s new dual value (module docstring): :func:`_newton` on ``alpha``,
    or on ``C - alpha`` when ``1/2 a (C - 2 alpha) + b < 0`` (the side of the box the optimum
    lies on, as in liblinear); also the Newton steps and ``|g'(alpha)|``."""
    if 0.5 * a * (C - 2.0 * alpha) + b < 0.0:
        z, it, g0 = NEWTON(C - alpha, a, -b, C, eps)
        return C - z, it, g0
    return NEWTON(alpha, a, b, C, eps)


def _visit_example(
    a: np.ndarray, leaf_order: np.ndarray, sweeps: int, revisit: float, s: float, C: float,
    eps: float, sign: np.ndarray, off: np.ndarray, anc_ptr: np.ndarray, anc_idx: np.ndarray,
    p: np.ndarray, acc: np.ndarray, mark: np.ndarray, touched: np.ndarray, hot: np.ndarray,
) -> tuple[int, int, float]:  # pragma: no cover - compiled by numba
    """One example's visits of :func:`_lr_pass` (its duals ``a``, ``||x_i||^2 = s > 0``):
    every leaf in ``leaf_order``, then up to ``sweeps - 1`` more visits of the leaves whose
    dual the first moved by at least ``revisit C`` (listed in ``hot``, scratch of n_leaves,
    as the first visit meets them), each step updating ``p`` and ``acc`` on the leaf's path.
    Returns the size of ``touched``, the Newton steps taken and the largest ``|g'|`` met."""
    nt, nh, newton, gmax = 0, 0, 0, 0.0
    for sweep in range(sweeps):
        for kk in range(leaf_order.shape[0] if sweep == 0 else nh):
            k = leaf_order[kk] if sweep == 0 else hot[kk]
            if off[k]:
                continue
            y = sign[k]
            P = 0.0  # the leaf's score: the path sum of p
            for e in range(anc_ptr[k], anc_ptr[k + 1]):
                P += p[anc_idx[e]]
            ak = a[k]
            new, it, g0 = PAIR_STEP(ak, (anc_ptr[k + 1] - anc_ptr[k]) * s, y * P, C, eps)
            newton += it
            gmax = max(gmax, g0)
            moved = new - ak if it > 0 else 0.0  # no Newton step: the dual stays
            if sweep == 0 and sweeps > 1 and abs(moved) >= revisit * C:
                hot[nh] = k
                nh += 1
            if moved != 0.0:
                a[k] = new
                nt = PATH_STEP(k, moved * y, s, anc_ptr, anc_idx, p, acc, mark, touched, nt)
    return nt, newton, gmax


def _lr_pass(
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
    alpha: np.ndarray,
    ST: np.ndarray,
    eps: float,
    sweeps: int,
    revisit: float,
) -> tuple[int, float]:  # pragma: no cover - compiled by numba
    """One pass of global logistic dual CD over the examples ``order`` (module docstring).

    ``alpha`` (n_samples, n_leaves) and ``ST`` = ``S^T`` (n_features, n_nodes) are updated in
    place; switched-off pairs (``c_in = 0``) keep ``alpha = 0``; an empty row's duals go to
    their optimum ``C / 2``. Each example's leaves are visited in ``leaf_order``, then up to
    ``sweeps - 1`` times more on the one ``p``, these later visits going to the pairs whose
    first step moved ``alpha_in`` by at least ``revisit C`` (``revisit = 0``: every pair, the
    steps of ``sweeps`` consecutive visits of the example in ``order``, without forming ``p =
    S x_i`` and updating ``S`` for each). Returns the Newton steps taken and the largest
    ``|g'|`` met.
    """
    m, L = ST.shape[1], anc_ptr.shape[0] - 1
    p, acc = np.zeros(m), np.zeros(m)
    touched, mark = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.bool_)
    sign, off = -np.ones(L), np.zeros(L, dtype=np.bool_)
    no_ptr, no_idx, no_val = (
        np.zeros(order.shape[0] + 1, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.zeros(0),
    )
    newton, gmax = 0, 0.0
    hot = np.zeros(L, dtype=np.int64)
    for i in order:
        ENTER_ROW(i, no_ptr, no_idx, no_val, pos_ptr, pos_idx, ex_ptr, ex_idx, p, sign, off, True)
        s = sq[i]
        a = alpha[i]
        if s <= 0.0:  # an empty row: only the entropy acts on its duals
            for k in leaf_order:
                if not off[k]:
                    a[k] = 0.5 * C
        else:
            ROW_TIMES(ST, indptr, indices, data, i, p)  # p = S x_i
            nt, it, g = VISIT_EXAMPLE(
                a, leaf_order, sweeps, revisit, s, C, eps, sign, off, anc_ptr, anc_idx, p, acc,
                mark, touched, hot,
            )  # fmt: skip
            newton, gmax = newton + it, max(gmax, g)
            UPDATE_S(i, indptr, indices, data, ST, acc, mark, touched, nt)
        ENTER_ROW(i, no_ptr, no_idx, no_val, pos_ptr, pos_idx, ex_ptr, ex_idx, p, sign, off, False)
    return newton, gmax


#: the compiled helpers of the pass (the Python ones without numba)
NEWTON: Any = njit(_newton) or _newton
PAIR_STEP: Any = njit(_pair_step) or _pair_step
VISIT_EXAMPLE: Any = njit(_visit_example) or _visit_example
ENTER_ROW: Any = global_cd.ENTER_ROW
ROW_TIMES: Any = global_cd.ROW_TIMES
PATH_STEP: Any = global_cd.PATH_STEP
UPDATE_S: Any = global_cd.UPDATE_S
_LR_PASS = njit(_lr_pass)


def logistic_dual_pass(*args: Any, use_jit: bool | None = None) -> Any:
    """:func:`_lr_pass`, compiled when numba is available (``use_jit``: None = as
    :func:`hierlab.core.jit.jit_enabled`), else the same steps in Python."""
    return choose(_LR_PASS, _lr_pass, use_jit)(*args)


def logistic_bounds(
    prob: HRProblem,
    X: sp.csr_matrix,
    ST: np.ndarray,
    alpha: np.ndarray,
    anc_ptr: np.ndarray,
    anc_idx: np.ndarray,
    labels: tuple[Any, Any],
    chunk: int | None = None,
) -> tuple[float, float]:
    """``J(W)`` at ``W = A S`` (eq. 3) and ``D(alpha)``, one block of ``chunk`` rows at a time
    (default :func:`~hierlab.methods.hr.global_cd.block_rows`: 32 MB of scores per block).

    Parameters
    ----------
    ST : ndarray of shape (n_features, n_nodes)
        ``S^T`` of ``alpha``.
    alpha : ndarray of shape (n_samples, n_leaves)
        Feasible duals (0 on the switched-off pairs).
    anc_ptr, anc_idx : ndarray
        The leaves' paths ``A+(n)`` (CSR, leaf by leaf).
    labels : (csr_matrix, csr_matrix or None)
        ``prob.positive`` and ``prob.excluded`` as CSR.
    """
    C = prob.C
    reg = 0.5 * float(np.einsum("ij,ij->", ST, ST))
    pos, exc = labels
    loss = phi = 0.0
    chunk = block_rows(ST.shape[1], chunk)
    for r in range(0, X.shape[0], chunk):
        Y = np.where(pos[r : r + chunk].toarray(), 1.0, -1.0)
        lossv = np.logaddexp(0.0, -Y * leaf_scores(X[r : r + chunk], ST, anc_ptr, anc_idx))
        if exc is not None:
            lossv *= 1.0 - exc[r : r + chunk].toarray()
        loss += float(lossv.sum())
        a = alpha[r : r + chunk]
        phi -= float((xlogy(a, a / C) + xlogy(C - a, 1.0 - a / C)).sum())
    # a switched-off pair has alpha = 0, so phi = 0 there: nothing to correct
    return reg + C * loss, phi - reg


def _start(
    prob: HRProblem, X: sp.csr_matrix, labels: tuple[Any, Any], a0: float, coupled: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """liblinear's starting point ``alpha_in = a0 c_in`` and its ``S^T``, from sparse products:
    ``sum_i c_in y_in x_i = 2 X^T pos - X^T 1 + X^T exc``; ``S^T`` has shape (n_features,
    n_nodes), or (n_features, n_leaves) uncoupled (each leaf's path is its own column; the
    leaves are the columns of ``labels``, a block of them when solved in blocks)."""
    tax = prob.taxonomy
    pos, exc = labels
    n, L = X.shape[0], pos.shape[1]
    A_leaf = (
        sp.csr_matrix(tax.ancestor_matrix[tax.leaves], dtype=np.float64)
        if coupled
        else sp.identity(L, dtype=np.float64, format="csr")
    )
    XT = sp.csr_matrix(X.T)
    U = 2.0 * (XT @ sp.csr_matrix(pos, dtype=np.float64))
    if exc is not None:
        U = U + XT @ sp.csr_matrix(exc, dtype=np.float64)
    ST = np.asarray((U @ A_leaf).todense())
    ST -= np.outer(np.asarray(X.sum(axis=0)).ravel(), np.asarray(A_leaf.sum(axis=0)).ravel())
    ST *= a0
    alpha = np.full((n, L), a0)
    if exc is not None:
        ii, kk = exc.nonzero()
        alpha[ii, kk] = 0.0
    return alpha, ST


def leaf_blocks(n_samples: int, n_leaves: int, size: int | None = None) -> list[np.ndarray]:
    """The uncoupled solver's blocks of leaves: consecutive, of balanced sizes, each holding
    about ``size`` leaves (default: as many as keep a block's (n_samples, leaves) duals within
    :data:`ALPHA_ENTRIES` numbers), and at most :data:`MAX_BLOCKS` of them."""
    if size is None:
        size = max(1, ALPHA_ENTRIES // max(1, n_samples))
    k = min(MAX_BLOCKS, max(1, -(-n_leaves // max(1, int(size)))))
    return np.array_split(np.arange(n_leaves, dtype=np.int64), k)


class GlobalLogisticCD(PathSumSolver):
    """Dual coordinate descent over every (example, leaf) pair of HR-LR (module docstring).

    Each iteration is one pass; every ``certify_every`` passes :func:`logistic_bounds` at
    ``W = A S`` and the pass's duals gives a state: ``upper`` ``J(W)`` at that pass (the
    iterate ``coef`` returns), ``lower`` the largest ``D(alpha)`` so far.

    Uncoupled (one-vs-rest), the leaves' problems are independent: the leaves are solved a
    block at a time (:func:`leaf_blocks`), so that the dense duals held are (n_samples, block),
    not (n_samples, n_leaves) (at 10^4 leaves and 7.5 x 10^4 examples: 6 GB). A block runs its
    passes until its own gap is within ``block_rtol`` (or ``max_iter`` passes), then the next
    begins. Every state certifies the whole problem: ``upper`` is ``J(W)`` of the weights so far
    (a block not started has ``W = 0``: ``J = C log 2`` per pair) and ``lower`` the sum of the
    blocks' best dual values (0 for a block not started: ``J >= 0``), so the gap closes to
    ``block_rtol`` when the last block does.

    Parameters
    ----------
    max_iter : int, default 100
        Passes over the examples (per block of leaves, uncoupled).
    random_state : int, default 0
        Seed of the passes' orders of examples and leaves.
    use_jit : bool, optional
        Compiled passes; None: as :func:`hierlab.core.jit.jit_enabled`.
    certify_every : int, default 2
        Passes between certificates (without ``certify_near``; with it, the first
        certificate's pass); the last pass is always certified.
    certify_near : float, optional
        The relative gap the run is to reach (the ``rtol`` given to
        :func:`~hierlab.core.solver.solve`; in blocks, ``block_rtol`` is used). A certificate
        costs about 0.4 of a pass: they are then placed where the gap is predicted to reach
        it, from its geometric decay between the last two (:func:`next_certificate`), not
        every ``certify_every`` passes, so a run neither certifies early passes it need not
        nor runs up to ``certify_every - 1`` passes past the one that closed the gap.
    coupled : bool, default True
        False: each leaf's path is the leaf alone, ``w_n = v_n`` and the internal nodes stay 0:
        eq. (3) without the parents, the one-vs-rest logistic regression (seed 001's baseline
        "LR"), solved for every leaf with the same passes and certificate (as
        :class:`~hierlab.methods.hr.global_cd.GlobalDualCD` does for the hinge).
    leaf_block : int, optional
        Uncoupled: leaves per block (None: :func:`leaf_blocks`' default, 256 MB of duals).
    block_rtol : float, default 1e-2
        Uncoupled, in several blocks: the relative gap at which a block is done. Give
        :func:`~hierlab.core.solver.solve` an ``rtol`` no smaller.
    sweeps : int, default 3
        Coupled: visits of each example's leaves per pass (:func:`logistic_dual_pass`). The
        leaves of one example share their ancestors' ``v_j`` (the root's with every other
        leaf), so one visit leaves the example's own block of duals far from its optimum, the
        more so the more leaves. ``p = S x_i`` and ``S``'s update (``O(nnz(x_i) n_nodes)``)
        are paid once per example whatever ``sweeps``. Uncoupled, each pair is its own
        problem: one visit.
    revisit : float, default 1e-3
        The visits after the first go to the pairs whose first step moved ``alpha_in`` by at
        least ``revisit C`` (0: every pair), so that they cost ``O(moved pairs x depth)``,
        not ``O(n_leaves x depth)``.
    keep_duals : bool, default True
        False: :attr:`alpha` is released when the run ends, before :func:`~hierlab.core.
        solver.solve` forms ``coef`` (an estimator that does not read the duals: HR-LR at 10^4
        leaves and 7.5 x 10^4 examples holds 6 GB of them).

    Attributes
    ----------
    coef : ndarray of shape (n_nodes, n_features)
        ``W`` at the last pass (the last state's iterate), formed on request.
    alpha : ndarray of shape (n_samples, n_leaves) or None
        The duals of the last pass (None when solved in several blocks).
    """

    def __init__(
        self,
        max_iter: int = 100,
        random_state: int = 0,
        use_jit: bool | None = None,
        certify_every: int = 2,
        certify_near: float | None = None,
        coupled: bool = True,
        leaf_block: int | None = None,
        block_rtol: float = 1e-2,
        sweeps: int = SWEEPS,
        revisit: float = REVISIT,
        keep_duals: bool = True,
    ) -> None:
        super().__init__(coupled)
        self.max_iter = max_iter
        self.random_state = random_state
        self.use_jit = use_jit
        self.certify_every = certify_every
        self.certify_near = certify_near
        self.leaf_block = leaf_block
        self.block_rtol = block_rtol
        self.sweeps = sweeps
        self.revisit = revisit
        self.keep_duals = keep_duals
        self.alpha: np.ndarray | None = None

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one state per certified pass (``iteration`` counts passes); ``extra``: the
        certificate's ``primal`` and ``dual``, the pass's Newton steps ``newton`` and largest
        ``|g'|`` ``gmax``, and the inner tolerance ``inner_eps`` it used (in blocks: also the
        ``block`` and ``n_blocks``)."""
        try:
            yield from self._iterate(objective)
        finally:  # the run's end (or solve closing it): the generator's duals go with it
            if not self.keep_duals:
                self.alpha = None

    def _iterate(self, objective: Any) -> Iterator[SolverState]:
        """:meth:`iterate`'s states."""
        prob: HRProblem = objective
        X, sq, labels, parts = pass_inputs(prob)
        n, L = X.shape[0], len(prob.taxonomy.leaves)
        anc_ptr, anc_idx = self._leaf_paths(prob.taxonomy)
        rng = np.random.default_rng(self.random_state)
        blocks = [np.arange(L)] if self.coupled else leaf_blocks(n, L, self.leaf_block)
        if len(blocks) > 1:
            yield from self._iterate_blocks(prob, X, sq, labels, blocks, rng)
            return
        alpha, ST = _start(prob, X, labels, _a0(prob.C), self.coupled)
        self.alpha = alpha
        self._ST = ST  # the live sums: coef is formed from them on request
        best_lower = -np.inf
        paths = (anc_ptr, anc_idx)
        passes = self._passes(prob, X, sq, labels, parts, paths, alpha, ST, rng, self.certify_near)
        for t, primal, dual, extra in passes:
            best_lower = max(best_lower, dual)
            yield SolverState(
                iteration=t, elapsed=0.0, upper=float(primal), lower=float(best_lower),
                extra=extra,
            )  # fmt: skip

    def _iterate_blocks(
        self, prob: HRProblem, X: sp.csr_matrix, sq: np.ndarray, labels: tuple[Any, Any],
        blocks: list[np.ndarray], rng: np.random.Generator,
    ) -> Iterator[SolverState]:  # fmt: skip
        """Uncoupled, a block of leaves at a time (class docstring); ``S^T`` of the whole
        problem (n_features, n_leaves) is kept, each block's columns copied in at its states."""
        pos, exc = labels
        n = X.shape[0]
        ST = np.zeros((X.shape[1], pos.shape[1]))
        self._ST, self.alpha = ST, None
        pairs = np.array([n * len(c) - (0 if exc is None else exc[:, c].nnz) for c in blocks])
        upper, lower = float(prob.C) * math.log(2.0) * pairs.astype(float), np.zeros(len(blocks))
        done = 0
        for b, cols in enumerate(blocks):
            lab = (pos[:, cols].tocsr(), None if exc is None else exc[:, cols].tocsr())
            parts = (*_csr_parts(lab[0], n), *_csr_parts(lab[1], n))
            alpha, STb = _start(prob, X, lab, _a0(prob.C), coupled=False)
            own = np.arange(len(cols) + 1, dtype=np.int64)  # each leaf's path: its own column
            best = -np.inf
            passes = self._passes(
                prob, X, sq, lab, parts, (own, own[:-1]), alpha, STb, rng, self.block_rtol
            )
            for t, primal, dual, extra in passes:
                ST[:, cols] = STb
                best = max(best, dual)
                upper[b], lower[b] = primal, best
                yield SolverState(
                    iteration=done + t, elapsed=0.0, upper=float(upper.sum()),
                    lower=float(lower.sum()), extra={**extra, "block": b, "n_blocks": len(blocks)},
                )  # fmt: skip
                if primal - best <= self.block_rtol * abs(primal):
                    done += t
                    break
            else:
                done += self.max_iter

    def _passes(
        self, prob: HRProblem, X: sp.csr_matrix, sq: np.ndarray, labels: tuple[Any, Any],
        parts: tuple[np.ndarray, ...], paths: tuple[np.ndarray, np.ndarray], alpha: np.ndarray,
        ST: np.ndarray, rng: np.random.Generator, target: float | None,
    ) -> Iterator[tuple[int, float, float, dict[str, Any]]]:  # fmt: skip
        """Up to ``max_iter`` passes over the examples for the leaves of ``labels`` (their
        duals ``alpha`` and sums ``ST`` updated in place), with liblinear's inner tolerance
        schedule; yields ``(pass, J, D(alpha), extra)`` at every certified pass (every
        ``certify_every``, or where :func:`next_certificate` places them for ``target``)."""
        n, L = alpha.shape
        C = float(prob.C)
        eps = INNER_EPS_START
        sweeps = max(1, int(self.sweeps)) if self.coupled else 1
        gaps: list[tuple[int, float]] = []  # (pass, relative gap) of the certificates
        best = -np.inf
        due = self.certify_every
        for t in range(1, self.max_iter + 1):
            used = eps
            newton, gmax = logistic_dual_pass(
                rng.permutation(n), rng.permutation(L), X.indptr, X.indices, X.data, sq,
                *parts, *paths, C, alpha, ST, eps, sweeps, float(self.revisit),
                use_jit=self.use_jit,
            )  # fmt: skip
            if newton <= sweeps * alpha.size // 10:
                eps = max(INNER_EPS_MIN, 0.1 * eps)
            if t < due and t < self.max_iter:
                continue
            primal, dual = logistic_bounds(prob, X, ST, alpha, *paths, labels)
            best = max(best, dual)
            gaps.append((t, (primal - best) / abs(primal) if primal else 0.0))
            due = t + self.certify_every
            if target is not None:
                due = next_certificate(gaps, float(target), self.certify_every)
            extra = {
                "primal": primal, "dual": dual, "newton": int(newton), "gmax": float(gmax),
                "inner_eps": used,
            }  # fmt: skip
            yield t, primal, dual, extra


def next_certificate(gaps: list[tuple[int, float]], target: float, first: int = 2) -> int:
    """The pass of the next certificate: where the relative gap is predicted to reach
    ``target``, from its geometric decay between the last two certificates.

    Parameters
    ----------
    gaps : list of (int, float)
        ``(pass, relative gap)`` of the certificates so far, at least one; the start (pass 0,
        ``W = 0``, the dual at its start) counts as a relative gap of 1.
    target : float
        The relative gap to reach.
    first : int, default 2
        The smallest step a gap that does not decay falls back to.

    Returns
    -------
    int
        ``t + k`` after the last certificate's pass ``t``: ``k`` the passes a decay rate
        ``r = (g_t / g_s)^(1 / (t - s))`` needs from ``g_t`` to ``target``, rounded up, at
        least 1 and at most ``max(first, t)`` (the passes so far: a decay faster later than
        early, as the dual CD's, is not overshot by more than doubling them) and
        :data:`MAX_CERTIFY_STEP` (a live chart still moves on a long run).
    """
    t, g = gaps[-1]
    s, g0 = gaps[-2] if len(gaps) > 1 else (0, 1.0)
    rate = (g / g0) ** (1.0 / (t - s)) if 0.0 < g < g0 and t > s else 1.0
    if not 0.0 < rate < 1.0 or not target > 0.0:  # no decay seen (or no target): fixed step
        return t + first
    need = math.log(target / g) / math.log(rate) if g > target else 1.0
    return t + int(min(max(1.0, math.ceil(need - 1e-9)), max(first, t), MAX_CERTIFY_STEP))


def _a0(C: float) -> float:
    """liblinear's starting dual value ``min(0.001 C, 1e-8)``."""
    return min(1e-3 * float(C), 1e-8)
