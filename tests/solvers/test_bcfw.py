"""Block-coordinate Frank-Wolfe on the dual (hierlab.solvers.bcfw) against independent oracles.

- The dual tables of every model reproduce the model's own loss (``DualBlocks.primal_loss``).
- Each method's optimum equals the slack QP solved by SLSQP (``tests/solvers/test_rda.py``, explicit
  loops over the paper's constraints) to 1e-4 relative, and ``lower <= J* <= upper`` at every
  epoch, with ``upper`` non-increasing and ``lower`` non-decreasing.
- ORTHOGNL: the sign relaxation's dual (a max over ``sigma`` of quadratic duals) is a certified
  lower bound, and BCFW and RDA meet at the same optimum.
- Dense and CSR input run the same operations (identical histories and weights).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.objective import Objective
from hierlab.core.regularizers import Orthogonal, orthogonal_K
from hierlab.core.solver import solve
from hierlab.methods.orthogonal.estimators import OrthogonalTransferClassifier, TransferClassifier
from hierlab.solvers.bcfw import BCFW
from tests.solvers.test_rda import (
    C_ORACLE,
    ESTIMATORS,
    ORACLE_CASES,
    TREES,
    fit_against_oracle,
    make_problem,
)


def _objective(method: str, tree: str, seed: int, X_kind: str = "dense") -> Objective:
    tax, X, y = make_problem(TREES[tree], seed=seed)
    est = ESTIMATORS[method](taxonomy=tax, C=C_ORACLE)
    est.taxonomy_ = tax
    return est._objective(sp.csr_matrix(X) if X_kind == "csr" else X, y)


@pytest.mark.parametrize("method", list(ESTIMATORS))
@pytest.mark.parametrize("tree", list(TREES))
def test_dual_tables_reproduce_the_loss(method: str, tree: str) -> None:
    obj = _objective(method, tree, 3)
    rng = np.random.default_rng(0)
    for _ in range(3):
        W = rng.normal(size=obj.shape)
        W[~obj.regularizer.active] = 0.0
        S = np.asarray(obj.X @ W.T)
        loss, _ = obj.model.loss(obj.model.scores(obj.X, W), obj.y)
        blocks = obj.model.dual_blocks(obj.y)
        assert blocks.primal_loss(S) == pytest.approx(float(loss.sum()), rel=1e-12)
        assert np.all(np.diff(blocks.block_example) >= 0)
        for U, L in blocks.tables:  # the null label closes every table
            assert L[-1] == 0 and sp.csr_matrix(U[-1]).count_nonzero() == 0


@pytest.mark.parametrize(("method", "tree", "seed"), ORACLE_CASES)
def test_optimum_matches_slsqp_and_certificate(method: str, tree: str, seed: int) -> None:
    est, obj = fit_against_oracle(method, tree, seed, rtol=2e-5, max_iter=5000, solver="bcfw")
    assert np.all(est.weights_[~obj.regularizer.active] == 0)


def test_orthognl_bcfw_and_rda_meet() -> None:
    """Both certified solvers bracket the same optimum (on the 9-node tree, too big for the
    SLSQP epigraph): each one's lower bound is below the other's upper bound."""
    tax, X, y = make_problem(TREES["9 nodes, depth 3"], seed=4)
    fits = {}
    for solver in ("bcfw", "rda"):
        est = OrthogonalTransferClassifier(
            taxonomy=tax, C=C_ORACLE, alpha=0.6, tol=0.0, rtol=1e-4, max_iter=20000
        )
        est.set_params(solver=solver)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            est.fit(X, tax.names[y])
        fits[solver] = est
    b, r = fits["bcfw"], fits["rda"]
    assert b.lower_bound_ <= r.objective_ and r.lower_bound_ <= b.objective_
    assert b.objective_ == pytest.approx(r.objective_, rel=2e-4)


def test_sigma_relaxation_lower_bounds_omega() -> None:
    """For every sigma in the box, 1/2 tr(W^T K_sigma W) <= Omega(W); the sigma step never
    lowers the dual ``-1/2 tr(K_sigma^{-1} G)`` and ends at sign(W W^T) on the ancestor pairs."""
    tax = make_problem(TREES["9 nodes, depth 3"], seed=0)[0]
    K = orthogonal_K(tax, 0.6)
    act = np.ones(tax.n_nodes, dtype=bool)
    act[0] = False
    reg = Orthogonal(K, act)
    rng = np.random.default_rng(1)
    metric = reg.dual_metric()
    for _ in range(20):
        W = rng.normal(size=(tax.n_nodes, 4))
        W[0] = 0
        sig = rng.uniform(-1, 1, size=K.shape)
        sig = (sig + sig.T) / 2
        Ks = metric.K_sigma(sig)
        assert 0.5 * np.sum(Ks * (W @ W.T)) <= reg.value(W) + 1e-12
        assert 0.5 * np.sum(metric.K_sigma(np.sign(W @ W.T)) * (W @ W.T)) == pytest.approx(
            reg.value(W)
        )
    V = rng.normal(size=(tax.n_nodes, 6))
    V[0] = 0
    G = V @ V.T
    before = -0.5 * np.sum(metric.P * G)
    steps = metric.sigma_step(V, max_steps=500, rtol=1e-15)
    after = -0.5 * np.sum(metric.P * G)
    assert steps > 0 and after >= before
    # optimality over the box: no vertex improves the linearisation
    M = metric.P @ G @ metric.P
    assert metric.sigma is not None
    slope = 0.5 * np.sum(metric.Koff * (np.sign(M) - metric.sigma) * M)
    assert slope <= 1e-9 * abs(after)


@pytest.mark.parametrize("method", list(ESTIMATORS))
def test_dense_and_csr_identical(method: str) -> None:
    runs = []
    for kind in ("dense", "csr"):
        obj = _objective(method, "7 nodes", 2, kind)
        solver = BCFW(max_iter=15)
        res = solve(solver, obj, warn=False)
        runs.append((res, solver.alpha_.copy()))
    (a, alpha_a), (b, alpha_b) = runs
    assert [s.upper for s in a.history] == pytest.approx([s.upper for s in b.history], rel=1e-12)
    assert [s.lower for s in a.history] == pytest.approx([s.lower for s in b.history], rel=1e-12)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(alpha_a, alpha_b, atol=1e-12)


@pytest.mark.parametrize("method", list(ESTIMATORS))
def test_compiled_pass_equals_numpy_pass(method: str) -> None:
    """The numba kernel and the numpy loop certify the same optimum.

    They take the same steps in exact arithmetic, but their sums run in another order and the
    pairwise line search creates exact ties between labels, which rounding then breaks
    differently, so their trajectories part after a few steps: the check is on what both
    certify (and every step of both keeps ``lower <= J* <= upper``, tested above)."""
    from hierlab.core.jit import HAVE_NUMBA

    assert HAVE_NUMBA, "numba is part of the dev extras; the compiled path must be tested"

    def run(epochs: int, use_jit: bool) -> tuple[object, np.ndarray]:
        obj = _objective(method, "9 nodes, depth 3", 4, "csr")
        solver = BCFW(max_iter=epochs, use_jit=use_jit)
        return solve(solver, obj, warn=False, tol=0.0, rtol=0.0), solver.alpha_.copy()

    (a, _), (b, _) = run(400, True), run(400, False)
    for r in (a, b):
        last = r.history[-1]
        assert last.upper - last.lower <= 1e-6 * abs(last.upper)
    assert a.history[-1].upper == pytest.approx(b.history[-1].upper, rel=2e-6)


def test_estimator_solver_parameter_and_limits() -> None:
    tax, X, y = make_problem(TREES["5 nodes"], seed=1)
    with pytest.raises(ParameterError, match="solver"):
        TransferClassifier(taxonomy=tax, solver="sgd").fit(X, tax.names[y])
    with pytest.raises(ParameterError):
        BCFW(max_iter=0)
    with pytest.raises(ParameterError):
        BCFW(inner=0)
    obj = _objective("transfer", "5 nodes", 1)
    res = solve(BCFW(max_iter=3), obj, warn=False)
    assert res.n_iter == 3 and not res.converged
    assert obj.value(res.coef) == pytest.approx(res.final.upper)
    res = solve(BCFW(max_iter=10**6, max_time=0.05), obj, warn=False)
    assert res.n_iter < 10**6


@pytest.mark.parametrize("method", list(ESTIMATORS))
def test_checkpoints_every_k_epochs_certify_the_same_optimum(method: str) -> None:
    """``certify_every=3``: exact states at epochs 3, 6, ... and the last one only; run to a
    tight gap, both schedules certify intervals that contain each other's optimum (a checkpoint
    renormalises the duals and recomputes ``W(alpha)``, so the iterates differ by rounding)."""
    tree = next(iter(TREES))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve(BCFW(max_iter=10, certify_every=3), _objective(method, tree, 1), rtol=0.0)
    assert [s.iteration for s in res.history if s.extra.get("exact", True)] == [3, 6, 9, 10]
    final = {}
    for k in (1, 3):
        obj = _objective(method, tree, 1)
        res = solve(BCFW(max_iter=5000, certify_every=k), obj, rtol=1e-6)
        assert res.converged
        final[k] = res.history[-1]
    for a, b in ((1, 3), (3, 1)):
        assert final[a].lower <= final[b].upper * (1 + 1e-12)
    with pytest.raises(ParameterError):
        BCFW(certify_every=0)


@pytest.mark.parametrize("method", list(ESTIMATORS))
def test_upper_hint_lets_a_warm_start_skip_its_first_checkpoint(method: str) -> None:
    """``upper_hint``: a warm start from a few epochs' dual point certifies its first epoch
    without a hint, skips it when the estimate is far above ``certify_below`` times the hint
    (a stop is impossible there: the next checkpoint is the last epoch's, or one where every
    block's gap is zero), certifies it again when the hint is huge, and with a hint
    still stops on a certified gap bracketing the hint-less run's optimum."""
    tree = next(iter(TREES))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm = BCFW(max_iter=2)
        solve(warm, _objective(method, tree, 1))
    beta = warm.alpha_sparse_ if warm.implicit_blocks_ is not None else warm.alpha_
    first = {}
    for hint in (None, 1e-300, 1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = solve(
                BCFW(max_iter=4, dual_init=beta, certify_below=1e-6, upper_hint=hint),
                _objective(method, tree, 1),
            )
        first[hint] = next(s for s in res.history if s.extra.get("exact", True))
    assert first[None].iteration == 1 and first[1e300].iteration == 1
    skipped = first[1e-300]  # the last epoch, or one whose every block had a zero gap
    assert skipped.iteration == 4 or (
        skipped.iteration > 1 and skipped.gap <= 1e-9 * abs(skipped.upper)
    )
    runs = []
    for hint in (None, 1.0):
        obj = _objective(method, tree, 1)
        res = solve(
            BCFW(max_iter=5000, dual_init=beta, certify_below=1e-4, upper_hint=hint), obj,
            rtol=1e-4,
        )  # fmt: skip
        assert res.converged and res.history[-1].gap <= 1e-4 * res.history[-1].upper
        runs.append(res.history[-1])
    a, b = runs
    assert a.lower <= b.upper * (1 + 1e-12) and b.lower <= a.upper * (1 + 1e-12)


@pytest.mark.parametrize("method", list(ESTIMATORS))
def test_certify_below_checkpoints_where_the_running_gap_estimate_allows_a_stop(
    method: str,
) -> None:
    """``certify_below``: infinity certifies every epoch; 0 the first, the last, and only
    epochs whose every block had a zero Frank-Wolfe gap (no step: the exact gap is 0 too); a
    run to ``rtol`` with ``certify_below=rtol`` stops on a certified gap, at an optimum the
    every-epoch run's bounds contain, with fewer checkpoints."""
    tree = next(iter(TREES))
    certified = {}
    for below in (0.0, np.inf):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = solve(BCFW(max_iter=10, certify_below=below), _objective(method, tree, 1))
        certified[below] = [s for s in res.history if s.extra.get("exact", True)]
    assert [s.iteration for s in certified[np.inf]] == list(range(1, 11))
    first, *middle, last = certified[0.0]
    assert first.iteration == 1 and last.iteration == 10
    assert all(s.gap <= 1e-9 * abs(s.upper) for s in middle)
    runs = {}
    for below in (None, 1e-4):
        obj = _objective(method, tree, 1)
        res = solve(BCFW(max_iter=5000, certify_below=below), obj, rtol=1e-4)
        assert res.converged and res.history[-1].gap <= 1e-4 * res.history[-1].upper
        runs[below] = res
    a, b = runs[None].history[-1], runs[1e-4].history[-1]
    assert a.lower <= b.upper * (1 + 1e-12) and b.lower <= a.upper * (1 + 1e-12)
    assert len(runs[1e-4].history) < len(runs[None].history)
