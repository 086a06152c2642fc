"""HR-SVM / HR-LR (seed 001): leaf solvers, block CD, certificate, parallel backends, baselines."""

from __future__ import annotations

import warnings
from typing import Any

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad, minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from hierlab import ParameterError, Taxonomy
from hierlab.core.jit import sparse_row_times_py
from hierlab.core.registry import get_method, make_estimator
from hierlab.core.solver import solve
from hierlab.methods.hr import global_cd, global_lr
from hierlab.methods.hr.dual_cd import (
    binary_dual_cd,
    leaf_dual_objective,
    leaf_primal_objective,
    solve_leaves_dual_cd,
)
from hierlab.methods.hr.estimators import (
    HRLRClassifier,
    HRSVMClassifier,
    OneVsRestLRClassifier,
    OneVsRestSVMClassifier,
)
from hierlab.methods.hr.global_cd import GlobalDualCD
from hierlab.methods.hr.global_lr import GlobalLogisticCD
from hierlab.methods.hr.model import HRProblem, LeafDuals, leaf_labels, logistic_leaf_objective
from hierlab.methods.hr.solver import BlockCoordinateDescent, solve_logistic_leaf


def _binary(n: int = 300, d: int = 30, seed: int = 0, sparse: bool = True):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    if not sparse:
        X = X.toarray()
    w = rng.normal(size=d)
    y = np.sign(np.asarray(X @ w).ravel() + 0.3 * rng.normal(size=n))
    y[y == 0] = 1.0
    return X, y


def _tree() -> Taxonomy:
    return Taxonomy(
        [
            ("r", "a"),
            ("r", "b"),
            ("r", "c"),
            ("a", "a1"),
            ("a", "a2"),
            ("b", "b1"),
            ("b", "bb"),
            ("bb", "bb1"),
            ("bb", "bb2"),
        ]
    )


def _hier_data(tax: Taxonomy, n: int = 120, d: int = 300, seed: int = 0, density: float = 0.05):
    """Text-like data: leaf prototypes are sums of node vectors along the path, plus noise,
    seen through a sparse random mask (so d >> nnz per row, as in text)."""
    rng = np.random.default_rng(seed)
    node_vec = rng.normal(scale=1.0, size=(tax.n_nodes, d))
    proto = np.asarray(tax.ancestor_matrix @ node_vec)
    lab = rng.choice(tax.leaves, size=n)
    X = (proto[lab] + rng.normal(size=(n, d))) * (rng.random((n, d)) < density)
    return X, tax.names[lab].astype(object)


# ---------------------------------------------------------------------- leaf solvers
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("shrinking", [True, False])
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_dual_cd_matches_linearsvc_objective(sparse: bool, shrinking: bool, C: float) -> None:
    X, y = _binary(sparse=sparse)
    ours = binary_dual_cd(X, y, C, tol=1e-9, max_passes=200000, shrinking=shrinking)
    ref = LinearSVC(loss="hinge", fit_intercept=False, C=C, tol=1e-9, max_iter=10**6).fit(X, y)
    f_ours = leaf_primal_objective(X, y, ours.W[0], C)
    f_ref = leaf_primal_objective(X, y, ref.coef_[0], C)
    assert ours.converged[0]
    assert abs(f_ours - f_ref) <= 1e-5 * abs(f_ref)
    # eq. (7): w = sum_i alpha_i y_i x_i with a zero parent, and the dual meets the primal
    np.testing.assert_allclose(ours.W[0], np.asarray(X.T @ (ours.alpha[:, 0] * y)).ravel())
    dual = leaf_dual_objective(X, y, ours.alpha[:, 0])
    assert dual <= f_ours + 1e-9
    assert f_ours - dual <= 1e-6 * f_ours


def test_dual_cd_with_parent_closes_the_leaf_gap() -> None:
    X, y = _binary(n=150, seed=3)
    wp = np.random.default_rng(3).normal(size=X.shape[1])
    res = binary_dual_cd(X, y, 0.7, w_parent=wp, tol=1e-10, max_passes=100000)
    w = res.W[0]
    np.testing.assert_allclose(w, wp + np.asarray(X.T @ (res.alpha[:, 0] * y)).ravel())
    p = leaf_primal_objective(X, y, w, 0.7, w_parent=wp)
    d = leaf_dual_objective(X, y, res.alpha[:, 0], w_parent=wp)
    assert d <= p + 1e-9 and p - d <= 1e-7 * p
    # a generic solver on the smooth dual (eq. 5-6) reaches the same value
    Xd = X.toarray()
    Q = (Xd * y[:, None]) @ (Xd * y[:, None]).T
    b = 1.0 - y * (Xd @ wp)
    ref = minimize(
        lambda a: (0.5 * a @ Q @ a - a @ b, Q @ a - b),
        np.zeros(len(y)),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 0.7)] * len(y),
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 100000},
    )
    assert abs(-ref.fun - d) <= 1e-6 * abs(d)


def test_block_of_leaves_equals_leaves_one_by_one() -> None:
    X, y = _binary(seed=5)
    rng = np.random.default_rng(5)
    Y = np.stack([y, -y, np.where(rng.random(len(y)) < 0.3, 1.0, -1.0)], axis=1)
    Wp = rng.normal(scale=0.3, size=(3, X.shape[1]))
    upper = np.where(rng.random(Y.shape) < 0.1, 0.0, 0.8)  # some pairs switched off
    together = solve_leaves_dual_cd(X, Y, upper, Wp, tol=1e-6, seed=11)
    for k in range(3):
        alone = solve_leaves_dual_cd(X, Y[:, [k]], upper[:, [k]], Wp[[k]], tol=1e-6, seed=11)
        np.testing.assert_allclose(together.W[k], alone.W[0], rtol=0, atol=1e-12)
        assert together.n_passes[k] == alone.n_passes[0]
    assert np.all(together.alpha[upper == 0] == 0)


@pytest.mark.parametrize("shrinking", [True, False])
def test_compiled_pass_equals_numpy_pass(shrinking: bool) -> None:
    """The numba kernel runs the numpy loop's coordinate steps: one pass gives the same
    iterates (to rounding), and the converged block the same weights, duals and pass counts."""
    from hierlab.core.jit import HAVE_NUMBA

    assert HAVE_NUMBA, "numba is part of the dev extras; the compiled path must be tested"
    X, y = _binary(n=150, d=40, seed=7)
    rng = np.random.default_rng(7)
    Y = np.stack([y, -y, np.where(rng.random(len(y)) < 0.3, 1.0, -1.0)], axis=1)
    Wp = rng.normal(scale=0.3, size=(3, X.shape[1]))
    upper = np.where(rng.random(Y.shape) < 0.1, 0.0, 0.8)
    kw = {"tol": 1e-6, "seed": 3, "shrinking": shrinking}
    for passes in (1, 5000):
        a = solve_leaves_dual_cd(X, Y, upper, Wp, max_passes=passes, use_jit=True, **kw)
        b = solve_leaves_dual_cd(X, Y, upper, Wp, max_passes=passes, use_jit=False, **kw)
        np.testing.assert_allclose(a.W, b.W, rtol=0, atol=1e-10)
        np.testing.assert_allclose(a.alpha, b.alpha, rtol=0, atol=1e-10)
        np.testing.assert_array_equal(a.n_passes, b.n_passes)
    assert a.converged.all() and np.abs(a.W - Wp).max() > 0.1


