"""HSVM, NHSVM (eq. 10/12 and the variant eq. 13) and Shared SVM of seed 003, as estimators.

* :class:`HSVMClassifier` — hierarchical structured SVM of Cai & Hofmann (eq. 2-3): class
  attribute 1 on every node of the label, Hamming structural error by default.
* :class:`NHSVMClassifier` — normalised hierarchical SVM: class attributes ``sqrt(alpha_n)``
  (eq. 5) with ``alpha`` from eq. (6) (``rho``), eq. (7) (directional, rho = 1) or their DAG
  relaxation (eq. 8, ``T``); the normalised error of eq. (9); ``variant="eq13"`` divides the
  margin by ``||∧~(y) - ∧~(y_i)||`` (single label only).
* :class:`SharedSVMClassifier` — SSVM (Sections 6, 7.2): learns ``alpha`` with the closed form of
  Algorithm 1 between Pegasos epochs (trees, single label).

All are solved by mini-batch Pegasos on dense or CSR input. HSVM and NHSVM also take multi-label
data (loss-augmented inference by dynamic programming on trees, LP/IP on DAGs, Section 7.1) and
DAG taxonomies. The root is shared by every label and is not a node of the model (``coef_[0] =
0``, ``alpha_[0] = 0``).

Every constructor parameter is declared once, as a :class:`~hierlab.core.params.Param` in the
class's ``_parameters``: ``fit`` validates it, the registry entries at the bottom of this module
(cards in :mod:`hierlab.methods.nhsvm.cards`) show it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.solver import (
    Callback,
    Solver,
    SolverChoice,
    SolverResult,
    choose_solver,
    report_stage,
)
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier, check_X
from hierlab.methods.nhsvm.cards import HSVM_CARD, NHSVM13_CARD, NHSVM_CARD, SSVM_CARD
from hierlab.methods.nhsvm.dual import hinge_problem, implicit_labels
from hierlab.methods.nhsvm.model import (
    ALPHA_RULES,
    FIXED_LOSSES,
    MULTILABEL_LOSSES,
    NORMALIZED_LOSS,
    HierarchicalHinge,
    _tree_levels,
    class_attribute_matrix,
    node_max_marginals,
    normalization_alpha,
)
from hierlab.methods.nhsvm.online import partial_fit_blocks
from hierlab.methods.nhsvm.sgd import PegasosSGD
from hierlab.methods.nhsvm.shared_alpha import SharedSVMSolver
from hierlab.methods.nhsvm.shared_dual import SharedSVMDual
from hierlab.solvers.bcfw import BCFW, ESTIMATE_SLACK

__all__ = [
    "OBJECTIVE_AT_SOLUTION",
    "HSVMClassifier",
    "NHSVMClassifier",
    "SharedSVMClassifier",
    "is_leaf_terminated",
]

#: the stage after the solver in which the objective at the solution is summed (``on_stage``)
OBJECTIVE_AT_SOLUTION = "the objective at the solution"

#: ``solver="auto"`` takes BCFW only while its explicit dual tables (one sparse row per
#: (training label, candidate): O(labels x leaves x depth), quadratic in the classes) take no
#: more than the weights themselves (n_nodes x n_features floats) or this floor, and its dual
#: variables (examples x leaves) at most :data:`AUTO_DUAL_MAX_BYTES`; Pegasos (O(m d)) above
AUTO_TABLE_MAX_BYTES = 16 * 2**20
AUTO_DUAL_MAX_BYTES = 1 * 2**30
#: ... and only on sparse rows (text): the fraction of non-zero entries of X, stored dense
#: or sparse, at most this (20 Newsgroups 0.001, the synthetic text set 0.02)
AUTO_MAX_DENSITY = 0.1
#: ``tol=None``: BCFW's certified relative gap, and Pegasos' relative per-epoch improvement
BCFW_TOL, PEGASOS_TOL = 1e-3, 1e-4
#: ``epochs=None``: BCFW's passes (IPC titles reach the 1e-3 gap in about 30) and Pegasos' epochs
BCFW_EPOCHS, PEGASOS_EPOCHS = 100, 30
#: Shared SVM's defaults: the certified joint gap of BCFW's alternation, Pegasos' improvement
SSVM_BCFW_TOL, SSVM_PEGASOS_TOL = 5e-2, 1e-3
LABEL_SPACES = ("auto", "leaves", "closed")
VARIANTS = ("eq10", "eq13")


# ------------------------------------------------------------------------------ solver tables
@dataclass(frozen=True)
class HingeSolver(SolverChoice):
    """A row of this family's solver tables: the solver, what it runs on and its defaults.

    Attributes
    ----------
    problem : callable
        ``problem(hinge) -> objective`` the solver takes (BCFW: the dual blocks of
        :func:`~hierlab.methods.nhsvm.dual.hinge_problem`; Pegasos: the hinge itself).
    tol : float
        ``tol=None``'s value for this solver.
    epochs : int
        ``epochs=None``'s value for this solver.
    """

    problem: Callable[[HierarchicalHinge], Any] = lambda hinge: hinge
    tol: float = 0.0
    epochs: int = 0


def _hsvm_bcfw(est: Any) -> BCFW:
    return BCFW(
        max_iter=est._epochs(),
        random_state=est._dual_seed(),
        certify_below=ESTIMATE_SLACK * est._tol(),
    )


def _hsvm_bcfw_words(est: Any) -> str:
    chosen = " (solver='auto': single-label sparse data)" if est.solver == "auto" else ""
    return f"BCFW on the dual{chosen}, certified to a relative gap of {est._tol():g}"


def _hsvm_pegasos(est: Any) -> PegasosSGD:
    return est._pegasos()


def _hsvm_pegasos_words(est: Any) -> str:
    chosen = " (solver='auto': multi-label, dense or large data)" if est.solver == "auto" else ""
    plain = ", plain (step 1/(lambda t), projection, last iterate)" * (est.pegasos == "plain")
    return f"Pegasos SGD on the primal, as seed 003 trains (Section 7){chosen}{plain}"


#: HSVM's and NHSVM's solvers (``"auto"`` is resolved to one of them first,
#: :func:`resolve_solver`)
HINGE_SOLVERS: dict[str, HingeSolver] = {
    "pegasos": HingeSolver(
        _hsvm_pegasos, _hsvm_pegasos_words, certified=False, tol=PEGASOS_TOL,
        epochs=PEGASOS_EPOCHS,
    ),
    "bcfw": HingeSolver(
        _hsvm_bcfw, _hsvm_bcfw_words, problem=hinge_problem, tol=BCFW_TOL, epochs=BCFW_EPOCHS
    ),
}  # fmt: skip
#: the ``solver`` parameter's choices: ``"auto"`` (:func:`resolve_solver`) and the table's rows
SOLVERS = ("auto", *HINGE_SOLVERS)


def _ssvm_bcfw(est: Any, alpha0: np.ndarray) -> SharedSVMDual:
    if float(est.alpha_floor) > 0.0:
        raise ParameterError(
            "alpha_floor > 0 changes eq. (14), whose optimum solver='bcfw' certifies; "
            "use solver='pegasos' with a floor"
        )
    return SharedSVMDual(
        alpha0,
        rounds=int(est.rounds),
        epochs_per_alpha=int(est.epochs_per_alpha),
        tol=est._tol(),
        random_state=est._dual_seed(),
    )


def _ssvm_pegasos(est: Any, alpha0: np.ndarray) -> SharedSVMSolver:
    return SharedSVMSolver(
        alpha0,
        rounds=int(est.rounds),
        epochs_per_alpha=int(est.epochs_per_alpha),
        batch_size=int(est.batch_size),
        tol=est._tol(),
        random_state=est.random_state,
        alpha_floor=float(est.alpha_floor),
        plain=est.pegasos == "plain",
    )


def _ssvm_words(est: Any, steps: str, chosen: str, plain: bool) -> str:
    chosen = chosen if est.solver == "auto" else ""
    plain_words = ", plain Pegasos (step 1/(lambda t), projection, last iterate)" * plain
    margin = "; margin Δ~ of eq. (9) with the learned alpha" * (est.loss == NORMALIZED_LOSS)
    return (
        f"Shared SVM, Algorithm 1 of seed 003 (closed-form alpha) alternating with "
        f"{steps}{chosen}{plain_words}{margin}"
    )


def _ssvm_bcfw_words(est: Any) -> str:
    return _ssvm_words(est, "BCFW V-steps", " (solver='auto': sparse rows)", False)


def _ssvm_pegasos_words(est: Any) -> str:
    return _ssvm_words(est, "Pegasos epochs on V", " (solver='auto')", est.pegasos == "plain")


#: Shared SVM's alternations, by the solver of their V-steps: ``build(est, alpha0)``
SHARED_SOLVERS: dict[str, HingeSolver] = {
    "pegasos": HingeSolver(
        _ssvm_pegasos, _ssvm_pegasos_words, certified=False,
        tol=SSVM_PEGASOS_TOL,
    ),
    "bcfw": HingeSolver(_ssvm_bcfw, _ssvm_bcfw_words, tol=SSVM_BCFW_TOL),
}  # fmt: skip

# ------------------------------------------------------------------------------ parameters
# One Param per constructor argument; the classes below pick (and the SSVM rewords) them.

_LAM = Param(
    "lam",
    "float",
    0.5,
    low=0.0,
    low_open=True,
    log=True,
    symbol="λ",
    help="weight of ||W||² against the summed loss (the paper's λ, eq. 3); C = 1 / (2 λ)",
    note="The paper's λ (eq. 3, 10, 14): λ ||W||² + Σ_i ξ_i, the loss summed over the N "
    "training rows. Divided by 2 λ this is ½ ||W||² + C Σ_i ξ_i with C = 1 / (2 λ), "
    "scikit-learn's and every other hierlab method's C: the default 0.5 is C = 1. The "
    "paper's grid 10⁻⁸ … 10² (Section 8.1) applies as printed; select on a hold-out set.",
)
#: HSVM's default lam (C = 0.5): measured exact accuracy at C = 1 / 0.5 / 0.3, 20 Newsgroups
#: 0.854 / 0.857 / 0.860 and IPC titles 0.4715 / 0.4710 / 0.4656: within a point of LinearSVC on
#: both sets (20 Newsgroups 0.5) at C = 0.5 only
HSVM_DEFAULT_LAM = 1.0
_HSVM_LAM = replace(
    _LAM,
    default=HSVM_DEFAULT_LAM,
    note=_LAM.note.replace("the default 0.5 is C = 1", "HSVM's default 1 is C = 0.5 (NHSVM's "
    "1/3 is C = 1.5, the Shared SVM's 0.5 is C = 1)") + " HSVM's: at C = 1 / 0.5 / 0.3, exact "
    "accuracy 20 Newsgroups 0.854 / 0.857 / 0.860, IPC titles 0.4715 / 0.4710 / 0.4656.",
)
#: NHSVM's default lam (C = 1.5) with eq. (7)'s weights: exact accuracy at lam = 0.5 / 0.35 /
#: 1/3 / 0.3 / 0.25, 20 Newsgroups 0.8615 / 0.8582 / 0.8577 / 0.8569 / 0.8565 and IPC titles
#: 0.4646 / 0.4695 / 0.4701 / - / 0.4737 (NHSVM-13: 0.8617 / 0.8591 / 0.8591 / 0.8590 / 0.8573
#: and 0.4668 / 0.4713 / 0.4706 / - / 0.4739; LinearSVC 0.8623 and 0.4803): NHSVM-13 is
#: within a point of LinearSVC on both sets from 0.25 to 0.35, NHSVM nearest to it at 1/3
#: (IPC 0.4701 against 0.4703: 6 of 22,513 test rows)
NHSVM_DEFAULT_LAM = 1.0 / 3.0
_NHSVM_LAM = replace(
    _LAM,
    default=NHSVM_DEFAULT_LAM,
    note=_LAM.note.replace(
        "the default 0.5 is C = 1",
        "NHSVM's default 1/3 is C = 1.5 (with eq. 7's weights, a middle ground between 20 "
        "Newsgroups, which prefers larger lam, and IPC titles, smaller; the Shared SVM's 0.5 "
        "is C = 1)",
    ),
)
_LOSS = Param(
    "loss",
    "str",
    "zero_one",
    choices=FIXED_LOSSES,
    symbol="Delta",
    help="structural error Δ(y, y_i) (default 0/1; the paper's eq. 2 is Hamming)",
    note="The structural error Δ added inside the max (the margin required against each "
    "wrong label), single label. Default 0/1 (every wrong leaf must be beaten by 1: the "
    "multi-class SVM on the path features, more accurate than Hamming on IPC titles); "
    "'hamming' is Cai & Hofmann's eq. (2) (the `paper` preset), "
    "whose margin grows with the tree distance.",
)
_ML_LOSS = Param(
    "ml_loss",
    "str",
    "auto",
    choices=("auto", "leaves", "nodes"),
    symbol="Delta_L",
    help="multi-label error: Hamming distance on the leaves (Δ_L, Section 7.1) or on all "
    "nodes; auto = leaves for leaf-terminated label sets, else nodes",
)
_LABEL_SPACE = Param(
    "label_space",
    "str",
    "auto",
    choices=LABEL_SPACES,
    help="multi-label sets: unions of root-to-leaf paths, or any ancestor-closed set",
    note="Multi-label only: 'leaves' = unions of root-to-leaf paths (Section 3), "
    "'closed' = any ancestor-closed set; 'auto' picks from the training labels.",
)
_EPOCHS = Param(
    "epochs",
    "int",
    None,
    low=1,
    help="maximum BCFW passes (None: 100) or Pegasos epochs (None: 30)",
    note="Maximum passes over the examples: BCFW stops earlier at its certified gap (None: "
    "100 passes), Pegasos when an epoch improves the objective by less than its tolerance "
    "(None: 30 epochs; 10-50).",
)
_BATCH_SIZE = Param(
    "batch_size",
    "int",
    64,
    low=1,
    used_when={"solver": ("auto", "pegasos")},
    help="rows per SGD step",
    note="Rows per stochastic step: larger batches are smoother and vectorise better.",
)
_TOL = Param(
    "tol",
    "float",
    None,
    low=0.0,
    log=True,
    help="relative: BCFW's certified gap (None: 1e-3) or SGD's per-epoch improvement "
    "(None: 1e-4)",
    note="Relative tolerance: BCFW stops when its certified gap is below tol times the "
    "objective (None: 1e-3), Pegasos when an epoch improves the objective by less than tol "
    "(None: 1e-4).",
)
_PEGASOS = Param(
    "pegasos",
    "str",
    "fast",
    choices=("fast", "plain"),
    used_when={"solver": ("auto", "pegasos")},
    help="Pegasos variant: fast (bounded first step, averaged iterate, best epoch) or plain "
    "(as printed: step 1/(lambda t), projection, last iterate)",
    note="'plain' is Pegasos as Shalev-Shwartz et al. (2007) print it, the SGD seed 003 "
    "names: step 1/(lambda t) from t = 1 with lambda = 2 lam, projection onto the ball "
    "||W|| <= sqrt(max_loss / lambda), the last iterate returned, every epoch run (tol "
    "ignored); the paper preset uses it. 'fast' bounds the first step (Bottou's t0), "
    "reports the polynomial-decay average and keeps the best epoch: the same objective in "
    "fewer epochs.",
)
_SEED = Param(
    "random_state",
    "seed",
    0,
    none=True,
    help="seed of the Pegasos sampling order (and of BCFW's visiting order)",
)
_SOLVER = Param(
    "solver",
    "str",
    "auto",
    choices=SOLVERS,
    choice_labels={
        "bcfw": "BCFW: block-coordinate Frank-Wolfe on the dual",
        "pegasos": "Pegasos: stochastic subgradient (the paper)",
    },
    help="BCFW on the dual (single label, certified gap), Pegasos SGD (the paper; any label "
    "space), or auto: BCFW where it fits",
    note="auto: BCFW for single-label sparse data (text) on a tree at any size, on a DAG while "
    "its dual tables stay small (up to about a thousand leaves), else Pegasos; the fitted "
    "`solver_` says which ran. bcfw: block-coordinate Frank-Wolfe on the dual of the same "
    "objective (single label), with a certified lower bound; on a tree each label is formed "
    "when its example is visited, on a DAG its tables grow with (labels x leaves). pegasos: "
    "the paper's SGD, every label space, no certificate.",
)

_INFERENCE = Param(
    "inference",
    "str",
    "lp",
    choices=("lp", "ip"),
    help="multi-label training on a DAG: the LP relaxation of eq. 19 (the paper) or the exact "
    "integer program",
    note="Multi-label data on a DAG only (trees use exact dynamic programming). 'lp' trains on "
    "the LP relaxation of the loss-augmented inference, as seed 003 does (Section 7.1): the "
    "loss is then an upper bound of the exact one, still convex, and no integer program is "
    "solved while training. 'ip' re-solves the rows whose LP optimum is fractional as binary "
    "programs (the exact loss, slower). Prediction always uses the LP, then the IP when the "
    "LP is fractional, as the paper tests.",
)

# NHSVM
_ML_LOSS_ALPHA = replace(
    _ML_LOSS,
    choices=("auto", *MULTILABEL_LOSSES),
    help=_ML_LOSS.help + "; alpha = Hamming on the nodes weighted by alpha",
)
_ALPHA_RULE = Param(
    "alpha_rule",
    "str",
    "eq7",
    choices=ALPHA_RULES,
    label_text="α rule",
    help="normalisation weights: eq. 6 (min sum alpha^rho), eq. 7 (max min, directional) or "
    "eq. 6 with eq. 7's directional constraints",
    note="eq6: minimise sum alpha^rho (spreads weight over the path); eq7 (the default): "
    "maximise the smallest alpha with alpha growing towards the leaves (directional "
    "constraint); eq6-directional: minimise sum alpha^rho with alpha growing towards the "
    "leaves (Section 8.1: rho = 2 with directional constraints). The paper chooses among them "
    "on a hold-out set; eq7 is the default as it is the more accurate on both real sets "
    "(exact accuracy, eq6 -> eq7 at lam = 0.5: 20 Newsgroups 0.857 -> 0.862, IPC titles "
    "0.408 -> 0.465).",
)
_RHO = Param(
    "rho",
    "float",
    2.0,
    low=1.0,
    symbol="rho",
    help="exponent of eq. 6 (2 = the paper's QP; eq. 6 needs rho > 1, eq. 7 is rho = 1)",
    note="Exponent of eq. (6); 2 is the paper's QP, values near 1 approach the node-"
    "duplication invariance of Theorem 1.",
)
_T = Param(
    "T",
    "float",
    1.5,
    low=1.0,
    symbol="T",
    help="DAG relaxation of eq. 8: path sums of alpha in [1, T]",
    note="DAGs only: path sums of alpha may range in [1, T] (eq. 8; the paper uses 1.5).",
)
_VARIANT = Param(
    "variant",
    "str",
    "eq10",
    choices=VARIANTS,
    help="eq. 10/12, or eq. 13: margin divided by ||∧~(y) - ∧~(y_i)|| (single label)",
)

# Shared SVM
_SHARED = {
    "lam": replace(
        _LAM, help="weight of the shared norm against the summed loss (eq. 14); C = 1 / (2 λ)"
    ),
    "loss": replace(
        _LOSS,
        default="zero_one",
        choices=(*FIXED_LOSSES, NORMALIZED_LOSS),
        help="structural error of eq. 14: a fixed Δ(l, l_i), or 'normalized': NHSVM's Δ~ of "
        "eq. 9 with the learned alpha",
        note="The margin required against each wrong label. Eq. (14) fixes it, Δ~ = Δ(l, l_i) "
        "('we no longer normalize the margins, only the regularization'): 0/1 (the default; "
        "SSVM is then the multi-class SVM when sharing does not pay, Table 1), Hamming or its "
        "square root. 'normalized' keeps NHSVM's normalised error of eq. (9), Δ~(l, l_i) = "
        "sqrt(sum of alpha_n over the symmetric difference of the two paths), recomputed from "
        "the learned alpha after every alpha step (the alpha step itself is Algorithm 1's, "
        "which ignores the loss: the alternation is then a heuristic on a non-convex problem). "
        "Pegasos only: BCFW's certificate assumes a Δ that does not move with alpha.",
    ),
    "tol": replace(
        _TOL,
        default=None,
        help="relative: Pegasos' per-round improvement (None: 1e-3), or BCFW's certified "
        "joint gap (None: 5e-2)",
        note="Relative tolerance: Pegasos stops when an alpha round improves the objective by "
        "less than tol (None: 1e-3), BCFW when the certified gap of the joint problem is "
        "below tol times the objective (None: 5e-2). The alternation's joint gap closes "
        "slowly while the predictions settle in the first few rounds.",
    ),
    "solver": replace(
        _SOLVER,
        default="auto",
        choices=("auto", "pegasos", "bcfw"),
        note="auto: bcfw on sparse rows (text), pegasos on dense ones or with alpha_floor > 0; "
        "the fitted `solver_` says which ran. pegasos: Section 7.2's alternation with SGD "
        "epochs on V. bcfw: exact, warm-started V-steps by block-coordinate Frank-Wolfe with "
        "a certified lower bound on the joint optimum (on text more accurate than Pegasos, "
        "and faster).",
        help="auto (BCFW on text, else Pegasos), Pegasos epochs on V (the paper) or exact "
        "V-steps by BCFW with a certified lower bound on the joint optimum",
    ),
}
_ROUNDS = Param(
    "rounds",
    "int",
    5,
    low=1,
    help="maximum alpha updates (Algorithm 1)",
    note="How many times alpha is re-optimised in closed form (Algorithm 1).",
)
_EPOCHS_PER_ALPHA = Param(
    "epochs_per_alpha",
    "int",
    5,
    low=1,
    label_text="epochs per α update",
    help="Pegasos epochs on V between alpha updates",
    note="Pegasos epochs on V between two alpha updates.",
)
_ALPHA_FLOOR = Param(
    "alpha_floor",
    "float",
    0.0,
    low=0.0,
    high=1.0,
    symbol="β",
    help="not in the paper: keep alpha >= β alpha_init at every alpha step (0 = Algorithm 1, "
    "1 = NHSVM's fixed alpha)",
    note="An extension, not seed 003's: each alpha step solves eq. (20) with the extra bounds "
    "alpha >= β alpha_init, so β = 0 is the paper's Shared SVM and β = 1 keeps NHSVM's alpha. "
    "Pegasos alternation only; choose it on a hold-out set like lambda.",
)
_ALPHA_INIT = Param(
    "alpha_init",
    "str",
    "eq6",
    choices=ALPHA_RULES,
    label_text="initial α",
    help="initial alpha",
    note="Starting alpha: eq. (6) or eq. (7).",
)


def _amend(
    params: tuple[Param, ...], drop: Iterable[str] = (), add: Iterable[Param] = ()
) -> tuple[Param, ...]:
    """A subclass's declaration, from its parent's.

    Parameters
    ----------
    params : tuple of Param
        The parent's ``_parameters``.
    drop : iterable of str
        Names the subclass's constructor does not take.
    add : iterable of Param
        Each replaces the parent's Param of its name, in place, or is appended.

    Returns
    -------
    tuple of Param
    """
    new = {p.name: p for p in add}
    kept = tuple(new.pop(p.name, p) for p in params if p.name not in set(drop))
    return kept + tuple(new.values())


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
    # an internal node of a set without any of its children in the set (still sparse)
    return (Yc[:, internal] > kids_in[:, internal]).nnz == 0


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


def density(X: Any) -> float:
    """The fraction of non-zero entries of ``X`` (dense or sparse); 0 for an empty matrix."""
    size = X.shape[0] * X.shape[1]
    if not size:
        return 0.0
    nnz = X.count_nonzero() if sp.issparse(X) else np.count_nonzero(X)
    return float(nnz) / float(size)


def resolve_solver(solver: str, hinge: HierarchicalHinge) -> str:
    """The solver ``solver="auto"`` stands for on ``hinge``'s training data.

    BCFW (certified) for single-label sparse rows (text: at most :data:`AUTO_MAX_DENSITY` of
    the entries of X non-zero, dense or CSR storage alike). On a tree it forms the labels on
    the fly and keeps the labels with mass only (:func:`~hierlab.methods.nhsvm.dual.
    implicit_labels`): O(m D + n) beside ``W`` at any number of classes. On a DAG it needs
    explicit dual tables, so it is chosen there while they,
    estimated as ``labels x candidates x 2 (path length)`` sparse entries of 12 bytes (three
    times that while they are built: the peak of the set-up), take
    no more than the weights (``n_nodes x n_features`` floats) or
    :data:`AUTO_TABLE_MAX_BYTES`, whichever is larger, and its dual variables,
    ``examples x candidates`` floats, at most :data:`AUTO_DUAL_MAX_BYTES` (IPC titles, 645
    leaves: tables of about 85 MB beside 153 MB of weights, duals 271 MB); so the fit stays
    O(m d) in memory. Pegasos for multi-label data, dense rows and above those sizes.
    As liblinear advises for its own dual solvers, the dual converges fast on sparse
    high-dimensional rows and slowly on dense low-dimensional ones: at C = 1 BCFW certifies a
    1% gap on 20 Newsgroups in 9 epochs (Pegasos' 30 epochs take several times as long and
    end at J = 0.140 against the optimum's 0.133), while on seed 003's balanced synthetic
    set (dense) its 30 epochs end at J = 0.095 against Pegasos' 0.015. Any other value of
    ``solver`` is returned as it is.

    Parameters
    ----------
    solver : {"auto", "pegasos", "bcfw"}
    hinge : HierarchicalHinge
        The objective with its training rows.

    Returns
    -------
    {"pegasos", "bcfw"}
    """
    if solver != "auto":
        return solver
    if hinge.multilabel or density(hinge.X) > AUTO_MAX_DENSITY:
        return "pegasos"
    if implicit_labels(hinge):  # no tables on a tree: O(m D + n) beside W
        return "bcfw"
    n_cand = len(hinge.candidates)
    path = float(np.diff(hinge.C_cand.indptr).mean()) if n_cand else 0.0
    # 12 bytes per entry (value and column), about three times over while they are built
    tables = len(hinge.label_nodes) * n_cand * 2.0 * path * 12.0 * 3.0
    duals = hinge.n_samples * (n_cand + 1) * 8.0
    weights = hinge.coef_shape[0] * hinge.coef_shape[1] * 8.0
    fits = tables <= max(weights, AUTO_TABLE_MAX_BYTES) and duals <= AUTO_DUAL_MAX_BYTES
    return "bcfw" if fits else "pegasos"


class HSVMClassifier(HierarchicalClassifier):
    """Hierarchical structured SVM (Cai & Hofmann 2004; seed 003 eq. 2-3), by BCFW or Pegasos.

    ``min_W lam ||W||_F^2 + sum_i max_y [ sum_{n in y} W_n x_i - sum_{n in y_i} W_n x_i
    + Δ(y, y_i) ]`` (eq. 3, the loss summed over the N rows as in the paper).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Tree or DAG; None = flat (then HSVM is the multi-class SVM of Crammer & Singer).
    lam : float, default 1.0
        The paper's ``lambda`` (> 0), on the summed loss: ``lambda ||W||^2 + sum_i xi_i`` is
        ``2 lambda`` times scikit-learn's ``1/2 ||W||^2 + C sum_i xi_i`` with
        ``C = 1 / (2 lambda)`` (1.0 is C = 0.5, :data:`HSVM_DEFAULT_LAM`: the one C within a
        point of LinearSVC on both 20 Newsgroups and IPC titles; 0.5 is C = 1). The solvers
        work on the same objective divided by N (``lambda / N`` against the mean loss), so
        ``objective_``, ``lower_bound_`` and ``history_`` are on that per-row scale.
    loss : {"hamming", "sqrt_hamming", "zero_one"}, default "zero_one"
        Single-label structural error ``Δ``, a row of the shared loss table
        (:mod:`hierlab.core.losses`). The default 0/1 makes HSVM the multi-class SVM of
        Crammer & Singer on the path features ``∧(y) ⊗ x`` (the best exact accuracy: 0.476
        on IPC at C = 1, against 0.454 with Hamming); the paper's eq. (2) is Hamming
        ``|y Δ y'|`` (``preset="paper"``).
    ml_loss : {"auto", "leaves", "nodes"}, default "auto"
        Multi-label decomposable error: ``Δ_L`` of Section 7.1 (Hamming distance on leaves) or
        Hamming on all nodes; ``"auto"`` uses leaves for leaf-terminated label sets, else nodes.
    label_space : {"auto", "leaves", "closed"}, default "auto"
        Multi-label label space: ``Y_m`` (unions of root-to-leaf paths, Section 3) or every
        ancestor-closed set; ``"auto"`` picks ``"leaves"`` when all training sets are of that
        form.
    epochs : int or None, default None
        Maximum BCFW passes over the examples or Pegasos epochs (>= 1; None:
        :data:`BCFW_EPOCHS` = 100 or :data:`PEGASOS_EPOCHS` = 30).
    batch_size : int, default 64
        Rows per Pegasos step (>= 1).
    tol : float or None, default None
        Relative tolerance (>= 0): BCFW stops when the certified gap is below ``tol`` times the
        objective (None: 1e-3), SGD when an epoch improves the objective by less than ``tol``
        (relative; None: 1e-4).
    random_state : int, numpy Generator or None, default 0
        Seed of the Pegasos sampling order (None: fresh randomness each fit), or of BCFW's
        visiting order (None: seed 0).
    solver : {"auto", "bcfw", "pegasos"}, default "auto"
        ``"bcfw"``: block-coordinate Frank-Wolfe on the dual of the same objective
        (:mod:`hierlab.methods.nhsvm.dual`), single label only, with a certified lower bound
        (``lower_bound_``); ``epochs`` caps its passes; its dual tables hold a sparse row per
        (training label, leaf). ``"pegasos"``: mini-batch SGD with iterate averaging (the
        paper's solver; every label space; no certificate). ``"auto"``: BCFW for single-label
        sparse data while its tables and dual variables are small (:func:`resolve_solver`),
        else Pegasos; ``solver_`` says which ran.
    inference : {"lp", "ip"}, default "lp"
        Multi-label data on a DAG: train on the LP relaxation of the loss-augmented inference
        (eq. 19), as seed 003 does (default: the paper's training, an upper bound of the exact
        loss that is still convex, with no integer program solved while training), or on the
        exact IP (fractional LP rows re-solved by :func:`scipy.optimize.milp`). Trees and single
        labels are exact either way; prediction is always exact.

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
        A certified lower bound of the optimum (BCFW; NaN for Pegasos).
    solver_ : {"bcfw", "pegasos"}
        The solver that ran (what ``solver="auto"`` chose).
    multilabel_ : bool
    leaf_terminated_ : bool
        The multi-label label space used.
    """

    _supports_multilabel = True
    _supports_dag = True
    _budget_param = "epochs"

    def _rebuild_derived(self) -> dict[str, Any]:
        """The objective model's candidates (the leaves) and class-attribute matrices, from
        ``taxonomy_`` and ``class_attributes_``."""
        tax = self.taxonomy_
        c = np.asarray(self.class_attributes_, dtype=np.float64).copy()
        c[0] = 0.0
        C = class_attribute_matrix(tax, c)
        multi = bool(getattr(self, "multilabel_", False))  # every node a candidate: none kept
        return {
            "_objective_model_.candidates": None if multi else np.asarray(tax.leaves),
            "_objective_model_.c": c,
            "_objective_model_.C": C,
            "_objective_model_.C_cand": sp.csr_matrix(C[tax.leaves]),
        }
    _parameters: ClassVar[tuple[Param, ...]] = (
        _HSVM_LAM,
        _LOSS,
        _ML_LOSS,
        _LABEL_SPACE,
        _EPOCHS,
        _BATCH_SIZE,
        _TOL,
        _SEED,
        _SOLVER,
        _INFERENCE,
        _PEGASOS,
    )

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        lam: float = HSVM_DEFAULT_LAM,
        loss: str = "zero_one",
        ml_loss: str = "auto",
        label_space: str = "auto",
        epochs: int | None = None,
        batch_size: int = 64,
        tol: float | None = None,
        random_state: Any = 0,
        solver: str = "auto",
        inference: str = "lp",
        pegasos: str = "fast",
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.pegasos = pegasos
        self.lam = lam
        self.loss = loss
        self.ml_loss = ml_loss
        self.label_space = label_space
        self.epochs = epochs
        self.batch_size = batch_size
        self.tol = tol
        self.random_state = random_state
        self.solver = solver
        self.inference = inference

    # ---------------------------------------------------------------- hooks for the variants
    def _alpha(self, tax: Taxonomy) -> np.ndarray | None:
        return None

    def _single_loss(self) -> str:
        return str(self.loss)

    def _variant(self) -> str:
        return "margin"

    # ---------------------------------------------------------------- fitting
    def _objective(self, X: Any, Y: Any, c: np.ndarray, alpha: Any) -> HierarchicalHinge:
        """The primal objective on the training data; sets ``multilabel_``, ``leaf_terminated_``."""
        tax = self.taxonomy_
        self.multilabel_ = sp.issparse(Y)
        if self.multilabel_:
            if self.label_space == "auto":
                lt = is_leaf_terminated(Y, tax)
            else:
                lt = self.label_space == "leaves"
            loss = self.ml_loss
            if loss == "auto":
                loss = "leaves" if lt else "nodes"
        else:
            lt, loss = True, self._single_loss()
        self.leaf_terminated_ = lt
        return HierarchicalHinge(
            X,
            Y,
            tax,
            c,
            float(self.lam) / X.shape[0],  # the paper's summed loss, divided by N
            loss,
            alpha,
            self._variant(),
            leaf_terminated=lt,
            inference=str(getattr(self, "inference", "ip")),
        )

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        tax = self.taxonomy_
        alpha = self._alpha(tax)
        c = np.ones(tax.n_nodes) if alpha is None else np.sqrt(np.maximum(alpha, 0.0))
        c[0] = 0.0
        obj = self._objective(X, Y, c, alpha)
        self._solver_used = resolve_solver(str(self.solver), obj)
        choice = choose_solver(HINGE_SOLVERS, self._solver_used)
        solver = choice.build(self)
        run = self._run_certified if choice.certified else self._run_uncertified
        result = run(solver, choice.problem(obj), callbacks)
        if getattr(solver, "W_last", None) is not None:
            solver.W_last = None  # one (nodes x features) array less while the model is formed
        self._set_fitted(obj, np.asarray(result.coef), c, alpha, callbacks)

    def _pegasos(self) -> PegasosSGD:
        """The Pegasos solver of ``fit`` (and of each :meth:`partial_fit` block)."""
        return PegasosSGD(
            epochs=self._epochs(),
            batch_size=int(self.batch_size),
            tol=self._tol(),
            random_state=self.random_state,
            plain=self.pegasos == "plain",
        )

    def partial_fit(
        self,
        X: Any,
        y: Any,
        classes: Any = None,
        n_samples: int | None = None,
        callbacks: Iterable[Callback] = (),
    ) -> HSVMClassifier:
        """One Pegasos pass over a block of rows, continuing from the previous blocks.

        Out-of-core training (scikit-learn's convention): the blocks of one training set of
        ``n_samples`` rows, in any number of passes (:mod:`hierlab.methods.nhsvm.online`).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_rows, n_features)
            The block; every block has the same features.
        y : array-like of shape (n_rows,)
            Node names (tuples of names for multi-label rows).
        classes : array-like, optional
            Every label of the stream, needed on the first call when ``taxonomy`` is None.
        n_samples : int, optional
            ``N``, the rows of the whole training set (first call): the objective is
            ``lam ||W||^2 + sum_{i<=N} xi_i`` (eq. 3), so each block is weighed by ``lam / N``.
            Default: the first block's rows, with a warning.
        callbacks : iterable of Callback
            Called once per block with ``upper`` = the block's mean loss.

        Returns
        -------
        self
        """
        return partial_fit_blocks(self, X, y, classes, n_samples, list(callbacks))

    def _tol(self) -> float:
        """``tol``, or the solver's own default for None (:data:`BCFW_TOL`,
        :data:`PEGASOS_TOL`)."""
        if self.tol is not None:
            return float(self.tol)
        return choose_solver(HINGE_SOLVERS, self._solver_used).tol

    def _epochs(self) -> int:
        """``epochs``, or the solver's own default for None (:data:`BCFW_EPOCHS`,
        :data:`PEGASOS_EPOCHS`)."""
        if self.epochs is not None:
            return int(self.epochs)
        return choose_solver(HINGE_SOLVERS, self._solver_used).epochs

    def _what_ran(self) -> tuple[str, str]:
        used = self._solver_used
        return used, choose_solver(HINGE_SOLVERS, used).describe(self)

    def _dual_seed(self) -> int:
        """BCFW's visiting-order seed: ``random_state`` (0 for None; drawn from a Generator)."""
        rs = self.random_state
        if rs is None:
            return 0
        if isinstance(rs, int | np.integer | str):
            return int(rs)
        return int(np.random.default_rng(rs).integers(2**31 - 1))

    def _run_certified(
        self, solver: Solver, problem: Any, callbacks: Sequence[Callback]
    ) -> SolverResult:
        """Run a solver with a certified gap to ``tol`` (relative); set ``lower_bound_``."""
        result = self._run_solver(solver, problem, callbacks, tol=0.0, rtol=self._tol())
        final = result.final
        self.lower_bound_ = (
            float("nan") if final is None or final.lower is None else float(final.lower)
        )
        return result

    def _run_uncertified(
        self, solver: Solver, problem: Any, callbacks: Sequence[Callback]
    ) -> SolverResult:
        """Run a solver without a certificate (Pegasos): ``lower_bound_`` is NaN."""
        result = self._run_solver(solver, problem, callbacks)
        self.lower_bound_ = float("nan")
        return result

    def _set_fitted(
        self,
        obj: HierarchicalHinge,
        W: np.ndarray,
        c: np.ndarray,
        alpha: Any,
        callbacks: Sequence[Callback] = (),
    ) -> None:
        """The fitted attributes from the solution ``W`` (``V`` for Shared SVM).

        ``W_`` and ``coef_`` are C-ordered (Pegasos on CSR data hands ``W`` over in Fortran
        order; the objective is evaluated before the one transpose, its rows reported to the
        callbacks as the stage :data:`OBJECTIVE_AT_SOLUTION`).
        """
        t0 = time.perf_counter()

        def progress(done: int, n: int) -> None:
            report_stage(callbacks, OBJECTIVE_AT_SOLUTION, done, n, time.perf_counter() - t0)

        self.objective_ = float(obj.value(W, progress=progress if callbacks else None))
        W = np.ascontiguousarray(W)
        self.W_ = W
        self.class_attributes_ = c
        self.coef_ = c[:, None] * W
        if alpha is not None:
            self.alpha_ = np.asarray(alpha)
        obj.release_data()  # do not keep the training data
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

    def _score_weights(self) -> tuple[Any, np.ndarray]:
        """Path sums ``sum_{u in A+(v)} U_u`` of every node (the score of the label ``v``)."""
        W = self.taxonomy_.ancestor_matrix @ self.coef_
        return np.asarray(W), np.zeros(self.taxonomy_.n_nodes)

    def _candidates(self) -> np.ndarray:
        """Single label: the leaves; multi-label: every node (scored by its max-marginal)."""
        if self.multilabel_:
            return np.ones(self.taxonomy_.n_nodes, dtype=bool)
        return np.asarray(self.taxonomy_.is_leaf, dtype=bool).copy()

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Single label: path sums; multi-label: the node max-marginals of :meth:`node_scores`."""
        if self.multilabel_:
            return node_max_marginals(self._potentials(X), self.taxonomy_, self.leaf_terminated_)
        return super()._node_scores(X)

    def node_scores(self, X: Any) -> np.ndarray:
        """Per-node scores of shape (n_samples, n_nodes), columns in ``taxonomy_.names`` order.

        Single label: the score of the best leaf below each node (its max-marginal). Multi-label:
        :func:`~hierlab.methods.nhsvm.model.node_max_marginals` of the label-set model (exact
        on trees).
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
    """Normalised hierarchical SVM (seed 003, eq. 10/12, variant eq. 13), by BCFW or Pegasos.

    ``min_W lam ||W||^2 + sum_i max_y [ sum_{n in y} sqrt(alpha_n) W_n x_i
    - sum_{n in y_i} sqrt(alpha_n) W_n x_i + Δ~(y, y_i) ]`` with ``Δ~`` of eq. (9) (the
    ``"normalized"`` row of the shared loss table).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
    lam : float, default 1/3
        As in :class:`HSVMClassifier`: the paper's lambda on the summed loss,
        ``C = 1 / (2 lambda)`` (the default is C = 1.5, :data:`NHSVM_DEFAULT_LAM`).
    alpha_rule : {"eq6", "eq7", "eq6-directional"}, default "eq7"
        eq. (6) ``min sum alpha^rho``, eq. (7) ``max min alpha`` with directional constraints,
        or eq. (6) with eq. (7)'s directional constraints ``alpha_n >= alpha_p`` (Section 8.1).
        The paper picks one on a hold-out set; eq. (7) is the default (the more accurate on
        20 Newsgroups and IPC titles, :data:`NHSVM_DEFAULT_LAM`).
    rho : float, default 2.0
        Exponent of eq. (6), >= 1; eq. (6) needs rho > 1 (checked in ``fit``), eq. (7) is the
        rho = 1 rule and ignores it.
    T : float, default 1.5
        DAG relaxation of eq. (8) (``1 <= sum_{A+(l)} alpha <= T``), >= 1; unused on trees.
    variant : {"eq10", "eq13"}, default "eq10"
        eq. (10)/(12), or eq. (13) (margin divided by ``||∧~(y) - ∧~(y_i)||``, single label).
    ml_loss : {"auto", "leaves", "nodes", "alpha"}, default "auto"
        As in :class:`HSVMClassifier`; ``"alpha"`` weights the multi-label Hamming by alpha.
    label_space, epochs, batch_size, tol, random_state, solver, inference
        As in :class:`HSVMClassifier`.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_nodes,)
        The normalisation weights (root 0).
    coef_, W_, class_attributes_, objective_
        As in :class:`HSVMClassifier`.
    """

    _parameters: ClassVar[tuple[Param, ...]] = _amend(
        HSVMClassifier._parameters,
        drop=("loss",),
        add=(_NHSVM_LAM, _ML_LOSS_ALPHA, _ALPHA_RULE, _RHO, _T, _VARIANT),
    )

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        lam: float = NHSVM_DEFAULT_LAM,
        alpha_rule: str = "eq7",
        rho: float = 2.0,
        T: float = 1.5,
        variant: str = "eq10",
        ml_loss: str = "auto",
        label_space: str = "auto",
        epochs: int | None = None,
        batch_size: int = 64,
        tol: float | None = None,
        random_state: Any = 0,
        solver: str = "auto",
        inference: str = "lp",
        pegasos: str = "fast",
    ) -> None:
        # not HSVM's constructor: NHSVM has no ``loss`` parameter (its loss is eq. 9's)
        HierarchicalClassifier.__init__(self, taxonomy=taxonomy)
        self.pegasos = pegasos
        self.inference = inference
        self.lam = lam
        self.alpha_rule = alpha_rule
        self.rho = rho
        self.T = T
        self.variant = variant
        self.ml_loss = ml_loss
        self.label_space = label_space
        self.epochs = epochs
        self.batch_size = batch_size
        self.tol = tol
        self.random_state = random_state
        self.solver = solver

    def _alpha(self, tax: Taxonomy) -> np.ndarray:
        return normalization_alpha(tax, rule=self.alpha_rule, rho=float(self.rho), T=float(self.T))

    def _what_ran(self) -> tuple[str, str]:
        """The solver's text and the node weights' rule (and its rho, T where they apply)."""
        solver, text = super()._what_ran()
        rule = {"eq7": "eq. (7)", "eq6": "eq. (6)", "eq6-directional": "eq. (6) directional"}
        weights = rule.get(str(self.alpha_rule), str(self.alpha_rule))
        if self.alpha_rule != "eq7":
            weights += f", rho = {float(self.rho):g}"
        if not self.taxonomy_.is_tree:
            weights += f", T = {float(self.T):g} (eq. 8)"
        return solver, f"{text}; node weights by {weights}"

    def _single_loss(self) -> str:
        return "normalized"

    def _variant(self) -> str:
        return "eq13" if self.variant == "eq13" else "margin"


