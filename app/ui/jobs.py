"""The jobs panel: background work (running, done, failed) in the sidebar, refreshed every 2 s.

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
from app.state.background import collect, pending

__all__ = ["REFRESH", "jobs_panel", "sidebar_slot"]

#: seconds between two refreshes of the panel while work runs
REFRESH = 2.0


def sidebar_slot() -> Any:
    """The panel's place in the sidebar (call inside ``with st.sidebar``)."""
    return st.empty()


def _draw(state: AppState, slot: Any) -> None:
    """The panel's content: each background job and each comparison that landed."""
    lines = [job.describe() for job in pending(state)]
    done = "is done: its results are on the Compare page."
    lines += [f"Comparison #{k} {done}" for k in state.landed]
    if not lines:
        slot.empty()
        return
    with slot.container():
        for line in lines:
            st.caption(line)


@st.fragment(run_every=REFRESH)
def _refresh(state: AppState, slot: Any) -> None:
    """Every :data:`REFRESH` seconds: land finished jobs and redraw the panel. Never pre-empts
    a running page (a live fit included): Streamlit queues a fragment's timed rerun."""
    collect(state)
    _draw(state, slot)


def jobs_panel(state: AppState, slot: Any) -> None:
    """Draw the panel in ``slot``; while work runs, refresh it on a timer.

    Call at the top level of the main area, outside any container (see the module's note):
    the fragment's declaration must not capture the sidebar.
    """
    collect(state)  # a job finished since the last rerun lands now
    if state.background or state.landed:
        _refresh(state, slot)
    else:
        _draw(state, slot)
