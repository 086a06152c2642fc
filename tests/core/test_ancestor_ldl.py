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
    Quadratic,
    ancestor_pairs,
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
