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
from app.ui.errors import show_error
from app.ui.widgets import calibration_caption, fmt, trivial_warning
from hierlab import HierDataset, Taxonomy, explain, plots
from hierlab.evaluation.curves import probability_report
from hierlab.evaluation.metrics import (
    ancestor_at_depth,
    confusion_at_level,
    error_per_level,
    error_per_node,
    gamma_histogram,
    metric_label,
)

#: thresholds of the precision-against-depth curve
THRESHOLDS = np.round(np.linspace(0.0, 1.0, 21), 2)


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


def _on_node_click(tax: Taxonomy) -> None:
    """A click on the per-node tree: explain the clicked node."""
    for pt in _selected_points("explore_heat"):
        data = pt.get("customdata")
        idx = data[0] if isinstance(data, list | tuple) else data
        if idx is not None:
            st.session_state["explore_node"] = str(tax.names[int(idx)])
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


def per_node_chart(run: Run, tax: Taxonomy) -> Any:
    """The taxonomy coloured by the error per node, sized by the test examples below."""
    per_node = error_per_node(run.y_test, run.y_pred, tax)
    return plots.taxonomy_figure(
        tax,
        node_values=per_node,
        node_sizes=per_node["n"].to_numpy(),
        value_name="error",
        title="Error per node: share of the test examples below a node "
        "whose prediction is not below it (size: examples)",
    )


def weight_norms(run: Run, etax: Taxonomy) -> None:
    """The norms of the weight vectors per node, when the model has one per node."""
    coef = getattr(run.estimator, "coef_", None)
    if coef is not None and getattr(coef, "shape", (0,))[0] == etax.n_nodes:
        chart("Weight norms", "explore_norms", lambda: plots.weight_norms_figure(coef, etax), run)
    else:
        st.info(f"{run.name} has no weight vector per node (coef_ of shape (n_nodes, n_features)).")


