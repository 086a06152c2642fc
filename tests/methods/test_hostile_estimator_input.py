"""Hostile estimator input (issue 21): labels, declared widths and feature scales.

Every registered method is fed the examples that crashed it before the fix (a ``None`` label,
mixed int/str labels, a CSR declaring 10^8 columns over 18 x 4 stored values) and must refuse
them with a hierlab error that says what to do, before allocating anything of the declared size.
The liblinear-backed methods refuse features whose magnitude makes liblinear spin, before any
call into liblinear (the calls are counted; a problem that large is never handed to it).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import scipy.sparse as sp

import hierlab
from hierlab.core import limits
from hierlab.core.exceptions import DataError
from tests._solver_starts import counted_solver_starts, magnitude

METHODS = hierlab.list_methods()
LIBLINEAR = ["topdown", "cmtl", "ovr-svm", "ovr-lr"]


def _data(n: int = 18, d: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = np.array(["a", "b", "c"] * (n // 3), dtype=object)
    X = np.abs(rng.normal(size=(n, d))) + (y == "a")[:, None]
    return X, y


@pytest.mark.parametrize("name", METHODS)
def test_a_none_label_is_refused_with_its_row(name: str) -> None:
    X, y = _data()
    y[4] = None
    with pytest.raises(DataError, match=r"y\[4\] is None"):
        hierlab.make_estimator(name).fit(X, y)


@pytest.mark.parametrize("name", METHODS)
def test_mixed_int_and_str_labels_are_refused(name: str) -> None:
    X, _ = _data()
    y = np.array([1, "1", 2, "2", 3, "3"] * 3, dtype=object)
    with pytest.raises(DataError, match=r"mixes strings and numbers.*y\[0\] = 1.*y\[1\] = '1'"):
        hierlab.make_estimator(name).fit(X, y)


def test_labels_of_one_type_still_fit() -> None:
    X, _ = _data()
    ints = np.array([1, 2, 3] * 6)
    est = hierlab.make_estimator("flatmult").fit(X, ints)
    assert set(est.predict(X).tolist()) <= {1, 2, 3}
    strs = hierlab.make_estimator("flatmult").fit(X, ints.astype(str).astype(object))
    assert set(strs.predict(X).tolist()) <= {"1", "2", "3"}


@pytest.mark.parametrize("name", METHODS)
def test_a_huge_declared_width_is_refused_before_allocating(name: str) -> None:
    X, y = _data()
    wide = sp.csr_matrix((X.ravel(), np.tile(np.arange(4), 18), np.arange(0, 73, 4)))
    wide = sp.csr_matrix((wide.data, wide.indices, wide.indptr), shape=(18, 10**8))
    with pytest.raises(DataError, match=r"100,000,000 columns.*max_features"):
        hierlab.make_estimator(name).fit(wide, y)


def test_a_huge_width_is_refused_by_incremental_learning_too() -> None:
    X, y = _data()
    wide = sp.csr_matrix((X.ravel(), np.tile(np.arange(4), 18), np.arange(0, 73, 4)))
    wide = sp.csr_matrix((wide.data, wide.indices, wide.indptr), shape=(18, 10**8))
    with pytest.raises(DataError, match=r"100,000,000 columns.*max_features"):
        hierlab.HieronClassifier().partial_fit(wide, y, classes=["a", "b", "c"])


def test_weights_over_the_cell_limit_are_refused() -> None:
    X, y = _data(d=40)
    with limits.override(max_weight_cells=100), pytest.raises(DataError) as err:
        hierlab.make_estimator("flatmult").fit(X, y)
    assert "4 nodes x 40 features" in str(err.value)
    assert "max_weight_cells" in str(err.value)
    with limits.override(max_weight_cells=160):
        hierlab.make_estimator("flatmult").fit(X, y)


@pytest.fixture
def solver_calls() -> Iterator[list[tuple[str, float]]]:
    """The solver starts of the test (:func:`tests._solver_starts.counted_solver_starts`)."""
    with counted_solver_starts() as calls:
        yield calls


@pytest.mark.parametrize("name", LIBLINEAR)
def test_liblinear_fits_refuse_feature_scales_that_make_it_spin(
    name: str, solver_calls: list[tuple[str, float]]
) -> None:
    rng = np.random.default_rng(0)
    y = np.array(["a", "b", "c"] * 6, dtype=object)
    X = (rng.normal(size=(18, 4)) + (y == "a")[:, None]) * 1e90
    with pytest.raises(DataError, match=r"liblinear.*max_abs_feature_liblinear"):
        hierlab.make_estimator(name).fit(X, y)
    assert solver_calls == []  # refused before any solver started


@pytest.mark.parametrize("name", LIBLINEAR)
def test_liblinear_fits_accept_large_but_safe_scales(
    name: str, solver_calls: list[tuple[str, float]]
) -> None:
    X, y = _data()
    est = hierlab.make_estimator(name).fit(X * 1e20, y)
    assert len(est.predict(X * 1e20)) == len(y)
    # the solver ran on the features as given (the counting sees the fits it guards)
    assert solver_calls
    assert max(m for _, m in solver_calls) == pytest.approx(magnitude(X) * 1e20)


def test_a_user_estimator_is_not_held_to_liblinear_limits() -> None:
    from sklearn.neighbors import KNeighborsClassifier

    X, y = _data()
    est = hierlab.TopDownClassifier(estimator=KNeighborsClassifier(n_neighbors=1))
    est.fit(X * 1e90, y)
    assert est.score(X * 1e90, y) == 1.0
