"""A comparison runs while the person browses (issue 18, item 6): it runs in a worker process,
the pages stay usable meanwhile, and its results land in the session's comparisons, equal to
the same comparison run in the page."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app.state import background, display_name
from app.state.compare import comparison_data, run_engine
from tests.app.test_app_pages import APP, TIMEOUT, _ok, _state


@pytest.fixture
def worker() -> Iterator[None]:
    """The worker process is stopped after the test."""
    yield
    background.shutdown()


def _sidebar(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


def test_a_background_comparison_lands_while_the_person_browses(worker: None) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    at.switch_page("app_pages/compare.py")
    at.run()
    _ok(at)
    at.multiselect(key="compare_methods").set_value(["topdown"])
    at.radio(key="compare_plan").set_value("own")
    at.checkbox(key="compare_background").check()
    at.run()
    _ok(at)
    at.button(key="run_compare").click()
    at.run()
    _ok(at)
    state = _state(at)
    (job,) = state.background
    assert state.comparisons == []  # not run in the page
    assert f"Comparison #{job.id} ({display_name('topdown')}) running for" in _sidebar(at)

    # browsing meanwhile: the Train page works while the job runs
    at.switch_page("app_pages/train.py")
    at.run()
    _ok(at)
    assert [t.value for t in at.title] == ["Train"]

    engine = job.future.result(timeout=TIMEOUT)  # the worker finishes
    at.run()  # the next rerun collects it
    _ok(at)
    state = _state(at)
    assert state.background == []
    (comp,) = state.comparisons
    assert comp.id == job.id and comp.engine is not None
    assert f"Comparison #{job.id} is done" in _sidebar(at)
    # the worker's numbers are the page's: the same comparison run in this process
    entry = state.dataset
    data, plan = comparison_data(entry, 0, 0.3, 0, entry.taxonomy)
    assert comp.plan == plan == {"mode": "own"}
    here = run_engine(data, comp.configs, plan).results
    cols = ["method", "split", "metric", "value"]
    pd.testing.assert_frame_equal(
        comp.results[cols].reset_index(drop=True), here[cols].reset_index(drop=True)
    )
    assert engine.results[cols].equals(comp.results[cols])
    # the Compare page shows it, and the sidebar's notice is then gone
    at.switch_page("app_pages/compare.py")
    at.run()
    _ok(at)
    assert any(f"Comparison #{job.id} on" in s.value for s in at.subheader)
    at.run()
    assert "is done" not in _sidebar(at)


def test_a_failing_background_comparison_is_reported_not_raised(worker: None) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    state = _state(at)
    entry = state.dataset
    job = background.start_comparison(
        state, entry, [{"label": "bad", "method": "topdown", "params": {"C": -1.0}}], n_splits=0
    )
    with pytest.raises(Exception):  # noqa: B017 - whatever the worker raised
        job.future.result(timeout=TIMEOUT)
    at.run()
    _ok(at)
    assert state.comparisons == []
    assert f"Comparison #{job.id} (bad) failed:" in _sidebar(at)
    at.run()
    assert f"Comparison #{job.id} (bad) failed:" in _sidebar(at)  # until the Compare page
    at.switch_page("app_pages/compare.py")
    at.run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        f"Comparison #{job.id} (bad) failed: ParameterError: methods: bad: topdown: parameter "
        "'C' must be "
        ">= 0, got -1.0"
    ]
    assert _state(at).background == []
    at.run()
    assert "failed" not in _sidebar(at) and not any("failed" in e.value for e in at.error)


def test_a_background_comparison_reports_each_fit_and_can_be_cancelled(worker: None) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    state = _state(at)
    cfgs = [{"label": f"td{k}", "method": "topdown", "params": {}} for k in range(30)]
    job = background.start_comparison(state, state.dataset, cfgs, n_splits=0)
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and job.progress()[0] == 0.0:
        time.sleep(0.1)
    frac, text = job.progress()
    assert 0 < frac < 1 and " of 30 fits done, last: td" in text and " split 0" in text
    at.run()
    _ok(at)
    assert any(" of 30 fits done" in p.text for p in at.sidebar.get("progress"))
    at.button(key=f"cancel_compare_{job.id}").click()
    at.run()
    _ok(at)
    assert job.cancelled and "Cancelling" in " ".join(c.value for c in at.sidebar.caption)
    with pytest.raises(Exception, match="Cancelled"):
        job.future.result(timeout=TIMEOUT)
    at.run()
    assert f"Comparison #{job.id} ({job.labels}) failed: cancelled by you" in _sidebar(at)
    assert state.comparisons == []
