"""The warm-start launcher (``python -m app.serve``, ``make run``): it serves the same script
with Streamlit's own command line, and its warm-up does the first visit's work without a warning
(a warning raised beside a visitor's fit could land in that run's record)."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import pytest

import app.serve
from app.serve import SCRIPT, main, warm, warm_fit
from app.state import builtin_choices, load_builtin


def test_main_runs_the_app_script_with_the_options_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    started: list[bool] = []

    def fake_cli(args: list[str], prog_name: str) -> int:
        seen["args"], seen["prog"] = args, prog_name
        return 0

    from streamlit.web import cli

    monkeypatch.setattr(cli, "main", fake_cli)
    monkeypatch.setattr(app.serve, "warm_in_background", lambda: started.append(True))
    monkeypatch.setattr(app.serve, "_one_blas_thread", lambda: None)  # this process keeps its BLAS
    assert main(["--server.port", "8765"]) == 0
    assert seen == {"args": ["run", str(SCRIPT), "--server.port", "8765"], "prog": "streamlit"}
    assert SCRIPT.name == "streamlit_app.py" and SCRIPT.is_file()
    assert started == [True]


def test_warm_does_every_stage_without_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[tuple[str, Any]] = []
    fitted: list[tuple[Any, int, Any]] = []

    def spy_load(key: str) -> Any:
        loaded.append((key, load_builtin(key)))
        return loaded[-1][1]

    def spy_fit(entry: Any, rows: int = app.serve.WARM_ROWS) -> Any:
        est = warm_fit(entry, rows)
        fitted.append((entry, rows, est))
        return est

    monkeypatch.setattr(app.state, "load_builtin", spy_load)
    monkeypatch.setattr(app.serve, "warm_fit", spy_fit)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        times = warm(rows=40)
    assert [str(w.message) for w in caught] == []
    assert set(times) == {"imports", "data", "fit"}
    # the data stage loaded the home page's default data set, the fit stage fitted it once,
    # on the rows asked for
    default = next(b for b in builtin_choices() if b.kind != "real").key
    assert [key for key, _ in loaded] == [default]
    assert [(rows, type(est).__name__) for _, rows, est in fitted] == [
        (40, "FlatMulticlassClassifier")
    ]
    assert fitted[0][0] is loaded[0][1]
    # what the first page and the first fit need is now imported
    assert {"hierlab.methods", "hierlab.plots", "app.ui.training"} <= set(sys.modules)


def test_the_warm_fit_is_one_certified_iteration_of_the_first_run() -> None:
    entry = load_builtin(next(b for b in builtin_choices() if b.kind != "real").key)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = warm_fit(entry, rows=40)
    assert [str(w.message) for w in caught] == []
    assert type(est).__name__ == "FlatMulticlassClassifier"  # the home page's default method
    assert est.converged_ and len(est.history_) == 1
    assert est.n_features_in_ == entry.train.X.shape[1]


def test_the_server_runs_blas_on_one_thread_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    for var in app.serve._BLAS_ENV:
        monkeypatch.setenv(var, "")  # unset for the launcher, restored afterwards
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    before = max(blas, default=1)
    try:
        app.serve._one_blas_thread()
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")  # a person's setting is kept
        threadpool_limits(limits=before, user_api="blas")
        app.serve._one_blas_thread()
        assert os.environ["OPENBLAS_NUM_THREADS"] == "2"
        assert all(i["num_threads"] == before for i in threadpool_info() if i["user_api"] == "blas")
    finally:
        threadpool_limits(limits=before, user_api="blas")
