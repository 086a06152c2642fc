"""``hierlab bench``: every registered method beside scikit-learn's LinearSVC, and scale curves.

The table times each method on one split next to a flat one-vs-rest ``LinearSVC`` fitted on the
same split in the same run, so the ratio is meaningful on any machine. HiClass's
``LocalClassifierPerParentNode(LinearSVC)`` joins the table when the optional ``hiclass`` is
installed. Scale curves fit one method on :func:`make_hierarchical_text` data of growing size
(documents, hence nnz) and growing class count and report the fitted log-log slopes.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from hierlab.datasets.base import HierDataset
from hierlab.experiments.registry import list_methods, make_estimator

__all__ = ["bench_table", "loglog_slope", "scale_curves", "scale_figure"]


def _flat_targets(data: HierDataset) -> np.ndarray:
    return np.asarray([str(v) for v in data.y])


def _score(y_true: np.ndarray, y_pred: np.ndarray, data: HierDataset) -> dict[str, float]:
    from hierlab.metrics import tree_induced_error, zero_one_error

    tax = data.taxonomy
    yt = np.asarray([str(v) for v in y_true], dtype=object)
    yp = np.asarray([str(v) for v in y_pred], dtype=object)
    return {
        "accuracy": 1.0 - zero_one_error(yt, yp, tax),
        "tree_error": float(tree_induced_error(yt, yp, tax)),
    }


def _time_fit(est: Any, X: Any, y: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    return est, time.perf_counter() - t0


def bench_table(
    train: HierDataset,
    test: HierDataset,
    methods: Sequence[str] | None = None,
    params: dict[str, dict[str, Any]] | None = None,
    hiclass: bool = True,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Time and score every method beside ``LinearSVC`` (one-vs-rest) on one split.

    Parameters
    ----------
    train, test : HierDataset
        Single-label data.
    methods : sequence of str, optional
        Registry names (default: every registered method).
    params : dict, optional
        ``method -> constructor parameters``.
    hiclass : bool
        Add HiClass's per-parent-node LinearSVC when ``hiclass`` is importable.
    progress : callable, optional
        Called with each method's name before it is fitted.

    Returns
    -------
    DataFrame
        One row per method: fit_time, predict_time, fit_ratio (to LinearSVC's fit time),
        accuracy, tree_error, n_iter, error (text when the method failed).
    """
    params = params or {}
    rows: list[dict[str, Any]] = []
    ytr = _flat_targets(train)
    if progress:
        progress("LinearSVC")
    ref, ref_time = _time_fit(LinearSVC(), train.X, ytr)
    t0 = time.perf_counter()
    ref_pred = ref.predict(test.X)
    rows.append(
        {
            "method": "sklearn LinearSVC (OvR)",
            "fit_time": ref_time,
            "predict_time": time.perf_counter() - t0,
            "n_iter": int(np.max(ref.n_iter_)),
            **_score(test.y, ref_pred, test),
        }
    )
    for name in methods or list_methods():
        if progress:
            progress(name)
        try:
            est = make_estimator(name, taxonomy=train.taxonomy, **params.get(name, {}))
            est, fit_time = _time_fit(est, train.X, train.y)
            t0 = time.perf_counter()
            pred = est.predict(test.X)
            rows.append(
                {
                    "method": name,
                    "fit_time": fit_time,
                    "predict_time": time.perf_counter() - t0,
                    "n_iter": int(getattr(est, "n_iter_", 0) or 0),
                    **_score(test.y, pred, test),
                }
            )
        except Exception as exc:  # a benchmark reports a failing method and goes on
            rows.append({"method": name, "error": f"{type(exc).__name__}: {exc}"})
    if hiclass:
        rows.extend(_hiclass_row(train, test, progress))
    df = pd.DataFrame(rows)
    df["fit_ratio"] = df["fit_time"] / ref_time
    return df


