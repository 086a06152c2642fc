"""experiments.compare: identical splits, summaries and p-values equal to direct scipy calls."""

from __future__ import annotations

import distributed
import joblib
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.svm import LinearSVC

from hierlab import HierDataset, ParameterError, Taxonomy
from hierlab.evaluation.compare import compare, make_splits
from hierlab.evaluation.metrics import evaluate
from hierlab.methods.topdown import TopDownClassifier


@pytest.fixture(scope="module")
def data() -> HierDataset:
    tax = Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2"), ("b", "b3")]
    )
    rng = np.random.default_rng(0)
    leaves = tax.names[tax.leaves]
    centers = rng.normal(scale=1.2, size=(len(leaves), 6))
    lab = rng.integers(0, len(leaves), size=240)
    X = centers[lab] + rng.normal(size=(240, 6))
    return HierDataset(X=X, y=leaves[lab], taxonomy=tax, name="toy")


METHODS = [("topdown", {"C": 1.0}), ("low-C", TopDownClassifier(C=0.001))]


def test_identical_splits_and_direct_metrics(data: HierDataset) -> None:
    cmp = compare(data, METHODS, n_splits=3, test_size=0.25, random_state=5)
    _, splits = make_splits(data, "repeated", 3, 0.25, 5)
    assert len(cmp.splits) == 3
    for (tr, te), (tr2, te2) in zip(cmp.splits, splits):
        np.testing.assert_array_equal(tr, tr2)
        np.testing.assert_array_equal(te, te2)
        assert len(np.intersect1d(tr, te)) == 0
    # every value equals a direct fit + evaluate on the same indices
    for s, (tr, te) in enumerate(cmp.splits):
        est = TopDownClassifier(taxonomy=data.taxonomy, C=0.001).fit(data.X[tr], data.y[tr])
        direct = evaluate(data.y[te], est.predict(data.X[te]), data.taxonomy)
        rows = cmp.results[(cmp.results.method == "low-C") & (cmp.results.split == s)]
        got = rows.set_index("metric")["value"]
        for k, v in direct.items():
            assert got[k] == pytest.approx(v)
    summ = cmp.summary()
    acc = cmp.results.query("metric == 'accuracy'").groupby("method")["value"]
    assert summ.loc["low-C", "accuracy_mean"] == pytest.approx(acc.mean()["low-C"])
    assert summ.loc["low-C", "accuracy_std"] == pytest.approx(acc.std()["low-C"])
    assert list(summ.index) == ["topdown(C=1.0)", "low-C"]


def test_one_split_summarises_with_a_zero_spread(data: HierDataset) -> None:
    """One split has no standard deviation: the table says ± 0 instead of failing."""
    cmp = compare(data, METHODS, n_splits=1, test_size=0.25, random_state=5)
    summ = cmp.summary()
    assert summ["accuracy_std"].isna().all()
    acc = cmp.results.query("metric == 'accuracy' and method == 'low-C'")["value"].iloc[0]
    assert summ.loc["low-C", "accuracy_mean"] == pytest.approx(acc)
    assert cmp.table().loc["low-C", "accuracy"] == f"{acc:.4f} ± 0.0000"


def test_p_values_equal_direct_scipy(data: HierDataset) -> None:
    cmp = compare(data, METHODS, n_splits=4, random_state=1)
    tests = cmp.tests("topdown(C=1.0)", "accuracy")
    a = cmp.results.query("metric == 'accuracy' and method == 'low-C'")["value"].to_numpy()
    b = cmp.results.query("metric == 'accuracy' and method == 'topdown(C=1.0)'")["value"]
    assert tests.loc["low-C", "t_pvalue"] == pytest.approx(stats.ttest_rel(a, b).pvalue)
    ok_m = np.concatenate([cmp.correct[("low-C", s)] for s in range(4)])
    ok_b = np.concatenate([cmp.correct[("topdown(C=1.0)", s)] for s in range(4)])
    w, l_ = int(np.sum(ok_m & ~ok_b)), int(np.sum(~ok_m & ok_b))
    assert (tests.loc["low-C", "wins"], tests.loc["low-C", "losses"]) == (w, l_)
    assert tests.loc["low-C", "sign_pvalue"] == pytest.approx(stats.binomtest(w, w + l_).pvalue)
    # per-class F1 pooled over splits, Wilcoxon
    from sklearn.metrics import f1_score

    yt = np.concatenate([data.y[te] for _, te in cmp.splits]).astype(str)
    pm = np.concatenate([cmp.predictions[("low-C", s)] for s in range(4)]).astype(str)
    pb = np.concatenate([cmp.predictions[("topdown(C=1.0)", s)] for s in range(4)]).astype(str)
    labels = np.unique(yt)
    fm = f1_score(yt, pm, labels=labels, average=None, zero_division=0)
    fb = f1_score(yt, pb, labels=labels, average=None, zero_division=0)
    assert tests.loc["low-C", "wilcoxon_pvalue"] == pytest.approx(stats.wilcoxon(fm, fb).pvalue)


