"""The probability reports computed in the background (:mod:`app.state.views`), shown when
ready: until then a progress bar that says what is being computed, refreshed by a fragment
while the rest of the page is already there and usable (its script run has ended)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import streamlit as st

from app.state.views import ProbabilityJob
from app.ui.errors import show_error

__all__ = ["GRACE", "POLL", "ready_reports"]

#: seconds between two refreshes of the progress bar
POLL = 0.5
#: seconds the script run itself waits for reports about to finish (then a fragment polls)
GRACE = 1.0


def _wait(jobs: Sequence[tuple[str, ProbabilityJob]], seconds: float) -> None:
    """Wait up to ``seconds`` for the jobs under a progress bar (gone afterwards)."""
    bar = st.progress(0.0, text="Calibrated probabilities ...")
    end = time.monotonic() + seconds
    while any(not job.done() for _, job in jobs) and time.monotonic() < end:
        frac, text = _progress(jobs)
        bar.progress(frac, text=text)
        time.sleep(0.1)
    bar.empty()


def _progress(jobs: Sequence[tuple[str, ProbabilityJob]]) -> tuple[float, str]:
    """The jobs' overall progress and the text of the first one still running."""
    label, job = next(((lb, j) for lb, j in jobs if not j.done()), jobs[-1])
    done = sum(1.0 if j.done() else j.fraction for _, j in jobs) / len(jobs)
    return min(done, 1.0), f"Calibrated probabilities of {label}: {job.describe()}"


def ready_reports(jobs: Sequence[tuple[str, ProbabilityJob]]) -> dict[str, dict[str, Any]] | None:
    """The reports of ``jobs`` (label, job) when all are done (a failed one shows its error,
    named by its label, and is left out). Reports about to finish are waited for
    (:data:`GRACE` seconds at most, under a progress bar); None while some still run after
    that: a progress bar is then drawn, refreshed every :data:`POLL` seconds by a fragment that
    reruns the page once they are done (the page's own script run has ended meanwhile).

    Parameters
    ----------
    jobs : sequence of (str, ProbabilityJob)
    """
    if any(not job.done() for _, job in jobs):
        _wait(jobs, GRACE)
    if any(not job.done() for _, job in jobs):

        @st.fragment(run_every=POLL)
        def poll() -> None:
            if all(job.done() for _, job in jobs):
                st.rerun(scope="app")  # draw the reports in the page's own flow
            frac, text = _progress(jobs)
            st.progress(frac, text=text)

        poll()
        return None
    out: dict[str, dict[str, Any]] = {}
    for label, job in jobs:
        try:
            out[label] = job.future.result()
        except Exception as exc:
            show_error(exc, f"Probabilities of {label}")
    return out
