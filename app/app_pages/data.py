"""Data: choose a built-in data set or upload features and a taxonomy; split; validation report."""

from __future__ import annotations

import time

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from app.state import (
    AppState,
    DatasetEntry,
    builtin_choices,
    generator_params,
    get_state,
    load_builtin,
    report_messages,
    resplit,
    upload_entry,
    validation_report,
)
from app.ui.errors import show_error
from app.ui.model_io import predict_with_model_file
from app.ui.widgets import param_widget

#: the Data page's tabs
TABS = ["Built-in data sets", "Upload your own", "Predict with a model file"]
#: session key: the person came to upload their own data (the upload tab opens first)
UPLOAD_FIRST = "data_upload_first"

UPLOAD_HELP = (
    "Features: **CSV** (a label column with node names or `a/b/c` paths; `;` between "
    "several labels), **svmlight**, **Clus ARFF** (hierarchical class attribute), or a "
    "**text CSV** (a raw text column, turned into TF-IDF). Taxonomy (optional when the labels "
    "are paths): an **edge list** (`parent child` per line), **`a/b/c` paths** (one per "
    "line), or **JSON**."
)


def builtin_tab(state: AppState) -> None:
    """Pick a built-in data set, set its generator's parameters, load it."""
    choices = builtin_choices()
    if not choices:
        st.info("No built-in data set is available yet: upload one in the next tab.")
        return
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
    try:
        gen = generator_params(key)
    except Exception as exc:
        gen = []
        show_error(exc, "Reading the generator's parameters")
    values = {}
    if gen:
        st.markdown("**Generator parameters**")
        cols = st.columns(min(4, len(gen)))
        for i, p in enumerate(gen):
            with cols[i % len(cols)]:
                values[p.name] = param_widget(p, key=f"gen:{key}:{p.name}")
    if st.button("Load this data set", key="load_builtin", type="primary"):
        try:
            changed = {p.name: values[p.name] for p in gen if values[p.name] != p.default}
            with st.spinner("Loading ..."):
                state.add_dataset(load_builtin(key, changed))
            st.success(f"Loaded {state.dataset.name if state.dataset else key}.")
        except Exception as exc:
            show_error(exc, "Loading the data set")


def received(file: UploadedFile | None) -> None:
    """Say which file the app now holds and its size (the chip alone shows the browser's side)."""
    if file is not None:
        size = file.size
        if size >= 2**20:
            shown = f"{size / 2**20:.1f} MB"
        else:
            shown = f"{size / 2**10:.1f} kB" if size >= 2**10 else f"{size} bytes"
        st.caption(f"Received {file.name} ({shown}).")


def upload_tab(state: AppState) -> None:
    """Upload features and an optional taxonomy; a bad upload changes nothing in the session."""
    st.markdown(UPLOAD_HELP)
    feat = st.file_uploader(
        "Features file",
        type=["csv", "tsv", "txt", "svm", "svmlight", "libsvm", "arff"],
        key="upload_features",
    )
    received(feat)
    taxf = st.file_uploader(
        "Taxonomy file (optional)",
        type=["txt", "csv", "tsv", "json", "paths", "edges", "tax"],
        key="upload_taxonomy",
    )
    received(taxf)
    testf = st.file_uploader(
        "Test file (optional)",
        type=["csv", "tsv", "txt", "svm", "svmlight", "libsvm", "arff"],
        key="upload_test",
        help="A separate file of test rows in the training file's format (the Clus sets come "
        "as train/test pairs): its rows are the test set as given, with no random split; it "
        "is read like the training file (its taxonomy, vocabulary, imputation means).",
    )
    received(testf)
    c1, c2 = st.columns(2)
    given = testf is not None
    test_size = c1.slider(
        "Test fraction", 0.1, 0.5, 0.3, 0.05, key="upload_test_size", disabled=given
    )
    seed = int(c2.number_input("Split seed", value=0, step=1, key="upload_seed", disabled=given))
    if given:
        st.caption("With a test file, its rows are the test set: the training file is not split.")
    if not st.button("Use this upload", key="use_upload", type="primary", disabled=feat is None):
        return
    assert feat is not None
    # a status box rather than a spinner: it shows from the first moment (a spinner appears
    # only after half a second) and stays, saying what was read and how long it took
    status = st.status(f"Reading {feat.name} ...", expanded=False)
    start = time.perf_counter()
    try:
        entry = upload_entry(
            (feat.name, feat.getvalue()),
            (taxf.name, taxf.getvalue()) if taxf is not None else None,
            test_size=test_size,
            seed=seed,
            test=(testf.name, testf.getvalue()) if testf is not None else None,
        )
    except Exception as exc:
        status.update(label=f"Could not read {feat.name}", state="error")
        show_error(exc, f"Reading {feat.name}")
        return
    status.update(
        label=f"Read {feat.name} in {time.perf_counter() - start:.1f} s", state="complete"
    )
    state.add_dataset(entry)
    rows = entry.train.n_samples + entry.test.n_samples
    st.success(
        f"Loaded {feat.name}: {rows} rows, {entry.train.n_features} features; "
        + entry.describe_split()
        + "."
    )


