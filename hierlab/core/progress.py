"""How far a fit is and how long it has left, from the states it has reported so far.

The time left is the product of two measured quantities:

* the **cost per pass** ``c``: solver seconds per unit of the pass counter (the ``epoch``
  extra where a solver reports fractions of a pass, else ``iteration``), measured since the
  first state (``c_all = (t_n - t_0) / (k_n - k_0)``: the set-up before it is no pass) and
  over the second half of the states (``c_recent = (t_n - t_m) / (k_n - k_m)``); the two
  bracket it;
* the **passes left**, from the gap's observed fall: the certified gap of the exact states,
  or, while there are fewer than three, the solver's running estimate of it where it reports
  one (``gap_estimate``: BCFW between its certificates, which it skips until the estimate is
  near the stop; the estimate runs 1.1-2.3 times above the certified gap, so it errs long).
  Over the second half of those points (at least three), two models of ``g(k)`` bracket the
  usual behaviours: linear convergence, ``log g = a - s k`` (least squares; passes left
  ``log(g_n / g*) / s``), and sublinear convergence, ``log g = a - p log k`` (passes left
  ``k_n ((g_n / g*)^(1/p) - 1)``), with ``g* = max(tol, rtol |upper|)`` the stopping rule of
  :func:`hierlab.core.solver.gap_closed`. Where both fit a falling gap, the passes left lie
  between them.

The objective at the optimum lies between the bounds, so the stopping rule's target lies
between ``rtol x lower`` and ``rtol x upper``: the range's low end takes the nearer target and
the faster model, its high end the farther target and the slower model (no high end while the
lower bound is 0 and nothing else bounds it: "at least ..."). The time left is then ``[min
passes x min cost, max passes x max cost]``, capped by the
iteration budget (``(max_iter - k_n) x cost``) and the time budget (``max_time - t_n``). A
method without a certificate (or a stopping rule of 0) stops at its budget: the budget's passes
are the estimate. Before
three points with a falling gap (or before ``min_elapsed`` seconds), a certified method
has no estimate: :attr:`Eta.low` is None, and :attr:`Eta.high` is the budget's bound when there
is one ("no estimate yet", never a guess).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Eta", "estimate_eta", "format_duration"]


@dataclass(frozen=True)
class Eta:
    """An estimate of the time a fit has left.

    Attributes
    ----------
    low, high : float or None
        Seconds left: a range. ``low`` None: no estimate yet (``high``, if set, is only the
        bound the budgets give); ``high`` None with a ``low``: at least ``low``.
    fraction : float
        Share of the run done, in [0, 1]: the largest of ``k / max_iter``, ``t / max_time``
        and ``log(g_0 / g) / log(g_0 / g*)``.
    basis : str
        ``"gap"`` (the certified gap's fall), ``"budget"`` (the iteration or time budget),
        ``"done"`` (the gap is closed) or ``"none"``.
    """

    low: float | None
    high: float | None
    fraction: float
    basis: str

    @property
    def known(self) -> bool:
        """True when there is an estimate (not just a budget's bound)."""
        return self.low is not None

    @property
    def mid(self) -> float | None:
        """The range's geometric middle (its arithmetic one when ``low`` is 0)."""
        if self.low is None or self.high is None:
            return None
        if self.low <= 0:
            return self.high / 2
        return math.sqrt(self.low * self.high)

    def text(self) -> str:
        """``"about 2-5 min left"``, ``"no estimate yet (at most 3 min by the budget)"``."""
        if self.low is None:
            bound = f" (at most {format_duration(self.high)})" if self.high is not None else ""
            return f"no estimate yet{bound}"
        if self.high is None:
            return f"at least {format_duration(self.low)} left"
        lo, hi = format_duration(self.low), format_duration(self.high)
        if lo == hi:
            return f"about {lo} left"
        return f"{_range(self.low, self.high)} left"


def format_duration(seconds: float | None) -> str:
    """``"40 s"``, ``"3 min"``, ``"2.1 h"``."""
    if seconds is None or not math.isfinite(seconds):
        return "unknown"
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _range(low: float, high: float) -> str:
    """``"20-40 s"`` in one unit where both fall in it, else ``"40 s - 3 min"``."""
    lo, hi = format_duration(low), format_duration(high)
    lo_n, lo_u = lo.split(" ", 1)
    hi_n, hi_u = hi.split(" ", 1)
    if lo_u == hi_u:
        return f"{lo_n}-{hi_n} {hi_u}"
    return f"{lo} - {hi}"


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float | np.floating | np.integer):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _pass(s: Mapping[str, Any]) -> float:
    """The state's pass counter: the ``epoch`` extra (fractional within a pass) else the
    iteration."""
    e = _num(s.get("epoch"))
    return e if e is not None else float(_num(s.get("iteration")) or 0.0)


def _gap(s: Mapping[str, Any]) -> float | None:
    g = _num(s.get("gap"))
    if g is None:
        up, lo = _num(s.get("upper")), _num(s.get("lower"))
        g = None if up is None or lo is None else up - lo
    return g


def _cost(states: Sequence[Mapping[str, Any]]) -> tuple[float, float] | None:
    """Seconds per pass since the first state (the set-up before it is no pass) and over the
    second half of the states, as (smaller, larger)."""
    first, last = states[0], states[-1]
    k_n, t_n = _pass(last), float(_num(last.get("elapsed")) or 0.0)
    k_0, t_0 = _pass(first), float(_num(first.get("elapsed")) or 0.0)
    if not (k_n > k_0 and t_n > t_0):
        return None
    costs = [(t_n - t_0) / (k_n - k_0)]
    mid = states[(len(states) - 1) // 2]
    k_m, t_m = _pass(mid), float(_num(mid.get("elapsed")) or 0.0)
    if k_n > k_m and t_n > t_m:
        costs.append((t_n - t_m) / (k_n - k_m))
    return min(costs), max(costs)


def _passes_by_gap(pts: np.ndarray, target: float) -> tuple[float, float] | None:
    """Passes left to ``g <= target`` under the linear and the sublinear model of the gap's
    fall over the second half of the exact states ``pts`` (rows ``(k, g)``), as (smaller,
    larger); None when neither model has the gap falling."""
    half = pts[(len(pts) - 1) // 2 :]
    if len(half) < 3:
        half = pts[-3:]
    k, logg = half[:, 0], np.log(half[:, 1])
    k_n, g_n = float(pts[-1, 0]), float(pts[-1, 1])
    need = math.log(g_n / target)
    out: list[float] = []
    if np.ptp(k) > 0:
        s = -float(np.polyfit(k, logg, 1)[0])
        if s > 0:
            out.append(need / s)
    pos = k > 0
    if pos.sum() >= 2 and np.ptp(np.log(k[pos])) > 0:
        p = -float(np.polyfit(np.log(k[pos]), logg[pos], 1)[0])
        if p > 0:
            out.append(k_n * math.expm1(min(need / p, 700.0)))
    if not out:
        return None
    return min(out), max(out)


def _gap_points(states: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """``(pass, gap)`` with a positive finite gap, shape (n, 2): the exact states' certified
    gaps, or, while there are fewer than three of them, the running estimate of the states
    that carry one (``gap_estimate``: block-coordinate Frank-Wolfe between certificates, which
    it may skip for many passes; it runs above the certified gap), from the second pass on (in
    the first, the blocks not yet visited still hold their share of the starting gap)."""
    exact = [
        (_pass(s), g)
        for s in states
        if s.get("exact", True) is not False and (g := _gap(s)) is not None and g > 0
    ]
    est = [  # after the first pass: before it, unvisited blocks hold their starting share
        (_pass(s), g)
        for s in states
        if (g := _num(s.get("gap_estimate"))) is not None and g > 0 and _pass(s) >= 1.0
    ]
    rows = exact if len(exact) >= 3 or not est else est
    return np.asarray(rows, dtype=np.float64).reshape(-1, 2)


def estimate_eta(
    states: Sequence[Mapping[str, Any]],
    max_iter: float | None = None,
    max_time: float | None = None,
    tol: float = 0.0,
    rtol: float = 0.0,
    certified: bool | None = None,
    min_elapsed: float = 1.0,
    now: float | None = None,
) -> Eta:
    """Estimate the time a fit has left from its states so far (see the module's note).

    Parameters
    ----------
    states : sequence of mapping
        ``SolverState.as_dict()`` records: ``iteration``, ``elapsed`` (solver seconds),
        ``upper``, ``lower``/``gap``, optionally ``exact`` and ``epoch``.
    max_iter : float, optional
        The iteration (pass) budget.
    max_time : float, optional
        The time budget in seconds.
    tol, rtol : float
        The stopping rule ``gap <= max(tol, rtol |upper|)``.
    certified : bool, optional
        Whether the method stops on its gap; None: when any state has a lower bound.
    min_elapsed : float, default 1.0
        Solver seconds before any estimate.
    now : float, optional
        Solver seconds now, when a pass is under way since the last state: the range is
        shortened by the time spent since that state (the fraction counts it); once the
        high end is spent there is no estimate.

    Returns
    -------
    Eta
    """
    eta = _estimate(states, max_iter, max_time, tol, rtol, certified, min_elapsed)
    if now is None or not states:
        return eta
    spent = max(0.0, now - float(_num(states[-1].get("elapsed")) or 0.0))
    fraction = eta.fraction
    if max_time and max_time > 0:
        fraction = max(fraction, min(1.0, now / max_time))
    high = None if eta.high is None else eta.high - spent
    if eta.low is None or (high is not None and high <= 0):
        return Eta(None, None if high is None else max(0.0, high), fraction, "none")
    return Eta(max(0.0, eta.low - spent), high, fraction, eta.basis)


def _estimate(
    states: Sequence[Mapping[str, Any]],
    max_iter: float | None,
    max_time: float | None,
    tol: float,
    rtol: float,
    certified: bool | None,
    min_elapsed: float,
) -> Eta:
    """:func:`estimate_eta` as of the last state."""
    if not states:
        return Eta(None, None, 0.0, "none")
    last = states[-1]
    k_n, t_n = _pass(last), float(_num(last.get("elapsed")) or 0.0)
    fractions = [0.0]
    caps: list[float] = []
    cost = _cost(states)
    if max_iter and max_iter > 0:
        fractions.append(k_n / max_iter)
        if cost is not None:
            caps.append(max(0.0, max_iter - k_n) * cost[1])
    if max_time and max_time > 0:
        fractions.append(t_n / max_time)
        caps.append(max(0.0, max_time - t_n))
    cap = min(caps) if caps else None
    pts = _gap_points(states)
    if certified is None:
        certified = any(_num(s.get("lower")) is not None for s in states)
    up, low_bound = _num(last.get("upper")), _num(last.get("lower"))
    target = max(tol, rtol * abs(up)) if up is not None else tol
    # J* lies between the bounds: the rule's target lies between rtol*lower and rtol*upper
    floor = max(tol, rtol * max(low_bound, 0.0)) if low_bound is not None else target
    closed = [g for s in states if s.get("exact", True) is not False and (g := _gap(s)) is not None]
    if certified and closed and target > 0 and closed[-1] <= target:
        return Eta(0.0, 0.0, 1.0, "done")
    if certified and len(pts) >= 2 and target > 0 and pts[0, 1] > pts[-1, 1] > target:
        fractions.append(math.log(pts[0, 1] / pts[-1, 1]) / math.log(pts[0, 1] / target))
    fraction = min(1.0, max(fractions))
    if cost is None or t_n < min_elapsed:
        return Eta(None, cap, fraction, "none")
    if not certified or target <= 0:  # no gap to reach: the fit runs its budget
        return _by_budget(k_n, t_n, cost, max_iter, max_time, fraction)
    near = _passes_by_gap(pts, target) if len(pts) >= 3 and target > 0 else None
    if near is None:
        return Eta(None, cap, fraction, "none")
    far = near if floor >= target else (_passes_by_gap(pts, floor) if floor > 0 else None)
    lo = near[0] * cost[0]
    hi = far[1] * cost[1] if far is not None else math.inf
    if cap is not None:
        lo, hi = min(lo, cap), min(hi, cap)
    return Eta(lo, hi if math.isfinite(hi) else None, fraction, "gap")


def _by_budget(
    k_n: float,
    t_n: float,
    cost: tuple[float, float],
    max_iter: float | None,
    max_time: float | None,
    fraction: float,
) -> Eta:
    """A method without a certificate runs its budget: the passes left at the measured cost,
    or the time left."""
    if max_iter and max_iter > 0:
        left = max(0.0, max_iter - k_n)
        lo, hi = left * cost[0], left * cost[1]
        if max_time and max_time > 0:
            lo, hi = min(lo, max_time - t_n), min(hi, max_time - t_n)
        return Eta(max(0.0, lo), max(0.0, hi), fraction, "budget")
    if max_time and max_time > 0:
        return Eta(max(0.0, max_time - t_n), max(0.0, max_time - t_n), fraction, "budget")
    return Eta(None, None, fraction, "none")
