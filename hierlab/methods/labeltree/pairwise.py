"""One-vs-one linear SVMs for every pair of classes, and their decision DAG (Platt et al. 2000).

Pair ``(i, j)``, ``i < j``, is the L1-loss linear SVM with a regularised bias (liblinear's
``-B 1``, ``LinearSVC(loss="hinge", intercept_scaling=1)``) on the rows of classes ``i`` (label
+1) and ``j`` (label -1):

    min_{w, b}  1/2 (||w||^2 + b^2) + C sum_r max(0, 1 - y_r (w^T x_r + b)),

solved in its dual by coordinate descent (Hsieh et al. 2008): ``alpha_r`` moves by
``clip(alpha_r - G_r / (||x_r||^2 + 1), 0, C)`` with ``G_r = y_r (w^T x_r + b) - 1``, and
``(w, b) += (alpha_r' - alpha_r) y_r (x_r, 1)``; a pair stops when the projected gradients'
spread ``max PG - min PG`` over a pass is at most ``tol`` (liblinear's rule, no shrinking).
The rows are visited in a fresh pseudo-random order each pass (MINSTD generator seeded from
``seed`` and the pair), so the compiled and the Python form take the same steps.

Storage: pair ``p`` keeps only the non-zero entries of ``w_p`` (float32: the weights are
solved in float64 and stored rounded, half the size), which lie in the union of
its two classes' features: one CSR matrix of shape (K(K-1)/2, n_features), pairs in the order
``(0,1), (0,2), ..., (0,K-1), (1,2), ...`` (:func:`pair_index`). Its size is
``sum_{i<j} |features(i) u features(j)|``, at most ``(K - 1) sum_i |features(i)|``: linear in
the classes for each class's vocabulary, quadratic only through the number of pairs.

The DAG (Platt, Cristianini & Shawe-Taylor 2000, Section 3): the classes in a list; the node
"first vs last" of the remaining list evaluates ``f_{first,last}``; a positive value removes
the last class, otherwise the first. The remaining list is always a contiguous range
``[lo, hi]`` of the initial one, so an example reaches a leaf after exactly ``K - 1``
evaluations, each a sparse dot product (the example's entries looked up in ``w_p`` by binary
search: ``O(nnz(x) log nnz(w_p))``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.jit import choose, njit

__all__ = ["dag_walk", "fit_pairs", "pair_index"]

#: MINSTD multiplier and modulus: products stay below 2^47 (exact in int64 and in Python)
_LCG_A = 48271
_LCG_M = 2147483647


def pair_index(i: Any, j: Any, K: int) -> Any:
    """Row of pair ``(i, j)``, ``i < j``, in the pair order ``(0,1), (0,2), ..., (1,2), ...``.

    ``p = i K - i (i + 1) / 2 + (j - i - 1)``; works on integers and integer arrays.
    """
    return i * K - (i * (i + 1)) // 2 + (j - i - 1)


def _pairs_kernel(
    indptr: Any,
    indices: Any,
    data: Any,
    sqn: Any,
    order: Any,
    cls_ptr: Any,
    K: int,
    C: float,
    tol: float,
    max_passes: int,
    seed: int,
    d: int,
) -> tuple[Any, Any, Any, Any, Any, Any]:  # pragma: no cover - compiled by numba (or not)
    """Dual CD for every pair ``i < j``; see the module docstring. Returns the CSR parts of
    the weights (``ptr``, ``idx``, ``val``), the biases, the passes and the converged flags."""
    n_pairs = K * (K - 1) // 2
    w = np.zeros(d)
    mark = np.zeros(d, dtype=np.bool_)
    touched = np.empty(d, dtype=np.int64)
    cap = 1024
    out_idx = np.empty(cap, dtype=np.int32)
    out_val = np.empty(cap, dtype=np.float32)
    ptr = np.zeros(n_pairs + 1, dtype=np.int64)
    bias = np.zeros(n_pairs)
    passes = np.zeros(n_pairs, dtype=np.int64)
    conv = np.zeros(n_pairs, dtype=np.bool_)
    p = 0
    for i in range(K):
        for j in range(i + 1, K):
            ni = cls_ptr[i + 1] - cls_ptr[i]
            m = ni + cls_ptr[j + 1] - cls_ptr[j]
            rows = np.empty(m, dtype=np.int64)
            rows[:ni] = order[cls_ptr[i] : cls_ptr[i + 1]]
            rows[ni:] = order[cls_ptr[j] : cls_ptr[j + 1]]
            y = np.ones(m)
            y[ni:] = -1.0
            alpha = np.zeros(m)
            b = 0.0
            nt = 0
            for t in range(m):
                r = rows[t]
                for k in range(indptr[r], indptr[r + 1]):
                    f = indices[k]
                    if not mark[f]:
                        mark[f] = True
                        touched[nt] = f
                        nt += 1
            state = (seed * 7919 + p * 104729 + 1) % _LCG_M
            if state == 0:
                state = 1
            perm = np.arange(m)
            for it in range(max_passes):
                for t in range(m - 1, 0, -1):  # Fisher-Yates with MINSTD
                    state = (state * _LCG_A) % _LCG_M
                    s = state % (t + 1)
                    tmp = perm[t]
                    perm[t] = perm[s]
                    perm[s] = tmp
                pg_max = -np.inf
                pg_min = np.inf
                for u in range(m):
                    t = perm[u]
                    r = rows[t]
                    dot = b
                    for k in range(indptr[r], indptr[r + 1]):
                        dot += w[indices[k]] * data[k]
                    g = y[t] * dot - 1.0
                    pg = g
                    if alpha[t] <= 0.0:
                        pg = min(g, 0.0)
                    elif alpha[t] >= C:
                        pg = max(g, 0.0)
                    pg_max = max(pg_max, pg)
                    pg_min = min(pg_min, pg)
                    if pg != 0.0:
                        old = alpha[t]
                        new = min(max(old - g / (sqn[r] + 1.0), 0.0), C)
                        alpha[t] = new
                        step = (new - old) * y[t]
                        for k in range(indptr[r], indptr[r + 1]):
                            w[indices[k]] += step * data[k]
                        b += step
                passes[p] = it + 1
                if pg_max - pg_min <= tol:
                    conv[p] = True
                    break
            feats = np.sort(touched[:nt])
            if ptr[p] + nt > cap:
                while ptr[p] + nt > cap:
                    cap *= 2
                grown_i = np.empty(cap, dtype=np.int32)
                grown_v = np.empty(cap, dtype=np.float32)
                grown_i[: ptr[p]] = out_idx[: ptr[p]]
                grown_v[: ptr[p]] = out_val[: ptr[p]]
                out_idx = grown_i
                out_val = grown_v
            q = ptr[p]
            for f in feats:
                if w[f] != 0.0:
                    out_idx[q] = f
                    out_val[q] = w[f]
                    q += 1
                w[f] = 0.0
                mark[f] = False
            ptr[p + 1] = q
            bias[p] = b
            p += 1
    return ptr, out_idx[: ptr[n_pairs]], out_val[: ptr[n_pairs]], bias, passes, conv


_PAIRS = njit(_pairs_kernel)


def fit_pairs(
    X: sp.csr_matrix,
    y: np.ndarray,
    K: int,
    C: float = 1.0,
    *,
    tol: float = 1e-3,
    max_passes: int = 1000,
    seed: int = 0,
    use_jit: bool | None = None,
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray]:
    """Train the ``K (K - 1) / 2`` one-vs-one SVMs (module docstring).

    Parameters
    ----------
    X : csr_matrix of shape (n_samples, n_features)
    y : ndarray of int, shape (n_samples,)
        Class indices in ``[0, K)``.
    K : int
    C, tol, max_passes, seed
        Loss weight, stopping tolerance on the projected-gradient spread, pass cap, order seed.
    use_jit : bool, optional
        Compiled kernel (None: when numba is available, :func:`hierlab.core.jit.jit_enabled`).

    Returns
    -------
    W : csr_matrix of shape (K (K - 1) / 2, n_features), float32
        Row :func:`pair_index` ``(i, j)``: ``w_ij`` (positive side: class ``i``), rounded to
        float32 from the float64 solution.
    b : ndarray of shape (K (K - 1) / 2,)
    passes : ndarray of int, shape (K (K - 1) / 2,)
    converged : ndarray of bool, shape (K (K - 1) / 2,)
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sort_indices()
    order = np.argsort(y, kind="stable").astype(np.int64)
    cls_ptr = np.zeros(K + 1, dtype=np.int64)
    cls_ptr[1:] = np.cumsum(np.bincount(y, minlength=K))
    sqn = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    fn = choose(_PAIRS, _pairs_kernel, use_jit)
    ptr, idx, val, b, passes, conv = fn(
        X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data, sqn, order, cls_ptr,
        int(K), float(C), float(tol), int(max_passes), int(seed), int(X.shape[1]),
    )  # fmt: skip
    n_pairs = K * (K - 1) // 2
    W = sp.csr_matrix((val, idx, ptr), shape=(n_pairs, X.shape[1]))
    return W, b, passes, conv


