"""Readers and writers: taxonomy files and labelled data sets.

Taxonomy files (:func:`read_taxonomy`, :func:`write_taxonomy`, :func:`parse_taxonomy_text`):

- ``edges``: one ``parent child`` pair per line, separated by white space; ``#`` starts a comment;
  a line holding a single name declares a node (a taxonomy of one node).
- ``csv``: two columns ``parent,child`` with an optional header row; a row with an empty parent
  declares a node.
- ``paths``: one ``a/b/c`` path per line (prefixes are implied); ``#`` comments.
- ``json``: see :meth:`hierlab.core.taxonomy.Taxonomy.from_json`.

Data sets (:func:`load_dataset`, :func:`read_dataset_bytes`), each returned as a
:class:`~hierlab.core.dataset.HierDataset`:

- ``csv``: a label column (node names or ``a/b/c`` paths, ``;`` between several labels of a
  multi-label row), numeric feature columns, an optional id column.
- ``text``: a CSV with a raw text column, turned into sublinear TF-IDF by scikit-learn's
  ``TfidfVectorizer`` (fitted on the file, or a given fitted vectorizer for a test file).
- ``svmlight``: ``label idx:value ...`` lines; the label is a node name (or ``a/b/c`` path), a
  comma list for multi-label rows.
- ``arff``: the Clus HMC ARFF format (Vens et al. 2008): numeric attributes, ``?`` for a missing
  value, and a ``hierarchical`` class attribute declaring the hierarchy (tree: full paths such as
  ``01/01/03``; DAG: ``parent/child`` pairs), one ``@``-separated label set per row.

Missing values (``?``, an empty CSV cell) are imputed by the mean of their column over the file
being read; pass ``impute_means`` (``train.meta["impute_means"]``), or ``reference=train``, when
reading a test file so that it uses the training means. Text is decoded as UTF-8 (a BOM is
honoured), UTF-16 with a BOM, and latin-1 when the bytes are not valid UTF-8.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "DATASET_FORMATS",
    "TAXONOMY_FORMATS",
    "decode_bytes",
    "guess_dataset_format",
    "guess_taxonomy_format",
    "load_dataset",
    "parse_taxonomy_text",
    "read_arff",
    "read_csv_dataset",
    "read_dataset_bytes",
    "read_svmlight",
    "read_taxonomy",
    "read_text_csv",
    "write_csv_dataset",
    "write_svmlight",
    "write_taxonomy",
]

TAXONOMY_FORMATS = ("edges", "csv", "paths", "json")
DATASET_FORMATS = ("csv", "text", "svmlight", "arff")

_LABEL_COLUMNS = ("label", "labels", "class", "classes", "y", "target", "category", "categories")
_ID_COLUMNS = ("id", "ids", "doc_id", "sample_id", "name")
_TEXT_COLUMNS = ("text", "document", "doc", "body", "content", "message", "abstract")
_MISSING = ("?", "", "NA", "N/A", "NaN", "nan", "null", "NULL")
_FULL_NAMES_DIRECTIVE = "# hierlab: names=full"
_MAX_NESTED_JSON_DEPTH = 200

PathArg = str | PathLike[str]


# ============================================================================ text decoding
def decode_bytes(data: bytes, path: str | None = None) -> str:
    """Decode file content: UTF-8 (BOM honoured), UTF-16 with a BOM, else latin-1.

    Parameters
    ----------
    data : bytes
        The raw file content.
    path : str, optional
        Only used in error messages.

    Returns
    -------
    str
        The text, with ``\\r\\n`` and ``\\r`` line ends turned into ``\\n``.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        text = data[3:].decode("utf-8", errors="replace")
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DataError(f"invalid UTF-16 text: {exc}", path=path) from None
    elif b"\x00" in data[:_SNIFF_BYTES]:
        enc = _utf16_without_bom(data)
        if enc is None:
            offset = data.index(b"\x00")
            raise DataError(
                f"binary content (a NUL byte at offset {offset}): not a text "
                "file. Upload a CSV, svmlight, ARFF or taxonomy text file (UTF-8, latin-1, "
                "or UTF-16 with a BOM)",
                path=path,
            )
        try:
            text = data.decode(enc)
        except UnicodeDecodeError as exc:
            raise DataError(f"invalid {enc.upper()} text: {exc}", path=path) from None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    return _clean_text(text, path)


def _clean_text(text: str, path: str | None = None) -> str:
    """Refuse text holding a NUL (binary content); turn ``\r\n`` and ``\r`` into ``\n``."""
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise DataError("binary content (a NUL character): not a text file", path=path, line=line)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


_SNIFF_BYTES = 1 << 16


