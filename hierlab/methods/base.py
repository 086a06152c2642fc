"""The scikit-learn base class of every hierarchical classifier in hierlab: fit and predict.

A subclass implements ``_fit(X, Y, callbacks)`` and ``_predict_ids(X)``; this class does the
validation (dense or CSR float64 input, labels turned into node ids of the taxonomy), keeps the
fitted attributes every method shares (``taxonomy_``, ``classes_``, ``n_features_in_``,
``history_``, ``n_iter_``, ``converged_``), turns node ids back into node names, and says what
a model file's state must hold.

Its bases give every method the same scores and probabilities:
:class:`~hierlab.methods.scores.NodeScoresMixin` (``node_scores`` and the hooks a family
overrides: ``_node_scores``, ``_routing``, ``_candidates``, ``_stop_scores``,
``_score_weights``) and :class:`~hierlab.methods.calibrated.CalibratedProbabilitiesMixin`
(``decision_function``, ``node_proba``, ``predict_proba``, ``calibrate``, and the cut of
``predict(X, threshold=t)``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from hierlab.core.dataset import encode_labels, is_multilabel
from hierlab.core.exceptions import DataError, IgnoredParameterWarning, ParameterError
from hierlab.core.params import Param, ignored_params, validate_params
from hierlab.core.solver import Callback, Solver, SolverResult, solve
from hierlab.core.state import StateArray
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.calibrated import CalibratedProbabilitiesMixin
from hierlab.methods.guards import (
    check_label_values,
    check_labels,
    check_sparse_structure,
    check_width,
    check_X,
)
from hierlab.methods.probability import row_blocks

__all__ = [
    "FLAT_ROOT",
    "HierarchicalClassifier",
    "check_X",
    "check_sparse_structure",
    "warn_ignored",
]

FLAT_ROOT = "<root>"

#: ``predict`` scores about this many (row, node) pairs at a time (64 MB of float64)
PREDICT_ENTRIES = 2**23


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


class HierarchicalClassifier(CalibratedProbabilitiesMixin, ClassifierMixin, BaseEstimator):
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
        callbacks = list(callbacks)
        self._fit(X, Y, callbacks)
        self.solver_, self.algorithm_ = self._what_ran()
        if self.taxonomy_ is not tax:  # an induced taxonomy (MF-Tree, CMTL): its own ids
            Y = self._encode(y)
        if self._explain_by_class_means:
            self.node_means_ = _node_means(X, self._closure(Y))
        if self.__dict__.pop("_calibrate_in_fit", True):
            self._calibrate_on_training_rows(Y, X, callbacks)
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
        ids = self._predict_ids_by_block(X)
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

    def _predict_ids_by_block(self, X: np.ndarray | sp.csr_matrix) -> Any:
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
        ids = self._predict_ids_by_block(check_X(X, self, reset=False))
        return self._closure(ids).astype(np.int8)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy with the ancestor rule: an internal label is right when it lies on the path.

        For multi-label methods, the example-based exact match of the ancestor-closed sets.
        """
        check_is_fitted(self, "taxonomy_")
        truth = self._encode(y)  # node ids: int labels are names, not ids
        pred = self._predict_ids_by_block(check_X(X, self, reset=False))
        if sp.issparse(truth) or sp.issparse(pred):  # subset 0/1 of the ancestor closures
            differ = (self._closure(truth) != self._closure(pred)).tocsr()
            return float(np.mean(np.diff(differ.indptr) == 0))
        ok = self.taxonomy_.is_ancestor_or_self(truth, np.asarray(pred, dtype=np.int64))
        return float(ok.mean())

    # ------------------------------------------------------------------ fit size guard
    def _sparse_weights(self) -> bool:
        """Whether ``coef_`` is held sparse, and sparse by construction, for CSR ``X`` (top-down
        with liblinear: a node weighs only its examples' features); the dense-weights size
        guard of ``fit`` then does not apply."""
        return False

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
        yo = check_labels(y)
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
                j = tax.name_index.get(str(v))
                if j is not None and not isinstance(v, str):
                    out[j] = v
        self._out_labels_ = out
        Y = encode_labels(yo, tax)
        if not multi and len(np.unique(Y)) < 2 and tax.n_nodes <= 2:
            raise ValueError("The number of classes has to be greater than one; got 1 class")
        return Y

    def _encode(self, y: Any) -> Any:
        return encode_labels(check_labels(y), self.taxonomy_)

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
