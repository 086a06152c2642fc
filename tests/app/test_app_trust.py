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
GEN = {"n_train_per_label": 20, "n_test_per_label": 3, "depth": 4, "random_state": 4}
#: an upload whose features say nothing (every value 0): any model of it is trivial
LEAVES = ["animal/mammal/cat", "animal/mammal/dog", "animal/bird/eagle", "vehicle/car"]
CONSTANT = ("size,speed,label\n" + "".join(f"0,0,{LEAVES[i % 4]}\n" for i in range(60))).encode()


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


def _settle_reports(at: AppTest) -> None:
    """Wait for the runs' probability reports (computed in the background), then rerun the
    page, which then draws them (a loaded machine may take longer than the page's grace)."""
    for r in _state(at).runs:
        job = getattr(getattr(r, "views", None), "proba", None)
        if job is not None:
            job.future.result(timeout=600)
    at.run()


def _constant_upload(at: AppTest):
    """The constant-feature upload as the current data set; returns its entry."""
    from app.state import upload_entry

    tax = ("taxonomy.paths", (ROOT / "datasets" / "taxonomy.paths").read_bytes())
    entry = upload_entry(("constant.csv", CONSTANT), tax)
    _state(at).add_dataset(entry)
    return entry


@pytest.fixture(scope="module")
def app_two_runs() -> AppTest:
    """FLATMULT with its defaults on features that say nothing (a trivial model), then TOPDOWN
    on a small built-in set (the current data set afterwards)."""
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    _constant_upload(at)
    _train(at, "flatmult")
    _state(at).add_dataset(load_builtin("catalog:hieron-synthetic", GEN))
    _train(at, "topdown")
    return at


def test_a_trivial_model_shows_the_warning_and_the_record_says_why(app_two_runs) -> None:
    at = app_two_runs
    flat, top = _state(at).runs
    # the defaults as the user gets them: one class for every row, every weight zero
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
    _settle_reports(at)
    table = next(df.value for df in at.dataframe if "ECE (top-1)" in df.value.columns)
    entry = _state(at).dataset
    runs = [r for r in _state(at).runs if r.dataset_key == entry.key]
    assert list(table["run"]) == [r.label for r in runs]
    for run in runs:
        row = table[table["run"] == run.label].iloc[0]
        est = run.estimator
        D = point_masses(est.node_proba(entry.test.X), est.taxonomy_)
        want = calibration_sums(est.taxonomy_.index(list(entry.test.y)), D)
        assert row["ECE (top-1)"] == pytest.approx(want.ece)
        assert row["Brier (multi-class)"] == pytest.approx(want.brier)
        assert "pooled node ECE" in table.columns


def test_no_bounds_chart_for_a_method_without_a_certificate(app_two_runs) -> None:
    at = app_two_runs
    at.switch_page("app_pages/train.py")
    at.run()
    _ok(at)
    # the last run is TOPDOWN: no lower bound, no objective curve -> a sentence, not a chart
    titles = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert not any("objective bounds" in t for t in titles)
    assert any("no certificate" in i.value for i in at.info)
    # ... and so right after training it, in place of the live chart
    _train(at, "topdown")
    titles = [str(c.proto.spec) for c in at.get("plotly_chart")]
    assert not any("objective bounds" in t for t in titles)
    assert any("no certificate" in i.value for i in at.info)
    from app.state import delete_run

    delete_run(_state(at), _state(at).runs[-1].id, at.session_state)  # the fixture's two runs


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


# ---------------------------------------------------------------------------- model files
def _predict_tab(at: AppTest, model: tuple[str, bytes]) -> None:
    at.switch_page("app_pages/data.py")
    at.run()
    at.file_uploader(key="predict_model_file").set_value((*model, "application/zip"))
    at.run()


