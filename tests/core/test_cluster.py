"""hierlab on a dask.distributed cluster of two worker processes: the results equal the serial
run's, and the data reach each worker once per job."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import distributed
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import hierlab
from hierlab import HierDataset, ParameterError, make_estimator
from hierlab.core.cluster import active_client, probe, run_tasks, share, use_cluster
from hierlab.evaluation.compare import compare
from hierlab.evaluation.tune import tune

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def client() -> Iterator[distributed.Client]:
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def text() -> HierDataset:
    train, _ = hierlab.make_hierarchical_text(
        n_samples=400, n_classes=8, n_features=300, depth=2, random_state=3
    )
    return train


def _pid_and_id(data: np.ndarray, k: int) -> tuple[int, int, float]:
    """Where a task ran and which copy of the shared array it saw."""
    return os.getpid(), id(data), float(data[k])


def test_shared_data_reach_each_worker_once(client: distributed.Client) -> None:
    big = np.arange(200_000, dtype=np.float64)
    with use_cluster(client):
        assert active_client() is client
        out = list(run_tasks(_pid_and_id, [(k,) for k in range(12)], share(big)))
    assert [v for _, _, v in out] == [float(k) for k in range(12)]  # in the order given
    copies: dict[int, set[int]] = {}
    for pid, ident, _ in out:
        copies.setdefault(pid, set()).add(ident)
    assert os.getpid() not in copies  # the tasks ran in the worker processes
    assert all(len(ids) == 1 for ids in copies.values())  # one copy per worker, not per task
    assert active_client() is None


def test_compare_on_the_cluster_equals_serial(
    client: distributed.Client, text: HierDataset
) -> None:
    methods = [
        ("topdown", {"C": 1.0}),
        ("ovr-svm", {"solver": "liblinear"}),
        ("hieron", {}),
        ("flatmult", {"max_iter": 30}),
    ]
    serial = compare(text, methods, n_splits=2, random_state=1)
    dist = compare(text, methods, n_splits=2, random_state=1, client=client)
    cols = ["method", "split", "metric", "value", "n_iter"]
    pd.testing.assert_frame_equal(serial.results[cols], dist.results[cols])
    for key, pred in serial.predictions.items():
        np.testing.assert_array_equal(pred, dist.predictions[key])


def test_tune_paths_on_the_cluster_equal_serial(
    client: distributed.Client, text: HierDataset
) -> None:
    est = make_estimator("flatmult", taxonomy=text.taxonomy)
    Cs = [0.01, 0.1, 1.0, 10.0]
    serial = tune(est, text.X, text.y, Cs=Cs, n_paths=2, patience=None)
    dist = tune(est, text.X, text.y, Cs=Cs, client=client, patience=None)  # one per worker
    cols = ["C", "score", "n_iter", "gap", "warm"]
    pd.testing.assert_frame_equal(serial.path[cols], dist.path[cols])
    assert dist.path["warm"].tolist() == [False, True, False, True]  # two warm-started paths
    assert serial.best_C == dist.best_C
    np.testing.assert_array_equal(serial.estimator.predict(text.X), dist.estimator.predict(text.X))
    with pytest.raises(ParameterError, match="n_paths"):
        tune(est, text.X, text.y, Cs=Cs, n_paths=0)


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize(
    "name, params",
    [
        ("topdown", {}),
        ("ovr-svm", {"solver": "liblinear"}),
        ("hr-svm", {"solver": "block-cd", "loss": "hinge", "max_iter": 6, "tol": 1e-6}),
    ],
)
def test_estimators_on_the_cluster_equal_serial(
    client: distributed.Client, text: HierDataset, name: str, params: dict, dense: bool
) -> None:
    X = text.X.toarray() if dense else sp.csr_matrix(text.X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a capped max_iter may warn; both runs alike
        serial = make_estimator(name, taxonomy=text.taxonomy, **params).fit(X, text.y)
        with use_cluster(client):
            dist = make_estimator(name, taxonomy=text.taxonomy, **params).fit(X, text.y)
    a, b = serial.coef_, dist.coef_
    a, b = (a.toarray(), b.toarray()) if sp.issparse(a) else (a, b)
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(serial.predict(X), dist.predict(X))
    assert getattr(serial, "n_iter_", 0) == getattr(dist, "n_iter_", 0)


def test_connect_by_address(client: distributed.Client, text: HierDataset) -> None:
    addr = client.scheduler.address
    c = hierlab.connect(addr)
    try:
        assert active_client() is c
        with use_cluster(None):
            assert active_client() is None  # this machine inside the block
    finally:
        hierlab.disconnect()
        c.close()
    assert active_client() is None
    assert probe(addr) == 2  # the two worker threads, the probe's connection closed again
    with pytest.raises(ParameterError, match="tcp://host:port"):
        hierlab.connect("localhost")
    with pytest.raises(ParameterError, match="no dask scheduler"):
        hierlab.connect("tcp://127.0.0.1:1", timeout=1)


def test_scale_curves_and_the_speedup_benchmark_on_the_cluster(
    client: distributed.Client, text: HierDataset
) -> None:
    from hierlab.benchmarks.bench import scale_curves_many
    from hierlab.benchmarks.cluster import cluster_speedups

    grid = {
        "n_docs": [200, 400],
        "n_classes": [4, 8],
        "docs_at_fixed_classes": 4,
        "docs_for_class_curve": 300,
        "n_features": 200,
        "isolate": False,
    }
    serial, _ = scale_curves_many(["topdown"], **grid)
    with use_cluster(client):
        dist, _ = scale_curves_many(["topdown"], **grid)
    cols = ["method", "curve", "n_docs", "n_classes", "n_nodes", "nnz", "n_iter"]
    pd.testing.assert_frame_equal(serial[cols], dist[cols])
    assert dist["fit_time"].notna().all()
    table = cluster_speedups(
        text, client, methods=["topdown", "hieron"], n_splits=2, hr_params={"max_iter": 3}
    )
    assert table["run"].tolist() == ["serial", "1 worker", "2 workers"] * 2
    assert table["workers"].tolist() == [0, 1, 2] * 2
    assert table["same_result"].all()
    assert (table["cpu_s"] > 0).all()
    np.testing.assert_allclose(table["speedup"], table["wall_s"].iloc[[0, 0, 0, 3, 3, 3]].to_numpy()
                               / table["wall_s"].to_numpy())  # fmt: skip
    assert np.isnan(table["vs_1_worker"].iloc[0]) and table["vs_1_worker"].iloc[1] == 1.0
    assert set(table.attrs["warm_up_s"]) == {"here", *client.nthreads()}


def _boom(k: int) -> int:
    if k == 3:
        raise ValueError("task 3 fails")
    return k * k


def test_tasks_on_some_workers_and_one_per_thread(client: distributed.Client) -> None:
    first = sorted(client.nthreads())[0]
    big = np.arange(50_000, dtype=np.float64)
    with use_cluster(client, workers=[first]):
        from hierlab.core.cluster import cluster_cores

        assert cluster_cores(client) == 1
        (fut,) = share(big)
        assert set(client.who_has([fut])[fut.key]) == {first}  # scattered to that worker only
        for one in (False, True):
            out = list(run_tasks(_pid_and_id, [(k,) for k in range(6)], (fut,),
                                 one_per_thread=one))  # fmt: skip
            assert [v for _, _, v in out] == [float(k) for k in range(6)]
            assert len({pid for pid, _, _ in out}) == 1  # one worker process
    with use_cluster(client):
        items = [(k,) for k in range(8)]
        got = list(run_tasks(_square, items, one_per_thread=True, kind=lambda t: t[0] % 3))
        assert got == [k * k for k in range(8)]
        with pytest.raises(ValueError, match="task 3 fails"):
            list(run_tasks(_boom, items, one_per_thread=True))
    with pytest.raises(ParameterError, match="workers must be"):
        with use_cluster(client, workers=["tcp://127.0.0.1:1"]):
            pass


def _square(k: int) -> int:
    return k * k


def test_the_queue_sends_one_of_each_kind_then_the_longest_kinds() -> None:
    from hierlab.core.cluster import _Queue

    kinds = ["a", "b", "c", "a", "b", "c", "a", "b", "c"]
    q = _Queue([(k,) for k in kinds], kind=lambda t: t[0])
    assert [q.pop(), q.pop()] == [0, 1]  # one of each kind, in the given order
    q.done(0, 5.0)  # an "a" took 5 s
    assert q.pop() == 2  # "c" not started yet
    q.done(1, 1.0)  # a "b" took 1 s; "c" still unmeasured: first
    assert q.pop() == 5
    q.done(2, 0.5)  # a "c" took 0.5 s: now "a" (5 s), then "b" (1 s), then "c"
    assert [q.pop(), q.pop(), q.pop(), q.pop()] == [3, 6, 4, 7]
    assert q.pop() == 8 and len(q) == 0
    plain = _Queue([(1,), (2,), (3,)], kind=None)
    assert [plain.pop(), plain.pop(), plain.pop()] == [0, 1, 2]


def _set_env(key: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(key, None)
    else:
        os.environ[key] = value


def test_workers_a_nanny_gave_a_fixed_mmap_threshold_are_named(client: distributed.Client) -> None:
    from hierlab.benchmarks.cluster import nanny_malloc_note

    note = nanny_malloc_note(client)  # LocalCluster's nannies set MALLOC_TRIM_THRESHOLD_
    assert note is not None and note.startswith("2 worker(s)") and "--no-nanny" in note
    client.run(_set_env, "MALLOC_MMAP_THRESHOLD_", "33554432")
    try:
        assert nanny_malloc_note(client) is None
    finally:
        client.run(_set_env, "MALLOC_MMAP_THRESHOLD_", None)
