"""The estimator base class, the registry and the top-down baseline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

import hierlab
from hierlab import DataError, ParameterError, Taxonomy
from hierlab.core.params import Param
from hierlab.methods.topdown import TopDownClassifier


@pytest.fixture
def tree() -> Taxonomy:
    return Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("a", "a3"), ("b", "b1"), ("b", "b2")]
    )


def _data(tax: Taxonomy, n: int = 300, d: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    centers = {lab: rng.normal(scale=3.0, size=d) for lab in leaves}
    y = rng.choice(leaves, size=n)
    X = np.stack([centers[lab] for lab in y]) + rng.normal(size=(n, d))
    return X, y.astype(object)


def test_flat_taxonomy_equals_flat_linearsvc() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 4))
    y = rng.integers(0, 3, size=150)
    ours = TopDownClassifier(C=0.7).fit(X, y)
    ref = LinearSVC(C=0.7).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.predict(X).dtype.kind == "i"  # the user's label type comes back


def test_routing_matches_manual_per_node_classifiers(tree: Taxonomy) -> None:
    X, y = _data(tree)
    est = TopDownClassifier(taxonomy=tree, C=0.5).fit(X, y)
    # oracle: train the two levels by hand and route each example with a Python loop
    top = np.array(["a" if lab.startswith("a") else "b" for lab in y])
    clf_root = LinearSVC(C=0.5).fit(X, top)
    clf_a = LinearSVC(C=0.5).fit(X[top == "a"], y[top == "a"])
    clf_b = LinearSVC(C=0.5).fit(X[top == "b"], y[top == "b"])
    expected = []
    for x in X:
        first = clf_root.predict(x[None])[0]
        expected.append((clf_a if first == "a" else clf_b).predict(x[None])[0])
    np.testing.assert_array_equal(est.predict(X), np.array(expected, dtype=object))


def test_dense_and_sparse_agree(tree: Taxonomy) -> None:
    X, y = _data(tree, seed=3)
    a = TopDownClassifier(taxonomy=tree).fit(X, y).predict(X)
    b = TopDownClassifier(taxonomy=tree).fit(sp.csr_matrix(X), y).predict(sp.csr_matrix(X))
    np.testing.assert_array_equal(a, b)


def test_internal_labels_and_score_use_ancestor_rule(tree: Taxonomy) -> None:
    X, y = _data(tree, seed=4)
    y = y.copy()
    y[:40] = np.where(np.char.startswith(y[:40].astype(str), "a"), "a", "b")
    est = TopDownClassifier(taxonomy=tree).fit(X, y)
    pred = est.predict(X)
    assert set(pred) <= set(tree.names[tree.leaves])  # always routes to a leaf
    path = est.decision_path(X).toarray().astype(bool)
    truth = tree.index(y)
    ok = path[np.arange(len(y)), truth]
    assert est.score(X, y) == pytest.approx(ok.mean())
    # decision_path rows are exactly A+(prediction)
    np.testing.assert_array_equal(path, tree.ancestor_matrix[tree.index(pred)].toarray() > 0)


def test_unseen_child_is_a_default_route(tree: Taxonomy) -> None:
    X, y = _data(tree, seed=5)
    keep = y != "b2"
    est = TopDownClassifier(taxonomy=tree).fit(X[keep], y[keep])
    assert est.default_child_[int(tree.index("b"))] == int(tree.index("b1"))
    assert "b2" not in set(est.predict(X))


def test_coef_rows_score_children(tree: Taxonomy) -> None:
    X, y = _data(tree, seed=6)
    est = TopDownClassifier(taxonomy=tree).fit(X, y)
    assert est.coef_.shape == (tree.n_nodes, X.shape[1])
    root_clf = est.node_estimators_[0]
    a, b = tree.index(["a", "b"])
    np.testing.assert_allclose(est.coef_[a], -est.coef_[b])
    np.testing.assert_allclose(np.abs(est.coef_[a]), np.abs(root_clf.coef_[0]))


def test_coef_is_sparse_for_sparse_rows_and_weighs_only_each_nodes_features(
    tree: Taxonomy,
) -> None:
    """For CSR ``X`` the stacked weights are CSR, the same numbers as for the dense ``X``, and
    a node's row is zero off the features its parent's examples use; the node scores and
    probabilities agree with the dense fit's."""
    X, y = _data(tree, n=240, d=12, seed=7)
    rng = np.random.default_rng(7)
    X[rng.uniform(size=X.shape) < 0.6] = 0.0
    a_rows = np.isin(y, ["a1", "a2", "a3"])
    X[np.ix_(a_rows, [10, 11])] = 0.0  # features no example below "a" uses
    dense = TopDownClassifier(taxonomy=tree).fit(X, y)
    sparse = TopDownClassifier(taxonomy=tree).fit(sp.csr_matrix(X), y)
    assert sp.isspmatrix_csr(sparse.coef_) and isinstance(dense.coef_, np.ndarray)
    np.testing.assert_allclose(sparse.coef_.toarray(), dense.coef_, rtol=1e-10, atol=1e-12)
    for child in ("a1", "a2", "a3"):
        row = sparse.coef_[tree.index(child)].toarray().ravel()
        assert np.any(row != 0) and np.all(row[[10, 11]] == 0)
    np.testing.assert_allclose(
        sparse.node_scores(sp.csr_matrix(X)), dense.node_scores(X), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), rtol=1e-7, atol=1e-10
    )


