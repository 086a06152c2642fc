"""hierlab.tune: the warm path certifies the cold optima, and picks the best C."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from hierlab import (
    FlatMulticlassClassifier,
    HieronClassifier,
    OrthogonalTransferClassifier,
    TopDownClassifier,
    make_hieron_synthetic,
    tune,
)
from hierlab.core.exceptions import ParameterError
from hierlab.evaluation.scoring import hierarchical_scorer


@pytest.fixture(scope="module")
def data():
    tr, _ = make_hieron_synthetic(
        n_train_per_label=6, n_test_per_label=1, depth=2, branching=3, random_state=3
    )
    return tr


CS = (0.01, 0.1, 1.0)


@pytest.mark.parametrize(
    "est",
    [
        FlatMulticlassClassifier(rtol=1e-7, tol=0.0, max_iter=20000),
        OrthogonalTransferClassifier(alpha=0.2, rtol=1e-5, tol=0.0, max_iter=20000),
    ],
    ids=["flatmult", "orthognl"],
)
def test_warm_path_reaches_the_cold_optima(data, est) -> None:
    """Tight tolerances: each warm fit certifies the optimum a cold fit certifies (the primal is
    strongly convex, so both land on the same W), hence the same validation scores."""
    est = clone(est).set_params(taxonomy=data.taxonomy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = tune(est, data.X, data.y, Cs=CS, path_rtol=None, refit=False, patience=None)
    assert list(res.path["C"]) == list(CS)
    assert list(res.path["warm"]) == [False, True, True]
    X_tr, X_va, y_tr, y_va = train_test_split(
        data.X, np.asarray(data.y, dtype=object), test_size=0.2, random_state=0,
        stratify=np.asarray(data.y, dtype=str),
    )  # fmt: skip
    scorer = hierarchical_scorer("hierarchical_f1")
    for C, score, gap in zip(CS, res.path["score"], res.path["gap"]):
        cold = clone(est).set_params(C=C).fit(X_tr, y_tr)
        assert gap <= est.rtol * cold.objective_ + 1e-12
        assert score == pytest.approx(scorer(cold, X_va, y_va), abs=1e-12)
    assert res.best_C == CS[int(np.argmax(res.path["score"].to_numpy()))]


def test_warm_start_takes_fewer_epochs_than_cold(data) -> None:
    est = FlatMulticlassClassifier(taxonomy=data.taxonomy, rtol=1e-6, tol=0.0, max_iter=20000)
    kw = {"Cs": CS, "path_rtol": None, "refit": False, "patience": None}
    warm = tune(est, data.X, data.y, **kw)
    cold = tune(est, data.X, data.y, warm_start=False, **kw)
    assert not cold.path["warm"].any()
    assert warm.path["n_iter"].iloc[1:].sum() < cold.path["n_iter"].iloc[1:].sum()


def test_refit_and_uncertified_methods(data) -> None:
    est = TopDownClassifier(taxonomy=data.taxonomy)
    res = tune(est, data.X, data.y, Cs=(0.1, 1.0))
    assert not res.path["warm"].any()  # liblinear fits: cold at every C
    assert res.estimator.C == res.best_C
    direct = clone(est).set_params(C=res.best_C).fit(data.X, data.y)
    np.testing.assert_array_equal(res.estimator.predict(data.X), direct.predict(data.X))
    assert est.C == 1.0  # the given estimator is left alone


def test_refusals(data) -> None:
    with pytest.raises(ParameterError, match="no parameter C"):
        tune(HieronClassifier(taxonomy=data.taxonomy), data.X, data.y)
    with pytest.raises(ParameterError, match="positive"):
        tune(TopDownClassifier(taxonomy=data.taxonomy), data.X, data.y, Cs=(0.0, 1.0))
    with pytest.raises(ParameterError, match="validation"):
        tune(TopDownClassifier(taxonomy=data.taxonomy), data.X, data.y, validation=1.5)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="patience"):
            tune(TopDownClassifier(taxonomy=data.taxonomy), data.X, data.y, patience=bad)
    with pytest.raises(ParameterError, match="max_time"):
        tune(TopDownClassifier(taxonomy=data.taxonomy), data.X, data.y, max_time=-1.0)


GRID = tuple(float(c) for c in np.logspace(-3, 3, 13))


@pytest.fixture(scope="module")
def noisy():
    """A set whose validation score rises, falls and rises again along GRID."""
    tr, _ = make_hieron_synthetic(
        n_train_per_label=10, n_test_per_label=1, depth=3, branching=2, noise_std=0.6,
        random_state=1,
    )  # fmt: skip
    return tr


@pytest.mark.parametrize("patience", [1, 2, 3, 12])
def test_patience_ends_the_path_after_that_many_scores_below_the_best(noisy, patience) -> None:
    """Against the whole grid fitted: the early path is its prefix, and it ends exactly where
    ``patience`` scores since the last improvement have fallen below the running best."""
    data = noisy
    est = TopDownClassifier(taxonomy=data.taxonomy)
    full = tune(est, data.X, data.y, Cs=GRID, refit=False, patience=None)
    assert full.stopped == "grid" and full.skipped == ()
    scores = full.path["score"].to_numpy()
    # the brute-force end of the path: the first index by which `patience` scores since the
    # last strict improvement have been strictly below the best (ties count for nothing)
    end = len(scores)
    for i in range(len(scores)):
        last = max(j for j in range(i + 1) if j == 0 or scores[j] > scores[:j].max())
        if sum(scores[j] < scores[:j].max() for j in range(last + 1, i + 1)) >= patience:
            end = i + 1
            break
    assert len(set(scores.round(12))) > 2  # the path does move: the test can tell
    early = tune(est, data.X, data.y, Cs=GRID, refit=False, patience=patience)
    assert len(early.path) == end
    np.testing.assert_array_equal(early.path["score"], scores[:end])
    assert early.stopped == ("patience" if end < len(GRID) else "grid")
    assert early.skipped == GRID[end:]
    assert early.best_C == full.path["C"].iloc[int(np.argmax(scores[:end]))]


def test_max_time_zero_fits_only_the_first_C(data) -> None:
    est = TopDownClassifier(taxonomy=data.taxonomy)
    res = tune(est, data.X, data.y, Cs=(0.1, 1.0, 10.0), max_time=0.0)
    assert list(res.path["C"]) == [0.1]
    assert res.stopped == "max_time" and res.skipped == (1.0, 10.0)
    assert res.best_C == 0.1 and res.estimator.C == 0.1
