"""Input guards shared by the estimators: features, labels and their values, declared
widths, liblinear's scales.

Each guard refuses, before anything of the declared size is allocated or any solver runs, an
input that would crash, exhaust memory or hang a fit, with a :class:`~hierlab.DataError` that
says what to do. The limits are the settings of :mod:`hierlab.core.limits`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d, validate_data

from hierlab.core import limits
from hierlab.core.dataset import is_label_set
from hierlab.core.exceptions import DataError

__all__ = [
    "MAX_ABS_FEATURE",
    "check_X",
    "check_label_values",
    "check_labels",
    "check_liblinear_scale",
    "check_sparse_structure",
    "check_width",
    "is_liblinear",
]

#: larger feature magnitudes are refused: squares and inner products would overflow float64
MAX_ABS_FEATURE = 1e100


def check_X(
    X: Any, estimator: BaseEstimator | int | None = None, reset: bool = True
) -> np.ndarray | sp.csr_matrix:
    """Validate features: float64, finite, 2-D; CSR stays CSR (int32 indices where possible).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    estimator : BaseEstimator or int, optional
        Validate through ``sklearn.utils.validation.validate_data`` so that ``n_features_in_``
        is set (``reset=True``, in ``fit``) or checked (``reset=False``, in ``predict``). An
        int only checks the number of columns.
    reset : bool, default True

    Returns
    -------
    ndarray or csr_matrix of shape (n_samples, n_features), float64
    """
    kw: dict[str, Any] = {"accept_sparse": "csr", "dtype": np.float64, "ensure_min_samples": 1}
    if sp.issparse(X):
        check_sparse_structure(X)
    try:
        if isinstance(estimator, int | np.integer):  # check_X(X, n_features): a width check
            X = check_array(X, **kw)
            if X.shape[1] != int(estimator):
                raise DataError(
                    f"X has {X.shape[1]} features, but this estimator is expecting "
                    f"{int(estimator)} features as input"
                )
        elif estimator is not None:
            X = validate_data(estimator, X, reset=reset, **kw)
        else:
            X = check_array(X, **kw)
    except ValueError as exc:  # scikit-learn's words, as a hierlab DataError
        if isinstance(exc, DataError):
            raise
        raise DataError(" ".join(str(exc).split())) from None
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.indices.dtype != np.int32 and X.nnz < np.iinfo(np.int32).max:
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
    values = X.data if sp.issparse(X) else X
    if values.size:
        biggest = float(np.abs(values).max())
        if biggest > MAX_ABS_FEATURE:
            raise DataError(
                f"a feature value has magnitude {biggest:.3g}: products of such values overflow "
                f"float64 (limit {MAX_ABS_FEATURE:.0e}). Scale the features, e.g. with "
                "sklearn.preprocessing.MaxAbsScaler."
            )
    return X


def check_sparse_structure(X: Any) -> None:
    """Refuse a sparse matrix whose index arrays do not describe a matrix of its shape.

    CSR/CSC: ``indptr`` of length ``n + 1``, from 0 to ``nnz`` and non-decreasing, every index
    in ``[0, n_columns)`` (resp. rows); COO: row and column indices in bounds. Such a matrix
    would otherwise be read past its bounds or silently mis-assigned.

    Raises
    ------
    DataError
        Naming what is malformed.
    """
    if isinstance(X, sp.csr_matrix | sp.csc_matrix | sp.csr_array | sp.csc_array):
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise DataError(f"X is a malformed sparse matrix: {exc}") from None
    elif isinstance(X, sp.coo_matrix | sp.coo_array) and X.nnz:
        for axis, idx in enumerate(X.coords):
            if int(idx.min()) < 0 or int(idx.max()) >= X.shape[axis]:
                raise DataError(
                    f"X is a malformed sparse matrix: a {('row', 'column')[axis]} index "
                    f"outside [0, {X.shape[axis]})"
                )


def check_labels(y: Any) -> np.ndarray:
    """The labels ``y`` as a 1-D object array of shape (n_samples,), one label (or, for a
    multi-label ``y``, one tuple/set of labels) per row; scikit-learn's checks of a target."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    if isinstance(y, pd.Series | pd.DataFrame):
        y = y.to_numpy()
    if not isinstance(y, list | tuple) and hasattr(y, "__array__"):
        y = np.asarray(y)
    if isinstance(y, np.ndarray) and y.dtype != object:
        y = column_or_1d(y, warn=True)
        if y.dtype.kind == "f":
            check_classification_targets(y)
    if isinstance(y, np.ndarray) and y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    out = np.empty(len(y), dtype=object)
    out[:] = list(y)
    return out


def _kind(v: Any) -> str:
    """The kind of a label value: ``"str"``, ``"bytes"``, ``"number"``, ``"none"`` or its type."""
    if isinstance(v, str):
        return "str"
    if isinstance(v, bytes):
        return "bytes"
    if v is None or (isinstance(v, float | np.floating) and np.isnan(v)):
        return "none"
    if isinstance(v, numbers.Number):
        return "number"
    return type(v).__name__


