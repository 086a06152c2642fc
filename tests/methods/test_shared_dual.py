"""Shared SVM solved to a certified gap (``hierlab.methods.nhsvm.shared_dual``), BCFW warm starts.

Oracles: brute-force enumeration and ``scipy.optimize.linprog`` for the antichain maximum;
SLSQP on the joint problem over ``(U, alpha, xi)`` of eq. (14) for the Shared SVM optimum.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog, minimize

from hierlab import Taxonomy
from hierlab.core.exceptions import ParameterError, TaxonomyError
from hierlab.core.objective import Objective
from hierlab.core.regularizers import L2
from hierlab.methods.nhsvm.dual import HingeDualModel
from hierlab.methods.nhsvm.estimators import SharedSVMClassifier
from hierlab.methods.nhsvm.model import HierarchicalHinge, normalization_alpha
from hierlab.methods.nhsvm.shared_dual import max_antichain_weight, shared_dual_bound
from hierlab.solvers.bcfw import BCFW


def random_tree(rng: np.random.Generator, n: int) -> Taxonomy:
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    return Taxonomy.from_parent_array(parent)


def _paths(tax: Taxonomy) -> np.ndarray:
    """(n_leaves, n_nodes) 0/1: row l marks A+(l)."""
    return tax.ancestor_matrix.toarray().astype(np.float64)[tax.leaves]


@pytest.mark.parametrize("seed", range(8))
def test_antichain_maximum_equals_enumeration_and_linprog(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tax = random_tree(rng, int(rng.integers(2, 10)))
    w = rng.exponential(size=tax.n_nodes)
    P = _paths(tax)
    brute = 0.0
    for z in itertools.product([0, 1], repeat=tax.n_nodes):
        z = np.asarray(z, dtype=np.float64)
        if np.all(P @ z <= 1):
            brute = max(brute, float(w @ z))
    lp = linprog(-w, A_ub=P, b_ub=np.ones(len(P)), bounds=[(0, None)] * tax.n_nodes)
    assert max_antichain_weight(w, tax) == pytest.approx(brute, rel=1e-12)
    assert max_antichain_weight(w, tax) == pytest.approx(-lp.fun, rel=1e-9)


def test_antichain_rejects_dag() -> None:
    dag = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    with pytest.raises(TaxonomyError, match="tree"):
        max_antichain_weight(np.ones(dag.n_nodes), dag)


def _problem(seed: int, n: int = 24, d: int = 2):
    rng = np.random.default_rng(seed)
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])
    leaves = tax.leaves
    cent = rng.normal(scale=1.5, size=(len(leaves), d))
    yi = rng.integers(0, len(leaves), size=n)
    X = cent[yi] + rng.normal(size=(n, d))
    return tax, X, leaves[yi]


def _joint_value(
    tax: Taxonomy,
    X: np.ndarray,
    y: np.ndarray,
    U: np.ndarray,
    alpha: np.ndarray,
    lam: float,
    loss: str,
) -> float:
    """eq. (14) computed directly: ``lam sum ||U_n||^2 / alpha_n + mean max_l [...]_+``."""
    hinge = HierarchicalHinge(X, y, tax, np.ones(tax.n_nodes), lam, loss)
    reg = sum(float(U[k] @ U[k]) / alpha[k] for k in range(1, tax.n_nodes) if U[k] @ U[k] > 0)
    return lam * reg + hinge.value(U) - lam * float(np.sum(U * U))


def _slsqp_joint(tax: Taxonomy, X: np.ndarray, y: np.ndarray, lam: float, loss: str) -> float:
    """The optimum of eq. (14) over (U, alpha, xi) by SLSQP (alpha >= 1e-6; root fixed at 0)."""
    hinge = HierarchicalHinge(X, y, tax, np.ones(tax.n_nodes), lam, loss)
    m, d, n = tax.n_nodes - 1, X.shape[1], X.shape[0]
    A = tax.ancestor_matrix.toarray().astype(np.float64)[:, 1:]  # A+(v) without the root
    P = A[tax.leaves]
    rows, rhs = [], []
    table = hinge.delta_table()
    for i in range(n):
        for j, leaf in enumerate(tax.leaves):
            delta = table[hinge.label_index[i], j]
            if delta > 0:
                v = np.zeros(m * d + m + n)
                v[: m * d] = -np.outer(A[leaf] - A[y[i]], X[i]).ravel()
                v[m * d + m + i] = 1.0
                rows.append(v)
                rhs.append(delta)
    G, h = np.array(rows), np.array(rhs)

    def f(z: np.ndarray) -> float:
        U = z[: m * d].reshape(m, d)
        a = z[m * d : m * d + m]
        return lam * float(np.sum(np.sum(U * U, axis=1) / a)) + z[m * d + m :].mean()

    def jac(z: np.ndarray) -> np.ndarray:
        U = z[: m * d].reshape(m, d)
        a = z[m * d : m * d + m]
        out = np.zeros_like(z)
        out[: m * d] = (2 * lam * U / a[:, None]).ravel()
        out[m * d : m * d + m] = -lam * np.sum(U * U, axis=1) / a**2
        out[m * d + m :] = 1.0 / n
        return out

    z0 = np.r_[np.zeros(m * d), normalization_alpha(tax)[1:], np.full(n, 2.0)]
    Pz = np.zeros((len(P), z0.size))
    Pz[:, m * d : m * d + m] = P
    res = minimize(
        f, z0, jac=jac, method="SLSQP",
        bounds=[(None, None)] * (m * d) + [(1e-6, 1.0)] * m + [(0, None)] * n,
        constraints=[
            {"type": "ineq", "fun": lambda z: G @ z - h, "jac": lambda z: G},
            {"type": "ineq", "fun": lambda z: 1.0 - Pz @ z, "jac": lambda z: -Pz},
        ],
        options={"ftol": 1e-13, "maxiter": 2000},
    )  # fmt: skip
    return float(res.fun)


@pytest.mark.parametrize("loss", ["zero_one", "sqrt_hamming"])
def test_ssvm_bcfw_reaches_the_joint_optimum_with_a_certificate(loss: str) -> None:
    tax, X, y = _problem(3)
    lam = 0.05
    est = SharedSVMClassifier(  # the paper's lambda (summed loss) is lam * N
        taxonomy=tax,
        lam=lam * len(y),
        loss=loss,
        solver="bcfw",
        rounds=400,
        epochs_per_alpha=200,
        tol=1e-6,
    )
    est.fit(X, tax.names[y])
    assert est.converged_
    ours = _joint_value(tax, X, y, est.coef_, est.alpha_, lam, loss)
    assert est.objective_ == pytest.approx(ours, rel=1e-9)
    opt = _slsqp_joint(tax, X, y, lam, loss)
    assert est.lower_bound_ <= opt + 1e-7
    assert ours == pytest.approx(opt, rel=1e-4)
    # alpha feasible: every root-to-leaf path sums to at most 1
    assert np.all(_paths(tax) @ est.alpha_ <= 1 + 1e-12) and np.all(est.alpha_ >= 0)
    h = est.history_
    assert np.all(np.diff(h["upper"].to_numpy()) <= 1e-12)
    low = h["lower"].dropna().to_numpy()
    assert low.size and np.all(np.diff(low) >= -1e-12) and np.all(low <= h["upper"].min() + 1e-12)


def test_ssvm_bcfw_beats_its_pegasos_objective_and_is_dense_sparse_equal() -> None:
    tax, X, y = _problem(4, n=60, d=3)
    names = tax.names[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = SharedSVMClassifier(taxonomy=tax, lam=1e-2, solver="bcfw", rounds=50, tol=1e-4).fit(
            X, names
        )
        bs = SharedSVMClassifier(taxonomy=tax, lam=1e-2, solver="bcfw", rounds=50, tol=1e-4).fit(
            sp.csr_matrix(X), names
        )
        p = SharedSVMClassifier(taxonomy=tax, lam=1e-2, rounds=5, epochs_per_alpha=5).fit(X, names)
    np.testing.assert_allclose(b.coef_, bs.coef_, atol=1e-10)
    assert b.lower_bound_ <= p.objective_ + 1e-12  # the bound holds for any (U, alpha)
    assert b.objective_ <= p.objective_ + 1e-12


def test_sparse_rows_are_transposed_once_per_fit_and_not_kept() -> None:
    """The rounds' BCFW problems and bounds share the hinge's one CSR ``X^T`` (the sparse
    fit equals the dense one above); the fitted model keeps neither ``X`` nor ``X^T``."""
    from hierlab.methods.nhsvm.dual import hinge_problem

    tax, X, y = _problem(4, n=60, d=3)
    Xs = sp.csr_matrix(X)
    hinge = HierarchicalHinge(Xs, y, tax, np.ones(tax.n_nodes), lam=0.5, loss="zero_one")
    XT = hinge.XT
    assert XT is hinge.XT and hinge_problem(hinge).XT is XT
    np.testing.assert_array_equal(XT.toarray(), X.T)
    assert HierarchicalHinge(X, y, tax, np.ones(tax.n_nodes), lam=0.5).XT is None
    est = SharedSVMClassifier(taxonomy=tax, lam=1e-2, solver="bcfw").fit(Xs, tax.names[y])
    assert est._objective_model_.X is None and est._objective_model_.XT is None


@pytest.mark.parametrize("seed", range(4))
def test_joint_bound_is_below_every_feasible_value_and_the_fixed_alpha_dual(seed: int) -> None:
    """D(beta) <= D_alpha(beta) <= J(U, alpha) for random simplices beta, alpha in P and U."""
    rng = np.random.default_rng(seed)
    tax = random_tree(rng, 7)
    X = rng.normal(size=(20, 3))
    y = tax.leaves[rng.integers(0, len(tax.leaves), size=20)]
    lam = 0.1
    alpha = normalization_alpha(tax) * rng.uniform(0.3, 1.0, size=tax.n_nodes)
    alpha[0] = 0.0
    hinge = HierarchicalHinge(X, y, tax, np.sqrt(alpha), lam, "hamming")
    model = HingeDualModel(hinge)
    blocks = model.dual_blocks(hinge.y)
    R = max(len(L) for _, L in blocks.tables)
    beta = np.zeros((20, R))
    for k, t in enumerate(blocks.block_table):
        r = len(blocks.tables[t][1])
        beta[k, :r] = rng.dirichlet(np.ones(r))
    bound, g_sq = shared_dual_bound(hinge, beta, tax)
    np.testing.assert_array_equal(hinge.c, np.sqrt(alpha))  # attributes restored
    # the dual of the V-step at this alpha, from BCFW's own tables (weighted by sqrt(alpha))
    B = np.zeros((20, tax.n_nodes))
    ell = 0.0
    for k, t in enumerate(blocks.block_table):
        U, L = blocks.tables[t]
        B[k] += beta[k, : len(L)] @ U
        ell += float(beta[k, : len(L)] @ L)
    V = X.T @ B
    D_alpha = ell - float(np.sum(V * V)) / (4 * lam)
    assert bound <= D_alpha + 1e-12
    np.testing.assert_allclose(alpha * g_sq, np.sum(V * V, axis=0), rtol=1e-10, atol=1e-14)
    for _ in range(5):
        U = rng.normal(size=(tax.n_nodes, 3))
        U[0] = 0.0
        assert bound <= _joint_value(tax, X, y, U, np.where(alpha > 0, alpha, 1), lam, "hamming")


@pytest.mark.parametrize("kind", ["dense", "csr"])
def test_joint_bound_from_the_implicit_blocks_equals_the_tables(kind: str) -> None:
    """The bound read from BCFW's implicit blocks (labels with mass, no tables) equals the one
    from its padded dual point and the unit tables, at any dual point BCFW reaches."""
    rng = np.random.default_rng(8)
    tax = random_tree(rng, 9)
    X = rng.normal(size=(40, 4))
    X[np.abs(X) < 0.5] = 0.0
    y = tax.leaves[rng.integers(0, len(tax.leaves), size=40)]
    alpha = normalization_alpha(tax) * rng.uniform(0.3, 1.0, size=tax.n_nodes)
    alpha[0] = 0.0
    Xf = sp.csr_matrix(X) if kind == "csr" else X
    hinge = HierarchicalHinge(Xf, y, tax, np.sqrt(alpha), 0.05, "hamming")
    model = HingeDualModel(hinge)
    problem = Objective(model, L2(model.active_rows(hinge.y), sigma=0.1), Xf, hinge.y, C=1.0)
    for epochs in (1, 4):
        bcfw = BCFW(max_iter=epochs)
        list(bcfw.iterate(problem))
        flat = bcfw.implicit_blocks_
        assert flat is not None
        got, g_got = shared_dual_bound(hinge, None, tax, flat=flat)
        want, g_want = shared_dual_bound(hinge, bcfw.alpha_, tax)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(g_got, g_want, rtol=1e-10, atol=1e-14)
        np.testing.assert_array_equal(hinge.c, np.sqrt(alpha))

def test_bcfw_warm_start_resumes_from_the_dual_point() -> None:
    tax, X, y = _problem(5, n=40)
    hinge = HierarchicalHinge(X, y, tax, np.ones(tax.n_nodes), 0.05, "hamming")
    model = HingeDualModel(hinge)
    problem = Objective(model, L2(model.active_rows(hinge.y), sigma=0.1), X, hinge.y, C=1.0)
    cold = BCFW(max_iter=30)
    last = list(cold.iterate(problem))[-1]
    warm = BCFW(max_iter=1, dual_init=cold.alpha_)
    first = next(iter(warm.iterate(problem)))
    fresh = next(iter(BCFW(max_iter=1).iterate(problem)))
    assert first.lower >= last.extra["dual"] - 1e-10  # an epoch of BCFW never lowers the dual
    assert first.upper - first.lower < fresh.upper - fresh.lower
    with pytest.raises(ParameterError, match="dual_init"):
        list(BCFW(dual_init=cold.alpha_[:, :1]).iterate(problem))


def test_ssvm_bcfw_refuses_unknown_losses() -> None:
    tax, X, y = _problem(6, n=10)
    with pytest.raises(ParameterError, match="loss"):
        SharedSVMClassifier(taxonomy=tax, loss="normalized", solver="bcfw").fit(X, tax.names[y])
    with pytest.raises(ParameterError, match="solver"):
        SharedSVMClassifier(taxonomy=tax, solver="sgd").fit(X, tax.names[y])
