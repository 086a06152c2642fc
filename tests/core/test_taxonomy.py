"""Property tests of Taxonomy over random trees and DAGs: round-trips to every format, gamma is a
metric, LCA/ancestor consistency, structure queries against networkx, validation errors naming
the offending node, and a 100,000-node chain."""

from __future__ import annotations

import itertools
import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hierlab.core.exceptions import TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io import read_taxonomy, write_taxonomy
from tests._taxonomy_strategies import dag_edges, dags, taxonomies, tree_edges, trees

SETTINGS = settings(max_examples=40, deadline=None)


def graph(tax: Taxonomy) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(str(x) for x in tax.names)
    g.add_edges_from(tax.to_edges())
    return g


def name(tax: Taxonomy, i) -> str:
    return str(tax.names[int(i)])


def names(tax: Taxonomy, ids) -> set[str]:
    return {name(tax, i) for i in ids}


def brute_depth(g: nx.DiGraph) -> dict[str, int]:
    d: dict[str, int] = {}
    for v in nx.topological_sort(g):
        ps = list(g.predecessors(v))
        d[v] = 0 if not ps else 1 + max(d[p] for p in ps)
    return d


def assert_topological(tax: Taxonomy) -> None:
    for c in range(tax.n_nodes):
        for p in tax.parents(c):
            assert p < c
    assert (tax.parent[1:] >= 0).all() and tax.parent[0] == -1


# ---------------------------------------------------------------------------- construction
@SETTINGS
@given(st.one_of(tree_edges(), dag_edges()))
def test_construction_matches_the_input_graph(data):
    edges, all_names = data
    tax = Taxonomy(edges, nodes=all_names)
    assert set(map(str, tax.names)) == set(all_names)
    assert set(tax.to_edges()) == set(edges)
    assert_topological(tax)
    assert tax.is_tree == all(sum(1 for _, c in edges if c == n) <= 1 for n in all_names)


# ---------------------------------------------------------------------------- round-trips
@SETTINGS
@given(taxonomies())
def test_round_trip_edges_json_networkx(tax):
    back = Taxonomy(tax.to_edges(), nodes=[str(x) for x in tax.names])
    assert back == tax
    assert Taxonomy.from_edges(tax.to_edges(), nodes=list(map(str, tax.names))) == tax
    js = tax.to_json()
    assert Taxonomy.from_json(js) == tax
    assert Taxonomy.from_json(json.dumps(js)) == tax
    assert Taxonomy.from_networkx(tax.to_networkx()) == tax
    for t in (back, Taxonomy.from_json(js), Taxonomy.from_networkx(tax.to_networkx())):
        assert_topological(t)
        assert t.is_tree == tax.is_tree
        # the same node has the same depth however it was built
        assert all(t.depth[t.node_id(n)] == tax.depth[tax.node_id(n)] for n in map(str, tax.names))


@SETTINGS
@given(trees())
def test_round_trip_paths_for_trees(tax):
    paths = tax.to_paths()
    assert len(paths) == tax.n_nodes
    assert Taxonomy.from_paths(paths) == tax
    assert Taxonomy.from_paths([p.replace("/", ">") for p in paths], sep=">") == tax


@SETTINGS
@given(trees(min_nodes=2))
def test_round_trip_full_path_names(tax):
    """Clus FunCat style: nodes named by their whole path under a synthetic root."""
    paths = tax.to_paths()
    sub = [p.split("/", 1)[1] for p in paths[1:]]
    full = Taxonomy.from_paths(sub, names="full", root="ROOT")
    assert full.n_nodes == tax.n_nodes
    again = [p.split("/", 1)[1] for p in full.to_paths()[1:]]  # drop the synthetic root
    assert again == sub
    assert Taxonomy.from_paths(again, names="full", root="ROOT") == full


def test_dag_has_no_paths():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c")])
    with pytest.raises(TaxonomyError, match="DAG"):
        tax.to_paths()


FILE_EXT = {"edges": ".txt", "json": ".json", "paths": ".paths", "csv": ".csv", "tsv": ".tsv"}


