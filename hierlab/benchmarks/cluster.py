"""What a dask.distributed cluster buys: the same jobs here, on 1 worker and on every worker.

``hierlab bench --data ipc --dask tcp://host:port`` runs (1) ``compare`` of 4 methods on 3
random splits (12 independent fits, one task each, one per worker thread at a time, the
methods with the longest fits first) and (2) HR-SVM's block coordinate descent (seed 001's
solver: the leaves of one parity level solved in parallel blocks), each three ways: serially in
this process, on one worker of the cluster, and on all its workers (the same cluster, the job
kept on the first k workers). It prints the wall time of each, the speed-up against the serial
run and against one worker, the CPU seconds spent (this process plus every worker process: the
speed-up is honest only when the CPU time did not grow with it), and checks that every run
gives the serial run's numbers.

Before anything is timed, this process and every worker are warmed up (not timed, printed): a
comparison of the same methods and an HR-SVM iteration on the first 600 rows, so imports and
the compiled kernels' loading from numba's cache are paid once per process, as on a cluster
whose workers outlive one job. Start the cluster with ``dask scheduler`` and ``dask worker
ADDRESS --nthreads 1 --no-nanny`` (one per core) with single-threaded BLAS
(``OPENBLAS_NUM_THREADS=1``). A worker started by dask's nanny gets
``MALLOC_TRIM_THRESHOLD_=65536`` (dask's ``pre-spawn-environ``), which also fixes glibc's
mmap threshold at 128 KiB: every large temporary of a fit is mapped afresh and faulted in, page
by page (measured on IPC: an ovr-svm fit 1.2 -> 2.7 s of system time, 4x the page faults, +24%
wall): :func:`cluster_speedups` says so when the workers have it. A loaded machine gives
smaller speed-ups, so quote ``uptime`` beside them.
"""

from __future__ import annotations

import os
import resource
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.cluster import active_client, cluster_cores, use_cluster
from hierlab.core.dataset import HierDataset
from hierlab.core.registry import make_estimator
from hierlab.evaluation.compare import compare

__all__ = ["COMPARE_METHODS", "WARM_ROWS", "cluster_speedups", "nanny_malloc_note", "warm_up"]

#: the methods of the timed comparison (one per family that fits fast on many classes)
COMPARE_METHODS = ("topdown", "ovr-svm", "hr-svm", "hieron")

#: rows of the warm-up fits
WARM_ROWS = 600