def test_logistic_leaf_gradient_and_scipy_minimum() -> None:
    X, y = _binary(n=120, d=6, seed=2, sparse=False)
    rng = np.random.default_rng(2)
    wp = rng.normal(size=6)
    weight = (rng.random(120) > 0.2).astype(float)
    C = 0.8

    def f(w: np.ndarray) -> float:  # eq. (8) written out independently
        z = X @ w
        return 0.5 * np.sum((w - wp) ** 2) + C * np.sum(weight * np.log1p(np.exp(-y * z)))

    def g(w: np.ndarray) -> np.ndarray:
        return logistic_leaf_objective(w, X, y, C, wp, weight)[1]

    w0 = rng.normal(size=6)
    assert logistic_leaf_objective(w0, X, y, C, wp, weight)[0] == pytest.approx(f(w0))
    assert check_grad(f, g, w0) < 1e-5
    ours, _ = solve_logistic_leaf(X, y, C, wp, weight, tol=1e-10)
    ref = minimize(f, np.zeros(6), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(ours, ref.x, atol=1e-5)
    assert f(ours) <= ref.fun + 1e-9


# ---------------------------------------------------------------------- whole objective
def _flat_problem(seed: int = 0):
    tax = Taxonomy.flat(["u", "v", "w"])
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=1.5, size=(3, 3))
    lab = rng.integers(0, 3, size=36)
    X = centers[lab] + rng.normal(size=(36, 3))
    y = np.array(["u", "v", "w"], dtype=object)[lab]
    return tax, X, y


