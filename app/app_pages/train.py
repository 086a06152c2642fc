"""Train: a method, its settings ("as in the paper" / "fast") and parameters (widgets from their
declarations, only those the chosen solver uses), live bounds, run history."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from app.state import (
    AppState,
    DatasetEntry,
    Run,
    compatible_methods,
    default_method,
    display_name,
    method_check,
    resolved_params,
    runs_json,
    runs_table,
    suggested_params,
)
from app.state.jobs import live_jobs
from app.state.runs import count_text
from app.ui.method_card import show_card
from app.ui.model_io import delete_runs, run_files
from app.ui.page import training_page
from app.ui.training import (
    bounds_chart,
    job_view,
    metric_columns,
    show_metrics,
    start_job,
    x_axis_toggle,
)
from app.ui.widgets import (
    fmt,
    number_columns,
    param_errors,
    param_widgets,
    preset_bar,
    trivial_warning,
)
from hierlab import Taxonomy, get_method


def check_note(method: str, params: dict[str, Any], tax: Taxonomy) -> bool:
    """Show what the method's own check says of ``params`` (ORTHOGNL: is ``alpha``
    admissible); True if the settings would fail."""
    found = method_check(method, params, tax)
    if found is None:
        return False
    if found.ok is False:
        st.error(found.message)
        return True
    (st.success if found.ok else st.info)(found.message)
    return False


def tune_summary(state: AppState, entry: DatasetEntry, method: str) -> None:
    """The last C search on this data set for this method: the path and the C it chose."""
    found = state.tuned.get(entry.key)
    if found is None or found["method"] != method:
        return
    took = found["time"]
    with st.expander(
        f"C chosen for {display_name(method)} on {entry.name}: C = {found['best_C']:g}"
        + (f" ({took:.1f} s)" if took is not None else ""),
        expanded=False,
    ):
        st.caption(
            "Each C fitted on 80% of the training split, warm-started from the previous C "
            "(certified methods stop at a 1% gap on the path), scored by hierarchical F1 on "
            "the other 20%; the chosen C is then trained on the whole split."
        )
        path = pd.DataFrame(found["path"])
        st.dataframe(path, hide_index=True, column_config=number_columns(path))


def kept_text(run: Run) -> str:
    """After a stop: which certified iterate the model is."""
    kept = run.kept
    if not run.stopped or not kept:
        return ""
    gap = kept.get("gap")
    bound = f", certified gap {gap:.3g}" if isinstance(gap, float) and gap == gap else ""
    return f" (kept the iterate of iteration {kept.get('iteration')}{bound})"


def last_run(state: AppState, last: Run) -> None:
    """The last run's summary, metrics and warnings, and the run history."""
    hist = last.history
    finite = hist.get("upper", pd.Series([0.0])).map(
        lambda v: isinstance(v, float) and math.isfinite(v)
    )
    if not finite.any():
        st.caption(f"{last.name} reports no objective value: nothing to plot for its solver.")
    st.markdown(
        f"**Last run:** {last.label} — {fmt(last.fit_time, 3)} s, {count_text(hist)}"
        + (" — stopped by you" if last.stopped else "")
        + kept_text(last)
    )
    what = getattr(last.estimator, "algorithm_", "")
    if what:
        st.caption(f"What ran: {what}")
    trivial_warning(last)
    show_metrics(last.metrics)
    for w in last.warnings:
        st.warning(w)
    with st.expander("Model file, script and notebook of this run; delete it"):
        run_files(state, last, "train_last")
    st.subheader("Run history")
    table = runs_table(state.runs)
    st.dataframe(table, hide_index=True, column_config=metric_columns(table))
    st.download_button(
        "Download runs (JSON)",
        runs_json(state.runs),
        file_name="hierlab_runs.json",
        mime="application/json",
        key="download_runs",
    )
    labels = {r.id: r.label for r in state.runs}
    doomed = st.multiselect(
        "Runs to delete", list(labels), format_func=labels.__getitem__, key="train_delete_runs"
    )
    delete_runs(state, [r for r in state.runs if r.id in doomed], "train_history")


state, entry, tax, tax_source = training_page("Train")
st.caption(
    f"Data: **{entry.name}** — {entry.describe_split()} · taxonomy: {tax_source} "
    f"({tax.n_nodes} nodes, depth {tax.max_depth})"
)
methods = compatible_methods(entry.train, tax)
if not methods:
    st.warning("No registered method accepts this data set (multi-label or DAG).")
    st.stop()

left, right = st.columns([2, 3], gap="large")
with left:
    first = default_method(methods)
    method = st.selectbox(
        "Method",
        methods,
        index=methods.index(first) if first in methods else 0,
        key="train_method",
        format_func=lambda n: str(get_method(n).card.title),
    )
    spec = get_method(method)
    st.caption(spec.card.tags())
    with st.expander("About this method"):
        show_card(method, compact=True, key=f"train_card_{method}")
    start = preset_bar(
        spec, suggested_params(method, tax), resolve=lambda v: resolved_params(method, v, tax)
    )
    params = param_widgets(spec, start)
    problems = param_errors(spec, params)
    for problem in problems:
        st.error(problem)
    blocked = check_note(method, params, tax) or bool(problems)
    auto_C = any(p.name == "C" for p in spec.params) and st.checkbox(
        "Choose C for me",
        key="train_choose_C",
        help="Pick C by hierlab.tune: a warm-started path over C = 0.01 … 100, each fit scored "
        "by hierarchical F1 on 20% of the training split held out; then train with it.",
    )
    busy = any(j.kind in ("train", "tune") for j in live_jobs(state))
    clicked = st.button("Train", key="train", type="primary", disabled=blocked or busy)
    if busy:
        st.caption("A fit is running (right, and in the sidebar): stop it or wait for it.")

with right:
    x = x_axis_toggle()
    slots = [st.empty(), st.empty(), st.empty()]  # chart, progress bar, Stop button
    if clicked and start_job(state, entry, method, params, (tax, tax_source), choose_C=auto_C):
        st.rerun()  # the button shows as busy, the sidebar lists the job

# a timed fragment at the top level of the page, drawing into the right column's slots
if job_view(state, slots, x) is None and state.runs:
    bounds_chart(slots[0], state.runs[-1], x)
tune_summary(state, entry, method)
if state.runs:
    last_run(state, state.runs[-1])
