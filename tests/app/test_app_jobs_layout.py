"""A page opened while background work is reported never draws inside the sidebar.

The jobs panel in the sidebar is a fragment that reruns every few seconds while work runs in
the background. A fragment rerun and the person's next click (a page in the navigation) are
served by the same script thread, one after the other. The failure seen in the browser: the
panel's rerun ends, the click's full run follows in that thread, and the page draws inside the
sidebar with the main area blank.

AppTest never reruns a fragment on its own, so this test drives Streamlit's own script runner
through the exact sequence: the panel's timed rerun, and the navigation request arriving as
that rerun ends (served next, in the same thread), for every page of the app.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.scriptrunner import RerunData, ScriptRunnerEvent
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequests
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import parse_tree_from_messages
from streamlit.testing.v1.local_script_runner import LocalScriptRunner, require_widgets_deltas

from app.state import background
from tests.app.test_app_pages import APP, TIMEOUT, _ok, _state

PAGES = {
    "app_pages/home.py": "Start here",
    "app_pages/data.py": "Data",
    "app_pages/taxonomy.py": "Taxonomy",
    "app_pages/train.py": "Train",
    "app_pages/explore.py": "Explore",
    "app_pages/compare.py": "Compare",
    "app_pages/demos.py": "Guided demos",
    "app_pages/methods.py": "Methods",
    "app_pages/papers.py": "Paper tables",
    "app_pages/race.py": "Solver race",
}


class _FragmentThenNavigate(LocalScriptRunner):
    """Runs the fragment ``fragment_id`` on its timer, then the requested page: the page's
    request arrives as the fragment's run ends, so the same script thread serves it next."""

    fragment_id = ""
    fragment_page = ""
    fragment_runs = 0

    def run(
        self,
        widget_state: Any = None,
        query_params: dict[str, Any] | None = None,
        timeout: float = 3,
        page_hash: str = "",
        context_info: Any = None,
    ) -> Any:
        page = RerunData(
            widget_states=widget_state, page_script_hash=page_hash, context_info=context_info
        )

        def navigate(sender: Any, event: ScriptRunnerEvent, **kwargs: Any) -> None:
            if event == ScriptRunnerEvent.FRAGMENT_STOPPED_WITH_SUCCESS:
                type(self).fragment_runs += 1
                self.request_rerun(page)

        self.on_event.connect(navigate, weak=False)
        self._requests = ScriptRequests()  # instead of the full run queued at construction
        self.request_rerun(
            RerunData(
                fragment_id_queue=[self.fragment_id],
                page_script_hash=self.fragment_page,
                is_auto_rerun=True,
            )
        )
        try:
            self.start()
            require_widgets_deltas(self, timeout)
        finally:
            self.join()
        return parse_tree_from_messages(self.forward_msgs())


@pytest.fixture
def worker() -> Iterator[None]:
    yield
    background.shutdown()


def _panel_fragment(at: AppTest) -> str:
    """The id of the jobs panel's fragment: the one fragment of the home page (declared before
    the page, at the top level, its id is the same on every page)."""
    storage = at._fragment_storage
    ids = list(storage._fragments)
    assert len(ids) == 1, ids
    return ids[0]


def test_background_work_never_draws_a_page_in_the_sidebar(
    worker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    state = _state(at)
    # a comparison long enough to be running during the whole walk (killed by the fixture)
    cfg = {"label": "slow", "method": "topdown", "params": {}}
    background.start_comparison(state, state.dataset, [cfg] * 40, n_splits=5)
    at.run()
    _ok(at)
    fragment = _panel_fragment(at)
    monkeypatch.setattr(app_test_module, "LocalScriptRunner", _FragmentThenNavigate)
    for path, title in PAGES.items():
        _FragmentThenNavigate.fragment_id = fragment
        _FragmentThenNavigate.fragment_page = at._finished_page_script_hash
        runs = _FragmentThenNavigate.fragment_runs
        at.switch_page(path)
        at.run()
        assert _FragmentThenNavigate.fragment_runs == runs + 1  # the panel ran, then the page
        assert not at.exception, [e.value for e in at.exception]
        in_main = [t.value for t in at.main.title]
        in_sidebar = [t.value for t in at.sidebar.title]
        assert any(title in t for t in in_main), (path, in_main, in_sidebar)
        assert not any(title in t for t in in_sidebar), (path, in_sidebar)
        assert fragment in at._fragment_storage._fragments  # the same panel on every page


def test_the_sidebar_names_the_data_set_chosen_in_this_run() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    first = _state(at).dataset.name
    at.switch_page("app_pages/data.py")
    at.run()
    at.selectbox(key="builtin_choice").set_value("catalog:hierarchical-text")
    at.run()
    at.button(key="load_builtin").click()
    at.run()
    _ok(at)
    now = _state(at).dataset.name
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert now != first and f"Data: **{now}**" in sidebar and first not in sidebar
