"""AppTest: every page of the Streamlit app, headless (streamlit.testing.v1.AppTest).

The app opens on the default built-in data set; these tests train, explore, compare, upload good
and malformed files, and check that nothing is lost and nothing shows a traceback.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import hierlab
from app.state import display_name
from app.ui.widgets import active_params
from hierlab.core.registry import get_method, list_methods

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app" / "streamlit_app.py")
DATA = ROOT / "datasets"
TIMEOUT = 120


def _new() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    _ok(at)
    return at


def _ok(at: AppTest) -> None:
    """No uncaught exception (a traceback) and no error message on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _state(at: AppTest):
    return at.session_state["hierlab_state"]


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _trace_names(at: AppTest) -> set[str]:
    return {str(t.get("name")) for spec in _charts(at) for t in spec["data"]}


def _values(arr: object) -> np.ndarray:
    """A plotly array from the figure JSON: a list, or plotly's typed ``{"dtype", "bdata"}``."""
    if isinstance(arr, dict) and "bdata" in arr:
        out = np.frombuffer(base64.b64decode(arr["bdata"]), dtype=arr["dtype"])
        return out.reshape(arr["shape"]) if "shape" in arr else out
    return np.asarray([np.nan if v is None else v for v in arr], dtype=np.float64)


def _finish_jobs(at: AppTest) -> None:
    """Wait for the session's training jobs (a fit runs in a thread while the page stays
    usable), then rerun: their runs land in the history."""
    for job in list(_state(at).jobs):
        if job.thread is not None:
            job.thread.join(timeout=TIMEOUT)
    at.run()


def _train(at: AppTest, method: str | None = None) -> None:
    at.switch_page("app_pages/train.py")
    at.run()
    if method is not None:
        at.selectbox(key="train_method").set_value(method)
        at.run()
    at.button(key="train").click()
    at.run()
    _ok(at)
    _finish_jobs(at)
    _ok(at)


@pytest.fixture(scope="module")
def trained() -> AppTest:
    """The app opened on its default data set, one run trained with the default method."""
    at = _new()
    _train(at)
    return at


def test_opens_on_a_builtin_dataset_and_trains_in_one_click(trained: AppTest) -> None:
    state = _state(trained)
    assert state.dataset is not None and state.dataset.source == "builtin"
    assert len(state.runs) == 1
    run = state.runs[0]
    assert get_method(run.method).bounds  # the default method certifies its bounds
    assert 0.0 <= run.metrics["zero_one_error"] <= 1.0
    assert len(run.history) >= 1
    assert {"upper", "lower", "gap"} <= set(run.history.columns)


def test_bound_chart_holds_both_bounds(trained: AppTest) -> None:
    names = _trace_names(trained)
    assert "upper" in names and "lower" in names, names
    run = _state(trained).runs[0]
    spec = next(s for s in _charts(trained) if any(t.get("name") == "upper" for t in s["data"]))
    upper = next(t for t in spec["data"] if t.get("name") == "upper")
    lower = next(t for t in spec["data"] if t.get("name") == "lower")
    # the chart shows the run's whole history, and the lower bound never exceeds the upper
    up, lo = _values(upper["y"]), _values(lower["y"])
    assert len(up) == len(run.history)
    np.testing.assert_allclose(up, run.history["upper"].to_numpy(dtype=float))
    assert np.all(lo[np.isfinite(lo)] <= up[np.isfinite(lo)] + 1e-9)
    # the run history table lists the run with its metrics
    assert any("zero_one_error" in df.value.columns for df in trained.dataframe)


