"""AppTest: numbers a reader can trust (standard calibration, trivial models said so, figures
formatted) and the pieces a user expects (model files, exports, a test file, deleting runs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app.state import load_builtin
from app.ui.widgets import fmt
from hierlab.evaluation.calibration import calibration_sums
from hierlab.methods.probability import point_masses
from tests.app.test_app_pages import _finish_jobs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app" / "streamlit_app.py")
#: a small built-in set (seed 002's generator, 121 labels, 20 training and 3 test rows each)
#: on which FLATMULT "as in the paper" (C = 1/n) keeps every weight at zero
GEN = {"n_train_per_label": 20, "n_test_per_label": 3, "depth": 4, "random_state": 4}


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _state(at: AppTest):
    return at.session_state["hierlab_state"]


def _small_app() -> AppTest:
    """The app with a small built-in data set as the current one."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    _state(at).add_dataset(load_builtin("catalog:hieron-synthetic", GEN))
    return at


def _train(at: AppTest, method: str, preset: str | None = None) -> None:
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value(method)
    at.run()
    if preset is not None:
        at.radio(key=f"param-preset:{method}:preset").set_value(preset)
        at.run()
    at.button(key="train").click()
    at.run()
    _finish_jobs(at)
    _ok(at)


@pytest.fixture(scope="module")
def app_two_runs() -> AppTest:
    """FLATMULT as in the paper (a trivial model on this set) and TOPDOWN."""
    at = _small_app()
    _train(at, "flatmult", preset="paper")
    _train(at, "topdown")
    return at


def test_a_trivial_model_shows_the_warning_and_the_record_says_why(app_two_runs) -> None:
    at = app_two_runs
    flat, top = _state(at).runs
    # the preset as the user gets it: one class for every row, every weight zero
    assert len(set(flat.y_pred)) == 1
    assert flat.trivial and not top.trivial
    assert any("every weight" in r for r in flat.trivial)
    assert flat.record()["trivial_model"] == flat.trivial
    at.switch_page("app_pages/explore.py")
    at.run()
    at.selectbox(key="explore_run").set_value(flat.id)
    at.run()
    _ok(at)
    shown = [w.value for w in at.warning if "Trivial model" in w.value]
    assert shown and flat.label in shown[0] and "predicts" in shown[0]
    at.selectbox(key="explore_run").set_value(top.id)
    at.run()
    assert not [w.value for w in at.warning if "Trivial model" in w.value]


def test_compare_shows_the_standard_ece_and_brier(app_two_runs) -> None:
    at = app_two_runs
    at.switch_page("app_pages/compare.py")
    at.run()
    _ok(at)
    table = next(df.value for df in at.dataframe if "ECE (top-1)" in df.value.columns)
    entry = _state(at).dataset
    for run in _state(at).runs:
        row = table[table["run"] == run.label].iloc[0]
        est = run.estimator
        D = point_masses(est.node_proba(entry.test.X), est.taxonomy_)
        want = calibration_sums(est.taxonomy_.index(list(entry.test.y)), D)
        assert row["ECE (top-1)"] == pytest.approx(want.ece)
        assert row["Brier (multi-class)"] == pytest.approx(want.brier)
        assert "pooled node ECE" in table.columns
    # the trivial model is badly calibrated by the standard figures (pooled ones hide it)
    flat = table[table["run"] == _state(at).runs[0].label].iloc[0]
    assert flat["Brier (multi-class)"] > 0.5


def test_no_bounds_chart_for_a_method_without_a_certificate(app_two_runs) -> None:
    at = app_two_runs
    at.switch_page("app_pages/train.py")
    at.run()
    _ok(at)
    # the last run is TOPDOWN: no lower bound, no objective curve -> a sentence, not a chart
    titles = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert not any("objective bounds" in t for t in titles)
    assert any("no certificate" in i.value for i in at.info)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (9e-15, "0"),
        (0.78374, "0.7837"),
        (0.0035, "0.0035"),
        (12345.678, "1.235e+04"),
        (1.5e-6, "1.50e-06"),
        (float("nan"), "–"),
        (7, "7"),
    ],
)
def test_figures_have_four_significant_digits(value: float, text: str) -> None:
    assert fmt(value) == text
    assert "0.000000000000009" not in fmt(9e-15)


def test_legends_sit_below_the_plot_area() -> None:
    from hierlab.plots import pr_curve_figure, reliability_figure

    rel = {f"run {k}": _reliability() for k in range(6)}
    for fig in (reliability_figure(rel), pr_curve_figure({}), reliability_figure({})):
        lay = fig.layout
        assert lay.legend.yanchor == "top" and lay.legend.yref == "container"
        # the legend's top is under the plot area (whose bottom is margin.b from the bottom)
        assert lay.legend.y * lay.height <= lay.margin.b - 40
        entries = len(fig.data)
        assert lay.margin.b - 56 >= 22 * entries  # room for every entry, one per line


def _reliability():
    y = np.array([0, 1, 1, 0])
    P = np.array([[0.7, 0.3], [0.4, 0.6], [0.2, 0.8], [0.9, 0.1]])
    return calibration_sums(y, P, n_bins=5).reliability()
