"""Export of a session: the script reproduces the app's runs; the notebook holds the same cells."""

from __future__ import annotations

import json
import math
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.lab.export import (
    CELL_MARKER,
    DataSource,
    RunSpec,
    Session,
    SplitSpec,
    export_notebook,
    export_script,
    make_run_estimator,
    notebook_code_cells,
    parse_metrics_lines,
    parse_what_ran,
    run_session,
    script_cells,
    write_session,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "datasets"
GEN = {"n_train_per_label": 6, "n_test_per_label": 3, "depth": 2, "random_state": 4}


def _session() -> Session:
    return Session(
        data=DataSource.builtin("hieron-synthetic", GEN),
        split=SplitSpec("random", test_size=0.35, seed=7),
        runs=[
            RunSpec("flatmult", {"C": 2.0, "max_iter": 60, "averaging": "uniform"}),
            RunSpec("hieron-batch", {"epochs": 2, "shuffle": True}, seed=11),
        ],
        title="two runs",
    )


def _close(a: dict[str, float], b: dict[str, float]) -> None:
    assert set(a) == set(b), (sorted(a), sorted(b))
    for k in a:
        if math.isnan(a[k]):
            assert math.isnan(b[k]), k
        else:
            assert abs(a[k] - b[k]) <= 1e-9, (k, a[k], b[k])


def _app_metrics(session: Session) -> dict[str, dict[str, float]]:
    """The metrics the app computes for the session's runs (app.state's own functions)."""
    from app import state as app_state

    entry = app_state.load_builtin(f"catalog:{session.data.name}", dict(session.data.params))
    if session.split.mode == "random":
        entry = app_state.resplit(entry, "random", session.split.test_size, session.split.seed)
    st = app_state.AppState()
    out = {}
    for label, run in zip(session.labels(), session.runs):
        params = dict(run.params)
        if run.seed is not None:
            params["random_state"] = run.seed  # a schema parameter of the Hieron methods
        r = app_state.fit_run(st, entry, run.method, params)
        out[label] = r.metrics
    return out


def test_exported_script_reproduces_the_app_runs(tmp_path: Path) -> None:
    session = _session()
    paths = write_session(session, tmp_path, stem="two_runs")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(paths["script"])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = parse_metrics_lines(proc.stdout)
    assert list(printed) == session.labels()
    app = _app_metrics(session)
    for label in session.labels():
        _close(printed[label], app[label])
    # the in-process runner agrees too, and the two runs differ (the test can fail)
    _, _, results = run_session(session)
    for r in results:
        _close(printed[r.label], r.metrics)
    a, b = (printed[lab]["tree_induced_error"] for lab in session.labels())
    assert a != b
    # the figures of the app, drawn by hierlab.plots, saved next to the script
    figs = sorted(p.name for p in (tmp_path / "two_runs_figures").iterdir())
    assert figs == ["bounds.html", "error_per_level.html", "gamma_histogram.html", "metrics.html"]


def test_notebook_is_nbformat4_with_the_script_cells(tmp_path: Path) -> None:
    session = _session()
    paths = write_session(session, tmp_path)
    script = paths["script"].read_text()
    nb = json.loads(paths["notebook"].read_text())  # valid JSON
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] >= 4
    assert nb["metadata"]["kernelspec"]["language"] == "python"
    ids = [c["id"] for c in nb["cells"]]
    assert len(set(ids)) == len(ids)
    for c in nb["cells"]:
        assert c["cell_type"] in ("code", "markdown")
        assert isinstance(c["source"], list) and all(isinstance(s, str) for s in c["source"])
        assert c["metadata"] == {}
        if c["cell_type"] == "code":
            assert c["outputs"] == [] and c["execution_count"] is None
        else:
            assert "outputs" not in c
    code = notebook_code_cells(nb)
    assert code == [s for k, s in script_cells(script) if k == "code"]
    # the code cells are exactly the script's: the script is them, joined by the markers
    blocks = script.split(CELL_MARKER)[1:]
    script_code = [
        b.split("\n", 1)[1].strip("\n") for b in blocks if not b.startswith(" [markdown]")
    ]
    assert code == script_code
    assert len(code) == 2 + 1 + len(session.runs) + 1  # imports, data, results, runs, figures
    # the session round-trips through its JSON
    assert Session.from_dict(json.loads(paths["session"].read_text())) == session


