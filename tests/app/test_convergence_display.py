"""The convergence display: estimated gaps drawn apart from exact ones (``bounds_series``), the
progress bar's text, and LivePlot's patched figure with estimates equal to a fresh one (the time
left itself: ``tests/core/test_progress.py``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from app.ui.live import PROGRESS_AFTER, LivePlot
from hierlab.core.solver import SolverState
from hierlab.plots import bounds_figure, bounds_series


def _history(exact: list[bool] | None = None, estimate: list[float] | None = None) -> pd.DataFrame:
    upper = np.array([10.0, 8.0, 6.0, 5.0, 4.5])
    lower = np.array([1.0, 2.0, 3.0, 4.0, 4.4])
    df = pd.DataFrame(
        {
            "iteration": np.arange(1, 6),
            "elapsed": np.arange(1, 6) * 0.5,
            "upper": upper,
            "lower": lower,
            "gap": upper - lower,
        }
    )
    if exact is not None:
        df["exact"] = exact
    if estimate is not None:
        df["gap_estimate"] = estimate
    return df


def test_exact_states_only_make_the_certified_gap() -> None:
    df = _history(exact=[True, False, False, True, True])
    s = bounds_series(df)
    gap = (df["upper"] - df["lower"]).to_numpy()
    np.testing.assert_array_equal(np.isnan(s["gap"]), [False, True, True, False, False])
    np.testing.assert_allclose(s["gap"][[0, 3, 4]], gap[[0, 3, 4]])
    np.testing.assert_array_equal(np.isnan(s["gap estimate"]), [True, False, False, True, True])
    np.testing.assert_allclose(s["gap estimate"][[1, 2]], gap[[1, 2]])
    assert np.isnan(s["lower"][1]) and s["lower"][0] == 1.0  # estimated lower bounds hidden


def test_a_gap_estimate_column_is_drawn_as_estimate() -> None:
    est = [np.nan, 5.0, 2.5, np.nan, np.nan]
    s = bounds_series(_history(estimate=est))
    np.testing.assert_allclose(s["gap estimate"][[1, 2]], [5.0, 2.5])
    assert not np.isnan(s["gap"]).any()  # every state is exact here
    fig = bounds_figure(_history(estimate=est))
    styles = {t.name: (t.mode, t.marker.symbol) for t in fig.data}
    assert styles["gap"][0] == "lines+markers"
    assert styles["gap estimate"] == ("markers", "circle-open")


def test_exact_only_history_has_no_estimate_and_objective_only_without_bounds() -> None:
    assert set(bounds_series(_history())) == {"upper", "lower", "gap"}
    df = _history().assign(lower=np.nan, gap=np.nan)
    assert set(bounds_series(df)) == {"objective"}


class _Slot:
    def __init__(self) -> None:
        self.figs: list[object] = []
        self.bars: list[tuple[float, str]] = []

    def plotly_chart(self, fig: object, key: str, **kw: object) -> None:
        self.figs.append(fig)

    def progress(self, frac: float, text: str = "") -> None:
        self.bars.append((frac, text))


def _state(k: int, exact: bool) -> SolverState:
    return SolverState(
        iteration=k,
        elapsed=0.1 * k,
        upper=10.0 / k,
        lower=-1.0 / k,
        extra={"exact": exact},
    )


def test_patched_live_figure_with_estimates_equals_a_fresh_one() -> None:
    slot = _Slot()
    live = LivePlot(
        slot,
        lambda h: bounds_figure(h, x="elapsed"),
        x="elapsed",
        min_interval=0.0,
        max_overhead=math.inf,
    )
    for k in range(1, 9):
        live(_state(k, exact=k % 3 == 0))
    assert live.n_builds < live.n_draws  # most redraws patched the arrays
    fresh = bounds_figure(live.history, x="elapsed")
    shown = slot.figs[-1]
    for a, b in zip(shown.data, fresh.data, strict=True):  # type: ignore[attr-defined]
        assert a.name == b.name
        np.testing.assert_allclose(np.asarray(a.x, float), np.asarray(b.x, float))
        np.testing.assert_allclose(np.asarray(a.y, float), np.asarray(b.y, float))


def test_progress_bar_waits_for_long_fits_and_says_the_time_left(monkeypatch) -> None:
    slot = _Slot()
    clock = [100.0]
    monkeypatch.setattr("app.ui.live.time.perf_counter", lambda: clock[0])
    for tol in (1e-3, 0.0):
        slot = _Slot()
        clock[0] = 100.0
        live = LivePlot(
            slot,
            bounds_figure,
            progress=slot,
            total=10,
            min_interval=0.0,
            max_overhead=math.inf,
            tol=tol,
        )
        live(_state(1, exact=True))
        assert slot.bars == []  # a quick fit shows no bar
        clock[0] += PROGRESS_AFTER + 1.0
        live(SolverState(iteration=5, elapsed=3.0, upper=2.0, lower=1.0))
        frac, text = slot.bars[-1]
        assert frac == pytest.approx(0.5)
        assert "at most 10 iterations" in text
        if tol > 0:
            # two certified states are too few to read the gap's fall: no estimate, only the
            # bound the budget gives (5 iterations left at (3.0 - 0.1) / 4 s each)
            assert "no estimate yet (at most 4 s)" in text
        else:
            # a stopping rule of 0 runs the whole budget: its time is the estimate
            assert "about 4 s left" in text
