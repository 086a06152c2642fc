"""AppTest: the teaching pages (Methods, Guided demos, Paper tables), each run on its own.

Every guided demo runs to its end on its built-in data without an error; every registered
method's card renders; a paper table runs with its progress bar and shows ours beside the paper.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from hierlab.core.cards import method_card
from hierlab.core.registry import list_methods
from hierlab.lab.demos import DEMOS

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "app" / "app_pages"
TIMEOUT = 180


def _page(name: str) -> AppTest:
    at = AppTest.from_file(str(PAGES / name), default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    return at


def _latex(at: AppTest) -> list[str]:
    """The LaTeX bodies on the page (AppTest wraps them in ``$$``)."""
    return [e.value.removeprefix("$$\n").removesuffix("\n$$") for e in at.latex]


def _frames(at: AppTest) -> list:
    """The DataFrames on the page, in order (AppTest does not expose their keys)."""
    return [d.value for d in at.dataframe]


def _ok(at: AppTest) -> None:
    """No uncaught exception (a traceback) and no error message on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_methods_page_shows_every_card() -> None:
    at = _page("methods.py")
    overview = _frames(at)[0]
    assert sorted(overview["method"]) == list_methods()
    assert not at.warning  # no method without a card
    for name in list_methods():
        at.selectbox(key="methods_method").set_value(name)
        at.run()
        _ok(at)
        card = method_card(name)
        assert at.subheader[0].value == card.title
        shown = _latex(at)
        assert shown[: len(card.objective_lines())] == card.objective_lines()
        assert card.prediction in shown
        if card.spec.params:
            params = _frames(at)[1]
            assert list(params["parameter"]) == [p.name for p in card.spec.params]
    # filtering by paper and by text
    at.multiselect(key="methods_seeds").set_value(["002"])
    at.run()
    assert set(_frames(at)[0]["method"]) == {
        "hieron",
        "hieron-batch",
        "hieron-flat",
        "hieron-greedy",
    }
    at.multiselect(key="methods_seeds").set_value(["000", "001", "002", "003", "004", "baseline"])
    at.text_input(key="methods_search").set_value("orthogonal")
    at.run()
    _ok(at)
    assert "orthognl" in set(_frames(at)[0]["method"])


@pytest.fixture(scope="module")
def demos_page() -> AppTest:
    return _page("demos.py")


@pytest.mark.parametrize("name", list(DEMOS))
def test_each_guided_demo_runs_to_its_end(demos_page: AppTest, name: str) -> None:
    at = demos_page
    at.radio(key="demo_choice").set_value(name)
    at.run()
    _ok(at)
    at.button(key="demo_run").click()
    at.run()
    _ok(at)
    res = at.session_state["demo_results"][name]
    assert at.success[0].value.startswith("Done in")
    charts = at.get("plotly_chart")
    assert len(charts) == len(res.figures) >= 2
    for c in charts:
        assert json.loads(c.proto.spec)["data"]
    # the observations (with this run's numbers) are on the page
    text = " ".join(m.value for m in at.markdown)
    for obs in res.observations:
        assert obs in text
    (metrics,) = [f for f in _frames(at) if "label" in f.columns]
    assert list(metrics["label"]) == [r.label for r in DEMOS[name].runs]


def test_a_demo_opens_in_the_lab(demos_page: AppTest) -> None:
    at = demos_page
    at.radio(key="demo_choice").set_value("hierarchy-helps")
    at.run()
    if "hierarchy-helps" not in at.session_state["demo_results"]:
        at.button(key="demo_run").click()
        at.run()
    at.button(key="demo_open_hierarchy-helps").click()
    at.run()
    _ok(at)
    state = at.session_state["hierlab_state"]
    assert state.dataset is not None and state.dataset.name == "hieron-synthetic"
    assert [r.method for r in state.runs] == ["hieron-batch", "hieron-flat"]
    res = at.session_state["demo_results"]["hierarchy-helps"]
    assert [r.metrics for r in state.runs] == [r.metrics for r in res.runs]
    assert len(state.runs[0].y_test) == len(state.runs[0].y_pred)


def test_paper_table_runs_with_progress_and_published_numbers() -> None:
    at = _page("papers.py")
    at.selectbox(key="papers_name").set_value("hieron")
    at.run()
    assert at.toggle(key="papers_quick_hieron").value is True
    at.button(key="papers_run").click()
    at.run()
    _ok(at)
    res = at.session_state["papers_results"]["hieron"]
    assert res.args.seeds == 2 and list(res.args.per_label) == [20, 10]
    t1 = _frames(at)[0]
    assert list(t1["tree err (paper)"]) == [0.83, 1.35]
    assert len(at.get("plotly_chart")) == 1
    assert len(at.success) >= 1


def test_real_data_paper_table_runs_at_classroom_size() -> None:
    """The IPC tables are offered at classroom size (a select box for the size) and run."""
    at = _page("papers.py")
    options = {o.split(" — ")[0] for o in at.selectbox(key="papers_name").options}
    assert {"hrsvm-ipc", "nhsvm-ipc", "mftree-ipc", "orthognl-20ng"} <= options
    at.selectbox(key="papers_name").set_value("mftree-ipc")
    at.run()
    assert at.toggle(key="papers_quick_mftree-ipc").value is True
    size = at.selectbox(key="papers_opt_mftree-ipc_size_True")
    assert size.value == "classroom" and "full" in size.options
    at.number_input(key="papers_opt_mftree-ipc_timing_repeats_True").set_value(1)
    at.button(key="papers_run").click()
    at.run()
    _ok(at)
    res = at.session_state["papers_results"]["mftree-ipc"]
    assert res.args.size == "classroom"
    table, verdict = _frames(at)[:2]
    assert table["F1 (paper)"].tolist() == [0.3318, 0.3289, 0.3169, 0.3034, 0.2868]
    assert list(verdict.columns) == ["pattern", "paper (Wiki2)", "ours"]
    assert len(at.success) + len(at.warning) >= 1 + len(res.checks)
