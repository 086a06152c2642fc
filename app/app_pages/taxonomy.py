"""Taxonomy: the tree with node sizes by example count; induce one and compare."""

from __future__ import annotations

import streamlit as st

from app.state import AppState, DatasetEntry, get_state, induce_taxonomy
from app.ui.errors import show_error
from app.ui.page import require_dataset
from app.ui.widgets import fmt, param_widget
from hierlab import Taxonomy, get_method, list_methods
from hierlab.evaluation.metrics import tree_similarity_mse
from hierlab.plots import taxonomy_figure


def drawings(entry: DatasetEntry, induced: dict | None) -> None:
    """The given taxonomy, and beside it the induced one when there is one."""
    tax = entry.taxonomy
    kinds = ["tree", "sunburst", "treemap"] if tax.is_tree else ["tree"]
    kind = st.radio(
        "Drawing",
        kinds,
        horizontal=True,
        key="tax_kind",
        index=0 if tax.n_nodes <= 300 or not tax.is_tree else 1,
        help="tree: layered drawing (zoom with the mouse); sunburst/treemap: click a node to open "
        "its subtree",
    )
    st.caption(
        f"{entry.name}: {tax.n_nodes} nodes, {len(tax.leaves)} leaves, depth {tax.max_depth}, "
        f"{'tree' if tax.is_tree else 'DAG'}. Node sizes: training examples at or below the node."
    )
    below = entry.train.examples_per_node(closed=True).to_numpy()
    given = taxonomy_figure(tax, node_sizes=below, kind=kind, title="Given taxonomy")
    if induced is None:
        st.plotly_chart(given, key="tax_given", theme=None)
        return
    itax = induced["taxonomy"]
    settings = ", ".join(f"{k}={v}" for k, v in induced["params"].items())
    c1, c2 = st.columns(2)
    c1.plotly_chart(given, key="tax_given", theme=None)
    c2.plotly_chart(
        taxonomy_figure(
            itax,
            node_values=induced.get("hsic"),
            node_sizes=induced.get("counts"),
            kind=kind if itax.is_tree else "tree",
            value_name="HSIC of the split",
            colorscale="Viridis",
            title=f"Induced by {induced['method']} ({settings}), colour: HSIC of each split",
        ),
        key="tax_induced",
        theme=None,
    )


def shared_leaves(given: Taxonomy, induced: dict) -> list[str]:
    """The given leaves the induced tree holds: a leaf without training rows (2 of IPC's 645)
    is not in it, and ``tree_similarity_mse`` needs every class in both trees."""
    names = set(map(str, induced["taxonomy"].names))
    return [str(given.names[i]) for i in given.leaves if str(given.names[i]) in names]


def induction(state: AppState, entry: DatasetEntry, induced: dict | None) -> None:
    """Induce a tree with a method that induces one (:attr:`MethodSpec.inducer`); compare it
    with the given one; choose it for training."""
    spec = next((s for s in map(get_method, list_methods()) if s.inducer is not None), None)
    if spec is None or spec.inducer is None:
        return
    st.subheader(f"Induce a taxonomy with {spec.display_name}")
    st.caption(spec.inducer.about)
    values = {
        name: param_widget(spec.param(name), key=f"induce_{name}") for name in spec.inducer.params
    }
    if st.button("Induce", key="induce", type="primary"):
        try:
            with st.spinner("Inducing ..."):
                state.induced[entry.key] = induce_taxonomy(entry, spec, values)
            st.rerun()
        except Exception as exc:
            show_error(exc, spec.display_name)
    if induced is None:
        return
    try:
        if "mse" not in induced:  # once per induced tree (IPC's 645 leaves: ~0.5 s)
            induced["mse"] = tree_similarity_mse(
                entry.taxonomy, induced["taxonomy"], shared_leaves(entry.taxonomy, induced)
            )
        st.metric("tree similarity MSE (induced vs given)", fmt(induced["mse"]))
    except Exception as exc:
        show_error(exc, "Tree similarity")
    use = st.checkbox(
        "Use the induced tree for training",
        value=bool(state.use_induced.get(entry.key)),
        key="use_induced",
    )
    state.use_induced[entry.key] = use
    if use:
        st.success("Train and Compare will use the induced tree.")


state = get_state()
st.title("Taxonomy")
entry = require_dataset(state)
induced = state.induced.get(entry.key)
drawings(entry, induced)
induction(state, entry, induced)
