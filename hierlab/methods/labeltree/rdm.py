"""RDM: recursive HSIC clustering by dependence maximisation (seed 004's baseline, [30]).

Seed 004 (Section 6): "a recursive version of HSIC clustering by dependence maximization (RDM)
[Song, Smola, Gretton & Borgwardt 2007]: the data instances are partitioned into p groups at
each level of the tree until ... no other classes have more than 5 instances at the leaf node",
with a binary (here: LinearSVC) classifier at each internal node and one-class SVMs at the
leaves (:mod:`hierlab.methods.labeltree.tree`).

The clustering at a node is CLUHSIC (Song et al. 2007, Algorithm 1) with the linear kernel
``K = X X^T`` on the node's ``m`` rows and the label kernel ``L = Pi A Pi^T``, ``A = I_p``
(``p`` unstructured clusters, ``Pi`` the 0/1 assignment): maximise the empirical HSIC of
seed 004's eq. (2)

    HSIC(Pi) = tr(H K H Pi Pi^T) / (m - 1)^2 = sum_k ||S_k||^2 / (m - 1)^2,
    S_k = sum_{i in cluster k} (x_i - mu),

by CLUHSIC's greedy moves: visit the rows in turn and move each to the cluster with the largest
gain ``2 xbar_i^T (S_b - S_a) + 2 ||xbar_i||^2`` (from ``a`` to ``b``), until a sweep moves
nothing. ``S_k = T_k - n_k mu`` with ``T_k`` the clusters' raw sums, so a move costs
``O(nnz(x_i))`` and no dense centred row is formed. A cluster never loses its last row.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import choose, njit
from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_liblinear_scale
from hierlab.methods.labeltree.base import LabelTreeClassifier, seed_of
from hierlab.methods.labeltree.cards import RDM_CARD
from hierlab.methods.labeltree.tree import LabelTree, Split, grow_label_tree

__all__ = ["RDMClassifier", "cluhsic", "hsic_of_partition"]


def _cluhsic_kernel(
    indptr: Any, indices: Any, data: Any, mu: Any, assign: Any, p: int, max_sweeps: int
) -> int:  # pragma: no cover - compiled by numba (or not)
    """CLUHSIC's greedy moves in place on ``assign``; returns the sweeps run."""
    m = assign.shape[0]
    d = mu.shape[0]
    T = np.zeros((p, d))
    cnt = np.zeros(p, dtype=np.int64)
    xmu = np.zeros(m)
    sq = np.zeros(m)
    mumu = 0.0
    for j in range(d):
        mumu += mu[j] * mu[j]
    for i in range(m):
        a = assign[i]
        cnt[a] += 1
        s2 = 0.0
        s1 = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            T[a, indices[k]] += data[k]
            s1 += data[k] * mu[indices[k]]
            s2 += data[k] * data[k]
        xmu[i] = s1
        sq[i] = s2 - 2.0 * s1 + mumu  # ||x_i - mu||^2
    muT = np.zeros(p)
    for a in range(p):
        for j in range(d):
            muT[a] += mu[j] * T[a, j]
    dots = np.zeros(p)
    sweeps = 0
    for sweep in range(max_sweeps):
        sweeps = sweep + 1
        moved = 0
        for i in range(m):
            a = assign[i]
            if cnt[a] <= 1:
                continue
            for b in range(p):  # xbar_i . S_b = x.T_b - n_b x.mu - mu.T_b + n_b ||mu||^2
                s = 0.0
                for k in range(indptr[i], indptr[i + 1]):
                    s += data[k] * T[b, indices[k]]
                dots[b] = s - cnt[b] * xmu[i] - muT[b] + cnt[b] * mumu
            best = a
            gain_best = 1e-12 * (1.0 + sq[i])
            for b in range(p):
                if b != a:
                    # S_a holds x_i: moving gives 2 xbar.(S_b - S_a) + 2 ||xbar||^2
                    gain = 2.0 * (dots[b] - dots[a]) + 2.0 * sq[i]
                    if gain > gain_best:
                        gain_best = gain
                        best = b
            if best != a:
                for k in range(indptr[i], indptr[i + 1]):
                    T[a, indices[k]] -= data[k]
                    T[best, indices[k]] += data[k]
                muT[a] -= xmu[i]
                muT[best] += xmu[i]
                cnt[a] -= 1
                cnt[best] += 1
                assign[i] = best
                moved += 1
        if moved == 0:
            break
    return sweeps


_CLUHSIC = njit(_cluhsic_kernel)


def hsic_of_partition(X: Any, assign: np.ndarray, p: int) -> float:
    """``tr(H K H Pi Pi^T) / (m - 1)^2`` with ``K = X X^T`` (seed 004, eq. 2), as
    ``sum_k ||S_k||^2 / (m - 1)^2`` (no ``m x m`` matrix)."""
    m = X.shape[0]
    Pi = sp.csr_matrix((np.ones(m), (assign, np.arange(m))), shape=(p, m))
    mu = np.asarray(X.mean(axis=0)).ravel()
    S = np.asarray(Pi @ X) if not sp.issparse(X) else (Pi @ X).toarray()
    S = S - np.asarray(Pi.sum(axis=1)).ravel()[:, None] * mu[None, :]
    return float((S * S).sum()) / max(m - 1, 1) ** 2


