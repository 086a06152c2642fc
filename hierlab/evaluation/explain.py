"""Models that explain themselves: the features behind a node, and behind each step of a path.

``explain(est, node, k)`` lists the ``k`` features that push an example towards ``node`` most:
the node's row of the scoring weights ``W`` (node scores are ``X @ W.T + b``, see
:meth:`~hierlab.HierarchicalClassifier.node_scores`), that is the node's own weight vector for
top-down and one-vs-rest models (ORTHOGNL, TRANSFER, HIERMULT, top-down, greedy Hieron, HR,
FLATMULT) and the path sum ``sum_{u in A+(v)} w_u`` for path-sum models (TREELOSS, HSVM, NHSVM,
Hieron). MF-Tree explains the split that leads to ``node`` by the features whose class means
differ most between the two sides (the mean of the training examples below ``node`` minus the
mean of those below its sibling).

``explain(est, x)`` explains one example: along its predicted path, each step ``p -> c`` was
taken because a score beat its rival (for top-down models ``c``'s score against its best
sibling's; for flat models the predicted node's score against the best candidate below ``p``
outside ``c``). That margin is ``sum_j x_j (W[winner, j] - W[rival, j])`` plus the offsets'
difference, so ``x_j (W[winner, j] - W[rival, j])`` is feature ``j``'s contribution to the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.methods.base import HierarchicalClassifier, check_X

__all__ = ["explain", "node_weights"]


def _names(est: HierarchicalClassifier, feature_names: Sequence[str] | None) -> np.ndarray:
    d = int(est.n_features_in_)
    if feature_names is None:
        feature_names = getattr(est, "feature_names_in_", None)
    if feature_names is None:
        return np.array([f"x{j}" for j in range(d)], dtype=object)
    names = np.asarray([str(f) for f in feature_names], dtype=object)
    if len(names) != d:
        raise ParameterError(f"feature_names has {len(names)} names for {d} features")
    return names


def _dense_row(W: Any, i: int) -> np.ndarray:
    row = W[i]
    return np.asarray(row.toarray() if sp.issparse(row) else row, dtype=np.float64).ravel()


def _weights(est: HierarchicalClassifier) -> tuple[Any, np.ndarray]:
    wb = est._score_weights()
    if wb is None:
        raise ParameterError(
            f"{type(est).__name__} scores through a kernel or a non-linear base classifier: "
            "it has no weight per feature to explain"
        )
    return wb[0], np.asarray(wb[1], dtype=np.float64)


def node_weights(est: HierarchicalClassifier, node: Any) -> np.ndarray:
    """The weight vector ``explain(est, node)`` sorts, shape (n_features,).

    Parameters
    ----------
    est : HierarchicalClassifier
        Fitted.
    node : node name (or a label object naming one)

    Returns
    -------
    ndarray of shape (n_features,)
    """
    tax = est.taxonomy_
    key = str(node)
    if key not in tax:
        raise ParameterError(f"{node!r} is not a node of the fitted taxonomy")
    v = int(tax.index(key))
    if est._explain_by_class_means:
        if v == 0:
            raise ParameterError("the root is no side of a split: explain one of its children")
        M = est.node_means_
        sib = tax.siblings(v)
        other = np.asarray(M[sib].mean(axis=0)).ravel()
        return _dense_row(M, v) - other
    W, _ = _weights(est)
    return _dense_row(W, v)


def _explain_node(
    est: HierarchicalClassifier, node: Any, k: int, names: np.ndarray
) -> pd.DataFrame:
    w = node_weights(est, node)
    order = np.argsort(-w, kind="stable")[:k]
    return pd.DataFrame(
        {
            "rank": np.arange(1, len(order) + 1),
            "feature": names[order],
            "feature_index": order,
            "weight": w[order],
        }
    )


def _rival(est: HierarchicalClassifier, s: np.ndarray, pred: int, c: int) -> int:
    """The node whose score the step to ``c`` beat (-1: the zero "stop" option)."""
    tax = est.taxonomy_
    p = int(tax.parent[c])
    if est._routing() == "recursive":
        sib = tax.siblings(c)
        stop = est._stop_scores()
        best = int(sib[np.argmax(s[sib])]) if len(sib) else -1
        if stop is not None and np.isfinite(stop[p]) and (best < 0 or stop[p] >= s[best]):
            return -1
        return best
    cand = est._candidates()
    inside = np.zeros(tax.n_nodes, dtype=bool)
    inside[tax.descendants(p, include_self=True)] = True
    inside[tax.descendants(c, include_self=True)] = False
    pool = np.flatnonzero(inside & cand)
    return int(pool[np.argmax(s[pool])]) if len(pool) else -1


def _explain_row(est: HierarchicalClassifier, x: Any, k: int, names: np.ndarray) -> pd.DataFrame:
    if not sp.issparse(x) and np.ndim(x) == 1:
        x = np.asarray(x).reshape(1, -1)
    X = check_X(x, est, reset=False)
    if X.shape[0] != 1:
        raise ParameterError(f"explain takes one example, got {X.shape[0]} rows")
    tax = est.taxonomy_
    if not tax.is_tree:
        raise ParameterError("path explanations need a tree taxonomy")
    W, b = _weights(est)
    s = est._node_scores(X)[0]
    pred = est._predict_ids(X)
    pred = int(np.asarray(pred.toarray().argmax() if sp.issparse(pred) else pred).ravel()[0])
    xr = _dense_row(X, 0)
    frames = []
    for step, c in enumerate(tax.ancestors(pred, include_self=True)[1:], start=1):
        c = int(c)
        winner = pred if est._routing() == "flat" else c
        rival = _rival(est, s, pred, c)
        diff = _dense_row(W, winner) - (_dense_row(W, rival) if rival >= 0 else 0.0)
        offset = b[winner] - (b[rival] if rival >= 0 else 0.0)
        contrib = xr * diff
        order = np.argsort(-contrib, kind="stable")[:k]
        frames.append(
            pd.DataFrame(
                {
                    "step": step,
                    "parent": str(tax.names[tax.parent[c]]),
                    "node": str(tax.names[c]),
                    "rival": "(stop)" if rival < 0 else str(tax.names[rival]),
                    "margin": float(contrib.sum() + offset),
                    "feature": names[order],
                    "feature_index": order,
                    "value": xr[order],
                    "contribution": contrib[order],
                }
            )
        )
    cols = ["step", "parent", "node", "rival", "margin", "feature", "feature_index", "value"]
    if not frames:
        return pd.DataFrame(columns=[*cols, "contribution"])
    return pd.concat(frames, ignore_index=True)


def explain(
    estimator: HierarchicalClassifier,
    target: Any,
    k: int = 10,
    feature_names: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The features that push towards a node, or that drove each step of an example's path.

    Parameters
    ----------
    estimator : HierarchicalClassifier
        Fitted, with linear node scores (no kernel).
    target : node name, or one example (array-like of shape (n_features,) or a 1-row sparse
        matrix)
        A node: its ``k`` strongest features. An example: the ``k`` strongest contributions to
        each step of its predicted path.
    k : int, default 10
    feature_names : sequence of str, optional
        One name per feature (for text data sets, the vocabulary:
        ``HierDataset.feature_names``). Default: ``feature_names_in_`` or ``x0, x1, ...``.

    Returns
    -------
    pandas.DataFrame
        A node: ``rank``, ``feature``, ``feature_index``, ``weight`` (descending). An example:
        per step ``step``, ``parent``, ``node``, ``rival``, ``margin``, then ``feature``,
        ``feature_index``, ``value`` (``x_j``) and ``contribution`` (descending within a step);
        a step's contributions and the offsets add up to its ``margin``.

    Examples
    --------
    >>> import numpy as np, hierlab
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> est = hierlab.TopDownClassifier().fit(X, ["a", "a", "b", "b"])
    >>> hierlab.explain(est, "b", k=1, feature_names=["apple", "banana"])["feature"].tolist()
    ['banana']
    """
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ParameterError(f"k must be an integer >= 1, got {k!r}")
    names = _names(estimator, feature_names)
    if isinstance(target, str | np.str_) or np.isscalar(target):
        return _explain_node(estimator, target, int(k), names)
    return _explain_row(estimator, target, int(k), names)