def _direct_hr_svm(tax: Taxonomy, X: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Eq. (2) as a QP in (W, xi), solved by SLSQP: the oracle."""
    n, d = X.shape
    N = tax.n_nodes
    leaves = tax.leaves
    Y = np.where(tax.index(y)[:, None] == leaves[None, :], 1.0, -1.0)
    nw = N * d

    def obj(z: np.ndarray) -> tuple[float, np.ndarray]:
        W = z[:nw].reshape(N, d)
        g = np.zeros_like(W)
        f = 0.0
        for k in range(N):
            p = tax.parent[k]
            diff = W[k] - (W[p] if p >= 0 else 0.0)
            f += 0.5 * diff @ diff
            g[k] += diff
            if p >= 0:
                g[p] -= diff
        xi = z[nw:]
        return f + C * xi.sum(), np.concatenate([g.ravel(), np.full(len(xi), C)])

    rows = []
    for j, leaf in enumerate(leaves):  # xi_ij >= 1 - y_ij w_leaf^T x_i
        for i in range(n):
            r = np.zeros(nw + n * len(leaves))
            r[leaf * d : (leaf + 1) * d] = Y[i, j] * X[i]
            r[nw + j * n + i] = 1.0
            rows.append(r)
    Acon = np.array(rows)
    cons = [{"type": "ineq", "fun": lambda z: Acon @ z - 1.0, "jac": lambda z: Acon}]
    bounds = [(None, None)] * nw + [(0.0, None)] * (n * len(leaves))
    z0 = np.concatenate([np.zeros(nw), np.ones(n * len(leaves))])
    res = minimize(
        obj,
        z0,
        jac=True,
        constraints=cons,
        bounds=bounds,
        method="SLSQP",
        options={"ftol": 1e-13, "maxiter": 2000},
    )
    assert res.success, res.message
    return res.x[:nw].reshape(N, d)


def test_flat_hr_svm_matches_direct_solve() -> None:
    tax, X, y = _flat_problem()
    W_ref = _direct_hr_svm(tax, X, y, C=0.5)
    est = HRSVMClassifier(
        taxonomy=tax, solver="block-cd", C=0.5, max_iter=3000, tol=1e-9, inner_tol=1e-3,
        fit_intercept=False, loss="hinge",
    ).fit(X, y)
    assert est.converged_
    np.testing.assert_allclose(est.coef_, W_ref, atol=1e-4 * np.abs(W_ref).max())
    # the root is the closed form of eq. (4) over its children
    leaves = tax.leaves
    np.testing.assert_allclose(
        est.coef_[tax.root], est.coef_[leaves].sum(0) / (len(leaves) + 1), atol=1e-6
    )


def _deeper_tree_and_its_optimum():
    """A depth-2 tree, 32 rows in 3 dimensions, and the SLSQP optimum of eq. (2) at C = 0.3."""
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])
    rng = np.random.default_rng(4)
    lab = rng.choice(tax.leaves, size=32)
    X = np.asarray(tax.ancestor_matrix @ rng.normal(size=(tax.n_nodes, 3)))[lab]
    X = X + rng.normal(size=X.shape)
    y = tax.names[lab].astype(object)
    W_ref = _direct_hr_svm(tax, X, y, C=0.3)
    return tax, X, y, W_ref


@pytest.mark.parametrize("solver", ["block-cd", "global-cd"])
def test_hr_svm_deeper_tree_matches_direct_solve(solver: str) -> None:
    tax, X, y, W_ref = _deeper_tree_and_its_optimum()
    est = HRSVMClassifier(
        taxonomy=tax, solver=solver, C=0.3, max_iter=5000, tol=1e-9, inner_tol=1e-3,
        fit_intercept=False, loss="hinge",
    ).fit(X, y)
    np.testing.assert_allclose(est.coef_, W_ref, atol=1e-4 * np.abs(W_ref).max())
    assert np.all(est.intercept_ == 0)


@pytest.mark.parametrize("solver", ["block-cd", "global-cd"])
def test_hr_svm_intercept_is_eq2_with_a_constant_feature(solver: str) -> None:
    """``fit_intercept=True`` (the default): eq. (2) on ``[X, 1]`` solved by SLSQP, its last
    column the (hierarchically regularised) bias ``intercept_``, the rest ``coef_``; the
    scores are ``X w_n + b_n``."""
    tax, X, y, _ = _deeper_tree_and_its_optimum()
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    W_ref = _direct_hr_svm(tax, Xb, y, C=0.3)
    est = HRSVMClassifier(
        taxonomy=tax, solver=solver, C=0.3, max_iter=5000, tol=1e-9, inner_tol=1e-3, loss="hinge"
    ).fit(sp.csr_matrix(X), y)
    scale = np.abs(W_ref).max()
    np.testing.assert_allclose(est.coef_, W_ref[:, :-1], atol=1e-4 * scale)
    np.testing.assert_allclose(est.intercept_, W_ref[:, -1], atol=1e-4 * scale)
    assert np.abs(est.intercept_).max() > 1e-2  # a bias the data asks for
    np.testing.assert_allclose(
        est.leaf_scores(X), X @ est.coef_[tax.leaves].T + est.intercept_[tax.leaves]
    )


def test_leaf_duals_store_blocks_sparse() -> None:
    rng = np.random.default_rng(0)
    A = rng.uniform(size=(40, 9)) * (rng.uniform(size=(40, 9)) < 0.2)
    duals = LeafDuals(40, 9)
    duals.set_block(np.arange(9), np.zeros((40, 9)))
    assert duals.nnz == 0
    for cols in (np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])):
        duals.set_block(cols, A[:, cols])
    assert duals.nnz == np.count_nonzero(A)
    np.testing.assert_array_equal(duals.block(np.array([8, 0, 4])), A[:, [8, 0, 4]])
    np.testing.assert_array_equal(duals.tocsc().toarray(), A)
    cols = np.array([8, 0, 4])
    M = duals.block_csc(cols)  # what a leaf block's task receives and returns
    np.testing.assert_array_equal(M.toarray(), A[:, cols])
    copy = LeafDuals(40, 9)
    copy.set_block_csc(cols, M)
    np.testing.assert_array_equal(copy.tocsc().toarray()[:, cols], A[:, cols])
    assert copy.nnz == np.count_nonzero(A[:, cols])


def test_block_cd_cuts_the_leaves_into_whole_rounds_of_workers() -> None:
    from hierlab.methods.hr.solver import BlockCoordinateDescent

    cols = np.arange(645)
    for workers, want in ((1, 3), (2, 4), (3, 3), (4, 4), (5, 5), (1000, 645)):
        blocks = BlockCoordinateDescent(leaf_block=256)._blocks(cols, workers)
        np.testing.assert_array_equal(np.concatenate(blocks), cols)
        assert len(blocks) == want and max(len(b) for b in blocks) <= 256


def test_leaf_blocks_travel_as_distinct_parents_and_moved_entries() -> None:
    """A block's parents' rows go once per parent, its result as the entries that moved: the
    leaves' weights come back exactly, an entry moved to 0 or left at its parent's value too."""
    from hierlab.methods.hr.solver import _leaf_rows, _parents, _Tree

    tax = Taxonomy.from_parent_array([-1, 0, 0, 1, 1, 1, 2, 2])
    tree = _Tree.of(tax)
    rng = np.random.default_rng(1)
    W = rng.normal(size=(tax.n_nodes, 7))
    nodes = np.array([3, 6, 4, 7, 5, 0])  # root included: its parent's row is zeros
    P, pos = _parents(tree, W, nodes)
    assert P.shape == (3, 7)  # parents 1, 2 and none (the root's)
    np.testing.assert_array_equal(P[pos], tree.parent_rows(W, nodes))
    Wb = P[pos].copy()
    Wb[0, 2], Wb[3, 5], Wb[5, 0] = 0.0, 1e-300, 2.5
    r, c = np.nonzero(Wb != P[pos])
    np.testing.assert_array_equal(_leaf_rows((P, pos), (r, c, Wb[r, c])), Wb)
    assert len(r) == 3


def test_hr_svm_dual_coef_gives_the_leaves_by_eq7() -> None:
    """``dual_coef_`` (sparse) holds the leaves' duals: ``w_n = w_parent + sum_i alpha_in y_in
    x_i`` (eq. 7) at the fitted weights, and ``0 <= alpha <= C``."""
    tax = _tree()
    X, y = _hier_data(tax, seed=3)
    est = HRSVMClassifier(taxonomy=tax, C=0.5, max_iter=500, tol=1e-8, loss="hinge").fit(X, y)
    alpha = est.dual_coef_
    assert sp.issparse(alpha) and alpha.shape == (X.shape[0], len(tax.leaves))
    assert 0 < alpha.nnz < alpha.shape[0] * alpha.shape[1]
    a = alpha.toarray()
    assert a.min() >= 0 and a.max() <= 0.5 + 1e-12
    Y = np.where(tax.index(y)[:, None] == tax.leaves[None, :], 1.0, -1.0)
    U = np.asarray(X.T @ (a * Y)).T
    W = est.coef_
    np.testing.assert_allclose(W[tax.leaves] - W[tax.parent[tax.leaves]], U, atol=1e-6)


def _eq_by_bfgs(fit_intercept: bool, leaf_loss: Any) -> tuple:
    """Seed 001's objective ``1/2 sum ||w_n - w_pi(n)||^2 + C sum leaf_loss(y z)`` at C = 0.5
    on a small tree, minimised by BFGS (on ``[X, 1]`` with ``fit_intercept``): ``(tax, X0, y,
    X, BFGS result)``."""
    tax = _tree()
    X0, y = _hier_data(tax, n=60, d=12, seed=1, density=0.5)
    X = np.hstack([X0, np.ones((X0.shape[0], 1))]) if fit_intercept else X0
    N, d = tax.n_nodes, X.shape[1]
    Y = np.where(tax.index(y)[:, None] == tax.leaves[None, :], 1.0, -1.0)

    def J(z: np.ndarray) -> float:
        W = z.reshape(N, d)
        P = np.where((tax.parent >= 0)[:, None], W[np.maximum(tax.parent, 0)], 0.0)
        return 0.5 * np.sum((W - P) ** 2) + 0.5 * np.sum(leaf_loss(Y * (X @ W[tax.leaves].T)))

    ref = minimize(J, np.zeros(N * d), method="BFGS", options={"gtol": 1e-9})
    return tax, X0, y, X, ref


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("solver", ["global-cd", "block-cd"])
def test_hr_lr_matches_direct_solve_of_eq3(solver: str, fit_intercept: bool) -> None:
    """Eq. (3) by BFGS; with ``fit_intercept`` on ``[X, 1]`` (the bias, regularised)."""
    tax, X0, y, _, ref = _eq_by_bfgs(fit_intercept, lambda m: np.logaddexp(0.0, -m))
    C = 0.5
    inner = {"inner_tol": 1e-6} if solver == "block-cd" else {}
    est = HRLRClassifier(
        taxonomy=tax, C=C, solver=solver, max_iter=3000, tol=1e-10, fit_intercept=fit_intercept,
        **inner,
    )  # fmt: skip
    est.fit(X0, y)
    assert est.converged_ and est.solver_ == solver
    W = np.hstack([est.coef_, est.intercept_[:, None]]) if fit_intercept else est.coef_
    np.testing.assert_allclose(W.ravel(), ref.x, atol=1e-4)
    assert est.objective_ == pytest.approx(ref.fun, rel=1e-8)


@pytest.mark.parametrize("loss", ["hinge", "logistic"])
def test_certificate_bounds_the_optimum(loss: str) -> None:
    tax = _tree()
    X, y = _hier_data(tax, seed=7)
    prob = HRProblem.from_labels(X, tax.index(y), tax, 1.0, loss)
    res = solve(BlockCoordinateDescent(max_iter=400), prob, rtol=1e-5)
    assert res.converged and res.stop_reason == "gap"
    opt = res.history[-1].upper
    uppers = [s.upper for s in res.history]
    assert np.all(np.diff(uppers) <= 0)
    for s in res.history:
        assert s.lower is not None and s.lower <= opt + 1e-9  # certified: below the optimum
        assert s.extra["dual"] <= s.extra["primal"] + 1e-9
        assert s.extra["kkt"] >= 0
    assert res.history[-1].extra["kkt"] < res.history[0].extra["kkt"]
    # eq. (4) holds at the internal nodes of the final iterate (up to the tolerance)
    W = res.coef
    for p in tax.internal_nodes:
        kids = tax.children(p)
        wp = W[tax.parent[p]] if tax.parent[p] >= 0 else 0.0
        np.testing.assert_allclose(W[p], (wp + W[kids].sum(0)) / (len(kids) + 1), atol=1e-2)


# ---------------------------------------------------------------------- parallel backends
@pytest.mark.parametrize("cls", [HRSVMClassifier, HRLRClassifier])
def test_serial_joblib_and_dask_give_the_same_weights(cls: type) -> None:
    distributed = pytest.importorskip("distributed")
    tax = _tree()
    X, y = _hier_data(tax, n=100, seed=9)
    Xs = sp.csr_matrix(X)
    kw: dict = {"C": 1.0, "max_iter": 12, "tol": 1e-7, "inner_tol": 1e-3, "solver": "block-cd"}
    if cls is HRSVMClassifier:  # block CD (the paper's) solves the hinge
        kw["loss"] = "hinge"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        serial = cls(taxonomy=tax, n_jobs=1, **kw).fit(Xs, y)
        par = cls(taxonomy=tax, n_jobs=2, **kw).fit(Xs, y)
        with (
            distributed.LocalCluster(
                n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster),
            joblib.parallel_backend("dask"),
        ):
            dask = cls(taxonomy=tax, n_jobs=2, **kw).fit(Xs, y)
    assert serial.n_iter_ == par.n_iter_ == dask.n_iter_
    np.testing.assert_allclose(par.coef_, serial.coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(dask.coef_, serial.coef_, rtol=0, atol=1e-8)


def test_dense_and_sparse_agree() -> None:
    tax = _tree()
    X, y = _hier_data(tax, seed=2)
    a = HRSVMClassifier(taxonomy=tax, max_iter=20).fit(X, y)
    b = HRSVMClassifier(taxonomy=tax, max_iter=20).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)
    np.testing.assert_array_equal(a.predict(X), b.predict(sp.csr_matrix(X)))


# ---------------------------------------------------------------------- labels, baselines
def test_leaf_labels_from_ids_and_indicator() -> None:
    tax = _tree()
    names = ["a1", "bb", "b", "r", "c"]  # leaf, internal, internal, root, leaf
    ids = tax.index(names)
    pos, exc = leaf_labels(ids, tax)
    leaves = tax.names[tax.leaves].tolist()
    P = pos.toarray()
    for i, nm in enumerate(names):
        for k, lf in enumerate(leaves):
            assert P[i, k] == (lf == nm)
            below = nm in tax.names[tax.ancestors(lf, include_self=True)] and nm != lf
            assert bool(exc[i, k]) == below  # brute force: internal label above the leaf
    # multi-label: "b" resolved by "b1" below it -> bb1/bb2 are plain negatives for that row
    ind = sp.csr_matrix(
        (np.ones(3), ([0, 0, 1], tax.index(["b", "b1", "a"]))), shape=(2, tax.n_nodes)
    )
    pos2, exc2 = leaf_labels(ind, tax)
    assert pos2.toarray()[0, leaves.index("b1")]
    assert exc2 is not None and not exc2.toarray()[0].any()
    assert exc2.toarray()[1, [leaves.index("a1"), leaves.index("a2")]].all()


def test_multilabel_fit_and_predict() -> None:
    tax = _tree()
    X, y = _hier_data(tax, n=150, seed=3)
    y_ml = [(lab,) if i % 3 else (lab, "c") for i, lab in enumerate(y)]
    est = HRSVMClassifier(taxonomy=tax, max_iter=15, tol=0.05).fit(X, y_ml)
    pred = est.predict(X)
    assert all(isinstance(p, tuple) and len(p) >= 1 for p in pred)
    assert all(set(p) <= set(tax.names[tax.leaves]) for p in pred)


def _svm_dual_exact(Xb: np.ndarray, yk: np.ndarray, C: float, loss: str) -> np.ndarray:
    """An independent oracle for one leaf's binary SVM, ``min 1/2 ||w||^2 + C sum
    loss(1 - y_i w.x_i)`` on ``Xb`` (with a column of ones for a regularised bias, as
    liblinear): its dual ``min_a 1/2 a^T (Q + D) a - sum a`` with ``Q = (y y^T) o (X X^T)``,
    ``0 <= a <= C`` and ``D = 0`` (hinge), or ``a >= 0`` and ``D = I / (2C)`` (squared hinge),
    solved by scipy's L-BFGS-B to its machine-precision stop; ``w = sum_i a_i y_i x_i``. (A
    liblinear run asked for tol 1e-12 stalls at its iteration cap instead: 1e6 passes, 1.6 s
    per leaf.) Shape ``(n_columns,)``."""
    Z = Xb * yk[:, None].astype(float)
    Q = Z @ Z.T
    if loss == "squared_hinge":
        Q = Q + np.eye(len(yk)) / (2.0 * C)
    bounds = [(0.0, C if loss == "hinge" else None)] * len(yk)
    res = minimize(
        lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(len(yk)), jac=True,
        method="L-BFGS-B", bounds=bounds,
        options={"ftol": 0.0, "gtol": 1e-13, "maxiter": 10**5, "maxfun": 10**5},
    )  # fmt: skip
    return np.asarray(Z.T @ res.x)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ovr_baselines_equal_liblinear_per_leaf(fit_intercept: bool) -> None:
    """Each leaf's problem is liblinear's L1-loss SVM, with its (regularised) intercept when
    ``fit_intercept`` (the default): liblinear per leaf and global CD alike."""
    tax = _tree()
    X, y = _hier_data(tax, seed=5)
    kw = {"C": 0.5, "fit_intercept": fit_intercept, "loss": "hinge"}
    ovr = OneVsRestSVMClassifier(taxonomy=tax, solver="liblinear", **kw).fit(X, y)
    # global CD to a tiny certified gap, against the exact dual optimum
    glob = OneVsRestSVMClassifier(taxonomy=tax, gap_tol=1e-12, max_iter=20000, **kw).fit(X, y)
    assert glob.solver_ == "global-cd" and glob.converged_
    assert glob.dual_bound_ <= glob.objective_ <= glob.dual_bound_ * (1 + 1e-12)
    ids = tax.index(y)
    for leaf in tax.leaves:
        yk = np.where(ids == leaf, 1, -1)
        ref = LinearSVC(
            C=0.5, loss="hinge", fit_intercept=fit_intercept, tol=1e-4, max_iter=1000,
            random_state=0,
        )  # fmt: skip
        ref.fit(X, yk)
        np.testing.assert_allclose(ovr.coef_[leaf], ref.coef_[0], atol=1e-10)
        assert ovr.intercept_[leaf] == pytest.approx(
            ref.intercept_[0] if fit_intercept else 0.0, abs=1e-10
        )
        Xb = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
        exact = _svm_dual_exact(Xb, yk, 0.5, "hinge")
        exact = exact if fit_intercept else np.append(exact, 0.0)
        ours = np.append(glob.coef_[leaf], glob.intercept_[leaf])
        np.testing.assert_allclose(ours, exact, atol=1e-5 * np.abs(exact).max())
    assert np.all(ovr.coef_[tax.internal_nodes] == 0)
    assert np.all(glob.intercept_[tax.internal_nodes] == 0)
    assert np.all(glob.coef_[tax.internal_nodes] == 0)
    assert ovr.score(X, y) > 0.5


@pytest.mark.parametrize("blocks", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_ovr_lr_global_cd_equals_logistic_regression_per_leaf(
    sparse: bool, fit_intercept: bool, blocks: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-vs-rest LR's default (every leaf's logistic dual by uncoupled global CD, all
    at once or, ``blocks``, two leaves at a time as on many classes) reaches each leaf's own
    L2-regularised logistic regression (scikit-learn's L-BFGS to a tiny tolerance, on
    ``[X, 1]`` without its own intercept when ``fit_intercept``: the bias regularised as
    liblinear's), certified, with the internal rows at 0; liblinear per leaf (the paper
    preset) gives the same weights."""
    tax = _tree()
    X, y = _hier_data(tax, seed=5)
    if blocks:  # duals of two leaves per block
        monkeypatch.setattr(global_lr, "ALPHA_ENTRIES", 2 * X.shape[0])
    Xin = sp.csr_matrix(X) if sparse else X
    kw = {"C": 0.5, "fit_intercept": fit_intercept}
    glob = OneVsRestLRClassifier(taxonomy=tax, gap_tol=1e-12, max_iter=20000, **kw).fit(Xin, y)
    assert glob.solver_ == "global-cd" and glob.converged_
    assert glob.dual_bound_ <= glob.objective_ <= glob.dual_bound_ * (1 + 1e-12)
    lib = OneVsRestLRClassifier(taxonomy=tax, solver="liblinear", tol=1e-10, **kw).fit(Xin, y)
    ids = tax.index(y)
    Xb = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    for leaf in tax.leaves:
        yk = np.where(ids == leaf, 1, -1)
        exact = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-12, max_iter=10**5)
        w = exact.fit(Xb, yk).coef_[0]
        for est in (glob, lib):
            ours = np.append(est.coef_[leaf], est.intercept_[leaf]) if fit_intercept else (
                est.coef_[leaf]
            )
            np.testing.assert_allclose(ours, w, atol=1e-6 * np.abs(w).max())
    assert np.all(glob.coef_[tax.internal_nodes] == 0)
    assert glob.objective_ == pytest.approx(lib.objective_, rel=1e-9)


