"""Plotly figure builders shared by the app, the CLI and notebooks (never streamlit).

Every builder takes plain data (a :class:`~hierlab.core.taxonomy.Taxonomy`, arrays, or the tidy
DataFrames of :mod:`hierlab.evaluation.metrics` and ``history_``) and returns a
``plotly.graph_objects.Figure``; nothing is shown or written.

==============================  ==============================================================
``taxonomy_figure``             the taxonomy as a layered tree (or sunburst / treemap), nodes
                                coloured by a per-node value such as the error
``bounds_figure``               upper and lower bounds and the gap (log scale) per iteration
``race_figure``                 certified gap (log scale) against seconds, one line per solver
``error_per_level_figure``      error per level, one bar group per method
``gamma_histogram_figure``      distribution of ``gamma(y, y_hat)``, or a difference of two
``metric_bars_figure``          mean of each metric per method, with standard-deviation bars
``weight_norms_figure``         ``||w_i||`` per node (bars by depth, or on the tree)
``pr_curve_figure``             pooled precision-recall curves, one line per method
``reliability_figure``          reliability diagrams (observed against predicted probability)
``threshold_figure``            precision against depth as the stopping threshold moves
``explanation_figure``          the features that push towards a node (signed bars)
==============================  ==============================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import scipy.sparse as sp
from plotly.subplots import make_subplots

from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.metrics import metric_label

__all__ = [
    "bounds_figure",
    "bounds_series",
    "confusion_figure",
    "error_per_level_figure",
    "explanation_figure",
    "gamma_histogram_figure",
    "metric_bars_figure",
    "pr_curve_figure",
    "race_figure",
    "reliability_figure",
    "taxonomy_figure",
    "taxonomy_layout",
    "threshold_figure",
    "weight_norms_figure",
]


# ---------------------------------------------------------------------------- helpers
def _per_node(values: Any, tax: Taxonomy, what: str) -> np.ndarray | None:
    """A float array of shape (n_nodes,) from an array, a mapping/Series by name, or None."""
    if values is None:
        return None
    if isinstance(values, pd.DataFrame):
        col = "error" if "error" in values.columns else values.columns[-1]
        key = "node" if "node" in values.columns else None
        values = pd.Series(values[col].to_numpy(), index=values[key] if key else values.index)
    if isinstance(values, Mapping | pd.Series):
        out = np.full(tax.n_nodes, np.nan)
        items = values.items()
        for k, v in items:
            out[tax.node_id(k)] = float(v)
        return out
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.shape != (tax.n_nodes,):
        raise DataError(f"{what} must have one value per node ({tax.n_nodes}), got {arr.shape}")
    return arr


def _as_named(data: Any, default: str = "") -> dict[str, pd.DataFrame]:
    if isinstance(data, pd.DataFrame):
        return {default: data}
    if isinstance(data, Mapping):
        return {str(k): v for k, v in data.items()}
    raise DataError("expected a DataFrame or a dict of DataFrames keyed by method name")


def taxonomy_layout(tax: Taxonomy) -> tuple[np.ndarray, np.ndarray]:
    """A layered tree layout: ``y = -depth``, leaves evenly spaced in preorder, every internal
    node centred above its children (for a DAG, above the children it is the first parent of).

    Parameters
    ----------
    tax : Taxonomy

    Returns
    -------
    x, y : ndarray of shape (n_nodes,)
    """
    n = tax.n_nodes
    parent = tax.parent
    # the spanning tree of first parents (the tree itself for a tree)
    kids: list[list[int]] = [[] for _ in range(n)]
    for i in range(1, n):
        kids[int(parent[i])].append(i)
    order: list[int] = []
    stack = [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(reversed(kids[v]))
    x = np.zeros(n)
    is_leaf = np.array([not k for k in kids])
    leaf_order = [v for v in order if is_leaf[v]]
    x[leaf_order] = np.arange(len(leaf_order), dtype=np.float64)
    lo = np.full(n, np.inf)
    hi = np.full(n, -np.inf)
    lo[is_leaf] = x[is_leaf]
    hi[is_leaf] = x[is_leaf]
    for lev in reversed(tax.levels[1:]):  # bottom-up: every parent is shallower
        np.minimum.at(lo, parent[lev], lo[lev])
        np.maximum.at(hi, parent[lev], hi[lev])
    inner = ~is_leaf
    x[inner] = (lo[inner] + hi[inner]) / 2.0
    y = -tax.depth.astype(np.float64)
    return x, y


# ---------------------------------------------------------------------------- taxonomy
#: trees with at most this many nodes have their names drawn; larger ones show them on hover
TREE_LABELS_UP_TO = 40


def taxonomy_figure(
    tax: Taxonomy,
    node_values: Any = None,
    node_sizes: Any = None,
    kind: str = "tree",
    value_name: str = "value",
    colorscale: str = "RdYlGn_r",
    show_labels: bool | None = None,
    title: str | None = None,
) -> go.Figure:
    """Draw a taxonomy, nodes coloured by a per-node value (e.g. the error of
    :func:`hierlab.evaluation.metrics.error_per_node`).

    Parameters
    ----------
    tax : Taxonomy
    node_values : array of shape (n_nodes,), mapping or Series by node name, or DataFrame
        Colour of each node (a DataFrame of ``error_per_node`` uses its ``error`` column).
        ``nan`` draws grey.
    node_sizes : same forms as ``node_values``, optional
        Marker size (tree) or area (sunburst / treemap), e.g. the support ``n`` per node.
    kind : {"tree", "sunburst", "treemap"}, default "tree"
        ``"tree"``: the layered layout of :func:`taxonomy_layout` with one line trace for all
        edges and one marker trace for the nodes (hundreds of nodes stay responsive; DAGs
        draw every edge). ``"sunburst"``/``"treemap"``: plotly's hierarchical charts (trees).
    value_name : str
        Name of the value in the colour bar and hover text.
    colorscale : str
        A plotly colour scale.
    show_labels : bool, optional
        Write node names beside the markers; default when the taxonomy has at most
        ``TREE_LABELS_UP_TO`` (40) nodes. Names are always in the hover text.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    vals = _per_node(node_values, tax, "node_values")
    sizes = _per_node(node_sizes, tax, "node_sizes")
    if kind in ("sunburst", "treemap"):
        return _hierarchy_chart(tax, kind, vals, sizes, value_name, colorscale, title)
    if kind != "tree":
        raise DataError(f"kind must be 'tree', 'sunburst' or 'treemap', not {kind!r}")
    x, y = taxonomy_layout(tax)
    if show_labels is None:
        show_labels = tax.n_nodes <= TREE_LABELS_UP_TO
    node_trace = _node_trace(tax, x, y, vals, sizes, value_name, colorscale, show_labels)
    fig = go.Figure([_edge_trace(tax, x, y), node_trace])
    fig.update_layout(
        title=title,
        xaxis={"visible": False},
        yaxis={"visible": False},
        plot_bgcolor="white",
        margin={"t": 40 if title else 10, "l": 10, "r": 10, "b": 10},
    )
    return fig