class _NoPartialFit:
    """A class attribute that no instance has: ``hasattr(est, "partial_fit")`` is False, and
    ``est.partial_fit`` raises AttributeError saying why (scikit-learn asks ``hasattr``)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        raise AttributeError(
            "Shared SVM alternates Pegasos epochs on V with alpha steps between whole epochs "
            "(seed 003, Section 7.2), so it cannot learn block by block: use fit, or "
            "hsvm/nhsvm (partial_fit) for data larger than memory"
        )


class SharedSVMClassifier(HSVMClassifier):
    """Shared SVM (seed 003, eq. 14-16): NHSVM whose weights alpha are learned (Algorithm 1).

    Alternates ``epochs_per_alpha`` Pegasos epochs on ``V`` (``U_n = sqrt(alpha_n) V_n``) with
    the closed-form alpha of Algorithm 1, for at most ``rounds`` rounds or until an alpha round
    improves the objective by less than ``tol``. Trees and single-label data only (as in the
    paper).

    Parameters
    ----------
    taxonomy : Taxonomy, optional
    lam : float, default 0.5
        As in :class:`HSVMClassifier`: the paper's lambda on the summed loss,
        ``C = 1 / (2 lambda)``.
    loss : {"hamming", "sqrt_hamming", "zero_one", "normalized"}, default "zero_one"
        The fixed (un-normalised) ``Δ(l, l_i)`` of eq. (14); 0/1 makes SSVM the multi-class SVM
        when sharing does not pay (Table 1). ``"normalized"``: NHSVM's ``Δ~(l, l_i) =
        sqrt(sum_{n in A(l) Δ A(l_i)} alpha_n)`` of eq. (9) with the current alpha, recomputed
        after every alpha step (Pegasos only).
    rounds : int, default 5
        Maximum alpha steps (>= 1).
    epochs_per_alpha : int, default 5
        Pegasos epochs (or at most this many BCFW epochs) on ``V`` between alpha steps (>= 1).
    alpha_init : {"eq6", "eq7"}, default "eq6"
        Starting weights (eq. 6 with rho = 2, or eq. 7).
    batch_size : int, default 64
    tol : float, optional
        Pegasos: stop when an alpha round improves the objective by less than ``tol``
        (relative; None: 1e-3). BCFW: the certified relative gap of the joint problem (then
        ``tol > 0``; None: :data:`SSVM_BCFW_TOL`).
    random_state : int, numpy Generator or None, default 0
        Seed of the Pegasos sampling order (None: fresh randomness each fit).
    solver : {"auto", "pegasos", "bcfw"}, default "auto"
        Section 7.2's alternation with SGD epochs on ``V``, or with exact V-steps by BCFW
        (warm-started) and a certified lower bound on the joint optimum
        (:mod:`hierlab.methods.nhsvm.shared_dual`); ``lower_bound_`` holds it. ``"auto"``:
        BCFW on sparse rows (at most :data:`AUTO_MAX_DENSITY` non-zero), Pegasos on dense ones
        and with ``alpha_floor > 0``; ``solver_`` says which ran.
    alpha_floor : float, default 0.0
        Not in seed 003: ``beta`` in ``[0, 1]``; every alpha step keeps ``alpha >= beta
        alpha0`` (eq. 20 with these bounds, :func:`~hierlab.methods.nhsvm.shared_alpha.
        shared_alpha_floor`): 0 is the paper's Algorithm 1, 1 is NHSVM's fixed alpha. Pegasos
        only (``solver="bcfw"`` certifies the paper's joint problem).

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
    _budget_param = "rounds"
    _parameters: ClassVar[tuple[Param, ...]] = _amend(
        HSVMClassifier._parameters,
        drop=("ml_loss", "label_space", "epochs", "inference"),
        add=(*_SHARED.values(), _ROUNDS, _EPOCHS_PER_ALPHA, _ALPHA_INIT, _ALPHA_FLOOR),
    )

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        lam: float = 0.5,
        loss: str = "zero_one",
        rounds: int = 5,
        epochs_per_alpha: int = 5,
        alpha_init: str = "eq6",
        batch_size: int = 64,
        tol: float | None = None,
        random_state: Any = 0,
        solver: str = "auto",
        alpha_floor: float = 0.0,
        pegasos: str = "fast",
    ) -> None:
        # not HSVM's constructor: SSVM has neither ``epochs`` nor the multi-label parameters
        HierarchicalClassifier.__init__(self, taxonomy=taxonomy)
        self.pegasos = pegasos
        self.alpha_floor = alpha_floor
        self.lam = lam
        self.loss = loss
        self.rounds = rounds
        self.epochs_per_alpha = epochs_per_alpha
        self.alpha_init = alpha_init
        self.batch_size = batch_size
        self.tol = tol
        self.random_state = random_state
        self.solver = solver

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        if sp.issparse(Y):
            raise DataError("SharedSVM is single-label (seed 003, Section 6)")
        alpha0 = normalization_alpha(self.taxonomy_, rule=self.alpha_init, rho=2.0)
        normalized = str(self.loss) == NORMALIZED_LOSS
        self._solver_used = str(self.solver)
        if normalized and self._solver_used == "bcfw":
            raise ParameterError(
                "loss='normalized' (Δ~ of eq. 9, moving with the learned alpha) runs with "
                "Pegasos V-steps only: BCFW's certified bound assumes a fixed Δ; use "
                "solver='pegasos' or 'auto'"
            )
        obj = self._objective(X, Y, np.sqrt(alpha0), alpha0 if normalized else None)
        obj.loss_follows_alpha = normalized
        if self._solver_used == "auto":
            dense = density(X) > AUTO_MAX_DENSITY
            pegasos = dense or float(self.alpha_floor) > 0 or normalized
            self._solver_used = "pegasos" if pegasos else "bcfw"
        choice = choose_solver(SHARED_SOLVERS, self._solver_used)
        solver = choice.build(self, alpha0)
        run = self._run_certified if choice.certified else self._run_uncertified
        result = run(solver, obj, callbacks)
        c = np.sqrt(solver.alpha)
        obj.set_attributes(c)
        self.alpha_history_ = solver.alpha_history
        self._set_fitted(obj, np.asarray(result.coef), c, solver.alpha, callbacks)

    partial_fit = _NoPartialFit()  # type: ignore[assignment]

    def _tol(self) -> float:
        """``tol``, or for None :data:`SSVM_BCFW_TOL` (BCFW's joint gap) or 1e-3 (Pegasos'
        improvement per round)."""
        if self.tol is not None:
            return float(self.tol)
        return choose_solver(SHARED_SOLVERS, self._solver_used).tol

    def _what_ran(self) -> tuple[str, str]:
        used = self._solver_used
        return used, choose_solver(SHARED_SOLVERS, used).describe(self)


