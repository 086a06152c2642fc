"""Taxonomy: the tree with node sizes by example count (a large tree collapsed to its top
levels, with drill-down by subtree); induce one and compare."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import streamlit as st

from app.state import AppState, DatasetEntry, get_state, induce_taxonomy, session_dict
from app.ui.errors import show_error
from app.ui.page import require_dataset
from app.ui.widgets import fmt, param_widget
from hierlab import Taxonomy, get_method, list_methods
from hierlab.evaluation.metrics import tree_similarity_mse
from hierlab.evaluation.views import collapsed_taxonomy
from hierlab.plots import taxonomy_figure

#: trees with more nodes are drawn collapsed to their top levels, with drill-down by subtree
TREE_NODES = 400


def _figures() -> dict[Any, Any]:
    """The figures drawn for the data set shown, kept in the session (built once per data
    set, split, subtree and kind: a rerun redraws without rebuilding)."""
    return session_dict("taxonomy_figures")


def cached_figure(entry: DatasetEntry, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
    """``build()``, once per data set (and its current split) and ``key``."""
    built = _figures()
    owner = (entry.key, id(entry.train))
    if built.get("owner") != owner:
        built.clear()
        built["owner"] = owner
    if key not in built:
        built[key] = build()
    return built[key]


def subtree_choice(tax: Taxonomy, key: str, label: str) -> str | None:
    """The subtree to draw of a tree over :data:`TREE_NODES` nodes (a select box of its
    internal nodes, the root first); None for a smaller tree or a DAG (drawn whole)."""
    if tax.n_nodes <= TREE_NODES or not tax.is_tree:
        return None
    inner = [str(tax.names[i]) for i in np.flatnonzero(~np.asarray(tax.is_leaf, dtype=bool))]
    if st.session_state.get(key) not in inner:
        st.session_state[key] = inner[0]
    return st.selectbox(
        f"{label} ({tax.n_nodes} nodes: drawn down to the level that keeps it under "
        f"{TREE_NODES}; choose an inner node to open its subtree)",
        inner,
        key=key,
    )


def collapsed_figure(
    tax: Taxonomy, root: str | None, values: Any, sizes: Any, **kwargs: Any
) -> Any:
    """``taxonomy_figure`` of ``tax``, or of the subtree under ``root`` collapsed to
    :data:`TREE_NODES` nodes (per-node ``values`` and ``sizes`` of ``tax`` drawn on it)."""
    if root is None:
        return taxonomy_figure(tax, node_values=values, node_sizes=sizes, **kwargs)
    drawn, ids = collapsed_taxonomy(tax, root, TREE_NODES)

    def pick(v: Any) -> np.ndarray | None:
        return None if v is None else np.asarray(v, dtype=np.float64)[ids]

    return taxonomy_figure(drawn, node_values=pick(values), node_sizes=pick(sizes), **kwargs)


def drawings(entry: DatasetEntry, induced: dict | None) -> None:
    """The given taxonomy, and beside it the induced one when there is one; a tree over
    :data:`TREE_NODES` nodes drawn collapsed to its top levels, with a subtree to open."""
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
    root = subtree_choice(tax, "tax_subtree", "Subtree of the given taxonomy")
    given = cached_figure(
        entry,
        ("given", root, kind),
        lambda: collapsed_figure(
            tax,
            root,
            None,
            entry.train.examples_per_node(closed=True).to_numpy(),
            kind=kind,
            title="Given taxonomy",
        ),
    )
    if induced is None:
        st.plotly_chart(given, key="tax_given", theme=None)
        return
    itax = induced["taxonomy"]
    settings = ", ".join(f"{k}={v}" for k, v in induced["params"].items())
    iroot = subtree_choice(itax, "tax_induced_subtree", "Subtree of the induced taxonomy")
    ikind = kind if itax.is_tree else "tree"
    figure = cached_figure(
        entry,
        ("induced", id(itax), iroot, ikind),
        lambda: collapsed_figure(
            itax,
            iroot,
            induced.get("hsic"),
            induced.get("counts"),
            kind=ikind,
            value_name="HSIC of the split",
            colorscale="Viridis",
            title=f"Induced by {induced['method']} ({settings}), colour: HSIC of each split",
        ),
    )
    c1, c2 = st.columns(2)
    c1.plotly_chart(given, key="tax_given", theme=None)
    c2.plotly_chart(figure, key="tax_induced", theme=None)


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
