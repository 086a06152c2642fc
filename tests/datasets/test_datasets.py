"""The synthetic bag-of-words generator :func:`make_hierarchical_text` and its random tree."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.datasets import HierDataset, make_hierarchical_text
from hierlab.datasets.text import CdfSampler, random_level_tree, zipf_cdf


@pytest.mark.parametrize(("n_classes", "depth"), [(1, 1), (7, 1), (8, 2), (30, 3), (100, 4)])
def test_random_level_tree_shape(n_classes, depth):
    tax, paths = random_level_tree(n_classes, depth, random_state=0)
    assert tax.is_tree
    assert len(tax.leaves) == n_classes
    assert np.all(tax.depth[tax.leaves] == depth)  # every leaf at the given depth
    assert paths.shape == (n_classes, depth)
    assert np.array_equal(paths[:, -1], tax.leaves)
    # paths[:, k] is the parent of paths[:, k + 1], paths[:, 0] a child of the root
    assert np.all(tax.parent[paths[:, 0]] == 0)
    for k in range(depth - 1):
        assert np.array_equal(tax.parent[paths[:, k + 1]], paths[:, k])
    # level sizes grow geometrically towards n_classes
    sizes = [len(lv) for lv in tax.levels]
    assert sizes[0] == 1 and sizes[-1] == n_classes
    assert np.all(np.diff(sizes) >= 0)
    # names spell the path
    for leaf in tax.leaves[:5]:
        name = str(tax.names[leaf])
        assert name.split(".")[0].startswith("t")
        assert str(tax.names[tax.parent[leaf]]) == (name.rsplit(".", 1)[0] if depth > 1 else "root")


def test_generator_shapes_and_types():
    train, test = make_hierarchical_text(
        400, n_classes=12, n_features=500, depth=2, test_size=0.25, random_state=0
    )
    assert isinstance(train, HierDataset) and isinstance(test, HierDataset)
    assert train.X.shape == (300, 500) and test.X.shape == (100, 500)
    assert sp.isspmatrix_csr(train.X) or sp.issparse(train.X)
    assert train.X.indices.dtype == np.int32
    assert train.taxonomy is test.taxonomy
    assert len(train.taxonomy.leaves) == 12 and train.taxonomy.max_depth == 2
    leaves = set(train.taxonomy.names[train.taxonomy.leaves])
    assert set(train.y) <= leaves and set(test.y) <= leaves
    assert len(train.feature_names) == 500
    # sublinear TF-IDF rows are l2-normalised
    norms = np.sqrt(np.asarray(train.X.multiply(train.X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0)
    t2, _ = make_hierarchical_text(400, n_classes=12, n_features=500, depth=2, test_size=40)
    assert t2.n_samples == 360


def test_determinism_and_random_state_kinds():
    kw = dict(n_samples=300, n_classes=10, n_features=400, depth=2)
    a, at = make_hierarchical_text(**kw, random_state=3)
    b, bt = make_hierarchical_text(**kw, random_state=3)
    assert (a.X != b.X).nnz == 0 and (at.X != bt.X).nnz == 0
    assert a.y.tolist() == b.y.tolist()
    assert a.taxonomy == b.taxonomy
    c, _ = make_hierarchical_text(**kw, random_state=4)
    assert (a.X != c.X).nnz > 0
    g1, _ = make_hierarchical_text(**kw, random_state=np.random.default_rng(5))
    g2, _ = make_hierarchical_text(**kw, random_state=np.random.default_rng(5))
    assert (g1.X != g2.X).nnz == 0
    r1, _ = make_hierarchical_text(**kw, random_state=np.random.RandomState(6))
    r2, _ = make_hierarchical_text(**kw, random_state=np.random.RandomState(6))
    assert (r1.X != r2.X).nnz == 0


def test_counts_and_tfidf_agree_with_sklearn():
    from sklearn.feature_extraction.text import TfidfTransformer

    kw = dict(n_samples=500, n_classes=9, n_features=300, depth=2, random_state=1)
    counts, counts_te = make_hierarchical_text(**kw, tfidf=False)
    tfidf, tfidf_te = make_hierarchical_text(**kw)
    assert np.all(counts.X.data == np.round(counts.X.data)) and counts.X.data.min() >= 1
    tr = TfidfTransformer(sublinear_tf=True).fit(counts.X)
    np.testing.assert_allclose(tfidf.X.toarray(), tr.transform(counts.X).toarray())
    np.testing.assert_allclose(tfidf_te.X.toarray(), tr.transform(counts_te.X).toarray())
    lengths = np.asarray(counts.X.sum(axis=1)).ravel()
    assert lengths.min() >= 1
    assert abs(lengths.mean() - 50.0) < 3.0  # Poisson(doc_length) tokens


def test_topic_words_live_on_the_path():
    """With no noise, every word of a document of leaf c is owned by a node on root -> c."""
    train, _ = make_hierarchical_text(
        300, n_classes=10, n_features=2000, depth=3, noise=0.0, tfidf=False, random_state=2
    )
    tax = train.taxonomy
    node_words = train.meta["node_words"]
    ids = tax.index(train.y)
    X = train.X.tocsr()
    for i in range(X.shape[0]):
        path = tax.ancestors(ids[i], include_self=True)[1:]
        allowed = set(node_words[path].ravel().tolist())
        assert set(X.indices[X.indptr[i] : X.indptr[i + 1]].tolist()) <= allowed
    # disjoint word sets when the vocabulary is large enough
    owned = node_words[1:].ravel()
    assert len(np.unique(owned)) == len(owned)


def test_level_weights_select_the_level():
    train, _ = make_hierarchical_text(
        200,
        n_classes=6,
        n_features=600,
        depth=2,
        noise=0.0,
        level_weights=[0.0, 1.0],
        tfidf=False,
        random_state=0,
    )
    tax, nw = train.taxonomy, train.meta["node_words"]
    ids = tax.index(train.y)
    X = train.X.tocsr()
    for i in range(0, X.shape[0], 7):
        assert set(X.indices[X.indptr[i] : X.indptr[i + 1]].tolist()) <= set(nw[ids[i]].tolist())


def test_class_skew_follows_the_prior():
    train, _ = make_hierarchical_text(
        4000, n_classes=8, n_features=200, depth=1, class_skew=1.5, random_state=0
    )
    prior = train.meta["class_prior"]
    names = train.taxonomy.names[train.taxonomy.leaves]
    freq = np.array([(train.y == n).mean() for n in names])
    assert names[np.argmax(freq)] == names[np.argmax(prior)]
    np.testing.assert_allclose(freq, prior, atol=0.03)


def test_the_hierarchy_is_in_the_data():
    """A flat linear model confuses siblings more than cousins: the top level is easier."""
    from sklearn.svm import LinearSVC

    train, test = make_hierarchical_text(
        3000, n_classes=16, n_features=1500, depth=2, noise=0.9, random_state=0
    )
    pred = LinearSVC().fit(train.X, train.y).predict(test.X)
    tax = train.taxonomy
    leaf_acc = np.mean(pred == test.y)
    top = tax.parent[tax.index(pred)] == tax.parent[tax.index(test.y)]
    assert 1 / 16 < leaf_acc < top.mean()


@pytest.mark.parametrize(
    "kw",
    [
        {"noise": 1.0},
        {"noise": -0.1},
        {"doc_length": 0},
        {"n_samples": 1},
        {"test_size": 0.0},
        {"n_features": 1},
        {"level_weights": [1.0]},
        {"words_per_node": 0},
        {"n_classes": 0},
    ],
)
def test_parameter_errors(kw):
    args = dict(n_samples=100, n_classes=5, n_features=100, depth=2, random_state=0)
    args.update(kw)
    with pytest.raises(ParameterError):
        make_hierarchical_text(**args)


def test_builtin_catalogue_entry():
    from hierlab.datasets.catalog import load_builtin

    train, test = load_builtin("hierarchical-text", n_samples=400)
    assert train.n_samples + test.n_samples == 400
    assert len(train.taxonomy.leaves) == 50


@pytest.mark.parametrize("n", [1, 2, 7, 50, 5000])
def test_guide_table_sampler_equals_binary_search(n):
    rng = np.random.default_rng(n)
    cdf = zipf_cdf(n, exponent=1.2)
    u = rng.random(20000)
    u[: n - 1] = cdf[:-1]  # exact bucket boundaries
    u[-1] = np.nextafter(1.0, 0.0)
    u[-2] = 0.0
    got = CdfSampler(cdf).sample(u)
    np.testing.assert_array_equal(got, np.searchsorted(cdf, u, side="right"))
