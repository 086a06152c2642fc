"""AppTest: the Solver race page (app/app_pages/race.py), on its own and from the app.

The race runs on the built-in Hieron set with a short budget, draws three curves (one per solver,
each from J(0) down, on a log axis) and a table of what each certified, with no traceback.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "app" / "app_pages" / "race.py")
APP = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT = 240


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _values(arr: object) -> np.ndarray:
    if isinstance(arr, dict) and "bdata" in arr:
        return np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"])
    return np.asarray(arr, dtype=np.float64)


def test_race_page_draws_three_certified_curves() -> None:
    at = AppTest.from_file(PAGE, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    assert not at.get("plotly_chart")  # nothing before the button
    at.selectbox(key="race_method").set_value("orthognl")
    at.slider(key="race_budget").set_value(0.5)
    at.button(key="race_run").click()
    at.run()
    _ok(at)
    res = at.session_state["race_results"]["race"]
    assert res.method == "orthognl" and res.max_time == 0.5
    (chart,) = at.get("plotly_chart")
    spec = json.loads(chart.proto.spec)
    assert [t["name"] for t in spec["data"]] == ["rda-paper", "rda-linesearch", "bcfw"]
    assert spec["layout"]["yaxis"]["type"] == "log"
    for t in spec["data"]:
        x, y = _values(t["x"]), _values(t["y"])
        assert len(x) == len(y) >= 2, t["name"]
        assert y[0] == res.J0 and np.all(np.diff(y) <= 0), t["name"]  # from J(0), never up
        assert x[0] == 0.0 and x[-1] >= 0.5, t["name"]  # each used its budget
    (table,) = [d.value for d in at.dataframe]
    assert list(table.index) == ["rda-paper", "rda-linesearch", "bcfw"]
    np.testing.assert_array_equal(table["certified gap"].to_numpy(), res.summary()["gap"])


def test_race_page_is_listed_in_the_app() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    at.switch_page("app_pages/race.py")
    at.run()
    _ok(at)
    assert at.title[0].value == "Solver race"
    assert at.button(key="race_run") is not None
