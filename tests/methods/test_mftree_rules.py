"""MF-Tree's split and routing rules (``split_rule``, ``routing``) and the HSIC of every split.

Oracles: the HSIC of eq. (2) computed from its definition with explicit ``n x n`` matrices
(``H``, ``K^``, ``L = Y B Y^T``); the brute-force maximum of ``tr(D B)`` over every
2-partition (eq. 11); Algorithm 1's ``argmax_j G_kj`` transcribed over the sign choices of an
independent eigendecomposition; Algorithm 2 with explicit kernel vectors (the reference).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from hierlab.core.exceptions import ParameterError
from hierlab.methods.mftree.estimators import MFTreeClassifier
from hierlab.methods.mftree.induce import MFTree, MFTreeReference, mftree_partition
from hierlab.methods.mftree.induction import split_trace


def random_data(seed: int, c: int, n: int, d: int, sparse: bool = False):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(c, d)) * 2
    y = np.concatenate([np.arange(c), rng.integers(0, c, n - c)])  # every class present
    X = means[y] + rng.normal(size=(n, d)) + 2.0
    if sparse:
        X = sp.csr_matrix(np.where(rng.random(X.shape) < 0.6, 0.0, np.abs(X)))
    return X, y


def hsic_by_definition(K_hat: np.ndarray, yloc: np.ndarray, left_classes: set[int]) -> float:
    """Eq. (2): ``tr(H K^ H L) / (n - 1)^2`` with ``L_ij = 1`` iff rows ``i``, ``j`` go to the
    same child; every matrix explicit."""
    n = len(yloc)
    H = np.eye(n) - np.ones((n, n)) / n
    side = np.array([k in left_classes for k in yloc])
    L = (side[:, None] == side[None, :]).astype(float)
    return float(np.trace(H @ K_hat @ H @ L)) / (n - 1) ** 2


def check_hsic(model, X, y, kernel) -> int:
    """Every row of ``split_info_`` against :func:`hsic_by_definition`; the number checked."""
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    info = model.split_info_.set_index("node")
    tax = model.taxonomy_
    checked = 0
    for j in tax.internal_nodes:
        cls = model.node_classes_[j]
        rows = np.flatnonzero(np.isin(y, model.classes_[cls]))
        left = set(model.classes_[model.node_classes_[model.left_[j]]].tolist())
        expect = hsic_by_definition(kernel(Xd[rows], Xd[rows]), y[rows], left)
        row = info.loc[str(tax.names[j])]
        assert row["hsic"] == pytest.approx(expect, rel=1e-8, abs=1e-10)
        assert row["n_examples"] == len(rows)
        assert row["n_classes"] == len(cls)
        assert row["n_left"] + row["n_right"] == len(cls)
        checked += 1
    assert checked == len(info) == len(tax.internal_nodes)
    return checked


# ---------------------------------------------------------------------------- HSIC oracle
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("tau", [0, 2])
@pytest.mark.parametrize("split_rule", ["sign", "argmax"])
def test_split_hsic_equals_its_definition(split_rule, tau, sparse):
    X, y = random_data(3, c=8, n=120, d=6, sparse=sparse)
    for cls in (MFTree, MFTreeReference):
        m = cls(tau=tau, split_rule=split_rule).fit(X, y)
        assert check_hsic(m, X, y, lambda A, B: A @ B.T) == 7
        rules = set(m.split_info_["rule"])
        assert rules <= ({split_rule, "partition2"} if tau else {split_rule})
        assert ("partition2" in rules) == (tau > 0)
        # the node column names the taxonomy's internal nodes, in taxonomy order
        assert m.split_info_["node"].tolist() == [
            str(m.taxonomy_.names[j]) for j in m.taxonomy_.internal_nodes
        ]
        hs = m.node_hsic()
        assert np.isnan(hs[m.taxonomy_.leaves]).all()
        np.testing.assert_allclose(hs[m.taxonomy_.internal_nodes], m.split_info_["hsic"])


def test_split_hsic_with_rbf_kernel_equals_its_definition():
    X, y = random_data(4, c=6, n=90, d=3)
    gamma = 0.3
    ref = MFTreeReference(kernel="rbf", gamma=gamma, split_rule="argmax").fit(X, y)
    check_hsic(ref, X, y, lambda A, B: rbf_kernel(A, B, gamma=gamma))
    # Nystroem on every training row reproduces the kernel: the fast path's HSIC is the same
    fast = MFTree(kernel="rbf", gamma=gamma, n_components=len(y), split_rule="argmax").fit(X, y)
    assert fast.partitions() == ref.partitions()
    np.testing.assert_allclose(fast.split_info_["hsic"], ref.split_info_["hsic"], rtol=1e-6)


# ---------------------------------------------------------------------------- argmax rule
def class_similarity(seed: int, c: int) -> np.ndarray:
    X, y = random_data(seed, c=c, n=12 * c, d=5)
    M = np.eye(c)[y].T @ (X - X.mean(0))  # Y^T H X
    return M @ M.T


def argmax_transcribed(D: np.ndarray) -> np.ndarray:
    """Algorithm 1, lines 3-6, for every sign choice of an independent eigendecomposition;
    the documented choice: two non-empty children, the largest tr(D B), g2 as oriented on
    ties. Returns the left mask (g1 oriented, so the children are not swapped)."""
    _, V = sla.eigh(D)

    def orient(g):  # the largest-magnitude entry positive; the first within 1e-6 on ties
        k = next(i for i in range(len(g)) if abs(g[i]) >= (1 - 1e-6) * np.abs(g).max())
        return g if g[k] > 0 else -g

    g1, g2 = orient(V[:, -1]), orient(V[:, -2])
    best, best_t = None, -np.inf
    for s in (1.0, -1.0):
        G = np.column_stack([g1, s * g2])
        left = np.array([int(np.argmax(G[k])) == 0 for k in range(len(g1))])
        if left.all() or not left.any():
            continue
        lv = left.astype(float)
        t = lv @ D @ lv + (1 - lv) @ D @ (1 - lv)
        if t > best_t * (1 + 1e-9):
            best, best_t = left, t
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("c", [2, 3, 5, 9])
def test_argmax_rule_is_algorithm_1_with_documented_sign(seed, c):
    D = class_similarity(seed, c)
    left, G, lam, kind = mftree_partition(D, split_rule="argmax")
    assert kind == "mftree" and left.any() and not left.all()
    np.testing.assert_array_equal(left, argmax_transcribed(D))
    np.testing.assert_array_equal(left, G[:, 0] >= G[:, 1])  # argmax of the stored G
    np.testing.assert_allclose(D @ G, G * lam, atol=1e-8 * lam[0])


@pytest.mark.parametrize("split_rule", ["sign", "argmax"])
def test_many_class_nodes_split_by_lanczos_as_by_the_dense_decomposition(
    split_rule: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``LANCZOS_MIN_CLASSES`` the top two eigenpairs come from ARPACK: the same
    eigenvalues, eigenvectors (as oriented) and split as the dense ``eigh`` on 300 classes."""
    from hierlab.methods.mftree import induction

    D = class_similarity(3, 300)
    dense = mftree_partition(D, split_rule=split_rule)
    monkeypatch.setattr(induction, "LANCZOS_MIN_CLASSES", 100)
    left, G, lam, kind = mftree_partition(D, split_rule=split_rule)
    assert kind == dense[3] == "mftree"
    np.testing.assert_array_equal(left, dense[0])
    np.testing.assert_allclose(lam, dense[2], rtol=1e-10)
    np.testing.assert_allclose(G, dense[1], atol=1e-8)
    np.testing.assert_allclose(D @ G, G * lam, atol=1e-8 * lam[0])


