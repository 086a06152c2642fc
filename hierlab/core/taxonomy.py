"""The label taxonomy: an immutable, array-backed tree or DAG over label ids.

Nodes are stored in a topological order, root first, so that every parent has a smaller id than
its children (``parent[i] < i``). Every recursion over the hierarchy is then one pass over an
array: top-down in increasing id order, bottom-up in decreasing id order.

Node names are strings in Unicode normal form C (NFC): a name given as ``e`` plus a combining
accent is stored, and found, as the precomposed ``é``, so one name has one spelling. A taxonomy
holds at most ``max_nodes`` nodes (:mod:`hierlab.core.limits`).

Notation (seed 000, Section 2): ``A(i)`` are the ancestors of node ``i``, ``A+(i) = A(i) + {i}``;
``D+(i)`` the descendants of ``i`` with ``i`` itself; ``gamma(u, v)`` the tree distance, the number
of edges on the path between ``u`` and ``v`` (seed 002, Section 2).
"""

from __future__ import annotations

import json
import unicodedata
from collections import deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.exceptions import TaxonomyError

__all__ = ["Taxonomy"]

NodeRef = int | str | np.integer

_DENSE_DAG_DISTANCE_LIMIT = 6000
_MAX_FULL_NAME_CHARS = 50_000_000
_MAX_ANCESTOR_ENTRIES = 50_000_000


