"""Explore and Compare draw each run's views computed once (``app.state.views``), not per page
visit; a large tree gets the views that scale (most-confused pairs, a collapsed tree)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from app.state import load_builtin
from app.state.views import COMPUTED
from hierlab.evaluation.metrics import confusion_at_level, error_per_level
from hierlab.evaluation.views import collapsed_subtree
from tests.app.test_app_pages import _finish_jobs, _values

#: Explore's node budget of a drawn tree (``app/app_pages/explore.py``)
TREE_NODES = 400

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app" / "streamlit_app.py")


def _ok(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _drawn(tree: dict) -> list[str]:
    """The node names of a taxonomy figure (its hover text starts with the name)."""
    nodes = next(t for t in tree["data"] if t.get("name") == "nodes")
    return [h.split("<br>")[0] for h in nodes["hovertext"]]


def _page(at: AppTest, name: str) -> None:
    at.switch_page(f"app_pages/{name}.py")
    at.run()
    _ok(at)


def test_views_are_computed_once_per_run_and_drawn_by_the_pages() -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    _page(at, "train")
    before = COMPUTED.copy()
    at.button(key="train").click()
    at.run()
    _finish_jobs(at)
    _ok(at)
    run = at.session_state["hierlab_state"].runs[-1]
    assert COMPUTED["views"] - before["views"] == 1  # at the end of training
    for _ in range(2):
        _page(at, "explore")
        at.checkbox(key="explore_only_wrong").check()
        at.run()
        _ok(at)
        at.checkbox(key="explore_only_wrong").uncheck()
        at.run()
        _page(at, "compare")
    assert COMPUTED["views"] - before["views"] == 1
    assert COMPUTED["probabilities"] - before["probabilities"] == 1
    # what the pages show is the run's cached views
    _page(at, "explore")
    levels = next(c for c in _charts(at) if "level" in json.dumps(c["layout"]).lower())
    expected = error_per_level(run.y_test, run.y_pred, run.taxonomy)
    assert run.views.summary.per_level["error"].tolist() == expected["error"].tolist()
    assert levels["data"]
    table = next(df.value for df in at.dataframe if "mean_depth" in df.value.columns)
    assert len(table) == 1
    report = run.views.proba.future.result()
    assert "node_proba" not in report  # no (n_samples, n_nodes) matrix kept in the session
    assert len(report["pr_curve"]) <= 2000
    _page(at, "compare")
    proba = next(df.value for df in at.dataframe if "AU(PRC)" in df.value.columns)
    assert float(proba["AU(PRC)"].iloc[0]) == report["au_prc"]


def test_a_large_tree_gets_most_confused_pairs_and_a_collapsed_tree() -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    entry = load_builtin(
        "catalog:hierarchical-text",
        {"n_samples": 2500, "n_classes": 450, "n_features": 1500, "random_state": 0},
    )
    state = at.session_state["hierlab_state"]
    state.add_dataset(entry)
    assert entry.taxonomy.n_nodes > TREE_NODES
    _page(at, "train")
    at.selectbox(key="train_method").set_value("topdown")
    at.run()
    at.button(key="train").click()
    at.run()
    _finish_jobs(at)
    _ok(at)
    run = state.runs[-1]
    _page(at, "explore")
    tax = run.taxonomy
    tree = next(c for c in _charts(at) if any(t.get("name") == "nodes" for t in c["data"]))
    assert at.selectbox(key="explore_subtree").value == str(tax.names[0])
    assert _drawn(tree) == [str(tax.names[i]) for i in collapsed_subtree(tax, 0, TREE_NODES)]
    assert len(_drawn(tree)) <= TREE_NODES
    depth = tax.max_depth
    at.slider(key="explore_level").set_value(depth)
    at.run()
    _ok(at)
    pairs = at.dataframe(key="explore_pairs").value
    table = confusion_at_level(run.y_test, run.y_pred, tax, depth)
    z = table.to_numpy().copy()
    for i, name in enumerate(table.index):
        if name in table.columns:
            z[i, list(table.columns).index(name)] = 0
    # the largest off-diagonal cells of the full table, in order
    assert list(pairs["count"]) == sorted(z[z > 0].tolist(), reverse=True)[: len(pairs)]
    assert not any(c.get("data", [{}])[0].get("type") == "heatmap" for c in _charts(at))
    # drill down: a child of the root as the subtree drawn
    child = str(tax.names[tax.children(0)[0]])
    at.selectbox(key="explore_subtree").set_value(child)
    at.run()
    _ok(at)
    tree = next(c for c in _charts(at) if any(t.get("name") == "nodes" for t in c["data"]))
    assert _drawn(tree) == [str(tax.names[i]) for i in collapsed_subtree(tax, child, TREE_NODES)]


def test_the_kept_pr_curve_draws_the_same_chart_as_the_full_one() -> None:
    import numpy as np
    import pandas as pd

    from app.state.views import _thin
    from hierlab.plots import pr_curve_figure

    rng = np.random.default_rng(0)
    n = 12_345
    full = pd.DataFrame(
        {
            "threshold": np.sort(rng.random(n))[::-1],
            "precision": rng.random(n),
            "recall": np.sort(rng.random(n)),
        }
    )
    full.attrs["au_prc"] = 0.5
    kept = _thin(full)
    assert len(kept) <= 2000 and kept.attrs["au_prc"] == 0.5
    a, b = pr_curve_figure({"m": full}).data[0], pr_curve_figure({"m": kept}).data[0]
    assert a.name == b.name
    for attr in ("x", "y", "customdata"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))


def _pending_report_page() -> None:
    """A page section whose report is still being computed (a Future never resolved)."""
    from concurrent.futures import Future

    import streamlit as st

    from app.state.views import ProbabilityJob
    from app.ui.reports import ready_reports

    job = ProbabilityJob(future=Future(), fraction=0.4, stage="node probabilities")
    out = ready_reports([("#1 X", job)])
    st.markdown("no report yet" if out is None else "drawn")


def test_a_report_still_computing_shows_its_progress_not_the_section() -> None:
    at = AppTest.from_function(_pending_report_page, default_timeout=30)
    at.run()
    _ok(at)
    assert [m.value for m in at.markdown] == ["no report yet"]
    bars = at.get("progress")
    assert bars and "Calibrated probabilities of #1 X: node probabilities (40%" in str(
        bars[-1].proto.text
    )


def test_the_taxonomy_page_draws_a_2000_leaf_tree_collapsed_with_drill_down() -> None:
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    entry = load_builtin(
        "catalog:hierarchical-text",
        {"n_samples": 3000, "n_classes": 2000, "n_features": 500, "random_state": 0},
    )
    state = at.session_state["hierlab_state"]
    state.add_dataset(entry)
    tax = entry.taxonomy
    assert len(tax.leaves) >= 2000
    for kind in ("tree", "sunburst"):
        _page(at, "taxonomy")
        at.radio(key="tax_kind").set_value(kind)
        at.run()
        _ok(at)
        assert at.selectbox(key="tax_subtree").value == str(tax.names[0])
        (fig,) = _charts(at)
        kept = [str(tax.names[i]) for i in collapsed_subtree(tax, 0, TREE_NODES)]
        assert len(kept) <= TREE_NODES < tax.n_nodes
        if kind == "tree":
            assert _drawn(fig) == kept
        else:
            (trace,) = fig["data"]
            assert list(trace["ids"]) == kept
            sizes = entry.train.examples_per_node(closed=True).to_numpy()
            ids = tax.index(np.asarray(kept, dtype=object))
            assert list(_values(trace["values"])) == sizes[ids].tolist()
    # drill down: the deepest inner node's subtree, drawn whole (it is small)
    inner = [i for i in range(tax.n_nodes) if not tax.is_leaf[i]]
    deep = max(inner, key=lambda i: int(tax.depth[i]))
    at.selectbox(key="tax_subtree").set_value(str(tax.names[deep]))
    at.run()
    _ok(at)
    (fig,) = _charts(at)
    below = tax.descendants(deep, include_self=True)
    assert sorted(fig["data"][0]["ids"]) == sorted(str(tax.names[i]) for i in below)
