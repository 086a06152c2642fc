"""Tests of MF-Tree (seed 004), its explicit-kernel reference, approximate MF-Tree and CMTL."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.svm import LinearSVC

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import get_method, make_estimator
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.metrics import tree_similarity_mse
from hierlab.methods.mftree import induction
from hierlab.methods.mftree.estimators import CMTLClassifier, MFTreeClassifier
from hierlab.methods.mftree.induce import (
    CMTLTree,
    MFTree,
    MFTreeReference,
    confusion_affinity,
    induce_taxonomy,
    mftree_partition,
    partition2,
    spectral_bipartition,
)
from hierlab.methods.topdown import TopDownClassifier


def hierarchical_blobs(
    n_groups: int = 3,
    per_group: int = 4,
    n_per_class: int = 30,
    d: int = 15,
    spread: float = 4.0,
    within: float = 1.5,
    seed: int = 0,
    sizes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, Taxonomy]:
    """Gaussian classes whose means are group mean + class offset: a known 2-level taxonomy."""
    rng = np.random.default_rng(seed)
    gm = rng.normal(size=(n_groups, d)) * spread
    means, names, edges = [], [], []
    for g in range(n_groups):
        edges.append(("root", f"g{g}"))
        for k in range(per_group):
            means.append(gm[g] + rng.normal(size=d) * within)
            names.append(f"c{g}_{k}")
            edges.append((f"g{g}", f"c{g}_{k}"))
    c = len(names)
    counts = np.full(c, n_per_class) if sizes is None else np.asarray(sizes)
    y = np.repeat(np.arange(c), counts)
    X = np.asarray(means)[y] + rng.normal(size=(len(y), d)) + 3.0
    return X, np.asarray(names, dtype=object)[y], Taxonomy(edges)


def random_data(seed: int, c: int, n: int, d: int, sparse: bool = False):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(c, d)) * 2
    y = np.concatenate([np.arange(c), rng.integers(0, c, n - c)])  # every class present
    X = means[y] + rng.normal(size=(n, d)) + 2.0
    if sparse:
        X = sp.csr_matrix(np.where(rng.random(X.shape) < 0.6, 0.0, np.abs(X)))
    return X, y


# ---------------------------------------------------------------------------- fast == reference
@pytest.mark.parametrize("lanczos", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("tau", [0, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_linear_path_equals_explicit_kernel_reference(seed, tau, sparse, lanczos, monkeypatch):
    """The class-sum path equals the explicit kernel; ``lanczos``: nodes of more than four
    classes split by Lanczos, the fast path multiplying by ``D`` from the class sums
    (``_mftree_operator``, as above 1,000 classes) instead of forming it."""
    if lanczos:
        monkeypatch.setattr(induction, "LANCZOS_MIN_CLASSES", 4)
    X, y = random_data(seed, c=11, n=260, d=12, sparse=sparse)
    fast = MFTree(tau=tau).fit(X, y)
    ref = MFTreeReference(tau=tau).fit(X, y)
    assert fast.partitions() == ref.partitions()
    assert fast.taxonomy_ == ref.taxonomy_
    Xt, _ = random_data(seed + 100, c=11, n=150, d=12, sparse=sparse)
    np.testing.assert_array_equal(fast.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(fast.predict(X), ref.predict(X))
    for j in range(fast.n_nodes_):
        if fast.split_kind_[j] == "mftree":
            lam = ref.eigenvalues_[j]
            np.testing.assert_allclose(fast.eigenvalues_[j], lam, rtol=1e-8, atol=1e-9 * lam[0])
            np.testing.assert_allclose(fast.G_[j][:, 0], ref.G_[j][:, 0], atol=1e-8)


def test_rbf_feature_map_path_equals_exact_rbf_reference():
    # Nystroem with every training example as landmark reproduces the exact RBF kernel on
    # the training set, so the fast RBF path must give the reference's tree and routes.
    X, y = random_data(3, c=7, n=140, d=4)
    for tau in (0, 1):
        fast = MFTree(kernel="rbf", gamma=0.2, n_components=len(y), random_state=0, tau=tau)
        ref = MFTreeReference(kernel="rbf", gamma=0.2, tau=tau)
        fast.fit(X, y)
        ref.fit(X, y)
        assert fast.partitions() == ref.partitions()
        Xt, _ = random_data(4, c=7, n=100, d=4)
        np.testing.assert_array_equal(fast.predict(Xt), ref.predict(Xt))


def test_rbf_random_fourier_features_run_and_cover_classes():
    X, y = random_data(5, c=6, n=120, d=4)
    m = MFTree(kernel="rbf", kernel_approximation="rff", n_components=50, random_state=1)
    m.fit(sp.csr_matrix(X), y)
    assert sorted(m.taxonomy_.names[m.taxonomy_.leaves].tolist()) == sorted(map(str, set(y)))
    assert m.coef_.shape == (m.n_nodes_, 50)


def test_linear_identity_D_equals_centred_kernel_form():
    # D = Y^T H K^ H Y with K^ = X X^T equals (Y^T H X)(Y^T H X)^T; its eigenvalues are the
    # fast path's root eigenvalues.
    X, y = random_data(6, c=5, n=60, d=7)
    n = len(y)
    H = np.eye(n) - np.ones((n, n)) / n
    Y = np.eye(5)[y]
    D_kernel = Y.T @ H @ (X @ X.T) @ H @ Y
    M = Y.T @ H @ X
    np.testing.assert_allclose(D_kernel, M @ M.T, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(D_kernel @ np.ones(5), 0.0, atol=1e-8)  # D 1 = 0
    lam = np.sort(np.linalg.eigvalsh(D_kernel))[::-1][:2]
    np.testing.assert_allclose(MFTree().fit(X, y).eigenvalues_[0], lam, rtol=1e-9)


def test_sign_rule_rounds_exact_partition_objective():
    # With D 1 = 0: tr(D B) = s^T D s / 2 for every 2-partition (B = co-association).
    X, y = random_data(7, c=6, n=90, d=5)
    M = np.eye(6)[y].T @ (X - X.mean(0))
    D = M @ M.T
    for bits in itertools.product([0, 1], repeat=6):
        s = np.where(np.asarray(bits) == 1, 1.0, -1.0)
        B = (np.asarray(bits)[:, None] == np.asarray(bits)[None, :]).astype(float)
        assert np.isclose(np.trace(D @ B), s @ D @ s / 2)
    left, G, lam, kind = mftree_partition(D)
    assert kind == "mftree" and left.any() and not left.all()
    np.testing.assert_array_equal(left, G[:, 0] >= 0)
    k = np.argmax(np.abs(G[:, 0]))
    assert G[k, 0] > 0  # orientation: largest-magnitude entry positive
    np.testing.assert_allclose(D @ G, G * lam, atol=1e-8 * lam[0])


def test_sign_rule_two_classes_and_degenerate_fallback():
    D = np.array([[2.0, -2.0], [-2.0, 2.0]])
    left, _, _, kind = mftree_partition(D)
    assert kind == "mftree" and left.tolist() == [True, False]
    left, _, _, kind = mftree_partition(-D)  # flipped matrix: orientation still first-left
    assert left.tolist() in ([True, False], [False, True])
    left, _, _, kind = mftree_partition(np.zeros((5, 5)))
    assert kind == "fallback" and left.tolist() == [True, True, True, False, False]
    # every class has the same mean: D = 0, halves at every node, still one leaf per class
    rng = np.random.default_rng(0)
    X = np.tile(rng.normal(size=(1, 4)), (40, 1))
    y = np.repeat(np.arange(8), 5)
    m = MFTree().fit(X, y)
    assert set(m.split_kind_[m.taxonomy_.internal_nodes]) == {"fallback"}
    _assert_one_leaf_per_class(m.taxonomy_, [str(k) for k in range(8)])
    assert m.depth_ == 3


# ---------------------------------------------------------------------------- approximate
def _partition2_brute(X, y, cls):
    """Algorithm 3's Partition2, transcribed line by line."""
    sizes = {k: int((y == k).sum()) for k in cls}
    order = sorted(cls, key=lambda k: (-sizes[k], list(cls).index(k)))
    c1, c2 = order[0], order[1]
    mean = {k: X[y == k].mean(axis=0) for k in cls}
    L, R = [c1], [c2]
    for k in order[2:]:
        m1 = np.sum((mean[k] - mean[c1]) ** 2)
        m2 = np.sum((mean[k] - mean[c2]) ** 2)
        (L if m1 <= m2 else R).append(k)
    return sorted(L), sorted(R)


