"""Runs named as people know the methods (issue 18): the registry's display name and the
parameters that tell a run apart, and the sidebar's run count current right after a Train click."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from app.state import display_name, distinguishing_params, run_label, runs_table
from hierlab.core.registry import get_method, list_methods
from tests.app.test_app_pages import APP, TIMEOUT, _finish_jobs, _ok, _state


@pytest.mark.parametrize(
    ("method", "name"),
    [("flatmult", "FLATMULT"), ("hr-svm", "HR-SVM"), ("orthognl", "ORTHOGNL"), ("nhsvm", "NHSVM")],
)
def test_display_name_is_the_cards_name(method: str, name: str) -> None:
    assert display_name(method) == name


def test_every_method_has_a_display_name_from_its_card() -> None:
    for m in list_methods():
        name = display_name(m)
        assert name and " — " not in name
        assert str(get_method(m).card.title).startswith(name)


def test_label_shows_only_the_parameters_that_differ_from_the_defaults() -> None:
    spec = get_method("flatmult")
    defaults = spec.defaults()
    assert run_label(1, "flatmult", defaults) == "#1 FLATMULT"
    assert run_label(3, "flatmult", {**defaults, "C": 10}) == "#3 FLATMULT (C=10)"
    # 1 and 1.0 are the same value: no difference
    assert distinguishing_params("flatmult", {**defaults, "C": 1}) == {}
    # a parameter the solver ignores (averaging under BCFW) tells nothing apart ...
    other = next(c for c in spec.param("averaging").choices if c != defaults["averaging"])
    assert distinguishing_params("flatmult", {**defaults, "averaging": other}) == {}
    # ... but it does under the solver that uses it, under the widget's label
    rda = {**defaults, "solver": "rda", "averaging": other}
    shown = distinguishing_params("flatmult", rda)
    assert shown == {spec.param("solver").label: "rda", spec.param("averaging").label: other}
    assert run_label(2, "flatmult", rda, "induced").endswith(" [induced tree]")


def test_a_train_click_is_labelled_and_counted_at_once() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    at.switch_page("app_pages/train.py")
    at.run()
    _ok(at)
    at.selectbox(key="train_method").set_value("hieron")
    at.run()
    at.number_input(key="param:hieron:epochs").set_value(2)
    at.run()
    _ok(at)
    assert "Runs in this session: 0" in [c.value for c in at.sidebar.caption]
    at.button(key="train").click()
    at.run()
    _finish_jobs(at)
    _ok(at)
    (run,) = _state(at).runs
    # the sidebar counts the run trained in this very rerun
    assert "Runs in this session: 1" in [c.value for c in at.sidebar.caption]
    # the display name and the one parameter changed, never the registry's code name
    assert run.label == "#1 Hieron (online) (epochs=2)"
    text = " ".join(m.value for m in at.markdown)
    assert "**Last run:** #1 Hieron (online) (epochs=2)" in text
    table = next(df.value for df in at.dataframe if "label" in df.value.columns)
    assert list(table["method"]) == ["Hieron (online)"]
    assert list(table["label"]) == [run.label]
    assert table.equals(runs_table(_state(at).runs))
