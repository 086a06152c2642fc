"""Implicit label tables of the flat models (FLATMULT, TREELOSS; HSVM and NHSVM) for BCFW.

The dual of a flat model (:class:`~hierlab.methods.orthogonal.model.FlatModel`) has one block per
example ``k`` with label ``y = y_k``, whose labels are the candidates ``c != y`` (then the null
label), with

    L_c = C Delta(y, c),    U_c = C Delta(y, c) (a_y - a_c),

``a_c`` the row of the ancestor matrix (path sums, TREELOSS) or the unit vector ``e_c``
(FLATMULT). Stored explicitly, one table per distinct label over all candidates, this is
(labels x candidates x path length) non-zeros: quadratic in the number of classes (481 MB at
2,000 leaves). Here nothing is stored per label: the compiled pass forms a candidate's row on
the fly by merging the two sorted rows ``a_y`` and ``a_c`` (their symmetric difference; common
ancestors cancel), so a block's scan costs O(candidates x D) (D the depth), as the explicit
tables did, and ``Delta`` comes from the size of the same symmetric difference
(``|A+(y) Δ A+(c)|``, the quantity every unweighted loss of :mod:`hierlab.core.losses`
transforms). Memory: the ancestor rows (O(m D)) and O(m) scratch.

Seed 003's hinge (HSVM, NHSVM, :meth:`~hierlab.methods.nhsvm.dual.HingeDualModel.
implicit_blocks`) has the same blocks with two changes, on trees: margin rescaling (``L = C
Delta``, ``U = C (a_y - a_c)``) or eq. 13's ratio (``L = C``, ``U = C (a_y - a_c) / Delta``)
(``scaling``), and the class attributes weighting each node's entry (``node_weight``), with
``Delta`` from weighted path lengths for the normalised loss (``delta_rows``): the chains'
scan reads ``P_c = P_parent(c) + w_c S_c`` and a weighted common length per visit.

The dual variables are kept as one active set per block (the labels with mass, increasing, in
an (n, capacity) pair of arrays whose capacity doubles when a block outgrows it): Frank-Wolfe
moves mass between the most violated label and the worst active one, so a block holds a few
labels, not all candidates (IPC: 52,530 x 645 floats, 271 MB, as a flat vector). The flat and
padded layouts of the table solver are formed only on request (O(n x candidates)); a warm
start is passed as a sparse row (:meth:`FlatBlocks.sparse_alpha`, O(labels with mass)).

On a tree (the rows are ancestor chains, :func:`chain_parents`: TREELOSS, and FLATMULT with a
tree loss) the scan does not merge rows at all: per visit every label's ``Delta`` from the
length of the common chain (O(m)), per step the path sums ``P_c = P_parent(c) + S_c`` and
``(a_y - a_c) . S = P_y - P_c`` (O(m)), so a scan costs O(m) instead of O(m D) merged entries
(:func:`_chain_delta`, :func:`_chain_scan`). Its values are the tables' up to rounding (the
common ancestors cancel in exact arithmetic only), so where labels tie exactly it may pick
another one: tested against the tables' values, and by certificates (each run's lower bounds
below the other's upper bounds). Otherwise (and for the steps themselves) the arithmetic is the
explicit tables' to the last bit: the same row entries in the same order (increasing node id),
the same products ``(± Delta C) s_j`` summed from 0, the same direction ``u_a - u_v`` (``a``'s
entries first) and the same tie-breaking (first label wins), so the implicit pass takes the
very steps of the table pass (tested against it, with the chains' scan switched off).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.ancestor_ldl import SOLVE_TOUCHED as FACTOR_SOLVE
from hierlab.core.exceptions import ParameterError
from hierlab.core.jit import jit_enabled, njit, sparse_row_times, sparse_row_update
from hierlab.core.losses import LabelLoss

__all__ = ["FlatBlocks", "chain_most_violated", "chain_parents", "chain_path_sums"]

#: explicit tables of the Python pass kept at once (the most recent labels)
_TABLE_CACHE = 64
#: dual variables laid out densely at once when the blocks are normalised
_NORMALISE_ENTRIES = 2**18
#: how ``Delta`` enters a label's row (:class:`FlatBlocks`), in the compiled pass's numbering
SCALINGS = ("slack", "margin", "ratio")


def chain_parents(M: sp.csr_matrix) -> np.ndarray | None:
    """The parent row of each row when the rows of ``M`` are the ancestor chains of a tree.

    That is: every row ``c`` ends with ``c`` itself, and without it is the row of its parent
    ``p < c`` (its second largest entry), or is empty (a root; parent -1). The identity is such
    a matrix (every parent -1), as is an ancestor matrix of a tree whose nodes are numbered
    parents first. None when ``M`` is not.

    Parameters
    ----------
    M : csr_matrix of shape (m, m), sorted 0/1 rows

    Returns
    -------
    ndarray of int, shape (m,), or None
    """
    m = M.shape[0]
    ptr, idx = M.indptr, M.indices
    lens = np.diff(ptr)
    if M.shape[1] != m or np.any(lens == 0) or not np.array_equal(idx[ptr[1:] - 1], np.arange(m)):
        return None
    par = np.full(m, -1, dtype=np.int64)
    inner = lens >= 2
    par[inner] = idx[ptr[1:][inner] - 2]
    rows = np.flatnonzero(inner)
    if np.any(par[rows] >= rows) or np.any(lens[rows] != lens[par[rows]] + 1):
        return None
    # row(c) without c equals row(par[c]), entry by entry
    own = np.repeat(ptr[rows], lens[rows] - 1)
    theirs = np.repeat(ptr[par[rows]], lens[rows] - 1)
    offset = np.arange(len(own)) - np.repeat(
        np.cumsum(lens[rows] - 1) - (lens[rows] - 1), lens[rows] - 1
    )
    if not np.array_equal(idx[own + offset], idx[theirs + offset]):
        return None
    return par


class FlatBlocks:
    """The blocks of a flat model's dual without their tables (one block per example).

    Parameters
    ----------
    y : ndarray of int, shape (n,)
        The label (node id) of each example: block ``k`` is example ``k``.
    cand : ndarray of int, shape (n_cand,)
        The candidates, increasing.
    M : csr_matrix of shape (m, m), 0/1 entries, sorted rows
        ``a_c`` per node: the ancestor matrix (path sums) or the identity.
    anc : csr_matrix of shape (m, m), 0/1 entries, sorted rows
        The ancestor matrix (``A+(c)`` per row), for ``Delta``.
    dtab : ndarray of shape (max_count + 1,)
        ``Delta`` as a function of ``|A+(y) Δ A+(c)|`` (the loss's transform); None for the
        zero-one loss (``Delta = 1`` for ``c != y``).
    max_delta : float
        The largest ``Delta(y_k, c)`` over the blocks (the solver's tolerance scales with it).
    C : float
        The weight of the losses.
    table : callable
        ``table(v) -> (U, L)``: the explicit table of label ``v`` (unscaled, the null label
        last), built on request by the Python pass and as the reference.
    pair_delta : callable
        ``pair_delta(ys, cs) -> Delta``, elementwise, shape (k,).
    scaling : {"slack", "margin", "ratio"}, default "slack"
        How ``Delta`` enters a label's row: slack rescaling ``L = C Delta``, ``U = C Delta
        (a_y - a_c)`` (seed 000); margin rescaling ``L = C Delta``, ``U = C (a_y - a_c)``
        (seed 003 eq. 3/10); the ratio ``L = C``, ``U = C (a_y - a_c) / Delta`` (seed 003
        eq. 13). The last two need a tree (``chain``); ``max_delta`` is then the largest
        ``L / C``.
    node_weight : ndarray of shape (m,), optional
        Scale the entries of every row by a weight per node (seed 003's class attributes:
        ``U = ... (C[y] - C[c])`` with ``C[c] = c o a_c``). Needs a tree.
    delta_rows : DeltaRows, optional
        Take ``Delta`` from weighted path lengths, ``T(W(y) + W(c) - 2 W(A+(y) ∩ A+(c)))`` as
        :class:`~hierlab.core.losses.DeltaRows` does (to the bit), instead of ``dtab`` (seed
        003's normalised loss). Needs a tree.

    Attributes
    ----------
    rows : ndarray of int, shape (n,)
        Labels of each block: the candidates other than ``y_k``, then the null label.
    pos : ndarray of int, shape (n,)
        Where ``y_k`` sits in ``cand`` (``n_cand`` when it is not a candidate): label ``r`` of
        block ``k`` is the candidate ``cand[r + (r >= pos_k)]``.
    """

    def __init__(
        self,
        y: np.ndarray,
        cand: np.ndarray,
        M: sp.csr_matrix,
        anc: sp.csr_matrix,
        dtab: np.ndarray | None,
        max_delta: float,
        C: float,
        table: Callable[[int], tuple[Any, np.ndarray]],
        pair_delta: Callable[[np.ndarray, np.ndarray], np.ndarray],
        *,
        scaling: str = "slack",
        node_weight: np.ndarray | None = None,
        delta_rows: Any = None,
    ) -> None:
        if scaling not in SCALINGS:
            raise ParameterError(f"FlatBlocks: scaling must be one of {SCALINGS}, got {scaling!r}")
        self.scaling = scaling
        self.y = np.asarray(y, dtype=np.int64)
        self.cand = np.asarray(cand, dtype=np.int64)
        for name, mat in (("M", M), ("anc", anc)):
            if not (mat.has_sorted_indices and np.all(mat.data == 1.0)):
                raise ParameterError(f"FlatBlocks: {name} must have sorted 0/1 rows")
        self.M, self.anc = M, anc
        self.same = M is anc
        #: the rows are ancestor chains of a tree (:func:`chain_parents`): the compiled scan
        #: then forms every candidate's ``Delta`` and ``(a_y - a_c) . S`` in O(m) per visit
        #: and per step from path sums, instead of merging two rows per candidate
        m_par = chain_parents(M)
        a_par = m_par if self.same else chain_parents(anc)
        self.chain = m_par is not None and a_par is not None
        self.m_par = m_par if m_par is not None else np.zeros(0, dtype=np.int64)
        self.a_par = a_par if a_par is not None else np.zeros(0, dtype=np.int64)
        self.a_len = np.diff(anc.indptr).astype(np.int64)
        #: ``a_c = e_c`` (FLATMULT): a label's row is ``C Delta (e_y - e_c)``, two entries
        self.identity = bool(
            M.shape[0] == M.shape[1]
            and M.nnz == M.shape[0]
            and np.array_equal(M.indices, np.arange(M.shape[0]))
            and np.array_equal(M.indptr, np.arange(M.shape[0] + 1))
        )
        self.unit_delta = dtab is None
        self.dtab = np.zeros(1) if dtab is None else np.asarray(dtab, dtype=np.float64)
        if not self.unit_delta and np.any(self.dtab[1:] <= 0):
            raise ParameterError("FlatBlocks: Delta must be positive between distinct labels")
        self.max_delta = float(max_delta)
        self.C = float(C)
        self.node_weight = None if node_weight is None else np.asarray(node_weight, np.float64)
        self.delta_rows = delta_rows
        if (scaling != "slack" or node_weight is not None or delta_rows is not None) and not (
            self.chain
        ):
            raise ParameterError(
                "FlatBlocks: margin or ratio scaling, node weights and weighted losses need a "
                "tree's ancestor chains"
            )
        if delta_rows is not None and self.unit_delta:
            raise ParameterError("FlatBlocks: delta_rows replaces dtab; pass dtab for both")
        self.table = table
        self.pair_delta = pair_delta
        pos = np.searchsorted(self.cand, self.y)
        present = np.zeros(len(self.y), dtype=bool)
        inside = pos < len(self.cand)
        present[inside] = self.cand[pos[inside]] == self.y[inside]
        self.pos = np.where(present, pos, len(self.cand)).astype(np.int64)
        self.rows = (len(self.cand) - present + 1).astype(np.int64)
        self._tables: dict[int, tuple[sp.csr_matrix, np.ndarray]] = {}
        #: the dual variables as one active set per block: labels ``act_r[k, :act_n[k]]``
        #: (increasing) with masses ``act_a[k, :act_n[k]] > 0``; the capacity doubles when a
        #: block outgrows it (:meth:`set_alpha`)
        self.act_r = np.zeros((len(self.y), 0), dtype=np.int64)
        self.act_a = np.zeros((len(self.y), 0))
        self.act_n = np.zeros(len(self.y), dtype=np.int64)

    # ------------------------------------------------------------------ the dual variables
    def set_alpha(self, blk: np.ndarray, r: np.ndarray, a: np.ndarray) -> None:
        """Set the dual variables from the labels with mass: block ``blk[i]``, label ``r[i]``,
        mass ``a[i] > 0``, sorted by block then label (every block has some mass)."""
        n = len(self.y)
        cnt = np.bincount(blk, minlength=n)
        cap = max(4, int(cnt.max(initial=0)))
        self.act_r = np.zeros((n, cap), dtype=np.int64)
        self.act_a = np.zeros((n, cap))
        start = np.r_[0, np.cumsum(cnt)[:-1]]
        col = np.arange(len(blk)) - start[blk]
        self.act_r[blk, col] = r
        self.act_a[blk, col] = a
        self.act_n = cnt.astype(np.int64)

    def start_alpha(self, dual_init: Any, a_ptr: np.ndarray) -> None:
        """The starting point: every block at its null label, or ``dual_init`` (flat of shape
        (n_alpha,), padded (n_blocks, max_labels), or a sparse (1, n_alpha) row) normalised.

        Only the labels with mass are kept: a sparse ``dual_init`` costs its non-zeros."""
        n = len(self.y)
        if dual_init is None:
            self.set_alpha(np.arange(n), self.rows - 1, np.ones(n))
            return
        n_alpha, R = int(a_ptr[-1]), int(self.rows.max(initial=1))
        if sp.issparse(dual_init):
            row = sp.csr_matrix(dual_init, dtype=np.float64)
            row.sum_duplicates()
            if row.shape != (1, n_alpha):
                raise ParameterError(f"dual_init must be of shape (1, {n_alpha}), got {row.shape}")
            idx, val = row.indices.astype(np.int64), row.data
        else:
            given = np.array(dual_init, dtype=np.float64)
            if given.ndim == 2 and given.shape == (n, R):
                if np.any(given[np.arange(R)[None, :] >= self.rows[:, None]] != 0):
                    raise ParameterError("dual_init puts mass on labels a block does not have")
                k, r = np.nonzero(given)
                idx, val = a_ptr[k] + r, given[k, r]
            elif given.shape == (n_alpha,):
                idx = np.flatnonzero(given)
                val = given[idx]
            else:
                raise ParameterError(
                    f"dual_init must be non-negative of shape {(n_alpha,)} or {(n, R)}, "
                    f"got {np.shape(dual_init)}"
                )
        if (val < 0).any() or not np.isfinite(val).all():
            raise ParameterError("dual_init must be finite and non-negative")
        keep = val > 0
        idx, val = idx[keep], val[keep]
        order = np.argsort(idx, kind="stable")
        idx, val = idx[order], val[order]
        blk = np.searchsorted(a_ptr, idx, side="right") - 1
        total = np.bincount(blk, weights=val, minlength=n)
        if np.any(total <= 0):
            raise ParameterError("dual_init must put some mass on every block")
        self.set_alpha(blk, idx - a_ptr[blk], val)
        self.normalise(a_ptr)  # as the table solver does, to the last bit

    def mass(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The labels with mass: blocks, labels and masses, sorted by block then label."""
        take = np.arange(self.act_r.shape[1])[None, :] < self.act_n[:, None]
        blk = np.nonzero(take)[0]
        return blk, self.act_r[take], self.act_a[take]

    def normalise(self, a_ptr: np.ndarray) -> None:
        """Put every block back on its simplex (rounding).

        The blocks' sums are those of the table solver to the last bit (``np.add.reduceat``
        over each block's dense labels, whose pairwise summation depends on where the masses
        sit): the pairwise line search leaves exact ties between labels, and a last-bit
        difference would break them otherwise. A chunk of blocks at a time: O(2^18) memory."""
        n = len(self.y)
        total = np.empty(n)
        step = max(1, _NORMALISE_ENTRIES // int(self.rows.max(initial=1)))
        cols = np.arange(self.act_r.shape[1])[None, :]
        for b0 in range(0, n, step):
            b1 = min(n, b0 + step)
            k, e = np.nonzero(cols < self.act_n[b0:b1, None])
            seg = np.zeros(int(a_ptr[b1] - a_ptr[b0]))
            seg[a_ptr[b0 + k] - a_ptr[b0] + self.act_r[b0 + k, e]] = self.act_a[b0 + k, e]
            total[b0:b1] = np.add.reduceat(seg, a_ptr[b0:b1] - a_ptr[b0])
        self.act_a /= total[:, None]

    def flat_alpha(self, a_ptr: np.ndarray) -> np.ndarray:
        """The dual variables in the flat layout of the table solver, shape (n_alpha,):
        O(n x candidates) memory, formed only on request."""
        blk, r, a = self.mass()
        out = np.zeros(int(a_ptr[-1]))
        out[a_ptr[blk] + r] = a
        return out

    def sparse_alpha(self, a_ptr: np.ndarray) -> sp.csr_matrix:
        """The dual variables as a sparse row of shape (1, n_alpha): O(labels with mass)."""
        blk, r, a = self.mass()
        cols = a_ptr[blk] + r
        return sp.csr_matrix((a, (np.zeros(len(a), dtype=np.int64), cols)), shape=(1, a_ptr[-1]))

    def padded(self) -> np.ndarray:
        """The dual variables as (n_blocks, max_labels): O(n x candidates), on request."""
        blk, r, a = self.mass()
        out = np.zeros((len(self.y), int(self.rows.max(initial=1))))
        out[blk, r] = a
        return out

    def factors(self, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(L / C, U's factor)`` of labels with losses ``delta`` (see ``scaling``)."""
        if self.scaling == "margin":
            return delta, np.ones_like(delta)
        if self.scaling == "ratio":
            return np.ones_like(delta), 1.0 / delta
        return delta, delta

    @property
    def max_loss(self) -> float:
        """The largest ``L`` of any label: ``C max_delta`` (``C max Delta`` but for eq. 13's
        ratio, whose ``L`` is ``C``)."""
        return self.C * self.max_delta

    def candidate(self, blocks: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The candidate of label ``r`` of each block in ``blocks`` (non-null labels)."""
        return self.cand[r + (r >= self.pos[blocks])]

    def scaled_table(self, v: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """The explicit table of label ``v`` scaled by ``C``: the rows of
        :func:`hierlab.solvers.bcfw._csr_tables` (kept for the last few labels)."""
        got = self._tables.get(v)
        if got is None:
            U, L = self.table(v)
            U = sp.csr_matrix(U, dtype=np.float64)
            U.sum_duplicates()
            U.eliminate_zeros()
            got = (sp.csr_matrix(U * self.C, dtype=np.float64), self.C * np.asarray(L, float))
            if len(self._tables) >= _TABLE_CACHE:
                self._tables.clear()
            self._tables[v] = got
        return got

    def dual_point(self, n: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """``B`` (n, m) with ``V = X^T B`` and the linear dual term ``sum alpha L`` (one
        objective block, then the blocks' null labels' 0).

        Only the labels with mass are formed: O(n_active D) memory. ``B`` is the product of the
        same masses and rows as the table form's, summed in the same order."""
        blk, r, a = self.mass()
        real = r < self.rows[blk] - 1  # the null label has no row and no loss
        blk, r, a = blk[real], r[real], a[real]
        ys, cs = self.y[blk], self.candidate(blk, r)
        d, u = self.factors(self.pair_delta(ys, cs))
        U = sp.csr_matrix(sp.diags(u) @ (self.M[ys] - self.M[cs]), dtype=np.float64)
        if self.node_weight is not None:
            U = sp.csr_matrix(U @ sp.diags(self.node_weight))
        U.sum_duplicates()
        U.eliminate_zeros()
        U = sp.csr_matrix(U * self.C, dtype=np.float64)
        mass = sp.csr_matrix((a, (blk, np.arange(len(a)))), shape=(n, len(a)))
        B = sp.csr_matrix(mass @ U)
        ell = np.bincount(np.zeros(len(a), dtype=np.int64), weights=a * (self.C * d), minlength=2)
        return B, ell

    # ------------------------------------------------------------------ the passes
    def python_pass(
        self,
        Xs: sp.csr_matrix,
        sqn: np.ndarray,
        WT: np.ndarray,
        order: np.ndarray,
        steps_of: Callable[..., tuple[np.ndarray | None, int]],
        fw_gap: np.ndarray,
    ) -> int:
        """One epoch in numpy: :meth:`hierlab.solvers.bcfw.BCFW._python_pass` with each
        example's table built when it is visited (:meth:`scaled_table`), never all of them.

        ``steps_of(alpha_block, U, L, S, sq, acc)`` makes the pairwise steps of one block;
        ``fw_gap[k]`` gets the block's Frank-Wolfe gap before them."""
        ip, ind, dat = Xs.indptr, Xs.indices, Xs.data
        steps = 0
        for k in order:
            c_k, v_k = ind[ip[k] : ip[k + 1]], dat[ip[k] : ip[k + 1]]
            Wk = WT[c_k]
            S = v_k @ Wk
            U, L = self.scaled_table(int(self.y[k]))
            al = np.zeros(self.rows[k])  # the block's simplex, dense while it is visited
            na = self.act_n[k]
            al[self.act_r[k, :na]] = self.act_a[k, :na]
            h = L - U @ S
            fw_gap[k] = float(h.max() - al @ h)
            acc, taken = steps_of(al, U, L, S, sqn[k], None)
            steps += taken
            r = np.flatnonzero(al > 0)
            if len(r) > self.act_r.shape[1]:
                self._grow(len(r))
            self.act_n[k] = len(r)
            self.act_r[k, : len(r)] = r
            self.act_a[k, : len(r)] = al[r]
            if acc is not None:
                Wk += np.multiply.outer(v_k, acc)
                WT[c_k] = Wk
        return steps

    def _grow(self, need: int) -> None:
        cap = max(need, 2 * self.act_r.shape[1])
        self.act_r = np.pad(self.act_r, ((0, 0), (0, cap - self.act_r.shape[1])))
        self.act_a = np.pad(self.act_a, ((0, 0), (0, cap - self.act_a.shape[1])))

    def kernel_pass(
        self,
        Xs: sp.csr_matrix,
        sqn: np.ndarray,
        WT: np.ndarray,
        order: np.ndarray,
        Pf: tuple[np.ndarray, ...],
        pdiag: np.ndarray | None,
        eps: float,
        inner: int,
        inner_rtol: float,
        fw_gap: np.ndarray,
    ) -> int:
        """One epoch through :func:`_flat_pass_kernel`; returns the steps (-1: overflow).
        ``fw_gap[k]`` gets the Frank-Wolfe gap of each visited block."""
        steps, self.act_r, self.act_a = FLAT_PASS_KERNEL(
            order, Xs.indptr, Xs.indices, Xs.data, sqn, *self.kernel_args(), self.act_r,
            self.act_a, self.act_n, WT, Pf, pdiag if pdiag is not None else sqn[:0],
            pdiag is not None, eps, inner, inner_rtol, fw_gap,
        )  # fmt: skip
        return int(steps)

    def kernel_args(self) -> tuple[Any, ...]:
        """The arrays :func:`_flat_pass_kernel` reads about the labels."""
        dr = self.delta_rows
        nw = self.node_weight
        return (
            self.y, self.cand, self.pos, self.rows, self.M.indptr, self.M.indices,
            self.anc.indptr, self.anc.indices, self.same, self.unit_delta, self.dtab, self.C,
            self.identity, self.chain, self.m_par, self.a_par, self.a_len,
            SCALINGS.index(self.scaling), nw if nw is not None else self.dtab[:0],
            nw is not None, dr is not None, (dr.loss if dr is not None else _UNUSED).compiled,
            dr.Wn if dr is not None else self.dtab[:0],
        )  # fmt: skip


def _unused_transform(size: Any) -> Any:
    return size


#: the kernel's weighted-``Delta`` argument when the blocks take ``Delta`` from ``dtab`` (an
#: argument of the callbacks' type, never called)
_UNUSED = LabelLoss("unused", _unused_transform)


# ---------------------------------------------------------------------- the compiled pass
def _curvature(
    db: np.ndarray,
    touched: np.ndarray,
    nt: int,
    Pf: tuple[np.ndarray, ...],
    pdiag: np.ndarray,
    use_pdiag: bool,
    Pd: np.ndarray,
    sq: float,
) -> float:  # pragma: no cover - compiled by numba
    """``||x_k||^2 d^T P d`` of a step's direction ``d = u_a - u_v`` (dense scratch ``db``,
    support ``touched[:nt]``); with a non-diagonal metric ``Pd = P d`` is written too, from
    the stored ``P = Pf[0]`` or, when ``Pf[1:]`` holds a factor (:meth:`~hierlab.core.
    regularizers.DualMetric.kernel_arrays`), by the factor's two sweeps over the tree. Shared
    by both passes (:func:`hierlab.solvers.bcfw._pass_kernel`, :func:`_flat_pass_kernel`)."""
    q = 0.0
    if use_pdiag:
        for e in range(nt):
            j = touched[e]
            q += db[j] * db[j] * pdiag[j]
    elif Pf[1].shape[0] > 0:  # only the blocks d touches: P is block diagonal
        FACTOR_SOLVE(Pf[1], Pf[2], Pf[3], Pf[4], Pf[5], Pf[6], Pf[7], touched, nt, db, Pd)
        for e in range(nt):
            q += db[touched[e]] * Pd[touched[e]]
    else:
        P = Pf[0]
        for j in range(Pd.shape[0]):
            s = 0.0
            for e in range(nt):
                s += P[j, touched[e]] * db[touched[e]]
            Pd[j] = s
        for e in range(nt):
            q += db[touched[e]] * Pd[touched[e]]
    q *= sq
    return q


def _take_step(
    gam: float,
    gs: float,
    db: np.ndarray,
    Pd: np.ndarray,
    pdiag: np.ndarray,
    use_pdiag: bool,
    mark: np.ndarray,
    touched: np.ndarray,
    nt: int,
    S: np.ndarray,
    acc: np.ndarray,
    amark: np.ndarray,
    atouched: np.ndarray,
    na: int,
) -> int:  # pragma: no cover - compiled by numba
    """A step of size ``gam`` along ``P d``: ``S += gs P d``, ``acc += gam P d`` (with a
    diagonal metric only on ``d``'s support, recorded in ``atouched``), then ``db`` and
    ``mark`` cleared. Returns the new size of ``acc``'s support ``na``."""
    if use_pdiag:
        for e in range(nt):
            j = touched[e]
            pj = pdiag[j] * db[j]
            S[j] += gs * pj
            acc[j] += gam * pj
            if not amark[j]:
                amark[j] = True
                atouched[na] = j
                na += 1
    else:
        for j in range(S.shape[0]):
            S[j] += gs * Pd[j]
            acc[j] += gam * Pd[j]
    for e in range(nt):
        j = touched[e]
        db[j] = 0.0
        mark[j] = False
    return na


def _update_w(
    WT: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    k: int,
    acc: np.ndarray,
    use_pdiag: bool,
    amark: np.ndarray,
    atouched: np.ndarray,
    na: int,
) -> None:  # pragma: no cover - compiled by numba
    """``W^T[cols of x_k] += x_k acc`` (with a diagonal metric on ``acc``'s support
    ``atouched[:na]`` only), then ``acc`` and ``amark`` cleared."""
    if use_pdiag:
        for e in range(indptr[k], indptr[k + 1]):
            c = indices[e]
            x = data[e]
            for f in range(na):
                WT[c, atouched[f]] += x * acc[atouched[f]]
        for f in range(na):
            acc[atouched[f]] = 0.0
            amark[atouched[f]] = False
    else:
        sparse_row_update(WT, indptr, indices, data, k, acc)
        for j in range(acc.shape[0]):
            acc[j] = 0.0


def _sym_diff(
    ptr: np.ndarray, idx: np.ndarray, y: int, c: int, out_idx: np.ndarray, out_sgn: np.ndarray
) -> int:  # pragma: no cover - compiled by numba
    """The entries of ``a_y - a_c`` (rows of a sorted 0/1 CSR), increasing: their nodes into
    ``out_idx``, signs (+1: ``y``'s only, -1: ``c``'s only) into ``out_sgn``; returns how many."""
    i, ie = ptr[y], ptr[y + 1]
    j, je = ptr[c], ptr[c + 1]
    n = 0
    while i < ie or j < je:
        if j >= je or (i < ie and idx[i] < idx[j]):
            out_idx[n] = idx[i]
            out_sgn[n] = 1.0
            i += 1
            n += 1
        elif i >= ie or idx[j] < idx[i]:
            out_idx[n] = idx[j]
            out_sgn[n] = -1.0
            j += 1
            n += 1
        else:  # a common ancestor cancels
            i += 1
            j += 1
    return n


def _row_dot(
    ptr: np.ndarray, idx: np.ndarray, y: int, c: int, S: np.ndarray, dc: float
) -> float:  # pragma: no cover - compiled by numba
    """``U_c . S`` with ``U_c = dc (a_y - a_c)``: the entries of :func:`_sym_diff` in the same
    order, summed from 0 as the table scan sums a sparse row (no buffers written)."""
    i, ie = ptr[y], ptr[y + 1]
    j, je = ptr[c], ptr[c + 1]
    s = 0.0
    while i < ie or j < je:
        if j >= je or (i < ie and idx[i] < idx[j]):
            s += (1.0 * dc) * S[idx[i]]
            i += 1
        elif i >= ie or idx[j] < idx[i]:
            s += (-1.0 * dc) * S[idx[j]]
            j += 1
        else:
            i += 1
            j += 1
    return s


def _count_diff(ptr: np.ndarray, idx: np.ndarray, y: int, c: int) -> int:  # pragma: no cover
    """``|A+(y) Δ A+(c)|`` from two sorted rows (compiled by numba)."""
    i, ie = ptr[y], ptr[y + 1]
    j, je = ptr[c], ptr[c + 1]
    n = 0
    while i < ie and j < je:
        if idx[i] == idx[j]:
            i += 1
            j += 1
        elif idx[i] < idx[j]:
            i += 1
            n += 1
        else:
            j += 1
            n += 1
    return n + (ie - i) + (je - j)


def _label_row(
    k: int,
    r: int,
    y: np.ndarray,
    cand: np.ndarray,
    pos: np.ndarray,
    m_ptr: np.ndarray,
    m_idx: np.ndarray,
    a_ptr: np.ndarray,
    a_idx: np.ndarray,
    same: bool,
    unit_delta: bool,
    dtab: np.ndarray,
    out_idx: np.ndarray,
    out_sgn: np.ndarray,
) -> tuple[int, float]:  # pragma: no cover - compiled by numba
    """Label ``r`` (not the null one) of block ``k``: its row's entries (``_sym_diff``) and
    ``Delta(y_k, c)``; returns (entries, Delta)."""
    c = cand[r + 1] if r >= pos[k] else cand[r]
    yk = y[k]
    nt = _SYM_DIFF(m_ptr, m_idx, yk, c, out_idx, out_sgn)
    if unit_delta:
        d = 1.0
    elif same:
        d = dtab[nt]
    else:
        d = dtab[_COUNT_DIFF(a_ptr, a_idx, yk, c)]
    return nt, d


def _common_lengths(
    yk: int,
    an_ptr: np.ndarray,
    an_idx: np.ndarray,
    a_par: np.ndarray,
    lens: np.ndarray,
    on_y: np.ndarray,
    common: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``common[c]`` = ``lens`` of the lowest common ancestor of ``y_k`` and ``c`` on a tree
    (the length, or weight, of ``A+(y) ∩ A+(c)`` when ``lens`` holds the paths' lengths or
    weights), passed down from parents: an ancestor of ``y_k`` keeps its own, any other node
    its parent's. ``on_y`` (all False) is restored."""
    for e in range(an_ptr[yk], an_ptr[yk + 1]):
        on_y[an_idx[e]] = True
    for c in range(common.shape[0]):  # parents first
        if on_y[c]:
            common[c] = lens[c]
        else:
            p = a_par[c]
            common[c] = common[p] if p >= 0 else 0
    for e in range(an_ptr[yk], an_ptr[yk + 1]):
        on_y[an_idx[e]] = False


def _chain_delta(
    yk: int,
    pk: int,
    rows: int,
    cand: np.ndarray,
    an_ptr: np.ndarray,
    an_idx: np.ndarray,
    a_par: np.ndarray,
    a_len: np.ndarray,
    dtab: np.ndarray,
    on_y: np.ndarray,
    common: np.ndarray,
    dvec: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """``dvec[r] = Delta(y_k, c_r)`` for every label ``r`` of a block (not the null one) from
    a tree's ancestor chains (:func:`chain_parents`): ``|A+(y) Δ A+(c)| = |a_y| + |a_c| - 2
    |a_y ∩ a_c|``, the common part's length passed down from parents (an ancestor of ``y``
    keeps its own, any other node its parent's). O(m); ``on_y`` (all False) is restored."""
    _COMMON_LENGTHS(yk, an_ptr, an_idx, a_par, a_len, on_y, common)
    for r in range(rows - 1):
        c = cand[r + 1] if r >= pk else cand[r]
        dvec[r] = dtab[a_len[yk] + a_len[c] - 2 * common[c]]


def _chain_delta_weighted(
    yk: int,
    pk: int,
    rows: int,
    cand: np.ndarray,
    an_ptr: np.ndarray,
    an_idx: np.ndarray,
    a_par: np.ndarray,
    Wn: np.ndarray,
    transform: Callable[[float], float],
    on_y: np.ndarray,
    wcommon: np.ndarray,
    dvec: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """:func:`_chain_delta` for weighted path lengths: ``dvec[r] = T(W(y) + W(c) - 2 W(A+(y)
    ∩ A+(c)))`` with ``W = Wn`` (:class:`~hierlab.core.losses.DeltaRows`; on a tree the common
    part is the path of the lowest common ancestor, whose ``Wn`` is passed down from parents)
    and ``T`` the loss's ``transform`` (:attr:`~hierlab.core.losses.LabelLoss.compiled`): the
    numbers of ``DeltaRows.rows``, to the bit."""
    _COMMON_LENGTHS(yk, an_ptr, an_idx, a_par, Wn, on_y, wcommon)
    for r in range(rows - 1):
        c = cand[r + 1] if r >= pk else cand[r]
        size = Wn[yk] + Wn[c] - 2.0 * wcommon[c]
        dvec[r] = transform(size if size > 0.0 else 0.0)


def _scale_factors(
    dvec: np.ndarray, rows: int, scaling: int, lvec: np.ndarray, uvec: np.ndarray
) -> None:  # pragma: no cover - compiled by numba
    """``L / C`` and ``U``'s factor of every label of a block from its ``Delta`` (``dvec``):
    margin rescaling (1) ``(Delta, 1)``, the ratio of eq. 13 (2) ``(1, 1 / Delta)``."""
    for r in range(rows - 1):
        if scaling == 1:
            lvec[r] = dvec[r]
            uvec[r] = 1.0
        else:
            lvec[r] = 1.0
            uvec[r] = 1.0 / dvec[r]


def _chain_scan(
    yk: int,
    pk: int,
    rows: int,
    cand: np.ndarray,
    m_par: np.ndarray,
    S: np.ndarray,
    lvec: np.ndarray,
    uvec: np.ndarray,
    C: float,
    mw: np.ndarray,
    use_mw: bool,
    path: np.ndarray,
    hbuf: np.ndarray,
) -> tuple[float, int]:  # pragma: no cover - compiled by numba
    """The scan ``h_r = C l_r - C u_r (a_y - a_c) . S`` of a block's labels (``l = u =
    Delta`` for slack rescaling; the null label's ``h = 0`` last) into ``hbuf``, with ``(a_y -
    a_c) . S = P_y - P_c`` from the path sums ``P_c = P_parent(c) + S_c`` (``+ mw_c S_c`` with
    node weights) over the rows' chains: O(m) instead of a merge of two rows per label.
    Returns ``(max h, its first label)``. The values equal the merged rows' up to rounding
    (their sums run in another order), so labels that tie in exact arithmetic may be ordered
    otherwise than by :func:`_row_dot`."""
    for c in range(path.shape[0]):  # parents first
        p = m_par[c]
        sc = S[c] * mw[c] if use_mw else S[c]
        path[c] = sc + path[p] if p >= 0 else sc
    py = path[yk]
    hmax = -np.inf
    ia = 0
    for r in range(rows - 1):
        c = cand[r + 1] if r >= pk else cand[r]
        dc = uvec[r] * C
        h = C * lvec[r] - dc * (py - path[c])
        hbuf[r] = h
        if h > hmax:
            hmax = h
            ia = r
    hbuf[rows - 1] = 0.0
    if 0.0 > hmax:
        hmax = 0.0
        ia = rows - 1
    return hmax, ia


def _path_sums_rows(Z: np.ndarray, m_par: np.ndarray) -> None:  # pragma: no cover - numba
    """``Z[i, c] += Z[i, parent(c)]`` for every row, parents first, in place: the path sums
    ``Z A^T`` of an ancestor-chain matrix (:func:`chain_parents`), summed in the order of a
    CSR product with ``A`` (root first), so the values are its to the bit."""
    for i in range(Z.shape[0]):
        for c in range(Z.shape[1]):
            p = m_par[c]
            if p >= 0:
                Z[i, c] = Z[i, p] + Z[i, c]


def _most_violated_rows(
    S: np.ndarray,
    y: np.ndarray,
    cand: np.ndarray,
    an_ptr: np.ndarray,
    an_idx: np.ndarray,
    a_par: np.ndarray,
    a_len: np.ndarray,
    dtab: np.ndarray,
    val: np.ndarray,
    pos: np.ndarray,
    dlt: np.ndarray,
) -> None:  # pragma: no cover - compiled by numba
    """Per row ``i``: ``max_c Delta(y_i, c) max(0, 1 - S_iy + S_ic)`` over the candidates, its
    first maximiser's position and its ``Delta`` (into ``val``, ``pos``, ``dlt``), with every
    ``Delta(y_i, .)`` from the common chain's length (:func:`_chain_delta`): O(m) per row,
    the numbers of the numpy form (the same products, the first maximum)."""
    m = S.shape[1]
    on_y = np.zeros(m, dtype=np.bool_)
    common = np.zeros(m, dtype=np.int64)
    dvec = np.empty(cand.shape[0] + 1)
    for i in range(S.shape[0]):
        yi = y[i]
        _CHAIN_DELTA(yi, cand.shape[0] + 1, cand.shape[0] + 1, cand, an_ptr, an_idx, a_par,
                     a_len, dtab, on_y, common, dvec)  # fmt: skip
        sy = 1.0 - S[i, yi]
        best = -np.inf
        ia = 0
        for r in range(cand.shape[0]):
            v = S[i, cand[r]] + sy
            if v < 0.0:
                v = 0.0
            v = v * dvec[r]
            if v > best:
                best = v
                ia = r
        val[i] = best
        pos[i] = ia
        dlt[i] = dvec[ia]


def _flat_pass_kernel(
    order: np.ndarray,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    sqn: np.ndarray,
    y: np.ndarray,
    cand: np.ndarray,
    pos: np.ndarray,
    nrows: np.ndarray,
    m_ptr: np.ndarray,
    m_idx: np.ndarray,
    an_ptr: np.ndarray,
    an_idx: np.ndarray,
    same: bool,
    unit_delta: bool,
    dtab: np.ndarray,
    C: float,
    identity: bool,
    chain: bool,
    m_par: np.ndarray,
    a_par: np.ndarray,
    a_len: np.ndarray,
    scaling: int,
    mw: np.ndarray,
    use_mw: bool,
    wdelta: bool,
    dtransform: Callable[[float], float],
    Wn: np.ndarray,
    act_r: np.ndarray,
    act_a: np.ndarray,
    act_n: np.ndarray,
    WT: np.ndarray,
    Pf: tuple[np.ndarray, ...],
    pdiag: np.ndarray,
    use_pdiag: bool,
    eps: float,
    inner: int,
    inner_rtol: float,
    fw_gap: np.ndarray,
) -> tuple[
    int, np.ndarray, np.ndarray
]:  # pragma: no cover - numba (numpy form: FlatBlocks.python_pass)
    """One BCFW epoch of a flat model, its labels formed on the fly.

    The steps of :func:`hierlab.solvers.bcfw._pass_kernel` on one block per example: the scan
    ``h_r = L_r - U_r . S`` over the block's labels (candidate rows from :func:`_sym_diff`,
    ``L = C Delta``, ``U = C Delta (a_y - a_c)``), the pair ``(a, v)``, the exact line search
    and the update of ``W``. ``fw_gap[k]`` gets the block's Frank-Wolfe gap
    ``max_r h_r - alpha . h`` at the visit's first scan (the running gap estimate). Returns the
    number of steps, or -1 when a step's curvature overflowed.

    With ``chain`` (the rows are a tree's ancestor chains, :func:`chain_parents`) the scan
    reads each candidate in O(1): per visit ``Delta(y_k, c) = dtab[|a_y| + |a_c| - 2 |a_y ∩
    a_c|]`` for every ``c`` (the common part's length passed down from parents: an ancestor of
    ``y_k`` keeps its own, any other node its parent's), per step the path sums ``P_c =
    sum_{j in a_c} S_j`` (``P_c = P_parent + S_c``) and ``(a_y - a_c) . S = P_y - P_c`` (the
    common ancestors cancel in exact arithmetic; in floating point the scan's values differ
    from the merged rows' by rounding only).
    """
    m = WT.shape[1]
    S = np.empty(m)
    acc = np.zeros(m)
    db = np.zeros(m)
    Pd = np.zeros(m)
    mark = np.zeros(m, dtype=np.bool_)
    touched = np.empty(m, dtype=np.int64)
    amark = np.zeros(m, dtype=np.bool_)
    atouched = np.empty(m, dtype=np.int64)
    ridx = np.empty(m, dtype=np.int64)
    rsgn = np.empty(m)
    hbuf = np.empty(cand.shape[0] + 1)
    fast = chain and not (identity and unit_delta)
    dvec = np.ones(cand.shape[0] + 1)  # Delta(y_k, c) of each label of the visited block
    # L / C and U's factor per label: Delta both for slack rescaling (the same array)
    lvec = dvec if scaling == 0 else np.ones(cand.shape[0] + 1)
    uvec = dvec if scaling == 0 else np.ones(cand.shape[0] + 1)
    path = np.zeros(m if fast else 0)  # P_c
    common = np.zeros(m if fast else 0, dtype=np.int64)  # |a_y ∩ a_c|
    wcommon = np.zeros(m if wdelta else 0)  # W(A+(y) ∩ A+(c))
    on_y = np.zeros(m if fast else 0, dtype=np.bool_)
    steps = 0
    for oi in range(order.shape[0]):
        k = order[oi]
        sq = sqn[k]
        sparse_row_times(WT, indptr, indices, data, k, S)
        na = 0
        moved = False
        rows = nrows[k]
        stop = eps
        yk = y[k]
        if fast and not unit_delta:  # every label's Delta, once per visit
            if wdelta:
                _CHAIN_DELTA_WEIGHTED(yk, pos[k], rows, cand, an_ptr, an_idx, a_par, Wn, dtransform,
                                      on_y, wcommon, dvec)  # fmt: skip
            else:
                _CHAIN_DELTA(yk, pos[k], rows, cand, an_ptr, an_idx, a_par, a_len, dtab, on_y,
                             common, dvec)  # fmt: skip
            if scaling != 0:
                _SCALE_FACTORS(dvec, rows, scaling, lvec, uvec)
        for it in range(inner):
            # the pair: a = argmax h, v = argmin h over labels with mass (first wins)
            hmax = -np.inf
            ia = 0
            if identity and unit_delta:  # FLATMULT: h_c = C - (C s_y + (-C) s_c), no merge
                pk = pos[k]
                csy = C * S[y[k]]
                for r in range(rows - 1):
                    c = cand[r + 1] if r >= pk else cand[r]
                    h = C - (csy + (-C) * S[c])
                    hbuf[r] = h
                    if h > hmax:
                        hmax = h
                        ia = r
                hbuf[rows - 1] = 0.0
                if 0.0 > hmax:
                    hmax = 0.0
                    ia = rows - 1
            if fast:  # the chains' path sums: (a_y - a_c) . S = P_y - P_c
                hmax, ia = _CHAIN_SCAN(
                    yk, pos[k], rows, cand, m_par, S, lvec, uvec, C, mw, use_mw, path, hbuf
                )  # fmt: skip
            for r in range(0 if (identity and unit_delta) or fast else rows):  # the general scan
                if r == rows - 1:
                    h = 0.0 - 0.0  # the null label: L = 0, U = 0
                else:
                    c = cand[r + 1] if r >= pos[k] else cand[r]
                    if unit_delta:
                        d = 1.0
                    else:
                        d = dtab[_COUNT_DIFF(an_ptr, an_idx, y[k], c)]
                    h = C * d - _ROW_DOT(m_ptr, m_idx, y[k], c, S, d * C)
                hbuf[r] = h
                if h > hmax:
                    hmax = h
                    ia = r
            hmin = np.inf
            iv = 0
            for e in range(act_n[k]):  # labels increasing, as the table scan meets them
                r = act_r[k, e]
                if act_a[k, e] > 0.0 and hbuf[r] < hmin:
                    hmin = hbuf[r]
                    iv = r
            if it == 0:  # the block's Frank-Wolfe gap before its steps
                ah = 0.0
                for e in range(act_n[k]):
                    ah += act_a[k, e] * hbuf[act_r[k, e]]
                fw_gap[k] = hmax - ah
            gp = hmax - hmin
            if gp <= stop:
                break
            if stop == eps:
                stop = max(eps, inner_rtol * gp)
            # the direction u_a - u_v (a's entries first), its support in `touched`
            nt = 0
            for which in range(2):
                r = ia if which == 0 else iv
                if r == rows - 1:
                    continue
                ne, d = _LABEL_ROW(
                    k, r, y, cand, pos, m_ptr, m_idx, an_ptr, an_idx, same, unit_delta, dtab,
                    ridx, rsgn,
                )  # fmt: skip
                dc = (uvec[r] if fast else d) * C  # the same number for slack rescaling
                for e in range(ne):
                    j = ridx[e]
                    if not mark[j]:
                        mark[j] = True
                        touched[nt] = j
                        nt += 1
                    g = rsgn[e] * dc * mw[j] if use_mw else rsgn[e] * dc
                    if which == 0:
                        db[j] += g
                    else:
                        db[j] -= g
            q = CURVATURE(db, touched, nt, Pf, pdiag, use_pdiag, Pd, sq)
            if not q < np.inf:
                return -1, act_r, act_a
            # the masses of a and v in the active set (a joins it if new, v leaves at 0)
            na_k = act_n[k]
            ev = 0
            while act_r[k, ev] != iv:
                ev += 1
            ea = 0
            while ea < na_k and act_r[k, ea] < ia:
                ea += 1
            if ea == na_k or act_r[k, ea] != ia:  # insert a at ea
                if na_k == act_r.shape[1]:
                    cap = 2 * act_r.shape[1]
                    nr = np.zeros((act_r.shape[0], cap), dtype=np.int64)
                    nv = np.zeros((act_r.shape[0], cap))
                    nr[:, : act_r.shape[1]] = act_r
                    nv[:, : act_r.shape[1]] = act_a
                    act_r = nr
                    act_a = nv
                for e in range(na_k, ea, -1):
                    act_r[k, e] = act_r[k, e - 1]
                    act_a[k, e] = act_a[k, e - 1]
                act_r[k, ea] = ia
                act_a[k, ea] = 0.0
                na_k += 1
                act_n[k] = na_k
                if ev >= ea:
                    ev += 1
            gam = act_a[k, ev]
            if q > 0.0 and gp < gam * q:
                gam = gp / q
            act_a[k, ea] += gam
            act_a[k, ev] -= gam
            if act_a[k, ev] == 0.0:  # v leaves the active set
                for e in range(ev, na_k - 1):
                    act_r[k, e] = act_r[k, e + 1]
                    act_a[k, e] = act_a[k, e + 1]
                act_n[k] = na_k - 1
            na = TAKE_STEP(
                gam, gam * sq, db, Pd, pdiag, use_pdiag, mark, touched, nt, S, acc, amark,
                atouched, na,
            )  # fmt: skip
            moved = True
            steps += 1
        if moved:
            UPDATE_W(WT, indptr, indices, data, k, acc, use_pdiag, amark, atouched, na)
    return steps, act_r, act_a


#: the kernel and its building blocks (None without numba; the numpy pass then runs)
_SYM_DIFF: Any = njit(_sym_diff)
_COUNT_DIFF: Any = njit(_count_diff)
_ROW_DOT: Any = njit(_row_dot)
_LABEL_ROW: Any = njit(_label_row)
_CHAIN_DELTA: Any = njit(_chain_delta)
_COMMON_LENGTHS: Any = njit(_common_lengths)
_CHAIN_DELTA_WEIGHTED: Any = njit(_chain_delta_weighted)
_SCALE_FACTORS: Any = njit(_scale_factors)
_CHAIN_SCAN: Any = njit(_chain_scan)
_PATH_SUMS_ROWS: Any = njit(_path_sums_rows)
_MOST_VIOLATED_ROWS: Any = njit(_most_violated_rows)


def chain_path_sums(Z: np.ndarray, m_par: np.ndarray) -> bool:
    """Turn node scores ``Z`` (n, m) into path sums ``Z A^T`` in place with the compiled
    kernel (:func:`_path_sums_rows`); False (``Z`` untouched) when it cannot run (no numba,
    or ``Z`` not a writeable C-contiguous float64 array)."""
    if _PATH_SUMS_ROWS is None or not jit_enabled():
        return False
    if Z.dtype != np.float64 or not Z.flags.c_contiguous or not Z.flags.writeable:
        return False
    _PATH_SUMS_ROWS(Z, m_par)
    return True


def chain_most_violated(
    S: np.ndarray,
    y: np.ndarray,
    cand: np.ndarray,
    anc: sp.csr_matrix,
    a_par: np.ndarray,
    dtab: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Loss-augmented inference of a flat model with a tree loss, compiled
    (:func:`_most_violated_rows`): ``(val, pos, Delta)`` of shape (n,) each, or None when the
    kernel cannot run (no numba).

    Parameters
    ----------
    S : ndarray of shape (n, m)
        Scores (path sums for TREELOSS).
    y : ndarray of int, shape (n,)
    cand : ndarray of int, shape (n_cand,)
        Candidates, increasing.
    anc : csr_matrix of shape (m, m)
        The ancestor matrix, sorted rows, chains (``a_par`` its :func:`chain_parents`).
    a_par : ndarray of int, shape (m,)
    dtab : ndarray of shape (max_count + 1,)
        ``Delta`` as a function of ``|A+(y) Δ A+(c)|``.
    """
    if _MOST_VIOLATED_ROWS is None or not jit_enabled():
        return None
    n = S.shape[0]
    val, pos, dlt = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n)
    _MOST_VIOLATED_ROWS(
        np.ascontiguousarray(S, dtype=np.float64), np.asarray(y, dtype=np.int64),
        np.asarray(cand, dtype=np.int64), anc.indptr, anc.indices, a_par,
        np.diff(anc.indptr).astype(np.int64), np.asarray(dtab, dtype=np.float64), val, pos, dlt,
    )  # fmt: skip
    return val, pos, dlt


#: shared with :func:`hierlab.solvers.bcfw._pass_kernel` (the same step, the same arithmetic)
CURVATURE: Any = njit(_curvature)
TAKE_STEP: Any = njit(_take_step)
UPDATE_W: Any = njit(_update_w)
FLAT_PASS_KERNEL: Any = njit(_flat_pass_kernel)
