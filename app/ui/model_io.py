"""What a user does with a run or a comparison besides looking at it: download the model as a
safe model file, export a script and a notebook that reproduce its numbers, delete it; and
predict on new rows with an uploaded model file.

The work is :mod:`app.state.model_files` (``hierlab.persistence``), :mod:`app.state.exports`
(``hierlab.lab.export``) and :func:`app.state.runs.delete_run`; these functions draw the
buttons and the messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from app.state import AppState, Run, delete_run
from app.state.exports import comparison_session, export_files, runs_session
from app.state.model_files import (
    MODEL_SUFFIX,
    LoadedModel,
    model_file_bytes,
    model_file_name,
    predict_rows,
    read_model_file,
    read_rows_to_predict,
)
from app.ui.errors import show_error
from app.ui.widgets import fmt, number_columns

__all__ = [
    "comparison_exports",
    "delete_runs",
    "predict_with_model_file",
    "run_files",
]

#: where an uploaded model lives in the session (one at a time)
LOADED_MODEL = "uploaded_model"
#: its predictions, by (model, data set, rows): the last one only
PREDICTED = "uploaded_model_predictions"


def _stem(text: str) -> str:
    return model_file_name(text)[: -len(MODEL_SUFFIX)]


def _export_buttons(export: Any, key: str, columns: Sequence[Any] | None = None) -> None:
    """The script, the notebook and the zip bundle of an export, side by side."""
    c1, c2, c3 = columns if columns is not None else st.columns(3)
    c1.download_button(
        "Script (.py)",
        export.script,
        file_name=f"{export.stem}.py",
        mime="text/x-python",
        key=f"{key}_py",
        help="Reproduces the numbers with the public hierlab API; prints them as JSON lines.",
    )
    c2.download_button(
        "Notebook (.ipynb)",
        export.notebook,
        file_name=f"{export.stem}.ipynb",
        mime="application/x-ipynb+json",
        key=f"{key}_nb",
        help="The script's cells as a Jupyter notebook.",
    )
    c3.download_button(
        "Everything (.zip)",
        export.bundle,
        file_name=f"{export.stem}.zip",
        mime="application/zip",
        key=f"{key}_zip",
        help="Script, notebook and the data files they read (uploads), ready to run.",
    )


def run_files(state: AppState, run: Run, key: str) -> None:
    """Download the run's model, export it as a script and a notebook, delete it."""
    st.markdown("**Files of this run**")
    cols = st.columns(4)
    cols[0].download_button(
        "Model file (.hlm)",
        lambda: model_file_bytes(run.estimator),
        file_name=model_file_name(run.label),
        mime="application/zip",
        key=f"{key}_model",
        help="A safe hierlab model file (a zip of JSON and numpy arrays, never a pickle): "
        "hierlab.load(path) reads it; the Data page predicts with it.",
    )
    try:
        export = export_files(state, runs_session(state, [run]), run.dataset_key, _stem(run.label))
    except Exception as exc:
        show_error(exc, f"Exporting {run.label}")
    else:
        _export_buttons(export, f"{key}_export", cols[1:])
    delete_runs(state, [run], key)


def delete_runs(state: AppState, runs: list[Run], key: str) -> None:
    """A Delete button (after a confirmation box) for ``runs``; the deletion runs in the
    button's callback, before any widget that lists runs is drawn again."""
    if not runs:
        return
    what = runs[0].label if len(runs) == 1 else f"{len(runs)} runs"
    ids = [r.id for r in runs]
    confirm_key = f"{key}_confirm_delete"

    def _delete() -> None:
        for run_id in ids:
            delete_run(state, run_id)
        st.session_state[confirm_key] = False

    confirm = st.checkbox(f"Delete {what}", key=confirm_key)
    st.button(
        "Delete",
        key=f"{key}_delete",
        disabled=not confirm,
        icon=":material/delete:",
        on_click=_delete,
        help="Removes the run everywhere: history, Explore, Compare, downloads and exports.",
    )


def comparison_exports(state: AppState, comp: Any) -> None:
    """Export a comparison as a script and a notebook that reproduce its table."""
    try:
        export = export_files(
            state,
            comparison_session(state, comp),
            comp.dataset_key,
            f"hierlab_comparison_{comp.id}",
        )
    except Exception as exc:
        show_error(exc, f"Exporting comparison #{comp.id}")
        return
    st.markdown("**Reproduce this comparison**")
    _export_buttons(export, f"compare_export_{comp.id}")


# ---------------------------------------------------------------------------- predict
def _upload_model() -> LoadedModel | None:
    """The model uploader; a bad file gives a message and leaves nothing loaded."""
    up = st.file_uploader(
        "Model file (.hlm)", type=["hlm", "zip"], key="predict_model_file",
        help="A model file downloaded from this app (or written by hierlab.save).",
    )  # fmt: skip
    if up is None:
        st.session_state.pop(LOADED_MODEL, None)
        return None
    held: LoadedModel | None = st.session_state.get(LOADED_MODEL)
    if held is not None and held.name == f"{up.name}:{up.file_id}":
        return held
    st.session_state.pop(LOADED_MODEL, None)
    try:
        model = read_model_file(up.getvalue(), up.name)
    except Exception as exc:
        show_error(exc, "Reading the model file")
        return None
    model.name = f"{up.name}:{up.file_id}"
    st.session_state[LOADED_MODEL] = model
    return model


def predict_with_model_file(state: AppState) -> None:
    """Upload a model file and predict on the current data set's test rows or on a file of
    new rows (read like the current data set's training rows)."""
    model = _upload_model()
    if model is None:
        return
    st.success(f"Model loaded: {model.describe()}.")
    entry = state.dataset
    if entry is None:
        st.info("Load the data set the model was trained on first: new rows are read like it.")
        return
    sources = {"test": f"the test rows of {entry.name}", "file": "a file of new rows"}
    source = st.radio(
        "Predict on", list(sources), format_func=sources.__getitem__, horizontal=True,
        key="predict_source",
    )  # fmt: skip
    rows, what = entry.test, (entry.key, str(entry.split))
    new = None
    if source == "file":
        new = st.file_uploader(
            "New rows (labels optional)",
            type=["csv", "tsv", "txt", "svm", "svmlight", "libsvm", "arff"],
            key="predict_rows_file",
        )
        if new is None:
            return
        what = (entry.key, f"{new.name}:{new.file_id}")
    done: dict[Any, Any] = st.session_state.setdefault(PREDICTED, {})
    key = (model.name, *what)
    if key not in done:  # predicted once per model and rows, not on every rerun
        try:
            if new is not None:
                rows = read_rows_to_predict(new.getvalue(), new.name, entry.train)
            done.clear()
            done[key] = predict_rows(model, rows)
        except Exception as exc:
            show_error(exc, "Predicting")
            return
    table, metrics = done[key]
    if metrics:
        st.caption(" · ".join(f"{k} {fmt(v)}" for k, v in metrics.items()))
    st.dataframe(
        table, hide_index=True, height=260, key="predict_table", column_config=number_columns(table)
    )
    st.download_button(
        "Predictions (CSV)",
        table.to_csv(index=False),
        file_name="hierlab_predictions.csv",
        mime="text/csv",
        key="predict_csv",
    )