def _hiclass_row(
    train: HierDataset, test: HierDataset, progress: Callable[[str], None] | None
) -> list[dict[str, Any]]:
    try:
        from hiclass import LocalClassifierPerParentNode
    except ImportError:
        return []
    if progress:
        progress("hiclass LCPN")
    tax = train.taxonomy

    def paths(y: np.ndarray) -> list[list[str]]:
        return [
            [str(n) for n in tax.names[tax.ancestors(str(v), include_self=True)][1:]] for v in y
        ]

    depth = tax.max_depth
    Y = [p + [""] * (depth - len(p)) for p in paths(train.y)]
    est = LocalClassifierPerParentNode(local_classifier=LinearSVC())
    est, fit_time = _time_fit(est, train.X, Y)
    t0 = time.perf_counter()
    out = est.predict(test.X)
    pred_time = time.perf_counter() - t0
    pred = [next((v for v in reversed(list(r)) if v), str(tax.names[0])) for r in out]
    return [
        {
            "method": "hiclass LCPN (LinearSVC)",
            "fit_time": fit_time,
            "predict_time": pred_time,
            **_score(test.y, np.asarray(pred), test),
        }
    ]


def loglog_slope(x: Sequence[float], t: Sequence[float]) -> float:
    """Least-squares slope of ``log t`` against ``log x``."""
    lx, lt = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(t, dtype=float))
    return float(np.polyfit(lx, lt, 1)[0])


def scale_curves(
    method: str = "topdown",
    n_docs: Sequence[int] = (10_000, 30_000, 100_000, 300_000, 1_000_000),
    n_classes: Sequence[int] = (100, 300, 1_000, 3_000, 10_000),
    docs_at_fixed_classes: int = 100,
    docs_for_class_curve: int = 100_000,
    n_features: int = 20_000,
    params: dict[str, Any] | None = None,
    random_state: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Fit time of ``method`` as documents (nnz) and classes grow.

    Returns
    -------
    table : DataFrame
        Columns curve ("docs" or "classes"), n_docs, n_classes, nnz, fit_time.
    slopes : dict
        ``{"nnz": slope of log time vs log nnz, "classes": slope vs log classes}``.
    """
    from hierlab.datasets.text import make_hierarchical_text

    rows = []
    for curve, grid in (("docs", n_docs), ("classes", n_classes)):
        for v in grid:
            nd = int(v) if curve == "docs" else docs_for_class_curve
            nc = docs_at_fixed_classes if curve == "docs" else int(v)
            if progress:
                progress(f"{method}: {curve} curve, {nd} documents, {nc} classes")
            train, _ = make_hierarchical_text(
                n_samples=nd,
                n_classes=nc,
                n_features=n_features,
                depth=3,
                test_size=0.01,
                random_state=random_state,
            )
            est = make_estimator(method, taxonomy=train.taxonomy, **(params or {}))
            _, fit_time = _time_fit(est, train.X, train.y)
            rows.append(
                {
                    "curve": curve,
                    "n_docs": train.n_samples,
                    "n_classes": nc,
                    "nnz": int(train.X.nnz),
                    "fit_time": fit_time,
                }
            )
    df = pd.DataFrame(rows)
    docs = df[df.curve == "docs"]
    cls = df[df.curve == "classes"]
    slopes = {
        "nnz": loglog_slope(docs.nnz, docs.fit_time) if len(docs) > 1 else float("nan"),
        "classes": loglog_slope(cls.n_classes, cls.fit_time) if len(cls) > 1 else float("nan"),
    }
    return df, slopes


def scale_figure(df: pd.DataFrame, slopes: dict[str, float], method: str) -> Any:
    """Two log-log panels: fit time vs nnz, and vs number of classes."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            f"time vs nnz (slope {slopes['nnz']:.2f})",
            f"time vs classes (slope {slopes['classes']:.2f})",
        ),
    )
    d = df[df.curve == "docs"]
    c = df[df.curve == "classes"]
    fig.add_trace(go.Scatter(x=d.nnz, y=d.fit_time, mode="lines+markers", name="vs nnz"), 1, 1)
    fig.add_trace(
        go.Scatter(x=c.n_classes, y=c.fit_time, mode="lines+markers", name="vs classes"), 1, 2
    )
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", title_text="fit time (s)")
    fig.update_layout(title=f"hierlab scale curves: {method}")
    return fig
