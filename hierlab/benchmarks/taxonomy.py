"""Benchmark: tree distances ``gamma(y, y_hat)`` for 10^6 pairs on a 10^4-node random tree.

Run with ``python -m hierlab.benchmarks.taxonomy [--nodes N] [--pairs M]``. Measured side
by side in one run (best of ``--repeat`` runs each):

* ``Taxonomy.tree_distance``: O(1) LCA per pair by a range-minimum query on the preorder
  sequence (sparse table), vectorised over all pairs;
* binary lifting: O(log depth) vectorised passes (the fallback for trees too large for the
  table);
* naive: a Python loop per pair that climbs parent pointers (timed on a sample, per pair).

It also times ``hierlab.evaluation.metrics.evaluate`` on the same pairs. Results are checked equal.

``--chain`` instead reads a chain (every node the only child of the previous one) of 10^4 and
10^5 nodes in each taxonomy format and prints the time ratio: about 10 for linear time, about
100 for quadratic (the fuzz tests read 10^5-node chains for correctness, not for time).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.metrics import evaluate
from hierlab.io import parse_taxonomy_text


def random_tree(n_nodes: int, kind: str, rng: np.random.Generator) -> Taxonomy:
    """A random recursive tree (``uniform``: depth ~ log n) or a deep one (``deep``: each node
    hangs below one of the 5 previous nodes, depth ~ n / 3)."""
    i = np.arange(1, n_nodes)
    if kind == "uniform":
        parent = np.floor(rng.random(n_nodes - 1) * i).astype(np.int64)
    else:
        parent = i - 1 - np.floor(rng.random(n_nodes - 1) * np.minimum(i, 5)).astype(np.int64)
    return Taxonomy.from_parent_array(np.r_[-1, parent].tolist())


def naive_distance(tax: Taxonomy, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Per-pair Python loop: lift the deeper node, then both, until they meet."""
    parent = tax.parent.tolist()
    depth = tax.depth.tolist()
    out = np.empty(len(u), dtype=np.int64)
    for k, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
        d = 0
        while depth[a] > depth[b]:
            a = parent[a]
            d += 1
        while depth[b] > depth[a]:
            b = parent[b]
            d += 1
        while a != b:
            a, b = parent[a], parent[b]
            d += 2
        out[k] = d
    return out


def lifting_distance(tax: Taxonomy, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Tree distances by binary lifting (the fallback of ``tree_distance`` for huge trees)."""
    lca = tax.lca_lifting(u.copy(), v.copy())
    return tax.depth[u] + tax.depth[v] - 2 * tax.depth[lca]


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Run ``fn`` ``repeat`` times; the fastest wall-clock time and the last result.

    Parameters
    ----------
    fn : callable
        Called without arguments.
    repeat : int
        Number of runs (at least 1).

    Returns
    -------
    seconds : float
    result : Any
        What the last call returned.
    """
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _bench_one(
    kind: str, args: argparse.Namespace, rng: np.random.Generator
) -> list[tuple[str, float, float, int]]:
    """Time every way on one random tree: rows of (label, seconds, RMQ seconds, depth)."""
    tax = random_tree(args.nodes, kind, rng)
    u = rng.integers(0, tax.n_nodes, args.pairs)
    v = rng.integers(0, tax.n_nodes, args.pairs)
    parent = tax.parent.tolist()
    t_build, _ = best_of(lambda: Taxonomy.from_parent_array(parent), 1)
    t_table, _ = best_of(lambda: tax.tree_distance(u[:2], v[:2]), 1)  # builds the cached table
    t_fast, d_fast = best_of(lambda: tax.tree_distance(u, v), args.repeat)
    t_lift, d_lift = best_of(lambda: lifting_distance(tax, u, v), args.repeat)
    s = slice(0, args.naive_sample)
    t_naive_s, d_naive = best_of(lambda: naive_distance(tax, u[s], v[s]), 1)
    t_naive = t_naive_s / args.naive_sample * args.pairs
    nu, nv = tax.names[u], tax.names[v]
    t_names, d_names = best_of(lambda: tax.tree_distance(nu, nv), 1)
    t_eval, _ = best_of(lambda: evaluate(u, v, tax), 1)
    assert np.array_equal(d_fast, d_lift), "lifting and RMQ disagree"
    assert np.array_equal(d_fast, d_names), "names and ids disagree"
    assert np.array_equal(d_fast[s], d_naive), "naive and RMQ disagree"
    rows = [
        ("tree_distance (RMQ, ids)", t_fast),
        ("binary lifting (ids)", t_lift),
        (f"naive Python loop ({args.naive_sample:,} scaled)", t_naive),
        ("tree_distance (node names)", t_names),
        ("metrics.evaluate (all measures)", t_eval),
        ("(taxonomy build, once)", t_build),
        ("(LCA table build, once)", t_table),
    ]
    return [(label, t, t_fast, tax.max_depth) for label, t in rows]


def chain_texts(n: int) -> dict[str, Callable[[], Any]]:
    """Readers of an ``n``-edge chain ``n0 -> n1 -> ... -> n{n}``, one per format."""
    edges = [(f"n{i}", f"n{i + 1}") for i in range(n)]
    texts = {
        "edges": "\n".join(f"{p} {c}" for p, c in edges),
        "csv": "\n".join(f"{p},{c}" for p, c in edges),
        "paths": "/".join(f"n{i}" for i in range(n + 1)),
        "json": json.dumps({"edges": edges}),
    }
    readers: dict[str, Callable[[], Any]] = {
        fmt: functools.partial(parse_taxonomy_text, text, format=fmt) for fmt, text in texts.items()
    }
    readers["builder"] = functools.partial(Taxonomy, edges)
    return readers


def chain_scaling(small: int = 10_000, large: int = 100_000, repeat: int = 3) -> None:
    """Print, per format, the seconds to read chains of ``small`` and ``large`` edges and their
    ratio (``large / small`` for linear time)."""
    print(f"chains of {small:,} and {large:,} edges (ratio ~{large // small} for linear time)")
    print(f"{'format':<8} {'small s':>9} {'large s':>9} {'ratio':>7}")
    few, many = chain_texts(small), chain_texts(large)
    for fmt in few:
        t_small, _ = best_of(few[fmt], repeat)
        t_large, tax = best_of(many[fmt], repeat)
        assert tax.n_nodes == large + 1 and tax.max_depth == large
        print(f"{fmt:<8} {t_small:>9.3f} {t_large:>9.3f} {t_large / t_small:>7.1f}")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: print the timing table of both tree shapes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--pairs", type=int, default=1_000_000)
    ap.add_argument("--naive-sample", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chain", action="store_true", help="time reading 10^4 vs 10^5-node chains")
    args = ap.parse_args(argv)
    if args.chain:
        chain_scaling(repeat=args.repeat)
        return 0
    rng = np.random.default_rng(args.seed)
    print(f"{args.pairs:,} (y_true, y_pred) pairs, random trees of {args.nodes:,} nodes")
    print(f"{'tree':<8} {'depth':>6} {'method':<32} {'seconds':>9} {'us/pair':>8} {'ratio':>8}")
    for kind in ("uniform", "deep"):
        for label, t, t_fast, depth in _bench_one(kind, args, rng):
            print(
                f"{kind:<8} {depth:>6} {label:<32} {t:>9.3f} "
                f"{t / args.pairs * 1e6:>8.3f} {t / t_fast:>7.1f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