def brute_force_best(D: np.ndarray) -> float:
    """max over every 2-partition with two non-empty sides of tr(D B) (eq. 11)."""
    c = D.shape[0]
    best = -np.inf
    for bits in itertools.product([False, True], repeat=c - 1):
        left = np.array((True, *bits))  # class 0 left: each partition once
        if left.all():
            continue
        best = max(best, split_trace(D, left))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_both_rules_below_brute_force_optimum_and_relaxation_bound(seed):
    c = 8
    D = class_similarity(seed, c)
    opt = brute_force_best(D)
    lam1 = np.linalg.eigvalsh(D)[-1]
    assert opt <= c * lam1 / 2 * (1 + 1e-12)  # tr(D B) = s^T D s / 2 <= c lambda_1 / 2
    for rule in ("sign", "argmax"):
        left, *_ = mftree_partition(D, split_rule=rule)
        assert split_trace(D, left) <= opt * (1 + 1e-12)


def test_sign_rule_reaches_the_brute_force_optimum_on_separated_groups_argmax_may_not():
    # two groups of classes far apart: the best 2-partition (eq. 11) is the group split. The
    # sign rule finds it; the printed argmax compares g1 with g2 entry by entry, ignoring that
    # lambda_1 >> lambda_2, and on this draw sends one class of the left group right.
    rng = np.random.default_rng(0)
    centres = np.array([[8.0, 0, 0, 0], [-8.0, 0, 0, 0]])
    means = np.repeat(centres, 3, axis=0) + rng.normal(size=(6, 4))
    y = np.repeat(np.arange(6), 15)
    X = means[y] + 0.3 * rng.normal(size=(len(y), 4))
    M = np.eye(6)[y].T @ (X - X.mean(0))
    D = M @ M.T
    opt = brute_force_best(D)
    left, *_ = mftree_partition(D, split_rule="sign")
    assert split_trace(D, left) == pytest.approx(opt, rel=1e-12)
    assert set(np.flatnonzero(left)) in ({0, 1, 2}, {3, 4, 5})
    m = MFTree(split_rule="sign").fit(X, y)
    assert m.split_info_["hsic"].iloc[0] == pytest.approx(opt / (len(y) - 1) ** 2)
    left_a, *_ = mftree_partition(D, split_rule="argmax")
    np.testing.assert_array_equal(left_a, argmax_transcribed(D))
    assert split_trace(D, left_a) < 0.9 * opt
    a = MFTree(split_rule="argmax").fit(X, y)
    assert a.split_info_["hsic"].iloc[0] < m.split_info_["hsic"].iloc[0]


