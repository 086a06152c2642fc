"""``LivePlot``: a solver callback that redraws the bounds figure in an ``st.empty()`` slot.

It is an ordinary solver callback (``hierlab.core.solver.Callback``, called with every
``SolverState``), so the engine never imports streamlit. It keeps every state (cheap), and
redraws at most a few times a second: the interval between redraws is stretched so that
drawing never takes more than ``max_overhead`` of the wall time. Building the figure with
``hierlab.plots.bounds_figure`` costs ~40 ms (plotly's subplots), so it is built once and then
only its traces' arrays are replaced (~3 ms) while the set of traces stays the same
(``upper``/``objective``, ``lower``, ``gap``); a patched figure equals a fresh one (tested). The
solver's own clock excludes callbacks anyway
(``hierlab.core.solver.solve``).

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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from app.state.jobs import AFTER_SOLVER
from hierlab.core.progress import estimate_eta
from hierlab.core.solver import SolverResult, SolverState
from hierlab.plots import bounds_series

__all__ = ["LivePlot"]

#: the progress bar appears once a fit has run this many seconds
PROGRESS_AFTER = 2.0

try:  # Streamlit's script-control exceptions (BaseException subclasses)
    from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException
except ImportError:  # pragma: no cover - older layout
    from streamlit.runtime.scriptrunner.exceptions import (  # type: ignore[no-redef]
        ScriptControlException,
    )


@dataclass(eq=False)
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
    max_time : float, optional
        The solver's time limit in seconds, if any (for the bar and the time left).
    tol, rtol : float
        The solver's stopping rule ``gap <= max(tol, rtol * |upper|)`` (for the time left from
        the gap's rate of decrease).
    x : {"iteration", "elapsed"}
        The chart's x axis (the ``figure`` callable must draw against the same column).
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
    n_builds : int
        Figures built from scratch (the others only had their arrays replaced).
    """

    chart: Any
    figure: Callable[[pd.DataFrame], Any]
    progress: Any = None
    total: int | None = None
    max_time: float | None = None
    tol: float = 0.0
    rtol: float = 0.0
    x: str = "iteration"
    key: str = "bounds"
    min_interval: float = 0.25
    max_overhead: float = 0.05
    states: list[dict[str, Any]] = field(default_factory=list, init=False)
    n_draws: int = field(default=0, init=False)
    draw_time: float = field(default=0.0, init=False)
    interrupt: BaseException | None = field(default=None, init=False)
    n_builds: int = field(default=0, init=False)
    _next: float = field(default=0.0, init=False, repr=False)
    _start: float | None = field(default=None, init=False, repr=False)
    _fig: Any = field(default=None, init=False, repr=False)

    @property
    def history(self) -> pd.DataFrame:
        """The states seen so far as a table."""
        return pd.DataFrame(self.states)

    def __call__(self, state: SolverState) -> bool:
        if self._start is None:
            self._start = time.perf_counter() - float(state.elapsed)
        self.states.append(state.as_dict())
        if self.interrupt is not None:
            return True
        now = time.perf_counter()
        if now >= self._next:
            self.draw()
        return self.interrupt is not None

    def _build(self, history: pd.DataFrame) -> Any:
        self.n_builds += 1
        self._fig = self.figure(history)
        return self._fig

    def _patched(self, history: pd.DataFrame) -> Any:
        """The last figure with its traces' arrays replaced, or None when a rebuild is needed."""
        fig = self._fig
        if fig is None or not hasattr(fig, "batch_update"):
            return None
        series = bounds_series(history)
        names = [str(tr.name).rsplit(": ", 1)[-1] for tr in fig.data]
        if sorted(names) != sorted(series):
            return None
        xs = history[self.x].to_numpy() if self.x in history else np.arange(1, len(history) + 1)
        with fig.batch_update():
            for tr, n in zip(fig.data, names):
                tr.x = xs
                tr.y = series[n]
        return fig

    def draw(self, rebuild: bool = False) -> None:
        """Redraw the chart and the progress bar now (a Streamlit interrupt is caught).

        Parameters
        ----------
        rebuild : bool
            Build a fresh figure instead of updating the last one's arrays.
        """
        if not self.states:
            return
        t0 = time.perf_counter()
        try:
            self.n_draws += 1
            history = self.history
            fig = None if rebuild else self._patched(history)
            if fig is None:
                fig = self._build(history)
            self.chart.plotly_chart(
                fig, key=f"{self.key}_{self.n_draws}", width="stretch", theme=None
            )
            if self.progress is not None and self._wall() >= PROGRESS_AFTER:
                self.progress.progress(*self._progress())
        except ScriptControlException as exc:
            self.interrupt = exc
        cost = time.perf_counter() - t0
        self.draw_time += cost
        self._next = time.perf_counter() + max(self.min_interval, cost / self.max_overhead)

    def _wall(self) -> float:
        """Seconds since the fit started (its first state, less the solver's own time)."""
        return 0.0 if self._start is None else time.perf_counter() - self._start

    def on_start(self, info: dict[str, Any]) -> None:
        """The solver's own limits (``solve`` announces them before the first state)."""
        for name in ("max_iter", "max_time"):
            v = info.get(name)
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < 10**9:
                if name == "max_iter":
                    self.total = int(v)
                else:
                    self.max_time = float(v)
        self.tol = float(info.get("tol") or self.tol)
        self.rtol = float(info.get("rtol") or self.rtol)

    def _progress(self) -> tuple[float, str]:
        last = self.states[-1]
        it = int(last.get("iteration", len(self.states)))
        gap = last.get("gap")
        upper = last.get("upper")
        parts = [f"iteration {it}"]
        if isinstance(gap, float) and math.isfinite(gap):
            parts.append(f"gap {gap:.3g}")
        elif isinstance(upper, float) and math.isfinite(upper):
            parts.append(f"objective {upper:.4g}")
        parts.append(f"{float(last.get('elapsed', 0.0)):.1f} s")
        eta = estimate_eta(self.states, self.total, self.max_time, self.tol, self.rtol)
        parts += [f"solver: {eta.text()}", AFTER_SOLVER]  # the solver's part of the run only
        limits = [f"{self.total} iterations"] if self.total else []
        limits += [f"{self.max_time:g} s"] if self.max_time else []
        parts.append("at most " + ", ".join(limits) if limits else "no iteration or time limit")
        return eta.fraction, " · ".join(parts)

    def on_end(self, result: SolverResult) -> None:
        """Draw the final state (unless the app is being interrupted)."""
        if self.interrupt is None:
            self.draw()

    def reraise(self) -> None:
        """Re-raise the Streamlit interrupt caught while drawing, if any."""
        if self.interrupt is not None:
            exc, self.interrupt = self.interrupt, None
            raise exc
