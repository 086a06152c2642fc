"""HR-SVM and HR-LR (seed 001) and their one-vs-rest baselines.

``HRSVMClassifier`` and ``HRLRClassifier`` learn one weight vector per node of the taxonomy by
minimising eq. (2) (hinge) or eq. (3) (logistic): a loss on the leaves' one-vs-rest labels plus
``sum_n 1/2 ||w_n - w_{pi(n)}||^2`` (:class:`~hierlab.methods.hr.model.HRProblem`); the solver
is the block coordinate descent of Algorithm 1 with the odd/even parallel schedule
(:class:`~hierlab.methods.hr.solver.BlockCoordinateDescent`). ``OneVsRestSVMClassifier`` and
``OneVsRestLRClassifier`` are the paper's baselines "SVM" and "LR": one binary liblinear problem
per leaf, ``1/2 ||w_n||^2 + C sum_i loss(y_in w_n^T x_i)``, without bias.

The papers' models have no bias; by default (``fit_intercept=True``) all four fit one, as
liblinear does: a constant feature 1 appended to ``X``, its weight regularised with the others
(hierarchically for HR), split off as ``intercept_`` (the paper presets turn it off). On
IPC titles it is worth 6 points of exact accuracy to the one-vs-rest SVM.

All four predict the leaf with the largest score ``w_n^T x + b_n`` (single-label), or every
leaf with a positive score and at least the best one (multi-label). Labels: ``y_in = +1`` iff
leaf ``n`` is a label of row ``i``; a row labelled with an internal node ``p`` (and no label
below ``p``) is left out of the loss of the leaves under ``p`` (see
:func:`~hierlab.methods.hr.model.leaf_labels`).

The constructor parameters are declared once, in ``_parameters`` (:mod:`hierlab.core.params`);
validation, the registry schema and the method cards (:mod:`hierlab.methods.hr.cards`) are
generated from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_is_fitted

from hierlab.core.cluster import run_tasks, share
from hierlab.core.exceptions import ParameterError
from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.solver import Callback, SolverChoice, choose_solver
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier, check_X
from hierlab.methods.guards import check_liblinear_scale
from hierlab.methods.hr.cards import HR_LR_CARD, HR_SVM_CARD, OVR_LR_CARD, OVR_SVM_CARD
from hierlab.methods.hr.dual_cd import solve_leaves_dual_cd
from hierlab.methods.hr.global_cd import GlobalDualCD
from hierlab.methods.hr.global_lr import GlobalLogisticCD
from hierlab.methods.hr.model import HRProblem
from hierlab.methods.hr.solver import BlockCoordinateDescent, OneShot, solve_logistic_leaf

__all__ = ["HRLRClassifier", "HRSVMClassifier", "OneVsRestLRClassifier", "OneVsRestSVMClassifier"]

#: the bias of every node (liblinear's): a constant feature of value 1, regularised with w
_FIT_INTERCEPT = Param(
    "fit_intercept", "bool", True,
    help="A bias b_n in every node's score (a constant feature 1, regularised, as liblinear)",
    note="Seed 001's models have no bias (the paper preset: off). On many-class text (IPC "
    "titles) the bias raises the exact accuracy; on 20 Newsgroups it changes little.",
)  # fmt: skip

#: the SVMs' leaf loss: the paper's hinge or its square (liblinear's L2-loss SVM)
SVM_LOSSES = ("hinge", "squared_hinge")
_SVM_LOSS = Param(
    "loss", "str", "squared_hinge", choices=SVM_LOSSES,
    help="The leaves' loss: its square (liblinear's L2-loss SVM, LinearSVC's default) or the "
    "hinge (seed 001, the paper preset)",
    note="Default squared_hinge, (1 - y w.x)_+^2 (Hsieh et al. 2008: no upper bound on the "
    "duals, 1/(2C) on the diagonal): at least as accurate as the hinge on text and faster. "
    "HR-SVM's block CD (the paper's solver) takes the hinge only.",
)  # fmt: skip

#: HR-SVM's parameters (HR-LR's differ in the defaults of ``C`` and ``inner_tol``)
_HR_PARAMETERS: tuple[Param, ...] = (
    Param(
        "C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
        help="Loss weight (larger = less regularised)",
        note="The C of eq. (2)/(3); the paper cross-validates it in 1e-3 … 1e3. Small C leans "
        "on the hierarchy (children pulled to their parents), large C on the data.",
    ),
    Param(
        "max_iter", "int", 30, low=1,
        help="Outer block-CD iterations (even then odd levels)",
        note="10-50 is usually enough for the certified gap to reach 1%.",
    ),
    Param(
        "tol", "float", 1e-2, low=0.0, low_open=True, log=True,
        help="Stop at this certified relative duality gap",
        note="The gap is (upper - lower) / upper; 1e-2 is the default, 1e-3 for precise "
        "comparisons.",
    ),
    Param(
        "inner_tol", "float", 0.1, low=0.0, low_open=True, log=True,
        label_text="inner tolerance",
        help="Starting tolerance of the leaf solver (tightened as the gap closes)",
        note="How accurately each leaf subproblem is solved at first: the spread of the dual "
        "CD's projected gradients (HR-SVM) or L-BFGS's largest |gradient| (HR-LR).",
    ),
    Param(
        "max_inner_iter", "int", 1000, low=1, label_text="maximum inner iterations",
        help="Leaf solver passes/iterations per outer iteration",
        note="Passes (dual CD) or L-BFGS iterations per leaf and outer iteration.",
    ),
    Param(
        "relaxation", "float", 1.0, low=0.0, high=2.0, low_open=True, high_open=True,
        symbol="omega",
        help="Over-relaxation of the internal nodes' eq. (4) step (1 = the paper)",
        note="w_n += omega (w_n^{eq. 4} - w_n): every omega in (0, 2) decreases the objective "
        "(successive over-relaxation); values above 1 cut the outer iterations when parents "
        "have many children.",
    ),
    Param(
        "shrinking", "bool", False,
        help="Shrinking in the leaves' dual CD (HR-SVM)",
        note="Hsieh et al.'s heuristic: faster on some large sparse data, not on every set.",
    ),
    Param(
        "n_jobs", "int", None,
        help="joblib workers for the leaf blocks",
        note="Leaves of one parity are independent (Section 4.3): solve them in parallel "
        "(joblib's convention: None = 1, -1 = every CPU).",
    ),
    Param("random_state", "int", 0, low=0, help="Seed of the dual CD's random order"),
    _FIT_INTERCEPT,
)  # fmt: skip

_OVR_PARAMETERS: tuple[Param, ...] = (
    Param(
        "C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
        help="Loss weight of each leaf's binary problem",
        note="The paper cross-validates 1e-3 … 1e3.",
    ),
    Param("tol", "float", 1e-4, low=0.0, low_open=True, log=True, help="liblinear tolerance"),
    Param("max_iter", "int", 1000, low=1, help="liblinear iteration limit (per leaf)"),
    Param(
        "n_jobs", "int", None,
        help="joblib workers over the leaves",
        note="Leaves are independent: train them in parallel (None = 1, -1 = every CPU).",
    ),
    _FIT_INTERCEPT,
)  # fmt: skip


#: the one-vs-rest SVM's: liblinear per leaf (seed 001's baseline) or dual CD on every leaf at once
OVR_SVM_SOLVERS = ("global-cd", "liblinear")
_LIBLINEAR_ONLY = {"solver": ("liblinear",)}
_GLOBAL_ONLY = {"solver": ("global-cd",)}
_OVR_SVM_PARAMETERS: tuple[Param, ...] = (
    _OVR_PARAMETERS[0],
    Param(
        "solver", "str", "global-cd", choices=OVR_SVM_SOLVERS,
        help="global-cd: dual CD on every leaf's duals at once; liblinear: one call per leaf",
        note="The same optimum (eq. 2 without the parents). global-cd runs one pass over the "
        "examples for all leaves, with shrinking, and certifies its duality gap, many times "
        "faster on many classes than liblinear's call per leaf, which is the paper preset.",
    ),
    _SVM_LOSS,
    replace(_OVR_PARAMETERS[1], used_when=_LIBLINEAR_ONLY),
    Param(
        "gap_tol", "float", 1e-2, low=0.0, low_open=True, log=True,
        help="Stop at this certified relative duality gap (global-cd)",
        used_when=_GLOBAL_ONLY,
    ),
    replace(
        _OVR_PARAMETERS[2], help="Passes over the examples (global-cd) or liblinear's iteration "
        "limit per leaf",
    ),
    replace(_OVR_PARAMETERS[3], used_when=_LIBLINEAR_ONLY),
    Param(
        "random_state", "int", 0, low=0, help="Seed of global-cd's random orders",
        used_when=_GLOBAL_ONLY,
    ),
    _OVR_PARAMETERS[4],
)  # fmt: skip

#: the logistic methods' default C: at C = 1 the logistic loss under-fits text (module note)
LR_DEFAULT_C = 10.0
_LR_C_NOTE = (
    "Default 10, not the hinge methods' 1: with the logistic loss C = 1 under-fits text, and "
    "a validation split of 20 Newsgroups' training part prefers C >= 10 (hierlab tune). The "
    "paper cross-validates C in 1e-3 … 1e3."
)


def _lr_C(p: Param) -> Param:
    """``p`` (a C parameter) with the logistic methods' default and note."""
    return replace(p, default=LR_DEFAULT_C, note=_LR_C_NOTE)