def test_registry_entries_and_validation() -> None:
    for name in ("hr-svm", "hr-lr", "ovr-svm", "ovr-lr"):
        spec = get_method(name)
        # the logistic loss under-fits text at C = 1: its methods default to C = 10
        assert spec.param("C").default == (10.0 if name.endswith("lr") else 1.0)
        assert make_estimator(name).C == spec.param("C").default
        assert spec.multilabel and spec.bounds
    est = make_estimator("hr-svm", C=2.0, max_iter=5, solver="block-cd", n_jobs=1)
    assert isinstance(est, HRSVMClassifier) and est.C == 2.0
    with pytest.raises(ParameterError):
        make_estimator("hr-lr", C=-1.0)
    X, y = _hier_data(_tree(), n=40)
    with pytest.raises(ParameterError):
        HRSVMClassifier(taxonomy=_tree(), C=0.0).fit(X, y)


# ---------------------------------------------------------------------- global dual CD
@pytest.mark.parametrize("shrinking", [True, False])
def test_global_dual_cd_matches_direct_solve(shrinking: bool) -> None:
    """Exact coordinate ascent on the whole dual reaches the SLSQP optimum of eq. (2)."""
    tax, X, y, W_ref = _deeper_tree_and_its_optimum()
    prob = HRProblem.from_labels(X, tax.index(y), tax, 0.3, "hinge")
    res = solve(GlobalDualCD(max_iter=3000, certify_every=1, shrinking=shrinking), prob, rtol=1e-10)
    assert res.converged
    np.testing.assert_allclose(res.coef, W_ref, atol=1e-6 * np.abs(W_ref).max())


