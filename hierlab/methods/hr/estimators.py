"""HR-SVM and HR-LR (seed 001) and their one-vs-rest baselines.

``HRSVMClassifier`` and ``HRLRClassifier`` learn one weight vector per node of the taxonomy by
minimising eq. (2) (hinge) or eq. (3) (logistic): a loss on the leaves' one-vs-rest labels plus
``sum_n 1/2 ||w_n - w_{pi(n)}||^2``; the solver is the block coordinate descent of Algorithm 1
with the odd/even parallel schedule (:class:`~hierlab.methods.hr.solver.BlockCoordinateDescent`).
``OneVsRestSVM`` and ``OneVsRestLR`` are the paper's baselines "SVM" and "LR": one binary
liblinear problem per leaf, ``1/2 ||w_n||^2 + C sum_i loss(y_in w_n^T x_i)``, without bias.

All four predict the leaf with the largest score ``w_n^T x`` (single-label), or every leaf with a
positive score and at least the best one (multi-label). Labels: ``y_in = +1`` iff leaf ``n`` is
a label of row ``i``; a row labelled with an internal node ``p`` (and no label below ``p``) is
left out of the loss of the leaves under ``p`` (see :func:`~hierlab.methods.hr.solver.leaf_labels`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import Param, register
from hierlab.core.solver import Callback, Solver, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.hr.solver import BlockCoordinateDescent, HRProblem, solve_logistic_leaf
from hierlab.solvers.dual_cd import solve_leaves_dual_cd

__all__ = ["HRLRClassifier", "HRSVMClassifier", "OneVsRestLRClassifier", "OneVsRestSVMClassifier"]


def _check_positive(name: str, value: Any, integer: bool = False) -> None:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value <= 0 or (integer and int(value) != value):
        kind = "a positive integer" if integer else "a positive number"
        raise ParameterError(f"{name} must be {kind}, got {value!r}")


class _LeafScorer(HierarchicalClassifier):
    """Shared prediction: argmax over the leaves' scores (plus positives for multi-label)."""

    _supports_multilabel = True

    def leaf_scores(self, X: Any) -> np.ndarray:
        """Scores ``w_n^T x`` of the leaves, shape (n_samples, n_leaves).

        Columns follow ``taxonomy_.leaves`` (names: ``taxonomy_.names[taxonomy_.leaves]``).
        Not called ``decision_function``: scikit-learn expects that to follow ``classes_``.
        """
        from sklearn.utils.validation import check_is_fitted

        from hierlab.methods.base import check_X

        check_is_fitted(self, "coef_")
        X = check_X(X, self, reset=False)
        return np.asarray(X @ self.coef_[self.taxonomy_.leaves].T)

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> Any:
        leaves = self.taxonomy_.leaves
        scores = np.asarray(X @ self.coef_[leaves].T)
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
    _loss = "hinge"

    def __init__(
        self,
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
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.relaxation = relaxation
        self.max_iter = max_iter
        self.tol = tol
        self.inner_tol = inner_tol
        self.max_inner_iter = max_inner_iter
        self.shrinking = shrinking
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        _check_positive("C", self.C)
        _check_positive("max_iter", self.max_iter, integer=True)
        _check_positive("tol", self.tol)
        _check_positive("inner_tol", self.inner_tol)
        _check_positive("max_inner_iter", self.max_inner_iter, integer=True)
        self.multilabel_ = sp.issparse(Y)
        problem = HRProblem.from_labels(X, Y, self.taxonomy_, self.C, self._loss)
        solver = BlockCoordinateDescent(
            max_iter=int(self.max_iter),
            inner_tol=float(self.inner_tol),
            max_inner_iter=int(self.max_inner_iter),
            shrinking=bool(self.shrinking),
            n_jobs=self.n_jobs,
            random_state=int(self.random_state),
            relaxation=float(self.relaxation),
        )
        result = self._run_solver(solver, problem, callbacks, tol=0.0, rtol=float(self.tol))
        self.coef_ = np.asarray(result.coef)
        if self._loss == "hinge":
            self.dual_coef_ = solver.alpha
        final = result.final
        self.objective_ = final.upper if final is not None else float("nan")
        self.dual_bound_ = final.lower if final is not None else None


class HRSVMClassifier(_HRBase):
    """HR-SVM: hierarchically regularised SVM (seed 001, eq. 2), by block coordinate descent.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        A tree. None: the flat taxonomy (all labels under one root, which still couples them).
    C : float, default 1.0
        Weight of the hinge loss.
    max_iter : int, default 30
        Outer iterations (even levels, then odd levels, per iteration).
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
        Hsieh et al.'s shrinking in the dual CD (measured not to pay on 20 Newsgroups).
    n_jobs : int, optional
        joblib workers for the leaf blocks of one parity (``joblib.parallel_backend("dask")``
        runs them on a dask cluster).
    random_state : int, default 0
        Seed of the dual CD's random order.

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        ``w_n`` of every node (internal nodes by eq. 4, leaves by eq. 7).
    dual_coef_ : ndarray of shape (n_samples, n_leaves)
        The leaves' dual variables ``alpha_in``.
    objective_ : float
        ``J(coef_)`` (eq. 2).
    dual_bound_ : float or None
        The best certified lower bound of the optimum.
    history_, n_iter_, converged_
        See :class:`~hierlab.methods.base.HierarchicalClassifier`; ``history_`` has the
        primal, the dual bound, the KKT residuals and the dual CD passes per outer iteration.
    """

    _loss = "hinge"


class HRLRClassifier(_HRBase):
    """HR-LR: hierarchically regularised logistic regression (seed 001, eq. 3).

    Same parameters and attributes as :class:`HRSVMClassifier` (no ``dual_coef_``), with leaves
    solved by L-BFGS on eq. (8): ``inner_tol`` is the starting largest-|gradient| tolerance and
    ``max_inner_iter`` the L-BFGS iteration limit.
    """

    _loss = "logistic"

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        max_iter: int = 30,
        tol: float = 1e-2,
        inner_tol: float = 0.01,
        max_inner_iter: int = 1000,
        relaxation: float = 1.0,
        shrinking: bool = False,
        n_jobs: int | None = None,
        random_state: int = 0,
    ) -> None:
        super().__init__(
            taxonomy=taxonomy,
            relaxation=relaxation,
            C=C,
            max_iter=max_iter,
            tol=tol,
            inner_tol=inner_tol,
            max_inner_iter=max_inner_iter,
            shrinking=shrinking,
            n_jobs=n_jobs,
            random_state=random_state,
        )


