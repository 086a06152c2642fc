"""Calibration of a probabilistic classifier by the standard definitions.

Pure, vectorised functions of a matrix of class probabilities ``P`` of shape
(n_samples, n_classes) (dense, or any scipy sparse matrix: nothing is densified) and the true
class of each example:

* :func:`expected_calibration_error` — the ECE over the **top-1 confidence** of each example
  (Naeini et al. 2015; Guo et al. 2017, eq. 3), with ``M`` equal-width bins
  ``B_m = ((m-1)/M, m/M]``::

      conf_i = max_c P_ic,   yhat_i = argmax_c P_ic,   correct_i = [yhat_i = y_i]
      ECE    = sum_m |B_m| / n * | mean_{i in B_m} correct_i - mean_{i in B_m} conf_i |

* :func:`top1_reliability` — the reliability diagram of the same bins (accuracy against
  confidence), its ECE in ``attrs``;
* :func:`multiclass_brier_score` — Brier's (1950) score over each example's whole distribution::

      BS = 1/n sum_i sum_c (P_ic - [y_i = c])^2  =  1/n sum_i (sum_c P_ic^2 - 2 P_{i,y_i} + 1)

  summed over the classes and averaged over the examples (range [0, 2]; scikit-learn's binary
  ``brier_score_loss`` is this divided by 2 on two classes). A true class that is not a column of
  ``P`` counts as a column of probability 0.

For a hierarchy, ``P`` is the distribution over the nodes where a label can stop
(``point_masses`` of :meth:`~hierlab.HierarchicalClassifier.node_proba`: the leaves, and the
internal nodes that training labels stop at), so both figures judge the model's one answer per
example. The **pooled (example, node)** figures of :func:`hierlab.evaluation.curves.reliability`
(every node's marginal ``P(node on the label's path)`` treated as a separate binary forecast)
are a different quantity, reported under their own names (``pooled_node_ece``,
``pooled_node_brier``): on many classes they are dominated by easy "no" pairs and sit near
zero even for a useless model.

:class:`CalibrationSums` holds the additive sufficient statistics, so that a test set can be
scored in row blocks (:func:`calibration_sums`, ``+``) in bounded memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.exceptions import DataError

__all__ = [
    "ECE_BINS",
    "CalibrationSums",
    "calibration_sums",
    "expected_calibration_error",
    "multiclass_brier_score",
    "top1_reliability",
    "true_class_index",
]

#: the number of equal-width confidence bins of the ECE (Guo et al. 2017 use 15)
ECE_BINS = 15


def true_class_index(y_true: Any, classes: Any = None) -> np.ndarray:
    """The column of ``P`` holding each example's true class (-1 when it has none).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Integer column indices (``classes`` None), or labels to look up in ``classes``.
    classes : array-like of shape (n_classes,), optional
        The label of every column of ``P`` (an estimator's ``classes_``).

    Returns
    -------
    ndarray of int64 of shape (n_samples,)
    """
    if classes is None:
        idx = np.asarray(y_true)
        if idx.dtype.kind not in "iu":
            raise DataError("y_true must be integer column indices when classes is not given")
        return idx.astype(np.int64, copy=False)
    lookup = {str(c): j for j, c in enumerate(classes)}
    return np.fromiter((lookup.get(str(v), -1) for v in y_true), np.int64, count=len(y_true))


def _top1(P: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(max_c P_ic, argmax_c P_ic)`` per row (first column on ties), dense or sparse."""
    if sp.issparse(P):
        P = sp.csr_matrix(P)
        conf = np.asarray(P.max(axis=1).todense(), dtype=np.float64).ravel()
        pred = np.asarray(P.argmax(axis=1), dtype=np.int64).ravel()
        return conf, pred
    A = np.asarray(P, dtype=np.float64)
    pred = np.argmax(A, axis=1)
    return A[np.arange(A.shape[0]), pred], pred.astype(np.int64)


def _check(P: Any, idx: np.ndarray) -> None:
    if P.ndim != 2 or P.shape[0] != len(idx):
        raise DataError(f"P of shape {P.shape} for {len(idx)} labels: need (n_samples, n_classes)")
    if np.any(idx >= P.shape[1]):
        raise DataError(f"a true class index is >= the {P.shape[1]} columns of P")


@dataclass
class CalibrationSums:
    """Additive statistics of the ECE and the Brier score over a set of examples.

    Attributes
    ----------
    count, sum_confidence, sum_correct : ndarray of shape (n_bins,)
        Per confidence bin: examples, their summed top-1 confidence, their correct top-1s.
    sum_brier : float
        ``sum_i sum_c (P_ic - [y_i = c])^2``.
    """

    count: np.ndarray
    sum_confidence: np.ndarray
    sum_correct: np.ndarray
    sum_brier: float

    def __add__(self, other: CalibrationSums) -> CalibrationSums:
        return CalibrationSums(
            self.count + other.count,
            self.sum_confidence + other.sum_confidence,
            self.sum_correct + other.sum_correct,
            self.sum_brier + other.sum_brier,
        )

    @property
    def n(self) -> int:
        """Number of examples."""
        return int(self.count.sum())

    @property
    def ece(self) -> float:
        """``sum_m |B_m|/n |acc(B_m) - conf(B_m)|`` (nan without examples)."""
        n = self.count.sum()
        return float(np.abs(self.sum_correct - self.sum_confidence).sum() / n) if n else np.nan

    @property
    def brier(self) -> float:
        """The multi-class Brier score (nan without examples)."""
        return float(self.sum_brier / self.n) if self.n else float("nan")

    def reliability(self) -> pd.DataFrame:
        """The non-empty bins: ``bin_low``, ``bin_high``, ``mean_predicted`` (confidence),
        ``observed`` (accuracy), ``count``; ``attrs`` ``ece`` and ``brier``."""
        m = len(self.count)
        edges = np.linspace(0.0, 1.0, m + 1)
        keep = self.count > 0
        c = self.count[keep]
        df = pd.DataFrame(
            {
                "bin_low": edges[:-1][keep],
                "bin_high": edges[1:][keep],
                "mean_predicted": self.sum_confidence[keep] / c,
                "observed": self.sum_correct[keep] / c,
                "count": c.astype(np.int64),
            }
        )
        df.attrs["ece"] = self.ece
        df.attrs["brier"] = self.brier
        return df


def calibration_sums(
    y_true: Any, P: Any, classes: Any = None, n_bins: int = ECE_BINS
) -> CalibrationSums:
    """The :class:`CalibrationSums` of ``P`` against ``y_true``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True classes: column indices, or labels with ``classes``.
    P : ndarray or sparse matrix of shape (n_samples, n_classes)
        Each row a probability distribution over the classes (rows summing to less than one
        leave the rest to no listed class).
    classes : array-like of shape (n_classes,), optional
    n_bins : int, default 15
        Equal-width confidence bins ``((m-1)/M, m/M]`` (a confidence of 0 joins the first).
    """
    if int(n_bins) < 1:
        raise DataError(f"n_bins must be >= 1, got {n_bins}")
    idx = true_class_index(y_true, classes)
    _check(P, idx)
    conf, pred = _top1(P)
    correct = (pred == idx) & (idx >= 0)
    b = np.clip(np.ceil(conf * n_bins).astype(np.int64) - 1, 0, int(n_bins) - 1)
    rows = np.arange(len(idx))
    has = idx >= 0
    p_true = np.zeros(len(idx))
    if sp.issparse(P):
        P = sp.csr_matrix(P)
        sq = np.asarray(P.multiply(P).sum(axis=1), dtype=np.float64).ravel()
        p_true[has] = np.asarray(P[rows[has], idx[has]], dtype=np.float64).ravel()
    else:
        A = np.asarray(P, dtype=np.float64)
        sq = np.einsum("ij,ij->i", A, A)
        p_true[has] = A[rows[has], idx[has]]
    return CalibrationSums(
        count=np.bincount(b, minlength=n_bins).astype(np.float64),
        sum_confidence=np.bincount(b, weights=conf, minlength=n_bins),
        sum_correct=np.bincount(b, weights=correct.astype(np.float64), minlength=n_bins),
        sum_brier=float(np.sum(sq - 2.0 * p_true + 1.0)),
    )


def expected_calibration_error(
    y_true: Any, P: Any, classes: Any = None, n_bins: int = ECE_BINS
) -> float:
    """The expected calibration error of the top-1 confidence (see the module docstring).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    P : ndarray or sparse matrix of shape (n_samples, n_classes)
    classes : array-like of shape (n_classes,), optional
    n_bins : int, default 15

    Returns
    -------
    float
        In [0, 1]; nan for no example.
    """
    return calibration_sums(y_true, P, classes, n_bins).ece


def multiclass_brier_score(y_true: Any, P: Any, classes: Any = None) -> float:
    """Brier's multi-class score, summed over the classes, averaged over the examples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    P : ndarray or sparse matrix of shape (n_samples, n_classes)
    classes : array-like of shape (n_classes,), optional

    Returns
    -------
    float
        ``1/n sum_i sum_c (P_ic - [y_i = c])^2``, in [0, 2]; nan for no example.
    """
    return calibration_sums(y_true, P, classes, 1).brier


def top1_reliability(
    y_true: Any, P: Any, classes: Any = None, n_bins: int = ECE_BINS
) -> pd.DataFrame:
    """Reliability-diagram data of the top-1 confidence (accuracy against confidence per bin).

    Returns
    -------
    pandas.DataFrame
        See :meth:`CalibrationSums.reliability`.
    """
    return calibration_sums(y_true, P, classes, n_bins).reliability()
