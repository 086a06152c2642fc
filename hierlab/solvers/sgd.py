"""Pegasos: mini-batch stochastic subgradient descent for strongly convex SVM objectives.

Shalev-Shwartz, Singer & Srebro (2007), the solver seed 003 uses for eq. (10)/(12)/(13) and for
the V-step of Shared SVM (Section 7.2). For ``J(W) = lam ||W||^2 + mean_i loss_i(W)`` (strongly
convex with modulus ``2 lam``) step ``t`` draws a mini-batch ``B`` and does

    W <- (1 - 2 lam eta_t) W - eta_t / |B| sum_{i in B} g_i,      eta_t = 1 / (2 lam (t + t0)),

then projects onto the ball ``||W||_F <= sqrt(J(0) / lam)`` that contains the optimum. The
reported iterate is the polynomial-decay average ``W_bar <- (1 - r_t) W_bar + r_t W`` with
``r_t = (1 + c) / (t + c)`` (Shamir & Zhang 2013), whose primal objective is evaluated on the
whole training set after every epoch: that value is ``upper`` on the solver contract (Pegasos
has no certificate, so ``lower`` is None).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np

from hierlab.exceptions import ParameterError
from hierlab.solvers.base import Solver, SolverState

__all__ = ["PegasosSGD", "SGDObjective"]


class SGDObjective(Protocol):
    """What :class:`PegasosSGD` needs from an objective."""

    lam: float
    max_loss: float

    @property
    def n_samples(self) -> int: ...

    @property
    def coef_shape(self) -> tuple[int, int]: ...

    def gradient(self, W: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def value(self, W: np.ndarray) -> float: ...


class PegasosSGD(Solver):
    """Mini-batch Pegasos with iterate averaging, on the solver contract (one state per epoch).

    Parameters
    ----------
    epochs : int, default 30
        Maximum passes over the data.
    batch_size : int, default 64
        Rows per step (the subgradient is one product ``G^T X_B``, dense or CSR).
    tol : float, default 1e-4
        Converged when the objective of the reported iterate changed by less than ``tol``
        (relative) over the last epoch.
    average : bool, default True
        Report the averaged iterate (else the last one).
    avg_c : float, default 3.0
        The ``c`` of polynomial-decay averaging (``c = 0`` is the uniform average).
    random_state : int or Generator, optional
        Shuffling of the rows in each epoch.
    W0 : ndarray, optional
        Warm start (also sets the step counter offset ``t0`` below).
    t0 : int, default 0
        Offset of the step counter: ``eta_t = 1 / (2 lam (t + t0))`` (a warm start keeps it
        from taking the huge first steps of a cold start).

    Attributes
    ----------
    coef : ndarray of shape (n_nodes, n_features)
        The iterate with the smallest objective so far.
    W_last : ndarray
        The last (non-averaged) iterate.
    t : int
        Steps taken, ``t0`` included.
    """

    def __init__(
        self,
        epochs: int = 30,
        batch_size: int = 64,
        tol: float = 1e-4,
        average: bool = True,
        avg_c: float = 3.0,
        random_state: Any = None,
        W0: np.ndarray | None = None,
        t0: int = 0,
    ) -> None:
        if epochs < 1:
            raise ParameterError(f"epochs must be >= 1, got {epochs}")
        if batch_size < 1:
            raise ParameterError(f"batch_size must be >= 1, got {batch_size}")
        self.epochs = int(epochs)
        self.batch_size = int(batch_size)
        self.tol = float(tol)
        self.average = bool(average)
        self.avg_c = float(avg_c)
        self.rng = np.random.default_rng(random_state)
        self.W0 = W0
        self.t = int(t0)
        self.coef: np.ndarray | None = None
        self.W_last: np.ndarray | None = None
        self.best = np.inf

    def run_epoch(
        self, objective: SGDObjective, W: np.ndarray, W_bar: np.ndarray, n_avg: int
    ) -> tuple[np.ndarray, np.ndarray, int, float]:
        """One pass of mini-batch Pegasos; returns ``(W, W_bar, n_avg, mean batch loss)``.

        ``n_avg`` counts the averaging steps since ``W_bar`` was (re)started.
        """
        lam = objective.lam
        radius = np.sqrt(max(objective.max_loss, 1e-12) / lam)
        n = objective.n_samples
        perm = self.rng.permutation(n)
        loss_sum = 0.0
        for s in range(0, n, self.batch_size):
            idx = np.sort(perm[s : s + self.batch_size])
            self.t += 1
            eta = 1.0 / (2.0 * lam * self.t)
            g, losses = objective.gradient(W, idx)
            loss_sum += float(losses.sum())
            W = (1.0 - 2.0 * lam * eta) * W - eta * g
            nrm = float(np.sqrt(np.sum(W * W)))
            if nrm > radius:
                W *= radius / nrm
            n_avg += 1
            r = (1.0 + self.avg_c) / (n_avg + self.avg_c)
            W_bar = (1.0 - r) * W_bar + r * W
        return W, W_bar, n_avg, loss_sum / n

    def iterate(self, objective: SGDObjective) -> Iterator[SolverState]:
        """Yield one state per epoch: ``upper`` = best primal objective of the reported iterate."""
        shape = objective.coef_shape
        W = np.zeros(shape) if self.W0 is None else np.array(self.W0, dtype=np.float64)
        W_bar = W.copy()
        n_avg = 0
        self.coef = W.copy()
        self.best = objective.value(W)
        prev_val = self.best
        for epoch in range(1, self.epochs + 1):
            W, W_bar, n_avg, mean_loss = self.run_epoch(objective, W, W_bar, n_avg)
            self.W_last = W
            report = W_bar if self.average else W
            val = objective.value(report)
            if val < self.best:
                self.best = val
                self.coef = report.copy()
            converged = epoch > 1 and abs(prev_val - val) <= self.tol * abs(val)
            prev_val = val
            yield SolverState(
                iteration=epoch,
                elapsed=0.0,
                upper=float(self.best),
                lower=None,
                extra={"objective": float(val), "train_loss_sgd": mean_loss, "steps": self.t},
                converged=converged,
            )
            if converged:
                return
