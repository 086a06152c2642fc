"""Each plot builder returns a plotly Figure whose traces carry the expected data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import scipy.sparse as sp

from hierlab import plots as P
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation import metrics as M


@pytest.fixture
def tax() -> Taxonomy:
    return Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])


@pytest.fixture
def labels():
    yt = ["a1", "a2", "b1", "b2", "a1", "b1"]
    yp = ["a1", "a1", "b1", "a2", "a2", "b2"]
    return yt, yp


def test_layout_places_parents_above_and_between_children(tax):
    x, y = P.taxonomy_layout(tax)
    assert np.array_equal(y, -tax.depth)
    for v in tax.internal_nodes:
        kids = tax.children(v)
        assert x[kids].min() <= x[v] <= x[kids].max()
    leaf_x = np.sort(x[tax.leaves])
    assert np.array_equal(leaf_x, np.arange(len(tax.leaves)))  # leaves evenly spaced


def test_taxonomy_figure_tree_with_values(tax, labels):
    err = M.error_per_node(*labels, tax)
    fig = P.taxonomy_figure(tax, node_values=err, node_sizes=err.set_index("node")["n"])
    assert isinstance(fig, go.Figure)
    edges, nodes = fig.data
    assert edges.mode == "lines" and nodes.mode.startswith("markers")
    assert len(nodes.x) == tax.n_nodes
    # one segment (3 points incl. the None gap) per edge
    assert len(edges.x) == 3 * len(tax.to_edges())
    np.testing.assert_allclose(nodes.marker.color, err["error"].to_numpy(), equal_nan=True)
    assert list(nodes.text) == [str(n) for n in tax.names]
    # a plain mapping by name works, missing nodes are nan
    fig2 = P.taxonomy_figure(tax, node_values={"a": 0.5})
    col = np.asarray(fig2.data[1].marker.color, dtype=float)
    assert col[tax.node_id("a")] == 0.5 and np.isnan(col[tax.node_id("b")])


def test_taxonomy_figure_dag_draws_every_edge():
    dag = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    fig = P.taxonomy_figure(dag)
    assert len(fig.data[0].x) == 3 * 4
    with pytest.raises(DataError, match="tree"):
        P.taxonomy_figure(dag, kind="sunburst")


@pytest.mark.parametrize("kind, cls", [("sunburst", go.Sunburst), ("treemap", go.Treemap)])
def test_taxonomy_figure_sunburst_treemap(tax, kind, cls):
    vals = np.arange(tax.n_nodes, dtype=float)
    fig = P.taxonomy_figure(tax, node_values=vals, node_sizes=tax.subtree_size, kind=kind)
    (tr,) = fig.data
    assert isinstance(tr, cls)
    assert list(tr.ids) == [str(n) for n in tax.names]
    assert tr.parents[0] == "" and tr.parents[tax.node_id("a1")] == "a"
    np.testing.assert_allclose(tr.marker.colors, vals)
    np.testing.assert_allclose(tr.values, tax.subtree_size)


def test_taxonomy_figure_bad_inputs(tax):
    with pytest.raises(DataError, match="one value per node"):
        P.taxonomy_figure(tax, node_values=[1.0, 2.0])
    with pytest.raises(DataError, match="kind"):
        P.taxonomy_figure(tax, kind="pie")


def test_taxonomy_figure_hundreds_of_nodes():
    rng = np.random.default_rng(0)
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, 800)]
    big = Taxonomy.from_parent_array(parent)
    fig = P.taxonomy_figure(big, node_values=rng.random(800))
    assert len(fig.data) == 2 and len(fig.data[1].x) == 800
    assert fig.data[1].text is None  # no labels for large trees


def history(n: int, lower: bool) -> pd.DataFrame:
    it = np.arange(1, n + 1)
    upper = 1 + 1 / it
    low = 1 - 1 / it if lower else [None] * n
    df = pd.DataFrame({"iteration": it, "elapsed": it * 0.1, "upper": upper, "lower": low})
    df["gap"] = df["upper"] - pd.to_numeric(df["lower"]) if lower else None
    return df


def test_bounds_figure_with_and_without_lower_bound():
    fig = P.bounds_figure({"ORTHOGNL": history(10, True), "Hieron": history(5, False)})
    assert isinstance(fig, go.Figure)
    names = [t.name for t in fig.data]
    assert names == ["ORTHOGNL: upper", "ORTHOGNL: lower", "ORTHOGNL: gap", "Hieron: objective"]
    gap = fig.data[2]
    np.testing.assert_allclose(gap.y, 2 / np.arange(1, 11))
    assert fig.layout.yaxis2.type == "log"
    single = P.bounds_figure(history(4, True), x="elapsed")
    np.testing.assert_allclose(single.data[0].x, np.arange(1, 5) * 0.1)
    assert [t.name for t in single.data] == ["upper", "lower", "gap"]


def test_error_per_level_figure(tax, labels):
    df = M.error_per_level(*labels, tax)
    fig = P.error_per_level_figure({"a": df, "b": df.assign(error=df["error"] / 2)})
    assert [t.name for t in fig.data] == ["a", "b"]
    assert all(isinstance(t, go.Bar) for t in fig.data)
    np.testing.assert_allclose(fig.data[1].y, df["error"] / 2)
    assert list(fig.data[0].x) == df["level"].tolist()
    one = P.error_per_level_figure(df)
    assert len(one.data) == 1


def test_gamma_histogram_figure_and_difference(tax, labels):
    yt, yp = labels
    h1 = M.gamma_histogram(yt, yp, tax)
    h2 = M.gamma_histogram(yt, yt, tax)  # perfect: all mass at 0
    fig = P.gamma_histogram_figure({"Hieron": h2, "flat": h1})
    assert [t.name for t in fig.data] == ["Hieron", "flat"]
    np.testing.assert_allclose(fig.data[1].y, h1["fraction"])
    diff = P.gamma_histogram_figure({"Hieron": h2, "flat": h1}, difference=("Hieron", "flat"))
    (tr,) = diff.data
    expect = np.zeros(len(h1))
    expect[0] = 1.0
    np.testing.assert_allclose(tr.y, expect - h1["fraction"].to_numpy())
    counts = P.gamma_histogram_figure(h1, normalize=False)
    np.testing.assert_allclose(counts.data[0].y, h1["count"])
    with pytest.raises(DataError, match="nope"):
        P.gamma_histogram_figure({"a": h1}, difference=("a", "nope"))


def test_metric_bars_figure_from_runs_and_summaries():
    runs = pd.DataFrame(
        {
            "method": ["A", "A", "B", "B"] * 2,
            "metric": ["acc"] * 4 + ["f1"] * 4,
            "value": [0.8, 0.9, 0.6, 0.7, 0.5, 0.7, 0.4, 0.4],
        }
    )
    fig = P.metric_bars_figure(runs)
    assert [t.name for t in fig.data] == ["acc", "f1"]
    acc = fig.data[0]
    assert list(acc.x) == ["A", "B"]
    np.testing.assert_allclose(acc.y, [0.85, 0.65])
    np.testing.assert_allclose(acc.error_y.array, [np.std([0.8, 0.9], ddof=1)] * 2)
    wide = pd.DataFrame({"method": ["A", "B"], "acc": [0.1, 0.2], "f1": [0.3, 0.4]})
    fig2 = P.metric_bars_figure(wide, metrics=["f1"])
    assert [t.name for t in fig2.data] == ["f1"]
    named = P.metric_bars_figure(runs.replace({"acc": "accuracy_ancestor"}))
    assert [t.name for t in named.data] == ["accuracy (ancestor rule)", "f1"]
    np.testing.assert_allclose(fig2.data[0].y, [0.3, 0.4])
    assert fig2.data[0].error_y.array is None


def test_weight_norms_figure(tax):
    rng = np.random.default_rng(0)
    W = rng.normal(size=(tax.n_nodes, 5))
    fig = P.weight_norms_figure(W, tax)
    got = {}
    for t in fig.data:
        got.update(dict(zip(t.x, t.y)))
    for i, nm in enumerate(tax.names):
        assert got[str(nm)] == pytest.approx(np.linalg.norm(W[i]))
    assert len(fig.data) == tax.max_depth + 1
    fs = P.weight_norms_figure(sp.csr_matrix(W), tax, kind="tree")
    np.testing.assert_allclose(fs.data[1].marker.color, np.linalg.norm(W, axis=1))
    with pytest.raises(DataError, match="rows"):
        P.weight_norms_figure(W[:3], tax)


def test_confusion_figure_row_normalised() -> None:
    import pandas as pd

    from hierlab.plots import confusion_figure

    conf = pd.DataFrame([[3, 1], [0, 0]], index=["a", "b"], columns=["a", "b"])
    fig = confusion_figure(conf, title="t")
    z = np.asarray(fig.data[0].z)
    np.testing.assert_allclose(z, [[0.75, 0.25], [0.0, 0.0]])
    assert list(fig.data[0].x) == ["a", "b"]


def test_probability_figures_carry_their_curves(tax):
    from hierlab.evaluation import curves

    rng = np.random.default_rng(0)
    y = ["a1", "a2", "b1", "b2"] * 10
    Pn = rng.random((40, tax.n_nodes))
    Pn[:, 0] = 1.0
    pr = curves.pr_curve(y, Pn, tax)
    fig = P.pr_curve_figure({"m": pr})
    assert isinstance(fig, go.Figure) and "AU(PRC)" in fig.data[0].name
    np.testing.assert_allclose(fig.data[0].x[1:], pr["recall"])
    rel = curves.reliability(y, Pn, tax)
    fig = P.reliability_figure({"m": rel, "n": rel})
    assert len(fig.data) == 3  # the diagonal and two methods
    np.testing.assert_allclose(fig.data[1].y, rel["observed"])
    table = curves.threshold_curve(y, Pn, y, tax, thresholds=[0.0, 0.5])
    fig = P.threshold_figure(table)
    np.testing.assert_allclose(fig.data[0].x, table["mean_depth"])
    expl = pd.DataFrame({"feature": ["u", "v"], "weight": [0.5, -0.2]})
    fig = P.explanation_figure(expl, title="node a")
    assert list(fig.data[0].y) == ["v", "u"]  # the strongest on top


def test_tree_labels_drawn_on_small_trees_hover_names_always() -> None:
    from hierlab.core.taxonomy import Taxonomy
    from hierlab.plots import TREE_LABELS_UP_TO, taxonomy_figure

    def fig_of(n: int):
        tax = Taxonomy.flat([f"leaf{i}" for i in range(n - 1)])
        return tax, taxonomy_figure(tax).data[-1]

    tax, small = fig_of(TREE_LABELS_UP_TO)
    assert small.mode == "markers+text" and list(small.text) == [str(v) for v in tax.names]
    tax, big = fig_of(TREE_LABELS_UP_TO + 1)
    assert big.mode == "markers" and big.text is None
    assert all(str(name) in h for name, h in zip(tax.names, big.hovertext))
