"""Label losses ``Delta(y, y')`` between nodes of a taxonomy: one table shared by every family.

Every loss the seeds use is a function of the symmetric difference of the two labels' paths,
``A+(y) Δ A+(y')`` (the root excluded), weighted per node and then transformed:

==================  =========================================  ===================================
name                ``Delta(y, y')``                            used by
==================  =========================================  ===================================
``zero_one``        ``[y != y']``                               seed 000 FLATMULT (eq. 12), 003
``hamming``         ``|A+(y) Δ A+(y')|`` = ``gamma(y, y')``      seed 002 eq. (1), 003 eq. (2)
                    on a tree
``half_hamming``    ``gamma(y, y') / 2``                        seed 000 TREELOSS (Section 5)
``sqrt_hamming``    ``sqrt(gamma(y, y'))``                      seed 002 eq. (4)-(5), 003
``normalized``      ``sqrt(sum_{n in A+(y) Δ A+(y')} alpha_n)``  seed 003 eq. (9)
==================  =========================================  ===================================

A loss is one :class:`LabelLoss` object: its name, whether it weighs the nodes, and its
transform ``T`` of the (weighted) size of the path difference, written once as a function of one
number that numpy applies to arrays and numba compiles for the kernels
(:attr:`LabelLoss.compiled`). Every form of ``Delta`` here and in the solvers calls that one
function; a family adds a loss with one :func:`register_loss` call in its own package.

A family that can use a loss takes its name as a parameter and calls :func:`delta`, which works
from the sparse ancestor matrix on a batch of labels against a set of candidates, so memory is
``O(batch x candidates)``, never ``O(n_nodes^2)`` unless asked for; :class:`DeltaRows` forms the
same numbers a row at a time inside the compiled kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.jit import jit_enabled, njit, scalar_cfunc
from hierlab.core.taxonomy import Taxonomy

__all__ = ["LOSSES", "DeltaRows", "LabelLoss", "delta", "get_loss", "register_loss"]


@dataclass(frozen=True)
class LabelLoss:
    """One label loss ``Delta(y, y') = T(sum_{n in A+(y) Δ A+(y')} w_n)``.

    Attributes
    ----------
    name : str
        The key of :data:`LOSSES` a family's ``loss`` parameter names.
    transform : callable
        ``T``: a function of one float that also applies elementwise to an ndarray (numpy
        operations only, so that numba compiles it); ``T(0) = 0``. Made of correctly rounded
        steps (``+ - * /``, ``sqrt``), numba's and numpy's results agree to the bit, as the
        compiled and numpy rows must (``tests/core/test_delta_rows.py`` checks every registered
        loss): ``np.cbrt``, for one, differs by an ulp between them.
    weighted : bool, default False
        Needs a weight per node (``alpha`` of seed 003); else every node weighs 1.
    indicator : bool, default False
        ``Delta(y, y') = [y != y']`` exactly (the zero-one loss): a family may compare the
        labels instead of their paths (the rows of :class:`DeltaRows` do: ``T([c != y])``);
        :attr:`transform` of the paths' size gives the same numbers.
    """

    name: str
    transform: Callable[[Any], Any]
    weighted: bool = False
    indicator: bool = False

    @cached_property
    def compiled(self) -> Callable[[float], float]:
        """:attr:`transform` as the compiled callback the kernels take (``float64(float64)``,
        :func:`~hierlab.core.jit.scalar_cfunc`), or the Python function without numba."""
        return scalar_cfunc(self.transform) or self.transform


#: every loss, by name (:func:`register_loss` adds one)
LOSSES: dict[str, LabelLoss] = {}


def register_loss(loss: LabelLoss) -> LabelLoss:
    """Add ``loss`` to :data:`LOSSES` and return it.

    Raises
    ------
    ParameterError
        When another loss already has its name, or ``T(0) != 0``.
    """
    if loss.name in LOSSES and LOSSES[loss.name] is not loss:
        raise ParameterError(f"a label loss named {loss.name!r} is already registered")
    if float(loss.transform(0.0)) != 0.0:
        raise ParameterError(f"the {loss.name!r} loss must be 0 between equal labels")
    LOSSES[loss.name] = loss
    return loss


def _zero_one(size: Any) -> Any:
    """``[y != y']``: the path difference is empty only between equal labels."""
    return np.sign(size)


def _identity(size: Any) -> Any:
    return size


def _half(size: Any) -> Any:
    return size / 2.0


def _sqrt(size: Any) -> Any:
    return np.sqrt(size)


register_loss(LabelLoss("zero_one", _zero_one, indicator=True))
register_loss(LabelLoss("hamming", _identity))
register_loss(LabelLoss("half_hamming", _half))
register_loss(LabelLoss("sqrt_hamming", _sqrt))
register_loss(LabelLoss("normalized", _sqrt, weighted=True))


def get_loss(name: str) -> LabelLoss:
    """The :class:`LabelLoss` called ``name``.

    Raises
    ------
    ParameterError
        When no loss has that name.
    """
    try:
        return LOSSES[name]
    except KeyError:
        raise ParameterError(f"loss must be one of {sorted(LOSSES)}, got {name!r}") from None


def _node_weights(loss: LabelLoss, taxonomy: Taxonomy, weights: Any) -> np.ndarray:
    """The loss's weight per node (ones when unweighted), the root's set to 0."""
    if loss.weighted:
        if weights is None:
            raise ParameterError(f"the {loss.name!r} loss needs a weight per node (alpha)")
        w = np.asarray(weights, dtype=np.float64).copy()
    else:
        w = np.ones(taxonomy.n_nodes)
    w[taxonomy.root] = 0.0
    return w


def delta(
    name: str,
    taxonomy: Taxonomy,
    labels: Any,
    candidates: Any,
    weights: Any = None,
) -> np.ndarray:
    """``Delta(labels[i], candidates[j])`` for the loss ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`LOSSES`.
    taxonomy : Taxonomy
        Tree or DAG.
    labels : array-like of int of shape (k,)
        Node ids (the label of each row is ``A+(labels[i])``).
    candidates : array-like of int of shape (L,)
        Node ids.
    weights : array-like of shape (n_nodes,), optional
        Per-node weights, needed by weighted losses (the root's is ignored).

    Returns
    -------
    ndarray of shape (k, L), float64
    """
    loss = get_loss(name)
    labels = np.asarray(labels, dtype=np.int64)
    candidates = np.asarray(candidates, dtype=np.int64)
    w = _node_weights(loss, taxonomy, weights)
    A = taxonomy.ancestor_matrix  # cached CSR of float64: rows are gathered, not copied whole
    Am, Al = A[labels], A[candidates]
    inter = (Am @ sp.diags(w) @ Al.T).toarray()
    size = np.maximum((Am @ w)[:, None] + (Al @ w)[None, :] - 2.0 * inter, 0.0)
    return loss.transform(size)


# ---------------------------------------------------------------------- rows on the fly
def _delta_row(
    y: int,
    anc_ptr: np.ndarray,
    anc_idx: np.ndarray,
    w: np.ndarray,
    Wn: np.ndarray,
    cand: np.ndarray,
    indicator: bool,
    transform: Callable[[float], float],
    mark: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``out[l] = Delta(y, cand[l]) = T(W(y) + W(c) - 2 W(A+(y) ∩ A+(c)))`` for every
    candidate (:class:`DeltaRows`), ``T`` the loss's ``transform`` (:attr:`LabelLoss.compiled`);
    ``mark`` is a zeroed scratch of shape (n_nodes,), zeroed again on return. With
    ``indicator`` (:attr:`LabelLoss.indicator`) the size is ``[c != y]`` instead of the paths':
    ``T(0)`` or ``T(1)``, the same numbers at a compare's cost."""
    if indicator:
        zero, one = transform(0.0), transform(1.0)
        for c in range(cand.shape[0]):
            out[c] = zero if cand[c] == y else one
        return
    for e in range(anc_ptr[y], anc_ptr[y + 1]):
        mark[anc_idx[e]] = 1.0
    Wy = Wn[y]
    for c in range(cand.shape[0]):
        node = cand[c]
        inter = 0.0
        for e in range(anc_ptr[node], anc_ptr[node + 1]):
            j = anc_idx[e]
            inter += w[j] * mark[j]
        size = Wy + Wn[node] - 2.0 * inter
        out[c] = transform(size if size > 0.0 else 0.0)
    for e in range(anc_ptr[y], anc_ptr[y + 1]):
        mark[anc_idx[e]] = 0.0


DELTA_ROW: Any = njit(_delta_row) or _delta_row


def _delta_rows(
    labels: np.ndarray,
    anc_ptr: np.ndarray,
    anc_idx: np.ndarray,
    w: np.ndarray,
    Wn: np.ndarray,
    cand: np.ndarray,
    indicator: bool,
    transform: Callable[[float], float],
    mark: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """:func:`_delta_row` of each label: ``out[i, l] = Delta(labels[i], cand[l])``."""
    for i in range(labels.shape[0]):
        DELTA_ROW(labels[i], anc_ptr, anc_idx, w, Wn, cand, indicator, transform, mark, out[i])


#: the compiled rows of a batch of labels (None without numba: :meth:`DeltaRows.rows` in numpy)
DELTA_ROWS: Any = njit(_delta_rows)

#: above this size a (labels x candidates) table of Delta is not kept (16 MB: 1,400 labels by
#: 1,400 leaves; IPC titles' 645 x 645 take 3.3 MB): rows are formed on the fly instead
DELTA_TABLE_MAX_BYTES = 16 << 20


@dataclass(frozen=True)
class DeltaRows:
    """``Delta(y, c)`` of one loss for any label ``y`` against fixed candidates, a row at a time.

    The table of every training label against every candidate is (labels x candidates): at
    10^4 leaves 800 MB. A row costs ``O(sum_c |A+(c)|)`` instead (about the candidates' path
    scores that go with it): the labels' paths are marked, each candidate's path is summed.
    ``Delta = T(W(y) + W(c) - 2 W(A+(y) ∩ A+(c)))`` with ``W`` the node weights' sum (the
    root's weight 0), on trees and DAGs alike; the compiled row (:func:`_delta_row`) and the
    numpy rows (:meth:`rows`) add the same numbers in the same order, so they agree to the bit.
    The values equal :func:`delta`'s up to the order of the sums (to the bit for the unweighted
    losses, whose sums are of integers).

    Attributes
    ----------
    loss_name : str
        The loss's name (:attr:`loss` is the object; a model file keeps the name).
    anc_ptr, anc_idx : ndarray of int
        ``A+(n)`` of every node (CSR, sorted).
    w, Wn : ndarray of shape (n_nodes,)
        Node weights (root 0) and ``W(A+(n))`` per node.
    cand : ndarray of int, shape (L,)
        The candidates' node ids.
    """

    loss_name: str
    anc_ptr: np.ndarray
    anc_idx: np.ndarray
    w: np.ndarray
    Wn: np.ndarray
    cand: np.ndarray

    @classmethod
    def of(cls, name: str, taxonomy: Taxonomy, candidates: Any, weights: Any = None) -> DeltaRows:
        """The rows of the loss ``name`` (``weights`` as in :func:`delta`)."""
        loss = get_loss(name)
        w = _node_weights(loss, taxonomy, weights)
        A = sp.csr_matrix(taxonomy.ancestor_matrix, copy=True)  # the taxonomy's cache
        A.sort_indices()
        ptr, idx = A.indptr.astype(np.int64), A.indices.astype(np.int64)
        Wn = cls._path_weights(ptr, idx, w)
        cand = np.asarray(candidates, dtype=np.int64)
        return cls(loss.name, ptr, idx, w, Wn, cand)

    @property
    def loss(self) -> LabelLoss:
        """The :class:`LabelLoss` of the rows."""
        return get_loss(self.loss_name)

    @staticmethod
    def _path_weights(ptr: np.ndarray, idx: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``sum_{j in A+(n)} w_j`` per node, added along each path in order."""
        n = len(ptr) - 1
        lens = np.diff(ptr)
        out = np.zeros(n)
        for q in range(int(lens.max(initial=0))):
            ks = np.flatnonzero(lens > q)
            out[ks] += w[idx[ptr[ks] + q]]
        return out

    def args(self) -> tuple[Any, ...]:
        """``(anc_ptr, anc_idx, w, Wn, cand, indicator, transform)``, the compiled row's
        arguments (the loss's :attr:`LabelLoss.compiled` last: numba warns of a tuple that
        starts with a function)."""
        loss = self.loss
        return (self.anc_ptr, self.anc_idx, self.w, self.Wn, self.cand, loss.indicator,
                loss.compiled)  # fmt: skip

    def table_if_small(self, labels: Any, max_bytes: int | None = None) -> np.ndarray:
        """:meth:`rows` of ``labels`` when they take at most ``max_bytes``, else an empty
        (0, L) array: the kernels then form each example's row on the fly. The table is the
        rows' numbers to the bit, so either way the fit is the same; the cap keeps the memory
        of many classes bounded while few classes keep the table's speed."""
        y = np.asarray(labels, dtype=np.int64)
        cap = DELTA_TABLE_MAX_BYTES if max_bytes is None else max_bytes
        if 8 * len(y) * len(self.cand) > cap:
            return np.zeros((0, len(self.cand)))
        return np.ascontiguousarray(self.rows(y))

    def rows(self, labels: Any) -> np.ndarray:
        """``Delta(labels[i], cand[l])``, shape (len(labels), L) (what the compiled row
        computes, to the bit): compiled row by row (:data:`DELTA_ROWS`; 3,000 leaves: 7x the
        numpy form's speed, which marks each label's path in a dense (rows x nodes) array),
        or in numpy without numba or with ``HIERLAB_NO_JIT``."""
        y = np.asarray(labels, dtype=np.int64)
        cand = self.cand
        ptr, idx = self.anc_ptr, self.anc_idx
        n_nodes = len(ptr) - 1
        if DELTA_ROWS is not None and jit_enabled():  # the same sums, compiled
            out = np.empty((len(y), len(cand)))
            DELTA_ROWS(y, *self.args(), np.zeros(n_nodes), out)
            return out
        if self.loss.indicator:  # as the compiled row: the size is [c != y]
            size = (y[:, None] != cand[None, :]).astype(np.float64)
            return np.asarray(self.loss.transform(size), dtype=np.float64)
        anc = sp.csr_matrix((np.ones(len(idx)), idx, ptr), shape=(n_nodes, n_nodes))
        mark = anc[y].toarray()  # 1 on each label's path
        inter = np.zeros((len(y), len(cand)))
        lens = ptr[cand + 1] - ptr[cand]
        for q in range(int(lens.max(initial=0))):
            ks = np.flatnonzero(lens > q)
            j = idx[ptr[cand[ks]] + q]
            inter[:, ks] += self.w[j][None, :] * mark[:, j]
        size = self.Wn[y][:, None] + self.Wn[cand][None, :] - 2.0 * inter
        return np.asarray(self.loss.transform(np.where(size > 0.0, size, 0.0)), dtype=np.float64)

    def row(self, label: int) -> np.ndarray:
        """One row, shape (L,), by the compiled form (or its Python steps)."""
        out = np.empty(len(self.cand))
        DELTA_ROW(int(label), *self.args(), np.zeros(len(self.anc_ptr) - 1), out)
        return out

    def max_over(self, labels: Any, batch: int | None = None) -> float:
        """``max Delta(y, c)`` over the labels ``labels`` and every candidate, ``batch`` rows at
        a time (default: about 2^17 entries per row block)."""
        y = np.asarray(labels, dtype=np.int64)
        if batch is None:
            batch = max(1, (1 << 17) // max(len(self.cand), len(self.anc_ptr) - 1, 1))
        best = -np.inf
        for s in range(0, len(y), batch):
            best = max(best, float(self.rows(y[s : s + batch]).max(initial=-np.inf)))
        return best
