"""Seed 003 (Normalized Hierarchical SVM): inference, alpha rules, Algorithm 1, estimators.

Every fast routine is checked against an exact oracle: enumeration of the label space for the
dynamic programme and the LP/IP, ``scipy.optimize`` for the alpha problems, eq. (20) and the
primal objective; Theorem 1 (invariance to node duplication) is checked on data.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from hierlab import Taxonomy
from hierlab.core.exceptions import ParameterError, TaxonomyError
from hierlab.core.registry import get_method, make_estimator
from hierlab.datasets.nhsvm import make_nhsvm_synthetic
from hierlab.methods.nhsvm.estimators import (
    HSVMClassifier,
    NHSVMClassifier,
    SharedSVMClassifier,
    is_leaf_terminated,
)
from hierlab.methods.nhsvm.model import (
    HierarchicalHinge,
    _alpha_eq6,
    dag_max_label,
    leaf_path_matrix,
    node_max_marginals,
    normalization_alpha,
    tree_max_label,
)
from hierlab.methods.nhsvm.shared_alpha import shared_alpha, shared_norm_objective

# ------------------------------------------------------------------------------------ helpers


def random_tree(rng: np.random.Generator, n: int) -> Taxonomy:
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    return Taxonomy.from_parent_array(parent)


def random_dag(rng: np.random.Generator, n: int, extra: int) -> Taxonomy:
    edges = {(str(int(rng.integers(0, i))), str(i)) for i in range(1, n)}
    for _ in range(extra):
        c = int(rng.integers(2, n))
        p = int(rng.integers(1, c))
        edges.add((str(p), str(c)))
    return Taxonomy(sorted(edges), nodes=[str(i) for i in range(n)])


def feasible_sets(tax: Taxonomy, leaf_terminated: bool) -> list[np.ndarray]:
    """Every label set of the space (root included), by enumeration."""
    M = tax.n_nodes
    out = []
    for bits in itertools.product([0, 1], repeat=M - 1):
        z = np.array((1, *bits), dtype=bool)
        ok = all(z[p] for c in range(1, M) if z[c] for p in tax.parents(c))
        if ok and leaf_terminated:
            ok = all(
                z[tax.children(n)].any() for n in range(M) if z[n] and not tax.is_leaf[n]
            ) and bool(z[tax.leaves].any())
        if ok:
            out.append(z)
    return out


def brute_max(R: np.ndarray, sets: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    Zs = np.array(sets, dtype=np.float64)  # (K, M)
    vals = R @ Zs.T  # (b, K)
    k = np.argmax(vals, axis=1)
    return Zs[k].astype(bool), vals.max(axis=1)


# ------------------------------------------------------------------------ inference (Sec. 7.1)


@pytest.mark.parametrize("leaf_terminated", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_tree_dp_equals_enumeration(seed: int, leaf_terminated: bool) -> None:
    rng = np.random.default_rng(seed)
    tax = random_tree(rng, int(rng.integers(4, 10)))
    R = rng.normal(size=(40, tax.n_nodes))
    Z, val, _, _ = tree_max_label(R, tax, leaf_terminated)
    Zb, vb = brute_max(R, feasible_sets(tax, leaf_terminated))
    np.testing.assert_allclose(val, vb, atol=1e-12)
    np.testing.assert_array_equal(Z, Zb)  # continuous rewards: the argmax is unique


@pytest.mark.parametrize("leaf_terminated", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_dag_lp_ip_equals_enumeration(seed: int, leaf_terminated: bool) -> None:
    rng = np.random.default_rng(100 + seed)
    tax = random_dag(rng, int(rng.integers(5, 10)), extra=3)
    assert not tax.is_tree
    R = rng.normal(size=(25, tax.n_nodes))
    Z, val, stats = dag_max_label(R, tax, leaf_terminated, batch=7, return_stats=True)
    Zb, vb = brute_max(R, feasible_sets(tax, leaf_terminated))
    np.testing.assert_allclose(val, vb, atol=1e-9)
    np.testing.assert_array_equal(Z, Zb)
    if not leaf_terminated:
        assert stats["ip"] == 0  # closure constraints are totally unimodular: LP exact


@pytest.mark.parametrize("seed", range(4))
def test_closure_min_cut_equals_the_lp(seed: int) -> None:
    """The minimum-cut closure equals the (totally unimodular) LP on larger random DAGs."""
    from hierlab.methods.nhsvm.model import closure_cut, closure_lp

    rng = np.random.default_rng(200 + seed)
    tax = random_dag(rng, 60, extra=25)
    R = rng.normal(size=(45, tax.n_nodes)) - 0.3
    Z = closure_cut(R, tax, batch=16)
    Zl = closure_lp(R, tax, batch=16)
    np.testing.assert_array_equal(Z, Zl)
    assert Z[:, 0].all()
    for c in range(1, tax.n_nodes):  # closed under parents
        for p in tax.parents(c):
            assert np.all(Z[:, int(p)] | ~Z[:, c])
    R0 = np.full((3, tax.n_nodes), -1.0)  # nothing pays: the root alone
    np.testing.assert_array_equal(
        closure_cut(R0, tax), np.eye(1, tax.n_nodes, dtype=bool)[[0, 0, 0]]
    )


def fractional_dag() -> Taxonomy:
    """A DAG where the LP relaxation of eq. (19) is fractional for some rewards."""
    return Taxonomy(
        [
            ("r", "a"),
            ("r", "b"),
            ("r", "c"),
            ("a", "x"),
            ("a", "y"),
            ("b", "y"),
            ("b", "z"),
            ("c", "z"),
            ("c", "x"),
        ]
    )


def test_dag_lp_fractional_falls_back_to_ip() -> None:
    tax = fractional_dag()
    rng = np.random.default_rng(7)
    R = rng.normal(size=(400, tax.n_nodes)) * 2.0
    Z, val, stats = dag_max_label(R, tax, True, batch=50, return_stats=True)
    Zb, vb = brute_max(R, feasible_sets(tax, True))
    np.testing.assert_allclose(val, vb, atol=1e-9)
    np.testing.assert_array_equal(Z, Zb)
    assert stats["ip"] > 0  # some rows needed the integer program


@pytest.mark.parametrize("leaf_terminated", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_node_max_marginals_equal_enumeration(seed: int, leaf_terminated: bool) -> None:
    rng = np.random.default_rng(200 + seed)
    tax = random_tree(rng, 8)
    R = rng.normal(size=(15, tax.n_nodes))
    S = node_max_marginals(R, tax, leaf_terminated)
    sets = np.array(feasible_sets(tax, leaf_terminated))
    vals = R @ sets.T.astype(float)
    best = vals.max(axis=1)
    for n in range(1, tax.n_nodes):
        with_n = np.where(sets[:, n][None, :], vals, -np.inf).max(axis=1)
        if leaf_terminated:
            np.testing.assert_allclose(S[:, n], with_n - best, atol=1e-10)
        else:
            without = np.where(~sets[:, n][None, :], vals, -np.inf).max(axis=1)
            np.testing.assert_allclose(S[:, n], with_n - without, atol=1e-10)


# ------------------------------------------------------------------------ alpha (eq. 6, 7, 8)


def _slsqp_alpha(P: np.ndarray, rho: float, T: float) -> np.ndarray:
    m = P.shape[1]
    cons = [{"type": "ineq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P}]
    if T > 1:
        cons.append({"type": "ineq", "fun": lambda a: T - P @ a, "jac": lambda a: -P})
    else:
        cons = [{"type": "eq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P}]
    res = minimize(
        lambda a: np.sum(np.abs(a) ** rho),
        np.full(m, 0.5 / P.sum(axis=1).max()),
        jac=lambda a: rho * np.abs(a) ** (rho - 1) * np.sign(a),
        bounds=[(0, None)] * m,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 2000},
    )
    assert res.success, res.message
    return res.x


@pytest.mark.parametrize("rho", [2.0, 1.5])
@pytest.mark.parametrize("seed", range(4))
def test_alpha_eq6_tree_constraints_and_generic_solver(seed: int, rho: float) -> None:
    rng = np.random.default_rng(300 + seed)
    tax = random_tree(rng, int(rng.integers(5, 12)))
    a = normalization_alpha(tax, "eq6", rho=rho)
    P = leaf_path_matrix(tax).toarray()
    assert a[0] == 0.0 and np.all(a >= 0)
    np.testing.assert_allclose(P @ a[1:], 1.0, atol=1e-6)
    ref = _slsqp_alpha(P, rho, 1.0)
    np.testing.assert_allclose(a[1:], ref, atol=2e-4)


@pytest.mark.parametrize("rho", [1.5, 2.0, 3.0])
def test_alpha_eq6_tree_closed_form_equals_the_dual_solve(rho: float) -> None:
    """The O(m) recursion on trees equals the generic dual solve of eq. (6) (L-BFGS-B on its
    smooth dual, least-norm polish at rho = 2), an independent route, on 40 random trees;
    paths sum to 1 to round-off; no alpha below a node exceeds the budget left to it."""
    rng = np.random.default_rng(17)
    for _ in range(40):
        tax = random_tree(rng, int(rng.integers(3, 40)))
        a = normalization_alpha(tax, "eq6", rho=rho)
        P = leaf_path_matrix(tax)
        tol = 1e-9 if rho == 2.0 else 2e-5  # rho = 2: polished to a linear solve; else L-BFGS
        np.testing.assert_allclose(a[1:], _alpha_eq6(P, rho, 1.0), rtol=tol, atol=tol * 1e-2)
        np.testing.assert_allclose(P @ a[1:], 1.0, rtol=0, atol=1e-13)
        assert a[0] == 0.0 and np.all(a[1:] > 0)


def test_alpha_eq6_tree_allocates_no_leaves_by_nodes_matrix() -> None:
    """2,000 leaves: the closed form allocates less than a tenth of one dense (leaves x nodes)
    array (the dual solve's polish held one: 33 MB)."""
    import tracemalloc

    tax = Taxonomy.from_parent_array([-1] + [0] * 50 + [1 + i % 50 for i in range(2000)])
    normalization_alpha(tax)  # the taxonomy's cached arrays first
    tracemalloc.start()
    try:
        normalization_alpha(tax)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.1 * len(tax.leaves) * tax.n_nodes * 8


@pytest.mark.parametrize("seed", range(3))
def test_alpha_eq6_dag_relaxation_eq8(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    tax = random_dag(rng, 9, extra=4)
    a = normalization_alpha(tax, "eq6", rho=2.0, T=1.5)
    P = leaf_path_matrix(tax).toarray()
    s = P @ a[1:]
    assert np.all(s >= 1 - 1e-6) and np.all(s <= 1.5 + 1e-6) and np.all(a >= 0)
    ref = _slsqp_alpha(P, 2.0, 1.5)
    assert abs(np.sum(a[1:] ** 2) - np.sum(ref**2)) <= 1e-5 * max(1.0, np.sum(ref**2))


@pytest.mark.parametrize("seed", range(4))
def test_alpha_eq7_constraints_and_generic_solver(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    tax = random_tree(rng, int(rng.integers(5, 11)))
    a = normalization_alpha(tax, "eq7")
    P = leaf_path_matrix(tax).toarray()
    np.testing.assert_allclose(P @ a[1:], 1.0, atol=1e-8)
    assert np.all(a >= 0)
    for c in range(1, tax.n_nodes):  # directional constraints
        p = tax.parent[c]
        if p > 0:
            assert a[c] >= a[p] - 1e-9
    # generic solver: SLSQP on max t s.t. the same constraints
    m = tax.n_nodes - 1
    edges = [(tax.parent[c] - 1, c - 1) for c in range(1, tax.n_nodes) if tax.parent[c] > 0]
    cons = [
        {"type": "eq", "fun": lambda z: P @ z[:m] - 1.0},
        {"type": "ineq", "fun": lambda z: z[:m] - z[m]},
    ]
    if edges:
        cons.append({"type": "ineq", "fun": lambda z: np.array([z[c] - z[p] for p, c in edges])})
    z0 = np.concatenate([normalization_alpha(tax, "eq6")[1:], [0.0]])
    res = minimize(
        lambda z: -z[m],
        z0,
        bounds=[(0, None)] * m + [(None, None)],
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 1000},
    )
    assert res.success
    assert abs(a[1:].min() - res.x[m]) <= 1e-6


def test_alpha_rules_validate() -> None:
    tax = Taxonomy([("r", "a"), ("r", "b")])
    with pytest.raises(ParameterError, match="rho"):
        normalization_alpha(tax, "eq6", rho=1.0)
    with pytest.raises(ParameterError, match="alpha rule"):
        normalization_alpha(tax, "eq9")
    np.testing.assert_allclose(normalization_alpha(tax, "eq7"), [0, 1, 1])


# ------------------------------------------------------------------------ Algorithm 1, eq. (20)


def _eq20_numeric(sq: np.ndarray, tax: Taxonomy) -> np.ndarray:
    P = leaf_path_matrix(tax).toarray()
    m = tax.n_nodes - 1
    s = sq[1:]
    res = minimize(
        lambda a: np.sum(s / a),
        np.full(m, 1.0 / (tax.max_depth + 1)),
        jac=lambda a: -s / a**2,
        bounds=[(1e-9, 1.0)] * m,
        constraints=[{"type": "ineq", "fun": lambda a: 1.0 - P @ a, "jac": lambda a: -P}],
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 3000},
    )
    # SLSQP may stop with "positive directional derivative" at the optimum (round-off): the
    # caller compares objectives and weights, which fails if it stopped elsewhere
    assert np.all(P @ res.x <= 1 + 1e-8)
    return np.concatenate([[0.0], res.x])


@pytest.mark.parametrize("seed", range(6))
def test_algorithm1_alpha_equals_numerical_eq20(seed: int) -> None:
    rng = np.random.default_rng(600 + seed)
    tax = random_tree(rng, int(rng.integers(4, 10)))
    U = rng.normal(size=(tax.n_nodes, 3)) * rng.uniform(0.2, 2.0, size=(tax.n_nodes, 1))
    U[0] = 0.0  # the root is not a node of the model
    a = shared_alpha(U, tax)
    sq = np.einsum("ij,ij->i", U, U)
    ref = _eq20_numeric(sq, tax)
    P = leaf_path_matrix(tax).toarray()
    assert np.all(P @ a[1:] <= 1 + 1e-12) and np.all(a >= 0)
    ours, num = shared_norm_objective(U, a), float(np.sum(sq[1:] / ref[1:]))
    assert ours <= num * (1 + 1e-9)
    np.testing.assert_allclose(ours, num, rtol=1e-5)
    np.testing.assert_allclose(a, ref, atol=1e-3)


def test_algorithm1_rejects_dag() -> None:
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    with pytest.raises(TaxonomyError):
        shared_alpha(np.ones(4), tax)


# ------------------------------------------------------------------------ objective and solver


def _primal_qp(obj: HierarchicalHinge, X: np.ndarray) -> float:
    """Exact optimum of the NHSVM primal (slack form) with SLSQP, for a tiny problem."""
    M, d = obj.coef_shape
    n = X.shape[0]
    leaves = obj.taxonomy.leaves
    C = obj.C.toarray()
    rows = []
    table = obj.delta_table()
    for i in range(n):
        for j, l in enumerate(leaves):
            diff = C[l] - C[obj.y[i]]
            delta = table[obj.label_index[i], j]
            if delta > 0:
                rows.append((i, np.outer(diff, X[i]).ravel(), delta))

    def f(z: np.ndarray) -> float:
        w, xi = z[: M * d], z[M * d :]
        return obj.lam * w @ w + xi.mean()

    def g(z: np.ndarray) -> np.ndarray:
        out = np.zeros_like(z)
        out[: M * d] = 2 * obj.lam * z[: M * d]
        out[M * d :] = 1.0 / n
        return out

    A = np.zeros((len(rows), M * d + n))
    b = np.zeros(len(rows))
    for k, (i, v, delta) in enumerate(rows):
        A[k, : M * d] = -v
        A[k, M * d + i] = 1.0
        b[k] = delta
    res = minimize(
        f,
        np.zeros(M * d + n),
        jac=g,
        method="SLSQP",
        bounds=[(None, None)] * (M * d) + [(0, None)] * n,
        constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return float(res.fun)


def test_pegasos_reaches_the_primal_optimum() -> None:
    rng = np.random.default_rng(11)
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    leaves = tax.leaves
    X = rng.normal(size=(30, 2))
    y = leaves[rng.integers(0, len(leaves), size=30)]
    est = NHSVMClassifier(
        taxonomy=tax, lam=0.05, epochs=300, batch_size=5, tol=1e-9, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, tax.names[y])
    alpha = normalization_alpha(tax)
    obj = HierarchicalHinge(X, y, tax, np.sqrt(alpha), 0.05, "normalized", alpha)
    opt = _primal_qp(obj, X)
    ours = obj.value(est.W_)
    assert opt <= ours + 1e-9
    assert ours <= opt * 1.01 + 1e-6
    assert np.all(np.diff(est.history_["upper"].to_numpy()) <= 1e-12)  # best-so-far


# ------------------------------------------------------------------------ Theorem 1


def _margins(
    cls: type, tax: Taxonomy, X: np.ndarray, y: np.ndarray, grid: np.ndarray
) -> np.ndarray:
    # HSVM as Theorem 1 states it: the Hamming loss of eq. (2) (the `paper` preset)
    kw = {"loss": "hamming"} if cls is HSVMClassifier else {}
    est = cls(taxonomy=tax, lam=0.02, epochs=60, batch_size=40, tol=1e-10, random_state=0, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    S = est.node_scores(grid)
    names = list(tax.names)
    a = names.index("a") if "a2" not in names else names.index("a2")
    return S[:, a] - S[:, names.index("b")]


def test_theorem1_duplicating_a_node_moves_hsvm_not_nhsvm() -> None:
    rng = np.random.default_rng(5)
    n = 200
    X = np.vstack([rng.normal([1.0, 0.5], 1.0, (n, 2)), rng.normal([-1.0, -0.5], 1.0, (n, 2))])
    X = np.hstack([X, np.ones((2 * n, 1))])  # a bias feature
    g1 = Taxonomy([("r", "a"), ("r", "b")])
    g2 = Taxonomy([("r", "a"), ("a", "a2"), ("r", "b")])  # a and a2 are duplicated nodes
    y1 = np.array(["a"] * n + ["b"] * n, dtype=object)
    y2 = np.array(["a2"] * n + ["b"] * n, dtype=object)
    grid = np.column_stack([rng.uniform(-3, 3, 300), rng.uniform(-3, 3, 300), np.ones(300)])
    nh1 = _margins(NHSVMClassifier, g1, X, y1, grid)
    nh2 = _margins(NHSVMClassifier, g2, X, y2, grid)
    hs1 = _margins(HSVMClassifier, g1, X, y1, grid)
    hs2 = _margins(HSVMClassifier, g2, X, y2, grid)
    nh_move = np.max(np.abs(nh1 - nh2)) / np.max(np.abs(nh1))
    hs_move = np.max(np.abs(hs1 - hs2)) / np.max(np.abs(hs1))
    print(f"relative move: NHSVM {nh_move:.4f}, HSVM {hs_move:.4f}")
    assert nh_move < 0.03
    assert hs_move > 0.15
    assert hs_move > 5 * nh_move


# ------------------------------------------------------------------------ estimators


@pytest.fixture
def tree() -> Taxonomy:
    return Taxonomy(
        [
            ("r", "a"),
            ("r", "b"),
            ("a", "a1"),
            ("a", "a2"),
            ("b", "b1"),
            ("b", "b2"),
            ("b2", "c1"),
            ("b2", "c2"),
        ]
    )


def _blobs(tax: Taxonomy, n: int = 240, d: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    cent = {lab: rng.normal(scale=2.5, size=d) for lab in leaves}
    y = rng.choice(leaves, size=n)
    X = np.stack([cent[lab] for lab in y]) + rng.normal(size=(n, d))
    return X, y.astype(object), cent


@pytest.mark.parametrize(
    "make",
    [
        lambda t: HSVMClassifier(taxonomy=t, lam=1e-3, epochs=10, random_state=0),
        lambda t: NHSVMClassifier(taxonomy=t, lam=1e-3, epochs=10, random_state=0),
        lambda t: NHSVMClassifier(taxonomy=t, lam=1e-3, epochs=10, variant="eq13", random_state=0),
        lambda t: NHSVMClassifier(
            taxonomy=t, lam=1e-3, epochs=10, alpha_rule="eq7", random_state=0
        ),
        lambda t: SharedSVMClassifier(
            taxonomy=t, lam=1e-3, rounds=2, epochs_per_alpha=3, random_state=0
        ),
        lambda t: HSVMClassifier(taxonomy=t, lam=1e-3, epochs=10, solver="bcfw", tol=1e-3),
        lambda t: NHSVMClassifier(
            taxonomy=t, lam=1e-3, epochs=10, variant="eq13", solver="bcfw", tol=1e-3
        ),
    ],
)
def test_estimators_fit_dense_and_csr_identically(tree: Taxonomy, make) -> None:
    X, y, _ = _blobs(tree)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = make(tree).fit(X, y)
        sparse = make(tree).fit(sp.csr_matrix(X), y)
    assert dense.score(X, y) > 0.9
    np.testing.assert_allclose(dense.coef_, sparse.coef_, atol=1e-8)
    np.testing.assert_array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))
    assert dense.coef_.shape == (tree.n_nodes, X.shape[1])
    assert np.all(dense.coef_[0] == 0)
    assert set(dense.predict(X)) <= set(tree.names[tree.leaves])
    D = dense.node_scores(X[:5])
    assert D.shape == (5, tree.n_nodes)
    assert dense.decision_function(X[:5]).shape == (5, len(dense.classes_))
    # the best leaf's score is the root's max-marginal
    leaf_ids = tree.index(dense.predict(X[:5]))
    np.testing.assert_allclose(D[np.arange(5), leaf_ids], D[:, 0])


@pytest.mark.parametrize(
    "make",
    [
        lambda t: NHSVMClassifier(taxonomy=t, lam=1e-2, epochs=4, batch_size=4, random_state=1),
        lambda t: HSVMClassifier(taxonomy=t, lam=1e-4, epochs=3, batch_size=8, random_state=2),
        # large lambda: the projection onto the ball of radius sqrt(max loss / lam) binds
        lambda t: HSVMClassifier(taxonomy=t, lam=3.0, epochs=2, batch_size=2, random_state=4),
        lambda t: SharedSVMClassifier(
            taxonomy=t, lam=1e-2, rounds=2, epochs_per_alpha=2, batch_size=4, random_state=3
        ),
    ],
)
def test_sparse_steps_touch_only_the_batch_columns_and_match_dense(tree: Taxonomy, make) -> None:
    """Sparse X takes the lazy path (W = a V, W_bar = q Q + beta V, updates on the batch's
    columns only); with small batches of a 5 %-dense matrix most columns are untouched by a
    step, and the iterates must still equal the dense path's."""
    rng = np.random.default_rng(0)
    leaves = tree.names[tree.leaves]
    Xs = sp.random(160, 300, density=0.05, random_state=0, format="lil")
    y = rng.choice(leaves, size=160).astype(object)
    # make the labels learnable: a feature per leaf
    for k, lab in enumerate(leaves):
        Xs[np.flatnonzero(y == lab), 10 * k] = 3.0
    Xs = sp.csr_matrix(Xs)
    assert np.unique(Xs[:4].indices).size < 300 // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = make(tree).fit(Xs.toarray(), y)
        sparse = make(tree).fit(Xs, y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-7, atol=1e-10)
    assert np.abs(dense.coef_).max() > 0.0
    np.testing.assert_array_equal(dense.predict(Xs.toarray()), sparse.predict(Xs))


def test_sparse_pegasos_epoch_equals_dense_epoch(tree: Taxonomy) -> None:
    """Plain Pegasos (t0 = 0: the first step zeroes W, the lazy path's restart branch) with
    batches of 2 rows; its huge first steps make the projection onto
    ``||W|| <= sqrt(max loss / lam)`` bind. W, W_bar and n_avg after each epoch equal the
    dense path's."""
    lam = 1e-3
    from hierlab.methods.nhsvm.sgd import PegasosSGD

    Xs = sp.random(90, 200, density=0.04, random_state=5, format="csr")
    rng = np.random.default_rng(5)
    y = rng.choice(tree.names[tree.leaves], size=90)
    Y = tree.index(y)
    c = np.ones(tree.n_nodes)
    c[0] = 0.0
    objs = [HierarchicalHinge(X, Y, tree, c, lam) for X in (Xs, Xs.toarray())]
    sgds = [PegasosSGD(batch_size=2, random_state=0, eta0=None) for _ in objs]
    states = [(np.zeros(objs[0].coef_shape), np.zeros(objs[0].coef_shape), 0) for _ in objs]
    radius = np.sqrt(objs[0].max_loss / lam)
    hit = False
    for _ in range(3):
        states = [sgd.run_epoch(o, *st)[:3] for sgd, o, st in zip(sgds, objs, states)]
        (W1, B1, n1), (W2, B2, n2) = states
        np.testing.assert_allclose(W1, W2, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(B1, B2, rtol=1e-9, atol=1e-12)
        assert n1 == n2
        hit |= np.isclose(np.linalg.norm(W2), radius)
    assert hit  # the projection really was exercised


@pytest.mark.parametrize("dag", [False, True])
def test_sparse_multilabel_steps_match_dense(dag: bool) -> None:
    """The lazy sparse path with multi-label (DP on trees, LP/IP on DAGs) inference."""
    edges = [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")]
    if dag:
        edges.append(("b", "a2"))
    tax = Taxonomy.from_edges(edges)
    rng = np.random.default_rng(1)
    Xs = sp.random(120, 80, density=0.08, random_state=1, format="csr")
    sets = [["a1"], ["a2"], ["b1"], ["a1", "b1"]]
    y = [sets[i] for i in rng.integers(0, len(sets), size=120)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = NHSVMClassifier(taxonomy=tax, lam=1e-2, epochs=3, batch_size=4, random_state=0).fit(
            Xs.toarray(), y
        )
        sparse = NHSVMClassifier(
            taxonomy=tax, lam=1e-2, epochs=3, batch_size=4, random_state=0
        ).fit(Xs, y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-7, atol=1e-10)


def test_ssvm_alpha_is_feasible_and_objective_decreases(tree: Taxonomy) -> None:
    X, y, _ = _blobs(tree, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SharedSVMClassifier(
            taxonomy=tree, lam=1e-3, rounds=4, epochs_per_alpha=3, tol=0, random_state=0
        )
        est.fit(X, y)
    P = leaf_path_matrix(tree).toarray()
    np.testing.assert_allclose(P @ est.alpha_[1:], 1.0, atol=1e-9)
    table = est.node_weights()
    np.testing.assert_allclose(table["alpha"].to_numpy(), est.alpha_)
    assert list(table.index) == list(tree.names)
    assert len(est.alpha_history_) >= 2
    ups = est.history_["upper"].to_numpy()
    assert np.all(np.diff(ups) <= 1e-12)
    steps = est.history_[est.history_["alpha_step"].astype(bool)]
    assert len(steps) == len(est.alpha_history_)


@pytest.mark.parametrize("dag", [False, True])
def test_multilabel_fit_predict_consistent_sets(dag: bool) -> None:
    edges = [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")]
    if dag:
        edges.append(("a", "b1"))
    tax = Taxonomy(edges)
    rng = np.random.default_rng(2)
    leaves = list(tax.names[tax.leaves])
    cent = {lab: rng.normal(scale=2.5, size=6) for lab in leaves}
    Y = [tuple(rng.choice(leaves, size=int(rng.integers(1, 3)), replace=False)) for _ in range(150)]
    X = np.stack([sum(cent[lab] for lab in row) for row in Y]) + 0.5 * rng.normal(size=(150, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = NHSVMClassifier(taxonomy=tax, lam=1e-3, epochs=15, random_state=0).fit(X, Y)
    assert est.multilabel_ and est.leaf_terminated_
    ind = est.decision_path(X).toarray().astype(bool)
    # predicted sets are consistent with the hierarchy: closed under parents and leaf-terminated
    for row in ind:
        for c in range(1, tax.n_nodes):
            if row[c]:
                assert all(row[p] for p in tax.parents(c))
        for n in tax.internal_nodes:
            if row[n] and n != 0:
                assert row[tax.children(n)].any()
    assert est.score(X, Y) > 0.6
    S = est.node_scores(X[:4])
    assert S.shape == (4, tax.n_nodes)


def test_multilabel_internal_labels_use_the_closed_space() -> None:
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    Y = [("a",), ("a1",), ("b",), ("a2", "b")] * 10
    enc = sp.csr_matrix((np.ones(5), ([0, 1, 2, 3, 3], [1, 3, 2, 4, 2])), shape=(4, tax.n_nodes))
    assert not is_leaf_terminated(enc, tax)
    X = np.random.default_rng(0).normal(size=(40, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = HSVMClassifier(taxonomy=tax, lam=1e-2, epochs=3, random_state=0).fit(X, Y)
    assert est.leaf_terminated_ is False


def test_eq13_rejects_multilabel(tree: Taxonomy) -> None:
    X = np.zeros((4, 2))
    Y = [("a1",), ("a1", "b1"), ("b1",), ("c1",)]
    with pytest.raises(ParameterError, match=r"eq\. \(13\)"):
        NHSVMClassifier(taxonomy=tree, variant="eq13").fit(X, Y)


def test_registry_entries() -> None:
    for name in ("hsvm", "nhsvm", "nhsvm13", "ssvm"):
        spec = get_method(name)
        assert spec.seed == "003"
        assert "lam" in spec.defaults()
    est = make_estimator("nhsvm13", lam=1e-3, alpha_rule="eq7")
    assert est.variant == "eq13" and est.alpha_rule == "eq7"
    assert get_method("nhsvm").multilabel and get_method("nhsvm").dag
    with pytest.raises(ParameterError):
        make_estimator("nhsvm", alpha_rule="eq9")


# ------------------------------------------------------------------------ synthetic data


@pytest.mark.parametrize("kind", ["balanced", "unbalanced"])
def test_synthetic_sets(kind: str) -> None:
    tr, te = make_nhsvm_synthetic(kind, n_samples=900, n_features=50, random_state=0)
    assert tr.n_samples + te.n_samples == 900 and te.n_samples == 300
    tax = tr.taxonomy
    if kind == "balanced":
        assert tax.n_nodes == 15 and len(tax.leaves) == 8 and tax.max_depth == 3
    else:
        assert tax.n_nodes == 21 and len(tax.leaves) == 11 and tax.max_depth == 10
        assert np.allclose(np.linalg.norm(tr.X, axis=1), 1.0)
        counts = tr.examples_per_node()
        assert counts["a1"] > counts["a2"] > counts["a3"]  # halves of halves
    assert set(tr.y) <= set(tax.names[tax.leaves])
    tr2, _ = make_nhsvm_synthetic(kind, n_samples=900, n_features=50, random_state=0)
    np.testing.assert_array_equal(tr.X, tr2.X)
    with pytest.raises(ParameterError):
        make_nhsvm_synthetic("tilted")


@pytest.mark.parametrize("solver", ["pegasos", "bcfw"])
def test_reproduce_table3_runs_and_reports(solver: str, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from hierlab.lab.reproduce import available
    from hierlab.lab.reproduce import nhsvm as rep

    assert available()["nhsvm"] is rep
    parser = argparse.ArgumentParser()
    rep.add_arguments(parser)
    argv = ["--quick", "--n-samples", "300", "--epochs", "3", "--solver", solver, "--tol", "0.05"]
    args = parser.parse_args(argv)
    assert rep.run(args) == 0
    out = capsys.readouterr().out
    assert f"solver: {solver}" in out
    tree = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    for m in rep.METHODS:  # the option reaches every estimator the tables are made of
        assert rep.table3_estimator(m, tree, {"lam": 1e-3}, args, 0).solver == solver
    for m in rep.METHODS:
        assert m in out
    assert "63.3 ± 0.34" in out and "74.1 ± 0.20" in out  # the published NHSVM column
    assert "NHSVM - max(HSVM, FlatSVM)" in out


def test_dag_node_scores_are_the_spanning_tree_max_marginals() -> None:
    rng = np.random.default_rng(9)
    dag = random_dag(rng, 9, extra=4)
    first = [(str(dag.names[dag.parent[c]]), str(dag.names[c])) for c in range(1, dag.n_nodes)]
    tree = Taxonomy(first)
    R = rng.normal(size=(12, dag.n_nodes))
    perm = tree.index(list(dag.names))  # dag column j is tree column perm[j]
    Rt = np.empty_like(R)
    Rt[:, perm] = R
    for lt in (False, True):
        S = node_max_marginals(R, dag, lt)
        St = node_max_marginals(Rt, tree, lt)
        np.testing.assert_allclose(S, St[:, perm], atol=1e-12)


# ------------------------------------------------------------------------ the dual (BCFW)


def _hinge_for(est: HSVMClassifier, X: np.ndarray, y: np.ndarray) -> HierarchicalHinge:
    """The primal objective ``est`` minimises, built independently of the estimator: the
    paper's ``lam`` on the summed loss is ``lam / N`` on the mean loss."""
    tax = est.taxonomy_
    lam = est.lam / len(y)
    if isinstance(est, NHSVMClassifier):
        alpha = normalization_alpha(tax, est.alpha_rule, rho=est.rho, T=est.T)
        variant = "eq13" if est.variant == "eq13" else "margin"
        return HierarchicalHinge(X, y, tax, np.sqrt(alpha), lam, "normalized", alpha, variant)
    return HierarchicalHinge(X, y, tax, np.ones(tax.n_nodes), lam, est.loss)


@pytest.mark.parametrize("dag", [False, True])
@pytest.mark.parametrize("variant", ["margin", "eq13"])
def test_dual_tables_reproduce_the_hinge(dag: bool, variant: str) -> None:
    """max_r (L_r - U_r . P_i) over the dual tables equals the primal loss of eq. 3/10/13,
    computed by HierarchicalHinge, at random weights; internal nodes as labels too."""
    from hierlab.methods.nhsvm.dual import HingeDualModel

    rng = np.random.default_rng(5)
    tax = random_dag(rng, 8, 3) if dag else random_tree(rng, 8)
    X = rng.normal(size=(40, 3))
    y = rng.integers(1, tax.n_nodes, size=40)  # leaves and internal nodes
    alpha = normalization_alpha(tax, T=1.5)
    for loss in ("normalized", "hamming", "zero_one"):
        if variant == "eq13" and loss != "normalized":
            continue
        c = np.sqrt(alpha) if loss == "normalized" else np.ones(tax.n_nodes)
        obj = HierarchicalHinge(X, y, tax, c, 0.1, loss, alpha, variant)
        model = HingeDualModel(obj)
        blocks = model.dual_blocks(obj.y)
        for _ in range(3):
            W = rng.normal(size=obj.coef_shape)
            P = X @ W.T
            direct = obj.value(W) - 0.1 * float(np.sum(W * W))
            assert blocks.primal_loss(P) == pytest.approx(direct, rel=1e-12, abs=1e-12)
            assert model.loss(P, obj.y)[0][0] == pytest.approx(direct, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("variant", ["margin", "eq13"])
def test_chunked_certificate_equals_the_whole_hinge(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The certificate's loss, summed a chunk of rows at a time (``Objective.summed_loss``),
    equals the hinge's own value, and its sparse ``Gamma`` the dense subgradient of
    ``batch_loss`` over N; sparse and dense X alike."""
    import hierlab.core.objective as objective_module
    from hierlab.methods.nhsvm.dual import hinge_problem

    rng = np.random.default_rng(8)
    tax = random_tree(rng, 9)
    n = 57
    X = rng.normal(size=(n, 4))
    X[rng.random(X.shape) < 0.4] = 0.0
    y = tax.leaves[rng.integers(0, len(tax.leaves), size=n)]
    alpha = normalization_alpha(tax)
    for Xin in (X, sp.csr_matrix(X)):
        hinge = HierarchicalHinge(Xin, y, tax, np.sqrt(alpha), 0.1, "normalized", alpha, variant)
        problem = hinge_problem(hinge)
        W = rng.normal(size=hinge.coef_shape)
        W[0] = 0.0  # the root's row is no variable of the problem (its regulariser skips it)
        losses, G = hinge.batch_loss(W, np.arange(n))
        whole_loss, whole_gamma = problem.summed_loss(W)
        monkeypatch.setattr(objective_module, "CHUNK", 5 * tax.n_nodes)  # chunks of 5 rows
        part_loss, part_gamma = problem.summed_loss(W)
        monkeypatch.undo()
        for loss, gamma in ((whole_loss, whole_gamma), (part_loss, part_gamma)):
            assert loss[0] == pytest.approx(losses.sum() / n, rel=1e-12)
            np.testing.assert_allclose(gamma.toarray(), G / n, rtol=1e-12, atol=1e-15)
        assert problem.value(W) == pytest.approx(hinge.value(W), rel=1e-12)
    with pytest.raises(ParameterError, match="training labels"):
        hinge.label_positions(np.array([0]))  # the root is no training label


def test_auto_solver_is_bcfw_where_its_tables_fit(
    tree: Taxonomy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``solver="auto"``: BCFW, certified to ``tol=None`` = 1e-3, on single-label sparse
    rows (stored dense or CSR), on a tree at any size (no tables); Pegasos for dense rows,
    multi-label data and, on a DAG, above the table budget; ``solver_`` and ``algorithm_``
    say which ran."""
    import hierlab.methods.nhsvm.estimators as est_module

    rng = np.random.default_rng(3)
    leaves = tree.names[tree.leaves]
    y = rng.choice(leaves, size=60).astype(object)
    X = np.zeros((60, 40))  # text-like rows: a word of the class and two random ones
    X[np.arange(60), np.searchsorted(leaves, y)] = 1.0
    X[np.arange(60)[:, None], rng.integers(len(leaves), 40, size=(60, 2))] = 0.5
    Xs = sp.csr_matrix(X)
    lam = 0.05 * len(y)
    est = HSVMClassifier(taxonomy=tree, lam=lam, epochs=500).fit(Xs, y)
    assert est.solver_ == "bcfw" and "certified" in est.algorithm_ and est.converged_
    assert "auto" in est.algorithm_
    assert HSVMClassifier(taxonomy=tree, lam=lam, epochs=500).fit(X, y).solver_ == "bcfw"
    assert np.isfinite(est.lower_bound_)
    assert est.objective_ - est.lower_bound_ <= 1e-3 * est.objective_
    ml = np.empty(60, dtype=object)
    ml[:] = [("a1", "b1"), ("a2",)] * 30
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multi = HSVMClassifier(taxonomy=tree, epochs=3).fit(Xs, ml)
        dense = HSVMClassifier(taxonomy=tree, lam=lam, epochs=3).fit(X + 0.01, y)
        monkeypatch.setattr(est_module, "AUTO_DUAL_MAX_BYTES", 1)
        big = NHSVMClassifier(taxonomy=tree, lam=lam, epochs=3).fit(Xs, y)
        assert big.solver_ == "bcfw"  # a tree: the labels are formed on the fly
        dag = Taxonomy.from_edges(
            [("r", "a"), ("r", "b"), ("a", "x"), ("b", "x"), ("a", "u"), ("b", "w")], root="r"
        )
        y_dag = np.array(["x", "u", "w"] * 20, dtype=object)
        big_dag = NHSVMClassifier(taxonomy=dag, lam=lam, epochs=3).fit(Xs, y_dag)
    for fitted in (multi, dense, big_dag):
        assert fitted.solver_ == "pegasos" and "auto" in fitted.algorithm_
        assert np.isnan(fitted.lower_bound_)


def test_default_epochs_and_checkpoints_follow_the_solver(
    tree: Taxonomy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``epochs=None``: BCFW may take :data:`BCFW_EPOCHS` passes, Pegasos
    :data:`PEGASOS_EPOCHS` epochs; BCFW certifies only the first pass and those whose running
    Frank-Wolfe gap estimate is within ``ESTIMATE_SLACK * tol`` (fewer checkpoints than
    passes), and stops on a certified gap <= ``tol`` at the optimum an every-pass run brackets."""
    import hierlab.methods.nhsvm.estimators as est_module

    rng = np.random.default_rng(5)
    leaves = tree.names[tree.leaves]
    y = rng.choice(leaves, size=80).astype(object)
    X = np.zeros((80, 40))
    X[np.arange(80), np.searchsorted(leaves, y)] = 1.0
    X[np.arange(80)[:, None], rng.integers(0, 40, size=(80, 3))] += 0.5
    Xs = sp.csr_matrix(X)
    est = NHSVMClassifier(taxonomy=tree, lam=0.5).fit(Xs, y)
    assert est.solver_ == "bcfw" and est._epochs() == est_module.BCFW_EPOCHS == 100
    assert est.converged_ and est._tol() == est_module.BCFW_TOL
    last = est.history_.iloc[-1]
    assert last["gap"] <= est_module.BCFW_TOL * last["upper"]
    certified = est.history_["iteration"].tolist()
    assert certified[0] == 1 and len(certified) < est.n_iter_ == certified[-1]
    monkeypatch.setattr(est_module, "ESTIMATE_SLACK", np.inf)  # a checkpoint every pass
    ref = NHSVMClassifier(taxonomy=tree, lam=0.5).fit(Xs, y)
    assert ref.history_["iteration"].tolist() == list(range(1, ref.n_iter_ + 1))
    assert est.lower_bound_ <= ref.objective_ * (1 + 1e-12)
    assert ref.lower_bound_ <= est.objective_ * (1 + 1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sgd = NHSVMClassifier(taxonomy=tree, lam=0.5, solver="pegasos", tol=0.0).fit(X, y)
    assert sgd._epochs() == est_module.PEGASOS_EPOCHS == sgd.n_iter_ == 30


def test_default_weights_are_eq7s_and_what_ran_says_so(tree: Taxonomy) -> None:
    """The default node weights are eq. (7)'s (max min alpha, directional), lam = 1/3
    (C = 1.5); ``algorithm_`` names the rule, and eq. (6) with its rho when asked for."""
    assert not np.allclose(normalization_alpha(tree, "eq6"), normalization_alpha(tree, "eq7"))
    X, y, _ = _blobs(tree, n=60)
    est = NHSVMClassifier(taxonomy=tree, epochs=3).fit(X, y)
    assert est.lam == pytest.approx(1.0 / 3.0)
    np.testing.assert_allclose(est.alpha_, normalization_alpha(tree, "eq7"))
    assert est.algorithm_.endswith("node weights by eq. (7)")
    six = NHSVMClassifier(taxonomy=tree, epochs=3, alpha_rule="eq6", rho=1.5).fit(X, y)
    np.testing.assert_allclose(six.alpha_, normalization_alpha(tree, "eq6", rho=1.5))
    assert six.algorithm_.endswith("node weights by eq. (6), rho = 1.5")


def test_unconverged_warning_names_the_budget_parameter(tree: Taxonomy) -> None:
    """An HSVM stopped by its epochs says "Raise epochs" (it has no ``max_iter``)."""
    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = _blobs(tree, n=60)
    est = HSVMClassifier(taxonomy=tree, lam=1e-3, epochs=2, tol=1e-12, solver="bcfw")
    with pytest.warns(ConvergenceWarning, match="Raise epochs or loosen tol"):
        est.fit(X, y)
    assert not est.converged_ and "max_iter" not in est.get_params()


@pytest.mark.parametrize("cls", [HSVMClassifier, NHSVMClassifier])
def test_bcfw_reaches_the_slsqp_optimum_with_a_certificate(cls: type) -> None:
    rng = np.random.default_rng(11)
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    leaves = tax.leaves
    X = rng.normal(size=(30, 2))
    y = leaves[rng.integers(0, len(leaves), size=30)]
    est = cls(taxonomy=tax, lam=0.05 * len(y), epochs=2000, tol=1e-9, solver="bcfw")
    est.fit(X, tax.names[y])
    assert est.converged_
    opt = _primal_qp(_hinge_for(est, X, y), X)
    ours = _hinge_for(est, X, y).value(est.W_)
    assert est.lower_bound_ <= opt + 1e-8 <= ours + 2e-8
    assert ours == pytest.approx(opt, rel=1e-7)
    assert est.objective_ == pytest.approx(ours, rel=1e-12)
    h = est.history_
    assert np.all(np.diff(h["upper"].to_numpy()) <= 1e-12)
    assert np.all(np.diff(h["lower"].to_numpy()) >= -1e-12)


def test_bcfw_and_pegasos_minimise_the_same_objective(tree: Taxonomy) -> None:
    """Pegasos (many epochs) lands inside BCFW's certified interval, within SGD's accuracy."""
    X, y, _ = _blobs(tree, n=120, d=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lam = 1e-2 * len(y)  # 1e-2 per row
        b = NHSVMClassifier(taxonomy=tree, lam=lam, epochs=2000, tol=1e-4, solver="bcfw").fit(X, y)
        p = NHSVMClassifier(
            taxonomy=tree, lam=lam, epochs=300, batch_size=8, tol=1e-9, random_state=0,
            solver="pegasos",
        ).fit(X, y)
    assert b.converged_
    assert p.objective_ >= b.lower_bound_ - 1e-12
    assert p.objective_ <= b.objective_ * 1.01


def test_bcfw_refuses_multilabel_and_unknown_solvers(tree: Taxonomy) -> None:
    X, _, _ = _blobs(tree, n=20)
    y = np.empty(20, dtype=object)
    y[:] = [("a1", "b1")] * 20
    with pytest.raises(ParameterError, match="single-label"):
        HSVMClassifier(taxonomy=tree, solver="bcfw").fit(X, y)
    with pytest.raises(ParameterError, match="solver"):
        HSVMClassifier(taxonomy=tree, solver="newton").fit(X, ["a1", "b1"] * 10)