def check_label_values(y: np.ndarray, multilabel: bool) -> None:
    """Refuse a missing label (None, NaN) and labels that mix strings and numbers.

    scikit-learn refuses mixed label types ("Mix of label input types (string and number)");
    hierlab does too rather than merge ``1`` and ``"1"`` into one class.

    Parameters
    ----------
    y : ndarray of object of shape (n_samples,)
        Labels, or tuples of labels for a multi-label ``y``.
    multilabel : bool

    Raises
    ------
    DataError
        Naming the row (``y[i]``) of the first missing label, or two rows of different kinds
        (for a multi-label ``y``, also a row of one label beside a row of a label set).
    """
    if multilabel:
        _refuse_single_rows(y)
    else:
        types = set(map(type, y))
        if types <= {str, np.str_} or all(issubclass(t, int | np.integer) for t in types):
            return  # the common cases, without a Python loop over the rows
    first: dict[str, tuple[int, Any]] = {}
    for i, row in enumerate(y):
        for v in row if multilabel else (row,):
            k = _kind(v)
            if k == "none":
                raise DataError(f"y[{i}] is {v!r}: every row needs a label")
            if k not in first:
                first[k] = (i, v)
                if len(first) > 1:
                    _refuse_mixed(first)


def _refuse_single_rows(y: np.ndarray) -> None:
    """Refuse a multi-label ``y`` in which some row is one label instead of a label set."""
    single = next((i for i, row in enumerate(y) if not is_label_set(row)), None)
    if single is None:
        return
    if _kind(y[single]) == "none":
        raise DataError(f"y[{single}] is {y[single]!r}: every row needs a label")
    sets = next(i for i, row in enumerate(y) if is_label_set(row))
    rows = sorted([(sets, type(y[sets]).__name__), (single, _kind(y[single]))])
    _refuse_mixed({k: (i, y[i]) for i, k in rows})


def _refuse_mixed(first: dict[str, tuple[int, Any]]) -> None:
    """The error for labels of two kinds (the first row of each)."""
    (k1, (i1, v1)), (k2, (i2, v2)) = list(first.items())[:2]
    what = "strings and numbers" if {k1, k2} == {"str", "number"} else f"{k1} and {k2} values"
    raise DataError(
        f"y mixes {what} (y[{i1}] = {v1!r}, y[{i2}] = {v2!r}); like scikit-learn, hierlab "
        "refuses mixed label types: make every label a str (or every one a number)"
    )


def check_width(
    n_samples: int, n_features: int, nnz: int | None, n_nodes: int, dense_weights: bool = True
) -> None:
    """Refuse a feature width that is absurd for the data, before dense weights are allocated.

    Parameters
    ----------
    n_samples, n_features : int
        The shape of ``X``.
    nnz : int, optional
        Stored values of a sparse ``X`` (None for a dense one), for the message.
    n_nodes : int
        Nodes of the taxonomy: the methods keep up to one weight vector per node.
    dense_weights : bool, default True
        False for a method that holds its weights sparse (top-down on CSR ``X``): only the
        width is checked, not ``n_nodes * n_features``.

    Raises
    ------
    DataError
        When ``n_features`` exceeds ``max_features``, or ``n_nodes * n_features`` exceeds
        ``max_weight_cells``.
    """
    lim = limits.current()
    stored = f" and {nnz:,} stored values" if nnz is not None else ""
    if n_features > lim.max_features:
        raise DataError(
            f"X declares {n_features:,} columns for {n_samples:,} rows{stored}. Drop the empty "
            "columns (for a CSR X: X[:, X.getnnz(axis=0) > 0]) or raise the limit "
            + limits.how_to_raise("max_features")
        )
    cells = n_nodes * n_features
    if dense_weights and cells > lim.max_weight_cells:
        raise DataError(
            f"the weights would be {n_nodes:,} nodes x {n_features:,} features = {cells:,} "
            f"numbers ({cells * 8 / 2**30:.1f} GiB). Reduce the features (feature selection, "
            "dropping empty columns) or the taxonomy, or raise the limit "
            + limits.how_to_raise("max_weight_cells")
        )


def is_liblinear(estimator: Any) -> bool:
    """Whether ``estimator`` is solved by liblinear (LinearSVC/LinearSVR, liblinear LR)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC, LinearSVR

    if isinstance(estimator, LinearSVC | LinearSVR):
        return True
    return isinstance(estimator, LogisticRegression) and estimator.solver == "liblinear"


def check_liblinear_scale(X: np.ndarray | sp.csr_matrix, who: str) -> None:
    """Refuse features too large for liblinear, whose coordinate descent spins on them.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    who : str
        The method, for the message.

    Raises
    ------
    DataError
        When ``max |x|`` exceeds ``max_abs_feature_liblinear``.
    """
    values = np.asarray(X.data if sp.issparse(X) else X)
    if not values.size:
        return
    biggest = float(max(values.max(), -values.min()))  # max |x| without a copy of X
    cap = limits.current().max_abs_feature_liblinear
    if biggest > cap:
        raise DataError(
            f"{who}: a feature value has magnitude {biggest:.3g}, too large for liblinear "
            "(its solver does not terminate on such scales). Scale the features, e.g. with "
            "sklearn.preprocessing.MaxAbsScaler " + limits.how_to_raise("max_abs_feature_liblinear")
        )
