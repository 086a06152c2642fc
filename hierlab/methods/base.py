"""The scikit-learn base class of every hierarchical classifier in hierlab.

A subclass implements ``_fit(X, Y, callbacks)`` and ``_predict_ids(X)``; this class does the
validation (dense or CSR float64 input, labels turned into node ids of the taxonomy), keeps the
fitted attributes every method shares (``taxonomy_``, ``classes_``, ``n_features_in_``,
``history_``, ``n_iter_``, ``converged_``) and turns node ids back into node names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from hierlab.core.dataset import _is_multilabel, encode_labels
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import Param, validate_params
from hierlab.core.solver import Callback, Solver, SolverResult, solve
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_label_values, check_width

__all__ = ["FLAT_ROOT", "HierarchicalClassifier", "check_X"]

FLAT_ROOT = "<root>"

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
    if isinstance(estimator, int | np.integer):  # check_X(X, n_features): a bare width check
        X = check_array(X, **kw)
        if X.shape[1] != int(estimator):
            raise ValueError(
                f"X has {X.shape[1]} features, but this estimator is expecting "
                f"{int(estimator)} features as input"
            )
    elif estimator is not None:
        X = validate_data(estimator, X, reset=reset, **kw)
    else:
        X = check_array(X, **kw)
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


class HierarchicalClassifier(ClassifierMixin, BaseEstimator):
    """Base class: a classifier whose labels are nodes of a :class:`~hierlab.Taxonomy`.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        The label hierarchy. None builds the flat taxonomy (every training label a child of a
        root named ``"<root>"``).

    Attributes
    ----------
    taxonomy_ : Taxonomy
        The taxonomy used.
    classes_ : ndarray of shape (n_classes,)
        The distinct training labels, sorted (as scikit-learn does). Predictions may be any node
        of ``taxonomy_`` (for example a leaf below an internal training label).
    n_features_in_ : int
        Number of features seen in ``fit``.
    history_ : pandas.DataFrame
        One row per solver iteration: iteration, elapsed, upper, lower, gap, extras.
    n_iter_ : int
        Iterations run.
    converged_ : bool
        Whether the solver met its stopping test.
    """

    #: subclasses that accept several labels per row set this to True
    _supports_multilabel: bool = False
    #: subclasses that accept a DAG taxonomy set this to True
    _supports_dag: bool = False

    #: the constructor parameters, declared once (:mod:`hierlab.core.params`); subclasses
    #: extend it. Validation in ``fit``, the registry schema, widgets, CLI options and card
    #: tables are generated from it.
    _parameters: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, *, taxonomy: Taxonomy | None = None) -> None:
        self.taxonomy = taxonomy

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        # Multi-label methods take a set of node names per row, not scikit-learn's 2-D
        # indicator matrix, so scikit-learn's multi-label checks do not apply.
        tags.classifier_tags.multi_label = False
        return tags

    # ------------------------------------------------------------------ to implement
    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        """Fit on validated data: ``Y`` holds node ids (int array) or a CSR indicator."""
        raise NotImplementedError

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> Any:
        """Node ids (int array of shape (n_samples,)) or a CSR indicator for multi-label."""
        raise NotImplementedError

    # ------------------------------------------------------------------ public API
    def fit(self, X: Any, y: Any, callbacks: Iterable[Callback] = ()) -> HierarchicalClassifier:
        """Fit the classifier.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Node names (or labels of the flat taxonomy when ``taxonomy`` is None); for
            multi-label methods, a tuple/list/set of node names per row.
        callbacks : iterable of Callback
            Called with every solver state (live plots, early stopping, timeouts).

        Returns
        -------
        self
        """
        validate_params(self)
        X = check_X(X, self, reset=True)
        Y = self._encode_fit_labels(y, X.shape[0])
        n_samples, n_features = X.shape
        nnz = X.nnz if sp.issparse(X) else None
        check_width(n_samples, n_features, nnz, self.taxonomy_.n_nodes)
        self.history_ = pd.DataFrame(columns=["iteration", "elapsed", "upper", "lower", "gap"])
        self.n_iter_ = 0
        self.converged_ = True
        self._fit(X, Y, list(callbacks))
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predicted node names, shape (n_samples,) (tuples of names for multi-label)."""
        check_is_fitted(self, "taxonomy_")
        X = check_X(X, self, reset=False)
        ids = self._predict_ids(X)
        if sp.issparse(ids):
            ind = sp.csr_matrix(ids)
            out = np.empty(ind.shape[0], dtype=object)
            for i in range(ind.shape[0]):
                cols = ind.indices[ind.indptr[i] : ind.indptr[i + 1]]
                out[i] = tuple(self._out_labels_[np.sort(cols)])
            return out
        return self._decode(np.asarray(ids, dtype=np.int64))

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """0/1 indicator of the predicted path(s), shape (n_samples, n_nodes).

        Row ``i`` marks ``A+(y_hat_i)``: the predicted node and all its ancestors (for
        multi-label, the union over the predicted nodes).
        """
        check_is_fitted(self, "taxonomy_")
        return self._closure(self._predict_ids(check_X(X, self, reset=False))).astype(np.int8)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy with the ancestor rule: an internal label is right when it lies on the path.

        For multi-label methods, the example-based exact match of the ancestor-closed sets.
        """
        check_is_fitted(self, "taxonomy_")
        truth = self._encode(y)  # node ids: int labels are names, not ids
        pred = self._predict_ids(check_X(X, self, reset=False))
        if sp.issparse(truth) or sp.issparse(pred):  # subset 0/1 of the ancestor closures
            differ = (self._closure(truth) != self._closure(pred)).tocsr()
            return float(np.mean(np.diff(differ.indptr) == 0))
        ok = self.taxonomy_.is_ancestor_or_self(truth, np.asarray(pred, dtype=np.int64))
        return float(ok.mean())

    # ------------------------------------------------------------------ helpers for subclasses
    def _encode_fit_labels(self, y: Any, n_samples: int) -> Any:
        yo = _as_object(y)
        if len(yo) != n_samples:
            raise ValueError(f"X has {n_samples} rows but y has {len(yo)} labels")
        multi = _is_multilabel(yo)
        check_label_values(yo, multi)
        if multi and not self._supports_multilabel:
            raise DataError(
                f"{type(self).__name__} takes one label per row; this y has sets of labels. "
                "Use a multi-label method (e.g. NHSVM) or keep one label per row."
            )
        if self.taxonomy is None:
            if multi:
                labs = sorted({str(v) for row in yo for v in row})
            else:
                labs = [str(v) for v in np.unique(yo.astype(str))]
            if FLAT_ROOT in labs:
                raise DataError(f"a label is named {FLAT_ROOT!r}, the flat taxonomy's root")
            tax = Taxonomy.flat(labs, root=FLAT_ROOT)
        elif isinstance(self.taxonomy, Taxonomy):
            tax = self.taxonomy
        else:
            raise ParameterError(
                f"taxonomy must be a hierlab.Taxonomy or None, got {type(self.taxonomy).__name__}"
            )
        if not tax.is_tree and not self._supports_dag:
            raise DataError(
                f"{type(self).__name__} needs a tree taxonomy; this one is a DAG "
                "(use NHSVM, which supports DAGs)"
            )
        self.taxonomy_ = tax
        if multi:
            self.classes_ = np.array(sorted({str(v) for row in yo for v in row}), dtype=object)
        else:
            self.classes_ = np.unique(np.asarray(yo.tolist()))
        out = np.empty(tax.n_nodes, dtype=object)
        out[:] = [str(n) for n in tax.names]
        if not multi:
            # Keep the user's label objects (ints stay ints) so predictions compare equal to y.
            for v in pd.unique(yo):
                j = tax._index.get(str(v))
                if j is not None and not isinstance(v, str):
                    out[j] = v
        self._out_labels_ = out
        Y = encode_labels(yo, tax)
        if not multi and len(np.unique(Y)) < 2 and tax.n_nodes <= 2:
            raise ValueError("The number of classes has to be greater than one; got 1 class")
        return Y

    def _encode(self, y: Any) -> Any:
        return encode_labels(_as_object(y), self.taxonomy_)

    def _closure(self, ids: Any) -> sp.csr_matrix:
        """0/1 CSR of shape (n_samples, n_nodes): ``A+`` of node ids, or of a CSR indicator."""
        tax = self.taxonomy_
        if not sp.issparse(ids):
            return tax.label_ancestor_indicator(ids)
        ind = (sp.csr_matrix(ids) @ tax.ancestor_matrix).tocsr()
        ind.data[:] = 1.0
        return ind

    def _decode(self, ids: np.ndarray) -> np.ndarray:
        out = self._out_labels_[ids]
        kinds = {type(v) for v in out}
        if len(kinds) == 1 and not isinstance(out[0], str):
            return np.asarray(out.tolist())
        return out

    def _run_solver(
        self,
        solver: Solver,
        objective: Any,
        callbacks: Sequence[Callback],
        tol: float = 0.0,
        rtol: float = 0.0,
    ) -> SolverResult:
        """Run :func:`~hierlab.core.solver.solve`, then set ``history_``, ``n_iter_``, etc."""
        result = solve(solver, objective, callbacks, tol=tol, rtol=rtol)
        self.history_ = pd.DataFrame([s.as_dict() for s in result.history])
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        return result


def _as_object(y: Any) -> np.ndarray:
    """Labels as a 1-D object array; rows of a multi-label ``y`` stay tuples/sets."""
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
    out = np.empty(len(y), dtype=object)
    out[:] = list(y)
    if len(out) and not _is_multilabel(out):
        arr = np.asarray(y)
        if arr.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {arr.shape}")
    return out
