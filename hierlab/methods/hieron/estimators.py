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
``"hieron-greedy"``, with the cards of :mod:`hierlab.methods.hieron.cards`. Labels may be
internal vertices (the synthetic set of Section 5 labels all 121 vertices); predictions of the
tree and flat variants may be any vertex (eq. 1).

The constructor parameters are declared once, in ``_parameters`` (:mod:`hierlab.core.params`);
validation, the registry schema and the cards' parameter tables are generated from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import Param, validate_params
from hierlab.core.registry import register
from hierlab.core.solver import Callback
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier, check_X
from hierlab.methods.guards import check_width
from hierlab.methods.hieron.cards import (
    HIERON_BATCH_CARD,
    HIERON_CARD,
    HIERON_FLAT_CARD,
    HIERON_GREEDY_CARD,
)
from hierlab.methods.hieron.model import (
    HieronStream,
    Kernel,
    PathGeometry,
    predict_from_scores,
    prototypes_from_increments,
)
from hierlab.methods.hieron.solver import UPDATES, GreedyHieronSolver, HieronSolver

__all__ = ["HieronClassifier", "HieronGreedyClassifier"]

_KERNELS = ("linear", "rbf", "poly")
_FORMS = ("auto", "primal", "dual")
_CANDIDATES = ("auto", "all", "seen")

# The parameters both estimators declare (only the default of ``update`` differs): the update,
# the hypothesis, the passes over the data, the kernel of eq. (12) and the reports.
# fmt: off
_UPDATE = Param(
    "update", "str", "prediction", choices=UPDATES,
    help="competitor of an update: the prediction (Alg. 1) or the max-loss label (Sec. 4)",
    note="'prediction' is online Hieron (update only on mistakes of the current prediction, "
    "Alg. 1); 'max-loss' uses the label with the largest loss of eq. (5), the batch variant "
    "whose average has the generalisation bound of Thm. 2.",
)
_AVERAGE = Param(
    "average", "bool", True, help="predict with the averaged hypothesis (eq. 13)",
    note="The average of all online hypotheses (eq. 13/15) is much more stable than the last "
    "one on noisy data.",
)
#: online Hieron predicts with its last hypothesis, as Algorithm 1 returns it
_AVERAGE_LAST = replace(
    _AVERAGE, default=False,
    help="predict with the averaged hypothesis (eq. 13) instead of the last one (Algorithm 1)",
    note="False (the default) is Algorithm 1's output, the last hypothesis ('Last' in Table 2); "
    "True is the average of all online hypotheses (eq. 13/15, 'Batch'), much more stable on "
    "noisy data.",
)
_PASSES = (
    Param(
        "epochs", "int", 1, low=1, help="passes over the training set",
        note="The paper uses one; 2-5 help when the data is small.",
    ),
    Param(
        "shuffle", "bool", True, help="shuffle the training set before every epoch (seeded)",
        note="On by default, seeded by random_state = 0: uploaded files often come sorted by "
        "class, and an online method that sees the classes one after another learns mostly "
        "the last ones (on 20 Newsgroups sorted by class, half the accuracy of a shuffled "
        "pass). "
        "Off: every epoch takes the rows in the given order, as a stream would.",
    ),
)
_KERNEL_PARAMS = (
    Param(
        "kernel", "str", "linear", choices=_KERNELS, help="kernel of eq. (12)",
        note="'linear' works in the primal; 'rbf' and 'poly' use the kernel form of eq. (12) "
        "and cost O(n_support) per prediction.",
    ),
    Param(
        "form", "str", "auto", choices=_FORMS,
        help="primal or dual (kernel) form; auto = primal for the linear kernel",
        note="'dual' with the linear kernel runs the kernel code path (same predictions); "
        "'primal' needs the linear kernel.",
    ),
    Param(
        "gamma", "float", None, low=0.0, low_open=True, log=True,
        used_when={"kernel": ("rbf", "poly")},
        help="RBF / polynomial kernel scale (None: 1 / n_features)",
        note="Try 0.1x-10x of 1 / n_features.",
    ),
    Param(
        "degree", "int", 3, low=1, used_when={"kernel": ("poly",)},
        help="degree of the polynomial kernel", note="2-4 is usual.",
    ),
    Param(
        "coef0", "float", 1.0, used_when={"kernel": ("poly",)},
        help="offset of the polynomial kernel",
        note="The kernel is (gamma x.z + coef0) ** degree.",
    ),
)
_REPORTS = (
    Param(
        "report_every", "int", None, low=1,
        help="report a solver state every this many examples (None: once per epoch)",
    ),
    Param(
        "random_state", "seed", 0, help="seed of the shuffles",
        note="Only used with shuffle=True.",
    ),
)
# fmt: on