#: the one-vs-rest LR's: the SVM's, with the logistic default C and solver note
_OVR_LR_PARAMETERS: tuple[Param, ...] = tuple(
    _lr_C(p)
    if p.name == "C"
    else replace(
        p,
        help="global-cd: dual CD on every leaf's duals at once; liblinear: one call per leaf",
        note="The same optimum (eq. 3 without the parents). global-cd runs one pass over the "
        "examples for all leaves (Yu et al.'s Newton step per pair, as HR-LR's global CD) and "
        "certifies its duality gap; liblinear per leaf is the paper preset.",
    )
    if p.name == "solver"
    else p
    for p in _OVR_SVM_PARAMETERS
    if p.name != "loss"
)



@dataclass(frozen=True)
class HRSolver(SolverChoice):
    """A row of HR-SVM's and HR-LR's solver table; ``build(estimator, leaf_loss)``.

    Attributes
    ----------
    squared_hinge : bool, default True
        Solves leaves with the squared hinge (seed 001's block CD takes the hinge only).
    """

    squared_hinge: bool = True


def _block_cd(est: Any, loss: str) -> BlockCoordinateDescent:
    return BlockCoordinateDescent(
        max_iter=int(est.max_iter),
        inner_tol=float(est.inner_tol),
        max_inner_iter=int(est.max_inner_iter),
        shrinking=bool(est.shrinking),
        n_jobs=est.n_jobs,
        random_state=int(est.random_state),
        relaxation=float(est.relaxation),
    )


