"""Train: a method and its parameters (widgets from the registry), live bounds, run history."""

from __future__ import annotations

import math

import streamlit as st

from app.state import (
    admissibility,
    compatible_methods,
    default_method,
    fit_run,
    get_state,
    iteration_budget,
    runs_json,
    runs_table,
    suggested_params,
)
from app.ui.errors import show_error
from app.ui.figures import figure
from app.ui.live import LivePlot
from app.ui.widgets import param_widgets
from hierlab.core.registry import get_method

try:  # method cards (issue 11), shown beside the parameters when present
    from app.ui.method_card import show_card
except ImportError:  # pragma: no cover
    show_card = None

state = get_state()
st.title("Train")
entry = state.dataset
if entry is None:
    st.info("Load a data set on the Data page first.")
    st.stop()

tax, tax_source = state.training_taxonomy()
assert tax is not None
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
        format_func=lambda n: f"{n} — {get_method(n).summary}" if get_method(n).summary else n,
    )
    spec = get_method(method)
    tags = [f"seed {spec.seed}" if spec.seed != "baseline" else "baseline"]
    tags.append("certified lower bound" if spec.bounds else "objective only")
    if spec.multilabel:
        tags.append("multi-label")
    if spec.dag:
        tags.append("DAG")
    st.caption(" · ".join(tags))
    if show_card is not None:
        with st.expander("About this method"):
            try:
                show_card(method, compact=True, key=f"train_card_{method}")
            except Exception as exc:
                show_error(exc, "Method card")
    params = param_widgets(spec, suggested_params(method, tax))
    adm = admissibility(method, params, tax)
    blocked = False
    if adm is not None:
        lam = adm.get("min_eigenvalue")
        amax = adm.get("max_alpha")
        shown = (f"comparison matrix λ_min = {lam:.4g}" if isinstance(lam, float) else "") + (
            f" (alpha must stay below {amax:.4g})" if isinstance(amax, float) else ""
        )
        msg = adm.get("message", "")
        if adm.get("admissible") is False:
            blocked = True
            st.error(f"Not admissible: {shown} {msg}".strip())
        elif adm.get("admissible") is True:
            st.success(f"Admissible: {shown} {msg}".strip())
        else:
            st.info(f"{shown} {msg}".strip())
    clicked = st.button("Train", key="train", type="primary", disabled=blocked)

with right:
    chart_slot = st.empty()
    progress_slot = st.empty()
    stop_slot = st.empty()
    if clicked:
        stop_slot.button("Stop", key="stop", help="Stop the solver and keep the best iterate")
        live = LivePlot(
            chart_slot,
            lambda h: figure("bounds_figure", h, title=f"{method} on {entry.name}"),
            progress=progress_slot,
            total=iteration_budget(method, params),
            key=f"bounds_{state.next_id}",
        )
        try:
            # no st.* call between the end of the fit and storing the run: after a click
            # (Stop) every st.* call raises Streamlit's interrupt
            state.runs.append(
                fit_run(
                    state,
                    entry,
                    method,
                    params,
                    callbacks=[live],
                    taxonomy=tax,
                    taxonomy_source=tax_source,
                    stopped=lambda: live.interrupt is not None,
                )
            )
        except Exception as exc:
            show_error(exc, f"Training {method}")
        live.reraise()  # a click during training: the run is stored, now rerun
        stop_slot.empty()
        if not live.states:
            chart_slot.empty()
    elif state.runs:
        last = state.runs[-1]
        chart_slot.plotly_chart(
            figure("bounds_figure", last.history, title=f"{last.label} on {last.dataset_name}"),
            key="bounds_last",
            theme=None,
        )

if state.runs:
    last = state.runs[-1]
    hist = last.history
    if (
        "upper" in hist
        and not hist["upper"].map(lambda v: isinstance(v, float) and math.isfinite(v)).any()
    ):
        st.caption(f"{last.method} reports no objective value: nothing to plot for its solver.")
    st.markdown(
        f"**Last run:** {last.label} — {last.fit_time:.2f} s, {len(hist)} iteration(s)"
        + (" — stopped by you" if last.stopped else "")
    )
    cols = st.columns(max(1, min(6, len(last.metrics))))
    for i, (k, v) in enumerate(last.metrics.items()):
        cols[i % len(cols)].metric(k.replace("_", " "), f"{v:.4f}")
    for w in last.warnings:
        st.warning(w)
    st.subheader("Run history")
    st.dataframe(runs_table(state.runs), hide_index=True)
    st.download_button(
        "Download runs (JSON)",
        runs_json(state.runs),
        file_name="hierlab_runs.json",
        mime="application/json",
        key="download_runs",
    )
