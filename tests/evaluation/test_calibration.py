"""Calibration by the standard definitions: top-1 ECE and the multi-class Brier score."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab import DataError
from hierlab.evaluation.calibration import (
    calibration_sums,
    expected_calibration_error,
    multiclass_brier_score,
    top1_reliability,
)

P4 = np.array([[0.7, 0.2, 0.1], [0.4, 0.4, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
Y4 = np.array([0, 1, 1, 0])


def test_hand_computed_small_case() -> None:
    # top-1: confidences 0.7, 0.4 (a tie: the first column, wrong), 0.8, 0.4; correct 1,0,1,0.
    # 5 bins ((m-1)/5, m/5]: (0.2, 0.4] holds 0.4, 0.4 (accuracy 0): gap 0.4;
    # (0.6, 0.8] holds 0.7, 0.8 (accuracy 1): gap 0.25. ECE = 2/4 * 0.4 + 2/4 * 0.25
    assert expected_calibration_error(Y4, P4, n_bins=5) == pytest.approx(0.325)
    # Brier: 0.14 + 0.56 + 0.06 + 0.74 = 1.5 over 4 examples
    assert multiclass_brier_score(Y4, P4) == pytest.approx(0.375)
    rel = top1_reliability(Y4, P4, n_bins=5)
    assert list(rel["count"]) == [2, 2]
    np.testing.assert_allclose(rel["mean_predicted"], [0.4, 0.75])
    np.testing.assert_allclose(rel["observed"], [0.0, 1.0])


def test_labels_through_classes_and_an_unknown_class() -> None:
    classes = np.array(["a", "b", "c"], dtype=object)
    y = np.array(["a", "b", "b", "a"], dtype=object)
    assert expected_calibration_error(y, P4, classes, n_bins=5) == pytest.approx(0.325)
    # a true label that is no column: probability 0 for it, never correct
    y2 = np.array(["a", "b", "b", "zzz"], dtype=object)
    brier = (0.14 + 0.56 + 0.06 + (0.09 + 0.09 + 0.16 + 1.0)) / 4
    assert multiclass_brier_score(y2, P4, classes) == pytest.approx(brier)


def _brute(y: np.ndarray, P: np.ndarray, n_bins: int) -> tuple[float, float]:
    """ECE and Brier with a loop over examples and explicit bin intervals."""
    n, k = P.shape
    members: list[list[int]] = [[] for _ in range(n_bins)]
    for i in range(n):
        conf = max(P[i])
        for m in range(n_bins):
            low, high = m / n_bins, (m + 1) / n_bins
            if (low < conf <= high) or (m == 0 and conf == 0.0):
                members[m].append(i)
                break
    ece = 0.0
    for rows in members:
        if rows:
            acc = np.mean([int(np.argmax(P[i])) == y[i] for i in rows])
            conf = np.mean([max(P[i]) for i in rows])
            ece += len(rows) / n * abs(acc - conf)
    brier = sum(sum((P[i, c] - (c == y[i])) ** 2 for c in range(k)) for i in range(n)) / n
    return ece, brier


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_brute_force_dense_and_sparse(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = 60, 7
    raw = rng.random((n, k)) ** 4
    raw[rng.random((n, k)) < 0.4] = 0.0  # many exact zeros: a sparse distribution
    raw[:, 0] += 1e-3
    P = raw / raw.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, size=n)
    ece, brier = _brute(y, P, 10)
    assert expected_calibration_error(y, P, n_bins=10) == pytest.approx(ece)
    assert multiclass_brier_score(y, P) == pytest.approx(brier)
    S = sp.csr_matrix(P)
    assert expected_calibration_error(y, S, n_bins=10) == pytest.approx(ece)
    assert multiclass_brier_score(y, S) == pytest.approx(brier)
    # additive: two row blocks give the whole set's figures
    both = calibration_sums(y[:25], P[:25], n_bins=10) + calibration_sums(y[25:], S[25:], None, 10)
    assert both.ece == pytest.approx(ece) and both.brier == pytest.approx(brier)


def test_pooled_and_standard_differ_on_a_useless_model() -> None:
    """Uniform guesses over 1,000 classes, always wrong: the pooled pair error is near 0, the
    multi-class Brier score near 1; the top-1 ECE is the confidence 1/1000 (accuracy 0)."""
    n, k = 200, 1000
    P = np.full((n, k), 1.0 / k)
    y = np.full(n, k - 1)  # argmax is column 0 (ties): always wrong
    assert expected_calibration_error(y, P) == pytest.approx(1.0 / k)
    assert multiclass_brier_score(y, P) == pytest.approx(1.0 - 1.0 / k)
    Y = np.zeros((n, k))
    Y[np.arange(n), y] = 1
    pooled = np.mean((P - Y) ** 2)
    assert pooled < 1e-3 < multiclass_brier_score(y, P)


def test_errors_name_the_problem() -> None:
    with pytest.raises(DataError, match="shape"):
        expected_calibration_error(Y4[:3], P4)
    with pytest.raises(DataError, match="columns"):
        multiclass_brier_score(np.array([0, 1, 5, 0]), P4)
    with pytest.raises(DataError, match="integer"):
        multiclass_brier_score(np.array(["a", "b", "b", "a"]), P4)
    with pytest.raises(DataError, match="n_bins"):
        expected_calibration_error(Y4, P4, n_bins=0)
