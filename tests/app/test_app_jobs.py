"""Training runs as a job: the page stays usable, Stop (or the panel's Cancel) is acknowledged in
the rerun that sees the click, the solver stops after its pass, and the run's record says it
stopped and which certified iterate it kept."""

from __future__ import annotations

import time

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from app.state.jobs import Job
from app.state.runs import count_text, n_passes
from tests.app.test_app_pages import APP, TIMEOUT, _ok, _state


def _long_fit(at: AppTest) -> Job:
    """FLATMULT (BCFW) on the default data set with no tolerance: it runs until stopped."""
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value("flatmult")
    at.run()
    at.number_input(key="param:flatmult:tol").set_value(0.0)
    at.number_input(key="param:flatmult:rtol").set_value(0.0)
    at.number_input(key="param:flatmult:max_iter").set_value(1_000_000)
    at.run()
    _ok(at)
    at.button(key="train").click()
    at.run()
    _ok(at)
    (job,) = _state(at).jobs
    assert job.running and _state(at).runs == []  # the page returned, the fit goes on
    deadline = time.monotonic() + TIMEOUT
    while len(job.progress_cb.states) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(job.progress_cb.states) >= 4
    return job


def _progress_texts(at: AppTest, where: str = "main") -> list[str]:
    root = at.main if where == "main" else at.sidebar
    return [p.text for p in root.get("progress")]


def _check_stopped_run(at: AppTest, job: Job) -> None:
    assert job.thread is not None
    job.thread.join(timeout=TIMEOUT)
    assert not job.running and job.status == "stopped"
    at.run()
    _ok(at)
    (run,) = _state(at).runs
    assert run.id == job.id and run.stopped and not run.converged
    record = run.record()
    assert record["stopped"] is True
    kept = record["kept_iterate"]
    hist = run.history
    exact = hist[hist["exact"] != False] if "exact" in hist else hist  # noqa: E712
    # the kept iterate is a certified state of the history: the best upper bound reached
    assert kept["iteration"] in set(exact["iteration"])
    assert kept["upper"] == pytest.approx(float(exact["upper"].min()))
    assert run.estimator.stop_reason_ == "callback"


def test_stop_on_the_train_page_is_acknowledged_in_the_same_rerun() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    job = _long_fit(at)
    at.run()
    _ok(at)
    # the live view: progress with the time left (or "no estimate yet") and the maximum
    (text,) = _progress_texts(at)
    assert "at most 1000000 iterations" in text and ("left" in text or "no estimate" in text)
    assert at.button(key="train").disabled
    at.button(key=f"stop_{job.id}").click()
    at.run()
    _ok(at)
    assert job.flag.stop_requested()
    assert _progress_texts(at)[0].startswith("Stopping after this pass")
    _check_stopped_run(at, job)
    run = _state(at).runs[-1]
    (line,) = [m.value for m in at.markdown if m.value.startswith("**Last run:**")]
    assert count_text(run.history) in line and "stopped by you" in line
    assert f"kept the iterate of iteration {run.kept['iteration']}" in line


def test_cancel_in_the_jobs_panel_while_on_another_page() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    job = _long_fit(at)
    at.switch_page("app_pages/data.py")
    at.run()
    _ok(at)
    assert job.running
    (text,) = _progress_texts(at, "sidebar")  # the panel shows the fit's progress
    assert "at most 1000000 iterations" in text
    at.button(key=f"cancel_{job.id}").click()
    at.run()
    _ok(at)
    assert job.flag.stop_requested()
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "Stopping after this pass" in sidebar or "Stopping after this pass" in " ".join(
        _progress_texts(at, "sidebar")
    )
    _check_stopped_run(at, job)
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert f"#{job.id}" in sidebar and "stopped by you" in sidebar
    assert "kept the iterate of iteration" in sidebar


def test_iteration_counts_say_what_the_chart_shows() -> None:
    # the chart's x axis ends at the last iteration; its certified points are the exact states
    bcfw = pd.DataFrame({"iteration": [0, 1, 1, 2, 2], "exact": [True, False, True, False, True]})
    assert count_text(bcfw) == "2 passes, 3 certified states"
    every_second = pd.DataFrame({"iteration": [2, 4, 6]})
    assert count_text(every_second) == "6 passes, 3 certified states"
    assert count_text(pd.DataFrame({"iteration": [1, 2, 3]})) == "3 iterations"
    assert n_passes(bcfw) == 2 and n_passes(pd.DataFrame()) == 0