def cluhsic(
    X: Any, p: int, *, seed: int = 0, max_sweeps: int = 100, use_jit: bool | None = None
) -> tuple[np.ndarray, int]:
    """CLUHSIC with the linear kernel and ``A = I_p`` (module docstring).

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (m, n_features)
    p : int
        Clusters (``p <= m``).
    seed : int
        Seed of the random initial assignment (every cluster non-empty).
    max_sweeps : int

    Returns
    -------
    assign : ndarray of int, shape (m,)
    sweeps : int
    """
    Xc = sp.csr_matrix(X, dtype=np.float64)
    m = Xc.shape[0]
    rng = np.random.default_rng(seed)
    assign = np.concatenate([np.arange(p), rng.integers(0, p, m - p)])
    rng.shuffle(assign)
    mu = np.asarray(Xc.mean(axis=0)).ravel()
    fn = choose(_CLUHSIC, _cluhsic_kernel, use_jit)
    assign = assign.astype(np.int64)
    sweeps = fn(
        Xc.indptr.astype(np.int64), Xc.indices.astype(np.int64), Xc.data, mu, assign, int(p),
        int(max_sweeps),
    )  # fmt: skip
    return assign, int(sweeps)


class RDMClassifier(LabelTreeClassifier):
    """RDM: recursive CLUHSIC clustering of the rows, LinearSVC routers, one-class SVM leaves.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Names the allowed labels (flat when None).
    p : int, default 2
        Clusters per node (seed 004 varies p in {2, 3, 4, 5}).
    min_class_size : int, default 5
        A node is a leaf when at most one of its classes has more rows than this (seed 004's
        stopping rule, 5).
    C : float, default 1.0
        The routers' LinearSVC C.
    nu : float, default 0.5
        The leaves' one-class SVMs' nu.
    max_depth : int, default 30
        No split below this depth.
    random_state : int, optional
        Seed of CLUHSIC's initial assignments.

    Attributes
    ----------
    tree_ : LabelTree
    depth_, n_nodes_, n_leaves_ : int
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param("p", "int", 2, low=2, symbol="p", help="clusters per node",
              note="Rows split into p clusters at each node; seed 004 varies p in {2,3,4,5}."),
        Param("min_class_size", "int", 5, low=1, help="leaf when at most one class has more rows",
              note="Seed 004's stopping rule: no other class with more than 5 rows at a leaf."),
        Param("C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
              help="routers' LinearSVC C", note="LinearSVC C of the internal nodes' routers."),
        Param("nu", "float", 0.5, low=0.0, high=1.0, low_open=True, symbol="nu",
              help="one-class SVMs' nu", note="nu of the leaves' linear one-class SVMs."),
        Param("max_depth", "int", 30, low=1, help="no split below this depth",
              note="A guard: CLUHSIC splits stop at this depth."),
        Param("random_state", "seed", 0, help="seed of CLUHSIC's initial assignments"),
    )  # fmt: skip

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        p: int = 2,
        min_class_size: int = 5,
        C: float = 1.0,
        nu: float = 0.5,
        max_depth: int = 30,
        random_state: int | None = 0,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.p = p
        self.min_class_size = min_class_size
        self.C = C
        self.nu = nu
        self.max_depth = max_depth
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # the splits ignore the labels and a leaf decides among up to a few classes by linear
        # one-class SVMs (hyperplanes against the origin): on centred toy data (scikit-learn's
        # checks) the training accuracy is about 0.7 (3 blobs), below the checks' 0.83
        tags.classifier_tags.poor_score = True
        return tags

    def _grow(self, X: np.ndarray | sp.csr_matrix, yi: np.ndarray) -> LabelTree:
        check_liblinear_scale(X, "RDM")
        seed, p, small = seed_of(self.random_state), int(self.p), int(self.min_class_size)
        count = [0]

        def split(rows: np.ndarray, classes: np.ndarray, depth: int) -> Split | None:
            big = np.bincount(yi[rows]) > small
            if big.sum() <= 1 or depth >= int(self.max_depth) or len(rows) < 2 * p:
                return None
            count[0] += 1
            assign, _ = cluhsic(X[rows], p, seed=seed + 7919 * count[0])
            groups = [rows[assign == k] for k in range(p) if np.any(assign == k)]
            if len(groups) < 2:
                return None
            target = np.empty(len(rows), dtype=np.int64)
            pos = np.searchsorted(rows, np.concatenate(groups))
            target[pos] = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
            return Split(groups, rows, target)

        return grow_label_tree(X, yi, split, C=float(self.C), nu=float(self.nu))

    def _what_ran(self) -> tuple[str, str]:
        return "cluhsic", (
            f"RDM: recursive CLUHSIC (Song et al. 2007, linear kernel) into p = {self.p} "
            "clusters per node, LinearSVC routers, linear one-class SVMs at the leaves"
        )


register(
    "rdm",
    RDMClassifier,
    card=RDM_CARD,
    seed="baseline",
    summary="RDM: recursive HSIC clustering (CLUHSIC) of the rows, one-class SVMs at the leaves",
    paper={"p": 2, "min_class_size": 5},
)
