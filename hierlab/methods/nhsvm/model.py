"""Hierarchical structured SVMs: HSVM, NHSVM (normalised) and the Shared SVM model (seed 003).

Notation of seed 003 (Sections 3-7). ``W`` of shape (M, d) holds one weight vector per node; a
label ``y`` is a set of nodes closed under ancestors (``A+(l)`` for a leaf ``l`` in single-label
problems). The root is common to every label, so it never changes a decision: as in Figure 1 of
the paper it is not a node of the model (its class attribute and its weight ``alpha`` are 0).

* Class attributes (eq. 1, 5): ``c_n = 1`` (HSVM) or ``c_n = sqrt(alpha_n)`` (NHSVM), and the
  score of a label is ``s(y) = sum_{n in y} c_n W_n . x``.
* Structural errors: Hamming ``|y Δ y'|`` (eq. 2), the normalised error of eq. (9)
  ``sqrt(sum_{n in y Δ y'} alpha_n)`` and 0/1, rows of the shared loss table
  (:mod:`hierlab.core.losses`); and the decomposable multi-label losses of Section 7.1
  (:data:`MULTILABEL_LOSSES`, node weights of this family).
* Normalisation weights ``alpha`` (eq. 4): eq. (6) ``min sum alpha^rho`` (a QP for rho = 2,
  solved through its smooth dual), eq. (7) ``max min alpha`` with directional constraints (an LP,
  :func:`scipy.optimize.linprog`), eq. (6) with eq. (7)'s directional constraints
  ``alpha_n >= alpha_p`` (the "rho = 2 with directional constraints" variant of Section 8.1;
  the same dual with one more non-negative multiplier per edge), and the DAG relaxation
  ``1 <= sum_{A+(l)} alpha <= T`` of eq. (8).
* Loss-augmented inference (eq. 18-19): enumeration of the leaves (single label), dynamic
  programming in O(M) on trees, the LP relaxation of eq. (19) on DAGs with
  :func:`scipy.optimize.milp` when the LP optimum is fractional.
* :class:`HierarchicalHinge`: the primal objective ``lambda ||W||_F^2 + mean_i loss_i`` of eq.
  (3), (12) or (13) with its mini-batch subgradient, on dense or CSR data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp, minimize
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from hierlab.core.exceptions import ConvergenceError, ParameterError
from hierlab.core.jit import jit_enabled
from hierlab.core.losses import LOSSES, DeltaRows
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.nhsvm.sgd_kernels import PathHinge, path_hinge_losses

__all__ = [
    "ALPHA_RULES",
    "FIXED_LOSSES",
    "MULTILABEL_LOSSES",
    "NORMALIZED_LOSS",
    "HierarchicalHinge",
    "class_attribute_matrix",
    "closure_cut",
    "closure_lp",
    "dag_max_label",
    "label_space_max",
    "leaf_path_matrix",
    "multilabel_weights",
    "node_max_marginals",
    "normalization_alpha",
    "tree_max_label",
]

#: the rules for the normalisation weights: eq. (6), eq. (7), and eq. (6) with the directional
#: constraints of eq. (7) (Section 8.1: "rho = 2 is tested with directional constraints")
ALPHA_RULES = ("eq6", "eq7", "eq6-directional")

#: the fixed structural errors ``Δ(y, y')`` of eq. (2) / eq. (14): rows of the shared loss
#: table :data:`hierlab.core.losses.LOSSES` (a missing row fails at import)
FIXED_LOSSES = tuple(LOSSES[name].name for name in ("hamming", "sqrt_hamming", "zero_one"))

#: the normalised error ``Δ~`` of eq. (9), also a row of the shared table
NORMALIZED_LOSS = LOSSES["normalized"].name

# ---------------------------------------------------------------------------------------------
# normalisation weights alpha (eq. 4, 6, 7, 8)


def leaf_path_matrix(taxonomy: Taxonomy) -> sp.csr_matrix:
    """Path incidence of the leaves over the non-root nodes.

    Parameters
    ----------
    taxonomy : Taxonomy

    Returns
    -------
    csr_matrix of shape (n_leaves, n_nodes - 1)
        ``P[k, n - 1] = 1`` iff node ``n`` is in ``A+(leaves[k])`` (the root, id 0, is dropped).
    """
    A = taxonomy.ancestor_matrix[taxonomy.leaves].tocsc()[:, 1:]
    return sp.csr_matrix(A, dtype=np.float64)


def _directional_matrix(taxonomy: Taxonomy) -> sp.csr_matrix:
    """The directional constraints ``alpha_c - alpha_p >= 0`` of eq. (7) as ``E alpha >= 0``.

    Returns
    -------
    csr_matrix of shape (n_edges, n_nodes - 1)
        One row per edge ``p -> c`` with a non-root parent ``p``: ``+1`` at ``c``, ``-1`` at
        ``p`` (columns are node ids minus one, as in :func:`leaf_path_matrix`).
    """
    rows, cols, vals = [], [], []
    r = 0
    for c in range(1, taxonomy.n_nodes):
        for p in taxonomy.parents(c):
            if p == 0:
                continue
            rows += [r, r]
            cols += [c - 1, int(p) - 1]
            vals += [1.0, -1.0]
            r += 1
    return sp.csr_matrix((vals, (rows, cols)), shape=(r, taxonomy.n_nodes - 1))


def _alpha_eq6_tree(taxonomy: Taxonomy, rho: float) -> np.ndarray:
    """Eq. (6) on a tree, exactly, in O(n_nodes): ``min sum_n alpha_n^rho`` s.t. every
    root-to-leaf path sums to 1 (eq. 4), ``alpha >= 0``.

    Below a node ``n`` that must still supply a budget ``b`` to every leaf under it, the
    optimal cost is ``kappa_n b^rho`` (the problem is homogeneous): ``kappa = 1`` at a leaf
    (``alpha = b``), and at an internal node ``min_a a^rho + K_n (b - a)^rho`` with
    ``K_n = sum_{c in children(n)} kappa_c`` is reached at ``a = r b / (1 + r)``,
    ``r = K_n^(1 / (rho - 1))``, giving ``kappa_n = (r / (1 + r))^(rho - 1)``. One pass up the
    levels forms ``kappa``, one pass down hands out the budgets (1 below the root); ``a`` lies
    inside ``[0, b]``, so the non-negativity bounds are inactive and, the objective being
    strictly convex, this is the unique optimum. No (leaves x nodes) matrix is formed (the
    dual solve with its least-norm polish, :func:`_alpha_eq6`, held one densely: 33 MB at
    2,000 leaves, 800 MB at 10^4).

    Returns
    -------
    ndarray of shape (n_nodes,)
        ``alpha``, the root's 0.
    """
    parent, leaf, levels = taxonomy.parent, taxonomy.is_leaf, taxonomy.levels
    expo = 1.0 / (rho - 1.0)
    kappa = np.ones(taxonomy.n_nodes)
    K = np.zeros(taxonomy.n_nodes)
    for nodes in reversed(levels[1:]):  # children before parents
        inner = nodes[~leaf[nodes]]
        r = K[inner] ** expo
        kappa[inner] = (r / (1.0 + r)) ** (rho - 1.0)
        np.add.at(K, parent[nodes], kappa[nodes])
    share = np.where(leaf, 1.0, 0.0)  # alpha_n / b_n
    inner = ~leaf
    r = K[inner] ** expo
    share[inner] = r / (1.0 + r)
    alpha = np.zeros(taxonomy.n_nodes)
    left = np.zeros(taxonomy.n_nodes)  # budget passed on to the children
    left[taxonomy.root] = 1.0
    for nodes in levels[1:]:  # parents before children
        budget = left[parent[nodes]]
        alpha[nodes] = share[nodes] * budget
        left[nodes] = budget - alpha[nodes]
    return alpha


def _alpha_eq6(
    P: sp.csr_matrix, rho: float, T: float, E: sp.csr_matrix | None = None
) -> np.ndarray:
    """Solve eq. (6) (with the eq. (8) relaxation when ``T > 1``) through its smooth dual.

    Primal: ``min sum_n alpha_n^rho`` s.t. ``1 <= P alpha <= T``, ``alpha >= 0`` and, when
    ``E`` is given, the directional constraints ``E alpha >= 0`` (``alpha_c >= alpha_p``). For
    dual variables ``mu = mu_lo - mu_hi``, ``nu >= 0`` and ``v = P^T mu + E^T nu`` the minimiser
    over ``alpha >= 0`` is ``alpha(v) = (max(v, 0) / rho)^(1 / (rho - 1))`` and the dual
    ``g = 1.mu_lo - T 1.mu_hi - (rho - 1) sum alpha^rho`` is concave and C1 with gradient
    ``(1 - P alpha, P alpha - T, -E alpha)``; it is maximised with L-BFGS-B (bounds
    ``nu >= 0``, and ``mu_lo, mu_hi >= 0`` when ``T > 1``).
    """
    L = P.shape[0]
    k = 0 if E is None else E.shape[0]
    expo = 1.0 / (rho - 1.0)
    PT = sp.csr_matrix(P.T)
    ET = None if E is None else sp.csr_matrix(E.T)
    equality = T <= 1.0
    n_mu = L if equality else 2 * L

    def alpha_of(z: np.ndarray) -> np.ndarray:
        mu = z[:L] if equality else z[:L] - z[L : 2 * L]
        v = PT @ mu
        if ET is not None:
            v = v + ET @ z[n_mu:]
        return (np.maximum(v, 0.0) / rho) ** expo

    def f(z: np.ndarray) -> tuple[float, np.ndarray]:
        a = alpha_of(z)
        Pa = P @ a
        if equality:
            g = z[:L].sum() - (rho - 1.0) * np.sum(a**rho)
            grad = [1.0 - Pa]
        else:
            g = z[:L].sum() - T * z[L : 2 * L].sum() - (rho - 1.0) * np.sum(a**rho)
            grad = [1.0 - Pa, Pa - T]
        if E is not None:
            grad.append(-(E @ a))
        return -g, -np.concatenate(grad)

    bounds: list[tuple[float | None, float | None]]
    if equality:
        mu0 = np.full(L, rho * (1.0 / max(1, P.sum(axis=1).max())) ** (rho - 1.0))
        bounds = [(None, None)] * L
    else:
        mu0 = np.concatenate([np.full(L, 1.0), np.zeros(L)])
        bounds = [(0.0, None)] * (2 * L)
    z0 = np.concatenate([mu0, np.zeros(k)])
    res = minimize(
        f,
        z0,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds + [(0.0, None)] * k,
        options={"maxiter": 20000, "gtol": 1e-12, "ftol": 0},
    )
    alpha = alpha_of(res.x)
    if equality and rho == 2.0:
        if E is None:
            alpha = _polish_min_norm(P, alpha)
        else:
            alpha = _polish_directional(P, E, alpha)
    return alpha


def _polish_min_norm(P: sp.csr_matrix, alpha: np.ndarray) -> np.ndarray:
    """For rho = 2: re-solve the equality-constrained least-norm problem on the support.

    On the support ``S`` found by the dual, the KKT solution is ``alpha_S = P_S^T (P_S P_S^T)^+ 1``;
    it is kept when it stays non-negative (it then satisfies the constraints to round-off).
    """
    support = alpha > 1e-9 * max(1.0, alpha.max())
    PS = P[:, support].toarray()
    sol, *_ = np.linalg.lstsq(PS, np.ones(P.shape[0]), rcond=None)
    if np.all(sol >= -1e-12):
        out = np.zeros_like(alpha)
        out[support] = np.maximum(sol, 0.0)
        if np.max(np.abs(P @ out - 1.0)) <= np.max(np.abs(P @ alpha - 1.0)) + 1e-12:
            return out
    return alpha


def _polish_directional(P: sp.csr_matrix, E: sp.csr_matrix, alpha: np.ndarray) -> np.ndarray:
    """For rho = 2 with directional constraints: the exact solution on the dual's active set.

    Nodes tied by an active directional constraint (``|alpha_c - alpha_p|`` at round-off) share
    one value; nodes at 0 are dropped. With group sizes ``s_g`` and the grouped path matrix
    ``Q`` the problem on the active set is ``min sum_g s_g a_g^2`` s.t. ``Q a = 1``, whose
    solution is ``a = S^-1 Q^T (Q S^-1 Q^T)^+ 1``. It is kept when it is feasible (``a >= 0``,
    the directional constraints hold, path sums 1, all to 1e-10) and costs at most a relative
    1e-6 more than the dual's ``alpha`` (which satisfies the constraints only to ~1e-8).
    """
    m = len(alpha)
    scale = max(1.0, float(alpha.max()))
    zero = alpha <= 1e-9 * scale
    # union-find over the tied edges between non-zero nodes
    root = np.arange(m)

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    Ec = sp.coo_matrix(E)
    plus = Ec.col[Ec.data > 0]
    minus = Ec.col[Ec.data < 0]
    rows_p = Ec.row[Ec.data > 0]
    rows_m = Ec.row[Ec.data < 0]
    child = np.empty(E.shape[0], dtype=np.int64)
    par = np.empty(E.shape[0], dtype=np.int64)
    child[rows_p] = plus
    par[rows_m] = minus
    for c, p in zip(child.tolist(), par.tolist()):
        if not zero[c] and not zero[p] and abs(alpha[c] - alpha[p]) <= 1e-7 * scale:
            rc, rp = find(c), find(p)
            if rc != rp:
                root[rc] = rp
    groups = np.array([find(i) for i in range(m)])
    keep = ~zero
    uniq, gid = np.unique(groups[keep], return_inverse=True)
    G = sp.csr_matrix((np.ones(int(keep.sum())), (np.flatnonzero(keep), gid)), shape=(m, len(uniq)))
    Q = np.asarray((P @ G).todense())
    sizes = np.asarray(G.sum(axis=0)).ravel()
    QS = Q / sizes[None, :]
    lam, *_ = np.linalg.lstsq(QS @ Q.T, np.ones(P.shape[0]), rcond=None)
    a = (Q.T @ lam) / sizes
    out = np.asarray(G @ a).ravel()
    feasible = (
        np.all(out >= -1e-12)
        and np.all(E @ out >= -1e-10)
        and np.max(np.abs(P @ out - 1.0)) <= 1e-10
    )
    # the dual's alpha is optimal to the solver's tolerance (its constraints hold to ~1e-8):
    # the exact point on its active set may cost that much more, not more
    if feasible and float(out @ out) <= float(alpha @ alpha) * (1.0 + 1e-6):
        return np.maximum(out, 0.0)
    return alpha


def _alpha_eq7(P: sp.csr_matrix, taxonomy: Taxonomy, T: float) -> np.ndarray:
    """Solve eq. (7): ``max t`` s.t. ``t <= alpha_n``, ``alpha_n >= alpha_p`` (directional),
    ``P alpha = 1`` (or ``1 <= P alpha <= T``, eq. 8), ``alpha >= 0``; an LP for linprog."""
    L, m = P.shape
    # variables: alpha_1..alpha_m (node ids 1..M-1), then t
    rows, cols, vals = [], [], []
    r = 0
    for n in range(m):  # t - alpha_n <= 0
        rows += [r, r]
        cols += [m, n]
        vals += [1.0, -1.0]
        r += 1
    for c in range(1, taxonomy.n_nodes):  # alpha_p - alpha_c <= 0 for non-root parents p
        for p in taxonomy.parents(c):
            if p == 0:
                continue
            rows += [r, r]
            cols += [p - 1, c - 1]
            vals += [1.0, -1.0]
            r += 1
    A_dir = sp.csr_matrix((vals, (rows, cols)), shape=(r, m + 1))
    P1 = sp.hstack([P, sp.csr_matrix((L, 1))]).tocsr()
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    bounds = [(0.0, None)] * m + [(None, None)]
    if T <= 1.0:
        res = linprog(
            cost,
            A_ub=A_dir,
            b_ub=np.zeros(r),
            A_eq=P1,
            b_eq=np.ones(L),
            bounds=bounds,
            method="highs",
        )
    else:
        A_ub = sp.vstack([A_dir, P1, -P1]).tocsr()
        b_ub = np.concatenate([np.zeros(r), np.full(L, T), -np.ones(L)])
        res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs")
    if res.status != 0:
        raise ConvergenceError(f"eq. (7) LP for alpha failed: {res.message}")
    return np.maximum(res.x[:m], 0.0)


def normalization_alpha(
    taxonomy: Taxonomy, rule: str = "eq6", rho: float = 2.0, T: float = 1.5
) -> np.ndarray:
    """Normalisation weights ``alpha`` of seed 003, one per node (the root gets 0).

    Parameters
    ----------
    taxonomy : Taxonomy
        A tree or a DAG.
    rule : {"eq6", "eq7", "eq6-directional"}
        ``"eq6"``: ``min sum alpha_n^rho`` (rho > 1; rho = 2 is the paper's QP). ``"eq7"``: the
        rho = 1 rule ``max min alpha_n`` with the directional constraints ``alpha_n >= alpha_p``.
        ``"eq6-directional"``: eq. (6) with eq. (7)'s directional constraints ``alpha_n >=
        alpha_p`` for every edge below the root (Section 8.1's "rho = 2 with directional
        constraints").
    rho : float, default 2.0
        Exponent of eq. (6) and of ``"eq6-directional"``; must be > 1 (ignored by eq. 7).
    T : float, default 1.5
        DAG relaxation of eq. (8): the path sums may lie in ``[1, T]``. Used for DAG
        taxonomies only; on trees every path sums to exactly 1 (eq. 4).

    Returns
    -------
    alpha : ndarray of shape (n_nodes,)
        ``alpha[0] = 0`` (root); for a tree ``sum_{n in A+(l)} alpha_n = 1`` for every leaf.
    """
    if rule not in ALPHA_RULES:
        raise ParameterError(f"alpha rule must be one of {ALPHA_RULES}, got {rule!r}")
    if taxonomy.n_nodes < 2:
        raise ParameterError("the taxonomy needs at least one node below the root")
    Tval = 1.0 if taxonomy.is_tree else float(T)
    if Tval < 1.0:
        raise ParameterError(f"T must be >= 1 (eq. 8), got {T}")
    if rule == "eq6" and taxonomy.is_tree:
        if not rho > 1.0:
            raise ParameterError(
                f"rho must be > 1 for eq. (6) (use rule='eq7' for rho=1), got {rho}"
            )
        return _alpha_eq6_tree(taxonomy, float(rho))
    P = leaf_path_matrix(taxonomy)
    if rule in ("eq6", "eq6-directional"):
        if not rho > 1.0:
            raise ParameterError(
                f"rho must be > 1 for eq. (6) (use rule='eq7' for rho=1), got {rho}"
            )
        E = _directional_matrix(taxonomy) if rule == "eq6-directional" else None
        a = _alpha_eq6(P, float(rho), Tval, E)
    else:
        a = _alpha_eq7(P, taxonomy, Tval)
    return np.concatenate([[0.0], a])


# ---------------------------------------------------------------------------------------------
# class attributes and structural errors


def class_attribute_matrix(taxonomy: Taxonomy, c: np.ndarray) -> sp.csr_matrix:
    """Class attributes of the single-node labels ``y = A+(m)`` for every node ``m``.

    Parameters
    ----------
    taxonomy : Taxonomy
    c : ndarray of shape (n_nodes,)
        Per-node attribute: 1 (HSVM, eq. 1) or ``sqrt(alpha_n)`` (NHSVM, eq. 5); ``c[0]`` is
        ignored (the root is not a node of the model).

    Returns
    -------
    csr_matrix of shape (n_nodes, n_nodes)
        Row ``m`` is ``∧(A+(m))`` (resp. ``∧~``): ``C[m, n] = c_n`` for ``n in A+(m)``, n != root.
    """
    cc = np.asarray(c, dtype=np.float64).copy()
    cc[0] = 0.0
    C = sp.csr_matrix(taxonomy.ancestor_matrix, dtype=np.float64) @ sp.diags(cc)
    C = sp.csr_matrix(C)
    C.eliminate_zeros()
    return C


#: the decomposable multi-label errors of Section 7.1, ``Δ(y, y') = sum_{n in y Δ y'} w_n``:
#: ``Δ_L`` (Hamming distance on the leaves), Hamming on every node, and the alpha-weighted
#: Hamming of NHSVM (:func:`multilabel_weights` gives their node weights ``w``)
MULTILABEL_LOSSES = ("leaves", "nodes", "alpha")


def multilabel_weights(kind: str, taxonomy: Taxonomy, alpha: Any = None) -> np.ndarray:
    """Node weights ``w`` of the multi-label error ``kind`` (the root's is 0).

    Parameters
    ----------
    kind : {"leaves", "nodes", "alpha"}
        One of :data:`MULTILABEL_LOSSES`.
    taxonomy : Taxonomy
    alpha : ndarray of shape (n_nodes,), optional
        Needed for ``"alpha"``.

    Returns
    -------
    ndarray of shape (n_nodes,)
    """
    if kind == "leaves":
        w = np.zeros(taxonomy.n_nodes)
        w[taxonomy.leaves] = 1.0
    elif kind == "nodes":
        w = np.ones(taxonomy.n_nodes)
    elif kind == "alpha":
        if alpha is None:
            raise ParameterError("loss='alpha' needs alpha")
        w = np.array(alpha, dtype=np.float64)
    else:
        raise ParameterError(f"multi-label loss must be 'leaves', 'nodes' or 'alpha', got {kind!r}")
    w[0] = 0.0
    return w


# ---------------------------------------------------------------------------------------------
# inference over label sets (Section 7.1)


@dataclass(frozen=True)
class _TreeLevels:
    """Per depth level (deepest first): nodes sorted by parent, their parents, group starts."""

    levels: tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]


def _tree_levels(taxonomy: Taxonomy) -> _TreeLevels:
    cached = getattr(taxonomy, "_nhsvm_levels", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    out = []
    for d in range(taxonomy.max_depth, 0, -1):
        nodes = taxonomy.levels[d]
        par = taxonomy.parent[nodes]
        order = np.argsort(par, kind="stable")
        nodes, par = nodes[order], par[order]
        uniq, starts = np.unique(par, return_index=True)
        out.append((nodes, par, uniq, starts))
    res = _TreeLevels(tuple(out))
    try:
        object.__setattr__(taxonomy, "_nhsvm_levels", res)
    except AttributeError:  # pragma: no cover - slots
        pass
    return res


class _SpanningTree:
    """The tree of first parents of a DAG (same node ids), with what the DP needs."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        parent = np.asarray(taxonomy.parent)
        depth = np.zeros(len(parent), dtype=np.int64)
        for i in range(1, len(parent)):  # parent[i] < i
            depth[i] = depth[parent[i]] + 1
        self.parent = parent
        self.max_depth = int(depth.max())
        order = np.argsort(depth, kind="stable")
        counts = np.bincount(depth, minlength=self.max_depth + 1)
        self.levels = np.split(order, np.cumsum(counts)[:-1])


def tree_max_label(
    R: np.ndarray, taxonomy: Taxonomy, leaf_terminated: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exact ``max_y sum_{n in y} R[:, n]`` over label sets of a tree, by dynamic programming.

    The label space is the ancestor-closed sets containing the root; with ``leaf_terminated``
    (the space ``Y_m`` of seed 003, Section 3) every internal node of ``y`` also has a child in
    ``y`` (so ``y = A+(L)`` for a non-empty set of leaves ``L``). One bottom-up pass over the
    depth levels computes ``f(n)``, the best value of the subtree of ``n`` given ``n in y``:
    ``f(n) = R_n + sum_c max(f(c), 0)`` (+ ``min(max_c f(c), 0)`` when a child is required);
    a top-down pass recovers the argmax. O(M) per example, vectorised over the rows of ``R``.

    Parameters
    ----------
    R : ndarray of shape (b, n_nodes)
        Node rewards (``R[:, 0]``, the root's, is always collected).
    taxonomy : Taxonomy
        A tree.
    leaf_terminated : bool, default True

    Returns
    -------
    Z : ndarray of bool, shape (b, n_nodes)
        The maximising label sets (root included).
    value : ndarray of shape (b,)
        Their values ``sum(R * Z, axis=1)``.
    F : ndarray of shape (b, n_nodes)
        The subtree values ``f(n)``.
    forced : ndarray of shape (b, n_nodes)
        ``min(max_c f(c), 0)`` for internal nodes when ``leaf_terminated`` (else 0): the price
        of the compulsory child.
    """
    R = np.asarray(R, dtype=np.float64)
    b, M = R.shape
    F = R.copy()
    forced = np.zeros_like(F)
    best_child = np.zeros((b, M), dtype=np.int64)
    for nodes, _par, uniq, starts in _tree_levels(taxonomy).levels:
        fn = F[:, nodes]
        pos = np.maximum(fn, 0.0)
        F[:, uniq] += np.add.reduceat(pos, starts, axis=1)
        if leaf_terminated:
            mx = np.maximum.reduceat(fn, starts, axis=1)
            # argmax child of each group: the first column reaching the group maximum
            group = np.repeat(np.arange(len(uniq)), np.diff(np.append(starts, len(nodes))))
            col = np.arange(len(nodes))
            cand = np.where(fn >= mx[:, group], col[None, :], len(nodes))
            am = nodes[np.minimum.reduceat(cand, starts, axis=1)]
            fr = np.minimum(mx, 0.0)
            forced[:, uniq] = fr
            F[:, uniq] += fr
            best_child[:, uniq] = am
    Z = np.zeros((b, M), dtype=bool)
    Z[:, 0] = True
    for nodes, par, _uniq, _starts in reversed(_tree_levels(taxonomy).levels):
        zp = Z[:, par]
        take = zp & (F[:, nodes] > 0.0)
        if leaf_terminated:
            need = zp & (forced[:, par] < 0.0)
            # the compulsory child: the parent's best child when none of its children is positive
            take |= need & (best_child[:, par] == nodes[None, :])
            # ties at exactly 0 (forced == 0 but no positive child): take the best child too
            zero_tie = zp & (forced[:, par] == 0.0)
            if zero_tie.any():
                has_pos = np.zeros((b, M), dtype=bool)
                np.logical_or.at(has_pos.T, par, (F[:, nodes] > 0.0).T)
                take |= zero_tie & ~has_pos[:, par] & (best_child[:, par] == nodes[None, :])
        Z[:, nodes] = take
    value = np.einsum("ij,ij->i", R, Z)
    return Z, value, F, forced


def _dag_lp_blocks(taxonomy: Taxonomy, leaf_terminated: bool) -> tuple[sp.csr_matrix, np.ndarray]:
    """Inequalities ``A z <= b`` of eq. (19) for one example (root fixed by bounds)."""
    M = taxonomy.n_nodes
    rows, cols, vals = [], [], []
    r = 0
    for c in range(1, M):  # z_c - z_p <= 0
        for p in taxonomy.parents(c):
            rows += [r, r]
            cols += [c, int(p)]
            vals += [1.0, -1.0]
            r += 1
    if leaf_terminated:
        for n in taxonomy.internal_nodes:  # z_n - sum_c z_c <= 0
            kids = taxonomy.children(n)
            rows += [r] * (len(kids) + 1)
            cols += [int(n), *map(int, kids)]
            vals += [1.0] + [-1.0] * len(kids)
            r += 1
        lv = taxonomy.leaves  # - sum_l z_l <= -1
        rows += [r] * len(lv)
        cols += list(map(int, lv))
        vals += [-1.0] * len(lv)
        r += 1
    A = sp.csr_matrix((vals, (rows, cols)), shape=(r, M))
    bvec = np.zeros(r)
    if leaf_terminated:
        bvec[-1] = -1.0
    return A, bvec


def dag_max_label(
    R: np.ndarray,
    taxonomy: Taxonomy,
    leaf_terminated: bool = True,
    batch: int = 32,
    return_stats: bool = False,
    relaxed: bool = False,
) -> Any:
    """``max_y sum_{n in y} R[:, n]`` on a DAG: LP relaxation of eq. (19), then the IP if needed.

    The LP ``max R.z`` over ``z in [0, 1]^M`` with ``z_c <= z_p`` for every edge, ``z_root = 1``
    and (``leaf_terminated``) ``z_n <= sum_{c in C(n)} z_c`` and ``sum_l z_l >= 1`` is solved for
    ``batch`` examples at a time as one block-diagonal HiGHS problem. Rows whose LP optimum is
    fractional are re-solved as binary programs with :func:`scipy.optimize.milp`. Without
    ``leaf_terminated`` the feasible sets are the ancestor-closed ones: a maximum-weight closure,
    solved exactly as a minimum cut (:func:`closure_cut`) instead of the LP, whose constraint
    matrix is totally unimodular (``python -m hierlab.benchmarks.nhsvm`` times the two).

    Parameters
    ----------
    R : ndarray of shape (b, n_nodes)
    taxonomy : Taxonomy
    leaf_terminated : bool, default True
    batch : int, default 32
        Examples per LP.
    return_stats : bool, default False
        Also return ``{"lp": rows solved by the LP, "ip": rows that needed the IP,
        "fractional": rows kept fractional (``relaxed``)}``.
    relaxed : bool, default False
        Return the LP optimum as it is, fractional or not (no IP): what seed 003 trains on
        (Section 7.1, "we relax the integer program into a linear program for training"); its
        value is an upper bound of the IP's.

    Returns
    -------
    Z : ndarray of bool, shape (b, n_nodes); float in ``[0, 1]`` when ``relaxed``
    value : ndarray of shape (b,)
    """
    R = np.asarray(R, dtype=np.float64)
    b, M = R.shape
    if not leaf_terminated:
        Z = closure_cut(R, taxonomy, batch)
        value = np.einsum("ij,ij->i", R, Z)
        if return_stats:
            return Z, value, {"lp": b, "ip": 0}
        return Z, value
    A1, b1 = _dag_lp_blocks(taxonomy, leaf_terminated)
    lo1 = np.zeros(M)
    lo1[0] = 1.0
    Z = np.zeros((b, M), dtype=np.float64 if relaxed else bool)
    n_ip = n_frac = 0
    for s in range(0, b, batch):
        e = min(b, s + batch)
        z = _lp_block(R[s:e], A1, b1, lo1)
        frac = np.any(np.minimum(np.abs(z), np.abs(1.0 - z)) > 1e-6, axis=1)
        if relaxed:  # integral rows rounded (a vertex: 0/1 to round-off), fractional kept
            Z[s:e] = np.where(frac[:, None], np.clip(z, 0.0, 1.0), np.rint(z))
            n_frac += int(frac.sum())
            continue
        Z[s:e] = z > 0.5
        for i in np.flatnonzero(frac):
            n_ip += 1
            ip = milp(
                -R[s + i],
                constraints=LinearConstraint(A1, -np.inf, b1),
                integrality=np.ones(M),
                bounds=Bounds(lo1, np.ones(M)),
            )
            if ip.status != 0:
                raise ConvergenceError(f"integer program of eq. (19) failed: {ip.message}")
            Z[s + i] = ip.x > 0.5
    value = np.einsum("ij,ij->i", R, Z)
    if return_stats:
        return Z, value, {"lp": b - n_ip, "ip": n_ip, "fractional": n_frac}
    return Z, value


def _lp_block(R: np.ndarray, A1: sp.csr_matrix, b1: np.ndarray, lo1: np.ndarray) -> np.ndarray:
    """The LP relaxation of eq. (19) for the rows of ``R`` as one block-diagonal HiGHS problem.

    Returns
    -------
    ndarray of shape (b, n_nodes)
        The LP optimum of every row (fractional or not).
    """
    k, M = R.shape
    A = sp.kron(sp.identity(k, format="csr"), A1, format="csr")
    res = linprog(
        -R.ravel(),
        A_ub=A,
        b_ub=np.tile(b1, k),
        bounds=np.column_stack([np.tile(lo1, k), np.ones(k * M)]),
        method="highs",
    )
    if res.status != 0:
        raise ConvergenceError(f"LP relaxation of eq. (19) failed: {res.message}")
    return np.asarray(res.x).reshape(k, M)


def closure_cut(R: np.ndarray, taxonomy: Taxonomy, batch: int = 32) -> np.ndarray:
    """Maximum-weight ancestor-closed sets on a DAG by a minimum s-t cut (Picard, 1976).

    ``max_z R.z`` over sets that contain the root and, with every node, all its parents: each
    node ``n`` gets an edge from the source of capacity ``max(R_n, 0)`` and one to the sink of
    capacity ``max(-R_n, 0)``, each edge ``child -> parent`` an infinite capacity; the source
    side of a minimum cut is an optimal closed set. ``batch`` examples share one graph (disjoint
    copies) and one call of :func:`scipy.sparse.csgraph.maximum_flow` (Dinic).

    The flow solver takes integer capacities: every example's rewards are scaled so that the
    batch's positive total is ``2^30``, so the set is optimal for rewards rounded to
    ``sum(R_+) 2^-30`` (relative to the batch); :func:`closure_lp` is the exact reference the
    tests compare with.

    Parameters
    ----------
    R : ndarray of shape (b, n_nodes)
    taxonomy : Taxonomy
    batch : int, default 32

    Returns
    -------
    Z : ndarray of bool, shape (b, n_nodes)
    """
    b, M = R.shape
    ec, ep = taxonomy.parent_edges
    Z = np.zeros((b, M), dtype=bool)
    for s in range(0, b, batch):
        Rb = np.array(R[s : s + batch], dtype=np.float64)
        k = Rb.shape[0]
        Rb[:, 0] = 0.0  # the root is always in; its reward does not change the argmax
        pos = np.maximum(Rb, 0.0)
        total = float(pos.sum())
        if total <= 0.0:
            Z[s : s + k, 0] = True
            continue
        scale = 2.0**30 / total
        cp = np.rint(pos * scale).astype(np.int64).ravel()
        cn = np.rint(np.maximum(-Rb, 0.0) * scale).astype(np.int64).ravel()
        inf = int(cp.sum()) + 1
        src_node, sink = k * M, k * M + 1
        off = (np.arange(k) * M)[:, None]
        nodes = np.arange(k * M)
        tail = np.r_[np.full(k * M, src_node), nodes, (off + ec).ravel()]
        head = np.r_[nodes, np.full(k * M, sink), (off + ep).ravel()]
        cap = np.r_[cp, cn, np.full(k * len(ec), inf, dtype=np.int64)]
        keep = cap > 0
        G = sp.csr_matrix(
            (cap[keep].astype(np.int32), (tail[keep], head[keep])), shape=(k * M + 2,) * 2
        )
        flow = maximum_flow(G, src_node, sink, method="dinic").flow
        resid = sp.csr_matrix(G - flow)  # flow is skew-symmetric: reverse edges appear
        resid.data = (resid.data > 0).astype(np.int8)
        resid.eliminate_zeros()
        reach = breadth_first_order(resid, src_node, directed=True, return_predecessors=False)
        side = np.zeros(k * M + 2, dtype=bool)
        side[reach] = True
        zb = side[: k * M].reshape(k, M)
        zb[:, 0] = True
        Z[s : s + k] = zb
    return Z


def closure_lp(R: np.ndarray, taxonomy: Taxonomy, batch: int) -> np.ndarray:
    """Ancestor-closed space on a DAG: the LP on the nodes that can matter, batched.

    Only ancestors-or-self of a node with a positive reward can be in an optimal set (dropping
    a node together with its descendants keeps the set closed and loses no value), so each row's
    LP is restricted to those nodes; the closure constraints ``z_c <= z_p`` form a totally
    unimodular system, so the LP optimum is integral (a vertex; checked, with the IP as backup).
    """
    b, M = R.shape
    A = sp.csr_matrix(taxonomy.ancestor_matrix, dtype=np.float64)
    ec, ep = taxonomy.parent_edges
    Z = np.zeros((b, M), dtype=bool)
    Z[:, 0] = True
    for s in range(0, b, batch):
        e = min(b, s + batch)
        Rb = R[s:e]
        k = e - s
        act = np.asarray((sp.csr_matrix((Rb > 0).astype(np.float64)) @ A).todense()) > 0
        act[:, 0] = True
        nvar = int(act.sum())
        vid = np.full((k, M), -1, dtype=np.int64)
        vid[act] = np.arange(nvar)
        keep = act[:, ec]  # (k, E): edges whose child is active (its parents are too)
        ri, ei = np.nonzero(keep)
        m = len(ri)
        rows = np.repeat(np.arange(m), 2)
        cols = np.column_stack([vid[ri, ec[ei]], vid[ri, ep[ei]]]).ravel()
        vals = np.tile([1.0, -1.0], m)
        Aub = sp.csr_matrix((vals, (rows, cols)), shape=(m, nvar))
        lo = np.zeros(nvar)
        lo[vid[:, 0]] = 1.0
        res = linprog(
            -Rb[act],
            A_ub=Aub if m else None,
            b_ub=np.zeros(m) if m else None,
            bounds=np.column_stack([lo, np.ones(nvar)]),
            method="highs",
        )
        if res.status != 0:
            raise ConvergenceError(f"LP of the closure problem failed: {res.message}")
        if np.any(np.minimum(np.abs(res.x), np.abs(1.0 - res.x)) > 1e-6):
            # not a vertex (cannot happen with a vertex solver): solve the rows as IPs
            A1, b1 = _dag_lp_blocks(taxonomy, False)
            lo1 = np.zeros(M)
            lo1[0] = 1.0
            for i in range(k):
                ip = milp(
                    -Rb[i],
                    constraints=LinearConstraint(A1, -np.inf, b1),
                    integrality=np.ones(M),
                    bounds=Bounds(lo1, np.ones(M)),
                )
                Z[s + i] = ip.x > 0.5
            continue
        zb = np.zeros((k, M), dtype=bool)
        zb[act] = res.x > 0.5
        Z[s:e] = zb
    return Z


def label_space_max(
    R: np.ndarray, taxonomy: Taxonomy, leaf_terminated: bool = True, relaxed: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch: :func:`tree_max_label` on trees, :func:`dag_max_label` on DAGs.

    ``relaxed`` (DAGs with leaf-terminated sets): the LP optimum of eq. (19), possibly
    fractional; trees (exact dynamic programming) and ancestor-closed sets (a totally
    unimodular LP) are integral either way.

    Returns
    -------
    Z : ndarray of bool (float when ``relaxed`` on a DAG), shape (b, n_nodes)
    value : ndarray of shape (b,)
    """
    if taxonomy.is_tree:
        Z, v, _, _ = tree_max_label(R, taxonomy, leaf_terminated)
        return Z, v
    out: tuple[np.ndarray, np.ndarray] = dag_max_label(
        R, taxonomy, leaf_terminated, relaxed=relaxed
    )
    return out


def node_max_marginals(
    R: np.ndarray, taxonomy: Taxonomy, leaf_terminated: bool = True
) -> np.ndarray:
    """Per-node scores from the label-set model, for ranking metrics (AU(PRC)).

    On a tree, the exact max-marginal margin: with ``best_with(n)`` the best value of a
    feasible label containing ``n`` and ``best`` the overall optimum, the score is
    ``best_with(n) - best`` (``<= 0``, 0 on the predicted set); for the ancestor-closed space
    (``leaf_terminated=False``) predicted nodes instead get ``best - best_without(n) > 0`` (the
    smallest subtree value ``f`` on the path to ``n``), so that the score is
    ``best_with(n) - best_without(n)`` for every node. On a DAG (no
    exact O(M) recursion) the same scores are computed on the spanning tree formed by each
    node's first parent (a relaxation of the DAG's closure constraints).

    Parameters
    ----------
    R : ndarray of shape (b, n_nodes)
    taxonomy : Taxonomy
    leaf_terminated : bool, default True

    Returns
    -------
    ndarray of shape (b, n_nodes)
    """
    R = np.asarray(R, dtype=np.float64)
    if not taxonomy.is_tree:
        taxonomy = _SpanningTree(taxonomy)  # type: ignore[assignment]
    Z, best, F, forced = tree_max_label(R, taxonomy, leaf_terminated)
    B = np.empty_like(F)
    B[:, 0] = F[:, 0]
    for nodes, par, _u, _s in reversed(_tree_levels(taxonomy).levels):
        B[:, nodes] = B[:, par] - forced[:, par] - np.maximum(F[:, nodes], 0.0) + F[:, nodes]
    S = B - best[:, None]
    if not leaf_terminated:
        # dropping a predicted n removes its subtree (value f(n)); an ancestor whose value then
        # turns negative is dropped too, so the loss is the smallest f on the path
        run = np.full_like(F, np.inf)
        for nodes, par, _u, _s in reversed(_tree_levels(taxonomy).levels):
            run[:, nodes] = np.minimum(
                np.where(par[None, :] == 0, np.inf, run[:, par]), F[:, nodes]
            )
        S = np.where(Z, run, S)
    S[:, 0] = 0.0
    return S


# ---------------------------------------------------------------------------------------------
# the primal objective


class HierarchicalHinge:
    """Primal objective of the hierarchical structured SVM family (seed 003, eq. 3, 12, 13).

    ``J(W) = lam * ||W||_F^2 + (1 / N) * sum_i loss_i(W)`` with, for a label ``y_i``,

    * ``"margin"`` (eq. 3 / 10 / 12): ``loss_i = max_y c.(∧(y) - ∧(y_i)) ⊙ (W x_i) + Δ(y, y_i)``;
    * ``"eq13"`` (single label only): ``loss_i = max(0, max_{y != y_i}
      (s(y) - s(y_i)) / Δ~(y, y_i) + 1)`` with ``Δ~ = ||∧~(y) - ∧~(y_i)||_2`` (eq. 9).

    The loss is clipped at 0 (``y_i`` is always a candidate, also when it is not in the label
    space, e.g. an internal node).

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    Y : ndarray of int, shape (n_samples,), or csr_matrix of shape (n_samples, n_nodes)
        Node ids (single label) or a 0/1 indicator (multi-label; closed here under ancestors).
    taxonomy : Taxonomy
    c : ndarray of shape (n_nodes,)
        Class attributes per node (1 for HSVM, ``sqrt(alpha)`` for NHSVM); ``c[0]`` is ignored.
    lam : float
        Regularisation ``lambda`` (the paper sums the losses; here they are averaged, so
        ``lam = lambda_paper / N``).
    loss : str
        Single label: a row of the shared loss table (:data:`FIXED_LOSSES`, i.e.
        ``"hamming"``, ``"sqrt_hamming"``, ``"zero_one"``, or ``"normalized"``). Multi-label: a
        name in :data:`MULTILABEL_LOSSES`: ``"leaves"`` (``Δ_L`` of Section 7.1: Hamming distance
        on the leaves), ``"nodes"`` (Hamming on all nodes) or ``"alpha"`` (``sum_{n in y Δ y_i}
        alpha_n``).
    alpha : ndarray of shape (n_nodes,), optional
        For the normalised losses.
    variant : {"margin", "eq13"}
    leaf_terminated : bool
        Multi-label label space: ``Y_m`` (every internal node of ``y`` has a child in ``y``)
        or every ancestor-closed set.
    inference : {"ip", "lp"}
        Multi-label loss-augmented inference on a DAG (eq. 19): ``"ip"`` is exact (the LP, and
        the IP for rows whose LP optimum is fractional); ``"lp"`` keeps the LP optimum, so the
        loss is the LP relaxation's, an upper bound of the IP loss and still convex in ``W``
        (a maximum of linear functions over a polytope), as seed 003 trains. Prediction is
        always exact.
    """

    #: the normalised ``Δ~`` follows ``alpha = c**2`` in :meth:`set_attributes` (Shared SVM
    #: with ``loss="normalized"``); False: ``Δ`` is fixed at construction
    loss_follows_alpha: bool = False

    def __init__(
        self,
        X: Any,
        Y: Any,
        taxonomy: Taxonomy,
        c: np.ndarray,
        lam: float,
        loss: str = "hamming",
        alpha: Any = None,
        variant: str = "margin",
        leaf_terminated: bool = True,
        inference: str = "ip",
    ) -> None:
        if inference not in ("ip", "lp"):
            raise ParameterError(f"inference must be 'ip' or 'lp', got {inference!r}")
        self.X = X
        self.taxonomy = taxonomy
        self.inference = inference
        self.lam = float(lam)
        self.variant = variant
        self.leaf_terminated = leaf_terminated
        self.multilabel = sp.issparse(Y)
        # rows for the SGD step-size calibration: fewer where inference is an LP (DAG)
        self.calibration_rows = 256 if (self.multilabel and not taxonomy.is_tree) else 1000
        self.loss = loss
        self.alpha = None if alpha is None else np.asarray(alpha, dtype=np.float64)
        self.set_attributes(c)
        if variant not in ("margin", "eq13"):
            raise ParameterError(f"variant must be 'margin' or 'eq13', got {variant!r}")
        if self.multilabel:
            self._init_multilabel(Y)
        else:
            self._init_single_label(Y)

    @property
    def XT(self) -> sp.csr_matrix | None:
        """``X^T`` in CSR for sparse training rows (None for dense ones), formed once: the
        Shared SVM builds a BCFW problem and a dual bound on the same rows every round."""
        if not hasattr(self, "_XT"):  # ``X`` is set once, in ``__init__``
            self._XT: sp.csr_matrix | None = (
                sp.csr_matrix(self.X.T) if sp.issparse(self.X) else None
            )
        return self._XT

    def release_data(self) -> None:
        """Drop the training rows (and their transpose) once the model is fitted."""
        self.X = None
        self._XT = None

    def _init_multilabel(self, Y: Any) -> None:
        """Ancestor-closed label sets and the node weights of the decomposable error."""
        if self.variant == "eq13":
            raise ParameterError(
                "the variant of eq. (13) does not decompose over nodes: its loss-augmented "
                "inference is not efficient for multi-label data (seed 003, Section 5.1); "
                "use variant='margin'"
            )
        tax = self.taxonomy
        Yc = sp.csr_matrix(Y, dtype=np.float64) @ sp.csr_matrix(tax.ancestor_matrix)
        Yc = sp.csr_matrix(Yc)
        Yc.data[:] = 1.0
        self.Yc = Yc
        self.w = multilabel_weights(self.loss, tax, self.alpha)
        self.max_loss = float(self.w.sum())
        self.grad_scale = float(2.0 * np.sum(self.c**2))

    def _init_single_label(self, Y: Any) -> None:
        """Node labels, candidate leaves and the structural errors ``Δ`` (formed a row per
        example when needed, :class:`~hierlab.core.losses.DeltaRows`: a (labels x leaves)
        table would be 800 MB at 10^4 leaves)."""
        tax = self.taxonomy
        self.y = np.asarray(Y, dtype=np.int64)
        self.candidates = tax.leaves
        self.label_nodes, self.label_index = np.unique(self.y, return_inverse=True)
        self._set_delta()
        if self.variant == "eq13":
            self.grad_scale = 1.0
        else:
            sq = np.asarray(self.C_cand.multiply(self.C_cand).sum(axis=1)).ravel()
            self.grad_scale = float(2.0 * sq.max()) if sq.size else 1.0

    def _set_delta(self) -> None:
        """The single-label ``Δ`` rows of ``loss`` (with ``alpha`` for the normalised one),
        their largest value ``max_loss`` (Pegasos' ball) and the kernels' table."""
        tax = self.taxonomy
        self.delta_rows = DeltaRows.of(self.loss, tax, self.candidates, self.alpha)
        if self.variant == "eq13":
            # eq. (13) divides by the normalised error (NHSVM's own loss: then it is Δ itself)
            self.delta_rows_n = (
                self.delta_rows
                if self.loss == NORMALIZED_LOSS
                else DeltaRows.of(NORMALIZED_LOSS, tax, self.candidates, self._alpha_or_c2())
            )
            self.max_loss = 1.0
        else:
            top = self.delta_rows.max_over(self.label_nodes)
            self.max_loss = top if np.isfinite(top) else 1.0
        # the kernels' Δ (margin) or Δ~ (eq. 13): kept as a table when small, else by row
        self._kernel_delta = self.delta_rows_n if self.variant == "eq13" else self.delta_rows
        self._delta_table = self._kernel_delta.table_if_small(self.label_nodes)

    def _delta_of(self, y: np.ndarray, li: np.ndarray) -> np.ndarray:
        """The kernels' Δ rows (Δ~ for eq. 13) of labels ``y`` (``li`` their positions in
        ``label_nodes``), shape (len(y), L)."""
        if self._delta_table.shape[0]:
            return self._delta_table[li]
        return self._kernel_delta.rows(y)

    def label_positions(self, y: np.ndarray) -> np.ndarray:
        """Where each label of ``y`` sits in ``label_nodes`` (the training labels).

        Raises
        ------
        ParameterError
            When a label of ``y`` is not one of the training labels.
        """
        y = np.asarray(y, dtype=np.int64)
        li = np.searchsorted(self.label_nodes, y)
        bad = (li >= len(self.label_nodes)) | (
            self.label_nodes[np.minimum(li, len(self.label_nodes) - 1)] != y
        )
        if np.any(bad):
            raise ParameterError(
                f"label {int(y[np.argmax(bad)])} is not one of the hinge's training labels"
            )
        return li

    def delta_table(self) -> np.ndarray:
        """``Δ(label_nodes[k], candidates[l])``, shape (n_labels, n_leaves), formed on request
        (the fit never holds it)."""
        return self.delta_rows.rows(self.label_nodes)

    def _alpha_or_c2(self) -> np.ndarray:
        return self.alpha if self.alpha is not None else self.c**2

    def set_attributes(self, c: np.ndarray) -> None:
        """Set the class attributes ``c`` (used by Shared SVM after each alpha step).

        With :attr:`loss_follows_alpha` (Shared SVM with ``loss="normalized"``) the
        normalised error ``Δ~(y, y_i) = sqrt(sum_{n in y Δ y_i} alpha_n)`` of eq. (9) follows
        the new weights ``alpha = c**2``.
        """
        c = np.asarray(c, dtype=np.float64).copy()
        c[0] = 0.0
        self.c = c
        self.C = class_attribute_matrix(self.taxonomy, c)
        self.C_cand = sp.csr_matrix(self.C[self.taxonomy.leaves])
        if self.loss_follows_alpha:
            self.alpha = c**2
            self._set_delta()

    # -- shapes
    @property
    def n_samples(self) -> int:
        """Number of training rows."""
        return int(self.X.shape[0])

    @property
    def coef_shape(self) -> tuple[int, int]:
        """Shape of ``W``: (n_nodes, n_features)."""
        return (self.taxonomy.n_nodes, int(self.X.shape[1]))

    # -- scores
    def potentials(self, W: np.ndarray, X: Any) -> np.ndarray:
        """Node potentials ``W_n . x`` of shape (b, n_nodes)."""
        return np.asarray(X @ W.T)

    def leaf_scores(self, P: np.ndarray) -> np.ndarray:
        """Scores ``s(A+(l))`` of every leaf, shape (b, n_leaves), from potentials ``P``."""
        return np.asarray((self.C_cand @ P.T).T)

    # -- loss and subgradient
    def batch_loss(
        self, W: np.ndarray, idx: np.ndarray, scale: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Losses and subgradient coefficients for the rows ``idx`` at ``scale * W``.

        Returns
        -------
        losses : ndarray of shape (b,)
        G : ndarray of shape (b, n_nodes)
            The subgradient of ``loss_i`` w.r.t. ``W`` is ``outer(G[i], x_i)``.
        """
        Xb = self.X[idx]
        P = self.potentials(W, Xb)
        if scale != 1.0:
            P *= scale
        if self.multilabel:
            return self._multilabel_loss(P, idx)
        return self._single_label_loss(P, idx)

    def _single_label_loss(self, P: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        y = self.y[idx]
        losses, j, div = self.most_violated(P, y, self.label_index[idx])
        G = np.zeros_like(P)
        active = np.flatnonzero(losses > 0.0)
        if len(active):
            ga = (self.C_cand[j[active]] - self.C[y[active]]).toarray()
            G[active] = ga / div[active, None]
        return losses, G

    def most_violated(
        self, P: np.ndarray, y: np.ndarray, li: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Losses, most violated leaves and their subgradients' divisors from potentials ``P``.

        ``q_i(l) = s_i(l) - s_i(y_i) + Δ(l, y_i)`` (eq. 3 / 10), or
        ``(s_i(l) - s_i(y_i)) / Δ~(l, y_i) + 1`` where ``Δ~ > 0`` (eq. 13).

        Parameters
        ----------
        P : ndarray of shape (b, n_nodes)
            Node potentials of ``b`` rows.
        y : ndarray of int, shape (b,)
            Their labels (leaf ids).
        li : ndarray of int, shape (b,)
            The labels' positions in ``label_nodes`` (:meth:`label_positions`).

        Returns
        -------
        losses : ndarray of shape (b,)
            ``max(0, max_l q_i(l))``.
        j : ndarray of int, shape (b,)
            The maximising candidate (index into ``candidates``).
        div : ndarray of shape (b,)
            The subgradient of row ``i``'s loss w.r.t. ``P_i`` is
            ``(C[cand_j] - C[y_i]) / div_i`` where ``losses_i > 0`` (``Δ~(cand_j, y_i)`` for
            eq. 13, else 1).
        """
        S = self.leaf_scores(P)
        s_true = np.asarray(self.C[y].multiply(P).sum(axis=1)).ravel()
        diff = S - s_true[:, None]
        D = self._delta_of(y, li)
        if self.variant == "eq13":
            with np.errstate(divide="ignore", invalid="ignore"):
                Q = np.where(D > 0.0, diff / np.where(D > 0, D, 1.0) + 1.0, -np.inf)
        else:
            Q = diff + D
        j = np.argmax(Q, axis=1)
        rows = np.arange(len(y))
        losses = np.maximum(Q[rows, j], 0.0)
        div = D[rows, j] if self.variant == "eq13" else np.ones(len(y))
        return losses, j, div

    def _multilabel_loss(self, P: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Yb = self.Yc[idx].toarray()
        U = P * self.c[None, :]
        R = U + self.w[None, :] * (1.0 - 2.0 * Yb)
        Z, best = label_space_max(
            R, self.taxonomy, self.leaf_terminated, relaxed=self.inference == "lp"
        )
        const = np.einsum("ij,ij->i", U, Yb) - Yb @ self.w
        q = best - const
        losses = np.maximum(q, 0.0)
        active = q > 1e-12
        G = np.zeros_like(P)
        G[active] = self.c[None, :] * (Z[active].astype(np.float64) - Yb[active])
        return losses, G

    def value(
        self, W: np.ndarray, chunk: int = 4096, progress: Callable[[int, int], Any] | None = None
    ) -> float:
        """The primal objective ``J(W)``.

        The losses are summed chunk by chunk (``chunk`` rows; ``progress(done, n)`` after
        each). On CSR data ``W^T`` is made contiguous once (``X @ W.T`` would copy it for
        every chunk); single-label losses then come from the compiled kernel
        (:func:`~hierlab.methods.nhsvm.sgd_kernels.path_hinge_losses`, the same arithmetic)
        when numba is available.
        """
        total = 0.0
        n = self.n_samples
        WT = np.ascontiguousarray(W.T) if sp.issparse(self.X) else None
        hinge = self.path_hinge() if WT is not None and jit_enabled() else None
        for s in range(0, n, chunk):
            idx = np.arange(s, min(n, s + chunk))
            if hinge is not None and WT is not None:
                losses = path_hinge_losses(self.X, hinge, WT, idx)
            else:
                losses, _ = self.batch_loss(W if WT is None else WT.T, idx)
            total += float(losses.sum())
            if progress is not None:
                progress(int(idx[-1]) + 1, n)
        return self.lam * float(np.einsum("ij,ij->", W, W)) + total / n  # no W * W temporary

    def path_hinge(self) -> PathHinge | None:
        """The arrays of the single-label loss for the compiled kernels; None for multi-label.

        Built from the current class attributes (Shared SVM changes them between rounds) and
        only for CSR data (the kernels walk CSR rows).
        """
        if self.multilabel or not sp.issparse(self.X):
            return None
        eq13 = self.variant == "eq13"
        return PathHinge.from_matrices(
            self.C_cand, self.C, self.y, self.label_index, self._delta_table,
            self._kernel_delta, eq13,
        )  # fmt: skip

    def gradient(self, W: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mini-batch subgradient of the mean loss part, shape (n_nodes, n_features), and losses."""
        losses, G = self.batch_loss(W, idx)
        Xb = self.X[idx]
        if sp.issparse(Xb):
            g = np.asarray((Xb.T @ G).T) / len(idx)
        else:
            g = (G.T @ Xb) / len(idx)
        return g, losses

    # -- prediction
    def predict_single(self, W: np.ndarray, X: Any) -> np.ndarray:
        """Best leaf per row (eq. 1 argmax), shape (n_samples,)."""
        S = self.leaf_scores(self.potentials(W, X))
        return np.asarray(self.taxonomy.leaves[np.argmax(S, axis=1)])

    def predict_sets(self, W: np.ndarray, X: Any) -> np.ndarray:
        """Best label set per row, bool array of shape (n_samples, n_nodes), root included."""
        U = self.potentials(W, X) * self.c[None, :]
        Z, _ = label_space_max(U, self.taxonomy, self.leaf_terminated)
        return Z
