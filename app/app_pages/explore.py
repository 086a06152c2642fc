"""Explore a run: per-node error on the tree (click a node: the words that push towards it),
per-level error, gamma histogram, confusion (click a cell: its examples), weight norms, the
calibrated probabilities (precision-recall, reliability, precision against depth as the
threshold moves), and single predictions with the words that drove each step of their path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app.state import AppState, Run, get_state, session_dict
from app.state.data import example_texts
from app.state.views import THRESHOLDS, Summary, has_probabilities, run_views
from app.ui.errors import show_error
from app.ui.model_io import run_files
from app.ui.reports import ready_reports
from app.ui.widgets import calibration_caption, fmt, number_columns, trivial_warning
from hierlab import HierDataset, Taxonomy, explain, plots
from hierlab.evaluation.metrics import ancestor_at_depth, confusion_at_level, metric_label
from hierlab.evaluation.views import STOPPED_ABOVE, collapsed_taxonomy

#: trees with more nodes are drawn collapsed to their top levels, with drill-down by subtree
TREE_NODES = 400
#: levels with more nodes show the most-confused pairs instead of the heat map
HEATMAP_NODES = 30
#: most-confused pairs listed; confusion cells offered for their examples
TOP_PAIRS, TOP_CELLS = 50, 500
#: rows of a table of examples (the text of each is looked up; more would not be read)
MAX_LISTED = 2000


def cached(run: Run, key: Any, build: Callable[[], Any]) -> Any:
    """``build()``, computed once per run shown and kept in the session under ``key``."""
    built: dict[Any, Any] = session_dict("explore_figures")
    if built.get("run") != run.id:
        built.clear()
        built["run"] = run.id
    if key not in built:
        built[key] = build()
    return built[key]


def chart(
    what: str,
    key: str,
    build: Callable[[], Any],
    run: Run,
    *variant: Any,
    on_select: Callable[[], None] | None = None,
) -> None:
    """Draw the figure ``build()`` returns; an error becomes a message naming ``what``.

    A figure is built once per run (and ``variant``, e.g. the confusion depth) and kept in the
    session for the run shown: a rerun (another example row, "Only mistakes") redraws it
    without recomputing the metrics (about a second for 22,513 IPC test rows). With
    ``on_select``, clicking a point selects it and calls ``on_select`` before the rerun.
    """
    try:
        fig = cached(run, (key, *variant), build)
        if on_select is None:
            st.plotly_chart(fig, key=key, theme=None)
        else:
            st.plotly_chart(fig, key=key, theme=None, on_select=on_select, selection_mode="points")
    except Exception as exc:
        show_error(exc, what)


def _selected_points(key: str) -> list[dict[str, Any]]:
    """The points selected in the chart ``key`` (its selection state in the session)."""
    event = st.session_state.get(key)
    if not event:
        return []
    return list(event["selection"]["points"])


def _on_node_click(drawn: Taxonomy, tax: Taxonomy) -> None:
    """A click on the per-node tree: explain the clicked node; a node drawn without its
    children (the tree is collapsed below it) opens as the subtree shown."""
    for pt in _selected_points("explore_heat"):
        data = pt.get("customdata")
        idx = data[0] if isinstance(data, list | tuple) else data
        if idx is None:
            continue
        name = str(drawn.names[int(idx)])
        st.session_state["explore_node"] = name
        if drawn.is_leaf[int(idx)] and not tax.is_leaf[int(tax.index(name))]:
            st.session_state["explore_subtree"] = name
        return


def _on_cell_click() -> None:
    """A click on a confusion cell: list its examples."""
    for pt in _selected_points("explore_confusion"):
        data = pt.get("customdata")
        if isinstance(data, list | tuple) and len(data) == 2:
            st.session_state["explore_cell"] = f"{data[0]} → {data[1]}"
            return


def test_rows(state: AppState, run: Run) -> HierDataset | None:
    """The run's test split when the session still holds those rows (else None)."""
    entry = state.datasets.get(run.dataset_key)
    if entry is None or entry.split != run.split or entry.test.n_samples != len(run.y_test):
        return None
    return entry.test


def feature_names(state: AppState, run: Run) -> list[str] | None:
    """The data set's feature names (the vocabulary of a text data set)."""
    entry = state.datasets.get(run.dataset_key)
    return None if entry is None else entry.train.feature_names


