"""Hieron (seed 002, Dekel, Keshet and Singer 2004) as scikit-learn / river-style estimators.

* :class:`HieronClassifier` - online Hieron (Algorithm 1) and batch Hieron (Section 4: the
  loss-maximising competitor and the averaged hypothesis of eq. 13), on the real taxonomy
  (``hierarchy="tree"``) or on the flat one (``"flat"``: every label a child of the root, the
  multiclass baseline of Section 5), primal or in kernel form (eq. 11-12). ``fit``,
  ``partial_fit`` (one pass over a batch, the state carried over) and ``learn_one`` /
  ``predict_one`` (one example at a time, as in river).
* :class:`HieronGreedyClassifier` - the "greedy" comparison: an independent flat Hieron at each
  internal vertex, routing top-down to a leaf.

Registered as ``"hieron"`` (online), ``"hieron-batch"``, ``"hieron-flat"`` and
``"hieron-greedy"``. Labels may be internal vertices (the synthetic set of Section 5 labels all
121 vertices); predictions of the tree and flat variants may be any vertex (eq. 1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.registry import Param, register
from hierlab.core.solver import Callback
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier, check_X
from hierlab.methods.hieron.model import (
    Kernel,
    PathGeometry,
    predict_from_scores,
    prototypes_from_increments,
)
from hierlab.methods.hieron.solver import UPDATES, GreedyHieronSolver, HieronSolver, HieronStream

__all__ = ["HieronClassifier", "HieronGreedyClassifier"]

_KERNELS = ("linear", "rbf", "poly")
_FORMS = ("auto", "primal", "dual")


class _HieronParams(HierarchicalClassifier):
    """Parameter checks shared by the Hieron estimators."""

    update: str
    average: bool
    epochs: int
    kernel: str
    form: str
    gamma: float | None
    degree: int
    coef0: float
    report_every: int | None

    def _check_common(self) -> None:
        if self.update not in UPDATES:
            raise ParameterError(f"update must be one of {UPDATES}, got {self.update!r}")
        if int(self.epochs) != self.epochs or self.epochs < 1:
            raise ParameterError(f"epochs must be an integer >= 1, got {self.epochs!r}")
        if self.kernel not in _KERNELS:
            raise ParameterError(f"kernel must be one of {_KERNELS}, got {self.kernel!r}")
        if self.form not in _FORMS:
            raise ParameterError(f"form must be one of {_FORMS}, got {self.form!r}")
        if self.form == "primal" and self.kernel != "linear":
            raise ParameterError(
                f"the primal form needs the linear kernel; kernel={self.kernel!r} is dual only"
            )
        if self.gamma is not None and not self.gamma > 0:
            raise ParameterError(f"gamma must be > 0 (or None), got {self.gamma!r}")

    def _kernel_obj(self, n_features: int) -> Kernel | None:
        """None for the primal form, else the :class:`Kernel` of the dual form."""
        if self.kernel == "linear" and self.form in ("auto", "primal"):
            return None
        gamma = self.gamma if self.gamma is not None else 1.0 / max(n_features, 1)
        return Kernel(self.kernel, gamma=float(gamma), degree=int(self.degree), coef0=self.coef0)

    def _hypothesis(self) -> bool:
        return bool(self.average)


class HieronClassifier(_HieronParams):
    """Online and batch Hieron: path-sum prototypes and the sqrt(gamma) margin (seed 002).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        A tree. None: the flat taxonomy of the training labels.
    hierarchy : {"tree", "flat"}, default "tree"
        Learn on the taxonomy (Hieron) or on its flattened version (every vertex a child of the
        root: the multiclass baseline "flat" of Section 5). Tree-induced errors are always
        measured on the real taxonomy.
    update : {"prediction", "max-loss"}, default "prediction"
        The competitor ``y_hat`` of each update: the prediction (Algorithm 1, online Hieron) or
        the label maximising the loss of eq. (5) (batch Hieron, Section 4).
    average : bool, default True
        Predict with the average of all online hypotheses (eq. 13, "Batch" in Table 2) instead of
        the last one ("Last" in Table 2, the online algorithm's current hypothesis). Both are
        kept: :meth:`predict_with` uses either. The online predictions made during training (the
        "online" columns of Table 1) are in ``history_`` whatever this says.
    epochs : int, default 1
        Passes over the training set in ``fit`` (``partial_fit`` makes one).
    shuffle : bool, default False
        Shuffle the training set before every epoch (otherwise the given order).
    kernel : {"linear", "rbf", "poly"}, default "linear"
        Kernel of eq. (12).
    form : {"auto", "primal", "dual"}, default "auto"
        "auto": primal for the linear kernel, dual otherwise; "dual" with the linear kernel runs
        the kernel form (same predictions as the primal one, for checking).
    gamma : float, optional
        RBF / polynomial scale; None: ``1 / n_features``.
    degree : int, default 3
        Degree of the polynomial kernel.
    coef0 : float, default 1.0
        Offset of the polynomial kernel.
    candidates : {"auto", "all", "seen"}, default "auto"
        Labels that may be predicted: every vertex (eq. 1), or the labels seen in the first fit.
        "auto" is "all" with a given taxonomy, and every vertex but the root when ``taxonomy``
        is None (the root of the flat taxonomy built from the labels is not a label).
    report_every : int, optional
        Report a solver state (callbacks, ``history_``) every this many examples; default once
        per epoch.
    random_state : int, optional
        Seed of the shuffles.

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        The increments ``w^v = W^v - W^{A(v)}`` (Section 2) of the hypothesis used by
        :meth:`predict` (primal form, or dual form with the linear kernel); ``w^0 = 0``.
    prototypes_ : ndarray of shape (n_nodes, n_features)
        The prototypes ``W^v`` (eq. 2) of the same hypothesis.
    support_vectors_ : ndarray or csr_matrix of shape (n_support, n_features)
        Dual form: the support set, each example stored once.
    dual_coef_ : ndarray of shape (n_support, n_nodes)
        Dual form: the ``alpha_j^v`` of eq. (12) (increments; rows of the support set).
    solver_ : HieronSolver
        The solver, carrying the state between ``partial_fit`` / ``learn_one`` calls.
    history_ : pandas.DataFrame
        The reported states: ``upper`` (= ``online_tree_error``) is the normalised cumulative
        tree-induced error of the online predictions, ``online_multiclass_error`` the fraction of
        online mistakes (Table 1), ``lower`` is None.
    """

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        hierarchy: str = "tree",
        update: str = "prediction",
        average: bool = True,
        epochs: int = 1,
        shuffle: bool = False,
        kernel: str = "linear",
        form: str = "auto",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        candidates: str = "auto",
        report_every: int | None = None,
        random_state: int | None = None,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.hierarchy = hierarchy
        self.update = update
        self.average = average
        self.epochs = epochs
        self.shuffle = shuffle
        self.kernel = kernel
        self.form = form
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.candidates = candidates
        self.report_every = report_every
        self.random_state = random_state

    # ------------------------------------------------------------------ set-up
    def _check_params(self) -> None:
        self._check_common()
        if self.hierarchy not in ("tree", "flat"):
            raise ParameterError(f"hierarchy must be 'tree' or 'flat', got {self.hierarchy!r}")
        if self.candidates not in ("auto", "all", "seen"):
            raise ParameterError(
                f"candidates must be 'auto', 'all' or 'seen', got {self.candidates!r}"
            )

    def _new_solver(self, n_features: int, Y: np.ndarray) -> HieronSolver:
        tax = self.taxonomy_
        real = PathGeometry(tax.parent)
        geometry = real if self.hierarchy == "tree" else PathGeometry.flat(tax.n_nodes)
        if self.candidates == "seen":
            cand: np.ndarray | None = np.unique(Y)
        elif self.candidates == "all" or self.taxonomy is not None:
            cand = None
        else:  # "auto" on the flat taxonomy built from the labels: its root is no label
            cand = np.arange(1, tax.n_nodes)
        return HieronSolver(
            geometry,
            n_features,
            update=self.update,
            kernel=self._kernel_obj(n_features),
            candidates=cand,
            eval_geometry=real,
            report_every=self.report_every,
        )

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_params()
        Y = np.asarray(Y, dtype=np.int64)
        self.solver_ = self._new_solver(X.shape[1], Y)
        stream = HieronStream(X, Y, self.epochs, self.shuffle, self.random_state)
        self._run_solver(self.solver_, stream, callbacks)

    # ------------------------------------------------------------------ incremental learning
    def partial_fit(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        callbacks: Iterable[Callback] = (),
    ) -> HieronClassifier:
        """One pass of Hieron over a batch, continuing from the current prototypes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Node names.
        classes : array-like, optional
            All labels, needed on the first call when ``taxonomy`` is None (the flat taxonomy
            is built from them).
        callbacks : iterable of Callback

        Returns
        -------
        self
        """
        X = check_X(X, self, reset=not hasattr(self, "solver_"))
        if not hasattr(self, "solver_"):
            self._start(X.shape[1], y, classes)
        Y = np.asarray(self._encode(y), dtype=np.int64)
        if len(Y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(Y)} labels")
        history = self.history_
        stream = HieronStream(X, Y, 1, False, None)
        self._run_solver(self.solver_, stream, list(callbacks))
        new = self.history_
        self.history_ = new if history.empty else pd.concat([history, new], ignore_index=True)
        self.n_iter_ = len(self.history_)
        return self

    def _start(self, n_features: int, y: Any, classes: Any) -> None:
        """First incremental call: the taxonomy, the label encoding and a fresh solver."""
        self._check_params()
        if self.taxonomy is None and classes is None:
            raise ParameterError(
                "the first partial_fit/learn_one needs classes=... (all labels) when "
                "taxonomy is None, or pass taxonomy="
            )
        labels = classes if classes is not None else y
        labels = np.asarray(labels, dtype=object).ravel()
        self._encode_fit_labels(labels, len(labels))
        self.n_features_in_ = int(n_features)
        self.history_ = pd.DataFrame(columns=["iteration", "elapsed", "upper", "lower", "gap"])
        self.n_iter_ = 0
        self.converged_ = True
        seen = np.asarray(self._encode(labels), dtype=np.int64)
        self.solver_ = self._new_solver(int(n_features), seen)

    def learn_one(self, x: Any, y: Any) -> HieronClassifier:
        """One round of Hieron on a single example (river style).

        Parameters
        ----------
        x : dict or array-like of shape (n_features,)
            A dict maps column indices (int) to values; absent columns are 0.
        y : label (a node name)

        Returns
        -------
        self
        """
        if not hasattr(self, "solver_"):
            if isinstance(x, Mapping):
                raise ParameterError(
                    "learn_one cannot guess the number of features from a dict on the first "
                    "call: start with an array row or partial_fit"
                )
            self._start(len(np.asarray(x).ravel()), [y], None)
        row = self._row(x)
        j = self.taxonomy_._index.get(str(y))
        if j is None:
            raise DataError(f"label {y!r} is not a node of the taxonomy")
        self.solver_.learn_one(row, j)
        return self

    def predict_one(self, x: Any) -> Any:
        """The predicted label (node name) of one example (dict or 1-D array)."""
        check_is_fitted(self, "solver_")
        row = self._row(x).reshape(1, -1)
        return self._decode(self._predict_ids(row))[0]

    def _row(self, x: Any) -> np.ndarray:
        n = self.n_features_in_
        if isinstance(x, Mapping):
            row = np.zeros(n)
            for k, v in x.items():
                if not isinstance(k, int | np.integer) or not 0 <= int(k) < n:
                    raise DataError(f"feature key {k!r} is not a column index in [0, {n})")
                row[int(k)] = float(v)
            return row
        row = np.asarray(x, dtype=np.float64).ravel()
        if len(row) != n:
            raise DataError(f"x has {len(row)} features, the model {n}")
        if not np.all(np.isfinite(row)):
            raise DataError("x contains NaN or infinity")
        return row

    # ------------------------------------------------------------------ prediction
    def node_scores(self, X: Any, averaged: bool | None = None) -> np.ndarray:
        """Scores ``W^v . x`` (eq. 3) of shape (n_samples, n_nodes).

        ``averaged`` picks the hypothesis (default: the ``average`` parameter).
        """
        check_is_fitted(self, "solver_")
        X = check_X(X, self, reset=False)
        av = self._hypothesis() if averaged is None else bool(averaged)
        return self.solver_.scores(X, averaged=av)

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        S = self.solver_.scores(X, averaged=self._hypothesis())
        return predict_from_scores(S, self.solver_.candidates)

    def predict_with(self, X: Any, hypothesis: str) -> np.ndarray:
        """Predict with the ``"last"`` or the ``"average"`` hypothesis (Table 2's two columns)."""
        if hypothesis not in ("last", "average"):
            raise ParameterError(f"hypothesis must be 'last' or 'average', got {hypothesis!r}")
        S = self.node_scores(X, averaged=hypothesis == "average")
        return self._decode(predict_from_scores(S, self.solver_.candidates))

    # ------------------------------------------------------------------ fitted views
    @property
    def prototypes_(self) -> np.ndarray:
        """``W^v`` of the predicting hypothesis, shape (n_nodes, n_features)."""
        return prototypes_from_increments(self.coef_, self.solver_.geometry.parent)

    @property
    def coef_(self) -> np.ndarray:
        """Increments ``w^v`` of the predicting hypothesis, shape (n_nodes, n_features)."""
        if not hasattr(self, "solver_"):
            raise AttributeError("coef_: not fitted")
        s = self.solver_
        if s.kernel is not None and s.kernel.name != "linear":
            raise AttributeError(f"coef_ is not available with the {s.kernel.name} kernel")
        # for hierarchy="flat" the increments of the flat tree are the prototypes themselves
        return s.increments(averaged=self._hypothesis())

    @property
    def support_vectors_(self) -> Any:
        """Dual form: the support set, shape (n_support, n_features)."""
        if not hasattr(self, "solver_") or self.solver_.kernel is None:
            raise AttributeError("support_vectors_ exists in the dual form only")
        return self.solver_.support_vectors()

    @property
    def dual_coef_(self) -> np.ndarray:
        """Dual form: ``alpha_j^v`` of eq. (12), shape (n_support, n_nodes)."""
        if not hasattr(self, "solver_") or self.solver_.kernel is None:
            raise AttributeError("dual_coef_ exists in the dual form only")
        return self.solver_.dual_increments(averaged=self._hypothesis())


class HieronGreedyClassifier(_HieronParams):
    """The "greedy" hierarchical classifier of seed 002, Section 5.

    An independent multiclass predictor - a flat Hieron over the children - at each internal
    vertex ``v``, trained on ``S_v = {(x_i, u_i): u_i in P(y_i), A(u_i) = v}``; a prediction
    starts at the root and moves to ``f_v(x)`` until it reaches a leaf. Examples labelled with an
    internal vertex train the vertices above it, and (as in the paper) are then always
    mispredicted unless ``allow_stop``.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
    update : {"prediction", "max-loss"}, default "max-loss"
        Each local Hieron's update (see :class:`HieronClassifier`).
    average : bool, default True
        Each local classifier predicts with its averaged hypothesis ("Batch") or its last one.
    epochs, shuffle, kernel, form, gamma, degree, coef0, report_every, random_state
        As in :class:`HieronClassifier`.
    allow_stop : bool, default False
        Give each internal vertex a "stop here" class (its fixed zero prototype), so internal
        vertices can be predicted. False is the paper's scheme.

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        Row ``u``: the prototype scoring child ``u`` at its parent (linear kernel); root row 0.
    solver_ : GreedyHieronSolver
    """

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        update: str = "max-loss",
        average: bool = True,
        epochs: int = 1,
        shuffle: bool = False,
        kernel: str = "linear",
        form: str = "auto",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        allow_stop: bool = False,
        report_every: int | None = None,
        random_state: int | None = None,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.update = update
        self.average = average
        self.epochs = epochs
        self.shuffle = shuffle
        self.kernel = kernel
        self.form = form
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.allow_stop = allow_stop
        self.report_every = report_every
        self.random_state = random_state

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_common()
        tax = self.taxonomy_
        self.solver_ = GreedyHieronSolver(
            tax.parent,
            X.shape[1],
            update=self.update,
            kernel=self._kernel_obj(X.shape[1]),
            allow_stop=bool(self.allow_stop),
            report_every=self.report_every,
        )
        stream = HieronStream(
            X, np.asarray(Y, dtype=np.int64), self.epochs, self.shuffle, self.random_state
        )
        self._run_solver(self.solver_, stream, callbacks)

    def node_scores(self, X: Any, averaged: bool | None = None) -> np.ndarray:
        """Local scores (n_samples, n_nodes): column ``u`` scores child ``u`` at its parent."""
        check_is_fitted(self, "solver_")
        X = check_X(X, self, reset=False)
        av = self._hypothesis() if averaged is None else bool(averaged)
        return self.solver_.scores(X, averaged=av)

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return self.solver_.route(self.solver_.scores(X, averaged=self._hypothesis()))

    def predict_with(self, X: Any, hypothesis: str) -> np.ndarray:
        """Predict with every vertex's ``"last"`` or ``"average"`` hypothesis."""
        if hypothesis not in ("last", "average"):
            raise ParameterError(f"hypothesis must be 'last' or 'average', got {hypothesis!r}")
        S = self.node_scores(X, averaged=hypothesis == "average")
        return self._decode(self.solver_.route(S))

    @property
    def coef_(self) -> np.ndarray:
        """Row ``u``: the local prototype of child ``u`` at its parent (linear kernel)."""
        if not hasattr(self, "solver_"):
            raise AttributeError("coef_: not fitted")
        s = self.solver_
        out = np.zeros((s.n_nodes, s.n_features))
        for _v, (classes, local) in s.local_.items():
            if local.kernel is not None and local.kernel.name != "linear":
                raise AttributeError(f"coef_ is not available with the {local.kernel.name} kernel")
            w = local.increments(averaged=self._hypothesis())  # flat: increments = prototypes
            out[classes[1:]] = w[1:]
        return out


# ---------------------------------------------------------------------- registry
def _common_params(update: str, average: bool) -> list[Param]:
    return [
        Param(
            "update",
            "str",
            update,
            choices=UPDATES,
            help="competitor of an update: the prediction (Alg. 1) or the max-loss label (Sec. 4)",
        ),
        Param("average", "bool", average, help="predict with the averaged hypothesis (eq. 13)"),
        Param("epochs", "int", 1, low=1, high=1000, help="passes over the training set"),
        Param("shuffle", "bool", False, help="shuffle the training set before every epoch"),
        Param("kernel", "str", "linear", choices=_KERNELS, help="kernel of eq. (12)"),
        Param(
            "form",
            "str",
            "auto",
            choices=_FORMS,
            help="primal or dual (kernel) form; auto = primal for the linear kernel",
        ),
        Param(
            "gamma",
            "float",
            None,
            low=1e-8,
            high=1e4,
            log=True,
            help="RBF / polynomial kernel scale (None: 1 / n_features)",
        ),
        Param("degree", "int", 3, low=1, high=10, help="degree of the polynomial kernel"),
        Param("random_state", "int", None, help="seed of the shuffles"),
    ]


register(
    "hieron",
    HieronClassifier,
    params=_common_params("prediction", True),
    seed="002",
    summary="Online Hieron (Alg. 1): path-sum prototypes, sqrt(tree distance) margin, PA updates",
)
register(
    "hieron-batch",
    HieronClassifier,
    params=_common_params("max-loss", True),
    seed="002",
    summary="Batch Hieron (Sec. 4): max-loss updates, averaged hypothesis of eq. (13)",
    fixed={"update": "max-loss", "average": True},
)
register(
    "hieron-flat",
    HieronClassifier,
    params=_common_params("max-loss", True),
    seed="002",
    summary="Hieron on the flattened taxonomy (the multiclass baseline 'flat' of seed 002)",
    fixed={"hierarchy": "flat", "update": "max-loss", "average": True},
)
register(
    "hieron-greedy",
    HieronGreedyClassifier,
    params=[
        *_common_params("max-loss", True),
        Param("allow_stop", "bool", False, help="let a vertex keep an example (internal labels)"),
    ],
    seed="002",
    summary="Greedy top-down: an independent flat Hieron at each internal vertex (seed 002)",
    fixed={"update": "max-loss", "average": True},
)
