"""Running hierlab's independent tasks on a dask.distributed cluster, or on this machine.

A job (one ``compare``, one ``tune``, one ``fit``) sends its data to the workers once, with
:func:`share` (``Client.scatter(..., broadcast=True)``: every worker holds one copy), and then
hands out small tasks that name the shared data by its future (:func:`run_tasks`): a task
carries its own indices and parameters, never the data. Without a cluster the same calls run
through joblib on this machine (``n_jobs``; a ``joblib.parallel_config`` backend still wins),
so a result never depends on where it ran.

The cluster is chosen by :func:`connect` (an address ``tcp://host:port`` or a
``distributed.Client``) for the whole process, or by :func:`use_cluster` for a ``with`` block
(one thread's context), optionally on some of its workers only. Tasks that already run on a dask
worker never fan out again: the nested parts of a task (a top-down fit inside a comparison) run
serially on that worker.

Long tasks (a comparison's fits, tuning paths, HR-SVM's leaf blocks) are handed out one per
worker thread (``run_tasks(..., one_per_thread=True)``): a worker gets its next task when it
is free, so no task waits in one worker's queue while another worker idles (dask itself sends
a 1-thread worker two tasks at once: ``worker-saturation`` 1.1). Given each task's ``kind``
(tasks of one kind take about as long), one task of each kind runs first and then the longest
kinds, by their measured seconds, go first: a long task started last would leave the other
workers idle at the end (longest processing time first).

dask.distributed is optional (``pip install 'hierlab[dask]'``); it is imported only when a
cluster is used.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

import numpy as np

from hierlab.core.exceptions import ParameterError

__all__ = [
    "active_client",
    "cluster_cores",
    "connect",
    "disconnect",
    "job_cluster",
    "probe",
    "run_tasks",
    "share",
    "tasks_sent",
    "use_cluster",
]

_PROCESS_CLIENT: list[Any] = []  # the client of :func:`connect`, at most one
_CONTEXT_CLIENT: ContextVar[Any] = ContextVar("hierlab_cluster", default=None)
_CONTEXT_WORKERS: ContextVar[tuple[str, ...] | None] = ContextVar("hierlab_workers", default=None)
_SENT = [0]  # tasks this process sent to a cluster


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:  # pragma: no cover - dask is in [dev]
        raise ParameterError(
            "a dask cluster needs dask.distributed: pip install 'hierlab[dask]'"
        ) from exc
    return distributed


def connect(address: Any, timeout: float = 10.0) -> Any:
    """Use a dask.distributed cluster for every later hierlab job of this process.

    Parameters
    ----------
    address : str or distributed.Client
        The scheduler's address (``"tcp://127.0.0.1:8786"``) or a connected client.
    timeout : float, default 10
        Seconds to wait for the scheduler.

    Returns
    -------
    distributed.Client
        The client now in use (close it, or call :func:`disconnect`, when done).

    Raises
    ------
    ParameterError
        The address is not of the form ``scheme://host:port`` or no scheduler answers there.
    """
    client = _client_of(address, timeout)
    _PROCESS_CLIENT[:] = [client]
    return client


def _client_of(address: Any, timeout: float) -> Any:
    """A ``distributed.Client``: ``address`` itself, or a new one connected to it."""
    distributed = _distributed()
    if isinstance(address, distributed.Client):
        return address
    if not isinstance(address, str) or "://" not in address or ":" not in address.split("//")[-1]:
        raise ParameterError(f"a cluster address looks like tcp://host:port, got {address!r}")
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ParameterError(f"no dask scheduler answers at {address}: {exc}") from exc


def disconnect() -> None:
    """Stop using the cluster of :func:`connect`; the client stays open (its owner closes it)."""
    _PROCESS_CLIENT.clear()


@contextmanager
def use_cluster(client: Any, workers: Sequence[str] | None = None) -> Iterator[Any]:
    """Run the hierlab jobs of a ``with`` block on ``client`` (a Client, an address or None).

    ``None`` runs the block on this machine even when :func:`connect` chose a cluster. A
    client opened here from an address is closed at the end of the block. ``workers`` (worker
    addresses of that cluster) keeps the block's data and tasks on those workers only.

    Raises
    ------
    ParameterError
        ``workers`` names no worker of the cluster, or is given without a cluster.
    """
    opened = client is not None and not _is_client(client)
    c = _client_of(client, 10.0) if client is not None else None
    chosen = None
    if workers is not None:
        chosen = tuple(workers)
        known = set(c.nthreads()) if c is not None else set()
        if not chosen or not set(chosen) <= known:
            if opened and c is not None:
                c.close()
            raise ParameterError(
                f"workers must be addresses of the cluster's workers {sorted(known)}, got "
                f"{list(chosen)}"
            )
    token = _CONTEXT_CLIENT.set(c if c is not None else False)
    wtoken = _CONTEXT_WORKERS.set(chosen)
    try:
        yield c
    finally:
        _CONTEXT_WORKERS.reset(wtoken)
        _CONTEXT_CLIENT.reset(token)
        if opened and c is not None:
            c.close()


def job_cluster(client: Any) -> AbstractContextManager[Any]:
    """``use_cluster(client)`` for a job given a client or an address; with None, the
    process's choice (:func:`connect`, or this machine)."""
    return nullcontext() if client is None else use_cluster(client)