def _block_cd_words(est: Any) -> str:
    leaves = "dual CD leaves (eq. 5-7)" if est._loss == "hinge" else "L-BFGS leaves (eq. 8)"
    omega = float(est.relaxation)
    step = "eq. 4" if omega == 1.0 else f"eq. 4 over-relaxed by omega = {omega:g}"
    return (
        f"block coordinate descent of seed 001: internal nodes by {step}, {leaves}, "
        "odd/even levels (Section 4.3)"
    )


def _global_cd(est: Any, loss: str) -> GlobalDualCD | GlobalLogisticCD:
    if loss != "logistic":
        return GlobalDualCD(max_iter=int(est.max_iter), random_state=int(est.random_state))
    return GlobalLogisticCD(  # its dense duals released before W is formed
        max_iter=int(est.max_iter),
        random_state=int(est.random_state),
        keep_duals=False,
        certify_near=float(est.tol),
    )


def _global_cd_words(est: Any) -> str:
    eq = {
        "hinge": "eq. (2)", "squared_hinge": "eq. (2) with the squared hinge",
        "logistic": "eq. (3), a Newton step per pair",
    }[str(getattr(est, "loss", est._loss))]  # fmt: skip
    return (
        f"dual coordinate descent of {eq}, every (example, leaf) pair at once "
        "(the internal nodes move with each step), certified by the dual of seed 001"
    )


#: HR-SVM's and HR-LR's solvers: the paper's block CD (Algorithm 1) or dual CD over every leaf
#: at once
HR_SOLVER_TABLE: dict[str, HRSolver] = {
    "block-cd": HRSolver(_block_cd, _block_cd_words, squared_hinge=False),
    "global-cd": HRSolver(_global_cd, _global_cd_words),
}
HR_SVM_SOLVERS = tuple(HR_SOLVER_TABLE)
_BLOCK_ONLY = {"solver": ("block-cd",)}
_SOLVER_PARAM = Param(
    "solver", "str", "global-cd", choices=HR_SVM_SOLVERS,
    help="global-cd: dual CD on every leaf's duals at once; block-cd: the paper's Algorithm 1",
    note="global-cd is exact coordinate ascent on the whole dual of eq. (2) (the internal nodes "
    "move with every step), with the same certificate; it reaches a 1% gap in a fraction of "
    "block CD's time (hierlab.methods.hr.global_cd). block-cd is the paper preset.",
)  # fmt: skip
_SVM_MAX_ITER = Param(
    "max_iter", "int", 300, low=1,
    help="Passes over the examples (global-cd) or outer block-CD iterations",
    note="global-cd certifies every second pass; tens to a few hundred passes reach the 1% "
    "gap on text.",
)  # fmt: skip


#: HR-SVM's: the shared ones, the block-CD-only ones marked so, and the solver after C
_HR_SVM_PARAMETERS: tuple[Param, ...] = (
    _HR_PARAMETERS[0],
    _SOLVER_PARAM,
    _SVM_LOSS,
    *(
        _SVM_MAX_ITER
        if p.name == "max_iter"
        else replace(p, used_when=_BLOCK_ONLY)
        if p.name in ("inner_tol", "max_inner_iter", "relaxation", "shrinking", "n_jobs")
        else p
        for p in _HR_PARAMETERS[1:]
    ),
)


_LR_SOLVER_PARAM = replace(
    _SOLVER_PARAM,
    help="global-cd: dual CD on every leaf's duals at once; block-cd: the paper's Algorithm 1 "
    "(L-BFGS leaves)",
    note="global-cd is exact coordinate ascent on the whole dual of eq. (3) (Yu et al.'s "
    "Newton step per pair; the internal nodes move with every step), with the same "
    "certificate; it reaches a 1% gap in a fraction of block CD's time "
    "(hierlab.methods.hr.global_lr). block-cd is the paper preset.",
)
_LR_MAX_ITER = replace(
    _SVM_MAX_ITER,
    note="global-cd certifies every second pass; a few passes usually reach the 1% gap.",
)

#: HR-LR's: as HR-SVM's, with L-BFGS's default inner_tol; shrinking is HR-SVM's block CD only
_HR_LR_PARAMETERS: tuple[Param, ...] = tuple(
    _LR_SOLVER_PARAM
    if p.name == "solver"
    else _lr_C(p)
    if p.name == "C"
    else _LR_MAX_ITER
    if p.name == "max_iter"
    else replace(p, default=0.01)
    if p.name == "inner_tol"
    else p
    for p in _HR_SVM_PARAMETERS
    if p.name != "loss"
)


def _leaf_loss(est: Any, default: str, squared_hinge: bool) -> str:
    """The estimator's leaf loss (its ``loss`` parameter, else ``default``); the squared hinge
    only where the solver takes it (``squared_hinge`` False: seed 001's block CD solves the
    hinge)."""
    loss = str(getattr(est, "loss", default))
    if loss == "squared_hinge" and not squared_hinge:
        raise ParameterError(
            f"solver={getattr(est, 'solver', None)!r} (seed 001's block CD) solves the hinge: "
            "pass loss='hinge' with it (preset='paper' sets both), or solver='global-cd'"
        )
    return loss


