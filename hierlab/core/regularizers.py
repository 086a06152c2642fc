"""Regularizers ``Omega(W)`` over a weight matrix ``W`` of shape (n_rows, n_features).

Rows are indexed by node id; ``active`` marks the rows that are optimisation variables (for
instance every node but the root). Inactive rows are held at zero.

Every regularizer also provides the splitting used by the RDA solver (seed 000, Section 4.3):
a strongly convex quadratic part ``Psi(W) = 1/2 tr(W^T P W)`` whose linear-plus-``Psi``
minimisation has the closed form ``argmin_W <G, W> + Psi(W) = -P^{-1} G`` (eq. 11), and the
convex remainder ``Omega - Psi`` that goes into ``phi`` with its subgradient.

- :class:`L2`: ``1/2 sum_i ||w_i||^2``; ``Psi = Omega`` (FLATMULT, HIERMULT, TREELOSS).
- :class:`Quadratic`: ``1/2 tr(W^T Q W)`` for a positive definite ``Q``; ``Psi = Omega``.
  :func:`transfer_matrix` builds the ``Q`` of TRANSFER (seed 000, Section 5, with the errata
  ``||w_ii|| -> ||w_i||``).
- :class:`Orthogonal`: ``1/2 sum_ij K_ij |w_i^T w_j|`` (seed 000, eq. 5) with the subgradient of
  Theorem 4 and ``Psi = lambda_min(Kbar)/2 ||W||^2`` where ``Kbar`` is the comparison matrix.
  :func:`orthogonal_K` builds ``K`` by eq. (6); :func:`max_admissible_alpha` gives the exact
  bound on ``alpha`` for which ``Kbar`` is positive definite.

Every regularizer also supplies the metric of its structural-SVM dual (:meth:`Regularizer.
dual_metric`), which the BCFW solver uses without knowing the regularizer's kind: the inverse
``P = Q^{-1}`` of a quadratic ``Omega(W) = 1/2 tr(W^T Q W)`` (:class:`DualMetric`), or, for
:class:`Orthogonal`, the sign relaxation ``K_sigma = K o sigma`` whose dual is also maximised over
``sigma`` (:class:`SignRelaxedMetric`, see :mod:`hierlab.solvers.bcfw`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize

from hierlab.core.ancestor_ldl import SOLVE_BLOCK_ROWS, AncestorFactor, sparse_entries
from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "L2",
    "DualMetric",
    "Orthogonal",
    "Quadratic",
    "Regularizer",
    "SignRelaxedMetric",
    "ancestor_pairs",
    "check_orthogonal_K",
    "comparison_lambda_min",
    "comparison_matrix",
    "max_admissible_alpha",
    "orthogonal_K",
    "pair_dots",
    "smallest_comparison_eigenvalue",
    "transfer_matrix",
]


# ---------------------------------------------------------------------- the dual metrics
def _active_inverse(Q: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``Q^{-1}`` on the rows and columns ``idx`` (symmetrised), zero elsewhere."""
    P = np.zeros_like(Q, dtype=np.float64)
    ix = np.ix_(idx, idx)
    block = np.linalg.inv(Q[ix])
    P[ix] = 0.5 * (block + block.T)
    return P


class DualMetric:
    """``P = Q^{-1}`` of a quadratic regularizer ``1/2 tr(W^T Q W)`` (active rows only).

    The dual of the slack QP of every structured hinge with this regularizer is ``D(alpha) =
    alpha . L - 1/2 tr(V^T P V)``, and ``W(alpha) = P V`` (:mod:`hierlab.solvers.bcfw`). Built by
    :meth:`Regularizer.dual_metric`.

    Parameters
    ----------
    active : ndarray of bool, shape (n_rows,)
    P : ndarray of shape (n_rows, n_rows), or (0, 0) when ``pdiag`` is given
        ``Q^{-1}`` on the active rows, zero elsewhere.
    pdiag : ndarray of shape (n_rows,), optional
        The diagonal of ``P`` when ``P`` is diagonal (then products are element-wise).

    Attributes
    ----------
    idx : ndarray of int
        The active rows.
    P, pdiag
        As above; ``P`` may change when the metric is relaxed (:meth:`sigma_step`).
    sigma : ndarray of shape (n_rows, n_rows) or None
        The sign relaxation of :class:`SignRelaxedMetric`; None for a fixed quadratic.
    """

    sigma: np.ndarray | None = None
    #: ``Q = L D L^T`` on a tree's ancestor pairs (:meth:`factored`); None for a stored ``P``
    factor: AncestorFactor | None = None

    def __init__(self, active: np.ndarray, P: np.ndarray, pdiag: np.ndarray | None = None) -> None:
        self.idx = np.flatnonzero(np.asarray(active, dtype=bool))
        self.P = P
        self.pdiag = pdiag

    @classmethod
    def factored(cls, factor: AncestorFactor, active: np.ndarray) -> DualMetric:
        """The metric ``P = Q^{-1}`` held as ``Q``'s sparse factor on a tree's ancestor pairs
        (:class:`~hierlab.core.ancestor_ldl.AncestorFactor`): products are two sweeps over the
        tree, O(m depth), and nothing of size (n_rows, n_rows) is formed (``P`` is empty)."""
        out = cls(active, np.zeros((0, 0)))
        out.factor = factor
        return out

    def times(self, d: np.ndarray) -> np.ndarray:
        """``P d`` for one vector ``d`` of shape (n_rows,)."""
        if self.pdiag is not None:
            return d * self.pdiag
        if self.factor is not None:
            return self.factor.solve(d)
        return np.asarray(self.P @ d)

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """``(P, order, ptr, idx, val, dinv, blk_ptr, blk_of)`` for the compiled BCFW passes:
        the stored ``P`` and the factor's arrays (empty when there is no factor)."""
        if self.factor is not None:
            return (self.P, *self.factor.arrays(), *self.factor.blocks())
        e_i, e_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        return (self.P, e_i, np.zeros(1, dtype=np.int64), e_i, e_f, e_f, e_i, e_i)

    @classmethod
    def inverse(cls, Q: np.ndarray, active: np.ndarray) -> DualMetric:
        """The metric of ``1/2 tr(W^T Q W)``: ``Q``'s active block inverted."""
        return cls(active, _active_inverse(Q, np.flatnonzero(np.asarray(active, dtype=bool))))

    @classmethod
    def diagonal(cls, pdiag: np.ndarray, active: np.ndarray) -> DualMetric:
        """A diagonal metric ``P = diag(pdiag)`` (held as its diagonal only: ``P`` is an empty
        (0, 0) array, so nothing of size (n_rows, n_rows) is ever formed)."""
        return cls(active, np.zeros((0, 0)), pdiag)

    def apply(self, VT: np.ndarray) -> np.ndarray:
        """``W^T = V^T P`` for ``V^T`` of shape (n_features, n_rows).

        The caller hands ``V^T`` over: with a 0/1 diagonal (plain L2 on the active rows) whose
        zero rows are already zero in ``V^T`` (dual mass reaches active rows only), the product
        is ``V^T`` itself to the bit and is returned without a copy (160 MB per certificate
        on IPC titles)."""
        if self.pdiag is not None:
            zero = self._zero_rows()
            if zero is not None and not VT[:, zero].any():
                return VT
            return VT * self.pdiag
        if self.factor is not None:
            return self.factor.solve_rows(VT)
        return np.asarray(VT @ self.P)

    def _zero_rows(self) -> np.ndarray | None:
        """The rows where a 0/1 diagonal is 0; None when the diagonal has other values."""
        if self.pdiag is None:
            return None
        cached = getattr(self, "_zero_cache", None)
        if cached is None or cached[0] is not self.pdiag:
            d = self.pdiag
            unit = bool(np.all((d == 0.0) | (d == 1.0)))
            cached = (d, np.flatnonzero(d == 0.0) if unit else None)
            self._zero_cache = cached
        return cached[1]

    def sigma_step(self, V: np.ndarray, max_steps: int = 200, rtol: float = 1e-12) -> int:
        """Maximise the dual at ``V`` (n_rows, n_features) over the metric's relaxation; a fixed
        quadratic has none.

        Returns
        -------
        int
            Iterations taken (0 here).
        """
        return 0


