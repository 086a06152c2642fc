"""Label strings to node names, shared by the data readers (CSV, text, svmlight, ARFF).

A raw label is a node name or an ``a/b/c`` path. With no taxonomy given, ``a/b/c`` paths build
one (:meth:`~hierlab.core.taxonomy.Taxonomy.from_paths`, a synthetic ``root`` above several
top-level components) and plain names a flat one (:meth:`~hierlab.core.taxonomy.Taxonomy.flat`).

With a taxonomy given, a label is a node name, or a path whose every step is an edge of the
taxonomy (``a/a1`` when ``a1`` is a child of ``a``; the path may start below the root). A path
that contradicts the taxonomy (``b/a1`` when ``a1`` is a child of ``a``) is refused, naming the
row: it is never mapped by its last part. Text such as ``NA``, ``null``, ``nan`` or ``?`` is an
ordinary label (only an empty cell has no label).
"""

from __future__ import annotations

import itertools
from os import PathLike
from typing import Any, Protocol

import numpy as np

from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import PathArg
from hierlab.io.taxonomy_files import read_taxonomy

__all__ = ["LineNumbers", "resolve_labels", "taxonomy_arg"]


class LineNumbers(Protocol):
    """File line number of every row: a list, an array or a lazily computed table."""

    def __getitem__(self, i: int, /) -> Any: ...


def taxonomy_arg(taxonomy: Taxonomy | PathArg | None) -> Taxonomy | None:
    """A reader's ``taxonomy`` argument: a Taxonomy, read from a file path, or None.

    Raises
    ------
    DataError
        For anything else (an int, bytes: content is parsed by
        :func:`~hierlab.io.taxonomy_files.parse_taxonomy_text`).
    """
    if taxonomy is None or isinstance(taxonomy, Taxonomy):
        return taxonomy
    if not isinstance(taxonomy, str | PathLike):
        raise DataError(
            "taxonomy must be a hierlab.Taxonomy, the path of a taxonomy file, or None; got "
            f"{type(taxonomy).__name__} (parse content held in memory with "
            "hierlab.io.parse_taxonomy_text)"
        )
    return read_taxonomy(taxonomy)


def resolve_labels(
    raw: list[tuple[str, ...]],
    taxonomy: Taxonomy | None,
    multilabel: bool,
    path: str | None,
    lines: LineNumbers | None,
    column: str | None,
) -> tuple[np.ndarray, Taxonomy]:
    """Map raw label strings (node names or ``a/b/c`` paths) to node names; build a taxonomy.

    Parameters
    ----------
    raw : list of tuple of str
        The labels of every row.
    taxonomy : Taxonomy, optional
        The hierarchy; built from the labels when None (see the module docstring).
    multilabel : bool
        Return tuples of node names (else the first label of each row).
    path : str, optional
        The file, for error messages.
    lines : indexable of int, optional
        File line number of every row (None: the row number).
    column : str, optional
        The label column, for error messages.

    Returns
    -------
    y : ndarray of object of shape (n_rows,)
        Node names (tuples of node names when ``multilabel``).
    taxonomy : Taxonomy

    Raises
    ------
    DataError
        For a label that is not a node, or labels that do not form a taxonomy.
    """
    uniq = list(dict.fromkeys(lab for labs in raw for lab in labs))
    built = taxonomy is None
    if taxonomy is None:
        taxonomy = _taxonomy_of_labels(raw, uniq, path, lines, column)
    index = taxonomy.name_index
    mapping = {}
    for u in uniq:
        last = u.rsplit("/", 1)[-1].strip()
        if u in index:
            mapping[u] = u
        elif built and last in index:  # the tree was built from these very paths: no check
            mapping[u] = last
        else:
            mapping[u] = _node_of_label(u, raw, taxonomy, path, lines, column)
    y = np.empty(len(raw), dtype=object)
    if multilabel:
        y[:] = [tuple(dict.fromkeys(mapping[lab] for lab in labs)) for labs in raw]
    else:
        y[:] = [mapping[labs[0]] for labs in raw]
    return y, taxonomy


def _taxonomy_of_labels(
    raw: list[tuple[str, ...]],
    uniq: list[str],
    path: str | None,
    lines: LineNumbers | None,
    column: str | None,
) -> Taxonomy:
    """The taxonomy the labels spell: a tree of their ``a/b/c`` paths, else a flat one."""
    if not uniq:
        raise DataError("no label in the file", path=path, column=column)
    if any("/" in u for u in uniq):
        tops = {u.split("/", 1)[0] for u in uniq}
        try:
            return Taxonomy.from_paths(uniq, root="root" if len(tops) > 1 else None)
        except TaxonomyError as exc:
            bad = next((u for u in uniq if exc.node and exc.node in u.split("/")), None)
            line = _line_of_label(raw, bad, lines) if bad else None
            raise DataError(f"labels do not form a taxonomy: {exc}", path, line, column) from None
    root, k = "root", 0
    taken = set(uniq)
    while root in taken:
        k += 1
        root = "__root__" if k == 1 else f"__root{k}__"
    return Taxonomy.flat(uniq, root=root)


def _node_of_label(
    label: str,
    raw: list[tuple[str, ...]],
    taxonomy: Taxonomy,
    path: str | None,
    lines: LineNumbers | None,
    column: str | None,
) -> str:
    """The node a raw label names: itself, or the last step of an ``a/b/c`` path of edges.

    A path is accepted only when each of its steps ``(parent, child)`` is an edge of
    ``taxonomy``; else it contradicts the taxonomy and is refused with its row.
    """
    if label in taxonomy:
        return label
    parts = [p.strip() for p in label.split("/")]
    last = parts[-1]
    if len(parts) > 1 and last in taxonomy:
        bad = _first_non_edge(parts, taxonomy)
        if bad is None:
            return last
        p, c = bad
        if c in taxonomy and p in taxonomy:
            parents = ", ".join(repr(str(taxonomy.names[j])) for j in taxonomy.parents(c))
            why = f"{c!r} is a child of {parents or 'nothing (the root)'}, not of {p!r}"
        else:
            why = f"{p if p not in taxonomy else c!r} is not a node of the taxonomy"
        raise DataError(
            f"label {label!r} contradicts the taxonomy: {why}",
            path,
            _line_of_label(raw, label, lines),
            column,
        )
    line = _line_of_label(raw, label, lines)
    shown = ", ".join(map(str, taxonomy.names[:4]))
    raise DataError(
        f"label {label!r} is not a node of the taxonomy ({taxonomy.n_nodes} nodes, e.g. {shown})",
        path,
        line,
        column,
    )


def _first_non_edge(parts: list[str], taxonomy: Taxonomy) -> tuple[str, str] | None:
    """The first step ``(parent, child)`` of a path that is not an edge of ``taxonomy``."""
    for p, c in itertools.pairwise(parts):
        if p not in taxonomy or c not in taxonomy:
            return p, c
        if taxonomy.node_id(p) not in taxonomy.parents(c):
            return p, c
    return None


def _line_of_label(
    raw: list[tuple[str, ...]], label: str | None, lines: LineNumbers | None
) -> int | None:
    """The file line of the first row holding ``label`` (None when no row does)."""
    if label is None:
        return None
    for i, labs in enumerate(raw):
        if label in labs:
            return int(lines[i]) if lines is not None else i + 1
    return None
