"""``LivePlot``: a solver callback that redraws the bounds figure in an ``st.empty()`` slot.

It is an ordinary :mod:`hierlab.callbacks` callback (called with every ``SolverState``), so the
engine never imports streamlit. It keeps every state (cheap), and redraws at most a few times a
second: the interval between redraws is stretched so that drawing never takes more than
``max_overhead`` of the wall time (a redraw costs tens of milliseconds). The solver's own clock
excludes callbacks anyway (``hierlab.solvers.base.solve``).

Stopping. A click anywhere in the app (the Stop button in particular) makes Streamlit interrupt
the script at its next ``st.*`` call by raising ``RerunException`` (or ``StopException`` when the
session closes, or with ``runner.fastReruns``, which ``.streamlit/config.toml`` turns off so that
the rerun waits for the stored run). ``LivePlot`` catches that exception at its redraw, asks the
solver to stop (returns True), and keeps the exception in :attr:`interrupt`; the page stores the
run (best iterate so far) before any other ``st.*`` call and then re-raises it with
:meth:`reraise` so Streamlit performs the requested rerun. Nothing is lost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

from hierlab.solvers.base import SolverResult, SolverState

__all__ = ["LivePlot"]

try:  # Streamlit's script-control exceptions (BaseException subclasses)
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
except ImportError:  # pragma: no cover - older layout
    from streamlit.runtime.scriptrunner.exceptions import (  # type: ignore[no-redef]
        ScriptControlException,
    )


class LivePlot:
    """Redraw the bounds figure live while a solver runs.

    Parameters
    ----------
    chart : streamlit placeholder
        An ``st.empty()`` slot; each redraw replaces its content with a plotly chart.
    figure : callable
        ``figure(history: DataFrame) -> go.Figure``, e.g. the bounds figure.
    progress : streamlit placeholder, optional
        An ``st.empty()`` slot for a progress bar.
    total : int, optional
        Expected number of iterations (the method's ``max_iter``/``epochs``) for the bar.
    key : str
        Prefix of the chart keys (each redraw needs a unique key).
    min_interval : float, default 0.25
        Seconds between redraws at least (four redraws a second at most).
    max_overhead : float, default 0.05
        Largest fraction of wall time spent drawing; the interval grows to respect it.

    Attributes
    ----------
    states : list of dict
        Every state seen, as ``SolverState.as_dict()``.
    n_draws : int
    draw_time : float
        Seconds spent drawing.
    interrupt : BaseException or None
        The Streamlit rerun/stop request caught while drawing.
    """

    def __init__(
        self,
        chart: Any,
        figure: Callable[[pd.DataFrame], Any],
        progress: Any = None,
        total: int | None = None,
        key: str = "bounds",
        min_interval: float = 0.25,
        max_overhead: float = 0.05,
    ) -> None:
        self.chart = chart
        self.figure = figure
        self.progress = progress
        self.total = total
        self.key = key
        self.min_interval = min_interval
        self.max_overhead = max_overhead
        self.states: list[dict[str, Any]] = []
        self.n_draws = 0
        self.draw_time = 0.0
        self.interrupt: BaseException | None = None
        self._next = 0.0

    @property
    def history(self) -> pd.DataFrame:
        """The states seen so far as a table."""
        return pd.DataFrame(self.states)

    def __call__(self, state: SolverState) -> bool:
        self.states.append(state.as_dict())
        if self.interrupt is not None:
            return True
        now = time.perf_counter()
        if now >= self._next:
            self.draw()
        return self.interrupt is not None

    def draw(self) -> None:
        """Redraw the chart and the progress bar now (a Streamlit interrupt is caught)."""
        if not self.states:
            return
        t0 = time.perf_counter()
        try:
            self.n_draws += 1
            fig = self.figure(self.history)
            self.chart.plotly_chart(
                fig, key=f"{self.key}_{self.n_draws}", width="stretch", theme=None
            )
            if self.progress is not None:
                self.progress.progress(*self._progress())
        except ScriptControlException as exc:
            self.interrupt = exc
        cost = time.perf_counter() - t0
        self.draw_time += cost
        self._next = time.perf_counter() + max(self.min_interval, cost / self.max_overhead)

    def _progress(self) -> tuple[float, str]:
        last = self.states[-1]
        it = int(last.get("iteration", len(self.states)))
        gap = last.get("gap")
        upper = last.get("upper")
        parts = [f"iteration {it}" + (f"/{self.total}" if self.total else "")]
        if isinstance(gap, float) and math.isfinite(gap):
            parts.append(f"gap {gap:.3g}")
        elif isinstance(upper, float) and math.isfinite(upper):
            parts.append(f"objective {upper:.4g}")
        parts.append(f"{float(last.get('elapsed', 0.0)):.1f} s")
        frac = min(1.0, it / self.total) if self.total else 0.0
        return frac, " · ".join(parts)

    def on_end(self, result: SolverResult) -> None:
        """Draw the final state (unless the app is being interrupted)."""
        if self.interrupt is None:
            self.draw()

    def reraise(self) -> None:
        """Re-raise the Streamlit interrupt caught while drawing, if any."""
        if self.interrupt is not None:
            exc, self.interrupt = self.interrupt, None
            raise exc
