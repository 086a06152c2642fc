"""Online and batch Hieron (seed 002, Algorithm 1 and Section 4), primal and kernel forms.

:class:`HieronSolver` passes over a stream of examples and, on each round ``i``,

1. scores every label with the path-sum prototypes, ``s_v = W^v . x_i`` (eq. 3), and predicts
   ``y_hat_i = argmax_v s_v`` (the online prediction, charged ``gamma(y_i, y_hat_i)``);
2. picks the competitor of the update: the prediction itself (``update="prediction"``,
   Algorithm 1) or the label that maximises the loss of eq. (5),
   ``argmax_v s_v - s_{y_i} + sqrt(gamma(y_i, v))`` (``update="max-loss"``, batch Hieron,
   Section 4);
3. when the competitor ``v`` differs from ``y_i`` (the update is conservative, see the errata) and
   the loss ``l = s_v - s_{y_i} + sqrt(gamma(y_i, v))`` is positive, applies eq. (7)-(8): the
   vertices of ``P(y_i) minus P(v)`` gain ``alpha x_i``, those of ``P(v) minus P(y_i)`` lose it,
   with ``alpha = l / (gamma(y_i, v) ||x_i||^2)``, which makes the constraint of eq. (6) hold
   with equality.

The solver keeps the prototypes ``W`` (path sums, eq. 2) rather than the increments ``w``: an
update is then the rank-one change ``W += alpha c x^T`` on the rows where
``c_u = |P(u) & P(y)| - |P(u) & P(v)|`` is non-zero (see
:class:`~hierlab.methods.hieron.model.PathGeometry`), and scoring a round is one matrix-vector
product.

**Averaging (eq. 13).** Batch Hieron predicts with the average of the hypotheses
``w_1 = 0, w_2, ..., w_{T+1}`` met after ``T`` rounds. With ``Delta_t`` the change made on round
``t``, ``sum_{i=1}^{T+1} w_i = (T + 1) w_{T+1} - sum_t t Delta_t``, so the solver keeps the running
weighted sum ``U = sum_t t Delta_t`` (touched only on updates, like ``W``) and the average is
``W - U / (T + 1)`` at any time, never storing the hypotheses. Several epochs continue the same
count, so the average runs over every hypothesis of every epoch.

**Kernel form (eq. 11-12).** With a :class:`~hierlab.methods.hieron.model.Kernel`, the solver
keeps a support set (each training example stored once, however often it is updated) and a
coefficient matrix ``B`` of shape (n_support, n_nodes) with ``W^v = sum_j B[j, v] phi(x_j)``:
scores are ``k(x) @ B`` with ``k_j = K(x_j, x)``, and ``alpha = l / (gamma K(x, x))``. (The
extraction of the seed prints ``+ gamma`` in beta_i: eq. (5) makes it ``+ sqrt(gamma)``.) The
increments of eq. (12), ``alpha_j^v``, are the rows of ``B`` minus their parents'. With the linear
kernel the dual and the primal forms give the same scores up to round-off.

:class:`GreedyHieronSolver` is the "greedy" comparison of Section 5: an independent multiclass
predictor (flat Hieron over the children) at each internal vertex, trained on
``S_v = {(x_i, u_i): u_i in P(y_i), A(u_i) = v}``.

Both report through the solver contract (``lower=None``: the method has no certificate): ``upper``
is the normalised cumulative tree-induced error of the online predictions (Table 1, "online").

This module holds what the two forms share (the rounds of Algorithm 1, the competitor and the
update direction, the contract, the scores); the primal form's passes over ``W`` are
:class:`~hierlab.methods.hieron.primal.PrimalFormMixin`, the kernel form's support set
:class:`~hierlab.methods.hieron.kernel_form.KernelFormMixin`, both bases of
:class:`HieronSolver` (its state, and so a saved model, is the same one object).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.solver import Solver, SolverState
from hierlab.methods.hieron.kernel_form import KernelFormMixin
from hierlab.methods.hieron.model import (
    TIE_RTOL,
    HieronCoef,
    HieronStream,
    Kernel,
    PathGeometry,
    first_argmax,
    increments_from_prototypes,
    row_sq_norms,
)
from hierlab.methods.hieron.primal import PrimalFormMixin

__all__ = ["UPDATES", "GreedyHieronSolver", "HieronSolver"]

#: the two choices of the competitor label in an update
UPDATES = ("prediction", "max-loss")


class HieronSolver(PrimalFormMixin, KernelFormMixin, Solver):
    """Online / batch Hieron on one tree; keeps its state across calls (``partial_fit``).

    Parameters
    ----------
    geometry : PathGeometry
        Paths of the training tree (the real taxonomy, or the flat one for "flat").
    n_features : int
    update : {"prediction", "max-loss"}
        Competitor of the update: the prediction (Algorithm 1, online Hieron) or the
        loss-maximising label (Section 4, batch Hieron).
    kernel : Kernel, optional
        None: the primal (linear) form. Otherwise the dual form with that kernel.
    candidates : ndarray of int, optional
        The labels that may be predicted (and chosen as competitors); None: every vertex (eq. 1).
    eval_geometry : PathGeometry, optional
        The tree whose ``gamma(y, y_hat)`` is charged to the online predictions
        (the evaluation tree; for the flat variant, the real taxonomy). Default: the training
        tree's ``gamma``.
    report_every : int, optional
        Yield a :class:`SolverState` every this many rounds (and at the end of each epoch);
        default: once per epoch.
    track_average : bool, default True
        Keep the running weighted sum of eq. (13) (the averaged hypothesis).
    lookahead : bool, default True
        Primal form: score the coming examples in blocks with one matrix product and settle the
        rounds up to the next update at once (same rounds, same result as the per-example loop,
        which ``False`` selects).

    Attributes
    ----------
    rounds : int
        Rounds processed so far (all calls).
    n_updates : int
        Rounds that changed the prototypes.
    cumulative_gamma, cumulative_mistakes : float
        Sum of ``gamma(y_i, y_hat_i)`` and of ``[y_hat_i != y_i]`` over the online predictions.
    cumulative_sq_loss : float
        Sum of the squared losses suffered (the quantity bounded by Theorem 1).
    """

    def __init__(
        self,
        geometry: PathGeometry,
        n_features: int,
        update: str = "prediction",
        kernel: Kernel | None = None,
        candidates: np.ndarray | None = None,
        eval_geometry: PathGeometry | None = None,
        report_every: int | None = None,
        track_average: bool = True,
        lookahead: bool = True,
    ) -> None:
        if update not in UPDATES:
            raise ParameterError(f"update must be one of {UPDATES}, got {update!r}")
        if report_every is not None and (int(report_every) != report_every or report_every < 1):
            raise ParameterError(f"report_every must be an integer >= 1, got {report_every}")
        self.geometry = geometry
        self.n_nodes = geometry.n_nodes
        self.n_features = int(n_features)
        self.update = update
        self.kernel = kernel
        self.candidates = None if candidates is None else np.asarray(candidates, dtype=np.int64)
        # plain data only (no callables), so that fitted models can be saved safely
        self.eval_geometry = eval_geometry if eval_geometry is not None else geometry
        self.report_every = report_every
        self.track_average = track_average
        self.lookahead = lookahead
        # dense overlaps / sqrt-gamma for small trees (the hot loop reads rows of them)
        self._M = geometry.overlap
        self._SG = geometry.sqrt_gamma_matrix() if update == "max-loss" else None
        self._cand_mask: np.ndarray | None = None
        if self.candidates is not None:
            mask = np.full(self.n_nodes, -np.inf)
            mask[self.candidates] = 0.0
            self._cand_mask = mask
        # primal state (its memory layout follows the data: :meth:`_set_layout`)
        self.W = np.zeros((self.n_nodes, self.n_features)) if kernel is None else None
        self.U = np.zeros_like(self.W) if (kernel is None and track_average) else None
        self._init_support_set()  # the kernel form's state (empty in the primal form)
        self.rounds = 0
        self.n_updates = 0
        self.cumulative_gamma = 0.0
        self.cumulative_mistakes = 0.0
        self.cumulative_sq_loss = 0.0
        self.iteration = 0
        self.epoch = 0

    # ------------------------------------------------------------------ the contract
    coef_on_request = True  # coef copies the prototypes: formed when asked for

    @property  # type: ignore[override]
    def coef(self) -> HieronCoef:
        """The last and averaged hypotheses (computed on access)."""
        T1 = self.rounds + 1
        if self.kernel is None:
            assert self.W is not None
            avg = self.W - self.U / T1 if self.U is not None else None
            return HieronCoef(last=self.W.copy(order="K"), average=avg, rounds=self.rounds)
        n = self._sv_n
        B = self._B[:n].copy()
        return HieronCoef(
            support_vectors=self.support_vectors(),
            dual_last=B,
            dual_average=(B - self._UB[:n] / T1) if self.track_average else None,
            rounds=self.rounds,
        )

    def iterate(self, objective: HieronStream) -> Iterator[SolverState]:
        """Pass over ``objective`` (a :class:`HieronStream`) ``epochs`` times.

        Yields a state every ``report_every`` rounds and at the end of every epoch: ``upper`` is
        the normalised cumulative tree-induced error of the online predictions so far (all calls),
        ``lower`` is None. The last state is flagged ``converged`` (the requested passes are done),
        and so is the state closing an epoch without any update (further passes would change
        nothing).
        """
        stream = objective
        X = stream.X
        sparse = sp.issparse(X)
        if sparse:
            X = sp.csr_matrix(X)
        if X.shape[1] != self.n_features:
            raise DataError(f"X has {X.shape[1]} features, the solver {self.n_features}")
        y = stream.y
        if len(y) and (y.min() < 0 or y.max() >= self.n_nodes):
            raise DataError(f"labels must be node ids in [0, {self.n_nodes})")
        sq = row_sq_norms(X)
        if self.kernel is not None:
            sq = self.kernel.diag(sq)
        else:
            self._set_layout(sparse)
        n = X.shape[0]
        rng = np.random.default_rng(stream.random_state)
        block = n if self.report_every is None else int(self.report_every)
        sv_row = np.full(n, -1, dtype=np.int64)  # support row of each example (stored once)
        if n == 0:
            return
        for ep in range(int(stream.epochs)):
            self.epoch += 1
            order = rng.permutation(n) if stream.shuffle else np.arange(n)
            updates_before = self.n_updates
            for start in range(0, n, block):
                idx = order[start : start + block]
                pred = np.empty(len(idx), dtype=np.int64)
                if self.kernel is None and self.lookahead:
                    self._pass_primal_blocked(X, y, sq, idx, pred)
                elif self.kernel is None and not sparse:
                    self._pass_primal_dense(X, y, sq, idx, pred)
                elif self.kernel is None:
                    self._pass_primal_sparse(X, y, sq, idx, pred)
                else:
                    self._pass_dual(X, y, sq, idx, pred, sv_row)
                yi = y[idx]
                self.cumulative_gamma += float(np.sum(self.eval_geometry.gamma(yi, pred)))
                self.cumulative_mistakes += float(np.count_nonzero(pred != yi))
                last_block = start + block >= n
                quiet_epoch = last_block and self.n_updates == updates_before
                done = last_block and (ep == stream.epochs - 1 or quiet_epoch)
                self.iteration += 1
                yield self._state(done)
                if done:
                    return

    def _state(self, converged: bool) -> SolverState:
        r = max(self.rounds, 1)
        return SolverState(
            iteration=self.iteration,
            elapsed=0.0,
            upper=self.cumulative_gamma / r,
            lower=None,
            extra={
                "epoch": self.epoch,
                "rounds": self.rounds,
                "online_tree_error": self.cumulative_gamma / r,
                "online_multiclass_error": self.cumulative_mistakes / r,
                "cumulative_sq_loss": self.cumulative_sq_loss,
                "n_updates": self.n_updates,
                "n_support": self._sv_n,
            },
            converged=converged,
        )

    # ------------------------------------------------------------------ one example
    def learn_one(self, x: np.ndarray, y: int) -> int:
        """One round on a dense row ``x`` of shape (n_features,); returns the online prediction."""
        X = np.asarray(x, dtype=np.float64).reshape(1, -1)
        if X.shape[1] != self.n_features:
            raise DataError(f"x has {X.shape[1]} features, the solver {self.n_features}")
        yy = np.array([int(y)], dtype=np.int64)
        if not 0 <= yy[0] < self.n_nodes:
            raise DataError(f"label id {y} out of range [0, {self.n_nodes})")
        sq = row_sq_norms(X)
        if self.kernel is not None:
            sq = self.kernel.diag(sq)
        pred = np.empty(1, dtype=np.int64)
        if self.kernel is None:
            self._pass_primal_dense(X, yy, sq, np.zeros(1, dtype=np.int64), pred)
        else:
            self._pass_dual(X, yy, sq, np.zeros(1, dtype=np.int64), pred, np.full(1, -1))
        self.cumulative_gamma += float(self.eval_geometry.gamma(yy, pred)[0])
        self.cumulative_mistakes += float(pred[0] != yy[0])
        return int(pred[0])

    # ------------------------------------------------------------------ hot loops
    def _competitor(self, s: np.ndarray, yi: int, yh: int) -> tuple[int, float]:
        """The label ``v`` of the update and its loss (eq. 5); ``(yi, 0)`` for no update."""
        if self.update == "prediction":
            if yh == yi:
                return yi, 0.0
            g = float(self.geometry.gamma(np.int64(yi), np.int64(yh)))
            return yh, float(s[yh] - s[yi] + math.sqrt(g))
        sg = self._SG[yi] if self._SG is not None else self.geometry.sqrt_gamma_row(yi)
        l = s + sg
        if self._cand_mask is not None:
            l += self._cand_mask
        v = first_argmax(l)
        loss = float(l[v] - s[yi])
        if v == yi or loss <= 0.0:
            return yi, 0.0
        return v, loss

    def _direction(self, yi: int, v: int) -> tuple[np.ndarray, float]:
        M = self._M
        if M is not None:
            c = M[yi] - M[v]
            return c, float(c[yi] - c[v])
        return self.geometry.direction(yi, v)

    def _predict_one(self, s: np.ndarray) -> int:
        cand = self.candidates
        if cand is None:
            return first_argmax(s)
        return int(cand[first_argmax(s[cand])])

    def _pass_rounds(
        self,
        y: np.ndarray,
        sq: np.ndarray,
        idx: np.ndarray,
        pred: np.ndarray,
        score: Callable[[int], np.ndarray],
        update: Callable[[int, np.ndarray, float, int], None],
    ) -> None:
        """Algorithm 1's rounds ``idx`` one by one, the online predictions into ``pred``.

        Parameters
        ----------
        y : ndarray of int
            Labels (node ids) of all the examples.
        sq : ndarray
            ``||x_i||^2`` (``K(x_i, x_i)`` in the kernel form) of all the examples.
        idx : ndarray of int
            The examples of the rounds, in order.
        pred : ndarray of int, shape (len(idx),)
            Receives the online predictions.
        score : callable
            ``score(i)``: the scores ``W^v . x_i`` of every label with the current hypothesis.
        update : callable
            ``update(i, c, alpha, t)``: eq. (7) with step ``alpha`` along the path overlaps
            ``c`` on round ``t``.
        """
        t = self.rounds
        n_upd = 0
        sql = 0.0
        for j in range(len(idx)):
            i = int(idx[j])
            s = score(i)
            yh = self._predict_one(s)
            pred[j] = yh
            yi = int(y[i])
            t += 1
            v, loss = self._competitor(s, yi, yh)
            if v == yi:
                continue
            c, g = self._direction(yi, v)
            sql += loss * loss
            if sq[i] <= 0.0:  # x = 0: no update can separate it
                continue
            update(i, c, loss / (g * sq[i]), t)
            n_upd += 1
        self.rounds = t
        self.n_updates += n_upd
        self.cumulative_sq_loss += sql

    # ------------------------------------------------------------------ batch scoring
    def scores(self, X: Any, averaged: bool = False, chunk: int = 4096) -> np.ndarray:
        """``s[i, v] = W^v . x_i`` (eq. 3), of the last or the averaged hypothesis.

        Parameters
        ----------
        X : ndarray or csr_matrix of shape (n_samples, n_features)
        averaged : bool
            Use the average of eq. (13) instead of the last hypothesis.

        Returns
        -------
        ndarray of shape (n_samples, n_nodes)
        """
        if averaged and not self.track_average:
            raise ParameterError("the averaged hypothesis was not tracked (track_average=False)")
        if self.kernel is None:
            return self._primal_scores(X, averaged)
        coef = self.coef
        B = coef.dual_average if averaged else coef.dual_last
        assert B is not None
        SV = coef.support_vectors
        out = np.zeros((X.shape[0], self.n_nodes))
        if B.shape[0] == 0:
            return out
        for s0 in range(0, X.shape[0], chunk):
            K = self.kernel.matrix(X[s0 : s0 + chunk], SV)
            out[s0 : s0 + chunk] = K @ B
        return out

    def increments(self, averaged: bool = False) -> np.ndarray:
        """Primal increments ``w^v = W^v - W^{A(v)}`` of shape (n_nodes, n_features).

        In the kernel form, only for the linear kernel (``W = B^T SV``).
        """
        coef = self.coef
        if self.kernel is None:
            W = coef.average if averaged else coef.last
        else:
            if self.kernel.name != "linear":
                raise ParameterError("primal increments exist only for the linear kernel")
            B = coef.dual_average if averaged else coef.dual_last
            assert B is not None
            SV = coef.support_vectors
            W = np.asarray(SV.T @ B).T if B.shape[0] else np.zeros((self.n_nodes, self.n_features))
        assert W is not None
        return increments_from_prototypes(W, self.geometry.parent)

    def dual_increments(self, averaged: bool = False) -> np.ndarray:
        """The ``alpha_j^v`` of eq. (12): ``B`` minus its parent columns, (n_support, n_nodes)."""
        if self.kernel is None:
            raise ParameterError("dual increments exist only in the kernel form")
        coef = self.coef
        B = coef.dual_average if averaged else coef.dual_last
        assert B is not None
        return increments_from_prototypes(B.T, self.geometry.parent).T


class GreedyHieronSolver(Solver):
    """The "greedy" comparison of seed 002 (Section 5): one flat Hieron per internal vertex.

    Vertex ``v`` learns to route to its children from ``S_v = {(x_i, u_i) : u_i in P(y_i),
    A(u_i) = v}``; examples labelled ``v`` itself belong to no ``S_v`` unless ``allow_stop``, in
    which case ``v`` is one more class of its own classifier ("stop here", with the fixed zero
    prototype of a flat root). Each local problem is a :class:`HieronSolver` on the flat tree
    ``v -> children``.

    Parameters
    ----------
    parent : ndarray of int, shape (n_nodes,)
        The taxonomy (a tree, root 0, ``parent[i] < i``).
    n_features : int
    update, kernel, report_every, track_average
        Passed to every local :class:`HieronSolver`.
    allow_stop : bool, default False
        Let a vertex keep an example (predict an internal vertex). False is the paper's scheme:
        every prediction is a leaf.

    Attributes
    ----------
    local_ : dict of int -> (ndarray of int, HieronSolver)
        For each internal vertex, its local classes (the node ids of local labels ``0..k``, with
        the vertex itself at 0) and its solver.
    """

    def __init__(
        self,
        parent: np.ndarray,
        n_features: int,
        update: str = "prediction",
        kernel: Kernel | None = None,
        allow_stop: bool = False,
        report_every: int | None = None,
        track_average: bool = True,
    ) -> None:
        self.parent = np.asarray(parent, dtype=np.int64)
        self.geometry = PathGeometry(self.parent)
        self.n_nodes = len(self.parent)
        self.n_features = int(n_features)
        self.update = update
        self.kernel = kernel
        self.allow_stop = allow_stop
        self.report_every = report_every
        self.track_average = track_average
        kids: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for v in range(1, self.n_nodes):
            kids[self.parent[v]].append(v)
        self.children = [np.asarray(k, dtype=np.int64) for k in kids]
        self.local_: dict[int, tuple[np.ndarray, HieronSolver]] = {}
        self.iteration = 0
        self.rounds = 0
        self.mistakes = 0.0

    coef_on_request = True  # every local solver's prototypes, copied when asked for

    @property  # type: ignore[override]
    def coef(self) -> dict[int, tuple[np.ndarray, HieronCoef]]:
        """Each internal vertex's local classes and :class:`HieronCoef`."""
        return {v: (cls, s.coef) for v, (cls, s) in self.local_.items()}

    def _local_solver(self, v: int) -> tuple[np.ndarray, HieronSolver]:
        if v not in self.local_:
            classes = np.r_[v, self.children[v]].astype(np.int64)
            k = len(classes)
            cand = np.arange(k) if self.allow_stop else np.arange(1, k)
            solver = HieronSolver(
                PathGeometry.flat(k),
                self.n_features,
                update=self.update,
                kernel=self.kernel,
                candidates=cand,
                report_every=self.report_every,
                track_average=self.track_average,
            )
            self.local_[v] = (classes, solver)
        return self.local_[v]

    def local_problem(self, v: int, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows of ``S_v`` and their local targets (0 = stop at ``v``, ``j`` = ``j``-th child)."""
        A = self.geometry.ancestor
        # rows whose label is a strict descendant of v (or v itself with allow_stop)
        below = np.asarray(A[:, v].toarray()).ravel() > 0  # node u has v on its path
        hit = below[y]
        if not self.allow_stop:
            hit &= y != v
        rows = np.flatnonzero(hit)
        yl = y[rows]
        depth = self.geometry.depth
        target_depth = depth[v] + 1
        # climb each label to depth(v) + 1: the child of v on its path
        u = yl.copy()
        deep = depth[u] > target_depth
        while deep.any():
            u[deep] = self.parent[u[deep]]
            deep = depth[u] > target_depth
        # local class of each row: v itself is class 0 (a row labelled v stays at u = v)
        pos = np.zeros(self.n_nodes, dtype=np.int64)
        pos[self.children[v]] = np.arange(1, len(self.children[v]) + 1)
        return rows, pos[u]

    def iterate(self, objective: HieronStream) -> Iterator[SolverState]:
        """Train the classifier of every internal vertex; one state per vertex.

        ``upper`` is the fraction of routing mistakes made online so far over all vertices'
        rounds (the greedy scheme has no tree-level online error), ``lower`` is None.
        """
        stream = objective
        X = sp.csr_matrix(stream.X) if sp.issparse(stream.X) else stream.X
        y = stream.y
        rng = np.random.default_rng(stream.random_state)
        internal = [v for v in range(self.n_nodes) if len(self.children[v])]
        for k, v in enumerate(internal):
            rows, local = self.local_problem(v, y)
            _, solver = self._local_solver(v)
            before_rounds, before_mistakes = solver.rounds, solver.cumulative_mistakes
            if len(rows):
                sub = HieronStream(
                    X[rows],
                    local,
                    epochs=stream.epochs,
                    shuffle=stream.shuffle,
                    random_state=int(rng.integers(2**31)),
                )
                for _ in solver.iterate(sub):
                    pass
            self.rounds += solver.rounds - before_rounds
            self.mistakes += solver.cumulative_mistakes - before_mistakes
            self.iteration += 1
            yield SolverState(
                iteration=self.iteration,
                elapsed=0.0,
                upper=self.mistakes / max(self.rounds, 1),
                lower=None,
                extra={"vertex": v, "rounds": self.rounds, "n_local_examples": len(rows)},
                converged=k == len(internal) - 1,
            )

    def scores(self, X: Any, averaged: bool = False) -> np.ndarray:
        """Local scores of shape (n_samples, n_nodes): column ``u`` scores child ``u`` at its
        parent; the "stop" score of a vertex (its fixed zero prototype) is 0."""
        out = np.full((X.shape[0], self.n_nodes), -np.inf)
        for v in range(self.n_nodes):
            if not len(self.children[v]):
                continue
            classes, solver = self._local_solver(v)
            S = solver.scores(X, averaged=averaged)
            out[:, classes[1:]] = S[:, 1:]
        return out

    def route(self, S: np.ndarray) -> np.ndarray:
        """Top-down routing from the root with the local scores ``S`` (see :meth:`scores`)."""
        n = S.shape[0]
        kmax = max(len(c) for c in self.children)
        pad = np.full((self.n_nodes, kmax + 1), -1, dtype=np.int64)
        for v, c in enumerate(self.children):
            if len(c):
                pad[v, 0] = v if self.allow_stop else -1
                pad[v, 1 : 1 + len(c)] = c
        at = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        active = np.ones(n, dtype=bool)
        for _ in range(int(self.geometry.depth.max()) + 1):
            act = np.flatnonzero(active & (pad[at, 1] >= 0))
            if len(act) == 0:
                break
            opts = pad[at[act]]  # (n_act, kmax + 1)
            val = np.where(opts >= 0, S[rows[act, None], np.maximum(opts, 0)], -np.inf)
            stop = opts[:, 0] >= 0
            val[stop, 0] = 0.0  # the vertex's own (zero) prototype
            best = val.max(axis=1, keepdims=True)
            pick = np.argmax(val >= best - TIE_RTOL * (1.0 + np.abs(best)), axis=1)
            nxt = opts[np.arange(len(act)), pick]
            stayed = nxt == at[act]
            at[act] = nxt
            active[act[stayed]] = False
        return at