class _HieronParams(HierarchicalClassifier):
    """What the Hieron estimators share: the kernel, the hypothesis and prediction by scores."""

    _budget_param = "epochs"
    _scores_from_weights = False  # the engine scores (eq. 3, kernels included)
    #: the engine's candidate mask adds -inf to the scores of nodes never predicted
    _state_nonfinite = ("_cand_mask",)
    update: str
    average: bool
    epochs: int
    shuffle: bool
    kernel: str
    form: str
    gamma: float | None
    degree: int
    coef0: float
    report_every: int | None
    random_state: int | np.random.Generator | None
    engine_: Any

    def _check_kernel_form(self) -> None:
        """The one check across parameters: the primal form needs the linear kernel."""
        if self.form == "primal" and self.kernel != "linear":
            raise ParameterError(
                f"the primal form needs the linear kernel; kernel={self.kernel!r} is dual only"
            )

    def _kernel_obj(self, n_features: int) -> Kernel | None:
        """None for the primal form, else the :class:`Kernel` of the dual form."""
        if self.kernel == "linear" and self.form in ("auto", "primal"):
            return None
        gamma = self.gamma if self.gamma is not None else 1.0 / max(n_features, 1)
        return Kernel(self.kernel, gamma=float(gamma), degree=int(self.degree), coef0=self.coef0)

    def _hypothesis(self) -> bool:
        return bool(self.average)

    def _ids_from_scores(self, S: np.ndarray) -> np.ndarray:
        """Node ids predicted from the scores of :meth:`node_scores`."""
        raise NotImplementedError

    def node_scores(self, X: Any, averaged: bool | None = None) -> np.ndarray:
        """The scores the prediction is made from, shape (n_samples, n_nodes).

        ``averaged`` picks the hypothesis (default: the ``average`` parameter).
        """
        check_is_fitted(self, "engine_")
        X = check_X(X, self, reset=False)
        av = self._hypothesis() if averaged is None else bool(averaged)
        return np.asarray(self.engine_.scores(X, averaged=av))

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        return self._ids_from_scores(self.engine_.scores(X, averaged=self._hypothesis()))

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The predicting hypothesis' scores (kernels included), shape (n_samples, n_nodes)."""
        return np.asarray(self.engine_.scores(X, averaged=self._hypothesis()))

    def _hypothesis_text(self) -> str:
        return "averaged hypothesis (eq. 13)" if self._hypothesis() else "last hypothesis"

    def _upgrade_state(self) -> None:
        """After loading a model file written before ``engine_`` existed: its ``solver_`` held
        the online state; move it and say what ran."""
        old = self.__dict__.get("solver_")
        if old is not None and not isinstance(old, str):
            self.engine_ = old
            self.solver_, self.algorithm_ = self._what_ran()

    def predict_with(self, X: Any, hypothesis: str) -> np.ndarray:
        """Predict with the ``"last"`` or the ``"average"`` hypothesis (Table 2's two columns)."""
        if hypothesis not in ("last", "average"):
            raise ParameterError(f"hypothesis must be 'last' or 'average', got {hypothesis!r}")
        S = self.node_scores(X, averaged=hypothesis == "average")
        return self._decode(self._ids_from_scores(S))

    def partial_fit(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        callbacks: Iterable[Callback] = (),
    ) -> Any:
        """One pass of Hieron over a batch, continuing from the current prototypes (greedy:
        every vertex's classifier continues on the batch's rows of its ``S_v``).

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
        X = check_X(X, self, reset=not hasattr(self, "engine_"))
        if not hasattr(self, "engine_"):
            self._start(X.shape[1], y, classes)
        Y = np.asarray(self._encode(y), dtype=np.int64)
        if len(Y) != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {len(Y)} labels")
        history = self.history_
        stream = HieronStream(X, Y, 1, False, None)
        self._run_solver(self.engine_, stream, list(callbacks))
        new = self.history_
        self.history_ = new if history.empty else pd.concat([history, new], ignore_index=True)
        self.n_iter_ = len(self.history_)
        self.solver_, self.algorithm_ = self._what_ran()
        return self

    def _start(self, n_features: int, y: Any, classes: Any) -> None:
        """First incremental call: the taxonomy, the label encoding and a fresh solver."""
        validate_params(self)  # partial_fit and learn_one do not go through fit
        self._check_kernel_form()
        if self.taxonomy is None and classes is None:
            raise ParameterError(
                "the first partial_fit/learn_one needs classes=... (all labels) when "
                "taxonomy is None, or pass taxonomy="
            )
        labels = classes if classes is not None else y
        labels = np.asarray(labels, dtype=object).ravel()
        self._encode_fit_labels(labels, len(labels))
        check_width(len(labels), int(n_features), None, self.taxonomy_.n_nodes)
        self.n_features_in_ = int(n_features)
        self.history_ = pd.DataFrame(columns=["iteration", "elapsed", "upper", "lower", "gap"])
        self.n_iter_ = 0
        self.converged_ = True
        seen = np.asarray(self._encode(labels), dtype=np.int64)
        self.engine_ = self._new_solver(int(n_features), seen)
        self.solver_, self.algorithm_ = self._what_ran()


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
    average : bool, default False
        Predict with the average of all online hypotheses (eq. 13, "Batch" in Table 2) instead of
        the last one ("Last" in Table 2, what Algorithm 1 returns). Both are
        kept: :meth:`predict_with` uses either. The online predictions made during training (the
        "online" columns of Table 1) are in ``history_`` whatever this says.
    epochs : int, default 1
        Passes over the training set in ``fit`` (``partial_fit`` makes one).
    shuffle : bool, default True
        Shuffle the training set before every epoch, seeded by ``random_state`` (otherwise the
        given order, as a stream).
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
        Labels that may be predicted (and compete in the updates): every vertex (eq. 1), or the
        labels seen in the first fit. The root is a candidate only when a training row is
        labelled with it (the synthetic set of seed 002 labels all 121 vertices): otherwise it
        is no label, and Algorithm 1 and eq. (13) never return it. "auto" is "all" (with that
        rule for the root).
    report_every : int, optional
        Report a solver state (callbacks, ``history_``) every this many examples; default once
        per epoch.
    random_state : int or numpy Generator or None, default 0
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
    engine_ : HieronSolver
        The online algorithm's state, carried between ``partial_fit`` / ``learn_one`` calls.
    solver_ : str
        ``"hieron"``.
    algorithm_ : str
        What ran: "Hieron, Algorithm 1 of seed 002, last hypothesis", "batch Hieron (seed
        002, Section 4), averaged hypothesis (eq. 13)", ...
    history_ : pandas.DataFrame
        The reported states: ``upper`` (= ``online_tree_error``) is the normalised cumulative
        tree-induced error of the online predictions, ``online_multiclass_error`` the fraction of
        online mistakes (Table 1), ``lower`` is None.
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "hierarchy", "str", "tree", choices=("tree", "flat"),
            help="learn on the taxonomy or on its flattened version (the 'flat' baseline)",
            note="'flat' hangs every vertex under the root (the multiclass baseline of "
            "Section 5); tree-induced errors are always measured on the real taxonomy.",
        ),
        _UPDATE,
        _AVERAGE_LAST,
        *_PASSES,
        *_KERNEL_PARAMS,
        Param(
            "candidates", "str", "auto", choices=_CANDIDATES,
            help="labels that may be predicted: every vertex (eq. 1) or those seen in the "
            "first fit",
            note="'auto' and 'all': every vertex, the root only when a training row carries it "
            "(otherwise it is no label and never predicted, as in Algorithm 1 and eq. 13).",
        ),
        *_REPORTS,
    )  # fmt: skip

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        hierarchy: str = "tree",
        update: str = "prediction",
        average: bool = False,
        epochs: int = 1,
        shuffle: bool = True,
        kernel: str = "linear",
        form: str = "auto",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        candidates: str = "auto",
        report_every: int | None = None,
        random_state: int | np.random.Generator | None = 0,
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
    def _new_solver(self, n_features: int, Y: np.ndarray) -> HieronSolver:
        tax = self.taxonomy_
        real = PathGeometry(tax.parent)
        geometry = real if self.hierarchy == "tree" else PathGeometry.flat(tax.n_nodes)
        if self.candidates == "seen":
            cand: np.ndarray | None = np.unique(Y)
        elif np.any(np.asarray(Y) == 0) and (self.candidates == "all" or self.taxonomy is not None):
            cand = None  # the root is a label of the data (seed 002's synthetic set)
        else:
            # Algorithm 1 and eq. (13) range over the labels: the root, with its fixed zero
            # prototype, is none unless a training row carries it (IPC titles, 20 Newsgroups)
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

    def _rebuild_derived(self) -> dict[str, Any]:
        """The engine's geometry and candidates, as a fresh engine has them (the learned
        prototypes and support vectors stay the file's)."""
        fresh = self._new_solver(int(self.n_features_in_), self._class_ids())
        keys = ("geometry", "eval_geometry", "candidates", "_cand_mask", "_M")
        return {f"engine_.{k}": getattr(fresh, k) for k in keys
                if getattr(fresh, k, None) is not None}  # fmt: skip

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_kernel_form()
        Y = np.asarray(Y, dtype=np.int64)
        self.engine_ = self._new_solver(X.shape[1], Y)
        stream = HieronStream(X, Y, self.epochs, self.shuffle, self.random_state)
        self._run_solver(self.engine_, stream, callbacks)

    def _what_ran(self) -> tuple[str, str]:
        if self.update == "prediction":
            what = f"Hieron, Algorithm 1 of seed 002, {self._hypothesis_text()}"
        else:
            what = f"batch Hieron (seed 002, Section 4), {self._hypothesis_text()}"
        if self.hierarchy == "flat":
            what += ", flat taxonomy"
        if self.engine_.kernel is not None:
            what += f", {self.engine_.kernel.name} kernel (eq. 12)"
        return "hieron", what

    # ------------------------------------------------------------------ incremental learning
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
        if not hasattr(self, "engine_"):
            if isinstance(x, Mapping):
                raise ParameterError(
                    "learn_one cannot guess the number of features from a dict on the first "
                    "call: start with an array row or partial_fit"
                )
            self._start(len(np.asarray(x).ravel()), [y], None)
        row = self._row(x)
        j = self.taxonomy_.name_index.get(str(y))
        if j is None:
            raise DataError(f"label {y!r} is not a node of the taxonomy")
        self.engine_.learn_one(row, j)
        return self

    def predict_one(self, x: Any) -> Any:
        """The predicted label (node name) of one example (dict or 1-D array)."""
        check_is_fitted(self, "engine_")
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
    def _ids_from_scores(self, S: np.ndarray) -> np.ndarray:
        """``argmax_v W^v . x`` (eq. 1, 3) over the candidates; :meth:`node_scores` gives
        ``W^v . x``."""
        return predict_from_scores(S, self.engine_.candidates)

    def _candidates(self) -> np.ndarray:
        """The labels eq. (1) ranges over (every vertex unless ``candidates`` restricts it)."""
        cand = self.engine_.candidates
        if cand is None:
            return np.ones(self.taxonomy_.n_nodes, dtype=bool)
        mask = np.zeros(self.taxonomy_.n_nodes, dtype=bool)
        mask[np.asarray(cand)] = True
        return mask

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """The prototypes ``W^v`` (path sums of the increments); None for kernels."""
        try:
            return self.prototypes_, np.zeros(self.taxonomy_.n_nodes)
        except AttributeError:
            return None

    # ------------------------------------------------------------------ fitted views
    @property
    def prototypes_(self) -> np.ndarray:
        """``W^v`` of the predicting hypothesis, shape (n_nodes, n_features)."""
        return prototypes_from_increments(self.coef_, self.engine_.geometry.parent)

    @property
    def coef_(self) -> np.ndarray:
        """Increments ``w^v`` of the predicting hypothesis, shape (n_nodes, n_features)."""
        if not hasattr(self, "engine_"):
            raise AttributeError("coef_: not fitted")
        s = self.engine_
        if s.kernel is not None and s.kernel.name != "linear":
            raise AttributeError(f"coef_ is not available with the {s.kernel.name} kernel")
        # for hierarchy="flat" the increments of the flat tree are the prototypes themselves
        return s.increments(averaged=self._hypothesis())

    @property
    def support_vectors_(self) -> Any:
        """Dual form: the support set, shape (n_support, n_features)."""
        if not hasattr(self, "engine_") or self.engine_.kernel is None:
            raise AttributeError("support_vectors_ exists in the dual form only")
        return self.engine_.support_vectors()

    @property
    def dual_coef_(self) -> np.ndarray:
        """Dual form: ``alpha_j^v`` of eq. (12), shape (n_support, n_nodes)."""
        if not hasattr(self, "engine_") or self.engine_.kernel is None:
            raise AttributeError("dual_coef_ exists in the dual form only")
        return self.engine_.dual_increments(averaged=self._hypothesis())


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
    engine_ : GreedyHieronSolver
        The local Hieron of every internal vertex.
    solver_ : str
        ``"hieron"``.
    algorithm_ : str
        "greedy: an independent batch Hieron (seed 002, Section 4) at each internal vertex,
        averaged hypothesis (eq. 13)", ...
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        replace(_UPDATE, default="max-loss"),
        _AVERAGE,
        *_PASSES,
        *_KERNEL_PARAMS,
        Param(
            "allow_stop", "bool", False,
            help="let a vertex keep an example (internal labels)",
            note="Let an internal vertex keep an example instead of always routing to a leaf "
            "(needed when labels can be internal vertices); False is the paper's scheme.",
        ),
        *_REPORTS,
    )  # fmt: skip

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        update: str = "max-loss",
        average: bool = True,
        epochs: int = 1,
        shuffle: bool = True,
        kernel: str = "linear",
        form: str = "auto",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        allow_stop: bool = False,
        report_every: int | None = None,
        random_state: int | np.random.Generator | None = 0,
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

    def _new_solver(self, n_features: int, Y: np.ndarray) -> GreedyHieronSolver:
        """One flat Hieron per internal vertex (``Y`` unused: every vertex has its children)."""
        return GreedyHieronSolver(
            self.taxonomy_.parent,
            n_features,
            update=self.update,
            kernel=self._kernel_obj(n_features),
            allow_stop=bool(self.allow_stop),
            report_every=self.report_every,
        )

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_kernel_form()
        self.engine_ = self._new_solver(X.shape[1], np.asarray(Y, dtype=np.int64))
        stream = HieronStream(
            X, np.asarray(Y, dtype=np.int64), self.epochs, self.shuffle, self.random_state
        )
        self._run_solver(self.engine_, stream, callbacks)

    def _what_ran(self) -> tuple[str, str]:
        kind = (
            "Hieron, Algorithm 1 of seed 002"
            if self.update == "prediction"
            else ("batch Hieron (seed 002, Section 4)")
        )
        return "hieron", (
            f"greedy: an independent {kind} at each internal vertex, {self._hypothesis_text()}"
        )

    def _ids_from_scores(self, S: np.ndarray) -> np.ndarray:
        """Top-down routing with the local scores of :meth:`node_scores` (column ``u`` scores
        child ``u`` at its parent)."""
        return np.asarray(self.engine_.route(S))

    def _routing(self) -> str:
        return "recursive"

    def _stop_scores(self) -> np.ndarray | None:
        """With ``allow_stop`` every internal vertex may keep an example (its zero prototype)."""
        if not self.allow_stop:
            return None
        return np.where(self.taxonomy_.is_leaf, -np.inf, 0.0)

    @property
    def coef_(self) -> np.ndarray:
        """Row ``u``: the local prototype of child ``u`` at its parent (linear kernel)."""
        if not hasattr(self, "engine_"):
            raise AttributeError("coef_: not fitted")
        s = self.engine_
        out = np.zeros((s.n_nodes, s.n_features))
        for _v, (classes, local) in s.local_.items():
            if local.kernel is not None and local.kernel.name != "linear":
                raise AttributeError(f"coef_ is not available with the {local.kernel.name} kernel")
            w = local.increments(averaged=self._hypothesis())  # flat: increments = prototypes
            out[classes[1:]] = w[1:]
        return out


