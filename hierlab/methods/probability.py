"""Node scores to calibrated node probabilities that respect the taxonomy.

Every estimator exposes the scores its prediction is read from (``_node_scores``, shape
(n_samples, n_nodes)) and how it reads them (``_routing``): ``"flat"``, the arg-max over a set of
candidate nodes (FLATMULT, TREELOSS, HSVM/NHSVM, HR, Hieron), or ``"recursive"``, a walk from the
root that picks the best-scoring child at every node (ORTHOGNL, TRANSFER, HIERMULT, top-down,
greedy Hieron, MF-Tree, CMTL). This module turns them into probabilities in four steps.

1. **Conditional margins** (single-label trees, :func:`conditional_margins`). For every non-root
   node ``c`` with parent ``p``, a number ``m_c(x)`` that is positive exactly when the method,
   having reached ``p``, goes on to ``c``: ``s_c - max(best sibling, stop option)`` for recursive
   routing; ``M_c - max(best sibling's M, s_p if p is a candidate)`` for flat routing, where
   ``M_v`` is the best candidate score in the subtree of ``v`` (:func:`subtree_max`). So the
   predicted path is the one whose margins are all positive, and the smallest margin on the path
   of ``c`` (:func:`path_min`) is positive exactly when ``c`` lies on the predicted path.
   Multi-label and DAG models use the subtree maxima ``M_v`` themselves (a marginal score).
2. **Per-node calibration** (:func:`fit_calibration`): Platt's sigmoid (:func:`platt_fit`, the
   objective of scikit-learn's ``_sigmoid_calibration``, Platt's smoothed targets) or isotonic
   regression
   (``sklearn.isotonic.IsotonicRegression``), one map per node. In a single-label tree the map of
   ``c`` estimates ``P(y in D+(c) | y in D+(p), x)`` and is fitted on the examples whose label lies
   below ``p``; otherwise it estimates the marginal ``P(v in A+(Y) | x)`` on all examples.
3. **Consistency** with the taxonomy. Single-label trees (:func:`tree_probabilities`): the
   conditional estimates ``q_c`` of the children of ``p`` are divided by ``Z_p = sum_c q_c`` when
   no training label stops at ``p`` (the children then share exactly the parent's probability),
   else by ``max(1, sum_c q_c)`` (they share at most it); then top-down
   ``P(root) = 1, P(c) = P(p) * q_c / Z_p``. Multi-label models and DAGs
   (:func:`marginal_probabilities`): ``P(root) = 1, P(v) = min(q_v, min over parents P(u))``.
   Either way ``0 <= P(child) <= P(parent) <= 1`` on every edge.
4. **Point masses** (:func:`point_masses`): in a single-label tree ``P(y = v) = P(v) - sum of
   P(children)``, which sum to one over the nodes (scikit-learn's ``predict_proba``).

Nothing here forms an (n_nodes, n_nodes) array: sibling maxima are segment reductions over the
children grouped by parent, and the calibration data are the (example, node) pairs a node's map
is fitted on, gathered in row blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "CALIBRATION_METHODS",
    "ROUTINGS",
    "apply_calibration",
    "calibration_pairs",
    "conditional_margins",
    "deepest_above",
    "fit_calibration",
    "leaf_probabilities",
    "marginal_probabilities",
    "path_min",
    "platt_fit",
    "point_masses",
    "row_blocks",
    "sibling_rival",
    "subtree_max",
    "tree_probabilities",
]

#: "sigmoid": Platt scaling per node; "isotonic": isotonic regression per node; "none": the
#: uncalibrated logistic sigmoid of the margin (the baseline the calibrated maps must beat)
CALIBRATION_METHODS = ("sigmoid", "isotonic", "none")
ROUTINGS = ("flat", "recursive")
#: scores are computed in blocks of rows of about this many (row, node) entries (64 MB of
#: float64 per array), so that a family's per-call cost (a copy of its weights) is paid a
#: few times, not once per few thousand rows, and memory stays bounded on large data
BLOCK_ENTRIES = 2**23
#: the calibration's gathers use smaller blocks (8 MB per array): the margins of a block make
#: several (rows x nodes) temporaries, and they are read only at a few (row, node) pairs
GATHER_ENTRIES = 2**20
#: a map is fitted on at most this many (score, target) pairs (a seeded sample beyond):
#: two Platt parameters or an isotonic curve need far fewer, and the cost stays linear
MAX_PAIRS_PER_MAP = 50_000
#: the pairs a map may draw its sample from: beyond, a seeded uniform sample of this many is
#: formed instead of every (example, node) pair (a margin can be non-finite, so the map's own
#: sample of :data:`MAX_PAIRS_PER_MAP` is taken among these), and
PAIRS_PER_GROUP = 4 * MAX_PAIRS_PER_MAP
#: the pairs formed in all: groups share it when they are many (a node per map on multi-label
#: data), so the pairs never grow as (examples x nodes)
PAIRS_IN_ALL = 2**23


# ------------------------------------------------------------------------------ structure
def _sibling_groups(tax: Taxonomy) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-root nodes of a tree grouped by parent.

    Returns
    -------
    order : ndarray of int, shape (n_nodes - 1,)
        Non-root node ids, grouped by parent (stable).
    starts : ndarray of int, shape (n_groups,)
        Start of each group in ``order``.
    group : ndarray of int, shape (n_nodes,)
        Group of every node (-1 for the root).
    """
    par = np.asarray(tax.parent[1:], dtype=np.int64)
    order = np.argsort(par, kind="stable") + 1
    key = np.asarray(tax.parent)[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, int)
    group = np.full(tax.n_nodes, -1, dtype=np.int64)
    group[order] = np.cumsum(np.r_[0, (key[1:] != key[:-1]).astype(np.int64)])[: len(order)]
    return order, starts, group