def test_tau_zero_is_plain_mftree_and_tau_levels_use_partition2():
    X, y = random_data(8, c=14, n=400, d=10)  # classes 0..13, unbalanced by the random draw
    plain = MFTree(tau=0).fit(X, y)
    assert set(plain.split_kind_) <= {"mftree", "leaf"}
    assert plain.partitions() == MFTreeReference().fit(X, y).partitions()
    assert plain.partitions() == MFTree().fit(X, y).partitions()
    for tau in (1, 2, 3):
        m = MFTree(tau=tau).fit(X, y)
        tax = m.taxonomy_
        for j in tax.internal_nodes:
            assert m.split_kind_[j] == ("approx" if tax.depth[j] < tau else "mftree")
            if tax.depth[j] < tau:
                cls = m.node_classes_[j]
                L, R = _partition2_brute(X, y, cls)
                assert m.node_classes_[m.left_[j]].tolist() == L
                assert m.node_classes_[m.right_[j]].tolist() == R


def test_partition2_largest_left_second_right():
    sizes = np.array([5, 9, 9, 2])
    means = np.array([[0.0], [10.0], [0.0], [9.0]])
    left = partition2(sizes, lambda k: ((means - means[k]) ** 2).ravel())
    # c1 = class 1 (9, first on ties), c2 = class 2; class 0 nearer 2, class 3 nearer 1
    assert left.tolist() == [False, True, False, True]