def session_switcher(state: AppState) -> None:
    """Switch between the data sets loaded in this session."""
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


def split_form(state: AppState, entry: DatasetEntry) -> None:
    """Re-split the current data set: its own split, or a random one with a seed."""
    own = entry.own_split is not None
    mode = st.radio(
        "Split",
        (["own"] if own else []) + ["random"],
        format_func=lambda m: (
            ("the test file as given" if "test" in entry.files else "the data set's own split")
            if m == "own"
            else "random split with a seed"
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
    seed = s2.number_input(
        "Seed",
        value=int(entry.split.get("seed", 0)),
        step=1,
        key="split_seed",
        disabled=mode == "own",
    )
    if st.button("Apply split", key="apply_split"):
        try:
            state.add_dataset(resplit(entry, mode, size, int(seed)))
            st.success(state.dataset.describe_split() if state.dataset else "")
        except Exception as exc:
            show_error(exc, "Splitting")


def report(entry: DatasetEntry) -> None:
    """The validation report of the training rows: sizes, findings, examples per node."""
    try:
        summary, per_node = validation_report(entry.train)
    except Exception as exc:
        show_error(exc, "Validating the data set")
        return
    st.markdown("**Validation report** (training rows)")
    shown = {
        "examples": summary["n_samples"],
        "features": summary["n_features"],
        "nodes": summary["n_nodes"],
        "leaves": summary["n_leaves"],
        "depth": summary["depth"],
        "labels": "multi" if summary["multilabel"] else "single",
    }
    for col, (label, value) in zip(st.columns(len(shown)), shown.items()):
        col.metric(label, value)
    st.caption(
        f"Taxonomy: {summary['taxonomy']} · features {'sparse' if summary['sparse'] else 'dense'} "
        f"(density {summary['density']:.3g}) · {summary['n_labels_used']} nodes used as labels"
    )
    findings = report_messages(summary, per_node)
    for level, msg in findings:
        (st.warning if level == "warning" else st.info)(msg)
    if not findings:
        st.success("No problem found: every node has data below it.")
    st.dataframe(per_node, hide_index=True, height=260, key="per_node_table")


state = get_state()
st.title("Data")
# the same elements above the tabs on every rerun: a message that came and went would move the
# tabs, and the browser would draw them anew on their first tab (an upload attached on the
# second tab snapped back to the first)
note = st.empty()
if st.session_state.pop("data_open_upload", False):  # from the home page's "Upload a file"
    st.session_state[UPLOAD_FIRST] = True
    note.info("Your own data: attach your files below.", icon=":material/upload_file:")
left, right, predict = st.tabs(
    TABS, default=TABS[1] if st.session_state.get(UPLOAD_FIRST) else TABS[0], key="data_tabs"
)
with left:
    builtin_tab(state)
with right:
    upload_tab(state)
with predict:
    st.markdown(
        "Predict with a model downloaded from this app (Explore or Train: **Model file**). New "
        "rows are read like the current data set's training rows, so load the data set the "
        "model was trained on first."
    )
    predict_with_model_file(state)

st.divider()
if len(state.datasets) > 1:
    session_switcher(state)
entry = state.dataset
if entry is None:
    st.info("No data set loaded yet.")
    st.stop()
assert entry is not None
st.subheader(f"Current: {entry.name}")
st.caption(entry.describe_split())
with st.expander("Train/test split", expanded=False):
    split_form(state, entry)
report(state.dataset or entry)