def used_columns(X: np.ndarray | sp.csr_matrix) -> tuple[Any, np.ndarray | None]:
    """``X`` restricted to the features some row uses, and their indices (None: all used).

    Every model of seed 001 (eq. 2, 3 and the one-vs-rest baselines) is L2-regularised, and a
    feature no row uses enters only ``1/2 sum_n ||w_n - w_{pi(n)}||^2`` (root's parent 0), so
    its weight is exactly 0 at every node of the optimum: the solvers run on the used features
    and the weights are put back in place. A text set's vocabulary is often far wider than its
    training rows (IPC titles, a sample of 800 titles: 2,350 of 25,479 words), and L-BFGS, the
    internal nodes' eq. (4) and the certificate do dense work on every feature.

    Parameters
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features)

    Returns
    -------
    X_used : csr_matrix or ndarray of shape (n_samples, n_used)
    cols : ndarray of int of shape (n_used,), or None when every feature is used
    """
    if sp.issparse(X):  # O(nnz): a count per column, no sort of the indices
        cols = np.flatnonzero(np.bincount(sp.csr_matrix(X).indices, minlength=X.shape[1]))
    else:
        cols = np.flatnonzero(np.count_nonzero(np.asarray(X), axis=0))
    if cols.size in (0, X.shape[1]):
        return X, None
    return X[:, cols], cols


class _LeafScorer(HierarchicalClassifier):
    """Shared prediction: argmax over the leaves' scores (plus positives for multi-label), and
    the bias: with ``fit_intercept`` the weights are fitted on ``[X, 1]`` (liblinear's bias
    feature, regularised with ``w``) and split into ``coef_`` and ``intercept_``."""

    _supports_multilabel = True
    fit_intercept: bool
    coef_: np.ndarray
    intercept_: np.ndarray

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        biased = bool(self.fit_intercept)
        if biased:
            ones = np.ones((X.shape[0], 1))
            X = sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])
        X_used, cols = used_columns(X)
        self._fit_weights(X_used, Y, callbacks)
        W = np.asarray(self.coef_)
        if cols is not None:
            W = np.zeros((W.shape[0], X.shape[1]))
            W[:, cols] = self.coef_
        self.intercept_ = W[:, -1].copy() if biased else np.zeros(W.shape[0])
        self.coef_ = W
        if biased:
            self.coef_ = np.ascontiguousarray(W[:, :-1])

    def _fit_weights(
        self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]
    ) -> None:
        """Fit ``coef_`` (n_nodes, X's columns) on ``X`` (with the bias column, if any)."""
        raise NotImplementedError

    def _upgrade_state(self) -> None:
        """After loading a model file written before ``intercept_`` existed: it had no bias;
        before the SVMs' ``loss``: it was fitted with the hinge."""
        if "intercept_" not in self.__dict__ and hasattr(self, "coef_"):
            self.fit_intercept = False
            self.intercept_ = np.zeros(np.asarray(self.coef_).shape[0])
        declares_loss = any(p.name == "loss" for p in self._parameters)
        if declares_loss and "loss" not in self.__dict__:
            self.loss = "hinge"

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        coef = getattr(self, "coef_", None)
        return None if coef is None else (coef, self.intercept_)

    def leaf_scores(self, X: Any) -> np.ndarray:
        """Scores ``w_n^T x + b_n`` of the leaves, shape (n_samples, n_leaves).

        Columns follow ``taxonomy_.leaves`` (names: ``taxonomy_.names[taxonomy_.leaves]``).
        Not called ``decision_function``: scikit-learn expects that to follow ``classes_``.
        """
        check_is_fitted(self, "coef_")
        return self._leaf_scores(check_X(X, self, reset=False))

    def _leaf_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        leaves = self.taxonomy_.leaves
        return np.asarray(X @ self.coef_[leaves].T) + self.intercept_[leaves]

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> Any:
        leaves = self.taxonomy_.leaves
        scores = self._leaf_scores(X)
        best = scores.argmax(axis=1)
        if not self.multilabel_:
            return leaves[best]
        on = scores > 0
        on[np.arange(len(best)), best] = True
        r, c = np.nonzero(on)
        return sp.csr_matrix(
            (np.ones(len(r), dtype=np.int8), (r, leaves[c])),
            shape=(X.shape[0], self.taxonomy_.n_nodes),
        )


class _HRBase(_LeafScorer):
    """The constructor and ``fit`` of HR-SVM and HR-LR (``_loss`` tells them apart)."""

    _loss = "hinge"
    _parameters: ClassVar[tuple[Param, ...]] = _HR_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        max_iter: int = 30,
        tol: float = 1e-2,
        inner_tol: float = 0.1,
        max_inner_iter: int = 1000,
        relaxation: float = 1.0,
        shrinking: bool = False,
        n_jobs: int | None = None,
        random_state: int = 0,
        fit_intercept: bool = True,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.inner_tol = inner_tol
        self.max_inner_iter = max_inner_iter
        self.relaxation = relaxation
        self.shrinking = shrinking
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def _fit_weights(
        self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]
    ) -> None:
        self.multilabel_ = sp.issparse(Y)
        choice = choose_solver(HR_SOLVER_TABLE, self._solver_name())
        loss = _leaf_loss(self, self._loss, choice.squared_hinge)
        problem = HRProblem.from_labels(X, Y, self.taxonomy_, float(self.C), loss)
        solver = choice.build(self, loss)
        result = self._run_solver(solver, problem, callbacks, tol=0.0, rtol=float(self.tol))
        self.coef_ = np.asarray(result.coef)
        if isinstance(solver, GlobalDualCD):  # its duals are held by example already
            assert solver.duals is not None
            self.dual_coef_ = solver.duals.tocsc()
        elif isinstance(solver, BlockCoordinateDescent) and self._loss == "hinge":
            assert solver.alpha is not None
            self.dual_coef_ = solver.alpha.tocsc()
        final = result.final
        self.objective_ = final.upper if final is not None else float("nan")
        self.dual_bound_ = final.lower if final is not None else None
        self.gap_ = (
            self.objective_ - self.dual_bound_ if self.dual_bound_ is not None else float("nan")
        )

    def _solver_name(self) -> str:
        """The ``solver`` parameter (block CD for an estimator without one)."""
        return str(getattr(self, "solver", "block-cd"))

    def _what_ran(self) -> tuple[str, str]:
        name = self._solver_name()
        return name, choose_solver(HR_SOLVER_TABLE, name).describe(self)


