"""Callbacks for :func:`hierlab.core.solver.solve`: History, EarlyStopping, Timeout, StopFlag.

A callback is any callable taking a :class:`~hierlab.core.solver.SolverState` and returning
True to stop. The solver's clock excludes the callbacks' time (see ``solve``).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import pandas as pd

from hierlab.core.exceptions import ParameterError
from hierlab.core.solver import Callback, SolverResult, SolverState

__all__ = ["Callback", "EarlyStopping", "FunctionCallback", "History", "StopFlag", "Timeout"]


class History:
    """Keep every state; :meth:`to_frame` gives the convergence table."""

    def __init__(self) -> None:
        self.states: list[SolverState] = []

    def __call__(self, state: SolverState) -> bool:
        self.states.append(state)
        return False

    def to_frame(self) -> pd.DataFrame:
        """One row per iteration: iteration, elapsed, upper, lower, gap and the extras."""
        return pd.DataFrame([s.as_dict() for s in self.states])


class EarlyStopping:
    """Stop when ``upper`` has not improved by ``min_delta`` (relative) for ``patience`` states.

    Parameters
    ----------
    patience : int, default 10
        States without improvement before stopping.
    min_delta : float, default 1e-6
        Relative improvement that counts.
    """

    def __init__(self, patience: int = 10, min_delta: float = 1e-6) -> None:
        if patience < 1:
            raise ParameterError(f"patience must be >= 1, got {patience}")
        self.patience = patience
        self.min_delta = min_delta
        self._best = math.inf
        self._wait = 0

    def __call__(self, state: SolverState) -> bool:
        if not math.isfinite(self._best) or state.upper < self._best - self.min_delta * abs(
            self._best
        ):
            self._best = state.upper
            self._wait = 0
            return False
        self._wait += 1
        return self._wait >= self.patience


class Timeout:
    """Stop once the solver has run ``seconds`` (its own clock, callbacks excluded).

    Parameters
    ----------
    seconds : float
        Budget in seconds; must be positive.
    wall : bool, default False
        Count wall-clock time since the first state instead (callbacks included).
    """

    def __init__(self, seconds: float, wall: bool = False) -> None:
        if not seconds > 0:
            raise ParameterError(f"Timeout needs seconds > 0, got {seconds}")
        self.seconds = float(seconds)
        self.wall = wall
        self._start: float | None = None
        self.fired = False

    def __call__(self, state: SolverState) -> bool:
        if self.wall:
            now = time.perf_counter()
            if self._start is None:
                self._start = now - state.elapsed
            used = now - self._start
        else:
            used = state.elapsed
        if used >= self.seconds:
            self.fired = True
        return self.fired


class FunctionCallback:
    """Wrap a plain function ``f(state)`` (its return value is ignored unless True).

    Parameters
    ----------
    func : callable
        Called with each state.
    on_end : callable, optional
        Called with the :class:`SolverResult`.
    """

    def __init__(
        self,
        func: Callable[[SolverState], bool | None],
        on_end: Callable[[SolverResult], None] | None = None,
    ) -> None:
        self.func = func
        self._on_end = on_end

    def __call__(self, state: SolverState) -> bool:
        return bool(self.func(state))

    def on_end(self, result: SolverResult) -> None:
        if self._on_end is not None:
            self._on_end(result)


class StopFlag:
    """A stop request raised from another thread (a Stop button) while a fit runs.

    As a callback it stops the solver at its next state; :func:`~hierlab.core.solver.solve`
    also polls :meth:`stop_requested` before each state, and solvers with long passes poll it
    inside them (:meth:`~hierlab.core.solver.Solver.interrupted`), so a fit stops within a
    fraction of a second of :meth:`set`, keeping the iterate of its last reported state.

    Attributes
    ----------
    requested_at : float or None
        ``time.perf_counter()`` when :meth:`set` was first called.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self.requested_at: float | None = None

    def set(self) -> None:
        """Ask the fit to stop (thread-safe; later calls change nothing)."""
        if self.requested_at is None:
            self.requested_at = time.perf_counter()
        self._event.set()

    def stop_requested(self) -> bool:
        """True once :meth:`set` was called."""
        return self._event.is_set()

    def __call__(self, state: SolverState) -> bool:
        return self._event.is_set()
