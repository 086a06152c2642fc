"""Every registered estimator on every input dtype: the same predictions as float64, or a clean
parameter error; and malformed sparse input refused before use.

The values are small integers, exact in every dtype tried (int8, int64, float32, bool for 0/1
features, a pandas DataFrame of the float64 values), so a method that accepts the dtype must
predict exactly what it predicts on float64. Mutation that makes it fail: ``check_X`` passing
the caller's dtype through (top-down's ``len() of unsized object`` on int8), or a family
reading ``X.dtype`` before validation.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import hierlab
from hierlab.core.exceptions import DataError, HierlabError
from hierlab.core.taxonomy import Taxonomy

TAX = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])
#: a small budget for each method: the test is about dtypes, not about the solvers
BUDGET = 30


def _data() -> tuple[np.ndarray, np.ndarray]:
    """0/1 features (exact in bool and every integer dtype), three leaves, 30 rows."""
    rng = np.random.default_rng(0)
    leaves = TAX.names[TAX.leaves]
    lab = np.arange(30) % len(leaves)
    X = (rng.random((30, 6)) < 0.2).astype(np.float64)
    X[np.arange(30), lab] = 1.0  # the leaf's own feature, so every method has signal
    return X, leaves[lab].astype(object)


def _estimator(name: str) -> Any:
    spec = hierlab.get_method(name)
    budget = spec.estimator._budget_param
    kw = {budget: BUDGET} if budget in spec.estimator().get_params() else {}
    return hierlab.make_estimator(name, taxonomy=TAX, **kw)


DTYPES = ["int8", "int64", "float32", "bool", "DataFrame"]


def _as(X: np.ndarray, kind: str) -> Any:
    if kind == "DataFrame":
        return pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    return X.astype(kind)


@pytest.mark.parametrize("name", hierlab.list_methods())
def test_every_dtype_predicts_as_float64(name: str) -> None:
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _estimator(name).fit(X, y)
        expected = np.asarray(ref.predict(X)).tolist()
        for kind in DTYPES:
            Xk = _as(X, kind)
            try:
                est = _estimator(name).fit(Xk, y)
            except HierlabError as exc:  # a refusal must be a clean parameter/data error
                assert kind in str(exc) or "dtype" in str(exc), (name, kind, exc)
                continue
            assert np.asarray(est.predict(Xk)).tolist() == expected, (name, kind)
            assert np.asarray(ref.predict(Xk)).tolist() == expected, (name, kind)


def _malformed(kind: str) -> sp.csr_matrix:
    X = sp.csr_matrix(_data()[0])
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    if kind == "column out of bounds":
        indices[3] = 6
    elif kind == "negative column":
        indices[3] = -1
    else:  # decreasing indptr
        indptr[5] = indptr[7]
    M = sp.csr_matrix(X.shape)
    M.data, M.indices, M.indptr = data, indices, indptr
    return M


@pytest.mark.parametrize("kind", ["column out of bounds", "negative column", "decreasing indptr"])
def test_malformed_csr_is_refused(kind: str) -> None:
    X, y = _data()
    est = _estimator("flatmult").fit(X, y)
    bad = _malformed(kind)
    for call in (est.predict, est.predict_proba, est.node_proba, est.decision_path):
        with pytest.raises(DataError, match="sparse"):
            call(bad)
    with pytest.raises(DataError, match="sparse"):
        _estimator("topdown").fit(bad, y)
