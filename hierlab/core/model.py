"""The linear-model protocol shared by the certified solvers (RDA, BCFW) and the models.

A model holds one weight row per node (``W`` of shape (n_rows, n_features)), forms scores with
one sparse-dense product ``S = X @ W.T`` and maps a subgradient with respect to ``S`` back to
``W`` with one product ``Gamma^T X`` (:meth:`LinearModel.backward`). :class:`DualBlocks` is
how a model hands its dual to BCFW: per example, a table of candidate constraints (which rows
each candidate touches, with which sign, and its loss). The families' models
(:mod:`hierlab.methods.orthogonal.model`, :mod:`hierlab.methods.nhsvm.dual`) build on these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "DualBlocks",
    "LinearModel",
    "dense",
    "per_label_blocks",
    "product",
    "sparse_table",
]

Array = np.ndarray
Matrix = Any  # ndarray or csr_matrix of shape (n_samples, n_features)


def dense(G: Any) -> np.ndarray:
    return np.asarray(G.toarray() if sp.issparse(G) else G)


def product(Gamma: sp.csr_matrix, X: Matrix, XT: Any) -> np.ndarray:
    """``Gamma^T X`` as a dense, C-ordered (n_rows, n_features) array.

    With ``XT`` (the CSR transpose of a sparse ``X``) the product is ``(X^T Gamma)^T``, a
    sparse-sparse product of cost O(nnz(X)); its few entries are scattered straight into a
    C-ordered array (``toarray(order="C")`` converts the small sparse result, where densifying
    first and transposing would copy all n_rows x n_features numbers once more).
    """
    if XT is not None:
        return np.asarray((XT @ Gamma).T.toarray(order="C"))
    return dense(Gamma.T @ X)


@dataclass
class DualBlocks:
    """The structural-SVM dual of a model's loss, as blocks of labels (for BCFW).

    Every loss of seed 000 is a weighted sum of structured hinges, each a maximum of functions
    linear in the scores of one example:

        sum_b w_b max_{r} (L_r - U_r . s_{k_b}),    s_k = W x_k  (raw node scores, shape (m,))

    over blocks ``b`` (one per example, or one per example and internal node for HIERMULT),
    where row ``r`` of a block's table is a "label" of the slack QP (a violated constraint) with
    loss ``L_r`` and direction ``U_r`` (so ``<W, U_r x_k^T> = U_r . s_k``); the last row of
    every table is the null label ``(L, U) = (0, 0)`` (the constraint ``xi >= 0``).

    Attributes
    ----------
    tables : list of (csr_matrix of shape (R_t, n_rows), ndarray of shape (R_t,))
        ``(U, L)`` per table, the null label last, already multiplied by the table's weight
        (1: the losses are summed, scikit-learn's convention for C).
    block_example : ndarray of int, shape (n_blocks,)
        Example of each block, non-decreasing.
    block_table : ndarray of int, shape (n_blocks,)
        Table of each block.
    """

    tables: list[tuple[sp.csr_matrix, np.ndarray]]
    block_example: np.ndarray
    block_table: np.ndarray

    def primal_loss(self, S: np.ndarray) -> float:
        """``sum_b w_b max_r (L_r - U_r . S[k_b])`` for raw scores ``S`` of shape
        (n_samples, n_rows) (the model's summed loss, as a check)."""
        total = 0.0
        for t, (U, L) in enumerate(self.tables):
            k = self.block_example[self.block_table == t]
            if len(k):
                total += float(np.max(L[None, :] - dense(U @ S[k].T).T, axis=1).sum())
        return total


def sparse_table(U: sp.spmatrix, L: np.ndarray, weight: float) -> tuple[sp.csr_matrix, Array]:
    """A label table from its rows, sparse (a label touches a few nodes): the null label
    ``(L, U) = (0, 0)`` appended, everything multiplied by ``weight``; shape (R + 1, n_rows)."""
    U = sp.csr_matrix(U, dtype=np.float64)
    Um = sp.vstack([U, sp.csr_matrix((1, U.shape[1]))], format="csr")
    return sp.csr_matrix(Um * weight), np.r_[np.asarray(L, dtype=np.float64), 0.0] * weight


def per_label_blocks(y: np.ndarray, make: Any) -> DualBlocks:
    """One block per example, one table per distinct label (``make(label)`` builds it)."""
    labels, inv = np.unique(y, return_inverse=True)
    tables = [make(int(v)) for v in labels]
    return DualBlocks(tables, np.arange(len(y), dtype=np.int64), inv.astype(np.int64))


class LinearModel:
    """Shared parts: one weight row per node, plain scores ``X @ W.T``."""

    n_blocks: int = 1
    taxonomy: Taxonomy
    #: the loss is a sum over examples of terms that read one example's scores, so it can be
    #: evaluated a chunk of examples at a time (:meth:`~hierlab.core.objective.Objective.
    #: summed_loss`)
    chunkable: bool = True

    def _init_rows(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self.n_rows = taxonomy.n_nodes
        self.block_of_row = np.zeros(self.n_rows, dtype=np.int64)
        self.block_of_row[0] = -1  # the root has no classifier

    def scores(self, X: Matrix, W: np.ndarray) -> np.ndarray:
        """``S = X @ W.T``, shape (n_samples, n_nodes)."""
        return np.asarray(X @ np.ascontiguousarray(W.T))

    def backward(self, Gamma: sp.csr_matrix, X: Matrix, XT: Any = None) -> np.ndarray:
        """``Gamma^T X``: subgradient with respect to ``W`` from one w.r.t. ``S``.

        ``XT``, the CSR transpose of a sparse ``X``, makes this a sparse-sparse product of cost
        ``O(nnz(X))`` (``Gamma`` has a few entries per row).
        """
        return product(Gamma, X, XT)

    def node_weights(self, W: np.ndarray) -> np.ndarray:
        """The vector that scores each node (``W`` itself here), shape (n_nodes, n_features)."""
        return W

    def active_rows(self, y: np.ndarray) -> np.ndarray:
        """Rows that are variables: every node but the root."""
        act = np.ones(self.n_rows, dtype=bool)
        act[0] = False
        return act
