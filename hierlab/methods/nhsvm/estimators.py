"""HSVM, NHSVM (eq. 10/12 and the variant eq. 13) and Shared SVM of seed 003, as estimators.

* :class:`HSVMClassifier` — hierarchical structured SVM of Cai & Hofmann (eq. 2-3): class attribute 1 on
  every node of the label, Hamming structural error by default.
* :class:`NHSVMClassifier` — normalised hierarchical SVM: class attributes ``sqrt(alpha_n)`` (eq. 5) with
  ``alpha`` from eq. (6) (``rho``), eq. (7) (directional, rho = 1) or their DAG relaxation
  (eq. 8, ``T``); the normalised error of eq. (9); ``variant="eq13"`` divides the margin by
  ``||∧~(y) - ∧~(y_i)||`` (single label only).
* :class:`SharedSVMClassifier` — SSVM (Sections 6, 7.2): learns ``alpha`` with the closed form of
  Algorithm 1 between Pegasos epochs (trees, single label).

All are solved by mini-batch Pegasos on dense or CSR input. HSVM and NHSVM also take multi-label
data (loss-augmented inference by dynamic programming on trees, LP/IP on DAGs, Section 7.1) and
DAG taxonomies. The root is shared by every label and is not a node of the model (``coef_[0] =
0``, ``alpha_[0] = 0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.objective import Objective
from hierlab.core.registry import Param, register
from hierlab.core.regularizers import L2
from hierlab.core.solver import Callback
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier, check_X
from hierlab.methods.nhsvm.dual import HingeDualModel
from hierlab.methods.nhsvm.model import (
    HierarchicalHinge,
    _tree_levels,
    node_max_marginals,
    normalization_alpha,
)
from hierlab.methods.nhsvm.shared_alpha import SharedSVMSolver
from hierlab.methods.nhsvm.shared_dual import SharedSVMDual
from hierlab.solvers.bcfw import BCFW
from hierlab.solvers.sgd import PegasosSGD

__all__ = ["HSVMClassifier", "NHSVMClassifier", "SharedSVMClassifier", "is_leaf_terminated"]


def is_leaf_terminated(Y: sp.csr_matrix, taxonomy: Taxonomy) -> bool:
    """True when every label set, closed under ancestors, is ``A+(L)`` for a set of leaves.

    Parameters
    ----------
    Y : csr_matrix of shape (n_samples, n_nodes)
        0/1 indicator (not necessarily closed).
    taxonomy : Taxonomy
    """
    Yc = sp.csr_matrix(Y, dtype=np.float64) @ sp.csr_matrix(taxonomy.ancestor_matrix)
    Yc = sp.csr_matrix(Yc)
    Yc.data[:] = 1.0
    rows, cols = [], []
    for c in range(1, taxonomy.n_nodes):
        for p in taxonomy.parents(c):
            rows.append(c)
            cols.append(int(p))
    child_to_parent = sp.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(taxonomy.n_nodes, taxonomy.n_nodes)
    )
    kids_in = sp.csr_matrix(Yc @ child_to_parent)  # [i, p] = children of p in y_i
    internal = ~taxonomy.is_leaf
    Yi = Yc[:, internal].toarray() > 0
    Ki = kids_in[:, internal].toarray() > 0
    return bool(np.all(~Yi | Ki))


def _subtree_max(S_leaf: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """Per-node ``max_{l in leaves below n} S[:, l]``: the best leaf score through each node."""
    b = S_leaf.shape[0]
    G = np.full((b, taxonomy.n_nodes), -np.inf)
    G[:, taxonomy.leaves] = S_leaf
    if taxonomy.is_tree:
        for nodes, _par, uniq, starts in _tree_levels(taxonomy).levels:
            G[:, uniq] = np.maximum(G[:, uniq], np.maximum.reduceat(G[:, nodes], starts, axis=1))
    else:
        for d in range(taxonomy.max_depth - 1, -1, -1):
            for n in taxonomy.levels[d]:
                kids = taxonomy.children(n)
                if len(kids):
                    G[:, n] = np.maximum(G[:, n], G[:, kids].max(axis=1))
    return G


class HSVMClassifier(HierarchicalClassifier):
    """Hierarchical structured SVM (Cai & Hofmann 2004; seed 003 eq. 2-3), solved by Pegasos.

    ``min_W lam ||W||_F^2 + mean_i max_y [ sum_{n in y} W_n x_i - sum_{n in y_i} W_n x_i
    + Δ(y, y_i) ]``.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Tree or DAG; None = flat (then HSVM is the multi-class SVM of Crammer & Singer).
    lam : float, default 1e-4
        ``lambda`` for the mean loss (``lambda_paper / N`` for the paper's summed loss).
    loss : {"hamming", "sqrt_hamming", "zero_one"}, default "hamming"
        Single-label structural error ``Δ`` (eq. 2: Hamming ``|y Δ y'|``).
    ml_loss : {"auto", "leaves", "nodes"}, default "auto"
        Multi-label decomposable error: ``Δ_L`` of Section 7.1 (Hamming distance on leaves) or
        Hamming on all nodes; ``"auto"`` uses leaves for leaf-terminated label sets, else nodes.
    label_space : {"auto", "leaves", "closed"}, default "auto"
        Multi-label label space: ``Y_m`` (unions of root-to-leaf paths, Section 3) or every
        ancestor-closed set; ``"auto"`` picks ``"leaves"`` when all training sets are of that form.
    epochs : int, default 30
        Maximum Pegasos epochs.
    batch_size : int, default 64
    tol : float, default 1e-4
        Relative tolerance: SGD stops when an epoch improves the objective by less than
        ``tol`` (relative); BCFW when the certified gap is below ``tol`` times the objective.
    random_state : int or None, default 0
        Seed of the Pegasos sampling order (None: fresh randomness each fit), or of BCFW's
        visiting order (None: seed 0).
    solver : {"pegasos", "bcfw"}, default "pegasos"
        ``"pegasos"``: mini-batch SGD with iterate averaging (the paper's solver; every label
        space). ``"bcfw"``: block-coordinate Frank-Wolfe on the dual of the same objective
        (:mod:`hierlab.methods.nhsvm.dual`), single label only, with a certified lower bound
        (``lower_bound_``); ``epochs`` caps its passes. Meant for taxonomies up to a few
        hundred nodes (its dual tables are dense).

    Attributes
    ----------
    coef_ : ndarray of shape (n_nodes, n_features)
        Effective node vectors ``U_n = c_n W_n`` (score of a label = ``sum_{n in y} U_n . x``).
    W_ : ndarray of shape (n_nodes, n_features)
        The optimisation variable.
    class_attributes_ : ndarray of shape (n_nodes,)
        ``c_n`` (1 for HSVM, ``sqrt(alpha_n)`` for NHSVM); 0 for the root.
    objective_ : float
        Final primal objective.
    lower_bound_ : float
        A certified lower bound of the optimum (``solver="bcfw"``; NaN for Pegasos).
    multilabel_ : bool
    leaf_terminated_ : bool
        The multi-label label space used.
    """

    _supports_multilabel = True
    _supports_dag = True

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        lam: float = 1e-4,
        loss: str = "hamming",
        ml_loss: str = "auto",
        label_space: str = "auto",
        epochs: int = 30,
        batch_size: int = 64,
        tol: float = 1e-4,
        random_state: int | None = 0,
        solver: str = "pegasos",
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.solver = solver
        self.lam = lam
        self.loss = loss
        self.ml_loss = ml_loss
        self.label_space = label_space
        self.epochs = epochs
        self.batch_size = batch_size
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self) -> Any:
        # multi-label y comes as label sets (tuples of node names), not as scikit-learn's 0/1
        # indicator matrix, so the estimator checks must not feed it indicator matrices
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = False
        return tags

    # ---------------------------------------------------------------- hooks for the variants
    def _alpha(self, tax: Taxonomy) -> np.ndarray | None:
        return None

    def _single_loss(self) -> str:
        return str(self.loss)

    def _variant(self) -> str:
        return "margin"

    # ---------------------------------------------------------------- fitting
    def _check_params(self) -> None:
        if not (isinstance(self.lam, int | float) and self.lam > 0):
            raise ParameterError(f"lam must be a positive number, got {self.lam!r}")
        if self.solver not in ("pegasos", "bcfw"):
            raise ParameterError(f"solver must be 'pegasos' or 'bcfw', got {self.solver!r}")
        if self.label_space not in ("auto", "leaves", "closed"):
            raise ParameterError(
                f"label_space must be 'auto', 'leaves' or 'closed', got {self.label_space!r}"
            )
        if self.ml_loss not in ("auto", "leaves", "nodes", "alpha"):
            raise ParameterError(
                f"ml_loss must be 'auto', 'leaves', 'nodes' or 'alpha', got {self.ml_loss!r}"
            )

    def _objective(self, X: Any, Y: Any, c: np.ndarray, alpha: Any) -> HierarchicalHinge:
        tax = self.taxonomy_
        self.multilabel_ = sp.issparse(Y)
        if self.multilabel_:
            if self.label_space == "auto":
                lt = is_leaf_terminated(Y, tax)
            else:
                lt = self.label_space == "leaves"
            ml_loss = self.ml_loss
            if ml_loss == "auto":
                ml_loss = "leaves" if lt else "nodes"
            self.leaf_terminated_ = lt
            return HierarchicalHinge(
                X, Y, tax, c, self.lam, ml_loss, alpha, self._variant(), leaf_terminated=lt
            )
        self.leaf_terminated_ = True
        return HierarchicalHinge(
            X, Y, tax, c, self.lam, self._single_loss(), alpha, self._variant()
        )

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_params()
        tax = self.taxonomy_
        alpha = self._alpha(tax)
        c = np.ones(tax.n_nodes) if alpha is None else np.sqrt(np.maximum(alpha, 0.0))
        c[0] = 0.0
        obj = self._objective(X, Y, c, alpha)
        if self.solver == "bcfw":
            result = self._solve_dual(obj, callbacks)
        else:
            solver = PegasosSGD(
                epochs=self.epochs,
                batch_size=self.batch_size,
                tol=self.tol,
                random_state=self.random_state,
            )
            result = self._run_solver(solver, obj, callbacks)
            self.lower_bound_ = float("nan")
        self._set_fitted(obj, np.asarray(result.coef), c, alpha)

    def _solve_dual(self, obj: HierarchicalHinge, callbacks: Sequence[Callback]) -> Any:
        """BCFW on the dual of ``obj`` (single label): ``lam ||W||^2`` is L2 with sigma 2 lam."""
        model = HingeDualModel(obj)
        reg = L2(model.active_rows(obj.y), sigma=2.0 * float(self.lam))
        problem = Objective(model, reg, obj.X, obj.y, C=1.0)
        solver = BCFW(max_iter=int(self.epochs), random_state=self._dual_seed())
        return self._run_certified(solver, problem, callbacks)

    def _dual_seed(self) -> int:
        """BCFW's visiting-order seed (``random_state``; 0 when it is None)."""
        return 0 if self.random_state is None else int(self.random_state)

    def _run_certified(self, solver: Any, problem: Any, callbacks: Sequence[Callback]) -> Any:
        """Run a solver with a certified gap to ``tol`` (relative); set ``lower_bound_``."""
        result = self._run_solver(solver, problem, callbacks, tol=0.0, rtol=float(self.tol))
        final = result.final
        self.lower_bound_ = (
            float("nan") if final is None or final.lower is None else float(final.lower)
        )
        return result

    def _set_fitted(self, obj: HierarchicalHinge, W: np.ndarray, c: np.ndarray, alpha: Any) -> None:
        self.W_ = W
        self.class_attributes_ = c
        self.coef_ = c[:, None] * W
        if alpha is not None:
            self.alpha_ = np.asarray(alpha)
        self.objective_ = float(obj.value(W))
        obj.X = None  # do not keep the training data
        self._objective_model_ = obj

    def node_weights(self) -> pd.DataFrame:
        """Per-node table: ``alpha`` (NaN for HSVM), class attribute ``c`` and ``||U_n||``.

        Returns
        -------
        pandas.DataFrame indexed by node name, in ``taxonomy_.names`` order
        """
        check_is_fitted(self, "coef_")
        tax = self.taxonomy_
        alpha = getattr(self, "alpha_", None)
        return pd.DataFrame(
            {
                "depth": tax.depth,
                "alpha": np.full(tax.n_nodes, np.nan) if alpha is None else alpha,
                "class_attribute": self.class_attributes_,
                "norm_U": np.linalg.norm(self.coef_, axis=1),
            },
            index=[str(n) for n in tax.names],
        )

    # ---------------------------------------------------------------- prediction
    def _potentials(self, X: Any) -> np.ndarray:
        return np.asarray(X @ self.coef_.T)

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> Any:
        obj = self._objective_model_
        if self.multilabel_:
            Z = obj.predict_sets(self.W_, X)
            Z[:, 0] = False
            return sp.csr_matrix(Z.astype(np.float64))
        return obj.predict_single(self.W_, X)

    def decision_function(self, X: Any) -> np.ndarray:
        """scikit-learn scores for ``classes_``: :meth:`node_scores` at the training labels.

        Returns
        -------
        ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes (the score
        of ``classes_[1]`` minus that of ``classes_[0]``)
        """
        S = self.node_scores(X)
        cols = self.taxonomy_.index([str(c) for c in self.classes_])
        out = S[:, cols]
        if out.shape[1] == 2 and not self.multilabel_:
            return out[:, 1] - out[:, 0]
        return out

    def node_scores(self, X: Any) -> np.ndarray:
        """Per-node scores of shape (n_samples, n_nodes), columns in ``taxonomy_.names`` order.

        Single label: the score of the best leaf below each node (its max-marginal). Multi-label:
        :func:`~hierlab.methods.nhsvm.model.node_max_marginals` of the label-set model (exact on trees).
        """
        check_is_fitted(self, "coef_")
        X = check_X(X, self, reset=False)
        P = self._potentials(X)
        tax = self.taxonomy_
        if self.multilabel_:
            return node_max_marginals(P, tax, self.leaf_terminated_)
        obj = self._objective_model_
        S = obj.leaf_scores(np.asarray(X @ self.W_.T))
        return _subtree_max(S, tax)


class NHSVMClassifier(HSVMClassifier):
    """Normalised hierarchical SVM (seed 003, eq. 10/12, variant eq. 13), solved by Pegasos.

    ``min_W lam ||W||^2 + mean_i max_y [ sum_{n in y} sqrt(alpha_n) W_n x_i
    - sum_{n in y_i} sqrt(alpha_n) W_n x_i + Δ~(y, y_i) ]`` with ``Δ~`` of eq. (9).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
    lam : float, default 1e-4
    alpha_rule : {"eq6", "eq7"}, default "eq6"
        eq. (6) ``min sum alpha^rho`` or eq. (7) ``max min alpha`` with directional constraints.
    rho : float, default 2.0
        Exponent of eq. (6), > 1.
    T : float, default 1.5
        DAG relaxation of eq. (8) (``1 <= sum_{A+(l)} alpha <= T``); unused on trees.
    variant : {"eq10", "eq13"}, default "eq10"
        eq. (10)/(12), or eq. (13) (margin divided by ``||∧~(y) - ∧~(y_i)||``, single label).
    ml_loss, label_space, epochs, batch_size, tol, random_state, solver
        As in :class:`HSVMClassifier` (``ml_loss="alpha"`` weights the multi-label Hamming by alpha).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_nodes,)
        The normalisation weights (root 0).
    coef_, W_, class_attributes_, objective_
        As in :class:`HSVMClassifier`.
    """

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        lam: float = 1e-4,
        alpha_rule: str = "eq6",
        rho: float = 2.0,
        T: float = 1.5,
        variant: str = "eq10",
        ml_loss: str = "auto",
        label_space: str = "auto",
        epochs: int = 30,
        batch_size: int = 64,
        tol: float = 1e-4,
        random_state: int | None = 0,
        solver: str = "pegasos",
    ) -> None:
        super().__init__(
            taxonomy=taxonomy,
            lam=lam,
            loss="normalized",
            ml_loss=ml_loss,
            label_space=label_space,
            epochs=epochs,
            batch_size=batch_size,
            tol=tol,
            random_state=random_state,
            solver=solver,
        )
        self.alpha_rule = alpha_rule
        self.rho = rho
        self.T = T
        self.variant = variant

    def _alpha(self, tax: Taxonomy) -> np.ndarray:
        return normalization_alpha(tax, rule=self.alpha_rule, rho=self.rho, T=self.T)

    def _single_loss(self) -> str:
        return "normalized"

    def _variant(self) -> str:
        if self.variant not in ("eq10", "eq13"):
            raise ParameterError(f"variant must be 'eq10' or 'eq13', got {self.variant!r}")
        return "eq13" if self.variant == "eq13" else "margin"


class SharedSVMClassifier(HSVMClassifier):
    """Shared SVM (seed 003, eq. 14-16): NHSVM whose weights alpha are learned (Algorithm 1).

    Alternates ``epochs_per_alpha`` Pegasos epochs on ``V`` (``U_n = sqrt(alpha_n) V_n``) with
    the closed-form alpha of Algorithm 1, for at most ``rounds`` rounds or until an alpha round
    improves the objective by less than ``tol``. Trees and single-label data only (as in the
    paper).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
    lam : float, default 1e-4
    loss : {"zero_one", "hamming", "sqrt_hamming"}, default "zero_one"
        The fixed (un-normalised) ``Δ(l, l_i)`` of eq. (14); 0/1 makes SSVM the multi-class SVM
        when sharing does not pay (Table 1).
    rounds : int, default 5
        Maximum alpha steps.
    epochs_per_alpha : int, default 5
        Pegasos epochs (or at most this many BCFW epochs) on ``V`` between alpha steps.
    alpha_init : {"eq6", "eq7"}, default "eq6"
        Starting weights (eq. 6 with rho = 2, or eq. 7).
    batch_size : int, default 64
    tol : float, default 1e-3
        Pegasos: stop when an alpha round improves the objective by less than ``tol``
        (relative). BCFW: the certified relative gap of the joint problem.
    random_state : int or None, default 0
        Seed of the Pegasos sampling order (None: fresh randomness each fit).
    solver : {"pegasos", "bcfw"}, default "pegasos"
        Section 7.2's alternation with SGD epochs on ``V``, or with exact V-steps by BCFW
        (warm-started) and a certified lower bound on the joint optimum
        (:mod:`hierlab.methods.nhsvm.shared_dual`); ``lower_bound_`` holds it.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_nodes,)
        The learned weights.
    alpha_history_ : list of ndarray
        Alpha after each round.
    coef_ : ndarray of shape (n_nodes, n_features)
        ``U``; ``W_`` holds ``V``.
    """

    _supports_multilabel = False
    _supports_dag = False

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        lam: float = 1e-4,
        loss: str = "zero_one",
        rounds: int = 5,
        epochs_per_alpha: int = 5,
        alpha_init: str = "eq6",
        batch_size: int = 64,
        tol: float = 1e-3,
        random_state: int | None = 0,
        solver: str = "pegasos",
    ) -> None:
        super().__init__(
            taxonomy=taxonomy,
            lam=lam,
            loss=loss,
            batch_size=batch_size,
            tol=tol,
            random_state=random_state,
            solver=solver,
        )
        self.rounds = rounds
        self.epochs_per_alpha = epochs_per_alpha
        self.alpha_init = alpha_init

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        self._check_params()
        if sp.issparse(Y):
            raise DataError("SharedSVM is single-label (seed 003, Section 6)")
        if self.loss not in ("zero_one", "hamming", "sqrt_hamming"):
            raise ParameterError(
                "loss must be 'zero_one', 'hamming' or 'sqrt_hamming' (eq. 14 fixes the "
                f"structural error; it is not normalised by the learned alpha), got {self.loss!r}"
            )
        tax = self.taxonomy_
        alpha0 = normalization_alpha(tax, rule=self.alpha_init, rho=2.0)
        obj = self._objective(X, Y, np.sqrt(alpha0), None)
        if self.solver == "bcfw":
            dual = SharedSVMDual(
                alpha0,
                rounds=self.rounds,
                epochs_per_alpha=self.epochs_per_alpha,
                tol=self.tol,
                random_state=self._dual_seed(),
            )
            result = self._run_certified(dual, obj, callbacks)
            alpha, history = dual.alpha, dual.alpha_history
        else:
            solver = SharedSVMSolver(
                alpha0,
                rounds=self.rounds,
                epochs_per_alpha=self.epochs_per_alpha,
                batch_size=self.batch_size,
                tol=self.tol,
                random_state=self.random_state,
            )
            result = self._run_solver(solver, obj, callbacks)
            self.lower_bound_ = float("nan")
            alpha, history = solver.alpha, solver.alpha_history
        c = np.sqrt(alpha)
        obj.set_attributes(c)
        self.alpha_history_ = history
        self._set_fitted(obj, np.asarray(result.coef), c, alpha)


