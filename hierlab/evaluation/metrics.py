"""Hierarchical evaluation measures: pure functions of ``(y_true, y_pred, taxonomy)``.

Every function accepts node names or node ids. Single-label targets are 1-D arrays of shape
(n_samples,). Multi-label targets (where a measure is meaningful for them) are either a sequence
of tuples/lists/sets of node names or ids, one per example, or a 0/1 indicator matrix of shape
(n_samples, n_nodes), dense or CSR (the format of :meth:`HierarchicalClassifier._fit`).

The measures and the seeds they come from:

==========================  =====================================================================
``accuracy``                exact match: the share of examples predicted exactly their label
``accuracy_ancestor``       seed 000's score: correct when the true label is the predicted node or
                            one of its ancestors (``1 - zero_one_error``)
``zero_one_error``          0/1 loss with the ancestor rule for internal true labels (seed 000)
``tree_induced_error``      mean ``gamma(y, y_hat)`` (seed 002, eq. 1); ``half=True``: seed 000's
                            tree-induced loss (half the graph distance)
``gamma_histogram``         counts of ``gamma(y, y_hat)`` values, a tidy DataFrame
``micro_f1``/``macro_f1``   the seeds' F1 measures (000: micro; 001: micro and macro; 004: macro)
``hierarchical_prf``        hierarchical precision / recall / F1 (Kiritchenko et al. 2006)
``error_per_level``         error of the depth-``d`` ancestors, per level
``error_per_node``          per node: how often a node on the true path is missed
``tree_similarity_mse``     MSE between ``A_ij = 1 / numhops(c_i, c_j)`` matrices (seed 004, 6.2.3)
``au_prc``                  pooled (micro-averaged) area under the PR curve over nodes (Clus,
                            C-HMCNN)
``evaluate``                a dict of the main measures
``METRICS``                 the table of every key of ``evaluate``: display name, definition, seed
==========================  =====================================================================

They return numbers or tidy ``pandas.DataFrame`` objects, never figures (``hierlab.plots``
draws them). Empty inputs give ``nan``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.dataset import is_label_set, is_multilabel
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "METRICS",
    "HierarchicalPRF",
    "MetricInfo",
    "accuracy",
    "accuracy_ancestor",
    "ancestor_at_depth",
    "au_prc",
    "confusion_at_level",
    "error_per_level",
    "error_per_node",
    "evaluate",
    "gamma_histogram",
    "hierarchical_prf",
    "is_multilabel",
    "label_indicator",
    "macro_f1",
    "metric_help",
    "metric_label",
    "micro_f1",
    "tree_induced_error",
    "tree_similarity_mse",
    "zero_one_error",
]


# ---------------------------------------------------------------------------- input handling
def _single_ids(y: Any, taxonomy: Taxonomy, what: str) -> np.ndarray:
    """Node ids of a single-label target, shape (n_samples,)."""
    if isinstance(y, pd.Series):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise DataError(f"{what} must be 1-D (one label per example), got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == object and all(isinstance(v, int | np.integer) for v in arr):
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "b" or arr.dtype.kind == "f":
        raise DataError(f"{what} must hold node names or integer node ids, got {arr.dtype}")
    return taxonomy.node_ids(arr)


def label_indicator(y: Any, taxonomy: Taxonomy, closure: bool = False) -> sp.csr_matrix:
    """0/1 indicator of the label sets, shape (n_samples, n_nodes), CSR of float64.

    Parameters
    ----------
    y : array-like
        Single-label (1-D names or ids) or multi-label (sequence of sets, or an indicator of
        shape (n_samples, n_nodes)) target.
    taxonomy : Taxonomy
    closure : bool, default False
        Augment every set with the ancestors of its labels, ``A+(y)`` (the root included).

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
    """
    n_nodes = taxonomy.n_nodes
    if sp.issparse(y) or (isinstance(y, np.ndarray) and y.dtype.kind in "biuf" and y.ndim == 2):
        m = sp.csr_matrix(y, dtype=np.float64)
        if m.shape[1] != n_nodes:
            raise DataError(
                f"indicator has {m.shape[1]} columns but the taxonomy has {n_nodes} nodes"
            )
        m.eliminate_zeros()
        m.data[:] = 1.0
    elif isinstance(y, pd.DataFrame):
        return label_indicator(y.to_numpy(), taxonomy, closure)
    elif is_multilabel(y):
        rows = list(y.to_numpy() if isinstance(y, pd.Series) else y)
        sets = [list(r) if is_label_set(r) else [r] for r in rows]
        lengths = np.array([len(s) for s in sets], dtype=np.int64)
        flat = [v for s in sets for v in s]
        if flat and all(isinstance(v, int | np.integer) for v in flat):
            ids = taxonomy.node_ids(np.asarray(flat, dtype=np.int64))
        else:
            ids = taxonomy.index(np.asarray([str(v) for v in flat], dtype=object))
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        m = sp.csr_matrix(
            (np.ones(len(ids)), np.asarray(ids, dtype=np.int64), indptr),
            shape=(len(sets), n_nodes),
        )
        m.sum_duplicates()
        m.data[:] = 1.0
    else:
        ids = _single_ids(y, taxonomy, "y")
        if closure:
            return taxonomy.ancestor_matrix[ids].tocsr()
        m = sp.csr_matrix(
            (np.ones(len(ids)), ids, np.arange(len(ids) + 1)), shape=(len(ids), n_nodes)
        )
    if closure:
        m = (m @ taxonomy.ancestor_matrix).tocsr()
        m.data[:] = 1.0
    return m


def _check_lengths(a: int, b: int) -> None:
    if a != b:
        raise DataError(f"y_true has {a} examples but y_pred has {b}")


def _pair_ids(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> tuple[np.ndarray, np.ndarray]:
    if is_multilabel(y_true) or is_multilabel(y_pred):
        raise DataError("this measure is defined for single-label targets (one node per example)")
    t = _single_ids(y_true, taxonomy, "y_true")
    p = _single_ids(y_pred, taxonomy, "y_pred")
    _check_lengths(len(t), len(p))
    return t, p


def _pair_indicators(
    y_true: Any, y_pred: Any, taxonomy: Taxonomy, closure: bool
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    T = label_indicator(y_true, taxonomy, closure=closure)
    P = label_indicator(y_pred, taxonomy, closure=closure)
    _check_lengths(T.shape[0], P.shape[0])
    return T, P


def _drop_root(m: sp.csr_matrix, taxonomy: Taxonomy) -> sp.csr_matrix:
    keep = np.ones(taxonomy.n_nodes)
    keep[taxonomy.root] = 0.0
    out = (m @ sp.diags(keep)).tocsr()
    out.eliminate_zeros()
    return out


# ---------------------------------------------------------------------------- 0/1 and gamma
def zero_one_error(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> float:
    """Zero-one error with the ancestor rule (seed 000, Section 5 and the errata).

    A prediction is correct when the true label is the predicted node or one of its ancestors
    (an internal true label counts as correct iff it lies on the predicted path). For
    multi-label targets: the fraction of examples whose ancestor-closed label sets differ
    (subset 0/1 loss on ``A+(Y)``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or multi-label
        Node names or ids.
    taxonomy : Taxonomy

    Returns
    -------
    float
        Fraction of wrong predictions (``nan`` for empty input).
    """
    if is_multilabel(y_true) or is_multilabel(y_pred):
        T, P = _pair_indicators(y_true, y_pred, taxonomy, closure=True)
        if T.shape[0] == 0:
            return float("nan")
        diff = abs(T - P)
        wrong = np.diff(diff.tocsr().indptr) > 0 if diff.nnz else np.zeros(T.shape[0], bool)
        return float(np.mean(wrong))
    t, p = _pair_ids(y_true, y_pred, taxonomy)
    if len(t) == 0:
        return float("nan")
    return float(1.0 - taxonomy.is_ancestor_or_self(t, p).mean())


def accuracy(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> float:
    """Exact-match accuracy: the share of examples whose prediction is exactly their label.

    An internal true label counts as correct only when that very node is predicted (compare
    :func:`accuracy_ancestor`). Multi-label: the share of examples whose ancestor-closed label
    sets ``A+(Y)`` are equal (subset accuracy).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or multi-label
        Node names or ids.
    taxonomy : Taxonomy

    Returns
    -------
    float
        ``mean(y_hat_i == y_i)`` (``nan`` for empty input).
    """
    if is_multilabel(y_true) or is_multilabel(y_pred):
        return 1.0 - zero_one_error(y_true, y_pred, taxonomy)
    t, p = _pair_ids(y_true, y_pred, taxonomy)
    if len(t) == 0:
        return float("nan")
    return float(np.mean(t == p))


def accuracy_ancestor(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> float:
    """Seed 000's accuracy, "accuracy (ancestor rule)": ``1 - zero_one_error``.

    A prediction counts as correct when the true label is the predicted node or one of its
    ancestors, so an internal true label is right whenever the predicted leaf lies below it.
    On leaf labels it equals :func:`accuracy`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or multi-label
    taxonomy : Taxonomy

    Returns
    -------
    float
    """
    return 1.0 - zero_one_error(y_true, y_pred, taxonomy)


def tree_induced_error(y_true: Any, y_pred: Any, taxonomy: Taxonomy, half: bool = False) -> float:
    """Mean tree distance ``gamma(y, y_hat)`` (seed 002, eq. 1 and Tables 1-2).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Node names or ids (single-label).
    taxonomy : Taxonomy
    half : bool, default False
        Divide by two: the tree-induced loss of seed 000 (half the graph distance, Section 6).

    Returns
    -------
    float
    """
    t, p = _pair_ids(y_true, y_pred, taxonomy)
    if len(t) == 0:
        return float("nan")
    g = taxonomy.tree_distance(t, p).mean()
    return float(g / 2.0 if half else g)


def gamma_histogram(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> pd.DataFrame:
    """Histogram of ``gamma(y, y_hat)`` over the examples.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Node names or ids (single-label).
    taxonomy : Taxonomy

    Returns
    -------
    DataFrame
        Columns ``gamma`` (0 .. the largest distance seen, every value listed), ``count`` and
        ``fraction`` (count / n_samples).
    """
    t, p = _pair_ids(y_true, y_pred, taxonomy)
    g = np.asarray(taxonomy.tree_distance(t, p), dtype=np.int64)
    counts = np.bincount(g, minlength=1) if len(g) else np.zeros(1, dtype=np.int64)
    n = max(len(g), 1)
    return pd.DataFrame(
        {
            "gamma": np.arange(len(counts), dtype=np.int64),
            "count": counts.astype(np.int64),
            "fraction": counts / n if len(g) else np.full(len(counts), np.nan),
        }
    )


# ---------------------------------------------------------------------------- F1 measures
def _f1_counts(
    y_true: Any,
    y_pred: Any,
    taxonomy: Taxonomy,
    closure: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-node true positives, false positives and false negatives, each of shape (n_nodes,)."""
    n_nodes = taxonomy.n_nodes
    if not closure and not (is_multilabel(y_true) or is_multilabel(y_pred)):
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        ok = taxonomy.is_ancestor_or_self(t, p)
        tp = np.bincount(t[ok], minlength=n_nodes)
        fn = np.bincount(t[~ok], minlength=n_nodes)
        fp = np.bincount(p[~ok], minlength=n_nodes)
        return tp, fp, fn
    T, P = _pair_indicators(y_true, y_pred, taxonomy, closure=closure)
    if closure:
        T, P = _drop_root(T, taxonomy), _drop_root(P, taxonomy)
    tp = np.asarray(T.multiply(P).sum(axis=0)).ravel()
    fn = np.asarray(T.sum(axis=0)).ravel() - tp
    fp = np.asarray(P.sum(axis=0)).ravel() - tp
    return tp.astype(np.int64), fp.astype(np.int64), fn.astype(np.int64)


def micro_f1(y_true: Any, y_pred: Any, taxonomy: Taxonomy, closure: bool = False) -> float:
    """Micro-averaged F1 over classes, ``2 TP / (2 TP + FP + FN)`` summed over classes.

    Single-label (``closure=False``): every example has one true and one predicted class and
    the ancestor rule of seed 000 decides correctness, so micro-F1 equals ``1 - zero_one_error``
    (seed 000, Tables 2-8 print exactly that). Multi-label: counts over the raw label sets as
    given (the convention of seed 001's benchmarks and the LSHTC evaluation, where the target
    labels are the evaluated classes). With ``closure=True`` both sets are first augmented with
    their ancestors (root excluded); micro-F1 then equals the hierarchical F1.

    Parameters
    ----------
    y_true, y_pred : array-like
        Single-label of shape (n_samples,) or multi-label; node names or ids.
    taxonomy : Taxonomy
    closure : bool, default False
        Evaluate ancestor-closed sets ``A+(Y) - {root}`` instead of the raw labels.

    Returns
    -------
    float
    """
    tp, fp, fn = _f1_counts(y_true, y_pred, taxonomy, closure)
    den = 2 * tp.sum() + fp.sum() + fn.sum()
    return float(2 * tp.sum() / den) if den else float("nan")


def macro_f1(
    y_true: Any,
    y_pred: Any,
    taxonomy: Taxonomy,
    closure: bool = False,
    labels: Sequence[Any] | None = None,
) -> float:
    """Macro-averaged F1: the mean over classes of ``2 TP_c / (2 TP_c + FP_c + FN_c)``.

    The classes are ``labels`` if given, else every node seen in ``y_true`` or ``y_pred``
    (single-label: the true labels and the predictions; after the ancestor rule a correct
    prediction below an internal true label counts for the true label). Seeds 001 (Table 2) and
    004 (average F1 over classes) report this measure. ``y_true``, ``y_pred``, ``taxonomy`` and
    ``closure`` are as in :func:`micro_f1`.

    Parameters
    ----------
    labels : sequence of node names or ids, optional
        The classes to average over (a class never seen then has F1 = 0).

    Returns
    -------
    float
    """
    tp, fp, fn = _f1_counts(y_true, y_pred, taxonomy, closure)
    den = 2 * tp + fp + fn
    if labels is None:
        cls = np.flatnonzero(den > 0)
    else:
        cls = np.unique(taxonomy.node_ids(np.asarray(list(labels))))
    if len(cls) == 0:
        return float("nan")
    d = den[cls]
    f1 = np.divide(2 * tp[cls], d, out=np.zeros(len(cls)), where=d > 0)
    return float(f1.mean())


class HierarchicalPRF(NamedTuple):
    """Hierarchical precision, recall and F1 (micro-averaged over examples)."""

    precision: float
    recall: float
    f1: float


def hierarchical_prf(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> HierarchicalPRF:
    """Hierarchical precision, recall and F1 of Kiritchenko et al. (2006).

    With ``C_i`` the true and ``C'_i`` the predicted label set of example ``i``, each augmented
    with all its ancestors except the root::

        hP = sum_i |C_i & C'_i| / sum_i |C'_i|
        hR = sum_i |C_i & C'_i| / sum_i |C_i|
        hF = 2 hP hR / (hP + hR)

    Works for single- and multi-label targets, on trees and DAGs.

    Parameters
    ----------
    y_true, y_pred : array-like
        Node names or ids.
    taxonomy : Taxonomy

    Returns
    -------
    HierarchicalPRF
        ``(precision, recall, f1)``; ``nan`` where a denominator is zero.
    """
    if taxonomy.is_tree and not (is_multilabel(y_true) or is_multilabel(y_pred)):
        # on a tree A+(t) & A+(p) = A+(lca(t, p)): the sizes are depths (root excluded)
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        depth = taxonomy.depth
        inter = float(depth[taxonomy.lca(t, p)].sum())
        n_pred, n_true = float(depth[p].sum()), float(depth[t].sum())
    else:
        T, P = _pair_indicators(y_true, y_pred, taxonomy, closure=True)
        T, P = _drop_root(T, taxonomy), _drop_root(P, taxonomy)
        inter = float(T.multiply(P).sum())
        n_pred, n_true = float(P.sum()), float(T.sum())
    return _prf(inter, n_pred, n_true)


def _prf(inter: float, n_pred: float, n_true: float) -> HierarchicalPRF:
    hp = inter / n_pred if n_pred else float("nan")
    hr = inter / n_true if n_true else float("nan")
    hf = 2 * hp * hr / (hp + hr) if (hp + hr) > 0 else (0.0 if n_pred and n_true else float("nan"))
    return HierarchicalPRF(hp, hr, hf)


# ---------------------------------------------------------------------------- per level / node
def error_per_level(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> pd.DataFrame:
    """Error of the depth-``d`` ancestors of truth and prediction, for every level ``d >= 1``.

    At level ``d`` an example counts when its true label has an ancestor-or-self at depth ``d``
    (``n``); it is an error when the prediction's ancestors-or-self at depth ``d`` differ from
    the truth's (in particular when the prediction stops above depth ``d``). For trees there is
    one such node per side; for DAGs (depth = longest path from the root) and multi-label
    targets the sets of depth-``d`` nodes in ``A+(Y)`` are compared.

    Parameters
    ----------
    y_true, y_pred : array-like
        Node names or ids, single- or multi-label.
    taxonomy : Taxonomy

    Returns
    -------
    DataFrame
        Columns ``level`` (1 .. max depth), ``n`` and ``error`` (``nan`` when ``n == 0``).
    """
    depth = taxonomy.depth
    n_levels = taxonomy.max_depth + 1
    levels = np.arange(1, n_levels)
    if taxonomy.is_tree and not (is_multilabel(y_true) or is_multilabel(y_pred)):
        # the depth-d ancestors differ iff the LCA lies above depth d: O(n + depth) counting
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        dt, dl = depth[t], depth[taxonomy.lca(t, p)]
        # n_d = #{dt >= d}; errors at d = #{dl < d <= dt}
        n_at = np.cumsum(np.bincount(dt, minlength=n_levels)[::-1])[::-1]
        starts = np.bincount(dl + 1, minlength=n_levels + 1)[:n_levels]
        ends = np.bincount(dt + 1, minlength=n_levels + 1)[:n_levels]
        e_at = np.cumsum(starts) - np.cumsum(ends)
        n = n_at[1:]
        err = np.divide(e_at[1:], n, out=np.full(len(n), np.nan), where=n > 0)
        return pd.DataFrame({"level": levels, "n": n.astype(np.int64), "error": err})
    T, P = _pair_indicators(y_true, y_pred, taxonomy, closure=True)
    Tc = T.tocoo()
    t_keys = np.unique(Tc.row.astype(np.int64) * n_levels + depth[Tc.col])
    n_per = np.bincount(t_keys % n_levels, minlength=n_levels)
    D = abs(T - P).tocoo()
    D.eliminate_zeros()
    e_keys = np.unique(D.row.astype(np.int64) * n_levels + depth[D.col])
    e_keys = e_keys[np.isin(e_keys, t_keys, assume_unique=True)]
    e_per = np.bincount(e_keys % n_levels, minlength=n_levels)
    n = n_per[1:]
    err = np.divide(e_per[1:], n, out=np.full(len(n), np.nan), where=n > 0)
    return pd.DataFrame({"level": levels, "n": n.astype(np.int64), "error": err})


def error_per_node(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> pd.DataFrame:
    """Per-node miss rate: the share of examples with ``v`` in ``A+(y)`` but not in ``A+(y_hat)``.

    The miss rate of every node of the true paths (one minus the per-node hierarchical recall),
    suited to colour a taxonomy drawing (see :func:`hierlab.plots.taxonomy_figure`).
    ``y_true``, ``y_pred`` and ``taxonomy`` are as in :func:`error_per_level`.

    Returns
    -------
    DataFrame
        One row per node in id order: ``node`` (name), ``id``, ``depth``, ``n``, ``errors``
        (examples missing the node) and ``error`` (``errors / n``, ``nan`` when ``n == 0``).
    """
    if taxonomy.is_tree and not (is_multilabel(y_true) or is_multilabel(y_pred)):
        # v in A+(t): count t below v; v in both: count lca(t, p) below v (one bottom-up pass)
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        n = _subtree_sums(taxonomy, np.bincount(t, minlength=taxonomy.n_nodes))
        hit = _subtree_sums(taxonomy, np.bincount(taxonomy.lca(t, p), minlength=taxonomy.n_nodes))
    else:
        T, P = _pair_indicators(y_true, y_pred, taxonomy, closure=True)
        n = np.asarray(T.sum(axis=0)).ravel()
        hit = np.asarray(T.multiply(P).sum(axis=0)).ravel()
    err = np.divide(n - hit, n, out=np.full(len(n), np.nan), where=n > 0)
    return pd.DataFrame(
        {
            "node": [str(x) for x in taxonomy.names],
            "id": np.arange(taxonomy.n_nodes),
            "depth": taxonomy.depth,
            "n": n.astype(np.int64),
            "errors": (n - hit).astype(np.int64),
            "error": err,
        }
    )


def _subtree_sums(taxonomy: Taxonomy, counts: np.ndarray) -> np.ndarray:
    """Sum of ``counts`` over ``D+(v)`` for every node of a tree, level by level bottom-up."""
    out = np.asarray(counts, dtype=np.int64).copy()
    parent = taxonomy.parent
    for lev in reversed(taxonomy.levels[1:]):
        np.add.at(out, parent[lev], out[lev])
    return out


# ---------------------------------------------------------------------------- tree similarity
def _hop_similarity(taxonomy: Taxonomy, classes: Sequence[str]) -> np.ndarray:
    ids = taxonomy.index(np.asarray(list(classes), dtype=object))
    hops = np.asarray(taxonomy.tree_distance(ids[:, None], ids[None, :]), dtype=np.float64)
    with np.errstate(divide="ignore"):
        A = np.where(hops > 0, 1.0 / np.maximum(hops, 1.0), 0.0)
    np.fill_diagonal(A, 0.0)
    return A


def tree_similarity_mse(
    tax_true: Taxonomy, tax_induced: Taxonomy, classes: Iterable[Any] | None = None
) -> float:
    """Tree similarity MSE of seed 004 (MF-Tree, Section 6.2.3 and the errata).

    With ``A_ij = 1 / numhops(c_i, c_j)`` between the classes in the true tree and ``A^_ij``
    the same in the induced tree::

        MSE(A, A^) = 1/n^2 sum_{i,j} (A_ij - A^_ij)^2

    The diagonal (``numhops = 0``) is set to 0 in both matrices, so it adds nothing but is
    counted in ``n^2``, as in the paper's worked example (Figure 3: swapping two leaves of a
    balanced 4-leaf tree gives 0.03125).

    Parameters
    ----------
    tax_true, tax_induced : Taxonomy
        The reference and the induced taxonomy; both must contain every class.
    classes : iterable of str, optional
        The classes compared; default the leaves of ``tax_true``.

    Returns
    -------
    float
    """
    if classes is None:
        cls = [str(tax_true.names[i]) for i in tax_true.leaves]
    else:
        cls = [str(c) for c in classes]
    if len(cls) == 0:
        return float("nan")
    A = _hop_similarity(tax_true, cls)
    B = _hop_similarity(tax_induced, cls)
    return float(((A - B) ** 2).sum() / len(cls) ** 2)


# ---------------------------------------------------------------------------- AU(PRC)
def _pr_points(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative (TP, FP) at every distinct score threshold, scores decreasing."""
    _, tp, fp = _pr_table(y, s)
    return tp, fp


def _pr_table(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct thresholds of ``s`` (decreasing) and the cumulative (TP, FP) at each.

    ``TP(t) = #{positives with s >= t}``, ``TP + FP = #{s >= t}``: two value sorts (the
    pairs', the positives') and one ``searchsorted``, no ``argsort`` of the pairs (ten times
    slower than a value sort on IPC's 17.6 million (example, node) pairs).
    """
    s_desc = np.sort(s)[::-1]
    last = np.flatnonzero(np.r_[s_desc[1:] != s_desc[:-1], True])
    thresholds = s_desc[last]
    pos = np.sort(s[np.asarray(y) > 0])
    tp = len(pos) - np.searchsorted(pos, thresholds, side="left")
    fp = (last + 1) - tp
    return thresholds, tp.astype(np.float64), fp.astype(np.float64)


def au_prc(
    Y_true: Any,
    scores: Any,
    taxonomy: Taxonomy | None = None,
    nodes: Iterable[Any] | None = None,
    exclude_root: bool = True,
    interpolation: str = "average_precision",
) -> float:
    """Pooled (micro-averaged) area under the precision-recall curve over nodes.

    Every (example, node) pair is one binary decision scored by ``scores[i, j]``; the PR curve
    is traced over all of them together (Vens et al., 2008, "AU(PRC)-bar"'s pooled companion,
    the measure of Clus-HMC and C-HMCNN), the root excluded since every example belongs to it.

    Parameters
    ----------
    Y_true : array-like or sparse matrix of shape (n_samples, n_nodes), or label sets
        0/1 membership of every node (ancestor-closed, as in the Clus HMC files), or, with a
        ``taxonomy``, any target :func:`label_indicator` accepts; these are closed under
        ancestors first.
    scores : array-like of shape (n_samples, n_nodes)
        Per-node scores (probabilities or margins; only their order matters).
    taxonomy : Taxonomy, optional
        Needed when ``Y_true`` holds labels rather than an indicator matrix.
    nodes : iterable of node names or ids, optional
        Columns to evaluate (C-HMCNN's ``to_eval``); default every node but the root.
    exclude_root : bool, default True
        Drop column 0 (the root) when ``nodes`` is not given.
    interpolation : {"average_precision", "clus"}, default "average_precision"
        ``"average_precision"``: the step-wise sum ``sum_k (R_k - R_{k-1}) P_k`` over distinct
        thresholds, exactly C-HMCNN's ``sklearn.metrics.average_precision_score(Y[:, to_eval],
        scores[:, to_eval], average="micro")`` (``main.py`` of EGiunchiglia/C-HMCNN).
        ``"clus"``: the curve of Clus (``clus.error.ROCAndPRCurve``) as in Vens et al. (2008):
        the first point extended to recall 0, Davis and Goadrich's non-linear interpolation
        between consecutive thresholds (one point per extra true positive, false positives
        growing linearly), and the trapezoid rule.

    Returns
    -------
    float
        ``nan`` when no pair is positive.
    """
    if taxonomy is not None and not (
        sp.issparse(Y_true) or (isinstance(Y_true, np.ndarray) and Y_true.ndim == 2)
    ):
        Y = label_indicator(Y_true, taxonomy, closure=True).toarray()
    else:
        Y = Y_true.toarray() if sp.issparse(Y_true) else np.asarray(Y_true)
    S = scores.toarray() if sp.issparse(scores) else np.asarray(scores, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != S.shape:
        raise DataError(f"Y_true of shape {Y.shape} and scores of shape {S.shape} must match")
    cols = _pr_columns(Y.shape[1], taxonomy, nodes, exclude_root)
    y = (Y[:, cols] > 0).ravel().astype(np.int64)
    s = S[:, cols].ravel()
    n_pos = y.sum()
    if n_pos == 0:
        return float("nan")
    tp, fp = _pr_points(y, s)
    precision = tp / (tp + fp)
    recall = tp / n_pos
    if interpolation == "average_precision":
        return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    if interpolation != "clus":
        raise ValueError(
            f"interpolation must be 'average_precision' or 'clus', not {interpolation!r}"
        )
    return _clus_area(tp, fp, precision, n_pos)


def _pr_columns(
    n_cols: int, taxonomy: Taxonomy | None, nodes: Iterable[Any] | None, exclude_root: bool
) -> np.ndarray:
    """The node columns :func:`au_prc` pools: ``nodes`` (names or ids) or all but the root."""
    if nodes is not None:
        if taxonomy is not None:
            return taxonomy.node_ids(np.asarray(list(nodes)))
        return np.asarray(list(nodes), dtype=np.int64)
    if exclude_root:
        return np.arange(1, n_cols)
    return np.arange(n_cols)


def _clus_area(tp: np.ndarray, fp: np.ndarray, precision: np.ndarray, n_pos: float) -> float:
    """Area under Clus's PR curve (Vens et al. 2008): Davis-Goadrich interpolation, trapezoids.

    Parameters
    ----------
    tp, fp : ndarray of shape (n_thresholds,)
        Cumulative true and false positives at each distinct threshold.
    precision : ndarray of shape (n_thresholds,)
    n_pos : float
        Number of positive pairs.
    """
    # Davis-Goadrich: between points k-1 and k add TP_{k-1} + 1 .. TP_k - 1.
    d_tp = np.diff(tp)
    n_mid = np.maximum(d_tp - 1, 0).astype(np.int64)
    seg = np.repeat(np.arange(1, len(tp)), n_mid)
    offs = np.arange(n_mid.sum()) - np.repeat(np.cumsum(n_mid) - n_mid, n_mid) + 1
    mid_tp = tp[seg - 1] + offs
    mid_fp = fp[seg - 1] + (fp[seg] - fp[seg - 1]) / d_tp[seg - 1] * offs
    # Merge the real points (position k) and interpolated ones (between k-1 and k) in order.
    key_real = np.arange(len(tp)) * 2.0
    key_mid = (seg - 1) * 2.0 + offs / (n_mid[seg - 1] + 1.0)
    all_tp = np.r_[tp, mid_tp]
    all_fp = np.r_[fp, mid_fp]
    order = np.argsort(np.r_[key_real, key_mid], kind="mergesort")
    ctp, cfp = all_tp[order], all_fp[order]
    prec = np.r_[precision[0], ctp / (ctp + cfp)]
    rec = np.r_[0.0, ctp / n_pos]
    return float(np.sum(0.5 * (prec[1:] + prec[:-1]) * np.diff(rec)))


# ---------------------------------------------------------------------------- summary
def evaluate(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> dict[str, float]:
    """The main measures in one dict (plain floats, JSON-ready).

    Single-label: ``accuracy`` (exact match), ``accuracy_ancestor`` and ``zero_one_error``
    (seed 000's ancestor rule, ``accuracy_ancestor = 1 - zero_one_error``),
    ``tree_induced_error`` (mean gamma),
    ``half_tree_induced_error`` (seed 000's tree loss), ``micro_f1``, ``macro_f1``,
    ``hierarchical_precision``, ``hierarchical_recall``, ``hierarchical_f1``.
    Multi-label: the same without the gamma measures (subset 0/1 on ``A+(Y)``). The arguments
    are those of :func:`error_per_level`.

    Returns
    -------
    dict of str to float
    """
    multi = is_multilabel(y_true) or is_multilabel(y_pred)
    out: dict[str, float] = {}
    if not multi and taxonomy.is_tree:
        # one LCA per pair feeds every measure (the vectorised fast path)
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        if len(t) == 0:
            nan = float("nan")
            keys = (
                "accuracy",
                "accuracy_ancestor",
                "zero_one_error",
                "tree_induced_error",
                "half_tree_induced_error",
            )
            return dict.fromkeys(keys + _F_KEYS, nan)
        depth = taxonomy.depth
        lca = taxonomy.lca(t, p)
        ok = lca == t
        acc = float(ok.mean())
        gam = float((depth[t] + depth[p] - 2 * depth[lca]).mean())
        n_nodes = taxonomy.n_nodes
        tp = np.bincount(t[ok], minlength=n_nodes)
        fn = np.bincount(t[~ok], minlength=n_nodes)
        fp = np.bincount(p[~ok], minlength=n_nodes)
        den = 2 * tp + fp + fn
        cls = den > 0
        h = _prf(float(depth[lca].sum()), float(depth[p].sum()), float(depth[t].sum()))
        out.update(
            accuracy=float(np.mean(t == p)),
            accuracy_ancestor=acc,
            zero_one_error=1.0 - acc,
            tree_induced_error=gam,
            half_tree_induced_error=gam / 2.0,
            micro_f1=float(2 * tp.sum() / den.sum()),
            macro_f1=float((2 * tp[cls] / den[cls]).mean()),
            hierarchical_precision=h.precision,
            hierarchical_recall=h.recall,
            hierarchical_f1=h.f1,
        )
        return out
    zero_one = zero_one_error(y_true, y_pred, taxonomy)
    # multi-label accuracy is 1 - zero_one_error: not computed twice
    out["accuracy"] = 1.0 - zero_one if multi else accuracy(y_true, y_pred, taxonomy)
    out["zero_one_error"] = zero_one
    out["accuracy_ancestor"] = 1.0 - zero_one
    if not multi:
        t, p = _pair_ids(y_true, y_pred, taxonomy)
        g = np.asarray(taxonomy.tree_distance(t, p), dtype=np.float64)
        mean_g = float(g.mean()) if len(g) else float("nan")
        out["tree_induced_error"] = mean_g
        out["half_tree_induced_error"] = mean_g / 2.0
        y_true, y_pred = t, p
    out["micro_f1"] = micro_f1(y_true, y_pred, taxonomy)
    out["macro_f1"] = macro_f1(y_true, y_pred, taxonomy)
    h = hierarchical_prf(y_true, y_pred, taxonomy)
    out["hierarchical_precision"] = h.precision
    out["hierarchical_recall"] = h.recall
    out["hierarchical_f1"] = h.f1
    return out


_F_KEYS = (
    "micro_f1",
    "macro_f1",
    "hierarchical_precision",
    "hierarchical_recall",
    "hierarchical_f1",
)


# ---------------------------------------------------------------------------- definitions
class MetricInfo(NamedTuple):
    """What a metric key means, for tooltips, column labels and the CLI.

    Attributes
    ----------
    name : str
        The key (in :func:`evaluate`'s dict, run tables and exports).
    display : str
        How a person sees it named.
    definition : str
        One or two sentences: what is counted, with the formula.
    seeds : str
        The seed papers that report it.
    greater_is_better : bool
    """

    name: str
    display: str
    definition: str
    seeds: str
    greater_is_better: bool


#: Every metric hierlab reports, keyed by name: one table for the app's tooltips and labels.
METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo(
            "accuracy",
            "accuracy",
            "Exact match: the share of test examples whose predicted node is exactly the true "
            "label, mean(ŷ = y). Multi-label: the ancestor-closed label sets are equal.",
            "003, 004",
            True,
        ),
        MetricInfo(
            "accuracy_ancestor",
            "accuracy (ancestor rule)",
            "Seed 000's score: a prediction counts as correct when the true label is the "
            "predicted node or one of its ancestors (an internal true label is right when the "
            "predicted leaf lies below it); 1 − 0/1 error. Equals accuracy on leaf labels.",
            "000",
            True,
        ),
        MetricInfo(
            "zero_one_error",
            "0/1 error (ancestor rule)",
            "Seed 000's 0/1 loss: the share of examples whose true label is neither the "
            "predicted node nor one of its ancestors; 1 − accuracy (ancestor rule).",
            "000",
            False,
        ),
        MetricInfo(
            "tree_induced_error",
            "tree-induced error γ",
            "Mean number of edges on the tree path between the true and the predicted node, "
            "mean γ(y, ŷ) (0 when exact).",
            "002, 003",
            False,
        ),
        MetricInfo(
            "half_tree_induced_error",
            "tree loss (½ γ)",
            "Half the mean tree distance, mean γ(y, ŷ) / 2: seed 000's tree-induced loss.",
            "000",
            False,
        ),
        MetricInfo(
            "micro_f1",
            "micro-F1",
            "F1 over the true-positive, false-positive and false-negative counts pooled over "
            "all classes, 2TP / (2TP + FP + FN); single-label, a prediction is a true positive "
            "by the ancestor rule, so micro-F1 equals accuracy (ancestor rule).",
            "000, 001",
            True,
        ),
        MetricInfo(
            "macro_f1",
            "macro-F1",
            "Mean over the classes present (true or predicted) of each class's F1, "
            "2TP_c / (2TP_c + FP_c + FN_c): rare classes weigh as much as frequent ones.",
            "001, 004",
            True,
        ),
        MetricInfo(
            "hierarchical_precision",
            "hierarchical precision",
            "Σ|A(ŷ) ∩ A(y)| / Σ|A(ŷ)| over the examples, A = the node and its ancestors "
            "without the root (Kiritchenko et al. 2006).",
            "—",
            True,
        ),
        MetricInfo(
            "hierarchical_recall",
            "hierarchical recall",
            "Σ|A(ŷ) ∩ A(y)| / Σ|A(y)| over the examples, A = the node and its ancestors "
            "without the root.",
            "—",
            True,
        ),
        MetricInfo(
            "hierarchical_f1",
            "hierarchical F1",
            "Harmonic mean of hierarchical precision and recall, 2hP·hR / (hP + hR).",
            "—",
            True,
        ),
    )
}


def metric_label(name: str) -> str:
    """The display name of metric ``name`` (the name itself, underscores as spaces, if unknown)."""
    info = METRICS.get(name)
    return info.display if info is not None else name.replace("_", " ")


def metric_help(name: str) -> str:
    """A tooltip for metric ``name``: its definition and the seeds that report it."""
    info = METRICS.get(name)
    if info is None:
        return ""
    seeds = f" Reported by seed {info.seeds}." if info.seeds not in ("", "—") else ""
    better = "higher" if info.greater_is_better else "lower"
    return f"{info.definition}{seeds} {better.capitalize()} is better."


# ---------------------------------------------------------------------------- confusion
def _confusion_ids(y: Any, taxonomy: Taxonomy) -> np.ndarray:
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
    t, p = _confusion_ids(y_true, taxonomy), _confusion_ids(y_pred, taxonomy)
    table = ancestor_at_depth(taxonomy)
    if not 1 <= level <= taxonomy.max_depth:
        raise ParameterError(f"level must be in 1..{taxonomy.max_depth}, got {level}")
    at, ap = table[level, t], table[level, p]
    mask = at >= 0
    at, ap = at[mask], ap[mask]
    level_ids = taxonomy.levels[level]
    nodes = [str(taxonomy.names[i]) for i in level_ids]
    stopped = "(stopped above)"
    cols = nodes + ([stopped] if (ap < 0).any() else [])
    # one bincount over (row, column) cells: pd.crosstab on categoricals takes seconds for
    # hundreds of classes (645 IPC subclasses: 5 to 11 s, 0.03 s so)
    pos = np.zeros(taxonomy.n_nodes, dtype=np.int64)
    pos[level_ids] = np.arange(len(nodes))
    col = np.where(ap >= 0, pos[np.maximum(ap, 0)], len(nodes))
    counts = np.bincount(pos[at] * len(cols) + col, minlength=len(nodes) * len(cols))
    return pd.DataFrame(
        counts.reshape(len(nodes), len(cols)).astype(np.int64),
        index=pd.CategoricalIndex(nodes, categories=nodes, name="true"),
        columns=pd.CategoricalIndex(cols, categories=cols, name="predicted"),
    )
