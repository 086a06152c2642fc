"""``DualMetric.apply`` (``W^T = V^T P``) against the product it stands for.

With a diagonal metric the product is element-wise; with a 0/1 diagonal whose zero rows are
zero in ``V^T`` it is ``V^T`` itself, returned without a copy. Either way the numbers are
``V^T * pdiag``'s to the bit, and a full ``P`` is a matrix product.
"""

from __future__ import annotations

import numpy as np
import pytest

from hierlab.core.regularizers import DualMetric


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apply_equals_the_product(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d, m = 7, 9
    active = rng.random(m) < 0.7
    active[0] = False
    mask = active.astype(np.float64)
    metric = DualMetric.diagonal(mask, active)
    VT = rng.normal(size=(d, m))
    VT[:, ~active] = 0.0  # mass on active rows only: no copy
    VT[0, ~active] = -0.0
    got = metric.apply(VT)
    assert got is VT
    np.testing.assert_array_equal(got, VT * mask)
    assert np.array_equal(np.signbit(got), np.signbit(VT * mask))
    VT2 = rng.normal(size=(d, m))  # mass on an inactive row: the product, a new array
    got2 = metric.apply(VT2)
    assert got2 is not VT2
    np.testing.assert_array_equal(got2, VT2 * mask)
    scaled = DualMetric.diagonal(rng.random(m) + 0.5, np.ones(m, dtype=bool))
    VT3 = rng.normal(size=(d, m))
    got3 = scaled.apply(VT3)
    assert got3 is not VT3
    np.testing.assert_array_equal(got3, VT3 * scaled.pdiag)
    P = rng.normal(size=(m, m))
    full = DualMetric(np.ones(m, dtype=bool), P + P.T)
    np.testing.assert_allclose(full.apply(VT3), VT3 @ (P + P.T), rtol=1e-12)
    metric.pdiag = rng.random(m)  # the diagonal changed (a relaxation step): no stale mask
    np.testing.assert_array_equal(metric.apply(VT), VT * metric.pdiag)
