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
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.svm import LinearSVC

from hierlab.core.cards import ONE_SHOT_BOUNDS, MethodCard
from hierlab.core.cluster import run_tasks, share
from hierlab.core.exceptions import ModelFileError
from hierlab.core.params import Param
from hierlab.core.registry import register
from hierlab.core.solver import Callback, SolverState, report_work
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.guards import check_liblinear_scale, is_liblinear

__all__ = ["TOPDOWN_CARD", "TopDownClassifier", "report_one_shot"]


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


def _fit_node(X: Any, estimator: Any, rows: np.ndarray, y: np.ndarray) -> Any:
    """A fitted clone of ``estimator`` on ``X[rows]`` (one node's classifier; a task of
    :func:`~hierlab.core.cluster.run_tasks`: ``X`` is shared once per fit, the rows are the
    task's own)."""
    return clone(estimator).fit(X[rows], y)


#: a node classifier whose work (rows x binary problems) exceeds this is fitted one binary
#: problem at a time (:func:`_split_ovr`), so that no single liblinear call runs for long:
#: the progress moves and a stop is taken between them
SPLIT_WORK = 100_000


def _splits(base: Any, target: np.ndarray) -> np.ndarray | None:
    """The children whose one-vs-rest problems a node's classifier is fitted as, one call
    each; None to fit it in one call (two children, small work, or a base that is not
    liblinear's one-vs-rest ``LinearSVC`` without class weights)."""
    if not isinstance(base, LinearSVC) or base.multi_class != "ovr":
        return None
    if base.class_weight is not None:
        return None
    children = np.unique(target)
    if len(children) <= 2 or len(target) * len(children) <= SPLIT_WORK:
        return None
    return children


def _join_ovr(base: Any, children: np.ndarray, parts: list[Any]) -> Any:
    """One ``LinearSVC`` from the binary fits of its one-vs-rest problems (``parts[j]``:
    ``children[j]`` against its siblings, classes ``[0, 1]``): liblinear's multiclass
    one-vs-rest solves the same problems one after the other (in one call, its random
    coordinate orders drawn from one seed: the weights agree to its tolerance)."""
    est = clone(base)
    est.classes_ = np.asarray(children)
    est.coef_ = np.vstack([np.asarray(p.coef_) for p in parts])
    est.intercept_ = np.concatenate([np.ravel(p.intercept_) for p in parts])
    est.n_features_in_ = parts[0].n_features_in_
    est.n_iter_ = max(int(np.max(p.n_iter_)) for p in parts)
    return est


def report_one_shot(
    estimator: HierarchicalClassifier,
    callbacks: Sequence[Callback],
    elapsed: float,
    extra: dict[str, Any],
) -> None:
    """Report a fit without an iterative solver: one converged state, no objective, no bound.

    Calls every callback with that state and sets ``history_``, ``n_iter_`` and
    ``converged_`` of ``estimator``.

    Parameters
    ----------
    estimator : HierarchicalClassifier
    callbacks : sequence of Callback
    elapsed : float
        Seconds the fit took.
    extra : dict
        Method-specific numbers of the state (tree depth, number of node classifiers ...).
    """
    state = SolverState(
        iteration=1,
        elapsed=elapsed,
        upper=float("nan"),
        lower=None,
        extra=extra,
        converged=True,
    )
    for cb in callbacks:
        cb(state)
    estimator.history_ = pd.DataFrame([state.as_dict()])
    estimator.n_iter_ = 1
    estimator.converged_ = True