# ---------------------------------------------------------------------- one-vs-rest baselines
def _fit_binary(
    kind: str,
    X: Any,
    y: np.ndarray,
    weight: np.ndarray,
    C: float,
    tol: float,
    max_iter: int,
) -> np.ndarray:
    keep = weight > 0
    Xk = X[keep] if not keep.all() else X
    yk = y[keep]
    d = X.shape[1]
    if len(np.unique(yk)) < 2:
        # liblinear needs two classes; the one-class problem is still well posed: solve it here
        if kind == "svm":
            res = solve_leaves_dual_cd(Xk, yk[:, None], C, np.zeros((1, d)), tol=tol)
            return res.W[0]
        w, _ = solve_logistic_leaf(Xk, yk, C, np.zeros(d), tol=tol, max_iter=max_iter)
        return w
    if kind == "svm":
        clf: Any = LinearSVC(
            C=C,
            loss="hinge",
            dual=True,
            fit_intercept=False,
            tol=tol,
            max_iter=max_iter,
            random_state=0,
        )
    else:
        clf = LogisticRegression(
            C=C,
            solver="liblinear",
            fit_intercept=False,
            tol=tol,
            max_iter=max_iter,
            random_state=0,
        )
    clf.fit(Xk, yk)
    w = np.asarray(clf.coef_).ravel()
    return w if clf.classes_[1] == 1 else -w


