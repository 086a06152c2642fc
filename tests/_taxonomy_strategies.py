"""Hypothesis strategies for random taxonomies (trees and DAGs), shared by the metric and
taxonomy tests. Node names are shuffled so that ids never coincide with the input order."""

from __future__ import annotations

from hypothesis import strategies as st

from hierlab.core.taxonomy import Taxonomy


@st.composite
def tree_edges(
    draw, min_nodes: int = 1, max_nodes: int = 25
) -> tuple[list[tuple[str, str]], list[str]]:
    """Edges ``(parent, child)`` of a random rooted tree, in random order, and all node names."""
    n = draw(st.integers(min_nodes, max_nodes))
    parent = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]
    perm = draw(st.permutations(range(n)))
    names = [f"n{perm[i]}" for i in range(n)]
    edges = [(names[parent[i]], names[i]) for i in range(1, n)]
    edges = draw(st.permutations(edges)) if edges else edges
    return list(edges), names


@st.composite
def dag_edges(
    draw, min_nodes: int = 2, max_nodes: int = 18
) -> tuple[list[tuple[str, str]], list[str]]:
    """Edges of a random single-rooted DAG (some nodes with 2-3 parents), in random order."""
    n = draw(st.integers(min_nodes, max_nodes))
    perm = draw(st.permutations(range(n)))
    names = [f"d{perm[i]}" for i in range(n)]
    edges = []
    for i in range(1, n):
        k = draw(st.integers(1, min(3, i)))
        ps = draw(st.lists(st.integers(0, i - 1), min_size=k, max_size=k, unique=True))
        edges.extend((names[p], names[i]) for p in ps)
    edges = draw(st.permutations(edges)) if edges else edges
    return list(edges), names


@st.composite
def trees(draw, min_nodes: int = 1, max_nodes: int = 25) -> Taxonomy:
    edges, names = draw(tree_edges(min_nodes, max_nodes))
    return Taxonomy(edges, nodes=names)


@st.composite
def dags(draw, min_nodes: int = 2, max_nodes: int = 18) -> Taxonomy:
    edges, names = draw(dag_edges(min_nodes, max_nodes))
    return Taxonomy(edges, nodes=names)


def taxonomies(max_nodes: int = 20) -> st.SearchStrategy[Taxonomy]:
    """Trees or DAGs."""
    return st.one_of(trees(max_nodes=max_nodes), dags(max_nodes=max_nodes))


@st.composite
def tax_and_labels(draw, max_nodes: int = 20, max_samples: int = 30, leaves_only: bool = False):
    """A taxonomy and two aligned single-label arrays of node names (y_true, y_pred)."""
    tax = draw(taxonomies(max_nodes))
    pool = tax.leaves if leaves_only else range(tax.n_nodes)
    pool = [int(i) for i in pool]
    n = draw(st.integers(1, max_samples))
    t = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    p = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return tax, [str(tax.names[i]) for i in t], [str(tax.names[i]) for i in p]


@st.composite
def tax_and_label_sets(draw, max_nodes: int = 16, max_samples: int = 20):
    """A taxonomy and two aligned multi-label targets: tuples of names, possibly empty."""
    tax = draw(taxonomies(max_nodes))
    n = draw(st.integers(1, max_samples))
    ids = st.lists(st.integers(0, tax.n_nodes - 1), min_size=0, max_size=3, unique=True)
    t = draw(st.lists(ids, min_size=n, max_size=n))
    p = draw(st.lists(ids, min_size=n, max_size=n))
    name = lambda s: tuple(str(tax.names[i]) for i in s)  # noqa: E731
    return tax, [name(s) for s in t], [name(s) for s in p]