def test_sparse_top_down_weights_are_not_refused_by_the_dense_weights_guard(
    tree: Taxonomy,
) -> None:
    """The (nodes x features) guard refuses dense weights; top-down with liblinear on CSR rows
    holds them sparse, so it fits where a dense-weight method is refused; on dense rows, or
    with an estimator that may weigh every feature, it is refused."""
    from hierlab.core import limits

    X, y = _data(tree, n=120, d=6, seed=8)
    with limits.override(max_weight_cells=tree.n_nodes * X.shape[1] - 1):
        TopDownClassifier(taxonomy=tree).fit(sp.csr_matrix(X), y)
        with pytest.raises(DataError, match="the weights would be"):
            TopDownClassifier(taxonomy=tree).fit(X, y)
        with pytest.raises(DataError, match="the weights would be"):
            hierlab.make_estimator("hr-svm", taxonomy=tree).fit(sp.csr_matrix(X), y)
        with pytest.raises(DataError, match="the weights would be"):  # may weigh every feature
            TopDownClassifier(
                taxonomy=tree, estimator=LogisticRegression(solver="lbfgs")
            ).fit(sp.csr_matrix(X), y)


def test_unknown_label_is_a_clear_error(tree: Taxonomy) -> None:
    X, y = _data(tree)
    y[7] = "zz"
    with pytest.raises(DataError, match="row 7: label 'zz'"):
        TopDownClassifier(taxonomy=tree).fit(X, y)


def test_dag_is_refused() -> None:
    dag = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    with pytest.raises(DataError, match="tree"):
        TopDownClassifier(taxonomy=dag).fit(np.ones((2, 1)), ["c", "a"])


def test_clone_and_params(tree: Taxonomy) -> None:
    est = TopDownClassifier(taxonomy=tree, C=3.0)
    c = clone(est)
    assert c.get_params()["C"] == 3.0 and c.taxonomy is tree  # immutable: shared, not copied


def test_registry_and_make_estimator(tree: Taxonomy) -> None:
    assert "topdown" in hierlab.list_methods()
    spec = hierlab.get_method("TopDown")
    assert spec.param("C").default == 1.0
    est = hierlab.make_estimator("topdown", taxonomy=tree, C="0.25")
    assert est.C == 0.25 and est.taxonomy is tree
    with pytest.raises(ParameterError, match="must be >="):
        hierlab.make_estimator("topdown", C=-1)
    with pytest.raises(ParameterError, match="no parameter 'alpha'"):
        hierlab.make_estimator("topdown", alpha=1)
    with pytest.raises(ParameterError, match="unknown method"):
        hierlab.make_estimator("nope")


def test_param_validation() -> None:
    p = Param("k", "int", 3, low=1, high=5)
    assert p.validate("4") == 4
    with pytest.raises(ParameterError):
        p.validate(2.5)
    with pytest.raises(ParameterError):
        p.validate(6)
    q = Param("rule", "str", "a", choices=("a", "b"))
    with pytest.raises(ParameterError, match="one of"):
        q.validate("c")


def test_score_with_integer_labels_is_plain_accuracy() -> None:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 3))
    y = rng.integers(0, 4, size=200)
    est = TopDownClassifier(C=0.01).fit(X, y)
    assert est.score(X, y) == pytest.approx(np.mean(est.predict(X) == y))


