"""The single-label HSVM / NHSVM objective (seed 003) in the form the certified solvers take.

:class:`~hierlab.methods.nhsvm.model.HierarchicalHinge` is the primal objective of seed 003,

    J(W) = lam ||W||_F^2 + (1/N) sum_i max(0, max_l q_i(l)),

with, over the candidate leaves ``l``,

* ``q_i(l) = s_i(l) - s_i(y_i) + Δ(l, y_i)`` (eq. 3 / 10: margin rescaling), or
* ``q_i(l) = (s_i(l) - s_i(y_i)) / Δ~(l, y_i) + 1`` for ``Δ~ > 0`` (the variant of eq. 13),

and path scores ``s_i(l) = sum_n C[l, n] (W_n . x_i)`` (``C`` the class-attribute matrix of
eq. 1 / eq. 5). Every ``q_i(l)`` is linear in the node potentials ``P_i = W x_i``, so the loss
is a structured hinge ``max_r (L_r - U_r . P_i)`` with one row per candidate and the null row
``(0, 0)`` for the clip at 0, and ``lam ||W||^2`` is the L2 regulariser ``sigma/2 ||W||^2``
with ``sigma = 2 lam``. :class:`HingeDualModel` exposes exactly that: the model protocol of
:class:`~hierlab.core.objective.Objective` (scores, loss, subgradient) and its dual tables
(:class:`~hierlab.core.model.DualBlocks`), so block-coordinate Frank-Wolfe
(:class:`~hierlab.solvers.bcfw.BCFW`) solves HSVM and NHSVM with a certified duality gap;
:func:`hinge_problem` builds that ``Objective``.

On a tree BCFW keeps no tables (:meth:`HingeDualModel.implicit_blocks`): a block's labels are
formed when it is visited from the ancestor chains (:mod:`hierlab.solvers.bcfw_flat`, margin
rescaling or eq. 13's ratio, the class attributes as node weights, ``Δ`` from weighted path
lengths), and its dual variables are the labels with mass only, so memory is O(m D + n) beside
``W``, not (labels x candidates x path). The explicit tables (:meth:`HingeDualModel.
dual_blocks`, ``(n_candidates + 1)`` sparse rows per distinct training label) remain the
reference and serve DAGs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.losses import DeltaRows
from hierlab.core.model import DualBlocks, LinearModel, per_label_blocks, sparse_table
from hierlab.core.objective import Objective
from hierlab.core.regularizers import L2
from hierlab.methods.nhsvm.model import HierarchicalHinge
from hierlab.solvers.bcfw_flat import FlatBlocks, chain_parents

__all__ = ["HingeDualModel", "hinge_problem", "implicit_labels"]


def _sorted_ancestors(hinge: HierarchicalHinge) -> sp.csr_matrix:
    """The taxonomy's ancestor matrix as sorted 0/1 CSR rows (a copy)."""
    A = sp.csr_matrix(hinge.taxonomy.ancestor_matrix, dtype=np.float64, copy=True)
    A.sort_indices()
    A.data[:] = 1.0
    return A


def _label_delta(hinge: HierarchicalHinge) -> DeltaRows:
    """The ``Δ`` of the labels' rows: ``Δ`` (margin) or ``Δ~`` (eq. 13)."""
    return hinge.delta_rows_n if hinge.variant == "eq13" else hinge.delta_rows


def implicit_labels(hinge: HierarchicalHinge) -> bool:
    """Whether BCFW can form ``hinge``'s labels on the fly (no tables): single label, a tree
    numbered parents first (its ancestor rows are chains), and for eq. 13 a positive ``Δ~``
    between distinct labels (every non-root node weighted)."""
    if hinge.multilabel or not hinge.taxonomy.is_tree:
        return False
    if chain_parents(_sorted_ancestors(hinge)) is None:
        return False
    rows = _label_delta(hinge)
    return hinge.variant != "eq13" or bool(np.all(rows.w[1:] > 0.0))