# ------------------------------------------------------------------------------ registry
register(
    "hsvm",
    HSVMClassifier,
    card=HSVM_CARD,
    seed="003",
    summary="Hierarchical structured SVM of Cai & Hofmann (eq. 2-3), BCFW or Pegasos",
    paper={"solver": "pegasos", "loss": "hamming", "pegasos": "plain"},
    bounds=True,
)
register(
    "nhsvm",
    NHSVMClassifier,
    card=NHSVM_CARD,
    seed="003",
    summary="Normalised hierarchical SVM (eq. 10/12): normalised class attributes and margin",
    paper={"solver": "pegasos", "alpha_rule": "eq6", "rho": 2.0, "T": 1.5, "pegasos": "plain"},
    bounds=True,
)
register(
    "nhsvm13",
    NHSVMClassifier,
    card=NHSVM13_CARD,
    seed="003",
    summary="NHSVM variant of eq. 13: margin divided by ||∧~(y) - ∧~(y_i)|| (single label)",
    fixed={"variant": "eq13"},
    multilabel=False,
    paper={"solver": "pegasos", "alpha_rule": "eq6", "rho": 2.0, "T": 1.5, "pegasos": "plain"},
    bounds=True,
)
register(
    "ssvm",
    SharedSVMClassifier,
    card=SSVM_CARD,
    seed="003",
    summary="Shared SVM (eq. 14): alpha learned in closed form (Algorithm 1), trees",
    paper={"solver": "pegasos", "alpha_init": "eq6", "pegasos": "plain"},
)