def _cpu_here() -> float:
    """CPU seconds of this process (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return float(r.ru_utime + r.ru_stime)


def _cpu_workers(client: Any) -> float:
    """CPU seconds of every worker process of ``client`` so far."""
    if client is None:
        return 0.0
    return float(sum(client.run(_cpu_here).values()))


def _timed(job: Callable[[], Any], client: Any) -> tuple[Any, float, float]:
    """``job()`` with its wall seconds and the CPU seconds it cost here and on the workers."""
    c0, w0, t0 = _cpu_here(), _cpu_workers(client), time.perf_counter()
    out = job()
    wall = time.perf_counter() - t0
    return out, wall, _cpu_here() - c0 + _cpu_workers(client) - w0


def _malloc_env() -> tuple[str | None, str | None]:
    """glibc's trim and mmap thresholds set in this process's environment (None: unset)."""
    return os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("MALLOC_MMAP_THRESHOLD_")


def nanny_malloc_note(client: Any) -> str | None:
    """A warning when a worker runs with a trim threshold but no mmap threshold (what dask's
    nanny gives it): fits there pay a page fault per page of every large temporary."""
    bad = sorted(w for w, (trim, mmap) in client.run(_malloc_env).items() if trim and not mmap)
    if not bad:
        return None
    return (
        f"{len(bad)} worker(s) run with MALLOC_TRIM_THRESHOLD_ set and no MALLOC_MMAP_THRESHOLD_ "
        "(dask's nanny sets it): their fits map every large temporary afresh (measured +24% "
        "wall on IPC). Start workers with --no-nanny, or with MALLOC_TRIM_THRESHOLD_=67108864 "
        "MALLOC_MMAP_THRESHOLD_=33554432 in their environment."
    )


def warm_up(methods: Sequence[str], hr: dict[str, Any], small: HierDataset) -> float:
    """Compare ``methods`` and run one HR-SVM iteration (``hr``) on ``small``: the imports and
    compiled kernels the timed jobs need, loaded in this process. Returns the wall seconds."""
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one iteration does not converge: not the point
        compare(small, list(methods), split="repeated", n_splits=1, random_state=0)
        est = make_estimator("hr-svm", taxonomy=small.taxonomy, **{**hr, "max_iter": 1})
        est.fit(small.X, small.y)
    return time.perf_counter() - t0


def _warm_everywhere(
    client: Any, methods: Sequence[str], hr: dict[str, Any], train: HierDataset
) -> dict[str, float]:
    """:func:`warm_up` here and on every worker (one task pinned to each); their seconds."""
    small = train.subset(np.arange(min(WARM_ROWS, train.n_samples)))
    with use_cluster(None):
        here = warm_up(methods, hr, small)
    workers = sorted(client.nthreads())
    futures = [
        client.submit(warm_up, list(methods), hr, small, workers=[w], pure=False) for w in workers
    ]
    return {"here": here, **dict(zip(workers, client.gather(futures)))}


def cluster_speedups(
    data: HierDataset | tuple[HierDataset, HierDataset],
    client: Any = None,
    methods: Sequence[str] = COMPARE_METHODS,
    n_splits: int = 3,
    hr_params: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Time ``compare`` and HR-SVM (block CD) serially here, on 1 worker and on all workers.

    Parameters
    ----------
    data : HierDataset or (train, test) pair
    client : distributed.Client, optional
        Default: the cluster in use (:func:`hierlab.connect`, ``--dask``).
    methods : sequence of str
        The compared methods (default :data:`COMPARE_METHODS`), on ``n_splits`` random splits.
    hr_params : dict, optional
        HR-SVM's parameters (``solver="block-cd"`` always).
    progress : callable, optional
        Called with a line before each run.

    Returns
    -------
    DataFrame
        Per job, one row for the serial run and one per worker count (1, and every worker):
        ``job``, ``run``, ``workers``, ``wall_s``, ``cpu_s`` (this process and every worker),
        ``speedup`` (serial wall / wall), ``vs_1_worker`` (1-worker wall / wall),
        ``same_result`` (equal to the serial run's numbers). ``attrs["warm_up_s"]``: the
        seconds of the untimed warm-up, here (``"here"``) and on each worker.
    """
    client = client if client is not None else active_client()
    if client is None:
        raise ValueError("cluster_speedups needs a dask cluster: --dask ADDRESS or client=")
    note = progress or (lambda s: None)
    train = data[0] if isinstance(data, tuple) else data
    hr = {"solver": "block-cd", "loss": "hinge", **(hr_params or {})}
    jobs: dict[str, Callable[[], Any]] = {
        f"compare ({len(methods)} methods x {n_splits} splits)": lambda: (
            compare(
                data, list(methods), split="repeated", n_splits=n_splits, random_state=0
            ).results
        ),
        "hr-svm (block-cd)": lambda: (
            make_estimator("hr-svm", taxonomy=train.taxonomy, **hr).fit(train.X, train.y).coef_
        ),
    }
    malloc = nanny_malloc_note(client)
    if malloc:
        note(f"warning: {malloc}")
    note(f"warm-up (not timed): the methods on {WARM_ROWS} rows, here and on every worker")
    warm = _warm_everywhere(client, methods, hr, train)
    workers = sorted(client.nthreads())
    rows = []
    for name, job in jobs.items():
        note(f"{name}: serial, on this machine")
        with use_cluster(None):
            ref, wall, cpu = _timed(job, None)
        rows.append({"job": name, "run": "serial", "workers": 0, "wall_s": wall, "cpu_s": cpu,
                     "same_result": True})  # fmt: skip
        for k in sorted({1, len(workers)}):
            with use_cluster(client, workers=workers[:k]):
                note(f"{name}: on {k} worker(s), {cluster_cores(client)} thread(s)")
                out, wall, cpu = _timed(job, client)
            rows.append({"job": name, "run": f"{k} worker" + "s" * (k > 1), "workers": k,
                         "wall_s": wall, "cpu_s": cpu, "same_result": _same(ref, out)})  # fmt: skip
    table = _with_speedups(pd.DataFrame(rows))
    table.attrs["warm_up_s"] = warm
    return table


def _with_speedups(df: pd.DataFrame) -> pd.DataFrame:
    """``speedup`` against each job's serial run and ``vs_1_worker`` against its 1-worker run."""
    serial = df[df.run == "serial"].set_index("job")["wall_s"]
    one = df[df.workers == 1].set_index("job")["wall_s"]
    df["speedup"] = df["job"].map(serial) / df["wall_s"]
    df["vs_1_worker"] = (df["job"].map(one) / df["wall_s"]).where(df.workers >= 1)
    cols = ["job", "run", "workers", "wall_s", "cpu_s", "speedup", "vs_1_worker", "same_result"]
    return df[cols]


def _same(a: Any, b: Any) -> bool:
    """Equal results: the comparison's scores, or HR-SVM's weights (to 1e-8)."""
    if isinstance(a, pd.DataFrame):
        cols = ["method", "split", "metric", "value"]
        return bool(a[cols].reset_index(drop=True).equals(b[cols].reset_index(drop=True)))
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-8))
