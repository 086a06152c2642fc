"""Seed 003's Section 8.1 items: eq. (6) with directional constraints (rho = 2), lambda on the
paper's scale (summed loss), and training on the LP relaxation of eq. (19) on DAGs.

Oracles: SLSQP on the same constrained problem (alpha); the paper's objective written out with
a summed loss and minimised by SLSQP on a small problem (lambda); the LP/IP on a handful of
label sets enumerated by brute force (inference).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from hierlab.methods.nhsvm.model import (
    _directional_matrix,
    leaf_path_matrix,
    normalization_alpha,
)
from tests.methods.test_nhsvm import fractional_dag, random_dag, random_tree


def slsqp_directional(P: np.ndarray, E: np.ndarray, rho: float, T: float) -> np.ndarray:
    """min sum alpha^rho s.t. path sums (= 1, or in [1, T]), alpha >= 0, E alpha >= 0."""
    m = P.shape[1]
    if T > 1:
        cons = [
            {"type": "ineq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P},
            {"type": "ineq", "fun": lambda a: T - P @ a, "jac": lambda a: -P},
        ]
    else:
        cons = [{"type": "eq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P}]
    if E.shape[0]:
        cons.append({"type": "ineq", "fun": lambda a: E @ a, "jac": lambda a: E})
    best = None
    for start in (np.full(m, 0.5 / P.sum(axis=1).max()), np.linspace(0.05, 0.5, m)):
        res = minimize(
            lambda a: np.sum(np.abs(a) ** rho),
            start,
            jac=lambda a: rho * np.abs(a) ** (rho - 1) * np.sign(a),
            bounds=[(0, None)] * m,
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 5000},
        )
        if res.success and (best is None or res.fun < best.fun):
            best = res
    assert best is not None
    return best.x


def check_feasible(tax, a: np.ndarray, T: float, tol: float) -> None:
    P = leaf_path_matrix(tax).toarray()
    s = P @ a[1:]
    assert a[0] == 0.0 and np.all(a >= 0)
    if T > 1:
        assert np.all(s >= 1 - tol) and np.all(s <= T + tol)
    else:
        np.testing.assert_allclose(s, 1.0, atol=tol)
    for c in range(1, tax.n_nodes):
        for p in tax.parents(c):
            if p > 0:
                assert a[c] >= a[p] - tol


@pytest.mark.parametrize("seed", range(6))
def test_eq6_directional_tree_equals_slsqp(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    tax = random_tree(rng, int(rng.integers(6, 14)))
    a = normalization_alpha(tax, "eq6-directional", rho=2.0)
    check_feasible(tax, a, 1.0, 1e-9)  # the rho = 2 polish: exact to round-off
    P = leaf_path_matrix(tax).toarray()
    E = _directional_matrix(tax).toarray()
    ref = slsqp_directional(P, E, 2.0, 1.0)
    assert np.sum(a[1:] ** 2) <= np.sum(ref**2) + 1e-9
    np.testing.assert_allclose(a[1:], ref, atol=1e-5)


@pytest.mark.parametrize("rho", [1.5, 3.0])
@pytest.mark.parametrize("seed", range(3))
def test_eq6_directional_other_rho_equals_slsqp(seed: int, rho: float) -> None:
    rng = np.random.default_rng(720 + seed)
    tax = random_tree(rng, int(rng.integers(6, 12)))
    a = normalization_alpha(tax, "eq6-directional", rho=rho)
    check_feasible(tax, a, 1.0, 1e-6)
    P = leaf_path_matrix(tax).toarray()
    ref = slsqp_directional(P, _directional_matrix(tax).toarray(), rho, 1.0)
    assert np.sum(a[1:] ** rho) == pytest.approx(np.sum(ref**rho), rel=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_eq6_directional_dag_relaxation_equals_slsqp(seed: int) -> None:
    rng = np.random.default_rng(740 + seed)
    tax = random_dag(rng, 9, extra=4)
    a = normalization_alpha(tax, "eq6-directional", rho=2.0, T=1.5)
    check_feasible(tax, a, 1.5, 1e-6)
    P = leaf_path_matrix(tax).toarray()
    ref = slsqp_directional(P, _directional_matrix(tax).toarray(), 2.0, 1.5)
    assert np.sum(a[1:] ** 2) == pytest.approx(np.sum(ref**2), rel=1e-5)


def test_directional_constraints_bind_on_an_unbalanced_path() -> None:
    # root -> a -> b -> {l1, l2}; root -> l3. Without the directional constraints eq. (6) puts
    # weight 1/3 on a, b and each leaf below b; with them alpha grows towards the leaves.
    from hierlab import Taxonomy

    tax = Taxonomy([("r", "a"), ("a", "b"), ("b", "l1"), ("b", "l2"), ("a", "l4"), ("r", "l3")])
    free = normalization_alpha(tax, "eq6", rho=2.0)
    dirn = normalization_alpha(tax, "eq6-directional", rho=2.0)
    P = leaf_path_matrix(tax).toarray()
    E = _directional_matrix(tax).toarray()
    assert np.min(E @ free[1:]) < -1e-3  # eq. (6) alone violates alpha_c >= alpha_p here
    assert np.min(E @ dirn[1:]) >= -1e-12
    ref = slsqp_directional(P, E, 2.0, 1.0)
    np.testing.assert_allclose(dirn[1:], ref, atol=1e-6)
    assert np.sum(dirn**2) > np.sum(free**2)  # a constrained optimum costs more


def test_nhsvm_estimator_takes_the_directional_rule() -> None:
    from hierlab.core.registry import get_method
    from hierlab.methods.nhsvm.estimators import NHSVMClassifier

    assert "eq6-directional" in get_method("nhsvm").param("alpha_rule").choices
    import warnings

    train, _ = make_small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two epochs: SGD's convergence warning is expected
        est = NHSVMClassifier(
            taxonomy=train.taxonomy, alpha_rule="eq6-directional", epochs=2, random_state=0
        ).fit(train.X, train.y)
    np.testing.assert_allclose(est.alpha_, normalization_alpha(train.taxonomy, "eq6-directional"))


def make_small():
    from hierlab.datasets.nhsvm import make_nhsvm_synthetic

    return make_nhsvm_synthetic("unbalanced", n_samples=300, n_features=20, random_state=0)


# ------------------------------------------------------------------ inference="lp" (Sec. 7.1)
def lp_by_hand(R: np.ndarray, tax) -> np.ndarray:
    """Eq. (19)'s LP for one row written out densely: max R.z, z_root = 1, z_c <= z_p,
    z_n <= sum of its children, sum of the leaves >= 1, 0 <= z <= 1."""
    from scipy.optimize import linprog

    M = tax.n_nodes
    A, b = [], []
    for c in range(1, M):
        for p in tax.parents(c):
            row = np.zeros(M)
            row[c], row[int(p)] = 1.0, -1.0
            A.append(row)
            b.append(0.0)
    for n in tax.internal_nodes:
        row = np.zeros(M)
        row[n] = 1.0
        row[tax.children(n)] = -1.0
        A.append(row)
        b.append(0.0)
    row = np.zeros(M)
    row[tax.leaves] = -1.0
    A.append(row)
    b.append(-1.0)
    bounds = [(1.0, 1.0)] + [(0.0, 1.0)] * (M - 1)
    res = linprog(-R, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun


def test_relaxed_inference_is_the_lp_optimum_above_the_ip() -> None:
    from hierlab.methods.nhsvm.model import dag_max_label
    from tests.methods.test_nhsvm import brute_max, feasible_sets

    tax = fractional_dag()
    rng = np.random.default_rng(7)
    R = rng.normal(size=(120, tax.n_nodes)) * 2.0
    Z, val, stats = dag_max_label(R, tax, True, batch=50, return_stats=True, relaxed=True)
    _, ip = brute_max(R, feasible_sets(tax, True))
    lp = np.array([lp_by_hand(r, tax) for r in R])
    np.testing.assert_allclose(val, lp, atol=1e-8)  # the LP value, fractional or not
    np.testing.assert_allclose(np.einsum("ij,ij->i", R, Z), val, atol=1e-12)
    assert np.all(val >= ip - 1e-9)
    frac = np.any(np.minimum(Z, 1 - Z) > 1e-6, axis=1)
    assert stats["fractional"] == frac.sum() > 0 and stats["ip"] == 0
    assert np.all(val[frac] > ip[frac] + 1e-9)  # fractional rows: strictly above the IP
    np.testing.assert_allclose(val[~frac], ip[~frac], atol=1e-9)
    _, vi = dag_max_label(R, tax, True, batch=50)
    np.testing.assert_allclose(vi, ip, atol=1e-9)  # the exact path is unchanged


def multilabel_dag_data(n: int = 160, seed: int = 0):
    tax = fractional_dag()
    rng = np.random.default_rng(seed)
    leaves = list(tax.names[tax.leaves])
    cent = {lab: rng.normal(scale=1.0, size=5) for lab in leaves}
    Y = [tuple(rng.choice(leaves, size=int(rng.integers(1, 3)), replace=False)) for _ in range(n)]
    X = np.stack([sum(cent[lab] for lab in row) for row in Y]) + rng.normal(size=(n, 5))
    return tax, X, Y


def test_lp_training_loss_is_a_convex_upper_bound_with_a_valid_subgradient() -> None:
    import scipy.sparse as sp

    from hierlab.methods.nhsvm.model import HierarchicalHinge

    tax, X, Y = multilabel_dag_data()
    names = {str(v): i for i, v in enumerate(tax.names)}
    rows = [i for i, ys in enumerate(Y) for _ in ys]
    cols = [names[v] for ys in Y for v in ys]
    Yi = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(Y), tax.n_nodes))
    alpha = normalization_alpha(tax, "eq6", T=1.5)
    c = np.sqrt(alpha)
    lp = HierarchicalHinge(X, Yi, tax, c, 1e-3, "leaves", alpha, inference="lp")
    ip = HierarchicalHinge(X, Yi, tax, c, 1e-3, "leaves", alpha, inference="ip")
    rng = np.random.default_rng(1)
    idx = np.arange(len(Y))
    n_frac_rows = 0
    for _ in range(5):
        W = rng.normal(size=(tax.n_nodes, X.shape[1])) * 0.7
        l_lp, G = lp.batch_loss(W, idx)
        l_ip, _ = ip.batch_loss(W, idx)
        assert np.all(l_lp >= l_ip - 1e-9)
        n_frac_rows += int(np.sum(l_lp > l_ip + 1e-9))
        # subgradient inequality of the convex LP loss: l(W') >= l(W) + <G_i x_i, W' - W>
        for _ in range(3):
            W2 = W + rng.normal(size=W.shape) * 0.3
            l2, _ = lp.batch_loss(W2, idx)
            lin = l_lp + np.einsum("in,ind->i", G, (W2 - W)[None, :, :] * X[:, None, :])
            assert np.all(l2 >= lin - 1e-7)
    assert n_frac_rows > 0  # the relaxation matters on this DAG
    with pytest.raises(Exception, match="inference"):
        HierarchicalHinge(X, Yi, tax, c, 1e-3, "leaves", alpha, inference="exact")


def test_estimator_inference_default_lp_and_ip_option() -> None:
    import warnings

    from hierlab.methods.nhsvm.estimators import NHSVMClassifier

    tax, X, Y = multilabel_dag_data(n=120)
    assert NHSVMClassifier().inference == "lp"
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for inf in ("lp", "ip"):
            fits[inf] = NHSVMClassifier(  # eq. (6)'s weights: the LP relaxation is fractional
                taxonomy=tax, lam=1e-3, epochs=4, random_state=0, inference=inf, alpha_rule="eq6"
            ).fit(X, Y)
    assert fits["lp"]._objective_model_.inference == "lp"
    assert fits["ip"]._objective_model_.inference == "ip"
    assert not np.allclose(fits["lp"].coef_, fits["ip"].coef_)  # different training losses
    for est in fits.values():  # prediction is exact (integral sets) either way
        ind = est.decision_path(X).toarray()
        assert set(np.unique(ind)) <= {0, 1}


# ------------------------------------------------------------------ lambda on the paper's scale
def paper_objective_parts(tax, X, y_leaf, alpha):
    """Eq. (10) written out: per row and candidate leaf, the attribute difference (for the
    score difference) and Delta~ of eq. (9); the root is no node of the model."""
    M = tax.n_nodes
    A = tax.ancestor_matrix.toarray().astype(bool)  # A[l, n]: n is an ancestor-or-self of l
    A[:, 0] = False
    attr = np.where(A, np.sqrt(alpha)[None, :], 0.0)  # the normalised class attributes, eq. 5
    rows = []
    for i, yi in enumerate(y_leaf):
        for ly in tax.leaves:
            if ly == yi:
                continue
            sym = A[ly] ^ A[yi]
            rows.append((i, attr[ly] - attr[yi], float(np.sqrt(alpha[sym].sum()))))
    return M, rows


def paper_value(W, X, rows, n, lam):
    """lam ||W||^2 + sum_i max(0, max_y [s(y) - s(y_i) + Delta~]): the summed loss."""
    loss = np.zeros(n)
    for i, diff, delta in rows:
        loss[i] = max(loss[i], float(diff @ (W @ X[i])) + delta)
    return lam * float(np.sum(W * W)) + float(loss.sum())


def test_lam_is_the_papers_lambda_on_the_summed_loss() -> None:
    from hierlab import Taxonomy
    from hierlab.methods.nhsvm.estimators import NHSVMClassifier

    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    rng = np.random.default_rng(3)
    n, d, lam = 30, 2, 2.0
    X = rng.normal(size=(n, d)) + np.repeat(rng.normal(size=(3, d)), 10, axis=0)
    y = np.repeat(tax.leaves, 10)
    alpha = normalization_alpha(tax, "eq6")
    M, rows = paper_objective_parts(tax, X, y, alpha)
    # the oracle: SLSQP on lam ||W||^2 + sum_i xi_i, xi_i >= diff . (W x_i) + Delta~, xi >= 0
    A = np.zeros((len(rows), M * d + n))
    b = np.zeros(len(rows))
    for k, (i, diff, delta) in enumerate(rows):
        A[k, : M * d] = -np.outer(diff, X[i]).ravel()
        A[k, M * d + i] = 1.0
        b[k] = delta
    res = minimize(  # divided by n for SLSQP's line search: the same minimiser
        lambda z: (lam * z[: M * d] @ z[: M * d] + z[M * d :].sum()) / n,
        np.zeros(M * d + n),
        jac=lambda z: np.r_[2 * lam * z[: M * d], np.ones(n)] / n,
        method="SLSQP",
        bounds=[(None, None)] * (M * d) + [(0, None)] * n,
        constraints=[{"type": "ineq", "fun": lambda z: A @ z - b, "jac": lambda z: A}],
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    assert res.success
    est = NHSVMClassifier(
        taxonomy=tax, lam=lam, alpha_rule="eq6", solver="bcfw", epochs=5000, tol=1e-10
    )
    est.fit(X, tax.names[y])
    ours = paper_value(est.W_, X, rows, n, lam)
    assert ours == pytest.approx(res.fun * n, rel=1e-6)
    assert ours <= res.fun * n * (1 + 1e-9)
    assert est.objective_ * n == pytest.approx(ours, rel=1e-9)  # reported per row
    # C = 1 / (2 lam): the scikit-learn form 1/2 ||W||^2 + C sum xi is J / (2 lam)
    C = 1.0 / (2.0 * lam)
    sk = 0.5 * float(np.sum(est.W_**2)) + C * (ours - lam * float(np.sum(est.W_**2)))
    assert sk == pytest.approx(ours / (2 * lam), rel=1e-12)
    # the same lambda on twice the rows (each row duplicated) is half the regularisation per row
    est2 = NHSVMClassifier(
        taxonomy=tax, lam=2 * lam, alpha_rule="eq6", solver="bcfw", epochs=5000, tol=1e-10
    )
    est2.fit(np.vstack([X, X]), np.r_[tax.names[y], tax.names[y]])
    np.testing.assert_allclose(est2.W_, est.W_, atol=1e-5)


def test_reproduction_grid_is_the_papers() -> None:
    from hierlab.lab.reproduce.nhsvm import PAPER_LAMBDAS, _configs, quick_lambdas

    grid = [float(v) for v in PAPER_LAMBDAS.split(",")]
    np.testing.assert_allclose(grid, 10.0 ** np.arange(-8, 3))
    assert quick_lambdas(grid) == [0.1, 1.0]

    class Args:
        quick = False

    cfgs = _configs(Args(), grid)
    rules = {(c["alpha_rule"], c["variant"]) for c in cfgs["NHSVM"]}
    assert ("eq6-directional", "eq10") in rules and ("eq6-directional", "eq13") in rules
    assert len(rules) == 6 and {c["lam"] for c in cfgs["NHSVM"]} == set(grid)


# ------------------------------------------------------------------ SSVM alpha floor
def slsqp_floor(P: np.ndarray, s: np.ndarray, f: np.ndarray, a0: np.ndarray) -> np.ndarray:
    """min sum s / alpha s.t. P alpha <= 1, alpha >= f, by SLSQP from an interior point (and
    trust-constr when SLSQP's line search gives up)."""
    cons = [{"type": "ineq", "fun": lambda a: 1.0 - P @ a, "jac": lambda a: -P}]
    bounds = [(max(fi, 1e-9), 1.0) for fi in f]
    start = 0.5 * (f + a0)  # path sums (1 + beta) / 2 < 1
    res = minimize(
        lambda a: np.sum(s / a),
        start,
        jac=lambda a: -s / a**2,
        bounds=bounds,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 5000},
    )
    if not res.success:
        from scipy.optimize import LinearConstraint

        res = minimize(
            lambda a: np.sum(s / a),
            start,
            jac=lambda a: -s / a**2,
            bounds=bounds,
            constraints=[LinearConstraint(P, -np.inf, 1.0)],
            method="trust-constr",
            options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 20000},
        )
    assert res.success, res.message
    return res.x


