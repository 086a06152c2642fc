"""A stop requested while a solver runs (``StopFlag``): it is polled inside long passes, the
fit ends without another pass, and the model is the iterate of the state the result names as
kept (checked against copies of the solver's iterate taken at every state)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from hierlab import FitStopped, StopFlag, make_estimator
from hierlab.core.solver import Solver, SolverState, solve
from hierlab.datasets import make_hierarchical_text


class _AfterPolls(StopFlag):
    """A stop that arrives after ``n`` polls (deterministic: a click at a known moment)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.polls = 0

    def stop_requested(self) -> bool:
        self.polls += 1
        if self.polls >= self.n:
            self.set()
        return super().stop_requested()


class _Snapshots:
    """Copies of the solver's iterate at every state (the solver comes with ``on_start``)."""

    def __init__(self) -> None:
        self.solver: Any = None
        self.coefs: dict[int, np.ndarray] = {}

    def on_start(self, info: dict[str, Any]) -> None:
        self.solver = info["solver"]
        self.limits = info

    def __call__(self, state: SolverState) -> bool:
        if state.extra.get("exact", True) is not False:
            self.coefs[state.iteration] = np.array(self.solver.coef, copy=True)
        return False


class _Passes(Solver):
    """Ten passes of ten blocks; polls the stop request after every block."""

    def __init__(self) -> None:
        self.coef = np.zeros(1)
        self.blocks = 0

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        for k in range(1, 11):
            for _ in range(10):
                if self.interrupted():
                    return
                self.blocks += 1
            self.coef = np.array([float(k)])
            yield SolverState(iteration=k, elapsed=0.0, upper=10.0 / k, lower=0.0)


def test_solve_polls_the_flag_inside_a_pass() -> None:
    solver = _Passes()
    flag = _AfterPolls(36)  # solve polls once before each state, the solver after each block
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a stop is no convergence failure
        result = solve(solver, None, [flag])
    assert result.stop_reason == "callback" and not result.converged
    # polls: solve before each pass (4), the solver before each block: the 36th is before the
    # second block of pass 4
    assert [s.iteration for s in result.history] == [1, 2, 3]
    assert solver.blocks == 31
    assert result.kept is not None and result.kept.iteration == 3
    assert float(result.coef[0]) == 3.0
    assert not hasattr(solver, "__dict__") or "interrupted" not in solver.__dict__


def test_a_flag_set_before_the_first_state_raises_fit_stopped() -> None:
    flag = StopFlag()
    flag.set()
    solver = _Passes()
    with pytest.raises(FitStopped, match="stopped before its first state"):
        solve(solver, None, [flag])
    assert solver.blocks == 0


@pytest.fixture(scope="module")
def text() -> Any:
    train, _ = make_hierarchical_text(
        n_samples=3000, n_classes=20, n_features=600, depth=2, random_state=0
    )
    return train


@pytest.mark.parametrize(("n_polls", "states"), [(6, [1]), (7, [1]), (9, [1]), (13, [1, 2])])
def test_bcfw_stops_inside_its_pass_and_keeps_the_last_certified_w(
    text: Any, n_polls: int, states: list[int]
) -> None:
    # polls per epoch: solve's before it, one before the pass, three inside the certificate;
    # the 6th is solve's after epoch 1, the 7th before epoch 2's pass, the 9th and the 13th
    # inside the certificates of epochs 2 and 3
    est = make_estimator(
        "flatmult", taxonomy=text.taxonomy, solver="bcfw", tol=0.0, rtol=0.0, max_iter=200
    )
    snaps, flag = _Snapshots(), _AfterPolls(n_polls)
    est.fit(text.X, text.y, callbacks=[snaps, flag])
    assert est.stop_reason_ == "callback" and not est.converged_
    assert list(est.history_["iteration"]) == states
    kept = est.kept_state_
    assert kept is not None and kept["iteration"] in snaps.coefs
    exact = est.history_[est.history_.get("exact", True) != False]  # noqa: E712
    assert kept["upper"] == pytest.approx(float(exact["upper"].min()))
    np.testing.assert_array_equal(np.asarray(snaps.solver.coef), snaps.coefs[kept["iteration"]])


@pytest.mark.slow
def test_global_dual_cd_certifies_the_pass_it_stops_after(
    text: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # hr-svm's global dual coordinate descent certifies every second pass and keeps the last
    # pass's W: a stop after an uncertified pass certifies it first
    from hierlab.methods.hr.global_cd import PassBlocks

    monkeypatch.setattr(PassBlocks, "first", 10**9)  # one block per pass: known polls
    monkeypatch.setattr(PassBlocks, "seconds", float("inf"))
    est = make_estimator(
        "hr-svm", taxonomy=text.taxonomy, solver="global-cd", tol=1e-12, max_iter=50
    )
    snaps = _Snapshots()
    # polls: solve (1); before and after passes 1-2 (2-5); state 2, solve (6); before and
    # after pass 3 (7, 8), then before pass 4 (9)
    flag = _AfterPolls(9)
    est.fit(text.X, text.y, callbacks=[snaps, flag])
    hist = est.history_
    assert est.stop_reason_ == "callback"
    assert list(hist["iteration"]) == [2, 3]  # pass 3 was certified when the stop came
    assert est.kept_state_["iteration"] == 3
    np.testing.assert_array_equal(np.asarray(snaps.solver.coef), snaps.coefs[3])


class _Work:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def on_work(self, done: int, total: int, elapsed: float) -> None:
        self.calls.append((done, total))

    def __call__(self, state: SolverState) -> bool:
        return False


def test_top_down_reports_each_node_and_stops_between_nodes(text: Any) -> None:
    rec = _Work()
    est = make_estimator("topdown", taxonomy=text.taxonomy).fit(text.X, text.y, callbacks=[rec])
    n = len(est.node_estimators_)
    # a report as the work starts, then one per node
    assert n > 3 and rec.calls == [(k, n) for k in range(0, n + 1)]
    rec, flag = _Work(), _AfterPolls(4)
    with pytest.raises(FitStopped, match=f"stopped after 3 of {n} parts"):
        make_estimator("topdown", taxonomy=text.taxonomy).fit(text.X, text.y, callbacks=[rec, flag])
    assert rec.calls == [(0, n), (1, n), (2, n), (3, n)]
