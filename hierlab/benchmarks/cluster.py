"""What a dask.distributed cluster buys: the same jobs on this machine and on the cluster.

``hierlab bench --data ipc --dask tcp://host:port`` runs, once here (one process, serial) and
once on the cluster, (1) ``compare`` of 4 methods on 3 random splits (12 independent fits, one
task each) and (2) HR-SVM's block coordinate descent (seed 001's solver: the leaves of one
parity level solved in parallel blocks). It prints the wall time of each, the speed-up, and the
CPU seconds spent (this process, plus every worker process on the cluster: the speed-up is
honest only when the CPU time did not grow with it), and checks that both runs give the same
numbers. Start the cluster with ``dask scheduler`` and ``dask worker ADDRESS --nthreads 1``
(one per core); a loaded machine gives smaller speed-ups, so quote ``uptime`` beside them.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.cluster import active_client, cluster_cores, use_cluster
from hierlab.core.dataset import HierDataset
from hierlab.core.registry import make_estimator
from hierlab.evaluation.compare import compare

__all__ = ["COMPARE_METHODS", "cluster_speedups"]

#: the methods of the timed comparison (one per family that fits fast on many classes)
COMPARE_METHODS = ("topdown", "ovr-svm", "hr-svm", "hieron")


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


def cluster_speedups(
    data: HierDataset | tuple[HierDataset, HierDataset],
    client: Any = None,
    methods: Sequence[str] = COMPARE_METHODS,
    n_splits: int = 3,
    hr_params: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Time ``compare`` and HR-SVM (block CD) serially here and on the cluster.

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
        One row per job: ``job``, ``workers`` (the cluster's threads), ``serial_s``,
        ``cluster_s``, ``speedup``, ``serial_cpu_s``, ``cluster_cpu_s`` (this process and
        the workers), ``same_result``.
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
    rows = []
    for name, job in jobs.items():
        note(f"{name}: serial, on this machine")
        with use_cluster(None):
            ref, t_serial, c_serial = _timed(job, None)
        note(f"{name}: on the cluster ({cluster_cores(client)} worker threads)")
        with use_cluster(client):
            out, t_cluster, c_cluster = _timed(job, client)
        rows.append(
            {
                "job": name,
                "workers": cluster_cores(client),
                "serial_s": t_serial,
                "cluster_s": t_cluster,
                "speedup": t_serial / t_cluster,
                "serial_cpu_s": c_serial,
                "cluster_cpu_s": c_cluster,
                "same_result": _same(ref, out),
            }
        )
    return pd.DataFrame(rows)


def _same(a: Any, b: Any) -> bool:
    """Equal results: the comparison's scores, or HR-SVM's weights (to 1e-8)."""
    if isinstance(a, pd.DataFrame):
        cols = ["method", "split", "metric", "value"]
        return bool(a[cols].reset_index(drop=True).equals(b[cols].reset_index(drop=True)))
    return bool(np.allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-8))