class HRSVMClassifier(_HRBase):
    """HR-SVM: hierarchically regularised SVM (seed 001, eq. 2), by dual coordinate descent.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        A tree. None: the flat taxonomy (all labels under one root, which still couples them).
    C : float, default 1.0
        Weight of the hinge loss (> 0).
    solver : {"global-cd", "block-cd"}, default "global-cd"
        Dual coordinate descent over every (example, leaf) pair at once
        (:mod:`hierlab.methods.hr.global_cd`), or the paper's block coordinate descent
        (Algorithm 1; ``inner_tol``, ``max_inner_iter``, ``relaxation``, ``shrinking`` and
        ``n_jobs`` are its parameters).
    max_iter : int, default 300
        Passes over the examples (``"global-cd"``, certified every second pass), or outer
        iterations (even levels, then odd levels, per iteration).
    tol : float, default 1e-2
        Stop when the certified relative duality gap ``(J(W) - D(alpha)) / J(W)`` is below it.
    inner_tol : float, default 0.1
        Starting tolerance of the leaves' dual CD (projected-gradient spread); lowered as the gap
        closes.
    max_inner_iter : int, default 1000
        Dual CD passes per leaf and outer iteration.
    relaxation : float, default 1.0
        Over-relaxation ``omega`` in (0, 2) of the internal nodes' closed-form step
        (``w_n += omega (w_n^{eq. 4} - w_n)``); 1 is the paper's eq. (4).
    shrinking : bool, default False
        Hsieh et al.'s shrinking in the dual CD.
    n_jobs : int, optional
        joblib workers for the leaf blocks of one parity (``joblib.parallel_backend("dask")``
        runs them on a dask cluster).
    random_state : int, default 0
        Seed of the dual CD's random order (>= 0).
    fit_intercept : bool, default True
        Fit a bias ``b_n`` per node as liblinear does: eq. (2) on ``[X, 1]``, the bias
        regularised with ``w_n`` (``b_n - b_{pi(n)}`` penalised). The paper has none (preset).
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
        The leaves' loss in eq. (2): ``(1 - y w.x)_+^2`` (liblinear's L2-loss SVM, LinearSVC's
        default; global CD only) or the paper's hinge (``preset="paper"``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        ``w_n`` of every node (internal nodes by eq. 4, leaves by eq. 7).
    intercept_ : ndarray of shape (n_nodes,)
        ``b_n`` (0 without ``fit_intercept``); the scores are ``X coef_^T + intercept_``.
    dual_coef_ : scipy.sparse.csc_matrix of shape (n_samples, n_leaves)
        The leaves' dual variables ``alpha_in`` (nonzero on the support vectors only).
    objective_ : float
        ``J(coef_)`` (eq. 2).
    dual_bound_ : float or None
        The best certified lower bound of the optimum.
    gap_ : float
        ``objective_ - dual_bound_``: the certified duality gap.
    history_, n_iter_, converged_
        See :class:`~hierlab.methods.base.HierarchicalClassifier`; ``history_`` has the
        primal and the dual bound per certified pass (global CD, with the pass's
        projected-gradient spread) or per outer iteration (block CD, with the KKT residuals and
        the leaves' dual CD passes).
    """

    _loss = "hinge"
    _parameters = _HR_SVM_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        solver: str = "global-cd",
        max_iter: int = 300,
        tol: float = 1e-2,
        inner_tol: float = 0.1,
        max_inner_iter: int = 1000,
        relaxation: float = 1.0,
        shrinking: bool = False,
        n_jobs: int | None = None,
        random_state: int = 0,
        fit_intercept: bool = True,
        loss: str = "squared_hinge",
    ) -> None:
        super().__init__(
            taxonomy=taxonomy,
            C=C,
            max_iter=max_iter,
            tol=tol,
            inner_tol=inner_tol,
            max_inner_iter=max_inner_iter,
            relaxation=relaxation,
            shrinking=shrinking,
            n_jobs=n_jobs,
            random_state=random_state,
            fit_intercept=fit_intercept,
        )
        self.solver = solver
        self.loss = loss