_SEED = Param(
    "random_state", "int", 0, low=0, high=2**31 - 1, help="seed of the Pegasos sampling order"
)
_COMMON = [
    Param(
        "lam",
        "float",
        1e-4,
        low=1e-9,
        high=10.0,
        log=True,
        help="lambda: weight of ||W||^2 against the mean loss (tune on a hold-out set)",
    ),
    Param("epochs", "int", 30, low=1, high=1000, help="maximum Pegasos epochs (BCFW passes)"),
    Param("batch_size", "int", 64, low=1, high=4096, help="rows per SGD step"),
    _SEED,
    Param(
        "solver",
        "str",
        "pegasos",
        choices=("pegasos", "bcfw"),
        help="Pegasos SGD (the paper; any label space) or BCFW on the dual (single label, "
        "certified gap)",
    ),
    Param(
        "tol",
        "float",
        1e-4,
        low=1e-8,
        high=1.0,
        log=True,
        help="relative: SGD's per-epoch improvement, or BCFW's certified gap",
    ),
]
_ML = [
    Param(
        "label_space",
        "str",
        "auto",
        choices=("auto", "leaves", "closed"),
        help="multi-label sets: unions of root-to-leaf paths, or any ancestor-closed set",
    ),
]

register(
    "hsvm",
    HSVMClassifier,
    params=[
        *_COMMON,
        Param(
            "loss",
            "str",
            "hamming",
            choices=("hamming", "sqrt_hamming", "zero_one"),
            help="structural error Δ(y, y_i) (eq. 2: Hamming)",
        ),
        *_ML,
    ],
    seed="003",
    summary="Hierarchical structured SVM of Cai & Hofmann (eq. 2-3), Pegasos",
    multilabel=True,
    dag=True,
)
_NH = [
    *_COMMON,
    Param(
        "alpha_rule",
        "str",
        "eq6",
        choices=("eq6", "eq7"),
        help="normalisation weights: eq. 6 (min sum alpha^rho) or eq. 7 (max min, directional)",
    ),
    Param("rho", "float", 2.0, low=1.01, high=10.0, help="exponent of eq. 6 (2 = the paper's QP)"),
    Param(
        "T",
        "float",
        1.5,
        low=1.0,
        high=10.0,
        help="DAG relaxation of eq. 8: path sums of alpha in [1, T]",
    ),
]
register(
    "nhsvm",
    NHSVMClassifier,
    params=[*_NH, *_ML],
    seed="003",
    summary="Normalised hierarchical SVM (eq. 10/12): normalised class attributes and margin",
    multilabel=True,
    dag=True,
)
register(
    "nhsvm13",
    NHSVMClassifier,
    params=list(_NH),
    seed="003",
    summary="NHSVM variant of eq. 13: margin divided by ||∧~(y) - ∧~(y_i)|| (single label)",
    dag=True,
    fixed={"variant": "eq13"},
)
register(
    "ssvm",
    SharedSVMClassifier,
    params=[
        Param(
            "lam",
            "float",
            1e-4,
            low=1e-9,
            high=10.0,
            log=True,
            help="lambda: weight of the shared norm against the mean loss",
        ),
        Param("rounds", "int", 5, low=1, high=100, help="maximum alpha updates (Algorithm 1)"),
        Param(
            "epochs_per_alpha",
            "int",
            5,
            low=1,
            high=100,
            help="Pegasos epochs on V between alpha updates",
        ),
        Param("alpha_init", "str", "eq6", choices=("eq6", "eq7"), help="initial alpha"),
        Param(
            "loss",
            "str",
            "zero_one",
            choices=("zero_one", "hamming", "sqrt_hamming"),
            help="fixed structural error Δ(l, l_i) of eq. 14",
        ),
        Param("batch_size", "int", 64, low=1, high=4096, help="rows per SGD step"),
        _SEED,
        Param(
            "solver",
            "str",
            "pegasos",
            choices=("pegasos", "bcfw"),
            help="Pegasos epochs on V (the paper) or exact V-steps by BCFW with a certified "
            "lower bound on the joint optimum",
        ),
        Param(
            "tol",
            "float",
            1e-3,
            low=1e-8,
            high=1.0,
            log=True,
            help="relative: Pegasos' per-round improvement, or BCFW's certified joint gap",
        ),
    ],
    seed="003",
    summary="Shared SVM (eq. 14): alpha learned in closed form (Algorithm 1), trees",
)