# ---------------------------------------------------------------------------- tree validity
def _assert_one_leaf_per_class(tax: Taxonomy, classes):
    leaf_names = [str(tax.names[i]) for i in tax.leaves]
    assert sorted(leaf_names) == sorted(str(c) for c in classes)
    assert len(set(leaf_names)) == len(leaf_names)
    assert all(n == 2 for n in tax.n_children[tax.internal_nodes])  # binary


@settings(max_examples=25, deadline=None)
@given(
    c=st.integers(1, 12),
    extra=st.integers(0, 40),
    d=st.integers(1, 6),
    tau=st.integers(0, 4),
    seed=st.integers(0, 10_000),
    sparse=st.booleans(),
)
def test_every_class_ends_in_exactly_one_leaf(c, extra, d, tau, seed, sparse):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(c), rng.integers(0, c, extra)])
    X = rng.normal(size=(len(y), d)) + rng.integers(0, 3, size=(c, d))[y]
    if sparse:
        X = sp.csr_matrix(np.where(X > 0.5, X, 0.0))
    m = MFTree(tau=tau).fit(X, y)
    _assert_one_leaf_per_class(m.taxonomy_, range(c))
    leaves = m.apply(X)
    assert m.taxonomy_.is_leaf[leaves].all()
    if c >= 2:
        t = CMTLTree(holdout=0.3, random_state=seed).fit(X, y) if len(y) >= 2 * c else None
        if t is not None:
            _assert_one_leaf_per_class(t.taxonomy_, range(c))