def per_node_chart(summary: Summary, tax: Taxonomy, root: str | None = None) -> Any:
    """The taxonomy (or the subtree under ``root``, collapsed to :data:`TREE_NODES` nodes)
    coloured by the error per node, sized by the test examples below; and the tree drawn."""
    if root is None:
        drawn, ids = tax, np.arange(tax.n_nodes)
    else:
        drawn, ids = collapsed_taxonomy(tax, root, TREE_NODES)
    per_node = summary.per_node.iloc[ids]
    fig = plots.taxonomy_figure(
        drawn,
        node_values=per_node["error"].to_numpy(),
        node_sizes=per_node["n"].to_numpy(),
        value_name="error",
        title="Error per node: share of the test examples below a node "
        "whose prediction is not below it (size: examples)",
    )
    return fig, drawn


def tree_view(run: Run, summary: Summary, tax: Taxonomy) -> None:
    """The per-node error on the tree; a large tree collapsed to its top levels, with a
    subtree to open (chosen, or clicked on a collapsed node)."""
    root = None
    if tax.n_nodes > TREE_NODES:
        inner = [str(tax.names[i]) for i in range(tax.n_nodes) if not tax.is_leaf[i]]
        if st.session_state.get("explore_subtree") not in inner:
            st.session_state["explore_subtree"] = inner[0]
        root = st.selectbox(
            f"Subtree ({tax.n_nodes} nodes: drawn down to the level that keeps it under "
            f"{TREE_NODES}; click a collapsed node to open it)",
            inner,
            key="explore_subtree",
        )
    try:
        fig, drawn = cached(run, ("explore_heat", root), lambda: per_node_chart(summary, tax, root))
        st.plotly_chart(
            fig,
            key="explore_heat",
            theme=None,
            on_select=lambda: _on_node_click(drawn, tax),
            selection_mode="points",
        )
    except Exception as exc:
        show_error(exc, "Per-node error")
    st.caption("Click a node to see the words (features) that push an example towards it.")


def weight_norms(run: Run, etax: Taxonomy) -> None:
    """The norms of the weight vectors per node, when the model has one per node."""
    coef = getattr(run.estimator, "coef_", None)
    if coef is not None and getattr(coef, "shape", (0,))[0] == etax.n_nodes:
        chart("Weight norms", "explore_norms", lambda: plots.weight_norms_figure(coef, etax), run)
    else:
        st.info(f"{run.name} has no weight vector per node (coef_ of shape (n_nodes, n_features)).")


def figures(run: Run, summary: Summary, tax: Taxonomy, etax: Taxonomy) -> None:
    """Every figure of the run: per node, per level, gamma histogram, confusion, weights."""
    tree_view(run, summary, tax)
    c1, c2 = st.columns(2)
    with c1:
        chart(
            "Error per level",
            "explore_levels",
            lambda: plots.error_per_level_figure({run.label: summary.per_level}),
            run,
        )
    with c2:
        chart(
            "Gamma histogram",
            "explore_gamma",
            lambda: plots.gamma_histogram_figure({run.label: summary.gamma_hist}),
            run,
        )
    c3, c4 = st.columns(2)
    with c3:
        level = st.slider(
            "Confusion at depth",
            1,
            max(1, tax.max_depth),
            1,
            key="explore_level",
            disabled=tax.max_depth <= 1,
        )
        confusion(run, summary, tax, level)
    with c4:
        weight_norms(run, etax)


def confusion(run: Run, summary: Summary, tax: Taxonomy, level: int) -> None:
    """The confusion at depth ``level``: a heat map on a small level, else the most-confused
    pairs (a table of the largest off-diagonal cells; never a ``K x K`` matrix)."""
    if len(tax.levels[level]) <= HEATMAP_NODES:
        chart(
            "Confusion",
            "explore_confusion",
            lambda: plots.confusion_figure(
                confusion_at_level(summary.true_ids, summary.pred_ids, tax, level),
                title=f"Confusion at depth {level}",
                clickable=True,
            ),
            run,
            level,
            on_select=_on_cell_click,
        )
        st.caption("Click a cell to list its examples.")
        return
    pairs = summary.pairs[level]
    top = pairs[~pairs["correct"]].head(TOP_PAIRS)[["true", "predicted", "count", "share"]]
    st.markdown(
        f"**Most-confused pairs at depth {level}** ({len(tax.levels[level])} nodes: "
        f"the {len(top)} largest off-diagonal cells)"
    )
    st.dataframe(
        top,
        hide_index=True,
        height=380,
        key="explore_pairs",
        on_select=lambda: _on_pair_click(top),
        selection_mode="single-row",
        column_config={
            "share": st.column_config.NumberColumn(
                "share of true", format="%.3f", help="count / test examples below the true node"
            )
        },
    )
    st.caption("Click a row to list its examples.")


