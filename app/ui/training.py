"""Training with the live bounds chart, shared by the Train page and the home page's first run.

:func:`train_live` fits one method with a :class:`~app.ui.live.LivePlot` (the gap on a log
scale, against iterations or seconds, :func:`x_axis_toggle`), a progress bar with the time left
once the fit passes two seconds, and a Stop button that keeps the run;
:func:`show_metrics` draws a run's metrics under their display names with their definitions as
tooltips (:data:`hierlab.evaluation.metrics.METRICS`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app.state import AppState, DatasetEntry, Run, display_name, fit_run, iteration_budget
from app.state.jobs import Job, collect_jobs, live_jobs, start_training
from app.ui.errors import show_error
from app.ui.live import LivePlot
from app.ui.widgets import NUMBER_FORMAT, fmt, number_columns
from hierlab import Taxonomy, get_method
from hierlab.evaluation.metrics import METRICS, metric_help, metric_label
from hierlab.plots import bounds_figure, has_certificate, training_curve_figure

__all__ = [
    "LIVE_REFRESH",
    "X_AXES",
    "bounds_chart",
    "job_view",
    "metric_columns",
    "show_metrics",
    "start_job",
    "train_live",
    "x_axis_toggle",
]

#: the live chart's x axes: history column -> how the toggle names it
X_AXES = {"iteration": "iterations", "elapsed": "seconds"}
#: seconds between two redraws of a running fit on the Train page
LIVE_REFRESH = 0.5


def x_axis_toggle(key: str = "bounds_x") -> str:
    """The toggle between iterations and seconds on the bounds chart; returns the column."""
    if key not in st.session_state:
        st.session_state[key] = "iteration"
    return str(
        st.radio(
            "Gap against",
            list(X_AXES),
            format_func=X_AXES.__getitem__,
            key=key,
            horizontal=True,
            help="The gap (upper − lower bound) on a log scale against solver iterations or "
            "against seconds of solver time.",
        )
    )


def bounds_chart(slot: Any, run: Run, x: str, key: str = "bounds_last") -> None:
    """Draw a finished run's bounds chart in ``slot``; for a method without a certificate its
    training curve, or a sentence when it reports no curve either (never an empty chart)."""
    title = f"{run.label} on {run.dataset_name}"
    if has_certificate(run.history):
        fig = bounds_figure(run.history, x=x, title=title)
    else:
        fig = training_curve_figure(run.history, x=x, title=f"{title}: training curve")
    if fig is None:
        what = getattr(run.estimator, "algorithm_", "") or run.name
        slot.info(
            f"{run.name} has no certificate (no lower bound on its objective) and reports no "
            f"objective per iteration: {what}. Nothing to plot; its metrics are below."
        )
        return
    slot.plotly_chart(fig, key=key, theme=None, width="stretch")


def train_live(
    state: AppState,
    entry: DatasetEntry,
    method: str,
    params: dict[str, Any],
    taxonomy: tuple[Taxonomy, str],
    slots: list[Any],
    x: str = "iteration",
) -> Run | None:
    """Fit with the live bound chart and a Stop button; the run joins the history.

    Parameters
    ----------
    state, entry
        The session and the data set (its split).
    method : str
    params : dict
        The method's parameters (validated by ``fit_run``).
    taxonomy : (Taxonomy, str)
        The taxonomy to train with and where it comes from.
    slots : list
        The ``st.empty()`` places of the chart, the progress bar and the Stop button.
    x : {"iteration", "elapsed"}
        The chart's x axis.

    Returns
    -------
    Run or None
        The stored run (None when the fit failed: the message is shown).
    """
    chart_slot, progress_slot, stop_slot = slots
    stop_slot.button("Stop", key="stop", help="Stop the solver and keep the best iterate")
    limits = get_method(method).stopping_rule(params)
    live = LivePlot(
        chart_slot,
        lambda h: bounds_figure(h, x=x, title=f"{display_name(method)} on {entry.name}"),
        progress=progress_slot,
        total=iteration_budget(method, params),
        max_time=limits.get("max_time"),
        tol=limits.get("tol", 0.0),
        rtol=limits.get("rtol", 0.0),
        x=x,
        key=f"bounds_{state.next_id}",
    )
    run = None
    try:
        # no st.* call between the end of the fit and storing the run: after a click
        # (Stop) every st.* call raises Streamlit's interrupt
        run = fit_run(
            state,
            entry,
            method,
            params,
            callbacks=[live],
            taxonomy=taxonomy[0],
            taxonomy_source=taxonomy[1],
            stopped=lambda: live.interrupt is not None,
        )
        state.runs.append(run)
    except Exception as exc:
        show_error(exc, f"Training {method}")
    live.reraise()  # a click during training: the run is stored, now rerun
    stop_slot.empty()
    progress_slot.empty()
    if run is not None and not has_certificate(run.history):
        # no lower bound: its training curve or a sentence instead of the live bounds chart
        bounds_chart(chart_slot, run, x, key=f"curve_{run.id}")
    elif not live.states:
        chart_slot.empty()
    return run


def show_metrics(metrics: dict[str, float], per_row: int = 5) -> None:
    """A run's metrics as ``st.metric`` tiles: display names, definitions as tooltips."""
    items = list(metrics.items())
    for start in range(0, len(items), per_row):
        cols = st.columns(per_row)
        for col, (k, v) in zip(cols, items[start : start + per_row]):
            col.metric(metric_label(k), fmt(v), help=metric_help(k) or None)