def test_explore_draws_every_figure(trained: AppTest) -> None:
    trained.switch_page("app_pages/explore.py")
    trained.run()
    _ok(trained)
    keys = {c.proto.id for c in trained.get("plotly_chart")}
    assert len(keys) >= 5  # heat map tree, per level, gamma histogram, confusion, weight norms
    names = _trace_names(trained)
    assert "nodes" in names  # the taxonomy drawing coloured by per-node error
    # a decision path for one example, from the root down
    paths = [m.value for m in trained.markdown if m.value.startswith("**Decision path:**")]
    assert paths and paths[0].split("** ", 1)[1].startswith("root")
    trained.slider(key="explore_level").set_value(2)
    trained.run()
    _ok(trained)
    # the confusion heat map follows the depth (figures are kept per run and depth)
    heat = next(t for spec in _charts(trained) for t in spec["data"] if t["type"] == "heatmap")
    tax = _state(trained).runs[-1].taxonomy
    assert heat["y"] == [str(n) for n in tax.names[tax.levels[2]]]


def test_compare_table(trained: AppTest) -> None:
    at = trained
    at.switch_page("app_pages/compare.py")
    at.run()
    _ok(at)
    at.multiselect(key="compare_methods").set_value(["topdown", "hieron-batch"])
    at.number_input(key="compare_n_splits").set_value(2)
    at.run()
    names = [display_name("topdown"), display_name("hieron-batch")]  # the labels shown
    at.selectbox(key="compare_baseline").set_value(names[0])
    at.button(key="run_compare").click()
    at.run()
    _ok(at)
    comp = _state(at).comparisons[-1]
    assert comp.plan["n_splits"] == 2
    table = next(df.value for df in at.dataframe if "method" in df.value.columns)
    assert list(table["method"]) == names
    assert all("±" in str(v) for v in table["accuracy"])
    tests = next(df.value for df in at.dataframe if "t_pvalue" in df.value.columns)
    assert list(tests["method"]) == names[1:]
    # identical splits: both methods were scored on the same test rows
    res = comp.results
    assert set(res["split"]) == {0, 1}
    assert "error_y" in json.dumps(_charts(at))  # bars with error bars
    assert at.get("download_button")  # CSV/JSON downloads


def _upload(at: AppTest, features: tuple[str, bytes], taxonomy: tuple[str, bytes] | None) -> None:
    at.switch_page("app_pages/data.py")
    at.run()
    at.file_uploader(key="upload_features").set_value((*features, "text/plain"))
    if taxonomy is not None:
        at.file_uploader(key="upload_taxonomy").set_value((*taxonomy, "text/plain"))
    at.run()
    at.button(key="use_upload").click()
    at.run()


def test_uploads_good_and_malformed_keep_earlier_runs() -> None:
    at = _new()
    _train(at, "hieron-batch")
    state = _state(at)
    assert len(state.runs) == 1
    before = dict(state.datasets)

    # malformed features: an error message, no traceback, nothing lost
    _upload(at, ("broken.csv", b"size,label\n1.0,cat\nfast,dog\n"), None)
    assert not at.exception
    assert at.error and "broken.csv" in at.error[0].value
    assert len(_state(at).runs) == 1 and dict(_state(at).datasets) == before

    # a taxonomy with a cycle
    _upload(
        at,
        ("example_names.csv", (DATA / "example_names.csv").read_bytes()),
        ("cycle.txt", b"root a\na b\nb a\n"),
    )
    assert not at.exception
    assert at.error and "cycle" in at.error[0].value
    assert len(_state(at).runs) == 1 and dict(_state(at).datasets) == before

    # a binary file
    _upload(at, ("noise.csv", bytes(range(256)) * 4), None)
    assert not at.exception and at.error
    assert len(_state(at).runs) == 1

    # a good CSV with its JSON taxonomy becomes the current data set
    _upload(
        at,
        ("example_names.csv", (DATA / "example_names.csv").read_bytes()),
        ("taxonomy.json", (DATA / "taxonomy.json").read_bytes()),
    )
    _ok(at)
    ds = _state(at).dataset
    assert ds is not None and ds.source == "upload"
    assert ds.train.n_samples + ds.test.n_samples == 30
    assert "penguin" in ds.taxonomy
    # the validation report
    assert {m.label for m in at.metric} >= {"examples", "nodes", "leaves", "depth"}
    # the earlier run is still listed, and a new run trains on the upload
    _train(at, "topdown")
    state = _state(at)
    assert [r.dataset_name for r in state.runs] == [state.runs[0].dataset_name, ds.name]
    table = next(df.value for df in at.dataframe if "run" in df.value.columns)
    assert len(table) == 2