class HRLRClassifier(_HRBase):
    """HR-LR: hierarchically regularised logistic regression (seed 001, eq. 3).

    Same parameters and attributes as :class:`HRSVMClassifier` (no ``dual_coef_``: a logistic
    dual is nonzero on every (example, leaf) pair), except that ``C`` defaults to 10
    (:data:`LR_DEFAULT_C`: the logistic loss under-fits text at C = 1). ``solver="global-cd"``
    (the default) is dual coordinate descent over every pair at once with Yu et al.'s Newton
    step per pair (:mod:`hierlab.methods.hr.global_lr`); ``"block-cd"`` is the paper's
    Algorithm 1 with leaves solved by L-BFGS on eq. (8): there ``inner_tol`` (default 0.01) is
    the starting tolerance on the largest absolute gradient and ``max_inner_iter`` the L-BFGS
    iteration limit.
    ``shrinking`` has no effect, and ``random_state`` seeds global CD's orders only.
    """

    _loss = "logistic"
    _parameters = _HR_LR_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = LR_DEFAULT_C,
        solver: str = "global-cd",
        max_iter: int = 300,
        tol: float = 1e-2,
        inner_tol: float = 0.01,
        max_inner_iter: int = 1000,
        relaxation: float = 1.0,
        shrinking: bool = False,
        n_jobs: int | None = None,
        random_state: int = 0,
        fit_intercept: bool = True,
    ) -> None:
        # HR-SVM's constructor with HR-LR's default inner_tol (a signature scikit-learn can read)
        super().__init__(
            taxonomy=taxonomy,
            C=C,
            max_iter=max_iter,
            tol=tol,
            inner_tol=inner_tol,
            max_inner_iter=max_inner_iter,
            relaxation=relaxation,
            shrinking=shrinking,
            n_jobs=n_jobs,
            random_state=random_state,
            fit_intercept=fit_intercept,
        )
        self.solver = solver


# ---------------------------------------------------------------------- one-vs-rest baselines
def _fit_leaf(
    problem: HRProblem, loss: str, C: float, tol: float, max_iter: int, k: int
) -> np.ndarray:
    """Leaf column ``k``'s binary problem of ``problem`` by liblinear (:func:`_fit_binary`);
    a task of :func:`~hierlab.core.cluster.run_tasks`, the problem shared once per fit."""
    col = np.array([k])
    return _fit_binary(
        loss, problem.X, problem.signs(col)[:, 0], problem.weights(col)[:, 0], C, tol, max_iter
    )


