"""Numerical guards of the estimators (issue 10).

- Non-finite features: ``fit`` raises scikit-learn's usual ``ValueError`` (from ``check_array``).
- Divergence: a solver state with a non-finite objective or bound stops training with a
  :class:`~hierlab.ConvergenceError` (through ``solve`` and through a real estimator).
- Timeouts: :class:`~hierlab.core.callbacks.Timeout` passed to ``fit(..., callbacks=[...])`` stops
  every registered method that runs an iterative solver right after the state on which it fired.
  No assertion is made on wall-clock time: the budget is tiny, so it fires on the first state,
  and the test compares the iteration counts with an unbounded fit.
- A non-admissible ``K`` (ORTHOGNL, seed 000 Theorem 1) is refused before any training.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp

import hierlab
from hierlab import Taxonomy
from hierlab.core.callbacks import Timeout
from hierlab.core.exceptions import ConvergenceError, ParameterError
from hierlab.core.registry import get_method
from hierlab.core.regularizers import max_admissible_alpha
from hierlab.core.solver import Solver, SolverState, solve
from hierlab.methods.orthogonal.estimators import (
    FlatMulticlassClassifier,
    OrthogonalTransferClassifier,
)

METHODS = hierlab.list_methods()

#: methods whose whole fit is one closed computation reported as a single solver state
#: (a liblinear call per node/leaf, an eigen-decomposition): a Timeout cannot cut them short
ONE_SHOT = {"cmtl", "dagsvm", "drhl", "mftree", "rdm", "rnmf", "topdown"}

#: parameters that make an iterative method run several states on the small problem
SEVERAL_STATES: dict[str, dict[str, Any]] = {
    "hieron": {"epochs": 4},
    "hieron-batch": {"epochs": 4},
    "hieron-flat": {"epochs": 4},
    "hieron-greedy": {"epochs": 4},
}


def _problem(seed: int = 0, n: int = 120) -> tuple[Taxonomy, np.ndarray, np.ndarray]:
    tax = Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2"), ("b", "b3")]
    )
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    centers = rng.normal(scale=2.0, size=(len(leaves), 5))
    lab = rng.integers(0, len(leaves), size=n)
    X = np.abs(centers[lab] + rng.normal(size=(n, 5)))
    return tax, X, leaves[lab].astype(object)


# ---------------------------------------------------------------------------- non-finite X
@pytest.mark.parametrize("name", METHODS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_nonfinite_features_raise_sklearn_value_error(name: str, bad: float, sparse: bool) -> None:
    tax, X, y = _problem(n=40)
    X = X.copy()
    X[3, 2] = bad
    Xs = sp.csr_matrix(X) if sparse else X
    est = hierlab.make_estimator(name, taxonomy=tax)
    with pytest.raises(ValueError, match=r"(?i)nan|inf"):
        est.fit(Xs, y)


@pytest.mark.parametrize("name", METHODS)
def test_nonfinite_features_at_predict_time(name: str) -> None:
    tax, X, y = _problem(n=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = hierlab.make_estimator(name, taxonomy=tax).fit(X, y)
    Xt = X[:5].copy()
    Xt[0, 0] = math.nan
    with pytest.raises(ValueError, match=r"(?i)nan"):
        est.predict(Xt)


# ---------------------------------------------------------------------------- divergence
class _Exploding(Solver):
    """Yields a finite state, then one whose objective (or bound) is not finite."""

    def __init__(self, upper: float, lower: float | None) -> None:
        self.upper, self.lower = upper, lower
        self.coef = np.zeros(2)

    def iterate(self, objective: Any) -> Iterator[SolverState]:
        yield SolverState(1, 0.0, 1.0, 0.0)
        yield SolverState(2, 0.0, self.upper, self.lower)
        yield SolverState(3, 0.0, 1.0, 0.0)  # never reached


@pytest.mark.parametrize(
    ("upper", "lower"), [(math.inf, 0.0), (math.nan, 0.0), (-math.inf, None), (1.0, math.nan)]
)
def test_solve_stops_on_non_finite_values(upper: float, lower: float | None) -> None:
    seen: list[int] = []
    with pytest.raises(ConvergenceError, match="diverged at iteration 2"):
        solve(_Exploding(upper, lower), None, [lambda s: seen.append(s.iteration)])
    assert seen == [1]  # the bad state never reaches the callbacks (no NaN in a live plot)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("solver", ["bcfw", "rda"])
@pytest.mark.parametrize("name", ["flatmult", "hiermult", "treeloss", "orthognl"])
def test_divergence_through_a_real_estimator(name: str, solver: str) -> None:
    """Huge C with huge features: the bounds (RDA) or the step (BCFW) overflow at once."""
    tax, X, y = _problem(n=60)
    est = hierlab.make_estimator(name, taxonomy=tax)
    est.set_params(C=1e300, max_iter=50, solver=solver)
    with pytest.raises(ConvergenceError, match="diverged"):
        est.fit(X * 1e10, y)
    assert not hasattr(est, "coef_")  # nothing half-trained is left behind


def test_the_same_estimator_trains_on_sane_data() -> None:
    """Control for the test above: the same estimator converges when C and X are sane."""
    tax, X, y = _problem(n=60)
    est = FlatMulticlassClassifier(taxonomy=tax, C=1.0, max_iter=2000).fit(X, y)
    assert np.isfinite(est.coef_).all() and est.converged_


# ---------------------------------------------------------------------------- timeouts
class _Recorder:
    def __init__(self) -> None:
        self.iterations: list[int] = []

    def __call__(self, state: SolverState) -> bool:
        self.iterations.append(state.iteration)
        return False


def _fit(name: str, callbacks: list[Any]) -> Any:
    tax, X, y = _problem()
    est = hierlab.make_estimator(name, taxonomy=tax)
    params = SEVERAL_STATES.get(name, {})
    if params:
        est.set_params(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unconverged runs warn
        return est.fit(X, y, callbacks=callbacks)


@pytest.mark.parametrize("name", METHODS)
def test_timeout_is_honoured(name: str) -> None:
    free = _Recorder()
    ref = _fit(name, [free])
    assert free.iterations, f"{name}: fit never reported a solver state to the callbacks"
    budget = Timeout(1e-12)  # fires on the first state, whatever the machine's speed
    rec = _Recorder()
    est = _fit(name, [budget, rec])
    if name in ONE_SHOT:
        # one closed computation: the single state is reported, nothing left to stop
        assert len(rec.iterations) == 1 and est.n_iter_ == ref.n_iter_ == 1
        return
    assert budget.fired
    assert len(free.iterations) > 1, f"{name}: the reference fit ran a single state"
    assert len(rec.iterations) == 1, f"{name}: ran on after the Timeout fired"
    assert est.n_iter_ < ref.n_iter_
    assert not est.converged_
    # the early-stopped model is usable: the best iterate so far
    _, X, _ = _problem()
    assert len(est.predict(X[:5])) == 5


def test_max_time_parameter_is_a_timeout() -> None:
    """The RDA methods' own ``max_time`` budget stops them like the callback does."""
    tax, X, y = _problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = FlatMulticlassClassifier(taxonomy=tax, tol=0.0, rtol=0.0, max_iter=300).fit(X, y)
        est = FlatMulticlassClassifier(
            taxonomy=tax, tol=0.0, rtol=0.0, max_iter=300, max_time=1e-12
        ).fit(X, y)
    assert ref.n_iter_ == 300
    assert est.n_iter_ < ref.n_iter_


