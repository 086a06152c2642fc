"""DAGSVM: its pairwise SVMs are LinearSVC's one-vs-one SVMs, its DAG is Platt's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

import hierlab
from hierlab.core.jit import HAVE_NUMBA
from hierlab.methods.labeltree.pairwise import dag_walk, fit_pairs, pair_index


def _blobs(K: int = 5, n: int = 80, d: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    centres = 3.0 * rng.standard_normal((K, d))
    return centres[y] + rng.standard_normal((n, d)), y


def test_pair_index_enumerates_the_pairs_in_order() -> None:
    K = 7
    expected = [(i, j) for i in range(K) for j in range(i + 1, K)]
    for p, (i, j) in enumerate(expected):
        assert pair_index(i, j, K) == p


@pytest.mark.parametrize("sparse", [False, True])
def test_pairwise_svms_equal_linearsvc_one_vs_one(sparse: bool) -> None:
    """Each pair's (w, b) is LinearSVC(loss="hinge")'s on that pair's rows (the same convex
    problem, a unique optimum), to float32 storage precision."""
    X, y = _blobs()
    K = 5
    Xin = sp.csr_matrix(X) if sparse else X
    W, b, _, conv = fit_pairs(sp.csr_matrix(Xin), y, K, C=0.5, tol=1e-10, max_passes=10**6)
    assert conv.all()
    for i in range(K):
        for j in range(i + 1, K):
            rows = (y == i) | (y == j)
            s = np.where(y[rows] == i, 1, -1)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # LinearSVC must converge: a real oracle
                ref = LinearSVC(loss="hinge", C=0.5, tol=1e-10, max_iter=10**7).fit(Xin[rows], s)
            p = pair_index(i, j, K)
            w = W[p].toarray().ravel()
            scale = np.abs(ref.coef_).max()
            np.testing.assert_allclose(w, ref.coef_.ravel(), atol=2e-6 * scale)
            assert b[p] == pytest.approx(ref.intercept_[0], abs=2e-6 * scale)


def _brute_force_dag(F: np.ndarray, K: int) -> np.ndarray:
    """Platt's DDAG with an explicit list: node "first vs last" removes the loser.

    ``F[r, i, j]`` is the decision value of pair ``i < j`` on row ``r`` (> 0: ``i`` wins)."""
    out = np.empty(F.shape[0], dtype=np.int64)
    for r in range(F.shape[0]):
        remaining = list(range(K))
        while len(remaining) > 1:
            first, last = remaining[0], remaining[-1]
            remaining.remove(last if F[r, first, last] > 0 else first)
        out[r] = remaining[0]
    return out


def test_dag_walk_equals_brute_force_dag_evaluation() -> None:
    X, y = _blobs(K=6, n=90, seed=1)
    K = 6
    W, b, _, _ = fit_pairs(sp.csr_matrix(X), y, K, C=1.0)
    rng = np.random.default_rng(2)
    Xt = rng.standard_normal((200, X.shape[1])) * 3.0
    F = np.zeros((len(Xt), K, K))
    for i in range(K):
        for j in range(i + 1, K):
            p = pair_index(i, j, K)
            F[:, i, j] = Xt @ W[p].toarray().ravel() + b[p]
    pred, R = dag_walk(Xt, W, b, K, ranks=True)
    np.testing.assert_array_equal(pred, _brute_force_dag(F, K))
    assert R is not None
    np.testing.assert_array_equal(np.argmax(R, axis=1), pred)
    # each step rules out one class: the ranks are a permutation of 1..K
    np.testing.assert_array_equal(np.sort(R, axis=1), np.tile(np.arange(1, K + 1), (len(Xt), 1)))


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed: only one form exists")
def test_compiled_and_python_kernels_agree() -> None:
    X, y = _blobs(K=4, n=40, seed=3)
    a = fit_pairs(sp.csr_matrix(X), y, 4, C=1.0, use_jit=True)
    c = fit_pairs(sp.csr_matrix(X), y, 4, C=1.0, use_jit=False)
    assert (a[0] != c[0]).nnz == 0
    np.testing.assert_array_equal(a[1], c[1])
    np.testing.assert_array_equal(
        dag_walk(X, a[0], a[1], 4, use_jit=True)[0], dag_walk(X, a[0], a[1], 4, use_jit=False)[0]
    )


def test_estimator_dense_and_sparse_agree_and_scores_match_predict() -> None:
    X, y = _blobs(K=5, n=100, seed=4)
    names = np.array([f"c{k}" for k in y], dtype=object)
    dense = hierlab.DAGSVMClassifier().fit(X, names)
    sparse = hierlab.DAGSVMClassifier().fit(sp.csr_matrix(X), names)
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))
    pred = dense.predict(X)
    assert set(pred) <= set(names) and np.mean(pred == names) > 0.9
    D = dense.decision_function(X)
    np.testing.assert_array_equal(dense.classes_[np.argmax(D, axis=1)], pred)
    assert dense.depth_ == 4 and dense.pair_coef_.shape[0] == 10
    assert "DAGSVM" in dense.algorithm_
