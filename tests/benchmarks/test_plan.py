"""bench --plan: the fitted models recover exact power laws and linear memory, and the check
point is predicted exactly when the model holds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hierlab.benchmarks.plan import TARGETS, check_point, fit_plan, plan_table


def _table(b: float = 1.1, c: float = 0.4) -> pd.DataFrame:
    rows = []
    for nd, nc in [(5_000, 100), (20_000, 100), (50_000, 100), (20_000, 1_000), (20_000, 10_000)]:
        nnz, nodes = nd * 40, int(nc * 1.12)
        rows.append(
            {
                "method": "m",
                "n_docs": nd,
                "n_classes": nc,
                "n_nodes": nodes,
                "nnz": nnz,
                "fit_time": 1e-4 * nnz**b * nc**c,
                "peak_rss_mb": (300 * 2**20 + 24 * nnz + 8 * nodes * 2_000) / 2**20,
            }
        )
    return pd.DataFrame(rows)


def test_fit_recovers_the_laws_and_the_check_is_exact() -> None:
    model = fit_plan(_table(), "m", n_features=2_000)
    assert model.b == pytest.approx(1.1) and model.c == pytest.approx(0.4)
    assert model.alpha == pytest.approx(24, rel=1e-6) and model.beta == pytest.approx(8, rel=1e-6)
    assert model.m0 == pytest.approx(300 * 2**20, rel=1e-6)
    check = check_point(_table(), "m", n_features=2_000)
    assert check is not None and check["n_classes"] == 10_000
    assert check["time_ratio"] == pytest.approx(1.0) and check["memory_ratio"] == pytest.approx(1.0)


def test_the_table_divides_time_and_weights_by_the_workers() -> None:
    model = fit_plan(_table(), "m", n_features=2_000)
    tab = plan_table(model, workers=(1, 4, 16))
    assert list(tab["target"].unique()) == [t.name for t in TARGETS]
    lshtc = tab[tab["target"] == "LSHTC-2010-like"].set_index("workers")
    assert lshtc.loc[4, "fit_time_h"] == pytest.approx(lshtc.loc[1, "fit_time_h"] / 4)
    nnz = 128_710 * 40
    cells = 12_294 * model.nodes_per_leaf * 381_580
    want = (300 * 2**20 + 24 * nnz + 8 * cells / 16) / 2**30
    assert lshtc.loc[16, "memory_per_worker_gb"] == pytest.approx(want, rel=1e-6)
    assert lshtc.loc[1, "fit_time_h"] == pytest.approx(1e-4 * nnz**1.1 * 12_294**0.4 / 3600)
    with pytest.raises(ValueError, match=">= 3"):
        fit_plan(_table().iloc[:2], "m", 2_000)
    assert np.isfinite(tab["memory_per_worker_gb"]).all()


def test_cpu_seconds_are_the_clock_when_recorded() -> None:
    table = _table().assign(fit_cpu=lambda d: d["fit_time"] / 7.0)  # a loaded machine's wall
    model = fit_plan(table, "m", n_features=2_000)
    assert model.clock == "fit_cpu"
    assert model.b == pytest.approx(1.1) and model.c == pytest.approx(0.4)
    assert model.time(1e6, 100) == pytest.approx(1e-4 * 1e6**1.1 * 100**0.4 / 7.0)
