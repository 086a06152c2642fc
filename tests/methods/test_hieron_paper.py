"""Hieron as seed 002 prints it (issue #19).

- ``hieron``'s "paper" preset (its default) is Algorithm 1: its last hypothesis equals a direct
  transcription of Algorithm 1 (conservative passive-aggressive updates on the prediction's
  mistakes, eq. 7-8), and it predicts with that last hypothesis; ``average=True`` predicts with
  the average of eq. (13);
- ``hieron-batch``'s hypotheses equal a transcription of Section 4 (the loss-maximising
  competitor, the average ``1/(m+1) sum_{i=1}^{m+1} w_i`` of eq. 13);
- the root, an unlabelled vertex with its fixed zero prototype, is never predicted, even when
  every score is <= 0; a root that the data labels (the synthetic set) stays a candidate.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.registry import make_estimator
from hierlab.core.taxonomy import Taxonomy

PARENT = [-1, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4]


def path(parent: list[int], v: int) -> set[int]:
    """P(v): the vertices from the root to v (root included)."""
    out = {v}
    while parent[v] >= 0:
        v = parent[v]
        out.add(v)
    return out


def data(seed: int, n: int = 120, d: int = 6, leaves_only: bool = True):
    rng = np.random.default_rng(seed)
    tax = Taxonomy.from_parent_array(PARENT)
    labels = np.asarray(tax.leaves) if leaves_only else np.arange(1, tax.n_nodes)
    y = rng.choice(labels, size=n)
    proto = rng.normal(size=(tax.n_nodes, d))
    W = np.array([proto[sorted(path(PARENT, v))].sum(axis=0) for v in range(tax.n_nodes)])
    X = W[y] + 0.9 * rng.normal(size=(n, d))
    return tax, X, y


def transcription(X: np.ndarray, y: np.ndarray, n_nodes: int, update: str):
    """Seed 002, Algorithm 1 (update="prediction") or its batch variant of Section 4
    (update="max-loss"): one pass in the given order. Returns the last prototypes ``W`` and
    the average of eq. (13), ``1/(m+1) sum_{i=1}^{m+1} W_i`` with ``W_1 = 0``. The root is
    no label: candidates are the vertices 1..k-1; ties go to the smallest id."""
    P = [path(PARENT, v) for v in range(n_nodes)]
    gamma = np.array([[len(P[a] ^ P[b]) for b in range(n_nodes)] for a in range(n_nodes)])
    m, d = X.shape
    w = np.zeros((n_nodes, d))  # increments w^v; w^0 stays 0
    proto = lambda w: np.array([w[sorted(P[v])].sum(axis=0) for v in range(n_nodes)])  # noqa: E731
    total = proto(w)  # W_1 = 0
    for i in range(m):
        x, yi = X[i], int(y[i])
        S = proto(w) @ x
        cand = np.arange(1, n_nodes)
        if update == "prediction":
            yh = int(cand[np.argmax(S[cand])])
        else:
            yh = int(cand[np.argmax(S[cand] - S[yi] + np.sqrt(gamma[yi, cand]))])
        if yh != yi:
            loss = S[yh] - S[yi] + np.sqrt(gamma[yi, yh])  # eq. (5)
            if loss > 0:
                alpha = loss / (gamma[yi, yh] * float(x @ x))  # eq. (8)
                for v in P[yi] - P[yh]:
                    w[v] += alpha * x
                for v in P[yh] - P[yi]:
                    w[v] -= alpha * x
        total += proto(w)  # W_{i+1}
    return proto(w), total / (m + 1)


@pytest.mark.parametrize("sparse", [False, True])
def test_hieron_paper_preset_is_algorithm1_and_predicts_with_the_last_hypothesis(
    sparse: bool,
) -> None:
    tax, X, y = data(0)
    Xf = sp.csr_matrix(X) if sparse else X
    est = make_estimator("hieron", taxonomy=tax, preset="paper", shuffle=False)
    assert est.get_params()["average"] is False  # the default too
    est.fit(Xf, tax.names[y])
    last, avg = transcription(X, y, tax.n_nodes, "prediction")
    np.testing.assert_allclose(est.prototypes_, last, atol=1e-9)
    assert est.algorithm_ == "Hieron, Algorithm 1 of seed 002, last hypothesis"
    pred_last = [tax.names[int(v)] for v in np.argmax((X @ last.T)[:, 1:], axis=1) + 1]
    assert list(est.predict(Xf)) == pred_last
    averaged = make_estimator("hieron", taxonomy=tax, shuffle=False, average=True)
    averaged.fit(Xf, tax.names[y])
    np.testing.assert_allclose(averaged.prototypes_, avg, atol=1e-9)
    assert averaged.algorithm_ == "Hieron, Algorithm 1 of seed 002, averaged hypothesis (eq. 13)"
    pred_avg = [tax.names[int(v)] for v in np.argmax((X @ avg.T)[:, 1:], axis=1) + 1]
    assert list(averaged.predict(Xf)) == pred_avg
    assert pred_avg != pred_last  # the two hypotheses differ here: the test can tell them apart


def test_hieron_batch_is_section4_with_the_average_of_eq13() -> None:
    tax, X, y = data(1)
    est = make_estimator("hieron-batch", taxonomy=tax, preset="paper", shuffle=False)
    est.fit(X, tax.names[y])
    last, avg = transcription(X, y, tax.n_nodes, "max-loss")
    np.testing.assert_allclose(est.prototypes_, avg, atol=1e-9)
    last_est = make_estimator("hieron", taxonomy=tax, update="max-loss", shuffle=False)
    np.testing.assert_allclose(last_est.fit(X, tax.names[y]).prototypes_, last, atol=1e-9)


@pytest.mark.parametrize("name", ["hieron", "hieron-batch", "hieron-flat"])
@pytest.mark.parametrize("sparse", [False, True])
def test_the_unlabelled_root_is_never_predicted(name: str, sparse: bool) -> None:
    tax, X, y = data(2, leaves_only=False)
    est = make_estimator(name, taxonomy=tax).fit(X, tax.names[y])
    # rows whose every score is <= 0: zeros (all scores 0, the root's included) and the
    # negated training rows pushed far out
    S_neg = -10.0 * X
    Z = np.vstack([np.zeros((3, X.shape[1])), S_neg])
    scores = est.node_scores(Z)
    worst = scores[:3]
    assert np.all(worst == 0.0)
    Zf = sp.csr_matrix(Z) if sparse else Z
    for hyp in ("last", "average"):
        pred = est.predict_with(Zf, hyp)
        assert tax.names[0] not in set(pred), hyp
    assert tax.names[0] not in set(est.predict(Zf))
    ids = np.asarray([tax.index(v) for v in est.predict(Zf)])
    assert np.all(ids > 0)
    # the smallest-id tie rule picks vertex 1 for the all-zero rows (it used to be the root)
    assert list(ids[:3]) == [1, 1, 1]


def test_a_labelled_root_stays_a_candidate() -> None:
    """Seed 002's synthetic set labels all 121 vertices, the root included."""
    tax, X, y = data(3, leaves_only=False)
    y = y.copy()
    y[:10] = 0
    X[:10] = 0.05 * np.random.default_rng(0).normal(size=(10, X.shape[1]))
    est = make_estimator("hieron-batch", taxonomy=tax).fit(X, tax.names[y])
    assert est.engine_.candidates is None
    assert tax.names[0] in set(est.predict(np.zeros((2, X.shape[1]))))
    seen = make_estimator("hieron", taxonomy=tax, candidates="seen").fit(X, tax.names[y])
    assert 0 in set(seen.engine_.candidates)
