"""Views of a run's predictions that scale with the number of classes.

A ``K x K`` confusion matrix or a drawing of every node is fine for 20 classes and useless (and
quadratic in memory) for 2,000. These functions give what a reader can take in on a large tree,
at a cost linear in the number of examples and nodes:

* :func:`confused_pairs` — the non-empty cells of the depth-``d`` confusion table, most
  populated first, from one pass over the examples (never the ``K x K`` table);
* :func:`collapsed_subtree` — the nodes of a subtree down to the deepest level that keeps the
  drawing under a node budget (the tree collapsed to its levels, with drill-down by choosing
  another subtree root), and :func:`collapsed_taxonomy`, those nodes as a tree of their own
  (what a page draws).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.metrics import _confusion_ids, ancestor_at_depth

__all__ = ["STOPPED_ABOVE", "collapsed_subtree", "collapsed_taxonomy", "confused_pairs"]

#: the predicted "node" of an example whose prediction stops above the level
STOPPED_ABOVE = "(stopped above)"


def confused_pairs(y_true: Any, y_pred: Any, taxonomy: Taxonomy, level: int) -> pd.DataFrame:
    """The non-empty cells of the confusion table at depth ``level``, most populated first.

    Cell ``(u, v)`` counts the examples whose true label has ancestor-or-self ``u`` at depth
    ``level`` and whose prediction has ancestor-or-self ``v`` there (``v`` is
    :data:`STOPPED_ABOVE` when the prediction stops above ``level``); examples whose true label
    is shallower than ``level`` are left out. These are exactly the non-zero entries of
    :func:`hierlab.evaluation.metrics.confusion_at_level`, found with one ``np.unique`` over
    ``n`` integer keys: O(n log n) time and O(n) memory whatever the number of classes.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Node names or ids (single label, a tree).
    taxonomy : Taxonomy
    level : int
        Depth, ``1 <= level <= taxonomy.max_depth``.

    Returns
    -------
    DataFrame
        Columns ``true``, ``predicted`` (node names), ``true_id``, ``predicted_id`` (``-1``
        for :data:`STOPPED_ABOVE`), ``count``, ``share`` (``count`` over the examples below
        ``true`` at this depth: the row fraction of the heat map) and ``correct`` (``true ==
        predicted``); sorted by ``count`` decreasing, then by ids.
    """
    if not 1 <= level <= taxonomy.max_depth:
        raise ParameterError(f"level must be in 1..{taxonomy.max_depth}, got {level}")
    t, p = _confusion_ids(y_true, taxonomy), _confusion_ids(y_pred, taxonomy)
    anc = ancestor_at_depth(taxonomy)
    at, ap = anc[level, t], anc[level, p]
    keep = at >= 0
    at, ap = at[keep], ap[keep]
    width = taxonomy.n_nodes + 1
    keys, count = np.unique(at * width + (ap + 1), return_counts=True)
    true_id, pred_id = keys // width, keys % width - 1
    row_total = np.bincount(at, minlength=taxonomy.n_nodes)[true_id]
    order = np.lexsort((pred_id, true_id, -count))
    true_id, pred_id, count, row_total = (a[order] for a in (true_id, pred_id, count, row_total))
    names = np.asarray([str(v) for v in taxonomy.names], dtype=object)
    pred_names = np.where(pred_id >= 0, names[np.maximum(pred_id, 0)], STOPPED_ABOVE)
    return pd.DataFrame(
        {
            "true": names[true_id],
            "predicted": pred_names,
            "true_id": true_id.astype(np.int64),
            "predicted_id": pred_id.astype(np.int64),
            "count": count.astype(np.int64),
            "share": count / row_total,
            "correct": true_id == pred_id,
        }
    )


def collapsed_subtree(taxonomy: Taxonomy, root: Any = 0, max_nodes: int = 400) -> np.ndarray:
    """The nodes of the subtree under ``root``, down to the deepest level under a node budget.

    The subtree is cut below depth ``d`` (counted from ``root``), the largest ``d`` such that
    the nodes at relative depths ``0 .. d`` number at most ``max_nodes``; ``root`` and its
    children are always kept (a subtree with more children than the budget still shows them).

    Parameters
    ----------
    taxonomy : Taxonomy
        A tree.
    root : node name or id, default 0 (the root)
    max_nodes : int, default 400

    Returns
    -------
    ndarray of int
        Node ids in increasing order, ``root`` first among them in depth; every kept node's
        parent (but ``root``'s) is kept.
    """
    r = int(taxonomy.node_id(root))
    below = taxonomy.descendants(r, include_self=True)
    rel = np.asarray(taxonomy.depth)[below] - int(taxonomy.depth[r])
    per_depth = np.cumsum(np.bincount(rel))
    fits = np.flatnonzero(per_depth <= max_nodes)
    cut = max(int(fits[-1]) if len(fits) else 0, min(1, len(per_depth) - 1))
    return np.sort(below[rel <= cut])


def collapsed_taxonomy(
    taxonomy: Taxonomy, root: Any = 0, max_nodes: int = 400
) -> tuple[Taxonomy, np.ndarray]:
    """The subtree under ``root`` cut by :func:`collapsed_subtree`, as a tree of its own.

    Parameters
    ----------
    taxonomy : Taxonomy
        A tree.
    root : node name or id, default 0 (the root)
    max_nodes : int, default 400

    Returns
    -------
    drawn : Taxonomy
        The kept nodes under their own names, ``root`` its root; a node kept without its
        children is a leaf of ``drawn`` (the tree is collapsed below it).
    ids : ndarray of int of shape (drawn.n_nodes,)
        ``ids[j]``: the id in ``taxonomy`` of ``drawn``'s node ``j`` (per-node values of
        ``taxonomy`` are drawn as ``values[ids]``).
    """
    ids = collapsed_subtree(taxonomy, root, max_nodes)
    pos = np.full(taxonomy.n_nodes, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    r = int(taxonomy.node_id(root))
    parent = [int(pos[taxonomy.parent[i]]) if i != r else -1 for i in ids]
    drawn = Taxonomy.from_parent_array(parent, [str(taxonomy.names[i]) for i in ids])
    return drawn, ids
