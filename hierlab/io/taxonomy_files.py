"""Taxonomy files: read, write and parse (:func:`read_taxonomy`, :func:`write_taxonomy`).

Formats (:data:`TAXONOMY_FORMATS`):

- ``edges``: one ``parent child`` pair per line, separated by white space; ``#`` starts a comment;
  a line holding a single name declares a node (a taxonomy of one node).
- ``csv``: two columns ``parent,child`` with an optional header row; a row with an empty parent
  declares a node.
- ``paths``: one ``a/b/c`` path per line (prefixes are implied); ``#`` comments. A first line
  ``# hierlab: names=full root=R`` says the names are full paths below a root ``R``.
- ``json``: see :meth:`hierlab.core.taxonomy.Taxonomy.from_json`.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import PathArg, clean_text, decode_bytes, extension, read_bytes

__all__ = [
    "TAXONOMY_FORMATS",
    "guess_taxonomy_format",
    "parse_taxonomy_text",
    "read_taxonomy",
    "taxonomy_to_text",
    "write_taxonomy",
]

TAXONOMY_FORMATS = ("edges", "csv", "paths", "json")

_FULL_NAMES_DIRECTIVE = "# hierlab: names=full"
_MAX_NESTED_JSON_DEPTH = 200
_CSV_HEADERS = (("parent", "child"), ("source", "target"), ("from", "to"), ("parent", "node"))


# ============================================================================ guessing
def _content_lines(text: str) -> list[tuple[int, str]]:
    """Non-blank lines with ``#`` comments removed, as ``(1-based line number, content)``."""
    out = []
    for k, raw in enumerate(text.split("\n"), start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            out.append((k, line))
    return out


def guess_taxonomy_format(text: str, filename: str | None = None) -> str:
    """Guess a taxonomy file's format from its extension, then from its content.

    Parameters
    ----------
    text : str
        The decoded content.
    filename : str, optional
        ``.json`` -> json, ``.csv``/``.tsv`` -> csv, ``.paths`` -> paths; any other extension
        (``.txt``, ``.edges``) is decided by the content.

    Returns
    -------
    {"edges", "csv", "paths", "json"}
    """
    ext = extension(filename)
    if ext == ".json":
        return "json"
    if ext in (".csv", ".tsv"):
        return "csv"
    if ext in (".paths", ".path"):
        return "paths"
    stripped = text.lstrip("\ufeff \t\n")
    if stripped.startswith(("{", "[")):
        return "json"
    if text.lstrip().startswith(_FULL_NAMES_DIRECTIVE):
        return "paths"
    lines = [ln for _, ln in _content_lines(text)]
    if not lines:
        return "edges"
    if all(len(ln.split()) == 1 and "," not in ln for ln in lines) and any(
        "/" in ln for ln in lines
    ):
        return "paths"
    if "," in lines[0] and len(next(csv.reader([lines[0]]))) == 2:
        return "csv"
    return "edges"


# ============================================================================ parsing
def _tax_error(
    message: str, path: str | None, line: int | None = None, node: str | None = None
) -> TaxonomyError:
    """A TaxonomyError whose message starts with ``path, line N: `` (the parts known).

    The prefix is the one :class:`DataError` writes, so both errors name places alike.
    """
    return TaxonomyError(str(DataError(message, path, line)), node=node)


class _EdgeList:
    """Edges and nodes of an edge-list file, checked as they are read (edges and csv formats)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.edges: list[tuple[str, str]] = []
        self.nodes: dict[str, None] = {}
        self.lines_of: dict[tuple[str, str], int] = {}

    def add_node(self, name: str) -> None:
        """Declare a node (a line or row naming one node only)."""
        self.nodes.setdefault(name, None)

    def add_edge(self, p: str, c: str, line: int) -> None:
        """Add ``p -> c`` read on ``line``; refuse a self loop or a repeated edge."""
        if p == c:
            raise _tax_error(
                f"self loop on node {p!r}: a node cannot be its own parent", self.path, line, p
            )
        if (p, c) in self.lines_of:
            first = self.lines_of[(p, c)]
            raise _tax_error(
                f"duplicate edge {p!r} -> {c!r} (first on line {first})", self.path, line, c
            )
        self.lines_of[(p, c)] = line
        self.edges.append((p, c))
        self.nodes.setdefault(p, None)
        self.nodes.setdefault(c, None)

    def build(self, root: str | None) -> Taxonomy:
        """The taxonomy; an error points at the first line involving the offending node."""
        if not self.nodes:
            raise _tax_error("empty taxonomy: no node and no edge", self.path)
        try:
            return Taxonomy(self.edges, nodes=list(self.nodes), root=root)
        except TaxonomyError as exc:
            line = None
            if exc.node is not None:
                hits = [ln for (p, c), ln in self.lines_of.items() if exc.node in (p, c)]
                line = min(hits) if hits else None
            raise _tax_error(str(exc), self.path, line, exc.node) from None


def _parse_edges(text: str, path: str | None, root: str | None) -> Taxonomy:
    """The ``edges`` format: ``parent child`` lines, a single name declaring a node."""
    found = _EdgeList(path)
    for k, line in _content_lines(text):
        parts = line.split()
        if len(parts) == 1:
            found.add_node(parts[0])
            continue
        if len(parts) != 2:
            raise _tax_error(
                f"expected 'parent child' (two names separated by white space), got "
                f"{len(parts)} fields: {line[:80]!r}",
                path,
                k,
            )
        found.add_edge(parts[0], parts[1], k)
    return found.build(root)


def _parse_csv_edges(text: str, path: str | None, root: str | None) -> Taxonomy:
    """The ``csv`` format: ``parent,child`` rows (tab-separated when the first line says so)."""
    first_line = text.split("\n", 1)[0]
    delim = "\t" if "\t" in first_line and "," not in first_line else ","
    reader = csv.reader(io.StringIO(text), delimiter=delim)
    found = _EdgeList(path)
    first = True
    for row in reader:
        k = reader.line_num
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if first:
            first = False
            if len(cells) >= 2 and (cells[0].lower(), cells[1].lower()) in _CSV_HEADERS:
                continue
        while len(cells) > 2 and cells[-1] == "":
            cells.pop()
        if len(cells) != 2:
            raise _tax_error(
                f"expected two columns (parent, child), got {len(cells)}: {','.join(row)[:80]!r}",
                path,
                k,
            )
        p, c = cells
        if c == "":
            raise _tax_error("empty child (column 2)", path, k)
        if p == "":
            found.add_node(c)
        else:
            found.add_edge(p, c, k)
    return found.build(root)


def _parse_paths(text: str, path: str | None, root: str | None) -> Taxonomy:
    """The ``paths`` format: ``a/b/c`` lines (full names after the ``names=full`` line)."""
    full = text.lstrip().startswith(_FULL_NAMES_DIRECTIVE)
    directive_root = None
    if full:
        m = re.search(r"root=(\S+)", text.split("\n", 1)[0])
        directive_root = m.group(1) if m else "root"
    entries = _content_lines(text)
    for k, line in entries:
        if len(line.split()) != 1:
            raise _tax_error(f"a path must not contain white space: {line[:80]!r}", path, k)
        if any(p.strip() == "" for p in line.split("/")):
            raise _tax_error(f"path {line!r} has an empty component", path, k)
    paths = [ln for _, ln in entries]
    if not paths:
        raise _tax_error("empty taxonomy: no path", path)
    try:
        if full:
            return Taxonomy.from_paths(paths, names="full", root=root or directive_root)
        tops = {p.split("/", 1)[0] for p in paths}
        return Taxonomy.from_paths(paths, root=root if (root or len(tops) == 1) else None)
    except TaxonomyError as exc:
        where: int | None = None
        if exc.node is not None:
            hits = [k for k, ln in entries if exc.node in ln.split("/") or ln == exc.node]
            where = hits[0] if hits else None
        raise _tax_error(str(exc), path, where, exc.node) from None


def _parse_json(text: str, path: str | None, root: str | None) -> Taxonomy:
    """The ``json`` format (:meth:`Taxonomy.from_json`); ``root`` only for the edge form."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _tax_error(
            f"not valid JSON: {exc.msg} (column {exc.colno})", path, exc.lineno
        ) from None
    except RecursionError:
        raise _tax_error(
            "JSON nested too deeply for the parser: write a deep taxonomy as an edge list "
            '({"nodes": [...], "edges": [[parent, child], ...]}) instead of nested children',
            path,
        ) from None
    except ValueError as exc:  # an integer literal beyond Python's digit limit
        raise _tax_error(f"not valid JSON: {exc}", path) from None
    if root is not None and isinstance(data, dict) and "edges" in data:
        data = {**data, "root": root}
    try:
        return Taxonomy.from_json(data)
    except TaxonomyError as exc:
        raise _tax_error(str(exc), path, None, exc.node) from None


