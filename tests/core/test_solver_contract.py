"""The solver contract: solve() drains a solver, stops on the gap, callbacks, and its own clock."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import hierlab.core.solver as base
from hierlab import ConvergenceError, EarlyStopping, FunctionCallback, History, Timeout
from hierlab.core.solver import Solver, SolverState, solve


class FakeClock:
    """A perf_counter that only moves when told to."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Bisection(Solver):
    """Minimises (x - 1/3)^2 on [0, 1] by halving an interval: exact bounds every step.

    Each iteration advances the fake clock by ``cost`` seconds.
    """

    def __init__(self, clock: FakeClock, cost: float = 1.0, max_iter: int = 100) -> None:
        self.clock = clock
        self.cost = cost
        self.max_iter = max_iter

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        lo, hi = 0.0, 1.0
        best = np.inf
        for t in range(1, self.max_iter + 1):
            self.clock.t += self.cost
            mid = 0.5 * (lo + hi)
            if mid < 1 / 3:
                lo = mid
            else:
                hi = mid
            x = 0.5 * (lo + hi)
            val = (x - 1 / 3) ** 2
            if val < best:
                best, self.coef = val, x
            yield SolverState(t, 0.0, upper=best, lower=0.0, extra={"x": x})


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    c = FakeClock()
    monkeypatch.setattr(base.time, "perf_counter", c)
    return c


def test_stops_on_gap_and_returns_best(clock: FakeClock) -> None:
    res = solve(Bisection(clock), tol=1e-6)
    assert res.converged and res.stop_reason == "gap"
    assert res.history[-1].gap <= 1e-6
    assert res.history[-2].gap > 1e-6  # stopped at the first state that met the tolerance
    assert abs(res.coef - 1 / 3) <= 1e-3


def test_relative_tolerance(clock: FakeClock) -> None:
    res_abs = solve(Bisection(clock), tol=1e-8)
    res_rel = solve(Bisection(clock), tol=0.0, rtol=1.0)  # gap <= |upper| holds at once
    assert res_rel.n_iter == 1
    assert res_abs.n_iter > 1


def test_clock_excludes_callback_time(clock: FakeClock) -> None:
    def slow(state: SolverState) -> bool:
        clock.t += 50.0  # a callback that takes 50 s per call
        return False

    res = solve(Bisection(clock, cost=2.0, max_iter=5), callbacks=[slow], warn=False)
    assert [s.elapsed for s in res.history] == [2.0, 4.0, 6.0, 8.0, 10.0]


def test_callback_stop_and_history(clock: FakeClock) -> None:
    hist = History()
    stop_at_3 = FunctionCallback(lambda s: s.iteration >= 3)
    res = solve(Bisection(clock), callbacks=[hist, stop_at_3])
    assert res.stop_reason == "callback" and not res.converged
    assert len(hist.states) == 3
    df = hist.to_frame()
    assert list(df["iteration"]) == [1, 2, 3]
    assert {"upper", "lower", "gap", "x", "elapsed"} <= set(df.columns)


def test_every_callback_sees_the_stopping_state(clock: FakeClock) -> None:
    """A callback listed after the one that stops still gets that state (no short circuit)."""
    hist = History()
    res = solve(Bisection(clock), callbacks=[FunctionCallback(lambda s: s.iteration >= 3), hist])
    assert res.stop_reason == "callback"
    assert [s.iteration for s in hist.states] == [1, 2, 3]


def test_timeout_uses_solver_clock(clock: FakeClock) -> None:
    res = solve(Bisection(clock, cost=1.0), callbacks=[Timeout(3.5)], warn=False)
    assert res.n_iter == 4  # 1, 2, 3 < 3.5 <= 4


def test_unconverged_warns_with_gap(clock: FakeClock) -> None:
    with pytest.warns(ConvergenceWarning, match="upper - lower"):
        res = solve(Bisection(clock, max_iter=3), tol=1e-12)
    assert not res.converged and res.stop_reason == "max_iter"


def test_on_end_called_once(clock: FakeClock) -> None:
    ends: list[Any] = []
    cb = FunctionCallback(lambda s: None, on_end=ends.append)
    res = solve(Bisection(clock), callbacks=[cb], tol=1e-3)
    assert ends == [res]


def test_early_stopping_counts_states_without_improvement() -> None:
    es = EarlyStopping(patience=2, min_delta=0.0)
    ups = [5.0, 4.0, 4.0, 4.0, 3.0]
    out = [es(SolverState(i, 0.0, u)) for i, u in enumerate(ups, 1)]
    assert out == [False, False, False, True, False]


def test_divergence_raises() -> None:
    class Diverge(Solver):
        def iterate(self, objective: Any) -> Iterator[SolverState]:
            yield SolverState(1, 0.0, upper=1.0)
            yield SolverState(2, 0.0, upper=float("nan"))

    with pytest.raises(ConvergenceError, match="iteration 2"):
        solve(Diverge())


def test_solver_flag_converged() -> None:
    class Flag(Solver):
        def iterate(self, objective: Any) -> Iterator[SolverState]:
            for t in range(1, 10):
                yield SolverState(t, 0.0, upper=1.0 / t, converged=t == 4)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = solve(Flag())
    assert res.converged and res.n_iter == 4 and res.stop_reason == "converged"
