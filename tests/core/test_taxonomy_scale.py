"""Taxonomies of a million nodes (issue 21): ``flat`` and large trees are built with arrays.

The array path must give exactly the taxonomy of the general path (names in the same id order,
the same parent, child and depth arrays), and leave every error to it: the property test runs
both on random trees, with duplicates, cycles, extra roots, self loops and declared nodes mixed
in. Sizes are checked against ``max_nodes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hierlab.core.taxonomy as taxonomy_module
from hierlab.core import limits
from hierlab.core.exceptions import TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from tests._taxonomy_strategies import tree_edges


def _built(edges: list[tuple[str, str]], nodes: list[str] | None, root: str | None) -> Any:
    try:
        t = Taxonomy(edges, nodes=nodes, root=root)
    except TaxonomyError as exc:
        return str(exc)
    arrays = (t.parent, t.depth, t._child_idx, t._child_ptr, t._parent_idx, t._parent_ptr)
    return t.names.tolist(), [a.tolist() for a in arrays], t.is_tree


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # used through .context()
)
@given(
    tree=tree_edges(1, 14),
    extra=st.lists(st.sampled_from(["dup", "cycle", "root2", "self", "unknown"]), max_size=2),
    declare=st.sampled_from([None, "same", "extra"]),
    root=st.sampled_from([None, "R", "first"]),
)
def test_the_array_path_builds_what_the_general_path_builds(
    tree: tuple[list[tuple[str, str]], list[str]],
    extra: list[str],
    declare: str | None,
    root: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    edges, names = tree
    edges = list(edges)
    for kind in extra:
        if kind == "dup" and edges:
            edges.append(edges[0])
        elif kind == "cycle":
            edges.append((names[-1], names[0]))
        elif kind == "root2":
            edges.append(("zz", names[-1]))
        elif kind == "self":
            edges.append((names[0], names[0]))
        elif kind == "unknown":
            edges.append((names[0], "new"))
    nodes = None if declare is None else [*names, *(["iso"] if declare == "extra" else [])]
    r = names[0] if root == "first" else root
    with monkeypatch.context() as m:
        m.setattr(taxonomy_module, "_FAST_MIN_EDGES", 0)
        fast = _built(edges, nodes, r)
        if edges and not extra and declare != "extra":  # a valid tree: the array path takes it
            assert taxonomy_module._tree_arrays(edges, nodes, r) is not None
    with monkeypatch.context() as m:
        m.setattr(taxonomy_module, "_FAST_MIN_EDGES", 10**12)
        general = _built(edges, nodes, r)
    assert fast == general


def test_a_million_node_flat_taxonomy() -> None:
    labels = [f"c{i}" for i in range(10**6)]
    t = Taxonomy.flat(labels)
    assert t.n_nodes == 10**6 + 1 and t.max_depth == 1 and len(t.leaves) == 10**6
    assert int(t.index("c123456")) == 123457
    assert np.array_equal(t.children(0), np.arange(1, 10**6 + 1))
    big = Taxonomy([("r", f"c{i}") for i in range(10**6)])
    assert big.names.tolist()[1:] == t.names.tolist()[1:] and big.is_tree
    with limits.override(max_nodes=1000), pytest.raises(TaxonomyError, match="max_nodes"):
        Taxonomy.flat(labels[:2000])
    with limits.override(max_nodes=1000), pytest.raises(TaxonomyError, match="max_nodes"):
        Taxonomy([("r", f"c{i}") for i in range(2000)])