def _on_pair_click(top: pd.DataFrame) -> None:
    """A click on a most-confused pair: list its examples."""
    event = st.session_state.get("explore_pairs")
    rows = list(event["selection"]["rows"]) if event else []
    if rows:
        pair = top.iloc[int(rows[0])]
        st.session_state["explore_cell"] = f"{pair['true']} → {pair['predicted']}"


def induced_tree(run: Run, tax: Taxonomy, etax: Taxonomy) -> None:
    """The tree the model routes through when it is not the data set's own."""
    if run.taxonomy_source != "induced" and etax == tax:
        return
    st.subheader("Induced taxonomy")
    by = (
        "(induced on the Taxonomy page)."
        if run.taxonomy_source == "induced"
        else f"(induced by {run.name} itself)."
    )
    hsic = getattr(getattr(run.estimator, "tree_", None), "node_hsic", None)
    values = hsic() if callable(hsic) and etax == run.estimator.taxonomy_ else None
    st.caption(
        "The tree this model routes through "
        + by
        + (" Colour: the HSIC of each split (seed 004, eq. 2)." if values is not None else "")
    )
    chart(
        "Induced taxonomy",
        "explore_induced",
        lambda: plots.taxonomy_figure(
            etax,
            node_values=values,
            value_name="HSIC of the split",
            colorscale="Viridis",
            title="Induced taxonomy",
        ),
        run,
    )


def decision_path(state: AppState, run: Run, row: int, tax: Taxonomy, etax: Taxonomy) -> list[str]:
    """The predicted path of test row ``row``, from the root: the model's own
    ``decision_path`` when the row is still in the session, else the path to the prediction."""
    data = test_rows(state, run)
    if data is not None and etax.is_tree:
        ind = run.estimator.decision_path(data.X[row : row + 1])
        on_path = np.flatnonzero(np.asarray(ind.todense()).ravel())
        return [str(etax.names[j]) for j in on_path[np.argsort(etax.depth[on_path])]]
    return [str(tax.names[j]) for j in tax.path(str(run.y_pred[row]))]


def predictions(state: AppState, run: Run, summary: Summary, tax: Taxonomy, etax: Taxonomy) -> None:
    """The test predictions with their tree distance, and one example's decision path."""
    st.subheader("Predictions")
    gamma = summary.gamma
    only_wrong = st.checkbox("Only mistakes", value=False, key="explore_only_wrong")
    table = pd.DataFrame(
        {
            "row": np.arange(len(run.y_test)),
            "true": run.y_test.astype(str),
            "predicted": run.y_pred.astype(str),
            "gamma": gamma,
        }
    )
    shown = table[table["gamma"] > 0] if only_wrong else table
    if len(shown) > MAX_LISTED:
        st.caption(f"The first {MAX_LISTED:,} of {len(shown):,} rows.")
    shown = shown.iloc[:MAX_LISTED].assign(
        text=_texts(state, run, shown["row"].to_numpy()[:MAX_LISTED])
    )
    st.dataframe(
        shown,
        hide_index=True,
        height=240,
        key="explore_table",
        on_select=lambda: _on_row_click("explore_table", shown),
        selection_mode="single-row",
    )
    if not len(run.y_test):
        return
    row = int(st.number_input("Example (row)", 0, len(run.y_test) - 1, 0, key="explore_row"))
    try:
        pred_path = decision_path(state, run, row, tax, etax)
        true_path = [str(tax.names[j]) for j in tax.path(str(run.y_test[row]))]
        said = _texts(state, run, np.array([row]))[0]
        if said:
            st.markdown(f"**Example {row}:** {said}")
        st.markdown("**Decision path:** " + " → ".join(pred_path))
        st.markdown("**True path:** " + " → ".join(true_path))
        st.caption(f"tree distance gamma = {int(gamma[row])}")
        path_probabilities(state, run, row, pred_path, true_path)
    except Exception as exc:
        show_error(exc, "Decision path")
    path_words(state, run, row)


