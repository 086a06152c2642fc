"""The synthetic data sets of seed 003 (Normalized Hierarchical SVM), Section 8.1.

* **balanced**: a complete binary tree of depth 3 (15 nodes, 8 leaves; Table 2 says M = 15,
  |L| = 8), a weight vector ``W_n ~ N(0, I_d)`` per node and instances ``x ~ N(0, I_d)``; each
  instance gets the leaf of maximum potential ``sum_{n in A+(l)} W_n . x``.
* **unbalanced**: ``x ~ N(0, I_d)`` normalised to norm 1; the space is cut by a random
  hyperplane through the origin, then only one of the two halves is cut again, and so on until
  the binary tree (a "caterpillar" growing in one direction) has depth 10: 21 nodes, 11 leaves.
  Each instance gets the leaf of its cell.

Sizes (the errata: Table 2 and the text disagree). We use the **text**: d = 1,000 for both,
N = 15,000 instances for the balanced set (Table 2 says 8K) and N = 10,000 for the unbalanced
one. The unbalanced tree of depth 10 has 21 nodes and 11 leaves (Table 2 prints M = 19 next to
|L| = 11, which no binary tree satisfies). The paper does not give its train/test split; we hold
out ``test_size`` (default 1/3) of the rows, stratified by nothing (i.i.d. draws).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hierlab.core.dataset import HierDataset, as_rng, check_int
from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = ["make_nhsvm_synthetic", "nhsvm_balanced_taxonomy", "nhsvm_unbalanced_taxonomy"]

_TEXT_SIZES = {"balanced": 15000, "unbalanced": 10000}


def nhsvm_balanced_taxonomy(depth: int = 3) -> Taxonomy:
    """Complete binary tree of the given depth; nodes named by their 0/1 path (root ``"r"``).

    Parameters
    ----------
    depth : int, default 3
        Edges from the root to every leaf (3 gives 15 nodes and 8 leaves).
    """
    edges = []
    frontier = ["r"]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for b in "01":
                c = (p if p != "r" else "") + b
                edges.append((p, c))
                nxt.append(c)
        frontier = nxt
    return Taxonomy(edges)


def nhsvm_unbalanced_taxonomy(depth: int = 10) -> Taxonomy:
    """Binary caterpillar of the given depth: ``r -> {a1, b1}``, ``b_k -> {a_{k+1}, b_{k+1}}``.

    The leaves are ``a1 .. a{depth}`` and ``b{depth}`` (``2 depth + 1`` nodes, ``depth + 1``
    leaves).
    """
    edges = [("r", "a1"), ("r", "b1")]
    for k in range(1, depth):
        edges += [(f"b{k}", f"a{k + 1}"), (f"b{k}", f"b{k + 1}")]
    return Taxonomy(edges)


def make_nhsvm_synthetic(
    kind: str = "balanced",
    n_samples: int | None = None,
    n_features: int = 1000,
    test_size: float = 1.0 / 3.0,
    depth: int | None = None,
    random_state: Any = None,
) -> tuple[HierDataset, HierDataset]:
    """Generate the balanced or unbalanced synthetic data of seed 003, Section 8.1.

    Parameters
    ----------
    kind : {"balanced", "unbalanced"}
    n_samples : int, optional
        Total rows; default the text's N (15,000 balanced, 10,000 unbalanced).
    n_features : int, default 1000
        d.
    test_size : float, default 1/3
        Fraction of the rows in the returned test set.
    depth : int, optional
        Tree depth (default 3 balanced, 10 unbalanced).
    random_state : int or Generator, optional

    Returns
    -------
    train, test : HierDataset
        Dense ``X`` of shape (n, n_features), one leaf name per row.
    """
    if kind not in _TEXT_SIZES:
        raise ParameterError(f"kind must be 'balanced' or 'unbalanced', got {kind!r}")
    if not 0.0 < test_size < 1.0:
        raise ParameterError(f"test_size must be in (0, 1), got {test_size}")
    rng = as_rng(random_state)
    n = _TEXT_SIZES[kind] if n_samples is None else check_int("n_samples", n_samples, 1)
    d = check_int("n_features", n_features, 1)
    if depth is not None:
        check_int("depth", depth, 1)
    if kind == "balanced":
        tax = nhsvm_balanced_taxonomy(3 if depth is None else depth)
        W = rng.standard_normal((tax.n_nodes, d))
        X = rng.standard_normal((n, d))
        P = X @ W.T  # node potentials (n, M)
        A = tax.ancestor_matrix[tax.leaves]  # (L, M) paths
        S = np.asarray((A @ P.T).T)
        y_ids = tax.leaves[np.argmax(S, axis=1)]
        desc = (
            f"Seed 003 Sec. 8.1 balanced: complete binary tree ({tax.n_nodes} nodes, "
            f"{len(tax.leaves)} leaves), W_n, x ~ N(0, I_{d}), label = argmax path potential"
        )
    else:
        dep = 10 if depth is None else depth
        tax = nhsvm_unbalanced_taxonomy(dep)
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        H = rng.standard_normal((dep, d))
        side = (X @ H.T) >= 0.0  # (n, depth): True = the half that is cut again
        # the first cut that sends x to the "a" side decides its leaf; all True -> b{depth}
        first_a = np.argmax(~side, axis=1)
        all_b = side.all(axis=1)
        names = np.array([f"a{k + 1}" for k in range(dep)], dtype=object)
        y_names = np.where(all_b, f"b{dep}", names[first_a])
        y_ids = tax.index(y_names)
        desc = (
            f"Seed 003 Sec. 8.1 unbalanced: depth-{dep} binary caterpillar ({tax.n_nodes} nodes, "
            f"{len(tax.leaves)} leaves), x ~ N(0, I_{d}) / ||x||, cells of random hyperplanes"
        )
    y = np.asarray(tax.names[y_ids], dtype=object)
    perm = rng.permutation(n)
    n_test = round(test_size * n)
    te, tr = perm[:n_test], perm[n_test:]
    meta = {"kind": kind, "n_samples": n, "n_features": d, "sizes_from": "text"}
    train = HierDataset(X[tr], y[tr], tax, name=f"nhsvm-{kind}", description=desc, meta=meta)
    test = HierDataset(X[te], y[te], tax, name=f"nhsvm-{kind}", description=desc, meta=meta)
    return train, test
