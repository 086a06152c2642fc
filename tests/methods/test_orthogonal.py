"""Seed 000 models, regularizers and estimators against exact oracles.

- loss-augmented inference (sibling, per-node and slack-rescaled flat) == brute force on random
  small trees, with internal labels;
- recursive prediction == a per-example walk down the tree;
- subgradients == finite differences where differentiable; Theorem 4's subgradient inequality;
- Omega convex exactly when the comparison matrix is PSD (random K);
- the exact largest admissible alpha, and the estimator's refusal naming it;
- ORTHOGNL beats HIERMULT on data whose sibling-separating features differ by level.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import get_method, make_estimator
from hierlab.core.regularizers import (
    Orthogonal,
    comparison_matrix,
    max_admissible_alpha,
    orthogonal_K,
    smallest_comparison_eigenvalue,
    transfer_matrix,
)
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.metrics import zero_one_error
from hierlab.methods.orthogonal.estimators import (
    FlatMulticlassClassifier,
    HierarchicalMulticlassClassifier,
    OrthogonalTransferClassifier,
    TransferClassifier,
    TreeLossClassifier,
)
from hierlab.methods.orthogonal.model import FlatModel, LocalModel, RecursiveModel

ALL = [
    OrthogonalTransferClassifier,
    FlatMulticlassClassifier,
    HierarchicalMulticlassClassifier,
    TransferClassifier,
    TreeLossClassifier,
]


def random_tree(rng: np.random.Generator, m: int) -> Taxonomy:
    """A random tree on ``m`` nodes (node i's parent uniform among 0..i-1)."""
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, m)]
    return Taxonomy.from_parent_array(parent)


def siblings(tax: Taxonomy, i: int) -> list[int]:
    p = int(tax.parent[i])
    return [int(c) for c in range(tax.n_nodes) if c != i and int(tax.parent[c]) == p]


def path_nonroot(tax: Taxonomy, y: int) -> list[int]:
    out = []
    while y > 0:
        out.append(y)
        y = int(tax.parent[y])
    return out


# ---------------------------------------------------------------------- inference
@pytest.mark.parametrize("seed", range(12))
def test_sibling_most_violated_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tax = random_tree(rng, int(rng.integers(3, 10)))
    n = 25
    S = rng.normal(size=(n, tax.n_nodes))
    if seed % 3 == 0:
        S = np.round(S)  # ties
    y = rng.integers(0, tax.n_nodes, size=n)  # any node, internal ones included
    model = RecursiveModel(tax)
    val, i, j = model.index.most_violated(S, y)
    for k in range(n):
        best = -np.inf
        for a in path_nonroot(tax, int(y[k])):
            for b in siblings(tax, a):
                best = max(best, 1 - S[k, a] + S[k, b])
        assert val[k] == pytest.approx(best) if np.isfinite(best) else val[k] == -np.inf
        if np.isfinite(best):
            assert int(i[k]) in path_nonroot(tax, int(y[k]))
            assert int(j[k]) in siblings(tax, int(i[k]))
            assert 1 - S[k, i[k]] + S[k, j[k]] == pytest.approx(best)
    # the loss and its subgradient w.r.t. S
    loss, G = model.loss(S, y)
    assert loss[0] == pytest.approx(np.sum(np.maximum(val, 0)))
    assert G.shape == S.shape