def path_probabilities(
    state: AppState, run: Run, row: int, pred_path: list[str], true_path: list[str]
) -> None:
    """The calibrated probability of each node on the example's two paths (the nodes on
    screen: one row of ``node_proba``, not the whole test set's)."""
    data = test_rows(state, run)
    if data is None or not has_probabilities(run):
        return
    etax = run.estimator.taxonomy_
    nodes = [n for n in dict.fromkeys(pred_path[1:] + true_path[1:]) if n in etax]
    if not nodes:
        return
    proba = run.estimator.node_proba(data.X[row : row + 1])[0]
    st.dataframe(
        pd.DataFrame(
            {
                "node": nodes,
                "on predicted path": [n in pred_path for n in nodes],
                "on true path": [n in true_path for n in nodes],
                "P(node | x)": [float(proba[int(etax.index(n))]) for n in nodes],
            }
        ),
        hide_index=True,
        key="explore_path_proba",
        column_config={"P(node | x)": st.column_config.NumberColumn(format="%.4f")},
    )


def _on_row_click(key: str, shown: pd.DataFrame) -> None:
    """A click on a row of a table of examples: show that example's path."""
    event = st.session_state.get(key)
    rows = list(event["selection"]["rows"]) if event else []
    if rows:
        st.session_state["explore_row"] = int(shown["row"].iloc[int(rows[0])])


def path_words(state: AppState, run: Run, row: int) -> None:
    """The words that drove each step of the example's predicted path (``hierlab.explain``)."""
    data = test_rows(state, run)
    if data is None or run.estimator._score_weights() is None:
        st.caption(
            "No per-feature contributions for this model (kernel, or rows not in the session)."
        )
        return
    try:
        steps = explain(run.estimator, data.X[row], k=5, feature_names=feature_names(state, run))
    except Exception as exc:
        show_error(exc, "Path explanation")
        return
    summary = steps.groupby("step", sort=True).agg(
        step=("step", "first"),
        parent=("parent", "first"),
        node=("node", "first"),
        rival=("rival", "first"),
        margin=("margin", "first"),
        words=("feature", lambda f: ", ".join(map(str, f))),
    )
    st.markdown(
        "**Why each step:** the words that pushed the example from each node to the "
        "next, against the best rival"
    )
    st.dataframe(
        summary, hide_index=True, key="explore_path_words", column_config=number_columns(summary)
    )


def node_words(state: AppState, run: Run, etax: Taxonomy) -> None:
    """The words that push towards the clicked (or chosen) node."""
    st.subheader("What pushes towards a node")
    nodes = [str(n) for n in etax.names[1:]]
    if st.session_state.get("explore_node") not in nodes:
        st.session_state["explore_node"] = nodes[0]
    node = st.selectbox("Node (or click one on the tree)", nodes, key="explore_node")
    try:
        table = explain(run.estimator, node, k=15, feature_names=feature_names(state, run))
    except Exception as exc:
        show_error(exc, "Node explanation")
        return
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(f"**Top words for {node}**")
        words = table[["rank", "feature", "weight"]]
        st.dataframe(
            words, hide_index=True, key="explore_words", column_config=number_columns(words)
        )
    with c2:
        st.plotly_chart(plots.explanation_figure(table), key="explore_words_chart", theme=None)


def cell_examples(state: AppState, run: Run, summary: Summary, tax: Taxonomy) -> None:
    """The examples of the clicked confusion cell: true and predicted paths, gamma, words."""
    level = int(st.session_state.get("explore_level", 1))
    pairs = summary.pairs.get(level)
    if pairs is None or not len(pairs):
        return
    # the most-confused pairs first (those the table above lists), then the largest cells
    ranked = pd.concat([pairs[~pairs["correct"]].head(TOP_PAIRS), pairs]).head(
        TOP_CELLS + TOP_PAIRS
    )
    cells = list(dict.fromkeys(f"{t} → {p}" for t, p in zip(ranked["true"], ranked["predicted"])))
    st.subheader("Examples of a confusion cell")
    if st.session_state.get("explore_cell") not in cells:
        st.session_state["explore_cell"] = cells[0]
    cell = st.selectbox(
        f"Cell (true → predicted at depth {level}: the most confused, then the largest; "
        "or click one)",
        cells,
        key="explore_cell",
    )
    true_node, pred_node = cell.split(" → ")
    anc = ancestor_at_depth(tax)
    t_ids, p_ids = summary.true_ids, summary.pred_ids
    at, ap = anc[level, t_ids], anc[level, p_ids]
    want_p = -1 if pred_node == STOPPED_ABOVE else int(tax.index(pred_node))
    rows = np.flatnonzero((at == int(tax.index(true_node))) & (ap == want_p))
    listing = pd.DataFrame(
        {
            "row": rows,
            "true path": [
                " / ".join(map(str, tax.names[tax.path(int(v))][1:])) for v in t_ids[rows]
            ],
            "predicted path": [
                " / ".join(map(str, tax.names[tax.path(int(v))][1:])) for v in p_ids[rows]
            ],
            "gamma": summary.gamma[rows],
            "text": _texts(state, run, rows),
        }
    )
    st.caption(
        f"{len(rows)} test examples with true {true_node} and predicted {pred_node} at depth "
        f"{level} · click one to see its path below"
    )
    st.dataframe(
        listing,
        hide_index=True,
        height=220,
        key="explore_cell_rows",
        on_select=lambda: _on_row_click("explore_cell_rows", listing),
        selection_mode="single-row",
    )