def test_given_split_and_kfold(data: HierDataset) -> None:
    train, test = data.subset(np.arange(180)), data.subset(np.arange(180, 240))
    cmp = compare((train, test), ["topdown"])
    assert len(cmp.splits) == 1
    np.testing.assert_array_equal(cmp.splits[0][1], np.arange(180, 240))
    kf = compare(data, ["topdown"], split="kfold", n_splits=4)
    tests_idx = np.sort(np.concatenate([te for _, te in kf.splits]))
    np.testing.assert_array_equal(tests_idx, np.arange(240))


def test_parallel_and_dask_equal_serial(data: HierDataset) -> None:
    serial = compare(data, METHODS, n_splits=2, random_state=2, n_jobs=1).results
    par = compare(data, METHODS, n_splits=2, random_state=2, n_jobs=2).results
    cols = ["method", "split", "metric", "value"]
    pd.testing.assert_frame_equal(serial[cols], par[cols])
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with joblib.parallel_backend("dask"):
            dsk = compare(data, METHODS, n_splits=2, random_state=2, n_jobs=2).results
    pd.testing.assert_frame_equal(serial[cols], dsk[cols])


def test_bad_inputs(data: HierDataset) -> None:
    with pytest.raises(ParameterError, match="share the label"):
        compare(data, ["topdown", "topdown"])
    with pytest.raises(ParameterError, match="cannot read method"):
        compare(data, [42])
    cmp = compare(
        data, ["topdown", ("flat", TopDownClassifier(estimator=LinearSVC(C=0.1)))], n_splits=2
    )
    with pytest.raises(ParameterError, match="baseline"):
        cmp.tests("nope")


def test_grid_search_with_hierarchical_scorer(data: HierDataset) -> None:
    from sklearn.model_selection import GridSearchCV, KFold

    from hierlab.evaluation.metrics import tree_induced_error
    from hierlab.evaluation.scoring import hierarchical_scorer

    cv = KFold(3, shuffle=True, random_state=0)
    gs = GridSearchCV(
        TopDownClassifier(taxonomy=data.taxonomy),
        {"C": [0.001, 1.0]},
        scoring=hierarchical_scorer("tree_induced_error"),
        cv=cv,
    )
    gs.fit(data.X, data.y)
    # oracle: the same folds by hand
    for k, C in enumerate([0.001, 1.0]):
        vals = []
        for tr, te in cv.split(data.X):
            est = TopDownClassifier(taxonomy=data.taxonomy, C=C).fit(data.X[tr], data.y[tr])
            vals.append(-tree_induced_error(data.y[te], est.predict(data.X[te]), data.taxonomy))
        assert gs.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(vals))
    with pytest.raises(ParameterError):
        hierarchical_scorer("nope")


def test_sign_test_counts_what_accuracy_counts() -> None:
    """Per-example correctness (wins and losses of the sign test) is exact match, as the
    "accuracy" column: on a set with internal labels its mean is each split's accuracy (the
    ancestor rule would count a leaf below an internal true label as right)."""
    from hierlab.datasets import make_hieron_synthetic

    data, _ = make_hieron_synthetic(random_state=0, n_train_per_label=12)  # every vertex a label
    cmp = compare(data, [("topdown", {}), ("flatmult", {})], n_splits=2, random_state=3)
    acc = cmp.results.query("metric == 'accuracy'").set_index(["method", "split"])["value"]
    anc = cmp.results.query("metric == 'accuracy_ancestor'").set_index(["method", "split"])
    assert (anc["value"] > acc + 0.01).any()  # the two rules differ on this set
    for (m, s), ok in cmp.correct.items():
        assert ok.mean() == pytest.approx(acc[(m, s)])
