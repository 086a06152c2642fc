"""``AncestorFactor``: the fill-free ``L D L^T`` of matrices on a tree's ancestor pairs.

Oracle: ``numpy.linalg.solve`` on the active block of the dense matrix, on random trees (with
hypothesis), random positive definite matrices with that pattern and random active sets; the
compiled and Python solves agree; TRANSFER's metric at 2,000 leaves holds nothing of size
(n_nodes, n_nodes).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierlab.core import ancestor_ldl
from hierlab.core.ancestor_ldl import AncestorFactor
from hierlab.core.exceptions import ParameterError
from hierlab.core.regularizers import (
    DualMetric,
    Orthogonal,
    Quadratic,
    ancestor_pairs,
    max_admissible_alpha,
    orthogonal_K,
    transfer_matrix,
)
from hierlab.core.taxonomy import Taxonomy
from tests._taxonomy_strategies import tree_edges


def _pattern_matrix(tax: Taxonomy, rng: np.random.Generator, density: float) -> np.ndarray:
    """A symmetric positive definite matrix with random entries on a random subset of the
    ancestor pairs (diagonally dominant)."""
    B = ancestor_pairs(tax) * (rng.random((tax.n_nodes,) * 2) < density)
    B = np.triu(B, 1)
    M = B * rng.normal(size=B.shape)
    M = M + M.T
    M[np.diag_indices_from(M)] = np.abs(M).sum(axis=1) + rng.uniform(0.1, 2.0, tax.n_nodes)
    return M


@settings(max_examples=60, deadline=None)
@given(tree=tree_edges(min_nodes=2, max_nodes=30), seed=st.integers(0, 10**6))
def test_solve_equals_the_dense_inverse_of_the_active_block(tree, seed: int) -> None:
    edges, _ = tree  # min_nodes=2: at least one edge
    tax = Taxonomy(edges)
    rng = np.random.default_rng(seed)
    M = _pattern_matrix(tax, rng, rng.uniform(0.2, 1.0))
    active = rng.random(tax.n_nodes) < 0.8
    active[0] = bool(rng.random() < 0.3)
    f = AncestorFactor(M, tax, active)
    idx = np.flatnonzero(active)
    B = rng.normal(size=(tax.n_nodes, 3))
    ref = np.zeros_like(B)
    if len(idx):
        ref[idx] = np.linalg.solve(M[np.ix_(idx, idx)], B[idx])
    scale = max(1.0, np.abs(ref).max())
    np.testing.assert_allclose(f.solve(B), ref, atol=1e-10 * scale)
    np.testing.assert_allclose(f.solve(B[:, 0]), ref[:, 0], atol=1e-10 * scale)
    np.testing.assert_allclose(f._solve_rows_numpy(B), ref, atol=1e-10 * scale)
    z = np.empty(tax.n_nodes)
    ancestor_ldl._solve(*f.arrays(), np.ascontiguousarray(B[:, 1]), z)  # the Python form
    np.testing.assert_allclose(z, ref[:, 1], atol=1e-10 * scale)
    np.testing.assert_allclose(f.solve_rows(B.T), ref.T, atol=1e-10 * scale)
    # a right-hand side on a few nodes: only their blocks swept, the same numbers to the bit
    touched = rng.choice(tax.n_nodes, size=min(3, tax.n_nodes), replace=False).astype(np.int64)
    b = np.zeros(tax.n_nodes)
    b[touched] = rng.normal(size=len(touched))
    full, part = np.empty(tax.n_nodes), np.empty(tax.n_nodes)
    ancestor_ldl.SOLVE(*f.arrays(), b, full)
    for fn in (ancestor_ldl.SOLVE_TOUCHED, ancestor_ldl._solve_touched):
        fn(*f.arrays(), *f.blocks(), touched, len(touched), b, part)
        np.testing.assert_array_equal(part, full)
    # no fill: L's entries are active ancestor pairs
    depth_sum = int(sum(tax.depth[i] for i in idx))
    assert f.nnz <= depth_sum
    for c in range(tax.n_nodes):
        for a in f.idx[f.ptr[c] : f.ptr[c + 1]]:
            assert active[a] and active[c] and tax.ancestor_matrix[c, a] and a != c


def _tree() -> Taxonomy:
    return Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("a2", "x"), ("a2", "y"), ("b", "b1")]
    )


def test_transfer_and_orthognl_matrices_factor_without_fill() -> None:
    tax = _tree()
    active = np.arange(tax.n_nodes) > 0
    Q = transfer_matrix(tax, sparse=True)
    np.testing.assert_array_equal(Q.toarray(), transfer_matrix(tax))
    f = AncestorFactor(Q, tax, active)
    inner_edges = int(np.sum(tax.parent[1:] > 0))
    assert f.nnz == inner_edges  # a parent-child pattern stays one entry per edge
    K = orthogonal_K(tax, 0.3)
    fk = AncestorFactor(K, tax, active)
    assert fk.nnz == int(np.sum(ancestor_pairs(tax)) // 2)
    VT = np.random.default_rng(0).normal(size=(5, tax.n_nodes))
    metric = DualMetric.factored(f, active)
    dense = DualMetric.inverse(transfer_matrix(tax), active)
    np.testing.assert_allclose(metric.apply(VT), dense.apply(VT), atol=1e-13)
    np.testing.assert_allclose(metric.times(VT[0]), dense.P @ VT[0], atol=1e-13)
    assert metric.P.size == 0


def test_matrices_it_cannot_factor_are_refused() -> None:
    tax = _tree()
    active = np.ones(tax.n_nodes, dtype=bool)
    M = np.eye(tax.n_nodes)
    a1, a2 = tax.index(["a1", "a2"])
    M[a1, a2] = M[a2, a1] = 0.1  # siblings: not an ancestor pair
    with pytest.raises(ParameterError, match="outside the taxonomy's ancestor pairs"):
        AncestorFactor(M, tax, active)
    M = np.eye(tax.n_nodes)
    a = tax.index(["a"])[0]
    M[a, a1] = M[a1, a] = 2.0  # not positive definite
    with pytest.raises(ParameterError, match="not positive definite"):
        AncestorFactor(M, tax, active)
    with pytest.raises(ParameterError, match="positive definite"):
        Quadratic(M, active, taxonomy=tax)


def test_sparse_quadratic_equals_the_dense_one() -> None:
    tax = _tree()
    active = np.arange(tax.n_nodes) > 0
    active[tax.index(["y"])[0]] = False
    rng = np.random.default_rng(1)
    W = rng.normal(size=(tax.n_nodes, 4)) * active[:, None]
    G = rng.normal(size=(tax.n_nodes, 4))
    sparse = Quadratic(transfer_matrix(tax, sparse=True), active, taxonomy=tax)
    dense = Quadratic(transfer_matrix(tax), active)
    assert sparse.value(W) == pytest.approx(dense.value(W), rel=1e-13)
    np.testing.assert_allclose(sparse.subgradient(W), dense.subgradient(W), atol=1e-13)
    np.testing.assert_allclose(sparse.psi_solve(G), dense.psi_solve(G), atol=1e-12)
    VT = rng.normal(size=(3, tax.n_nodes)) * active
    np.testing.assert_allclose(
        sparse.dual_metric().apply(VT), dense.dual_metric().apply(VT), atol=1e-12
    )


def test_transfer_metric_at_2000_leaves_holds_no_nodes_squared_array() -> None:
    """TRANSFER's regularizer and dual metric at 2,000 leaves (2,041 nodes) allocate O(m
    depth): a dense (n_nodes, n_nodes) array alone would be 33 MB."""
    edges = [("root", f"s{i}") for i in range(40)]
    edges += [(f"s{i}", f"s{i}.{j}") for i in range(40) for j in range(50)]
    tax = Taxonomy(edges)
    active = np.arange(tax.n_nodes) > 0
    _ = tax.ancestor_matrix  # cached by the taxonomy, built before the count
    tracemalloc.start()
    reg = Quadratic(transfer_matrix(tax, sparse=True), active, taxonomy=tax)
    metric = reg.dual_metric()
    metric.times(np.ones(tax.n_nodes))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    dense_bytes = 8 * tax.n_nodes**2
    assert peak < dense_bytes / 20, (peak, dense_bytes)


# ---------------------------------------------------------------------- ORTHOGNL, factored
def _deep_tree() -> Taxonomy:
    edges = [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("a2", "x"), ("a2", "y")]
    edges += [("b", "b1"), ("b1", "b11"), ("b1", "b12"), ("b12", "z")]
    return Taxonomy(edges)


def test_orthogonal_regularizer_equals_its_dense_definition() -> None:
    """Value and Theorem 4's subgradient summed over K's pairs equal the dense formulas."""
    tax = _deep_tree()
    active = np.arange(tax.n_nodes) > 0
    K = orthogonal_K(tax, 0.8 * max_admissible_alpha(tax))
    reg = Orthogonal(orthogonal_K(tax, 0.8 * max_admissible_alpha(tax), sparse=True), active)
    rng = np.random.default_rng(3)
    for _ in range(10):
        W = rng.normal(size=(tax.n_nodes, 5)) * active[:, None]
        M = W @ W.T
        assert reg.value(W) == pytest.approx(0.5 * np.sum(K * np.abs(M)), rel=1e-13)
        Ks = np.diag(np.diag(K)) + (K - np.diag(np.diag(K))) * np.sign(M)
        np.testing.assert_allclose(reg.subgradient(W), Ks @ W, atol=1e-12)
        om, G = reg.remainder(W)
        assert om == pytest.approx(reg.value(W) - reg.psi_value(W), rel=1e-12)
        np.testing.assert_allclose(G, Ks @ W - reg.psi_diag[:, None] * W, atol=1e-12)


def test_factored_sigma_step_equals_the_dense_one() -> None:
    """The sign relaxation on the ancestor pairs through the factor of K_sigma reaches the
    dense form's dual value and sigma, and applies the same metric afterwards."""
    tax = _deep_tree()
    active = np.arange(tax.n_nodes) > 0
    alpha = 0.7 * max_admissible_alpha(tax)
    Ks = orthogonal_K(tax, alpha, sparse=True)
    fact = Orthogonal(Ks, active, taxonomy=tax).dual_metric()
    dense = Orthogonal(Ks.toarray(), active).dual_metric()
    assert fact.pairs is not None and dense.pairs is None
    assert fact.P.size == 0 and fact.pdiag is not None  # diagonal until sigma moves
    rng = np.random.default_rng(5)
    V = rng.normal(size=(tax.n_nodes, 7)) * active[:, None]
    VT = np.ascontiguousarray(V.T)
    np.testing.assert_allclose(fact.apply(VT), dense.apply(VT), atol=1e-13)
    for metric in (fact, dense):
        metric.sigma_step(V, max_steps=500, rtol=1e-15)
    assert fact.factor is not None and fact.pdiag is None
    iu, ju, _ = fact.pairs
    np.testing.assert_allclose(fact.sigma, dense.sigma[iu, ju], atol=1e-6)
    Wf, Wd = fact.apply(VT), dense.apply(VT)
    assert np.sum(VT * Wf) == pytest.approx(np.sum(VT * Wd), rel=1e-9)
    np.testing.assert_allclose(Wf, Wd, atol=1e-5 * np.abs(Wd).max())
    np.testing.assert_allclose(fact.times(V[:, 0]), Wf[0], atol=1e-12)


