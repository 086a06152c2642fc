"""Where the app's figures come from: :mod:`hierlab.plots`, by name.

Pages call :func:`figure` with a builder's name, so a notebook using ``hierlab.plots`` gets the
very same figures.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from hierlab import plots

__all__ = ["figure"]


def figure(name: str, *args: Any, **kwargs: Any) -> go.Figure:
    """Build figure ``name`` (e.g. ``"bounds_figure"``) with the arguments of its builder."""
    fn = getattr(plots, name, None)
    if not callable(fn):
        raise AttributeError(f"hierlab.plots has no figure named {name!r}")
    return fn(*args, **kwargs)  # type: ignore[no-any-return]