def _hierarchy_chart(
    tax: Taxonomy,
    kind: str,
    vals: np.ndarray | None,
    sizes: np.ndarray | None,
    value_name: str,
    colorscale: str,
    title: str | None,
) -> go.Figure:
    """The ``"sunburst"`` or ``"treemap"`` kind of :func:`taxonomy_figure` (trees only).

    Parameters
    ----------
    tax : Taxonomy
    kind : {"sunburst", "treemap"}
    vals, sizes : ndarray of shape (n_nodes,) or None
        Colour and area per node (``nan``: none).
    value_name, colorscale, title : str
        As in :func:`taxonomy_figure`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not tax.is_tree:
        raise DataError(f"a {kind} needs a tree; draw a DAG with kind='tree'")
    names = [str(n) for n in tax.names]
    parents = ["" if p < 0 else names[int(p)] for p in tax.parent]
    marker: dict[str, Any] = {}
    if vals is not None:
        marker = {
            "colors": np.nan_to_num(vals, nan=0.0),
            "colorscale": colorscale,
            "showscale": True,
            "colorbar": {"title": value_name},
        }
    common: dict[str, Any] = {
        "ids": names,
        "labels": names,
        "parents": parents,
        "marker": marker,
        "customdata": vals if vals is not None else np.full(tax.n_nodes, np.nan),
        "hovertemplate": f"%{{label}}<br>{value_name}: %{{customdata:.3g}}<extra></extra>",
    }
    if sizes is not None:
        # totals: each node's area covers its children's
        common["values"] = np.nan_to_num(sizes, nan=0.0)
        common["branchvalues"] = "total"
    trace = go.Sunburst(**common) if kind == "sunburst" else go.Treemap(**common)
    fig = go.Figure(trace)
    fig.update_layout(title=title, margin={"t": 40 if title else 10, "l": 0, "r": 0, "b": 0})
    return fig


def _edge_trace(tax: Taxonomy, x: np.ndarray, y: np.ndarray) -> go.Scatter:
    """Every edge of ``tax`` at the node positions ``(x, y)`` in one line trace (NaN breaks)."""
    edges = tax.to_edges()
    ids = tax.index(np.asarray([e for pair in edges for e in pair], dtype=object)).reshape(-1, 2)
    ex = np.full(3 * len(ids), np.nan)
    ey = np.full(3 * len(ids), np.nan)
    ex[0::3], ex[1::3] = x[ids[:, 0]], x[ids[:, 1]]
    ey[0::3], ey[1::3] = y[ids[:, 0]], y[ids[:, 1]]
    return go.Scatter(
        x=ex,
        y=ey,
        mode="lines",
        line={"color": "#b0b0b0", "width": 1},
        hoverinfo="skip",
        name="edges",
        showlegend=False,
    )


def _node_trace(
    tax: Taxonomy,
    x: np.ndarray,
    y: np.ndarray,
    vals: np.ndarray | None,
    sizes: np.ndarray | None,
    value_name: str,
    colorscale: str,
    show_labels: bool,
) -> go.Scatter:
    """The nodes of ``tax`` at ``(x, y)`` in one marker trace, coloured by ``vals``.

    Parameters
    ----------
    tax : Taxonomy
    x, y : ndarray of shape (n_nodes,)
        Positions (:func:`taxonomy_layout`).
    vals, sizes : ndarray of shape (n_nodes,) or None
        Colour and marker size per node; without ``vals`` every node is blue.
    value_name, colorscale : str
        As in :func:`taxonomy_figure`.
    show_labels : bool
        Write the node names under the markers.

    Returns
    -------
    plotly.graph_objects.Scatter
        Its ``customdata`` is the node index (for click events).
    """
    names = [str(n) for n in tax.names]
    hover = [
        f"{nm}<br>depth {d}" + ("" if vals is None else f"<br>{value_name}: {v:.3g}")
        for nm, d, v in zip(
            names, tax.depth.tolist(), (vals if vals is not None else np.zeros(tax.n_nodes))
        )
    ]
    node_marker: dict[str, Any] = {"size": 10, "line": {"width": 0.5, "color": "#333"}}
    if vals is not None:
        node_marker.update(
            color=vals,
            colorscale=colorscale,
            showscale=True,
            colorbar={"title": value_name},
        )
    else:
        node_marker["color"] = "#4c78a8"
    if sizes is not None:
        s = np.nan_to_num(sizes, nan=0.0)
        top = s.max() if s.size and s.max() > 0 else 1.0
        node_marker["size"] = 6 + 24 * np.sqrt(s / top)
    return go.Scatter(
        x=x,
        y=y,
        mode="markers+text" if show_labels else "markers",
        text=names if show_labels else None,
        textposition="bottom center",
        hovertext=hover,
        hoverinfo="text",
        marker=node_marker,
        customdata=np.arange(tax.n_nodes),
        name="nodes",
        showlegend=False,
    )


# ---------------------------------------------------------------------------- convergence
def bounds_series(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The curves of :func:`bounds_figure` for one run, by trace name.

    ``upper`` (``objective`` when the run has no lower bound), ``lower``, ``gap`` (exact,
    certified: ``upper - lower`` of the states whose bounds were computed exactly) and
    ``gap estimate`` (a running estimate between exact checkpoints, e.g. block-coordinate
    Frank-Wolfe's duality-gap estimate: the ``gap_estimate`` column, or the gap of states with
    ``exact`` False). Non-positive gaps are missing (a log axis cannot show 0).

    Parameters
    ----------
    df : DataFrame
        A history: ``upper``, optionally ``lower``, ``exact``, ``gap_estimate``.

    Returns
    -------
    dict of str to ndarray of shape (n_states,)
        Only the curves the run has (no ``lower``/``gap`` without a lower bound, no
        ``gap estimate`` without an estimate).
    """
    n = len(df)
    upper = pd.to_numeric(df["upper"], errors="coerce").to_numpy(dtype=float)
    lower = (
        pd.to_numeric(df["lower"], errors="coerce").to_numpy(dtype=float)
        if "lower" in df.columns
        else np.full(n, np.nan)
    )
    exact = (
        df["exact"].map(lambda v: v is not False and v == v).to_numpy(dtype=bool)
        if "exact" in df.columns
        else np.ones(n, dtype=bool)
    )
    estimate = (
        pd.to_numeric(df["gap_estimate"], errors="coerce").to_numpy(dtype=float)
        if "gap_estimate" in df.columns
        else np.full(n, np.nan)
    )
    has_lower = bool(np.isfinite(lower[exact]).any()) if exact.any() else False
    if not has_lower and not np.isfinite(estimate).any() and exact.all():
        return {"objective": upper}
    gap = upper - lower
    out = {"upper": upper}
    if has_lower:
        out["lower"] = np.where(exact, lower, np.nan)
        out["gap"] = np.where(exact & (gap > 0), gap, np.nan)
    est = np.where(np.isfinite(estimate), estimate, np.where(~exact, gap, np.nan))
    if np.isfinite(est).any():
        out["gap estimate"] = np.where(est > 0, est, np.nan)
    return out