def test_split_with_a_seed_is_reproducible() -> None:
    at = _new()
    at.switch_page("app_pages/data.py")
    at.run()
    at.radio(key="split_mode").set_value("random")
    at.run()
    at.slider(key="split_test_size").set_value(0.4)
    at.number_input(key="split_seed").set_value(7)
    at.run()
    at.button(key="apply_split").click()
    at.run()
    _ok(at)
    first = _state(at).dataset
    at.button(key="apply_split").click()
    at.run()
    second = _state(at).dataset
    assert first.split == {"mode": "random", "test_size": 0.4, "seed": 7}
    assert (first.test.y == second.test.y).all()
    n = first.train.n_samples + first.test.n_samples
    assert abs(first.test.n_samples - 0.4 * n) <= 1


def test_every_registered_method_gets_its_widgets() -> None:
    at = _new()
    at.switch_page("app_pages/train.py")
    at.run()
    offered = at.selectbox(key="train_method").options
    # the options read as the cards name the methods (never the registry's code name)
    by_title = {str(get_method(n).card.title): n for n in list_methods()}
    assert len(by_title) == len(list_methods())
    for name in list_methods():
        spec = get_method(name)
        if spec.multilabel and not spec.estimator._supports_multilabel:
            continue
        assert str(spec.card.title) in offered, name
    for opt in offered:
        name = by_title[opt]
        at.selectbox(key="train_method").set_value(name)
        at.run()
        _ok_or_admissibility(at)
        spec = get_method(name)
        # the parameters the default settings use (all of them where the registry cannot say)
        for p in active_params(spec, spec.defaults()):
            key = f"param:{name}:{p.name}"
            assert any(w.key == key for w in at.main), (name, p.name)


