"""Numbers the app needs that ``hierlab.metrics`` does not provide (yet).

Pure functions of ``(y_true, y_pred, taxonomy)`` in the style of ``hierlab.metrics``, to be
moved there. Labels are node names or ids of a tree taxonomy, one per example.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hierlab.taxonomy import Taxonomy

__all__ = ["ancestor_at_depth", "confusion_at_level"]


def _ids(y: Any, taxonomy: Taxonomy) -> np.ndarray:
    arr = np.asarray(y)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return taxonomy.index(np.asarray([str(v) for v in arr], dtype=object))


def ancestor_at_depth(taxonomy: Taxonomy) -> np.ndarray:
    """Table ``T[d, v]`` = the ancestor of ``v`` at depth ``d`` (``-1`` when ``v`` is shallower).

    Returns
    -------
    ndarray of int of shape (max_depth + 1, n_nodes)
    """
    n = taxonomy.n_nodes
    table = np.full((taxonomy.max_depth + 1, n), -1, dtype=np.int64)
    cur = np.arange(n)
    alive = np.ones(n, dtype=bool)
    while alive.any():
        idx = np.flatnonzero(alive)
        table[taxonomy.depth[cur[idx]], idx] = cur[idx]
        nxt = taxonomy.parent[cur[idx]]
        alive[idx[nxt < 0]] = False
        cur[idx[nxt >= 0]] = nxt[nxt >= 0]
    return table


def confusion_at_level(y_true: Any, y_pred: Any, taxonomy: Taxonomy, level: int) -> pd.DataFrame:
    """Confusion matrix of the ancestors at depth ``level`` (rows true, columns predicted).

    Examples whose true label is shallower than ``level`` are left out; a prediction that stops
    above ``level`` is counted in the column ``"(stopped above)"``.

    Returns
    -------
    DataFrame of int, indexed by true node names, columns predicted node names.
    """
    t, p = _ids(y_true, taxonomy), _ids(y_pred, taxonomy)
    table = ancestor_at_depth(taxonomy)
    if not 1 <= level <= taxonomy.max_depth:
        raise ValueError(f"level must be in 1..{taxonomy.max_depth}, got {level}")
    at, ap = table[level, t], table[level, p]
    mask = at >= 0
    names = np.asarray([str(x) for x in taxonomy.names], dtype=object)
    nodes = [str(x) for x in names[taxonomy.levels[level]]]
    true_names = names[at[mask]]
    stopped = "(stopped above)"
    pred_names = np.where(ap[mask] >= 0, names[np.maximum(ap[mask], 0)], stopped)
    cols = nodes + ([stopped] if (ap[mask] < 0).any() else [])
    ct = pd.crosstab(
        pd.Categorical(true_names, categories=nodes),
        pd.Categorical(pred_names, categories=cols),
        dropna=False,
    )
    ct.index.name = "true"
    ct.columns.name = "predicted"
    return ct.astype(np.int64)