def test_file_session_runs_in_process_like_the_script(tmp_path: Path, capsys, monkeypatch) -> None:
    session = Session(
        data=DataSource.files(
            DATA / "example_paths.csv", test_path=str(DATA / "example_paths_test.csv")
        ),
        split=SplitSpec("own"),
        runs=[RunSpec("topdown", {"C": 0.5}), RunSpec("hiermult", {"max_iter": 40})],
        figures=False,
    )
    path = tmp_path / "files_session.py"
    path.write_text(export_script(session))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(path)])
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    printed = parse_metrics_lines(out)
    train, test, results = run_session(session)
    assert (train.n_samples, test.n_samples) == (30, 12)
    assert list(printed) == [r.label for r in results]
    for r in results:
        _close(printed[r.label], r.metrics)
    # what ran: printed by the script and kept by the in-process runner, the same lines
    what = parse_what_ran(out)
    assert what == {r.label: r.algorithm for r in results}
    assert [r.algorithm for r in results] == [
        "top-down: one LinearSVC per internal node, routing from the root",
        "BCFW on the dual",
    ]
    # a random split of the same files (train and test concatenated first)
    session.split = SplitSpec("random", 0.5, 3)
    path.write_text(export_script(session))
    runpy.run_path(str(path), run_name="__main__")
    printed = parse_metrics_lines(capsys.readouterr().out)
    train, test, results = run_session(session)
    assert train.n_samples + test.n_samples == 42 and test.n_samples == 21
    for r in results:
        _close(printed[r.label], r.metrics)


def test_induced_taxonomy_run(tmp_path: Path) -> None:
    session = Session(
        data=DataSource.builtin("hieron-synthetic", GEN),
        runs=[RunSpec("hiermult", {"max_iter": 30}, taxonomy="induced", induce={"tau": 0})],
    )
    _, test, (res,) = run_session(session)
    # trained and scored on the induced binary tree over the training labels
    assert res.taxonomy is not test.taxonomy
    assert all(res.taxonomy.n_children[i] in (0, 2) for i in range(res.taxonomy.n_nodes))
    script = export_script(session)
    assert 'induce_taxonomy(train.X, train.y, method="mftree"' in script


def test_seed_goes_to_random_state() -> None:
    est = make_run_estimator(RunSpec("hieron", {"shuffle": True}, seed=5), None)
    assert est.get_params()["random_state"] == 5
    # a method without random_state in its schema still gets the seed through set_params
    est = make_run_estimator(RunSpec("nhsvm", {}, seed=9), None)
    assert est.get_params()["random_state"] == 9
    # an explicit parameter wins over the seed
    est = make_run_estimator(RunSpec("hieron", {"random_state": 1}, seed=5), None)
    assert est.get_params()["random_state"] == 1


def test_invalid_sessions_are_rejected() -> None:
    with pytest.raises(ParameterError):
        export_script(Session(DataSource.builtin("hieron-synthetic"), runs=[RunSpec("nope")]))
    with pytest.raises(ParameterError):
        export_script(
            Session(DataSource.builtin("hieron-synthetic"), runs=[RunSpec("flatmult", {"Q": 1})])
        )
    with pytest.raises(DataError, match="no split of its own"):
        export_script(Session(DataSource.files(DATA / "example_paths.csv"), SplitSpec("own")))
    with pytest.raises(DataError):
        export_script(Session(DataSource.builtin("x"), SplitSpec("random", test_size=1.5)))
    with pytest.raises(ParameterError):
        export_notebook()


def test_script_cells_strip_markdown_comments() -> None:
    cells = script_cells("# %% [markdown]\n# # Title\n#\n# text\n\n# %%\nx = 1\n")
    assert cells == [("markdown", "# Title\n\ntext"), ("code", "x = 1")]
