"""Label losses ``Delta(y, y')`` between nodes of a taxonomy (DESIGN.md, "losses.py").

Each function returns a dense matrix of shape (n_nodes, n_nodes) indexed by node ids, so a
loss-augmented search over candidate labels is a gather ``Delta[y][:, candidates]`` over whole
arrays of examples.

- :func:`zero_one_delta`: ``Delta(y, y') = [y != y']`` (Crammer-Singer, FLATMULT of seed 000).
- :func:`tree_delta`: the tree-induced loss, ``gamma(y, y')`` or half of it (seed 000,
  Section 5, TREELOSS: "half of the graph distance"; seed 002, eq. 1).
"""

from __future__ import annotations

import numpy as np

from hierlab.taxonomy import Taxonomy

__all__ = ["tree_delta", "zero_one_delta"]


def zero_one_delta(taxonomy: Taxonomy) -> np.ndarray:
    """``Delta(y, y') = 1`` if ``y != y'`` else 0.

    Parameters
    ----------
    taxonomy : Taxonomy

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), float64
    """
    m = taxonomy.n_nodes
    return np.ones((m, m)) - np.eye(m)


def tree_delta(taxonomy: Taxonomy, half: bool = True) -> np.ndarray:
    """The tree-induced loss between every pair of nodes.

    Parameters
    ----------
    taxonomy : Taxonomy
    half : bool, default True
        Return ``gamma / 2`` (seed 000, TREELOSS: "half of the graph distance"); False returns the
        number of edges ``gamma`` (seed 002).

    Returns
    -------
    ndarray of shape (n_nodes, n_nodes), float64
        Symmetric, zero on the diagonal.
    """
    m = taxonomy.n_nodes
    ids = np.arange(m)
    gamma = np.asarray(taxonomy.tree_distance(ids[:, None], ids[None, :]), dtype=np.float64)
    return gamma / 2.0 if half else gamma
