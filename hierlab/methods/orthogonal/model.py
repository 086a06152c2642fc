"""Scoring models and loss-augmented inference for seed 000 (orthogonal transfer) and its baselines.

A model knows how scores are formed from a weight matrix ``W`` of shape (n_nodes, n_features)
(one row per node, the root's row unused) and how to find each example's most violated
constraint. Everything is vectorised over examples: the scores are one sparse-dense product
``S = X @ W.T`` of shape (n_samples, n_nodes); the loss-augmented inference is a handful of
gathers over index arrays precomputed from the taxonomy; the subgradient with respect to ``S``
is a sparse matrix ``Gamma`` of shape (n_samples, n_nodes) with a few entries per row, and the
subgradient with respect to ``W`` is the one product ``Gamma^T X`` (:meth:`backward`).

Models
------
:class:`RecursiveModel`
    The recursive classifier (eq. 1) and the sibling hinge of eq. (7): for example ``k``,
    ``max(0, max_{i in A+(y_k), j in S(i)} 1 - w_i^T x_k + w_j^T x_k)`` (ORTHOGNL, TRANSFER).
:class:`LocalModel`
    HIERMULT: one Crammer-Singer problem per internal node ``p`` among ``C(p)`` over the
    examples labelled strictly below ``p`` (their losses summed, scikit-learn's C). The
    problems are independent, so their sum is one objective with one block per internal node.
:class:`FlatModel`
    The flat classifier (eq. 2) over a candidate set with slack rescaling by ``Delta``:
    FLATMULT (Crammer-Singer over the leaves, eq. 12) and TREELOSS (path sums ``w_y = sum_{j in
    A+(y)} u_j`` of eq. 3, ``Delta`` = half the tree distance; seed 000 Section 5 and errata).

Labels at internal nodes are allowed in training: for the recursive models an internal label
``y`` constrains the nodes of ``A+(y)`` only (as eq. 4 reads); for the flat models the labelled
internal nodes join the candidate set.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import jit_enabled, njit
from hierlab.core.losses import delta as label_loss
from hierlab.core.losses import get_loss
from hierlab.core.model import DualBlocks, LinearModel, per_label_blocks, product, sparse_table
from hierlab.core.taxonomy import Taxonomy
from hierlab.solvers.bcfw_flat import (
    FlatBlocks,
    chain_most_violated,
    chain_parents,
    chain_path_sums,
)

__all__ = [
    "FlatModel",
    "LocalModel",
    "RecursiveModel",
    "SiblingIndex",
    "recursive_predict",
    "sibling_rows",
]

Array = np.ndarray
Matrix = Any  # ndarray or csr_matrix of shape (n_samples, n_features)


class SiblingIndex:
    """Index arrays for sibling maxima and paths of a tree (precomputed once).

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)

    Attributes
    ----------
    order : ndarray of int, shape (n_nodes,)
        Node ids grouped by parent (the root forms its own group).
    starts : ndarray of int, shape (n_groups,)
        Start of each sibling group in ``order``.
    group_sorted : ndarray of int, shape (n_nodes,)
        Group of each position of ``order``.
    path_pad : ndarray of int, shape (n_nodes, max_depth)
        Row ``i`` lists ``A+(i)`` without the root, padded with 0 (the root, which has no
        siblings and so never carries a constraint).
    children_pad : ndarray of int, shape (n_nodes, max_children)
        Children of each node padded with -1.
    """

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        m = taxonomy.n_nodes
        par = np.asarray(taxonomy.parent)
        self.order = np.argsort(par, kind="stable")
        key = par[self.order]
        self.starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        self.group_sorted = np.cumsum(np.r_[0, (key[1:] != key[:-1]).astype(np.int64)])
        self.inverse = np.empty(m, dtype=np.int64)
        self.inverse[self.order] = np.arange(m)
        D = max(int(taxonomy.max_depth), 1)
        A = taxonomy.ancestor_matrix
        path = np.zeros((m, D), dtype=np.int64)
        for i in range(m):
            row = A.indices[A.indptr[i] : A.indptr[i + 1]]
            row = row[row != 0]
            path[i, : len(row)] = row
        self.path_pad = path
        nc = np.asarray(taxonomy.n_children)
        C = np.full((m, max(int(nc.max()), 1)), -1, dtype=np.int64)
        for p in np.flatnonzero(nc):
            kids = taxonomy.children(int(p))
            C[p, : len(kids)] = kids
        self.children_pad = C

    def rivals(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Best sibling score of every node: ``R[k, i] = max_{j in S(i)} S[k, j]``.

        Parameters
        ----------
        S : ndarray of shape (n_samples, n_nodes)

        Returns
        -------
        R : ndarray of shape (n_samples, n_nodes)
            ``-inf`` for nodes without siblings (the root, only children).
        R_idx : ndarray of int, shape (n_samples, n_nodes)
            The sibling attaining ``R`` (meaningless where ``R`` is ``-inf``).
        """
        m = S.shape[1]
        So = S[:, self.order]
        g = self.group_sorted
        pos = np.arange(m)
        M1 = np.maximum.reduceat(So, self.starts, axis=1)
        is_max = So == M1[:, g]
        i1 = np.minimum.reduceat(np.where(is_max, pos, m), self.starts, axis=1)
        first = pos[None, :] == i1[:, g]
        So2 = np.where(first, -np.inf, So)
        M2 = np.maximum.reduceat(So2, self.starts, axis=1)
        hit2 = (So2 == M2[:, g]) & ~first
        i2 = np.minimum.reduceat(np.where(hit2, pos, m), self.starts, axis=1)
        i2 = np.minimum(i2, m - 1)
        R_sorted = np.where(first, M2[:, g], M1[:, g])
        idx_sorted = np.where(first, i2[:, g], i1[:, g])
        R = R_sorted[:, self.inverse]
        R_idx = self.order[idx_sorted[:, self.inverse]]
        return R, R_idx

    def violations(self, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``V[k, i] = 1 - S[k, i] + max_{j in S(i)} S[k, j]`` and the arg-max sibling."""
        R, R_idx = self.rivals(S)
        return 1.0 - S + R, R_idx

    def most_violated(self, S: np.ndarray, y: np.ndarray) -> tuple[Array, Array, Array]:
        """The most violated sibling constraint of every example (loss-augmented inference).

        ``(i(k), j(k)) = argmax_{i in A+(y_k), j in S(i)} 1 - S[k, i] + S[k, j]`` (seed 000,
        Section 4.1).

        Parameters
        ----------
        S : ndarray of shape (n_samples, n_nodes)
        y : ndarray of int, shape (n_samples,)

        Returns
        -------
        value : ndarray of shape (n_samples,)
            The largest ``1 - s_i + s_j`` (``-inf`` when no node of the path has a sibling).
        i, j : ndarray of int, shape (n_samples,)
        """
        P = self.path_pad[y]
        rows = np.arange(len(y))
        vals, J = self.path_violations(S, P)
        a = np.argmax(vals, axis=1)
        return vals[rows, a], P[rows, a], J[rows, a]

    def path_violations(
        self, S: np.ndarray, P: np.ndarray, use_jit: bool | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``V[k, P[k, d]]`` and its arg-max sibling for the nodes ``P`` of each example only.

        Parameters
        ----------
        S : ndarray of shape (n_samples, n_nodes)
        P : ndarray of int, shape (n_samples, D)
            Nodes per example (e.g. the rows of :attr:`path_pad`; the root's 0 gives ``-inf``).
        use_jit : bool, optional
            The compiled loop (numba: the sibling groups of the ``D`` nodes only, ``O(n D
            max_siblings)`` instead of the ``O(n m)`` passes of :meth:`violations`; the same
            numbers, ties broken alike); None: :func:`hierlab.core.jit.jit_enabled`.

        Returns
        -------
        vals : ndarray of shape (n_samples, D)
            ``1 - S[k, i] + max_{j in S(i)} S[k, j]`` for ``i = P[k, d]`` (``-inf`` without
            siblings).
        J : ndarray of int, shape (n_samples, D)
            The first sibling (in id order) attaining the maximum.
        """
        if (jit_enabled() if use_jit is None else use_jit) and _PATH_RIVALS is not None:
            order, starts = self.order, self.starts
            grp = np.empty(len(order), dtype=np.int64)
            grp[order] = self.group_sorted
            ptr = np.r_[starts, len(order)].astype(np.int64)
            S = np.ascontiguousarray(S, dtype=np.float64)
            vals = np.empty(P.shape)
            J = np.empty(P.shape, dtype=np.int64)
            _PATH_RIVALS(S, np.ascontiguousarray(P, dtype=np.int64), ptr, order, grp, vals, J)
            return vals, J
        V, R_idx = self.violations(S)
        return np.take_along_axis(V, P, axis=1), np.take_along_axis(R_idx, P, axis=1)


def _path_rivals(
    S: np.ndarray,
    P: np.ndarray,
    ptr: np.ndarray,
    order: np.ndarray,
    grp: np.ndarray,
    vals: np.ndarray,
    J: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba (its numpy form: SiblingIndex.violations)
    """``vals[k, d] = 1 - S[k, i] + max_{j in S(i)} S[k, j]``, ``J[k, d]`` the first such ``j``
    (in the order of ``order``), for ``i = P[k, d]``; sibling group ``g`` of node ``i`` is
    ``grp[i]``, its nodes ``order[ptr[g]:ptr[g + 1]]``. NaN scores propagate."""
    n, D = P.shape
    for k in range(n):
        for d in range(D):
            i = P[k, d]
            g = grp[i]
            best = -np.inf
            bj = i
            for e in range(ptr[g], ptr[g + 1]):
                j = order[e]
                if j == i:
                    continue
                s = S[k, j]
                if s > best or s != s:
                    best = s
                    bj = j
                    if s != s:
                        break
            vals[k, d] = (1.0 - S[k, i]) + best
            J[k, d] = bj


#: the compiled loop (None without numba: :meth:`SiblingIndex.violations` then runs)
_PATH_RIVALS: Any = njit(_path_rivals)


def recursive_predict(index: SiblingIndex, S: np.ndarray) -> np.ndarray:
    """The recursive classifier of eq. (1), vectorised over examples (one pass per level).

    Parameters
    ----------
    index : SiblingIndex
    S : ndarray of shape (n_samples, n_nodes)
        ``S[k, i] = w_i^T x_k``.

    Returns
    -------
    ndarray of int, shape (n_samples,)
        A leaf per example.
    """
    n = S.shape[0]
    at = np.zeros(n, dtype=np.int64)
    C = index.children_pad
    leaf = np.asarray(index.taxonomy.is_leaf)
    for _ in range(int(index.taxonomy.max_depth)):
        rows = np.flatnonzero(~leaf[at])
        if len(rows) == 0:
            break
        cand = C[at[rows]]
        vals = np.where(cand >= 0, S[rows[:, None], np.maximum(cand, 0)], -np.inf)
        at[rows] = cand[np.arange(len(rows)), np.argmax(vals, axis=1)]
    return at


def sibling_rows(i: int, siblings: Any, m: int) -> sp.csr_matrix:
    """The directions ``U = e_i - e_j`` of the sibling constraints of node ``i``, one row per
    ``j in siblings``: sparse, shape (len(siblings), m) (seed 000, eq. 7)."""
    sib = np.asarray(siblings, dtype=np.int64)
    r = np.arange(len(sib))
    return sp.csr_matrix(
        (
            np.r_[np.ones(len(sib)), -np.ones(len(sib))],
            (np.r_[r, r], np.r_[np.full(len(sib), i), sib]),
        ),
        shape=(len(sib), m),
    )


class _SiblingModel(LinearModel):
    """A model over the sibling constraints of a tree, with recursive prediction (eq. 1).

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)
    """

    def __init__(self, taxonomy: Taxonomy) -> None:
        self._init_rows(taxonomy)
        self.index = SiblingIndex(taxonomy)

    def predict(self, S: np.ndarray) -> np.ndarray:
        """Recursive prediction (eq. 1) from node scores, shape (n_samples,)."""
        return recursive_predict(self.index, S)


class RecursiveModel(_SiblingModel):
    """Recursive classifier (eq. 1) with the sibling hinge of eq. (7) (ORTHOGNL, TRANSFER).

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)
    """

    def loss(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Summed sibling hinge and its subgradient with respect to ``S``.

        Returns
        -------
        block_loss : ndarray of shape (1,)
            ``sum_k max(0, max_{i in A+(y_k), j in S(i)} 1 - s_ki + s_kj)``.
        Gamma : csr_matrix of shape (n_samples, n_nodes)
            ``-1`` at ``(k, i(k))``, ``+1`` at ``(k, j(k))`` for every violating example.
        """
        val, i, j = self.index.most_violated(S, y)
        pos = val > 0
        loss = np.where(pos, val, 0.0)
        k = np.flatnonzero(pos)
        rows = np.r_[k, k]
        cols = np.r_[i[k], j[k]]
        data = np.r_[-np.ones(len(k)), np.ones(len(k))]
        G = sp.csr_matrix((data, (rows, cols)), shape=S.shape)
        return np.array([loss.sum()]), G

    def dual_blocks(self, y: np.ndarray) -> DualBlocks:
        """One block per example: labels ``(i, j)``, ``i in A+(y)`` (root excluded), ``j in
        S(i)``, with ``L = 1``, ``U = e_i - e_j`` and weight 1 (eq. 7, losses summed)."""
        tax, m = self.taxonomy, self.n_rows

        def make(v: int) -> tuple[Array, Array]:
            path = self.index.path_pad[v]
            U = sp.vstack(
                [sibling_rows(int(i), tax.siblings(int(i)), m) for i in path[path > 0]]
                or [sp.csr_matrix((0, m))],
                format="csr",
            )
            return sparse_table(U, np.ones(U.shape[0]), 1.0)

        return per_label_blocks(y, make)


class LocalModel(_SiblingModel):
    """HIERMULT: a Crammer-Singer problem per internal node, recursive prediction.

    The objective of node ``p`` is ``1/2 sum_{c in C(p)} ||w_c||^2 + C sum_{k: y_k in D(p)}
    max(0, max_{c' in C(p), c' != c_k} 1 - w_{c_k}^T x_k + w_{c'}^T x_k)`` with ``c_k`` the child
    of ``p`` on the path to ``y_k`` (seed 000, Section 5; the paper divides by the number ``N_p``
    of such examples: ``node_weight = N / N_p`` with ``C = 1/N`` gives the paper's ``1/N_p``;
    by default every weight is 1 and the losses are summed as in scikit-learn's C).
    The sum over ``p`` is separable: block ``b`` holds the children of the ``b``-th internal node.

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)
    node_weight : ndarray of shape (n_internal,), optional
        Multiplier of node ``p``'s summed loss, in the order of :attr:`block_nodes`
        (None: all 1).
    """

    def __init__(self, taxonomy: Taxonomy, node_weight: np.ndarray | None = None) -> None:
        super().__init__(taxonomy)
        internal = np.asarray(taxonomy.internal_nodes)
        self.n_blocks = len(internal)
        self.block_nodes = internal
        par = np.asarray(taxonomy.parent)
        self.block_of_row = np.full(self.n_rows, -1, dtype=np.int64)
        self.block_of_row[1:] = np.searchsorted(internal, par[1:])
        w = np.ones(self.n_blocks) if node_weight is None else np.asarray(node_weight, float)
        if w.shape != (self.n_blocks,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"node_weight must be {self.n_blocks} finite numbers >= 0")
        self.node_weight = w

    def node_counts(self, y: np.ndarray) -> np.ndarray:
        """``N_p``: the examples labelled strictly below each internal node ``p``, shape
        (n_internal,) in the order of :attr:`block_nodes`."""
        P = self.index.path_pad[np.asarray(y, dtype=np.int64)]
        nodes = P[P > 0]
        return np.bincount(self.block_of_row[nodes], minlength=self.n_blocks)[: self.n_blocks]

    def loss(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Per-node summed Crammer-Singer hinge and the subgradient with respect to ``S``.

        Returns
        -------
        block_loss : ndarray of shape (n_internal,)
            ``node_weight[p] * sum_k hinge_p(k)`` over the examples below each internal node
            ``p``.
        Gamma : csr_matrix of shape (n_samples, n_nodes)
        """
        P = self.index.path_pad[y]
        V, R_idx = self.index.path_violations(S, P)
        valid = P > 0
        k, d = np.nonzero(valid)
        i = P[k, d]
        h = V[k, d]
        pos = h > 0
        k, d, i, h = k[pos], d[pos], i[pos], h[pos]
        j = R_idx[k, d]
        b = self.block_of_row[i]
        wk = self.node_weight[b]
        block = np.bincount(b, weights=h * wk, minlength=self.n_blocks)
        rows = np.r_[k, k]
        cols = np.r_[i, j]
        data = np.r_[-wk, wk]
        G = sp.csr_matrix((data, (rows, cols)), shape=S.shape)
        return block, G

    def dual_blocks(self, y: np.ndarray) -> DualBlocks:
        """One block per example and node ``i`` of ``A+(y)`` with siblings: labels ``j in
        S(i)`` with ``L = 1``, ``U = e_i - e_j``, weight ``node_weight[p]`` (``p`` the parent
        of ``i``, the node problem the block belongs to). The table depends on ``i`` only, so
        there is one per such node, shared by every example whose path crosses it."""
        tax, m = self.taxonomy, self.n_rows
        P = self.index.path_pad[y]
        sib = {int(i): tax.siblings(int(i)) for i in np.unique(P[P > 0])}
        nodes = [i for i, s in sib.items() if len(s)]
        table_of = np.full(m, -1, dtype=np.int64)
        table_of[nodes] = np.arange(len(nodes))
        tables = [
            sparse_table(
                sibling_rows(i, sib[i], m),
                np.ones(len(sib[i])),
                float(self.node_weight[self.block_of_row[i]]),
            )
            for i in nodes
        ]
        T = table_of[P]  # -1: the root padding or no siblings
        ex, d = np.nonzero(T >= 0)  # per example, its path's nodes in order
        return DualBlocks(tables, ex.astype(np.int64), T[ex, d])


class FlatModel(LinearModel):
    """Flat classifier (eq. 2) over candidate nodes with a slack-rescaled multiclass hinge.

    Loss of example ``k``: ``max_{c in candidates} Delta(y_k, c) * max(0, 1 - (s_{y_k} - s_c))``
    (``Delta(y, y) = 0``). With ``Delta`` zero-one this is Crammer-Singer (FLATMULT, eq. 12);
    with half the tree distance and ``path_sum=True`` it is TREELOSS (Cai & Hofmann; seed 000,
    Section 5 and errata), where ``W`` holds the increments ``u_j`` and ``s_y = sum_{j in A+(y)}
    u_j^T x``.

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)
    delta : str
        The label loss ``Delta``, by its name in the shared table
        (:data:`hierlab.core.losses.LOSSES`): ``"zero_one"`` for FLATMULT, ``"half_hamming"``
        for TREELOSS. Only the rows of the labels at hand are ever formed (labels x
        candidates), never the (n_nodes, n_nodes) matrix.
    candidates : {"leaves", "nodes"}
        ``"leaves"``: the leaves plus any internal node used as a training label (FLATMULT);
        ``"nodes"``: every non-root node (TREELOSS, ``y in Y``).
    path_sum : bool, default False
        Parametrise by increments (eq. 3).
    """

    def __init__(
        self,
        taxonomy: Taxonomy,
        delta: str,
        candidates: str = "leaves",
        path_sum: bool = False,
    ) -> None:
        self._init_rows(taxonomy)
        self.delta_name = get_loss(delta).name
        self.candidates = candidates
        self.path_sum = path_sum
        self.A = taxonomy.ancestor_matrix.tocsr()
        self.cand_: np.ndarray = self._candidates(None)
        #: the tree's parents when the ancestor rows are chains (:func:`chain_parents`): path
        #: sums and loss-augmented inference then run compiled, O(m) per example
        anc = sp.csr_matrix(self.A, dtype=np.float64)
        anc.sort_indices()
        self._anc = anc
        self._chain = chain_parents(anc)

    def _candidates(self, y: np.ndarray | None) -> np.ndarray:
        m = self.n_rows
        mask = np.zeros(m, dtype=bool)
        if self.candidates == "nodes":
            mask[1:] = True
        else:
            mask[np.asarray(self.taxonomy.leaves)] = True
            if y is not None:
                mask[np.unique(y)] = True
        mask[0] = False
        return np.flatnonzero(mask)

    def fit_candidates(self, y: np.ndarray) -> np.ndarray:
        """Fix the candidate set from the training labels; returns it (ids, increasing)."""
        self.cand_ = self._candidates(y)
        return self.cand_

    def active_rows(self, y: np.ndarray) -> np.ndarray:
        """Variables: the candidates' rows (FLATMULT) or every non-root increment (TREELOSS)."""
        if self.path_sum:
            return super().active_rows(y)
        act = np.zeros(self.n_rows, dtype=bool)
        act[self.fit_candidates(y)] = True
        act[0] = False
        return act

    def scores(self, X: Matrix, W: np.ndarray) -> np.ndarray:
        """Node scores, shape (n_samples, n_nodes); path sums when ``path_sum``."""
        Z = np.asarray(X @ np.ascontiguousarray(W.T))
        if self.path_sum:
            chain = getattr(self, "_chain", None)  # None in a model saved before it existed
            if chain is not None and chain_path_sums(Z, chain):
                return Z  # in place, the CSR product's sums to the bit
            return np.asarray((self.A @ Z.T).T)
        return Z

    def backward(self, Gamma: sp.csr_matrix, X: Matrix, XT: Any = None) -> np.ndarray:
        """``Gamma^T X`` (``(Gamma A)^T X`` for path sums)."""
        if self.path_sum:
            Gamma = sp.csr_matrix(Gamma @ self.A)
        return product(Gamma, X, XT)

    def node_weights(self, W: np.ndarray) -> np.ndarray:
        """``w_y`` per node: path sums ``A @ U`` (eq. 3) or ``W`` itself."""
        if self.path_sum:
            return np.asarray(self.A @ W)
        return W

    def most_violated(self, S: np.ndarray, y: np.ndarray) -> tuple[Array, Array]:
        """Loss-augmented inference: ``max_c Delta(y_k, c) max(0, 1 - s_{y_k} + s_c)``.

        Returns
        -------
        value : ndarray of shape (n_samples,)
            The example's loss (>= 0).
        c : ndarray of int, shape (n_samples,)
            The maximising candidate.
        """
        val, a, _ = self._most_violated(S, y)
        return val, self.cand_[a]

    def _most_violated(self, S: np.ndarray, y: np.ndarray) -> tuple[Array, Array, Array]:
        """:meth:`most_violated` with the maximiser's position in ``cand_`` and its ``Delta``.

        ``Delta`` is formed for the distinct labels of ``y`` against the candidates only."""
        if get_loss(self.delta_name).indicator:
            return self._most_violated_zero_one(S, y)
        cand = self.cand_
        dtab = self._delta_counts()
        chain = getattr(self, "_chain", None)
        if chain is not None and dtab is not None:  # compiled, O(m) per row
            got = chain_most_violated(S, y, cand, self._anc, chain, dtab)
            if got is not None:
                return got
        rows = np.arange(len(y))
        L = S[:, cand]  # becomes Delta(y, c) max(0, 1 - s_y + s_c), in place
        L += (1.0 - S[rows, y])[:, None]
        np.maximum(L, 0.0, out=L)
        # one row of Delta per label, never (n_samples x candidates)
        labels, inv = np.unique(y, return_inverse=True)
        D = label_loss(self.delta_name, self.taxonomy, labels, cand)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(labels) + 1))
        for j in range(len(labels)):
            group = order[bounds[j] : bounds[j + 1]]
            L[group] *= D[j]
        a = np.argmax(L, axis=1)
        return L[rows, a], a, self.pair_delta(y, cand[a])

    def _most_violated_zero_one(self, S: np.ndarray, y: np.ndarray) -> tuple[Array, Array, Array]:
        """:meth:`_most_violated` for ``Delta = [y != c]`` (Crammer-Singer, eq. 12) in two
        passes over the scores: the best candidate score with the own label's masked out
        (candidates are sorted, so column order is candidate order and ties go alike).

        ``max_c [y != c] max(0, 1 - s_y + s_c)`` is ``max(0, 1 - s_y + max_{c != y} s_c)``;
        where it is positive its (first) maximiser is the (first) arg-max of ``s_c`` over
        ``c != y`` (the map ``s -> 1 - s_y + s`` is increasing), so positions and values are
        those of the general form; where it is zero the position is irrelevant (no subgradient)."""
        cand = self.cand_
        n, m = S.shape
        rows = np.arange(n)
        s_y = S[rows, y]
        pos_of = np.full(m, -1, dtype=np.int64)
        pos_of[cand] = np.arange(len(cand))
        py = pos_of[y]
        own = py >= 0
        others = np.flatnonzero(pos_of < 0)
        if S.flags.c_contiguous and S.flags.writeable and 4 * len(others) <= len(cand):
            # few non-candidates (the root, ...): mask them and the own scores in place and
            # take the arg-max over whole rows (contiguous), restoring ``S`` afterwards
            kept = S[:, others].copy()
            S[:, others] = -np.inf
            S[rows[own], y[own]] = -np.inf
            try:
                col = np.argmax(S, axis=1)
                best = S[rows, col]
            finally:
                S[rows[own], y[own]] = s_y[own]
                S[:, others] = kept
            a = pos_of[col]
        else:
            Sc = S[:, cand]  # a copy (fancy indexing)
            Sc[rows[own], py[own]] = -np.inf
            a = np.argmax(Sc, axis=1)
            best = Sc[rows, a]
        val = np.maximum(1.0 - s_y + best, 0.0)
        a = np.where(val > 0, a, 0)
        dlt = (cand[a] != y).astype(np.float64)
        return val, a, dlt

    def loss(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Summed slack-rescaled hinge and its subgradient with respect to ``S``."""
        val, a, dlt = self._most_violated(S, y)
        k = np.flatnonzero(val > 0)
        d = dlt[k]
        c = self.cand_[a[k]]
        G = sp.csr_matrix((np.r_[d, -d], (np.r_[k, k], np.r_[c, y[k]])), shape=S.shape)
        return np.array([val.sum()]), G

    def label_table(self, v: int) -> tuple[sp.csr_matrix, Array]:
        """The dual table of label ``v``: rows ``c`` among the candidates with ``Delta(v, c) >
        0`` (increasing), ``L = Delta``, ``U = Delta (a_v - a_c)``, then the null label;
        shape (R, n_nodes). O(candidates x D) non-zeros: formed one label at a time."""
        m, cand = self.n_rows, self.cand_
        M = self.A if self.path_sum else sp.identity(m, format="csr")
        dlt = label_loss(self.delta_name, self.taxonomy, [v], cand)[0]
        keep = (cand != v) & (dlt > 0)
        d = dlt[keep]
        own = sp.csr_matrix(np.ones((len(d), 1))) @ M[[v]]  # a_v on every row
        U = sp.diags(d) @ (own - M[cand[keep]])
        return sparse_table(U, d, 1.0)

    def dual_blocks(self, y: np.ndarray) -> DualBlocks:
        """One block per example: labels ``c`` among the candidates with ``Delta(y, c) > 0``,
        ``L = Delta``, ``U = Delta (a_y - a_c)`` with ``a`` the row of the ancestor matrix
        (path sums, TREELOSS) or the unit vector, weight 1 (slack rescaling).

        Explicit: one table per distinct label over all candidates, (labels x candidates x D)
        non-zeros. BCFW uses :meth:`implicit_blocks` instead; these tables are the reference."""
        return per_label_blocks(y, self.label_table)

    def _delta_counts(self) -> np.ndarray | None:
        """``Delta`` as a function of ``|A+(y) Δ A+(c)|`` (None for the zero-one loss, which
        compares the labels)."""
        loss = get_loss(self.delta_name)
        if loss.indicator:
            return None
        size = np.arange(2 * int(self.taxonomy.max_depth) + 3, dtype=np.float64)
        return np.asarray(loss.transform(size), dtype=np.float64)

    def pair_delta(self, ys: np.ndarray, cs: np.ndarray) -> np.ndarray:
        """``Delta(ys[i], cs[i])`` elementwise, shape (k,): the values of :func:`~hierlab.core.
        losses.delta` (the same transform of the same integer path difference)."""
        ys, cs = np.asarray(ys, dtype=np.int64), np.asarray(cs, dtype=np.int64)
        dtab = self._delta_counts()
        if dtab is None:
            return (ys != cs).astype(np.float64)
        A = self.A
        common = np.asarray(A[ys].multiply(A[cs]).sum(axis=1)).ravel()
        deg = np.diff(A.indptr)
        return dtab[(deg[ys] + deg[cs] - 2 * common).astype(np.int64)]

    def implicit_blocks(self, y: np.ndarray, C: float) -> FlatBlocks | None:
        """The blocks of :meth:`dual_blocks` without their tables (for BCFW): each label's row
        is formed when it is scanned, O(m D) memory in all (:mod:`hierlab.solvers.bcfw_flat`).
        None when the loss needs per-node weights (BCFW then uses the explicit tables)."""
        loss = get_loss(self.delta_name)
        if loss.weighted:
            return None
        y = np.asarray(y, dtype=np.int64)
        cand = self.cand_
        anc = self._anc
        M = anc if self.path_sum else sp.identity(self.n_rows, format="csr", dtype=np.float64)
        labels = np.unique(y)
        if loss.indicator:
            present = np.isin(labels, cand)
            max_delta = 1.0 if len(cand) > 1 or (len(cand) == 1 and not present.all()) else 0.0
        else:  # the largest Delta of any label's row, a chunk of labels at a time
            max_delta = 0.0
            step = max(1, 2**18 // max(len(cand), 1))
            for i in range(0, len(labels), step):
                D = label_loss(self.delta_name, self.taxonomy, labels[i : i + step], cand)
                max_delta = max(max_delta, float(D.max(initial=0.0)))
        return FlatBlocks(
            y, cand, M, anc, self._delta_counts(), max_delta, C, self.label_table, self.pair_delta
        )

    def predict(self, S: np.ndarray) -> np.ndarray:
        """``argmax_{c in candidates} S[:, c]`` (eq. 2)."""
        cand = self.cand_
        return cand[np.argmax(S[:, cand], axis=1)]