def _ok_or_admissibility(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def test_orthognl_admissibility_indicator() -> None:
    assert "orthognl" in list_methods()  # a registry without it must fail here, not skip
    from hierlab.core.regularizers import max_admissible_alpha

    at = _new()
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value("orthognl")
    at.run()
    tax = _state(at).dataset.taxonomy
    amax = max_admissible_alpha(tax)
    alpha = at.number_input(key="param:orthognl:alpha").value
    assert alpha < amax  # the suggested alpha is admissible: one click trains
    assert any("λ_min" in s.value for s in at.success)
    assert not at.button(key="train").disabled
    at.number_input(key="param:orthognl:alpha").set_value(min(100.0, 1.5 * amax))
    at.run()
    assert any("Not admissible" in e.value for e in at.error)
    assert at.button(key="train").disabled


def test_orthognl_paper_preset_shows_the_alpha_it_runs() -> None:
    """The paper preset's alpha="paper" appears as the number it resolves to (1 where
    admissible), not as an empty box read back as "auto"."""
    from hierlab.core.regularizers import max_admissible_alpha
    from hierlab.methods.orthogonal.estimators import resolve_alpha

    at = _new()
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value("orthognl")
    at.run()
    settings = next(r for r in at.radio if r.label == "Settings")
    settings.set_value("paper")
    at.run()
    tax = _state(at).dataset.taxonomy
    want = resolve_alpha("paper", tax, max_admissible_alpha(tax))
    assert at.number_input(key="param:orthognl:alpha").value == pytest.approx(want, rel=1e-2)
    settings = next(r for r in at.radio if r.label == "Settings")
    settings.set_value("fast")
    at.run()
    want = resolve_alpha("auto", tax, max_admissible_alpha(tax))
    assert at.number_input(key="param:orthognl:alpha").value == pytest.approx(want, rel=1e-2)


def test_taxonomy_page_induces_and_trains_on_the_induced_tree() -> None:
    at = _new()
    at.switch_page("app_pages/data.py")
    at.run()
    at.selectbox(key="builtin_choice").set_value("catalog:hierarchical-text")
    at.run()
    at.button(key="load_builtin").click()
    at.run()
    _ok(at)
    at.switch_page("app_pages/taxonomy.py")
    at.run()
    _ok(at)
    assert len(at.get("plotly_chart")) == 1
    at.button(key="induce").click()
    at.run()
    _ok(at)
    assert len(at.get("plotly_chart")) == 2  # given and induced side by side
    induced = next(iter(_state(at).induced.values()))
    hsic = induced["hsic"]
    itax = induced["taxonomy"]
    assert np.isnan(hsic[itax.leaves]).all() and (hsic[itax.internal_nodes] >= 0).all()
    spec = json.loads(at.get("plotly_chart")[1].proto.spec)
    nodes = next(t for t in spec["data"] if t.get("name") == "nodes")
    colour = _values(nodes["marker"]["color"])
    np.testing.assert_allclose(colour, hsic)  # the induced tree is coloured by HSIC
    mse = [m for m in at.metric if "MSE" in m.label]
    assert mse and float(mse[0].value) >= 0.0
    at.checkbox(key="use_induced").check()
    at.run()
    _train(at, "hieron-batch")
    run = _state(at).runs[-1]
    assert run.taxonomy_source == "induced"
    assert run.taxonomy.n_nodes != _state(at).dataset.taxonomy.n_nodes or (
        run.taxonomy != _state(at).dataset.taxonomy
    )


def test_explore_colours_mftree_induced_tree_by_split_hsic() -> None:
    at = _new()
    _train(at, "mftree")
    at.switch_page("app_pages/explore.py")
    at.run()
    _ok(at)
    run = _state(at).runs[-1]
    hsic = run.estimator.tree_.node_hsic()
    tax = run.estimator.taxonomy_
    assert np.isfinite(hsic[tax.internal_nodes]).all() and np.isnan(hsic[tax.leaves]).all()
    induced = [
        spec
        for spec in _charts(at)
        if "Induced" in str(spec["layout"].get("title", {}).get("text", ""))
    ]
    assert len(induced) == 1
    nodes = next(t for t in induced[0]["data"] if t.get("name") == "nodes")
    np.testing.assert_allclose(_values(nodes["marker"]["color"]), hsic)
    assert any("HSIC" in c.value for c in at.caption)


def test_sessions_do_not_share_runs(trained: AppTest) -> None:
    other = _new()
    assert len(_state(other).runs) == 0
    assert len(_state(trained).runs) >= 1


def test_every_example_file_loads_from_the_data_page() -> None:
    at = _new()
    at.switch_page("app_pages/data.py")
    at.run()
    from app.state import builtin_choices

    files = [b.key for b in builtin_choices() if b.kind == "example"]
    assert len(files) >= len(list(DATA.glob("example*")))
    for key in files:
        at.selectbox(key="builtin_choice").set_value(key)
        at.run()
        at.button(key="load_builtin").click()
        at.run()
        _ok(at)
        assert _state(at).dataset.key == key.split(":", 1)[1]


def test_switching_between_session_datasets() -> None:
    at = _new()
    first = _state(at).current
    at.switch_page("app_pages/data.py")
    at.run()
    at.selectbox(key="builtin_choice").set_value("catalog:hierarchical-text")
    at.run()
    at.button(key="load_builtin").click()
    at.run()
    assert _state(at).current == "hierarchical-text"
    at.selectbox(key="current_dataset").set_value(first)
    at.run()
    _ok(at)
    assert _state(at).current == first
    assert set(_state(at).datasets) == {first, "hierarchical-text"}


def test_choose_C_for_me_trains_with_the_tuned_C() -> None:
    at = _new()
    at.switch_page("app_pages/train.py")
    at.run()
    at.selectbox(key="train_method").set_value("topdown")
    at.run()
    at.checkbox(key="train_choose_C").check()
    at.run()
    at.button(key="train").click()
    at.run()
    _ok(at)
    _finish_jobs(at)
    _ok(at)
    state = _state(at)
    tuned = state.tuned[state.current]
    path = pd.DataFrame(tuned["path"])
    best = tuned["best_C"]
    assert tuned["method"] == "topdown" and len(path) == 9
    assert best == path["C"].iloc[int(path["score"].to_numpy().argmax())]
    run = state.runs[-1]
    assert run.method == "topdown" and run.params["C"] == best
    assert any(e.label.startswith("C chosen for Top-down") for e in at.expander)
    # another data set: the search on the first one is not shown as this one's
    at.switch_page("app_pages/data.py")
    at.run()
    at.selectbox(key="builtin_choice").set_value("catalog:hierarchical-text")
    at.run()
    at.button(key="load_builtin").click()
    at.run()
    at.switch_page("app_pages/train.py")
    at.run()
    _ok(at)
    assert not any(e.label.startswith("C chosen for") for e in at.expander)


def test_explore_explains_nodes_cells_paths_and_probabilities(trained: AppTest) -> None:
    """Issue #20 in the app: a node's top words, a confusion cell's examples, the words that
    drove each step of an example's path, and the probability curves."""
    at = trained
    at.switch_page("app_pages/explore.py")
    at.run()
    _ok(at)
    run = _state(at).runs[-1]
    tax = run.estimator.taxonomy_
    node = str(tax.names[tax.leaves[0]])
    at.selectbox(key="explore_node").set_value(node)
    at.run()
    _ok(at)
    words = next(
        df.value for df in at.dataframe if list(df.value.columns) == ["rank", "feature", "weight"]
    )
    expected = hierlab.explain(run.estimator, node, k=15)
    assert list(words["weight"]) == pytest.approx(list(expected["weight"]))
    # a confusion cell lists exactly its examples
    cells = at.selectbox(key="explore_cell").options
    cell = cells[-1]
    at.selectbox(key="explore_cell").set_value(cell)
    at.run()
    _ok(at)
    listing = next(df.value for df in at.dataframe if "predicted path" in df.value.columns)
    true_node, pred_node = cell.split(" → ")
    level = int(at.slider(key="explore_level").value)  # the confusion's depth
    assert len(listing) > 0
    assert all(p.split(" / ")[level - 1] == true_node for p in listing["true path"])
    assert all(p.split(" / ")[level - 1] == pred_node for p in listing["predicted path"])
    # the example's path, step by step, with its words
    steps = next(df.value for df in at.dataframe if "rival" in df.value.columns)
    assert list(steps["step"]) == list(range(1, len(steps) + 1))
    assert (steps["margin"] >= 0).all()
    # probabilities: PR curve, reliability diagram, precision against depth
    names = _trace_names(at)
    assert "perfect" in names  # the reliability diagram's diagonal
    assert any(n.startswith(run.label) and "AU(PRC)" in n for n in names)
    at.select_slider(key="explore_threshold").set_value(0.9)
    at.run()
    _ok(at)
    row = next(df.value for df in at.dataframe if "mean_depth" in df.value.columns)
    assert list(row["threshold"]) == [0.9]


def test_compare_shows_the_runs_probability_curves(trained: AppTest) -> None:
    at = trained
    at.switch_page("app_pages/compare.py")
    at.run()
    _ok(at)
    table = next(df.value for df in at.dataframe if "AU(PRC)" in df.value.columns)
    run = _state(at).runs[-1]
    assert run.label in list(table["run"])
    assert 0.0 < float(table["AU(PRC)"].iloc[-1]) <= 1.0
    names = _trace_names(at)
    assert "perfect" in names and any("AU(PRC)" in n for n in names)
