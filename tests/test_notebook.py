"""``hierlab.notebook.LiveBounds``: the figure it draws holds exactly the states it was given."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

import hierlab
from hierlab.core.exceptions import ParameterError
from hierlab.core.solver import SolverResult, SolverState
from hierlab.notebook import LiveBounds, compare_presets, widgets_available


@pytest.fixture(scope="module")
def recorded() -> list[SolverState]:
    """A real fit's history: ORTHOGNL by RDA (certified bounds at every iteration)."""
    train, _ = hierlab.make_hieron_synthetic(
        n_train_per_label=4, n_test_per_label=1, depth=2, random_state=0
    )
    history = hierlab.History()
    est = hierlab.OrthogonalTransferClassifier(
        taxonomy=train.taxonomy, solver="rda", C=0.01, max_iter=40, tol=0.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(train.X, train.y, callbacks=[history])
    assert len(history.states) == 40
    return history.states


def _replay(live: LiveBounds, states: list[SolverState], reason: str = "max_iter") -> None:
    for s in states:
        assert live(s) is False  # a display never stops the solver
    live.on_end(SolverResult(coef=None, history=list(states), converged=False, stop_reason=reason))


def _trace(live: LiveBounds, name: str) -> tuple[np.ndarray, np.ndarray]:
    (tr,) = [t for t in live.figure.data if t.name == name]
    return np.asarray(tr.x, dtype=float), np.asarray(tr.y, dtype=float)


def test_widgets_are_installed_for_the_suite() -> None:
    """[dev] holds the [notebook] extra: the widget tests below run, never skip."""
    assert widgets_available()


@pytest.mark.parametrize("min_interval", [0.0, 3600.0])
def test_widget_traces_equal_the_states(recorded: list[SolverState], min_interval: float) -> None:
    from plotly.graph_objects import FigureWidget

    live = LiveBounds(mode="widget", min_interval=min_interval, total=40)
    _replay(live, recorded)
    assert isinstance(live.figure, FigureWidget)
    assert sorted(t.name for t in live.figure.data) == ["gap", "lower", "upper"]
    its = np.array([s.iteration for s in recorded], dtype=float)
    upper = np.array([s.upper for s in recorded])
    lower = np.array([s.lower for s in recorded], dtype=float)
    for name, want in (("upper", upper), ("lower", lower), ("gap", upper - lower)):
        x, y = _trace(live, name)
        np.testing.assert_array_equal(x, its)
        np.testing.assert_allclose(y, want, rtol=0, atol=0)
    # throttled: the first state and the final one only; unthrottled: as often as the cost of
    # a redraw allows (max_overhead), and always the first and the final state
    if min_interval:
        assert live.n_draws == 2
    else:
        assert 2 <= live.n_draws <= len(recorded) + 1
    assert live.figure.layout.title.text.endswith("done (max_iter)")
    assert f"iteration {recorded[-1].iteration}/40" in live.figure.layout.title.text


def test_widget_rebuilds_when_a_curve_appears() -> None:
    """Bounds without a lower bound first (objective only), then certified ones: the trace set
    changes and the figure follows it."""
    states = [SolverState(1, 0.1, 10.0), SolverState(2, 0.2, 8.0)]
    states += [SolverState(3, 0.3, 7.0, lower=5.0), SolverState(4, 0.4, 6.5, lower=6.0)]
    live = LiveBounds(mode="widget", min_interval=0.0)
    for s in states[:2]:
        live(s)
    live.draw()  # now, whatever the throttle decided
    assert [t.name for t in live.figure.data] == ["objective"]
    for s in states[2:]:
        live(s)
    live.draw()
    assert sorted(t.name for t in live.figure.data) == ["gap", "lower", "upper"]
    _, gap = _trace(live, "gap")
    np.testing.assert_allclose(gap, [np.nan, np.nan, 2.0, 0.5])


def test_text_line_in_a_script(recorded: list[SolverState]) -> None:
    out = io.StringIO()
    live = LiveBounds(stream=out, min_interval=0.0, max_overhead=1.0, title="ORTHOGNL")
    assert live.mode_ == "text"  # no kernel in a test process
    _replay(live, recorded, reason="gap")
    text = out.getvalue()
    lines = text.split("\r")[1:]
    assert len(lines) == live.n_draws and 2 <= len(lines) <= len(recorded) + 1
    last = recorded[-1]
    assert lines[-1].endswith(" · done (gap)\n")
    assert f"iteration {last.iteration} " in lines[-1]
    assert f"gap {last.upper - last.lower:.3g}" in lines[-1]
    assert lines[0].startswith("ORTHOGNL · iteration 1 ")
    assert live.figure is None
    assert list(live.history["upper"]) == [s.upper for s in recorded]


def test_degrades_without_widgets(monkeypatch: pytest.MonkeyPatch) -> None:
    import hierlab.notebook as nb

    monkeypatch.setattr(nb, "widgets_available", lambda: False)
    monkeypatch.setattr(nb, "_in_kernel", lambda: True)
    assert LiveBounds().mode_ == "text"
    with pytest.raises(ParameterError, match="anywidget"):
        LiveBounds(mode="widget")
    monkeypatch.setattr(nb, "widgets_available", lambda: True)
    assert LiveBounds().mode_ == "widget"


def test_in_a_real_fit_with_progress() -> None:
    train, _ = hierlab.make_hieron_synthetic(
        n_train_per_label=3, n_test_per_label=1, depth=2, random_state=1
    )
    out = io.StringIO()
    live = LiveBounds(stream=out, total=500)
    est = hierlab.FlatMulticlassClassifier(taxonomy=train.taxonomy, max_iter=500)
    est.fit(train.X, train.y, callbacks=[live])
    assert len(live.states) == len(est.history_)
    assert live.result is not None and live.result.converged == est.converged_
    assert "/500" in out.getvalue()


@pytest.mark.parametrize(
    "bad", [{"x": "epoch"}, {"mode": "gui"}, {"min_interval": -1}, {"max_overhead": 0}]
)
def test_bad_arguments(bad: dict) -> None:
    with pytest.raises(ParameterError, match="LiveBounds"):
        LiveBounds(**bad)


def test_compare_presets_runs_what_each_preset_names() -> None:
    train, test = hierlab.make_hieron_synthetic(
        n_train_per_label=3, n_test_per_label=2, depth=2, random_state=2
    )
    table, fig = compare_presets("orthognl", train, test, max_iter=50)
    assert list(table.index) == ["paper", "fast"]
    for preset in ("paper", "fast"):
        est = hierlab.make_estimator(
            "orthognl", preset=preset, taxonomy=train.taxonomy, max_iter=50
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(train.X, train.y)
        row = table.loc[preset]
        assert row["algorithm"] == est.algorithm_
        assert row["iterations"] == len(est.history_)
        assert row["objective"] == pytest.approx(est.objective_)
        assert row["accuracy"] == pytest.approx(float(np.mean(est.predict(test.X) == test.y)))
    assert table.loc["paper", "algorithm"] != table.loc["fast", "algorithm"]
    names = {str(t.name).split(": ")[0] for t in fig.data}
    assert names == {"paper", "fast"}


def test_progress_of_a_long_fit_says_the_most_time_left() -> None:
    out = io.StringIO()
    live = LiveBounds(stream=out, total=40, max_time=100.0, min_interval=0.0)
    live(SolverState(1, 0.5, 10.0, lower=1.0))
    assert "(2%)" in live.progress_text()  # short so far: no estimate
    live(SolverState(10, 20.0, 5.0, lower=4.0))
    # iterations: 20 s for 10 of 40 -> 60 s more; time: 80 s more; the smaller holds
    assert "iteration 10/40 (25%, at most 60 s left)" in live.progress_text()
    live(SolverState(30, 90.0, 4.5, lower=4.4))
    # time: 90 of 100 s -> 10 s more (iterations would allow 30 s)
    assert "(90%, at most 10 s left)" in live.progress_text()
