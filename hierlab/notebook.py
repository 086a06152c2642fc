"""Watch a solver inside Jupyter: :class:`LiveBounds`, a fit callback drawing the bounds live.

``LiveBounds`` is an ordinary solver callback (:class:`hierlab.core.solver.Callback`: called with
every :class:`~hierlab.core.solver.SolverState`, returns True to stop, ``on_end(result)`` at the
end), the same contract as the app's live plot, so it works with every method::

    from hierlab.notebook import LiveBounds
    live = LiveBounds()
    est.fit(X, y, callbacks=[live])

In a Jupyter kernel with plotly's widget support (``pip install hierlab[notebook]``: plotly 6
and 7 build ``FigureWidget`` on ``anywidget``), it shows the figure of
:func:`hierlab.plots.bounds_figure` in the cell (upper and lower bound on top, the gap
``upper - lower`` on a log scale below) and updates it while ``fit`` runs, at most
``1 / min_interval`` times a second (only the traces' arrays are replaced), with a progress line
as the figure's title: iteration, gap, seconds and, for long fits, the fraction done. Without a
kernel (a plain script) or without ``anywidget`` it degrades to a text progress line, rewritten in
place at the same rate; in a kernel without widgets the final figure is shown as a static plotly
figure when the fit ends. The solver's clock excludes the callback's time
(:func:`hierlab.core.solver.solve`).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any, TextIO

import pandas as pd

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import make_estimator
from hierlab.core.solver import SolverResult, SolverState
from hierlab.plots import bounds_figure, bounds_series

__all__ = ["LiveBounds", "compare_presets", "widgets_available"]

_MODES = ("auto", "widget", "text")

#: seconds after which the progress line also says how long the budget allows at most
LONG_FIT = 2.0


def _duration(seconds: float) -> str:
    """``"40 s"``, ``"3 min"``, ``"2.1 h"``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def widgets_available() -> bool:
    """True when plotly's ``FigureWidget`` can be built (``anywidget`` is installed)."""
    try:
        from plotly.graph_objects import FigureWidget

        FigureWidget()
    except Exception:  # ImportError, or plotly's own message asking for anywidget
        return False
    return True


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel attached)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except AttributeError:  # pragma: no cover - a partial IPython
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def _display(obj: Any) -> None:
    """``IPython.display.display(obj)`` (the caller made sure IPython is there)."""
    from IPython.display import display

    display(obj)