class Taxonomy:
    """A rooted tree or DAG of labels, validated on construction.

    Parameters
    ----------
    edges : iterable of (parent, child) pairs
        Node names (any hashable turned into ``str``). The graph must have exactly one root
        (a node without parents), no self loop, no duplicate edge and no cycle.
    nodes : sequence of str, optional
        Every node of the taxonomy. When given, an edge naming a node outside it raises
        "unknown parent"/"unknown child", and isolated nodes are allowed only if the list holds a
        single node. Nodes without training data are always allowed.
    root : str, optional
        Name of a synthetic root to add above every parentless node. Use it when the input has
        several roots (for example a forest of top-level categories).

    Attributes
    ----------
    names : ndarray of str, shape (n_nodes,)
        Node names in id order (topological, root first).
    parent : ndarray of int, shape (n_nodes,)
        The (first) parent of every node, ``-1`` for the root. For a tree the only parent.
    depth : ndarray of int, shape (n_nodes,)
        Edges from the root; for a DAG the longest path, so that every parent is shallower than
        its children.
    is_tree : bool
        True when every non-root node has exactly one parent.

    Raises
    ------
    TaxonomyError
        Naming the offending node: empty input, self loop, duplicate edge, unknown parent,
        several roots, cycle.

    Examples
    --------
    >>> t = Taxonomy([("root", "a"), ("root", "b"), ("a", "a1")])
    >>> t.names.tolist()
    ['root', 'a', 'b', 'a1']
    >>> int(t.tree_distance("a1", "b"))
    3
    """

    def __init__(
        self,
        edges: Iterable[tuple[Hashable, Hashable]],
        nodes: Sequence[Hashable] | None = None,
        root: str | None = None,
    ) -> None:
        edge_list = _edge_pairs(edges)
        if nodes is not None and isinstance(nodes, str | bytes):
            raise TaxonomyError(f"nodes must be a sequence of names, got the string {nodes!r}")
        declared = None if nodes is None else [_node_name(n, "node") for n in nodes]
        if not edge_list and not declared:
            raise TaxonomyError("empty taxonomy: no node and no edge was given")
        root_name = None if root is None else _node_name(root, "root")
        fast = _tree_arrays(edge_list, declared, root_name)
        if fast is not None:  # a valid tree, built with arrays (the same ids as below)
            self._build_tree_arrays(*fast)
            return
        all_names = _node_order(edge_list, declared)
        parents_of: dict[str, list[str]] = {n: [] for n in all_names}
        children_of: dict[str, list[str]] = {n: [] for n in all_names}
        for p, c in edge_list:
            parents_of[c].append(p)
            children_of[p].append(c)
        _check_size(len(all_names) + (root is not None))
        roots = [n for n in all_names if not parents_of[n]]
        if root_name is not None:
            all_names, roots = _add_root(root_name, all_names, roots, parents_of, children_of)
        _check_one_root(all_names, roots, children_of)
        topo = _topological_order(all_names, roots, parents_of, children_of)
        self._build(topo, parents_of, children_of)

    # ------------------------------------------------------------------ construction
    def _build(
        self,
        topo: list[str],
        parents_of: dict[str, list[str]],
        children_of: dict[str, list[str]],
    ) -> None:
        n = len(topo)
        index = _NameIndex(zip(topo, range(n)))
        self._index = index
        self.names = np.array(topo, dtype=object)
        self.names.setflags(write=False)
        pptr = np.zeros(n + 1, dtype=np.int64)
        cptr = np.zeros(n + 1, dtype=np.int64)
        pidx_list: list[int] = []
        cidx_list: list[int] = []
        for i, name in enumerate(topo):
            ps = [index[p] for p in parents_of[name]]
            cs = sorted(index[c] for c in children_of[name])
            pidx_list.extend(ps)
            cidx_list.extend(cs)
            pptr[i + 1] = len(pidx_list)
            cptr[i + 1] = len(cidx_list)
        self._parent_ptr = pptr
        self._parent_idx = np.asarray(pidx_list, dtype=np.int64)
        self._child_ptr = cptr
        self._child_idx = np.asarray(cidx_list, dtype=np.int64)
        n_parents = np.diff(pptr)
        self.is_tree = bool(np.all(n_parents[1:] == 1)) if n > 1 else True
        parent = np.full(n, -1, dtype=np.int64)
        has_parent = n_parents > 0
        parent[has_parent] = self._parent_idx[pptr[:-1][has_parent]]
        self.parent = parent
        depth = np.zeros(n, dtype=np.int64)
        if self.is_tree:
            for i in range(1, n):  # parent[i] < i: one pass
                depth[i] = depth[parent[i]] + 1
        else:
            for i in range(1, n):
                depth[i] = depth[self._parent_idx[pptr[i] : pptr[i + 1]]].max() + 1
        self.depth = depth
        for arr in (self.parent, self.depth, pptr, cptr, self._parent_idx, self._child_idx):
            arr.setflags(write=False)

    @classmethod
    def from_edges(
        cls,
        edges: Iterable[tuple[Hashable, Hashable]],
        nodes: Sequence[Hashable] | None = None,
        root: str | None = None,
    ) -> Taxonomy:
        """Build from ``(parent, child)`` pairs; see :class:`Taxonomy`."""
        return cls(edges, nodes=nodes, root=root)

    @classmethod
    def from_parent_array(cls, parent: Sequence[int], names: Sequence[Hashable] | None = None):
        """Build a tree from a parent array (``-1`` marks the root).

        Parameters
        ----------
        parent : sequence of int, shape (n_nodes,)
            ``parent[i]`` is the index of the parent of node ``i``; exactly one entry is ``-1``.
        names : sequence of str, shape (n_nodes,), optional
            Node names; default ``"0", "1", ...``.
        """
        parent = list(parent)
        names_ = [str(i) for i in range(len(parent))] if names is None else [str(x) for x in names]
        if len(names_) != len(parent):
            raise TaxonomyError(f"{len(names_)} names for {len(parent)} nodes")
        edges = []
        for i, p in enumerate(parent):
            if isinstance(p, bool) or not isinstance(p, int | np.integer):
                raise TaxonomyError(
                    f"parent of node {names_[i]!r} must be an integer index, got {p!r}",
                    node=names_[i],
                )
            if p < 0:
                continue
            if p >= len(parent):
                raise TaxonomyError(
                    f"unknown parent index {p} of node {names_[i]!r}", node=names_[i]
                )
            edges.append((names_[p], names_[i]))
        return cls(edges, nodes=names_)

    @classmethod
    def from_paths(
        cls,
        paths: Iterable[str],
        sep: str = "/",
        root: str | None = None,
        names: str = "auto",
    ) -> Taxonomy:
        """Build from ``a/b/c`` path strings, one per node (prefixes are implied).

        Parameters
        ----------
        paths : iterable of str
            Each path lists the nodes from the top down, separated by ``sep``.
        sep : str, default "/"
            The separator.
        root : str, optional
            A synthetic root above the first components (needed when they differ).
        names : {"auto", "leaf", "full"}, default "auto"
            How nodes are named: ``"leaf"`` by their last component (components must then be
            unique), ``"full"`` by their whole path (``"01/02"``, as in Clus FunCat), ``"auto"``
            by the last component when that is unambiguous, else by the full path.
        """
        if not isinstance(sep, str) or not sep:
            raise TaxonomyError(f"sep must be a non-empty string, got {sep!r}")
        split = []
        for k, raw in enumerate(paths):
            parts = [p.strip() for p in str(raw).strip().split(sep)]
            if not parts or any(p == "" for p in parts):
                raise TaxonomyError(f"path {k + 1} {str(raw)[:80]!r} has an empty component")
            split.append(parts)
        if not split:
            raise TaxonomyError("empty taxonomy: no path was given")
        if names not in ("auto", "leaf", "full"):
            raise TaxonomyError(f"names must be 'auto', 'leaf' or 'full', got {names!r}")
        t_parent, t_comp, ambiguous = _path_trie(split)
        if names == "leaf" and ambiguous is not None:
            raise TaxonomyError(
                f"node name {ambiguous!r} appears under two different parents; use names='full'",
                node=ambiguous,
            )
        use_full = names == "full" or (names == "auto" and ambiguous is not None)
        label = _full_names(t_parent, t_comp, sep) if use_full else t_comp
        edges: dict[tuple[str, str], None] = {}
        nodes: dict[str, None] = {}
        for k, p in enumerate(t_parent):
            nodes.setdefault(label[k], None)
            if p >= 0:
                edges.setdefault((label[p], label[k]), None)
        if len(nodes) == 1 and not edges:
            return cls([], nodes=list(nodes), root=root)
        if root is None:
            return cls(list(edges), root=None)
        return cls(list(edges), nodes=list(nodes), root=root)

    @classmethod
    def from_json(cls, data: str | dict[str, Any] | list[Any]) -> Taxonomy:
        """Build from JSON text or its parsed value.

        Accepted shapes: a nested tree ``{"name": r, "children": [{...}, ...]}``; an edge list
        ``{"edges": [[parent, child], ...], "nodes": [...]}`` (``nodes`` and ``"root"`` optional);
        a child-to-parent map ``{"parent": {child: parent, ...}}``; or a bare list of pairs.
        """
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise TaxonomyError(f"not valid JSON: {exc}") from None
            except RecursionError:
                raise TaxonomyError(
                    "JSON nested too deeply for the parser: write a deep taxonomy as an edge "
                    'list ({"edges": [[parent, child], ...]}) instead of nested children'
                ) from None
            except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
                raise TaxonomyError(f"not valid JSON: {exc}") from None
        if isinstance(data, list):
            return cls(_pairs(data))
        if not isinstance(data, dict):
            raise TaxonomyError("JSON taxonomy must be an object or a list of [parent, child]")
        root = data.get("root")
        if root is not None:
            root = _json_name(root, "'root'")
        if "edges" in data:
            if not isinstance(data["edges"], list):
                raise TaxonomyError("'edges' must be a list of [parent, child] pairs")
            nodes = data.get("nodes")
            if nodes is not None:
                if not isinstance(nodes, list):
                    raise TaxonomyError("'nodes' must be a list of names")
                nodes = [_json_name(n, "a node") for n in nodes]
            return cls(_pairs(data["edges"]), nodes=nodes, root=root)
        if "parent" in data and isinstance(data["parent"], dict):
            return cls(
                [(_json_name(p, f"the parent of {c!r}"), c) for c, p in data["parent"].items()],
                root=root,
            )
        if "name" in data:
            edges: list[tuple[str, str]] = []
            stack = [data]
            count = 0
            parent_of: dict[str, str | None] = {_json_name(data["name"], "a 'name'"): None}
            while stack:
                node = stack.pop()
                if not isinstance(node, dict) or "name" not in node:
                    raise TaxonomyError(f"nested JSON node without a 'name': {str(node)[:80]}")
                count += 1
                name = _json_name(node["name"], "a 'name'")
                kids = node.get("children", []) or []
                if not isinstance(kids, list):
                    raise TaxonomyError(f"'children' of {name!r} must be a list", node=name)
                for kid in kids:
                    if not isinstance(kid, dict) or "name" not in kid:
                        raise TaxonomyError(
                            f"a child of {name!r} has no 'name': {str(kid)[:80]}",
                            node=name,
                        )
                    kid_name = _json_name(kid["name"], f"a child of {name!r}")
                    if kid_name in parent_of:
                        raise _nested_twice(kid_name, parent_of[kid_name], name)
                    parent_of[kid_name] = name
                    edges.append((name, kid_name))
                stack.extend(reversed(kids))
            if not edges:
                return cls([], nodes=[_json_name(data["name"], "a 'name'")])
            return cls(edges)
        raise TaxonomyError(
            "JSON taxonomy needs 'name'/'children' (nested), 'edges', or 'parent' keys"
        )

    @classmethod
    def from_networkx(cls, graph: Any, root: str | None = None) -> Taxonomy:
        """Build from a ``networkx.DiGraph`` whose edges point from parent to child."""
        if not graph.is_directed():
            raise TaxonomyError("the networkx graph must be directed (parent -> child)")
        if graph.number_of_nodes() == 0:
            raise TaxonomyError("empty taxonomy: the graph has no node")
        return cls(list(graph.edges()), nodes=list(graph.nodes()), root=root)

    @classmethod
    def flat(cls, labels: Iterable[Hashable], root: str = "root") -> Taxonomy:
        """Every label a child of one root (the "flat" taxonomy of seeds 000 and 002).

        Built straight from arrays: a million labels take about a second.
        """
        root_name = _node_name(root, "root")
        labs = list(dict.fromkeys(_node_name(x, "label") for x in labels))
        if root_name in labs:
            raise TaxonomyError(
                f"a label is named {root_name!r}, the name of the flat root: pass another root=",
                node=root_name,
            )
        if not labs:
            raise TaxonomyError("empty taxonomy: no label was given")
        _check_size(len(labs) + 1)
        n = len(labs) + 1
        tax = cls.__new__(cls)
        tax._build_tree_arrays(
            [root_name, *labs],
            np.r_[-1, np.zeros(n - 1, dtype=np.int64)],
            np.r_[0, np.ones(n - 1, dtype=np.int64)],
        )
        return tax

    def _build_tree_arrays(self, names: list[str], parent: np.ndarray, depth: np.ndarray) -> None:
        """Set the arrays of a tree given in topological order (``parent[i] < i``) at once."""
        n = len(names)
        self._index = _NameIndex(zip(names, range(n)))
        self.names = np.empty(n, dtype=object)
        self.names[:] = names
        self.names.setflags(write=False)
        self._parent_ptr = np.r_[0, np.arange(n, dtype=np.int64)]
        self._parent_idx = parent[1:].astype(np.int64)
        order = np.argsort(parent[1:], kind="stable") + 1
        self._child_idx = order.astype(np.int64)
        counts = np.bincount(parent[1:], minlength=n)
        self._child_ptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
        self.is_tree = True
        self.parent = parent.astype(np.int64)
        self.depth = depth.astype(np.int64)
        for arr in (
            self.parent,
            self.depth,
            self._parent_ptr,
            self._child_ptr,
            self._parent_idx,
            self._child_idx,
        ):
            arr.setflags(write=False)

    # ------------------------------------------------------------------ export
    def to_edges(self) -> list[tuple[str, str]]:
        """The ``(parent, child)`` pairs, in id order of the child."""
        out = []
        for c in range(self.n_nodes):
            for p in self._parent_idx[self._parent_ptr[c] : self._parent_ptr[c + 1]]:
                out.append((str(self.names[p]), str(self.names[c])))
        return out

    def to_paths(self, sep: str = "/") -> list[str]:
        """One ``a/b/c`` path per node (trees only), root included.

        When node names are already full paths (``"01/02"``, each child's name its parent's name
        plus ``sep`` plus a component), the names are returned as they are.
        """
        if not self.is_tree:
            raise TaxonomyError("a DAG has no unique path per node: use to_edges() or to_json()")
        names = [str(x) for x in self.names]
        full_style = self.n_nodes > 1 and all(
            self.depth[i] == 1 or names[i].startswith(names[self.parent[i]] + sep)
            for i in range(1, self.n_nodes)
        )
        if full_style and all(sep not in names[i] for i in self.children(0)):
            # names like 01, 01/02 under a synthetic root: paths are the names themselves
            return [names[0], *[f"{names[0]}{sep}{names[i]}" for i in range(1, self.n_nodes)]]
        for nm in names:
            if sep in nm:
                raise TaxonomyError(
                    f"node name {nm!r} contains the separator {sep!r}; choose another sep",
                    node=nm,
                )
        plen = [len(names[0])]
        par = self.parent.tolist()
        for i in range(1, self.n_nodes):
            plen.append(plen[par[i]] + len(sep) + len(names[i]))
        if sum(plen) > _MAX_FULL_NAME_CHARS:
            raise TaxonomyError(
                f"the paths of this tree would take {sum(plen):,} characters (depth "
                f"{self.max_depth}): write it as an edge list or JSON instead"
            )
        paths = [names[0]]
        for i in range(1, self.n_nodes):
            paths.append(paths[par[i]] + sep + names[i])
        return paths

    def to_json(self) -> dict[str, Any]:
        """A nested ``{"name", "children"}`` dict for a tree, ``{"nodes", "edges"}`` for a DAG."""
        if not self.is_tree:
            return {
                "nodes": [str(x) for x in self.names],
                "edges": [list(e) for e in self.to_edges()],
            }
        objs: list[dict[str, Any]] = [{"name": str(nm)} for nm in self.names]
        for i in range(1, self.n_nodes):
            objs[self.parent[i]].setdefault("children", []).append(objs[i])
        return objs[0]

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph`` with edges from parent to child."""
        import networkx as nx

        g = nx.DiGraph()
        g.add_nodes_from(str(x) for x in self.names)
        g.add_edges_from(self.to_edges())
        return g

    # ------------------------------------------------------------------ basics
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.names)

    @property
    def root(self) -> int:
        """Id of the root (always 0)."""
        return 0

    def __len__(self) -> int:
        return self.n_nodes

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str | np.str_) and str(name) in self._index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Taxonomy):
            return NotImplemented
        return set(self.names) == set(other.names) and set(self.to_edges()) == set(other.to_edges())

    def __copy__(self) -> Taxonomy:
        return self  # immutable: copies would only cost memory (sklearn's clone deep-copies params)

    def __deepcopy__(self, memo: dict[int, Any]) -> Taxonomy:
        return self

    def __hash__(self) -> int:
        return hash((frozenset(self.to_edges()), frozenset(self.names)))

    def __repr__(self) -> str:
        kind = "tree" if self.is_tree else "DAG"
        return (
            f"Taxonomy({kind}, {self.n_nodes} nodes, {len(self.leaves)} leaves, "
            f"depth {self.max_depth}, root={self.names[0]!r})"
        )

    def node_id(self, node: NodeRef) -> int:
        """The id of one node, given by its id or its name.

        Raises
        ------
        TaxonomyError
            An id out of range or an unknown name.
        """
        if isinstance(node, int | np.integer):
            i = int(node)
            if not 0 <= i < self.n_nodes:
                raise TaxonomyError(f"node id {i} out of range [0, {self.n_nodes})")
            return i
        try:
            return self._index[str(node)]
        except KeyError:
            raise TaxonomyError(f"unknown node {node!r}", node=str(node)) from None

    def index(self, names: Iterable[Hashable] | Hashable) -> np.ndarray:
        """Ids of the given node names (vectorised over an array of names).

        Parameters
        ----------
        names : str or array-like of str
            Node names.

        Returns
        -------
        ids : ndarray of int
            Same shape as ``names``.

        Raises
        ------
        TaxonomyError
            Naming the first unknown node.
        """
        arr = np.asarray(names, dtype=object)
        flat = arr.ravel()
        # hash lookups (pandas), not a sort of the strings: 10^6 names in well under a second
        ids = self._name_index.get_indexer(flat).astype(np.int64)
        miss = np.flatnonzero(ids < 0)
        if len(miss):  # non-str labels (ints, bytes) by their str(), names by their NFC form
            ids[miss] = self._name_index.get_indexer([_nfc(str(x)) for x in flat[miss]])
            bad = miss[ids[miss] < 0]
            if len(bad):
                u = str(flat[bad[0]])
                raise TaxonomyError(f"label {u!r} is not a node of the taxonomy", node=u)
        return ids.reshape(arr.shape)

    @property
    def name_index(self) -> Mapping[str, int]:
        """Node name -> id (a name not found as written is looked up in its NFC form); its
        ``get(name)`` is None for a name that is not a node."""
        return self._index

    @cached_property
    def parent_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (child, parent) edge as two id arrays of shape (n_edges,), children
        increasing (a DAG node appears once per parent)."""
        child = np.repeat(np.arange(self.n_nodes, dtype=np.int64), np.diff(self._parent_ptr))
        parent = np.array(self._parent_idx, dtype=np.int64)
        for arr in (child, parent):
            arr.setflags(write=False)
        return child, parent

    @cached_property
    def _name_index(self) -> Any:
        import pandas as pd

        return pd.Index([str(x) for x in self.names], dtype=object)

    # ------------------------------------------------------------------ local structure
    def parents(self, node: NodeRef) -> np.ndarray:
        """Ids of the parents of ``node`` (empty for the root)."""
        i = self.node_id(node)
        return self._parent_idx[self._parent_ptr[i] : self._parent_ptr[i + 1]]

    def children(self, node: NodeRef) -> np.ndarray:
        """Ids of the children of ``node``, increasing."""
        i = self.node_id(node)
        return self._child_idx[self._child_ptr[i] : self._child_ptr[i + 1]]

    def siblings(self, node: NodeRef) -> np.ndarray:
        """Ids of the other children of the parents of ``node``."""
        i = self.node_id(node)
        if i == 0:
            return np.empty(0, dtype=np.int64)
        sib = np.unique(np.concatenate([self.children(p) for p in self.parents(i)]))
        return sib[sib != i]

    def ancestors(self, node: NodeRef, include_self: bool = False) -> np.ndarray:
        """``A(i)`` (or ``A+(i)`` with ``include_self``): ids, increasing (root first)."""
        i = self.node_id(node)
        if self.is_tree and not self._small_closure:
            # a walk up the parent array: O(depth), no quadratic ancestor matrix (long chains)
            up = []
            j = self.parent[i] if not include_self else i
            while j >= 0:
                up.append(int(j))
                j = self.parent[j]
            return np.asarray(up[::-1], dtype=np.int64)
        row = self.ancestor_matrix.indices[
            self.ancestor_matrix.indptr[i] : self.ancestor_matrix.indptr[i + 1]
        ]
        return row if include_self else row[row != i]

    def descendants(self, node: NodeRef, include_self: bool = False) -> np.ndarray:
        """``D(i)`` (or ``D+(i)`` with ``include_self``): ids, increasing."""
        i = self.node_id(node)
        if self.is_tree and not self._small_closure:
            # D+(i) is a contiguous run of the preorder: O(|D+(i)|), no matrix
            order, tin = self._preorder
            run = np.sort(order[tin[i] : tin[i] + self.subtree_size[i]])
            return run if include_self else run[1:]
        col = self._descendant_matrix.indices[
            self._descendant_matrix.indptr[i] : self._descendant_matrix.indptr[i + 1]
        ]
        return col if include_self else col[col != i]

    def path(self, node: NodeRef) -> np.ndarray:
        """Ids on the path root -> ``node`` (trees only; for a DAG use :meth:`ancestors`)."""
        if not self.is_tree:
            raise TaxonomyError("path() needs a tree; for a DAG use ancestors(include_self=True)")
        return self.ancestors(node, include_self=True)

    # ------------------------------------------------------------------ global structure
    @cached_property
    def n_children(self) -> np.ndarray:
        """Number of children per node, shape (n_nodes,)."""
        return np.diff(self._child_ptr)

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves, shape (n_nodes,)."""
        return self.n_children == 0

    @cached_property
    def leaves(self) -> np.ndarray:
        """Ids of the leaves, increasing."""
        return np.flatnonzero(self.is_leaf)

    @cached_property
    def internal_nodes(self) -> np.ndarray:
        """Ids of the nodes with at least one child, increasing (root first)."""
        return np.flatnonzero(~self.is_leaf)

    @cached_property
    def max_depth(self) -> int:
        """Depth of the deepest node."""
        return int(self.depth.max())

    @cached_property
    def levels(self) -> list[np.ndarray]:
        """``levels[d]`` holds the ids of the nodes at depth ``d``."""
        order = np.argsort(self.depth, kind="stable")
        counts = np.bincount(self.depth, minlength=self.max_depth + 1)
        return np.split(order, np.cumsum(counts)[:-1])

    @cached_property
    def ancestor_matrix(self) -> sp.csr_matrix:
        """Sparse 0/1 matrix of shape (n_nodes, n_nodes): ``A[i, j] = 1`` iff ``j`` in ``A+(i)``.

        Row ``i`` is the indicator of the path root -> ``i`` for a tree (``X @ A`` sums a node's
        path), of all ancestors-or-self for a DAG.
        """
        n = self.n_nodes
        if self.is_tree and self._closure_size > _MAX_ANCESTOR_ENTRIES:
            raise TaxonomyError(
                f"the ancestor matrix of this tree would hold {self._closure_size:,} entries "
                f"(depth {self.max_depth}); methods that need it cannot train on a tree this deep"
            )
        if self.is_tree:
            rows = [np.arange(n)]
            cols = [np.arange(n)]
            who = np.arange(n)
            cur = np.arange(n)
            while True:
                anc = self.parent[cur]
                keep = anc >= 0
                if not keep.any():
                    break
                who = who[keep]
                cur = anc[keep]
                rows.append(who)
                cols.append(cur)
            r = np.concatenate(rows)
            c = np.concatenate(cols)
        else:
            sets: list[np.ndarray] = []
            for i in range(n):
                ps = self.parents(i)
                if len(ps) == 0:
                    sets.append(np.array([i], dtype=np.int64))
                else:
                    sets.append(np.union1d(np.concatenate([sets[p] for p in ps]), [i]))
            r = np.repeat(np.arange(n), [len(s) for s in sets])
            c = np.concatenate(sets)
        m = sp.csr_matrix((np.ones(len(r), dtype=np.float64), (r, c)), shape=(n, n))
        m.sort_indices()
        return m

    @cached_property
    def _descendant_matrix(self) -> sp.csr_matrix:
        m = self.ancestor_matrix.T.tocsr()
        m.sort_indices()
        return m

    @cached_property
    def subtree_size(self) -> np.ndarray:
        """``|D+(i)|``: number of descendants of each node, itself included, shape (n_nodes,)."""
        if self.is_tree:
            # one bottom-up pass (parent[i] < i): linear even for a 10^5-node chain
            size = [1] * self.n_nodes
            par = self.parent.tolist()
            for i in range(self.n_nodes - 1, 0, -1):
                size[par[i]] += size[i]
            return np.asarray(size, dtype=np.int64)
        return np.diff(self._descendant_matrix.indptr).astype(np.int64)

    @cached_property
    def _closure_size(self) -> int:
        """Entries of a tree's ancestor matrix, ``sum_i |A+(i)|`` (0 for a DAG: not used)."""
        return int(self.depth.sum()) + self.n_nodes if self.is_tree else 0

    @cached_property
    def _small_closure(self) -> bool:
        """True when the ancestor matrix is small enough to build (not a very deep tree)."""
        return not self.is_tree or self._closure_size <= _MAX_ANCESTOR_ENTRIES // 10

    @cached_property
    def _preorder(self) -> tuple[np.ndarray, np.ndarray]:
        """Preorder sequence (children in increasing id order) and each node's position in it."""
        cptr = self._child_ptr.tolist()
        cidx = self._child_idx.tolist()
        order: list[int] = []
        stack = [0]
        while stack:  # iterative: no recursion limit on deep trees
            v = stack.pop()
            order.append(v)
            stack.extend(reversed(cidx[cptr[v] : cptr[v + 1]]))
        seq = np.asarray(order, dtype=np.int64)
        tin = np.empty(self.n_nodes, dtype=np.int64)
        tin[seq] = np.arange(self.n_nodes)
        return seq, tin

    @cached_property
    def _up(self) -> np.ndarray:
        """Binary-lifting table of shape (n_levels, n_nodes) for trees; the root maps to itself."""
        par = np.where(self.parent < 0, 0, self.parent)
        table = [par]
        k = 1
        while (1 << k) <= max(self.max_depth, 1):
            table.append(table[-1][table[-1]])
            k += 1
        return np.vstack(table)

    # ------------------------------------------------------------------ LCA and distance
    def is_ancestor_or_self(self, anc: Any, node: Any) -> np.ndarray:
        """Boolean array: ``anc[k]`` lies in ``A+(node[k])`` (vectorised over pairs of ids).

        Parameters
        ----------
        anc, node : array-like of int of shape (n,)

        Returns
        -------
        ndarray of bool of shape (n,)
        """
        anc = np.asarray(anc, dtype=np.int64)
        node = np.asarray(node, dtype=np.int64)
        if len(anc) == 0:
            return np.zeros(0, dtype=bool)
        if self.is_tree:
            return np.asarray(self.lca(anc, node) == anc)
        return np.asarray(self.ancestor_matrix[node, anc]).ravel() > 0

    def lca(self, u: Any, v: Any) -> np.ndarray:
        """Lowest common ancestor of ``u`` and ``v`` (names or ids, scalars or arrays).

        For a DAG, the deepest common ancestor (the smallest id among equally deep ones).

        Returns
        -------
        ndarray of int
            Ids, broadcast shape of ``u`` and ``v``.
        """
        a, b = self.node_ids(u), self.node_ids(v)
        a, b = np.broadcast_arrays(a, b)
        shape = a.shape
        if not self.is_tree:
            return self._dag_pairwise(a.ravel(), b.ravel(), "lca").reshape(shape)
        return self._tree_lca(a.ravel(), b.ravel()).reshape(shape)

    def _tree_lca(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """LCA of validated 1-D id arrays on a tree: O(1) range-minimum queries per pair."""
        if self._rmq is not None:
            return self._lca_rmq(a, b)
        return self.lca_lifting(a.copy(), b.copy())

    @cached_property
    def _rmq(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Preorder positions and a sparse table for O(1) LCA queries on a tree.

        With ``order`` the preorder sequence and ``tin`` each node's position in it, the LCA of
        ``u != v`` (``tin[u] < tin[v]``) is the parent of the shallowest node of
        ``order[tin[u] + 1 .. tin[v]]`` (a range-minimum query on depth). ``table[k, i]`` holds
        the shallowest node of ``order[i .. i + 2^k - 1]``. Returns None when the table would
        exceed ~50M entries (then binary lifting answers).
        """
        n = self.n_nodes
        n_levels = max(1, int(n).bit_length())
        if n * n_levels > 50_000_000:
            return None
        cptr = self._child_ptr.tolist()
        cidx = self._child_idx.tolist()
        order: list[int] = []
        stack = [0]
        while stack:  # iterative preorder: children in increasing id order
            v = stack.pop()
            order.append(v)
            stack.extend(reversed(cidx[cptr[v] : cptr[v + 1]]))
        seq = np.asarray(order, dtype=np.int64)
        tin = np.empty(n, dtype=np.int64)
        tin[seq] = np.arange(n)
        # log2[m] = floor(log2(m)) for m >= 1 (log2[0] = 0: unused, a == b)
        log2 = np.zeros(n + 1, dtype=np.int64)
        log2[1:] = np.floor(np.log2(np.arange(1, n + 1))).astype(np.int64)
        for m_ in (1 << np.arange(n_levels)).tolist():  # exact at powers of two
            if m_ <= n:
                log2[m_] = int(m_).bit_length() - 1
        depth = self.depth
        table = np.empty((n_levels, n), dtype=np.int32 if n < 2**31 else np.int64)
        table[0] = seq
        for k in range(1, n_levels):
            half = 1 << (k - 1)
            prev = table[k - 1]
            cur = prev.copy()
            m = n - (1 << k) + 1
            if m > 0:
                left, right = prev[:m], prev[half : half + m]
                cur[:m] = np.where(depth[left] <= depth[right], left, right)
            table[k] = cur
        return tin, table, log2

    def _lca_rmq(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        rmq = self._rmq
        assert rmq is not None
        tin, table, log2 = rmq
        n = self.n_nodes
        ta, tb = tin[a], tin[b]
        lo = np.minimum(ta, tb)
        hi = np.maximum(ta, tb)
        length = hi - lo  # the range order[lo + 1 .. hi] has ``length`` nodes
        k = log2[length]
        flat = table.ravel()
        base = k * n
        x = flat[base + lo + (length > 0)]
        y = flat[base + hi - (1 << k) + 1]
        depth = self.depth
        w = np.where(depth[x] <= depth[y], x, y)
        return np.where(length == 0, a, self.parent[w])

    def lca_lifting(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """LCA of node-id arrays ``a`` and ``b`` (shape (k,), overwritten) on a tree by binary
        lifting: O(log depth) vectorised steps, what :meth:`lca` falls back to on trees too
        large for its table."""
        depth = self.depth
        up = self._up
        swap = depth[a] < depth[b]
        a[swap], b[swap] = b[swap], a[swap]
        diff = depth[a] - depth[b]
        for k in range(up.shape[0]):
            sel = ((diff >> k) & 1).astype(bool)
            if sel.any():
                a[sel] = up[k][a[sel]]
        for k in range(up.shape[0] - 1, -1, -1):
            ua = up[k][a]
            ub = up[k][b]
            sel = ua != ub
            a[sel] = ua[sel]
            b[sel] = ub[sel]
        return np.where(a == b, a, up[0][a])

    def tree_distance(self, u: Any, v: Any) -> np.ndarray:
        """``gamma(u, v)``: number of edges on the path between ``u`` and ``v``.

        Vectorised over arrays of names or ids (seed 002, eq. 1). For a DAG, the shortest path
        through a common ancestor.

        Returns
        -------
        ndarray of int
            Broadcast shape of ``u`` and ``v``.
        """
        a, b = self.node_ids(u), self.node_ids(v)
        if not self.is_tree:
            a, b = np.broadcast_arrays(a, b)
            return self._dag_pairwise(a.ravel(), b.ravel(), "dist").reshape(a.shape)
        a, b = np.broadcast_arrays(a, b)
        shape = a.shape
        a, b = a.ravel(), b.ravel()
        depth = self.depth
        lca = self._tree_lca(a, b)
        return (depth[a] + depth[b] - 2 * depth[lca]).reshape(shape)

    def node_ids(self, x: Any) -> np.ndarray:
        """The ids of nodes given by ids or by names (an array of either, any shape).

        Raises
        ------
        TaxonomyError
            An id out of range or an unknown name.
        """
        arr = np.asarray(x)
        if arr.dtype.kind in "iu":
            if arr.size and (arr.min() < 0 or arr.max() >= self.n_nodes):
                raise TaxonomyError(f"node ids out of range [0, {self.n_nodes})")
            return arr.astype(np.int64, copy=False)
        return self.index(arr)

    @cached_property
    def _upward_distance(self) -> np.ndarray:
        """Shortest upward distances ``U[i, a]`` (dense, DAG); huge when a is not in A+(i)."""
        n = self.n_nodes
        if n > _DENSE_DAG_DISTANCE_LIMIT:
            raise TaxonomyError(
                f"DAG distances are computed densely up to {_DENSE_DAG_DISTANCE_LIMIT} nodes; "
                f"this DAG has {n}"
            )
        big = np.iinfo(np.int32).max // 4
        dist = np.full((n, n), big, dtype=np.int32)
        for i in range(n):
            dist[i, i] = 0
            ps = self.parents(i)
            if len(ps):
                dist[i] = np.minimum(dist[i], dist[ps].min(axis=0) + 1)
                dist[i, i] = 0
        return dist

    def _dag_pairwise(self, a: np.ndarray, b: np.ndarray, what: str) -> np.ndarray:
        pairs = np.stack([a, b], axis=1)
        uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
        inv = inv.ravel()
        U = self._upward_distance
        anc = self.ancestor_matrix
        out = np.empty(len(uniq), dtype=np.int64)
        chunk = max(1, 2_000_000 // max(self.n_nodes, 1))
        for s in range(0, len(uniq), chunk):
            ua, ub = uniq[s : s + chunk, 0], uniq[s : s + chunk, 1]
            if what == "dist":
                out[s : s + chunk] = (U[ua].astype(np.int64) + U[ub]).min(axis=1)
            else:
                common = anc[ua].multiply(anc[ub]).toarray() > 0
                key = np.where(common, self.depth[None, :], -1)
                out[s : s + chunk] = key.argmax(axis=1)
        return out[inv]

    # ------------------------------------------------------------------ convenience
    def label_ancestor_indicator(self, ids: np.ndarray) -> sp.csr_matrix:
        """Rows of the ancestor matrix for an array of node ids, shape (len(ids), n_nodes)."""
        return self.ancestor_matrix[np.asarray(ids, dtype=np.int64)]

    def relabel(self, mapping: dict[str, str]) -> Taxonomy:
        """A copy with nodes renamed by ``mapping`` (missing names kept)."""
        return Taxonomy(
            [(mapping.get(p, p), mapping.get(c, c)) for p, c in self.to_edges()],
            nodes=[mapping.get(str(n), str(n)) for n in self.names],
        )


def _pairs(items: Iterable[Any]) -> list[tuple[str, str]]:
    """``[parent, child]`` pairs of a JSON document: names must be strings or integers."""
    out = []
    for k, e in enumerate(items):
        if not isinstance(e, list | tuple) or len(e) != 2:
            raise TaxonomyError(f"edge {k + 1} must be a [parent, child] pair, got {str(e)[:80]}")
        where = f"edge {k + 1}"
        out.append((_json_name(e[0], where), _json_name(e[1], where)))
    return out


def _json_name(v: Any, where: str) -> str:
    """A node name read from JSON: a non-empty string or an integer, never null/list/float."""
    if isinstance(v, bool) or not isinstance(v, str | int):
        raise TaxonomyError(
            f"{where}: a node name must be a string (or an integer), got {str(v)[:80]}"
        )
    return _node_name(v, where)


def _node_name(v: Any, where: str) -> str:
    """``str(v)`` in NFC, refusing the empty name (it cannot be written in any taxonomy file)."""
    name = _nfc(str(v))
    if name == "":
        raise TaxonomyError(f"{where}: empty node name")
    return name


def _nfc(name: str) -> str:
    """``name`` in Unicode normal form C (ASCII names, nearly all, returned as they are)."""
    return name if name.isascii() else unicodedata.normalize("NFC", name)


class _NameIndex(dict[str, int]):
    """Node name -> id; a name not found as written is looked up in its NFC form."""

    def __missing__(self, key: str) -> int:
        nfc = _nfc(key) if isinstance(key, str) else key
        if nfc == key:
            raise KeyError(key)
        return dict.__getitem__(self, nfc)

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        """The id of ``key`` (or of its NFC form), else ``default``."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        return isinstance(key, str) and not key.isascii() and dict.__contains__(self, _nfc(key))


#: from this many edges on, a tree is built with arrays (:func:`_tree_arrays`)
_FAST_MIN_EDGES = 2000
#: ... and at most this deep (one array pass per level)
_FAST_MAX_DEPTH = 512


def _tree_arrays(
    edge_list: list[tuple[str, str]], declared: list[str] | None, root: str | None
) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """``(names, parent, depth)`` in topological order of a large valid tree, built with arrays.

    The same ids as the general path (Kahn's algorithm from the root, children in input order,
    which on a tree is a breadth-first pass), without a Python list per node: a million edges
    in seconds. None for anything else (a small input, a DAG, a cycle, several roots, a self
    loop, a duplicate edge, an undeclared node): the general path builds it or names the error.
    """
    import pandas as pd

    m = len(edge_list)
    if m < _FAST_MIN_EDGES:
        return None
    ends = np.empty(2 * m, dtype=object)
    ends[:] = [x for e in edge_list for x in e]
    if declared is None:
        codes, uniq = pd.factorize(ends)
        names = list(uniq)
    else:
        index = pd.Index(declared, dtype=object)
        if not index.is_unique:
            return None
        codes, names = index.get_indexer(ends), list(declared)
        if (codes < 0).any():
            return None
    pc, cc = np.asarray(codes[0::2], dtype=np.int64), np.asarray(codes[1::2], dtype=np.int64)
    n = len(names)
    indeg = np.bincount(cc, minlength=n)
    if (pc == cc).any() or (indeg > 1).any():
        return None
    roots = np.flatnonzero(indeg == 0)
    if root is not None and not (len(roots) == 1 and names[roots[0]] == root):
        if root in names:
            return None
        names, n = [root, *names], n + 1
        pc, cc = np.r_[np.zeros(len(roots), np.int64), pc + 1], np.r_[roots + 1, cc + 1]
        roots = np.array([0])
    if len(roots) != 1:
        return None
    _check_size(n)
    order, depth = _breadth_first(int(roots[0]), pc, cc, n)
    if order is None:
        return None  # a cycle: nodes unreachable from the root
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    par = np.full(n, -1, dtype=np.int64)
    par[cc] = pc
    parent = np.where(par[order] >= 0, pos[np.maximum(par[order], 0)], -1)
    return [names[i] for i in order.tolist()], parent, depth


def _breadth_first(
    root: int, pc: np.ndarray, cc: np.ndarray, n: int
) -> tuple[np.ndarray | None, np.ndarray]:
    """Node codes level by level from ``root`` (children in edge order), and their depths."""
    by_parent = np.argsort(pc, kind="stable")
    kids = cc[by_parent]
    ptr = np.r_[0, np.cumsum(np.bincount(pc, minlength=n))]
    levels, depths = [np.array([root])], [np.zeros(1, dtype=np.int64)]
    frontier, seen = levels[0], 1
    while True:
        lens = ptr[frontier + 1] - ptr[frontier]
        total = int(lens.sum())
        if total == 0:
            break
        offsets = np.repeat(ptr[frontier] - (np.cumsum(lens) - lens), lens)
        frontier = kids[offsets + np.arange(total)]
        levels.append(frontier)
        depths.append(np.full(total, len(depths), dtype=np.int64))
        seen += total
        if seen > n or len(levels) > _FAST_MAX_DEPTH:
            return None, depths[0]  # a cycle below the root, or a deep tree: the general path
    order = np.concatenate(levels)
    if len(order) != n:
        return None, depths[0]
    return order, np.concatenate(depths)


def _check_size(n_nodes: int) -> None:
    """Refuse a taxonomy of more than ``max_nodes`` nodes (:mod:`hierlab.core.limits`)."""
    if n_nodes > limits.current().max_nodes:
        raise TaxonomyError(
            f"the taxonomy would have {n_nodes:,} nodes " + limits.how_to_raise("max_nodes")
        )


def _nested_twice(name: str, first: str | None, second: str) -> TaxonomyError:
    """The error for a name found twice in a nested JSON tree (it would silently be a DAG)."""
    where = "as the root" if first is None else f"under {first!r}"
    return TaxonomyError(
        f"node {name!r} appears twice in the nested JSON ({where} and under {second!r}): nested "
        "children describe a tree. Give the nodes distinct names, or write a DAG as "
        '{"nodes": [...], "edges": [[parent, child], ...]}',
        node=name,
    )


def _edge_pairs(edges: Iterable[Any]) -> list[tuple[str, str]]:
    """``(parent, child)`` name pairs, refusing anything that is not a pair of names."""
    if isinstance(edges, str | bytes):
        raise TaxonomyError(f"edges must be (parent, child) pairs, got the string {edges!r}")
    out = []
    for k, e in enumerate(edges):
        if isinstance(e, str | bytes) or not hasattr(e, "__len__") or len(e) != 2:
            raise TaxonomyError(f"edge {k + 1} must be a (parent, child) pair, got {e!r}")
        p, c = e
        out.append((_node_name(p, f"edge {k + 1}"), _node_name(c, f"edge {k + 1}")))
    return out


def _show_cycle(cyc: list[str], limit: int = 12) -> str:
    """``a -> b -> ... -> a``, shortened in the middle for long cycles."""
    if len(cyc) <= limit:
        return " -> ".join(cyc)
    head = " -> ".join(cyc[: limit // 2])
    tail = " -> ".join(cyc[-(limit // 2) :])
    return f"{head} -> ... ({len(cyc) - limit} more) ... -> {tail}"


def _find_cycle(candidates: list[str], children_of: dict[str, list[str]]) -> list[str]:
    """Return one cycle (as a closed list of names) among ``candidates``, iteratively."""
    cand = set(candidates)
    color: dict[str, int] = {}
    for start in candidates:
        if color.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        on_path: list[str] = []
        while stack:
            node, k = stack.pop()
            if k == 0:
                color[node] = 1
                on_path.append(node)
            kids = [c for c in children_of.get(node, []) if c in cand]
            if k < len(kids):
                stack.append((node, k + 1))
                c = kids[k]
                if color.get(c) == 1:
                    j = on_path.index(c)
                    return [*on_path[j:], c]
                if not color.get(c):
                    stack.append((c, 0))
            else:
                color[node] = 2
                on_path.pop()
    return [candidates[0], candidates[0]]


def _node_order(edge_list: list[tuple[str, str]], declared: list[str] | None) -> list[str]:
    """Node names in first-seen order; refuses self loops, duplicate edges, undeclared nodes."""
    seen: set[tuple[str, str]] = set()
    order: dict[str, None] = {}
    for n in declared or ():
        if n in order:
            raise TaxonomyError(f"node {n!r} is listed twice", node=n)
        order[n] = None
    for p, c in edge_list:
        if p == c:
            raise TaxonomyError(f"self loop on node {p!r}: a node cannot be its own parent", p)
        if (p, c) in seen:
            raise TaxonomyError(f"duplicate edge {p!r} -> {c!r}", node=c)
        seen.add((p, c))
        if declared is None:
            order.setdefault(p, None)
            order.setdefault(c, None)
        elif p not in order:
            raise TaxonomyError(
                f"unknown parent {p!r} of node {c!r}: it is not among the declared nodes",
                node=p,
            )
        elif c not in order:
            raise TaxonomyError(
                f"unknown node {c!r} (child of {p!r}): it is not among the declared nodes",
                node=c,
            )
    return list(order)


def _add_root(
    root: str,
    all_names: list[str],
    roots: list[str],
    parents_of: dict[str, list[str]],
    children_of: dict[str, list[str]],
) -> tuple[list[str], list[str]]:
    """Put a synthetic ``root`` above the current roots (in place); new names and roots."""
    if root in parents_of:
        if len(roots) == 1 and roots[0] == root:
            return all_names, roots  # already the single root: nothing to add
        raise TaxonomyError(
            f"synthetic root {root!r} is already a node of the taxonomy; choose another name",
            node=root,
        )
    parents_of[root] = []
    children_of[root] = list(roots)
    for r in roots:
        parents_of[r].append(root)
    return [root, *all_names], [root]


def _check_one_root(
    all_names: list[str], roots: list[str], children_of: dict[str, list[str]]
) -> None:
    """Refuse a graph with no root (a cycle) or with several roots."""
    if not roots:
        cyc = _find_cycle(all_names, children_of)
        raise TaxonomyError(
            "cycle " + _show_cycle(cyc) + f": no root left (node {cyc[0]!r} is on the cycle)",
            node=cyc[0],
        )
    if len(roots) > 1:
        shown = ", ".join(repr(r) for r in roots[:10]) + (" ..." if len(roots) > 10 else "")
        raise TaxonomyError(
            f"several roots ({len(roots)}): {shown}. A taxonomy has one root: pass "
            "root='<name>' to add a synthetic root above them",
            node=roots[1],
        )


def _topological_order(
    all_names: list[str],
    roots: list[str],
    parents_of: dict[str, list[str]],
    children_of: dict[str, list[str]],
) -> list[str]:
    """Kahn's algorithm from the root: parents before children, siblings in input order."""
    indeg = {n: len(parents_of[n]) for n in all_names}
    queue = deque(roots)
    topo: list[str] = []
    while queue:
        n = queue.popleft()
        topo.append(n)
        for c in children_of[n]:
            indeg[c] -= 1
            if indeg[c] == 0:
                queue.append(c)
    if len(topo) < len(all_names):
        left = [n for n in all_names if indeg[n] > 0]
        cyc = _find_cycle(left, children_of)
        raise TaxonomyError(
            "cycle " + _show_cycle(cyc) + f" (node {cyc[0]!r} is its own ancestor)",
            node=cyc[0],
        )
    return topo


def _path_trie(split: list[list[str]]) -> tuple[list[int], list[str], str | None]:
    """A trie of component paths: node ``k`` is ``(parent[k], component[k])``, root parent -1.

    O(total length); no prefix strings are built (a 10^5-deep path stays linear). The third
    value is a component found under two different parents (None when every one is unique).
    """
    trie: dict[tuple[int, str], int] = {}
    t_parent: list[int] = []
    t_comp: list[str] = []
    first_parent_of: dict[str, int] = {}
    ambiguous: str | None = None
    for parts in split:
        cur = -1
        for comp in parts:
            found = trie.get((cur, comp))
            if found is None:
                found = trie[(cur, comp)] = len(t_parent)
                t_parent.append(cur)
                t_comp.append(comp)
                prev = first_parent_of.setdefault(comp, cur)
                if prev != cur and ambiguous is None:
                    ambiguous = comp
            cur = found
    return t_parent, t_comp, ambiguous


def _full_names(t_parent: list[int], t_comp: list[str], sep: str) -> list[str]:
    """Each trie node's whole path (``"01/02"``); refuses names of huge total length."""
    total = 0
    plen = [0] * len(t_parent)
    for k, (p, comp) in enumerate(zip(t_parent, t_comp)):
        plen[k] = (plen[p] + len(sep) if p >= 0 else 0) + len(comp)
        total += plen[k]
    if total > _MAX_FULL_NAME_CHARS:
        raise TaxonomyError(
            f"full path names would need {total:,} characters (paths too deep for "
            "names='full'); give the nodes unique names or use an edge list"
        )
    label = [""] * len(t_parent)
    for k, (p, comp) in enumerate(zip(t_parent, t_comp)):
        label[k] = label[p] + sep + comp if p >= 0 else comp
    return label
