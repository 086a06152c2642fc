"""What several pages do the same way: require a data set, run a long task with a progress bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from app.state import AppState, DatasetEntry, get_state
from app.ui.errors import show_error
from hierlab import Taxonomy
from hierlab.lab.export import Progress

__all__ = ["require_dataset", "run_with_progress", "stored_result", "training_page"]

T = TypeVar("T")


def require_dataset(state: AppState) -> DatasetEntry:
    """The session's current data set; without one, say where to get it and stop the page."""
    entry = state.dataset
    if entry is None:
        st.info("Load a data set on the Data page first.")
        st.stop()
    assert entry is not None
    return entry


def training_page(title: str) -> tuple[AppState, DatasetEntry, Taxonomy, str]:
    """Title the page; return the session, its current data set, the taxonomy to train with
    and where that comes from (``"given"`` or ``"induced"``). Without a data set, stop."""
    state = get_state()
    st.title(title)
    entry = require_dataset(state)
    tax, source = state.training_taxonomy()
    assert tax is not None
    return state, entry, tax, source


def run_with_progress(task: Callable[[Progress], T], what: str) -> T | None:
    """``task(progress)`` under a progress bar; an error becomes a message and gives None.

    Parameters
    ----------
    task : callable
        Called with ``progress(fraction, text)``.
    what : str
        What is being done ("Running the demo"), prefixed to an error message.
    """
    bar = st.progress(0.0, text="starting ...")
    result = None
    try:
        result = task(lambda f, text: bar.progress(min(max(f, 0.0), 1.0), text=text))
    except Exception as exc:
        show_error(exc, what)
    bar.empty()
    return result


def stored_result(
    results: dict[str, Any],
    name: str,
    task: Callable[[Progress], Any],
    *,
    button: tuple[str, str],
    what: str,
    hint: str,
) -> Any:
    """A Run button for ``task`` and its result, kept in ``results[name]`` across reruns.

    Parameters
    ----------
    results : dict
        Where results live in the session (:func:`app.state.session_dict`).
    name : str
        The result's key in ``results``.
    task : callable
        Called with ``progress(fraction, text)`` when the button is pressed.
    button : (str, str)
        The button's label and key.
    what : str
        What the task does, for an error message.
    hint : str
        Shown while there is no result; the page stops there.
    """
    label, key = button
    if st.button(label, key=key, type="primary"):
        done = run_with_progress(task, what)
        if done is not None:
            results[name] = done
    if name not in results:
        st.info(hint)
        st.stop()
    return results[name]
