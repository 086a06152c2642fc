"""Data: choose a built-in data set or upload features and a taxonomy; split; validation report."""

from __future__ import annotations

import streamlit as st

from app.state import (
    builtin_choices,
    generator_params,
    get_state,
    load_builtin,
    make_entry,
    parse_upload,
    report_messages,
    resplit,
    validation_report,
)
from app.ui.errors import show_error

state = get_state()
st.title("Data")

left, right = st.tabs(["Built-in data sets", "Upload your own"])

with left:
    choices = builtin_choices()
    if not choices:
        st.info("No built-in data set is available yet: upload one in the next tab.")
    else:
        by_key = {b.key: b for b in choices}
        key = st.selectbox(
            "Data set",
            list(by_key),
            format_func=lambda k: (
                by_key[k].label + (" (real data)" if by_key[k].kind == "real" else "")
            ),
            key="builtin_choice",
        )
        st.caption(by_key[key].description)
        params = {}
        try:
            gen = generator_params(key)
        except Exception as exc:
            gen = []
            show_error(exc, "Reading the generator's parameters")
        if gen:
            st.markdown("**Generator parameters**")
            cols = st.columns(min(4, len(gen)))
            for i, p in enumerate(gen):
                wkey = f"gen:{key}:{p['name']}"
                with cols[i % len(cols)]:
                    if p["type"] == "bool":
                        params[p["name"]] = st.checkbox(p["name"], value=p["default"], key=wkey)
                    elif p["type"] == "int":
                        params[p["name"]] = int(
                            st.number_input(p["name"], value=int(p["default"]), step=1, key=wkey)
                        )
                    elif p["type"] == "float":
                        params[p["name"]] = float(
                            st.number_input(
                                p["name"], value=float(p["default"]), format="%g", key=wkey
                            )
                        )
                    else:
                        params[p["name"]] = st.text_input(p["name"], value=p["default"], key=wkey)
        if st.button("Load this data set", key="load_builtin", type="primary"):
            try:
                defaults = {p["name"]: p["default"] for p in gen}
                changed = {k: v for k, v in params.items() if defaults.get(k) != v}
                with st.spinner("Loading ..."):
                    state.add_dataset(load_builtin(key, changed))
                st.success(f"Loaded {state.dataset.name if state.dataset else key}.")
            except Exception as exc:
                show_error(exc, "Loading the data set")

with right:
    st.markdown(
        "Features: **CSV** (a label column with node names or `a/b/c` paths; `;` between "
        "several labels), **svmlight**, **Clus ARFF** (hierarchical class attribute), or a "
        "**text CSV** (a raw text column, turned into TF-IDF). Taxonomy (optional when the labels "
        "are paths): an **edge list** (`parent child` per line), **`a/b/c` paths** (one per "
        "line), or **JSON**."
    )
    feat = st.file_uploader(
        "Features file",
        type=["csv", "tsv", "txt", "svm", "svmlight", "libsvm", "arff"],
        key="upload_features",
    )
    taxf = st.file_uploader(
        "Taxonomy file (optional)",
        type=["txt", "csv", "tsv", "json", "paths", "edges", "tax"],
        key="upload_taxonomy",
    )
    c1, c2 = st.columns(2)
    up_test = c1.slider("Test fraction", 0.1, 0.5, 0.3, 0.05, key="upload_test_size")
    up_seed = int(c2.number_input("Split seed", value=0, step=1, key="upload_seed"))
    if st.button("Use this upload", key="use_upload", type="primary", disabled=feat is None):
        try:
            assert feat is not None
            with st.spinner("Reading the files ..."):
                ds = parse_upload(
                    feat.getvalue(),
                    feat.name,
                    taxf.getvalue() if taxf is not None else None,
                    taxf.name if taxf is not None else None,
                )
                entry = make_entry(
                    ds,
                    f"upload: {feat.name}",
                    "upload",
                    test_size=up_test,
                    seed=up_seed,
                    params={"features": feat.name, "taxonomy": taxf.name if taxf else None},
                )
            state.add_dataset(entry)
            st.success(f"Loaded {feat.name}: {ds.n_samples} rows, {ds.n_features} features.")
        except Exception as exc:  # a bad upload changes nothing in the session
            show_error(exc, f"Reading {feat.name if feat else 'the upload'}")

st.divider()
if len(state.datasets) > 1:
    keys = list(state.datasets)
    # the widget follows the session's current data set (a load above may have changed it);
    # only a choice in the widget itself switches data sets
    st.session_state["current_dataset"] = state.current if state.current in keys else keys[0]

    def _switch() -> None:
        state.current = st.session_state["current_dataset"]

    st.selectbox(
        "Data sets in this session",
        keys,
        format_func=lambda k: state.datasets[k].name,
        key="current_dataset",
        on_change=_switch,
    )

entry = state.dataset
if entry is None:
    st.info("No data set loaded yet.")
    st.stop()

st.subheader(f"Current: {entry.name}")
st.caption(entry.describe_split())

with st.expander("Train/test split", expanded=False):
    modes = (["own"] if entry.own_split is not None else []) + ["random"]
    mode = st.radio(
        "Split",
        modes,
        format_func=lambda m: (
            "the data set's own split" if m == "own" else "random split with a seed"
        ),
        key="split_mode",
        horizontal=True,
    )
    s1, s2 = st.columns(2)
    size = s1.slider(
        "Test fraction",
        0.1,
        0.5,
        float(entry.split.get("test_size", 0.3)),
        0.05,
        key="split_test_size",
        disabled=mode == "own",
    )
    seed = int(
        s2.number_input(
            "Seed",
            value=int(entry.split.get("seed", 0)),
            step=1,
            key="split_seed",
            disabled=mode == "own",
        )
    )
    if st.button("Apply split", key="apply_split"):
        try:
            state.add_dataset(resplit(entry, mode, size, seed))
            entry = state.dataset
            st.success(entry.describe_split() if entry else "")
        except Exception as exc:
            show_error(exc, "Splitting")

assert entry is not None
try:
    summary, per_node = validation_report(entry.train)
except Exception as exc:
    show_error(exc, "Validating the data set")
    st.stop()

st.markdown("**Validation report** (training rows)")
m = st.columns(6)
m[0].metric("examples", summary["n_samples"])
m[1].metric("features", summary["n_features"])
m[2].metric("nodes", summary["n_nodes"])
m[3].metric("leaves", summary["n_leaves"])
m[4].metric("depth", summary["depth"])
m[5].metric("labels", "multi" if summary["multilabel"] else "single")
st.caption(
    f"Taxonomy: {summary['taxonomy']} · features {'sparse' if summary['sparse'] else 'dense'} "
    f"(density {summary['density']:.3g}) · {summary['n_labels_used']} nodes used as labels"
)
for level, msg in report_messages(summary, per_node):
    (st.warning if level == "warning" else st.info)(msg)
if not report_messages(summary, per_node):
    st.success("No problem found: every node has data below it.")
st.dataframe(per_node, hide_index=True, height=260, key="per_node_table")