#: how each curve of :func:`bounds_figure` is drawn: (row, line dash, mode)
_BOUND_STYLE: dict[str, tuple[int, str | None, str]] = {
    "upper": (1, None, "lines"),
    "objective": (1, None, "lines"),
    "lower": (1, "dash", "lines"),
    "gap": (2, None, "lines+markers"),
    "gap estimate": (2, "dot", "markers"),
}


def _add_bounds(fig: go.Figure, name: str, df: pd.DataFrame, x: str, color: str) -> None:
    """Add one run's traces to :func:`bounds_figure`'s two rows.

    The upper bound (the objective when the run has no lower bound) goes on the top row; a
    lower bound joins it there, and the gap goes on the bottom row: exact (certified) gaps as a
    solid line with dots, estimated ones as open circles (:func:`bounds_series`).
    """
    prefix = f"{name}: " if name else ""
    xs = df[x].to_numpy() if x in df.columns else np.arange(1, len(df) + 1)
    for label, ys in bounds_series(df).items():
        row, dash, mode = _BOUND_STYLE[label]
        line: dict[str, Any] = {"color": color}
        if dash is not None:
            line["dash"] = dash
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode=mode,
                name=prefix + label,
                line=line,
                marker={"size": 4}
                if label != "gap estimate"
                else {"size": 6, "symbol": "circle-open", "color": color},
                connectgaps=True,
                legendgroup=name,
            ),
            row=row,
            col=1,
        )