def _tasks(
    base: Any, jobs: list[tuple[int, np.ndarray, np.ndarray]]
) -> tuple[list[tuple[int, np.ndarray, np.ndarray, int]], list[tuple[list[int], Any]]]:
    """The liblinear calls of the node classifiers: ``(node, rows, y, binary problems)``, one
    per node, or one per child for a node fitted problem by problem (:func:`_splits`: ``y``
    is 1 for that child, 0 for its siblings); and, per node, the indices of its calls and its
    split children (None: one call)."""
    tasks: list[tuple[int, np.ndarray, np.ndarray, int]] = []
    owner: list[tuple[list[int], Any]] = []
    for p, rows, target in jobs:
        children = _splits(base, target)
        if children is None:
            owner.append(([len(tasks)], None))
            k = len(np.unique(target))
            tasks.append((p, rows, target, 1 if k <= 2 else k))
            continue
        owner.append((list(range(len(tasks), len(tasks) + len(children))), children))
        tasks += [(p, rows, (target == c).astype(np.int64), 1) for c in children]
    return tasks, owner


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """``np.concatenate(parts)``, or an empty array of ``dtype`` when there are none."""
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


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
        Fit the nodes' classifiers in parallel with joblib. On a dask.distributed cluster
        (:func:`hierlab.connect`), they run on its workers, ``X`` sent to each worker once.

    Attributes
    ----------
    node_estimators_ : dict of int -> classifier
        The fitted classifier of each internal node with at least two children seen in training.
    default_child_ : dict of int -> int
        For an internal node with fewer than two trained children: the child every example goes to.
    coef_ : ndarray or csr_matrix of shape (n_nodes, n_features)
        For a linear base classifier, row ``c`` is the weight vector that scores child ``c`` at
        its parent (``+w``/``-w`` for a binary node); zero for the root and untrained nodes.
        CSR when ``X`` is (a node's classifier weighs only its examples' features).
    """

    _parameters: ClassVar[tuple[Param, ...]] = (
        Param(
            "C",
            "float",
            1.0,
            low=0.0,
            log=True,
            symbol="C",
            help="LinearSVC regularisation at each parent node (larger = less regularised)",
            note="LinearSVC regularisation at each parent node; 0.1-10, larger = less "
            "regularised. The default LinearSVC needs C > 0; ignored when estimator is given.",
            used_when={"estimator": (None,)},
        ),
        Param(
            "estimator",
            "object",
            None,
            help="base classifier cloned at every internal node (overrides C)",
        ),
        Param(
            "n_jobs",
            "int",
            None,
            help="joblib workers fitting the node classifiers (-1 = every core)",
        ),
    )

    def __init__(
        self,
        *,
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
        """The classifier cloned at every node: ``estimator``, else ``LinearSVC(C=C)`` with a
        fixed seed of liblinear's coordinate order (unseeded, it draws from numpy's global
        state: two fits of the same data would differ by its tolerance)."""
        if self.estimator is not None:
            return self.estimator
        return LinearSVC(C=self.C, random_state=0)

    def _fit(self, X: np.ndarray | sp.csr_matrix, Y: Any, callbacks: Sequence[Callback]) -> None:
        base = self._base()
        if is_liblinear(base):
            check_liblinear_scale(X, type(self).__name__)
        jobs = self._node_jobs(np.asarray(Y, dtype=np.int64))
        tasks, owner = _tasks(base, jobs)
        t0 = time.perf_counter()
        cost = np.cumsum([float(len(rows) * w) for _, rows, _, w in tasks])
        total = float(cost[-1]) if len(cost) else 0.0
        items = [(base, rows, y) for _, rows, y, _ in tasks]
        fitted: list[Any] = []
        report_work(callbacks, 0, len(tasks), 0.0, cost=(0.0, total))
        for est in run_tasks(_fit_node, items, share(X), n_jobs=self.n_jobs):
            fitted.append(est)  # each problem as it is fitted: progress, and a stop between
            elapsed = time.perf_counter() - t0
            done = (float(cost[len(fitted) - 1]), total)
            report_work(callbacks, len(fitted), len(tasks), elapsed, cost=done)
        self.node_estimators_ = {}
        for (p, _, _), (calls, children) in zip(jobs, owner):
            mine = [fitted[i] for i in calls]
            self.node_estimators_[p] = (
                mine[0] if children is None else _join_ovr(base, children, mine)
            )
        self.coef_ = self._stack_coef(X.shape[1], sp.issparse(X))
        report_one_shot(
            self, callbacks, time.perf_counter() - t0, {"n_node_classifiers": len(jobs)}
        )

    def _check_state(self) -> None:
        """A loaded router: every internal node has a classifier over two or more of its
        children (``classes_`` sorted, weights of shape (1 or k, n_features)) or one default
        child, never both."""
        tax = self.taxonomy_
        ests, defaults = self.node_estimators_, self.default_child_
        owner = type(self).__name__
        if not isinstance(ests, dict) or not isinstance(defaults, dict):
            raise ModelFileError(f"{owner}.node_estimators_: must be dicts of nodes")
        internal = {int(p) for p in range(tax.n_nodes) if len(tax.children(p))}
        if set(ests) | set(defaults) != internal or set(ests) & set(defaults):
            raise ModelFileError(
                f"{owner}.node_estimators_: every internal node needs one classifier or one "
                "default child (default_child_), not both"
            )
        for p, child in defaults.items():
            if int(child) not in set(map(int, tax.children(p))):
                raise ModelFileError(f"{owner}.default_child_[{p}]: not a child of node {p}")
        for p, est in ests.items():
            _check_router(est, set(map(int, tax.children(p))), int(self.n_features_in_),
                          f"{owner}.node_estimators_[{p}]")  # fmt: skip

    def _sparse_weights(self) -> bool:
        """``coef_`` is CSR for CSR ``X`` (:meth:`_stack_coef`), and sparse by construction
        for a liblinear base (``w = sum_i alpha_i y_i x_i``); another estimator may weigh
        every feature, so the dense-weights guard still applies to it."""
        return is_liblinear(self._base())

    def _what_ran(self) -> tuple[str, str]:
        base = self._base()
        name = type(base).__name__
        solver = "liblinear" if is_liblinear(base) else name
        return solver, f"top-down: one {name} per internal node, routing from the root"

    def _node_jobs(self, y: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """``(node, rows, child targets)`` of every internal node with two trained children.

        Every other internal node gets a ``default_child_``: its only child seen in training,
        or its first child when no training example lies below it.
        """
        tax = self.taxonomy_
        closed = tax.ancestor_matrix[y].tocsc()  # (n, n_nodes): example i is below node j
        jobs: list[tuple[int, np.ndarray, np.ndarray]] = []
        self.default_child_: dict[int, int] = {}
        for p in tax.internal_nodes:
            rows = closed.indices[closed.indptr[p] : closed.indptr[p + 1]]
            rows = rows[y[rows] != p]  # examples labelled p itself stop above
            if len(rows) == 0:
                self.default_child_[int(p)] = int(tax.children(p)[0])
                continue
            target = _child_towards(tax, int(p), y[rows])
            seen = np.unique(target)
            if len(seen) < 2:
                self.default_child_[int(p)] = int(seen[0])
                continue
            jobs.append((int(p), rows, target))
        return jobs

    def _stack_coef(self, n_features: int, sparse: bool) -> np.ndarray | sp.csr_matrix:
        """Row ``c``: the weight vector scoring child ``c`` at its parent (linear bases).

        For CSR ``X`` (``sparse``), a CSR matrix: a node's classifier sees only its own
        examples' features and, by liblinear's ``w = sum_i alpha_i y_i x_i``, weighs no
        other, so the stacked rows are mostly zero on many classes (a CMTL tree of 3,000
        classes over 2 x 10^4 features: 7% dense; at 10^4 classes, 2 x 10^4 nodes, the dense
        array would be 3.2 GB). For dense ``X``, an ndarray filled in place."""
        m = self.taxonomy_.n_nodes
        if not sparse:
            coef = np.zeros((m, n_features))
            for children, W in self._child_weights():
                coef[children] = W.toarray() if sp.issparse(W) else W
            return coef
        rows: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for children, W in self._child_weights():
            Wc = sp.coo_matrix(W)
            rows.append(children[Wc.row])
            cols.append(Wc.col)
            vals.append(Wc.data)
        return sp.csr_matrix(
            (_concat(vals, np.float64), (_concat(rows, np.int64), _concat(cols, np.int64))),
            shape=(m, n_features),
        )

    def _child_weights(self) -> Iterator[tuple[np.ndarray, Any]]:
        """``(children, W)`` of every linear node classifier: ``W`` (dense or sparse, as the
        classifier holds it) has one row per child in ``children`` (a binary node: ``+w``
        for ``classes_[1]``, ``-w`` for ``classes_[0]``)."""
        for est in self.node_estimators_.values():
            w = getattr(est, "coef_", None)
            if w is None:
                continue
            classes = np.asarray(est.classes_, dtype=np.int64)
            if w.shape[0] == 1 and len(classes) == 2:
                pair = sp.vstack([w, -w]) if sp.issparse(w) else np.vstack([w, -w])
                yield classes[[1, 0]], pair
            else:
                yield classes, w

    def _routing(self) -> str:
        return "recursive"

    def _is_linear(self) -> bool:
        """Every node classifier has ``coef_`` (scores linear in the features)."""
        return all(getattr(e, "coef_", None) is not None for e in self.node_estimators_.values())

    def _score_weights(self) -> tuple[Any, np.ndarray] | None:
        """``coef_`` and the node classifiers' intercepts; None for a non-linear base."""
        return (self.coef_, self._offsets()) if self._is_linear() else None

    def _offsets(self) -> np.ndarray:
        """Per node: its classifier's intercept (as ``coef_``), ``+1``/``-1`` for the default
        child and its siblings, ``-inf`` for a child its trained parent never saw."""
        tax = self.taxonomy_
        b = np.zeros(tax.n_nodes)
        for p, est in self.node_estimators_.items():
            b[tax.children(p)] = -np.inf
            classes = np.asarray(est.classes_, dtype=np.int64)
            ic = np.ravel(getattr(est, "intercept_", np.zeros(len(classes))))
            if len(classes) == 2 and len(ic) == 1:
                b[classes[1]], b[classes[0]] = ic[0], -ic[0]
            else:
                b[classes] = ic
        for p, c in self.default_child_.items():
            b[tax.children(p)] = -1.0
            b[c] = 1.0
        return b

    def _node_scores(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Each node's score at its parent: ``decision_function`` (or ``predict_proba``) of
        the parent's classifier (binary: ``+d`` for ``classes_[1]``, ``-d`` for the other)."""
        if self._is_linear():
            return super()._node_scores(X)
        S = np.tile(self._offsets(), (X.shape[0], 1))
        for est in self.node_estimators_.values():
            classes = np.asarray(est.classes_, dtype=np.int64)
            if hasattr(est, "decision_function"):
                d = np.asarray(est.decision_function(X))
            else:
                d = np.asarray(est.predict_proba(X))
            if d.ndim == 1:
                S[:, classes[1]], S[:, classes[0]] = d, -d
            else:
                S[:, classes] = d
        return S

    def _predict_ids(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray:
        """Route every row from the root to a leaf, level by level, one batch per node."""
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


#: the method card (:mod:`hierlab.core.cards`); the parameter rows come from ``_parameters``
TOPDOWN_CARD = MethodCard(
    display_name="Top-down local classifier per parent node",
    paper_algorithm="top-down: one LinearSVC per internal node, routing from the root",
    title="Top-down local classifier per parent node",
    idea=(
        "What most practitioners use: at every internal node a multiclass LinearSVC "
        "chooses a child, trained on the examples below that node; prediction walks from "
        "the root to a leaf. The 'greedy' scheme that seeds 000 and 002 compare against."
    ),
    objective=(
        r"\forall p \notin \mathcal L,\ c \in \mathcal C(p):\ \min_{w_c, b_c}\ "
        r"\frac12\|w_c\|^2 + C\sum_{k:\, y_k \in \mathcal D(p)}\big[1 - s_{kc}(w_c^\top x_k"
        r" + b_c)\big]_+^2,\quad s_{kc} = \pm 1 \ (c = c_k \text{ or not})"
    ),
    equations="Silla & Freitas (2011) 'local classifier per parent node'; HIERMULT of seed "
    "000 with liblinear",
    prediction=r"f(x):\ i \leftarrow 0;\ \text{while } \mathcal C(i) \neq \emptyset:\ "
    r"i \leftarrow \arg\max_{c \in \mathcal C(i)} w_c^\top x + b_c",
    symbols=r"$c_k$: the child of $p$ on the path to $y_k$ (LinearSVC's one-vs-rest "
    "squared hinge with an intercept; binary nodes use one vector).",
    solver="liblinear (LinearSVC) at each internal node, in parallel over nodes.",
    bounds=ONE_SHOT_BOUNDS,
    citation="C. Silla, A. Freitas. *A survey of hierarchical classification across "
    "different application domains.* DMKD 2011; S. Dumais, H. Chen, SIGIR 2000.",
    presets=(
        "A baseline: both presets are its defaults, LinearSVC with C = 1 at every internal "
        "node (HIERMULT of seed 000 solved by liblinear). Measured with the defaults "
        "(`hierlab bench`, 70/30): exact accuracy 0.430 on IPC titles and 0.845 on 20 "
        "Newsgroups against a flat LinearSVC's 0.480 and 0.862 (HiClass's per-parent "
        "LinearSVC gives the same predictions): an error at a parent is final."
    ),
)

register(
    "topdown",
    TopDownClassifier,
    card=TOPDOWN_CARD,
    seed="baseline",
    summary="Top-down local classifier per parent node (one LinearSVC per internal node)",
    paper={"C": 1.0},
    rank=6,
)


def _check_router(est: Any, children: set[int], n_features: int, where: str) -> None:
    """One node's classifier: its classes distinct children (sorted), its weights' shape."""
    classes = np.asarray(getattr(est, "classes_", []))
    if classes.ndim != 1 or len(classes) < 2 or classes.dtype.kind not in "iu":
        raise ModelFileError(f"{where}.classes_: must be two or more child ids")
    if not set(map(int, classes)) <= children or np.any(np.diff(classes) <= 0):
        raise ModelFileError(f"{where}.classes_: must be distinct children of the node, sorted")
    rows = 1 if len(classes) == 2 else len(classes)
    coef = getattr(est, "coef_", None)
    if coef is not None and tuple(np.shape(coef)) != (rows, n_features):
        raise ModelFileError(
            f"{where}.coef_: shape {np.shape(coef)}, expected ({rows}, n_features={n_features})"
        )
    intercept = getattr(est, "intercept_", None)
    if intercept is not None and np.shape(intercept) not in ((rows,), ()):
        raise ModelFileError(f"{where}.intercept_: shape {np.shape(intercept)}, expected ({rows},)")
