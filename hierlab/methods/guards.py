"""Input guards shared by the estimators: label values, declared widths, liblinear's scales.

Each guard refuses, before anything of the declared size is allocated or any solver runs, an
input that would crash, exhaust memory or hang a fit, with a :class:`~hierlab.DataError` that
says what to do. The limits are the settings of :mod:`hierlab.core.limits`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.dataset import is_label_set
from hierlab.core.exceptions import DataError

__all__ = ["check_label_values", "check_liblinear_scale", "check_width", "is_liblinear"]


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
