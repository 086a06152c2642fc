"""DAGSVM (Platt, Cristianini & Shawe-Taylor 2000): one-vs-one SVMs in a decision DAG.

The first baseline of seed 004's Table 2: ``K (K - 1) / 2`` pairwise linear SVMs
(:mod:`hierlab.methods.labeltree.pairwise`), evaluated at test time along a rooted binary DAG
that removes one class per node, so ``K - 1`` evaluations per example (the seed's "depth" of
DAGSVM is the number of classes).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import HierlabWarning
from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.solver import Callback
from hierlab.core.state import StateArray
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.labeltree.base import ClassScoresClassifier, seed_of
from hierlab.methods.labeltree.cards import DAGSVM_CARD
from hierlab.methods.labeltree.pairwise import dag_walk, fit_pairs
from hierlab.methods.topdown import report_one_shot

__all__ = ["DAGSVMClassifier"]


class DAGSVMClassifier(ClassScoresClassifier):
    """DAGSVM: ``K (K - 1) / 2`` one-vs-one linear SVMs evaluated in a decision DAG.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        Names the allowed labels (flat when None); the prediction is one of the training labels.
    C : float, default 1.0
        Weight of each pairwise SVM's summed hinge loss (LinearSVC's ``C``).
    tol : float, default 0.1
        Stop a pair when its projected-gradient spread over a pass is at most ``tol``.
    max_passes : int, default 1000
        Cap on the passes of each pair.
    random_state : int, optional
        Seed of the visiting order.

    Attributes
    ----------
    class_nodes_ : ndarray of int, shape (K,)
        Node ids of the training labels: the DAG's list, in this order.
    pair_coef_ : csr_matrix of shape (K (K - 1) / 2, n_features), float32
        ``w_ij`` of every pair ``i < j`` (row :func:`~hierlab.methods.labeltree.pairwise.
        pair_index`), positive towards class ``i``.
    pair_intercept_ : ndarray of shape (K (K - 1) / 2,)
    n_passes_ : ndarray of int, shape (K (K - 1) / 2,)
    depth_ : int
        ``K - 1``: the SVMs evaluated per example.
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
            help="weight of each pairwise SVM's summed hinge loss",
            note="LinearSVC's C for every one-vs-one SVM; 0.1-10 on TF-IDF text.",
        ),
        Param(
            "tol", "float", 0.1, low=0.0, low_open=True, log=True,
            help="stop a pair at this projected-gradient spread",
            note="Dual CD stops a pair when max PG - min PG over a pass is below it "
            "(liblinear's rule and its default for the dual solvers, 0.1).",
        ),
        Param(
            "max_passes", "int", 1000, low=1,
            help="cap on the passes of each pairwise SVM",
            note="Passes over a pair's rows; a pair at the cap is reported in a warning.",
        ),
        Param("random_state", "seed", 0, help="seed of the visiting order"),
    )  # fmt: skip

    _state_arrays: ClassVar[tuple[StateArray, ...]] = (
        StateArray("pair_coef_", "f", ("n_pairs", "n_features"), sparse=True),
        StateArray("pair_intercept_", "f", ("n_pairs",)),
        StateArray("n_passes_", "i", ("n_pairs",)),
    )

    def _state_dims(self) -> dict[str, int]:
        k = len(getattr(self, "classes_", ()))
        return {**super()._state_dims(), "n_pairs": k * (k - 1) // 2}

    def __init__(
        self,
        *,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        tol: float = 0.1,
        max_passes: int = 1000,
        random_state: int | None = 0,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.tol = tol
        self.max_passes = max_passes
        self.random_state = random_state

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        yi = self._set_classes(Y)
        K = len(self.class_nodes_)
        t0 = time.perf_counter()
        W, b, passes, conv = fit_pairs(
            sp.csr_matrix(X), yi, K, float(self.C), tol=float(self.tol),
            max_passes=int(self.max_passes), seed=seed_of(self.random_state),
        )  # fmt: skip
        self.pair_coef_ = W
        self.pair_intercept_ = b
        self.n_passes_ = passes
        self.depth_ = max(K - 1, 0)
        if not conv.all():
            import warnings

            warnings.warn(
                f"DAGSVM: {int((~conv).sum())} of {len(conv)} pairwise SVMs stopped at "
                f"max_passes={self.max_passes} above tol={self.tol}",
                HierlabWarning,
                stacklevel=3,
            )
        extra = {"pairs": len(b), "depth": self.depth_, "weights_nnz": int(W.nnz)}
        report_one_shot(self, callbacks, time.perf_counter() - t0, extra)
        self.converged_ = bool(conv.all())

    def _predict_classes(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The class left by the DAG: ``K - 1`` pairwise SVMs per row."""
        return dag_walk(X, self.pair_coef_, self.pair_intercept_, len(self.class_nodes_))[0]

    def _class_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """The DAG step at which each class left the list (``1 .. K - 1``; the survivor
        ``K``): the order in which the DAG ruled the classes out."""
        R = dag_walk(X, self.pair_coef_, self.pair_intercept_, len(self.class_nodes_), ranks=True)[
            1
        ]
        assert R is not None
        return R

    def _what_ran(self) -> tuple[str, str]:
        return "dual-cd", (
            "DAGSVM (Platt et al. 2000): K(K-1)/2 one-vs-one linear SVMs (hinge, regularised "
            "bias; dual CD of Hsieh et al. 2008) in a decision DAG, K - 1 evaluations per example"
        )


register(
    "dagsvm",
    DAGSVMClassifier,
    card=DAGSVM_CARD,
    seed="baseline",
    summary="DAGSVM (Platt et al. 2000): one-vs-one linear SVMs evaluated in a decision DAG",
    paper={"C": 1.0},
)
