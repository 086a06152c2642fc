"""The Hieron model (seed 002): path-sum prototypes, the sqrt(gamma) margin, and its kernels.

Every label ``v`` of a rooted tree has an increment ``w^v`` (``w^0 = 0`` at the root) and a
prototype ``W^v = sum_{u in P(v)} w^u`` (eq. 2), the sum over the path from the root to ``v``. The
classifier is ``f(x) = argmax_v W^v . x`` (eq. 1 and 3), and a round with label ``y`` and
competitor ``y_hat`` suffers the hinge loss of eq. (5),

    l = [W^{y_hat} . x - W^y . x + sqrt(gamma(y, y_hat))]_+ .

The update of eq. (7) adds ``+alpha x`` to ``w^v`` for ``v in P(y) minus P(y_hat)`` and
``-alpha x`` for ``v in P(y_hat) minus P(y)``. On the prototypes this is a rank-one change,
``W <- W + alpha c x^T`` with ``c_u = |P(u) & P(y)| - |P(u) & P(y_hat)|`` (the path overlaps), so
the solver keeps the prototypes ``W`` themselves and scores an example with one matrix-vector
product. :class:`PathGeometry` precomputes the overlaps ``M[u, v] = |P(u) & P(v)|``, from which
``gamma(u, v) = M[u, u] + M[v, v] - 2 M[u, v]`` and ``c = M[:, y] - M[:, y_hat]`` come for free.

The margin ``sqrt(gamma(y, v))`` is the ``"sqrt_hamming"`` loss of the shared loss table
(:func:`hierlab.core.losses.delta`): on a tree ``gamma(y, v) = |A+(y) Δ A+(v)|``, the size of the
symmetric difference of the two paths. :meth:`PathGeometry.sqrt_gamma_row` is that table's row
``delta("sqrt_hamming", tax, [y], all nodes)``, computed in O(n_nodes) from the path overlaps
because the max-loss update needs it on every round.

The kernel form (eq. 11-12) writes ``W^v = sum_i beta_i^v x_i`` over a support set; the module's
:class:`Kernel` evaluates linear, RBF and polynomial kernels between a block of rows and one row
or between two blocks, dense or CSR.

What a solver passes over (:class:`HieronStream`) and what it learns (:class:`HieronCoef`) are
data of the model too; the algorithms are in :mod:`hierlab.methods.hieron.solver`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import DataError, ParameterError, TaxonomyError

__all__ = [
    "TIE_RTOL",
    "HieronCoef",
    "HieronStream",
    "Kernel",
    "PathGeometry",
    "first_argmax",
    "increments_from_prototypes",
    "predict_from_scores",
    "prototypes_from_increments",
]

#: trees up to this many nodes keep the dense overlap matrix M (8 MB at 1024 nodes)
DENSE_OVERLAP_LIMIT = 1024


class PathGeometry:
    """Path overlaps of a rooted tree given by its parent array (``parent[i] < i``, root 0).

    Parameters
    ----------
    parent : array-like of int, shape (n_nodes,)
        ``parent[i]`` is the parent of node ``i``; ``-1`` for the root, which must be node 0;
        every parent must precede its child (the :class:`~hierlab.Taxonomy` order).

    Attributes
    ----------
    n_nodes : int
    parent : ndarray of int64, shape (n_nodes,)
    depth : ndarray of int64, shape (n_nodes,)
    ancestor : csr_matrix of shape (n_nodes, n_nodes)
        ``ancestor[u, v] = 1`` iff ``v`` lies on ``P(u)`` (the path root -> ``u``).
    overlap : ndarray of float64, shape (n_nodes, n_nodes), or None
        Dense ``M[u, v] = |P(u) & P(v)| = depth(lca(u, v)) + 1`` for trees up to
        ``DENSE_OVERLAP_LIMIT`` nodes; None above (columns are then computed sparsely).
    """

    def __init__(self, parent: Any) -> None:
        par = np.asarray(parent, dtype=np.int64).ravel()
        n = len(par)
        if n == 0 or par[0] != -1:
            raise TaxonomyError("the root must be node 0 with parent -1")
        if n > 1 and not np.all((par[1:] >= 0) & (par[1:] < np.arange(1, n))):
            raise TaxonomyError("every node must come after its parent (parent[i] < i)")
        self.n_nodes = n
        self.parent = par
        depth = np.zeros(n, dtype=np.int64)
        for i in range(1, n):  # one pass, parents first
            depth[i] = depth[par[i]] + 1
        self.depth = depth
        rows, cols = [np.arange(n)], [np.arange(n)]
        who, cur = np.arange(n), np.arange(n)
        while True:
            up = par[cur]
            keep = up >= 0
            if not keep.any():
                break
            who, cur = who[keep], up[keep]
            rows.append(who)
            cols.append(cur)
        r, c = np.concatenate(rows), np.concatenate(cols)
        A = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
        A.sort_indices()
        self.ancestor = A
        self.overlap: np.ndarray | None = None
        if n <= DENSE_OVERLAP_LIMIT:
            self.overlap = np.ascontiguousarray((A @ A.T).toarray())

    @classmethod
    def flat(cls, n_nodes: int) -> PathGeometry:
        """The flat tree: every node ``1..n_nodes-1`` a child of the root 0 (seed 002, "flat")."""
        return cls(np.r_[-1, np.zeros(max(n_nodes - 1, 0), dtype=np.int64)])

    def overlap_col(self, v: int) -> np.ndarray:
        """``M[:, v] = |P(u) & P(v)|`` for every ``u``, shape (n_nodes,)."""
        if self.overlap is not None:
            return self.overlap[v]
        A = self.ancestor
        ind = np.zeros(self.n_nodes)
        ind[A.indices[A.indptr[v] : A.indptr[v + 1]]] = 1.0
        return np.asarray(A @ ind).ravel()

    def gamma(self, u: Any, v: Any) -> np.ndarray:
        """Tree distance ``gamma(u, v)`` (vectorised), from the overlaps."""
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        if self.overlap is not None:
            M = self.overlap
            return (M[u, u] + M[v, v] - 2.0 * M[u, v]).astype(np.int64)
        a, b = (x.ravel().copy() for x in np.broadcast_arrays(u, v))
        shape = np.broadcast(u, v).shape
        dist = np.zeros(len(a), dtype=np.int64)
        par, depth = self.parent, self.depth
        while True:  # climb the deeper end one edge at a time: at most 2 * max_depth passes
            ne = a != b
            if not ne.any():
                break
            up_a = ne & (depth[a] >= depth[b])
            up_b = ne & ~up_a
            a[up_a] = par[a[up_a]]
            b[up_b] = par[b[up_b]]
            dist += ne
        return dist.reshape(shape)

    def direction(self, y: int, y_hat: int) -> tuple[np.ndarray, float]:
        """The update direction on the prototypes and ``gamma(y, y_hat)``.

        Returns
        -------
        c : ndarray of float64, shape (n_nodes,)
            ``c_u = |P(u) & P(y)| - |P(u) & P(y_hat)|``: eq. (7) moves ``W^u`` by ``alpha c_u x``.
        gamma : float
            ``|P(y) symmetric-difference P(y_hat)| = c_y - c_{y_hat}``.
        """
        c = self.overlap_col(y) - self.overlap_col(y_hat)
        return c, float(c[y] - c[y_hat])

    def sqrt_gamma_row(self, y: int) -> np.ndarray:
        """``sqrt(gamma(y, v))`` for every ``v``, shape (n_nodes,) (the margins of eq. 4).

        This is row ``y`` of the shared ``"sqrt_hamming"`` loss,
        ``hierlab.core.losses.delta("sqrt_hamming", tax, [y], np.arange(n_nodes))[0]`` for the
        taxonomy ``tax`` of this tree, computed in O(n_nodes) from the overlaps:
        ``gamma(y, v) = |P(y)| + |P(v)| - 2 |P(y) & P(v)|`` with ``|P(v)| = depth(v) + 1``.
        """
        m = self.overlap_col(y)
        diag = self.depth + 1.0
        return np.sqrt(np.maximum(diag + diag[y] - 2.0 * m, 0.0))

    def sqrt_gamma_rows(self, ys: Any) -> np.ndarray:
        """:meth:`sqrt_gamma_row` of every ``y`` in ``ys`` at once, shape (len(ys), n_nodes)."""
        ys = np.asarray(ys, dtype=np.int64)
        if self.overlap is not None:
            M = self.overlap[ys]
        else:
            A = self.ancestor  # M[y, :] = A @ (path indicator of y)
            M = np.asarray(A @ A[ys].T.toarray()).T
        diag = self.depth + 1.0
        return np.sqrt(np.maximum(diag + diag[ys][:, None] - 2.0 * M, 0.0))

    def sqrt_gamma_matrix(self) -> np.ndarray | None:
        """Dense ``sqrt(gamma)`` of shape (n_nodes, n_nodes) for small trees, else None."""
        if self.overlap is None:
            return None
        return self.sqrt_gamma_rows(np.arange(self.n_nodes))


def prototypes_from_increments(w: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """``W^v = sum_{u in P(v)} w^u`` (eq. 2): one top-down pass, shape as ``w``.

    Parameters
    ----------
    w : ndarray of shape (n_nodes, ...)
        Increments, ``w[0]`` the root's.
    parent : ndarray of int, shape (n_nodes,)
    """
    W = np.array(w, dtype=np.float64, copy=True)
    for v in range(1, len(parent)):
        W[v] += W[parent[v]]
    return W


def increments_from_prototypes(W: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """``w^v = W^v - W^{A(v)}`` (Section 2), ``w^0 = W^0``; shape as ``W``."""
    w = np.array(W, dtype=np.float64, copy=True)
    w[1:] -= W[parent[1:]]
    return w


#: scores within this relative distance of the maximum count as tied (round-off)
TIE_RTOL = 1e-10


def first_argmax(s: np.ndarray) -> int:
    """Index of the maximum of ``s``, ties (up to round-off) going to the smallest index.

    Ties are genuine in Hieron: vertices never updated apart share their prototype, and a
    dense BLAS product may then differ in the last bit between rows. Breaking ties by the
    smallest node id (within ``TIE_RTOL``) makes the dense, sparse and kernel forms agree.
    """
    m = s.max()
    return int(np.argmax(s >= m - TIE_RTOL * (1.0 + abs(m))))


def predict_from_scores(S: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
    """``argmax_v S[i, v]`` per row (eq. 1), restricted to ``candidates`` when given.

    Ties (up to round-off, see :func:`first_argmax`) go to the smallest id.

    Parameters
    ----------
    S : ndarray of shape (n_samples, n_nodes)
    candidates : ndarray of int, optional
        The labels that may be predicted; None: every node.

    Returns
    -------
    ndarray of int64, shape (n_samples,)
    """
    T = S if candidates is None else S[:, candidates]
    m = T.max(axis=1, keepdims=True)
    first = np.argmax(T >= m - TIE_RTOL * (1.0 + np.abs(m)), axis=1)
    if candidates is None:
        return np.asarray(first, dtype=np.int64)
    return np.asarray(candidates[first], dtype=np.int64)


@dataclass(frozen=True)
class Kernel:
    """A Mercer kernel ``K(x, z)`` for the dual form of Hieron (eq. 12).

    Parameters
    ----------
    name : {"linear", "rbf", "poly"}
        ``x . z``; ``exp(-gamma ||x - z||^2)``; ``(gamma x . z + coef0) ** degree``.
    gamma : float
        Scale of RBF and polynomial kernels (> 0).
    degree : int
        Degree of the polynomial kernel (>= 1).
    coef0 : float
        Offset of the polynomial kernel.
    """

    name: str = "linear"
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 1.0

    def __post_init__(self) -> None:
        if self.name not in ("linear", "rbf", "poly"):
            raise ParameterError(f"kernel must be 'linear', 'rbf' or 'poly', got {self.name!r}")
        if not self.gamma > 0:
            raise ParameterError(f"kernel gamma must be > 0, got {self.gamma}")
        if int(self.degree) != self.degree or self.degree < 1:
            raise ParameterError(f"kernel degree must be an integer >= 1, got {self.degree}")

    def from_dot(self, dot: np.ndarray, sq_a: Any, sq_b: Any) -> np.ndarray:
        """Kernel values from inner products and squared norms (broadcasting)."""
        if self.name == "linear":
            return dot
        if self.name == "rbf":
            return np.exp(-self.gamma * np.maximum(sq_a + sq_b - 2.0 * dot, 0.0))
        return (self.gamma * dot + self.coef0) ** int(self.degree)

    def diag(self, sq_norms: np.ndarray) -> np.ndarray:
        """``K(x, x)`` from ``||x||^2``, shape as ``sq_norms``."""
        return self.from_dot(sq_norms, sq_norms, sq_norms)

    def matrix(self, A: Any, B: Any) -> np.ndarray:
        """Gram block ``K(A_i, B_j)``, shape (n_a, n_b); ``A``, ``B`` dense or CSR."""
        dot = A @ B.T
        dot = dot.toarray() if sp.issparse(dot) else np.asarray(dot)
        if self.name == "linear":
            return dot
        return self.from_dot(dot, row_sq_norms(A)[:, None], row_sq_norms(B)[None, :])


def row_sq_norms(X: Any) -> np.ndarray:
    """``||x_i||^2`` per row, shape (n_samples,), dense or CSR."""
    if sp.issparse(X):
        Xc = sp.csr_matrix(X)
        return np.asarray(Xc.multiply(Xc).sum(axis=1)).ravel()
    X = np.asarray(X)
    return np.einsum("ij,ij->i", X, X)


@dataclass
class HieronStream:
    """The examples a Hieron solver passes over (what it is given instead of an objective).

    Attributes
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
        Float64 features.
    y : ndarray of int, shape (n_samples,)
        Node ids of the training tree.
    epochs : int
        Passes over the stream (>= 1).
    shuffle : bool
        Draw a new random order for every epoch (otherwise the given order, each epoch).
    random_state : None, int or numpy Generator
        Seed of the shuffles.

    Raises
    ------
    DataError
        ``X`` and ``y`` differ in length.
    ParameterError
        ``epochs`` is not an integer >= 1.
    """

    X: Any
    y: np.ndarray
    epochs: int = 1
    shuffle: bool = False
    random_state: Any = None

    def __post_init__(self) -> None:
        self.y = np.asarray(self.y, dtype=np.int64)
        if self.X.shape[0] != len(self.y):
            raise DataError(f"X has {self.X.shape[0]} rows but y has {len(self.y)} labels")
        if int(self.epochs) != self.epochs or self.epochs < 1:
            raise ParameterError(f"epochs must be an integer >= 1, got {self.epochs}")


@dataclass
class HieronCoef:
    """What a Hieron solver has learned (the ``coef`` of the solver contract).

    Attributes
    ----------
    last, average : ndarray of shape (n_nodes, n_features), or None
        Primal prototypes ``W^v`` (path sums) of the last and of the averaged hypothesis
        (eq. 13). None in the kernel form.
    support_vectors : ndarray or csr_matrix of shape (n_support, n_features), or None
        Kernel form: the support set (each example once).
    dual_last, dual_average : ndarray of shape (n_support, n_nodes), or None
        Kernel form: ``B`` with ``W^v = sum_j B[j, v] phi(x_j)``, last and averaged.
    rounds : int
        Rounds seen (``T``); the average is over the ``T + 1`` hypotheses ``w_1 .. w_{T+1}``.
    extra : dict
        Anything else a solver reports with its hypotheses.
    """

    last: np.ndarray | None = None
    average: np.ndarray | None = None
    support_vectors: Any = None
    dual_last: np.ndarray | None = None
    dual_average: np.ndarray | None = None
    rounds: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