@pytest.mark.parametrize("beta", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("seed", range(4))
def test_floored_alpha_step_equals_slsqp(seed: int, beta: float) -> None:
    from hierlab.methods.nhsvm.shared_alpha import shared_alpha_floor

    rng = np.random.default_rng(800 + seed)
    tax = random_tree(rng, int(rng.integers(6, 13)))
    sq = rng.gamma(1.0, size=tax.n_nodes) * (rng.random(tax.n_nodes) < 0.85)
    a0 = normalization_alpha(tax, "eq6")
    a = shared_alpha_floor(sq, tax, beta * a0)
    P = leaf_path_matrix(tax).toarray()
    assert a[0] == 0.0
    assert np.all(P @ a[1:] <= 1 + 1e-12) and np.all(a[1:] >= beta * a0[1:] - 1e-12)
    ref = slsqp_floor(P, sq[1:], beta * a0[1:], a0[1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        ours = np.sum(np.where(sq[1:] > 0, sq[1:] / a[1:], 0.0))
    assert ours <= np.sum(sq[1:] / ref) * (1 + 1e-6)
    assert ours == pytest.approx(np.sum(sq[1:] / ref), rel=1e-5)


def test_floor_zero_is_algorithm_1_and_floor_one_is_alpha0() -> None:
    from hierlab.methods.nhsvm.shared_alpha import alpha_step, shared_alpha, shared_alpha_floor

    rng = np.random.default_rng(9)
    tax = random_tree(rng, 11)
    U = rng.normal(size=(tax.n_nodes, 3))
    U[0] = 0.0  # the root scores every label alike: its vector is 0 in Shared SVM
    a0 = normalization_alpha(tax, "eq6")
    closed = shared_alpha(U, tax)
    closed[0] = 0.0
    np.testing.assert_allclose(alpha_step(U, tax, np.zeros(tax.n_nodes))[0], closed)
    np.testing.assert_allclose(alpha_step(U, tax, None)[0], closed)
    # a tiny floor: the dual solver agrees with the closed form it generalises
    np.testing.assert_allclose(shared_alpha_floor(U, tax, 1e-9 * a0), closed, atol=1e-5)
    np.testing.assert_allclose(shared_alpha_floor(U, tax, a0), a0, atol=1e-12)


def test_ssvm_alpha_floor_bounds_the_learned_alpha() -> None:
    import warnings

    from hierlab.core.exceptions import ParameterError
    from hierlab.methods.nhsvm.estimators import SharedSVMClassifier

    train, _ = make_small()
    tax = train.taxonomy
    a0 = normalization_alpha(tax, "eq6")
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for beta in (0.0, 0.9, 1.0):
            fits[beta] = SharedSVMClassifier(
                taxonomy=tax, rounds=3, epochs_per_alpha=2, alpha_floor=beta, tol=0
            ).fit(train.X, train.y)
    assert np.all(fits[0.9].alpha_[1:] >= 0.9 * a0[1:] - 1e-12)
    np.testing.assert_allclose(fits[1.0].alpha_, a0, atol=1e-12)  # NHSVM's alpha
    assert np.min(fits[0.0].alpha_[1:] / a0[1:]) < 0.9  # Algorithm 1 goes below the floor
    with pytest.raises(ParameterError, match="alpha_floor"):
        SharedSVMClassifier(taxonomy=tax, alpha_floor=0.5, solver="bcfw").fit(train.X, train.y)
