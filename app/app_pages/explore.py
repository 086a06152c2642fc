"""Explore a run: per-node error on the tree, per-level error, gamma histogram, confusion,
weight norms, and single predictions with their decision path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from app.state import AppState, Run, get_state, session_dict
from app.ui.errors import show_error
from hierlab import Taxonomy, plots
from hierlab.evaluation.metrics import (
    confusion_at_level,
    error_per_level,
    error_per_node,
    gamma_histogram,
)


def chart(what: str, key: str, build: Callable[[], Any], run: Run, *variant: Any) -> None:
    """Draw the figure ``build()`` returns; an error becomes a message naming ``what``.

    A figure is built once per run (and ``variant``, e.g. the confusion depth) and kept in the
    session for the run shown: a rerun (another example row, "Only mistakes") redraws it
    without recomputing the metrics (about a second for 22,513 IPC test rows).
    """
    built: dict[Any, Any] = session_dict("explore_figures")
    if built.get("run") != run.id:
        built.clear()
        built["run"] = run.id
    try:
        if (key, *variant) not in built:
            built[(key, *variant)] = build()
        st.plotly_chart(built[(key, *variant)], key=key, theme=None)
    except Exception as exc:
        show_error(exc, what)


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
        st.info(
            f"{run.method} has no weight vector per node (coef_ of shape (n_nodes, n_features))."
        )


def figures(run: Run, tax: Taxonomy, etax: Taxonomy) -> None:
    """Every figure of the run: per node, per level, gamma histogram, confusion, weights."""
    y, p = run.y_test, run.y_pred
    chart("Per-node error", "explore_heat", lambda: per_node_chart(run, tax), run)
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
                confusion_at_level(y, p, tax, level), title=f"Confusion at depth {level}"
            ),
            run,
            level,
        )
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
        else f"(induced by {run.method} itself)."
    )
    st.caption("The tree this model routes through " + by)
    chart(
        "Induced taxonomy",
        "explore_induced",
        lambda: plots.taxonomy_figure(etax, title="Induced taxonomy"),
        run,
    )


def decision_path(state: AppState, run: Run, row: int, tax: Taxonomy, etax: Taxonomy) -> list[str]:
    """The predicted path of test row ``row``, from the root: the model's own
    ``decision_path`` when the row is still in the session, else the path to the prediction."""
    entry = state.datasets.get(run.dataset_key)
    same_rows = (
        entry is not None and entry.split == run.split and entry.test.n_samples == len(run.y_test)
    )
    if same_rows and etax.is_tree:
        assert entry is not None
        ind = run.estimator.decision_path(entry.test.X[row : row + 1])
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
    st.dataframe(table[table["gamma"] > 0] if only_wrong else table, hide_index=True, height=240)
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
    + " · ".join(f"{k.replace('_', ' ')} {v:.4f}" for k, v in run.metrics.items())
)
multi = len(run.y_test) > 0 and isinstance(run.y_test[0], tuple)
if multi or not tax.is_tree:
    st.info(
        "Per-node and per-level views need single-label data on a tree; showing the metrics only."
    )
    st.stop()
figures(run, tax, etax)
induced_tree(run, tax, etax)
predictions(state, run, tax, etax)
