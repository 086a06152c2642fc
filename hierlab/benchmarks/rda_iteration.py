"""Benchmark: one RDA iteration (seed 000, Algorithm 1) against two passes over the data.

One iteration of Algorithm 1 needs the scores ``S = X W^T`` (for ``J(w(t))`` and the
loss-augmented inference) and the subgradient ``X^T Gamma`` (``Gamma`` sparse, a few entries per
row): two passes over ``X``. Everything else (inference, the averaging, the bounds) should cost
little next to them. This script times, side by side in the same process and interleaved (so a
busy machine slows both alike):

* ``pair``: one ``X @ W.T`` plus one ``Gamma.T @ X`` (numpy/scipy, nothing of hierlab), with the
  ``W`` and ``Gamma`` of a running RDA;
* ``rda``: one RDA iteration (:class:`hierlab.solvers.rda.RDA`, certified bounds included);

and prints their ratio (target <= 3) for dense and sparse ``X``, then the time of 1,000
iterations of ``make_estimator(method, solver="rda", averaging=...)`` fits on the default
Hieron set (12,100 x 121; target <= 15 s). Times are given as wall and as CPU seconds of this
process (``time.process_time``): on a shared machine the wall clock also counts the other
processes' turns, the CPU time does not (run with ``OPENBLAS_NUM_THREADS=1`` for a
single-core figure).

Run::

    python -m hierlab.benchmarks.rda_iteration                    # FLATMULT, both weightings
    python -m hierlab.benchmarks.rda_iteration --method orthognl --iters 300
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.objective import Objective
from hierlab.core.registry import make_estimator
from hierlab.datasets.catalog import load_builtin
from hierlab.solvers.rda import RDA

__all__ = ["fit_time", "iteration_ratio", "main", "objective_for"]


def objective_for(method: str, X: Any, y: np.ndarray, taxonomy: Any, C: float = 1.0) -> Objective:
    """The training objective of ``method`` (a seed-000 estimator) on node ids ``y``."""
    est = make_estimator(method, taxonomy=taxonomy, C=C)
    est.taxonomy_ = taxonomy
    obj: Objective = est._objective(X, y)
    return obj


def iteration_ratio(
    objective: Objective, averaging: str = "uniform", blocks: int = 7, per_block: int = 5
) -> dict[str, float]:
    """Seconds of one RDA iteration and of one ``X W^T`` + ``Gamma^T X`` pair, interleaved.

    The RDA generator runs ``per_block`` iterations, then the pair is timed ``per_block`` times
    on the current ``W`` and its ``Gamma``; ``blocks`` such rounds (the first a warm-up).
    Returns the medians over the rounds and their ratio, in wall and in CPU seconds.
    """
    X = objective.X
    rda = RDA(max_iter=10**9, averaging=averaging)
    gen = rda.iterate(objective)
    W = objective.initial()
    rda_t, pair_t, rda_c, pair_c = [], [], [], []
    for b in range(blocks + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(per_block):
            next(gen)
        t_rda = (time.perf_counter() - t0) / per_block
        c_rda = (time.process_time() - c0) / per_block
        W = np.asarray(rda.coef)
        _, Gamma = objective.model.loss(np.asarray(X @ W.T), objective.y)
        Gamma = sp.csr_matrix(Gamma)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(per_block):
            S = X @ W.T
            V = Gamma.T @ X
            if sp.issparse(V):
                V = V.toarray()
        t_pair = (time.perf_counter() - t0) / per_block
        c_pair = (time.process_time() - c0) / per_block
        del S, V
        if b:  # round 0 warms caches up
            rda_t.append(t_rda)
            pair_t.append(t_pair)
            rda_c.append(c_rda)
            pair_c.append(c_pair)
    getattr(gen, "close", lambda: None)()
    r, p = float(np.median(rda_t)), float(np.median(pair_t))
    rc, pc = float(np.median(rda_c)), float(np.median(pair_c))
    return {"rda_s": r, "pair_s": p, "ratio": r / p, "rda_cpu": rc, "pair_cpu": pc,
            "cpu_ratio": rc / pc}  # fmt: skip


def fit_time(
    method: str, X: Any, y: Any, taxonomy: Any, averaging: str, iters: int
) -> tuple[float, float, int, float]:
    """Wall and CPU seconds of ``iters`` RDA iterations of an estimator fit (gap tolerance 0),
    the iterations run and the final relative certified gap."""
    est = make_estimator(
        method, taxonomy=taxonomy, solver="rda", averaging=averaging, max_iter=iters, tol=0.0,
        rtol=0.0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, y)
        sec, cpu = time.perf_counter() - t0, time.process_time() - c0
    h = est.history_
    rel = float(h["gap"].iloc[-1] / h["upper"].iloc[-1])
    return sec, cpu, int(h["iteration"].iloc[-1]), rel


def main(argv: list[str] | None = None) -> None:
    """Print the per-iteration ratios (dense, sparse) and the time of ``--iters`` iterations."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--method", default="flatmult")
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--averaging", nargs="+", default=["uniform", "linesearch"])
    ap.add_argument("--no-fit", action="store_true", help="skip the timed fits")
    args = ap.parse_args(argv)
    train, _ = load_builtin("hieron-synthetic")
    tax = train.taxonomy
    ids = np.asarray(train.label_ids())
    Xd = np.asarray(train.X, dtype=np.float64)
    print(f"Hieron set {Xd.shape[0]} x {Xd.shape[1]}, {tax.n_nodes} nodes, method {args.method}")
    text, _ = load_builtin("hierarchical-text")
    for name, X, y, t in (
        ("dense", Xd, ids, tax),
        ("sparse (Hieron as CSR)", sp.csr_matrix(Xd), ids, tax),
        (
            f"sparse text {text.X.shape[0]}x{text.X.shape[1]} nnz {sp.csr_matrix(text.X).nnz}",
            sp.csr_matrix(text.X),
            np.asarray(text.label_ids()),
            text.taxonomy,
        ),
    ):
        obj = objective_for(args.method, X, y, t)
        for avg in args.averaging:
            r = iteration_ratio(obj, averaging=avg)
            print(
                f"  {name:<40s} {avg:<10s} RDA iteration {1e3 * r['rda_s']:7.2f} ms, "
                f"X W^T + Gamma^T X {1e3 * r['pair_s']:7.2f} ms, ratio {r['ratio']:.2f} "
                f"(CPU: {1e3 * r['rda_cpu']:.2f} / {1e3 * r['pair_cpu']:.2f} ms, "
                f"ratio {r['cpu_ratio']:.2f})"
            )
    if args.no_fit:
        return
    for avg in args.averaging:
        sec, cpu, it, rel = fit_time(args.method, Xd, train.y, tax, avg, args.iters)
        print(
            f"  fit {args.method} solver=rda averaging={avg}: {it} iterations in {sec:.2f} s "
            f"wall, {cpu:.2f} s CPU ({1e3 * cpu / it:.1f} ms/iteration), "
            f"relative gap {rel:.2e}"
        )


if __name__ == "__main__":
    main()