_PARSERS = {
    "edges": _parse_edges,
    "edge": _parse_edges,
    "edgelist": _parse_edges,
    "txt": _parse_edges,
    "csv": _parse_csv_edges,
    "tsv": _parse_csv_edges,
    "paths": _parse_paths,
    "json": _parse_json,
}


def parse_taxonomy_text(
    text: str | bytes,
    format: str | None = None,
    filename: str | None = None,
    root: str | None = None,
) -> Taxonomy:
    """Parse taxonomy content held in memory (an upload, a string).

    Parameters
    ----------
    text : str or bytes
        The content; bytes are decoded by :func:`~hierlab.io.decoding.decode_bytes`.
    format : {"edges", "csv", "paths", "json"}, optional
        Skip the guess (:func:`guess_taxonomy_format`).
    filename : str, optional
        Used to guess the format and in error messages.
    root : str, optional
        Name of a synthetic root to add above several top-level nodes.

    Returns
    -------
    Taxonomy

    Raises
    ------
    TaxonomyError
        Naming the file, the line and the offending node.
    """
    try:
        if isinstance(text, bytes | bytearray):
            text = decode_bytes(bytes(text), filename)
        else:
            text = clean_text(text, filename)
    except DataError as exc:
        raise TaxonomyError(str(exc)) from None
    if format is not None and not isinstance(format, str):
        raise TaxonomyError(f"format must be a str, got {type(format).__name__}")
    fmt = (format or guess_taxonomy_format(text, filename)).lower()
    parser = _PARSERS.get(fmt)
    if parser is None:
        raise _unknown_format(format)
    return parser(text, filename, root)