def test_download_then_upload_of_a_model_predicts_the_same_labels(app_two_runs) -> None:
    from app.state.model_files import model_file_bytes, model_file_name

    at = app_two_runs
    state = _state(at)
    run = state.runs[-1]  # TOPDOWN: a discriminating model, one LinearSVC per parent
    data = model_file_bytes(run.estimator)  # what the "Model file" button serves
    _predict_tab(at, (model_file_name(run.label), data))
    _ok(at)
    assert any("Model loaded" in s.value for s in at.success)
    table = next(df.value for df in at.dataframe if "predicted" in df.value.columns)
    assert list(table["predicted"]) == [str(v) for v in run.y_pred]
    assert list(table["true"]) == [str(v) for v in run.y_test]
    assert len(set(table["predicted"])) > 1  # the test could fail: labels vary
    # a damaged file: a message, and nothing loaded
    broken = data[:100] + bytes(len(data) - 100)
    _predict_tab(at, ("broken.hlm", broken))
    assert at.error and "broken.hlm" in at.error[0].value
    assert "uploaded_model" not in at.session_state
    assert not [df for df in at.dataframe if "predicted" in df.value.columns]


# ---------------------------------------------------------------------------- deleting runs
def test_deleting_a_run_removes_it_everywhere() -> None:
    import json

    at = _small_app()
    _train(at, "topdown")
    _train(at, "hieron")
    gone, kept = _state(at).runs
    assert any(
        getattr(j.run, "id", None) == gone.id for j in _state(at).jobs
    )  # the panel    # the run is shown on Explore, listed on Compare with its probabilities
    at.switch_page("app_pages/explore.py")
    at.run()
    at.selectbox(key="explore_run").set_value(gone.id)
    at.run()
    at.switch_page("app_pages/compare.py")
    at.run()
    at.radio(key="compare_source").set_value("runs")
    at.run()
    assert gone.id in at.multiselect(key="compare_runs").value
    _settle_reports(at)
    proba = next(df.value for df in at.dataframe if "ECE (top-1)" in df.value.columns)
    assert gone.label in list(proba["run"])
    # delete it from the Train page's history
    at.switch_page("app_pages/train.py")
    at.run()
    at.multiselect(key="train_delete_runs").set_value([gone.id])
    at.run()
    at.checkbox(key="train_history_confirm_delete").check()
    at.run()
    at.button(key="train_history_delete").click()
    at.run()
    _ok(at)
    state = _state(at)
    assert [r.id for r in state.runs] == [kept.id]
    assert all(getattr(j.run, "id", None) != gone.id for j in state.jobs)
    assert [r["id"] for r in json.loads(_runs_json(state))] == [kept.id]
    history = next(df.value for df in at.dataframe if "label" in df.value.columns)
    assert gone.label not in list(history["label"]) and kept.label in list(history["label"])
    at.switch_page("app_pages/explore.py")
    at.run()
    _ok(at)
    assert at.selectbox(key="explore_run").options == [kept.label]
    at.switch_page("app_pages/compare.py")
    at.run()
    at.radio(key="compare_source").set_value("runs")
    at.run()
    _ok(at)
    assert gone.id not in at.multiselect(key="compare_runs").value
    assert gone.label not in at.multiselect(key="compare_runs").options
    _settle_reports(at)
    proba = next(df.value for df in at.dataframe if "ECE (top-1)" in df.value.columns)
    assert list(proba["run"]) == [kept.label]
    # nothing exports it any more
    from app.state.exports import runs_session

    assert [r.label for r in runs_session(state, state.runs).runs] == [kept.label]


def _runs_json(state) -> str:
    from app.state import runs_json

    return runs_json(state.runs)


# ---------------------------------------------------------------------------- train/test files
def _upload_pair(at: AppTest, features: str, test: str | None, taxonomy: str | None) -> None:
    data = ROOT / "datasets"
    at.switch_page("app_pages/data.py")
    at.run()
    at.file_uploader(key="upload_features").set_value(
        (features, (data / features).read_bytes(), "text/csv")
    )
    if taxonomy is not None:
        at.file_uploader(key="upload_taxonomy").set_value(
            (taxonomy, (data / taxonomy).read_bytes(), "text/plain")
        )
    if test is not None:
        at.file_uploader(key="upload_test").set_value(
            (test, (data / test).read_bytes(), "text/csv")
        )
    at.run()
    at.button(key="use_upload").click()
    at.run()
    _ok(at)