# ---------------------------------------------------------------------------- MSE
def _mse_brute(t_true: Taxonomy, t_ind: Taxonomy, classes) -> float:
    g1 = nx.Graph(t_true.to_networkx())
    g2 = nx.Graph(t_ind.to_networkx())
    n = len(classes)
    tot = 0.0
    for a in classes:
        for b in classes:
            if a == b:
                continue
            h1 = nx.shortest_path_length(g1, a, b)
            h2 = nx.shortest_path_length(g2, a, b)
            tot += (1.0 / h1 - 1.0 / h2) ** 2
    return tot / n**2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tree_similarity_mse_equals_brute_force(seed):
    X, y, truth = hierarchical_blobs(seed=seed, spread=1.0, within=1.5)
    classes = sorted(set(y))
    for tax in (
        MFTree().fit(X, y).taxonomy_,
        MFTree(tau=2).fit(X, y).taxonomy_,
        CMTLTree(random_state=seed).fit(X, y).taxonomy_,
    ):
        assert tree_similarity_mse(truth, tax) == pytest.approx(
            _mse_brute(truth, tax, classes), rel=1e-12
        )


def test_mftree_recovers_group_structure():
    X, y, truth = hierarchical_blobs(n_groups=2, per_group=4, spread=6.0, within=1.0)
    m = MFTree().fit(X, y)
    root_left = {str(c) for c in m.classes_[m.node_classes_[m.left_[0]]]}
    groups = [{f"c{g}_{k}" for k in range(4)} for g in range(2)]
    assert root_left in groups
    assert (m.predict(X) == y).mean() > 0.9
    assert tree_similarity_mse(truth, m.taxonomy_) < tree_similarity_mse(
        truth, _random_binary_tree(sorted(set(y)), seed=1)
    )


def _random_binary_tree(classes, seed):
    rng = np.random.default_rng(seed)
    cls = list(rng.permutation(classes))
    edges, k = [], 0

    def build(items, name):
        nonlocal k
        if len(items) == 1:
            return str(items[0])
        h = len(items) // 2
        for part in (items[:h], items[h:]):
            k += 1
            child = build(part, f"x{k}")
            edges.append((name, child))
        return name

    build(cls, "x0")
    return Taxonomy(edges)


# ---------------------------------------------------------------------------- CMTL
def test_spectral_bipartition_recovers_blocks():
    A = np.full((6, 6), 0.01)
    A[:3, :3] = A[3:, 3:] = 1.0
    np.fill_diagonal(A, 0.0)
    perm = np.array([4, 0, 5, 2, 1, 3])
    left = spectral_bipartition(A[np.ix_(perm, perm)])
    groups = {frozenset(perm[left]), frozenset(perm[~left])}
    assert groups == {frozenset({0, 1, 2}), frozenset({3, 4, 5})}


@pytest.mark.parametrize("seed", range(4))
def test_spectral_bipartition_by_lanczos_equals_the_dense_decomposition(seed, monkeypatch):
    """Above ``LANCZOS_MIN_CLASSES`` classes the normalised cut's eigenvector comes from
    Lanczos on ``Dg^{-1/2} A Dg^{-1/2}``: the same split as the dense ``eigh`` of ``L``."""
    rng = np.random.default_rng(seed)
    c = 40
    groups = rng.integers(0, 3, size=c)
    A = rng.uniform(size=(c, c)) * 0.1 + (groups[:, None] == groups[None, :])
    A = (A + A.T) / 2.0
    np.fill_diagonal(A, 0.0)
    dense = spectral_bipartition(A)
    monkeypatch.setattr(induction, "LANCZOS_MIN_CLASSES", 10)
    np.testing.assert_array_equal(spectral_bipartition(A), dense)