def _levels(tax: Taxonomy) -> list[np.ndarray]:
    """Non-root nodes by depth (a DAG's depth is its longest path: parents in lower levels)."""
    return list(tax.levels[1:])


def _edges(tax: Taxonomy) -> tuple[np.ndarray, np.ndarray]:
    """``(parents, children)`` of every edge, shape (n_edges,) each."""
    ch, par = tax.parent_edges
    return par, ch


# ------------------------------------------------------------------------------ margins
def sibling_rival(V: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """Best sibling value of every node of a tree: ``R[:, c] = max_{j in S(c)} V[:, j]``.

    Parameters
    ----------
    V : ndarray of shape (n_samples, n_nodes)
    tax : Taxonomy (a tree)

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
        ``-inf`` where a node has no sibling (and for the root).
    """
    n, m = V.shape
    R = np.full((n, m), -np.inf)
    order, starts, group = _sibling_groups(tax)
    if len(order) == 0:
        return R
    # node-major (rows are nodes): the segment reductions and gathers run over contiguous rows
    Vo = V.T[order]  # (n_nodes - 1, n), a copy
    top = np.maximum.reduceat(Vo, starts, axis=0)  # (n_groups, n)
    g = group[order]
    top_g = top[g]
    is_top = Vo == top_g
    n_top = np.add.reduceat(is_top, starts, axis=0, dtype=np.int32)
    Vo[is_top] = -np.inf  # Vo is a copy: reuse it for the second-best value
    second = np.maximum.reduceat(Vo, starts, axis=0)
    # a top node's rival: another top (a tie) or the second value; the others': the top
    rival_top = np.where(n_top > 1, top, second)[g]
    R[:, order] = np.where(is_top, rival_top, top_g).T
    return R


def subtree_max(S: np.ndarray, tax: Taxonomy, candidates: np.ndarray) -> np.ndarray:
    """``M[:, v] = max`` of ``S`` over the candidate nodes of ``D+(v)`` (``-inf`` if none).

    Parameters
    ----------
    S : ndarray of shape (n_samples, n_nodes)
    tax : Taxonomy (a tree or a DAG)
    candidates : ndarray of bool, shape (n_nodes,)

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
    """
    M = np.where(np.asarray(candidates, dtype=bool)[None, :], S, -np.inf)
    par, ch = _edges(tax)
    levels = _levels(tax)
    MT = M.T  # a view: rows are nodes
    for nodes in reversed(levels):
        sel = np.isin(ch, nodes)
        if sel.any():
            np.maximum.at(MT, par[sel], MT[ch[sel]])
    return M


def conditional_margins(
    S: np.ndarray,
    tax: Taxonomy,
    routing: str,
    candidates: np.ndarray | None = None,
    stop: np.ndarray | None = None,
) -> np.ndarray:
    """Margins of the decision taken at each node's parent, shape (n_samples, n_nodes).

    ``C[:, c] > 0`` exactly when the method, having reached ``parent(c)``, continues to ``c``
    (see the module docstring); ``C[:, 0]`` (the root) is ``+inf``.

    Parameters
    ----------
    S : ndarray of shape (n_samples, n_nodes)
        The method's node scores.
    tax : Taxonomy (a tree)
    routing : {"flat", "recursive"}
    candidates : ndarray of bool, shape (n_nodes,), optional
        Flat routing: the nodes that can be predicted (default: the leaves).
    stop : ndarray of shape (n_nodes,), optional
        Recursive routing: the score of "stop at this node" (``-inf``: no such option).

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
        ``+inf`` for an only child that always follows, ``-inf`` for a subtree no prediction
        can reach.
    """
    if routing not in ROUTINGS:
        raise ValueError(f"routing must be one of {ROUTINGS}, got {routing!r}")
    par = np.asarray(tax.parent, dtype=np.int64)
    par0 = np.maximum(par, 0)
    if routing == "recursive":
        R = sibling_rival(S, tax)
        if stop is not None:
            R = np.maximum(R, np.asarray(stop, dtype=np.float64)[par0][None, :])
        V = S
    else:
        cand = tax.is_leaf if candidates is None else np.asarray(candidates, dtype=bool)
        V = subtree_max(S, tax, cand)
        R = sibling_rival(V, tax)
        own = np.where(cand[par0][None, :], S[:, par0], -np.inf)  # the parent as a candidate
        R = np.maximum(R, own)
    with np.errstate(invalid="ignore"):
        C = V - R
    C[np.isneginf(V)] = -np.inf  # nothing reachable below: never taken
    C[:, 0] = np.inf
    return C


def path_min(C: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """``D[:, v] = min`` of ``C`` over ``A+(v)`` without the root (``+inf`` for the root)."""
    D = np.array(C, dtype=np.float64, copy=True)
    D[:, 0] = np.inf
    par = np.asarray(tax.parent, dtype=np.int64)
    for nodes in _levels(tax):
        D[:, nodes] = np.minimum(D[:, par[nodes]], C[:, nodes])
    return D


# ------------------------------------------------------------------------------ calibration
def calibration_pairs(
    Y_closure: sp.csr_matrix,
    tax: Taxonomy,
    conditional: bool,
    nodes: np.ndarray | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (example, node) pairs each calibration map is fitted on, and their 0/1 targets.

    A map's pairs are a grid: its examples times its nodes. When a grid holds more than
    :data:`PAIRS_PER_GROUP` pairs (or than its share of :data:`PAIRS_IN_ALL`), a seeded uniform
    sample of that many is formed instead, so memory never grows as (examples x nodes); below,
    every pair is kept.

    Parameters
    ----------
    Y_closure : csr_matrix of shape (n_samples, n_nodes)
        0/1, the labels closed under ancestors.
    tax : Taxonomy
    conditional : bool
        True (single-label trees): a map per internal node ``p``, fitted on its children on the
        examples whose label lies below ``p``. False: a map per non-root node on every example,
        or one map for ``nodes`` on every example when they are given.
    nodes : ndarray of int, optional
        With ``conditional=False``: the nodes of the one map (an induced tree's leaves).
    seed : int, default 0

    Returns
    -------
    rows, nodes : ndarray of int, shape (n_pairs,)
        Sorted by node, then row.
    target : ndarray of int8, shape (n_pairs,)
        1 when the example's label lies in ``D+(node)``.
    """
    n, m = Y_closure.shape
    Yc = sp.csr_matrix(Y_closure, dtype=np.float64)
    everyone = np.arange(n, dtype=np.int64)
    groups: list[tuple[np.ndarray, np.ndarray]]
    if conditional:
        Ycsc = Yc.tocsc()
        Ycsc.sort_indices()
        par = np.asarray(tax.parent[1:], dtype=np.int64)
        kids = np.arange(1, m, dtype=np.int64)[np.argsort(par, kind="stable")]
        starts = np.searchsorted(np.sort(par), np.arange(m + 1))
        groups = [
            (Ycsc.indices[Ycsc.indptr[p] : Ycsc.indptr[p + 1]].astype(np.int64),
             kids[starts[p] : starts[p + 1]])
            for p in range(m) if starts[p + 1] > starts[p]
        ]  # fmt: skip
    elif nodes is None:
        groups = [(everyone, np.array([v], dtype=np.int64)) for v in range(1, m)]
    else:
        groups = [(everyone, np.sort(np.asarray(nodes, dtype=np.int64)))]
    cap = max(MAX_PAIRS_PER_MAP, min(PAIRS_PER_GROUP, PAIRS_IN_ALL // max(len(groups), 1)))
    rng = np.random.default_rng(seed)
    all_rows, all_nodes = [], []
    for rows_g, nodes_g in groups:
        total = len(rows_g) * len(nodes_g)
        if total <= cap:
            idx = np.arange(total, dtype=np.int64)
        else:
            idx = np.sort(rng.choice(total, cap, replace=False))
        all_nodes.append(nodes_g[idx // max(len(rows_g), 1)])
        all_rows.append(rows_g[idx % max(len(rows_g), 1)])
    rows_out = np.concatenate(all_rows) if all_rows else np.zeros(0, dtype=np.int64)
    nodes_out = np.concatenate(all_nodes) if all_nodes else np.zeros(0, dtype=np.int64)
    order = np.lexsort((rows_out, nodes_out))
    rows_out, nodes_out = rows_out[order], nodes_out[order]
    target = np.asarray(Yc[rows_out, nodes_out]).ravel().astype(np.int8)
    return rows_out, nodes_out, target


def row_blocks(
    n: int, n_nodes: int, entries: int = BLOCK_ENTRIES, min_rows: int = 1024
) -> list[np.ndarray]:
    """Consecutive row indices in blocks of about ``entries / n_nodes`` rows (at least
    ``min_rows``)."""
    size = max(min_rows, entries // max(n_nodes, 1))
    return [np.arange(b0, min(n, b0 + size)) for b0 in range(0, n, size)]


def gather_pairs(
    score_rows: Callable[[np.ndarray], np.ndarray],
    rows: np.ndarray,
    nodes: np.ndarray,
    n: int,
    n_nodes: int,
    entries: int | None = None,
) -> np.ndarray:
    """``F[rows[k], nodes[k]]`` where ``F = score_rows(block)`` is computed block by block.

    Parameters
    ----------
    score_rows : callable
        ``score_rows(idx)`` returns the margins of the rows ``idx``, shape (len(idx), n_nodes).
    rows, nodes : ndarray of int, shape (n_pairs,)
    n : int
        Number of examples.
    n_nodes : int
    entries : int, optional
        Scores per block (rows per block: ``entries / n_nodes``, at least 64); default
        :data:`GATHER_ENTRIES`.

    Returns
    -------
    ndarray of shape (n_pairs,)
    """
    out = np.empty(len(rows))
    for idx in row_blocks(n, n_nodes, GATHER_ENTRIES if entries is None else entries, 64):
        b0, b1 = idx[0], idx[-1] + 1
        sel = np.flatnonzero((rows >= b0) & (rows < b1))
        if len(sel):
            F = score_rows(idx)
            out[sel] = F[rows[sel] - b0, nodes[sel]]
    return out


def fit_calibration(
    values: np.ndarray,
    groups: np.ndarray,
    target: np.ndarray,
    n_groups: int,
    method: str = "sigmoid",
    progress: Callable[[int, int], Any] | None = None,
) -> dict[str, Any]:
    """One calibration map per group of (score, 0/1 target) pairs.

    In a single-label tree a group is an internal node: the pairs are its children's margins on
    the examples that reach it, and one map serves all the children, so that the calibrated
    estimates of siblings keep the order of their margins (the child the method takes has the
    largest estimate; for a flat taxonomy the arg-max of ``predict_proba`` is ``predict``).
    Otherwise a group is a node (its marginal scores on every example).

    Parameters
    ----------
    values : ndarray of shape (n_pairs,)
        Margins (or marginal scores). Non-finite values are decisions the structure fixes (an
        only child, a subtree no prediction reaches): they are left out of the fit and map to
        1 (``+inf``) or 0 (``-inf``).
    groups : ndarray of int, shape (n_pairs,)
        Group of each pair, sorted.
    target : ndarray of shape (n_pairs,)
    n_groups : int
        Groups with more than ``MAX_PAIRS_PER_MAP`` finite pairs are fitted on a seeded
        sample of that size.
    method : {"sigmoid", "isotonic", "none"}
        Platt scaling (:func:`platt_fit`: the objective of scikit-learn's
        ``_sigmoid_calibration``; a decreasing fit falls back to the constant one), isotonic
        regression
        (``IsotonicRegression``, increasing), or the plain logistic ``expit(m)``.
    progress : callable, optional
        ``progress(done, n_pairs)`` before each group with pairs, ``done`` the pairs of the
        groups before it (it may raise to end the fit).

    Returns
    -------
    dict
        Plain arrays (saved with the model): ``method``; ``a``, ``b`` of shape (n_groups,)
        (``q = expit(-(a m + b))``, Platt's convention); for isotonic ``iso_ptr`` of shape
        (n_groups + 1,), ``iso_x`` and ``iso_y`` (every group's knots, concatenated).
    """
    if method not in CALIBRATION_METHODS:
        raise ParameterError(
            f"calibration method must be one of {CALIBRATION_METHODS}, got {method!r}"
        )
    from sklearn.isotonic import IsotonicRegression

    a = np.full(n_groups, -1.0)  # "none": q = expit(m)
    b = np.zeros(n_groups)
    knots_x: list[np.ndarray] = [np.zeros(0)] * n_groups
    knots_y: list[np.ndarray] = [np.zeros(0)] * n_groups
    starts = np.searchsorted(groups, np.arange(n_groups + 1))
    for g in range(n_groups) if method != "none" else ():
        f = values[starts[g] : starts[g + 1]]
        ok = np.isfinite(f)
        f, t = f[ok], np.asarray(target[starts[g] : starts[g + 1]], dtype=np.float64)[ok]
        if len(f) > MAX_PAIRS_PER_MAP:
            keep = np.random.default_rng(g).choice(len(f), MAX_PAIRS_PER_MAP, replace=False)
            f, t = f[keep], t[keep]
        if progress is not None and starts[g + 1] > starts[g]:
            progress(int(starts[g]), len(values))
        if len(f) == 0:
            a[g], b[g] = 0.0, 0.0  # nothing to learn from: q = 1/2
        elif method == "isotonic":
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(f, t)
            knots_x[g] = np.asarray(iso.X_thresholds_, dtype=np.float64)
            knots_y[g] = np.asarray(iso.y_thresholds_, dtype=np.float64)
        else:
            a[g], b[g] = platt_fit(f, t)
    out: dict[str, Any] = {"method": method, "a": a, "b": b}
    if method == "isotonic":
        lens = np.array([len(k) for k in knots_x], dtype=np.int64)
        out["iso_ptr"] = np.r_[0, np.cumsum(lens)].astype(np.int64)
        out["iso_x"] = np.concatenate(knots_x) if lens.sum() else np.zeros(0)
        out["iso_y"] = np.concatenate(knots_y) if lens.sum() else np.zeros(0)
    return out


def platt_fit(f: np.ndarray, t: np.ndarray, max_iter: int = 100) -> tuple[float, float]:
    """Platt's sigmoid ``P(1 | f) = 1 / (1 + exp(a f + b))`` fitted by Newton's method.

    The objective is Platt's (2000) regularised likelihood with his smoothed targets
    ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, minimised by the Newton iteration with
    backtracking of Lin, Lin & Weng (2007); scikit-learn's ``_sigmoid_calibration`` minimises
    the same objective by L-BFGS (the tests compare the two), several times slower on the
    few-parameter problems of every node. A fit that would make the probability fall as the
    score grows (a model worse than chance on these pairs) is replaced by the constant fit
    (``a = 0``).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Scores.
    t : ndarray of shape (n,)
        0/1 targets.
    max_iter : int, default 100

    Returns
    -------
    a, b : float
    """
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(t) > 0
    n_pos = float(y.sum())
    n_neg = len(y) - n_pos
    T = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    scale = max(float(np.abs(f).max(initial=0.0)), 1.0)
    F = f / scale

    def loss(A: float, B: float) -> float:
        z = F * A + B
        return float(np.sum(T * z + np.logaddexp(0.0, -z)))

    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    val = loss(A, B)
    for _ in range(max_iter):
        p = expit(-(F * A + B))  # P(1)
        d1 = T - p
        g1, g2 = float(F @ d1), float(d1.sum())
        if max(abs(g1), abs(g2)) < 1e-7 * max(len(F), 1):
            break
        d2 = p * (1.0 - p)
        h11, h22, h21 = float(F * F @ d2) + 1e-12, float(d2.sum()) + 1e-12, float(F @ d2)
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            new = loss(A + step * dA, B + step * dB)
            if new < val + 1e-4 * step * gd:
                A, B, val = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        else:
            break
    if A > 0:  # decreasing in the score: keep the constant fit
        mean = float(T.mean())
        return 0.0, float(-np.log(mean / (1.0 - mean)))
    return A / scale, B


def apply_calibration(cal: dict[str, Any], F: np.ndarray, group_of: np.ndarray) -> np.ndarray:
    """Calibrated per-node estimates ``q`` in [0, 1], shape (n_samples, n_nodes).

    Parameters
    ----------
    cal : dict
        From :func:`fit_calibration`.
    F : ndarray of shape (n_samples, n_nodes)
        Margins or marginal scores, computed as those the maps were fitted on.
    group_of : ndarray of int, shape (n_nodes,)
        The map of each node (its parent in a single-label tree, itself otherwise).

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
        Column 0 (the root) is 1.
    """
    g = np.maximum(np.asarray(group_of, dtype=np.int64), 0)
    finite = np.isfinite(F)
    G = np.where(finite, F, 0.0)
    with np.errstate(over="ignore"):
        Q = expit(-(np.asarray(cal["a"])[g][None, :] * G + np.asarray(cal["b"])[g][None, :]))
    if cal["method"] == "isotonic":
        ptr = np.asarray(cal["iso_ptr"])
        fitted = np.diff(ptr)[g] > 0
        for v in np.flatnonzero(fitted):
            lo, hi = ptr[g[v]], ptr[g[v] + 1]
            Q[:, v] = np.interp(G[:, v], cal["iso_x"][lo:hi], cal["iso_y"][lo:hi])
    Q = np.where(finite, Q, (F > 0).astype(np.float64))
    Q[:, 0] = 1.0
    return np.clip(Q, 0.0, 1.0)


# ------------------------------------------------------------------------------ consistency
def tree_probabilities(Q: np.ndarray, tax: Taxonomy, closed: np.ndarray) -> np.ndarray:
    """``P(v in A+(y) | x)`` for a single-label tree from conditional estimates ``Q``.

    ``P(root) = 1``; ``P(c) = P(p) * Q[:, c] / Z_p`` with ``Z_p = sum_{c in C(p)} Q[:, c]`` when
    ``closed[p]`` (no label stops at ``p``: the children share all of its probability; evenly
    when every estimate is 0) and ``Z_p = max(1, sum)`` otherwise (they share at most it).

    Parameters
    ----------
    Q : ndarray of shape (n_samples, n_nodes)
    tax : Taxonomy (a tree)
    closed : ndarray of bool, shape (n_nodes,)

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
    """
    n, m = Q.shape
    P = np.ones((n, m))
    order, starts, group = _sibling_groups(tax)
    if len(order) == 0:
        return P
    par = np.asarray(tax.parent, dtype=np.int64)
    sums = np.add.reduceat(Q[:, order], starts, axis=1)  # (n, n_groups)
    g = group[order]
    Zs = sums[:, g]
    shut = np.asarray(closed, dtype=bool)[par[order]]
    Z = np.where(shut[None, :], Zs, np.maximum(Zs, 1.0))
    n_kids = np.diff(np.r_[starts, len(order)])[g]
    empty = np.where(shut, 1.0 / n_kids, 0.0)[None, :]  # all estimates 0: closed splits evenly
    R = np.where(Z > 0, Q[:, order] / np.where(Z > 0, Z, 1.0), empty)
    ratio = np.empty((n, m))
    ratio[:, order] = np.minimum(R, 1.0)
    for nodes in _levels(tax):
        P[:, nodes] = P[:, par[nodes]] * ratio[:, nodes]
    return P


def leaf_probabilities(Q: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """Leaves' estimates normalised to sum to one, summed up the tree: ``P(v) = sum`` over the
    leaves of ``D+(v)`` of ``Q[:, leaf] / sum_leaves Q``.

    Parameters
    ----------
    Q : ndarray of shape (n_samples, n_nodes)
        Only the leaves' columns are read.
    tax : Taxonomy (a tree)

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
    """
    leaves = tax.leaves
    QL = Q[:, leaves]
    Z = QL.sum(axis=1, keepdims=True)
    PL = np.where(Z > 0, QL / np.where(Z > 0, Z, 1.0), 1.0 / len(leaves))
    P = np.asarray(sp.csr_matrix(tax.ancestor_matrix[leaves]).T @ PL.T).T
    P[:, 0] = 1.0
    return np.clip(P, 0.0, 1.0)


def marginal_probabilities(Q: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """Marginals with ``P(root) = 1`` and ``P(v) = min(Q[:, v], min over parents P(u))``.

    Parameters
    ----------
    Q : ndarray of shape (n_samples, n_nodes)
    tax : Taxonomy (a tree or a DAG)

    Returns
    -------
    ndarray of shape (n_samples, n_nodes)
    """
    P = np.array(Q, dtype=np.float64, copy=True)
    P[:, 0] = 1.0
    par, ch = _edges(tax)
    for nodes in _levels(tax):
        for v in nodes:
            ps = par[ch == v]
            P[:, v] = np.minimum(P[:, v], P[:, ps].min(axis=1))
    return P


def point_masses(P: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """``P(y = v) = P(v) - sum_{c in C(v)} P(c)`` (clipped at 0) for a single-label tree."""
    order, _, _ = _sibling_groups(tax)
    par = np.asarray(tax.parent, dtype=np.int64)
    kids = np.zeros_like(P)
    np.add.at(kids.T, par[order], P[:, order].T)
    return np.clip(P - kids, 0.0, 1.0)


def deepest_above(P: np.ndarray, ids: np.ndarray, tax: Taxonomy, threshold: float) -> np.ndarray:
    """Per row, the deepest node of ``A+(ids[i])`` whose probability is at least ``threshold``.

    Parameters
    ----------
    P : ndarray of shape (n_samples, n_nodes)
        Node probabilities, non-increasing along every path (so the kept nodes form a path
        from the root).
    ids : ndarray of int, shape (n_samples,)
        Predicted nodes.
    tax : Taxonomy
    threshold : float

    Returns
    -------
    ndarray of int, shape (n_samples,)
        On a DAG the kept ancestors need not form one path: the deepest wins, then the more
        probable, then the smaller node id; the root when none is kept.
    """
    out = np.asarray(ids, dtype=np.int64).copy()
    rows = np.arange(len(out))
    if tax.is_tree:
        par = np.asarray(tax.parent, dtype=np.int64)
        for _ in range(tax.max_depth + 1):
            low = (P[rows, out] < threshold) & (out > 0)
            if not low.any():
                break
            out[low] = par[out[low]]
        return out
    # one pass over the (row, ancestor) pairs of every row at once, not a loop over rows
    A = tax.ancestor_matrix[out].tocsr()
    row = np.repeat(rows, np.diff(A.indptr))
    node = A.indices.astype(np.int64)
    p = P[row, node]
    keep = p >= threshold
    row, node, p = row[keep], node[keep], p[keep]
    order = np.lexsort((node, -p, -np.asarray(tax.depth)[node], row))
    first = order[np.r_[True, row[order][1:] != row[order][:-1]]] if len(order) else order
    out[:] = 0
    out[row[first]] = node[first]
    return out
