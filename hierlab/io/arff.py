"""Clus HMC ARFF data sets (Vens et al. 2008).

Numeric (and nominal) attributes, ``?`` for a missing value, and a ``hierarchical`` class
attribute declaring the hierarchy (tree: full paths such as ``01/01/03``; DAG: ``parent/child``
pairs), one ``@``-separated label set per row. Rows are dense (comma-separated values) or sparse
(``{index value, ...}``, absent attributes 0).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import (
    PathArg,
    dataset_name,
    refuse_nonfinite,
    source_text,
    to_float_column,
)
from hierlab.io.decoding import impute as impute_missing
from hierlab.io.labels import resolve_labels, taxonomy_arg

__all__ = ["ArffHeader", "arff_taxonomy", "read_arff"]


# ============================================================================ header
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
    class_line : int
        1-based line number of the hierarchical attribute.
    """

    relation: str
    attributes: list[tuple[str, Any]]
    hierarchy: list[str]
    class_index: int
    data_line: int
    class_line: int

    @property
    def class_name(self) -> str:
        """The name of the hierarchical (class) attribute."""
        return str(self.attributes[self.class_index][0])


def _parse_arff_header(lines: list[str], path: str | None) -> ArffHeader:
    """The header (up to ``@DATA``) of the ARFF ``lines``."""
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
            aname, atype, terms = _parse_attribute(s[len("@attribute") :].strip(), path, k)
            if atype == "hierarchical":
                if class_index >= 0:
                    raise DataError(
                        "a second hierarchical attribute (only one class attribute is allowed)",
                        path=path,
                        line=k,
                        column=aname,
                    )
                if not terms:
                    raise DataError(
                        "the hierarchical attribute declares no term", path, k, column=aname
                    )
                hierarchy, class_index, class_line = terms, len(attrs), k
            attrs.append((aname, atype))
        elif low.startswith("@data"):
            if len(attrs) - 1 > limits.current().max_features:
                raise DataError(
                    f"{len(attrs) - 1:,} feature attributes " + limits.how_to_raise("max_features"),
                    path=path,
                    line=k,
                )
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


def _parse_attribute(rest: str, path: str | None, k: int) -> tuple[str, Any, list[str]]:
    """``(name, type, hierarchy terms)`` of an ``@ATTRIBUTE`` line (after the keyword)."""
    m = re.match(r"'([^']*)'|\"([^\"]*)\"|(\S+)", rest)
    if not m:
        raise DataError("@ATTRIBUTE without a name", path=path, line=k)
    aname = m.group(1) or m.group(2) or m.group(3)
    atype = rest[m.end() :].strip()
    tl = atype.lower()
    if tl.startswith("hierarchical"):
        terms = atype[len("hierarchical") :].strip()
        return aname, "hierarchical", [t.strip() for t in terms.split(",") if t.strip()]
    if tl in ("numeric", "real", "integer") or tl.startswith(("numeric", "real")):
        return aname, "numeric", []
    if atype.startswith("{"):
        if not atype.endswith("}"):
            raise DataError("unterminated nominal {...}", path=path, line=k, column=aname)
        return aname, tuple(v.strip().strip("'\"") for v in atype[1:-1].split(",")), []
    raise DataError(
        f"unsupported attribute type {atype.split()[0] if atype else ''!r} "
        "(numeric, nominal {...} and hierarchical are supported)",
        path=path,
        line=k,
        column=aname,
    )


# ============================================================================ hierarchy
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
    """``"dag"`` or ``"tree"``: how :func:`arff_taxonomy` reads the terms in ``auto`` mode."""
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


# ============================================================================ data rows
@dataclass
class _ArffRaw:
    """An ARFF file as parsed: header, features (NaN where missing), labels, file lines."""

    header: ArffHeader
    X: np.ndarray | sp.csr_matrix  # NaN for missing
    labels: list[tuple[str, ...]]
    lines: np.ndarray
    feature_names: list[str]