@settings(max_examples=25, deadline=None)
@given(taxonomies(max_nodes=15), st.sampled_from(sorted(FILE_EXT)))
def test_round_trip_files(tmp_path_factory, tax, fmt):
    """write_taxonomy / read_taxonomy (hierlab.io), with and without the format named."""
    path = tmp_path_factory.mktemp("tax") / f"t{FILE_EXT[fmt]}"
    if fmt == "paths" and not tax.is_tree:  # a DAG has no paths file: refused, nothing written
        with pytest.raises(TaxonomyError, match="DAG"):
            write_taxonomy(tax, path, format=fmt)
        assert not path.exists()
    else:
        write_taxonomy(tax, path, format=fmt)
        assert read_taxonomy(path, format=fmt) == tax
        assert read_taxonomy(path) == tax  # the format is guessed from extension and content


@settings(max_examples=15, deadline=None)
@given(trees(min_nodes=3))
def test_round_trip_files_full_path_names(tmp_path_factory, tax):
    sub = [p.split("/", 1)[1] for p in tax.to_paths()[1:]]
    full = Taxonomy.from_paths(sub, names="full", root="ROOT")
    for fmt in ("paths", "edges", "json"):
        path = tmp_path_factory.mktemp("tax") / f"full{FILE_EXT[fmt]}"
        write_taxonomy(full, path)
        assert read_taxonomy(path) == full


# ---------------------------------------------------------------------------- gamma and LCA
@SETTINGS
@given(trees(max_nodes=14))
def test_gamma_is_a_metric_on_trees(tax):
    n = tax.n_nodes
    ids = np.arange(n)
    D = tax.tree_distance(ids[:, None], ids[None, :])
    assert D.shape == (n, n)
    assert (np.diag(D) == 0).all()
    off = ~np.eye(n, dtype=bool)
    assert (D[off] > 0).all()
    assert (D == D.T).all()
    # triangle inequality over all triples, vectorised
    assert (D[:, None, :] <= D[:, :, None] + D[None, :, :]).all()
    # equals the undirected shortest path (networkx)
    ug = graph(tax).to_undirected()
    sp = dict(nx.all_pairs_shortest_path_length(ug))
    for u, v in itertools.product(range(n), repeat=2):
        assert D[u, v] == sp[name(tax, u)][name(tax, v)]


@SETTINGS
@given(dags(max_nodes=12))
def test_gamma_on_dags_is_shortest_path_through_a_common_ancestor(tax):
    g = graph(tax)
    n = tax.n_nodes
    ids = np.arange(n)
    D = tax.tree_distance(ids[:, None], ids[None, :])
    assert (D == D.T).all() and (np.diag(D) == 0).all()
    for u, v in itertools.product(range(n), repeat=2):
        nu, nv = name(tax, u), name(tax, v)
        common = (nx.ancestors(g, nu) | {nu}) & (nx.ancestors(g, nv) | {nv})
        best = min(
            nx.shortest_path_length(g, a, nu) + nx.shortest_path_length(g, a, nv) for a in common
        )
        assert D[u, v] == best


@SETTINGS
@given(taxonomies(max_nodes=16))
def test_lca_is_the_deepest_common_ancestor(tax):
    g = graph(tax)
    n = tax.n_nodes
    ids = np.arange(n)
    L = tax.lca(ids[:, None], ids[None, :])
    depth = brute_depth(g)
    for u, v in itertools.product(range(n), repeat=2):
        nu, nv = name(tax, u), name(tax, v)
        common = (nx.ancestors(g, nu) | {nu}) & (nx.ancestors(g, nv) | {nv})
        lca = name(tax, L[u, v])
        assert lca in common  # a common ancestor ...
        assert depth[lca] == max(depth[a] for a in common)  # ... and none is deeper
        if tax.is_tree:
            assert lca == nx.lowest_common_ancestor(g, nu, nv)
    # names work like ids, and scalars like arrays
    u, v = name(tax, n - 1), name(tax, 0)
    assert int(tax.lca(u, v)) == int(L[n - 1, 0])
    assert int(tax.tree_distance(u, v)) == int(tax.tree_distance(n - 1, 0))