def _unknown_format(format: Any) -> TaxonomyError:
    """The error for a taxonomy format that is not one of :data:`TAXONOMY_FORMATS`."""
    return TaxonomyError(
        f"unknown taxonomy format {format!r}; expected one of {', '.join(TAXONOMY_FORMATS)}"
    )


def read_taxonomy(path: PathArg, format: str | None = None, root: str | None = None) -> Taxonomy:
    """Read a taxonomy file, guessing the format from its extension and content.

    Parameters
    ----------
    path : path-like
        An edge list (``parent child`` lines), a CSV with two columns, ``a/b/c`` paths (one per
        line) or JSON. See the module docstring and ``datasets/README.md``.
    format, root
        As in :func:`parse_taxonomy_text`.

    Returns
    -------
    Taxonomy
        The hierarchy the file declares.

    Raises
    ------
    TaxonomyError
        Naming the file, the line and the node (cycle, self loop, several roots, duplicate edge,
        malformed line, empty file, or a file that cannot be read).
    """
    try:
        data = read_bytes(path)
    except DataError as exc:
        raise TaxonomyError(str(exc)) from None
    return parse_taxonomy_text(data, format=format, filename=str(path), root=root)


# ============================================================================ writing
def taxonomy_to_text(tax: Taxonomy, format: str = "edges") -> str:
    """Serialise ``tax`` in ``format`` (see :func:`write_taxonomy`).

    Parameters
    ----------
    tax : Taxonomy
    format : {"edges", "csv", "tsv", "paths", "json"}, default "edges"

    Returns
    -------
    str
        The file content, ending with a newline.

    Raises
    ------
    TaxonomyError
        For an unknown format, node names the format cannot hold (white space or ``#`` in
        ``edges`` and ``paths``), or ``paths`` of a DAG.
    """
    fmt = format.lower()
    names = [str(n) for n in tax.names]
    if fmt == "edges":
        _refuse_unwritable(names, allow_empty=False)
        lines = ["# parent child"]
        if tax.n_nodes == 1:
            lines.append(names[0])
        lines += [f"{p} {c}" for p, c in tax.to_edges()]
        return "\n".join(lines) + "\n"
    if fmt in ("csv", "tsv"):
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        w.writerow(["parent", "child"])
        if tax.n_nodes == 1:
            w.writerow(["", names[0]])
        w.writerows(tax.to_edges())
        return buf.getvalue()
    if fmt == "paths":
        _refuse_unwritable(names, allow_empty=True)
        return _paths_text(tax, names)
    if fmt == "json":
        if tax.max_depth > _MAX_NESTED_JSON_DEPTH:
            # nested children this deep overflow JSON parsers: the edge form reads back the same
            doc = {"nodes": names, "edges": [list(e) for e in tax.to_edges()]}
            return json.dumps(doc) + "\n"
        return json.dumps(tax.to_json(), indent=1) + "\n"
    raise _unknown_format(format)


