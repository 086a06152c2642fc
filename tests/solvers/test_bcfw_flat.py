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
from hierlab.solvers import bcfw_flat
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


def _run(obj, monkeypatch, implicit: bool, use_jit: bool, epochs: int = 12, chain: bool = False):
    """A BCFW run with the implicit blocks or the tables; ``chain=False`` keeps the compiled
    scan on the merged rows (the tables' arithmetic; the chains' scan is tested apart)."""
    with monkeypatch.context() as mp:
        if not chain:
            mp.setattr(bcfw_flat, "chain_parents", lambda M: None)
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
            mp.setattr(bcfw_flat, "chain_parents", lambda M: None)  # the tables' arithmetic
            if not implicit:
                mp.setattr(FlatModel, "implicit_blocks", lambda self, y, C: None)
            solver = BCFW(max_iter=3, dual_init=alpha_b)
            warm.append(solve(solver, obj, warn=False, tol=0.0, rtol=0.0))
    assert [s.lower for s in warm[0].history] == pytest.approx(
        [s.lower for s in warm[1].history], rel=1e-10
    )
    assert isinstance(_Dual(obj).flat, FlatBlocks)


def test_most_violated_equals_brute_force() -> None:
    """The in-place loss-augmented inference against loops over every candidate."""
    rng = np.random.default_rng(5)
    for seed in range(4):
        tax = random_tree(30, seed)
        for loss, cands, path_sum in (
            ("zero_one", "leaves", False),
            ("half_hamming", "nodes", True),
        ):
            model = FlatModel(tax, loss, cands, path_sum)
            y = rng.choice(tax.leaves, 40)
            y[:4] = rng.choice(tax.internal_nodes[1:], 4)
            cand = model.fit_candidates(y)
            S = rng.normal(size=(40, tax.n_nodes))
            val, a, dlt = model._most_violated(S, y)
            for k in range(40):
                d = [float(label_loss(loss, tax, [y[k]], [c])[0, 0]) for c in cand]
                h = [d[j] * max(0.0, 1.0 - S[k, y[k]] + S[k, c]) for j, c in enumerate(cand)]
                assert val[k] == max(h) and a[k] == int(np.argmax(h)) and dlt[k] == d[a[k]]


