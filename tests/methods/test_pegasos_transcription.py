"""Seed 003's paper preset trains by plain Pegasos: transcribed here and compared epoch by epoch.

The transcription imports nothing from hierlab. HSVM (Cai & Hofmann; seed 003, eq. 2-3): one
weight vector per node, a leaf's score the sum of its path's (``Lambda(y)`` the path indicator,
root included), the loss ``max_y s(y) - s(y_i) + Delta(y, y_i)`` over the leaves and ``y_i``
(so clipped at 0), ``Delta`` the Hamming distance of the two paths (the preset's
``loss="hamming"``); the objective ``lam ||W||^2 + sum_i loss_i`` (eq. 3, ``lam = 1``), i.e.
``lambda/2 ||W||^2 + mean_i loss_i`` with Pegasos' ``lambda = 2 lam / N``.

Pegasos (Shalev-Shwartz, Singer & Srebro 2007) as printed: at step ``t`` (from 1) a mini-batch
``B`` (64 rows, an epoch's rows in a random order, each batch's rows sorted), the step ``eta_t =
1 / (lambda t)``, ``W <- (1 - eta_t lambda) W - eta_t / |B| sum_{i in B} g_i`` with ``g_i`` the
subgradient of ``loss_i`` at the most violating label (the first in node-id order on ties),
then the projection onto ``||W|| <= sqrt(max_loss / lambda)`` (its Theorem 1 with losses
bounded by ``max_loss = max Delta``); the last iterate is the answer, after every one of the
preset's 30 epochs. The rows' order is numpy's ``default_rng(0).permutation`` per epoch, as the
preset's ``random_state=0`` draws it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.registry import make_estimator
from hierlab.core.taxonomy import Taxonomy

PARENT = [-1, 0, 0, 1, 1, 2, 2]
EPOCHS, BATCH, LAM = 30, 64, 1.0  # the preset: epochs=None (30), batch_size 64, HSVM's lam = 1


def path_indicator(i: int) -> np.ndarray:
    a = np.zeros(len(PARENT))
    while i >= 0:
        a[i] = 1.0
        i = PARENT[i]
    return a


LEAVES = [i for i in range(len(PARENT)) if i not in PARENT]


def pegasos_hsvm(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Plain Pegasos on HSVM with the Hamming loss: the last iterate and J after each epoch."""
    n = len(y)
    lam = 2.0 * LAM / n
    Lam = {v: path_indicator(v) for v in {*LEAVES, *y.tolist()}}
    delta = {(a, b): float(np.sum(np.abs(Lam[a] - Lam[b]))) for a in Lam for b in Lam}
    max_loss = max(delta[(c, v)] for v in set(y.tolist()) for c in LEAVES)
    radius = np.sqrt(max_loss / lam)
    cands = sorted({*LEAVES})

    def loss_grad(W: np.ndarray, k: int) -> tuple[float, np.ndarray]:
        s = {c: float(Lam[c] @ (W @ X[k])) for c in cands}
        own = float(Lam[int(y[k])] @ (W @ X[k]))
        best, arg = 0.0, None  # y_k itself gives 0
        for c in cands:
            v = s[c] - own + delta[(c, int(y[k]))]
            if v > best:
                best, arg = v, c
        if arg is None:
            return 0.0, np.zeros_like(W)
        return best, np.outer(Lam[arg] - Lam[int(y[k])], X[k])

    def J(W: np.ndarray) -> float:
        return LAM / n * float(np.sum(W * W)) + sum(loss_grad(W, k)[0] for k in range(n)) / n

    rng = np.random.default_rng(0)
    W = np.zeros((len(PARENT), X.shape[1]))
    t, values = 0, []
    for _ in range(EPOCHS):
        perm = rng.permutation(n)
        for s in range(0, n, BATCH):
            t += 1
            eta = 1.0 / (lam * t)
            batch = np.sort(perm[s : s + BATCH])
            g = sum(loss_grad(W, k)[1] for k in batch) / len(batch)
            W = (1.0 - eta * lam) * W - eta * g
            norm = float(np.linalg.norm(W))
            if norm > radius:
                W = W * (radius / norm)
        values.append(J(W))
    return W, values


@pytest.mark.parametrize("sparse", [False, True])
def test_hsvm_paper_preset_is_plain_pegasos_epoch_by_epoch(sparse: bool) -> None:
    rng = np.random.default_rng(5)
    tax = Taxonomy.from_parent_array(PARENT)
    proto = rng.normal(size=(len(PARENT), 4))
    y = rng.choice(LEAVES, size=150)
    X = proto[y] + 0.7 * rng.normal(size=(150, 4))
    W, values = pegasos_hsvm(X, y)
    est = make_estimator("hsvm", taxonomy=tax, preset="paper")  # nothing overridden
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(sp.csr_matrix(X) if sparse else X, tax.names[y])
    assert est.algorithm_.endswith("plain (step 1/(lambda t), projection, last iterate)")
    got = est.history_["objective"].to_numpy()
    assert len(got) == EPOCHS  # every epoch runs: no early stop
    np.testing.assert_allclose(got, values, rtol=1e-8)
    np.testing.assert_allclose(est.W_, W, rtol=1e-8, atol=1e-12)
    # plain Pegasos is not the fast variant: the defaults' SGD gives another iterate
    fast = make_estimator("hsvm", taxonomy=tax, solver="pegasos", loss="hamming")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast.fit(X, tax.names[y])
    assert not np.allclose(fast.W_, W, rtol=1e-3)
