"""MF-Tree: taxonomy induction by HSIC maximisation (seed 004, Algorithms 1-3).

MF-Tree organises ``c`` classes into a binary tree. At a node holding the training examples of
classes ``Y`` (an ``n x c`` 0/1 indicator), it forms the class similarity matrix

    D = Y^T K Y,        K = H K^ H  (the kernel centred on the node's examples),

takes the top two eigenvectors ``G = [g1, g2]`` of ``D`` (the spectral relaxation of
``max tr(G^T D G)``, eq. 12) and sends every class, with all its examples, to one of two
children (Algorithm 1, ``Partition``), recursively until each leaf holds one class. A test example
descends by ``p = G^T Y^T k^`` at every internal node (Algorithm 2).

**Split rules (errata).** Eigenvector signs are arbitrary, so the printed rule "class ``k`` goes
to ``argmax_j G_kj``" is not well defined. hierlab offers two deterministic rules
(``split_rule``), identical in the fast path and in the explicit-kernel reference:

* Because ``K`` is centred, ``K 1 = 0`` and so ``D 1 = 0``: every eigenvector of a positive
  eigenvalue is orthogonal to ``1`` and has entries of both signs. For a 2-partition with
  co-association ``B`` and signs ``s`` (``+1`` left, ``-1`` right), ``D 1 = 0`` gives exactly
  ``tr(D B) = s^T D s / 2``; the spectral relaxation of ``max_s s^T D s`` is ``g1``.
* ``g1`` (and ``g2``) are oriented so that their entry of largest magnitude is positive (the
  first one within a relative 1e-6 on ties).
* ``split_rule="sign"`` (default): class ``k`` goes **left iff** ``g1_k >= 0``, else right.
  Since ``g1 ⊥ 1`` and ``g1 != 0``, both children are non-empty.
* ``split_rule="argmax"`` (Algorithm 1 as printed): class ``k`` goes left iff
  ``G_k1 >= s G_k2`` (``argmax_j``, ties to the first column), with the sign ``s = ±1`` of
  ``g2`` chosen as follows. ``g1`` keeps its orientation (flipping both columns only swaps the
  children); of ``s = +1`` (the oriented ``g2``) and ``s = -1``, the one whose partition has
  two non-empty children and the larger ``tr(D B)`` (the HSIC of the split, eq. 11) wins, ties
  to ``s = +1``. One of the two always has two non-empty children. Both failing means one
  side empty for each sign: ``g1 >= |g2|`` or ``g1 < -|g2|`` everywhere (impossible: ``g1 ⊥ 1``
  has entries of both signs), or ``s g2 <= g1 < -s g2`` everywhere, i.e. ``|g1| <= |g2|``
  entrywise, which for unit vectors forces ``|g1| = |g2|`` and then ``g1 = s g2``, against
  ``g1 ⊥ g2``. (The halves fallback below still guards round-off.) The stored ``G`` holds the
  chosen ``s g2``.
* Fallback, documented: when ``lambda_1 <= 1e-12 * trace(D)`` (every class has the same
  mean, ``D = 0``) or one side would be empty, the classes are split into halves in class
  order (first ``ceil(c/2)`` left).
* ``routing="sign"`` (default): ``p_1 = g1^T Y^T k_c(x)`` with ``k_c`` the centred kernel
  vector between ``x`` and the node's examples; go left iff ``p_1 >= 0``. The mean of ``p`` over
  the training examples of class ``k`` is ``(lambda_1 g1_k, lambda_2 g2_k) / n_k``, so this
  routing agrees with the sign split of the class means. ``routing="argmax"`` (Algorithm 2 as
  printed): go left iff ``p_1 >= p_2`` with ``p = G^T Y^T k_c(x)`` and the stored ``G``.
  Nodes split by ``Partition2`` or the halves fallback always route to the nearer partition
  mean (an ``argmax p`` with size-normalised indicators, below).

**HSIC of a split.** Every internal node reports in ``split_info_`` the empirical HSIC (eq. 2)
between its examples and the split's label kernel,
``HSIC = tr(H K^ H L) / (n - 1)^2`` with ``L = Y B Y^T`` (``L_ij = 1`` iff the classes of
examples ``i`` and ``j`` go to the same child) and ``n`` the node's examples, computed as
``tr(D B) / (n - 1)^2`` (``Partition2`` nodes: ``2 ||(1_L - N_L / N)^T S||^2 / (n - 1)^2``, no
``D`` needed).

**Fast linear path (errata).** With a linear kernel, ``Y^T H X = C S`` where ``S = Y^T X`` holds
the class sums (``c x d``), ``n`` the class sizes, ``N = 1^T n`` and ``C = I - n 1^T / N``; so

    D = (Y^T H X)(Y^T H X)^T = C (S S^T) C^T.

The class-sum Gram matrix ``S S^T`` is formed once per subtree of at most
:data:`LANCZOS_MIN_CLASSES` classes (below depth ``tau``); every node's ``D`` is then
``O(c_node^2)`` from a sub-block. A node of more classes never forms ``D``: Lanczos multiplies
by it as ``C S (S^T C^T v)``, ``O(nnz(S))`` a product, so no memory grows with ``c^2``. Routing is
``p_1 = w . x + b`` with ``w = (C^T g1)^T S`` and ``b = -w . mu`` (``mu`` the node's mean).
No ``n x n`` kernel is ever formed. Non-linear kernels (RBF) go through an explicit approximate
feature map (``Nystroem`` or ``RBFSampler``) and then the same path.

**Approximate MF-Tree (Algorithm 3, with the errata's ``>= 2``).** While the depth ``d < tau``
and at least two classes remain, ``Partition2`` puts the largest class left, the second largest
right (ties by class order), and every other class on the side whose class mean is nearer
(``m1 <= m2`` goes left). Such a node routes to the nearer of the two partition means:
left iff ``||x - m_L|| <= ||x - m_R||``, i.e. ``p = G^T Y^T k^`` with the size-normalised
indicator ``G = [1_L / N_L, 1_R / N_R]`` and the offsets ``||m_L||^2 / 2``, ``||m_R||^2 / 2``.
``tau = 0`` is plain MF-Tree.

:class:`MFTreeReference` implements the paper's form literally (explicit ``n x n`` kernel per
node, Algorithm 2 with kernel vectors): it is the oracle the fast path is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator
from sklearn.base import BaseEstimator
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.utils.validation import check_array, check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import Param, validate_params
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "MFTree",
    "MFTreeReference",
    "build_binary_taxonomy",
    "mftree_partition",
    "partition2",
    "split_trace",
]

_KERNELS = ("linear", "rbf")
_APPROX = ("nystroem", "rff")
_DEGENERATE = 1e-12
#: classes at a node above which the top two eigenvectors of ``D`` come from Lanczos (ARPACK)
#: instead of a dense decomposition (O(c^3): 50 s of a 5,000-class fit); the linear path then
#: never forms ``D`` (c x c: 800 MB at 10^4 classes) but multiplies by it from the class sums
LANCZOS_MIN_CLASSES = 1000
#: the columns of ``split_info_``
_SPLIT_COLUMNS = (
    "node",
    "depth",
    "kind",
    "rule",
    "n_classes",
    "n_left",
    "n_right",
    "n_examples",
    "hsic",
    "lambda1",
    "lambda2",
)
_ROUTE_BUDGET = 1 << 22  # entries of densified node vectors per group (sparse routing)
_FEW_NODES = 16  # sparse routing: up to this many nodes in a level, one mat-vec per node

# ---------------------------------------------------------------------------- parameters
# Declared once, shared by MFTree, MFTreeReference and MFTreeClassifier (hierlab.core.params).
_KERNEL = Param(
    "kernel",
    "str",
    "linear",
    choices=_KERNELS,
    help="HSIC kernel on X",
    note="'linear' never forms an n x n kernel: D = (Yᵀ H X)(Yᵀ H X)ᵀ. 'rbf' goes through an "
    "explicit random-feature map.",
)


def _positive_log(name: str, default: float | None, symbol: str, help: str, note: str) -> Param:
    """A float parameter ``> 0`` shown on a log scale (a kernel width, a regularisation)."""
    return Param(
        name,
        "float",
        default,
        low=0.0,
        low_open=True,
        log=True,
        symbol=symbol,
        help=help,
        note=note,
    )


_GAMMA = _positive_log(
    "gamma",
    None,
    symbol="gamma",
    help="RBF width (None: 1 / n_features)",
    note="RBF width; None = 1 / n_features.",
)
_TAU = Param(
    "tau",
    "int",
    0,
    low=0,
    symbol="tau",
    help="approximate MF-Tree: size/mean split above this depth (0 = plain MF-Tree)",
    note="Approximate MF-Tree (Algorithm 3): split by class size and mean distance above depth "
    "tau, by eigenvectors below. 0 is the exact MF-Tree; 2-3 saves most of the time on many "
    "classes at little cost (Table 3 of seed 004).",
)
_N_COMPONENTS = Param(
    "n_components",
    "int",
    300,
    low=1,
    label_text="feature-map dimension",
    help="dimension of the RBF feature map (rbf only)",
)
_KERNEL_APPROXIMATION = Param(
    "kernel_approximation",
    "str",
    "nystroem",
    choices=_APPROX,
    help="RBF feature map: Nystroem or random Fourier features (RBFSampler)",
)
_SPLIT_RULE = Param(
    "split_rule",
    "str",
    "sign",
    choices=("sign", "argmax"),
    help="class split at an MF-Tree node: sign of g1, or argmax_j G_kj (Algorithm 1 as printed)",
    note="'sign': class k goes left iff g1_k >= 0 (the rounding of the spectral relaxation). "
    "'argmax': left iff G_k1 >= ±G_k2 as printed in Algorithm 1, the sign of g2 chosen to "
    "maximise the split's HSIC with two non-empty children.",
)
_ROUTING = Param(
    "routing",
    "str",
    "sign",
    choices=("sign", "argmax"),
    help="descent of a test example: sign of p_1, or argmax_j p_j (Algorithm 2 as printed)",
    note="'sign': go left iff p_1 = g1ᵀ Yᵀ k >= 0; 'argmax': go left iff p_1 >= p_2, "
    "p = Gᵀ Yᵀ k as printed in Algorithm 2.",
)
_RANDOM_STATE = Param(
    "random_state",
    "seed",
    0,
    help="seed of the RBF feature map",
    note="Seed of the random feature map (rbf only).",
)


# ---------------------------------------------------------------------------- shared rules
def _orient(v: np.ndarray) -> np.ndarray:
    """Flip ``v`` so that its entry of largest magnitude is positive.

    Ties (magnitudes within a relative ``1e-6`` of the largest, e.g. ``(1, -1)/sqrt(2)`` for
    two classes) go to the first such entry, so rounding noise cannot flip the orientation.
    """
    a = np.abs(v)
    k = int(np.flatnonzero(a >= (1.0 - 1e-6) * a.max())[0])
    return -v if v[k] < 0 else v


def _halves(c: int) -> np.ndarray:
    """The fallback split: the first ``ceil(c / 2)`` classes left, the rest right."""
    left = np.zeros(c, dtype=bool)
    left[: (c + 1) // 2] = True
    return left


def split_trace(D: np.ndarray | LinearOperator, left: np.ndarray) -> float:
    """``tr(D B)`` of a 2-partition: ``1_L^T D 1_L + 1_R^T D 1_R`` (eq. 11).

    Parameters
    ----------
    D : ndarray or LinearOperator of shape (c, c)
        The node's class similarity ``Y^T K Y``.
    left : ndarray of bool, shape (c,)

    Returns
    -------
    float
        Divided by ``(n - 1)^2`` (``n`` the node's examples) it is the HSIC of the split.
    """
    lv = left.astype(np.float64)
    rv = 1.0 - lv
    if isinstance(D, LinearOperator):
        return float(lv @ D.matvec(lv) + rv @ D.matvec(rv))
    return float(lv @ D @ lv + rv @ D @ rv)


def _top_two_lanczos(D: np.ndarray | LinearOperator) -> tuple[np.ndarray, np.ndarray]:
    """The two largest eigenpairs of the symmetric ``D`` by Lanczos (ascending, as ``eigh``),
    from a fixed start vector (deterministic; ``D 1 = 0``, so not the constant vector)."""
    from scipy.sparse.linalg import eigsh

    v0 = np.random.default_rng(0).standard_normal(D.shape[0])
    w, V = eigsh(D, k=2, which="LA", v0=v0, tol=0.0)
    order = np.argsort(w)
    return w[order], V[:, order]


def _eigen_split(
    D: np.ndarray | LinearOperator, scale: float | None, split_rule: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, str]:
    """:func:`mftree_partition` and the rule it used (``"sign"``, ``"argmax"``, ``"halves"``);
    ``D`` may be a symmetric LinearOperator (Lanczos, ``scale`` given)."""
    c = D.shape[0]
    if c < 2:
        raise DataError("a node needs at least two classes to be partitioned")
    if split_rule not in ("sign", "argmax"):
        raise ParameterError(f"split_rule must be 'sign' or 'argmax', got {split_rule!r}")
    if isinstance(D, LinearOperator):
        w, V = _top_two_lanczos(D)
    else:
        D = (D + D.T) / 2.0
        if c <= 64:  # small: a full decomposition has the least overhead
            w, V = np.linalg.eigh(D)
            w, V = w[-2:], V[:, -2:]
        elif c <= LANCZOS_MIN_CLASSES:
            w, V = sla.eigh(D, subset_by_index=[c - 2, c - 1])
        else:
            w, V = _top_two_lanczos(D)
    g1 = _orient(V[:, 1])
    g2 = _orient(V[:, 0])
    lam = np.array([w[1], w[0]])
    ref = float(np.trace(D)) if scale is None else float(scale)
    degenerate = lam[0] <= _DEGENERATE * max(ref, np.finfo(float).tiny)
    left = g1 >= 0
    rule = "sign"
    if split_rule == "argmax" and not degenerate:
        best = None
        for sgn in (1.0, -1.0):  # argmax_j G_kj, ties to the first column
            cand = g1 >= sgn * g2
            if cand.all() or not cand.any():
                continue
            t = split_trace(D, cand)
            if best is None or t > best[0] * (1.0 + 1e-12) + 1e-300:
                best = (t, cand, sgn)
        if best is not None:
            left, g2, rule = best[1], best[2] * g2, "argmax"
    G = np.column_stack([g1, g2])
    if degenerate or left.all() or not left.any():
        return _halves(c), G, lam, "fallback", "halves"
    return left, G, lam, "mftree", rule


def mftree_partition(
    D: np.ndarray, scale: float | None = None, split_rule: str = "sign"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Partition of Algorithm 1 with a documented deterministic rule.

    Parameters
    ----------
    D : ndarray of shape (c, c)
        ``Y^T K Y`` with ``K`` centred on the node's examples (symmetric PSD, ``D 1 = 0``).
    scale : float, optional
        Reference magnitude for the degeneracy test (default ``trace(D)``).
    split_rule : {"sign", "argmax"}, default "sign"
        ``"sign"``: left iff ``g1_k >= 0``. ``"argmax"``: left iff ``G_k1 >= s G_k2``
        (``argmax_j G_kj``), ``s = ±1`` chosen for two non-empty children and the larger
        ``tr(D B)`` (ties: ``+1``); see the module docstring.

    Returns
    -------
    left : ndarray of bool, shape (c,)
        True for the classes sent to the left child.
    G : ndarray of shape (c, 2)
        ``[g1, g2]``, the eigenvectors of the two largest eigenvalues, each oriented so its
        largest-magnitude entry is positive (``"argmax"``: ``g2`` times the chosen ``s``; for
        ``c = 2`` both eigenvectors of ``D``).
    eigenvalues : ndarray of shape (2,)
        ``lambda_1 >= lambda_2``.
    kind : {"mftree", "fallback"}
        ``"fallback"`` when the halves rule was used.
    """
    left, G, lam, kind, _ = _eigen_split(D, scale, split_rule)
    return left, G, lam, kind


def partition2(sizes: np.ndarray, sq_dist_to: Any) -> np.ndarray:
    """``Partition2`` of Algorithm 3: split by class size and distance of class means.

    Parameters
    ----------
    sizes : ndarray of int, shape (c,)
        Number of training examples of each class at the node.
    sq_dist_to : callable
        ``sq_dist_to(k)`` returns the squared distances of every class mean to the mean of
        class ``k``, shape (c,).

    Returns
    -------
    left : ndarray of bool, shape (c,)
        ``c1`` (largest class, first in class order on ties) left, ``c2`` (second largest)
        right, every other class left iff ``m1 <= m2``.
    """
    order = np.argsort(-np.asarray(sizes), kind="stable")
    c1, c2 = int(order[0]), int(order[1])
    m1 = np.asarray(sq_dist_to(c1), dtype=np.float64)
    m2 = np.asarray(sq_dist_to(c2), dtype=np.float64)
    left = m1 <= m2
    left[c1] = True
    left[c2] = False
    return left


def build_binary_taxonomy(
    parent: np.ndarray, leaf_class: np.ndarray, class_names: np.ndarray, code: list[str]
) -> tuple[Taxonomy, np.ndarray]:
    """Turn an induced binary tree into a :class:`Taxonomy`.

    Leaves are named by their class; internal nodes ``"node:<code>"`` where ``code`` is the
    left(0)/right(1) path from the root (the root is ``"node:"``). If a class name starts with
    ``"node:"`` the prefix becomes ``"node_:"`` (and so on) to keep names unique.

    Parameters
    ----------
    parent : ndarray of int, shape (n_nodes,)
        Parent of each node in creation order (breadth first, ``parent[i] < i``), -1 for root.
    leaf_class : ndarray of int, shape (n_nodes,)
        Class index at a leaf, -1 at internal nodes.
    class_names : ndarray of str, shape (n_classes,)
    code : list of str
        Path code of each node.

    Returns
    -------
    taxonomy : Taxonomy
    order : ndarray of int, shape (n_nodes,)
        Taxonomy id of each node (creation index -> taxonomy id).
    """
    names_set = {str(x) for x in class_names}
    prefix = "node:"
    while any(n.startswith(prefix) for n in names_set):
        prefix = prefix[:-1] + "_:"
    names = [
        str(class_names[leaf_class[i]]) if leaf_class[i] >= 0 else prefix + code[i]
        for i in range(len(parent))
    ]
    if len(parent) == 1:
        tax = Taxonomy([], nodes=names)
    else:
        tax = Taxonomy([(names[parent[i]], names[i]) for i in range(1, len(parent))], nodes=names)
    return tax, tax.index(np.asarray(names, dtype=object))


# ---------------------------------------------------------------------------- tree arrays
@dataclass
class _Tree:
    """A binary tree in creation (breadth-first) order."""

    parent: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    leaf_class: list[int] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    classes: list[np.ndarray] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    G: list[np.ndarray | None] = field(default_factory=list)
    eigenvalues: list[np.ndarray | None] = field(default_factory=list)

    def add(self, parent: int, depth: int, code: str, classes: np.ndarray) -> int:
        """Append a node holding ``classes`` (a leaf when it holds one); its creation index."""
        self.parent.append(parent)
        self.left.append(-1)
        self.right.append(-1)
        self.leaf_class.append(int(classes[0]) if len(classes) == 1 else -1)
        self.depth.append(depth)
        self.code.append(code)
        self.classes.append(classes)
        self.kind.append("leaf" if len(classes) == 1 else "")
        self.G.append(None)
        self.eigenvalues.append(None)
        return len(self.parent) - 1


def _grow(n_classes: int, tau: int, split: Any, tree: _Tree | None = None) -> _Tree:
    """Breadth-first growth (Algorithms 1 and 3) shared by the fast path and the reference.

    ``split(node_id, classes, depth, tau)`` returns ``(left_mask, G, eigenvalues, kind)``; it
    is called for every node holding at least two classes, parents before children.
    """
    tree = _Tree() if tree is None else tree
    tree.add(-1, 0, "", np.arange(n_classes))
    i = 0
    while i < len(tree.parent):
        cls = tree.classes[i]
        if len(cls) >= 2:
            left, G, lam, kind = split(i, cls, tree.depth[i], tau)
            tree.kind[i] = kind
            tree.G[i] = G
            tree.eigenvalues[i] = lam
            tree.left[i] = tree.add(i, tree.depth[i] + 1, tree.code[i] + "0", cls[left])
            tree.right[i] = tree.add(i, tree.depth[i] + 1, tree.code[i] + "1", cls[~left])
        i += 1
    return tree


def _tree_taxonomy(tree: _Tree, classes: np.ndarray) -> tuple[Taxonomy, np.ndarray, np.ndarray]:
    """The :class:`Taxonomy` of a grown tree and the maps between the two numberings.

    Returns
    -------
    taxonomy : Taxonomy
    order : ndarray of int, shape (n_nodes,)
        Taxonomy id of each node (creation index -> taxonomy id).
    inv : ndarray of int, shape (n_nodes,)
        Creation index of each taxonomy id.
    """
    parent = np.asarray(tree.parent, dtype=np.int64)
    tax, order = build_binary_taxonomy(
        parent,
        np.asarray(tree.leaf_class, dtype=np.int64),
        np.asarray([str(k) for k in classes], dtype=object),
        tree.code,
    )
    inv = np.empty(len(parent), dtype=np.int64)
    inv[order] = np.arange(len(parent))
    return tax, order, inv


def _mean_indicator(left: np.ndarray, nk: np.ndarray) -> np.ndarray:
    """``[1_L / N_L, 1_R / N_R]``, shape (c, 2): the class weights of the two partition means.

    Parameters
    ----------
    left : ndarray of bool, shape (c,)
        The classes of the left child.
    nk : ndarray of shape (c,)
        Training examples per class.
    """
    NL, NR = nk[left].sum(), nk[~left].sum()
    return np.column_stack([np.where(left, 1.0 / NL, 0.0), np.where(left, 0.0, 1.0 / NR)])


# ---------------------------------------------------------------------------- base
class _MFTreeBase(BaseEstimator):
    """Shared fitting glue, label handling and attributes of MF-Tree and its reference."""

    kernel: Any
    gamma: float | None
    tau: int
    split_rule: str
    routing: str

    def _gamma(self, n_features: int) -> float:
        """The RBF width: ``gamma``, or ``1 / n_features`` when it is None."""
        return 1.0 / n_features if self.gamma is None else float(self.gamma)

    def _encode(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        """Validated ``X`` and class indices of ``y``; sets ``classes_``, ``n_features_in_``."""
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != X.shape[0]:
            raise DataError(
                f"y must be 1-D with one label per row of X ({X.shape[0]}), got {y.shape}"
            )
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 1:
            raise DataError("no training example")
        self.n_features_in_ = X.shape[1]
        return X, yi.ravel().astype(np.int64)

    def _finish(self, tree: _Tree, counts: np.ndarray, info: dict[int, dict[str, Any]]) -> None:
        """Set the fitted attributes from the grown tree, indexed by taxonomy id.

        ``info`` maps a creation index to ``{"rule", "hsic", "n_examples"}`` of its split.
        """
        tax, order, inv = _tree_taxonomy(tree, self.classes_)
        leaf_class = np.asarray(tree.leaf_class, dtype=np.int64)
        self.taxonomy_ = tax
        self._order = order
        self._creation = inv
        self.left_ = _child_ids(tree.left, order, inv)
        self.right_ = _child_ids(tree.right, order, inv)
        self.leaf_class_ = leaf_class[inv]
        self.node_classes_ = [tree.classes[k] for k in inv]
        self.split_kind_ = np.asarray([tree.kind[k] for k in inv], dtype=object)
        self.G_ = [tree.G[k] for k in inv]
        self.eigenvalues_ = [tree.eigenvalues[k] for k in inv]
        self.class_counts_ = counts
        self.leaf_of_class_ = order[
            np.asarray([int(np.flatnonzero(leaf_class == k)[0]) for k in range(len(self.classes_))])
        ]
        self.depth_ = int(tax.max_depth)
        self.n_nodes_ = int(tax.n_nodes)
        self.split_info_ = self._split_table(tree, info)

    def _split_table(self, tree: _Tree, info: dict[int, dict[str, Any]]) -> pd.DataFrame:
        """``split_info_``: one row per internal node, in taxonomy id order."""
        rows = []
        names = self.taxonomy_.names
        for j in range(self.n_nodes_):
            k = int(self._creation[j])
            if tree.left[k] < 0:
                continue
            lam = tree.eigenvalues[k]
            rows.append(
                {
                    "node": str(names[j]),
                    "depth": tree.depth[k],
                    "kind": tree.kind[k],
                    "rule": info[k]["rule"],
                    "n_classes": len(tree.classes[k]),
                    "n_left": len(tree.classes[tree.left[k]]),
                    "n_right": len(tree.classes[tree.right[k]]),
                    "n_examples": int(info[k]["n_examples"]),
                    "hsic": float(info[k]["hsic"]),
                    "lambda1": np.nan if lam is None else float(lam[0]),
                    "lambda2": np.nan if lam is None else float(lam[1]),
                }
            )
        return pd.DataFrame(rows, columns=list(_SPLIT_COLUMNS))

    def node_hsic(self) -> np.ndarray:
        """The HSIC of every node's split, shape (n_nodes,) by taxonomy id; ``nan`` at leaves."""
        check_is_fitted(self, "split_info_")
        out = np.full(self.n_nodes_, np.nan)
        info = self.split_info_
        if len(info):
            out[self.taxonomy_.index(info["node"].to_numpy(dtype=object))] = info["hsic"]
        return out

    def partitions(self) -> list[tuple[tuple[Any, ...], tuple[Any, ...]]]:
        """Every internal node's split as (left classes, right classes), in taxonomy id order."""
        check_is_fitted(self, "taxonomy_")
        out = []
        for j in range(self.n_nodes_):
            if self.left_[j] >= 0:
                lc = tuple(self.classes_[self.node_classes_[self.left_[j]]].tolist())
                rc = tuple(self.classes_[self.node_classes_[self.right_[j]]].tolist())
                out.append((lc, rc))
        return out

    def predict(self, X: Any) -> np.ndarray:
        """Class labels by top-down routing (Algorithm 2), shape (n_samples,)."""
        leaves = self.apply(X)
        return self.classes_[self.leaf_class_[leaves]]

    def apply(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def _child_ids(child: list[int], order: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """Children (creation indices, -1 at leaves) as taxonomy ids, in taxonomy id order."""
    c = np.asarray(child)[inv]
    return np.where(c >= 0, order[c], -1)


# ---------------------------------------------------------------------------- fast path
class MFTree(_MFTreeBase):
    """MF-Tree induction and routing by the fast feature-space path (seed 004, Alg. 1-3).

    Parameters
    ----------
    kernel : {"linear", "rbf"}, default "linear"
        ``"rbf"`` maps the data first with an explicit approximate feature map of
        ``exp(-gamma ||x - x'||^2)``.
    gamma : float, optional
        RBF width; None means ``1 / n_features``.
    tau : int, default 0
        Depth threshold of the approximate MF-Tree (Algorithm 3): nodes above depth ``tau`` are
        split by ``Partition2``; ``tau = 0`` is plain MF-Tree.
    split_rule : {"sign", "argmax"}, default "sign"
        How an MF-Tree node splits its classes (module docstring): the sign of ``g1``, or
        ``argmax_j G_kj`` as printed in Algorithm 1 with the documented sign choice of ``g2``.
    routing : {"sign", "argmax"}, default "sign"
        How a test example descends an MF-Tree node: the sign of ``p_1``, or ``argmax_j p_j``
        as printed in Algorithm 2.
    n_components : int, default 300
        Dimension of the RBF feature map.
    kernel_approximation : {"nystroem", "rff"}, default "nystroem"
        ``Nystroem`` or random Fourier features (``RBFSampler``).
    random_state : int, default 0
        Seed of the feature map.

    Attributes
    ----------
    taxonomy_ : Taxonomy
        The induced binary tree; leaves are named by the classes, internal nodes
        ``"node:<path code>"``.
    classes_ : ndarray of shape (n_classes,)
        Sorted class labels.
    G_ : list of (ndarray of shape (c_node, 2) or None)
        Per taxonomy node: MF-Tree's ``[g1, g2]`` (rows follow ``node_classes_[j]``); for a
        ``Partition2`` node the normalised indicator ``[1_L / N_L, 1_R / N_R]``; None at leaves.
    eigenvalues_ : list of (ndarray of shape (2,) or None)
    split_info_ : pandas.DataFrame
        One row per internal node (taxonomy id order): ``node`` (name), ``depth``, ``kind``,
        ``rule`` (``"sign"``, ``"argmax"``, ``"halves"`` or ``"partition2"``), ``n_classes``,
        ``n_left`` / ``n_right`` (classes per child), ``n_examples``, ``hsic`` (eq. 2:
        ``tr(H K^ H L) / (n - 1)^2`` with the split's label kernel ``L = Y B Y^T``) and
        ``lambda1`` / ``lambda2`` (``nan`` for ``Partition2``).
    node_classes_ : list of ndarray of int
        Class indices held by each node.
    split_kind_ : ndarray of str, shape (n_nodes,)
        ``"mftree"``, ``"approx"`` (Partition2), ``"fallback"`` or ``"leaf"``.
    coef_ : ndarray or csr_matrix of shape (n_nodes, n_map_features)
        Routing vector ``w_j`` of each internal node (zero rows at leaves), in the (mapped)
        feature space; go left iff ``w_j . x + intercept_[j] >= 0``.
    intercept_ : ndarray of shape (n_nodes,)
    left_, right_ : ndarray of int, shape (n_nodes,)
        Children's taxonomy ids (-1 at leaves).
    leaf_class_ : ndarray of int, shape (n_nodes,)
        Class index at each leaf, -1 elsewhere.
    feature_map_ : Nystroem or RBFSampler or None
    depth_, n_nodes_ : int
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        _KERNEL,
        _GAMMA,
        _TAU,
        _SPLIT_RULE,
        _ROUTING,
        _N_COMPONENTS,
        _KERNEL_APPROXIMATION,
        _RANDOM_STATE,
    )

    def __init__(
        self,
        *,
        kernel: str = "linear",
        gamma: float | None = None,
        tau: int = 0,
        split_rule: str = "sign",
        routing: str = "sign",
        n_components: int = 300,
        kernel_approximation: str = "nystroem",
        random_state: int | None = 0,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau
        self.split_rule = split_rule
        self.routing = routing
        self.n_components = n_components
        self.kernel_approximation = kernel_approximation
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _map(self, X: Any) -> Any:
        """``X`` in the space of the routing vectors (the RBF feature map, if any)."""
        if self.feature_map_ is None:
            return X
        return self.feature_map_.transform(X)

    def fit(self, X: Any, y: Any) -> MFTree:
        """Induce the tree.

        Parameters
        ----------
        X : array-like or csr_matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            One class label per row.

        Returns
        -------
        self
        """
        validate_params(self)
        X, yi = self._encode(X, y)
        X = self._fit_feature_map(X)
        c = len(self.classes_)
        counts = np.bincount(yi, minlength=c).astype(np.float64)
        S = self._class_sums(X, yi, c)
        splitter = _LinearSplitter(S, counts, self.split_rule, self.routing)
        tree = _grow(c, int(self.tau), splitter.split, splitter.tree)
        self._finish(tree, counts, splitter.info)
        self.coef_, self.intercept_ = self._stack_routing(tree, splitter.routing, S)
        return self

    def _fit_feature_map(self, X: Any) -> Any:
        """Fit the RBF feature map (``feature_map_``, None for the linear kernel); mapped X."""
        self.feature_map_: Nystroem | RBFSampler | None = None
        if self.kernel != "rbf":
            return X
        gamma = self._gamma(X.shape[1])
        fm: Nystroem | RBFSampler
        if self.kernel_approximation == "nystroem":
            fm = Nystroem(
                kernel="rbf",
                gamma=gamma,
                n_components=min(int(self.n_components), X.shape[0]),
                random_state=self.random_state,
            )
        else:
            fm = RBFSampler(
                gamma=gamma, n_components=int(self.n_components), random_state=self.random_state
            )
        self.feature_map_ = fm.fit(X)
        return fm.transform(X)

    def _class_sums(self, X: Any, yi: np.ndarray, c: int) -> Any:
        """Class sums ``S = Y^T X`` (c x d), dense or CSR like ``X``; sets ``_shift``.

        Dense data are first centred on the global mean (every node's ``D`` and routing are
        translation invariant; this only improves conditioning).
        """
        n = X.shape[0]
        Yind = sp.csr_matrix((np.ones(n), (yi, np.arange(n))), shape=(c, n))
        if sp.issparse(X):
            self._shift = None
            return sp.csr_matrix(Yind @ X)
        self._shift = X.mean(axis=0)
        return np.asarray(Yind @ (X - self._shift))

    def _stack_routing(
        self, tree: _Tree, routing: dict[int, tuple[np.ndarray, float]], S: Any
    ) -> tuple[Any, np.ndarray]:
        """``coef_ = U @ S`` (``U`` sparse, n_nodes x c) and ``intercept_``, by taxonomy id."""
        n_nodes, c = len(tree.parent), S.shape[0]
        rows, cols, vals = [], [], []
        intercept = np.zeros(n_nodes)
        for node, (u, b) in routing.items():
            j = int(self._order[node])
            rows.append(np.full(len(u), j))
            cols.append(tree.classes[node])
            vals.append(u)
            intercept[j] = b
        if rows:
            U = sp.csr_matrix(
                (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                shape=(n_nodes, c),
            )
        else:
            U = sp.csr_matrix((n_nodes, c))
        coef = U @ S
        if sp.issparse(coef):
            return sp.csr_matrix(coef), intercept
        coef = np.asarray(coef)
        # undo the global shift: w . (x - shift) + b = w . x + (b - w . shift)
        return coef, intercept - coef @ self._shift

    # ------------------------------------------------------------------ routing
    def apply(self, X: Any) -> np.ndarray:
        """Taxonomy id of the leaf each example reaches (Algorithm 2), shape (n_samples,).

        Vectorised over examples: at every level, the examples still at internal nodes are
        scored by the row-wise product with their node's routing vector ``coef_[j]`` plus
        ``intercept_[j]`` and go left iff the score is ``>= 0`` (dense data: cache-sized blocks
        of rows, gathered node vectors and ``einsum``; sparse data: each stored entry gathers
        its weight from the level's densified node vectors, summed per row). The cost is
        ``O(depth * d)`` per dense example, ``O(depth * nnz)`` per sparse one.

        Parameters
        ----------
        X : array-like or csr_matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int, shape (n_samples,)
        """
        check_is_fitted(self, "taxonomy_")
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        if X.shape[1] != self.n_features_in_:
            raise DataError(
                f"X has {X.shape[1]} features, MF-Tree was fitted with {self.n_features_in_}"
            )
        Z = self._map(X)
        node = np.zeros(Z.shape[0], dtype=np.int64)
        if sp.issparse(Z):
            self._route_sparse(sp.csr_matrix(Z), node)
        else:
            coef = self.coef_.toarray() if sp.issparse(self.coef_) else self.coef_
            self._route_dense(np.asarray(Z), coef, node)
        return node

    def _route_dense(self, Z: np.ndarray, coef: np.ndarray, node: np.ndarray) -> None:
        """Route dense rows in place: blocks of rows small enough to stay in cache descend
        together; every level is one gather of the block's rows and node vectors and an einsum.
        """
        left, right, b = self.left_, self.right_, self.intercept_
        block = int(np.clip(2**18 // max(Z.shape[1], 1), 64, 8192))
        for s0 in range(0, Z.shape[0], block):
            Zb = Z[s0 : s0 + block]
            nb = node[s0 : s0 + block]
            act = np.flatnonzero(left[nb] >= 0)
            while len(act):
                cur = nb[act]
                Za = Zb if len(act) == len(Zb) else Zb[act]  # no copy while all descend
                score = np.einsum("ij,ij->i", Za, coef[cur]) + b[cur]
                nb[act] = np.where(score >= 0, left[cur], right[cur])
                act = act[left[nb[act]] >= 0]

    def _route_sparse(self, Z: sp.csr_matrix, node: np.ndarray) -> None:
        """Route CSR rows in place, one level at a time: :meth:`_scores_per_node` when the level
        has at most ``_FEW_NODES`` nodes, else :meth:`_scores_gathered` (``O(nnz)`` per level).
        """
        left, right, b = self.left_, self.right_, self.intercept_
        active = np.flatnonzero(left[node] >= 0)
        while len(active):
            cur = node[active]
            uniq, inv = np.unique(cur, return_inverse=True)
            inv = inv.ravel()
            if len(uniq) <= _FEW_NODES:  # few nodes: one sparse mat-vec per node is cheaper
                score = self._scores_per_node(Z, active, uniq, inv)
            else:
                score = self._scores_gathered(Z, active, uniq, inv)
            score += b[cur]
            node[active] = np.where(score >= 0, left[cur], right[cur])
            active = active[left[node[active]] >= 0]

    def _coef_row(self, j: int) -> np.ndarray:
        """``coef_[j]`` as a dense vector."""
        coef = self.coef_
        if not sp.issparse(coef):
            return np.asarray(coef[j])
        wj = np.zeros(coef.shape[1])
        lo, hi = coef.indptr[j], coef.indptr[j + 1]
        wj[coef.indices[lo:hi]] = coef.data[lo:hi]
        return wj

    def _scores_per_node(
        self, Z: sp.csr_matrix, active: np.ndarray, uniq: np.ndarray, inv: np.ndarray
    ) -> np.ndarray:
        """Scores ``w_j . z`` of the active rows (row ``active[i]`` at node ``uniq[inv[i]]``),
        one sparse mat-vec per node."""
        score = np.empty(len(active))
        order = np.argsort(inv, kind="stable")
        bounds = np.append(np.searchsorted(inv[order], np.arange(len(uniq))), len(inv))
        for q, j in enumerate(uniq):
            sel_q = order[bounds[q] : bounds[q + 1]]
            rows_q = Z if len(sel_q) == Z.shape[0] else Z[active[sel_q]]
            score[sel_q] = rows_q @ self._coef_row(int(j))
        return score

    def _scores_gathered(
        self, Z: sp.csr_matrix, active: np.ndarray, uniq: np.ndarray, inv: np.ndarray
    ) -> np.ndarray:
        """Scores as :meth:`_scores_per_node`, by gathers: every stored entry ``(i, k)`` of the
        active rows takes the weight ``coef_[node_i, k]`` from the level's node vectors
        (densified in groups of at most ``_ROUTE_BUDGET`` entries), summed per row.
        """
        coef = self.coef_
        dense_coef = not sp.issparse(coef)
        n, d = Z.shape[0], coef.shape[1]
        score = np.empty(len(active))
        per = max(1, _ROUTE_BUDGET // max(d, 1))
        for g0 in range(0, len(uniq), per):
            grp = uniq[g0 : g0 + per]
            sel = np.flatnonzero((inv >= g0) & (inv < g0 + per)) if len(uniq) > per else None
            rows_idx = active if sel is None else active[sel]
            Za = Z if len(rows_idx) == n else Z[rows_idx]
            Wg = coef[grp] if dense_coef else coef[grp].toarray()
            loc = inv - g0 if sel is None else inv[sel] - g0
            r = np.repeat(np.arange(Za.shape[0]), np.diff(Za.indptr))
            vals = Za.data * Wg[loc[r], Za.indices]
            sc = np.bincount(r, weights=vals, minlength=Za.shape[0])
            if sel is None:
                score[:] = sc
            else:
                score[sel] = sc
        return score

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """0/1 indicator of the nodes visited, shape (n_samples, n_nodes)."""
        leaves = self.apply(X)
        A = self.taxonomy_.ancestor_matrix[leaves].tocsr()
        return A.astype(np.int8)


class _LinearSplitter:
    """The fast path's node split (Algorithms 1 and 3) from the class sums ``S = Y^T X``.

    ``split`` is the callback of :func:`_grow`; it fills ``routing`` (creation index ->
    ``(u, b)``: the node's routing vector is ``u^T S`` over its classes, its offset ``b``). The
    MF-Tree part forms one class-sum Gram block per MF-Tree subtree of at most
    :data:`LANCZOS_MIN_CLASSES` classes, so every node's ``D`` is ``O(c_node^2)``; a node of
    more classes multiplies by ``D`` from the class sums (:meth:`_mftree_operator`).

    Parameters
    ----------
    S : ndarray or csr_matrix of shape (n_classes, n_features)
        Class sums.
    counts : ndarray of shape (n_classes,)
        Training examples per class.
    split_rule, routing : {"sign", "argmax"}
        As in :class:`MFTree`.
    """

    def __init__(self, S: Any, counts: np.ndarray, split_rule: str, routing: str) -> None:
        self.S = S
        self.counts = counts
        self.split_rule = split_rule
        self.route_by = routing
        self.tree = _Tree()
        self.routing: dict[int, tuple[np.ndarray, float]] = {}
        #: creation index -> {"rule", "hsic", "n_examples"} of its split
        self.info: dict[int, dict[str, Any]] = {}
        self._grams: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._block_of: dict[int, int] = {}  # MF-Tree node -> root of its Gram block

    def split(self, node: int, cls: np.ndarray, depth: int, tau: int) -> tuple[Any, Any, Any, str]:
        """``(left, G, eigenvalues, kind)`` of the node ``node`` holding the classes ``cls``."""
        if depth < tau:
            return self._partition2(node, cls)
        return self._mftree(node, cls)

    def _partition2(self, node: int, cls: np.ndarray) -> tuple[Any, Any, Any, str]:
        """``Partition2`` on the class means ``m_k = S_k / n_k``; route to the nearer mean."""
        nk = self.counts[cls]
        Sc = self.S[cls]
        norms = _row_sq_norms(Sc) / nk**2

        def sq_dist_to(k: int) -> np.ndarray:
            dots = Sc @ (Sc[k].T if sp.issparse(Sc) else Sc[k])
            dots = np.asarray(dots.toarray() if sp.issparse(dots) else dots).ravel()
            return norms + norms[k] - 2.0 * dots / (nk * nk[k])

        left = partition2(nk, sq_dist_to)
        G = _mean_indicator(left, nk)
        u = G[:, 0] - G[:, 1]  # w = m_L - m_R = u^T S
        # ||m_L||^2 - ||m_R||^2 from the class sums
        SL = _weighted_rows(G[:, 0] * left, Sc)
        SR = _weighted_rows(G[:, 1] * ~left, Sc)
        self.routing[node] = (u, -0.5 * (float(SL @ SL) - float(SR @ SR)))
        # tr(D B) = 2 ||(1_L - N_L / N)^T S||^2 (D 1 = 0), without D
        N = float(nk.sum())
        v = _weighted_rows(left - float(nk[left].sum()) / N, Sc)
        self.info[node] = {
            "rule": "partition2",
            "hsic": _hsic(2.0 * float(v @ v), N),
            "n_examples": N,
        }
        return left, G, None, "approx"

    def _gram(self, block_root: int) -> tuple[np.ndarray, np.ndarray]:
        """The Gram block ``S_b S_b^T`` of a block's classes and the position of each class."""
        if block_root not in self._grams:
            classes = self.tree.classes[block_root]
            Sb = self.S[classes]
            Gb = Sb @ Sb.T
            Gb = Gb.toarray() if sp.issparse(Gb) else np.asarray(Gb)
            pos = np.full(len(self.counts), -1, dtype=np.int64)
            pos[classes] = np.arange(len(classes))
            self._grams[block_root] = (Gb, pos)
        return self._grams[block_root]

    def _mftree(self, node: int, cls: np.ndarray) -> tuple[Any, Any, Any, str]:
        """Algorithm 1 with ``D = C gram C^T``, ``C = I - n 1^T / N``, in ``O(c^2)`` (above
        :data:`LANCZOS_MIN_CLASSES` classes: :meth:`_mftree_operator`, ``O(nnz(S))``)."""
        if len(cls) > LANCZOS_MIN_CLASSES:
            return self._mftree_operator(node, cls)
        parent = self.tree.parent[node]
        self._block_of[node] = self._block_of[parent] if parent in self._block_of else node
        Gb, pos = self._gram(self._block_of[node])
        idx = pos[cls]
        gram = Gb[np.ix_(idx, idx)]
        nk = self.counts[cls]
        N = nk.sum()
        r = gram.sum(axis=1)  # gram 1
        tot = float(r.sum())  # 1^T gram 1
        a = nk / N  # D = C gram C^T by rank-one corrections
        D = gram - a[:, None] * r[None, :] - r[:, None] * a[None, :] + tot * (a[:, None] * a)
        left, G, lam, kind, rule = _eigen_split(D, float(np.trace(D)), self.split_rule)
        self.info[node] = {"rule": rule, "hsic": _hsic(split_trace(D, left), N), "n_examples": N}
        if kind == "mftree":
            g = G[:, 0] if self.route_by == "sign" else G[:, 0] - G[:, 1]
            u = g - float(nk @ g) / N  # C^T g: w = u^T S, p_1 (- p_2) = w . (x - mu)
            b = -float(u @ r) / N  # -w . mu = -u^T gram 1 / N
        else:  # halves: route to the nearer partition mean, as for Partition2
            uL, uR = np.ascontiguousarray(_mean_indicator(left, nk).T)
            u = uL - uR
            b = -0.5 * float(uL @ gram @ uL - uR @ gram @ uR)
        self.routing[node] = (u, b)
        return left, G, lam, kind

    def _mftree_operator(self, node: int, cls: np.ndarray) -> tuple[Any, Any, Any, str]:
        """:meth:`_mftree` without a (c x c) matrix: Lanczos on ``D v = C S (S^T C^T v)``,
        two products with the node's class sums ``S`` (``O(nnz(S))`` each, against ``O(c^2)``
        for a formed ``D`` and its 8 c^2 bytes: 800 MB at 10^4 classes); ``tr(D)`` from the
        rows' norms. The same ``D``, the same rank-one corrections as the Gram path."""
        Sc = self.S[cls]
        nk = self.counts[cls]
        N = nk.sum()
        a = nk / N

        def gram_times(v: np.ndarray) -> np.ndarray:  # S S^T v
            return np.asarray(Sc @ np.asarray(Sc.T @ v).ravel()).ravel()

        r = gram_times(np.ones(len(cls)))  # gram 1
        tot = float(r.sum())

        def d_times(v: np.ndarray) -> np.ndarray:  # D v = C gram C^T v
            v = np.asarray(v, dtype=np.float64).ravel()
            av, rv = float(a @ v), float(r @ v)
            return gram_times(v) - a * rv - r * av + tot * av * a

        c = len(cls)
        D = LinearOperator((c, c), matvec=d_times, rmatvec=d_times, dtype=np.float64)
        trace = float(_row_sq_norms(Sc).sum()) - 2.0 * float(a @ r) + tot * float(a @ a)
        left, G, lam, kind, rule = _eigen_split(D, trace, self.split_rule)
        self.info[node] = {"rule": rule, "hsic": _hsic(split_trace(D, left), N), "n_examples": N}
        if kind == "mftree":
            g = G[:, 0] if self.route_by == "sign" else G[:, 0] - G[:, 1]
            u = g - float(nk @ g) / N
            b = -float(u @ r) / N
        else:  # halves: ||S^T u||^2 for u^T gram u
            uL, uR = np.ascontiguousarray(_mean_indicator(left, nk).T)
            u = uL - uR
            sL, sR = _weighted_rows(uL, Sc), _weighted_rows(uR, Sc)
            b = -0.5 * (float(sL @ sL) - float(sR @ sR))
        self.routing[node] = (u, b)
        return left, G, lam, kind


def _hsic(trace_DB: float, n: float) -> float:
    """The empirical HSIC of eq. (2), ``tr(K L) / (n - 1)^2``, from ``tr(D B) = tr(K L)``."""
    return trace_DB / (n - 1.0) ** 2


def _row_sq_norms(Sc: Any) -> np.ndarray:
    """``||S_k||^2`` of every row of a dense or CSR ``Sc``, shape (n_rows,)."""
    if sp.issparse(Sc):
        return np.asarray(Sc.multiply(Sc).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", Sc, Sc)


def _weighted_rows(u: np.ndarray, Sc: Any) -> np.ndarray:
    """``u^T Sc``, shape (n_features,), for a dense or CSR ``Sc``."""
    return u @ Sc if not sp.issparse(Sc) else np.asarray(Sc.T @ u).ravel()


# ---------------------------------------------------------------------------- reference
class MFTreeReference(_MFTreeBase):
    """The paper's form with an explicit kernel: the oracle for :class:`MFTree`.

    Every node computes the ``n_node x n_node`` kernel ``K^`` of its examples, centres it
    (``K = H K^ H``), forms ``D = Y^T K Y`` and splits with :func:`mftree_partition`
    (Algorithm 1); ``Partition2`` (Algorithm 3) uses the kernel class-mean distances
    ``||m_a - m_b||^2 = (e_a/n_a - e_b/n_b)^T D (e_a/n_a - e_b/n_b)``. Prediction computes the
    kernel vector ``k^`` between a test example and the node's training examples and
    ``p = G^T Y^T k_c`` (Algorithm 2). Costs ``O(n^2)`` memory and ``O(n^2 d)`` time per level:
    use it on small data, or to measure what the fast path saves.

    Parameters
    ----------
    kernel : {"linear", "rbf"} or callable, default "linear"
        A callable ``kernel(A, B) -> ndarray (len(A), len(B))`` is used as is.
    gamma : float, optional
        RBF width (None: ``1 / n_features``).
    tau : int, default 0
        As in :class:`MFTree`.
    split_rule, routing : {"sign", "argmax"}, default "sign"
        As in :class:`MFTree`.
    """

    _parameters: ClassVar[tuple[Param, ...]] = (_KERNEL, _GAMMA, _TAU, _SPLIT_RULE, _ROUTING)

    def __init__(
        self,
        *,
        kernel: Any = "linear",
        gamma: float | None = None,
        tau: int = 0,
        split_rule: str = "sign",
        routing: str = "sign",
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau
        self.split_rule = split_rule
        self.routing = routing

    def _k(self, A: Any, B: Any) -> np.ndarray:
        """The kernel matrix between the rows of ``A`` and of ``B``."""
        if callable(self.kernel):
            return np.asarray(self.kernel(A, B), dtype=np.float64)
        if self.kernel == "linear":
            return np.asarray(linear_kernel(A, B), dtype=np.float64)
        return np.asarray(rbf_kernel(A, B, gamma=self._gamma(A.shape[1])), dtype=np.float64)

    def _validate(self) -> None:
        """The declared parameters; a callable ``kernel`` is taken as is."""
        for p in self._parameters:
            if not (p is _KERNEL and callable(self.kernel)):
                p.validate(getattr(self, p.name), type(self).__name__)

    def fit(self, X: Any, y: Any) -> MFTreeReference:
        """Induce the tree with explicit kernels (see the class docstring)."""
        self._validate()
        X, yi = self._encode(X, y)
        self._X = X
        self._y = yi
        counts = np.bincount(yi, minlength=len(self.classes_)).astype(np.float64)
        # per node (creation index): training rows, routing terms
        self._node_rows: dict[int, np.ndarray] = {}
        self._node_terms: dict[int, dict[str, Any]] = {}
        self._node_info: dict[int, dict[str, Any]] = {}
        tree = _grow(len(self.classes_), int(self.tau), partial(self._split, counts=counts))
        self._finish(tree, counts, self._node_info)
        return self

    def _node_kernel(self, cls: np.ndarray) -> dict[str, Any]:
        """The node's rows, their local class ids, ``Y``, ``D = Y^T K Y`` and the centring terms
        of ``K = H K^ H`` (``rmean``: row means of ``K^``, ``tot``: its mean)."""
        pos = np.full(len(self.classes_), -1, dtype=np.int64)
        pos[cls] = np.arange(len(cls))
        rows = np.flatnonzero(pos[self._y] >= 0)
        ylocal = pos[self._y[rows]]
        K = self._k(self._X[rows], self._X[rows])  # K^, n_node x n_node
        rmean = K.mean(axis=1)
        tot = rmean.mean()
        K -= rmean[:, None]
        K -= rmean[None, :]
        K += tot  # K = H K^ H, in place
        Y = sp.csr_matrix(
            (np.ones(len(rows)), (np.arange(len(rows)), ylocal)), shape=(len(rows), len(cls))
        )
        KY = np.asarray(Y.T @ K).T  # (n_node, c) = K Y (K symmetric)
        del K
        D = np.asarray(Y.T @ KY)
        return {"rows": rows, "ylocal": ylocal, "Y": Y, "D": D, "rmean": rmean, "tot": tot}

    def _split(
        self, node: int, cls: np.ndarray, depth: int, tau: int, *, counts: np.ndarray
    ) -> tuple[Any, Any, Any, str]:
        """The :func:`_grow` callback: Partition2 above depth ``tau``, Algorithm 1 below."""
        nk = counts[cls]
        kn = self._node_kernel(cls)
        D, rows = kn["D"], kn["rows"]
        self._node_rows[node] = rows
        if depth < tau:
            inv = 1.0 / nk

            def sq_dist_to(k: int) -> np.ndarray:
                return np.diag(D) * inv**2 + D[k, k] * inv[k] ** 2 - 2.0 * D[:, k] * inv * inv[k]

            left = partition2(nk, sq_dist_to)
            G = _mean_indicator(left, nk)
            self._node_terms[node] = self._nearest_mean_terms(self._X[rows], kn["ylocal"], G)
            self._node_info[node] = {
                "rule": "partition2",
                "hsic": _hsic(split_trace(D, left), len(rows)),
                "n_examples": len(rows),
            }
            return left, G, None, "approx"
        left, G, lam, kind, rule = _eigen_split(D, float(np.trace(D)), str(self.split_rule))
        self._node_info[node] = {
            "rule": rule,
            "hsic": _hsic(split_trace(D, left), len(rows)),
            "n_examples": len(rows),
        }
        if kind == "mftree":
            terms = {k: kn[k] for k in ("Y", "rmean", "tot")}
            self._node_terms[node] = {"kind": "centred", "G": G, **terms}
        else:
            Gi = _mean_indicator(left, nk)
            self._node_terms[node] = self._nearest_mean_terms(self._X[rows], kn["ylocal"], Gi)
        return left, G, lam, kind

    def _nearest_mean_terms(self, Xn: Any, ylocal: np.ndarray, G: np.ndarray) -> dict[str, Any]:
        """Routing terms of a node that sends an example to the nearer partition mean."""
        n = Xn.shape[0]
        Y = sp.csr_matrix((np.ones(n), (np.arange(n), ylocal)), shape=(n, G.shape[0]))
        P = np.asarray(Y @ G)  # (n, 2): 1/N_L on left rows, 1/N_R on right rows
        K = self._k(Xn, Xn)
        KP = K @ P
        norms = np.einsum("ij,ij->j", P, KP)  # ||m_L||^2, ||m_R||^2
        return {"kind": "means", "P": P, "offset": -0.5 * norms}

    def apply(self, X: Any) -> np.ndarray:
        """Taxonomy id of the leaf each example reaches, by explicit kernel vectors."""
        check_is_fitted(self, "taxonomy_")
        X = check_array(X, accept_sparse="csr", dtype=np.float64)
        node = np.zeros(X.shape[0], dtype=np.int64)
        for j in range(self.n_nodes_):  # taxonomy ids: parents before children
            if self.left_[j] < 0:
                continue
            at = np.flatnonzero(node == j)
            if len(at) == 0:
                continue
            k = self._creation[j]
            rows = self._node_rows[k]
            terms = self._node_terms[k]
            kx = self._k(X[at], self._X[rows])  # (m, n_node) = k^ for each test example
            if terms["kind"] == "centred":
                # k_c(x)_i = k(x, x_i) - mean_j k(x, x_j) - mean_j K^_ij + mean K^
                kc = kx - kx.mean(axis=1, keepdims=True) - terms["rmean"][None, :] + terms["tot"]
                p = np.asarray(terms["Y"].T @ kc.T).T @ terms["G"]  # p = G^T Y^T k_c
                go_left = p[:, 0] >= (0.0 if self.routing == "sign" else p[:, 1])
            else:
                p = kx @ terms["P"] + terms["offset"]  # mean similarity - ||m||^2 / 2
                go_left = p[:, 0] >= p[:, 1]
            node[at] = np.where(go_left, self.left_[j], self.right_[j])
        return node