def test_huge_feature_values_are_refused_with_advice(tree: Taxonomy) -> None:
    X, y = _data(tree)
    X[3, 2] = 1e200
    with pytest.raises(DataError, match="MaxAbsScaler"):
        TopDownClassifier(taxonomy=tree).fit(X, y)
    with pytest.raises(DataError, match="magnitude 1e\\+200"):
        TopDownClassifier(taxonomy=tree).fit(sp.csr_matrix(X), y)


class _Work:
    """Records ``on_work`` and asks for a stop once ``stop_after`` parts are done."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.seen: list[tuple[int, int, tuple[float, float]]] = []
        self.stop_after = stop_after

    def __call__(self, state: object) -> bool:
        return False

    def on_work(self, done: int, total: int, elapsed: float, cost: tuple[float, float]) -> None:
        self.seen.append((done, total, cost))

    def stop_requested(self) -> bool:
        done = self.seen[-1][0] if self.seen else 0
        return self.stop_after is not None and done >= self.stop_after


@pytest.mark.parametrize("sparse", [False, True])
def test_a_large_node_is_fitted_one_binary_problem_at_a_time(
    tree: Taxonomy, sparse: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hierlab.methods import topdown

    X, y = _data(tree, n=400, seed=5)
    Xf = sp.csr_matrix(X) if sparse else X
    whole = TopDownClassifier(taxonomy=tree, C=0.5).fit(Xf, y)  # a's 3 children in one call
    monkeypatch.setattr(topdown, "SPLIT_WORK", 0)
    rec = _Work()
    est = TopDownClassifier(taxonomy=tree, C=0.5).fit(Xf, y, callbacks=[rec])
    # root (a | b) and b (b1 | b2): one call each; a: one call per child, one-vs-rest
    assert [s[0] for s in rec.seen] == [0, 1, 2, 3, 4, 5] and {s[1] for s in rec.seen} == {5}
    a = tree.index(["a"])[0]
    below_a = np.isin(y, ["a1", "a2", "a3"])
    node = est.node_estimators_[a]
    assert isinstance(node, LinearSVC) and list(node.classes_) == list(tree.children(a))
    for j, child in enumerate(node.classes_):  # exact: the binary fit of child vs siblings
        target = (np.asarray(tree.index(list(y[below_a]))) == child).astype(np.int64)
        ref = LinearSVC(C=0.5, random_state=0).fit(Xf[below_a], target)
        np.testing.assert_array_equal(node.coef_[j], ref.coef_[0])
        assert node.intercept_[j] == ref.intercept_[0]
    # liblinear's one-vs-rest in one call solves the same problems: agree to its tolerance
    W, W1 = node.coef_, whole.node_estimators_[a].coef_
    assert np.abs(W - W1).max() <= 1e-2 * np.abs(W1).max()
    np.testing.assert_array_equal(est.predict(Xf), whole.predict(Xf))
    cost = [s[2][0] for s in rec.seen]
    assert cost == sorted(cost) and rec.seen[-1][2][0] == rec.seen[-1][2][1]


def test_a_stop_is_taken_between_the_binary_problems_of_a_node(
    tree: Taxonomy, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hierlab.methods import topdown

    monkeypatch.setattr(topdown, "SPLIT_WORK", 0)
    X, y = _data(tree, n=400, seed=5)
    rec = _Work(stop_after=2)  # the root, then a's first binary problem
    with pytest.raises(hierlab.FitStopped, match="after 2 of 5 parts"):
        TopDownClassifier(taxonomy=tree, C=0.5).fit(X, y, callbacks=[rec])
    assert [s[0] for s in rec.seen] == [0, 1, 2]


def test_a_node_fitted_problem_by_problem_survives_a_model_file(
    tree: Taxonomy, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from hierlab.methods import topdown
    from hierlab.persistence import load, save

    monkeypatch.setattr(topdown, "SPLIT_WORK", 0)
    X, y = _data(tree, n=400, seed=7)
    est = TopDownClassifier(taxonomy=tree, C=0.5).fit(sp.csr_matrix(X), y)
    save(est, tmp_path / "m.hierlab")
    back = load(tmp_path / "m.hierlab")
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    a = tree.index(["a"])[0]
    np.testing.assert_array_equal(back.node_estimators_[a].coef_, est.node_estimators_[a].coef_)
