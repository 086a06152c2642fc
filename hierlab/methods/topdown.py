"""The top-down local classifier per parent node: what people use today, and the baseline.

One multiclass classifier per internal node ``p`` decides among the children of ``p``; it is
trained on the examples whose label lies below ``p`` (their target is the child of ``p`` on the
path to the label). Prediction routes every example from the root down to a leaf. This is the
"local classifier per parent node" of Silla & Freitas (2011), and the "greedy" scheme that seeds
000 (HIERMULT) and 002 compare against; HiClass calls it ``LocalClassifierPerParentNode``.

Examples labelled with an internal node ``p`` train the classifiers above ``p`` (they route to
``p``) and are scored with the ancestor rule: correct iff ``p`` lies on the predicted path.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.svm import LinearSVC

from hierlab.core.registry import Param, register
from hierlab.core.solver import Callback, SolverState
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier

__all__ = ["TopDownClassifier"]


def _child_towards(tax: Taxonomy, node: int, labels: np.ndarray) -> np.ndarray:
    """For labels in the subtree of ``node``, the child of ``node`` on the path to each label.

    Parameters
    ----------
    tax : Taxonomy (a tree)
    node : int
    labels : ndarray of int, shape (m,)
        Node ids strictly below ``node``.

    Returns
    -------
    ndarray of int, shape (m,)
    """
    A = tax.ancestor_matrix[labels]  # rows: A+(label)
    target_depth = tax.depth[node] + 1
    # the ancestor at depth d+1 is the only one whose depth equals target_depth
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    hit = tax.depth[A.indices] == target_depth
    out = np.empty(len(labels), dtype=np.int64)
    out[rows[hit]] = A.indices[hit]
    return out


def _fit_node(estimator: Any, X: Any, y: np.ndarray) -> Any:
    return clone(estimator).fit(X, y)


class TopDownClassifier(HierarchicalClassifier):
    """Top-down local classifier per parent node (LCPN) with any scikit-learn classifier.

    Parameters
    ----------
    taxonomy : Taxonomy, optional
        A tree. None: the flat taxonomy (then this is one flat multiclass classifier).
    C : float, default 1.0
        Regularisation of the default base classifier ``LinearSVC(C=C)``.
    estimator : sklearn classifier, optional
        The base classifier cloned at every internal node; overrides ``C``.
    n_jobs : int, optional
        Fit the nodes' classifiers in parallel with joblib.

    Attributes
    ----------
    node_estimators_ : dict of int -> classifier
        The fitted classifier of each internal node with at least two children seen in training.
    default_child_ : dict of int -> int
        For an internal node with fewer than two trained children: the child every example goes to.
    coef_ : ndarray of shape (n_nodes, n_features)
        For a linear base classifier, row ``c`` is the weight vector that scores child ``c`` at
        its parent (``+w``/``-w`` for a binary node); zero for the root and untrained nodes.
    """

    def __init__(
        self,
        taxonomy: Taxonomy | None = None,
        C: float = 1.0,
        estimator: Any = None,
        n_jobs: int | None = None,
    ) -> None:
        super().__init__(taxonomy=taxonomy)
        self.C = C
        self.estimator = estimator
        self.n_jobs = n_jobs

    def _base(self) -> Any:
        if self.estimator is not None:
            return self.estimator
        return LinearSVC(C=self.C)

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        tax = self.taxonomy_
        y = np.asarray(Y, dtype=np.int64)
        closed = tax.ancestor_matrix[y].tocsc()  # (n, n_nodes): example i is below node j
        jobs: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.default_child_: dict[int, int] = {}
        for p in tax.internal_nodes:
            rows = closed.indices[closed.indptr[p] : closed.indptr[p + 1]]
            rows = rows[y[rows] != p]  # examples labelled p itself stop above
            kids = tax.children(p)
            if len(rows) == 0:
                self.default_child_[int(p)] = int(kids[0])
                continue
            target = _child_towards(tax, int(p), y[rows])
            seen = np.unique(target)
            if len(seen) < 2:
                self.default_child_[int(p)] = int(seen[0])
                continue
            jobs.append((int(p), rows, target))
        base = self._base()
        t0 = time.perf_counter()
        fitted = Parallel(n_jobs=self.n_jobs)(
            delayed(_fit_node)(base, X[rows], target) for _, rows, target in jobs
        )
        self.node_estimators_ = {p: est for (p, _, _), est in zip(jobs, fitted)}
        coef = np.zeros((tax.n_nodes, X.shape[1]))
        for est in self.node_estimators_.values():
            w = getattr(est, "coef_", None)
            if w is None:
                continue
            w = np.asarray(w.toarray() if sp.issparse(w) else w)
            classes = np.asarray(est.classes_, dtype=np.int64)
            if w.shape[0] == 1 and len(classes) == 2:
                coef[classes[1]] = w[0]
                coef[classes[0]] = -w[0]
            else:
                coef[classes] = w
        self.coef_ = coef
        state = SolverState(
            iteration=1,
            elapsed=time.perf_counter() - t0,
            upper=float("nan"),
            lower=None,
            extra={"n_node_classifiers": len(jobs)},
            converged=True,
        )
        for cb in callbacks:
            cb(state)
        self.history_ = pd.DataFrame([state.as_dict()])
        self.n_iter_ = 1
        self.converged_ = True

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        tax = self.taxonomy_
        n = X.shape[0]
        at = np.zeros(n, dtype=np.int64)
        internal = ~tax.is_leaf
        for _ in range(tax.max_depth):
            active = np.flatnonzero(internal[at])
            if len(active) == 0:
                break
            order = active[np.argsort(at[active], kind="stable")]
            nodes, starts = np.unique(at[order], return_index=True)
            for p, rows in zip(nodes, np.split(order, starts[1:])):
                est = self.node_estimators_.get(int(p))
                if est is None:
                    at[rows] = self.default_child_[int(p)]
                else:
                    at[rows] = np.asarray(est.predict(X[rows]), dtype=np.int64)
        return at


register(
    "topdown",
    TopDownClassifier,
    params=[
        Param(
            "C",
            "float",
            1.0,
            low=1e-6,
            high=1e6,
            log=True,
            help="LinearSVC regularisation at each parent node (larger = less regularised)",
        ),
    ],
    seed="baseline",
    summary="Top-down local classifier per parent node (one LinearSVC per internal node)",
)
