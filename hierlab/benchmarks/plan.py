"""Sizing a cluster on paper: ``hierlab bench --plan``.

The scale curves (:func:`hierlab.benchmarks.bench.scale_curves_many`) measure a method's fit
time and peak memory on ``make_hierarchical_text`` as documents (hence non-zeros) and classes
grow. This module fits two models to them and extrapolates to the sizes of the large text
benchmarks the seeds were written for:

- time, a power law: ``log T = a + b log nnz + c log L`` (least squares; ``L`` leaves, ``nnz``
  the non-zeros of the training matrix), on the fits' CPU seconds (``fit_cpu``: what a worker
  with a core of its own spends; the wall time of a shared, loaded machine overstates it), or
  their wall seconds where CPU times were not recorded;
- memory, linear in what is held: ``M = m0 + alpha nnz + beta n_nodes d`` (least squares,
  ``d`` features): the data (CSR, ``alpha`` bytes per non-zero with the copies a fit makes)
  and the weights (``beta`` bytes per (node, feature) cell held, 8 for one dense copy).

For ``W`` workers the per-fit parallel parts (one task per parent node, leaf or leaf block) are
assumed to divide the time evenly, ``T / W``, and each worker holds the whole training matrix
(sent once, ``Client.scatter(broadcast=True)``) and ``1 / W`` of the weights:
``M_w = m0 + alpha nnz + beta n_nodes d / W``. The check: the models are fitted without the
largest-classes point of the curves (10^4 leaves by default) and predict it; the printed
ratio predicted / measured says how far to trust the extrapolation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TARGETS", "PlanModel", "check_point", "fit_plan", "plan_table"]


@dataclass(frozen=True)
class Target:
    """A benchmark's size: leaves, training documents, features (and its nodes, about
    ``leaves * 1.1`` for the wide, shallow trees of LSHTC and DMOZ when not known)."""

    name: str
    leaves: int
    docs: int
    features: int


#: LSHTC-2010 (large) and DMOZ-2012 as in seeds 001 and 003
TARGETS = (
    Target("LSHTC-2010-like", 12_294, 128_710, 381_580),
    Target("DMOZ-2012-like", 27_875, 383_408, 348_548),
)


@dataclass(frozen=True)
class PlanModel:
    """The fitted models.

    Attributes
    ----------
    method : str
    a, b, c : float
        ``log T = a + b log nnz + c log L`` (seconds).
    m0, alpha, beta : float
        ``M = m0 + alpha nnz + beta n_nodes d`` (bytes).
    nnz_per_doc : float
        Non-zeros per document of the curves (the targets' documents are assumed as long).
    nodes_per_leaf : float
        Nodes per leaf of the curves' trees.
    n_points : int
        Measured points fitted.
    clock : {"fit_cpu", "fit_time"}
        The measured seconds the time model was fitted to.
    """

    method: str
    a: float
    b: float
    c: float
    m0: float
    alpha: float
    beta: float
    nnz_per_doc: float
    nodes_per_leaf: float
    n_points: int
    clock: str = "fit_cpu"

    def time(self, nnz: float, leaves: float) -> float:
        """Predicted fit seconds on one worker."""
        return float(np.exp(self.a + self.b * np.log(nnz) + self.c * np.log(leaves)))

    def memory(self, nnz: float, cells: float, workers: int = 1) -> float:
        """Predicted peak bytes per worker (``cells`` = nodes x features of the weights)."""
        return float(self.m0 + self.alpha * nnz + self.beta * cells / workers)


def _clock(table: pd.DataFrame) -> str:
    """``fit_cpu`` when every measured fit recorded it, else ``fit_time``."""
    done = table[table["fit_time"].notna()]
    ok = (
        "fit_cpu" in table
        and bool(done["fit_cpu"].notna().all())
        and bool((done["fit_cpu"] > 0).all())
    )
    return "fit_cpu" if ok else "fit_time"


def _points(table: pd.DataFrame, method: str) -> pd.DataFrame:
    df = table[(table["method"] == method) & table["fit_time"].notna()].copy()
    if len(df) < 3:
        raise ValueError(
            f"{method}: {len(df)} measured points of the scale curves; the plan needs >= 3 "
            "(vary documents and classes)"
        )
    return df


def fit_plan(table: pd.DataFrame, method: str, n_features: int) -> PlanModel:
    """Fit the time and memory models to ``method``'s measured points.

    Parameters
    ----------
    table : DataFrame
        Rows of the scale curves (columns method, n_docs, n_classes, n_nodes, nnz, fit_time,
        peak_rss_mb).
    method : str
    n_features : int
        The curves' vocabulary.

    Returns
    -------
    PlanModel
    """
    df = _points(table, method)
    clock = _clock(df)
    A = np.column_stack([np.ones(len(df)), np.log(df["nnz"]), np.log(df["n_classes"])])
    (a, b, c), *_ = np.linalg.lstsq(A, np.log(df[clock].to_numpy(float)), rcond=None)
    mem = df[df["peak_rss_mb"].notna()]
    cells = mem["n_nodes"].to_numpy(float) * n_features
    B = np.column_stack([np.ones(len(mem)), mem["nnz"].to_numpy(float), cells])
    m0, alpha, beta = _nonneg_lstsq(B, mem["peak_rss_mb"].to_numpy(float) * 2**20)
    return PlanModel(
        method,
        float(a),
        float(b),
        float(c),
        m0,
        alpha,
        beta,
        float((df["nnz"] / df["n_docs"]).mean()),
        float((df["n_nodes"] / df["n_classes"]).mean()),
        len(df),
        clock,
    )


def _nonneg_lstsq(B: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least squares with non-negative coefficients (memory does not shrink with size)."""
    from scipy.optimize import nnls

    scale = np.maximum(np.abs(B).max(axis=0), 1e-300)
    coef, _ = nnls(B / scale, y)
    out = coef / scale
    return float(out[0]), float(out[1]), float(out[2])


def plan_table(
    model: PlanModel,
    targets: Sequence[Target] = TARGETS,
    workers: Sequence[int] = (1, 4, 16),
    nnz_per_doc: float | None = None,
) -> pd.DataFrame:
    """Predicted fit time and memory per worker for every target and number of workers.

    Parameters
    ----------
    model : PlanModel
    targets : sequence of Target
    workers : sequence of int
    nnz_per_doc : float, optional
        Non-zeros per target document (default: the curves').

    Returns
    -------
    DataFrame
        ``target, leaves, docs, features, nnz, workers, fit_time_h, memory_per_worker_gb``.
    """
    per_doc = model.nnz_per_doc if nnz_per_doc is None else float(nnz_per_doc)
    rows: list[dict[str, Any]] = []
    for t in targets:
        nnz = t.docs * per_doc
        cells = t.leaves * model.nodes_per_leaf * t.features
        one = model.time(nnz, t.leaves)
        for w in workers:
            rows.append(
                {
                    "target": t.name,
                    "leaves": t.leaves,
                    "docs": t.docs,
                    "features": t.features,
                    "nnz": int(nnz),
                    "workers": int(w),
                    "fit_time_h": one / w / 3600.0,
                    "memory_per_worker_gb": model.memory(nnz, cells, int(w)) / 2**30,
                }
            )
    return pd.DataFrame(rows)


def check_point(table: pd.DataFrame, method: str, n_features: int) -> dict[str, Any] | None:
    """Fit without the largest-classes measured point and predict it.

    Returns
    -------
    dict or None
        ``n_classes, n_docs, measured_s, predicted_s, time_ratio, measured_mb, predicted_mb,
        memory_ratio`` (ratios predicted / measured); None with fewer than 4 points.
    """
    df = _points(table, method)
    if len(df) < 4:
        return None
    top = df.loc[df["n_classes"].idxmax()]
    rest = df.drop(index=top.name)
    if rest["n_classes"].nunique() < 2:
        return None
    model = fit_plan(rest, method, n_features)
    pred_t = model.time(float(top["nnz"]), float(top["n_classes"]))
    pred_m = model.memory(float(top["nnz"]), float(top["n_nodes"]) * n_features) / 2**20
    meas_m = float(top["peak_rss_mb"]) if pd.notna(top["peak_rss_mb"]) else float("nan")
    return {
        "n_classes": int(top["n_classes"]),
        "n_docs": int(top["n_docs"]),
        "clock": model.clock,
        "measured_s": float(top[model.clock]),
        "predicted_s": pred_t,
        "time_ratio": pred_t / float(top[model.clock]),
        "measured_mb": meas_m,
        "predicted_mb": pred_m,
        "memory_ratio": pred_m / meas_m,
    }


ASSUMPTIONS = (
    "time: log T = a + b log nnz + c log L, fitted on the scale curves "
    "(make_hierarchical_text, depth 3, one vocabulary): the features act through nnz only; "
    "the targets' documents as long as the curves' (nnz/doc), their trees as wide "
    "(nodes/leaf)",
    "memory per worker: m0 + alpha nnz + beta n_nodes d / W (non-negative least squares on "
    "peak RSS): every worker holds the whole CSR matrix (scattered once), 1/W of the weights",
    "W workers: the per-fit parallel parts (one task per parent node / leaf / leaf block) "
    "divide the time evenly (T/W): no transfer or straggler cost; the scheduler's machine "
    "holds the whole model",
)