@pytest.mark.parametrize("seed", range(4))
def test_spectral_bipartition_of_sparse_confusions_with_rank_one_smoothing(seed, monkeypatch):
    """CMTL's affinity is a sparse confusion part plus ``smoothing (1 1^T - I)``: by the
    dense path (below ``LANCZOS_MIN_CLASSES``) and by Lanczos on the operator (above it), the
    split equals the dense decomposition of the formed matrix."""
    rng = np.random.default_rng(seed)
    c = 40
    groups = rng.integers(0, 3, size=c)
    yt = rng.integers(0, c, size=400)
    members = [np.flatnonzero(groups == g) for g in range(3)]
    within = np.array([rng.choice(members[groups[t]]) for t in yt])
    yp = np.where(rng.uniform(size=400) < 0.7, within, rng.integers(0, c, size=400))
    _, A = confusion_affinity(yt, yp, c)
    assert sp.issparse(A)
    smoothing = 1e-3
    formed = A.toarray() + smoothing
    np.fill_diagonal(formed, 0.0)
    dense = spectral_bipartition(formed)
    np.testing.assert_array_equal(spectral_bipartition(A, smoothing), dense)
    monkeypatch.setattr(induction, "LANCZOS_MIN_CLASSES", 10)
    np.testing.assert_array_equal(spectral_bipartition(A, smoothing), dense)


def test_confusion_affinity():
    yt = np.array([0, 0, 0, 0, 1, 1, 2])
    yp = np.array([0, 1, 1, 0, 1, 0, 2])
    C, A = confusion_affinity(yt, yp, 3)
    assert sp.issparse(C) and sp.issparse(A)
    np.testing.assert_allclose(C.toarray(), [[0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1]])
    np.testing.assert_allclose(A.toarray(), [[0, 0.5, 0], [0.5, 0, 0], [0, 0, 0]])
    assert A.diagonal().sum() == 0.0 and A.nnz == 2  # the zero diagonal is not stored


def test_cmtl_tree_groups_confused_classes():
    X, y, _ = hierarchical_blobs(n_groups=2, per_group=3, spread=8.0, within=0.8, seed=3)
    # liblinear's less exact optimum confuses every class with a sibling here (hierlab's
    # default, solved to its 1% gap, confuses only two pairs and leaves two classes free)
    t = CMTLTree(random_state=0, estimator=LinearSVC(C=1.0)).fit(X, y)
    _assert_one_leaf_per_class(t.taxonomy_, sorted(set(y)))
    root_left = {str(c) for c in t.classes_[t.node_classes_[1]]}
    assert root_left in [{f"c{g}_{k}" for k in range(3)} for g in range(2)]


# ---------------------------------------------------------------------------- estimators
def test_registered_and_params():
    spec = get_method("mftree")
    assert {p.name for p in spec.params} == {
        "kernel",
        "gamma",
        "tau",
        "split_rule",
        "routing",
        "random_state",
    }
    assert spec.seed == "004"
    est = make_estimator("mftree", tau=2, kernel="rbf", gamma=0.5, random_state=3)
    assert isinstance(est, MFTreeClassifier) and est.tau == 2 and est.gamma == 0.5
    with pytest.raises(ParameterError):
        make_estimator("mftree", kernel="poly")
    assert isinstance(make_estimator("cmtl"), CMTLClassifier)


@pytest.mark.parametrize("sparse", [False, True])
def test_mftree_classifier_matches_induction_and_keeps_labels(sparse):
    X, y = random_data(9, c=6, n=180, d=8, sparse=sparse)
    clf = MFTreeClassifier(tau=1).fit(X, y)
    tree = MFTree(tau=1).fit(X, y)
    assert clf.taxonomy_ == tree.taxonomy_
    pred = clf.predict(X)
    assert pred.dtype.kind == "i"  # int labels come back as ints
    np.testing.assert_array_equal(pred, tree.predict(X))
    ys = np.asarray([f"k{v}" for v in y], dtype=object)  # names: score() reads ints as ids
    assert MFTreeClassifier(tau=1).fit(X, ys).score(X, ys) == pytest.approx((pred == y).mean())
    assert clf.coef_.shape == (clf.taxonomy_.n_nodes, X.shape[1])
    assert len(clf.history_) == 1
    path = clf.decision_path(X[:3]).toarray()
    assert (path[:, 0] == 1).all() and (
        path.sum(1)
        == clf.taxonomy_.depth[clf.taxonomy_.index(np.asarray(pred[:3]).astype(str))] + 1
    ).all()
    c2 = clone(clf)
    assert c2.get_params()["tau"] == 1