def _labels_with_internal_and_empty_rows(tax: Taxonomy):
    """Multi-label rows, some labelled with an internal node (switched-off pairs), and an
    empty row (its duals sit at the box's top)."""
    X, y = _hier_data(tax, n=90, d=60, seed=11, density=0.2)
    X[5] = 0.0
    ids = tax.index(y)
    rows, cols = list(range(len(ids))), list(ids)
    for i in range(0, len(ids), 7):  # a second leaf label
        rows.append(i)
        cols.append(tax.index(["c"])[0])
    for i in range(3, len(ids), 11):  # an internal label alone: excluded below it
        cols[i] = tax.index(["bb"])[0]
    Y = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(ids), tax.n_nodes))
    return X, Y


def test_global_dual_cd_equals_block_cd_on_multilabel_and_excluded_pairs() -> None:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, "hinge")
    assert prob.excluded is not None
    glob = solve(GlobalDualCD(max_iter=5000), prob, rtol=1e-11)
    block = solve(BlockCoordinateDescent(max_iter=5000, inner_tol_min=1e-10), prob, rtol=1e-11)
    assert glob.converged and block.converged
    scale = np.abs(block.coef).max()
    np.testing.assert_allclose(glob.coef, block.coef, atol=1e-4 * scale)
    s = glob.history[-1]
    assert s.lower <= s.upper and s.upper - s.lower <= 1e-10 * s.upper


