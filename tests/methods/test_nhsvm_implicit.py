"""HSVM / NHSVM dual blocks formed on the fly (no tables) against their explicit tables.

:meth:`~hierlab.methods.nhsvm.dual.HingeDualModel.implicit_blocks` hands BCFW the labels of
seed 003's hinge as ancestor chains with the class attributes as node weights, margin
rescaling (eq. 3/10) or the ratio of eq. 13, and ``Δ`` from weighted path lengths. Oracles: the
explicit table of each label (``h = L - U S`` for random scores), and the table solver's
certified optimum (each run's lower bounds below the other's upper bounds; the weights as
close as strong convexity allows).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import hierlab.methods.nhsvm.dual as dual
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.nhsvm.estimators import HSVMClassifier, NHSVMClassifier
from hierlab.methods.nhsvm.model import HierarchicalHinge
from hierlab.solvers import bcfw_flat

VARIANTS = [
    ("zero_one", "margin"),
    ("hamming", "margin"),
    ("sqrt_hamming", "margin"),
    ("normalized", "margin"),
    ("hamming", "eq13"),
]


def random_tree(seed: int, n_nodes: int = 15) -> Taxonomy:
    rng = np.random.default_rng(seed)
    edges = [(f"n{int(rng.integers(0, v))}", f"n{v}") for v in range(1, n_nodes)]
    return Taxonomy(edges)


def hinge_of(seed: int, loss: str, variant: str, n: int = 30) -> HierarchicalHinge:
    tax = random_tree(seed)
    rng = np.random.default_rng(seed + 100)
    alpha = rng.uniform(0.2, 2.0, tax.n_nodes)
    c = np.sqrt(alpha)
    y = rng.integers(1, tax.n_nodes, n)  # leaves and internal nodes alike
    X = sp.csr_matrix(rng.normal(size=(n, 4)))
    return HierarchicalHinge(X, y, tax, c, 0.01, loss, alpha, variant)


@pytest.mark.parametrize(("loss", "variant"), VARIANTS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chain_scan_equals_the_hinge_tables(seed: int, loss: str, variant: str) -> None:
    """Every label's ``h = L - U . S`` of every block, from the chains (numpy and compiled),
    equals the explicit table's to rounding; margin rescaling's ``L`` (= ``C Δ``) to the bit."""
    hinge = hinge_of(seed, loss, variant)
    model = dual.HingeDualModel(hinge)
    fb = model.implicit_blocks(hinge.y, 1.0)
    assert fb is not None and fb.chain
    fns = [(bcfw_flat._chain_delta_weighted, bcfw_flat._scale_factors, bcfw_flat._chain_scan)]
    if bcfw_flat._CHAIN_SCAN is not None:  # numba installed
        fns.append(
            (bcfw_flat._CHAIN_DELTA_WEIGHTED, bcfw_flat._SCALE_FACTORS, bcfw_flat._CHAIN_SCAN)
        )
    m = fb.M.shape[0]
    rng = np.random.default_rng(seed)
    dr = fb.delta_rows
    for delta_fn, factor_fn, scan_fn in fns:
        on_y, wcommon, path = np.zeros(m, dtype=bool), np.zeros(m), np.zeros(m)
        size = len(fb.cand) + 1
        dvec, lvec, uvec, hbuf = (np.ones(size) for _ in range(4))
        for k in range(len(hinge.y)):
            S = rng.normal(size=m)
            U, L = fb.scaled_table(int(fb.y[k]))
            want = L - U @ S
            rows = int(fb.rows[k])
            if dr is not None:
                delta_fn(fb.y[k], fb.pos[k], rows, fb.cand, fb.anc.indptr, fb.anc.indices,
                         fb.a_par, dr.Wn, dr.loss.compiled, on_y, wcommon, dvec)  # fmt: skip
                assert not on_y.any()
            factor_fn(dvec, rows, 1 if variant == "margin" else 2, lvec, uvec)
            if variant == "margin":
                np.testing.assert_array_equal(lvec[: rows - 1] * fb.C, L[:-1])
            hmax, ia = scan_fn(fb.y[k], fb.pos[k], rows, fb.cand, fb.m_par, S, lvec, uvec,
                               fb.C, fb.node_weight, True, path, hbuf)  # fmt: skip
            np.testing.assert_allclose(hbuf[:rows], want, rtol=0, atol=1e-12)
            assert hmax == hbuf[:rows].max() and ia == int(np.argmax(hbuf[:rows]))


def test_pair_delta_is_the_tables_delta() -> None:
    """``pair_delta`` (the dual's linear term) gives each label's ``Δ`` of its table row."""
    for loss, variant in VARIANTS:
        hinge = hinge_of(4, loss, variant)
        model = dual.HingeDualModel(hinge)
        cand = hinge.candidates
        for v in np.unique(hinge.y):
            row = dual._label_delta(hinge).row(int(v))
            np.testing.assert_allclose(
                model.pair_delta(np.full(len(cand), v), cand), row, rtol=1e-13, atol=0
            )


def _blob_data(tax: Taxonomy, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    cent = rng.normal(scale=1.5, size=(len(leaves), 6))
    pick = rng.integers(0, len(leaves), n)
    X = cent[pick] + rng.normal(size=(n, 6))
    X[np.abs(X) < 0.8] = 0.0
    return X, leaves[pick].astype(object)


@pytest.mark.parametrize("kind", ["dense", "csr"])
@pytest.mark.parametrize(
    "make",
    [
        lambda t: HSVMClassifier(taxonomy=t, lam=0.5, solver="bcfw", tol=1e-5, epochs=3000),
        lambda t: HSVMClassifier(
            taxonomy=t, lam=0.5, loss="hamming", solver="bcfw", tol=1e-5, epochs=3000
        ),
        lambda t: NHSVMClassifier(taxonomy=t, lam=0.5, solver="bcfw", tol=1e-5, epochs=3000),
        lambda t: NHSVMClassifier(
            taxonomy=t, lam=0.5, variant="eq13", solver="bcfw", tol=1e-5, epochs=3000
        ),
    ],
)
def test_implicit_bcfw_certifies_the_tables_optimum(
    kind: str, make, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BCFW with the labels formed on the fly and with the explicit tables bracket the same
    optimum: each run's lower bound stays below the other's ``J``, and their weights are as
    close as ``lam``-strong convexity allows (``lam ||W - W*||^2 <= J(W) - J*``)."""
    tax = random_tree(7, n_nodes=18)
    X, y = _blob_data(tax, 120, 3)
    Xf = sp.csr_matrix(X) if kind == "csr" else X
    runs = []
    for implicit in (True, False):
        with monkeypatch.context() as mp:
            if not implicit:
                mp.setattr(dual.HingeDualModel, "implicit_blocks", lambda self, y, C: None)
            est = make(tax)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                est.fit(Xf, y)
            runs.append(est)
    a, b = runs
    assert dual.implicit_labels(a._objective_model_)  # the first run formed its labels
    for p, q in ((a, b), (b, a)):
        assert p.lower_bound_ <= q.objective_ * (1 + 1e-12)
    lam_n = 0.5 / len(y)  # the objective's lam (the paper's summed loss divided by N)
    gap = np.sqrt((a.objective_ - a.lower_bound_) / lam_n)
    gap += np.sqrt((b.objective_ - b.lower_bound_) / lam_n)
    assert np.linalg.norm(a.W_ - b.W_) <= gap + 1e-9
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-4)
