"""The time-left estimator on recorded histories, against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hierlab.core.progress import Eta, estimate_eta, format_duration


def _states(ks, ts, gaps, exact=None, lower=0.0):
    out = []
    for i, (k, t, g) in enumerate(zip(ks, ts, gaps, strict=True)):
        s = {"iteration": math.ceil(k), "elapsed": t, "upper": g + lower, "lower": lower}
        s["gap"] = g
        if exact is not None:
            s["exact"] = exact[i]
            s["epoch"] = k
        out.append(s)
    return out


def _slope(x, y):
    """Least-squares slope, written out: cov(x, y) / var(x)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum())


def test_geometric_gap_constant_cost() -> None:
    # k = 1..6, 2 s a pass, g = 100 / 2^k; target g* = 100 / 2^10 (tol): 4 passes left by the
    # linear model (8 s); the sublinear model over k = 3..6 needs k6 ((g6/g*)^(1/p) - 1)
    ks = np.arange(1, 7)
    hist = _states(ks, 2.0 * ks, 100.0 / 2.0**ks)
    eta = estimate_eta(hist, tol=100.0 / 2**10)
    assert eta.basis == "gap"
    assert eta.low == pytest.approx(8.0)
    p = -_slope(np.log([3, 4, 5, 6]), [math.log(100 / 2**k) for k in (3, 4, 5, 6)])
    assert eta.high == pytest.approx(2.0 * 6 * (16.0 ** (1 / p) - 1))
    assert eta.fraction == pytest.approx(math.log(50 / (100 / 64)) / math.log(50 / (100 / 1024)))


def test_power_law_gap_rising_cost() -> None:
    # g = 100 / k^2 (sublinear): the power model is exact, target 100 / 12^2 -> 6 passes left;
    # cost per pass: (12 - 1) / (6 - 1) since the first state, (12 - 3) / (6 - 3) over the
    # second half
    ks = np.arange(1, 7)
    ts = [1.0, 2.0, 3.0, 6.0, 9.0, 12.0]
    hist = _states(ks, ts, 100.0 / ks**2.0)
    eta = estimate_eta(hist, rtol=0.0, tol=100.0 / 144)
    s = -_slope([3, 4, 5, 6], [math.log(100 / k**2) for k in (3, 4, 5, 6)])
    exp_passes = math.log((100 / 36) / (100 / 144)) / s
    assert eta.low == pytest.approx(min(exp_passes, 6.0) * 2.2)
    assert eta.high == pytest.approx(max(exp_passes, 6.0) * 3.0)
    assert eta.low < eta.high


def test_iteration_budget_caps_the_range() -> None:
    ks = np.arange(1, 7)
    hist = _states(ks, 2.0 * ks, 100.0 / 2.0**ks)
    eta = estimate_eta(hist, max_iter=8, tol=100.0 / 2**10)
    assert (eta.low, eta.high) == pytest.approx((4.0, 4.0))  # 2 passes x 2 s
    assert eta.fraction == pytest.approx(6 / 8)
    assert eta.text() == "about 4 s left"


def test_time_budget_caps_the_range() -> None:
    ks = np.arange(1, 7)
    hist = _states(ks, 2.0 * ks, 100.0 / 2.0**ks)
    eta = estimate_eta(hist, max_time=15.0, tol=100.0 / 2**10)
    assert eta.high == pytest.approx(3.0) and eta.low == pytest.approx(3.0)
    assert eta.fraction == pytest.approx(max(12 / 15, math.log(32) / math.log(512)))


def test_no_estimate_before_three_exact_states() -> None:
    hist = _states([1, 2], [2.0, 4.0], [50.0, 25.0])
    eta = estimate_eta(hist, max_iter=10, tol=1.0)
    assert eta.low is None and not eta.known
    assert eta.high == pytest.approx(16.0)  # the budget's bound: 8 passes x 2 s
    assert eta.text() == "no estimate yet (at most 16 s)"
    assert estimate_eta(hist, tol=1.0).text() == "no estimate yet"


def test_no_estimate_when_the_gap_does_not_fall() -> None:
    hist = _states([1, 2, 3, 4], [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 6.0, 7.0])
    assert estimate_eta(hist, tol=0.1).low is None


def test_no_estimate_in_the_first_second() -> None:
    ks = np.arange(1, 7)
    hist = _states(ks, 0.1 * ks, 100.0 / 2.0**ks)
    assert estimate_eta(hist, tol=1e-3).low is None
    assert estimate_eta(hist, tol=1e-3, min_elapsed=0.5).low is not None


def test_closed_gap_is_done() -> None:
    hist = _states([1, 2, 3], [1.0, 2.0, 3.0], [4.0, 2.0, 0.5])
    eta = estimate_eta(hist, tol=1.0)
    assert (eta.low, eta.high, eta.fraction, eta.basis) == (0.0, 0.0, 1.0, "done")


