"""The default fits of the certified seed-000 methods on the default data set stream a
convergence worth watching (issue 18): at least 20 certified states, and a certified gap that
falls at least 100-fold, non-increasing from state to state. States and gaps only, never time.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hierlab.datasets.catalog import load_builtin
from hierlab.methods.orthogonal.estimators import (
    FlatMulticlassClassifier,
    OrthogonalTransferClassifier,
)


@pytest.fixture(scope="module")
def hieron() -> tuple:
    train, _ = load_builtin("hieron-synthetic")
    return train.X, train.y, train.taxonomy


@pytest.mark.parametrize("cls", [FlatMulticlassClassifier, OrthogonalTransferClassifier])
def test_default_fit_streams_a_falling_certified_gap(cls: type, hieron: tuple) -> None:
    X, y, tax = hieron
    est = cls(taxonomy=tax)  # the class defaults: what the Train page runs by default
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # it converges: no ConvergenceWarning
        est.fit(X, y)
    h = est.history_
    exact = h[h["exact"].astype(bool)] if "exact" in h.columns else h
    gap = exact["gap"].to_numpy(dtype=float)
    assert len(exact) >= 20
    assert np.all(np.isfinite(gap)) and np.all(gap >= 0)
    assert np.all(np.diff(gap) <= 1e-9 * gap[0])  # best upper, best lower: never up
    assert gap[0] >= 100 * gap[-1]
    assert est.converged_ and gap[-1] <= est.rtol * exact["upper"].iloc[-1]