class LiveBounds:
    """Draw a solver's upper and lower bounds and their gap while ``fit`` runs.

    Parameters
    ----------
    x : {"iteration", "elapsed"}, default "iteration"
        The x axis: iterations, or the solver's seconds.
    title : str, optional
        Shown before the progress line.
    total : int, optional
        The iteration budget (the estimator's ``max_iter`` or ``epochs``), for the fraction done.
    max_time : float, optional
        The time budget in seconds, for the fraction done.
    min_interval : float, default 0.25
        Seconds between redraws at least (four a second at most).
    max_overhead : float, default 0.05
        Largest fraction of the wall time spent drawing: the interval grows with the cost of a
        redraw (long histories), as the app's live plot does.
    mode : {"auto", "widget", "text"}, default "auto"
        ``"auto"``: a live ``FigureWidget`` inside a Jupyter kernel with widget support, else the
        text line. ``"widget"`` raises :class:`~hierlab.ParameterError` without ``anywidget``.
    stream : file-like, optional
        Where the text line goes (default ``sys.stderr``).

    Attributes
    ----------
    states : list of dict
        Every state seen, as :meth:`SolverState.as_dict` (use one ``LiveBounds`` per fit).
    figure : plotly FigureWidget or Figure or None
        The live figure (widget mode), or the final static figure (a kernel without widgets).
    n_draws : int
        Redraws so far.
    mode_ : {"widget", "text"}
        The mode in use.
    result : SolverResult or None
        What :func:`hierlab.solve` returned, after the fit.

    Examples
    --------
    >>> import hierlab
    >>> from hierlab.notebook import LiveBounds
    >>> data = hierlab.make_hieron_synthetic(n_train_per_label=5, n_test_per_label=1)[0]
    >>> live = LiveBounds(mode="text", stream=open("/dev/null", "w"))
    >>> est = hierlab.OrthogonalTransferClassifier(taxonomy=data.taxonomy, max_iter=20)
    >>> _ = est.fit(data.X, data.y, callbacks=[live])
    >>> len(live.states) == len(est.history_)
    True
    """

    def __init__(
        self,
        x: str = "iteration",
        title: str | None = None,
        total: int | None = None,
        max_time: float | None = None,
        min_interval: float = 0.25,
        max_overhead: float = 0.05,
        mode: str = "auto",
        stream: TextIO | None = None,
    ) -> None:
        if x not in ("iteration", "elapsed"):
            raise ParameterError(f"LiveBounds: x must be 'iteration' or 'elapsed', got {x!r}")
        if mode not in _MODES:
            raise ParameterError(f"LiveBounds: mode must be one of {_MODES}, got {mode!r}")
        if not min_interval >= 0:
            raise ParameterError(f"LiveBounds: min_interval must be >= 0, got {min_interval}")
        self.x, self.title, self.total, self.max_time = x, title, total, max_time
        if not 0 < max_overhead <= 1:
            raise ParameterError(f"LiveBounds: max_overhead must be in (0, 1], got {max_overhead}")
        self.min_interval = float(min_interval)
        self.max_overhead = float(max_overhead)
        self.stream = stream
        self.mode_ = self._choose(mode)
        self.states: list[dict[str, Any]] = []
        self.figure: Any = None
        self.n_draws = 0
        self.result: SolverResult | None = None
        self._next = 0.0
        self._line = 0

    @staticmethod
    def _choose(mode: str) -> str:
        if mode == "widget":
            if not widgets_available():
                raise ParameterError(
                    "LiveBounds(mode='widget') needs plotly's FigureWidget, which plotly >= 6 "
                    "builds on anywidget: pip install 'hierlab[notebook]' (or anywidget)"
                )
            return "widget"
        if mode == "text":
            return "text"
        return "widget" if _in_kernel() and widgets_available() else "text"

    @property
    def history(self) -> pd.DataFrame:
        """The states seen so far as a table (the columns of ``est.history_``)."""
        return pd.DataFrame(self.states)

    def __call__(self, state: SolverState) -> bool:
        self.states.append(state.as_dict())
        if time.perf_counter() >= self._next:
            self.draw()
        return False

    def on_end(self, result: SolverResult) -> None:
        """Draw the final state and end the progress line.

        Parameters
        ----------
        result : SolverResult
            What the solver returned.
        """
        self.result = result
        self.draw(final=True)

    # ------------------------------------------------------------------------- drawing
    def draw(self, final: bool = False) -> None:
        """Redraw now: the figure's arrays (widget) or the progress line (text).

        Parameters
        ----------
        final : bool, default False
            The fit has ended: end the text line with a newline (and, in a kernel without
            widgets, show the final figure).
        """
        if not self.states:
            return
        t0 = time.perf_counter()
        self.n_draws += 1
        if self.mode_ == "widget":
            self._draw_widget()
        else:
            self._draw_text(final)
        now = time.perf_counter()
        self._next = now + max(self.min_interval, (now - t0) / self.max_overhead)

    def _draw_widget(self) -> None:
        history = self.history
        if self.figure is None:
            from plotly.graph_objects import FigureWidget

            self.figure = FigureWidget(bounds_figure(history, x=self.x))
            self._retitle()
            if _in_kernel():
                _display(self.figure)
            return
        series = bounds_series(history)
        if sorted(str(tr.name) for tr in self.figure.data) != sorted(series):
            fresh = bounds_figure(history, x=self.x)  # a curve appeared: rebuild the traces
            with self.figure.batch_update():
                self.figure.data = ()
                self.figure.add_traces(list(fresh.data))
                self._retitle()
            return
        xs = history[self.x].to_numpy()
        with self.figure.batch_update():
            for trace in self.figure.data:
                trace.x = xs
                trace.y = series[str(trace.name)]
            self._retitle()

    def _retitle(self) -> None:
        self.figure.layout.title = self.progress_text()

    def _draw_text(self, final: bool) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        text = self.progress_text()
        pad = " " * max(0, self._line - len(text))
        self._line = len(text)
        stream.write("\r" + text + pad + ("\n" if final else ""))
        stream.flush()
        if final and _in_kernel():
            self.figure = bounds_figure(self.history, x=self.x, title=self.title)
            _display(self.figure)

    def progress_text(self) -> str:
        """``"title · iteration 40/200 (20%) · gap 3.1e-04 · 1.2 s"``: the last state in a line.

        Returns
        -------
        str
            The fraction done is the larger of the iteration and time budgets' fractions; after
            :data:`LONG_FIT` seconds, the time the budgets allow at most follows it
            (``"(20%, at most 40 s left)"``; the gap may close earlier); ``done (reason)``
            follows once the fit has ended.
        """
        last = self.states[-1]
        it = int(last.get("iteration") or len(self.states))
        elapsed = float(last.get("elapsed") or 0.0)
        parts = [self.title] if self.title else []
        head = f"iteration {it}" + (f"/{self.total}" if self.total else "")
        done, left = [], []
        if self.total and it > 0:
            done.append(it / self.total)
            left.append(elapsed * max(0, self.total - it) / it)
        if self.max_time:
            done.append(elapsed / self.max_time)
            left.append(max(0.0, self.max_time - elapsed))
        if done and self.result is None:
            head += f" ({min(1.0, max(done)):.0%}"
            if elapsed >= LONG_FIT:  # the gap may close before the budgets run out
                head += f", at most {_duration(min(left))} left"
            head += ")"
        parts.append(head)
        gap, upper = last.get("gap"), last.get("upper")
        if isinstance(gap, float) and math.isfinite(gap):
            parts.append(f"gap {gap:.3g}")
        if isinstance(upper, float) and math.isfinite(upper):
            parts.append(f"objective {upper:.6g}")
        parts.append(f"{elapsed:.1f} s")
        if self.result is not None:
            parts.append(f"done ({self.result.stop_reason})")
        return " · ".join(parts)


