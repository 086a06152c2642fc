"""``hierlab.explain``: a node's strongest features, and the contributions to each step."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hierlab
from hierlab import ParameterError, Taxonomy
from hierlab.methods.probability import conditional_margins

TAX = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])


def _data(tax: Taxonomy = TAX, n: int = 200, d: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    centers = {lab: rng.normal(scale=3.0, size=d) for lab in leaves}
    y = rng.choice(leaves, size=n)
    X = np.stack([centers[lab] for lab in y]) + rng.normal(size=(n, d))
    return X, y.astype(object)


def _fit(name: str, X, y, tax=TAX, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hierlab.make_estimator(name, taxonomy=tax, **kw).fit(X, y)


#: the weight matrix whose rows explain() sorts, per model kind
ROWS = {
    "topdown": lambda e: e.coef_,  # a node's vector at its parent
    "flatmult": lambda e: e.coef_,  # one vector per candidate
    "hr-svm": lambda e: e.coef_,
    "treeloss": lambda e: e.coef_,  # TREELOSS's coef_ already holds the path sums
    "nhsvm": lambda e: TAX.ancestor_matrix @ e.coef_,  # path sums of U
    "hieron-batch": lambda e: e.prototypes_,  # W^v = sum of the increments on the path
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_explain_node_is_the_sorted_weight_row(name: str) -> None:
    X, y = _data()
    est = _fit(name, X, y)
    names = [f"w{j}" for j in range(X.shape[1])]
    W = np.asarray(ROWS[name](est))
    for node in ("a", "b2", "a1"):
        table = hierlab.explain(est, node, k=5, feature_names=names)
        row = W[TAX.index(node)]
        order = np.argsort(-row, kind="stable")[:5]
        assert table["feature"].tolist() == [names[j] for j in order]
        np.testing.assert_allclose(table["weight"], row[order])
        assert table["weight"].is_monotonic_decreasing


@pytest.mark.parametrize("name", ["topdown", "flatmult", "treeloss", "hieron-greedy", "mftree"])
def test_path_contributions_add_up_to_each_steps_margin(name: str) -> None:
    X, y = _data(seed=1)
    kw = {"allow_stop": True} if name == "hieron-greedy" else {}
    est = _fit(name, X, y, tax=None if name == "mftree" else TAX, **kw)
    tax = est.taxonomy_
    d = X.shape[1]
    S = est._node_scores(X[:12])
    C = conditional_margins(S, tax, est._routing(), est._candidates(), est._stop_scores())
    pred = np.asarray(tax.index([str(v) for v in est.predict(X[:12])]))
    for i in range(12):
        table = hierlab.explain(est, X[i], k=d)
        path = tax.ancestors(int(pred[i]), include_self=True)[1:]
        assert table.groupby("step")["node"].first().tolist() == [str(tax.names[v]) for v in path]
        for step, v in enumerate(path, start=1):
            part = table[table["step"] == step]
            # the step's margin is the conditional margin behind the prediction ...
            np.testing.assert_allclose(part["margin"].iloc[0], C[i, v], rtol=1e-9, atol=1e-9)
            assert part["margin"].iloc[0] >= 0
            # ... and the contributions are x_j times the weight difference, summed to it
            wb = est._score_weights()
            assert wb is not None
            W, b = np.asarray(wb[0].toarray() if hasattr(wb[0], "toarray") else wb[0]), wb[1]
            rival = part["rival"].iloc[0]
            winner = int(pred[i]) if est._routing() == "flat" else int(v)
            diff = W[winner] - (W[tax.index(rival)] if rival != "(stop)" else 0.0)
            offset = b[winner] - (b[tax.index(rival)] if rival != "(stop)" else 0.0)
            j = part["feature_index"].to_numpy()
            np.testing.assert_allclose(part["contribution"], X[i, j] * diff[j])
            np.testing.assert_allclose(part["contribution"].sum() + offset, C[i, v], atol=1e-9)


def test_mftree_explains_a_split_by_the_difference_of_class_means() -> None:
    X, y = _data(seed=2)
    est = _fit("mftree", X, y, tax=None)
    tax = est.taxonomy_
    for v in range(1, tax.n_nodes):
        below = {str(tax.names[u]) for u in tax.descendants(v, include_self=True)}
        sib = tax.siblings(v)
        other = {str(tax.names[u]) for s in sib for u in tax.descendants(s, include_self=True)}
        expect = X[np.isin(y, list(below))].mean(axis=0) - X[np.isin(y, list(other))].mean(axis=0)
        table = hierlab.explain(est, tax.names[v], k=3)
        order = np.argsort(-expect, kind="stable")[:3]
        np.testing.assert_array_equal(table["feature_index"], order)
        np.testing.assert_allclose(table["weight"], expect[order])
    with pytest.raises(ParameterError, match="root"):
        hierlab.explain(est, tax.names[0])


def test_text_models_explain_with_words() -> None:
    train, _ = hierlab.make_hierarchical_text(
        n_samples=400, n_classes=6, n_features=300, depth=2, random_state=0
    )
    est = hierlab.TopDownClassifier(taxonomy=train.taxonomy).fit(train.X, train.y)
    leaf = str(train.y[0])
    table = hierlab.explain(est, leaf, k=4, feature_names=train.feature_names)
    assert set(table["feature"]) <= set(train.feature_names)
    steps = hierlab.explain(est, train.X[0], k=3, feature_names=train.feature_names)
    assert (
        steps["step"].max()
        == train.taxonomy.depth[train.taxonomy.index(est.predict(train.X[:1])[0])]
    )


def test_explain_refuses_what_it_cannot_explain() -> None:
    X, y = _data()
    est = _fit("topdown", X, y)
    with pytest.raises(ParameterError, match="not a node"):
        hierlab.explain(est, "zzz")
    with pytest.raises(ParameterError, match="k must"):
        hierlab.explain(est, "a", k=0)
    with pytest.raises(ParameterError, match="feature_names"):
        hierlab.explain(est, "a", feature_names=["one"])
    with pytest.raises(ParameterError, match="one example"):
        hierlab.explain(est, X[:2])
    rbf = _fit("hieron-batch", X, y, kernel="rbf")
    with pytest.raises(ParameterError, match="kernel"):
        hierlab.explain(rbf, "a")
