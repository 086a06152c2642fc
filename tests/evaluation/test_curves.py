"""Curves from node probabilities: PR (pooled), reliability, precision against depth."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, brier_score_loss

import hierlab
from hierlab import DataError, Taxonomy
from hierlab.evaluation import curves
from hierlab.evaluation.metrics import au_prc, hierarchical_prf, label_indicator

TAX = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])


@pytest.fixture
def fitted():
    rng = np.random.default_rng(0)
    leaves = TAX.names[TAX.leaves]
    centers = {lab: rng.normal(scale=1.5, size=6) for lab in leaves}
    y = rng.choice(leaves, size=400).astype(object)
    X = np.stack([centers[lab] for lab in y]) + rng.normal(size=(400, 6))
    est = hierlab.TopDownClassifier(taxonomy=TAX).fit(X[:250], y[:250])
    est.calibrate(X[:250], y[:250], cv=3)
    return est, X[250:], y[250:]


def test_pr_curve_area_is_au_prc_and_scikit_learns_micro_average(fitted) -> None:
    est, X, y = fitted
    P = est.node_proba(X)
    df = curves.pr_curve(y, P, TAX)
    Y = label_indicator(y, TAX, closure=True).toarray()
    assert df.attrs["au_prc"] == pytest.approx(au_prc(Y, P))
    ref = average_precision_score(Y[:, 1:], P[:, 1:], average="micro")
    assert df.attrs["au_prc"] == pytest.approx(ref)
    assert df["threshold"].is_monotonic_decreasing
    assert df["recall"].is_monotonic_increasing and df["recall"].iloc[-1] == pytest.approx(1.0)


def test_reliability_bins_every_pair_once(fitted) -> None:
    est, X, y = fitted
    P = est.node_proba(X)
    rel = curves.reliability(y, P, TAX, n_bins=5)
    Y = label_indicator(y, TAX, closure=True).toarray()
    y_pairs, p_pairs = Y[:, 1:].ravel(), P[:, 1:].ravel()
    assert rel["count"].sum() == y_pairs.size
    assert rel.attrs["pooled_node_brier"] == pytest.approx(brier_score_loss(y_pairs, p_pairs))
    assert curves.pooled_node_brier(Y, P) == pytest.approx(rel.attrs["pooled_node_brier"])
    # brute-force ECE over the same bins
    b = np.minimum((p_pairs * 5).astype(int), 4)
    ece = (
        sum(
            abs(y_pairs[b == k].mean() - p_pairs[b == k].mean()) * (b == k).sum()
            for k in range(5)
            if (b == k).any()
        )
        / y_pairs.size
    )
    assert rel.attrs["pooled_node_ece"] == pytest.approx(ece)
    assert np.all((rel["observed"] >= 0) & (rel["observed"] <= 1))


def test_threshold_curve_moves_predictions_up_their_path(fitted) -> None:
    est, X, y = fitted
    P = est.node_proba(X)
    pred = est.predict(X)
    table = curves.threshold_curve(y, P, pred, TAX, thresholds=np.linspace(0, 1, 11))
    first = table.iloc[0]
    prf = hierarchical_prf(y, pred, TAX)
    assert first["hierarchical_precision"] == pytest.approx(prf.precision)
    assert first["stopped"] == 0.0
    assert table["mean_depth"].is_monotonic_decreasing
    assert table["on_true_path"].is_monotonic_increasing
    assert table["stopped"].is_monotonic_increasing
    last = table.iloc[-1]  # t = 1: only certain nodes remain, the root always is
    assert last["on_true_path"] >= first["on_true_path"]
    for t in (0.5, 0.9):  # the table is what predict(X, threshold=t) returns
        row = table[np.isclose(table["threshold"], t)].iloc[0]
        cut = est.predict(X, threshold=t)
        assert row["mean_depth"] == pytest.approx(TAX.depth[TAX.index(list(cut))].mean())
        prf = hierarchical_prf(y, cut, TAX)
        assert row["hierarchical_precision"] == pytest.approx(prf.precision)


def test_probability_report_and_errors(fitted) -> None:
    est, X, y = fitted
    rep = curves.probability_report(est, X, y)
    assert 0 < rep["au_prc"] <= 1 and 0 <= rep["brier"] <= 2 and 0 <= rep["ece"] <= 1
    Y = label_indicator(y, TAX, closure=True).toarray()
    assert rep["au_prc"] == au_prc(Y, rep["node_proba"])
    P = rep["node_proba"]
    assert rep["pooled_node_brier"] == pytest.approx(curves.pooled_node_brier(Y, P))
    # the standard figures judge each example's distribution over the leaves (predict_proba)
    proba, classes = est.predict_proba(X), list(est.classes_)
    onehot = np.array([[c == lab for c in classes] for lab in y], dtype=float)
    assert rep["brier"] == pytest.approx(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    conf = proba.max(axis=1)
    correct = np.array(classes, dtype=object)[proba.argmax(axis=1)] == y
    b = np.clip(np.ceil(conf * 15).astype(int) - 1, 0, 14)
    ece = sum(
        abs(correct[b == m].mean() - conf[b == m].mean()) * (b == m).sum() for m in set(b)
    ) / len(y)
    assert rep["ece"] == pytest.approx(ece)
    assert list(rep["thresholds"]["threshold"]) == list(curves.THRESHOLDS)
    with pytest.raises(DataError, match="one label"):
        curves.threshold_curve([("a1",)], rep["node_proba"][:1], [("a1",)], TAX)
    with pytest.raises(DataError, match="taxonomy"):
        curves.pr_curve(list(y), rep["node_proba"])


def test_probability_report_leaves_out_classes_an_induced_tree_lacks() -> None:
    """MF-Tree induces its tree from the training labels: a test row of a class no training row
    had cannot be scored against it, and is counted instead of raising."""
    from hierlab import MFTreeClassifier, make_hieron_synthetic
    from hierlab.evaluation.curves import probability_report

    tr, te = make_hieron_synthetic(
        n_train_per_label=5, n_test_per_label=2, depth=2, branching=3, random_state=0
    )
    y_tr = np.asarray(tr.y, dtype=object)
    gone = y_tr[0]
    keep = y_tr != gone
    est = MFTreeClassifier().fit(tr.X[keep], y_tr[keep])
    y_te = np.asarray(te.y, dtype=object)
    rep = probability_report(est, te.X, y_te)
    assert rep["unscored_rows"] == int((y_te == gone).sum()) > 0
    scored = probability_report(est, te.X[y_te != gone], y_te[y_te != gone])
    assert rep["au_prc"] == scored["au_prc"] and scored["unscored_rows"] == 0


def test_standard_calibration_by_row_blocks_equals_the_whole(fitted, monkeypatch) -> None:
    est, X, y = fitted
    whole = curves.probability_report(est, X, y)
    monkeypatch.setattr(curves, "CALIBRATION_ROWS", 7)  # 150 rows: 22 blocks
    blocks = curves.probability_report(est, X, y)
    assert blocks["ece"] == pytest.approx(whole["ece"], abs=1e-12)
    assert blocks["brier"] == pytest.approx(whole["brier"], abs=1e-12)
    assert blocks["reliability"]["count"].sum() == len(y)