def _solve_peak(method: str, n_classes: int) -> tuple[float, int]:
    """tracemalloc peak (bytes) of one BCFW epoch (with its certificate) on a flat model with
    two examples per class, and the number of nodes."""
    import tracemalloc

    from hierlab.datasets.text import make_hierarchical_text

    tr, _ = make_hierarchical_text(
        n_samples=2 * n_classes, n_classes=n_classes, n_features=100, depth=2, doc_length=8,
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
        return float(tracemalloc.get_traced_memory()[1] - base), tr.taxonomy.n_nodes
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", list(FLAT))
def test_memory_not_quadratic_in_the_classes(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With as many distinct labels as classes (two examples per class), one epoch's peak at
    2,000 leaves stays below one dense (nodes x nodes) float64 array and grows about linearly
    from 1,000 leaves. The objective's loss is evaluated in chunks of examples
    (:data:`hierlab.core.objective.CHUNK` numbers, a constant); it is set small here so that
    the solver's own memory shows. The explicit tables (one per label over all candidates)
    and the dense dual variables (examples x candidates) gave 101 and 404 MB (FLATMULT),
    158 and 630 MB (TREELOSS): ratio 4."""
    import hierlab.core.objective as objective

    monkeypatch.setattr(objective, "CHUNK", 1 << 16)
    _solve_peak(method, 100)  # loads the compiled kernel outside the measured runs
    (p1, _), (p2, m) = _solve_peak(method, 1000), _solve_peak(method, 2000)
    assert p2 < 8.0 * m * m, (p1, p2, m)
    assert p2 / p1 < 2.6, (p1, p2)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_chain_parents_are_the_tree_parents(seed: int) -> None:
    """The ancestor matrix of a tree is a chain matrix whose parents are the tree's; the
    identity is one with no parents; a matrix that is not (a DAG's ancestors, a row missing
    its own node, a row that is not its parent's plus itself) gives None."""
    from hierlab.solvers.bcfw_flat import chain_parents

    tax = random_tree(40, seed)
    A = sp.csr_matrix(tax.ancestor_matrix)
    A.sort_indices()
    want = np.array([-1] + [int(tax.parents(v)[0]) for v in range(1, tax.n_nodes)])
    np.testing.assert_array_equal(chain_parents(A), want)
    np.testing.assert_array_equal(chain_parents(sp.identity(7, format="csr")), np.full(7, -1))
    dag = Taxonomy.from_edges([("r", "a"), ("r", "b"), ("a", "x"), ("b", "x")], root="r")
    D = sp.csr_matrix(dag.ancestor_matrix)
    D.sort_indices()
    assert chain_parents(D) is None
    B = A.tolil()
    leaf = int(tax.leaves[-1])
    B[leaf, leaf] = 0  # a row without its own node
    assert chain_parents(sp.csr_matrix(B)) is None
    B = A.tolil()
    grand = [v for v in range(1, tax.n_nodes) if len(A[v].indices) >= 3]
    v = grand[0]
    B[v, int(A[v].indices[-2])] = 0  # a row skipping its parent
    B = sp.csr_matrix(B)
    B.eliminate_zeros()
    assert chain_parents(B) is None


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_chain_scan_equals_merged_rows(seed: int) -> None:
    """The O(m) scan over a tree's ancestor chains (``Delta`` per visit, path sums per step)
    against the explicit table ``h = L - U S`` of every label of every block (TREELOSS, with
    internal-node labels), for random scores ``S``, in numpy and compiled; the label it returns
    is the first maximiser of its own values, and those are the table's to rounding."""
    obj = flat_objective("treeloss", seed, "csr", True)
    fb = obj.model.implicit_blocks(obj.y, obj.C)
    assert fb.chain
    fns = [(bcfw_flat._chain_delta, bcfw_flat._chain_scan)]
    if bcfw_flat._CHAIN_SCAN is not None:  # numba installed
        fns.append((bcfw_flat._CHAIN_DELTA, bcfw_flat._CHAIN_SCAN))
    for delta_fn, scan_fn in fns:
        _check_chain_scan(obj, fb, seed, delta_fn, scan_fn)


def _check_chain_scan(obj, fb, seed, delta_fn, scan_fn) -> None:
    rng = np.random.default_rng(seed)
    m = fb.M.shape[0]
    on_y, common = np.zeros(m, dtype=bool), np.zeros(m, dtype=np.int64)
    path, dvec, hbuf = np.zeros(m), np.zeros(len(fb.cand) + 1), np.zeros(len(fb.cand) + 1)
    for k in range(len(obj.y)):
        S = rng.normal(size=m)
        U, L = fb.scaled_table(int(fb.y[k]))
        want = L - U @ S
        rows = int(fb.rows[k])
        delta_fn(fb.y[k], fb.pos[k], rows, fb.cand, fb.anc.indptr, fb.anc.indices, fb.a_par,
                 fb.a_len, fb.dtab, on_y, common, dvec)  # fmt: skip
        np.testing.assert_array_equal(dvec[: rows - 1] * fb.C, L[:-1])
        assert not on_y.any()
        hmax, ia = scan_fn(fb.y[k], fb.pos[k], rows, fb.cand, fb.m_par, S, dvec, dvec, fb.C,
                           S[:0], False, path, hbuf)  # fmt: skip
        np.testing.assert_allclose(hbuf[:rows], want, rtol=0, atol=1e-12)
        assert hmax == hbuf[:rows].max() and ia == int(np.argmax(hbuf[:rows]))


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_chain_pass_certifies_the_tables_optimum(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled TREELOSS pass with the chains' scan takes other steps than the tables'
    where labels tie in exact arithmetic (rounding orders them), so the two runs are compared
    by their certificates: every lower bound of one run stays below every upper bound of the
    other (both bracket the same optimum J*), and run to a 1e-3 relative gap their ``W`` are
    as close as strong convexity allows (J is 1-strongly convex, ``1/2 ||U||^2``: ``||W -
    W*||^2 <= 2 (upper - lower)`` for each)."""
    obj = flat_objective("treeloss", 11, kind, True)
    runs = []
    for chain, implicit in ((True, True), (False, False)):
        with monkeypatch.context() as mp:
            if not chain:
                mp.setattr(bcfw_flat, "chain_parents", lambda M: None)
            if not implicit:
                mp.setattr(FlatModel, "implicit_blocks", lambda self, y, C: None)
            solver = BCFW(max_iter=3000, use_jit=True)
            res = solve(solver, obj, warn=False, tol=0.0, rtol=1e-3)
            assert (solver._dual.flat is not None) == implicit
            assert (solver._dual.flat is not None and solver._dual.flat.chain) == chain
            runs.append(res)
    a, b = runs
    gaps = []
    for x, z in ((a, b), (b, a)):
        assert max(s.lower for s in x.history) <= min(s.upper for s in z.history) + 1e-9
        last = x.history[-1]
        assert last.upper - last.lower <= 1e-3 * last.upper
        gaps.append(last.upper - last.lower)
    dist = float(np.linalg.norm(a.coef - b.coef))
    assert dist <= np.sqrt(2 * gaps[0]) + np.sqrt(2 * gaps[1]), (dist, gaps)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("loss", ["half_hamming", "hamming", "sqrt_hamming"])
def test_compiled_scores_and_inference_equal_numpy(seed: int, loss: str) -> None:
    """The model's compiled path sums and loss-augmented inference on a tree (ancestor chains)
    give the numbers of its numpy forms to the bit: scores ``(A Z^T)^T`` (the CSR product's
    sums, root first), and value, maximiser and ``Delta`` of the slack-rescaled hinge, with
    internal-node labels; FLATMULT's model with a tree loss (no path sums) too."""
    rng = np.random.default_rng(seed)
    tax = random_tree(60, seed)
    X = sp.random(50, 9, density=0.4, random_state=seed, format="csr")
    for path_sum, cands in ((True, "nodes"), (False, "leaves")):
        fast = FlatModel(tax, loss, candidates=cands, path_sum=path_sum)
        slow = FlatModel(tax, loss, candidates=cands, path_sum=path_sum)
        slow._chain = None  # the numpy forms
        assert fast._chain is not None
        y = rng.choice(tax.leaves, 50)
        y[:5] = rng.choice(tax.internal_nodes[1:], 5)
        fast.fit_candidates(y)
        slow.fit_candidates(y)
        W = rng.normal(size=(tax.n_nodes, 9))
        S_fast, S_slow = fast.scores(X, W), slow.scores(X, W)
        np.testing.assert_array_equal(S_fast, S_slow)
        for got, want in zip(
            fast._most_violated(S_slow, y), slow._most_violated(S_slow, y), strict=True
        ):
            np.testing.assert_array_equal(got, want)
