"""AppTest: the Train page says what ran and the runs JSON keeps it (issue #19); a parameter the
chosen solver ignores is not offered (issue #18), so nothing can be dropped silently there."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.test_app_pages import _finish_jobs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app" / "streamlit_app.py")


def _trained(method: str, params: dict[str, object]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value(method)
    at.run()
    for name, value in params.items():
        widget = next(w for w in at.main if getattr(w, "key", None) == f"param:{method}:{name}")
        widget.set_value(value)
    at.run()
    at.button(key="train").click()
    at.run()
    _finish_jobs(at)
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_train_page_says_what_ran_and_offers_no_ignored_parameter() -> None:
    at = _trained("flatmult", {"max_iter": 20})
    run = at.session_state["hierlab_state"].runs[-1]
    assert run.estimator.algorithm_ == "BCFW on the dual"
    assert any(c.value == "What ran: BCFW on the dual" for c in at.caption)
    assert json.loads(json.dumps(run.record()))["algorithm"] == "BCFW on the dual"
    keys = {getattr(w, "key", None) for w in at.main}
    assert "param:flatmult:solver" in keys and "param:flatmult:averaging" not in keys
    assert not [w.value for w in at.warning if "ignored" in w.value]