def test_sparse_eigenvalues_equal_the_dense_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above DENSE_EIG_MAX rows: max_admissible_alpha by Lanczos, lambda_min(Kbar) by
    shift-invert through the factor (and by plain Lanczos without a taxonomy), and the
    positive-definiteness verdict by the factor's pivots, as the dense eigendecomposition."""
    from hierlab.core import regularizers

    tax = _deep_tree()
    amax = regularizers.max_admissible_alpha(tax)
    lams = {a: regularizers.smallest_comparison_eigenvalue(tax, a) for a in (0.3, 0.9 * amax)}
    over = regularizers.smallest_comparison_eigenvalue(tax, 1.2 * amax)
    Kn = orthogonal_K(tax, 0.5)[1:, 1:]
    plain = regularizers.smallest_comparison_eigenvalue(Kn)
    monkeypatch.setattr(regularizers, "DENSE_EIG_MAX", 0)
    assert regularizers.max_admissible_alpha(tax) == pytest.approx(amax, rel=1e-10)
    for a, lam in lams.items():
        assert regularizers.smallest_comparison_eigenvalue(tax, a) == pytest.approx(lam, rel=1e-8)
    assert over < 0 and regularizers.smallest_comparison_eigenvalue(tax, 1.2 * amax) <= 0
    assert regularizers.smallest_comparison_eigenvalue(Kn) == pytest.approx(plain, rel=1e-6)
    with pytest.raises(ParameterError, match="largest admissible alpha"):
        regularizers.check_orthogonal_K(orthogonal_K(tax, 1.2 * amax, sparse=True), tax, 1.2 * amax)


