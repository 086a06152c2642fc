"""Waiting for the probability reports computed in the background (:mod:`app.state.views`),
with a progress bar that says what is being computed, instead of a bare spinner."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import streamlit as st

from app.state.views import ProbabilityJob
from app.ui.errors import show_error

__all__ = ["await_reports"]

#: seconds between two updates of the progress bar
POLL = 0.25


def await_reports(jobs: Sequence[tuple[str, ProbabilityJob]]) -> dict[str, dict[str, Any]]:
    """The reports of ``jobs`` (label, job), waiting for those still running under one
    progress bar; a job that failed shows its error (named by its label) and is left out.

    The rest of the page is already on screen while this waits; a click meanwhile reruns the
    page (the jobs go on in the background, their results kept with the runs).
    """
    pending = [(label, job) for label, job in jobs if not job.done()]
    if pending:
        bar = st.progress(0.0, text="Calibrated probabilities: starting ...")
        while any(not job.done() for _, job in pending):
            done = sum(job.fraction for _, job in pending)
            label, job = next((lb, j) for lb, j in pending if not j.done())
            bar.progress(
                min(done / len(pending), 1.0),
                text=f"Calibrated probabilities of {label}: {job.describe()}",
            )
            time.sleep(POLL)
        bar.empty()
    out: dict[str, dict[str, Any]] = {}
    for label, job in jobs:
        try:
            out[label] = job.future.result()
        except Exception as exc:
            show_error(exc, f"Probabilities of {label}")
    return out
