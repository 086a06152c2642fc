"""Shared SVM with the normalised margin (``loss="normalized"``): eq. (14)'s objective with
NHSVM's ``Δ~(l, l_i) = sqrt(sum_{n in A(l) Δ A(l_i)} alpha_n)`` of eq. (9), alpha the learned one.

The oracle writes the objective from the paper (numpy, a loop over the leaves) at the fitted
``(V, alpha)``: ``lambda/N ||V||^2 + 1/N sum_i max_l {sum_{n in A(l)} sqrt(alpha_n) V_n x_i -
sum_{n in A(l_i)} sqrt(alpha_n) V_n x_i + Δ~(l, l_i)}``, ``lambda ||V||^2 = lambda sum_n
||U_n||^2 / alpha_n`` (eq. 14 with ``U_n = sqrt(alpha_n) V_n``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.datasets.nhsvm import make_nhsvm_synthetic
from hierlab.methods.nhsvm.estimators import SharedSVMClassifier


def _paper_objective(tax: Taxonomy, X: np.ndarray, y: np.ndarray, V: np.ndarray,
                     alpha: np.ndarray, lam: float, normalized: bool) -> float:
    """Eq. (14) at ``(V, alpha)``, the loss averaged (the estimator's scale), by hand."""
    leaves = [int(v) for v in tax.leaves]
    paths = {l: set(int(a) for a in tax.ancestors(l, include_self=True)) - {0} for l in leaves}
    P = X @ V.T  # node potentials V_n x_i
    c = np.sqrt(alpha)
    total = 0.0
    for i, yi in enumerate(y):
        own = sum(c[n] * P[i, n] for n in paths[int(yi)])
        best = 0.0
        for l in leaves:
            sym = paths[l] ^ paths[int(yi)]
            delta = np.sqrt(sum(alpha[n] for n in sym)) if normalized else float(l != yi)
            best = max(best, sum(c[n] * P[i, n] for n in paths[l]) - own + delta)
        total += best
    n = X.shape[0]
    return lam / n * float(np.sum(V * V)) + total / n


def _start_alpha(tax: Taxonomy) -> np.ndarray:
    from hierlab.methods.nhsvm.model import normalization_alpha

    return normalization_alpha(tax, rule="eq6", rho=2.0)


def _data() -> tuple[Taxonomy, np.ndarray, np.ndarray]:
    train, _ = make_nhsvm_synthetic("unbalanced", n_samples=180, n_features=12, depth=4,
                                    random_state=3)
    ids = np.array([train.taxonomy.node_id(v) for v in train.y])
    return train.taxonomy, train.X, ids


@pytest.mark.parametrize("loss", ["normalized", "zero_one"])
def test_fitted_objective_is_eq14_with_its_own_alpha(loss: str) -> None:
    tax, X, y = _data()
    est = SharedSVMClassifier(taxonomy=tax, lam=0.05, loss=loss, rounds=3, epochs_per_alpha=2,
                              solver="pegasos", pegasos="plain", batch_size=16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, tax.names[y])
    want = _paper_objective(tax, X, y, est.W_, est.alpha_, 0.05, loss == "normalized")
    assert est.objective_ == pytest.approx(want, rel=1e-9)
    # the kept state is the best one the run reported, each scored with its own alpha's loss
    assert est.objective_ == pytest.approx(float(est.history_["upper"].min()), rel=1e-9)
    assert ("Δ~ of eq. (9)" in est.algorithm_) == (loss == "normalized")
    # the learned alpha is not the starting one, so a Δ~ frozen at the start would differ
    assert not np.allclose(est.alpha_, _start_alpha(tax))


def test_normalized_margin_needs_pegasos() -> None:
    tax, X, y = _data()
    est = SharedSVMClassifier(taxonomy=tax, loss="normalized", solver="bcfw")
    with pytest.raises(ParameterError, match="Pegasos V-steps only"):
        est.fit(X, tax.names[y])
    auto = SharedSVMClassifier(taxonomy=tax, loss="normalized", rounds=1, epochs_per_alpha=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto.fit(sp.csr_matrix(X), tax.names[y])  # sparse rows: auto would take BCFW
    assert auto.solver_ == "pegasos"
