"""MF-Tree: taxonomy induction by HSIC maximisation (seed 004, Algorithms 1-3).

MF-Tree organises ``c`` classes into a binary tree. At a node holding the training examples of
classes ``Y`` (an ``n x c`` 0/1 indicator), it forms the class similarity matrix

    D = Y^T K Y,        K = H K^ H  (the kernel centred on the node's examples),

takes the top two eigenvectors ``G = [g1, g2]`` of ``D`` (the spectral relaxation of
``max tr(G^T D G)``, eq. 12) and sends every class, with all its examples, to one of two
children (Algorithm 1, ``Partition``), recursively until each leaf holds one class. A test example
descends by ``p = G^T Y^T k^`` at every internal node (Algorithm 2).

**Sign rule (errata).** Eigenvector signs are arbitrary, so the printed rule "class ``k`` goes
to ``argmax_j G_kj``" is not well defined. hierlab uses the rule below, identical in the fast
path and in the explicit-kernel reference:

* Because ``K`` is centred, ``K 1 = 0`` and so ``D 1 = 0``: every eigenvector of a positive
  eigenvalue is orthogonal to ``1`` and has entries of both signs. For a 2-partition with
  co-association ``B`` and signs ``s`` (``+1`` left, ``-1`` right), ``D 1 = 0`` gives exactly
  ``tr(D B) = s^T D s / 2``; the spectral relaxation of ``max_s s^T D s`` is ``g1``, which we
  round by its sign.
* ``g1`` (and ``g2``) are oriented so that their entry of largest magnitude is positive (the
  first one within a relative 1e-6 on ties). Class ``k`` goes **left iff** ``g1_k >= 0``, else
  right. Since ``g1 ⊥ 1`` and ``g1 != 0``, both children are non-empty.
* Fallback, documented: when ``lambda_1 <= 1e-12 * trace(D)`` (every class has the same
  mean, ``D = 0``) or one side would be empty, the classes are split into halves in class
  order (first ``ceil(c/2)`` left).
* Routing uses the same first component: ``p_1 = g1^T Y^T k_c(x)`` with ``k_c`` the centred
  kernel vector between ``x`` and the node's examples; go left iff ``p_1 >= 0``. The mean of
  ``p`` over the training examples of class ``k`` is ``(lambda_1 g1_k, lambda_2 g2_k) / n_k``,
  so the routing agrees with the partition of the class means. ``G`` (both columns) is kept.

**Fast linear path (errata).** With a linear kernel, ``Y^T H X = C S`` where ``S = Y^T X`` holds
the class sums (``c x d``), ``n`` the class sizes, ``N = 1^T n`` and ``C = I - n 1^T / N``; so

    D = (Y^T H X)(Y^T H X)^T = C (S S^T) C^T.

The class-sum Gram matrix ``S S^T`` is formed once (for the MF-Tree part below depth ``tau``:
once per subtree); every node's ``D`` is then ``O(c_node^2)`` from a sub-block. Routing is
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
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.metrics.pairwise import linear_kernel, rbf_kernel
from sklearn.utils.validation import check_array, check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "MFTree",
    "MFTreeReference",
    "build_binary_taxonomy",
    "mftree_partition",
    "partition2",
]

_KERNELS = ("linear", "rbf")
_APPROX = ("nystroem", "rff")
_DEGENERATE = 1e-12
_ROUTE_BUDGET = 1 << 22  # entries of densified node vectors per group (sparse routing)
_FEW_NODES = 16  # sparse routing: up to this many nodes in a level, one mat-vec per node


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
    left = np.zeros(c, dtype=bool)
    left[: (c + 1) // 2] = True
    return left


def mftree_partition(
    D: np.ndarray, scale: float | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Partition of Algorithm 1 with the documented sign rule.

    Parameters
    ----------
    D : ndarray of shape (c, c)
        ``Y^T K Y`` with ``K`` centred on the node's examples (symmetric PSD, ``D 1 = 0``).
    scale : float, optional
        Reference magnitude for the degeneracy test (default ``trace(D)``).

    Returns
    -------
    left : ndarray of bool, shape (c,)
        True for the classes sent to the left child.
    G : ndarray of shape (c, 2)
        ``[g1, g2]``, the eigenvectors of the two largest eigenvalues, each oriented so its
        largest-magnitude entry is positive (for ``c = 2`` both eigenvectors of ``D``).
    eigenvalues : ndarray of shape (2,)
        ``lambda_1 >= lambda_2``.
    kind : {"mftree", "fallback"}
        ``"fallback"`` when the halves rule was used.
    """
    c = D.shape[0]
    if c < 2:
        raise DataError("a node needs at least two classes to be partitioned")
    D = (D + D.T) / 2.0
    if c <= 64:  # small: a full decomposition has the least overhead
        w, V = np.linalg.eigh(D)
        w, V = w[-2:], V[:, -2:]
    else:
        w, V = sla.eigh(D, subset_by_index=[c - 2, c - 1])
    g1 = _orient(V[:, 1])
    g2 = _orient(V[:, 0])
    G = np.column_stack([g1, g2])
    lam = np.array([w[1], w[0]])
    ref = float(np.trace(D)) if scale is None else float(scale)
    left = g1 >= 0
    if lam[0] <= _DEGENERATE * max(ref, np.finfo(float).tiny) or left.all() or not left.any():
        return _halves(c), G, lam, "fallback"
    return left, G, lam, "mftree"


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