def test_orthognl_metric_at_2000_leaves_holds_no_nodes_squared_array() -> None:
    """ORTHOGNL's K, regularizer, dual metric and one sign-relaxation step at 2,000 leaves
    (2,041 nodes) allocate O(m depth + m d), not the 33 MB of one (n_nodes, n_nodes) array."""
    edges = [("root", f"s{i}") for i in range(40)]
    edges += [(f"s{i}", f"s{i}.{j}") for i in range(40) for j in range(50)]
    tax = Taxonomy(edges)
    active = np.arange(tax.n_nodes) > 0
    _ = tax.ancestor_matrix, tax.subtree_size, tax.depth  # cached, built before the count
    V = np.random.default_rng(0).normal(size=(tax.n_nodes, 8)) * active[:, None]
    tracemalloc.start()
    K = orthogonal_K(tax, 0.5, sparse=True)
    reg = Orthogonal(K, active, lambda_min=0.1, taxonomy=tax)
    metric = reg.dual_metric()
    metric.sigma_step(V, max_steps=5)
    metric.apply(np.ascontiguousarray(V.T))
    reg.value(V)
    reg.subgradient(V)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert metric.factor is not None
    dense_bytes = 8 * tax.n_nodes**2
    assert peak < dense_bytes / 10, (peak, dense_bytes)


def test_the_taxonomys_cached_ancestor_matrix_is_left_as_it_was() -> None:
    """The sparse builders copy the taxonomy's cached ancestor matrix before they edit it."""
    from hierlab.core.losses import DeltaRows

    tax = _deep_tree()
    A = tax.ancestor_matrix
    before = A.toarray().copy()
    active = np.arange(tax.n_nodes) > 0
    ancestor_pairs(tax, sparse=True)
    AncestorFactor(orthogonal_K(tax, 0.2, sparse=True), tax, active)
    DeltaRows.of("hamming", tax, tax.leaves)
    assert tax.ancestor_matrix is A
    np.testing.assert_array_equal(A.toarray(), before)