def _refuse_unwritable(names: list[str], allow_empty: bool) -> None:
    """Refuse node names holding white space or ``#`` (and, unless allowed, empty ones)."""
    bad = [
        n for n in names if (not n and not allow_empty) or any(ch.isspace() for ch in n) or "#" in n
    ]
    if bad:
        raise TaxonomyError(
            f"node name {bad[0]!r} contains white space or '#': write csv or json instead",
            node=bad[0],
        )


def _paths_text(tax: Taxonomy, names: list[str]) -> str:
    """The ``paths`` format: full names under the directive for Clus-style trees, else paths."""
    if tax.is_tree and tax.n_nodes > 1 and _full_style(tax):
        # Clus-style names ("01", "01/02") under a synthetic root: write the names.
        return (
            f"{_FULL_NAMES_DIRECTIVE} root={names[0]}\n"
            + "\n".join(names[i] for i in range(1, tax.n_nodes))
            + "\n"
        )
    return "\n".join(tax.to_paths()) + "\n"


def _full_style(tax: Taxonomy) -> bool:
    """Whether every non-root name is its parent's name plus ``/component`` (Clus style)."""
    names = [str(n) for n in tax.names]
    if "/" in names[0]:
        return False
    for i in range(1, tax.n_nodes):
        p = int(tax.parent[i])
        if tax.depth[i] == 1:
            if "/" in names[i]:
                return False
        elif not (names[i].startswith(names[p] + "/") and "/" not in names[i][len(names[p]) + 1 :]):
            return False
    return any(tax.depth[i] > 1 for i in range(tax.n_nodes))


def write_taxonomy(tax: Taxonomy, path: PathArg, format: str | None = None) -> None:
    """Write ``tax`` to ``path``.

    Parameters
    ----------
    tax : Taxonomy
    path : path-like
    format : {"edges", "csv", "paths", "json"}, optional
        Default from the extension (``.json``, ``.csv``, ``.tsv``, ``.paths``), else ``edges``.
        ``paths`` needs a tree. Node names with white space need ``csv`` or ``json``.
    """
    if format is None:
        ext = extension(str(path))
        format = {".json": "json", ".csv": "csv", ".tsv": "tsv", ".paths": "paths"}.get(
            ext, "edges"
        )
    text = taxonomy_to_text(tax, format)
    Path(path).write_text(text, encoding="utf-8")
