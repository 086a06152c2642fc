"""Hieron's kernel form (seed 002, eq. 11-12): the support set and its coefficients.

:class:`KernelFormMixin` is a base of :class:`~hierlab.methods.hieron.solver.HieronSolver`.
Each training example is stored once in the support set (dense rows, or CSR buffers that grow
by doubling), however often it is updated; the coefficient matrix ``B`` of shape
(n_support, n_nodes) gives the prototypes ``W^v = sum_j B[j, v] phi(x_j)``, so a round's scores
are ``k(x) @ B`` with ``k_j = K(x_j, x)``, and ``UB`` is ``B``'s running weighted sum for the
averaged hypothesis (eq. 13).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from hierlab.methods.hieron.model import Kernel, row_sq_norms

__all__ = ["KernelFormMixin"]


class KernelFormMixin:
    """The support set and the kernel-form rounds of
    :class:`~hierlab.methods.hieron.solver.HieronSolver`.

    Reads of the solver: ``kernel``, ``n_features``, ``n_nodes``, ``track_average`` and the
    shared round logic ``_pass_rounds``.
    """

    if TYPE_CHECKING:
        kernel: Kernel | None
        n_features: int
        n_nodes: int
        track_average: bool

        def _pass_rounds(
            self,
            y: np.ndarray,
            sq: np.ndarray,
            idx: np.ndarray,
            pred: np.ndarray,
            score: Callable[[int], np.ndarray],
            update: Callable[[int, np.ndarray, float, int], None],
        ) -> None: ...

    def _init_support_set(self) -> None:
        """An empty support set: rows stored once, their coefficients ``B`` (path sums) and
        their weighted sum ``UB``."""
        self._sv_n = 0
        self._sv_dense = np.zeros((0, self.n_features))
        self._sv_data = np.zeros(0)
        self._sv_indices = np.zeros(0, dtype=np.int32)
        self._sv_indptr = np.zeros(1, dtype=np.int64)
        self._sv_sparse = False
        self._sv_sq = np.zeros(0)
        self._sv_rsq = np.zeros(0)
        self._B = np.zeros((0, self.n_nodes))
        self._UB = np.zeros((0, self.n_nodes))
        self._scratch = np.zeros(self.n_features) if self.kernel is not None else None

    def support_vectors(self) -> Any:
        """The support set, shape (n_support, n_features): dense or CSR like the data."""
        if self._sv_sparse:
            return self._support_csr(copy=True)
        return self._sv_dense[: self._sv_n].copy()

    def _support_csr(self, copy: bool) -> sp.csr_matrix:
        """The support set stored as CSR: views of the growing buffers, or a copy."""
        n = self._sv_n
        nnz = int(self._sv_indptr[n])
        parts = (self._sv_data[:nnz], self._sv_indices[:nnz], self._sv_indptr[: n + 1])
        if copy:
            parts = (parts[0].copy(), parts[1].copy(), parts[2].copy())
        return sp.csr_matrix(parts, shape=(n, self.n_features))

    def _sv_append(self, X: Any, i: int, sq_i: float, raw_sq_i: float) -> int:
        """Store row ``i`` of ``X`` in the support set; return its row."""
        n = self._sv_n
        if n == 0:
            self._sv_sparse = sp.issparse(X)
        if n >= len(self._B):
            cap = max(16, 2 * len(self._B))
            self._B = _grow(self._B, cap)
            self._UB = _grow(self._UB, cap)
            self._sv_sq = _grow(self._sv_sq, cap)
            self._sv_rsq = _grow(self._sv_rsq, cap)
            if not self._sv_sparse:
                self._sv_dense = _grow(self._sv_dense, cap)
            else:
                self._sv_indptr = _grow(self._sv_indptr, cap + 1)
        if self._sv_sparse:
            a0, a1 = X.indptr[i], X.indptr[i + 1]
            nnz = int(self._sv_indptr[n])
            need = nnz + (a1 - a0)
            if need > len(self._sv_data):
                cap2 = max(need, 2 * len(self._sv_data), 64)
                self._sv_data = _grow(self._sv_data, cap2)
                self._sv_indices = _grow(self._sv_indices, cap2)
            self._sv_data[nnz:need] = X.data[a0:a1]
            self._sv_indices[nnz:need] = X.indices[a0:a1]
            self._sv_indptr[n + 1] = need
        else:
            self._sv_dense[n] = X[i] if not sp.issparse(X) else X[i].toarray().ravel()
        self._sv_sq[n] = sq_i
        self._sv_rsq[n] = raw_sq_i
        self._sv_n = n + 1
        return n

    def _kernel_row(self, X: Any, i: int, sparse_x: bool) -> np.ndarray:
        """``k_j = K(x_j, x_i)`` over the support set, shape (n_support,)."""
        n = self._sv_n
        kern = self.kernel
        assert kern is not None and self._scratch is not None
        if sparse_x:
            a0, a1 = X.indptr[i], X.indptr[i + 1]
            cols, d = X.indices[a0:a1], X.data[a0:a1]
            xsq = float(d @ d)
        else:
            x = X[i]
            xsq = float(x @ x)
        if n == 0:
            return np.zeros(0)
        if self._sv_sparse:
            S = self._support_csr(copy=False)
            if sparse_x:
                self._scratch[cols] = d
                dot = S @ self._scratch
                self._scratch[cols] = 0.0
            else:
                dot = S @ x
        elif sparse_x:
            dot = self._sv_dense[:n][:, cols] @ d
        else:
            dot = self._sv_dense[:n] @ x
        if kern.name == "linear":
            return np.asarray(dot)
        return kern.from_dot(np.asarray(dot), self._sv_rsq[:n], xsq)

    def _pass_dual(
        self,
        X: Any,
        y: np.ndarray,
        ksq: np.ndarray,
        idx: np.ndarray,
        pred: np.ndarray,
        sv_row: np.ndarray,
    ) -> None:
        """The rounds ``idx`` in the kernel form; ``sv_row[i]``: the support row of example
        ``i`` (-1 until its first update stores it)."""
        sparse_x = sp.issparse(X)
        raw_sq = row_sq_norms(X)

        def score(i: int) -> np.ndarray:
            """``k @ B`` with ``k_j = K(x_j, x_i)`` over the support set (eq. 12)."""
            k = self._kernel_row(X, i, sparse_x)
            n = self._sv_n
            return np.asarray(k @ self._B[:n]) if n else np.zeros(self.n_nodes)

        def update(i: int, c: np.ndarray, a: float, t: int) -> None:
            """Store ``x_i`` once in the support set and move its coefficients by ``a c``."""
            r = int(sv_row[i])
            if r < 0:
                r = self._sv_append(X, i, float(ksq[i]), float(raw_sq[i]))
                sv_row[i] = r
            self._B[r] += a * c
            if self.track_average:
                self._UB[r] += (a * t) * c

        self._pass_rounds(y, ksq, idx, pred, score, update)


def _grow(a: np.ndarray, cap: int) -> np.ndarray:
    out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
