"""LivePlot (app/ui/live.py) and the app's wiring helpers, outside Streamlit.

A fake placeholder records what LivePlot draws; a placeholder that raises Streamlit's
RerunException stands for a click on Stop during training.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

from app.state import AppState, fit_run, iteration_budget, make_entry
from app.ui.live import LivePlot
from hierlab.core.registry import list_methods
from hierlab.datasets.hieron import make_hieron_synthetic
from hierlab.plots import bounds_figure


class FakeSlot:
    """Records ``plotly_chart``/``progress`` calls; raises ``RerunException`` at ``fail_at``."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.charts: list[tuple[object, str]] = []
        self.snapshots: list[dict[str, np.ndarray]] = []
        self.progress_calls: list[tuple[float, str]] = []
        self.fail_at = fail_at

    def plotly_chart(self, fig: object, key: str, **kwargs: object) -> None:
        # LivePlot mutates its figure between draws: keep a copy of what was shown
        self.snapshots.append(
            {str(t.name): np.asarray(t.y, dtype=float).copy() for t in fig.data}  # type: ignore[attr-defined]
        )
        if self.fail_at is not None and len(self.charts) + 1 == self.fail_at:
            self.charts.append((fig, key))
            raise RerunException(None)
        self.charts.append((fig, key))

    def progress(self, frac: float, text: str = "") -> None:
        assert 0.0 <= frac <= 1.0
        self.progress_calls.append((frac, text))


@pytest.fixture(scope="module")
def entry():
    train, test = make_hieron_synthetic(
        random_state=0, n_train_per_label=6, n_test_per_label=3, depth=3
    )
    data = train
    return make_entry(data, "small", "builtin", test=test)


def _bounds(h):
    return bounds_figure(h)


def test_every_state_kept_and_final_state_drawn(entry, monkeypatch) -> None:
    monkeypatch.setattr("app.ui.live.PROGRESS_AFTER", 0.0)  # the bar from the first state
    slot = FakeSlot()
    live = LivePlot(
        slot, _bounds, progress=slot, total=20, min_interval=0.0, max_overhead=float("inf")
    )
    run = fit_run(
        AppState(), entry, "flatmult", {"max_iter": 20, "rtol": 0.0, "tol": 0.0}, callbacks=[live]
    )
    assert len(live.states) == len(run.history) == run.estimator.n_iter_
    # with no throttle every state is drawn, plus the final redraw; keys are unique
    assert live.n_draws == len(live.states) + 1
    keys = [k for _, k in slot.charts]
    assert len(set(keys)) == len(keys)
    final = slot.charts[-1][0]
    upper = next(t for t in final.data if t.name == "upper")
    assert len(upper.y) == len(run.history)
    assert slot.progress_calls[-1][0] == pytest.approx(len(run.history) / 20)


def test_redraws_are_throttled(entry) -> None:
    slot = FakeSlot()
    live = LivePlot(slot, _bounds, min_interval=3600.0)
    fit_run(
        AppState(), entry, "flatmult", {"max_iter": 30, "rtol": 0.0, "tol": 0.0}, callbacks=[live]
    )
    assert len(live.states) == 30
    assert live.n_draws == 2  # the first state, then the final one


def test_a_click_during_training_stops_the_solver_and_keeps_the_run(entry) -> None:
    slot = FakeSlot(fail_at=3)
    live = LivePlot(slot, _bounds, min_interval=0.0, max_overhead=float("inf"))
    state = AppState()
    run = fit_run(
        state,
        entry,
        "flatmult",
        {"max_iter": 500, "rtol": 0.0, "tol": 0.0},
        callbacks=[live],
        stopped=lambda: live.interrupt is not None,
    )
    # the solver stopped right after the interrupted redraw, with its best iterate so far
    assert run.estimator.n_iter_ == 3
    assert run.stopped and not run.converged
    assert 0.0 <= run.metrics["zero_one_error"] <= 1.0
    with pytest.raises(RerunException):
        live.reraise()
    live.reraise()  # re-raised once only


def test_methods_without_lower_bound_draw_their_objective(entry) -> None:
    name = next(m for m in ("hsvm", "nhsvm", "hieron") if m in list_methods())
    slot = FakeSlot()
    live = LivePlot(slot, _bounds, min_interval=0.0, max_overhead=float("inf"))
    params = {} if name == "hieron" else {"solver": "pegasos"}  # HSVM's auto solver certifies
    fit_run(AppState(), entry, name, params, callbacks=[live])
    names = {t.name for t in slot.charts[-1][0].data}
    assert "lower" not in names and "objective" in names


def test_iteration_budget_reads_the_schema() -> None:
    assert iteration_budget("flatmult", {"max_iter": 123}) == 123
    assert iteration_budget("topdown", {"C": 1.0}) is None


def test_patched_redraws_equal_fresh_figures(entry) -> None:
    slot = FakeSlot()
    live = LivePlot(slot, _bounds, min_interval=0.0, max_overhead=float("inf"))
    fit_run(
        AppState(), entry, "flatmult", {"max_iter": 15, "rtol": 0.0, "tol": 0.0}, callbacks=[live]
    )
    assert live.n_draws == 16 and live.n_builds <= 3  # arrays replaced, figure kept
    for snap in slot.snapshots:
        k = len(snap["upper"])
        fresh = _bounds(pd.DataFrame(live.states[:k]))
        assert set(snap) == {str(t.name) for t in fresh.data}
        for t in fresh.data:
            np.testing.assert_array_equal(snap[str(t.name)], np.asarray(t.y, dtype=float))