def bounds_figure(history: Any, x: str = "iteration", title: str | None = None) -> go.Figure:
    """Upper bound, lower bound and gap against iterations (or seconds).

    Parameters
    ----------
    history : DataFrame or dict of str to DataFrame
        An estimator's ``history_`` (columns ``iteration``, ``elapsed``, ``upper``, ``lower``,
        ``gap``), or several keyed by method name. A method without a lower bound (all ``lower``
        missing, e.g. Hieron) shows its objective only.
    x : {"iteration", "elapsed"}, default "iteration"
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        Two rows sharing the x axis: the bounds (top) and the gap on a log scale (bottom), the
        certified gap as a solid line and estimated gaps (between exact checkpoints) as open
        circles.
    """
    runs = _as_named(history)
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        row_heights=[0.6, 0.4],
        subplot_titles=("objective bounds", "gap = upper − lower (log scale)"),
    )
    palette = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d"]
    for k, (name, df) in enumerate(runs.items()):
        _add_bounds(fig, name, df, x, palette[k % len(palette)])
    # one label per decade: minor labels (2, 5, ...) crowd the short gap panel
    fig.update_yaxes(type="log", dtick=1, row=2, col=1, title_text="gap")
    fig.update_yaxes(title_text="objective", row=1, col=1)
    fig.update_xaxes(title_text="seconds" if x == "elapsed" else x, row=2, col=1)
    fig.update_layout(title=title, hovermode="x unified")
    return fig


def has_certificate(history: pd.DataFrame) -> bool:
    """Whether a run's history holds a certified lower bound (what :func:`bounds_figure`
    draws); without one, draw :func:`training_curve_figure` or say so in words."""
    return "upper" in history.columns and "lower" in bounds_series(history)


def training_curve_figure(
    history: pd.DataFrame, x: str = "iteration", title: str | None = None
) -> go.Figure | None:
    """The objective (or training error) a run without a certificate reports, against
    iterations or seconds; None when it reports fewer than two finite values.

    Parameters
    ----------
    history : DataFrame
        An estimator's ``history_`` with an ``upper`` column.
    x : {"iteration", "elapsed"}
    title : str, optional
    """
    if "upper" not in history.columns:
        return None
    ys = pd.to_numeric(history["upper"], errors="coerce").to_numpy(dtype=float)
    if int(np.isfinite(ys).sum()) < 2:
        return None
    xs = history[x].to_numpy() if x in history.columns else np.arange(1, len(history) + 1)
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines+markers", name="objective"))
    fig.update_layout(
        title=title or "Training curve (no certificate: no lower bound)",
        xaxis={"title": "seconds" if x == "elapsed" else x},
        yaxis={"title": "objective"},
        height=360,
    )
    return fig