def _is_client(obj: Any) -> bool:
    return "distributed" in sys.modules and isinstance(obj, sys.modules["distributed"].Client)


def _on_worker() -> bool:
    """Whether this code runs inside a dask worker's task."""
    if "distributed" not in sys.modules:
        return False
    try:
        sys.modules["distributed"].get_worker()
    except ValueError:
        return False
    return True


def active_client() -> Any:
    """The cluster hierlab's jobs run on here, or None (this machine; always None on a worker)."""
    ctx = _CONTEXT_CLIENT.get()
    client = ctx if ctx is not None else (_PROCESS_CLIENT[0] if _PROCESS_CLIENT else None)
    if client is None or client is False or _on_worker():
        return None
    if getattr(client, "status", "running") in ("closed", "closing"):
        return None
    return client


def probe(address: str, timeout: float = 5.0) -> int:
    """The worker threads of the cluster at ``address`` (a connection opened and closed).

    Raises
    ------
    ParameterError
        A malformed address, or no scheduler answering there within ``timeout`` seconds.
    """
    client = _client_of(address, timeout)
    try:
        return cluster_cores(client)
    finally:
        client.close()


def tasks_sent() -> int:
    """The tasks this process has sent to a dask cluster so far (:func:`run_tasks`): what tells
    whether a job had parts that ran there."""
    return _SENT[0]


def cluster_cores(client: Any) -> int:
    """The worker threads of ``client``'s cluster (at least 1); inside
    ``use_cluster(..., workers=)``, of those workers only."""
    chosen = _CONTEXT_WORKERS.get()
    threads = client.nthreads()
    return max(1, int(sum(n for w, n in threads.items() if chosen is None or w in chosen)))


def _where() -> dict[str, Any]:
    """``submit``/``scatter``'s keywords that keep work on the chosen workers (if any)."""
    chosen = _CONTEXT_WORKERS.get()
    return {} if chosen is None else {"workers": list(chosen)}


def share(*objs: Any) -> tuple[Any, ...]:
    """Send ``objs`` to every worker once; what the tasks of :func:`run_tasks` take in their
    place (futures on a cluster, the objects themselves here)."""
    client = active_client()
    if client is None:
        return objs
    return tuple(client.scatter(list(objs), broadcast=True, hash=False, **_where()))