def test_exact_states_count_fractions_of_a_pass() -> None:
    # exact states and in-pass states without an estimate: the cost is per epoch (the epoch
    # extra, set-up of 0.5 s before the first state), the gap from the exact states only
    ks = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    ts = [0.5 + 4.0 * k + (1.0 if k == 1.5 else 0.0) for k in ks]
    gaps = [80.0, 60.0, 40.0, 30.0, 20.0, 15.0, 10.0]
    exact = [True, False, True, False, True, False, True]
    hist = _states(ks, ts, gaps, exact=exact)
    eta = estimate_eta(hist, tol=2.5)
    # exact points (0, 80), (1, 40), (2, 20), (3, 10): second half (1, 2, 3), a halving a pass
    passes = math.log(10 / 2.5) / math.log(2)  # 2 epochs by the linear model
    cost_all, cost_recent = 12.0 / 3.0, (12.5 - 7.5) / (3.0 - 1.5)
    assert eta.low == pytest.approx(passes * min(cost_all, cost_recent))
    p = -_slope(np.log([1, 2, 3]), np.log([40, 20, 10]))
    assert eta.high == pytest.approx(3.0 * (4.0 ** (1 / p) - 1) * max(cost_all, cost_recent))


def test_uncertified_method_runs_its_budget() -> None:
    hist = [
        {"iteration": k, "elapsed": 3.0 * k, "upper": 10.0 / k, "lower": None} for k in (1, 2, 3, 4)
    ]
    eta = estimate_eta(hist, max_iter=10)
    assert eta.basis == "budget"
    assert (eta.low, eta.high) == pytest.approx((18.0, 18.0))
    assert eta.fraction == pytest.approx(0.4)
    assert estimate_eta(hist).low is None  # no budget, no certificate: nothing to say


def test_texts() -> None:
    assert Eta(20.0, 40.0, 0.5, "gap").text() == "20-40 s left"
    assert Eta(40.0, 200.0, 0.5, "gap").text() == "40 s - 3 min left"
    assert Eta(600.0, 1500.0, 0.5, "gap").text() == "10-25 min left"
    assert format_duration(7200.0) == "2.0 h"
    assert Eta(20.0, 80.0, 0.5, "gap").mid == pytest.approx(40.0)


def test_running_gap_estimate_is_used_between_certificates() -> None:
    # BCFW skipping certificates: the exact gap stays at the cold start's for three epochs,
    # the running estimate (gap_estimate) falls by a third each epoch; target 1e-3 |upper|
    rows = [(0.0, 0.0, True, None)]
    rows += [(k + 0.5, 2.0 * (k + 0.5) + 1.0, False, 9.0 * (2 / 3) ** k) for k in range(4)]
    hist = []
    for k, t, ex, est in rows:
        s = {
            "iteration": math.ceil(k),
            "elapsed": t,
            "upper": 10.0,
            "lower": 0.0,
            "gap": 10.0,
            "exact": ex,
            "epoch": k,
        }
        if est is not None:
            s["gap_estimate"] = est
        hist.append(s)
    eta = estimate_eta(hist, rtol=1e-3)
    last = 9.0 * (2 / 3) ** 3
    passes = math.log(last / 1e-2) / math.log(1.5)  # the estimate's fall: a third a pass
    assert eta.low == pytest.approx(passes * 2.0)  # 2 s a pass both ways
    assert eta.basis == "gap"
    # the lower bound is 0: J* (and the target) could be anywhere below upper
    assert eta.high is None and eta.text() == f"at least {format_duration(eta.low)} left"
    # the budget bounds it: 6.5 passes at the dearer cost, 8 s / 3.5 passes since the cold start
    assert estimate_eta(hist, rtol=1e-3, max_iter=10).high == pytest.approx(6.5 * 8.0 / 3.5)


def test_the_target_ranges_over_the_bounds() -> None:
    # upper 10, lower 8: the rule stops at a gap of rtol * J*, J* in [8, 10]
    ks = np.arange(1, 7)
    hist = _states(ks, 2.0 * ks, 2.0 / 2.0**ks, lower=8.0)
    eta = estimate_eta(hist, rtol=1e-3)
    g6 = 2.0 / 64
    assert eta.low == pytest.approx(math.log(g6 / (1e-3 * (8.0 + g6))) / math.log(2) * 2.0)
    p = -_slope(np.log([3, 4, 5, 6]), [math.log(2.0 / 2**k) for k in (3, 4, 5, 6)])
    far = 6 * ((g6 / 8e-3) ** (1 / p) - 1)
    assert eta.high == pytest.approx(far * 2.0)


def test_a_stopping_rule_of_zero_runs_the_budget() -> None:
    # tol = rtol = 0: the gap never stops the fit, max_iter does (2 s a pass, 14 passes left)
    ks = np.arange(1, 7)
    hist = _states(ks, 2.0 * ks, 100.0 / 2.0**ks)
    eta = estimate_eta(hist, max_iter=20)
    assert eta.basis == "budget" and (eta.low, eta.high) == pytest.approx((28.0, 28.0))