# ---------------------------------------------------------------------------- error breakdowns
def error_per_level_figure(data: Any, title: str | None = None) -> go.Figure:
    """Error per level, one bar group per method.

    The data are tables of :func:`hierlab.evaluation.metrics.error_per_level`.

    Parameters
    ----------
    data : DataFrame or dict of str to DataFrame
        Columns ``level``, ``n``, ``error``.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Bar`` trace per method.
    """
    runs = _as_named(data)
    fig = go.Figure()
    for name, df in runs.items():
        fig.add_trace(
            go.Bar(
                x=df["level"],
                y=df["error"],
                name=name or "error",
                customdata=df["n"] if "n" in df.columns else None,
                hovertemplate="level %{x}<br>error %{y:.3f}<br>n = %{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        title=title,
        xaxis={"title": "level (depth)", "dtick": 1},
        yaxis={"title": "error", "rangemode": "tozero"},
        showlegend=len(runs) > 1 or bool(next(iter(runs))),
    )
    return fig


def gamma_histogram_figure(
    data: Any,
    normalize: bool = True,
    difference: tuple[str, str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Distribution of the tree distance ``gamma(y, y_hat)``
    (:func:`hierlab.evaluation.metrics.gamma_histogram`).

    Parameters
    ----------
    data : DataFrame or dict of str to DataFrame
        Columns ``gamma``, ``count`` (and ``fraction``).
    normalize : bool, default True
        Plot fractions instead of counts.
    difference : (str, str), optional
        Plot ``data[a] - data[b]`` only (e.g. ``("Hieron", "flat")``: where the hierarchical
        method moves mistakes from far to near labels).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Bar`` per method, or one for the difference.
    """
    runs = _as_named(data)
    col = "fraction" if normalize else "count"

    def series(df: pd.DataFrame) -> pd.Series:
        if col == "fraction" and "fraction" not in df.columns:
            return df.set_index("gamma")["count"] / df["count"].sum()
        return df.set_index("gamma")[col]

    fig = go.Figure()
    if difference is not None:
        a, b = difference
        for m in (a, b):
            if m not in runs:
                raise DataError(f"no histogram named {m!r}; have {', '.join(runs)}")
        sa, sb = series(runs[a]), series(runs[b])
        idx = sa.index.union(sb.index)
        diff = sa.reindex(idx, fill_value=0) - sb.reindex(idx, fill_value=0)
        fig.add_trace(
            go.Bar(
                x=idx.to_numpy(),
                y=diff.to_numpy(),
                name=f"{a} - {b}",
                marker={"color": np.where(diff.to_numpy() >= 0, "#4c78a8", "#e45756")},
            )
        )
    else:
        for name, df in runs.items():
            s = series(df)
            fig.add_trace(go.Bar(x=s.index.to_numpy(), y=s.to_numpy(), name=name or col))
    fig.update_layout(
        barmode="group",
        title=title,
        xaxis={"title": "gamma(y, y_hat)", "dtick": 1},
        yaxis={"title": ("difference of " if difference else "") + col},
    )
    return fig


# ---------------------------------------------------------------------------- comparisons
def metric_bars_figure(
    summary: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Mean of each metric per method with standard-deviation error bars.

    Parameters
    ----------
    summary : DataFrame
        Either tidy per-run values (columns ``method``, ``metric``, ``value``: means and
        standard deviations are computed here), or a summary with columns ``method``,
        ``metric``, ``mean`` and optionally ``std``, or a wide table with a ``method`` column
        and one column per metric (one value per method and metric, no error bars).
    metrics : sequence of str, optional
        Which metrics to draw (default all), in this order.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One ``Bar`` trace per metric, grouped by method; ``error_y`` holds the std.
    """
    df = summary.copy()
    if "method" not in df.columns:
        df = df.reset_index().rename(columns={"index": "method"})
    if "metric" not in df.columns:
        df = df.melt(id_vars="method", var_name="metric", value_name="mean")
    elif "value" in df.columns and "mean" not in df.columns:
        g = df.groupby(["method", "metric"], sort=False)["value"]
        df = pd.DataFrame({"mean": g.mean(), "std": g.std(ddof=1)}).reset_index()
    if metrics is None:
        metrics = list(dict.fromkeys(df["metric"].astype(str)))
    methods = list(dict.fromkeys(df["method"].astype(str)))
    fig = go.Figure()
    for m in metrics:
        sub = df[df["metric"].astype(str) == m]
        sub = sub.set_index(sub["method"].astype(str)).reindex(methods)
        err = None
        if "std" in sub.columns and sub["std"].notna().any():
            err = {"type": "data", "array": sub["std"].fillna(0).to_numpy(), "visible": True}
        fig.add_trace(
            go.Bar(x=methods, y=sub["mean"].to_numpy(), name=metric_label(m), error_y=err)
        )
    fig.update_layout(barmode="group", title=title, xaxis={"title": "method"})
    return fig


def weight_norms_figure(
    coef: Any, tax: Taxonomy, kind: str = "bars", title: str | None = None
) -> go.Figure:
    """The norm ``||w_i||`` of each node's weight vector (rows of ``coef_``).

    Parameters
    ----------
    coef : array-like or sparse matrix of shape (n_nodes, n_features)
    tax : Taxonomy
    kind : {"bars", "tree"}, default "bars"
        ``"bars"``: one bar per node in id order (top-down), one trace per depth;
        ``"tree"``: :func:`taxonomy_figure` coloured by the norms.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if sp.issparse(coef):
        norms = np.sqrt(np.asarray(coef.multiply(coef).sum(axis=1)).ravel())
    else:
        W = np.asarray(coef, dtype=np.float64)
        if W.ndim != 2:
            raise DataError(f"coef must be 2-D (n_nodes, n_features), got shape {W.shape}")
        norms = np.linalg.norm(W, axis=1)
    if norms.shape[0] != tax.n_nodes:
        raise DataError(f"coef has {norms.shape[0]} rows but the taxonomy has {tax.n_nodes} nodes")
    if kind == "tree":
        return taxonomy_figure(tax, node_values=norms, value_name="||w||", title=title)
    if kind != "bars":
        raise DataError(f"kind must be 'bars' or 'tree', not {kind!r}")
    names = np.asarray([str(x) for x in tax.names], dtype=object)
    fig = go.Figure()
    for d, lev in enumerate(tax.levels):
        fig.add_trace(go.Bar(x=names[lev], y=norms[lev], name=f"depth {d}"))
    fig.update_layout(
        title=title,
        xaxis={"title": "node", "categoryorder": "array", "categoryarray": names},
        yaxis={"title": "||w_i||"},
    )
    return fig


#: confusion tables up to this many cells get a clickable marker per cell
MAX_CLICKABLE_CELLS = 2500


def confusion_figure(
    confusion: pd.DataFrame, title: str | None = None, clickable: bool = False
) -> go.Figure:
    """Heat map of a confusion table (rows true, columns predicted), row-normalised colours.

    Parameters
    ----------
    confusion : DataFrame of int
        Counts, indexed by true node names, one column per predicted node name (e.g.
        ``hierlab.evaluation.metrics.confusion_at_level``).
    title : str, optional
    clickable : bool, default False
        Add a second trace, ``"cells"``: one invisible square marker at the centre of every
        non-empty cell (up to ``MAX_CLICKABLE_CELLS`` cells), ``customdata`` ``[true,
        predicted]``, so that a click selects a cell (heat maps themselves cannot be selected).

    Returns
    -------
    go.Figure
        One heat map (and the ``"cells"`` trace); the cell text is the count (up to 400 cells).
    """
    z = confusion.to_numpy(dtype=np.float64)
    rows = z.sum(axis=1, keepdims=True)
    frac = np.divide(z, rows, out=np.zeros_like(z), where=rows > 0)
    # arrays, not lists: plotly checks a list cell by cell (645 x 645 cells: 2 s, not 0.02 s);
    # float32 keeps the base64 payload as small as the lists' JSON
    trace = {
        "type": "heatmap",
        "z": frac.astype(np.float32),
        "x": [str(c) for c in confusion.columns],
        "y": [str(r) for r in confusion.index],
        "text": z.astype(np.int64),
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
    data: list[dict[str, Any]] = [trace]
    if clickable and z.size <= MAX_CLICKABLE_CELLS:
        r, c = np.nonzero(z)
        data.append(
            {
                "type": "scatter",
                "name": "cells",
                "mode": "markers",
                "x": [str(confusion.columns[j]) for j in c],
                "y": [str(confusion.index[i]) for i in r],
                "customdata": [
                    [str(confusion.index[i]), str(confusion.columns[j])] for i, j in zip(r, c)
                ],
                "marker": {"symbol": "square", "size": 18, "color": "#000", "opacity": 0.0},
                "selected": {"marker": {"opacity": 0.25}},
                "unselected": {"marker": {"opacity": 0.0}},
                "hovertemplate": "true %{customdata[0]}<br>predicted %{customdata[1]}<br>"
                "click to list the examples<extra></extra>",
                "showlegend": False,
            }
        )
    return go.Figure({"data": data, "layout": layout})


# ---------------------------------------------------------------------------- probabilities
#: one colour per run, the same in every probability chart (plotly's qualitative palette)
RUN_COLOURS = (
    "#636efa", "#ef553b", "#00cc96", "#ab63fa", "#ffa15a",
    "#19d3f3", "#ff6692", "#b6e880", "#ff97ff", "#fecb52",
)  # fmt: skip


def legend_below(n_entries: int, plot_height: int = 360) -> dict[str, Any]:
    """Layout that puts the legend under the plot area, one entry per line, and makes the
    figure tall enough for it: the legend never covers the data however many entries.

    Returns
    -------
    dict
        ``height``, ``legend`` and ``margin`` for ``fig.update_layout``.
    """
    rows = max(int(n_entries), 1)
    axis_px = 56  # the x axis's ticks and title, under the plot area
    legend_px = axis_px + 22 * rows + 10
    height = plot_height + legend_px + 60
    return {
        "height": height,
        "legend": {
            "orientation": "v",
            "x": 0.0,
            "xanchor": "left",
            "y": (legend_px - axis_px) / height,
            "yanchor": "top",
            "yref": "container",
        },
        "margin": {"t": 60, "b": legend_px, "l": 60, "r": 20},
    }


def pr_curve_figure(data: Any, title: str | None = None, max_points: int = 2000) -> go.Figure:
    """Pooled precision-recall curves (:func:`hierlab.evaluation.curves.pr_curve`).

    Parameters
    ----------
    data : DataFrame or dict of str to DataFrame
        Columns ``precision``, ``recall``, ``threshold``; ``attrs["au_prc"]``, when set, is
        shown in the legend.
    title : str, optional
    max_points : int, default 2000
        Longer curves (one point per distinct probability: millions on IPC) are thinned to
        this many evenly spaced points, the last one kept.

    Returns
    -------
    go.Figure
        One step line per method.
    """
    fig = go.Figure()
    for k, (name, full) in enumerate(_as_named(data, "model").items()):
        area = full.attrs.get("au_prc")
        keep = np.unique(np.linspace(0, len(full) - 1, min(len(full), max_points)).astype(int))
        df = full.iloc[keep] if len(full) else full
        label = f"{name} (AU(PRC) {area:.3f})" if area is not None else name
        fig.add_trace(
            go.Scatter(
                x=np.r_[0.0, df["recall"].to_numpy()],
                y=np.r_[df["precision"].to_numpy()[:1], df["precision"].to_numpy()],
                mode="lines",
                line={"shape": "vh", "color": RUN_COLOURS[k % len(RUN_COLOURS)]},
                name=label,
                customdata=np.r_[np.nan, df["threshold"].to_numpy()],
                hovertemplate="recall %{x:.3f}<br>precision %{y:.3f}<br>p >= %{customdata:.3f}"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        title=title or "Precision-recall over (example, node) pairs",
        xaxis={"title": "recall", "range": [0, 1]},
        yaxis={"title": "precision", "range": [0, 1.02]},
        **legend_below(len(fig.data)),
    )
    return fig


def reliability_figure(data: Any, title: str | None = None) -> go.Figure:
    """Reliability diagrams (:func:`hierlab.evaluation.curves.reliability`).

    Parameters
    ----------
    data : DataFrame or dict of str to DataFrame
        Columns ``mean_predicted``, ``observed``, ``count``; ``attrs`` ``ece`` and ``brier``
        go into the legend.
    title : str, optional

    Returns
    -------
    go.Figure
        The diagonal, then one line per method (marker area by the bin's count).
    """
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="perfect", line={"dash": "dot", "color": "gray"}
        )
    )
    for k, (name, df) in enumerate(_as_named(data, "model").items()):
        ece = df.attrs.get("ece", df.attrs.get("pooled_node_ece"))
        label = f"{name} (ECE {ece:.3f})" if ece is not None else name
        count = df["count"].to_numpy(dtype=np.float64)
        size = 6 + 14 * np.sqrt(count / max(count.max(), 1.0))
        fig.add_trace(
            go.Scatter(
                x=df["mean_predicted"].to_numpy(),
                y=df["observed"].to_numpy(),
                mode="lines+markers",
                marker={"size": size, "color": RUN_COLOURS[k % len(RUN_COLOURS)]},
                line={"color": RUN_COLOURS[k % len(RUN_COLOURS)]},
                name=label,
                customdata=df["count"].to_numpy(),
                hovertemplate="predicted %{x:.3f}<br>observed %{y:.3f}<br>%{customdata} pairs"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        title=title or "Reliability of the probabilities",
        xaxis={"title": "mean predicted probability (confidence)", "range": [0, 1]},
        yaxis={"title": "observed frequency (accuracy)", "range": [0, 1]},
        **legend_below(len(fig.data)),
    )
    return fig


def threshold_figure(
    data: Any, metric: str = "hierarchical_precision", title: str | None = None
) -> go.Figure:
    """Precision against depth as the threshold of ``predict(X, threshold=t)`` moves.

    Parameters
    ----------
    data : DataFrame or dict of str to DataFrame
        Tables of :func:`hierlab.evaluation.curves.threshold_curve`.
    metric : str, default "hierarchical_precision"
        The y column (``"on_true_path"``, ``"accuracy"``, ``"hierarchical_f1"`` ...).
    title : str, optional

    Returns
    -------
    go.Figure
        One line per method through its thresholds: x the mean depth of the predictions,
        y the metric; the hover names the threshold.
    """
    fig = go.Figure()
    for name, df in _as_named(data, "model").items():
        fig.add_trace(
            go.Scatter(
                x=df["mean_depth"].to_numpy(),
                y=df[metric].to_numpy(),
                mode="lines+markers",
                name=name,
                customdata=np.c_[df["threshold"].to_numpy(), df["stopped"].to_numpy()],
                hovertemplate="t = %{customdata[0]:.2f}<br>mean depth %{x:.2f}<br>"
                + metric.replace("_", " ")
                + " %{y:.3f}<br>stopped above %{customdata[1]:.1%}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title or "Precision against depth as the threshold t rises",
        xaxis={"title": "mean depth of the predictions"},
        yaxis={"title": metric.replace("_", " ")},
    )
    return fig


def explanation_figure(table: pd.DataFrame, title: str | None = None) -> go.Figure:
    """Signed horizontal bars of an explanation (:func:`hierlab.explain`).

    Parameters
    ----------
    table : DataFrame
        Columns ``feature`` and ``weight`` (a node's explanation) or ``contribution`` (one step
        of an example's path).
    title : str, optional

    Returns
    -------
    go.Figure
        One ``Bar`` trace, the strongest feature on top.
    """
    col = "weight" if "weight" in table.columns else "contribution"
    df = table.iloc[::-1]
    vals = df[col].to_numpy(dtype=np.float64)
    fig = go.Figure(
        go.Bar(
            x=vals,
            y=[str(f) for f in df["feature"]],
            orientation="h",
            marker={"color": np.where(vals >= 0, "#1f77b4", "#d62728")},
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title,
        xaxis={"title": col},
        height=max(220, 22 * len(df) + 80),
        margin={"l": 120, "r": 20, "t": 40 if title else 10, "b": 40},
    )
    return fig


# ---------------------------------------------------------------------------- solver race
def log_ticks(values: np.ndarray) -> tuple[list[float], list[str]] | None:
    """Tick values and labels for a log axis over ``values``: every decade in the range, and
    the 2 and 5 multiples too when fewer than three decades show (a short range must still
    carry labels); None without a positive finite value.

    Returns
    -------
    (tickvals, ticktext) : lists
        Labels with three significant digits (``"0.001"``, ``"2e+04"``).
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    if not len(v):
        return None
    lo, hi = float(v.min()), float(v.max())
    first, last = int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi)))
    decades = [10.0**e for e in range(first, last + 1)]
    steps = (1.0,) if last - first >= 3 else (1.0, 2.0, 5.0)
    vals = [d * m for d in decades for m in steps if lo / 1.0001 <= d * m <= hi * 1.0001]
    if len(vals) < 2:  # within one step: the range's ends too
        vals = sorted({lo, hi, *vals})
    return vals, [f"{t:.3g}" for t in vals]


def race_figure(result: Any, title: str | None = None) -> go.Figure:
    """The certified gap ``upper - lower`` against solver seconds, one line per solver.

    Parameters
    ----------
    result : RaceResult or mapping of str to DataFrame
        :func:`hierlab.lab.race.run_race`'s result (its ``traces``), or the traces themselves:
        per solver, columns ``seconds`` and ``gap`` (optionally ``iteration``, ``upper``,
        ``lower``, ``exact``).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One line per solver, gap on a log scale (zero gaps, which a log axis cannot show, are
        left out); BCFW's in-epoch states (``exact`` False) keep the last exact bounds, so its
        line runs flat between checkpoints.
    """
    traces = getattr(result, "traces", result)
    if not isinstance(traces, Mapping) or not traces:
        raise DataError("race_figure needs a RaceResult or a dict of solver -> trace")
    labels = getattr(result, "algorithms", {}) or {}
    palette = ["#e45756", "#4c78a8", "#54a24b", "#f58518", "#72b7b2", "#b279a2"]
    fig = go.Figure()
    for k, (name, df) in enumerate(traces.items()):
        for col in ("seconds", "gap"):
            if col not in df.columns:
                raise DataError(f"trace {name!r} has no {col!r} column")
        gap = pd.to_numeric(df["gap"], errors="coerce").to_numpy(dtype=float)
        keep = np.isfinite(gap) & (gap > 0)
        its = df["iteration"].to_numpy() if "iteration" in df.columns else np.arange(len(df))
        fig.add_trace(
            go.Scatter(
                x=df["seconds"].to_numpy(dtype=float)[keep],
                y=gap[keep],
                mode="lines+markers" if keep.sum() < 40 else "lines",
                name=str(name),
                line={"color": palette[k % len(palette)], "shape": "hv"},
                customdata=its[keep],
                hovertemplate=f"{name}<br>%{{x:.2f}} s, iteration %{{customdata}}"
                "<br>certified gap %{y:.3g}<extra>" + str(labels.get(name, "")) + "</extra>",
            )
        )
    shown = [np.asarray(t.y, dtype=float) for t in fig.data if t.y is not None and len(t.y)]
    ticks = log_ticks(np.concatenate(shown)) if shown else None
    fig.update_yaxes(
        type="log",
        title_text="certified gap (upper - lower)",
        **({"tickvals": ticks[0], "ticktext": ticks[1]} if ticks else {}),
    )
    fig.update_xaxes(title_text="solver seconds")
    fig.update_layout(
        title=title or "Solver race: certified gap against seconds",
        hovermode="closest",
        legend={"orientation": "h", "y": -0.2},
    )
    return fig