class HingeDualModel(LinearModel):
    """A single-label :class:`HierarchicalHinge` as the model of an ``Objective`` (for BCFW).

    Scores (``P = X W^T``), ``backward`` (``Gamma^T X``) and the active rows (every node but
    the root) are those of the shared :class:`~hierlab.core.model.LinearModel`.

    Parameters
    ----------
    hinge : HierarchicalHinge
        Single-label; its class attributes, structural errors and variant define the loss.

    Attributes
    ----------
    taxonomy : Taxonomy
    n_rows : int
        One weight row per node (the root's row is inert: its class attribute is 0).
    n_blocks : int
        1 (one joint problem).
    block_of_row : ndarray of int, shape (n_rows,)
        0, and -1 for the root.
    """

    n_blocks: int = 1

    #: the loss is a sum over rows of terms that read one row's potentials (chunked by
    #: :meth:`~hierlab.core.objective.Objective.summed_loss`, O(chunk x n_leaves) memory)
    chunkable = True

    def __init__(self, hinge: HierarchicalHinge) -> None:
        if hinge.multilabel:
            raise ParameterError(
                "the certified solver (solver='bcfw') takes single-label data; multi-label "
                "HSVM/NHSVM use solver='pegasos' (loss-augmented inference by DP / LP)"
            )
        self.hinge = hinge
        self._init_rows(hinge.taxonomy)

    def loss(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """The structured hinge of the rows of ``S`` (their part of the mean over the hinge's
        ``N`` training rows) and its subgradient with respect to ``S``.

        Parameters
        ----------
        S : ndarray of shape (b, n_nodes)
            Potentials of ``b`` training rows (all of them, or a chunk).
        y : ndarray of int, shape (b,)
            Their labels, among the hinge's training labels.

        Returns
        -------
        loss : ndarray of shape (1,)
            ``(1/N) sum_i max(0, max_l q_i(l))`` over the ``b`` rows.
        Gamma : csr_matrix of shape (b, n_nodes)
            Row ``i``: ``(C[l_i] - C[y_i]) / (N div_i)`` at the most violated leaf ``l_i``
            where the loss is positive (a few entries: the two root paths), else empty.
        """
        h = self.hinge
        y = np.asarray(y, dtype=np.int64)
        n_total = len(h.y)
        losses, j, div = h.most_violated(np.asarray(S), y, h.label_positions(y))
        act = np.flatnonzero(losses > 0.0)
        U = sp.csr_matrix(h.C_cand[j[act]] - h.C[y[act]])
        U = sp.csr_matrix(sp.diags(1.0 / (n_total * div[act])) @ U)
        pick = sp.csr_matrix(
            (np.ones(len(act)), (act, np.arange(len(act)))), shape=(len(y), len(act))
        )
        return np.array([losses.sum() / n_total]), sp.csr_matrix(pick @ U)

    def node_weights(self, W: np.ndarray) -> np.ndarray:
        """Effective node vectors ``c_n W_n`` (what scores a label's nodes)."""
        return np.asarray(self.hinge.c[:, None] * W)

    def label_table(self, v: int, weight: float = 1.0) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows of label ``v`` against every candidate leaf ``l`` (increasing):

        margin (eq. 3/10): ``U = C[v] - C[l]``, ``L = Δ(l, v)`` for ``l != v``;
        eq. (13): ``U = (C[v] - C[l]) / Δ~(l, v)``, ``L = 1`` for ``Δ~(l, v) > 0``;
        then the null row, everything times ``weight``.
        """
        h = self.hinge
        cand = np.asarray(h.candidates)
        eq13 = h.variant == "eq13"
        keep = cand != v
        d = _label_delta(h).row(v)  # Δ(v, .) or Δ~(v, .)
        if eq13:
            keep &= d > 0.0
        rows = int(keep.sum())
        # C[v] - C[l] per kept candidate, sparse (a label touches its and v's root paths)
        U = sp.csr_matrix(np.ones((rows, 1))) @ h.C[v] - h.C_cand[keep]
        if eq13:
            return sparse_table(sp.diags(1.0 / d[keep]) @ U, np.ones(rows), weight)
        return sparse_table(U, d[keep], weight)

    def dual_blocks(self, y: np.ndarray) -> DualBlocks:
        """One block per example, one table per distinct label (:meth:`label_table`, times
        ``1/N``). Then ``max_r (L_r - U_r . P_i) = max(0, max_l q_i(l))``."""
        n = len(y)
        return per_label_blocks(
            np.asarray(y, dtype=np.int64), lambda v: self.label_table(v, 1.0 / n)
        )

    def pair_delta(self, ys: np.ndarray, cs: np.ndarray) -> np.ndarray:
        """``Δ(ys[i], cs[i])`` (``Δ~`` for eq. 13) elementwise, shape (k,): the numbers of
        :class:`~hierlab.core.losses.DeltaRows` (the common part's weights summed root first)."""
        rows = _label_delta(self.hinge)
        ys, cs = np.asarray(ys, dtype=np.int64), np.asarray(cs, dtype=np.int64)
        A = _sorted_ancestors(self.hinge)
        inter = np.asarray(A[ys].multiply(A[cs]) @ rows.w).ravel()
        size = rows.Wn[ys] + rows.Wn[cs] - 2.0 * inter
        return np.asarray(rows.loss.transform(np.where(size > 0.0, size, 0.0)), dtype=np.float64)

    def implicit_blocks(self, y: np.ndarray, C: float) -> FlatBlocks | None:
        """The blocks of :meth:`dual_blocks` without their tables (for BCFW), or None where
        :func:`implicit_labels` says they cannot be formed on the fly.

        Each label's row is formed when its block is visited (:class:`~hierlab.solvers.
        bcfw_flat.FlatBlocks`): the ancestor chains as rows, the class attributes ``c`` as node
        weights, margin rescaling (``L = Δ``, ``U = c o (a_y - a_l)``) or eq. 13's ratio
        (``L = 1``, ``U = c o (a_y - a_l) / Δ~``), each times ``C / N``.
        """
        h = self.hinge
        if not implicit_labels(h):
            return None
        A = _sorted_ancestors(h)
        rows = _label_delta(h)
        eq13 = h.variant == "eq13"
        zero_one = rows.loss.indicator
        # dtab is read for the unweighted counts only; the weighted Δ comes from ``rows``
        dtab = None if zero_one else np.ones(2 * int(h.taxonomy.max_depth) + 3)
        return FlatBlocks(
            np.asarray(y, dtype=np.int64),
            np.asarray(h.candidates, dtype=np.int64),
            A,
            A,
            dtab,
            1.0 if eq13 else float(h.max_loss),
            float(C) / len(h.y),
            self.label_table,
            self.pair_delta,
            scaling="ratio" if eq13 else "margin",
            node_weight=h.c,
            delta_rows=None if zero_one else rows,
        )


def hinge_problem(hinge: HierarchicalHinge) -> Objective:
    """The single-label ``hinge`` as the ``Objective`` BCFW takes.

    ``lam ||W||_F^2`` is the L2 regulariser ``sigma/2 ||W||^2`` with ``sigma = 2 lam`` on every
    node but the root; the loss is :class:`HingeDualModel` with weight ``C = 1``.

    Parameters
    ----------
    hinge : HierarchicalHinge
        Single-label, with its training ``X`` and labels.

    Returns
    -------
    Objective
    """
    model = HingeDualModel(hinge)
    reg = L2(model.active_rows(hinge.y), sigma=2.0 * float(hinge.lam))
    return Objective(model, reg, hinge.X, hinge.y, C=1.0, XT=hinge.XT)
