"""Explore a run: per-node error on the tree, per-level error, gamma histogram, confusion,
weight norms, and single predictions with their decision path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from app.state import get_state
from app.ui.errors import show_error
from app.ui.figures import figure
from hierlab.evaluation.metrics import (
    confusion_at_level,
    error_per_level,
    error_per_node,
    gamma_histogram,
)

state = get_state()
st.title("Explore")
if not state.runs:
    st.info("Train a method on the Train page first; its run appears here.")
    st.stop()

ids = [r.id for r in reversed(state.runs)]
run_id = st.selectbox(
    "Run",
    ids,
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


def _chart(fig: object, key: str) -> None:
    st.plotly_chart(fig, key=key, theme=None)


try:
    per_node = error_per_node(run.y_test, run.y_pred, tax)
    _chart(
        figure(
            "taxonomy_figure",
            tax,
            node_values=per_node,
            node_sizes=per_node["n"].to_numpy(),
            value_name="error",
            title="Error per node: share of the test examples below a node "
            "whose prediction is not below it (size: examples)",
        ),
        "explore_heat",
    )
except Exception as exc:
    show_error(exc, "Per-node error")

c1, c2 = st.columns(2)
with c1:
    try:
        epl = error_per_level(run.y_test, run.y_pred, tax)
        _chart(figure("error_per_level_figure", {run.label: epl}), "explore_levels")
    except Exception as exc:
        show_error(exc, "Error per level")
with c2:
    try:
        gh = gamma_histogram(run.y_test, run.y_pred, tax)
        _chart(figure("gamma_histogram_figure", {run.label: gh}), "explore_gamma")
    except Exception as exc:
        show_error(exc, "Gamma histogram")

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
    try:
        conf = confusion_at_level(run.y_test, run.y_pred, tax, level)
        _chart(
            figure("confusion_figure", conf, title=f"Confusion at depth {level}"),
            "explore_confusion",
        )
    except Exception as exc:
        show_error(exc, "Confusion")
with c4:
    coef = getattr(run.estimator, "coef_", None)
    if coef is not None and getattr(coef, "shape", (0,))[0] == etax.n_nodes:
        try:
            _chart(figure("weight_norms_figure", coef, etax), "explore_norms")
        except Exception as exc:
            show_error(exc, "Weight norms")
    else:
        st.info(
            f"{run.method} has no weight vector per node (coef_ of shape (n_nodes, n_features))."
        )

if run.taxonomy_source == "induced" or etax != tax:
    st.subheader("Induced taxonomy")
    st.caption(
        "The tree this model routes through "
        + (
            "(induced on the Taxonomy page)."
            if run.taxonomy_source == "induced"
            else f"(induced by {run.method} itself)."
        )
    )
    _chart(figure("taxonomy_figure", etax, title="Induced taxonomy"), "explore_induced")

st.subheader("Predictions")
gamma = np.asarray(
    tax.tree_distance(
        tax.index(np.asarray([str(v) for v in run.y_test], dtype=object)),
        tax.index(np.asarray([str(v) for v in run.y_pred], dtype=object)),
    )
)
only_wrong = st.checkbox("Only mistakes", value=False, key="explore_only_wrong")
table = pd.DataFrame(
    {
        "row": np.arange(len(run.y_test)),
        "true": run.y_test.astype(str),
        "predicted": run.y_pred.astype(str),
        "gamma": gamma,
    }
)
if only_wrong:
    table = table[table["gamma"] > 0]
st.dataframe(table, hide_index=True, height=240)
if len(run.y_test):
    row = int(st.number_input("Example (row)", 0, len(run.y_test) - 1, 0, key="explore_row"))
    enames = np.asarray([str(x) for x in etax.names], dtype=object)
    names = np.asarray([str(x) for x in tax.names], dtype=object)
    try:
        entry = state.datasets.get(run.dataset_key)
        X_row = None
        same_rows = entry is not None and entry.split == run.split
        if same_rows and entry is not None and entry.test.n_samples == len(run.y_test):
            X_row = entry.test.X[row : row + 1]
        if X_row is not None and etax.is_tree:
            ind = run.estimator.decision_path(X_row)
            on_path = np.flatnonzero(np.asarray(ind.todense()).ravel())
            pred_path = [str(enames[j]) for j in on_path[np.argsort(etax.depth[on_path])]]
        else:
            pred_path = [str(names[j]) for j in tax.path(str(run.y_pred[row]))]
        true_path = [str(names[j]) for j in tax.path(str(run.y_test[row]))]
        st.markdown("**Decision path:** " + " → ".join(pred_path))
        st.markdown("**True path:** " + " → ".join(true_path))
        st.caption(f"tree distance gamma = {int(gamma[row])}")
    except Exception as exc:
        show_error(exc, "Decision path")
