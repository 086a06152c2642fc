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

The dual tables are dense, ``(n_candidates + 1) x n_nodes`` per distinct training label:
meant for taxonomies of up to a few hundred nodes (Pegasos handles the large ones).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.model import DualBlocks, LinearModel, per_label_blocks, sparse_table
from hierlab.core.objective import Objective
from hierlab.core.regularizers import L2
from hierlab.methods.nhsvm.model import HierarchicalHinge

__all__ = ["HingeDualModel", "hinge_problem"]


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

    def dual_blocks(self, y: np.ndarray) -> DualBlocks:
        """One block per example; per distinct label ``v`` the rows of every candidate leaf:

        margin (eq. 3/10): ``U = C[v] - C[l]``, ``L = Δ(l, v)`` for ``l != v``;
        eq. (13): ``U = (C[v] - C[l]) / Δ~(l, v)``, ``L = 1`` for ``Δ~(l, v) > 0``;
        each times ``1/N``, plus the null row. Then ``max_r (L_r - U_r . P_i) = max(0,
        max_l q_i(l))``.
        """
        h = self.hinge
        n = len(y)
        cand = np.asarray(h.candidates)
        eq13 = h.variant == "eq13"

        def make(v: int) -> tuple[sp.csr_matrix, np.ndarray]:
            keep = cand != v
            d = (h.delta_rows_n if eq13 else h.delta_rows).row(v)  # Δ(v, .) or Δ~(v, .)
            if eq13:
                keep &= d > 0.0
            rows = int(keep.sum())
            # C[v] - C[l] per kept candidate, sparse (a label touches its and v's root paths)
            U = sp.csr_matrix(np.ones((rows, 1))) @ h.C[v] - h.C_cand[keep]
            if eq13:
                return sparse_table(sp.diags(1.0 / d[keep]) @ U, np.ones(rows), 1.0 / n)
            return sparse_table(U, d[keep], 1.0 / n)

        return per_label_blocks(np.asarray(y, dtype=np.int64), make)


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
    return Objective(model, reg, hinge.X, hinge.y, C=1.0)