@SETTINGS
@given(taxonomies(max_nodes=16))
def test_ancestors_and_descendants_match_networkx(tax):
    g = graph(tax)
    for i in range(tax.n_nodes):
        v = name(tax, i)
        assert names(tax, tax.ancestors(i)) == nx.ancestors(g, v)
        assert names(tax, tax.ancestors(v, include_self=True)) == nx.ancestors(g, v) | {v}
        assert names(tax, tax.descendants(i)) == nx.descendants(g, v)
        assert names(tax, tax.descendants(i, include_self=True)) == nx.descendants(g, v) | {v}
        assert names(tax, tax.parents(i)) == set(g.predecessors(v))
        assert names(tax, tax.children(i)) == set(g.successors(v))
        sib = set().union(*[set(g.successors(p)) for p in g.predecessors(v)]) - {v}
        assert names(tax, tax.siblings(i)) == sib
        anc = tax.ancestors(i, include_self=True)
        assert (np.diff(anc) > 0).all()  # increasing, root first
        if tax.is_tree:
            assert names(tax, tax.path(i)) == nx.ancestors(g, v) | {v}


@SETTINGS
@given(taxonomies(max_nodes=20))
def test_structure_queries_match_brute_force(tax):
    g = graph(tax)
    depth = brute_depth(g)
    n = tax.n_nodes
    assert [depth[name(tax, i)] for i in range(n)] == tax.depth.tolist()
    assert tax.max_depth == max(depth.values())
    assert names(tax, tax.leaves) == {v for v in g if g.out_degree(v) == 0}
    assert names(tax, tax.internal_nodes) == {v for v in g if g.out_degree(v) > 0}
    assert tax.is_leaf.tolist() == [g.out_degree(name(tax, i)) == 0 for i in range(n)]
    assert tax.n_children.tolist() == [g.out_degree(name(tax, i)) for i in range(n)]
    assert tax.subtree_size.tolist() == [len(nx.descendants(g, name(tax, i))) + 1 for i in range(n)]
    assert len(tax.levels) == tax.max_depth + 1
    for d, lev in enumerate(tax.levels):
        assert names(tax, lev) == {v for v in g if depth[v] == d}
    A = tax.ancestor_matrix.toarray()
    assert A.shape == (n, n)
    for i in range(n):
        want = nx.ancestors(g, name(tax, i)) | {name(tax, i)}
        assert names(tax, np.flatnonzero(A[i])) == want
    assert set(np.unique(A)) <= {0.0, 1.0}
    ind = tax.label_ancestor_indicator(np.arange(n)).toarray()
    assert (ind == A).all()


def test_index_and_unknown_labels():
    tax = Taxonomy([("r", "a"), ("a", "b")])
    assert tax.index(["b", "r"]).tolist() == [2, 0]
    with pytest.raises(TaxonomyError) as e:
        tax.index(["a", "nope"])
    assert e.value.node == "nope" and "nope" in str(e.value)
    with pytest.raises(TaxonomyError, match="out of range"):
        tax.tree_distance(0, 7)


def test_flat_and_relabel():
    f = Taxonomy.flat(["x", "y", "x", "z"])
    assert f.n_nodes == 4 and f.max_depth == 1 and f.names[0] == "root"
    r = f.relabel({"x": "X"})
    assert "X" in r and "x" not in r and r.n_nodes == 4


# ---------------------------------------------------------------------------- validation
def raises_naming(node: str, *args, **kwargs) -> TaxonomyError:
    with pytest.raises(TaxonomyError) as e:
        Taxonomy(*args, **kwargs)
    assert e.value.node == node, (e.value.node, node, str(e.value))
    assert repr(node) in str(e.value) or node in str(e.value)
    return e.value


@SETTINGS
@given(tree_edges(min_nodes=2), st.data())
def test_cycle_names_a_node_on_the_cycle(data, draw):
    edges, all_names = data
    tax = Taxonomy(edges, nodes=all_names)
    v = draw.draw(st.integers(1, tax.n_nodes - 1))
    anc = tax.ancestors(v)
    a = int(draw.draw(st.sampled_from([int(x) for x in anc])))
    back = (name(tax, v), name(tax, a))  # v -> its ancestor a closes a cycle
    cycle = {name(tax, x) for x in tax.ancestors(v, include_self=True) if x >= 0} & (
        {name(tax, x) for x in tax.descendants(a, include_self=True)}
    )
    with pytest.raises(TaxonomyError) as e:
        Taxonomy([*edges, back], nodes=all_names)
    assert "cycle" in str(e.value)
    assert e.value.node in cycle
    assert repr(e.value.node) in str(e.value)