# ---------------------------------------------------------------------------- base
class _MFTreeBase(BaseEstimator):
    """Shared fitting glue, label handling and attributes of MF-Tree and its reference."""

    kernel: str
    gamma: float | None
    tau: int

    def _check_params(self) -> None:
        if self.kernel not in _KERNELS:
            raise ParameterError(f"kernel must be one of {_KERNELS}, got {self.kernel!r}")
        if self.gamma is not None and not float(self.gamma) > 0:
            raise ParameterError(
                f"gamma must be > 0 (or None for 1/n_features), got {self.gamma!r}"
            )
        if int(self.tau) != self.tau or self.tau < 0:
            raise ParameterError(f"tau must be an integer >= 0, got {self.tau!r}")

    def _gamma(self, n_features: int) -> float:
        return 1.0 / n_features if self.gamma is None else float(self.gamma)

    def _encode(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
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

    def _finish(self, tree: _Tree, counts: np.ndarray) -> None:
        parent = np.asarray(tree.parent, dtype=np.int64)
        leaf_class = np.asarray(tree.leaf_class, dtype=np.int64)
        tax, order = build_binary_taxonomy(
            parent, leaf_class, np.asarray([str(c) for c in self.classes_], dtype=object), tree.code
        )
        n = len(parent)
        inv = np.empty(n, dtype=np.int64)
        inv[order] = np.arange(n)  # taxonomy id -> creation index
        self.taxonomy_ = tax
        self._order = order
        self._creation = inv
        self.left_ = np.where(
            np.asarray(tree.left)[inv] >= 0, order[np.asarray(tree.left)[inv]], -1
        )
        self.right_ = np.where(
            np.asarray(tree.right)[inv] >= 0, order[np.asarray(tree.right)[inv]], -1
        )
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
    n_components : int, default 300
        Dimension of the RBF feature map.
    kernel_approximation : {"nystroem", "rff"}, default "nystroem"
        ``Nystroem`` or random Fourier features (``RBFSampler``).
    random_state : int, optional
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

    def __init__(
        self,
        kernel: str = "linear",
        gamma: float | None = None,
        tau: int = 0,
        n_components: int = 300,
        kernel_approximation: str = "nystroem",
        random_state: int | None = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau
        self.n_components = n_components
        self.kernel_approximation = kernel_approximation
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _map(self, X: Any) -> Any:
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
        self._check_params()
        if self.kernel_approximation not in _APPROX:
            raise ParameterError(
                f"kernel_approximation must be one of {_APPROX}, got {self.kernel_approximation!r}"
            )
        X, yi = self._encode(X, y)
        self.feature_map_: Nystroem | RBFSampler | None = None
        if self.kernel == "rbf":
            gamma = self._gamma(X.shape[1])
            if self.kernel_approximation == "nystroem":
                fm: Any = Nystroem(
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
            X = fm.transform(X)
        c = len(self.classes_)
        n = X.shape[0]
        Yind = sp.csr_matrix((np.ones(n), (yi, np.arange(n))), shape=(c, n))
        counts = np.bincount(yi, minlength=c).astype(np.float64)
        # Class sums S = Y^T X (c x d). Dense data are first centred on the global mean (every
        # node's D and routing are translation invariant; this only improves conditioning).
        if sp.issparse(X):
            self._shift = None
            S: Any = sp.csr_matrix(Yind @ X)
        else:
            self._shift = X.mean(axis=0)
            S = np.asarray(Yind @ (X - self._shift))
        gram_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        def gram_for(block_root: int, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            if block_root not in gram_cache:
                Sb = S[classes]
                Gb = Sb @ Sb.T
                Gb = Gb.toarray() if sp.issparse(Gb) else np.asarray(Gb)
                pos = np.full(c, -1, dtype=np.int64)
                pos[classes] = np.arange(len(classes))
                gram_cache[block_root] = (Gb, pos)
            return gram_cache[block_root]

        block_of: dict[int, int] = {}  # MF-Tree node -> root of its Gram block
        tree = _Tree()
        routing: dict[int, tuple[np.ndarray, float]] = {}  # node -> (u over node classes, b)

        def sq_norms(classes: np.ndarray) -> np.ndarray:
            Sc = S[classes]
            if sp.issparse(Sc):
                return np.asarray(Sc.multiply(Sc).sum(axis=1)).ravel()
            return np.einsum("ij,ij->i", Sc, Sc)

        def split(node: int, cls: np.ndarray, depth: int, tau: int) -> tuple[Any, Any, Any, str]:
            nk = counts[cls]
            if depth < tau:
                # Partition2 on class means m_k = S_k / n_k.
                Sc = S[cls]
                norms = sq_norms(cls) / nk**2

                def sq_dist_to(k: int) -> np.ndarray:
                    dots = Sc @ (Sc[k].T if sp.issparse(Sc) else Sc[k])
                    dots = np.asarray(dots.toarray() if sp.issparse(dots) else dots).ravel()
                    return norms + norms[k] - 2.0 * dots / (nk * nk[k])

                left = partition2(nk, sq_dist_to)
                NL, NR = nk[left].sum(), nk[~left].sum()
                G = np.column_stack([np.where(left, 1.0 / NL, 0.0), np.where(left, 0.0, 1.0 / NR)])
                u = G[:, 0] - G[:, 1]  # w = m_L - m_R = u^T S
                uL, uR = G[:, 0] * left, G[:, 1] * ~left
                # ||m_L||^2 - ||m_R||^2 from the class sums
                SL = uL @ Sc if not sp.issparse(Sc) else np.asarray(Sc.T @ uL).ravel()
                SR = uR @ Sc if not sp.issparse(Sc) else np.asarray(Sc.T @ uR).ravel()
                b = -0.5 * (float(SL @ SL) - float(SR @ SR))
                routing[node] = (u, b)
                return left, G, None, "approx"
            # One Gram block per MF-Tree subtree: the root (tau = 0) or each node at depth tau.
            parent = tree.parent[node]
            block_of[node] = block_of[parent] if parent in block_of else node
            Gb, pos = gram_for(block_of[node], tree.classes[block_of[node]])
            idx = pos[cls]
            gram = Gb[idx][:, idx]
            N = nk.sum()
            # D = C gram C^T with C = I - n 1^T / N, in O(c^2): rank-one corrections
            r = gram.sum(axis=1)  # gram 1
            tot = float(r.sum())  # 1^T gram 1
            a = nk / N
            D = gram - a[:, None] * r[None, :] - r[:, None] * a[None, :] + tot * (a[:, None] * a)
            left, G, lam, kind = mftree_partition(D, scale=float(np.trace(D)))
            if kind == "mftree":
                g = G[:, 0]
                u = g - float(nk @ g) / N  # C^T g1: w = u^T S, p_1 = w . (x - mu)
                b = -float(u @ r) / N  # -w . mu = -u^T gram 1 / N
            else:  # halves: route to the nearer partition mean, as for Partition2
                NL, NR = nk[left].sum(), nk[~left].sum()
                uL = np.where(left, 1.0 / NL, 0.0)
                uR = np.where(left, 0.0, 1.0 / NR)
                u = uL - uR
                b = -0.5 * float(uL @ gram @ uL - uR @ gram @ uR)
            routing[node] = (u, b)
            return left, G, lam, kind

        _grow(c, int(self.tau), split, tree)
        self._finish(tree, counts)
        # Stack the routing vectors: coef = U @ S with U sparse (n_nodes x c).
        n_nodes = len(tree.parent)
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
            coef = sp.csr_matrix(coef)
        else:
            coef = np.asarray(coef)
            # undo the global shift: w . (x - shift) + b = w . x + (b - w . shift)
            intercept = intercept - coef @ self._shift
        self.coef_ = coef
        self.intercept_ = intercept
        return self

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
        n = Z.shape[0]
        node = np.zeros(n, dtype=np.int64)
        left, right = self.left_, self.right_
        coef, b = self.coef_, self.intercept_
        dense_coef = not sp.issparse(coef)
        Zs = sp.csr_matrix(Z) if sp.issparse(Z) else None
        if Zs is None and not dense_coef:
            coef = coef.toarray()
            dense_coef = True
        if Zs is None:
            # Dense: blocks of rows small enough to stay in cache while they descend; every
            # level is one gather of the block's rows and their nodes' vectors and an einsum.
            Zd = np.asarray(Z)
            block = int(np.clip(2**18 // max(Zd.shape[1], 1), 64, 8192))
            for s0 in range(0, n, block):
                Zb = Zd[s0 : s0 + block]
                nb = node[s0 : s0 + block]
                act = np.flatnonzero(left[nb] >= 0)
                while len(act):
                    cur = nb[act]
                    Za = Zb if len(act) == len(Zb) else Zb[act]  # no copy while all descend
                    score = np.einsum("ij,ij->i", Za, coef[cur]) + b[cur]
                    nb[act] = np.where(score >= 0, left[cur], right[cur])
                    act = act[left[nb[act]] >= 0]
            return node
        # Sparse: per level, gather for every stored entry (i, k) of the active rows the weight
        # coef[node_i, k] from the level's nodes' vectors (densified in groups of at most
        # ``budget`` entries), then sum per row: O(nnz) per level, no loop over nodes.
        d = coef.shape[1]
        budget = _ROUTE_BUDGET
        active = np.flatnonzero(left[node] >= 0)
        while len(active):
            cur = node[active]
            uniq, inv = np.unique(cur, return_inverse=True)
            inv = inv.ravel()
            score = np.empty(len(active))
            if len(uniq) <= _FEW_NODES:  # few nodes: one sparse mat-vec per node is cheaper
                order = np.argsort(inv, kind="stable")
                bounds = np.append(np.searchsorted(inv[order], np.arange(len(uniq))), len(inv))
                for q, j in enumerate(uniq):
                    sel_q = order[bounds[q] : bounds[q + 1]]
                    if dense_coef:
                        wj = coef[j]
                    else:
                        wj = np.zeros(d)
                        lo, hi = coef.indptr[j], coef.indptr[j + 1]
                        wj[coef.indices[lo:hi]] = coef.data[lo:hi]
                    rows_q = Zs if len(sel_q) == n else Zs[active[sel_q]]
                    score[sel_q] = rows_q @ wj
                score += b[cur]
                node[active] = np.where(score >= 0, left[cur], right[cur])
                active = active[left[node[active]] >= 0]
                continue
            per = max(1, budget // max(d, 1))
            for g0 in range(0, len(uniq), per):
                grp = uniq[g0 : g0 + per]
                sel = np.flatnonzero((inv >= g0) & (inv < g0 + per)) if len(uniq) > per else None
                rows_idx = active if sel is None else active[sel]
                Za = Zs if len(rows_idx) == n else Zs[rows_idx]
                Wg = coef[grp] if dense_coef else coef[grp].toarray()
                loc = inv - g0 if sel is None else inv[sel] - g0
                r = np.repeat(np.arange(Za.shape[0]), np.diff(Za.indptr))
                vals = Za.data * Wg[loc[r], Za.indices]
                sc = np.bincount(r, weights=vals, minlength=Za.shape[0])
                if sel is None:
                    score[:] = sc
                else:
                    score[sel] = sc
            score += b[cur]
            node[active] = np.where(score >= 0, left[cur], right[cur])
            active = active[left[node[active]] >= 0]
        return node

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """0/1 indicator of the nodes visited, shape (n_samples, n_nodes)."""
        leaves = self.apply(X)
        A = self.taxonomy_.ancestor_matrix[leaves].tocsr()
        return A.astype(np.int8)


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
    """

    def __init__(self, kernel: Any = "linear", gamma: float | None = None, tau: int = 0) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.tau = tau

    def _k(self, A: Any, B: Any) -> np.ndarray:
        if callable(self.kernel):
            return np.asarray(self.kernel(A, B), dtype=np.float64)
        if self.kernel == "linear":
            return np.asarray(linear_kernel(A, B), dtype=np.float64)
        return np.asarray(rbf_kernel(A, B, gamma=self._gamma(A.shape[1])), dtype=np.float64)

    def fit(self, X: Any, y: Any) -> MFTreeReference:
        """Induce the tree with explicit kernels (see the class docstring)."""
        if not callable(self.kernel):
            self._check_params()
        X, yi = self._encode(X, y)
        self._X = X
        self._y = yi
        c = len(self.classes_)
        counts = np.bincount(yi, minlength=c).astype(np.float64)
        # per node (creation index): training rows, routing terms
        self._node_rows: dict[int, np.ndarray] = {}
        self._node_terms: dict[int, dict[str, Any]] = {}

        def split(node: int, cls: np.ndarray, depth: int, tau: int) -> tuple[Any, Any, Any, str]:
            pos = np.full(c, -1, dtype=np.int64)
            pos[cls] = np.arange(len(cls))
            rows = np.flatnonzero(pos[yi] >= 0)
            ylocal = pos[yi[rows]]
            K = self._k(X[rows], X[rows])  # K^, n_node x n_node
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
            nk = counts[cls]
            self._node_rows[node] = rows
            if depth < tau:
                inv = 1.0 / nk

                def sq_dist_to(k: int) -> np.ndarray:
                    return (
                        np.diag(D) * inv**2 + D[k, k] * inv[k] ** 2 - 2.0 * D[:, k] * inv * inv[k]
                    )

                left = partition2(nk, sq_dist_to)
                NL, NR = nk[left].sum(), nk[~left].sum()
                G = np.column_stack([np.where(left, 1.0 / NL, 0.0), np.where(left, 0.0, 1.0 / NR)])
                self._node_terms[node] = self._nearest_mean_terms(X[rows], ylocal, G)
                return left, G, None, "approx"
            left, G, lam, kind = mftree_partition(D, scale=float(np.trace(D)))
            if kind == "mftree":
                self._node_terms[node] = {
                    "kind": "centred",
                    "G": G,
                    "Y": Y,
                    "rmean": rmean,
                    "tot": tot,
                }
            else:
                NL, NR = nk[left].sum(), nk[~left].sum()
                Gi = np.column_stack([np.where(left, 1.0 / NL, 0.0), np.where(left, 0.0, 1.0 / NR)])
                self._node_terms[node] = self._nearest_mean_terms(X[rows], ylocal, Gi)
            return left, G, lam, kind

        tree = _grow(c, int(self.tau), split)
        self._finish(tree, counts)
        return self

    def _nearest_mean_terms(self, Xn: Any, ylocal: np.ndarray, G: np.ndarray) -> dict[str, Any]:
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
                go_left = p[:, 0] >= 0
            else:
                p = kx @ terms["P"] + terms["offset"]  # mean similarity - ||m||^2 / 2
                go_left = p[:, 0] >= p[:, 1]
            node[at] = np.where(go_left, self.left_[j], self.right_[j])
        return node