# ---------------------------------------------------------------------- registry
register(
    "hieron",
    HieronClassifier,
    card=HIERON_CARD,
    seed="002",
    summary="Online Hieron (Alg. 1): path-sum prototypes, sqrt(tree distance) margin, PA "
    "updates, last hypothesis",
    paper={"update": "prediction", "average": False, "epochs": 1},
)
register(
    "hieron-batch",
    HieronClassifier,
    card=HIERON_BATCH_CARD,
    seed="002",
    summary="Batch Hieron (Sec. 4): max-loss updates, averaged hypothesis of eq. (13)",
    fixed={"update": "max-loss", "average": True},
    paper={"epochs": 1},
)
register(
    "hieron-flat",
    HieronClassifier,
    card=HIERON_FLAT_CARD,
    seed="002",
    summary="Hieron on the flattened taxonomy (the multiclass baseline 'flat' of seed 002)",
    fixed={"hierarchy": "flat", "update": "max-loss", "average": True},
    paper={"epochs": 1},
)
register(
    "hieron-greedy",
    HieronGreedyClassifier,
    card=HIERON_GREEDY_CARD,
    seed="002",
    summary="Greedy top-down: an independent flat Hieron at each internal vertex (seed 002)",
    fixed={"update": "max-loss", "average": True},
    paper={"epochs": 1},
)
