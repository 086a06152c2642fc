"""Plotly figures the app needs that ``hierlab.plots`` does not provide (yet).

Written in the style of ``hierlab.plots`` (pure functions: numbers in, ``go.Figure`` out, no
streamlit) so they can move there unchanged. :mod:`app.ui.figures` prefers the ``hierlab.plots``
version of a name when it exists.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["confusion_figure"]


def confusion_figure(confusion: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Heat map of a confusion table (rows true, columns predicted), row-normalised colours.

    Parameters
    ----------
    confusion : DataFrame of int
        Counts, indexed by true node names, one column per predicted node name (e.g.
        ``app.metrics_pending.confusion_at_level``).
    title : str, optional

    Returns
    -------
    go.Figure
        One heat map; the cell text is the count (for up to 400 cells).
    """
    z = confusion.to_numpy(dtype=np.float64)
    rows = z.sum(axis=1, keepdims=True)
    frac = np.divide(z, rows, out=np.zeros_like(z), where=rows > 0)
    trace = {
        "type": "heatmap",
        "z": frac.tolist(),
        "x": [str(c) for c in confusion.columns],
        "y": [str(r) for r in confusion.index],
        "text": z.astype(np.int64).tolist(),
        "texttemplate": "%{text}" if z.size <= 400 else None,
        "colorscale": "Blues",
        "colorbar": {"title": {"text": "row fraction"}},
        "hovertemplate": "true %{y}<br>predicted %{x}<br>count %{text}<extra></extra>",
    }
    layout = {
        "title": {"text": title or "Confusion"},
        "xaxis": {"title": {"text": "predicted"}},
        "yaxis": {"title": {"text": "true"}, "autorange": "reversed"},
        "height": 420,
        "margin": {"l": 80, "r": 20, "t": 50, "b": 60},
    }
    return go.Figure({"data": [trace], "layout": layout})