def _walk_kernel(
    indptr: Any,
    indices: Any,
    data: Any,
    P_ptr: Any,
    P_idx: Any,
    P_val: Any,
    bias: Any,
    K: int,
    ranks: Any,
) -> Any:  # pragma: no cover - compiled by numba (or not)
    """The DAG walk of every row; ``ranks`` (n, K) or (0, 0): the step at which each class
    left the list (1 .. K-1), the survivor ``K``."""
    n = indptr.shape[0] - 1
    pred = np.empty(n, dtype=np.int64)
    keep = ranks.shape[0] > 0
    for r in range(n):
        lo = 0
        hi = K - 1
        step = 1
        while lo < hi:
            p = lo * K - (lo * (lo + 1)) // 2 + (hi - lo - 1)
            a = P_ptr[p]
            e = P_ptr[p + 1]
            s = bias[p]
            if e > a:
                for k in range(indptr[r], indptr[r + 1]):
                    f = indices[k]
                    pos = a + np.searchsorted(P_idx[a:e], f)
                    if pos < e and P_idx[pos] == f:
                        s += P_val[pos] * data[k]
            if s > 0.0:
                if keep:
                    ranks[r, hi] = step
                hi -= 1
            else:
                if keep:
                    ranks[r, lo] = step
                lo += 1
            step += 1
        pred[r] = lo
        if keep:
            ranks[r, lo] = K
    return pred