def _utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` when ``data`` looks like BOM-less UTF-16 text.

    Text in the Latin range encoded as UTF-16 has a NUL in every other byte: the high byte of
    each code unit. Anything else with NUL bytes is binary (None).
    """
    head = data[:_SNIFF_BYTES]
    if len(head) < 2:
        return None
    head = head[: len(head) // 2 * 2]
    even, odd = head[0::2], head[1::2]
    n = len(even)
    for enc, hi, lo in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if hi.count(0) >= 0.9 * n and lo.count(0) == 0:
            return enc
    return None


def _read_bytes(path: PathArg) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a file", path=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path=str(path)) from None


def _ext(filename: str | None) -> str:
    if not filename:
        return ""
    name = str(filename).lower()
    for comp in (".gz", ".bz2", ".xz"):
        if name.endswith(comp):
            name = name[: -len(comp)]
    return os.path.splitext(name)[1]


# ============================================================================ taxonomy files
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
    ext = _ext(filename)
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


def _tax_error(message: str, path: str | None, line: int | None = None, node: str | None = None):
    where = []
    if path is not None:
        where.append(str(path))
    if line is not None:
        where.append(f"line {line}")
    prefix = f"{', '.join(where)}: " if where else ""
    return TaxonomyError(prefix + message, node=node)


def _parse_edges(text: str, path: str | None, root: str | None) -> Taxonomy:
    edges: list[tuple[str, str]] = []
    nodes: dict[str, None] = {}
    lines_of: dict[tuple[str, str], int] = {}
    for k, line in _content_lines(text):
        parts = line.split()
        if len(parts) == 1:
            nodes.setdefault(parts[0], None)
            continue
        if len(parts) != 2:
            raise _tax_error(
                f"expected 'parent child' (two names separated by white space), got "
                f"{len(parts)} fields: {line[:80]!r}",
                path,
                k,
            )
        p, c = parts
        if p == c:
            raise _tax_error(
                f"self loop on node {p!r}: a node cannot be its own parent", path, k, p
            )
        if (p, c) in lines_of:
            raise _tax_error(
                f"duplicate edge {p!r} -> {c!r} (first on line {lines_of[(p, c)]})", path, k, c
            )
        lines_of[(p, c)] = k
        edges.append((p, c))
        nodes.setdefault(p, None)
        nodes.setdefault(c, None)
    return _build_from_edges(edges, list(nodes), root, path, lines_of)


def _build_from_edges(
    edges: list[tuple[str, str]],
    nodes: list[str],
    root: str | None,
    path: str | None,
    lines_of: dict[tuple[str, str], int],
) -> Taxonomy:
    if not nodes:
        raise _tax_error("empty taxonomy: no node and no edge", path)
    try:
        return Taxonomy(edges, nodes=nodes, root=root)
    except TaxonomyError as exc:
        # Point at the line of the first edge that involves the offending node.
        line = None
        if exc.node is not None:
            hits = [ln for (p, c), ln in lines_of.items() if exc.node in (p, c)]
            line = min(hits) if hits else None
        raise _tax_error(str(exc), path, line, exc.node) from None


def _parse_csv_edges(text: str, path: str | None, root: str | None) -> Taxonomy:
    delim = "\t" if "\t" in text.split("\n", 1)[0] and "," not in text.split("\n", 1)[0] else ","
    reader = csv.reader(io.StringIO(text), delimiter=delim)
    edges: list[tuple[str, str]] = []
    nodes: dict[str, None] = {}
    lines_of: dict[tuple[str, str], int] = {}
    first = True
    for row in reader:
        k = reader.line_num
        cells = [c.strip() for c in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        if first:
            first = False
            low = [c.lower() for c in cells]
            if len(low) >= 2 and (low[0], low[1]) in (
                ("parent", "child"),
                ("source", "target"),
                ("from", "to"),
                ("parent", "node"),
            ):
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
            nodes.setdefault(c, None)
            continue
        if p == c:
            raise _tax_error(
                f"self loop on node {p!r}: a node cannot be its own parent", path, k, p
            )
        if (p, c) in lines_of:
            raise _tax_error(
                f"duplicate edge {p!r} -> {c!r} (first on line {lines_of[(p, c)]})", path, k, c
            )
        lines_of[(p, c)] = k
        edges.append((p, c))
        nodes.setdefault(p, None)
        nodes.setdefault(c, None)
    return _build_from_edges(edges, list(nodes), root, path, lines_of)


def _parse_paths(text: str, path: str | None, root: str | None) -> Taxonomy:
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
        The content; bytes are decoded by :func:`decode_bytes`.
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
    if isinstance(text, bytes | bytearray):
        try:
            text = decode_bytes(bytes(text), filename)
        except DataError as exc:
            raise TaxonomyError(str(exc)) from None
    else:
        try:
            text = _clean_text(text, filename)
        except DataError as exc:
            raise TaxonomyError(str(exc)) from None
    fmt = (format or guess_taxonomy_format(text, filename)).lower()
    if fmt in ("edge", "edgelist", "txt"):
        fmt = "edges"
    if fmt == "edges":
        return _parse_edges(text, filename, root)
    if fmt in ("csv", "tsv"):
        return _parse_csv_edges(text, filename, root)
    if fmt == "paths":
        return _parse_paths(text, filename, root)
    if fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _tax_error(
                f"not valid JSON: {exc.msg} (column {exc.colno})", filename, exc.lineno
            ) from None
        except RecursionError:
            raise _tax_error(
                "JSON nested too deeply for the parser: write a deep taxonomy as an edge list "
                '({"nodes": [...], "edges": [[parent, child], ...]}) instead of nested children',
                filename,
            ) from None
        except ValueError as exc:  # an integer literal beyond Python's digit limit
            raise _tax_error(f"not valid JSON: {exc}", filename) from None
        if root is not None and isinstance(data, dict) and "edges" in data:
            data = {**data, "root": root}
        try:
            return Taxonomy.from_json(data)
        except TaxonomyError as exc:
            raise _tax_error(str(exc), filename, None, exc.node) from None
    raise TaxonomyError(
        f"unknown taxonomy format {format!r}; expected one of {', '.join(TAXONOMY_FORMATS)}"
    )


def read_taxonomy(path: PathArg, format: str | None = None, root: str | None = None) -> Taxonomy:
    """Read a taxonomy file, guessing the format from its extension and content.

    Parameters
    ----------
    path : path-like
        An edge list (``parent child`` lines), a CSV with two columns, ``a/b/c`` paths (one per
        line) or JSON. See the module docstring and ``datasets/README.md``.
    format : {"edges", "csv", "paths", "json"}, optional
        Skip the guess.
    root : str, optional
        Name of a synthetic root to add above several top-level nodes.

    Returns
    -------
    Taxonomy

    Raises
    ------
    TaxonomyError
        Naming the file, the line and the node (cycle, self loop, several roots, duplicate edge,
        malformed line, empty file).
    """
    try:
        data = _read_bytes(path)
    except DataError as exc:
        raise TaxonomyError(str(exc)) from None
    return parse_taxonomy_text(data, format=format, filename=str(path), root=root)


def taxonomy_to_text(tax: Taxonomy, format: str = "edges") -> str:
    """Serialise ``tax`` in ``format`` (see :func:`write_taxonomy`)."""
    fmt = format.lower()
    names = [str(n) for n in tax.names]
    if fmt == "edges":
        bad = [n for n in names if not n or any(ch.isspace() for ch in n) or "#" in n]
        if bad:
            raise TaxonomyError(
                f"node name {bad[0]!r} contains white space or '#': write csv or json instead",
                node=bad[0],
            )
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
        bad = [n for n in names if any(ch.isspace() for ch in n) or "#" in n]
        if bad:
            raise TaxonomyError(
                f"node name {bad[0]!r} contains white space or '#': write csv or json instead",
                node=bad[0],
            )
        if tax.is_tree and tax.n_nodes > 1 and _full_style(tax):
            # Clus-style names ("01", "01/02") under a synthetic root: write the names.
            return (
                f"{_FULL_NAMES_DIRECTIVE} root={names[0]}\n"
                + "\n".join(names[i] for i in range(1, tax.n_nodes))
                + "\n"
            )
        return "\n".join(tax.to_paths()) + "\n"
    if fmt == "json":
        if tax.max_depth > _MAX_NESTED_JSON_DEPTH:
            # nested children this deep overflow JSON parsers: the edge form reads back the same
            doc = {"nodes": [str(n) for n in tax.names], "edges": [list(e) for e in tax.to_edges()]}
            return json.dumps(doc) + "\n"
        return json.dumps(tax.to_json(), indent=1) + "\n"
    raise TaxonomyError(
        f"unknown taxonomy format {format!r}; expected one of {', '.join(TAXONOMY_FORMATS)}"
    )


def _full_style(tax: Taxonomy) -> bool:
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
        ext = _ext(str(path))
        format = {".json": "json", ".csv": "csv", ".tsv": "tsv", ".paths": "paths"}.get(
            ext, "edges"
        )
    text = taxonomy_to_text(tax, format)
    Path(path).write_text(text, encoding="utf-8")


# ============================================================================ labels
def _split_multi(raw: str, sep: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in raw.split(sep) if p.strip())


def _resolve_labels(
    raw: list[tuple[str, ...]],
    taxonomy: Taxonomy | None,
    multilabel: bool,
    path: str | None,
    lines: Sequence[int] | np.ndarray | _LazyLines | None,
    column: str | None,
) -> tuple[np.ndarray, Taxonomy]:
    """Map raw label strings (node names or ``a/b/c`` paths) to node names; build a taxonomy.

    With no taxonomy: ``a/b/c`` paths build one (:meth:`Taxonomy.from_paths`, a synthetic
    ``root`` when there are several top-level components); plain names give
    :meth:`Taxonomy.flat`.
    """
    uniq = list(dict.fromkeys(lab for labs in raw for lab in labs))
    if taxonomy is None:
        if not uniq:
            raise DataError("no label in the file", path=path, column=column)
        if any("/" in u for u in uniq):
            tops = {u.split("/", 1)[0] for u in uniq}
            try:
                taxonomy = Taxonomy.from_paths(uniq, root="root" if len(tops) > 1 else None)
            except TaxonomyError as exc:
                bad = next((u for u in uniq if exc.node and exc.node in u.split("/")), None)
                line = _line_of_label(raw, bad, lines) if bad else None
                raise DataError(
                    f"labels do not form a taxonomy: {exc}", path, line, column
                ) from None
        else:
            root, k = "root", 0
            taken = set(uniq)
            while root in taken:
                k += 1
                root = "__root__" if k == 1 else f"__root{k}__"
            taxonomy = Taxonomy.flat(uniq, root=root)
    mapping: dict[str, str] = {}
    for u in uniq:
        if u in taxonomy:
            mapping[u] = u
            continue
        last = u.rsplit("/", 1)[-1].strip()
        if "/" in u and last in taxonomy:
            mapping[u] = last
            continue
        line = _line_of_label(raw, u, lines)
        shown = ", ".join(map(str, taxonomy.names[:4]))
        raise DataError(
            f"label {u!r} is not a node of the taxonomy ({taxonomy.n_nodes} nodes, e.g. {shown})",
            path,
            line,
            column,
        )
    y = np.empty(len(raw), dtype=object)
    if multilabel:
        y[:] = [tuple(dict.fromkeys(mapping[lab] for lab in labs)) for labs in raw]
    else:
        y[:] = [mapping[labs[0]] for labs in raw]
    return y, taxonomy


def _line_of_label(
    raw: list[tuple[str, ...]],
    label: str | None,
    lines: Sequence[int] | np.ndarray | _LazyLines | None,
) -> int | None:
    if label is None:
        return None
    for i, labs in enumerate(raw):
        if label in labs:
            return int(lines[i]) if lines is not None else i + 1
    return None


def _taxonomy_arg(taxonomy: Taxonomy | PathArg | None) -> Taxonomy | None:
    if taxonomy is None or isinstance(taxonomy, Taxonomy):
        return taxonomy
    return read_taxonomy(taxonomy)


def _impute(X: Any, means: np.ndarray | None) -> tuple[Any, np.ndarray]:
    """Replace NaN by the column means (computed here when ``means`` is None; 0 for an all-NaN
    column). ``X`` dense, or CSR whose stored NaN are the missing cells (implicit zeros count
    as values)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        nan = np.isnan(X.data)
        cols = X.indices
        if means is None:
            n_nan = np.bincount(cols[nan], minlength=X.shape[1])
            sums = np.bincount(cols[~nan], weights=X.data[~nan], minlength=X.shape[1])
            counts = X.shape[0] - n_nan
            means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        means = np.asarray(means, dtype=np.float64)
        if means.shape != (X.shape[1],):
            raise DataError(f"impute_means has shape {means.shape}, expected ({X.shape[1]},)")
        X.data[nan] = means[cols[nan]]
        X.eliminate_zeros()
        return X, means
    if means is None:
        with np.errstate(invalid="ignore"):
            counts = np.sum(~np.isnan(X), axis=0)
            sums = np.nansum(X, axis=0)
            means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    means = np.asarray(means, dtype=np.float64)
    if means.shape != (X.shape[1],):
        raise DataError(f"impute_means has shape {means.shape}, expected ({X.shape[1]},)")
    nan = np.isnan(X)
    if nan.any():
        X = np.where(nan, means[None, :], X)
    return X, means


# ============================================================================ CSV
def _csv_row_lines(text: str, delimiter: str, n_rows: int) -> np.ndarray:
    """File line number (1-based) of every data row, as pandas counts rows (blank rows skipped)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    out = []
    header = True
    start = 1
    for row in reader:
        if not any(c.strip() for c in row):
            start = reader.line_num + 1
            continue
        if header:
            header = False
        else:
            out.append(start)
        start = reader.line_num + 1
        if len(out) >= n_rows:
            break
    return np.asarray(out + [0] * (n_rows - len(out)), dtype=np.int64)


class _LazyLines:
    """File line numbers of the CSV rows, computed on first use (only error messages need them)."""

    def __init__(self, text: str, delimiter: str, n_rows: int) -> None:
        self._args = (text, delimiter, n_rows)
        self._lines: np.ndarray | None = None

    def __getitem__(self, i: int) -> int:
        if self._lines is None:
            self._lines = _csv_row_lines(*self._args)
        return int(self._lines[i])

    def __len__(self) -> int:
        return self._args[2]


def _sniff_delimiter(text: str, filename: str | None) -> str:
    """The CSV delimiter from the header line: the extension's (``.tsv``: tab, else comma)
    when the header holds it; else a tab, then a semicolon, when only that one is present."""
    first = _header_text(text).split("\n", 1)[0]
    if _ext(filename) == ".tsv" and ("\t" in first or "," not in first):
        return "\t"
    if "," in first:
        return ","
    if "\t" in first:
        return "\t"
    if ";" in first:
        return ";"
    return ","


def _read_frame(
    text: str, path: str | None, delimiter: str, str_columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read the CSV; ``str_columns`` (stripped names) are kept as text, the others inferred
    (numbers where every cell is one) with the missing markers as NaN. ``None``: all text."""
    kw: dict[str, Any] = {"sep": delimiter, "skipinitialspace": True, "keep_default_na": False}
    if str_columns is None:
        kw["dtype"] = str
    else:
        kw["na_values"] = list(_MISSING)
        wanted = set(str_columns)
        kw["dtype"] = {c: str for c in _raw_header(text, delimiter) if c.strip() in wanted}
    try:
        df = pd.read_csv(io.StringIO(text), **kw)
    except pd.errors.EmptyDataError:
        raise DataError("empty file: no header and no row", path=path) from None
    except pd.errors.ParserError as exc:
        m = re.search(r"line (\d+)", str(exc))
        line = int(m.group(1)) if m else None
        raise DataError(f"malformed CSV: {exc}", path=path, line=line) from None
    df.columns = [str(c).strip() for c in df.columns]
    if df.shape[0] == 0:
        raise DataError("no data row after the header", path=path)
    dup = df.columns[df.columns.duplicated()].tolist()
    if dup:
        raise DataError("duplicate column name", path=path, line=1, column=dup[0])
    return df


def _header_text(text: str) -> str:
    """The first record of a CSV text (a quoted header cell may hold a newline)."""
    end = text.find("\n")
    while end != -1 and text[:end].count('"') % 2 == 1:
        end = text.find("\n", end + 1)
    return text if end == -1 else text[: end + 1]


def _raw_header(text: str, delimiter: str) -> list[str]:
    """Column names as pandas reads them (before stripping)."""
    try:
        return [
            str(c)
            for c in pd.read_csv(
                io.StringIO(_header_text(text)), sep=delimiter, nrows=0, skipinitialspace=True
            ).columns
        ]
    except (pd.errors.EmptyDataError, pd.errors.ParserError):
        return []


def _pick_column(
    df: pd.DataFrame, given: str | None, candidates: Sequence[str], what: str, path: str | None
) -> str | None:
    if given is not None:
        if given not in df.columns:
            raise DataError(
                f"no {what} column {given!r}; columns are {', '.join(df.columns[:10])}",
                path=path,
                line=1,
            )
        return given
    lower = {c.lower(): c for c in df.columns}
    for cand in candidates:
        if cand in lower:
            return lower[cand]
    return None


def _numeric_block(
    df: pd.DataFrame, cols: list[str], path: str | None, row_lines: _LazyLines
) -> np.ndarray:
    X = np.empty((df.shape[0], len(cols)), dtype=np.float64)
    for j, c in enumerate(cols):
        col = df[c]
        if col.dtype.kind in "fiub":
            X[:, j] = col.to_numpy(dtype=np.float64)
            continue
        s = col.astype(str).str.strip()
        missing = (col.isna() | s.isin(_MISSING)).to_numpy()
        num = pd.to_numeric(s.where(~missing, "nan"), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(num) & ~missing
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"value {s.iloc[i]!r} is not a number (feature columns must be numeric; "
                "use format='text' for a raw text column)",
                path=path,
                line=int(row_lines[i]),
                column=c,
            )
        X[:, j] = num
    return X


def _raw_label_column(
    df: pd.DataFrame, col: str, sep: str, path: str | None, row_lines: _LazyLines
) -> tuple[list[tuple[str, ...]], bool]:
    vals = df[col].fillna("").astype(str).str.strip().tolist()
    multi = any(sep in v for v in vals)
    raw = [_split_multi(v, sep) if multi else ((v,) if v else ()) for v in vals]
    for i, labs in enumerate(raw):
        if not labs:
            what = "empty label" if not multi else f"no label in the cell {vals[i]!r}"
            raise DataError(what, path=path, line=int(row_lines[i]), column=col)
    return raw, multi


def _first_nonfinite(X: np.ndarray, allow_nan: bool) -> tuple[int, int] | None:
    """(row, column) of the first infinite (or, unless ``allow_nan``, NaN) entry, or None."""
    bad = np.isinf(X) if allow_nan else ~np.isfinite(X)
    if not bad.any():
        return None
    i, j = np.argwhere(bad)[0]
    return int(i), int(j)


def _refuse_nonfinite(
    X: np.ndarray,
    allow_nan: bool,
    path: str | None,
    lines: Any,
    columns: Sequence[str],
) -> None:
    """Raise DataError naming the line and column of the first Inf (or NaN) value.

    ``1e400`` parses as infinity: the message says so. NaN stands for a missing value only
    where ``allow_nan`` (CSV, ARFF ``?``), and is imputed afterwards.
    """
    hit = _first_nonfinite(X, allow_nan)
    if hit is None:
        return
    i, j = hit
    raise DataError(
        f"value {float(X[i, j])!r} is not finite (beyond +-1.8e308, or inf/nan): features must be "
        "finite numbers"
        + ("; leave the cell empty or write '?' for a missing value" if allow_nan else ""),
        path=path,
        line=int(lines[i]) if lines is not None else None,
        column=str(columns[j]) if j < len(columns) else None,
    )


@dataclass
class _Table:
    df: pd.DataFrame
    text: str
    delimiter: str
    row_lines: _LazyLines
    label_col: str
    id_col: str | None
    others: list[str] = field(default_factory=list)


def _prepare_table(
    text: str,
    path: str | None,
    label_column: str | None,
    id_column: str | None,
    filename: str | None,
    text_mode: bool = False,
    text_column: str | None = None,
) -> _Table:
    delim = _sniff_delimiter(text, filename or path)
    names = [c.strip() for c in _raw_header(text, delim)]
    if not names:
        raise DataError("empty file: no header and no row", path=path)
    hdr = pd.DataFrame(columns=names)
    lab0 = _pick_column(hdr, label_column, _LABEL_COLUMNS, "label", path)
    id0 = _pick_column(hdr, id_column, _ID_COLUMNS, "id", path)
    txt0 = _pick_column(hdr, text_column, _TEXT_COLUMNS, "text", path) if text_mode else None
    keep = [c for c in (lab0, id0, txt0) if c is not None]
    first = next(csv.reader(io.StringIO(_header_text(text)), delimiter=delim), [])
    seen_cols: set[str] = set()
    for c in (c.strip() for c in first):
        if c in seen_cols:
            raise DataError("duplicate column name", path=path, line=1, column=c)
        seen_cols.add(c)
    df = _read_frame(text, path, delim, None if text_mode and txt0 is None else keep)
    row_lines = _LazyLines(text, delim, df.shape[0])
    lab = _pick_column(df, label_column, _LABEL_COLUMNS, "label", path)
    if lab is None:
        raise DataError(
            "no label column: name it one of "
            f"{', '.join(_LABEL_COLUMNS[:5])}, or pass label_column=...; columns are "
            f"{', '.join(df.columns[:10])}",
            path=path,
            line=1,
        )
    idc = _pick_column(df, id_column, _ID_COLUMNS, "id", path)
    if idc == lab:
        idc = None
    others = [c for c in df.columns if c not in (lab, idc)]
    return _Table(df, text, delim, row_lines, lab, idc, others)


def _looks_like_text(s: pd.Series) -> bool:
    v = s.astype(str).str.strip()
    non_num = pd.to_numeric(v.where(~v.isin(_MISSING), "0"), errors="coerce").isna()
    if not non_num.any():
        return False
    return bool(v.str.contains(r"\s", regex=True).mean() > 0.5 or v.str.len().mean() > 20)


def read_csv_dataset(
    path: PathArg | None = None,
    taxonomy: Taxonomy | PathArg | None = None,
    label_column: str | None = None,
    id_column: str | None = None,
    label_sep: str = ";",
    impute_means: np.ndarray | None = None,
    text: str | None = None,
    name: str | None = None,
) -> HierDataset:
    """Read a CSV with a label column and numeric feature columns.

    Parameters
    ----------
    path : path-like, optional
        The file (or pass ``text``).
    taxonomy : Taxonomy or path-like, optional
        When None: built from the labels when they are ``a/b/c`` paths, else flat.
    label_column : str, optional
        Default: the first column named ``label``, ``labels``, ``class``, ``y``, ``target`` or
        ``category`` (any case).
    id_column : str, optional
        Default: a column named ``id`` (kept in ``meta["ids"]``, not a feature).
    label_sep : str, default ";"
        Separator of several labels in one cell (multi-label rows).
    impute_means : ndarray of shape (n_features,), optional
        Means to impute missing cells (``?``, empty, ``NA``) with; default the file's column
        means. The means used are returned in ``meta["impute_means"]``.
    text : str, optional
        The content, instead of reading ``path``.
    name : str, optional
        The data set's name (default: the file stem).

    Returns
    -------
    HierDataset
        ``X`` dense float64 of shape (n_samples, n_features); ``y`` node names (tuples for
        multi-label rows).

    Raises
    ------
    DataError
        Naming the file, the line and the column of the offending cell.
    """
    spath = None if path is None else str(path)
    if text is None:
        if path is None:
            raise DataError("read_csv_dataset needs a path or text")
        text = decode_bytes(_read_bytes(path), spath)
    else:
        text = _clean_text(text, spath)
    tab = _prepare_table(text, spath, label_column, id_column, spath)
    X = _numeric_block(tab.df, tab.others, spath, tab.row_lines)
    _refuse_nonfinite(X, True, spath, tab.row_lines, tab.others)
    X, means = _impute(X, impute_means)
    raw, multi = _raw_label_column(tab.df, tab.label_col, label_sep, spath, tab.row_lines)
    y, tax = _resolve_labels(
        raw, _taxonomy_arg(taxonomy), multi, spath, tab.row_lines, tab.label_col
    )
    meta: dict[str, Any] = {"impute_means": means, "format": "csv"}
    if tab.id_col is not None:
        meta["ids"] = tab.df[tab.id_col].to_numpy(dtype=object)
    return HierDataset(
        X,
        y,
        tax,
        feature_names=list(tab.others),
        name=name or (Path(spath).stem if spath else "csv"),
        description=f"CSV file {spath}" if spath else "CSV data",
        meta=meta,
    )


def read_text_csv(
    path: PathArg | None = None,
    taxonomy: Taxonomy | PathArg | None = None,
    text_column: str | None = None,
    label_column: str | None = None,
    id_column: str | None = None,
    label_sep: str = ";",
    vectorizer: Any = None,
    vectorizer_params: dict[str, Any] | None = None,
    text: str | None = None,
    name: str | None = None,
) -> HierDataset:
    """Read a CSV with a raw text column; the text becomes sublinear TF-IDF (scikit-learn).

    Parameters
    ----------
    path : path-like, optional
        The file (or pass ``text``).
    taxonomy : Taxonomy or path-like, optional
        As in :func:`read_csv_dataset`.
    text_column : str, optional
        Default: a column named ``text``, ``document``, ``body``, ``content`` or ``message``,
        else the only column besides the label and id columns.
    label_column, id_column, label_sep
        As in :func:`read_csv_dataset`.
    vectorizer : TfidfVectorizer, optional
        A fitted vectorizer (``train.meta["vectorizer"]``) to transform a test file with.
        Default: a new ``TfidfVectorizer(sublinear_tf=True, **vectorizer_params)`` fitted here.
    vectorizer_params : dict, optional
        Extra ``TfidfVectorizer`` parameters (e.g. ``{"min_df": 2}``).
    text : str, optional
        The content, instead of reading ``path``.
    name : str, optional
        The data set's name.

    Returns
    -------
    HierDataset
        ``X`` CSR of shape (n_samples, vocabulary size) with int32 indices; the fitted vectorizer
        in ``meta["vectorizer"]``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    spath = None if path is None else str(path)
    if text is None:
        if path is None:
            raise DataError("read_text_csv needs a path or text")
        text = decode_bytes(_read_bytes(path), spath)
    else:
        text = _clean_text(text, spath)
    tab = _prepare_table(text, spath, label_column, id_column, spath, True, text_column)
    tcol = _pick_column(tab.df, text_column, _TEXT_COLUMNS, "text", spath)
    if tcol is None:
        if len(tab.others) != 1:
            raise DataError(
                "cannot tell which column holds the text: pass text_column=... (columns "
                f"{', '.join(tab.others[:10])})",
                path=spath,
                line=1,
            )
        tcol = tab.others[0]
    docs = tab.df[tcol].fillna("").astype(str).tolist()
    if vectorizer is None:
        vectorizer = TfidfVectorizer(sublinear_tf=True, **(vectorizer_params or {}))
        try:
            X = vectorizer.fit_transform(docs)
        except ValueError as exc:  # empty vocabulary
            raise DataError(f"cannot vectorise the text: {exc}", path=spath, column=tcol) from None
    else:
        X = vectorizer.transform(docs)
    X = _int32_csr(X)
    raw, multi = _raw_label_column(tab.df, tab.label_col, label_sep, spath, tab.row_lines)
    y, tax = _resolve_labels(
        raw, _taxonomy_arg(taxonomy), multi, spath, tab.row_lines, tab.label_col
    )
    meta: dict[str, Any] = {"vectorizer": vectorizer, "format": "text", "text_column": tcol}
    if tab.id_col is not None:
        meta["ids"] = tab.df[tab.id_col].to_numpy(dtype=object)
    return HierDataset(
        X,
        y,
        tax,
        feature_names=[str(f) for f in vectorizer.get_feature_names_out()],
        name=name or (Path(spath).stem if spath else "text"),
        description=f"text CSV {spath}, sublinear TF-IDF" if spath else "text CSV, TF-IDF",
        meta=meta,
    )


def _int32_csr(X: Any) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.nnz < np.iinfo(np.int32).max:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    return X


def write_csv_dataset(ds: HierDataset, path: PathArg, label_sep: str = ";") -> None:
    """Write ``ds`` (dense or sparse) as a CSV: feature columns, then a ``label`` column."""
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
    names = ds.feature_names or [f"x{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df["label"] = [label_sep.join(v) if isinstance(v, tuple) else v for v in ds.y]
    df.to_csv(path, index=False)


# ============================================================================ svmlight
_SVM_LINE = re.compile(r"^\s*\S+(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")


def read_svmlight(
    path: PathArg | None = None,
    taxonomy: Taxonomy | PathArg | None = None,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    data: bytes | None = None,
    name: str | None = None,
) -> HierDataset:
    """Read an svmlight / libsvm file whose labels are node names.

    Each line is ``label idx:value idx:value ... # comment``; the label is a node name or an
    ``a/b/c`` path, and a comma list (``a,b``) for a multi-label row (as svmlight's multi-label
    extension writes it). Features are parsed by :func:`sklearn.datasets.load_svmlight_file`.

    Parameters
    ----------
    path : path-like, optional
        The file (or pass ``data``).
    taxonomy : Taxonomy or path-like, optional
        As in :func:`read_csv_dataset`.
    n_features : int, optional
        Number of columns (a test file must have the training width).
    zero_based : bool or "auto"
        Whether indices start at 0 (see scikit-learn).
    data : bytes, optional
        The content, instead of reading ``path``.
    name : str, optional
        The data set's name.

    Returns
    -------
    HierDataset
        ``X`` CSR float64 with int32 indices (LinearSVC rejects int64 ones).
    """
    from sklearn.datasets import load_svmlight_file

    spath = None if path is None else str(path)
    if data is None:
        if path is None:
            raise DataError("read_svmlight needs a path or data")
        data = _read_bytes(path)
    text = decode_bytes(data, spath)
    raw: list[tuple[str, ...]] = []
    lines: list[int] = []
    body: list[str] = []
    for k, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if line[:1].isspace():
            raise DataError("a line must start with its label", path=spath, line=k, column="label")
        lab, _, rest = s.partition(" ")
        if "\t" in lab:
            lab, _, rest2 = lab.partition("\t")
            rest = rest2 + " " + rest
        labs = _split_multi(lab, ",")
        if not labs:
            raise DataError(f"empty label {lab!r}", path=spath, line=k, column="label")
        raw.append(labs)
        lines.append(k)
        body.append("0 " + rest)
    if not raw:
        raise DataError("no data line", path=spath)
    try:
        X, _ = load_svmlight_file(
            io.BytesIO(("\n".join(body) + "\n").encode("utf-8")),
            n_features=n_features,
            zero_based=zero_based,
        )
    except (ValueError, OverflowError) as exc:
        bad_line, col = _locate_svmlight_error(body, lines)
        raise DataError(
            f"malformed svmlight: {exc}", path=spath, line=bad_line, column=col
        ) from None
    if X.nnz and not np.isfinite(X.data).all():
        k = int(np.flatnonzero(~np.isfinite(X.data))[0])
        row = int(np.searchsorted(X.indptr, k, side="right") - 1)
        raise DataError(
            f"value {float(X.data[k])!r} is not finite (beyond +-1.8e308, or inf/nan): "
            "features must be finite numbers (svmlight has no missing values; omit an "
            "entry for a zero)",
            path=spath,
            line=lines[row],
            column=f"feature {int(X.indices[k]) + (0 if zero_based is True else 1)}",
        )
    multi = any(len(labs) > 1 for labs in raw)
    y, tax = _resolve_labels(raw, _taxonomy_arg(taxonomy), multi, spath, lines, "label")
    return HierDataset(
        _int32_csr(X),
        y,
        tax,
        name=name or (Path(spath).stem if spath else "svmlight"),
        description=f"svmlight file {spath}" if spath else "svmlight data",
        meta={"format": "svmlight"},
    )


def _locate_svmlight_error(body: list[str], lines: list[int]) -> tuple[int | None, str | None]:
    """Find the first token that is not ``idx:value`` (or whose indices decrease)."""
    for text, k in zip(body, lines):
        toks = text.split("#", 1)[0].split()[1:]
        last = -1
        for t, tok in enumerate(toks, start=2):
            if tok.startswith("qid:"):
                continue
            idx, colon, val = tok.partition(":")
            try:
                i = int(idx)
                float(val)
            except ValueError:
                return k, f"token {t} = {tok}"
            if not colon or i < 0 or i <= last or i >= 2**63:
                return k, f"token {t} = {tok}"
            last = i
    return None, None


def write_svmlight(ds: HierDataset, path: PathArg, zero_based: bool = False) -> None:
    """Write ``ds`` as svmlight: node names as labels (comma lists for multi-label rows)."""
    bad = [n for n in ds.taxonomy.names if any(ch.isspace() or ch in ",#" for ch in str(n))]
    if bad:
        raise DataError(f"node name {bad[0]!r} contains white space, ',' or '#'")
    X = sp.csr_matrix(ds.X)
    off = 0 if zero_based else 1
    out = []
    for i in range(X.shape[0]):
        lab = ",".join(ds.y[i]) if isinstance(ds.y[i], tuple) else ds.y[i]
        lo, hi = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(
            f"{j + off}:{v:.17g}" for j, v in zip(X.indices[lo:hi], X.data[lo:hi]) if v != 0
        )
        out.append(f"{lab} {feats}".rstrip())
    Path(path).write_text("\n".join(out) + "\n", encoding="utf-8")


# ============================================================================ ARFF (Clus HMC)
@dataclass
class ArffHeader:
    """The parsed header of a Clus HMC ARFF file.

    Attributes
    ----------
    relation : str
    attributes : list of (name, type) pairs
        ``type`` is ``"numeric"``, ``"hierarchical"`` or a tuple of nominal values.
    hierarchy : list of str
        The terms of the ``hierarchical`` attribute (full paths or ``parent/child`` pairs).
    class_index : int
        Position of the hierarchical attribute.
    data_line : int
        1-based line number of ``@DATA``.
    """

    relation: str
    attributes: list[tuple[str, Any]]
    hierarchy: list[str]
    class_index: int
    data_line: int
    class_line: int


def _parse_arff_header(lines: list[str], path: str | None) -> ArffHeader:
    relation = ""
    attrs: list[tuple[str, Any]] = []
    hierarchy: list[str] = []
    class_index = -1
    class_line = 0
    for k, raw in enumerate(lines, start=1):
        s = raw.strip()
        if not s or s.startswith("%"):
            continue
        low = s.lower()
        if low.startswith("@relation"):
            relation = s[len("@relation") :].strip().strip("'\"")
        elif low.startswith("@attribute"):
            rest = s[len("@attribute") :].strip()
            m = re.match(r"'([^']*)'|\"([^\"]*)\"|(\S+)", rest)
            if not m:
                raise DataError("@ATTRIBUTE without a name", path=path, line=k)
            aname = m.group(1) or m.group(2) or m.group(3)
            atype = rest[m.end() :].strip()
            tl = atype.lower()
            if tl.startswith("hierarchical"):
                if class_index >= 0:
                    raise DataError(
                        "a second hierarchical attribute (only one class attribute is allowed)",
                        path=path,
                        line=k,
                        column=aname,
                    )
                terms = atype[len("hierarchical") :].strip()
                hierarchy = [t.strip() for t in terms.split(",") if t.strip()]
                if not hierarchy:
                    raise DataError(
                        "the hierarchical attribute declares no term", path, k, column=aname
                    )
                class_index = len(attrs)
                class_line = k
                attrs.append((aname, "hierarchical"))
            elif tl in ("numeric", "real", "integer") or tl.startswith(("numeric", "real")):
                attrs.append((aname, "numeric"))
            elif atype.startswith("{"):
                if not atype.endswith("}"):
                    raise DataError("unterminated nominal {...}", path=path, line=k, column=aname)
                vals = tuple(v.strip().strip("'\"") for v in atype[1:-1].split(","))
                attrs.append((aname, vals))
            else:
                raise DataError(
                    f"unsupported attribute type {atype.split()[0] if atype else ''!r} "
                    "(numeric, nominal {...} and hierarchical are supported)",
                    path=path,
                    line=k,
                    column=aname,
                )
        elif low.startswith("@data"):
            if class_index < 0:
                raise DataError(
                    "no '@ATTRIBUTE class hierarchical ...' before @DATA: not a Clus HMC file",
                    path=path,
                    line=k,
                )
            return ArffHeader(relation, attrs, hierarchy, class_index, k, class_line)
        elif s.startswith("@"):
            raise DataError(f"unknown header keyword {s.split()[0]!r}", path=path, line=k)
        else:
            raise DataError(f"unexpected line before @DATA: {s[:60]!r}", path=path, line=k)
    raise DataError("no @DATA section", path=path)


def arff_taxonomy(
    terms: Sequence[str], kind: str = "auto", root: str = "root"
) -> tuple[Taxonomy, str]:
    """The taxonomy declared by the terms of a Clus ``hierarchical`` attribute.

    Parameters
    ----------
    terms : sequence of str
        Tree: full paths (``01``, ``01/01``, ``01/01/03``; node names are the full paths, a
        synthetic ``root`` above the top level). DAG: ``parent/child`` pairs whose top nodes hang
        below the node named ``root`` (as in Clus GO files: ``root/GO0003674``).
    kind : {"auto", "tree", "dag"}
        ``auto``: a DAG when every term is a pair and some child is also a parent or has two
        parents; a tree otherwise.
    root : str, default "root"

    Returns
    -------
    (Taxonomy, kind)
    """
    terms = list(dict.fromkeys(t.strip() for t in terms if t.strip()))
    if kind == "auto":
        kind = _arff_kind(terms)
    if kind == "tree":
        return Taxonomy.from_paths(terms, names="full", root=root), "tree"
    if kind != "dag":
        raise DataError(f"kind must be 'auto', 'tree' or 'dag', got {kind!r}")
    edges = []
    for t in terms:
        parts = t.split("/")
        if len(parts) != 2 or not all(parts):
            raise TaxonomyError(f"DAG term {t!r} is not a 'parent/child' pair", node=t)
        edges.append((parts[0], parts[1]))
    named = {n for e in edges for n in e}
    return Taxonomy(edges, root=None if root in named else root), "dag"


def _arff_kind(terms: list[str]) -> str:
    parts = [t.split("/") for t in terms]
    if not all(len(p) == 2 for p in parts):
        return "tree"
    parents = {p[0] for p in parts}
    children = [p[1] for p in parts]
    if parents & set(children) or len(set(children)) < len(children):
        return "dag"
    if len(parents) == 1 and "root" in parents:
        return "dag"
    return "tree"


@dataclass
class _ArffRaw:
    header: ArffHeader
    X: np.ndarray | sp.csr_matrix  # NaN for missing
    labels: list[tuple[str, ...]]
    lines: np.ndarray
    feature_names: list[str]


def _parse_arff(text: str, path: str | None) -> _ArffRaw:
    all_lines = text.split("\n")
    header = _parse_arff_header(all_lines, path)
    attrs = header.attributes
    n_attr = len(attrs)
    ci = header.class_index
    line_no: list[int] = []
    rows: list[str] = []
    for k in range(header.data_line, len(all_lines)):
        s = all_lines[k].strip()
        if not s or s.startswith("%"):
            continue
        rows.append(s)
        line_no.append(k + 1)
    if not rows:
        raise DataError("no data row after @DATA", path=path, line=header.data_line)
    lines_arr = np.asarray(line_no, dtype=np.int64)
    sparse_rows = [r.startswith("{") for r in rows]
    if any(sparse_rows):
        if not all(sparse_rows):
            k = line_no[sparse_rows.index(not sparse_rows[0])]
            raise DataError("dense and sparse ({index value, ...}) rows mixed", path, k)
        return _parse_sparse_arff(rows, lines_arr, header, path)
    str_cols = {j: str for j, (_, t) in enumerate(attrs) if t != "numeric"}
    try:
        df = pd.read_csv(
            io.StringIO("\n".join(rows)),
            header=None,
            dtype=str_cols,
            na_values=["?"],
            keep_default_na=False,
            skipinitialspace=True,
            quotechar="'",
        )
    except (pd.errors.ParserError, ValueError):
        df = None
    if df is None or df.shape[1] != n_attr:
        for s, k in zip(rows, line_no):
            got = len(next(csv.reader([s], quotechar="'", skipinitialspace=True)))
            if got != n_attr:
                raise DataError(
                    f"expected {n_attr} comma-separated values (the @ATTRIBUTE count), got {got}",
                    path=path,
                    line=k,
                )
        raise DataError(f"expected {n_attr} values per row", path=path)  # pragma: no cover
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for j, (aname, atype) in enumerate(attrs):
        if j == ci:
            continue
        col = df[j]
        missing = col.isna().to_numpy()
        if atype == "numeric":
            if col.dtype.kind in "fiub":
                num = col.to_numpy(dtype=np.float64)
            else:  # some cell is not a number: find it
                txt = col.astype(str).str.strip()
                num = pd.to_numeric(txt.where(~missing, "nan"), errors="coerce").to_numpy(
                    dtype=np.float64
                )
                bad = np.isnan(num) & ~missing
                if bad.any():
                    i = int(np.flatnonzero(bad)[0])
                    raise DataError(
                        f"value {txt.iloc[i]!r} is not a number", path, int(lines_arr[i]), aname
                    )
            blocks.append(num[:, None])
            names.append(aname)
        else:
            vals = list(atype)
            try:
                num_vals = [float(v) for v in vals]
            except ValueError:
                num_vals = None
            v = col.fillna("?").astype(str).str.strip().str.strip("'\"").to_numpy(dtype=object)
            known = np.isin(v, vals) | missing
            if not known.all():
                i = int(np.flatnonzero(~known)[0])
                raise DataError(
                    f"value {v[i]!r} is not one of the declared {{{', '.join(vals)}}}",
                    path,
                    int(lines_arr[i]),
                    aname,
                )
            if num_vals is not None:
                lut = dict(zip(vals, num_vals))
                num = np.array([np.nan if m else lut[x] for x, m in zip(v, missing)])
                blocks.append(num[:, None])
                names.append(aname)
            else:  # one-hot, missing -> NaN in every indicator
                oh = np.stack([(v == val).astype(np.float64) for val in vals], axis=1)
                oh[missing] = np.nan
                blocks.append(oh)
                names.extend(f"{aname}={val}" for val in vals)
    X = np.hstack(blocks) if blocks else np.empty((len(rows), 0))
    labels: list[tuple[str, ...]] = []
    cname = attrs[ci][0]
    for i, cell in enumerate(df[ci].fillna("?").astype(str).tolist()):
        cell = cell.strip().strip("'\"")
        if cell in ("", "?"):
            raise DataError("missing class value", path, int(lines_arr[i]), cname)
        labels.append(tuple(t.strip() for t in cell.split("@") if t.strip()))
    return _ArffRaw(header, X, labels, lines_arr, names)


def _parse_sparse_arff(
    rows: list[str], lines: np.ndarray, header: ArffHeader, path: str | None
) -> _ArffRaw:
    """Sparse ARFF rows ``{index value, ...}`` (0-based attribute indices; absent = 0)."""
    attrs = header.attributes
    ci = header.class_index
    n_attr = len(attrs)
    for j, (aname, atype) in enumerate(attrs):
        if j != ci and atype != "numeric":
            raise DataError(
                "sparse rows need numeric attributes (nominal ones are not supported)",
                path,
                header.data_line,
                aname,
            )
    indptr = [0]
    indices: list[int] = []
    data: list[float] = []
    labels: list[tuple[str, ...]] = []
    cname = attrs[ci][0]
    for r, k in zip(rows, lines.tolist()):
        if not r.endswith("}"):
            raise DataError("a sparse row must end with '}'", path, k)
        label: str | None = None
        last = -1
        for item in r[1:-1].split(","):
            item = item.strip()
            if not item:
                continue
            idx_s, _, val = item.partition(" ")
            val = val.strip().strip("'\"")
            try:
                idx = int(idx_s)
            except ValueError:
                raise DataError(f"bad sparse entry {item!r}", path, k) from None
            if not 0 <= idx < n_attr or idx <= last:
                raise DataError(f"attribute index {idx} out of range or not increasing", path, k)
            last = idx
            if idx == ci:
                label = val
                continue
            try:
                v = np.nan if val == "?" else float(val)
            except ValueError:
                raise DataError(f"value {val!r} is not a number", path, k, attrs[idx][0]) from None
            indices.append(idx if idx < ci else idx - 1)
            data.append(v)
        if label is None or label in ("", "?"):
            raise DataError("missing class value", path, k, cname)
        labels.append(tuple(t.strip() for t in label.split("@") if t.strip()))
        indptr.append(len(indices))
    X = sp.csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int32), indptr),
        shape=(len(rows), n_attr - 1),
    )
    names = [a for j, (a, _) in enumerate(attrs) if j != ci]
    return _ArffRaw(header, X, labels, lines, names)


def _most_specific(Y: sp.csr_matrix, tax: Taxonomy) -> sp.csr_matrix:
    """Drop from each row the labels that are strict ancestors of another label of the row."""
    A = tax.ancestor_matrix
    strict = (A - sp.identity(tax.n_nodes, format="csr")).tocsr()
    strict.eliminate_zeros()
    covered = (Y @ strict).tocsr()
    covered.data[:] = 1.0
    keep = Y - Y.multiply(covered)
    keep = sp.csr_matrix(keep)
    keep.eliminate_zeros()
    return keep


def read_arff(
    path: PathArg | None = None,
    taxonomy: Taxonomy | PathArg | None = None,
    impute_means: np.ndarray | None = None,
    kind: str = "auto",
    labels: str = "specific",
    multilabel: bool | None = None,
    impute: bool = True,
    text: str | None = None,
    name: str | None = None,
) -> HierDataset:
    """Read a Clus HMC ARFF file (Vens et al. 2008).

    The ``@ATTRIBUTE class hierarchical t1,t2,...`` line declares the hierarchy: for a tree the
    terms are full paths (``01``, ``01/01``, ``01/01/03``) and node names are those full paths,
    with a synthetic ``root`` above the top level; for a DAG the terms are ``parent/child``
    pairs below a node named ``root`` (see :func:`arff_taxonomy`). Each row's labels are
    separated by ``@``. Missing values ``?`` are imputed by the column mean over this file's
    rows (the training means); pass ``impute_means`` from the training set to read a test file.

    Parameters
    ----------
    path : path-like, optional
        The file (or pass ``text``).
    taxonomy : Taxonomy or path-like, optional
        Default: the hierarchy the file declares.
    impute_means : ndarray of shape (n_features,), optional
        Means for the ``?`` cells; default this file's column means (NaN-free columns ignored,
        0 for a column with no value). Returned in ``meta["impute_means"]``.
    kind : {"auto", "tree", "dag"}
        How to read the hierarchy terms.
    labels : {"specific", "as_is"}
        ``specific`` drops from a row the labels that are ancestors of another of its labels
        (Clus files often list the whole path, e.g. ``1@1/1@1/1/0``); ``as_is`` keeps them.
    multilabel : bool, optional
        Default: single-label (``y`` of node names) when every row has exactly one label after
        the reduction, else tuples.
    impute : bool, default True
        False keeps the missing values as NaN (to impute several files with joint means).
    text : str, optional
        The content, instead of reading ``path``.
    name : str, optional
        The data set's name.

    Returns
    -------
    HierDataset
        Dense ``X`` (CSR for a file of sparse ``{index value, ...}`` rows, whose absent
        attributes are 0); ``meta`` holds ``impute_means``, ``n_missing`` and
        ``hierarchy_kind``.
    """
    spath = None if path is None else str(path)
    if text is None:
        if path is None:
            raise DataError("read_arff needs a path or text")
        text = decode_bytes(_read_bytes(path), spath)
    else:
        text = _clean_text(text, spath)
    raw = _parse_arff(text, spath)
    if isinstance(raw.X, sp.csr_matrix):
        Xs: sp.csr_matrix = raw.X
        bad = np.flatnonzero(np.isinf(Xs.data))
        if len(bad):
            row = int(np.searchsorted(np.asarray(Xs.indptr), bad[0], side="right") - 1)
            j = int(Xs.indices[bad[0]])
            raise DataError(
                f"value {float(Xs.data[bad[0]])!r} is not finite: features must be finite "
                "numbers ('?' marks a missing value)",
                spath,
                int(raw.lines[row]),
                raw.feature_names[j],
            )
    else:
        _refuse_nonfinite(raw.X, True, spath, raw.lines, raw.feature_names)
    for i, labs in enumerate(raw.labels):
        if not labs:
            raise DataError(
                "no label in the class value (only '@' separators)",
                spath,
                int(raw.lines[i]),
                raw.header.attributes[raw.header.class_index][0],
            )
    tax = _taxonomy_arg(taxonomy)
    if tax is None:
        try:
            tax, kind = arff_taxonomy(raw.header.hierarchy, kind=kind)
        except TaxonomyError as exc:
            raise DataError(
                f"the hierarchical attribute does not declare a valid taxonomy: {exc}",
                spath,
                raw.header.class_line,
                raw.header.attributes[raw.header.class_index][0],
            ) from None
    else:
        kind = "tree" if tax.is_tree else "dag"
    n_missing = int(np.isnan(raw.X.data if sp.issparse(raw.X) else raw.X).sum())
    if impute:
        X, means = _impute(raw.X, impute_means)
    else:
        X, means = raw.X, None
    cname = raw.header.attributes[raw.header.class_index][0]
    y_multi, tax = _resolve_labels(raw.labels, tax, True, spath, raw.lines, cname)
    if labels == "specific":
        Y = _most_specific(_indicator(y_multi, tax), tax)
        names = tax.names
        kept = [
            {str(names[j]) for j in Y.indices[Y.indptr[i] : Y.indptr[i + 1]]}
            for i in range(Y.shape[0])
        ]
        reduced = np.empty(len(y_multi), dtype=object)
        reduced[:] = [tuple(v for v in t if v in k) for t, k in zip(y_multi, kept)]
        y_multi = reduced
    elif labels != "as_is":
        raise DataError(f"labels must be 'specific' or 'as_is', got {labels!r}")
    single = all(len(t) == 1 for t in y_multi)
    if multilabel is None:
        multilabel = not single
    if not multilabel:
        if not single:
            i = next(i for i, t in enumerate(y_multi) if len(t) != 1)
            raise DataError(
                f"multilabel=False but the row has {len(y_multi[i])} labels",
                spath,
                int(raw.lines[i]),
                cname,
            )
        y = np.empty(len(y_multi), dtype=object)
        y[:] = [t[0] for t in y_multi]
    else:
        y = y_multi
    return HierDataset(
        X,
        y,
        tax,
        feature_names=raw.feature_names,
        name=name or raw.header.relation or (Path(spath).stem if spath else "arff"),
        description=f"Clus HMC ARFF {spath}" if spath else "Clus HMC ARFF",
        meta={
            "impute_means": means,
            "n_missing": n_missing,
            "hierarchy_kind": kind,
            "format": "arff",
        },
    )


def _indicator(y: np.ndarray, tax: Taxonomy) -> sp.csr_matrix:
    rows = np.repeat(np.arange(len(y)), [len(t) for t in y])
    cols = tax.index([lab for t in y for lab in t]) if len(rows) else np.empty(0, np.int64)
    m = sp.csr_matrix(
        (np.ones(len(rows)), (rows, np.asarray(cols, dtype=np.int64))),
        shape=(len(y), tax.n_nodes),
    )
    m.sum_duplicates()
    m.data[:] = 1.0
    m.sort_indices()
    return m


# ============================================================================ entry points
def guess_dataset_format(content: str, filename: str | None = None) -> str:
    """Guess a data file's format from its extension, then its content.

    Returns
    -------
    {"csv", "text", "svmlight", "arff"}
        ``.arff`` -> arff; ``.svm``/``.svmlight``/``.libsvm`` -> svmlight; a CSV is ``text``
        when a column besides the label and id holds free text, else ``csv``.
    """
    ext = _ext(filename)
    if ext == ".arff":
        return "arff"
    if ext in (".svm", ".svmlight", ".libsvm", ".light"):
        return "svmlight"
    head = [
        ln.strip()
        for ln in content[:200_000].split("\n")[:50]
        if ln.strip() and not ln.strip().startswith(("%", "#"))
    ]
    if not head:
        raise DataError("empty file", path=filename)
    if head[0].lower().startswith(("@relation", "@attribute")):
        return "arff"
    if (
        ext not in (".csv", ".tsv")
        and all(_SVM_LINE.match(ln) for ln in head[:20])
        and any(re.search(r"\s\d+:", ln) for ln in head[:20])
    ):
        toks = head[0].split()
        if len(toks) == 1 or ":" in toks[1]:
            return "svmlight"
    try:
        delim = _sniff_delimiter(content, filename)
        df = pd.read_csv(
            io.StringIO(content[:200_000]),
            sep=delim,
            keep_default_na=False,
            na_values=list(_MISSING),
            nrows=200,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return "csv"
    df.columns = [str(c).strip() for c in df.columns]
    lab = _pick_column(df, None, _LABEL_COLUMNS, "label", filename)
    idc = _pick_column(df, None, _ID_COLUMNS, "id", filename)
    lower = {c.lower() for c in df.columns}
    if any(c in lower for c in _TEXT_COLUMNS):
        return "text"
    others = [c for c in df.columns if c not in (lab, idc)]
    if any(df[c].dtype == object and _looks_like_text(df[c].fillna("")) for c in others):
        return "text"
    return "csv"


def read_dataset_bytes(
    data: bytes,
    filename: str,
    taxonomy: Taxonomy | PathArg | None = None,
    format: str | None = None,
    reference: HierDataset | None = None,
    **kw: Any,
) -> HierDataset:
    """Parse a data file held in memory (the app's uploads).

    Parameters
    ----------
    data : bytes
        The file content.
    filename : str
        The file name: used to guess the format and in error messages.
    taxonomy : Taxonomy or path-like, optional
        Default: from the file (ARFF), the ``a/b/c`` path labels, or flat.
    format : {"csv", "text", "svmlight", "arff"}, optional
        Skip the guess (:func:`guess_dataset_format`).
    reference : HierDataset, optional
        A training set read before: its taxonomy, imputation means, fitted vectorizer and width
        are used, so that this file (a test split) is encoded like it.
    **kw
        Passed to the reader (:func:`read_csv_dataset`, :func:`read_text_csv`,
        :func:`read_svmlight`, :func:`read_arff`).

    Returns
    -------
    HierDataset
    """
    text = decode_bytes(data, filename)
    fmt = (format or guess_dataset_format(text, filename)).lower()
    if fmt in ("libsvm", "svm"):
        fmt = "svmlight"
    if reference is not None:
        if taxonomy is None:
            taxonomy = reference.taxonomy
        if fmt in ("csv", "arff") and "impute_means" in reference.meta:
            kw.setdefault("impute_means", reference.meta["impute_means"])
        if fmt == "text" and "vectorizer" in reference.meta:
            kw.setdefault("vectorizer", reference.meta["vectorizer"])
        if fmt == "svmlight":
            kw.setdefault("n_features", reference.n_features)
    if fmt == "csv":
        ds = read_csv_dataset(filename, taxonomy=taxonomy, text=text, **kw)
    elif fmt == "text":
        ds = read_text_csv(filename, taxonomy=taxonomy, text=text, **kw)
    elif fmt == "svmlight":
        ds = read_svmlight(filename, taxonomy=taxonomy, data=text.encode("utf-8"), **kw)
    elif fmt == "arff":
        ds = read_arff(filename, taxonomy=taxonomy, text=text, **kw)
    else:
        raise DataError(
            f"unknown data format {format!r}; expected one of {', '.join(DATASET_FORMATS)}",
            path=filename,
        )
    if reference is not None and ds.n_features != reference.n_features:
        raise DataError(
            f"{ds.n_features} features, but the reference set has {reference.n_features}",
            path=filename,
        )
    return ds


def load_dataset(
    path: PathArg,
    taxonomy: Taxonomy | PathArg | None = None,
    format: str | None = None,
    reference: HierDataset | None = None,
    **kw: Any,
) -> HierDataset:
    """Read a labelled data file, guessing its format from the extension and the content.

    Parameters
    ----------
    path : path-like
        A CSV (numeric features or a raw text column), svmlight or Clus HMC ARFF file.
    taxonomy : Taxonomy or path-like, optional
        The label hierarchy, or a taxonomy file. Default: the hierarchy an ARFF file declares;
        for labels that are ``a/b/c`` paths, the tree they spell; for plain names, a flat one.
    format : {"csv", "text", "svmlight", "arff"}, optional
        Skip the guess.
    reference : HierDataset, optional
        The training set, when reading its test split (taxonomy, imputation means, fitted
        vectorizer and width are reused).
    **kw
        Reader options (``label_column``, ``label_sep``, ``impute_means``, ``vectorizer``, ...).

    Returns
    -------
    HierDataset

    Raises
    ------
    DataError
        Naming the file, line and column of the problem.

    Examples
    --------
    >>> train = load_dataset("datasets/example_paths.csv")  # doctest: +SKIP
    >>> test = load_dataset("datasets/example_paths_test.csv", reference=train)  # doctest: +SKIP
    """
    return read_dataset_bytes(
        _read_bytes(path), str(path), taxonomy=taxonomy, format=format, reference=reference, **kw
    )