def _parse_arff(text: str, path: str | None) -> _ArffRaw:
    """Header, features (NaN where missing), labels and file lines of every data row."""
    all_lines = text.split("\n")
    header = _parse_arff_header(all_lines, path)
    rows: list[str] = []
    line_no: list[int] = []
    for k in range(header.data_line, len(all_lines)):
        s = all_lines[k].strip()
        if s and not s.startswith("%"):
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
    df = _read_dense_rows(rows, line_no, header.attributes, path)
    X, names = _dense_features(df, header, lines_arr, path)
    labels: list[tuple[str, ...]] = []
    for i, cell in enumerate(df[header.class_index].fillna("?").astype(str).tolist()):
        labels.append(_label_set(cell.strip().strip("'\""), path, int(lines_arr[i]), header))
    return _ArffRaw(header, X, labels, lines_arr, names)


def _label_set(cell: str, path: str | None, line: int, header: ArffHeader) -> tuple[str, ...]:
    """The ``@``-separated labels of a class value; a missing one (``?``, empty) refused."""
    if cell in ("", "?"):
        raise DataError("missing class value", path, line, header.class_name)
    return tuple(t.strip() for t in cell.split("@") if t.strip())


def _read_dense_rows(
    rows: list[str], line_no: list[int], attrs: list[tuple[str, Any]], path: str | None
) -> pd.DataFrame:
    """The comma-separated rows as a frame (numeric attributes parsed, ``?`` as NaN)."""
    n_attr = len(attrs)
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
    return df


def _dense_features(
    df: pd.DataFrame, header: ArffHeader, lines: np.ndarray, path: str | None
) -> tuple[np.ndarray, list[str]]:
    """The feature matrix (NaN where missing) and its column names.

    A nominal attribute whose values are all numbers becomes one numeric column; any other
    nominal attribute one indicator column per value (NaN in each when missing).
    """
    blocks: list[np.ndarray] = []
    names: list[str] = []
    for j, (aname, atype) in enumerate(header.attributes):
        if j == header.class_index:
            continue
        if atype == "numeric":
            num, bad, txt = to_float_column(df[j], ())
            if txt is not None and bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"value {txt.iloc[i]!r} is not a number", path, int(lines[i]), aname
                )
            blocks.append(num[:, None])
            names.append(aname)
        else:
            block, block_names = _nominal_block(df[j], aname, list(atype), lines, path)
            blocks.append(block)
            names.extend(block_names)
    X = np.hstack(blocks) if blocks else np.empty((len(lines), 0))
    return X, names


def _nominal_block(
    col: pd.Series, aname: str, vals: list[str], lines: np.ndarray, path: str | None
) -> tuple[np.ndarray, list[str]]:
    """The columns of a nominal attribute: its numeric values, or a one-hot block."""
    missing = col.isna().to_numpy()
    try:
        num_vals: list[float] | None = [float(v) for v in vals]
    except ValueError:
        num_vals = None
    v = col.fillna("?").astype(str).str.strip().str.strip("'\"").to_numpy(dtype=object)
    known = np.isin(v, vals) | missing
    if not known.all():
        i = int(np.flatnonzero(~known)[0])
        raise DataError(
            f"value {v[i]!r} is not one of the declared {{{', '.join(vals)}}}",
            path,
            int(lines[i]),
            aname,
        )
    if num_vals is not None:
        lut = dict(zip(vals, num_vals))
        num = np.array([np.nan if m else lut[x] for x, m in zip(v, missing)])
        return num[:, None], [aname]
    oh = np.stack([(v == val).astype(np.float64) for val in vals], axis=1)
    oh[missing] = np.nan
    return oh, [f"{aname}={val}" for val in vals]


def _parse_sparse_arff(
    rows: list[str], lines: np.ndarray, header: ArffHeader, path: str | None
) -> _ArffRaw:
    """Sparse ARFF rows ``{index value, ...}`` (0-based attribute indices; absent = 0)."""
    attrs = header.attributes
    ci = header.class_index
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
    for r, k in zip(rows, lines.tolist()):
        label = _sparse_row(r, k, header, path, indices, data)
        labels.append(_label_set("" if label is None else label, path, k, header))
        indptr.append(len(indices))
    X = sp.csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int32), indptr),
        shape=(len(rows), len(attrs) - 1),
    )
    names = [a for j, (a, _) in enumerate(attrs) if j != ci]
    return _ArffRaw(header, X, labels, lines, names)


def _sparse_row(
    r: str, k: int, header: ArffHeader, path: str | None, indices: list[int], data: list[float]
) -> str | None:
    """Append the features of the sparse row ``r`` (line ``k``); return its class value."""
    if not r.endswith("}"):
        raise DataError("a sparse row must end with '}'", path, k)
    attrs = header.attributes
    ci = header.class_index
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
        if not 0 <= idx < len(attrs) or idx <= last:
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
    return label