@SETTINGS
@given(tree_edges(), st.data())
def test_self_loop_names_the_node(data, draw):
    edges, all_names = data
    v = draw.draw(st.sampled_from(all_names))
    err = raises_naming(v, [*edges, (v, v)], nodes=all_names)
    assert "self loop" in str(err)


@SETTINGS
@given(tree_edges(min_nodes=2), st.data())
def test_duplicate_edge_names_the_child(data, draw):
    edges, all_names = data
    e = draw.draw(st.sampled_from(edges))
    err = raises_naming(e[1], [*edges, e], nodes=all_names)
    assert "duplicate" in str(err)


@SETTINGS
@given(tree_edges(), st.data())
def test_unknown_parent_names_the_parent(data, draw):
    edges, all_names = data
    child = draw.draw(st.sampled_from(all_names))
    err = raises_naming("ghost", [*edges, ("ghost", child)], nodes=all_names)
    assert "unknown parent" in str(err)
    # an unknown child is named as well
    raises_naming("ghost2", [*edges, (child, "ghost2")], nodes=all_names)


@SETTINGS
@given(tree_edges(), tree_edges())
def test_several_roots_then_synthetic_root(a, b):
    ea, na = a
    eb, nb = b
    nb = [f"b_{x}" for x in nb]
    eb = [(f"b_{p}", f"b_{c}") for p, c in eb]
    ra = Taxonomy(ea, nodes=na).names[0]
    rb = Taxonomy(eb, nodes=nb).names[0]
    with pytest.raises(TaxonomyError) as e:
        Taxonomy([*ea, *eb], nodes=[*na, *nb])
    assert "several roots" in str(e.value)
    assert e.value.node in {ra, rb}
    assert repr(str(ra)) in str(e.value) and repr(str(rb)) in str(e.value)
    assert "root=" in str(e.value)  # says what to do
    joined = Taxonomy([*ea, *eb], nodes=[*na, *nb], root="TOP")
    assert joined.names[0] == "TOP"
    assert names(joined, joined.children(0)) == {str(ra), str(rb)}
    assert joined.n_nodes == len(na) + len(nb) + 1
    with pytest.raises(TaxonomyError) as e2:
        Taxonomy([*ea, *eb], nodes=[*na, *nb], root=str(ra))
    assert e2.value.node == str(ra)


def test_empty_input_everywhere():
    for make in (
        lambda: Taxonomy([]),
        lambda: Taxonomy.from_paths([]),
        lambda: Taxonomy.from_json({"edges": []}),
        lambda: Taxonomy.from_json("[]"),
        lambda: Taxonomy.from_networkx(nx.DiGraph()),
    ):
        with pytest.raises(TaxonomyError, match="empty"):
            make()


def test_single_node_taxonomy():
    t = Taxonomy([], nodes=["only"])
    assert t.n_nodes == 1 and t.is_tree and t.leaves.tolist() == [0]
    assert int(t.tree_distance("only", "only")) == 0
    assert Taxonomy.from_json(t.to_json()) == t
    assert Taxonomy.from_paths(t.to_paths()) == t


def test_cycle_without_root_is_reported():
    with pytest.raises(TaxonomyError, match="cycle") as e:
        Taxonomy([("a", "b"), ("b", "c"), ("c", "a")])
    assert e.value.node in {"a", "b", "c"}


# ---------------------------------------------------------------------------- deep chains
def test_100000_node_chain_builds_without_recursion():
    n = 100_000
    edges = [(f"c{i}", f"c{i + 1}") for i in range(n - 1)]
    tax = Taxonomy(edges)
    assert tax.n_nodes == n and tax.is_tree and tax.max_depth == n - 1
    assert tax.leaves.tolist() == [n - 1]
    assert int(tax.lca(f"c{n - 1}", "c500")) == 500
    assert int(tax.tree_distance(f"c{n - 1}", "c3")) == n - 4
    ids = np.arange(0, n, 997)
    assert (tax.tree_distance(ids, ids[::-1]) == np.abs(ids - ids[::-1])).all()
    assert len(tax.to_edges()) == n - 1
    assert len(tax.levels) == n
    # a cycle through the whole chain is found iteratively too
    with pytest.raises(TaxonomyError, match="cycle") as e:
        Taxonomy([*edges, (f"c{n - 1}", "c1")])
    assert len(str(e.value)) < 500  # a long cycle is shown shortened, not 100,000 names
    assert e.value.node is not None and e.value.node in str(e.value)