def test_mftree_classifier_with_string_labels_and_given_taxonomy():
    X, y, truth = hierarchical_blobs(n_groups=2, per_group=2)
    clf = MFTreeClassifier(taxonomy=truth).fit(X, y)
    assert set(clf.predict(X)) <= set(y)
    assert clf.taxonomy_ != truth
    _assert_one_leaf_per_class(clf.taxonomy_, sorted(set(y)))


def test_induced_taxonomy_feeds_any_classifier():
    X, y, _ = hierarchical_blobs(n_groups=2, per_group=3, seed=4)
    for method in ("mftree", "cmtl"):
        tax = induce_taxonomy(X, y, method=method, random_state=0)
        td = TopDownClassifier(taxonomy=tax).fit(X, y)
        assert td.score(X, y) > 0.8
    with pytest.raises(ParameterError):
        induce_taxonomy(X, y, method="nope")
    with pytest.raises(ParameterError):
        induce_taxonomy(X, y, method="mftree", tau=-1)


def test_cmtl_classifier():
    X, y, _ = hierarchical_blobs(n_groups=2, per_group=3, seed=5)
    clf = CMTLClassifier(random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.8
    _assert_one_leaf_per_class(clf.taxonomy_, sorted(set(y)))
    assert clf.coef_.shape == (clf.taxonomy_.n_nodes, X.shape[1])


def test_internal_names_do_not_clash_with_classes():
    X, y = random_data(10, c=4, n=40, d=3)
    names = np.asarray(["node:", "node:0", "b", "c"], dtype=object)[y]
    m = MFTree().fit(X, names)
    _assert_one_leaf_per_class(m.taxonomy_, ["node:", "node:0", "b", "c"])
    assert m.taxonomy_.names[0] == "node_:"


def test_sparse_routing_in_node_groups_matches(monkeypatch):
    import hierlab.methods.mftree.induction as mod

    X, y = random_data(11, c=9, n=200, d=10, sparse=True)
    m = MFTree().fit(X, y)
    full = m.apply(X)
    monkeypatch.setattr(mod, "_ROUTE_BUDGET", 25)  # two node vectors per group
    np.testing.assert_array_equal(m.apply(X), full)
    for few in (0, 1000):  # every level by gathers / every level by per-node mat-vecs
        monkeypatch.setattr(mod, "_FEW_NODES", few)
        np.testing.assert_array_equal(m.apply(X), full)
    np.testing.assert_array_equal(full, MFTreeReference().fit(X, y).apply(X))


# ---------------------------------------------------------------------------- real data
def _ng20():
    from hierlab.core.exceptions import DataError
    from hierlab.datasets.real import find_data_home, load_20newsgroups

    try:
        home = find_data_home()
    except DataError as exc:
        pytest.skip(f"20 Newsgroups not available: {exc}")
    if not (home / "20newsgroups").is_dir():
        pytest.skip(f"no 20newsgroups/ under {home}")
    return load_20newsgroups(home)


@pytest.mark.realdata
@pytest.mark.slow
def test_20newsgroups_mftree_closer_to_6groups_than_cmtl():
    train, _ = _ng20()
    y = np.asarray(train.y).astype(str)
    mf = MFTree().fit(train.X, y)
    cm = CMTLTree(random_state=0).fit(train.X, y)
    truth = train.taxonomy
    _assert_one_leaf_per_class(mf.taxonomy_, sorted(set(y)))
    assert tree_similarity_mse(truth, mf.taxonomy_) < tree_similarity_mse(truth, cm.taxonomy_)
    # the religion groups form one subtree of the induced tree
    rel = mf.taxonomy_.index(
        np.asarray(["alt.atheism", "soc.religion.christian", "talk.religion.misc"], dtype=object)
    )
    anc = int(mf.taxonomy_.lca(int(mf.taxonomy_.lca(rel[0], rel[1])), rel[2]))
    under = mf.taxonomy_.descendants(anc, include_self=True)
    assert int(mf.taxonomy_.is_leaf[under].sum()) == 3
