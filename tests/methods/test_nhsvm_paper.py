"""Seed 003's Section 8.1 items: eq. (6) with directional constraints (rho = 2), lambda on the
paper's scale (summed loss), and training on the LP relaxation of eq. (19) on DAGs.

Oracles: SLSQP on the same constrained problem (alpha); the paper's objective written out with
a summed loss and minimised by SLSQP on a small problem (lambda); the LP/IP on a handful of
label sets enumerated by brute force (inference).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from hierlab.methods.nhsvm.model import (
    _directional_matrix,
    leaf_path_matrix,
    normalization_alpha,
)
from tests.methods.test_nhsvm import random_dag, random_tree


def slsqp_directional(P: np.ndarray, E: np.ndarray, rho: float, T: float) -> np.ndarray:
    """min sum alpha^rho s.t. path sums (= 1, or in [1, T]), alpha >= 0, E alpha >= 0."""
    m = P.shape[1]
    if T > 1:
        cons = [
            {"type": "ineq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P},
            {"type": "ineq", "fun": lambda a: T - P @ a, "jac": lambda a: -P},
        ]
    else:
        cons = [{"type": "eq", "fun": lambda a: P @ a - 1.0, "jac": lambda a: P}]
    if E.shape[0]:
        cons.append({"type": "ineq", "fun": lambda a: E @ a, "jac": lambda a: E})
    best = None
    for start in (np.full(m, 0.5 / P.sum(axis=1).max()), np.linspace(0.05, 0.5, m)):
        res = minimize(
            lambda a: np.sum(np.abs(a) ** rho),
            start,
            jac=lambda a: rho * np.abs(a) ** (rho - 1) * np.sign(a),
            bounds=[(0, None)] * m,
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 5000},
        )
        if res.success and (best is None or res.fun < best.fun):
            best = res
    assert best is not None
    return best.x


def check_feasible(tax, a: np.ndarray, T: float, tol: float) -> None:
    P = leaf_path_matrix(tax).toarray()
    s = P @ a[1:]
    assert a[0] == 0.0 and np.all(a >= 0)
    if T > 1:
        assert np.all(s >= 1 - tol) and np.all(s <= T + tol)
    else:
        np.testing.assert_allclose(s, 1.0, atol=tol)
    for c in range(1, tax.n_nodes):
        for p in tax.parents(c):
            if p > 0:
                assert a[c] >= a[p] - tol


@pytest.mark.parametrize("seed", range(6))
def test_eq6_directional_tree_equals_slsqp(seed: int) -> None:
    rng = np.random.default_rng(700 + seed)
    tax = random_tree(rng, int(rng.integers(6, 14)))
    a = normalization_alpha(tax, "eq6-directional", rho=2.0)
    check_feasible(tax, a, 1.0, 1e-9)  # the rho = 2 polish: exact to round-off
    P = leaf_path_matrix(tax).toarray()
    E = _directional_matrix(tax).toarray()
    ref = slsqp_directional(P, E, 2.0, 1.0)
    assert np.sum(a[1:] ** 2) <= np.sum(ref**2) + 1e-9
    np.testing.assert_allclose(a[1:], ref, atol=1e-5)


@pytest.mark.parametrize("rho", [1.5, 3.0])
@pytest.mark.parametrize("seed", range(3))
def test_eq6_directional_other_rho_equals_slsqp(seed: int, rho: float) -> None:
    rng = np.random.default_rng(720 + seed)
    tax = random_tree(rng, int(rng.integers(6, 12)))
    a = normalization_alpha(tax, "eq6-directional", rho=rho)
    check_feasible(tax, a, 1.0, 1e-6)
    P = leaf_path_matrix(tax).toarray()
    ref = slsqp_directional(P, _directional_matrix(tax).toarray(), rho, 1.0)
    assert np.sum(a[1:] ** rho) == pytest.approx(np.sum(ref**rho), rel=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_eq6_directional_dag_relaxation_equals_slsqp(seed: int) -> None:
    rng = np.random.default_rng(740 + seed)
    tax = random_dag(rng, 9, extra=4)
    a = normalization_alpha(tax, "eq6-directional", rho=2.0, T=1.5)
    check_feasible(tax, a, 1.5, 1e-6)
    P = leaf_path_matrix(tax).toarray()
    ref = slsqp_directional(P, _directional_matrix(tax).toarray(), 2.0, 1.5)
    assert np.sum(a[1:] ** 2) == pytest.approx(np.sum(ref**2), rel=1e-5)


def test_directional_constraints_bind_on_an_unbalanced_path() -> None:
    # root -> a -> b -> {l1, l2}; root -> l3. Without the directional constraints eq. (6) puts
    # weight 1/3 on a, b and each leaf below b; with them alpha grows towards the leaves.
    from hierlab import Taxonomy

    tax = Taxonomy([("r", "a"), ("a", "b"), ("b", "l1"), ("b", "l2"), ("a", "l4"), ("r", "l3")])
    free = normalization_alpha(tax, "eq6", rho=2.0)
    dirn = normalization_alpha(tax, "eq6-directional", rho=2.0)
    P = leaf_path_matrix(tax).toarray()
    E = _directional_matrix(tax).toarray()
    assert np.min(E @ free[1:]) < -1e-3  # eq. (6) alone violates alpha_c >= alpha_p here
    assert np.min(E @ dirn[1:]) >= -1e-12
    ref = slsqp_directional(P, E, 2.0, 1.0)
    np.testing.assert_allclose(dirn[1:], ref, atol=1e-6)
    assert np.sum(dirn**2) > np.sum(free**2)  # a constrained optimum costs more


def test_nhsvm_estimator_takes_the_directional_rule() -> None:
    from hierlab.core.registry import get_method
    from hierlab.methods.nhsvm.estimators import NHSVMClassifier

    assert "eq6-directional" in get_method("nhsvm").param("alpha_rule").choices
    train, _ = make_small()
    est = NHSVMClassifier(
        taxonomy=train.taxonomy, alpha_rule="eq6-directional", epochs=2, random_state=0
    ).fit(train.X, train.y)
    np.testing.assert_allclose(est.alpha_, normalization_alpha(train.taxonomy, "eq6-directional"))


def make_small():
    from hierlab.datasets.nhsvm import make_nhsvm_synthetic

    return make_nhsvm_synthetic("unbalanced", n_samples=300, n_features=20, random_state=0)
