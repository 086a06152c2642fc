"""Curves from node probabilities: precision-recall, reliability, and precision against depth.

Pure functions of arrays, like :mod:`hierlab.evaluation.metrics`: they return tidy
DataFrames; :mod:`hierlab.plots` draws them.

* :func:`pr_curve` — the pooled precision-recall curve over (example, node) pairs, root
  excluded: the curve whose area is :func:`~hierlab.evaluation.metrics.au_prc` (Clus-HMC,
  C-HMCNN).
* :func:`reliability` — reliability-diagram data of the node marginals, pooled over (example,
  node) pairs: the observed frequency per bin, and the **pooled** node-pair ECE and Brier score
  (``pooled_node_ece``, ``pooled_node_brier``), not the standard ones: those judge each
  example's distribution over its possible labels (:mod:`hierlab.evaluation.calibration`).
* :func:`threshold_curve` — what ``predict(X, threshold=t)`` does as ``t`` moves: hierarchical
  precision, recall and F1, the mean depth of the predictions and how many stop above the
  method's own prediction (single label).
* :func:`probability_report` — AU(PRC), the standard ECE (top-1 confidence) and Brier score
  (each example's distribution over the labels), the pooled node-pair figures under their own
  names, and the threshold table of a fitted estimator on a test set, in one call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.dataset import is_label_set, is_multilabel, label_names
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.calibration import calibration_sums
from hierlab.evaluation.metrics import (
    _pr_table,
    _single_ids,
    hierarchical_prf,
    label_indicator,
)
from hierlab.methods.probability import deepest_above, point_masses

__all__ = [
    "THRESHOLDS",
    "pooled_node_brier",
    "pr_curve",
    "probability_report",
    "reliability",
    "threshold_curve",
]

#: the thresholds of the precision/depth table
THRESHOLDS = (0.0, 0.5, 0.9)
#: rows of point masses formed at a time for the ECE and the Brier score
CALIBRATION_ROWS = 2048


def _indicator(Y_true: Any, taxonomy: Taxonomy | None, shape: tuple[int, int]) -> np.ndarray:
    """0/1 node membership (ancestor-closed) of shape ``shape`` from labels or an indicator."""
    if sp.issparse(Y_true):
        Y = Y_true.toarray()
    elif isinstance(Y_true, np.ndarray) and Y_true.ndim == 2:
        Y = Y_true
    else:
        if taxonomy is None:
            raise DataError("labels need a taxonomy to be turned into node memberships")
        Y = label_indicator(Y_true, taxonomy, closure=True).toarray()
    if Y.shape != shape:
        raise DataError(f"Y_true of shape {Y.shape} and probabilities of shape {shape} differ")
    return (Y > 0).astype(np.int8)


def _pairs(Y: np.ndarray, P: np.ndarray, nodes: Iterable[int] | None) -> tuple[Any, Any]:
    cols = np.arange(1, Y.shape[1]) if nodes is None else np.asarray(list(nodes), dtype=int)
    return Y[:, cols].ravel(), np.asarray(P, dtype=np.float64)[:, cols].ravel()


def pr_curve(
    Y_true: Any,
    scores: Any,
    taxonomy: Taxonomy | None = None,
    nodes: Iterable[int] | None = None,
) -> pd.DataFrame:
    """The pooled precision-recall curve over (example, node) pairs, root excluded.

    Parameters
    ----------
    Y_true : labels (with ``taxonomy``) or 0/1 array of shape (n_samples, n_nodes)
    scores : ndarray of shape (n_samples, n_nodes)
        Node probabilities (:meth:`~hierlab.HierarchicalClassifier.node_proba`) or scores.
    taxonomy : Taxonomy, optional
    nodes : iterable of int, optional
        Node ids to pool (default: every node but the root).

    Returns
    -------
    pandas.DataFrame
        Columns ``threshold``, ``precision``, ``recall``, one row per distinct score,
        thresholds decreasing; ``attrs["au_prc"]``, the step-wise area under it, equals
        :func:`~hierlab.evaluation.metrics.au_prc`.
    """
    S = np.asarray(scores, dtype=np.float64)
    Y = _indicator(Y_true, taxonomy, S.shape)
    y, s = _pairs(Y, S, nodes)
    n_pos = float(y.sum())
    if n_pos == 0:
        return pd.DataFrame(columns=["threshold", "precision", "recall"])
    thresholds, tp, fp = _pr_table(y, s)
    precision, recall = tp / (tp + fp), tp / n_pos
    df = pd.DataFrame({"threshold": thresholds, "precision": precision, "recall": recall})
    df.attrs["au_prc"] = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    return df


def pooled_node_brier(
    Y_true: Any, P: Any, taxonomy: Taxonomy | None = None, nodes: Iterable[int] | None = None
) -> float:
    """Mean squared error of the node marginals pooled over (example, node) pairs, root
    excluded: ``1/(n |V|) sum_i sum_v (P_iv - Y_iv)^2`` (not the multi-class Brier score of
    :func:`hierlab.evaluation.calibration.multiclass_brier_score`)."""
    P = np.asarray(P, dtype=np.float64)
    y, p = _pairs(_indicator(Y_true, taxonomy, P.shape), P, nodes)
    return float(np.mean((p - y) ** 2)) if len(y) else float("nan")


def reliability(
    Y_true: Any,
    P: Any,
    taxonomy: Taxonomy | None = None,
    n_bins: int = 10,
    nodes: Iterable[int] | None = None,
) -> pd.DataFrame:
    """Reliability-diagram data over (example, node) pairs, root excluded.

    Parameters
    ----------
    Y_true : labels (with ``taxonomy``) or 0/1 array of shape (n_samples, n_nodes)
    P : ndarray of shape (n_samples, n_nodes)
        Node probabilities.
    taxonomy : Taxonomy, optional
    n_bins : int, default 10
        Equal-width bins of [0, 1].
    nodes : iterable of int, optional

    Returns
    -------
    pandas.DataFrame
        One row per non-empty bin: ``bin_low``, ``bin_high``, ``mean_predicted``,
        ``observed`` (fraction of positive pairs), ``count``. ``attrs`` holds
        ``pooled_node_ece`` (the count-weighted mean of ``|observed - mean_predicted|`` over
        the pairs) and ``pooled_node_brier`` (:func:`pooled_node_brier`).
    """
    P = np.asarray(P, dtype=np.float64)
    y, p = _pairs(_indicator(Y_true, taxonomy, P.shape), P, nodes)
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    b = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, int(n_bins) - 1)
    count = np.bincount(b, minlength=n_bins).astype(np.float64)
    sum_p = np.bincount(b, weights=p, minlength=n_bins)
    sum_y = np.bincount(b, weights=y.astype(np.float64), minlength=n_bins)
    keep = count > 0
    df = pd.DataFrame(
        {
            "bin_low": edges[:-1][keep],
            "bin_high": edges[1:][keep],
            "mean_predicted": sum_p[keep] / count[keep],
            "observed": sum_y[keep] / count[keep],
            "count": count[keep].astype(np.int64),
        }
    )
    total = count.sum()
    gap = np.abs(df["observed"] - df["mean_predicted"]) * df["count"]
    df.attrs["pooled_node_ece"] = float(gap.sum() / total) if total else float("nan")
    df.attrs["pooled_node_brier"] = float(np.mean((p - y) ** 2)) if len(y) else float("nan")
    return df


def threshold_curve(
    y_true: Any,
    P: np.ndarray,
    y_pred: Any,
    taxonomy: Taxonomy,
    thresholds: Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """Predictions stopped above the leaves as the threshold moves (single label).

    At threshold ``t`` each prediction becomes the deepest node of its predicted path whose
    probability is at least ``t`` (what ``predict(X, threshold=t)`` returns).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True node names (or integer node ids, as in :mod:`hierlab.evaluation.metrics`).
    P : ndarray of shape (n_samples, n_nodes)
        Node probabilities (``node_proba``), columns in ``taxonomy`` id order.
    y_pred : array-like of shape (n_samples,)
        The method's own predictions (``predict(X)``), names or ids.
    taxonomy : Taxonomy
    thresholds : sequence of float, optional
        Default: 0, 0.05, ..., 1.

    Returns
    -------
    pandas.DataFrame
        One row per threshold: ``threshold``, ``hierarchical_precision``,
        ``hierarchical_recall``, ``hierarchical_f1``, ``accuracy`` (exact match),
        ``accuracy_ancestor`` (the ancestor rule: the true label on the predicted path),
        ``on_true_path`` (the prediction is the true label or one of its ancestors: right as
        far as it goes), ``mean_depth`` of the predictions,
        ``stopped`` (share cut back above the method's prediction) and ``at_root``.
    """
    if is_multilabel(y_true) or is_multilabel(y_pred):
        raise DataError("threshold_curve takes one label per row")
    t_ids = _single_ids(y_true, taxonomy, "y_true")
    p_ids = _single_ids(y_pred, taxonomy, "y_pred")
    ts = np.linspace(0.0, 1.0, 21) if thresholds is None else np.asarray(thresholds, float)
    rows = []
    for t in ts:
        cut = deepest_above(P, p_ids, taxonomy, float(t)) if t > 0 else p_ids
        prf = hierarchical_prf(t_ids, cut, taxonomy)
        rows.append(
            {
                "threshold": float(t),
                "hierarchical_precision": prf.precision,
                "hierarchical_recall": prf.recall,
                "hierarchical_f1": prf.f1,
                "accuracy": float(np.mean(t_ids == cut)),
                "accuracy_ancestor": float(taxonomy.is_ancestor_or_self(t_ids, cut).mean()),
                "on_true_path": float(taxonomy.is_ancestor_or_self(cut, t_ids).mean()),
                "mean_depth": float(np.asarray(taxonomy.depth)[cut].mean()),
                "stopped": float(np.mean(cut != p_ids)),
                "at_root": float(np.mean(cut == 0)),
            }
        )
    return pd.DataFrame(rows)


def probability_report(
    estimator: Any,
    X: Any,
    y: Any,
    thresholds: Sequence[float] = THRESHOLDS,
) -> dict[str, Any]:
    """AU(PRC), ECE, Brier and the precision/depth table of a fitted estimator on test data.

    Parameters
    ----------
    estimator : HierarchicalClassifier
        Fitted (and calibrated).
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    thresholds : sequence of float, default (0, 0.5, 0.9)

    Returns
    -------
    dict
        ``ece`` and ``brier``: the standard figures of
        :mod:`hierlab.evaluation.calibration` on each example's distribution over the nodes a
        label can stop at (``point_masses`` of ``node_proba``): the ECE of the top-1
        confidence (15 equal-width bins) and Brier's multi-class score (summed over the
        labels, averaged over the examples, range [0, 2]); nan for multi-label data or a DAG,
        whose probabilities are marginals (``calibration_note`` says so).
        ``reliability``: the top-1 reliability diagram (accuracy against confidence).
        ``pooled_node_ece``, ``pooled_node_brier`` and ``node_reliability``: the same over
        (example, node) pairs of the node marginals, root excluded (:func:`reliability`).
        ``au_prc`` (pooled, from ``node_proba``), ``node_proba`` (the array), ``pr_curve``,
        ``unscored_rows`` (test rows whose label is not a node of the estimator's taxonomy,
        e.g. a class that no training row had under an induced tree: left out) and, for
        single-label data, ``thresholds`` (the :func:`threshold_curve` table).
    """
    tax = estimator.taxonomy_
    y = label_names(y)  # the user's labels may be ints: names, not ids
    # a tree induced from the training labels (MF-Tree, CMTL) lacks the classes the training
    # rows never had: those test rows cannot be scored against it and are counted, not scored
    known = np.array(
        [all(v in tax for v in lab) if is_label_set(lab) else lab in tax for lab in y],
        dtype=bool,
    )
    if not known.all():
        keep = np.flatnonzero(known)
        X, y = _take_rows(X, keep), y[keep]
    P = estimator.node_proba(X)
    Y = label_indicator(y, tax, closure=True).toarray()
    node_rel = reliability(Y, P)
    pr = pr_curve(Y, P)  # its area is au_prc(Y, P): one sort of the pairs, not two
    out: dict[str, Any] = {
        "au_prc": pr.attrs.get("au_prc", float("nan")),
        **_standard_calibration(estimator, P, y, tax),
        "pooled_node_ece": node_rel.attrs["pooled_node_ece"],
        "pooled_node_brier": node_rel.attrs["pooled_node_brier"],
        "node_reliability": node_rel,
        "node_proba": P,
        "pr_curve": pr,
        "unscored_rows": int((~known).sum()),
    }
    if not is_multilabel(y):
        pred = label_names(estimator.predict(X))
        out["thresholds"] = threshold_curve(y, P, pred, tax, thresholds)
    return out


def _standard_calibration(estimator: Any, P: np.ndarray, y: np.ndarray, tax: Taxonomy) -> dict:
    """``ece``, ``brier``, ``reliability`` (top-1) and ``calibration_note`` for
    :func:`probability_report`, from the node probabilities ``P`` of shape (n, n_nodes)."""
    mode = getattr(estimator, "calibration_", {}).get("mode", "tree")
    if is_multilabel(y) or mode == "marginal" or not tax.is_tree:
        empty = pd.DataFrame(columns=["bin_low", "bin_high", "mean_predicted", "observed", "count"])
        return {
            "ece": float("nan"),
            "brier": float("nan"),
            "reliability": empty,
            "calibration_note": "multi-label data or a DAG: the probabilities are marginals, "
            "not one distribution per example, so the top-1 ECE and the multi-class Brier "
            "score are not defined; the pooled node-pair figures are given",
        }
    ids = tax.index(list(y))
    sums = None
    for start in range(0, P.shape[0], CALIBRATION_ROWS):  # bounded temporaries on many nodes
        stop = start + CALIBRATION_ROWS
        D = point_masses(P[start:stop], tax)  # P(y = v | x): one distribution per example
        part = calibration_sums(ids[start:stop], D)
        sums = part if sums is None else sums + part
    if sums is None:
        sums = calibration_sums(ids, np.zeros((0, tax.n_nodes)))
    return {
        "ece": sums.ece,
        "brier": sums.brier,
        "reliability": sums.reliability(),
        "calibration_note": "",
    }


def _take_rows(X: Any, rows: np.ndarray) -> Any:
    """Rows ``rows`` of an array, sparse matrix or DataFrame."""
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]