def _fit_binary(
    loss: str,
    X: Any,
    y: np.ndarray,
    weight: np.ndarray,
    C: float,
    tol: float,
    max_iter: int,
) -> np.ndarray:
    """One leaf's binary problem (rows with ``weight`` 0 left out) by liblinear; its ``w``.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic"}
        ``LinearSVC(loss=loss)`` or ``LogisticRegression(solver="liblinear")``, no bias of
        liblinear's own (``X`` carries the bias column when the estimator fits one).
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), values in {-1, +1}
    weight : ndarray of shape (n_samples,)
        ``c_i`` in {0, 1}.
    C, tol, max_iter
        liblinear's.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    keep = weight > 0
    Xk = X[keep] if not keep.all() else X
    yk = y[keep]
    d = X.shape[1]
    if len(np.unique(yk)) < 2:
        # liblinear needs two classes; the one-class problem is still well posed: solve it here
        if loss == "hinge":
            res = solve_leaves_dual_cd(Xk, yk[:, None], C, np.zeros((1, d)), tol=tol)
            return res.W[0]
        if loss == "squared_hinge":
            return _one_class_squared_hinge(Xk, yk, C, tol)
        w, _ = solve_logistic_leaf(Xk, yk, C, np.zeros(d), tol=tol, max_iter=max_iter)
        return w
    common: dict[str, Any] = {
        "C": C,
        "fit_intercept": False,
        "tol": tol,
        "max_iter": max_iter,
        "random_state": 0,
    }
    clf: Any = (
        LogisticRegression(solver="liblinear", **common)
        if loss == "logistic"
        else LinearSVC(loss=loss, dual=True, **common)
    )
    clf.fit(Xk, yk)
    w = np.asarray(clf.coef_).ravel()
    return w if clf.classes_[1] == 1 else -w


def _one_class_squared_hinge(X: Any, y: np.ndarray, C: float, tol: float) -> np.ndarray:
    """``argmin_w 1/2 ||w||^2 + C sum_i (1 - y_i w.x_i)_+^2`` by L-BFGS (the objective is
    smooth: gradient ``w - 2 C sum_i (1 - y_i w.x_i)_+ y_i x_i``) for a problem liblinear
    refuses (one class); shape (n_features,)."""
    from scipy.optimize import minimize

    def f(w: np.ndarray) -> tuple[float, np.ndarray]:
        t = np.maximum(0.0, 1.0 - y * np.asarray(X @ w).ravel())
        grad = w - 2.0 * C * np.asarray(X.T @ (t * y)).ravel()
        return 0.5 * float(w @ w) + C * float(t @ t), grad

    opts = {"gtol": min(tol, 1e-5) * 1e-4, "ftol": 1e-15, "maxiter": 15000}
    res = minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options=opts)
    return np.asarray(res.x)


#: leaves whose (n_samples, leaves) margins are summed at once in the one-vs-rest objective
_OBJECTIVE_LEAVES = 64


class _OvRBase(_LeafScorer):
    """The constructor and ``fit`` of the one-vs-rest baselines (``_kind`` tells them apart)."""

    _kind = "svm"
    _parameters: ClassVar[tuple[Param, ...]] = _OVR_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        tol: float = 1e-4,
        max_iter: int = 1000,
        n_jobs: int | None = None,
        fit_intercept: bool = True,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.fit_intercept = fit_intercept

    def _fit_weights(
        self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]
    ) -> None:
        self.multilabel_ = sp.issparse(Y)
        tax = self.taxonomy_
        loss = _leaf_loss(self, "hinge", True) if self._kind == "svm" else "logistic"
        # global CD is liblinear's dual CD too: the same feature scales make it spin
        check_liblinear_scale(X, type(self).__name__)
        problem = HRProblem.from_labels(X, Y, tax, float(self.C), loss)
        fit = choose_solver(_OVR_FITS, str(getattr(self, "solver", "liblinear")))
        fit(self, X, problem, loss, callbacks)

    def _fit_liblinear(
        self, X: Any, problem: HRProblem, loss: str, callbacks: Sequence[Callback]
    ) -> None:
        """Every leaf's problem by liblinear, one call per leaf, as one solver state."""
        tax = self.taxonomy_
        C, tol, max_iter = float(self.C), float(self.tol), int(self.max_iter)
        leaves = tax.leaves

        def run() -> tuple[np.ndarray, float, dict[str, Any]]:
            """Every leaf's liblinear problem; the weights, the summed objective, extras.

            A leaf's signs and weights are formed when its problem is handed out, and the
            objective is summed a block of leaves at a time: nothing of size (n_samples x
            n_leaves) is held."""
            cols = np.arange(len(leaves))
            ws = list(run_tasks(
                _fit_leaf, [(k,) for k in cols], share(problem, loss, C, tol, max_iter),
                n_jobs=self.n_jobs,
            ))  # fmt: skip
            coef = np.zeros((tax.n_nodes, X.shape[1]))
            coef[leaves] = np.asarray(ws).reshape(len(leaves), X.shape[1])
            # the one-vs-rest objective: sum over leaves of 1/2 ||w_n||^2 + C loss
            total = 0.0
            for block in np.array_split(cols, max(1, -(-len(cols) // _OBJECTIVE_LEAVES))):
                Z = np.asarray(X @ coef[leaves[block]].T) * problem.signs(block)
                lossv = (
                    np.logaddexp(0.0, -Z)
                    if loss == "logistic"
                    else np.maximum(0.0, 1.0 - Z) ** (2 if loss == "squared_hinge" else 1)
                )
                total += float((problem.weights(block) * lossv).sum())
            obj = 0.5 * float((coef[leaves] ** 2).sum()) + C * total
            return coef, obj, {"n_leaf_problems": len(leaves)}

        result = self._run_solver(OneShot(run), problem, callbacks)
        self.coef_ = np.asarray(result.coef)
        self.objective_ = result.final.upper if result.final is not None else float("nan")

    def _upgrade_state(self) -> None:
        """After loading a model file written before the solvers were recorded: such a model
        was fitted by liblinear per leaf, whatever today's default solver; say so."""
        super()._upgrade_state()
        if "solver_" not in self.__dict__ and hasattr(self, "coef_"):
            self.solver = "liblinear"
            self.solver_, self.algorithm_ = self._what_ran()

    def _fit_global(
        self, X: Any, problem: HRProblem, loss: str, callbacks: Sequence[Callback]
    ) -> None:
        """Every leaf's problem at once by uncoupled global dual CD, certified."""
        gap_tol = float(getattr(self, "gap_tol", 1e-2))
        max_iter, seed = int(self.max_iter), int(getattr(self, "random_state", 0))
        solver = (
            GlobalDualCD(max_iter=max_iter, random_state=seed, coupled=False)
            if self._kind == "svm"
            else GlobalLogisticCD(  # the leaves in blocks: no (n_samples, n_leaves) duals
                max_iter=max_iter,
                random_state=seed,
                coupled=False,
                block_rtol=gap_tol,
                certify_near=gap_tol,
            )
        )
        result = self._run_solver(solver, problem, callbacks, tol=0.0, rtol=gap_tol)
        self.coef_ = np.asarray(result.coef)
        final = result.final
        self.objective_ = final.upper if final is not None else float("nan")
        self.dual_bound_ = final.lower if final is not None else None

    def _what_ran(self) -> tuple[str, str]:
        loss = str(getattr(self, "loss", "hinge")) if self._kind == "svm" else "logistic"
        model = "logistic regression" if loss == "logistic" else (
            f"linear SVM ({loss.replace('_', ' ')})"
        )
        base = "LinearSVC's loss" if loss == "squared_hinge" else "seed 001's baseline"
        name = str(getattr(self, "solver", "liblinear"))
        choose_solver(_OVR_FITS, name)
        how = _OVR_WORDS[name]
        return name, f"one-vs-rest {model} per leaf{how[0]} ({base}){how[1]}"


#: the one-vs-rest baselines' solvers, by name: how ``fit`` solves the leaves' problems
_OVR_FITS: dict[str, Callable[[_OvRBase, Any, HRProblem, str, Sequence[Callback]], None]] = {
    "global-cd": _OvRBase._fit_global,
    "liblinear": _OvRBase._fit_liblinear,
}
#: ... and how ``algorithm_`` says it (the words after "per leaf" and after the loss)
_OVR_WORDS = {
    "global-cd": ("", ", every leaf's dual at once by dual coordinate descent, certified"),
    "liblinear": (" by liblinear", ""),
}


class OneVsRestSVMClassifier(_OvRBase):
    """The "SVM" baseline of seed 001: one linear SVM per leaf, by default with LinearSVC's
    squared hinge (``loss="hinge"``: the L1-loss SVM of the paper's baseline) and liblinear's
    regularised bias (``fit_intercept=False``: the paper's baseline has none).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Used only for the leaves and the labels; the leaves' problems are independent.
    C : float, default 1.0
        Loss weight of each leaf's problem (> 0).
    solver : {"global-cd", "liblinear"}, default "global-cd"
        Dual coordinate descent on every leaf's duals at once, one pass over the examples for
        all leaves, with shrinking and a certified duality gap
        (:class:`~hierlab.methods.hr.global_cd.GlobalDualCD` with ``coupled=False``), or
        ``LinearSVC(loss="hinge", fit_intercept=False)`` per leaf (the paper preset). The
        optimum is the same.
    tol : float, default 1e-4
        liblinear's tolerance (> 0).
    gap_tol : float, default 1e-2
        global-cd stops at this certified relative duality gap.
    max_iter : int, default 1000
        Passes over the examples (global-cd) or liblinear's iteration limit (>= 1).
    n_jobs : int, optional
        joblib workers over the leaves (liblinear).
    random_state : int, default 0
        Seed of global-cd's orders of examples and leaves.
    fit_intercept : bool, default True
        Fit each leaf's bias as liblinear does (a constant feature 1, regularised with
        ``w_n``); the paper's baseline has none (preset).
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
        ``(1 - y w.x)_+^2`` (LinearSVC's default) or the paper's hinge (``preset="paper"``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        Leaf rows hold the leaves' weights; internal rows 0.
    intercept_ : ndarray of shape (n_nodes,)
        The leaves' biases (0 without ``fit_intercept``; internal rows 0).
    objective_ : float
        ``sum_n 1/2 ||w_n||^2 + C sum hinge``.
    dual_bound_ : float
        global-cd: the certified lower bound of the optimum.
    """

    _kind = "svm"
    _parameters = _OVR_SVM_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        solver: str = "global-cd",
        tol: float = 1e-4,
        gap_tol: float = 1e-2,
        max_iter: int = 1000,
        n_jobs: int | None = None,
        random_state: int = 0,
        fit_intercept: bool = True,
        loss: str = "squared_hinge",
    ) -> None:
        super().__init__(
            taxonomy=taxonomy, C=C, tol=tol, max_iter=max_iter, n_jobs=n_jobs,
            fit_intercept=fit_intercept,
        )  # fmt: skip
        self.solver = solver
        self.gap_tol = gap_tol
        self.random_state = random_state
        if self._kind == "svm":  # the logistic baseline has no loss parameter
            self.loss = loss


class OneVsRestLRClassifier(OneVsRestSVMClassifier):
    """The "LR" baseline of seed 001: one L2-regularised logistic regression per leaf (with a
    regularised bias unless ``fit_intercept=False``, the paper's baseline).

    Same parameters and attributes as :class:`OneVsRestSVMClassifier`, except that ``C``
    defaults to 10 (:data:`LR_DEFAULT_C`) and the loss is logistic. ``solver="global-cd"``
    (the default) solves every leaf's dual at once (:class:`~hierlab.methods.hr.global_lr.
    GlobalLogisticCD` with ``coupled=False``), certified; ``"liblinear"`` is ``LogisticRegression(
    solver="liblinear", fit_intercept=False)`` per leaf (the paper preset). The optimum is the
    same.
    """

    _kind = "lr"
    _parameters = _OVR_LR_PARAMETERS

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = LR_DEFAULT_C,
        solver: str = "global-cd",
        tol: float = 1e-4,
        gap_tol: float = 1e-2,
        max_iter: int = 1000,
        n_jobs: int | None = None,
        random_state: int = 0,
        fit_intercept: bool = True,
    ) -> None:
        # the SVM's constructor with the logistic default C (a signature scikit-learn can read)
        super().__init__(
            taxonomy=taxonomy, C=C, solver=solver, tol=tol, gap_tol=gap_tol,
            max_iter=max_iter, n_jobs=n_jobs, random_state=random_state,
            fit_intercept=fit_intercept,
        )  # fmt: skip


# ---------------------------------------------------------------------- registry
register(
    "hr-svm",
    HRSVMClassifier,
    card=HR_SVM_CARD,
    seed="001",
    summary="Hierarchically regularised SVM: global dual CD (default) or block CD (paper)",
    multilabel=True,
    bounds=True,
    paper={
        "solver": "block-cd",
        "relaxation": 1.0,
        "shrinking": False,
        "fit_intercept": False,
        "loss": "hinge",
    },
)
register(
    "hr-lr",
    HRLRClassifier,
    card=HR_LR_CARD,
    seed="001",
    summary="Hierarchically regularised logistic regression: global dual CD (default) or block "
    "CD with L-BFGS leaves (paper)",
    multilabel=True,
    bounds=True,
    paper={"solver": "block-cd", "relaxation": 1.0, "fit_intercept": False},
)
register(
    "ovr-svm",
    OneVsRestSVMClassifier,
    card=OVR_SVM_CARD,
    seed="baseline",
    summary="One-vs-rest linear SVM on the leaves (squared hinge; the hinge: seed 001's SVM): "
    "global dual CD (default) or liblinear (paper)",
    multilabel=True,
    bounds=True,
    paper={"C": 1.0, "solver": "liblinear", "fit_intercept": False, "loss": "hinge"},
)
register(
    "ovr-lr",
    OneVsRestLRClassifier,
    card=OVR_LR_CARD,
    seed="baseline",
    summary="One-vs-rest logistic regression on the leaves, seed 001's LR: global dual CD "
    "(default) or liblinear (paper)",
    multilabel=True,
    bounds=True,
    paper={"C": 1.0, "solver": "liblinear", "fit_intercept": False},
)
