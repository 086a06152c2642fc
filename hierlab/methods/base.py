"""The scikit-learn base class of every hierarchical classifier in hierlab.

A subclass implements ``_fit(X, Y, callbacks)`` and ``_predict_ids(X)``; this class does the
validation (dense or CSR float64 input, labels turned into node ids of the taxonomy), keeps the
fitted attributes every method shares (``taxonomy_``, ``classes_``, ``n_features_in_``,
``history_``, ``n_iter_``, ``converged_``) and turns node ids back into node names.

It also gives every method the same scores, probabilities and thresholded predictions
(:meth:`~HierarchicalClassifier.node_scores`, ``decision_function``, ``node_proba``,
``predict_proba``, ``calibrate``, ``predict(X, threshold=t)``), from three hooks a family
overrides where the defaults do not fit: ``_node_scores(X)`` (default ``X @ W.T + b`` with
``(W, b)`` from ``_score_weights()``, itself ``coef_`` and 0), ``_routing()`` (``"flat"``: the
prediction is the best-scoring candidate node, ``_candidates()`` the leaves by default; or
``"recursive"``: the best child at every node, ``_stop_scores()`` the score of stopping) and
``_score_weights()``. :mod:`hierlab.methods.probability` does the arithmetic.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import KFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from hierlab.core.dataset import encode_labels, is_multilabel
from hierlab.core.exceptions import DataError, IgnoredParameterWarning, ParameterError
from hierlab.core.params import Param, ignored_params, validate_params
from hierlab.core.solver import Callback, Solver, SolverResult, solve
from hierlab.core.state import StateArray
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.guards import check_label_values, check_width
from hierlab.methods.probability import (
    CALIBRATION_METHODS,
    apply_calibration,
    calibration_pairs,
    conditional_margins,
    deepest_above,
    fit_calibration,
    gather_pairs,
    leaf_probabilities,
    marginal_probabilities,
    path_min,
    point_masses,
    row_blocks,
    subtree_max,
    tree_probabilities,
)

__all__ = [
    "FLAT_ROOT",
    "HierarchicalClassifier",
    "check_X",
    "check_sparse_structure",
    "warn_ignored",
]

FLAT_ROOT = "<root>"

#: larger feature magnitudes are refused: squares and inner products would overflow float64
MAX_ABS_FEATURE = 1e100
#: ``predict`` scores about this many (row, node) pairs at a time (64 MB of float64)
PREDICT_ENTRIES = 2**23


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


def warn_ignored(estimator: Any, values: Mapping[str, Any]) -> None:
    """Warn (:class:`~hierlab.core.exceptions.IgnoredParameterWarning`) about every parameter
    set away from its default that the other settings do not use (``Param.used_when``).

    Parameters
    ----------
    estimator : estimator
        Its class declares ``_parameters``.
    values : Mapping of str to Any
        The validated parameter values (:func:`~hierlab.core.params.validate_params`).
    """
    owner = type(estimator).__name__
    for p, when in ignored_params(type(estimator), values):
        ctx = ", ".join(f"{k}={values[k]!r}" for k in (p.used_when or {}) if k in values)
        warnings.warn(
            f"{owner}: parameter {p.name}={values[p.name]!r} is ignored with {ctx}: it is used "
            f"{when}. Leave it at its default ({p.default!r}) or change that setting.",
            IgnoredParameterWarning,
            stacklevel=3,
        )


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
    stop_reason_ : str
        Why the solver ended (``SolverResult.stop_reason``: ``"gap"``, ``"converged"``,
        ``"callback"`` when a callback or a ``StopFlag`` stopped it, ``"max_iter"``).
    kept_state_ : dict or None
        The reported state whose iterate the model holds (``SolverResult.kept`` as a dict:
        ``iteration``, ``upper``, ``lower``, ``gap``); None without solver states.
    solver_ : str
        The solver that ran (``"rda"``, ``"bcfw"``, ``"pegasos"``, ``"hieron"`` ...).
    algorithm_ : str
        What ran, in one line, with the seed's algorithm when it is one ("Algorithm 1 of seed
        000 (RDA), weights 1/t", "BCFW on the dual").
    calibration_ : dict
        The probability maps behind :meth:`node_proba` (plain arrays, saved with the model):
        ``method`` ("sigmoid", "isotonic" or "none"), ``cv`` ("train" after ``fit``, "k-fold"
        or "prefit" after :meth:`calibrate`), ``mode`` ("tree", "leaves" or "marginal"),
        Platt's ``a`` and ``b`` per map, isotonic knots, and ``closed`` (tree mode: no
        training label stops at the node).
    node_means_ : csr_matrix of shape (n_nodes, n_features)
        Only for methods explained by class means (MF-Tree): the mean training example below
        each node.
    """

    #: subclasses that accept several labels per row set this to True
    _supports_multilabel: bool = False
    #: subclasses that accept a DAG taxonomy set this to True
    _supports_dag: bool = False
    #: subclasses that induce their own taxonomy in ``fit`` (MF-Tree, CMTL) set this to True:
    #: their fold models have other trees, so ``calibrate(cv=k)`` cannot pool them
    _induces_taxonomy: bool = False
    #: subclasses explained by class means (MF-Tree) set this: ``fit`` keeps ``node_means_``
    _explain_by_class_means: bool = False
    #: False where :meth:`_node_scores` does not read :meth:`_score_weights` (Hieron scores
    #: with its engine): :meth:`_weights_fixed` then forms nothing
    _scores_from_weights: bool = True
    #: the constructor parameter that caps the solver's iterations (named by its
    #: ``ConvergenceWarning``)
    _budget_param: ClassVar[str] = "max_iter"

    #: the constructor parameters, declared once (:mod:`hierlab.core.params`); subclasses
    #: extend it. Validation in ``fit``, the registry schema, widgets, CLI options and card
    #: tables are generated from it.
    _parameters: ClassVar[tuple[Param, ...]] = ()

    #: the arrays of the fitted state and their rules (:mod:`hierlab.core.state`), checked when
    #: a model file is loaded; each subclass declares its own, beside its code (the rows of its
    #: bases are collected along the MRO)
    _state_arrays: ClassVar[tuple[StateArray, ...]] = (
        StateArray("coef_", "f", ("n_nodes", "n_features"), optional=True, sparse=None),
        StateArray("intercept_", "f", ("n_nodes",), optional=True),
        StateArray("node_means_", "f", ("n_nodes", "n_features"), optional=True, sparse=None),
    )
    #: paths of fitted arrays that may hold infinite floats (``-inf`` for "never")
    _state_nonfinite: ClassVar[tuple[str, ...]] = ()

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

    def _what_ran(self) -> tuple[str, str]:
        """``(solver_, algorithm_)`` after ``_fit``: the solver's short name and one line
        saying what ran (the seed's algorithm by number when it is one)."""
        raise NotImplementedError(f"{type(self).__name__} does not say what ran")

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
        warn_ignored(self, validate_params(self))
        X = check_X(X, self, reset=True)
        Y = self._encode_fit_labels(y, X.shape[0])
        n_samples, n_features = X.shape
        nnz = X.nnz if sp.issparse(X) else None
        check_width(
            n_samples, n_features, nnz, self.taxonomy_.n_nodes,
            dense_weights=nnz is None or not self._sparse_weights(),
        )  # fmt: skip
        self.history_ = pd.DataFrame(columns=["iteration", "elapsed", "upper", "lower", "gap"])
        self.n_iter_ = 0
        self.converged_ = True
        self.stop_reason_ = "converged"
        self.kept_state_: dict[str, Any] | None = None
        tax = self.taxonomy_
        self._fit(X, Y, list(callbacks))
        self.solver_, self.algorithm_ = self._what_ran()
        if self.taxonomy_ is not tax:  # an induced taxonomy (MF-Tree, CMTL): its own ids
            Y = self._encode(y)
        if self._explain_by_class_means:
            self.node_means_ = _node_means(X, self._closure(Y))
        if self.__dict__.pop("_calibrate_in_fit", True):
            self._set_calibration(Y, _InSample(self, X), X.shape[0], "sigmoid", "train")
        return self

    def predict(self, X: Any, threshold: float | None = None) -> np.ndarray:
        """Predicted node names, shape (n_samples,) (tuples of names for multi-label).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        threshold : float in [0, 1], optional
            Stop above the leaves: each prediction becomes the deepest node of its predicted
            path whose probability (:meth:`node_proba`) is at least ``threshold``; the root
            when none is. Multi-label: every predicted node is cut back the same way. None
            or 0 is the method's own prediction.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "taxonomy_")
        X = check_X(X, self, reset=False)
        ids = self._predicted_ids(X)
        if threshold is not None:
            t = float(threshold)
            if not 0.0 <= t <= 1.0:
                raise ParameterError(f"threshold must be in [0, 1], got {threshold!r}")
            if t > 0.0:
                ids = self._stop_above(X, ids, t)
        if sp.issparse(ids):
            ind = sp.csr_matrix(ids)
            out = np.empty(ind.shape[0], dtype=object)
            for i in range(ind.shape[0]):
                cols = ind.indices[ind.indptr[i] : ind.indptr[i + 1]]
                out[i] = tuple(self._out_labels_[np.sort(cols)])
            return out
        return self._decode(np.asarray(ids, dtype=np.int64))

    def _predicted_ids(self, X: np.ndarray | sp.csr_matrix) -> Any:
        """:meth:`_predict_ids` a block of rows at a time (:func:`~hierlab.methods.probability.
        row_blocks`: about :data:`PREDICT_ENTRIES` scores per block), so predicting many rows over
        many classes never holds an (n_samples x n_nodes) score matrix (25,000 rows at 10^4
        classes: 2.2 GB per copy)."""
        blocks = row_blocks(X.shape[0], self.taxonomy_.n_nodes, PREDICT_ENTRIES, 64)
        if len(blocks) <= 1:
            return self._predict_ids(X)
        parts = [self._predict_ids(X[idx[0] : idx[-1] + 1]) for idx in blocks]
        if sp.issparse(parts[0]):
            return sp.vstack(parts, format="csr")
        return np.concatenate([np.asarray(p) for p in parts])

    def decision_path(self, X: Any) -> sp.csr_matrix:
        """0/1 indicator of the predicted path(s), shape (n_samples, n_nodes).

        Row ``i`` marks ``A+(y_hat_i)``: the predicted node and all its ancestors (for
        multi-label, the union over the predicted nodes).
        """
        check_is_fitted(self, "taxonomy_")
        return self._closure(self._predicted_ids(check_X(X, self, reset=False))).astype(np.int8)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy with the ancestor rule: an internal label is right when it lies on the path.

        For multi-label methods, the example-based exact match of the ancestor-closed sets.
        """
        check_is_fitted(self, "taxonomy_")
        truth = self._encode(y)  # node ids: int labels are names, not ids
        pred = self._predicted_ids(check_X(X, self, reset=False))
        if sp.issparse(truth) or sp.issparse(pred):  # subset 0/1 of the ancestor closures
            differ = (self._closure(truth) != self._closure(pred)).tocsr()
            return float(np.mean(np.diff(differ.indptr) == 0))
        ok = self.taxonomy_.is_ancestor_or_self(truth, np.asarray(pred, dtype=np.int64))
        return float(ok.mean())

    # ------------------------------------------------------------------ scores (family hooks)
    def _routing(self) -> str:
        """How the prediction reads :meth:`_node_scores`: ``"flat"`` or ``"recursive"``.

        ``"flat"``: the predicted node is the best-scoring of ``_candidates()``.
        ``"recursive"``: from the root, the best-scoring child (or stopping, when
        ``_stop_scores()`` scores higher) until a leaf.
        """
        return "flat"

    def _sparse_weights(self) -> bool:
        """Whether ``coef_`` is held sparse, and sparse by construction, for CSR ``X`` (top-down
        with liblinear: a node weighs only its examples' features); the dense-weights size
        guard of ``fit`` then does not apply."""
        return False

    def _candidates(self) -> np.ndarray:
        """Flat routing: bool mask of the nodes that can be predicted, shape (n_nodes,)."""
        return np.asarray(self.taxonomy_.is_leaf, dtype=bool).copy()

    def _stop_scores(self) -> np.ndarray | None:
        """Recursive routing: the score of stopping at each node, shape (n_nodes,); None: never."""
        return None

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """``(W, b)`` with node scores ``X @ W.T + b``: W of shape (n_nodes, n_features), b of
        shape (n_nodes,); None when the scores are not linear in the features (kernels)."""
        coef = getattr(self, "coef_", None)
        if coef is None:
            return None
        return coef, np.zeros(coef.shape[0])

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The scores the prediction is read from, shape (n_samples, n_nodes) (validated X)."""
        fixed = self.__dict__.get("_fixed_weights")
        if fixed is not None:  # inside _weights_fixed(): formed once for every row block
            W, b, WT = fixed
            S = X @ (WT if sp.issparse(X) else W.T)  # the same sums as X @ W.T
        else:
            wb = self._score_weights()
            if wb is None:
                raise NotImplementedError(f"{type(self).__name__} has no linear node scores")
            W, b = wb
            S = X @ W.T
        S = S.toarray() if sp.issparse(S) else np.asarray(S)
        return S + np.asarray(b)[None, :]

    @contextmanager
    def _weights_fixed(self) -> Iterator[None]:
        """Within the block, :meth:`_node_scores` reads ``(W, b)`` of :meth:`_score_weights`
        formed once (with a C-ordered ``W^T`` for CSR rows, or ``W^T`` as CSR for a sparse
        ``W``), not once per row block: path-sum models form ``A @ coef_`` (n_nodes x
        n_features) in ``_score_weights``, and scipy copies a transposed ``W`` on every CSR
        product (or converts a sparse one: MF-Tree at 3,000 classes, 15 of 50 s). Same values,
        bit for bit."""
        if "_fixed_weights" in self.__dict__ or not self._scores_from_weights:
            yield
            return
        wb = self._score_weights()
        if wb is not None and sp.issparse(wb[0]):  # W^T as CSR: not converted per product
            self.__dict__["_fixed_weights"] = (wb[0], wb[1], sp.csr_matrix(wb[0].T))
        elif wb is not None:
            WT = np.ascontiguousarray(np.asarray(wb[0]).T)
            bias = wb[1]
            wb = None  # a formed A @ coef_ is dropped: W^T alone is kept (W is its view)
            self.__dict__["_fixed_weights"] = (WT.T, bias, WT)
        try:
            yield
        finally:
            self.__dict__.pop("_fixed_weights", None)

    def _probability_mode(self) -> str:
        """``"tree"`` (one label per row, a tree), ``"leaves"`` (an induced tree: its leaves
        are the classes) or ``"marginal"`` (multi-label or a DAG)."""
        if bool(getattr(self, "multilabel_", False)) or not self.taxonomy_.is_tree:
            return "marginal"
        return "leaves" if self._induces_taxonomy else "tree"

    def _calibration_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Conditional margins (tree mode) or subtree maxima (marginal mode), (n, n_nodes)."""
        S = self._node_scores(X)
        tax = self.taxonomy_
        mode = self._probability_mode()
        if mode != "marginal":
            C = conditional_margins(
                S, tax, self._routing(), self._candidates(), self._stop_scores()
            )
            return C if mode == "tree" else path_min(C, tax)
        if self._routing() == "recursive":  # no such family today; the path's weakest step
            return path_min(conditional_margins(S, tax, "recursive"), tax)
        return subtree_max(S, tax, self._candidates())

    # ------------------------------------------------------------------ scores and probabilities
    def node_scores(self, X: Any) -> np.ndarray:
        """The method's own node scores, shape (n_samples, n_nodes), columns in
        ``taxonomy_.names`` order: path sums for path-sum models (TREELOSS, HSVM, NHSVM,
        Hieron), a node's score at its parent for top-down models (``w_c . x`` of ORTHOGNL,
        TRANSFER, HIERMULT, top-down, greedy Hieron; MF-Tree's routing score, ``+r`` left and
        ``-r`` right), ``w_n . x`` for the one-vs-rest leaves (HR, OVR).
        """
        check_is_fitted(self, "taxonomy_")
        return self._node_scores(check_X(X, self, reset=False))

    def decision_function(self, X: Any) -> np.ndarray:
        """scikit-learn scores for ``classes_``, consistent with :meth:`predict`.

        One label per row, a tree: the smallest conditional margin along the class's path
        (:func:`~hierlab.methods.probability.conditional_margins`), positive exactly when the
        class lies on the predicted path (so the arg-max class is the prediction when the
        classes are leaves). Multi-label or a DAG: the best candidate score below the class.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes in a single
        label tree (the score of ``classes_[1]`` minus that of ``classes_[0]``)
        """
        check_is_fitted(self, "taxonomy_")
        F = self._calibration_scores(check_X(X, self, reset=False))
        mode = self._probability_mode()
        out = (path_min(F, self.taxonomy_) if mode == "tree" else F)[:, self._class_columns()]
        if out.shape[1] == 2 and mode != "marginal":
            return out[:, 1] - out[:, 0]
        return out

    def node_proba(self, X: Any) -> np.ndarray:
        """Calibrated node probabilities, shape (n_samples, n_nodes), ``taxonomy_.names`` order.

        One label per row, a tree: ``P(node in A+(y) | x)``, built top-down as ``P(root) = 1``,
        ``P(c) = P(p) q_c / Z_p`` where ``q_c`` is the calibrated estimate that the decision at
        ``p`` goes to ``c`` and ``Z_p`` the sum of the siblings' ``q`` (when no training label
        stops at ``p``) or ``max(1, sum)`` (when some do); so ``P(child) <= P(parent)`` and the
        children share at most the parent's probability. An induced tree (MF-Tree, CMTL):
        one map of the leaves' path margins, normalised over the leaves, summed up the tree
        (so the arg-max leaf is the prediction). Multi-label or a DAG: calibrated
        marginals with ``P(v) = min(q_v, P(parents))``. See :mod:`hierlab.methods.probability`
        and :meth:`calibrate` (``fit`` calibrates in-sample; cross-fitting is ``calibrate``).
        """
        check_is_fitted(self, "taxonomy_")
        cal = getattr(self, "calibration_", None)
        if cal is None:
            raise NotFittedError(
                f"this {type(self).__name__} has no calibration (a model saved before "
                "calibration existed, or trained by partial_fit): call calibrate(X, y) first"
            )
        X = check_X(X, self, reset=False)
        tax = self.taxonomy_
        out = np.empty((X.shape[0], tax.n_nodes))
        with self._weights_fixed():
            for idx in row_blocks(X.shape[0], tax.n_nodes):  # bounded temporaries on large X
                out[idx] = self._probabilities(cal, self._calibration_scores(_rows(X, idx)))
        return out

    def _probabilities(self, cal: dict[str, Any], F: np.ndarray) -> np.ndarray:
        """Node probabilities, shape (n_samples, n_nodes), from calibration scores ``F``."""
        tax = self.taxonomy_
        if cal["mode"] == "tree":
            Q = apply_calibration(cal, F, tax.parent)
            return tree_probabilities(Q, tax, np.asarray(cal["closed"], dtype=bool))
        if cal["mode"] == "leaves":
            Q = apply_calibration(cal, F, np.zeros(tax.n_nodes, dtype=np.int64))
            return leaf_probabilities(Q, tax)
        Q = apply_calibration(cal, F, np.arange(tax.n_nodes))
        return marginal_probabilities(Q, tax)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of ``classes_``, shape (n_samples, n_classes).

        One label per row, a tree: ``P(y = c | x)``, the mass :meth:`node_proba` leaves at
        ``c`` once its children have taken theirs (for leaves, ``node_proba`` itself); over all
        nodes these sum to one, over ``classes_`` to at most one (exactly one when the classes
        are the leaves). Multi-label or a DAG: the marginals ``P(c in A+(Y) | x)``.
        """
        P = self.node_proba(X)
        if self.calibration_["mode"] != "marginal":
            P = point_masses(P, self.taxonomy_)
        return P[:, self._class_columns()]

    def calibrate(
        self,
        X: Any,
        y: Any,
        *,
        method: str = "sigmoid",
        cv: int | str = 3,
        random_state: int | None = 0,
        n_jobs: int | None = None,
    ) -> HierarchicalClassifier:
        """Refit the calibration maps behind :meth:`node_proba` and :meth:`predict_proba`.

        ``fit`` already calibrates with Platt's sigmoid on the training margins (``cv="train"``:
        no extra fit, but margins on training data are optimistic, so the probabilities tend
        to be over-confident). This method cross-fits instead.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        method : {"sigmoid", "isotonic", "none"}, default "sigmoid"
            Platt scaling or isotonic regression per map; ``"none"`` is the uncalibrated
            ``expit(margin)`` (a baseline).
        cv : int >= 2, "prefit" or "train", default 3
            An int: cross-fitting on (X, y), normally the training data. ``cv`` clones of this
            estimator are fitted on ``cv - 1`` folds each and score the fold they did not see;
            the maps are fitted on those out-of-fold margins and then applied to this model's
            margins (costs ``cv`` extra fits on ``(cv - 1) / cv`` of the data). ``"prefit"``:
            (X, y) is held-out data, scored by this model. ``"train"``: (X, y) scored by this
            model, as ``fit`` does.
        random_state : int, optional
            Seed of the folds.
        n_jobs : int, optional
            Fit the folds in parallel (joblib).

        Returns
        -------
        self
        """
        check_is_fitted(self, "taxonomy_")
        if method not in CALIBRATION_METHODS:
            raise ParameterError(f"method must be one of {CALIBRATION_METHODS}, got {method!r}")
        X = check_X(X, self, reset=False)
        yo = _as_object(y)
        if len(yo) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(yo)} labels")
        Y = self._encode(yo)
        if cv in ("prefit", "train"):
            self._set_calibration(Y, _InSample(self, X), X.shape[0], method, str(cv))
            return self
        if isinstance(cv, bool) or not isinstance(cv, int | np.integer) or cv < 2:
            raise ParameterError(f"cv must be an int >= 2, 'prefit' or 'train', got {cv!r}")
        if self._induces_taxonomy:
            raise ParameterError(
                f"{type(self).__name__} induces a new tree in every fit, so fold models cannot "
                "be pooled node by node: calibrate on held-out data with cv='prefit'"
            )
        folds = list(KFold(int(cv), shuffle=True, random_state=random_state).split(X))
        models = Parallel(n_jobs=n_jobs)(delayed(_fit_fold)(self, X[tr], yo[tr]) for tr, _ in folds)
        oof = _OutOfFold(X, folds, models)
        self._set_calibration(Y, oof, X.shape[0], method, f"{int(cv)}-fold")
        return self

    def _set_calibration(self, Y: Any, score_rows: Any, n: int, method: str, how: str) -> None:
        """Fit the maps on ``score_rows(idx)`` (margins of rows ``idx``) against labels ``Y``."""
        tax = self.taxonomy_
        mode = self._probability_mode()
        leaves = np.asarray(tax.leaves) if mode == "leaves" else None  # one map for them all
        rows, nodes, target = calibration_pairs(self._closure(Y), tax, mode == "tree", leaves)
        with self._weights_fixed():  # score_rows reads self's weights block by block
            values = gather_pairs(score_rows, rows, nodes, n, tax.n_nodes)
        if mode == "leaves":
            cal = fit_calibration(values, np.zeros(len(values), dtype=np.int64), target, 1, method)
        elif mode == "tree":  # one map per parent: the decision taken there
            groups = np.asarray(tax.parent, dtype=np.int64)[nodes]
            order = np.argsort(groups, kind="stable")
            cal = fit_calibration(values[order], groups[order], target[order], tax.n_nodes, method)
            stops = np.bincount(np.asarray(Y, dtype=np.int64), minlength=tax.n_nodes)
            cal["closed"] = stops == 0
        else:
            cal = fit_calibration(values, nodes, target, tax.n_nodes, method)
        cal["mode"] = mode
        cal["cv"] = how
        self.calibration_ = cal

    def _class_columns(self) -> np.ndarray:
        """Taxonomy ids of ``classes_``, shape (n_classes,)."""
        return np.asarray(self.taxonomy_.index([str(c) for c in self.classes_]), dtype=np.int64)

    def _stop_above(self, X: Any, ids: Any, t: float) -> Any:
        """Predictions cut back to the deepest node of their path with probability >= ``t``."""
        P = self.node_proba(X)
        tax = self.taxonomy_
        if not sp.issparse(ids):
            return deepest_above(P, np.asarray(ids, dtype=np.int64), tax, t)
        ind = sp.csr_matrix(ids)
        closed = self._closure(ind)
        keep = closed.multiply(sp.csr_matrix(P >= t)).tocsr()
        keep.eliminate_zeros()
        edges = _child_to_parent(tax)
        has_kept_child = (keep @ edges).tocsr()
        rows_closed = np.asarray((closed != ind).sum(axis=1)).ravel() <= 1  # ind is closed
        # leaves-style predictions (rows not closed) keep only the deepest kept nodes
        inner = sp.diags((~rows_closed).astype(np.float64)) @ has_kept_child
        not_root = np.ones(tax.n_nodes)
        not_root[0] = 0.0  # the root is never a prediction
        out = ((keep - keep.multiply(inner > 0)) @ sp.diags(not_root)).tocsr()
        out.eliminate_zeros()
        out.sort_indices()
        out.data = np.ones(len(out.data))
        return out

    # ------------------------------------------------------------------ a loaded state
    def _state_dims(self) -> dict[str, int]:
        """The named dimensions of the ``_state_arrays`` shapes: ``n_nodes``, ``n_features``,
        ``n_classes``, ``n_leaves`` (a subclass adds its own)."""
        tax = self.taxonomy_
        return {
            "n_nodes": tax.n_nodes,
            "n_features": int(self.n_features_in_),
            "n_classes": len(self.classes_),
            "n_leaves": len(tax.leaves),
        }

    #: attribute names inside derived state that depend on the training rows themselves
    #: (not rebuilt from the label set; skipped by the comparison)
    _derived_skip: ClassVar[tuple[str, ...]] = ()

    def _rebuild_derived(self) -> dict[str, Any]:
        """The fitted attributes that are functions of ``taxonomy_``, the parameters and the
        label set (``classes_``), rebuilt: on load they are compared with the file's and
        replace them (derived state is never taken from a file). Default: none."""
        return {}

    def _class_ids(self) -> np.ndarray:
        """Taxonomy ids of ``classes_`` (the label set a fit saw), int64."""
        return np.asarray(self.taxonomy_.index([str(c) for c in self.classes_]), dtype=np.int64)

    def _check_state(self) -> None:
        """Checks of a loaded state that rows cannot say (a subclass's relations between its
        arrays); raise :class:`~hierlab.core.exceptions.ModelFileError` naming the rule."""

    # ------------------------------------------------------------------ helpers for subclasses
    def _encode_fit_labels(self, y: Any, n_samples: int) -> Any:
        yo = _as_object(y)
        if len(yo) != n_samples:
            raise ValueError(f"X has {n_samples} rows but y has {len(yo)} labels")
        multi = is_multilabel(yo)
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
        result = solve(solver, objective, callbacks, tol=tol, rtol=rtol, budget=self._budget_param)
        self.history_ = pd.DataFrame([s.as_dict() for s in result.history])
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.stop_reason_ = result.stop_reason
        kept = result.kept
        self.kept_state_ = None if kept is None else kept.as_dict()
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
    if isinstance(y, np.ndarray) and y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    out = np.empty(len(y), dtype=object)
    out[:] = list(y)
    return out


def _fit_fold(est: HierarchicalClassifier, X: Any, y: np.ndarray) -> HierarchicalClassifier:
    """A clone of ``est`` fitted on one fold, on ``est``'s taxonomy (so node ids agree)."""
    model = clone(est)
    if est.taxonomy is None:
        model.set_params(taxonomy=est.taxonomy_)
    model._calibrate_in_fit = False  # popped by fit: its own maps would be thrown away
    return model.fit(X, y)


