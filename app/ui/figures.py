"""Where the app's figures come from: ``hierlab.plots`` first, :mod:`figures_pending` otherwise.

Pages call :func:`figure` with a figure name; the engine's function of that name draws it when
it exists (so a notebook using ``hierlab.plots`` gets the same figures), else the app's pending
version (a figure still to be moved into ``hierlab.plots``).
"""

from __future__ import annotations

import importlib
from typing import Any

import plotly.graph_objects as go

from app.ui import figures_pending

__all__ = ["figure", "source_of"]


def _function(name: str) -> tuple[Any, str]:
    try:
        mod = importlib.import_module("hierlab.plots")
        fn = getattr(mod, name, None)
        if callable(fn):
            return fn, "hierlab.plots"
    except ImportError:
        pass
    fn = getattr(figures_pending, name, None)
    if callable(fn):
        return fn, "app.ui.figures_pending"
    raise AttributeError(f"no figure named {name!r} in hierlab.plots or app.ui.figures_pending")


def source_of(name: str) -> str:
    """``"hierlab.plots"`` or ``"app.ui.figures_pending"``: who draws figure ``name``."""
    return _function(name)[1]


def figure(name: str, *args: Any, **kwargs: Any) -> go.Figure:
    """Build figure ``name`` (e.g. ``"bounds_figure"``) with the arguments of its builder."""
    fn, _ = _function(name)
    return fn(*args, **kwargs)  # type: ignore[no-any-return]