_WALK = njit(_walk_kernel)


def dag_walk(
    X: Any,
    W: sp.csr_matrix,
    b: np.ndarray,
    K: int,
    *,
    ranks: bool = False,
    use_jit: bool | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Evaluate the decision DAG on every row of ``X`` (``K - 1`` pairwise SVMs each).

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    W, b : the pairs of :func:`fit_pairs`
    K : int
    ranks : bool, default False
        Also return, for every row and class, the DAG step at which the class was removed
        (``1 .. K - 1``; the predicted class ``K``): larger is later, the prediction largest.

    Returns
    -------
    pred : ndarray of int, shape (n_samples,)
        The surviving class index.
    R : ndarray of shape (n_samples, K) or None
    """
    Xc = sp.csr_matrix(X, dtype=np.float64)
    Xc.sort_indices()
    R = np.zeros((Xc.shape[0], K) if ranks else (0, 0), dtype=np.float64)
    fn = choose(_WALK, _walk_kernel, use_jit)
    pred = fn(
        Xc.indptr.astype(np.int64), Xc.indices.astype(np.int64), Xc.data,
        W.indptr.astype(np.int64), W.indices.astype(np.int64), W.data, b, int(K), R,
    )  # fmt: skip
    return np.asarray(pred, dtype=np.int64), (R if ranks else None)