# ---------------------------------------------------------------------------- admissible K
def test_non_admissible_alpha_is_refused_before_training() -> None:
    tax, X, y = _problem()
    amax = max_admissible_alpha(tax)
    rec = _Recorder()
    est = OrthogonalTransferClassifier(taxonomy=tax, alpha=amax * 1.5)
    with pytest.raises(ParameterError, match="not admissible") as info:
        est.fit(X, y, callbacks=[rec])
    assert f"{amax:.6g}" in str(info.value)  # the message names the largest admissible alpha
    assert rec.iterations == []  # refused before the solver ran a single iteration
    assert not hasattr(est, "coef_")
    # just below the limit it trains
    ok = OrthogonalTransferClassifier(taxonomy=tax, alpha=amax * 0.5, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok.fit(X, y)
    assert ok.lambda_min_ > 0


def test_non_admissible_user_K_is_refused_before_training() -> None:
    tax, X, y = _problem()
    m = tax.n_nodes - 1
    rec = _Recorder()
    for K, pattern in [
        (np.ones((m, m)) * 5.0 - 4.0 * np.eye(m), "not admissible"),  # Kbar not PD
        (-np.eye(m), "nonnegative"),
        (np.triu(np.ones((m, m))), "symmetric"),
        (np.eye(m + 3), "shape"),
    ]:
        est = OrthogonalTransferClassifier(taxonomy=tax, K=K)
        with pytest.raises(ParameterError, match=pattern):
            est.fit(X, y, callbacks=[rec])
    assert rec.iterations == []


def test_registry_schema_refuses_out_of_range_parameters() -> None:
    """The app/CLI path: ``make_estimator`` validates against the schema before fitting."""
    spec = get_method("orthognl")
    with pytest.raises(ParameterError, match="alpha"):
        hierlab.make_estimator("orthognl", alpha=-1.0)
    with pytest.raises(ParameterError, match="C"):
        hierlab.make_estimator("flatmult", C=0.0)
    assert spec.param("alpha").high is not None


@pytest.mark.parametrize("method", ["hieron", "hr-svm", "topdown"])
def test_predict_in_row_blocks_equals_one_block(method: str, monkeypatch) -> None:
    """``predict``, ``decision_path`` and ``score`` score a block of rows at a time; the
    answers are those of one block (single label, and multi-label's sparse sets)."""
    import hierlab.methods.base as base

    rng = np.random.default_rng(5)
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2")])
    leaves = tax.names[tax.leaves]
    y = leaves[rng.integers(0, len(leaves), 300)].astype(object)
    X = rng.normal(size=(300, 6)) + 2.0 * np.eye(6)[np.searchsorted(leaves, y) % 6]
    cases = [(X, y)]
    if method == "hr-svm":
        Y = np.empty(300, dtype=object)
        Y[:] = [(a, b) if a != b else (a,) for a, b in zip(y, np.roll(y, 1), strict=True)]
        cases.append((sp.csr_matrix(X), Y))
    for Xf, Yf in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = hierlab.make_estimator(method, taxonomy=tax).fit(Xf, Yf)
        whole = (est.predict(Xf), est.decision_path(Xf).toarray(), est.score(Xf, Yf))
        with monkeypatch.context() as mp:
            mp.setattr(base, "PREDICT_ENTRIES", 1)  # blocks of 64 rows
            assert len(base.row_blocks(300, tax.n_nodes, base.PREDICT_ENTRIES, 64)) == 5
            blocked = (est.predict(Xf), est.decision_path(Xf).toarray(), est.score(Xf, Yf))
        assert list(whole[0]) == list(blocked[0])
        np.testing.assert_array_equal(whole[1], blocked[1])
        assert whole[2] == blocked[2]