def _texts(state: AppState, run: Run, rows: np.ndarray) -> list[str]:
    """Each listed example's own text (or its largest features when the data has no text)."""
    data = test_rows(state, run)
    return [""] * len(rows) if data is None else example_texts(data, rows)


def probabilities(state: AppState, run: Run) -> None:
    """Calibrated node probabilities: PR curve, reliability, precision against depth (the
    run's report, computed once in the background; a progress bar while it is not done)."""
    st.subheader("Probabilities")
    data = test_rows(state, run)
    if data is None:
        st.info("The run's test rows are no longer in the session (the split changed).")
        return
    if not has_probabilities(run):
        st.info(f"{run.name} has no calibrated node probabilities.")
        return
    job = run_views(run, data).proba
    assert job is not None
    reports = ready_reports([(run.label, job)])
    rep = None if reports is None else reports.get(run.label)
    if rep is None:
        return
    st.caption(calibration_caption(rep, run.estimator.calibration_))
    c1, c2 = st.columns(2)
    pr = rep["pr_curve"]
    with c1:
        chart("PR curve", "explore_pr", lambda: plots.pr_curve_figure({run.label: pr}), run)
    with c2:
        rel = rep["reliability"]
        chart(
            "Reliability",
            "explore_reliability",
            lambda: plots.reliability_figure(
                {run.label: rel}, title="Reliability of the top-1 confidence"
            ),
            run,
        )
    if "thresholds" not in rep:
        return
    table = rep["thresholds"]
    chart(
        "Precision against depth",
        "explore_depth",
        lambda: plots.threshold_figure({run.label: table}),
        run,
    )
    t = st.select_slider(
        "Threshold t of predict(X, threshold=t)",
        options=list(THRESHOLDS),
        value=0.5,
        key="explore_threshold",
    )
    row = table[np.isclose(table["threshold"], t)]
    st.dataframe(
        row, hide_index=True, key="explore_threshold_row", column_config=number_columns(row)
    )


state = get_state()
st.title("Explore")
if not state.runs:
    st.info("Train a method on the Train page first; its run appears here.")
    st.stop()

run_ids: list[int] = [r.id for r in reversed(state.runs)]


def _run_label(run_id: int) -> str:
    found = state.run(run_id)
    return found.label if found is not None else str(run_id)


run_id = st.selectbox("Run", run_ids, format_func=_run_label, key="explore_run")
run = state.run(run_ids[0] if run_id is None else run_id)
assert run is not None
tax = run.taxonomy
# the tree the model itself uses: the given one, or one it induced (MF-Tree, CMTL)
etax = getattr(run.estimator, "taxonomy_", tax)
st.caption(
    f"{run.dataset_name} · {len(run.y_test)} test rows · taxonomy {run.taxonomy_source} · "
    + " · ".join(f"{metric_label(k)} {fmt(v)}" for k, v in run.metrics.items())
)
trivial_warning(run)
with st.expander("Model file, script and notebook of this run; delete it"):
    run_files(state, run, "explore_files")
try:
    views = run_views(run, test_rows(state, run))
except Exception as exc:
    show_error(exc, "The run's views")
    st.stop()
if views.summary is None:
    st.info(
        "Per-node and per-level views need single-label data on a tree; showing the metrics only."
    )
    st.stop()
summary = views.summary
figures(run, summary, tax, etax)
node_words(state, run, etax)
cell_examples(state, run, summary, tax)
induced_tree(run, tax, etax)
predictions(state, run, summary, tax, etax)
probabilities(state, run)  # last: the one section that may still be computing
