"""The flat models' implicit labels in BCFW (hierlab.solvers.bcfw_flat) against the explicit tables.

- ``Delta`` formed on the fly equals :func:`hierlab.core.losses.delta` for every pair of nodes of
  random trees (zero-one, half and plain Hamming, square root).
- The implicit pass takes the steps of the table pass: the same iterates, bounds and dual
  variables (to 1e-10, in practice bit for bit) for FLATMULT and TREELOSS, dense and CSR input,
  the compiled and the numpy pass, with and without internal-node training labels.
- Its memory does not grow with the square of the number of classes (tracemalloc, no timing).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.losses import delta as label_loss
from hierlab.core.solver import solve
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.orthogonal.estimators import FlatMulticlassClassifier, TreeLossClassifier
from hierlab.methods.orthogonal.model import FlatModel
from hierlab.solvers.bcfw import BCFW, _Dual
from hierlab.solvers.bcfw_flat import FlatBlocks

FLAT = {"flatmult": FlatMulticlassClassifier, "treeloss": TreeLossClassifier}


def random_tree(n_nodes: int, seed: int) -> Taxonomy:
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n_nodes)]
    return Taxonomy.from_parent_array(parent)


def flat_objective(method: str, seed: int, kind: str, internal: bool, n_nodes: int = 25):
    rng = np.random.default_rng(seed)
    tax = random_tree(n_nodes, seed)
    n, d = 60, 6
    proto = rng.normal(size=(tax.n_nodes, d))
    y = rng.choice(tax.leaves, size=n)
    if internal:
        y[:3] = rng.choice(tax.internal_nodes[1:], size=3)
    X = proto[y] + 0.7 * rng.normal(size=(n, d))
    X[np.abs(X) < 0.4] = 0.0  # some zeros for the CSR form
    est = FLAT[method](taxonomy=tax, C=2.0)
    est.taxonomy_ = tax
    return est._objective(sp.csr_matrix(X) if kind == "csr" else X, y)


@pytest.mark.parametrize("loss", ["zero_one", "half_hamming", "hamming", "sqrt_hamming"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pair_delta_equals_label_loss(loss: str, seed: int) -> None:
    tax = random_tree(30, seed)
    model = FlatModel(tax, loss, candidates="nodes", path_sum=loss != "zero_one")
    ys, cs = np.meshgrid(np.arange(tax.n_nodes), np.arange(tax.n_nodes), indexing="ij")
    want = label_loss(loss, tax, np.arange(tax.n_nodes), np.arange(tax.n_nodes))
    np.testing.assert_array_equal(model.pair_delta(ys.ravel(), cs.ravel()), want.ravel())


def _run(obj, monkeypatch, implicit: bool, use_jit: bool, epochs: int = 12):
    with monkeypatch.context() as mp:
        if not implicit:
            mp.setattr(FlatModel, "implicit_blocks", lambda self, y, C: None)
        solver = BCFW(max_iter=epochs, use_jit=use_jit)
        res = solve(solver, obj, warn=False, tol=0.0, rtol=0.0)
        assert (solver._dual.flat is not None) == implicit
        return res, solver.alpha_flat_.copy(), solver.alpha_.copy()


@pytest.mark.parametrize("method", list(FLAT))
@pytest.mark.parametrize("kind", ["dense", "csr"])
@pytest.mark.parametrize("internal", [False, True])
@pytest.mark.parametrize("use_jit", [True, False])
def test_implicit_pass_equals_table_pass(
    method: str, kind: str, internal: bool, use_jit: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    obj = flat_objective(method, 3 + internal, kind, internal)
    a, alpha_a, pad_a = _run(obj, monkeypatch, True, use_jit)
    b, alpha_b, pad_b = _run(obj, monkeypatch, False, use_jit)
    assert a.history[-1].extra["steps"] > 0
    for sa, sb in zip(a.history, b.history, strict=True):
        assert sa.upper == pytest.approx(sb.upper, rel=1e-10, abs=1e-12)
        assert sa.lower == pytest.approx(sb.lower, rel=1e-10, abs=1e-12)
        assert sa.extra["steps"] == sb.extra["steps"]
    np.testing.assert_allclose(alpha_a, alpha_b, rtol=0, atol=1e-10)
    np.testing.assert_allclose(pad_a, pad_b, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", list(FLAT))
def test_implicit_layout_and_warm_start(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The implicit blocks have the table layout (labels, order, losses), and a warm start
    from the table solver's dual point gives the same run."""
    obj = flat_objective(method, 7, "csr", True)
    flat = obj.model.implicit_blocks(obj.y, obj.C)
    assert isinstance(flat, FlatBlocks)
    blocks = obj.model.dual_blocks(obj.y)
    for k in range(len(obj.y)):
        U, L = blocks.tables[blocks.block_table[k]]
        assert flat.rows[k] == len(L)
        r = np.arange(flat.rows[k] - 1)
        c = flat.candidate(np.full(len(r), k), r)
        d = obj.model.pair_delta(np.full(len(r), obj.y[k]), c)
        np.testing.assert_array_equal(d, L[:-1])
        M = obj.model.A if obj.model.path_sum else sp.identity(obj.shape[0], format="csr")
        want = sp.diags(d) @ (M[np.full(len(r), obj.y[k])] - M[c])
        assert abs(sp.csr_matrix(U[:-1]) - want).max() == 0
    _, alpha_b, _ = _run(obj, monkeypatch, False, True, epochs=4)
    warm = []
    for implicit in (True, False):
        with monkeypatch.context() as mp:
            if not implicit:
                mp.setattr(FlatModel, "implicit_blocks", lambda self, y, C: None)
            solver = BCFW(max_iter=3, dual_init=alpha_b)
            warm.append(solve(solver, obj, warn=False, tol=0.0, rtol=0.0))
    assert [s.lower for s in warm[0].history] == pytest.approx(
        [s.lower for s in warm[1].history], rel=1e-10
    )
    assert isinstance(_Dual(obj).flat, FlatBlocks)


def _solve_peak(method: str, n_classes: int, n_samples: int) -> float:
    """tracemalloc peak (bytes) of one BCFW epoch (with its certificate) on a flat model."""
    import tracemalloc

    from hierlab.datasets.text import make_hierarchical_text

    tr, _ = make_hierarchical_text(
        n_samples=n_samples, n_classes=n_classes, n_features=100, depth=2, doc_length=8,
        test_size=0.01, random_state=0,
    )  # fmt: skip
    est = FLAT[method](taxonomy=tr.taxonomy)
    est.taxonomy_ = tr.taxonomy
    obj = est._objective(sp.csr_matrix(tr.X), tr.taxonomy.index(list(tr.y)))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        solve(BCFW(max_iter=1), obj, warn=False)
        return float(tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", list(FLAT))
def test_memory_linear_in_the_classes(method: str) -> None:
    """At a fixed number of examples, doubling the classes doubles the solver's peak (the dual
    variables, the scores of a chunk of examples, ``W``): no per-label tables over all
    candidates, which made it grow four-fold (explicit tables: ratios 3.6 to 4)."""
    peaks = [_solve_peak(method, L, 1000) for L in (500, 1000, 2000)]
    ratios = [b / a for a, b in zip(peaks[:-1], peaks[1:], strict=True)]
    assert all(r < 2.6 for r in ratios), (peaks, ratios)