class _InSample:
    """``score_rows(idx)``: margins of rows ``idx`` of ``X`` by ``est`` itself."""

    def __init__(self, est: HierarchicalClassifier, X: Any) -> None:
        self.est = est
        self.X = X

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        return self.est._calibration_scores(_rows(self.X, idx))


class _OutOfFold:
    """``score_rows(idx)``: margins of rows ``idx``, each from the fold model that did not see it.

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    folds : list of (train, test) index arrays
    models : list of fitted HierarchicalClassifier, one per fold
    """

    def __init__(self, X: Any, folds: list[Any], models: list[Any]) -> None:
        self.X = X
        self.models = models
        self.fold_of = np.empty(X.shape[0], dtype=np.int64)
        for k, (_, te) in enumerate(folds):
            self.fold_of[te] = k

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        out: np.ndarray | None = None
        for k, model in enumerate(self.models):
            sel = np.flatnonzero(self.fold_of[idx] == k)
            if len(sel) == 0:
                continue
            F = model._calibration_scores(self.X[idx[sel]])
            if out is None:
                out = np.empty((len(idx), F.shape[1]))
            out[sel] = F
        assert out is not None
        return out


def _rows(X: Any, idx: np.ndarray) -> Any:
    """``X[idx]``, without a copy when ``idx`` is every row in order."""
    if len(idx) == X.shape[0] and (len(idx) == 0 or (idx[0] == 0 and idx[-1] == len(idx) - 1)):
        return X
    return X[idx]


def _child_to_parent(tax: Taxonomy) -> sp.csr_matrix:
    """0/1 matrix of shape (n_nodes, n_nodes) with a 1 at (child, parent) for every edge."""
    ch = np.repeat(np.arange(tax.n_nodes), np.diff(tax._parent_ptr))
    par = np.asarray(tax._parent_idx, dtype=np.int64)
    return sp.csr_matrix((np.ones(len(ch)), (ch, par)), shape=(tax.n_nodes, tax.n_nodes))


def _node_means(X: Any, closure: sp.csr_matrix) -> sp.csr_matrix:
    """Mean feature vector of the examples below each node, CSR of shape (n_nodes, n_features).

    Parameters
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    closure : csr_matrix of shape (n_samples, n_nodes)
        0/1, the labels closed under ancestors.
    """
    C = sp.csr_matrix(closure, dtype=np.float64).T.tocsr()
    counts = np.asarray(C.sum(axis=1)).ravel()
    sums = C @ X
    inv = sp.diags(np.where(counts > 0, 1.0 / np.maximum(counts, 1.0), 0.0))
    return sp.csr_matrix(inv @ sp.csr_matrix(sums))