def test_a_train_test_file_pair_is_used_as_given() -> None:
    import pandas as pd

    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    _upload_pair(at, "example_paths.csv", "example_paths_test.csv", "taxonomy.paths")
    entry = _state(at).dataset
    train_file = pd.read_csv(ROOT / "datasets" / "example_paths.csv")
    test_file = pd.read_csv(ROOT / "datasets" / "example_paths_test.csv")
    assert entry.split == {"mode": "own"} and "test" in entry.files
    # every row of the training file trains, the test rows are the test file's, in order
    assert entry.train.n_samples == len(train_file)
    assert [p.split("/")[-1] for p in test_file["label"]] == list(entry.test.y)
    np.testing.assert_allclose(entry.test.X, test_file.drop(columns="label").to_numpy())
    _train(at, "topdown")
    run = _state(at).runs[-1]
    assert len(run.y_test) == len(test_file)
    assert list(run.y_test) == list(entry.test.y)


# ---------------------------------------------------------------------------- exports
@pytest.mark.slow
def test_an_exported_notebook_of_a_run_executes_and_reproduces_its_metrics(tmp_path) -> None:
    """An uploaded text set with its own test file: the bundle holds the files, the notebook
    reads them, trains the run and prints the metrics the app shows."""
    import io
    import zipfile

    import nbclient
    import nbformat

    from app.state.exports import export_files, runs_session
    from hierlab.lab.export import parse_metrics_lines

    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    _upload_pair(at, "example_text.csv", None, None)
    _train(at, "topdown")
    state = _state(at)
    run = state.runs[-1]
    # the example's own text wherever examples are listed
    at.switch_page("app_pages/explore.py")
    at.run()
    _ok(at)
    listed = next(df.value for df in at.dataframe if "predicted" in df.value.columns)
    assert list(listed["text"]) == [" ".join(t.split()) for t in state.dataset.test.texts]
    export = export_files(state, runs_session(state, [run]), run.dataset_key, "run")
    zipfile.ZipFile(io.BytesIO(export.bundle)).extractall(tmp_path)
    folder = tmp_path / "run"
    assert (folder / "data" / "example_text.csv").is_file()
    nb = nbformat.reads((folder / "run.ipynb").read_text(), as_version=4)
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    printed = "".join(
        o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    metrics = parse_metrics_lines(printed)[run.label]
    assert set(metrics) == set(run.metrics)
    for k, v in run.metrics.items():
        assert metrics[k] == pytest.approx(v, abs=1e-12, nan_ok=True), k


@pytest.mark.slow
def test_an_exported_comparison_script_reproduces_its_table(app_two_runs, tmp_path) -> None:
    import subprocess
    import sys

    from app.state.exports import comparison_session, export_files
    from hierlab.lab.export import parse_comparison_line

    at = app_two_runs
    at.switch_page("app_pages/compare.py")
    at.run()
    at.radio(key="compare_source").set_value("methods")
    at.run()
    at.multiselect(key="compare_methods").set_value(["topdown", "hieron-batch"])
    at.number_input(key="compare_n_splits").set_value(2)
    at.run()
    at.button(key="run_compare").click()
    at.run()
    _ok(at)
    state = _state(at)
    comp = state.comparisons[-1]
    assert comp.trivial() == {}  # both configurations discriminate
    export = export_files(state, comparison_session(state, comp), comp.dataset_key, "cmp")
    script = tmp_path / "cmp.py"
    script.write_text(export.script)
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = {r["method"]: r for r in parse_comparison_line(proc.stdout)}
    numeric = comp.numeric_table()  # what the comparison CSV holds: numbers, mean and std
    assert numeric["accuracy_mean"].dtype.kind == "f" and numeric["accuracy_std"].dtype.kind == "f"
    for _, row in numeric.iterrows():
        got = printed[row["method"]]
        for col in [c for c in numeric.columns if c.endswith(("_mean", "_std"))]:
            if "time" in col:
                continue
            assert got[col] == pytest.approx(row[col], abs=1e-12, nan_ok=True), (row["method"], col)


@pytest.mark.parametrize("span", [(3.2, 7.9), (0.02, 0.9), (1e-6, 4e2)])
def test_solver_race_chart_has_y_tick_labels(span: tuple[float, float]) -> None:
    import pandas as pd

    from hierlab.plots import race_figure

    gaps = np.geomspace(span[1], span[0], 12)
    traces = {"bcfw": pd.DataFrame({"seconds": np.linspace(0, 1, 12), "gap": gaps})}
    axis = race_figure(traces).layout.yaxis
    assert axis.type == "log" and len(axis.tickvals) >= 2
    assert len(axis.ticktext) == len(axis.tickvals)
    assert min(axis.tickvals) >= span[0] * 0.999 and max(axis.tickvals) <= span[1] * 1.001
    assert all(float(t) == pytest.approx(v, rel=1e-2) for t, v in zip(axis.ticktext, axis.tickvals))


def test_a_trivial_model_in_a_comparison_is_said_so(app_two_runs) -> None:
    at = app_two_runs
    state = _state(at)
    flat = state.runs[0]
    before = state.current
    _constant_upload(at)
    try:
        at.switch_page("app_pages/compare.py")
        at.run()
        at.radio(key="compare_source").set_value("runs")
        at.run()
        at.multiselect(key="compare_runs").set_value([flat.id])
        at.number_input(key="compare_n_splits").set_value(1)
        at.run()
        at.button(key="run_compare").click()
        at.run()
        _ok(at)
        comp = state.comparisons[-1]
        assert set(comp.trivial()) == {flat.label}
        shown = [w.value for w in at.warning if "Trivial model" in w.value]
        assert len(shown) == 1 and flat.label in shown[0]
    finally:
        state.current = before


def test_a_model_file_predicts_new_unlabelled_text_rows_like_the_session() -> None:
    import io
    import zipfile

    from app.state import AppState, fit_run, upload_entry
    from app.state.model_files import (
        model_file_bytes,
        predict_rows,
        read_model_file,
        read_rows_to_predict,
    )
    from hierlab.core.exceptions import ModelFileError

    entry = upload_entry(
        ("example_text.csv", (ROOT / "datasets" / "example_text.csv").read_bytes())
    )
    run = fit_run(AppState(), entry, "topdown", {})
    model = read_model_file(model_file_bytes(run.estimator), "m.hlm")
    texts = [str(t) for t in entry.test.texts]
    quoted = [t.replace('"', '""') for t in texts]
    new = ("id,text\n" + "".join(f'n{i},"{t}"\n' for i, t in enumerate(quoted))).encode()
    rows = read_rows_to_predict(new, "new.csv", entry.train)
    table, metrics = predict_rows(model, rows)
    assert metrics == {} and list(table["text"]) == texts
    assert list(table["predicted"]) == [str(v) for v in run.y_pred]
    # the same rows with their labels are scored like the run
    _, scored = predict_rows(model, entry.test)
    assert scored == pytest.approx(run.metrics, nan_ok=True)
    # bad files: a message naming the file, nothing returned
    empty_zip = io.BytesIO()
    zipfile.ZipFile(empty_zip, "w").writestr("other.txt", "x")
    for bad in (b"", b"not a zip at all", empty_zip.getvalue()):
        with pytest.raises(ModelFileError, match=r"bad\.hlm"):
            read_model_file(bad, "bad.hlm")
    # rows of another width: said, with what to do
    other = upload_entry(
        ("example_paths.csv", (ROOT / "datasets" / "example_paths.csv").read_bytes())
    )
    with pytest.raises(Exception, match="load the data set the model was trained on"):
        predict_rows(model, other.test)