@pytest.mark.parametrize("seed", range(8))
def test_local_loss_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    tax = random_tree(rng, int(rng.integers(4, 10)))
    n = 30
    S = rng.normal(size=(n, tax.n_nodes))
    y = rng.integers(0, tax.n_nodes, size=n)
    model = LocalModel(tax)
    block, _ = model.loss(S, y)
    expect = np.zeros(len(tax.internal_nodes))
    for b, p in enumerate(tax.internal_nodes):
        below = [k for k in range(n) if int(p) in tax.ancestors(int(y[k])) and y[k] != p]
        tot = 0.0
        for k in below:
            c = next(a for a in path_nonroot(tax, int(y[k])) if tax.parent[a] == p)
            others = [s for s in tax.children(int(p)) if s != c]
            h = max([0.0] + [1 - S[k, c] + S[k, s] for s in others])
            tot += h
        expect[b] = tot
    np.testing.assert_allclose(block, expect, atol=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", ["flatmult", "treeloss"])
def test_flat_most_violated_matches_brute_force(seed: int, kind: str) -> None:
    rng = np.random.default_rng(200 + seed)
    tax = random_tree(rng, int(rng.integers(3, 10)))
    n = 20
    y = rng.choice(np.arange(1, tax.n_nodes), size=n)
    if kind == "flatmult":
        model = FlatModel(tax, "zero_one", candidates="leaves")
        cands = sorted(set(tax.leaves.tolist()) | set(y.tolist()))
        delta = lambda a, b: float(a != b)  # noqa: E731
    else:
        model = FlatModel(tax, "half_hamming", candidates="nodes", path_sum=True)
        cands = list(range(1, tax.n_nodes))
        delta = lambda a, b: float(tax.tree_distance(int(a), int(b))) / 2  # noqa: E731
    model.active_rows(y)
    S = rng.normal(size=(n, tax.n_nodes))
    val, c = model.most_violated(S, y)
    for k in range(n):
        vals = [delta(y[k], cc) * max(0.0, 1 - S[k, y[k]] + S[k, cc]) for cc in cands]
        assert val[k] == pytest.approx(max(vals))
        assert delta(y[k], c[k]) * max(0.0, 1 - S[k, y[k]] + S[k, c[k]]) == pytest.approx(max(vals))


@pytest.mark.parametrize("seed", range(10))
def test_compiled_path_rivals_equal_the_numpy_form(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled sibling loop (only the path's groups) gives the numpy form's numbers and
    arg-maxes bit for bit, ties included, and so do the losses built on it."""
    from hierlab.core.jit import HAVE_NUMBA

    assert HAVE_NUMBA  # the environment installs numba; without it this test would be vacuous
    rng = np.random.default_rng(900 + seed)
    tax = random_tree(rng, int(rng.integers(3, 14)))
    n = 60
    S = np.round(rng.normal(size=(n, tax.n_nodes)), 0 if seed % 2 else 3)
    y = rng.integers(0, tax.n_nodes, size=n)
    model = RecursiveModel(tax)
    P = model.index.path_pad[y]
    v1, j1 = model.index.path_violations(S, P, use_jit=True)
    v0, j0 = model.index.path_violations(S, P, use_jit=False)
    np.testing.assert_array_equal(v1, v0)
    finite = np.isfinite(v0)
    np.testing.assert_array_equal(j1[finite], j0[finite])
    local = LocalModel(tax)
    compiled = [m.loss(S, y) for m in (model, local)]
    monkeypatch.setenv("HIERLAB_NO_JIT", "1")
    for m, (l1, G1) in zip((model, local), compiled, strict=True):
        l0, G0 = m.loss(S, y)
        np.testing.assert_array_equal(l1, l0)
        np.testing.assert_array_equal(G1.toarray(), G0.toarray())


@pytest.mark.parametrize("seed", range(8))
def test_flat_zero_one_fast_path_equals_general_form(seed: int) -> None:
    """Crammer-Singer's two-pass inference (contiguous candidates read in place, others
    gathered) == the general slack-rescaled form with Delta = [y != c], ties included, and the
    scores are left untouched."""
    rng = np.random.default_rng(700 + seed)
    tax = random_tree(rng, int(rng.integers(3, 12)))
    n = 40
    y = rng.choice(np.arange(1, tax.n_nodes), size=n)
    model = FlatModel(tax, "zero_one", candidates="nodes" if seed % 2 else "leaves")
    model.active_rows(y)
    S = np.round(rng.normal(size=(n, tax.n_nodes)), 1)
    S0 = S.copy()
    val, a, dlt = model._most_violated(S, y)
    np.testing.assert_array_equal(S, S0)
    cand = model.cand_
    D = (y[:, None] != cand[None, :]).astype(float)
    L = D * np.maximum(0.0, 1.0 - S[np.arange(n), y][:, None] + S[:, cand])
    ref = np.argmax(L, axis=1)
    np.testing.assert_array_equal(val, L.max(axis=1))
    pos = val > 0
    np.testing.assert_array_equal(a[pos], ref[pos])
    np.testing.assert_array_equal(dlt[pos], 1.0)
    # Fortran-ordered scores take the gathering branch: the same answer
    for got, want in zip(model._most_violated(np.asfortranarray(S), y), (val, a, dlt), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(6))
def test_recursive_predict_matches_walk(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    tax = random_tree(rng, int(rng.integers(3, 12)))
    S = rng.normal(size=(40, tax.n_nodes))
    pred = RecursiveModel(tax).predict(S)
    for k in range(40):
        at = 0
        while len(tax.children(at)):
            kids = tax.children(at)
            at = int(kids[np.argmax(S[k, kids])])
        assert pred[k] == at


def test_path_sum_scores() -> None:
    rng = np.random.default_rng(0)
    tax = random_tree(rng, 7)
    model = FlatModel(tax, "half_hamming", candidates="nodes", path_sum=True)
    U = rng.normal(size=(7, 3))
    U[0] = 0
    X = rng.normal(size=(5, 3))
    S = model.scores(X, U)
    for y in range(7):
        w = sum(U[j] for j in tax.ancestors(y, include_self=True))
        np.testing.assert_allclose(S[:, y], X @ w)


# ---------------------------------------------------------------------- subgradients
def _small_problem(seed: int, internal: bool = True):
    rng = np.random.default_rng(seed)
    tax = Taxonomy.from_parent_array([-1, 0, 0, 1, 1, 2, 2])
    n, d = 30, 4
    proto = rng.normal(size=(tax.n_nodes, d))
    y = rng.choice(tax.leaves, size=n)
    if internal:
        y[:3] = [1, 2, 1]
    X = proto[y] + 0.7 * rng.normal(size=(n, d))
    return tax, X, y


@pytest.mark.parametrize("cls", ALL)
def test_subgradient_matches_finite_differences(cls: type) -> None:
    tax, X, y = _small_problem(1)
    est = cls(taxonomy=tax, alpha=0.6) if cls is OrthogonalTransferClassifier else cls(taxonomy=tax)
    est.taxonomy_ = tax
    obj = est._objective(X, y)
    rng = np.random.default_rng(2)
    act = obj.regularizer.active
    for _ in range(3):
        W = rng.normal(size=obj.shape) * act[:, None]
        g = obj.subgradient(W)
        eps = 1e-6
        fd = np.zeros_like(W)
        for r, c in itertools.product(np.flatnonzero(act), range(W.shape[1])):
            E = np.zeros_like(W)
            E[r, c] = eps
            fd[r, c] = (obj.value(W + E) - obj.value(W - E)) / (2 * eps)
        np.testing.assert_allclose(g, fd, atol=1e-5)


@pytest.mark.parametrize("seed", range(10))
def test_theorem4_subgradient_inequality(seed: int) -> None:
    """Omega(V) >= Omega(W) + <g(W), V - W>, also at W with exactly orthogonal rows."""
    rng = np.random.default_rng(400 + seed)
    tax = random_tree(rng, 6)
    amax = max_admissible_alpha(tax)
    alpha = min(amax * 0.95, 2.0)
    K = orthogonal_K(tax, alpha)
    act = np.ones(6, dtype=bool)
    act[0] = False
    reg = Orthogonal(K, act)
    for _ in range(20):
        W = rng.normal(size=(6, 6)) * act[:, None]
        # make some pairs exactly orthogonal (kinks of |w_i^T w_j|)
        W[2] = np.r_[0, 0, 0, 1.0, 0, 0] * rng.normal()
        W[3] = np.r_[0, 0, 1.0, 0, 0, 0] * rng.normal()
        V = rng.normal(size=(6, 6)) * act[:, None]
        g = reg.subgradient(W)
        assert reg.value(V) >= reg.value(W) + np.sum(g * (V - W)) - 1e-9


def _convex_violation(K: np.ndarray, rng: np.random.Generator, trials: int = 300) -> float:
    """Largest midpoint-convexity violation of Omega found: random segments, plus the segment
    built from the comparison matrix's most negative eigenvector at a point where all pairwise
    inner products are negative (m simplex vertices in R^(m-1))."""
    m = K.shape[0]
    n = m + 1

    def omega(W: np.ndarray) -> float:
        return 0.5 * float(np.sum(K * np.abs(W @ W.T)))

    worst = 0.0
    for _ in range(trials):
        U, V = rng.normal(size=(m, n)), rng.normal(size=(m, n))
        worst = max(worst, omega((U + V) / 2) - (omega(U) + omega(V)) / 2)
    _vals, vecs = np.linalg.eigh(comparison_matrix(K))
    v = vecs[:, 0]
    simplex = np.eye(m) - 1.0 / m  # rows: centred simplex vertices, pairwise inner < 0
    C = np.zeros((m, n))
    C[:, :m] = simplex
    z = np.zeros(n)
    z[-1] = 1.0
    D = np.outer(v, z)
    for t in (1e-2, 1e-3):
        worst = max(worst, omega(C) - (omega(C + t * D) + omega(C - t * D)) / 2)
    return worst


@pytest.mark.parametrize("seed", range(30))
def test_omega_convex_iff_comparison_matrix_psd(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    m = int(rng.integers(2, 5))
    A = rng.uniform(0, 1, size=(m, m))
    K = (A + A.T) / 2
    np.fill_diagonal(K, rng.uniform(0.2, 1.5, size=m))
    lam = np.linalg.eigvalsh(comparison_matrix(K))[0]
    if abs(lam) < 1e-3:
        K[np.diag_indices(m)] += 0.01  # keep away from the boundary
        lam = np.linalg.eigvalsh(comparison_matrix(K))[0]
    viol = _convex_violation(K, rng)
    if lam >= 0:
        assert viol <= 1e-10
    else:
        assert viol > 1e-12


def test_both_sides_of_convexity_are_exercised() -> None:
    lams = []
    for seed in range(30):
        rng = np.random.default_rng(500 + seed)
        m = int(rng.integers(2, 5))
        A = rng.uniform(0, 1, size=(m, m))
        K = (A + A.T) / 2
        np.fill_diagonal(K, rng.uniform(0.2, 1.5, size=m))
        lams.append(np.linalg.eigvalsh(comparison_matrix(K))[0])
    assert min(lams) < 0 < max(lams)


# ---------------------------------------------------------------------- admissibility
@pytest.mark.parametrize("seed", range(6))
def test_max_admissible_alpha_is_exact(seed: int) -> None:
    rng = np.random.default_rng(600 + seed)
    tax = random_tree(rng, int(rng.integers(4, 14)))
    amax = max_admissible_alpha(tax)
    if not np.isfinite(amax):
        assert (tax.depth[1:] == 1).all()
        return
    assert smallest_comparison_eigenvalue(tax, amax * (1 - 1e-6)) > 0
    assert smallest_comparison_eigenvalue(tax, amax * (1 + 1e-6)) < 0
    # independent bisection on lambda_min(alpha)
    lo, hi = 0.0, 1.0
    while smallest_comparison_eigenvalue(tax, hi) > 0:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if smallest_comparison_eigenvalue(tax, mid) > 0 else (lo, mid)
    assert amax == pytest.approx(lo, rel=1e-9)


def test_smallest_comparison_eigenvalue_of_a_given_K_dense_and_sparse() -> None:
    """A matrix ``K`` as given: its eigenvalue dense or sparse alike (the all-zero sparse
    ``K`` stores no entries, yet its ``lambda_min`` is 0, not the empty block's ``inf``)."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(6, 6))
    K = A @ A.T - 2.0 * np.eye(6)
    want = np.linalg.eigvalsh(comparison_matrix(K))[0]
    for given in (K, sp.csr_matrix(K)):
        assert smallest_comparison_eigenvalue(given) == pytest.approx(want, rel=1e-12)
    for zero in (np.zeros((4, 4)), sp.csr_matrix((4, 4))):
        assert smallest_comparison_eigenvalue(zero) == 0.0
    assert smallest_comparison_eigenvalue(np.zeros((0, 0))) == float("inf")


def test_eq6_K() -> None:
    tax = Taxonomy([("r", "a"), ("a", "b"), ("b", "c"), ("r", "d")])
    K = orthogonal_K(tax, 0.3)
    i = {str(n): k for k, n in enumerate(tax.names)}
    assert K[i["a"], i["a"]] == 3 and K[i["b"], i["b"]] == 2 and K[i["d"], i["d"]] == 1
    assert K[i["a"], i["c"]] == K[i["c"], i["a"]] == 0.3
    assert K[i["a"], i["d"]] == 0 and K[i["r"]].sum() == 0


def test_orthognl_refuses_inadmissible_alpha_and_names_the_bound() -> None:
    tax, X, y = _small_problem(3, internal=False)
    amax = max_admissible_alpha(tax)
    with pytest.raises(ParameterError, match=f"{amax:.6g}"):
        OrthogonalTransferClassifier(taxonomy=tax, alpha=amax * 1.01).fit(X, tax.names[y])
    bad = orthogonal_K(tax, amax * 2)[1:, 1:]
    with pytest.raises(ParameterError, match="not admissible"):
        OrthogonalTransferClassifier(taxonomy=tax, K=bad).fit(X, tax.names[y])
    with pytest.raises(ParameterError, match="nonnegative"):
        OrthogonalTransferClassifier(taxonomy=tax, K=-np.eye(tax.n_nodes - 1)).fit(X, tax.names[y])


def test_user_K_equals_eq6() -> None:
    tax, X, y = _small_problem(4)
    a = OrthogonalTransferClassifier(taxonomy=tax, alpha=0.5, rtol=1e-3).fit(X, tax.names[y])
    b = OrthogonalTransferClassifier(taxonomy=tax, K=orthogonal_K(tax, 0.5)[1:, 1:], rtol=1e-3).fit(
        X, tax.names[y]
    )
    np.testing.assert_allclose(a.coef_, b.coef_)
    assert a.lambda_min_ == pytest.approx(smallest_comparison_eigenvalue(tax, 0.5))


def test_transfer_matrix() -> None:
    tax = Taxonomy([("r", "a"), ("a", "b"), ("a", "c")])
    Q = transfer_matrix(tax)
    rng = np.random.default_rng(0)
    W = rng.normal(size=(4, 3))
    W[0] = 0
    expect = 0.5 * (
        sum(W[i] @ W[i] for i in (1, 2, 3)) + sum((W[1] - W[j]) @ (W[1] - W[j]) for j in (2, 3))
    )
    assert 0.5 * np.sum(W * (Q @ W)) == pytest.approx(expect)


# ---------------------------------------------------------------------- estimators
@pytest.mark.parametrize("cls", ALL)
def test_dense_and_csr_agree(cls: type) -> None:
    tax, X, y = _small_problem(5)
    kw = {"alpha": 0.5} if cls is OrthogonalTransferClassifier else {}
    a = cls(taxonomy=tax, rtol=1e-3, **kw).fit(X, tax.names[y])
    b = cls(taxonomy=tax, rtol=1e-3, **kw).fit(sp.csr_matrix(X), tax.names[y])
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-3)
    assert b.gap_ <= 1e-3 * b.objective_ + 1e-12
    np.testing.assert_array_equal(a.predict(X), b.predict(sp.csr_matrix(X)))
    assert a.coef_.shape == (tax.n_nodes, X.shape[1])
    assert np.all(a.coef_[0] == 0)


@pytest.mark.parametrize("cls", ALL)
def test_decision_function_agrees_with_predict_on_a_tree(cls: type) -> None:
    """On a real hierarchy (leaf labels) the arg-max class of decision_function is the
    predicted leaf (recursive methods: the path's smallest sibling margin)."""
    tax, X, y = _small_problem(7, internal=False)
    kw = {"alpha": 0.5} if cls is OrthogonalTransferClassifier else {}
    est = cls(taxonomy=tax, rtol=1e-2, **kw).fit(X, tax.names[y])
    D = est.decision_function(X)
    assert D.shape == (len(X), len(est.classes_))
    pred = est.predict(X)
    hit = np.isin(pred, est.classes_)
    assert hit.mean() > 0.5
    np.testing.assert_array_equal(est.classes_[np.argmax(D, axis=1)][hit], pred[hit])
    assert est.node_scores(sp.csr_matrix(X)).shape == (len(X), tax.n_nodes)


def test_registry_entries() -> None:
    for name in ("orthognl", "flatmult", "hiermult", "transfer", "treeloss"):
        spec = get_method(name)
        assert spec.bounds and spec.seed == "000"
        names = {p.name for p in spec.params}
        assert {"C", "tol", "rtol", "max_iter", "max_time", "averaging"} <= names
    assert "alpha" in {p.name for p in get_method("orthognl").params}
    with pytest.raises(ParameterError):
        make_estimator("orthognl", C=-1.0)


@pytest.mark.parametrize("solver", ["rda", "bcfw"])
def test_unconverged_warns_with_gap(solver: str) -> None:
    tax, X, y = _small_problem(6)
    from sklearn.exceptions import ConvergenceWarning

    est = OrthogonalTransferClassifier(
        taxonomy=tax, alpha=0.5, rtol=0, tol=0, max_iter=5, solver=solver
    )
    with pytest.warns(ConvergenceWarning, match="upper - lower"):
        est.fit(X, tax.names[y])
    assert not est.converged_ and est.n_iter_ == 5


# ---------------------------------------------------------------------- the paper's claim
def _levels_data(seed: int, n_train_per_leaf: int = 10):
    """3 groups x 3 leaves. The group of an example is marked by a large, highly variable
    value on its group feature; its leaf by a unit shift on a feature shared across groups
    (child c of every group uses feature 3 + c); 10 noise features. The features that separate
    siblings differ by level, and within a group the group feature is pure nuisance."""
    G, Kc = 3, 3
    edges = [("r", f"g{g}") for g in range(G)]
    edges += [(f"g{g}", f"g{g}c{c}") for g in range(G) for c in range(Kc)]
    tax = Taxonomy(edges)
    grp = np.array([0] + [int(str(n)[1]) for n in tax.names[1:]])
    chi = np.array([0] * (1 + G) + [int(str(n)[3]) for n in tax.names[1 + G :]])
    rng = np.random.default_rng(seed)

    def draw(nn: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.choice(tax.leaves, size=nn)
        X = 0.3 * rng.normal(size=(nn, G + Kc + 10))
        X[np.arange(nn), grp[y]] += rng.uniform(1, 5, size=nn)
        X[np.arange(nn), G + chi[y]] += 1.0
        return X, y

    Xtr, ytr = draw(n_train_per_leaf * len(tax.leaves))
    Xte, yte = draw(600)
    return tax, Xtr, ytr, Xte, yte


def test_orthognl_beats_hiermult_when_features_differ_by_level() -> None:
    err_o, err_h = [], []
    for seed in range(10):
        tax, Xtr, ytr, Xte, yte = _levels_data(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # both must converge (certified gap)
            C = 1.0 / len(ytr)  # the paper's C = 1 (it writes C/N sum xi)
            o = OrthogonalTransferClassifier(taxonomy=tax, alpha=0.8, C=C, rtol=1e-2, max_iter=5000)
            h = HierarchicalMulticlassClassifier(taxonomy=tax, C=C, rtol=1e-2, max_iter=5000)
            o.fit(Xtr, tax.names[ytr])
            h.fit(Xtr, tax.names[ytr])
        err_o.append(zero_one_error(tax.names[yte], o.predict(Xte), tax))
        err_h.append(zero_one_error(tax.names[yte], h.predict(Xte), tax))
    eo, eh = np.array(err_o), np.array(err_h)
    assert eo.mean() < eh.mean()
    res = stats.wilcoxon(eo, eh, alternative="less")
    assert res.pvalue < 0.05, (eo, eh, res)


def test_alpha_auto_is_half_the_admissible_limit_and_always_fits() -> None:
    """The default alpha='auto' fits on a tree whose limit is below 1 (the old default failed)."""
    from hierlab import make_hieron_synthetic
    from hierlab.core.regularizers import max_admissible_alpha

    tr, _ = make_hieron_synthetic(
        n_train_per_label=3, n_test_per_label=1, depth=3, branching=3, random_state=0
    )
    limit = max_admissible_alpha(tr.taxonomy)
    assert limit < 1.0
    est = make_estimator("orthognl", taxonomy=tr.taxonomy, max_iter=3)
    assert est.alpha == "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(tr.X, tr.y)
    assert est.alpha_ == pytest.approx(0.5 * limit)
    assert est.lambda_min_ > 0
    flat = Taxonomy.from_parent_array([-1, 0, 0, 0])
    X = np.random.default_rng(0).normal(size=(6, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_flat = make_estimator("orthognl", taxonomy=flat, alpha="AUTO", max_iter=2)
        on_flat.fit(X, flat.names[[1, 2, 3, 1, 2, 3]])
    assert on_flat.alpha_ == 1.0
    with pytest.raises(ParameterError, match="'auto'"):
        make_estimator("orthognl", taxonomy=flat, alpha="half").fit(X, flat.names[[1, 2, 3] * 2])
