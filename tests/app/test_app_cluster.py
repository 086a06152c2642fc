"""The app pointed at a dask cluster: the sidebar setting checks the address, the jobs panel says
where the work runs, and a comparison's engine run there gives the local numbers."""

from __future__ import annotations

from collections.abc import Iterator

import distributed
import pandas as pd
import pytest

from app.state.compare import run_engine
from tests.app.test_app_pages import _new, _ok, _state

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    """A two-process cluster started here, outside Streamlit (loopback only)."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:  # fmt: skip
        yield str(cluster.scheduler_address)


def test_the_setting_checks_the_address_and_the_engine_runs_there(address: str) -> None:
    at = _new()
    at.run()
    _ok(at)
    at.text_input(key="cluster_address").set_value("tcp://127.0.0.1:1")
    at.button(key="cluster_use").click()
    at.run()
    assert not at.exception
    assert any("no dask scheduler answers" in e.value for e in at.error)
    assert _state(at).cluster is None  # the work stays here
    at.text_input(key="cluster_address").set_value(address)
    at.button(key="cluster_use").click()
    at.run()
    _ok(at)
    assert _state(at).cluster == address
    assert any("2 worker thread(s)" in s.value for s in at.success)
    at.run()
    assert any(f"the dask cluster at {address}" in e.label for e in at.get("expander"))

    entry = _state(at).datasets[_state(at).current]
    configs = [{"method": "topdown", "label": "topdown"}, {"method": "hieron", "label": "hieron"}]
    plan = {"mode": "random", "n_splits": 2, "test_size": 0.3, "seed": 0}
    here = run_engine((entry.train, entry.test), configs, plan).results
    there = run_engine((entry.train, entry.test), configs, {**plan, "cluster": address}).results
    cols = ["method", "split", "metric", "value"]
    pd.testing.assert_frame_equal(here[cols], there[cols])
