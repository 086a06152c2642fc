"""Taxonomy: the tree with node sizes by example count; induce one with MF-Tree and compare."""

from __future__ import annotations

import streamlit as st

from app.state import get_state, induce_taxonomy, induction_available, tree_similarity
from app.ui.errors import show_error
from app.ui.figures import figure
from app.ui.widgets import param_widget
from hierlab.core.exceptions import HierlabError
from hierlab.core.registry import Param, get_method


def tau_widget() -> int:
    """The tau widget from the registry's MF-Tree schema (a plain slider if it is missing)."""
    try:
        p = get_method("mftree").param("tau")
    except HierlabError:
        p = Param(
            "tau",
            "int",
            0,
            low=0,
            high=10,
            help="depth below which the cheap Partition2 split is used (0 = plain MF-Tree)",
        )
    return int(param_widget(p, key="mftree_tau"))


state = get_state()
st.title("Taxonomy")
entry = state.dataset
if entry is None:
    st.info("Load a data set on the Data page first.")
    st.stop()

tax = entry.taxonomy
below = entry.train.examples_per_node(closed=True).to_numpy()
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
induced = state.induced.get(entry.key)

if induced is None:
    st.plotly_chart(
        figure("taxonomy_figure", tax, node_sizes=below, kind=kind, title="Given taxonomy"),
        key="tax_given",
        theme=None,
    )
else:
    c1, c2 = st.columns(2)
    with c1:
        st.plotly_chart(
            figure("taxonomy_figure", tax, node_sizes=below, kind=kind, title="Given taxonomy"),
            key="tax_given",
            theme=None,
        )
    with c2:
        itax = induced["taxonomy"]
        icounts = induced.get("counts")
        st.plotly_chart(
            figure(
                "taxonomy_figure",
                itax,
                node_sizes=icounts,
                kind=kind if itax.is_tree else "tree",
                title=f"Induced by MF-Tree (tau={induced['tau']})",
            ),
            key="tax_induced",
            theme=None,
        )

st.subheader("Induce a taxonomy with MF-Tree")
available, why = induction_available()
if not available:
    st.info(f"MF-Tree induction is not available yet ({why}).")
else:
    st.caption(
        "MF-Tree (seed 004) splits the classes recursively by the top eigenvectors of "
        "D = Yᵀ K Y; the approximate MF-Tree (tau > 0) uses a cheap split by class size and "
        "class-mean distance above depth tau (Algorithm 3)."
    )
    tau = int(tau_widget())
    if st.button("Induce", key="induce", type="primary"):
        try:
            with st.spinner("Inducing ..."):
                state.induced[entry.key] = induce_taxonomy(entry, tau)
            st.rerun()
        except Exception as exc:
            show_error(exc, "MF-Tree")
    if induced is not None:
        try:
            mse = tree_similarity(tax, induced["taxonomy"])
            if mse is not None:
                st.metric("tree similarity MSE (induced vs given)", f"{mse:.4f}")
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