#: the pairs' dot products are summed over blocks of rows of at most this many entries
_PAIR_CHUNK = 1 << 22


def pair_dots(W: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    """``w_i^T w_j`` for the pairs ``(iu[p], ju[p])``, shape (len(iu),), summed over blocks of
    pairs (no (pairs, n_features) array beyond ``_PAIR_CHUNK`` entries)."""
    out = np.empty(len(iu))
    step = max(1, _PAIR_CHUNK // max(1, W.shape[1]))
    for s in range(0, len(iu), step):
        out[s : s + step] = np.einsum("ij,ij->i", W[iu[s : s + step]], W[ju[s : s + step]])
    return out


class SignRelaxedMetric(DualMetric):
    """The dual metric of ORTHOGNL's ``Omega(W) = 1/2 sum_ij K_ij |w_i^T w_j|`` (seed 000, eq. 5).

    ``Omega`` is the maximum over symmetric ``sigma`` in the box ``[-1, 1]`` (unit diagonal) of
    the quadratics ``1/2 tr(W^T K_sigma W)``, ``K_sigma = K o sigma``, each positive definite
    when the comparison matrix is (seed 000, Theorem 1). ``P = K_sigma^{-1}`` at the current
    ``sigma`` (zero at the start: ``P = diag(K)^{-1}``), and :meth:`sigma_step` maximises the
    dual over ``sigma``.

    Two forms. Given the ``taxonomy`` and a ``K`` on its ancestor pairs (eq. 6's), ``sigma``
    lives on those pairs (a vector), ``K_sigma`` is factored without fill
    (:class:`~hierlab.core.ancestor_ldl.AncestorFactor`) and nothing of size (n_rows, n_rows)
    is formed. Otherwise (a user's ``K`` of any pattern) ``K``, ``sigma`` and ``P`` are dense.

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (n_rows, n_rows)
        Nonnegative, symmetric, zero on the inactive rows and columns.
    active : ndarray of bool, shape (n_rows,)
    taxonomy : Taxonomy, optional
        The tree whose ancestor pairs carry ``K``'s off-diagonal entries.

    Attributes
    ----------
    Kd, Koff : ndarray of shape (n_rows, n_rows)
        The diagonal and off-diagonal parts of ``K`` (dense form only).
    sigma : ndarray
        The current sign relaxation: (n_rows, n_rows) dense, or one value per pair of
        :attr:`pairs` (factored form).
    pairs : tuple of ndarray or None
        Factored form: ``(i, j, K_ij)`` of the off-diagonal pairs, ``j`` an ancestor of ``i``.
    """

    def __init__(self, K: Any, active: np.ndarray, taxonomy: Taxonomy | None = None) -> None:
        act = np.asarray(active, dtype=bool)
        idx = np.flatnonzero(act)
        self.pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if taxonomy is not None:
            Ks = sp.csr_matrix(K, dtype=np.float64)
            try:
                factor = AncestorFactor(sp.diags(Ks.diagonal()), taxonomy, act)
            except ParameterError:
                factor = None
            if factor is not None and self._pattern_holds(Ks, factor):
                kd = Ks.diagonal().copy()
                pdiag = np.divide(1.0, kd, out=np.zeros_like(kd), where=act & (kd > 0))
                super().__init__(act, np.zeros((0, 0)), pdiag)
                kp = sparse_entries(Ks, factor.pat_idx, factor.pat_row)
                self._sel = np.flatnonzero(kp != 0.0)
                self.pairs = (factor.pat_row[self._sel], factor.pat_idx[self._sel], kp[self._sel])
                self._kd, self._factor_k = kd, factor
                self.sigma = np.zeros(len(self._sel))
                return
        Kd_ = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
        self.Kd = np.diag(np.diag(Kd_))
        self.Koff = Kd_ - self.Kd
        P = _active_inverse(self.Kd, idx)
        super().__init__(act, P, np.diag(P).copy() if not self.Koff.any() else None)
        self.sigma = np.zeros_like(self.Kd)

    @staticmethod
    def _pattern_holds(K: sp.csr_matrix, factor: AncestorFactor) -> bool:
        """Whether ``K``'s off-diagonal nonzeros all lie on the factor's pattern."""
        off = K - sp.diags(K.diagonal())
        off.eliminate_zeros()
        on = sparse_entries(abs(off), factor.pat_idx, factor.pat_row).sum()
        return bool(np.isclose(2.0 * on, abs(off).sum(), rtol=1e-12, atol=0.0))

    def K_sigma(self, sigma: np.ndarray) -> np.ndarray:
        """``K o sigma`` (unit diagonal), shape (n_rows, n_rows) (dense form)."""
        return self.Kd + self.Koff * sigma

    def _with(self, z: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
        """The current ``sigma`` with the ancestor pairs ``(iu, ju)`` set to ``z``."""
        assert self.sigma is not None
        sig = self.sigma.copy()
        sig[iu, ju] = sig[ju, iu] = z
        return sig

    def _set_factor(self, z: np.ndarray) -> None:
        """Factor ``K_sigma`` at the pairs' values ``z`` into :attr:`factor`."""
        assert self.pairs is not None
        fk = self._factor_k
        vals = np.zeros(len(fk.pat_idx))
        vals[self._sel] = self.pairs[2] * z
        fk.refactor(self._kd, vals)

    def sigma_step(self, V: np.ndarray, max_steps: int = 200, rtol: float = 1e-12) -> int:
        """Maximise the dual ``-1/2 tr(V^T K_sigma^{-1} V)`` over the box ``sigma in [-1, 1]``.

        The function is concave in ``sigma`` (matrix-fractional), smooth, and lives on the
        ancestor pairs only (``K_ij > 0``), so it is maximised by L-BFGS-B with box bounds from
        the current ``sigma`` (gradient ``-K_ij w_i^T w_j`` per pair, ``W = K_sigma^{-1} V``);
        the result is kept only if it does not lower the dual.

        Parameters
        ----------
        V : ndarray of shape (n_rows, n_features)
            The dual's ``V`` (fixed while ``sigma`` moves).
        max_steps : int
            L-BFGS-B iterations.
        rtol : float
            Relative tolerance on the dual value.

        Returns
        -------
        int
            Iterations taken (the metric and ``sigma`` are updated in place).
        """
        if self.pairs is not None:
            return self._sigma_step_factored(V, max_steps, rtol)
        if self.sigma is None or not self.Koff.any():
            return 0
        G = V @ V.T
        iu, ju = np.nonzero(np.triu(self.Koff > 0, k=1))
        kp = self.Koff[iu, ju]
        ix = np.ix_(self.idx, self.idx)
        Ga = G[ix]

        def neg_dual(z: np.ndarray) -> tuple[float, np.ndarray]:
            Pa = np.linalg.inv(self.K_sigma(self._with(z, iu, ju))[ix])
            P = np.zeros_like(self.Kd)
            P[ix] = Pa
            M = P @ G @ P
            return 0.5 * float(np.sum(Pa * Ga)), -kp * M[iu, ju]

        z0 = self.sigma[iu, ju].copy()
        z, nit = _lbfgs_box(neg_dual, z0, max_steps, rtol)
        if z is not None:
            self.sigma = self._with(z, iu, ju)
            self.P = _active_inverse(self.K_sigma(self.sigma), self.idx)
        return nit

    def _sigma_step_factored(self, V: np.ndarray, max_steps: int, rtol: float) -> int:
        """:meth:`sigma_step` on the pairs, through the factor of ``K_sigma``."""
        assert self.pairs is not None and self.sigma is not None
        kp = self.pairs[2]
        if not len(kp):
            return 0
        fk = self._factor_k
        blocks = self._compressed_blocks(V)
        scratch = np.zeros(fk.n)  # a block's solve reads and writes its own nodes only

        def neg_dual(z: np.ndarray) -> tuple[float, np.ndarray]:
            self._set_factor(z)
            value, grad = 0.0, np.zeros(len(kp))
            for lo, hi, R, nodes, sel, li, lj in blocks:
                WT = np.empty_like(R)
                SOLVE_BLOCK_ROWS(*fk.arrays(), lo, hi, nodes, R, scratch, WT)
                value += 0.5 * float(np.einsum("ij,ij->", R, WT))
                grad[sel] = -kp[sel] * np.einsum("fi,fi->i", WT[:, li], WT[:, lj])
            return value, grad

        z, nit = _lbfgs_box(neg_dual, self.sigma.copy(), max_steps, rtol)
        if z is not None:
            self.sigma = z
        self._set_factor(self.sigma)
        if self.sigma.any():
            self.pdiag, self.factor = None, fk
        return nit

    def _compressed_blocks(self, V: np.ndarray) -> list[tuple[Any, ...]]:
        """Per block of the pattern (a top-level subtree), ``V``'s rows on its nodes reduced to
        ``R`` with ``R^T R = V_b V_b^T``: ``K_sigma`` is block diagonal, so the dual and its
        gradient need only these Grams. ``R`` is the triangular factor of ``V_b^T = Q R``
        (``m_b x m_b``) when the block has fewer nodes than ``V`` has columns, else ``V_b``
        itself: never larger than ``V_b``, so the whole is O(m d) and a dual evaluation costs
        O(sum_b m_b^2 depth) instead of O(d m depth).

        Returns
        -------
        list of (lo, hi, R, nodes, sel, li, lj)
            The block's range of the factor's order, ``R`` (rows, m_b) with columns in the
            order of ``nodes = order[lo:hi]``, and its pairs: their positions ``sel`` in
            :attr:`pairs` and the local columns ``li``, ``lj`` of their two nodes.
        """
        assert self.pairs is not None
        fk = self._factor_k
        order, (blk_ptr, blk_of) = fk.order, fk.blocks()
        iu, ju, _ = self.pairs
        pair_blk = blk_of[iu]
        by_blk = np.argsort(pair_blk, kind="stable")
        starts = np.searchsorted(pair_blk[by_blk], np.arange(len(blk_ptr)))
        local = np.empty(fk.n, dtype=np.int64)
        out = []
        for k in range(len(blk_ptr) - 1):
            sel = by_blk[starts[k] : starts[k + 1]]
            if not len(sel):
                continue  # no pair: sigma does not act on this block
            lo, hi = int(blk_ptr[k]), int(blk_ptr[k + 1])
            nodes = order[lo:hi]
            local[nodes] = np.arange(hi - lo)
            Vb = np.asarray(V[nodes], dtype=np.float64)  # (m_b, d)
            R = np.asarray(
                np.linalg.qr(Vb.T, mode="r")  # (m_b, m_b), R^T R = V_b V_b^T
                if Vb.shape[0] < Vb.shape[1]
                else Vb.T
            )
            out.append((lo, hi, np.ascontiguousarray(R), nodes, sel, local[iu[sel]],
                        local[ju[sel]]))  # fmt: skip
        return out


def _lbfgs_box(
    fun: Any, z0: np.ndarray, max_steps: int, rtol: float
) -> tuple[np.ndarray | None, int]:
    """L-BFGS-B on ``fun`` over the box ``[-1, 1]`` from ``z0``: the result clipped to the box
    when it does not raise ``fun`` above its start, else None; and the iterations taken."""
    f0, _ = fun(z0)
    res = minimize(
        fun,
        z0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(-1.0, 1.0)] * len(z0),
        options={"maxiter": max_steps, "ftol": rtol, "gtol": 1e-14},
    )
    z = np.clip(res.x, -1.0, 1.0) if res.fun <= f0 else None
    return z, int(res.nit)


# ---------------------------------------------------------------------- the regularizers
class Regularizer(ABC):
    """A convex regularizer with the RDA splitting ``Omega = (Omega - Psi) + Psi``.

    Attributes
    ----------
    active : ndarray of bool, shape (n_rows,)
        Rows that are variables; the others stay zero.
    separable : bool
        True when ``Omega`` and ``Psi`` are sums of per-row terms (then :meth:`row_values` and
        :meth:`psi_row_values` exist and a solver may track blocks of rows separately).
    """

    active: np.ndarray
    separable: bool = False
    #: ``Omega - Psi >= 0`` everywhere (true for every regularizer here: the remainder is zero or
    #: a maximum of PSD quadratic forms). Lets RDA use the zero minorant of ``phi``.
    remainder_nonnegative: bool = True

    @abstractmethod
    def value(self, W: np.ndarray) -> float:
        """``Omega(W)``."""

    @abstractmethod
    def subgradient(self, W: np.ndarray) -> np.ndarray:
        """A subgradient of ``Omega`` at ``W``, shape (n_rows, n_features)."""

    @abstractmethod
    def psi_value(self, W: np.ndarray) -> float:
        """``Psi(W) = 1/2 tr(W^T P W)``."""

    @abstractmethod
    def psi_solve(self, G: np.ndarray) -> np.ndarray:
        """``P^{-1} G`` on the active rows (zero elsewhere), shape (n_rows, n_features).

        ``argmin_W <G, W> + Psi(W) = -psi_solve(G)`` (seed 000, eq. 9 and 11).
        """

    def remainder(self, W: np.ndarray) -> tuple[float, np.ndarray | None]:
        """``Omega(W) - Psi(W)`` and its subgradient (None when identically zero)."""
        return 0.0, None

    def row_values(self, W: np.ndarray) -> np.ndarray:
        """Per-row terms of ``Omega`` (separable regularizers only), shape (n_rows,)."""
        raise NotImplementedError(f"{type(self).__name__} is not row-separable")

    def psi_row_values(self, W: np.ndarray) -> np.ndarray:
        """Per-row terms of ``Psi`` (separable regularizers only), shape (n_rows,)."""
        raise NotImplementedError(f"{type(self).__name__} is not row-separable")

    def dual_metric(self) -> DualMetric:
        """The metric of the structural-SVM dual with this regularizer (for BCFW).

        Raises
        ------
        ParameterError
            The regularizer has no quadratic form (or relaxation) to dualise.
        """
        raise ParameterError(
            f"BCFW needs a regularizer with a dual metric (L2, Quadratic or Orthogonal), got "
            f"{type(self).__name__}"
        )


class L2(Regularizer):
    """``Omega(W) = sigma/2 sum_{i active} ||w_i||^2``; the whole of it is ``Psi``.

    Parameters
    ----------
    active : ndarray of bool, shape (n_rows,)
    sigma : float, default 1.0
    """

    separable = True

    def __init__(self, active: np.ndarray, sigma: float = 1.0) -> None:
        self.active = np.asarray(active, dtype=bool)
        self.sigma = float(sigma)

    def row_values(self, W: np.ndarray) -> np.ndarray:
        return 0.5 * self.sigma * np.einsum("ij,ij->i", W, W) * self.active

    psi_row_values = row_values

    def value(self, W: np.ndarray) -> float:
        return float(self.row_values(W).sum())

    psi_value = value

    def subgradient(self, W: np.ndarray) -> np.ndarray:
        return self.sigma * W * self.active[:, None]

    def psi_solve(self, G: np.ndarray) -> np.ndarray:
        return G * (self.active[:, None] / self.sigma)

    def dual_metric(self) -> DualMetric:
        """``P = I / sigma`` on the active rows (diagonal)."""
        return DualMetric.diagonal(self.active / self.sigma, self.active)


class Quadratic(Regularizer):
    """``Omega(W) = 1/2 sum_ij Q_ij w_i^T w_j`` over the active rows; ``Psi = Omega``.

    Parameters
    ----------
    Q : ndarray or sparse matrix of shape (n_rows, n_rows)
        Symmetric; its active block must be positive definite (inactive rows/columns ignored).
    active : ndarray of bool, shape (n_rows,)
    taxonomy : Taxonomy, optional
        When given, ``Q``'s nonzeros must lie on the diagonal and the taxonomy's ancestor pairs
        (TRANSFER's ``I + L``): ``Q`` is kept sparse and factored without fill
        (:class:`~hierlab.core.ancestor_ldl.AncestorFactor`), so memory and every product are
        O(m depth), not O(m^2). Without it ``Q`` is dense and Cholesky-factored.
    """

    def __init__(self, Q: Any, active: np.ndarray, taxonomy: Taxonomy | None = None) -> None:
        self.active = np.asarray(active, dtype=bool)
        self._idx = np.flatnonzero(self.active)
        self._factor: AncestorFactor | None = None
        if taxonomy is not None:
            Qs = sp.csr_matrix(Q, dtype=np.float64)
            keep = sp.diags(self.active.astype(np.float64))
            self.Q: Any = sp.csr_matrix(keep @ Qs @ keep)
            self.Q.eliminate_zeros()
            if abs(self.Q - self.Q.T).max() > 1e-12 * max(abs(self.Q).max(), 1.0):
                raise ParameterError("the quadratic regularizer's matrix Q must be symmetric")
            try:
                self._factor = AncestorFactor(self.Q, taxonomy, self.active)
            except ParameterError as exc:
                if "not positive definite" in str(exc):
                    raise ParameterError(
                        "the quadratic regularizer's matrix Q must be positive definite"
                    ) from None
                raise
            return
        Qd = np.asarray(Q.toarray() if sp.issparse(Q) else Q, dtype=np.float64)
        self.Q = np.zeros_like(Qd)
        block = Qd[np.ix_(self._idx, self._idx)]
        if not np.allclose(block, block.T):
            raise ParameterError("the quadratic regularizer's matrix Q must be symmetric")
        self.Q[np.ix_(self._idx, self._idx)] = block
        try:
            self._chol = sla.cho_factor(block)
        except np.linalg.LinAlgError:
            raise ParameterError(
                "the quadratic regularizer's matrix Q must be positive definite"
            ) from None

    def value(self, W: np.ndarray) -> float:
        return 0.5 * float(np.einsum("ij,ij->", W, np.asarray(self.Q @ W)))

    psi_value = value

    def subgradient(self, W: np.ndarray) -> np.ndarray:
        return np.asarray(self.Q @ W)

    def psi_solve(self, G: np.ndarray) -> np.ndarray:
        if self._factor is not None:
            return self._factor.solve(G)
        out = np.zeros_like(G)
        out[self._idx] = sla.cho_solve(self._chol, G[self._idx])
        return out

    def dual_metric(self) -> DualMetric:
        """``P = Q^{-1}`` on the active rows (held as ``Q``'s factor when it is sparse)."""
        if self._factor is not None:
            return DualMetric.factored(self._factor, self.active)
        return DualMetric.inverse(self.Q, self.active)


def transfer_matrix(taxonomy: Taxonomy, sparse: bool = False) -> Any:
    """``Q`` of TRANSFER: ``1/2 sum_{i in Y} (||w_i||^2 + sum_{j in C(i)} ||w_i - w_j||^2)``.

    Seed 000, Section 5 (with the errata: ``||w_ii||`` is ``||w_i||``). ``Y`` excludes the root,
    so the edges from the root carry no term.

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)

    sparse : bool, default False
        Return a CSR matrix (3 entries per edge) instead of a dense array.

    Returns
    -------
    ndarray or csr_matrix of shape (n_nodes, n_nodes)
        ``I + L`` on the non-root nodes (``L`` the Laplacian of the edges below the top level),
        zero row and column for the root.
    """
    m = taxonomy.n_nodes
    child = np.arange(1, m)
    par = taxonomy.parent[1:]
    inner = par > 0
    c, p = child[inner], par[inner]
    rows = np.concatenate([child, c, p, c, p])
    cols = np.concatenate([child, c, p, p, c])
    vals = np.concatenate([np.ones(m - 1), np.ones(len(c)), np.ones(len(c)), -np.ones(2 * len(c))])
    Q = sp.csr_matrix((vals, (rows, cols)), shape=(m, m))  # duplicates summed
    return Q if sparse else Q.toarray()


# ---------------------------------------------------------------------- orthogonal transfer
#: above this many active rows the eigenvalues of ORTHOGNL's matrices are found by sparse
#: Lanczos (scipy's eigsh) instead of a dense eigendecomposition (O(m^3) time, O(m^2) memory)
DENSE_EIG_MAX = 2000


def ancestor_pairs(taxonomy: Taxonomy, sparse: bool = False) -> Any:
    """0/1 symmetric matrix ``B``: ``B_ij = 1`` iff one of ``i, j`` is a proper ancestor of the
    other, both non-root (seed 000, eq. 6), shape (n_nodes, n_nodes); CSR when ``sparse``."""
    A = sp.csr_matrix(taxonomy.ancestor_matrix, dtype=np.float64, copy=True)  # cached: copy
    A.setdiag(0.0)
    nonroot = (np.arange(taxonomy.n_nodes) != taxonomy.root).astype(np.float64)
    A = sp.csr_matrix(sp.diags(nonroot) @ A @ sp.diags(nonroot))
    A.eliminate_zeros()
    B = sp.csr_matrix(((A + A.T) > 0).astype(np.float64))
    return B if sparse else B.toarray()


def orthogonal_K(taxonomy: Taxonomy, alpha: float = 1.0, sparse: bool = False) -> Any:
    """``K`` of seed 000, eq. (6): ``K_ii = |D+(i)|``, ``K_ij = alpha`` for ancestor pairs.

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)
    alpha : float, default 1.0
        Weight of the orthogonality penalty ``|w_i^T w_j|`` between a node and its ancestors.
    sparse : bool, default False
        Return a CSR matrix (its nonzeros: the diagonal and the ancestor pairs, O(m depth)).

    Returns
    -------
    ndarray or csr_matrix of shape (n_nodes, n_nodes)
        Zero row and column for the root (the root has no classifier).
    """
    d = taxonomy.subtree_size.astype(np.float64)
    d[taxonomy.root] = 0.0
    K = sp.csr_matrix(float(alpha) * ancestor_pairs(taxonomy, sparse=True) + sp.diags(d))
    K.eliminate_zeros()
    return K if sparse else K.toarray()


def comparison_matrix(K: Any) -> Any:
    """The comparison matrix ``Kbar``: ``|K_ii|`` on the diagonal, ``-|K_ij|`` off it.

    Seed 000, Section 3.1 (Theorem 1: ``Omega`` is convex iff ``K >= 0`` and ``Kbar`` is PSD,
    for ``n_features >= m - 1``).

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (m, m)

    Returns
    -------
    ndarray (or csr_matrix for a sparse ``K``) of shape (m, m)
    """
    if sp.issparse(K):
        Ks = sp.csr_matrix(K, dtype=np.float64)
        diag = np.abs(Ks.diagonal())
        off = abs(Ks - sp.diags(Ks.diagonal()))
        return sp.csr_matrix(sp.diags(diag) - off)
    K = np.asarray(K, dtype=np.float64)
    Kbar = -np.abs(K)
    np.fill_diagonal(Kbar, np.abs(np.diag(K)))
    return Kbar


def _eigsh_one(M: Any, which: str, **kw: Any) -> float:
    """One eigenvalue of the symmetric (sparse) ``M`` by ARPACK (scipy's eigsh)."""
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    v0 = np.ones(M.shape[0]) / np.sqrt(M.shape[0])  # deterministic start
    try:
        return float(eigsh(M, k=1, which=which, v0=v0, **kw)[0][0])
    except ArpackNoConvergence as exc:  # pragma: no cover - ARPACK's limit
        if len(exc.eigenvalues):
            return float(exc.eigenvalues[0])
        raise


def comparison_lambda_min(K: Any, active: np.ndarray, taxonomy: Taxonomy | None = None) -> float:
    """``lambda_min`` of the comparison matrix of ``K``'s active block.

    Exact (a dense eigendecomposition) up to :data:`DENSE_EIG_MAX` active rows; above, with
    the ``taxonomy`` of ``K``'s ancestor pairs, positive definiteness is decided exactly by the
    fill-free ``L D L^T`` of ``Kbar`` (:class:`~hierlab.core.ancestor_ldl.AncestorFactor`) and
    the value is found by shift-invert Lanczos through that factor; without it, by Lanczos
    for the smallest eigenvalue.

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (n_rows, n_rows)
    active : ndarray of bool, shape (n_rows,)
    taxonomy : Taxonomy, optional

    Returns
    -------
    float
        ``inf`` without active rows; positive iff ``Kbar`` is positive definite.
    """
    act = np.asarray(active, dtype=bool)
    idx = np.flatnonzero(act)
    if len(idx) == 0:
        return float("inf")
    Kb = comparison_matrix(sp.csr_matrix(K) if sp.issparse(K) else np.asarray(K, np.float64))
    if len(idx) <= DENSE_EIG_MAX:
        block = Kb[np.ix_(idx, idx)]
        dense = block.toarray() if sp.issparse(block) else block
        return float(np.linalg.eigvalsh(dense)[0])
    from scipy.sparse.linalg import LinearOperator

    Kbs = sp.csr_matrix(Kb)
    block = sp.csr_matrix(Kbs[idx][:, idx])
    if taxonomy is not None:
        try:
            factor = AncestorFactor(Kbs, taxonomy, act)
        except ParameterError as exc:
            if "not positive definite" in str(exc):  # the exact verdict; a value <= 0
                return min(0.0, _eigsh_one(block, "SA", tol=1e-6, maxiter=20 * len(idx)))
            factor = None
        if factor is not None:
            n = Kbs.shape[0]

            def solve(x: np.ndarray) -> np.ndarray:
                full = np.zeros(n)
                full[idx] = np.ravel(x)
                return factor.solve(full)[idx]

            op = LinearOperator(block.shape, matvec=solve, dtype=np.float64)
            return _eigsh_one(block, "LM", sigma=0.0, OPinv=op, tol=0.0)
    return _eigsh_one(block, "SA", tol=0.0)


def smallest_comparison_eigenvalue(taxonomy_or_K: Taxonomy | Any, alpha: float = 1.0) -> float:
    """``lambda_min(Kbar)`` over the non-root nodes: the strong convexity of ``Omega``.

    Parameters
    ----------
    taxonomy_or_K : Taxonomy, ndarray or sparse matrix
        A taxonomy (``K`` by eq. 6 with ``alpha``, root excluded) or a matrix ``K`` of shape
        (m, m), used as given (pass the non-root block ``K[1:, 1:]`` of :func:`orthogonal_K`).
    alpha : float, default 1.0
        Used with a taxonomy.

    Returns
    -------
    float
        Positive iff ``K`` is admissible (``Omega`` strongly convex, Corollary 2).
    """
    if isinstance(taxonomy_or_K, Taxonomy):
        tax = taxonomy_or_K
        active = np.arange(tax.n_nodes) != tax.root
        return comparison_lambda_min(orthogonal_K(tax, alpha, sparse=True), active, tax)
    K = taxonomy_or_K
    if K.shape[0] == 0:  # not ``K.size``: a sparse matrix's size counts its stored entries
        return float("inf")
    return comparison_lambda_min(K, np.ones(K.shape[0], dtype=bool))


def max_admissible_alpha(taxonomy: Taxonomy) -> float:
    """The supremum of the ``alpha`` of eq. (6) for which ``Kbar`` is positive definite.

    ``Kbar(alpha) = D - alpha B`` with ``D = diag |D+(i)|`` and ``B`` the ancestor-pair
    indicator, so ``Kbar`` is positive definite iff ``alpha < 1 / lambda_max(D^{-1/2} B
    D^{-1/2})`` (exact: one symmetric eigenproblem; dense up to :data:`DENSE_EIG_MAX` nodes,
    sparse Lanczos above). Every ``alpha`` strictly below the returned value is admissible; at
    the value itself ``lambda_min = 0``.

    Parameters
    ----------
    taxonomy : Taxonomy (a tree)

    Returns
    -------
    float
        ``inf`` when no two non-root nodes are in an ancestor relation (a flat taxonomy).
    """
    nonroot = np.flatnonzero(np.arange(taxonomy.n_nodes) != taxonomy.root)
    B = ancestor_pairs(taxonomy, sparse=True)[nonroot][:, nonroot]
    if B.shape[0] == 0 or B.nnz == 0:
        return float("inf")
    s = 1.0 / np.sqrt(taxonomy.subtree_size[nonroot].astype(np.float64))
    S = sp.csr_matrix(sp.diags(s) @ B @ sp.diags(s))
    if S.shape[0] <= DENSE_EIG_MAX:
        lam = float(np.linalg.eigvalsh(S.toarray())[-1])
    else:
        lam = _eigsh_one(S, "LA", tol=0.0)
    return 1.0 / lam


def check_orthogonal_K(
    K: Any, taxonomy: Taxonomy | None = None, alpha: float | None = None
) -> float:
    """Validate ``K`` for ORTHOGNL and return ``lambda_min(Kbar)`` (> 0).

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (m, m)
        Over the non-root nodes (``m = n_nodes - 1``), or over every node with a zero root
        row and column (``m = n_nodes``, with ``taxonomy``).
    taxonomy : Taxonomy, optional
        For the error message (the largest admissible ``alpha``), and, with a sparse ``K``,
        for the exact positive-definiteness test through the fill-free factor of ``Kbar``
        (:func:`comparison_lambda_min`).
    alpha : float, optional
        The ``alpha`` that built ``K`` (eq. 6), for the error message.

    Raises
    ------
    ParameterError
        ``K`` not symmetric, negative entries, or ``Kbar`` not positive definite (the message
        names the largest admissible ``alpha`` for the taxonomy, or how to fix a user ``K``).
    """
    if sp.issparse(K):
        K = sp.csr_matrix(K, dtype=np.float64)
        if K.shape[0] != K.shape[1]:
            raise ParameterError(f"K must be a square matrix, got shape {K.shape}")
        asym = abs(K - K.T)
        if asym.nnz and asym.max() > 1e-8 * max(1.0, abs(K).max()):
            raise ParameterError("K must be symmetric")
        if K.nnz and K.data.min() < 0:
            raise ParameterError("K must be nonnegative entry-wise (seed 000, Theorem 1)")
    else:
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ParameterError(f"K must be a square matrix, got shape {K.shape}")
        if not np.allclose(K, K.T):
            raise ParameterError("K must be symmetric")
        if (K < 0).any():
            raise ParameterError("K must be nonnegative entry-wise (seed 000, Theorem 1)")
    if taxonomy is not None and K.shape[0] in (taxonomy.n_nodes - 1, taxonomy.n_nodes):
        full = K
        if K.shape[0] == taxonomy.n_nodes - 1:  # the root first (Taxonomy's order): pad it
            full = sp.block_diag((sp.csr_matrix((1, 1)), sp.csr_matrix(K)), format="csr")
        active = np.arange(taxonomy.n_nodes) != taxonomy.root
        lam = comparison_lambda_min(full, active, taxonomy)
    else:
        lam = smallest_comparison_eigenvalue(K)
    if not lam > 0:
        if taxonomy is not None and alpha is not None:
            amax = max_admissible_alpha(taxonomy)
            raise ParameterError(
                f"K of eq. (6) with alpha={alpha:g} is not admissible for this taxonomy: the "
                f"comparison matrix has smallest eigenvalue {lam:.4g} <= 0, so the ORTHOGNL "
                f"objective is not strongly convex. The largest admissible alpha for this "
                f"taxonomy is {amax:.6g} (exclusive): choose alpha < {amax:.6g}, or increase "
                "the diagonal of K."
            )
        raise ParameterError(
            f"K is not admissible: its comparison matrix has smallest eigenvalue {lam:.4g} <= 0, "
            "so the ORTHOGNL objective is not strongly convex. Shrink the off-diagonal entries "
            "or increase the diagonal (seed 000, remark after eq. 6)."
        )
    return lam


class Orthogonal(Regularizer):
    """``Omega(W) = 1/2 sum_ij K_ij |w_i^T w_j|`` (seed 000, eq. 5) over the active rows.

    Subgradient by Theorem 4: ``g_i = K_ii w_i + sum_{j != i} sign(w_i^T w_j) K_ij w_j``.
    Splitting of Section 4.3: ``Psi = lambda_min/2 ||W||^2``, the remainder ``Omega - Psi`` is
    convex because ``Kbar - lambda_min I`` is PSD. ``K`` is held sparse and every term is summed
    over its nonzero pairs only (eq. 6's ``K`` lives on the ancestor pairs: O(m depth) of them).

    Parameters
    ----------
    K : ndarray or sparse matrix of shape (n_rows, n_rows)
        Nonnegative, symmetric, zero on the inactive rows and columns.
    active : ndarray of bool, shape (n_rows,)
    lambda_min : float, optional
        ``lambda_min(Kbar)``; computed when omitted. Must be positive.
    split : {"lambda_min", "jacobi"}, default "lambda_min"
        ``Psi = 1/2 sum_i p_i ||w_i||^2``: ``p_i = lambda_min`` (Section 4.3), or ``p_i = t K_ii``
        with ``t = lambda_min(D^{-1/2} Kbar D^{-1/2})``, ``D = diag(K)`` (a diagonally scaled
        split: ``Kbar - P`` stays PSD, so ``Omega - Psi`` stays convex, and ``Psi`` is larger on
        the heavily regularised upper nodes, which shortens RDA's steps there).
    taxonomy : Taxonomy, optional
        The tree of ``K``'s pairs: the eigenvalues are then found through the fill-free factor
        of ``Kbar`` at any size, and BCFW's dual metric is factored the same way
        (:class:`SignRelaxedMetric`).
    """

    def __init__(
        self,
        K: Any,
        active: np.ndarray,
        lambda_min: float | None = None,
        split: str = "lambda_min",
        taxonomy: Taxonomy | None = None,
    ) -> None:
        self.active = np.asarray(active, dtype=bool)
        keep = sp.diags(self.active.astype(np.float64))
        self.K = sp.csr_matrix(keep @ sp.csr_matrix(K, dtype=np.float64) @ keep)
        self.K.eliminate_zeros()
        self.taxonomy = taxonomy
        idx = np.flatnonzero(self.active)
        if lambda_min is None:
            lambda_min = comparison_lambda_min(self.K, self.active, taxonomy)
        if not lambda_min > 0:
            raise ParameterError(
                f"Orthogonal regularizer needs lambda_min(Kbar) > 0, got {lambda_min:.4g}"
            )
        self.lambda_min = float(lambda_min)
        self.split = split
        self._diag = self.K.diagonal().copy()
        p = np.zeros(len(self.active))
        if split == "lambda_min":
            p[idx] = self.lambda_min
        elif split == "jacobi":
            d = self._diag
            s = np.divide(1.0, np.sqrt(d), out=np.zeros_like(d), where=d > 0)
            scaled = sp.diags(s) @ self.K @ sp.diags(s)
            p[idx] = comparison_lambda_min(scaled, self.active, taxonomy) * d[idx]
        else:
            raise ParameterError(f"split must be 'lambda_min' or 'jacobi', got {split!r}")
        #: diagonal of P in Psi(W) = 1/2 sum_i p_i ||w_i||^2, shape (n_rows,)
        self.psi_diag = p
        upper = sp.triu(self.K, k=1).tocoo()
        self._iu, self._ju, self._kp = upper.row, upper.col, upper.data

    def _terms(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``|w_i|^2`` per row and ``w_i^T w_j`` per pair (the Gram matrix on K's pattern)."""
        return np.einsum("ij,ij->i", W, W), pair_dots(W, self._iu, self._ju)

    def _value(self, sq: np.ndarray, dots: np.ndarray) -> float:
        return 0.5 * float(self._diag @ sq) + float(self._kp @ np.abs(dots))

    def _signed_times(self, W: np.ndarray, dots: np.ndarray) -> np.ndarray:
        """``K_s W`` with ``K_s = diag(K) + sign(W W^T) o K_off`` (Theorem 4's subgradient)."""
        m = len(self.active)
        off = sp.csr_matrix((self._kp * np.sign(dots), (self._iu, self._ju)), shape=(m, m))
        return self._diag[:, None] * W + np.asarray((off + off.T) @ W)

    def value(self, W: np.ndarray) -> float:
        return self._value(*self._terms(W))

    def subgradient(self, W: np.ndarray) -> np.ndarray:
        return self._signed_times(W, self._terms(W)[1])

    def psi_value(self, W: np.ndarray) -> float:
        return 0.5 * float(np.einsum("ij,ij->", W, W * self.psi_diag[:, None]))

    def psi_solve(self, G: np.ndarray) -> np.ndarray:
        inv = np.divide(1.0, self.psi_diag, out=np.zeros_like(self.psi_diag), where=self.active)
        return G * inv[:, None]

    def remainder(self, W: np.ndarray) -> tuple[float, np.ndarray]:
        sq, dots = self._terms(W)
        omega = self._value(sq, dots)
        psi = 0.5 * float(np.sum(sq * self.psi_diag))
        G = self._signed_times(W, dots) - self.psi_diag[:, None] * W
        return omega - psi, G

    def dual_metric(self) -> SignRelaxedMetric:
        """The sign relaxation ``K_sigma = K o sigma`` of ``Omega`` (a max of quadratics)."""
        return SignRelaxedMetric(self.K, self.active, self.taxonomy)