def test_argmax_rule_changes_some_split():
    # the parameter is not a no-op: on this draw some node splits differently
    X, y = random_data(0, c=12, n=300, d=8)
    a = MFTree(split_rule="sign").fit(X, y).partitions()
    b = MFTree(split_rule="argmax").fit(X, y).partitions()
    assert a != b
    assert a[0] != b[0] or any(p not in a for p in b)


def test_unknown_rules_are_refused():
    X, y = random_data(0, c=3, n=30, d=2)
    with pytest.raises(ParameterError, match="split_rule"):
        MFTree(split_rule="max").fit(X, y)
    with pytest.raises(ParameterError, match="routing"):
        MFTree(routing="max").fit(X, y)
    with pytest.raises(ParameterError, match="split_rule"):
        mftree_partition(np.eye(3) - 1 / 3, split_rule="max")


# ---------------------------------------------------------------------------- routing
@pytest.mark.parametrize("lanczos", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("tau", [0, 2])
@pytest.mark.parametrize(
    "split_rule,routing", [("sign", "argmax"), ("argmax", "argmax"), ("argmax", "sign")]
)
def test_fast_path_equals_algorithm_2_reference(
    split_rule, routing, tau, sparse, lanczos, monkeypatch
):
    """``lanczos``: nodes of more than four classes by Lanczos, ``D`` applied from the class
    sums on the fast path (as above 1,000 classes)."""
    if lanczos:
        from hierlab.methods.mftree import induction

        monkeypatch.setattr(induction, "LANCZOS_MIN_CLASSES", 4)
    X, y = random_data(5, c=10, n=220, d=9, sparse=sparse)
    fast = MFTree(tau=tau, split_rule=split_rule, routing=routing).fit(X, y)
    ref = MFTreeReference(tau=tau, split_rule=split_rule, routing=routing).fit(X, y)
    assert fast.partitions() == ref.partitions()
    np.testing.assert_allclose(fast.split_info_["hsic"], ref.split_info_["hsic"], rtol=1e-8)
    Xt, _ = random_data(105, c=10, n=150, d=9, sparse=sparse)
    np.testing.assert_array_equal(fast.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(fast.predict(X), ref.predict(X))


def test_argmax_routing_is_p1_against_p2_at_the_root():
    # Algorithm 2 at the root, transcribed: p = G^T Y^T k_c(x), left iff p_1 >= p_2
    X, y = random_data(6, c=5, n=100, d=4)
    m = MFTree(routing="argmax").fit(X, y)
    G = m.G_[0]
    Xc = X - X.mean(0)
    Y = np.eye(5)[y]
    Xt, _ = random_data(7, c=5, n=80, d=4)
    kc = (Xt - X.mean(0)) @ Xc.T  # centred linear kernel vectors
    p = kc @ Y @ G
    first = m.taxonomy_.ancestor_matrix[m.apply(Xt)][:, m.left_[0]].toarray().ravel() > 0
    np.testing.assert_array_equal(first, p[:, 0] >= p[:, 1])
    sign = MFTree(routing="sign").fit(X, y)
    assert sign.partitions() == m.partitions()
    first_sign = sign.taxonomy_.ancestor_matrix[sign.apply(Xt)][:, sign.left_[0]].toarray()
    np.testing.assert_array_equal(first_sign.ravel() > 0, p[:, 0] >= 0)
    assert (first != (first_sign.ravel() > 0)).any()  # the two routings differ on this draw


def test_classifier_exposes_split_info_and_rules():
    X, y = random_data(8, c=6, n=150, d=5)
    clf = MFTreeClassifier(split_rule="argmax", routing="argmax").fit(X, y)
    tree = MFTree(split_rule="argmax", routing="argmax").fit(X, y)
    assert clf.taxonomy_ == tree.taxonomy_
    np.testing.assert_array_equal(clf.predict(X), tree.predict(X))
    assert clf.split_info_.equals(tree.split_info_)
    assert clf.get_params()["split_rule"] == "argmax"
