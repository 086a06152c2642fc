"""Hieron's primal form (seed 002, eq. 7 and 13): the rounds on the prototypes ``W``.

:class:`PrimalFormMixin` is a base of :class:`~hierlab.methods.hieron.solver.HieronSolver`.
It keeps the prototypes ``W`` (path sums, eq. 2) of shape (n_nodes, n_features) and, for the
averaged hypothesis, the running weighted sum ``U = sum_t t Delta_t`` (eq. 13), and passes over
examples in three ways that run the same rounds: one by one on dense rows, one by one on CSR
rows, and scored ahead in blocks (``lookahead``). An update is the rank-one change
``W += alpha c x^T`` on the rows where ``c_u = |P(u) & P(y)| - |P(u) & P(v)|`` is non-zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from hierlab.core.model import dense
from hierlab.methods.hieron.model import TIE_RTOL, PathGeometry, predict_from_scores

__all__ = ["PrimalFormMixin"]


class PrimalFormMixin:
    """The primal rounds and scores of :class:`~hierlab.methods.hieron.solver.HieronSolver`.

    Reads of the solver: ``geometry``, ``update``, ``candidates``, the rows of path overlaps
    ``_M`` and of square-root tree distances ``_SG`` (small trees), the candidate mask
    ``_cand_mask``, the counters (``rounds``, ``n_updates``, ``cumulative_sq_loss``) and the
    shared round logic ``_direction`` and ``_pass_rounds``.
    """

    W: np.ndarray | None
    U: np.ndarray | None

    if TYPE_CHECKING:
        geometry: PathGeometry
        update: str
        candidates: np.ndarray | None
        rounds: int
        n_updates: int
        cumulative_sq_loss: float
        _M: np.ndarray | None
        _SG: np.ndarray | None
        _cand_mask: np.ndarray | None

        def _direction(self, yi: int, v: int) -> tuple[np.ndarray, float]: ...

        def _pass_rounds(
            self,
            y: np.ndarray,
            sq: np.ndarray,
            idx: np.ndarray,
            pred: np.ndarray,
            score: Callable[[int], np.ndarray],
            update: Callable[[int, np.ndarray, float, int], None],
        ) -> None: ...

    def _set_layout(self, sparse: bool) -> None:
        """Prototypes feature-major (Fortran order) for CSR rows, node-major for dense ones.

        A sparse row reads and writes the contiguous rows ``W.T[j]`` of its features (not one
        entry per node, each in another row: at 1,000 nodes scoring a row took 0.6 ms), and
        ``X @ W.T`` then multiplies a C-ordered matrix without copying ``W``; a dense row's
        update writes whole rows ``W[v]``. Converted (one copy) only when the kind of data
        changes between calls.
        """
        assert self.W is not None
        if self.W.flags.f_contiguous if sparse else self.W.flags.c_contiguous:
            return
        order: Literal["C", "F"] = "F" if sparse else "C"
        if self.rounds == 0 and not self.W.any():  # untouched zeros: allocate, do not copy
            shape, averaged = self.W.shape, self.U is not None
            self.W = self.U = None  # released first
            self.W = np.zeros(shape, order=order)
            self.U = np.zeros(shape, order=order) if averaged else None
            return
        self.W = np.asarray(self.W, order=order)
        self.U = None if self.U is None else np.asarray(self.U, order=order)

    def _pass_primal_dense(
        self, X: np.ndarray, y: np.ndarray, sq: np.ndarray, idx: np.ndarray, pred: np.ndarray
    ) -> None:
        """The rounds ``idx`` one by one on dense ``X`` (online predictions into ``pred``)."""
        W = self.W
        assert W is not None
        cand = self.candidates
        maxloss = self.update == "max-loss"
        M, SG, mask = self._M, self._SG, self._cand_mask
        t = self.rounds
        n_upd = 0
        sql = 0.0
        for j in range(len(idx)):
            i = idx[j]
            s = W @ X[i]
            m = s.max() if cand is None else s[cand].max()
            tie = m - TIE_RTOL * (1.0 + abs(m))
            if cand is None:
                yh = int(np.argmax(s >= tie))
            else:
                yh = int(cand[np.argmax(s[cand] >= tie)])
            pred[j] = yh
            yi = int(y[i])
            t += 1
            # --- competitor and loss (inlined _competitor for speed on small trees)
            if maxloss:
                l = s + (SG[yi] if SG is not None else self.geometry.sqrt_gamma_row(yi))
                if mask is not None:
                    l += mask
                m = l.max()
                v = int(np.argmax(l >= m - TIE_RTOL * (1.0 + abs(m))))
                loss = float(l[v] - s[yi])
                if v == yi or loss <= 0.0:
                    continue
            else:
                if yh == yi:
                    continue
                v = yh
                loss = -1.0  # computed below once gamma is known
            if M is not None:
                c = M[yi] - M[v]
                g = c[yi] - c[v]
            else:
                c, g = self.geometry.direction(yi, v)
            if loss < 0.0:
                loss = float(s[v] - s[yi]) + math.sqrt(g)
            sql += loss * loss
            if sq[i] <= 0.0:  # x = 0: no update can separate it
                continue
            self._step(X, int(i), c, loss / (g * sq[i]), t, sparse=False)
            n_upd += 1
        self.rounds = t
        self.n_updates += n_upd
        self.cumulative_sq_loss += sql

    def _step(self, X: Any, i: int, c: np.ndarray, a: float, t: int, sparse: bool) -> None:
        """Eq. (7) on the prototypes, ``W += a c x_i^T``, and ``U += t a c x_i^T`` (eq. 13).

        Only the rows where ``c`` is non-zero (the two paths' symmetric difference and the
        subtrees below it) and, for CSR ``X``, the columns of row ``i`` are touched.
        """
        W, U = self.W, self.U
        assert W is not None
        rows = np.flatnonzero(c)
        if sparse:
            a0, a1 = X.indptr[i], X.indptr[i + 1]
            cols = X.indices[a0:a1]
            step = (a * c[rows])[:, None] * X.data[a0:a1]
            W[np.ix_(rows, cols)] += step
            if U is not None:
                U[np.ix_(rows, cols)] += t * step
            return
        step = (a * c[rows])[:, None] * X[i]
        W[rows] += step
        if U is not None:
            step *= t
            U[rows] += step

    def _pass_primal_blocked(
        self, X: Any, y: np.ndarray, sq: np.ndarray, idx: np.ndarray, pred: np.ndarray
    ) -> None:
        """The same rounds as the per-example loops, scored ahead in blocks (dense or CSR).

        Scores of the next ``B`` examples come from one matrix product with the current
        prototypes; the rounds before the first one that needs an update are exactly the rounds
        the sequential loop would run (nothing changes in between), so they are settled at once.
        The update is then applied and scoring resumes after it. ``B`` doubles while no update is
        met and shrinks after one, so late, mostly-correct passes cost a few matrix products.
        """
        sparse = sp.issparse(X)
        n = len(idx)
        contiguous = (
            n > 0 and int(idx[-1]) - int(idx[0]) == n - 1 and bool(np.all(np.diff(idx) == 1))
        )
        pos, B = 0, 8
        rate = 0.5  # running estimate of the fraction of rounds that update
        sql = 0.0  # squared losses of the block rounds, added to the total as the loops do
        while pos < n:
            if rate > 0.3:
                # updates on (almost) every round: blocks would be rescored for nothing; run the
                # next rounds one by one, then try blocks again if updates have become rarer
                seg = idx[pos : pos + 32]
                self.cumulative_sq_loss += sql
                sql = 0.0
                before = self.n_updates
                loop = self._pass_primal_sparse if sparse else self._pass_primal_dense
                loop(X, y, sq, seg, pred[pos : pos + len(seg)])
                rate, B = _track(rate, len(seg), self.n_updates - before)
                pos += len(seg)
                continue
            end = min(n, pos + B)
            rows_i = idx[pos:end]
            Xb = X[int(idx[pos]) : int(idx[pos]) + (end - pos)] if contiguous else X[rows_i]
            P, V, losses, need = self._score_block(Xb, y[rows_i], sparse)
            hit = np.flatnonzero(need)
            settled = int(hit[0]) + 1 if len(hit) else end - pos  # rounds up to the update
            pred[pos : pos + settled] = P[:settled]
            self.rounds += settled
            pos += settled
            rate, B = _track(rate, settled, int(len(hit) > 0))
            if len(hit):
                j = settled - 1
                i, yi, v = int(rows_i[j]), int(y[rows_i[j]]), int(V[j])
                sql += self._update_from_block(X, i, yi, v, float(losses[j]), sq[i], sparse)
        self.cumulative_sq_loss += sql

    def _score_block(
        self, Xb: Any, yb: np.ndarray, sparse: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Predictions, competitors and losses of a block of rounds scored with the current ``W``.

        Returns
        -------
        P : ndarray of int
            The online predictions (eq. 1).
        V : ndarray of int
            The competitors of the updates (``P`` for ``update="prediction"``).
        losses : ndarray
            ``s_V - s_y + sqrt(gamma(y, V))`` for max-loss; ``s_V - s_y`` for prediction (the
            margin term is added once gamma is known).
        need : ndarray of bool
            The rounds that update.
        """
        W = self.W
        assert W is not None
        S = _block_scores(Xb, W) if sparse else np.asarray(Xb @ W.T)
        P = predict_from_scores(S, self.candidates)
        r = np.arange(len(yb))
        if self.update != "max-loss":
            return P, P, S[r, P] - S[r, yb], P != yb
        L = S + (self._SG[yb] if self._SG is not None else self.geometry.sqrt_gamma_rows(yb))
        if self._cand_mask is not None:
            L += self._cand_mask
        V = predict_from_scores(L)
        losses = L[r, V] - S[r, yb]
        return P, V, losses, (V != yb) & (losses > 0.0)

    def _update_from_block(
        self, X: Any, i: int, yi: int, v: int, loss: float, sq_i: float, sparse: bool
    ) -> float:
        """Apply the update of round ``self.rounds`` (example ``i``, competitor ``v``).

        ``loss`` comes from :meth:`_score_block`; returns the squared loss suffered.
        """
        c, g = self._direction(yi, v)
        if self.update != "max-loss":
            loss += math.sqrt(g)
        if sq_i > 0.0:  # x = 0: no update can separate it
            self._step(X, i, c, loss / (g * sq_i), self.rounds, sparse)
            self.n_updates += 1
        return loss * loss

    def _pass_primal_sparse(
        self, X: sp.csr_matrix, y: np.ndarray, sq: np.ndarray, idx: np.ndarray, pred: np.ndarray
    ) -> None:
        """The rounds ``idx`` one by one on CSR ``X`` (online predictions into ``pred``)."""
        W = self.W
        assert W is not None
        indptr, indices, data = X.indptr, X.indices, X.data

        WT = W.T  # (n_features, n_nodes), C-ordered: a feature's weights are contiguous

        def score(i: int) -> np.ndarray:
            """``W^v . x_i`` from the rows of ``W^T`` of row ``i``'s features."""
            a0, a1 = indptr[i], indptr[i + 1]
            return np.asarray(data[a0:a1] @ WT[indices[a0:a1]])

        def update(i: int, c: np.ndarray, a: float, t: int) -> None:
            """Eq. (7) on the columns of row ``i``."""
            self._step(X, i, c, a, t, sparse=True)

        self._pass_rounds(y, sq, idx, pred, score, update)

    def _primal_scores(self, X: Any, averaged: bool) -> np.ndarray:
        """``X W^T`` of the last or the averaged prototypes, without copying ``W``.

        The average is never formed: its scores are ``X W^T - (X U^T) / (T + 1)`` (equal to
        ``X (W - U / (T + 1))^T`` up to rounding), two products of the size of the output. Forming
        the (nodes x features) average per call made the in-sample calibration, which scores
        the training rows a block at a time, cost O(blocks x nodes x features): quadratic in
        the classes (hieron-batch at 3,000 leaves: 46 of 81 s).
        """
        W, U = self.W, self.U
        assert W is not None
        out = dense(X @ W.T)
        if averaged:
            assert U is not None
            out -= dense(X @ U.T) / (self.rounds + 1)
        return out


def _track(rate: float, rounds: int, updates: int) -> tuple[float, int]:
    """The blocked pass's running update rate after ``rounds`` rounds with ``updates`` updates,
    and the next block size (about two updates' worth of rounds, 4 to 4096)."""
    w = min(0.5, rounds / 64.0)
    rate = (1.0 - w) * rate + w * updates / max(rounds, 1)
    return rate, int(min(4096, max(4, 2.0 / max(rate, 1e-4))))


def _block_scores(Xb: sp.csr_matrix, W: np.ndarray) -> np.ndarray:
    """``Xb @ W.T`` for a small CSR block, reading only the block's columns of ``W``.

    ``Xb @ W.T`` would first copy all of ``W`` into C order (``W.T`` is a Fortran view):
    O(n_nodes * n_features) per block. Here the block's columns are renumbered (in the same
    order, so every row's sum runs over the same terms in the same order) and only
    ``W[:, J]`` is gathered: O(n_nodes * |J|).
    """
    J, inv = np.unique(Xb.indices, return_inverse=True)
    XJ = sp.csr_matrix((Xb.data, inv.ravel(), Xb.indptr), shape=(Xb.shape[0], len(J)))
    return np.asarray(XJ @ np.ascontiguousarray(W[:, J].T))