@pytest.mark.parametrize(("shrinking", "coupled"), [(True, True), (False, True), (True, False)])
@pytest.mark.parametrize("sparse", [True, False])
def test_global_dual_cd_compiled_equals_python(
    sparse: bool, shrinking: bool, coupled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X) if sparse else X, Y, tax, 0.7, "hinge")
    runs = []
    for jit in (True, False):
        if not jit:  # the pass's helpers in Python too, not only its loop over examples
            for name, fn in (
                ("ENTER_ROW", global_cd._enter_row),
                ("SCORES_ON_PATHS", global_cd._scores_on_paths),
                ("VISIT", global_cd._visit_leaves),
                ("WRITE_ROW", global_cd._write_row),
                ("GROWN", global_cd._grown),
                ("ROW_TIMES", sparse_row_times_py),
                ("PATH_STEP", global_cd._path_step),
                ("UPDATE_S", global_cd._update_s),
                ("BY_EXAMPLE", global_cd._by_example),
            ):
                monkeypatch.setattr(global_cd, name, fn)
        solver = GlobalDualCD(
            max_iter=7, use_jit=jit, shrinking=shrinking, full_every=3, coupled=coupled
        )
        with pytest.warns(ConvergenceWarning):  # 7 passes: stopped on purpose
            res = solve(solver, prob, rtol=0.0)
        assert solver.alpha is not None
        runs.append((res.coef, solver.alpha.tocsc().toarray(), [s.upper for s in res.history]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == runs[1][2]


def test_global_certificate_equals_the_models_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean bounds (no dense (n_samples, n_leaves) array) are the model's J(W) and
    D(alpha) at random feasible duals, with ``W = A S(alpha)``."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, C, "hinge")
    rng = np.random.default_rng(2)
    n, L = X.shape[0], len(tax.leaves)
    upper = C * prob.weights(np.arange(L))
    dense = upper * rng.uniform(size=(n, L)) * (rng.uniform(size=(n, L)) < 0.4)
    S = np.asarray(tax.ancestor_matrix[tax.leaves].T @ (X.T @ (dense * prob.signs(np.arange(L)))).T)
    anc = sp.csr_matrix(tax.ancestor_matrix[tax.leaves])
    anc.sort_indices()
    ptr, idx = anc.indptr.astype(np.int64), anc.indices.astype(np.int64)
    ST = np.ascontiguousarray(S.T)
    WLT = global_cd.path_sums(ST, ptr, idx)
    np.testing.assert_allclose(WLT, (tax.ancestor_matrix @ S)[tax.leaves].T, atol=1e-12)
    np.testing.assert_array_equal(global_cd._path_sums_numpy(ST, ptr, idx), WLT)
    for chunk in (1, 7, 10**6):  # by node, a block of features at a time: the same sums
        monkeypatch.setattr(global_cd, "CHUNK", chunk)
        np.testing.assert_array_equal(global_cd.path_sums_by_node(ST, ptr, idx), WLT.T)
    primal, dual = global_cd._bounds(
        prob, sp.csr_matrix(X), np.ascontiguousarray(S.T), float(dense.sum()), ptr, idx
    )
    duals = LeafDuals(n, L)
    duals.set_block(np.arange(L), dense)
    ref = prob.certificate(np.asarray(tax.ancestor_matrix @ S), duals)
    assert primal == pytest.approx(ref["primal"], rel=1e-12)
    assert dual == pytest.approx(ref["dual"], rel=1e-12)


@pytest.mark.parametrize("sparse", [True, False])
def test_hr_svm_global_cd_option_reaches_block_cds_optimum(sparse: bool) -> None:
    tax = _tree()
    X, y = _hier_data(tax, seed=9)
    X = sp.csr_matrix(X) if sparse else X
    kw = {"taxonomy": tax, "C": 0.5, "max_iter": 3000, "tol": 1e-9, "loss": "hinge"}
    glob = HRSVMClassifier(solver="global-cd", **kw).fit(X, y)
    block = HRSVMClassifier(solver="block-cd", inner_tol=1e-4, **kw).fit(X, y)
    assert glob.solver_ == "global-cd" and block.solver_ == "block-cd"
    assert glob.converged_ and block.converged_
    np.testing.assert_allclose(glob.coef_, block.coef_, atol=1e-4 * np.abs(block.coef_).max())
    np.testing.assert_array_equal(glob.predict(X), block.predict(X))
    assert sp.issparse(glob.dual_coef_) and glob.dual_coef_.shape == block.dual_coef_.shape


# ---------------------------------------------------------------------- global logistic dual CD
@pytest.mark.parametrize("C", [0.05, 1.0, 20.0])
def test_logistic_pair_step_solves_the_pairs_problem(C: float) -> None:
    """The pair's step (Newton on alpha or on C - alpha) reaches the root of the dual's
    partial derivative a (z - alpha) + b + log(z / (C - z)) on (0, C), found independently
    by bisection (scipy's brentq), from anywhere in the box."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(int(C * 100))
    for _ in range(300):
        a, b = rng.uniform(0.0, 10.0), rng.normal(scale=5.0)
        z_old = C * rng.uniform(1e-9, 1.0 - 1e-9)
        z, _, g0 = global_lr._pair_step(z_old, a, b, C, 1e-12)
        assert 0.0 < z < C

        def gp(u: float, a: float = a, b: float = b, z_old: float = z_old) -> float:
            return a * (u - z_old) + b + np.log(u / (C - u))

        root = brentq(gp, C * 1e-300, C * (1 - 1e-16), xtol=1e-300, rtol=1e-15)
        assert z == pytest.approx(root, rel=1e-8, abs=1e-12 * C)
        assert g0 == pytest.approx(abs(gp(z_old)), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("sweeps", [1, 3])
def test_global_logistic_cd_equals_block_cd_on_multilabel_and_excluded_pairs(sweeps: int) -> None:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, "logistic")
    assert prob.excluded is not None
    glob = solve(GlobalLogisticCD(max_iter=3000, sweeps=sweeps), prob, rtol=1e-11)
    block = solve(BlockCoordinateDescent(max_iter=5000, inner_tol_min=1e-10), prob, rtol=1e-9)
    assert glob.converged and block.converged
    np.testing.assert_allclose(glob.coef, block.coef, atol=1e-3 * np.abs(block.coef).max())
    s = glob.history[-1]
    assert s.lower <= s.upper and s.upper - s.lower <= 1e-10 * s.upper
    # every state's bound is certified: at most the optimum, and the primal at least it
    opt = HRProblem.certificate(prob, block.coef)["primal"]
    assert all(h.lower <= opt * (1 + 1e-12) <= h.upper * (1 + 2e-9) for h in glob.history)


def test_global_logistic_duals_stay_in_the_box_and_off_pairs_at_zero() -> None:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, C, "logistic")
    solver = GlobalLogisticCD(max_iter=40, certify_every=40)  # coef: the last pass's W
    with pytest.warns(ConvergenceWarning):
        solve(solver, prob, rtol=1e-12)
    a = solver.alpha
    assert a is not None and a.shape == (X.shape[0], len(tax.leaves))
    off = prob.excluded.toarray()
    assert np.all(a[off] == 0.0)
    assert np.all((a[~off] > 0.0) & (a[~off] < C))
    on_empty = ~off[5]
    np.testing.assert_array_equal(a[5, on_empty], C / 2)  # the empty row: entropy's optimum
    # S^T kept by the pass is S(alpha) of the duals it holds
    L = len(tax.leaves)
    S = tax.ancestor_matrix[tax.leaves].T @ (X.T @ (a * prob.signs(np.arange(L)))).T
    W = np.asarray(tax.ancestor_matrix @ S)
    np.testing.assert_allclose(solver.coef, W, atol=1e-10)


def test_global_logistic_bounds_equal_the_definitions() -> None:
    """:func:`logistic_bounds` (row blocks, no dense (n, L) labels) is eq. (3) at ``W = A S``
    and ``sum C H(alpha / C) - 1/2 ||S||^2`` at random feasible duals, and the start is
    liblinear's ``alpha = a0 c`` with its own ``S``."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    Xs = sp.csr_matrix(X)
    prob = HRProblem.from_labels(Xs, Y, tax, C, "logistic")
    rng = np.random.default_rng(3)
    n, L = X.shape[0], len(tax.leaves)
    cw = prob.weights(np.arange(L))
    alpha = C * cw * rng.uniform(size=(n, L))
    Ysg = prob.signs(np.arange(L))
    S = np.asarray(tax.ancestor_matrix[tax.leaves].T @ (X.T @ (alpha * Ysg)).T)
    anc = sp.csr_matrix(tax.ancestor_matrix[tax.leaves])
    anc.sort_indices()
    ptr, idx = anc.indptr.astype(np.int64), anc.indices.astype(np.int64)
    labels = (sp.csr_matrix(prob.positive), sp.csr_matrix(prob.excluded))
    primal, dual = global_lr.logistic_bounds(
        prob, Xs, np.ascontiguousarray(S.T), alpha, ptr, idx, labels, chunk=7
    )
    W = np.asarray(tax.ancestor_matrix @ S)
    assert primal == pytest.approx(prob.certificate(W)["primal"], rel=1e-12)
    q = alpha[cw > 0] / C
    ent = -(q * np.log(q) + (1 - q) * np.log(1 - q))
    assert dual == pytest.approx(C * ent.sum() - 0.5 * (S**2).sum(), rel=1e-12)
    a0, ST0 = global_lr._start(prob, Xs, labels, 1e-3)
    np.testing.assert_array_equal(a0, 1e-3 * cw)
    S0 = tax.ancestor_matrix[tax.leaves].T @ (X.T @ (a0 * Ysg)).T
    np.testing.assert_allclose(ST0, np.asarray(S0).T, atol=1e-15)


@pytest.mark.parametrize("sparse", [True, False])
def test_global_logistic_cd_compiled_equals_python(
    sparse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X) if sparse else X, Y, tax, 0.7, "logistic")
    runs = []
    for jit in (True, False):
        if not jit:  # the pass's helpers in Python too
            for name, fn in (
                ("NEWTON", global_lr._newton),
                ("PAIR_STEP", global_lr._pair_step),
                ("VISIT_EXAMPLE", global_lr._visit_example),
                ("ENTER_ROW", global_cd._enter_row),
                ("ROW_TIMES", sparse_row_times_py),
                ("PATH_STEP", global_cd._path_step),
                ("UPDATE_S", global_cd._update_s),
            ):
                monkeypatch.setattr(global_lr, name, fn)
        solver = GlobalLogisticCD(max_iter=5, use_jit=jit, certify_every=1)
        with pytest.warns(ConvergenceWarning):  # 5 passes: stopped on purpose
            res = solve(solver, prob, rtol=0.0)
        assert solver.alpha is not None
        runs.append((res.coef, solver.alpha.copy(), [s.upper for s in res.history]))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert runs[0][2] == runs[1][2]


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("n_touched", [1, 3, 12])
def test_update_s_adds_x_times_acc_on_touched_nodes(jit: bool, n_touched: int) -> None:
    """Both of ``UPDATE_S``'s ways (the touched nodes one by one; every node of the row once a
    quarter are touched) give ``S^T[cols of x_i] += outer(x_i, acc)`` and clear the scratch."""
    rng = np.random.default_rng(n_touched)
    m, X = 12, sp.random(4, 7, density=0.5, format="csr", random_state=1)
    ST = rng.normal(size=(7, m))
    touched = np.zeros(m, dtype=np.int64)
    touched[:n_touched] = rng.permutation(m)[:n_touched]
    acc, mark = np.zeros(m), np.zeros(m, dtype=np.bool_)
    acc[touched[:n_touched]], mark[touched[:n_touched]] = rng.normal(size=n_touched), True
    want = ST + np.outer(X[2].toarray().ravel(), acc)
    fn = global_cd.UPDATE_S if jit else global_cd._update_s
    fn(2, X.indptr, X.indices, X.data, ST, acc, mark, touched, n_touched)
    np.testing.assert_allclose(ST, want, rtol=1e-15, atol=1e-15)
    assert not acc.any() and not mark.any()


def test_logistic_pass_sweeps_are_repeated_visits_of_each_example() -> None:
    """``sweeps=k`` visits an example's leaves k times on one ``p = S x_i``: with ``revisit =
    0``, the steps of a one-visit pass whose order repeats each example k times in a row (``p``
    formed again from ``S`` at each visit); with ``revisit`` above any step (a step moves a
    dual by less than ``C``), the one-visit pass; in between, some but not all pairs again."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, "logistic")
    Xc, sq, labels, parts = global_cd.pass_inputs(prob)
    paths = GlobalLogisticCD()._leaf_paths(tax)
    rng = np.random.default_rng(0)
    order, leaf_order = rng.permutation(Xc.shape[0]), rng.permutation(len(tax.leaves))

    def run(sweeps: int, revisit: float, visits: np.ndarray) -> tuple[Any, ...]:
        alpha, ST = global_lr._start(prob, Xc, labels, global_lr._a0(prob.C))
        newton, gmax = global_lr.logistic_dual_pass(
            visits, leaf_order, Xc.indptr, Xc.indices, Xc.data, sq, *parts, *paths, prob.C,
            alpha, ST, 1e-6, sweeps, revisit,
        )  # fmt: skip
        return alpha, ST, newton, gmax

    a3, S3, n3, g3 = run(3, 0.0, order)
    ar, Sr, nr, gr = run(1, 0.0, np.repeat(order, 3))
    np.testing.assert_allclose(a3, ar, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(S3, Sr, rtol=1e-9, atol=1e-12)
    assert n3 == nr and g3 == pytest.approx(gr, rel=1e-9)
    a1, S1, n1, g1 = run(1, 0.0, order)
    assert n1 < n3 and np.abs(a3 - a1).max() > 1e-3  # the extra visits moved the duals
    high = run(3, 2.0, order)
    np.testing.assert_array_equal(high[0], a1)
    np.testing.assert_array_equal(high[1], S1)
    assert high[2:] == (n1, g1)
    mid = run(3, 0.05, order)[2]
    assert n1 < mid < n3


def test_leaf_blocks_cover_the_leaves_in_balanced_blocks() -> None:
    for n, L, size in ((10, 7, 2), (10, 7, None), (3, 1000, 1), (10**5, 10**4, None)):
        blocks = global_lr.leaf_blocks(n, L, size)
        np.testing.assert_array_equal(np.concatenate(blocks), np.arange(L))
        sizes = [len(b) for b in blocks]
        assert max(sizes) - min(sizes) <= 1 and len(blocks) <= global_lr.MAX_BLOCKS
        want = size if size is not None else max(1, global_lr.ALPHA_ENTRIES // n)
        assert len(blocks) == min(global_lr.MAX_BLOCKS, -(-L // want))


@pytest.mark.parametrize("leaf_block", [1, 2, 4])
def test_uncoupled_logistic_cd_in_leaf_blocks_certifies_the_whole_problem(
    leaf_block: int,
) -> None:
    """One-vs-rest LR solved a block of leaves at a time reaches the all-at-once optimum, and
    every state certifies the whole problem: ``upper`` is the one-vs-rest objective of the
    ``coef`` it reports (the blocks not started at ``W = 0``), ``lower`` at most the optimum."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, C, "logistic")
    L = len(tax.leaves)
    one = solve(GlobalLogisticCD(max_iter=3000, coupled=False), prob, rtol=1e-11)
    assert one.converged and one.history[-1].extra.get("n_blocks") is None
    opt = one.history[-1].upper
    solver = GlobalLogisticCD(
        max_iter=3000, coupled=False, leaf_block=leaf_block, block_rtol=1e-11, certify_every=1
    )
    seen: list[tuple[float, float, np.ndarray]] = []
    res = solve(solver, prob, [lambda s: seen.append((s.upper, s.lower, solver.coef))], rtol=1e-11)
    assert res.converged and solver.alpha is None
    assert res.history[-1].extra["n_blocks"] == -(-L // leaf_block)
    # both within sqrt(2 gap) of the optimum (the objective is 1-strongly convex in W)
    radius = sum(np.sqrt(2.0 * r.history[-1].gap) for r in (one, res))
    assert np.linalg.norm(res.coef - one.coef) <= radius
    signs, w = prob.signs(np.arange(L)), prob.weights(np.arange(L))
    for upper, lower, coef in seen:
        W = coef[tax.leaves]
        J = 0.5 * (W**2).sum() + C * (w * np.logaddexp(0.0, -signs * (X @ W.T))).sum()
        assert upper == pytest.approx(J, rel=1e-10)
        assert lower <= opt * (1 + 1e-12) <= upper * (1 + 1e-9)
    assert np.all(res.coef[tax.internal_nodes] == 0)


def test_next_certificate_follows_a_geometric_gap_and_caps_its_steps() -> None:
    """A gap decaying as ``r^t`` is predicted exactly once two certificates span the decay,
    and a step never more than doubles the passes so far (nor drops below one pass)."""
    r, target = 0.6, 0.6**10
    nxt = global_lr.next_certificate
    assert nxt([(2, r**2)], target) == 4  # the start (0, 1) gives r; 8 passes, capped at 2
    assert nxt([(2, r**2), (4, r**4)], target) == 8  # 6 passes, capped at 4
    assert nxt([(4, r**4), (8, r**8)], target) == 10  # r^10 exactly: 2 passes
    assert nxt([(8, r**8), (9, r**9)], target) == 10
    assert nxt([(9, r**9), (10, 0.9 * r**10)], target) == 11  # below target: one pass on
    assert nxt([(2, 0.5), (4, 0.5)], target, first=3) == 7  # no decay: the fixed step
    assert nxt([(2, 0.0)], target) == 4
    assert nxt([(2, 0.5), (4, 0.5 * (1 - 1e-17))], target) == 6  # a decay rounding to 1
    assert nxt([(2, 0.5)], 0.0) == 4  # rtol = 0: no pass reaches it, the fixed step
    assert nxt([(20, r**20), (40, r**40)], 1e-30) == 40 + global_lr.MAX_CERTIFY_STEP


def test_logistic_cd_certifying_near_the_tolerance_keeps_the_iterates() -> None:
    """``certify_near``: certificates placed by the predicted gap change no pass (the same
    ``W`` as every pass certified, at the pass it stopped at), the run stops on a certified
    gap within ``rtol``, with far fewer certificates than every pass, within the last step
    after the first pass whose gap is within it."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, "logistic")
    rtol = 1e-6
    near = solve(GlobalLogisticCD(max_iter=3000, certify_near=rtol), prob, rtol=rtol)
    every = solve(GlobalLogisticCD(max_iter=3000, certify_every=1), prob, rtol=rtol)
    assert near.converged and every.converged
    T = near.history[-1].iteration
    assert near.history[-1].gap <= rtol * near.history[-1].upper
    assert len(near.history) < len(every.history) / 4
    # the pass that closed the gap lies within the last step, at most MAX_CERTIFY_STEP long
    assert T < every.history[-1].iteration + global_lr.MAX_CERTIFY_STEP
    with pytest.warns(ConvergenceWarning):  # stopped by max_iter = T, not by a gap
        same = solve(GlobalLogisticCD(max_iter=T, certify_every=T), prob, rtol=0.0)
    np.testing.assert_array_equal(near.coef, same.coef)


# ---------------------------------------------------------------------- the squared hinge
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_hr_svm_squared_hinge_matches_direct_solve(fit_intercept: bool, sparse: bool) -> None:
    """``loss="squared_hinge"``: eq. (2) with ``(1 - y z)_+^2`` (a smooth objective) by BFGS;
    the certified gap closes and the model's own certificate (dual point ``2 C (1 - y z)_+``)
    agrees with the solver's."""
    tax, X0, y, X, ref = _eq_by_bfgs(fit_intercept, lambda m: np.maximum(0.0, 1.0 - m) ** 2)
    C = 0.5
    est = HRSVMClassifier(
        taxonomy=tax, C=C, loss="squared_hinge", max_iter=5000, tol=1e-10,
        fit_intercept=fit_intercept,
    ).fit(sp.csr_matrix(X0) if sparse else X0, y)  # fmt: skip
    assert est.converged_ and "squared hinge" in est.algorithm_
    W = np.hstack([est.coef_, est.intercept_[:, None]]) if fit_intercept else est.coef_
    np.testing.assert_allclose(W.ravel(), ref.x, atol=1e-4)
    assert est.objective_ == pytest.approx(ref.fun, rel=1e-8)
    assert est.dual_bound_ <= ref.fun * (1 + 1e-12)
    cert = HRProblem.from_labels(X, tax.index(y), tax, C, "squared_hinge").certificate(W)
    assert cert["primal"] == pytest.approx(est.objective_, rel=1e-10)
    assert cert["dual"] <= ref.fun * (1 + 1e-12) and cert["dual"] == pytest.approx(
        ref.fun, rel=1e-6
    )


def test_squared_hinge_bounds_equal_the_definitions() -> None:
    """:func:`global_cd._bounds` with the squared hinge at random duals ``alpha >= 0``: the
    primal of ``W = A S`` and ``sum alpha - sum alpha^2 / (4 C) - 1/2 ||S||^2``, on multi-label
    rows with switched-off pairs."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, C, "squared_hinge")
    rng = np.random.default_rng(4)
    n, L = X.shape[0], len(tax.leaves)
    a = 3.0 * C * prob.weights(np.arange(L)) * rng.uniform(size=(n, L))
    Ys = prob.signs(np.arange(L))
    S = np.asarray(tax.ancestor_matrix[tax.leaves].T @ (X.T @ (a * Ys)).T)
    anc = sp.csr_matrix(tax.ancestor_matrix[tax.leaves])
    anc.sort_indices()
    ptr, idx = anc.indptr.astype(np.int64), anc.indices.astype(np.int64)
    primal, dual = global_cd._bounds(
        prob, sp.csr_matrix(X), np.ascontiguousarray(S.T), float(a.sum()), ptr, idx, chunk=7,
        alpha_sq=float((a * a).sum()),
    )  # fmt: skip
    W = np.asarray(tax.ancestor_matrix @ S)
    assert primal == pytest.approx(prob.certificate(W)["primal"], rel=1e-12)
    assert dual == pytest.approx(a.sum() - (a * a).sum() / (4 * C) - 0.5 * (S**2).sum(), rel=1e-12)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_ovr_svm_squared_hinge_equals_linearsvc_per_leaf(fit_intercept: bool) -> None:
    """The one-vs-rest L2-loss SVM (the default loss) by global CD, and by liblinear per leaf,
    is each leaf's exact L2-loss SVM (on ``[X, 1]`` with the bias), certified;
    HR-SVM's block CD (the paper's) refuses the squared hinge."""
    tax = _tree()
    X, y = _hier_data(tax, seed=5)
    glob = OneVsRestSVMClassifier(
        taxonomy=tax, C=0.5, gap_tol=1e-12, max_iter=20000, fit_intercept=fit_intercept,
    ).fit(sp.csr_matrix(X), y)  # fmt: skip
    assert glob.loss == "squared_hinge" and glob.converged_ and "squared hinge" in glob.algorithm_
    lib = OneVsRestSVMClassifier(
        taxonomy=tax, C=0.5, solver="liblinear", tol=1e-10, max_iter=10**5,
        fit_intercept=fit_intercept,
    ).fit(X, y)  # fmt: skip
    Xb = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    ids = tax.index(y)
    for leaf in tax.leaves:
        yk = np.where(ids == leaf, 1, -1)
        w = _svm_dual_exact(Xb, yk, 0.5, "squared_hinge")
        for est in (glob, lib):
            ours = np.append(est.coef_[leaf], est.intercept_[leaf]) if fit_intercept else (
                est.coef_[leaf]
            )
            np.testing.assert_allclose(ours, w, atol=1e-6 * np.abs(w).max())
    assert glob.objective_ == pytest.approx(lib.objective_, rel=1e-9)
    with pytest.raises(ParameterError, match="loss='hinge'"):
        HRSVMClassifier(taxonomy=tax, solver="block-cd").fit(X, y)


def test_one_class_squared_hinge_leaf_is_its_minimum() -> None:
    """liblinear refuses a one-class leaf; its squared-hinge problem is solved by L-BFGS: the
    gradient ``w - 2 C sum (1 - y w.x)_+ y x`` vanishes there (and the global CD agrees)."""
    from hierlab.methods.hr.estimators import _one_class_squared_hinge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    y = np.ones(30)
    w = _one_class_squared_hinge(X, y, 0.7, 1e-4)
    t = np.maximum(0.0, 1.0 - X @ w)
    np.testing.assert_allclose(w - 2 * 0.7 * X.T @ (t * y), 0.0, atol=1e-6)


def test_squared_hinge_global_cd_on_multilabel_excluded_pairs_and_an_empty_row() -> None:
    """Global CD with the squared hinge closes the certified gap on multi-label rows with
    switched-off pairs; an empty row's duals sit at their optimum ``2 C``; the model's own
    certificate at the solution agrees (its dual point ``2 C c (1 - y z)_+``)."""
    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    C = 0.7
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, C, "squared_hinge")
    solver = GlobalDualCD(max_iter=5000)
    res = solve(solver, prob, rtol=1e-11)
    assert res.converged
    a = solver.duals.toarray()
    off = prob.excluded.toarray()
    assert np.all(a >= 0) and np.all(a[off] == 0)
    np.testing.assert_array_equal(a[5, ~off[5]], 2 * C)
    cert = prob.certificate(res.coef)
    assert cert["primal"] == pytest.approx(res.history[-1].upper, rel=1e-12)
    assert cert["dual"] <= cert["primal"]
    assert cert["dual"] == pytest.approx(cert["primal"], rel=1e-8)


def test_logistic_cd_without_kept_duals_releases_them_before_forming_w() -> None:
    """``keep_duals=False`` (HR-LR's estimator): the same weights, and the dense duals are gone
    (no reference left) when :func:`solve` forms ``coef``, so they never coexist with ``W``."""
    import weakref

    tax = _tree()
    X, Y = _labels_with_internal_and_empty_rows(tax)
    prob = HRProblem.from_labels(sp.csr_matrix(X), Y, tax, 0.7, "logistic")
    kept = solve(GlobalLogisticCD(max_iter=50), prob, rtol=1e-6)
    seen: list[weakref.ref] = []
    alive_at_coef: list[bool] = []

    class Probe(GlobalLogisticCD):
        @property  # type: ignore[override]
        def coef(self) -> np.ndarray | None:
            alive_at_coef.append(bool(seen) and seen[0]() is not None)
            return super().coef

    solver = Probe(max_iter=50, keep_duals=False)

    def watch(state: object) -> None:
        if not seen:
            seen.append(weakref.ref(solver.alpha))

    res = solve(solver, prob, [watch], rtol=1e-6)
    np.testing.assert_array_equal(res.coef, kept.coef)
    assert solver.alpha is None and alive_at_coef and not any(alive_at_coef)


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix])
def test_a_feature_no_row_uses_gets_weight_zero_and_changes_nothing(make: Any) -> None:
    """``used_columns``: the fit runs on the features some row uses; a zero column added to
    ``X`` gets weight 0 at every node, and the other weights equal the fit without it."""
    from sklearn.base import clone

    from hierlab.methods.hr.estimators import used_columns

    tax = _tree()
    X, y = _hier_data(tax, n=60, seed=2)
    Xz = np.insert(X, 1, 0.0, axis=1)  # column 1 used by no row
    _, cols = used_columns(make(Xz))
    assert cols is not None and 1 not in cols
    assert len(cols) == np.count_nonzero(np.count_nonzero(X, axis=0))
    for est in (
        HRLRClassifier(taxonomy=tax, solver="block-cd", max_iter=5),
        HRSVMClassifier(taxonomy=tax, max_iter=5),
    ):
        plain = clone(est).fit(make(X), y)
        wide = clone(est).fit(make(Xz), y)
        assert np.all(wide.coef_[:, 1] == 0)
        np.testing.assert_allclose(np.delete(wide.coef_, 1, axis=1), plain.coef_, atol=1e-12)
