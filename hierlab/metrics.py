"""Hierarchical evaluation measures: pure functions of ``(y_true, y_pred, taxonomy)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from hierlab.taxonomy import Taxonomy

__all__ = ["zero_one_error"]


def zero_one_error(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> float:
    """Zero-one error with the ancestor rule (seed 000, Section 5).

    A prediction is correct when the true label is the predicted node or one of its ancestors
    (an internal true label counts as correct iff it lies on the predicted path).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Node names or ids.
    taxonomy : Taxonomy

    Returns
    -------
    float
        Fraction of wrong predictions.
    """
    t = taxonomy._ids(np.asarray(y_true, dtype=object) if not _is_int(y_true) else y_true)
    p = taxonomy._ids(np.asarray(y_pred, dtype=object) if not _is_int(y_pred) else y_pred)
    if len(t) == 0:
        return 0.0
    A = taxonomy.ancestor_matrix
    ok = np.asarray(A[p, t]).ravel() > 0
    return float(1.0 - ok.mean())


def _is_int(y: Any) -> bool:
    return np.asarray(y).dtype.kind in "iu"