def _last_certified_gap(history: pd.DataFrame) -> float:
    """The gap of the last state whose bounds were computed exactly (NaN without any)."""
    if "gap" not in history.columns or history.empty:
        return math.nan
    gap = pd.to_numeric(history["gap"], errors="coerce")
    if "exact" in history.columns:
        gap = gap[history["exact"].map(lambda v: v is not False)]
    gap = gap.dropna()
    return float(gap.iloc[-1]) if len(gap) else math.nan


def compare_presets(
    name: str,
    train: Any,
    test: Any,
    presets: Sequence[str] = ("paper", "fast"),
    **params: Any,
) -> tuple[pd.DataFrame, Any]:
    """Fit a method under each preset on the same split: what ran, how long, how good.

    Parameters
    ----------
    name : str
        A registered method (``"orthognl"``).
    train, test : HierDataset
        The split; the method gets ``train.taxonomy``.
    presets : sequence of str, default ("paper", "fast")
        :func:`hierlab.make_estimator` presets.
    **params
        Passed to every fit (they override the presets' values, e.g. ``max_iter``).

    Returns
    -------
    table : DataFrame
        One row per preset: ``algorithm`` (``est.algorithm_``), ``fit seconds`` (wall clock),
        ``iterations``, ``objective`` (the last upper bound) and ``certified gap`` (of the
        last state with exact bounds; NaN where the solver has none),
        ``converged`` and the test ``accuracy`` and ``hierarchical_f1``.
    figure : plotly Figure
        :func:`hierlab.plots.bounds_figure` of the runs, keyed ``"<preset>: <algorithm>"``.
    """
    from sklearn.exceptions import ConvergenceWarning

    from hierlab.evaluation.metrics import evaluate

    rows, histories = [], {}
    for preset in presets:
        est = make_estimator(name, preset=preset, taxonomy=train.taxonomy, **params)
        t0 = time.perf_counter()
        with warnings.catch_warnings():  # an unconverged paper solver is in the table
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(train.X, train.y)
        seconds = time.perf_counter() - t0
        scores = evaluate(test.y, est.predict(test.X), train.taxonomy)
        history = est.history_
        rows.append(
            {
                "preset": preset,
                "algorithm": str(est.algorithm_),
                "fit seconds": seconds,
                "iterations": len(history),
                "objective": float(pd.to_numeric(history["upper"]).iloc[-1]),
                "certified gap": _last_certified_gap(history),
                "converged": bool(getattr(est, "converged_", False)),
                "accuracy": scores["accuracy"],
                "hierarchical_f1": scores["hierarchical_f1"],
            }
        )
        histories[f"{preset}: {est.algorithm_}"] = history
    return pd.DataFrame(rows).set_index("preset"), bounds_figure(histories)