def run_tasks(
    fn: Callable[..., Any],
    items: Iterable[tuple[Any, ...]],
    shared: tuple[Any, ...] = (),
    n_jobs: int | None = None,
    prefer: str | None = None,
    pool: Any = None,
    one_per_thread: bool = False,
    kind: Callable[[tuple[Any, ...]], Hashable] | None = None,
) -> Iterator[Any]:
    """``fn(*shared, *item)`` for every item, results in the order of ``items``.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled to the workers).
    items : iterable of tuple
        Each task's own arguments (indices, parameters: small); read lazily by joblib.
    shared : tuple
        What :func:`share` returned for this job's data.
    n_jobs, prefer
        joblib's, when no cluster is in use.
    pool : joblib.Parallel, optional
        An open joblib pool (``return_as="generator"``) to use instead, when no cluster is.
    one_per_thread : bool, default False
        On a cluster, at most one task per worker thread at a time, the next one sent to the
        first thread free (for long tasks; short ones are all sent at once, dask queues them).
    kind : callable, optional
        ``kind(item)``: tasks of one kind take about as long. On a cluster (implies
        ``one_per_thread``) one task of each kind is sent first, then the kinds with the
        longest measured tasks first.

    Yields
    ------
    The results, in the order of ``items`` (a generator: one result held at a time here,
    except tasks finished before an earlier one, held until it is yielded).
    """
    client = active_client()
    if client is None:
        from joblib import Parallel, delayed

        if pool is None:
            pool = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")
        yield from pool(delayed(fn)(*shared, *it) for it in items)
        return
    if one_per_thread or kind is not None:
        yield from _one_per_thread(client, fn, list(items), shared, kind)
        return
    futures = [client.submit(fn, *shared, *it, pure=False, **_where()) for it in items]
    _SENT[0] += len(futures)
    try:
        for f in futures:
            yield f.result()
    finally:
        for f in futures:
            f.release()


class _Queue:
    """The tasks not yet sent, in the order they go: the given order, or with ``kind``, one of
    each kind first, then the kind whose finished tasks took longest (not yet measured: first).
    """

    def __init__(self, items: list[tuple[Any, ...]], kind: Callable[..., Hashable] | None):
        self.kinds = [kind(it) for it in items] if kind is not None else [None] * len(items)
        self.pending = list(range(len(items)))
        self.seconds: dict[Hashable, list[float]] = {}
        self.started: set[Hashable] = set()

    def __len__(self) -> int:
        return len(self.pending)

    def pop(self) -> int:
        """The index of the next task to send."""
        fresh = [i for i in self.pending if self.kinds[i] not in self.started]
        if fresh:
            i = fresh[0]
        else:
            est = [
                float(np.mean(self.seconds[k])) if k in self.seconds else np.inf
                for k in (self.kinds[j] for j in self.pending)
            ]
            i = self.pending[int(np.argmax(est))]  # ties: the given order
        self.pending.remove(i)
        self.started.add(self.kinds[i])
        return i

    def done(self, i: int, seconds: float) -> None:
        self.seconds.setdefault(self.kinds[i], []).append(seconds)


def _one_per_thread(
    client: Any,
    fn: Callable[..., Any],
    items: list[tuple[Any, ...]],
    shared: tuple[Any, ...],
    kind: Callable[..., Hashable] | None,
) -> Iterator[Any]:
    """:func:`run_tasks` on a cluster, one task in flight per worker thread."""
    queue = _Queue(items, kind)
    running = _distributed().as_completed()
    sent: dict[Any, tuple[int, float]] = {}
    held: dict[int, Any] = {}

    def send() -> None:
        i = queue.pop()
        f = client.submit(fn, *shared, *items[i], pure=False, **_where())
        _SENT[0] += 1
        sent[f.key] = (i, time.perf_counter())
        running.add(f)

    for _ in range(min(cluster_cores(client), len(items))):
        send()
    n_out = 0
    try:
        for f in running:
            i, t0 = sent.pop(f.key)
            held[i] = f.result()
            f.release()
            queue.done(i, time.perf_counter() - t0)
            if len(queue):
                send()
            while n_out in held:
                yield held.pop(n_out)
                n_out += 1
    finally:
        for f in running.futures:
            f.cancel()
