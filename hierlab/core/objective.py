"""``Objective(model, regularizer, X, y, C)``: value, subgradient and the RDA splitting.

The training problems of seed 000 all read (eq. 7 and Section 5)

    J(W) = Omega(W) + C * L(W),   L(W) = sum_k loss_k(X W^T)

with a model (scores and loss-augmented inference: :class:`Model`, e.g.
:mod:`hierlab.methods.orthogonal.model`, built on :mod:`hierlab.core.model`) and a regularizer
(:mod:`hierlab.core.regularizers`). For Algorithm 1 the objective is split (Section 4.3) as
``J = phi + Psi`` with ``Psi`` the regularizer's strongly convex quadratic part and ``phi =
(Omega - Psi) + C L`` convex.

When the regularizer is row-separable and the model's loss splits into blocks of rows (HIERMULT:
one Crammer-Singer problem per internal node), ``J`` is a sum of independent block objectives and
:meth:`Objective.evaluate` reports every quantity per block; a solver may then keep the best
iterate and the bounds of each block separately (their sums bound ``J*``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.regularizers import Regularizer

__all__ = ["Evaluation", "Model", "Objective"]


class Model(Protocol):
    """What :class:`Objective` (and BCFW, through :meth:`dual_blocks`) needs from a model.

    See :class:`hierlab.core.model.LinearModel` and :mod:`hierlab.methods.orthogonal.model`.
    """

    n_rows: int
    n_blocks: int
    block_of_row: np.ndarray

    def scores(self, X: Any, W: np.ndarray) -> np.ndarray: ...

    def loss(self, S: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]: ...

    def backward(self, Gamma: sp.csr_matrix, X: Any, XT: Any = None) -> np.ndarray: ...

    def dual_blocks(self, y: np.ndarray) -> Any: ...


@dataclass
class Evaluation:
    """``J``, ``phi`` and a subgradient of ``phi`` at one point.

    Attributes
    ----------
    J : ndarray of shape (n_blocks,)
        Objective value of every block (a single entry for non-separable problems).
    phi : ndarray of shape (n_blocks,)
        ``J - Psi`` per block.
    grad_phi : ndarray of shape (n_rows, n_features)
        A subgradient of ``phi``.
    loss : ndarray of shape (n_blocks,)
        The summed hinge ``L`` per block (without ``C``).
    """

    J: np.ndarray
    phi: np.ndarray
    grad_phi: np.ndarray
    loss: np.ndarray


#: numbers of scores formed at once when a loss is evaluated (chunks of examples, 32 MB)
CHUNK = 1 << 22


class Objective:
    """The regularised empirical risk ``J(W) = Omega(W) + C L(W)`` of a model on data.

    Parameters
    ----------
    model : Model
        Scores, loss-augmented inference, blocks.
    regularizer : Regularizer
        ``Omega`` and its splitting.
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    y : ndarray of int, shape (n_samples,)
        Node ids.
    C : float
        Weight of the summed loss ``C sum_k xi_k`` (scikit-learn's and liblinear's C; seed 000
        writes ``C/N sum_k xi_k``, so the paper's C is ours times N).
    XT : csr_matrix of shape (n_features, n_samples), optional
        ``X^T`` in CSR, when the caller already holds it (formed here for sparse ``X``).
    """

    def __init__(
        self,
        model: Model,
        regularizer: Regularizer,
        X: Any,
        y: np.ndarray,
        C: float,
        XT: sp.csr_matrix | None = None,
    ) -> None:
        if not C > 0:
            raise ParameterError(f"C must be positive, got {C!r}")
        self.model = model
        self.regularizer = regularizer
        self.X = X
        self.y = np.asarray(y, dtype=np.int64)
        self.C = float(C)
        self.n_blocks = int(model.n_blocks)
        if self.n_blocks > 1 and not regularizer.separable:
            raise ParameterError(
                "a block-separable model needs a row-separable regularizer (e.g. L2)"
            )
        bor = np.asarray(model.block_of_row, dtype=np.int64)
        self.block_of_row = np.where(bor < 0, self.n_blocks, bor)
        self.shape = (int(model.n_rows), int(X.shape[1]))
        #: phi = (Omega - Psi) + C L >= 0: the hinge losses are >= 0 and the regularizers'
        #: remainders are convex quadratic forms (or maxima of PSD forms), hence >= 0
        self.phi_nonnegative = bool(getattr(regularizer, "remainder_nonnegative", False))
        # CSR transpose of sparse X: Gamma^T X becomes a sparse-sparse product, O(nnz(X));
        # a caller that builds several objectives on the same rows passes its own
        if XT is None and sp.issparse(X):
            XT = sp.csr_matrix(X.T)
        self.XT = XT

    # ------------------------------------------------------------------ helpers
    def block_sum(self, row_values: np.ndarray) -> np.ndarray:
        """Sum per-row numbers into blocks, shape (n_blocks,) (rows in no block are dropped)."""
        return np.bincount(self.block_of_row, weights=row_values, minlength=self.n_blocks + 1)[
            : self.n_blocks
        ]

    def row_dot(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``<A, B>`` per block, shape (n_blocks,)."""
        if self.n_blocks == 1:
            return np.array([float(np.einsum("ij,ij->", A, B))])
        return self.block_sum(np.einsum("ij,ij->i", A, B))

    def psi_blocks(self, W: np.ndarray) -> np.ndarray:
        """``Psi(W)`` per block."""
        if self.n_blocks == 1:
            return np.array([self.regularizer.psi_value(W)])
        return self.block_sum(self.regularizer.psi_row_values(W))

    def initial(self) -> np.ndarray:
        """``W(1) = 0`` (Algorithm 1), shape (n_rows, n_features)."""
        return np.zeros(self.shape)

    # ------------------------------------------------------------------ evaluation
    def summed_loss(
        self, W: np.ndarray, progress: Callable[[float], Any] | None = None
    ) -> tuple[np.ndarray, sp.csr_matrix]:
        """The loss per block and its subgradient ``Gamma`` with respect to the scores.

        The losses are sums over examples, so the scores are formed for a chunk of examples
        at a time (at most :data:`CHUNK` numbers, 32 MB): the memory is O(chunk x n_rows),
        never (n_samples x n_rows). A model whose loss is not a plain sum over examples sets
        ``chunkable = False`` and gets all rows at once. ``progress(share)`` is called after
        each chunk with the share of the examples done (it may raise to end the sum).

        Returns
        -------
        block_loss : ndarray of shape (n_blocks,)
        Gamma : csr_matrix of shape (n_samples, n_rows)
        """
        n, m = self.X.shape[0], W.shape[0]
        step = max(1, CHUNK // max(m, 1))
        if step >= n or not getattr(self.model, "chunkable", False):
            return self.model.loss(self.model.scores(self.X, W), self.y)
        Wf = np.asfortranarray(W)  # W.T C-contiguous: the chunks' products copy nothing
        total = np.zeros(self.n_blocks)
        parts = []
        for a in range(0, n, step):
            rows = slice(a, min(a + step, n))
            block_loss, G = self.model.loss(self.model.scores(self.X[rows], Wf), self.y[rows])
            total += block_loss
            parts.append(G)
            if progress is not None:
                progress(min(a + step, n) / n)
        return total, sp.csr_matrix(sp.vstack(parts, format="csr"))

    def evaluate(self, W: np.ndarray) -> Evaluation:
        """``J``, ``phi`` per block and a subgradient of ``phi`` at ``W`` (two sparse-dense
        products: the scores and ``Gamma^T X``)."""
        block_loss, Gamma = self.summed_loss(W)
        grad = self.C * self.model.backward(Gamma, self.X, self.XT)
        reg = self.regularizer
        rem_value, rem_grad = reg.remainder(W)
        if rem_grad is not None:
            grad = grad + rem_grad
        grad[~reg.active] = 0.0
        psi = self.psi_blocks(W)
        if self.n_blocks == 1:
            omega = np.array([rem_value + psi[0]])
        else:
            omega = self.block_sum(reg.row_values(W))
        J = omega + self.C * block_loss
        return Evaluation(J=J, phi=J - psi, grad_phi=grad, loss=block_loss)

    def value(self, W: np.ndarray) -> float:
        """``J(W)``."""
        block_loss, _ = self.summed_loss(W)
        return float(self.regularizer.value(W) + self.C * block_loss.sum())

    def block_values(
        self, W: np.ndarray, progress: Callable[[float], Any] | None = None
    ) -> np.ndarray:
        """``J`` per block, shape (n_blocks,) (their sum is ``J(W)``; one entry when the
        problem is not separable); ``progress`` as :meth:`summed_loss` takes it."""
        block_loss, _ = self.summed_loss(W, progress)
        if self.n_blocks == 1:
            return np.array([self.regularizer.value(W) + self.C * float(block_loss.sum())])
        return self.block_sum(self.regularizer.row_values(W)) + self.C * block_loss

    def subgradient(self, W: np.ndarray) -> np.ndarray:
        """A subgradient of ``J`` at ``W`` (Theorem 4 for ``Omega`` plus the hinge's),
        shape (n_rows, n_features)."""
        _, Gamma = self.summed_loss(W)
        g = self.C * self.model.backward(Gamma, self.X, self.XT) + self.regularizer.subgradient(W)
        g[~self.regularizer.active] = 0.0
        return g
