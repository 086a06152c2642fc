"""The jobs panel: background work (running, done, failed) in the sidebar, refreshed every 2 s.

Training and tuning jobs (:mod:`app.state.jobs`) show their progress bar (passes, gap, the time
left as a range, the maximum) and a Cancel button; comparisons running in the worker process
(:mod:`app.state.background`) their progress; finished jobs stay listed for a while.

Where the panel's fragment is declared matters. Streamlit reruns a timed fragment in the
session's script thread with the container stack it had when it was declared, and leaves that
stack in place when the rerun ends; the person's next click (another page) is then served by
the same thread and draws into whatever that stack names. Declared inside ``with st.sidebar``,
the fragment left the sidebar on the stack, and the next page drew inside the sidebar with the
main area blank. So the fragment is declared at the top level of the main area (its own
container there stays empty) and writes into a sidebar slot that the full run creates:
:func:`sidebar_slot` before the page, :func:`jobs_panel` after it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.state import AppState
from app.state.background import BackgroundComparison, collect, pending
from app.state.jobs import Job, collect_jobs, live_jobs

__all__ = ["REFRESH", "cluster_setting", "jobs_panel", "sidebar_slot"]

#: seconds between two refreshes of the panel while work runs
REFRESH = 2.0


def sidebar_slot() -> Any:
    """The panel's place in the sidebar (call inside ``with st.sidebar``)."""
    return st.empty()


def _job_line(job: Job) -> str:
    """A finished job in one line."""
    took = (job.finished or job.started) - job.started
    if job.status == "failed":
        return f"{job.title}: failed: {job.error}"
    if job.run is None:
        return f"{job.title}: stopped before a model was fitted ({took:.0f} s)"
    if job.status == "stopped":
        kept = job.run.kept or {}
        it = kept.get("iteration")
        where = f", kept the iterate of iteration {it}" if it is not None else ""
        return f"Run {job.title}: stopped by you after {took:.0f} s{where}"
    return f"Run {job.title}: done in {took:.0f} s (Train, Explore)"


def _draw_job(job: Job) -> None:
    """A running job: its title, progress bar (time left, maximum) and Cancel button."""
    frac, text = job.progress()
    st.caption(job.title)
    st.progress(min(1.0, max(0.0, frac)), text=text)
    if job.status == "running" and st.button(
        "Cancel", key=f"cancel_{job.id}", help="Stop after the pass under way; keeps the run"
    ):
        job.stop()
        st.caption("Stopping after this pass …")


def _draw_comparison(comp: BackgroundComparison) -> None:
    """A background comparison: running (progress, Cancel) or failed."""
    if comp.error is not None or comp.future.done():
        st.caption(comp.describe())
        return
    frac, text = comp.progress()
    st.caption(comp.describe())
    st.progress(min(1.0, max(0.0, frac)), text=text)
    if not comp.cancelled and st.button(
        "Cancel", key=f"cancel_compare_{comp.id}", help="End it after the fit under way"
    ):
        comp.cancel()
        st.caption("Cancelling: stops after the fit under way …")


def _draw(state: AppState, slot: Any) -> None:
    """The panel's content: training and tuning jobs, background comparisons."""
    jobs = list(state.jobs)
    comparisons = pending(state)
    if not (jobs or comparisons or state.landed):
        slot.empty()
        return
    with slot.container():
        where = f" (on the dask cluster at {state.cluster})" if state.cluster else ""
        st.markdown("**Jobs**" + where)
        for job in jobs:
            if job.running:
                _draw_job(job)
            else:
                st.caption(_job_line(job))
        for comp in comparisons:
            _draw_comparison(comp)
        done = "is done: its results are on the Compare page."
        for k in state.landed:
            st.caption(f"Comparison #{k} {done}")


def cluster_setting(state: AppState) -> None:
    """The dask cluster comparisons and "Choose C" run on (call inside ``with st.sidebar``).

    An address is used once a scheduler answers there (:func:`hierlab.core.cluster.probe`,
    3 s); otherwise the message says why and the work stays on this machine.
    """
    from hierlab.core.cluster import probe

    where = f"the dask cluster at {state.cluster}" if state.cluster else "this machine"
    with st.expander(f"Compute: {where}", expanded=False):
        address = st.text_input(
            "dask scheduler", value=state.cluster or "", placeholder="tcp://host:8786",
            key="cluster_address", help="Comparisons and the C search run on its workers; "
            "empty: on this machine. Start one with `dask scheduler` and `dask worker`.",
        ).strip()  # fmt: skip
        if st.button("Use", key="cluster_use"):
            if not address:
                state.cluster = None
                st.rerun()
            try:
                n = probe(address, timeout=3.0)
            except Exception as exc:  # no scheduler there: say so, keep the work here
                st.error(f"{exc}. Comparisons and tuning stay on this machine.")
                return
            state.cluster = address
            st.success(f"{n} worker thread(s) at {address}")


def _collect(state: AppState) -> None:
    collect(state)
    collect_jobs(state)


@st.fragment(run_every=REFRESH)
def _refresh(state: AppState, slot: Any) -> None:
    """Every :data:`REFRESH` seconds: land finished jobs and redraw the panel. Never pre-empts
    a running page: Streamlit queues a fragment's timed rerun."""
    _collect(state)
    _draw(state, slot)


def jobs_panel(state: AppState, slot: Any) -> None:
    """Draw the panel in ``slot``; while work runs, refresh it on a timer.

    Call at the top level of the main area, outside any container (see the module's note):
    the fragment's declaration must not capture the sidebar.
    """
    _collect(state)  # a job finished since the last rerun lands now
    if state.background or state.landed or live_jobs(state):
        _refresh(state, slot)
    else:
        _draw(state, slot)
