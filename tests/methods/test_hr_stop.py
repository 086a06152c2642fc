"""HR-SVM's global dual CD runs its passes a block of examples at a time: the blocks do not
change the steps, its progress is reported inside a pass, and a stop requested inside a pass
ends it after the block under way with the iterate reached certified and recorded."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.callbacks import StopFlag
from hierlab.core.solver import solve
from hierlab.methods.hr import global_cd
from hierlab.methods.hr.global_cd import GlobalDualCD
from hierlab.methods.hr.model import HRProblem
from tests.methods.test_hr import _labels_with_internal_and_empty_rows, _tree


def _problem(loss: str = "hinge") -> HRProblem:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    return HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, loss)


class _Passes:
    """Records the ``on_pass`` reports; sets ``flag`` (from another thread when ``thread``)
    once the pass counter reaches ``at``."""

    def __init__(self, flag: StopFlag | None = None, at: float = np.inf, thread: bool = False):
        self.seen: list[tuple[float, float]] = []
        self.steps: list[tuple[float, str]] = []
        self.flag, self.at, self.thread = flag, at, thread
        self.requested: float | None = None

    def __call__(self, state: object) -> bool:
        return False

    def on_pass(self, passes: float, elapsed: float, step: str | None = None) -> None:
        if step is not None:  # a certificate's progress
            self.steps.append((passes, step))
            return
        self.seen.append((passes, elapsed))
        if self.flag is not None and self.requested is None and passes >= self.at:
            self.requested = passes
            if self.thread:
                t = threading.Thread(target=self.flag.set)
                t.start()
                t.join()
            else:
                self.flag.set()


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("shrinking", [True, False])
def test_blocks_of_a_pass_do_not_change_the_steps(
    monkeypatch: pytest.MonkeyPatch, jit: bool, shrinking: bool
) -> None:
    prob = _problem("squared_hinge")
    runs = []
    for seconds in (1e3, 0.0):  # one block per pass; one example per block
        monkeypatch.setattr(global_cd.PassBlocks, "seconds", seconds)
        monkeypatch.setattr(global_cd.PassBlocks, "first", 1 if seconds == 0.0 else 10**6)
        solver = GlobalDualCD(max_iter=6, use_jit=jit, shrinking=shrinking, full_every=3)
        passes = _Passes()
        with pytest.warns(Warning):
            res = solve(solver, prob, rtol=0.0, callbacks=[passes])
        runs.append((res.coef, solver.duals.toarray(), [s.upper for s in res.history], passes))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == runs[1][2]
    n = prob.X.shape[0]
    one, many = runs[0][3].seen, runs[1][3].seen
    assert [p for p, _ in one] == [float(t) for t in range(1, 7)]  # once per pass
    assert len(many) == 6 * n and many[-1][0] == 6.0  # after every example
    elapsed = [e for _, e in many]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0.0
    # each certificate (passes 2, 4, 6) reports its share, up to 100%
    steps = runs[0][3].steps
    assert sorted({p for p, _ in steps}) == [2.0, 4.0, 6.0]
    assert [s for p, s in steps if p == 6.0][-1] == "certificate 100%"


@pytest.mark.parametrize("thread", [False, True])
def test_a_stop_inside_a_pass_ends_it_after_the_block_with_a_certified_iterate(
    monkeypatch: pytest.MonkeyPatch, thread: bool
) -> None:
    prob = _problem()
    n = prob.X.shape[0]
    monkeypatch.setattr(global_cd.PassBlocks, "seconds", 0.0)
    monkeypatch.setattr(global_cd.PassBlocks, "first", 1)  # blocks of one example
    flag = StopFlag()
    passes = _Passes(flag, at=2.5, thread=thread)  # half-way through the third pass
    solver = GlobalDualCD(max_iter=50, certify_every=1)
    res = solve(solver, prob, rtol=0.0, callbacks=[passes, flag])
    assert res.stop_reason == "callback" and not res.converged
    last = res.history[-1]
    assert last.iteration == 3 and last.extra["partial"] is True
    assert passes.requested is not None
    # the request is honoured at the check that follows it: no example visited after it
    assert last.extra["epoch"] == passes.requested
    assert 2 < passes.requested < 3 and passes.requested * n == round(passes.requested * n)
    assert [s.iteration for s in res.history] == [1, 2, 3]
    # the iterate kept is the partial pass's, and its certificate is the model's own
    cert = prob.certificate(res.coef)
    assert cert["primal"] == pytest.approx(last.upper, rel=1e-12)
    assert solver.alpha is not None
    duals = solver.duals.toarray()
    assert np.all(duals >= 0) and np.all(duals <= prob.C + 1e-12)
    assert last.lower <= last.upper
    assert res.kept is last