def _refuse_infinite(raw: _ArffRaw, path: str | None) -> None:
    """Refuse an infinite feature value (NaN is a missing value), naming its line and column."""
    if not isinstance(raw.X, sp.csr_matrix):
        refuse_nonfinite(raw.X, True, path, raw.lines, raw.feature_names)
        return
    Xs: sp.csr_matrix = raw.X
    bad = np.flatnonzero(np.isinf(Xs.data))
    if len(bad):
        row = int(np.searchsorted(np.asarray(Xs.indptr), bad[0], side="right") - 1)
        j = int(Xs.indices[bad[0]])
        raise DataError(
            f"value {float(Xs.data[bad[0]])!r} is not finite: features must be finite "
            "numbers ('?' marks a missing value)",
            path,
            int(raw.lines[row]),
            raw.feature_names[j],
        )


# ============================================================================ labels
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


def _indicator(y: np.ndarray, tax: Taxonomy) -> sp.csr_matrix:
    """The 0/1 matrix (n_rows, n_nodes) of the label tuples ``y``."""
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


def _arff_hierarchy(
    raw: _ArffRaw, taxonomy: Taxonomy | PathArg | None, kind: str, path: str | None
) -> tuple[Taxonomy, str]:
    """The taxonomy given, or the one the file declares; and its kind (``tree``/``dag``)."""
    tax = taxonomy_arg(taxonomy)
    if tax is not None:
        return tax, "tree" if tax.is_tree else "dag"
    try:
        return arff_taxonomy(raw.header.hierarchy, kind=kind)
    except TaxonomyError as exc:
        raise DataError(
            f"the hierarchical attribute does not declare a valid taxonomy: {exc}",
            path,
            raw.header.class_line,
            raw.header.class_name,
        ) from None


def _arff_labels(
    raw: _ArffRaw,
    tax: Taxonomy,
    labels: str,
    multilabel: bool | None,
    path: str | None,
) -> tuple[np.ndarray, Taxonomy]:
    """``y`` of the rows (node names, or tuples when multi-label) and the taxonomy."""
    cname = raw.header.class_name
    y_multi, tax = resolve_labels(raw.labels, tax, True, path, raw.lines, cname)
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
    if multilabel:
        return y_multi, tax
    if not single:
        i = next(i for i, t in enumerate(y_multi) if len(t) != 1)
        raise DataError(
            f"multilabel=False but the row has {len(y_multi[i])} labels",
            path,
            int(raw.lines[i]),
            cname,
        )
    y = np.empty(len(y_multi), dtype=object)
    y[:] = [t[0] for t in y_multi]
    return y, tax


# ============================================================================ reading
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
    text, name
        As in :func:`~hierlab.io.csv.read_csv_dataset` (default name: the ``@RELATION``).

    Returns
    -------
    HierDataset
        Dense ``X`` (CSR for a file of sparse ``{index value, ...}`` rows, whose absent
        attributes are 0); ``meta`` holds ``impute_means``, ``n_missing`` and
        ``hierarchy_kind``.
    """
    spath, text = source_text(path, text, "read_arff")
    raw = _parse_arff(text, spath)
    _refuse_infinite(raw, spath)
    for i, labs in enumerate(raw.labels):
        if not labs:
            raise DataError(
                "no label in the class value (only '@' separators)",
                spath,
                int(raw.lines[i]),
                raw.header.class_name,
            )
    tax, kind = _arff_hierarchy(raw, taxonomy, kind, spath)
    n_missing = int(np.isnan(raw.X.data if sp.issparse(raw.X) else raw.X).sum())
    X, means = impute_missing(raw.X, impute_means) if impute else (raw.X, None)
    y, tax = _arff_labels(raw, tax, labels, multilabel, spath)
    return HierDataset(
        X,
        y,
        tax,
        feature_names=raw.feature_names,
        name=name or raw.header.relation or dataset_name(None, spath, "arff"),
        description=f"Clus HMC ARFF {spath}" if spath else "Clus HMC ARFF",
        meta={
            "impute_means": means,
            "n_missing": n_missing,
            "hierarchy_kind": kind,
            "format": "arff",
        },
    )