def metric_columns(df: pd.DataFrame) -> dict[str, Any]:
    """``column_config`` for ``st.dataframe``: float columns with 4 significant digits, metric
    columns under their display names with their definitions as the column tooltip."""
    out = number_columns(df)
    for c in df.columns:
        if c in METRICS:
            numeric = getattr(df[c], "dtype", None) is not None and df[c].dtype.kind in "fiu"
            out[c] = (
                st.column_config.NumberColumn(
                    metric_label(c), help=metric_help(c), format=NUMBER_FORMAT
                )
                if numeric
                else st.column_config.Column(metric_label(c), help=metric_help(c))
            )
    return out


# ---------------------------------------------------------------------------------- jobs
def start_job(
    state: AppState,
    entry: DatasetEntry,
    method: str,
    params: dict[str, Any],
    taxonomy: tuple[Taxonomy, str],
    choose_C: bool = False,
) -> Job | None:
    """Start training (after choosing C when ``choose_C``) in the background; None when it
    could not start (the message is shown)."""
    try:
        return start_training(state, entry, method, params, taxonomy, choose_C=choose_C)
    except Exception as exc:
        show_error(exc, f"Training {method}")
        return None


def _tune_table(job: Job) -> pd.DataFrame:
    """The C path so far: one row per C fitted and scored."""
    cols = ["C", "score", "fit_time", "n_iter", "gap"]
    rows = [{k: r.get(k) for k in cols} for r in job.path]
    return pd.DataFrame(rows, columns=cols).rename(
        columns={"fit_time": "fit s", "n_iter": "iterations", "score": "hierarchical F1"}
    )


def draw_job(job: Job, slots: list[Any], x: str, stop: bool = True) -> None:
    """A running job in ``slots`` (chart or C path, progress bar with the time left and the
    maximum, Stop button). A click on Stop is acknowledged in this same run."""
    chart_slot, progress_slot, stop_slot = slots
    if job.phase == "tune":
        with chart_slot.container():
            st.caption(f"Choosing C for {display_name(job.method)}: each C as it is scored")
            st.dataframe(_tune_table(job), hide_index=True)
    elif job.progress_cb.states:
        history = pd.DataFrame(list(job.progress_cb.states))
        chart_slot.plotly_chart(
            bounds_figure(history, x=x, title=job.title),
            key=f"live_{job.id}",
            theme=None,
            width="stretch",
        )
    else:  # every slot is written on every run: the fragment's reruns write into them
        chart_slot.empty()
    if stop and job.status == "running":
        if stop_slot.button("Stop", key=f"stop_{job.id}", help=STOP_HELP):
            job.stop()
    elif job.status == "stopping":
        stop_slot.caption("Stop requested.")
    frac, text = job.progress()
    progress_slot.progress(min(1.0, max(0.0, frac)), text=text)


STOP_HELP = "Stop after the pass under way and keep the best iterate so far"


@st.fragment(run_every=LIVE_REFRESH)
def _live(state: AppState, job_id: int, slots: list[Any], x: str) -> None:
    """Redraw the running job; once it is done, rerun the page (its run is in the history)."""
    job = next((j for j in state.jobs if j.id == job_id), None)
    if job is None:
        return
    if not job.running:
        collect_jobs(state)
        st.rerun()
    draw_job(job, slots, x)


def job_view(state: AppState, slots: list[Any], x: str) -> Job | None:
    """Show the session's running training job live in ``slots``; returns it (None without).

    Call at the top level of the main area, outside any container (see :mod:`app.ui.jobs`):
    the live view is a timed fragment that writes into ``slots``.
    """
    running = [j for j in live_jobs(state) if j.kind in ("train", "tune")]
    if not running:
        return None
    _live(state, running[-1].id, slots, x)
    return running[-1]