def figures(run: Run, tax: Taxonomy, etax: Taxonomy) -> None:
    """Every figure of the run: per node, per level, gamma histogram, confusion, weights."""
    y, p = run.y_test, run.y_pred
    chart(
        "Per-node error",
        "explore_heat",
        lambda: per_node_chart(run, tax),
        run,
        on_select=lambda: _on_node_click(tax),
    )
    st.caption("Click a node to see the words (features) that push an example towards it.")
    c1, c2 = st.columns(2)
    with c1:
        chart(
            "Error per level",
            "explore_levels",
            lambda: plots.error_per_level_figure({run.label: error_per_level(y, p, tax)}),
            run,
        )
    with c2:
        chart(
            "Gamma histogram",
            "explore_gamma",
            lambda: plots.gamma_histogram_figure({run.label: gamma_histogram(y, p, tax)}),
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
        chart(
            "Confusion",
            "explore_confusion",
            lambda: plots.confusion_figure(
                confusion_at_level(y, p, tax, level),
                title=f"Confusion at depth {level}",
                clickable=True,
            ),
            run,
            level,
            on_select=_on_cell_click,
        )
        st.caption("Click a cell to list its examples.")
    with c4:
        weight_norms(run, etax)


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


def predictions(state: AppState, run: Run, tax: Taxonomy, etax: Taxonomy) -> None:
    """The test predictions with their tree distance, and one example's decision path."""
    st.subheader("Predictions")
    ids = [
        tax.index(np.asarray([str(v) for v in y], dtype=object)) for y in (run.y_test, run.y_pred)
    ]
    gamma = np.asarray(tax.tree_distance(*ids))
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
        st.markdown("**Decision path:** " + " → ".join(pred_path))
        st.markdown("**True path:** " + " → ".join(true_path))
        st.caption(f"tree distance gamma = {int(gamma[row])}")
    except Exception as exc:
        show_error(exc, "Decision path")
    path_words(state, run, row)


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
    st.dataframe(summary, hide_index=True, key="explore_path_words")


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
        st.dataframe(table[["rank", "feature", "weight"]], hide_index=True, key="explore_words")
    with c2:
        st.plotly_chart(plots.explanation_figure(table), key="explore_words_chart", theme=None)


def cell_examples(state: AppState, run: Run, tax: Taxonomy) -> None:
    """The examples of the clicked confusion cell: true and predicted paths, gamma, words."""
    level = int(st.session_state.get("explore_level", 1))
    conf = cached(
        run,
        ("confusion_table", level),
        lambda: confusion_at_level(run.y_test, run.y_pred, tax, level),
    )
    # the non-empty cells in one pass (conf.loc per cell: seconds on 645 x 646 IPC cells)
    r, c = np.nonzero(conf.to_numpy() > 0)
    cells = [f"{conf.index[i]} → {conf.columns[j]}" for i, j in zip(r, c)]
    if not cells:
        return
    st.subheader("Examples of a confusion cell")
    if st.session_state.get("explore_cell") not in cells:
        st.session_state["explore_cell"] = cells[0]
    cell = st.selectbox("Cell (true → predicted, or click one)", cells, key="explore_cell")
    true_node, pred_node = cell.split(" → ")
    anc = ancestor_at_depth(tax)
    t_ids = tax.index([str(v) for v in run.y_test])
    p_ids = tax.index([str(v) for v in run.y_pred])
    at, ap = anc[level, t_ids], anc[level, p_ids]
    want_p = -1 if pred_node == "(stopped above)" else int(tax.index(pred_node))
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
            "gamma": np.asarray(tax.tree_distance(t_ids[rows], p_ids[rows])),
            "words": _top_words(state, run, rows),
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


def _top_words(state: AppState, run: Run, rows: np.ndarray, k: int = 6) -> list[str]:
    """Each example's largest features (its most weighted words for text), as text."""
    data = test_rows(state, run)
    if data is None:
        return [""] * len(rows)
    names = feature_names(state, run) or [f"x{j}" for j in range(data.X.shape[1])]
    out = []
    for r in rows[:500]:
        x = data.X[int(r)]
        x = np.asarray(x.toarray() if hasattr(x, "toarray") else x).ravel()
        top = np.argsort(-x, kind="stable")[:k]
        out.append(", ".join(names[j] for j in top if x[j] > 0))
    return out + [""] * (len(rows) - len(out))


def probabilities(state: AppState, run: Run) -> None:
    """Calibrated node probabilities: PR curve, reliability, precision against depth."""
    st.subheader("Probabilities")
    data = test_rows(state, run)
    if data is None:
        st.info("The run's test rows are no longer in the session (the split changed).")
        return
    try:
        rep = cached(
            run,
            "probability_report",
            lambda: probability_report(run.estimator, data.X, data.y, thresholds=THRESHOLDS),
        )
    except Exception as exc:
        show_error(exc, "Probabilities")
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
    st.dataframe(row.round(4), hide_index=True, key="explore_threshold_row")


state = get_state()
st.title("Explore")
if not state.runs:
    st.info("Train a method on the Train page first; its run appears here.")
    st.stop()

run_id = st.selectbox(
    "Run",
    [r.id for r in reversed(state.runs)],
    format_func=lambda i: state.run(i).label if state.run(i) else str(i),
    key="explore_run",
)
run = state.run(run_id)
assert run is not None
tax = run.taxonomy
# the tree the model itself uses: the given one, or one it induced (MF-Tree, CMTL)
etax = getattr(run.estimator, "taxonomy_", tax)
st.caption(
    f"{run.dataset_name} · {len(run.y_test)} test rows · taxonomy {run.taxonomy_source} · "
    + " · ".join(f"{metric_label(k)} {fmt(v)}" for k, v in run.metrics.items())
)
trivial_warning(run)
multi = len(run.y_test) > 0 and isinstance(run.y_test[0], tuple)
if multi or not tax.is_tree:
    st.info(
        "Per-node and per-level views need single-label data on a tree; showing the metrics only."
    )
    st.stop()
figures(run, tax, etax)
node_words(state, run, etax)
cell_examples(state, run, tax)
induced_tree(run, tax, etax)
probabilities(state, run)
predictions(state, run, tax, etax)