class _OneShot(Solver):
    """Runs a closed computation once and reports it as one solver state."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        self.coef, upper, extra = self.fn()
        yield SolverState(1, 0.0, upper, None, extra, converged=True)


class _OvRBase(_LeafScorer):
    _kind = "svm"

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        tol: float = 1e-4,
        max_iter: int = 1000,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        _check_positive("C", self.C)
        _check_positive("tol", self.tol)
        _check_positive("max_iter", self.max_iter, integer=True)
        self.multilabel_ = sp.issparse(Y)
        tax = self.taxonomy_
        loss = "hinge" if self._kind == "svm" else "logistic"
        problem = HRProblem.from_labels(X, Y, tax, self.C, loss)
        leaves = tax.leaves

        def run() -> tuple[np.ndarray, float, dict[str, Any]]:
            cols = np.arange(len(leaves))
            Ys = problem.signs(cols)
            Ws = problem.weights(cols)
            ws = Parallel(n_jobs=self.n_jobs)(
                delayed(_fit_binary)(
                    self._kind, X, Ys[:, k], Ws[:, k], float(self.C), self.tol, self.max_iter
                )
                for k in cols
            )
            coef = np.zeros((tax.n_nodes, X.shape[1]))
            coef[leaves] = np.asarray(ws).reshape(len(leaves), X.shape[1])
            # the one-vs-rest objective: sum over leaves of 1/2 ||w_n||^2 + C loss
            Z = np.asarray(X @ coef[leaves].T) * Ys
            lossv = np.maximum(0.0, 1.0 - Z) if loss == "hinge" else np.logaddexp(0.0, -Z)
            obj = 0.5 * float((coef[leaves] ** 2).sum()) + float(self.C) * float((Ws * lossv).sum())
            return coef, obj, {"n_leaf_problems": len(leaves)}

        result = self._run_solver(_OneShot(run), problem, callbacks)
        self.coef_ = np.asarray(result.coef)
        self.objective_ = result.final.upper if result.final is not None else float("nan")


class OneVsRestSVMClassifier(_OvRBase):
    """The "SVM" baseline of seed 001: one liblinear L1-loss SVM per leaf, no bias.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Used only for the leaves and the labels; the leaves' problems are independent.
    C : float, default 1.0
    tol : float, default 1e-4
        liblinear's tolerance.
    max_iter : int, default 1000
        liblinear's iteration limit.
    n_jobs : int, optional
        joblib workers over the leaves.

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        Leaf rows hold ``LinearSVC(loss="hinge", fit_intercept=False)`` weights; internal rows 0.
    objective_ : float
        ``sum_n 1/2 ||w_n||^2 + C sum hinge``.
    """

    _kind = "svm"


class OneVsRestLRClassifier(_OvRBase):
    """The "LR" baseline of seed 001: one liblinear L2-regularised logistic regression per leaf.

    Same parameters and attributes as :class:`OneVsRestSVMClassifier` (``LogisticRegression(
    solver="liblinear", fit_intercept=False)``).
    """

    _kind = "lr"


# ---------------------------------------------------------------------- registry
def _hr_params(inner_default: float) -> list[Param]:
    return [
        Param(
            "C", "float", 1.0, low=1e-4, high=1e4, log=True,
            help="Loss weight (larger = less regularised)",
        ),
        Param(
            "max_iter", "int", 30, low=1, high=10000,
            help="Outer block-CD iterations (even then odd levels)",
        ),
        Param(
            "tol", "float", 1e-2, low=1e-8, high=1.0, log=True,
            help="Stop at this certified relative duality gap",
        ),
        Param(
            "inner_tol", "float", inner_default, low=1e-8, high=10.0, log=True,
            help="Starting tolerance of the leaf solver (tightened as the gap closes)",
        ),
        Param(
            "max_inner_iter", "int", 1000, low=1, high=100000,
            help="Leaf solver passes/iterations per outer iteration",
        ),
        Param(
            "relaxation", "float", 1.0, low=0.05, high=1.95,
            help="Over-relaxation of the internal nodes' eq. (4) step (1 = the paper)",
        ),
        Param("shrinking", "bool", False, help="Shrinking in the leaves' dual CD (HR-SVM)"),
        Param("n_jobs", "int", None, low=-1, high=1024, help="joblib workers for the leaf blocks"),
        Param("random_state", "int", 0, low=0, help="Seed of the dual CD's random order"),
    ]  # fmt: skip


def _ovr_params() -> list[Param]:
    return [
        Param(
            "C", "float", 1.0, low=1e-4, high=1e4, log=True,
            help="Loss weight of each leaf's binary problem",
        ),
        Param("tol", "float", 1e-4, low=1e-10, high=1.0, log=True, help="liblinear tolerance"),
        Param("max_iter", "int", 1000, low=1, high=1000000, help="liblinear iteration limit"),
        Param("n_jobs", "int", None, low=-1, high=1024, help="joblib workers over the leaves"),
    ]  # fmt: skip


register(
    "hr-svm",
    HRSVMClassifier,
    params=_hr_params(0.1),
    seed="001",
    summary="Hierarchically regularised SVM: block CD, dual CD leaves, odd/even parallel levels",
    multilabel=True,
    bounds=True,
)
register(
    "hr-lr",
    HRLRClassifier,
    params=_hr_params(0.01),
    seed="001",
    summary="Hierarchically regularised logistic regression: block CD, L-BFGS leaves",
    multilabel=True,
    bounds=True,
)
register(
    "ovr-svm",
    OneVsRestSVMClassifier,
    params=_ovr_params(),
    seed="baseline",
    summary="One-vs-rest linear SVM on the leaves (liblinear, hinge, no bias), seed 001's SVM",
    multilabel=True,
)
register(
    "ovr-lr",
    OneVsRestLRClassifier,
    params=_ovr_params(),
    seed="baseline",
    summary="One-vs-rest logistic regression on the leaves (liblinear, no bias), seed 001's LR",
    multilabel=True,
)
