"""Convergence worth watching: streamed BCFW states and the best certified iterate on stop.

- BCFW's in-epoch states (large data) change nothing of the run: the exact states, the weights
  and the dual variables equal those of the one-state-per-epoch run, bit for bit; estimate states
  carry the last exact bounds and are marked ``exact=False``.
- The running Frank-Wolfe gap estimate is made of exact block gaps: measured at one ``W`` (a pass
  that takes no step), their sum equals ``J(W(alpha)) - D(alpha)``, the duality gap, for every
  quadratic regularizer, in the compiled and the numpy pass.
- A callback that stops the solver (or a Timeout) leaves the best certified iterate in ``coef``,
  not the last one: RDA with the paper's weights (whose iterates' objective is not monotone)
  and BCFW stopped on an estimate state.
"""

from __future__ import annotations

import numpy as np
import pytest

from hierlab.core.callbacks import FunctionCallback
from hierlab.core.solver import SolverState, solve
from hierlab.solvers.bcfw import BCFW
from hierlab.solvers.rda import RDA
from tests.solvers.test_bcfw import _objective

QUADRATIC = ("flatmult", "hiermult", "transfer", "treeloss")


@pytest.mark.parametrize("method", ["flatmult", "orthognl", "hiermult"])
def test_streamed_states_change_nothing(method: str) -> None:
    obj = _objective(method, "9 nodes, depth 3", 4)  # 30 examples
    plain = BCFW(max_iter=6, report_rows=None)
    a = solve(plain, obj, warn=False, tol=0.0, rtol=0.0)
    streamed = BCFW(max_iter=6, report_rows=4, report_every=0.0)
    b = solve(streamed, obj, warn=False, tol=0.0, rtol=0.0)
    exact = [s for s in b.history if s.extra.get("exact", True)]
    estimates = [s for s in b.history if not s.extra.get("exact", True)]
    # the exact W = 0 state, then per epoch ceil(30 / 4) = 8 chunks: 7 estimates, 1 exact state
    assert obj.X.shape[0] == 30
    assert exact[0].iteration == 0 and exact[0].lower == 0.0
    assert exact[0].upper == pytest.approx(obj.value(np.zeros(obj.shape)), rel=1e-12)
    assert len(estimates) == 6 * 7 and len(exact) == 1 + 6

    def trail(h: list[SolverState]) -> list[tuple[float, float, float | None]]:
        return [(s.extra["objective"], s.extra["dual"], s.lower) for s in h]

    assert trail(exact[1:]) == trail(a.history)
    # upper: the best of J(0) and the epochs' J, so the W = 0 state may stay the best one
    J0 = exact[0].upper
    for s, t in zip(exact[1:], a.history, strict=True):
        assert s.upper == min(J0, t.upper)
    if a.final.upper < J0:
        np.testing.assert_array_equal(np.asarray(a.coef), np.asarray(b.coef))
    else:
        assert not np.asarray(b.coef).any()
    np.testing.assert_array_equal(plain.alpha_flat_, streamed.alpha_flat_)
    last: SolverState | None = None
    for s in b.history:
        if s.extra["exact"]:
            last = s
            continue
        assert last is not None and (s.upper, s.lower) == (last.upper, last.lower)
        assert s.extra["gap_estimate"] >= 0.0
        assert last.extra["epoch"] < s.extra["epoch"] < last.extra["epoch"] + 1


@pytest.mark.parametrize("method", QUADRATIC)
@pytest.mark.parametrize("use_jit", [True, False])
def test_block_gaps_sum_to_the_duality_gap(method: str, use_jit: bool) -> None:
    obj = _objective(method, "9 nodes, depth 3", 4)
    solver = BCFW(max_iter=3, report_rows=None, use_jit=use_jit)
    res = solve(solver, obj, warn=False, tol=0.0, rtol=0.0)
    dual = solver._dual
    D, J, _ = solver._certify(dual, obj, 4)  # W(alpha) into dual.WT, exact J and D there
    eps = dual.eps
    dual.eps = np.inf  # no step is ever taken: every block's gap is measured at one W
    alpha0 = dual.alpha.copy()
    order = np.arange(dual.n)
    if use_jit:
        assert solver._kernel_pass(dual, order, 4) == 0
    else:
        assert solver._python_pass(dual, order, 4) == 0
    dual.eps = eps
    np.testing.assert_array_equal(dual.alpha, alpha0)
    assert np.all(dual.fw_gap >= -1e-12)
    gap = float(J.sum() - D.sum())
    assert gap > 0 and res.n_iter == 3
    assert float(dual.fw_gap.sum()) == pytest.approx(gap, rel=1e-9, abs=1e-12)


def test_rda_stop_keeps_the_best_certified_iterate() -> None:
    """Algorithm 1 with weights 1/t: J(w(t)) goes up and down, the best iterate is kept."""
    obj = _objective("flatmult", "9 nodes, depth 3", 4)
    seen: list[SolverState] = []

    def stop_when_worse(s: SolverState) -> bool:
        seen.append(s)
        return s.iteration > 5 and s.extra["objective"] > s.upper * (1 + 1e-9)

    res = solve(
        RDA(max_iter=500, averaging="uniform"),
        obj,
        callbacks=[FunctionCallback(stop_when_worse)],
        warn=False,
    )
    assert res.stop_reason == "callback"
    last = res.final
    assert last is not None and last.extra["objective"] > last.upper  # the last iterate is worse
    assert obj.value(np.asarray(res.coef)) == pytest.approx(last.upper, rel=1e-12)
    assert last.upper == min(s.extra["objective"] for s in seen)


@pytest.mark.parametrize("method", ["flatmult", "orthognl"])
def test_bcfw_stop_on_an_estimate_keeps_the_certified_iterate(method: str) -> None:
    obj = _objective(method, "9 nodes, depth 3", 4)
    stop = FunctionCallback(lambda s: s.iteration >= 3 and not s.extra["exact"])
    res = solve(
        BCFW(max_iter=50, report_rows=4, report_every=0.0), obj, callbacks=[stop], warn=False
    )
    assert res.stop_reason == "callback"
    last = res.final
    assert last is not None and last.extra["exact"] is False and last.iteration == 3
    best = min(s.extra["objective"] for s in res.history if s.extra["exact"])
    assert last.upper == best
    assert obj.value(np.asarray(res.coef)) == pytest.approx(best, rel=1e-12)
