"""RDM, RNMF and DRHL: their splits against brute force, their trees against a plain walk."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import NMF
from sklearn.svm import OneClassSVM

import hierlab
from hierlab.core.jit import HAVE_NUMBA
from hierlab.methods.labeltree.drhl import color_classes, coloring_cost
from hierlab.methods.labeltree.rdm import cluhsic, hsic_of_partition
from hierlab.methods.labeltree.rnmf import class_means, nmf_partition
from hierlab.methods.labeltree.tree import leaf_scores, route


def _hsic_numpy(X: np.ndarray, assign: np.ndarray, p: int) -> float:
    """Seed 004's eq. (2): tr(H K H L) / (m - 1)^2, K = X X^T, L = Pi Pi^T, by matrices."""
    m = len(X)
    H = np.eye(m) - np.ones((m, m)) / m
    Pi = np.eye(p)[assign]
    return float(np.trace(H @ (X @ X.T) @ H @ (Pi @ Pi.T))) / (m - 1) ** 2


# ------------------------------------------------------------------------------------ RDM
def test_hsic_of_partition_is_the_trace_formula() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((9, 4))
    a = rng.integers(0, 3, 9)
    assert hsic_of_partition(X, a, 3) == pytest.approx(_hsic_numpy(X, a, 3), rel=1e-12)
    assert hsic_of_partition(sp.csr_matrix(X), a, 3) == pytest.approx(_hsic_numpy(X, a, 3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cluhsic_ends_at_a_local_maximum_checked_by_brute_force(seed: int) -> None:
    """No single move of a row (that keeps its cluster non-empty) raises HSIC."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 3))
    a, _ = cluhsic(sp.csr_matrix(X), 3, seed=seed)
    best = _hsic_numpy(X, a, 3)
    for i in range(10):
        if np.sum(a == a[i]) == 1:
            continue
        for b in range(3):
            moved = a.copy()
            moved[i] = b
            assert _hsic_numpy(X, moved, 3) <= best + 1e-12


def test_cluhsic_finds_the_global_maximum_of_separated_groups() -> None:
    rng = np.random.default_rng(3)
    X = np.repeat(np.array([[5.0, 0.0], [-5.0, 0.0]]), 4, axis=0) + 0.1 * rng.standard_normal(
        (8, 2)
    )
    a, _ = cluhsic(X, 2, seed=1)
    top = max(_hsic_numpy(X, np.array(c), 2) for c in itertools.product((0, 1), repeat=8))
    assert _hsic_numpy(X, a, 2) == pytest.approx(top, rel=1e-12)


@pytest.mark.skipif(not HAVE_NUMBA, reason="numba is not installed: only one form exists")
def test_cluhsic_compiled_and_python_agree() -> None:
    X = sp.random(40, 30, density=0.2, random_state=4, format="csr")
    a, s = cluhsic(X, 3, seed=5, use_jit=True)
    b, t = cluhsic(X, 3, seed=5, use_jit=False)
    np.testing.assert_array_equal(a, b)
    assert s == t


# ------------------------------------------------------------------------------------ RNMF
def test_class_means_are_numpy_means() -> None:
    rng = np.random.default_rng(6)
    X = rng.random((12, 5))
    y = rng.integers(0, 3, 12)
    ref = np.vstack([X[y == k].mean(axis=0) for k in range(3)])
    M = class_means(sp.csr_matrix(X), y, np.arange(3))
    assert sp.issparse(M)
    np.testing.assert_allclose(M.toarray(), ref)
    np.testing.assert_allclose(class_means(X, y, np.arange(3)), ref)


def test_nmf_partition_takes_the_dominant_factor_of_sklearn_nmf() -> None:
    rng = np.random.default_rng(7)
    M = rng.random((7, 6))
    group, U = nmf_partition(M, 3)
    Mn = M / np.linalg.norm(M, axis=1, keepdims=True)  # the class means scaled to unit length
    ref = NMF(n_components=3, init="nndsvda", solver="cd", max_iter=500).fit_transform(Mn)
    np.testing.assert_allclose(U, ref)
    used = np.unique(np.argmax(ref, axis=1))
    np.testing.assert_array_equal(group, np.searchsorted(used, np.argmax(ref, axis=1)))


def test_nmf_partition_recovers_block_structure_found_by_enumeration() -> None:
    """Classes drawn on two disjoint feature blocks: the NMF split is the 2-partition with the
    least rank-1-per-group residual, found by enumerating every 2-partition."""
    rng = np.random.default_rng(8)
    M = np.zeros((6, 8))
    M[:3, :4] = 1.0 + 0.1 * rng.random((3, 4))
    M[3:, 4:] = 1.0 + 0.1 * rng.random((3, 4))
    group, _ = nmf_partition(M, 2)

    def residual(g: tuple[int, ...]) -> float:
        out = 0.0
        for side in (0, 1):
            part = M[np.array(g) == side]
            if len(part):
                s = np.linalg.svd(part, compute_uv=False)
                out += float((s[1:] ** 2).sum())
        return out

    parts = [g for g in itertools.product((0, 1), repeat=6) if 0 < sum(g) < 6]
    best = min(parts, key=residual)
    same = np.array_equal(group, best) or np.array_equal(group, 1 - np.array(best))
    assert same, (group, best)


# ------------------------------------------------------------------------------------ DRHL
@pytest.mark.parametrize("K,B,seed", [(2, 1, 0), (4, 1, 1), (5, 2, 2), (6, 1, 3), (6, 6, 4)])
def test_colouring_is_optimal_by_enumeration(K: int, B: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    f_pos, f_neg = rng.normal(size=K), rng.normal(size=K)
    mu = color_classes(f_pos, f_neg, B)
    feasible = [
        np.array(c)
        for c in itertools.product((-1, 0, 1), repeat=K)
        if abs(sum(c)) <= B and 1 in c and -1 in c
    ]
    best = min(coloring_cost(c, f_pos, f_neg) for c in feasible)
    assert abs(int(mu.sum())) <= B and (mu == 1).any() and (mu == -1).any()
    assert coloring_cost(mu, f_pos, f_neg) == pytest.approx(best, abs=1e-12)


# ------------------------------------------------------------------------------------ trees
def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.arange(160) % 8
    centres = 2.5 * rng.random((8, 12))
    X = np.abs(centres[y] + 0.4 * rng.standard_normal((160, 12)))
    return X, np.array([f"k{c}" for c in y], dtype=object)


def _walk(tree: object, x: np.ndarray) -> int:
    """One row down the tree by plain loops: the best child's w_c x + b_c."""
    v = 0
    while tree.children[v]:  # type: ignore[attr-defined]
        ch = tree.children[v]  # type: ignore[attr-defined]
        W = tree.coef[ch]  # type: ignore[attr-defined]
        W = W.toarray() if sp.issparse(W) else W
        s = [W[k] @ x + tree.intercept[c] for k, c in enumerate(ch)]  # type: ignore[attr-defined]
        v = ch[int(np.argmax(s))]
    return v


@pytest.mark.parametrize("name", ["rdm", "rnmf", "drhl"])
def test_tree_routing_and_leaves_against_a_plain_walk(name: str) -> None:
    X, y = _data()
    est = hierlab.make_estimator(name).fit(X, y)
    tree = est.tree_
    leaf, _cls = route(tree, X)
    for r in range(0, 160, 7):
        assert leaf[r] == _walk(tree, X[r])
    for v, (_classes, W, b) in tree.leaf_models.items():
        rows = np.flatnonzero(leaf == v)
        if len(rows):
            _, _, S = leaf_scores(tree, v, X[rows])
            np.testing.assert_allclose(S, X[rows] @ np.asarray(W).T + b[None, :])
    sparse = hierlab.make_estimator(name).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(est.predict(X), sparse.predict(sp.csr_matrix(X)))
    pred = est.predict(X)
    np.testing.assert_array_equal(est.classes_[np.argmax(est.decision_function(X), axis=1)], pred)
    assert np.mean(pred == y) > 0.5 and est.depth_ >= 1


def test_leaf_one_class_svm_is_sklearns() -> None:
    """A stump (RNMF with p = 8 >= classes): one leaf whose scores are OneClassSVM's."""
    X, y = _data(1)
    est = hierlab.RNMFClassifier(p=8).fit(X, y)
    assert est.depth_ == 0 and list(est.tree_.leaf_models) == [0]
    _, _, S = leaf_scores(est.tree_, 0, X)
    for k, name in enumerate(est.classes_):
        ref = OneClassSVM(kernel="linear", nu=0.5).fit(X[y == name])
        np.testing.assert_allclose(S[:, k], ref.decision_function(X), rtol=1e-9, atol=1e-9)


def test_drhl_ignored_classes_reach_both_children() -> None:
    X, y = _data(2)
    est = hierlab.DRHLClassifier(rho=5.0).fit(X, y)  # rho above every hinge: nothing ignored
    tree = est.tree_
    for v, ch in enumerate(tree.children):
        if ch:
            a, b = (set(tree.node_classes[c].tolist()) for c in ch)
            assert a | b == set(tree.node_classes[v].tolist())
    relaxed = hierlab.DRHLClassifier(rho=0.0).fit(X, y)  # rho below: ignore all it may
    overlaps = [
        set(relaxed.tree_.node_classes[ch[0]].tolist())
        & set(relaxed.tree_.node_classes[ch[1]].tolist())
        for ch in relaxed.tree_.children
        if ch
    ]
    assert any(overlaps)


# ------------------------------------------------------------------------------ model files
@pytest.mark.parametrize("name", ["dagsvm", "rdm", "rnmf", "drhl"])
def test_saved_models_load_and_tampered_states_are_refused(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hierlab.core.exceptions import ModelFileError
    from hierlab.methods.loaded import check_loaded

    X, y = _data(3)
    est = hierlab.make_estimator(name).fit(sp.csr_matrix(X), y)
    path = tmp_path / "m.hlm"
    hierlab.save(est, path)
    back = hierlab.load(path)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    check_loaded(back)
    if name == "dagsvm":
        back.pair_intercept_ = back.pair_intercept_[:-1]  # one pair short
    else:
        back.tree_.children[0] = [len(back.tree_.children)]  # a child outside the tree
    with pytest.raises(ModelFileError):
        check_loaded(back)


def test_principal_projection_is_the_svd_direction() -> None:
    from hierlab.methods.labeltree.drhl import _principal_projection

    rng = np.random.default_rng(9)
    M = rng.random((9, 6)) @ np.diag([5.0, 1, 1, 0.5, 0.2, 0.1])
    Mc = M - M.mean(axis=0)
    ref = Mc @ np.linalg.svd(Mc)[2][0]
    z = _principal_projection(sp.csr_matrix(M), n_iter=200)
    np.testing.assert_allclose(np.abs(z), np.abs(ref), rtol=1e-6)


@pytest.mark.parametrize("name", ["rdm", "rnmf", "drhl"])
def test_induced_taxonomy_holds_the_tree_and_every_class(name: str) -> None:
    X, y = _data(4)
    est = hierlab.make_estimator(name).fit(X, y)
    tax, tree = est.induced_taxonomy_, est.tree_
    leaves = {str(tax.names[i]) for i in tax.leaves}
    assert leaves == set(map(str, est.classes_))  # the classes, and only they, are leaves
    for v, ch in enumerate(tree.children):  # every routing edge is an edge of the taxonomy
        for c in ch:
            parents = {str(tax.names[p]) for p in tax.parents(f"node:{c}")}
            assert f"node:{v}" in parents
    if name == "rnmf":  # a hard partition of the classes: a tree
        assert tax.is_tree
