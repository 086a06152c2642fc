"""CSV data sets: a label column, numeric feature columns, an optional id column.

The label cell holds node names or ``a/b/c`` paths, ``;`` between several labels of a
multi-label row. Missing cells (``?``, empty, ``NA``...) are imputed by the column means of the
file, or by given ``impute_means`` (a test file read with the training means). The table
helpers here (delimiter, header, column picking, row lines) also serve :mod:`hierlab.io.text`.
"""

from __future__ import annotations

import csv
import io
import itertools
import operator
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import (
    MISSING,
    PathArg,
    dataset_name,
    extension,
    impute,
    refuse_nonfinite,
    source_text,
    split_multi,
    to_float_column,
)
from hierlab.io.labels import resolve_labels, taxonomy_arg

__all__ = [
    "ID_COLUMNS",
    "LABEL_COLUMNS",
    "TEXT_COLUMNS",
    "LazyLines",
    "Table",
    "header_names",
    "looks_like_text",
    "pick_column",
    "prepare_table",
    "read_csv_dataset",
    "sniff_delimiter",
    "write_csv_dataset",
]

LABEL_COLUMNS = ("label", "labels", "class", "classes", "y", "target", "category", "categories")
ID_COLUMNS = ("id", "ids", "doc_id", "sample_id", "name")
TEXT_COLUMNS = ("text", "document", "doc", "body", "content", "message", "abstract")


# ============================================================================ the table
def _csv_row_lines(text: str, delimiter: str, n_rows: int) -> np.ndarray:
    """File line number (1-based) of every data row, as pandas counts rows (blank rows skipped)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    out = []
    header = True
    start = 1
    for row in _checked(reader, None):
        if _is_blank(row):
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


class LazyLines:
    """File line numbers of the CSV rows, computed on first use (only error messages need them).

    Parameters
    ----------
    text : str
        The CSV content.
    delimiter : str
    n_rows : int
        Data rows (pandas' count).
    """

    def __init__(self, text: str, delimiter: str, n_rows: int) -> None:
        self._args = (text, delimiter, n_rows)
        self._lines: np.ndarray | None = None

    def __getitem__(self, i: int) -> int:
        if self._lines is None:
            self._lines = _csv_row_lines(*self._args)
        return int(self._lines[i])

    def __len__(self) -> int:
        return self._args[2]


def csv_rows(text: str, delimiter: str, path: str | None) -> Iterator[list[str]]:
    """The rows of ``text`` (Python's csv reader), its errors DataErrors naming the line."""
    return _checked(csv.reader(io.StringIO(text), delimiter=delimiter), path)


def _checked(reader: Any, path: str | None) -> Iterator[list[str]]:
    """The rows of a csv ``reader``; ``csv.Error`` (a cell over the field limit, a NUL) as a
    DataError naming the line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            limit = csv.field_size_limit()
            raise DataError(
                f"malformed CSV ({exc}): a cell longer than {limit:,} characters, or an "
                "unclosed quote",
                path=path,
                line=reader.line_num,
            ) from None
        yield row


def sniff_delimiter(text: str, filename: str | None) -> str:
    """The CSV delimiter from the header line.

    The extension's (``.tsv``: tab, else comma) when the header holds it; else a tab, then a
    semicolon, when only that one is present.
    """
    first = _header_text(text).split("\n", 1)[0]
    if extension(filename) == ".tsv" and ("\t" in first or "," not in first):
        return "\t"
    if "," in first:
        return ","
    if "\t" in first:
        return "\t"
    if ";" in first:
        return ";"
    return ","


def _is_blank(row: list[str]) -> bool:
    """Whether a parsed CSV row is a blank line (pandas skips those, header included)."""
    return not row or (len(row) == 1 and not row[0].strip())


def _header_text(text: str) -> str:
    """The first record of a CSV text (a quoted header cell may hold a newline).

    Leading blank (white space only) lines are skipped, as pandas skips them.
    """
    start = 0
    while True:
        nl = text.find("\n", start)
        if nl == -1 or text[start:nl].strip():
            break
        start = nl + 1
    text = text[start:]
    end = text.find("\n")
    while end != -1 and text[:end].count('"') % 2 == 1:
        end = text.find("\n", end + 1)
    return text if end == -1 else text[: end + 1]


def header_names(text: str, delimiter: str, path: str | None) -> list[str]:
    """The stripped column names of the header; trailing unnamed columns kept as ``""``.

    Raises
    ------
    DataError
        For no header, more columns than ``max_features`` allows, an unnamed column before the
        last named one, or a name given twice (after trimming spaces).
    """
    first = next(csv_rows(_header_text(text), delimiter, path), [])
    names = [c.strip() for c in first]
    if not any(names):
        raise DataError("empty file: no header and no row", path=path)
    cap = limits.current().max_features
    if len(names) > cap + 3:  # a label, an id and a text column besides the features
        raise DataError(
            f"the header declares {len(names):,} columns " + limits.how_to_raise("max_features"),
            path=path,
            line=1,
        )
    n_named = max(j for j, c in enumerate(names) if c) + 1
    for j in range(n_named):
        if not names[j]:
            raise DataError(
                f"column {j + 1} has no name in the header: name every column", path=path, line=1
            )
    seen: set[str] = set()
    for c in names[:n_named]:
        if c in seen:
            raise DataError("duplicate column name", path=path, line=1, column=c)
        seen.add(c)
    return names


def _placeholder(j: int) -> str:
    """The name given to the unnamed trailing column ``j`` while reading (never kept)."""
    return f"\x00unnamed {j + 1}"


def _read_frame(
    text: str,
    path: str | None,
    delimiter: str,
    names: list[str],
    raw_columns: Sequence[str] | None,
) -> pd.DataFrame:
    """Read the CSV with pandas' C parser under the column ``names`` of :func:`header_names`.

    The columns ``raw_columns`` (label, id, text; every column when None) are kept as the
    text of their cells, exactly: ``NA``, ``null`` or ``?`` is a label, not a missing value.
    The other columns are numbers where every cell is one, the :data:`MISSING` markers NaN.
    """
    cols = [c or _placeholder(j) for j, c in enumerate(names)]
    base: dict[str, Any] = {
        "sep": delimiter,
        "header": 0,
        "names": cols,
        "skipinitialspace": True,
        "index_col": False,
    }
    if raw_columns is None:
        df = _pandas_read(text, path, dtype=str, na_filter=False, **base)
        return _drop_unnamed(df, names, path, text, delimiter)
    df = _pandas_read(
        text,
        path,
        keep_default_na=False,
        na_values=list(MISSING),
        dtype=dict.fromkeys(raw_columns, str),
        **base,
    )
    # a raw cell read as missing ('NA', '?', empty): only then are those columns read again, as
    # text (per-column na_values would cost far more on a wide file than this second read)
    again = [c for c in raw_columns if df[c].isna().any()]
    if again:
        raw = _pandas_read(text, path, usecols=again, dtype=str, na_filter=False, **base)
        for c in again:
            df[c] = raw[c]
    return _drop_unnamed(df, names, path, text, delimiter)


def _pandas_read(text: str, path: str | None, **kw: Any) -> pd.DataFrame:
    """``pandas.read_csv`` whose failures (and silently dropped cells) are DataErrors."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        try:
            df = pd.read_csv(io.StringIO(text), **kw)
        except pd.errors.EmptyDataError:
            raise DataError("empty file: no header and no row", path=path) from None
        except (pd.errors.ParserError, ValueError) as exc:
            m = re.search(r"line (\d+)", str(exc))
            line = int(m.group(1)) if m else None
            raise DataError(f"malformed CSV: {_short(exc)}", path=path, line=line) from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        # every row holds more cells than the header: pandas dropped the extra ones
        _refuse_long_rows(text, kw["sep"], len(kw["names"]), path)
    if df.shape[0] == 0:
        raise DataError("no data row after the header", path=path)
    return df


def _short(exc: Exception) -> str:
    """An exception's message on one line, without pandas' 'C error:' prefix."""
    return " ".join(str(exc).replace("Error tokenizing data. C error: ", "").split())


def _refuse_long_rows(text: str, delimiter: str, n_header: int, path: str | None) -> None:
    """Refuse the first row holding a non-empty cell beyond the header's columns.

    Called when every row has more cells than the header; rows whose extra cells are all empty
    (a trailing delimiter on every line) are accepted.
    """
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = True
    for row in _checked(reader, path):
        if _is_blank(row) or header:
            header = header and _is_blank(row)
            continue
        if any(c.strip() for c in row[n_header:]):
            raise DataError(
                f"the row has {len(row)} cells but the header names {n_header} columns",
                path=path,
                line=reader.line_num,
            )


def _drop_unnamed(
    df: pd.DataFrame, names: list[str], path: str | None, text: str, delimiter: str
) -> pd.DataFrame:
    """Drop trailing unnamed columns that are empty (a trailing delimiter); refuse others."""
    unnamed = [j for j, c in enumerate(names) if not c]
    for j in unnamed:
        col = df[_placeholder(j)]
        filled = (col.notna() & (col.astype(str).str.strip() != "")).to_numpy()
        if filled.any():
            i = int(np.flatnonzero(filled)[0])
            first = LazyLines(text, delimiter, df.shape[0])[i]
            raise DataError(
                f"column {j + 1} has no name in the header but holds values (the first on line "
                f"{first}): name it, or remove the cells",
                path=path,
                line=1,
            )
    if unnamed:
        df = df.drop(columns=[_placeholder(j) for j in unnamed])
    return df


def pick_column(
    df: pd.DataFrame, given: str | None, candidates: Sequence[str], what: str, path: str | None
) -> str | None:
    """The column ``given`` (refused when absent), else the first of ``candidates`` (any case).

    Parameters
    ----------
    df : DataFrame
        Only its column names are used.
    given : str, optional
        The name the caller asked for.
    candidates : sequence of str
        Lower-case names to look for when ``given`` is None.
    what : str
        ``"label"``, ``"id"``, ``"text"``: for the message.
    path : str, optional
        For the message.

    Returns
    -------
    str or None
        None when no candidate is present.
    """
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
    df: pd.DataFrame, cols: list[str], path: str | None, row_lines: LazyLines
) -> np.ndarray:
    """The feature columns ``cols`` as a float64 matrix (NaN where missing).

    Columns pandas read as numbers are taken in one block; only a column holding some other
    text is looked at cell by cell, to name its first bad cell.
    """
    if not cols:
        return np.empty((df.shape[0], 0), dtype=np.float64)
    block = df[cols]
    numeric = np.array([dt.kind in "fiub" for dt in block.dtypes])
    if numeric.all():
        return block.to_numpy(dtype=np.float64)
    X = np.empty((df.shape[0], len(cols)), dtype=np.float64)
    if numeric.any():
        X[:, numeric] = block.iloc[:, np.flatnonzero(numeric)].to_numpy(dtype=np.float64)
    for j in np.flatnonzero(~numeric):
        c = cols[j]
        num, bad, s = to_float_column(df[c])
        if s is not None and bad.any():
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
    df: pd.DataFrame, col: str, sep: str, path: str | None, row_lines: LazyLines
) -> tuple[list[tuple[str, ...]], bool]:
    """The label cells split at ``sep`` (multi-label when some cell holds it); none empty."""
    if not sep:
        raise DataError("label_sep must not be empty (it separates several labels of a cell)")
    vals = df[col].fillna("").astype(str).str.strip().tolist()
    multi = any(sep in v for v in vals)
    raw = [split_multi(v, sep) if multi else ((v,) if v else ()) for v in vals]
    for i, labs in enumerate(raw):
        if not labs:
            what = "empty label" if not multi else f"no label in the cell {vals[i]!r}"
            raise DataError(what, path=path, line=int(row_lines[i]), column=col)
    broken = next((i for i, v in enumerate(vals) if "\n" in v), None)
    if broken is not None:  # a quoted line break (CR or LF) inside the cell
        raise DataError(
            f"the label {vals[broken]!r} holds a line break: a node name is one line",
            path=path,
            line=int(row_lines[broken]),
            column=col,
        )
    return raw, multi


@dataclass
class Table:
    """A CSV read with its label and id columns found.

    Attributes
    ----------
    df : DataFrame
    text : str
    delimiter : str
    row_lines : LazyLines
        File line of every row.
    label_col : str
    id_col : str or None
    others : list of str
        The remaining columns (features, or the text column).
    X : ndarray of shape (n_rows, len(others)), optional
        The features, when the fast path read them (``df`` then holds only the label and id
        columns); None when they are columns of ``df``.
    """

    df: pd.DataFrame
    text: str
    delimiter: str
    row_lines: LazyLines
    label_col: str
    id_col: str | None
    others: list[str] = field(default_factory=list)
    X: np.ndarray | None = None

    def labels(
        self, taxonomy: Taxonomy | PathArg | None, label_sep: str, path: str | None
    ) -> tuple[np.ndarray, Taxonomy]:
        """``(y, taxonomy)`` of the label column (see :func:`~hierlab.io.labels.resolve_labels`)."""
        raw, multi = _raw_label_column(self.df, self.label_col, label_sep, path, self.row_lines)
        tax = taxonomy_arg(taxonomy)
        return resolve_labels(raw, tax, multi, path, self.row_lines, self.label_col)

    def base_meta(self, **meta: Any) -> dict[str, Any]:
        """``meta`` with the ids (``meta["ids"]``) when the table has an id column."""
        if self.id_col is not None:
            meta["ids"] = self.df[self.id_col].to_numpy(dtype=object)
        return meta


def prepare_table(
    text: str,
    path: str | None,
    label_column: str | None,
    id_column: str | None,
    filename: str | None,
    text_mode: bool = False,
    text_column: str | None = None,
) -> Table:
    """Read the CSV ``text`` and find its label and id columns.

    The label, id (and in ``text_mode`` text) columns are read as the text of their cells, the
    others as numbers where they can be. In ``text_mode`` without a known text column every
    column is text. A trailing delimiter on the header (and the rows) adds no column.

    Raises
    ------
    DataError
        For an empty file, a duplicate or missing column name, malformed CSV, rows longer than
        the header, more columns than ``max_features``, or no label column.
    """
    delim = sniff_delimiter(text, filename or path)
    names = header_names(text, delim, path)
    hdr = pd.DataFrame(columns=[c for c in names if c])
    lab = pick_column(hdr, label_column, LABEL_COLUMNS, "label", path)
    if lab is None:
        raise DataError(
            "no label column: name it one of "
            f"{', '.join(LABEL_COLUMNS[:5])}, or pass label_column=...; columns are "
            f"{', '.join(hdr.columns[:10])}",
            path=path,
            line=1,
        )
    idc = pick_column(hdr, id_column, ID_COLUMNS, "id", path)
    if idc == lab:
        idc = None
    txt = pick_column(hdr, text_column, TEXT_COLUMNS, "text", path) if text_mode else None
    keep = [c for c in dict.fromkeys((lab, idc, txt)) if c is not None]
    n_features = sum(1 for c in names if c and c not in keep)
    if not text_mode and n_features == 0:
        raise DataError(
            f"no feature column: the header names only {', '.join(keep)}; a data file needs "
            "numeric feature columns beside its label (or format='text' with a text column)",
            path=path,
            line=1,
        )
    if not text_mode and n_features > limits.current().max_features:
        raise DataError(
            f"the header declares {n_features:,} feature columns "
            + limits.how_to_raise("max_features"),
            path=path,
            line=1,
        )
    fast = None if text_mode else _fast_numeric_table(text, delim, names, keep)
    if fast is not None:
        df, X = fast
        others = [c for c in names if c not in keep]
        return Table(df, text, delim, LazyLines(text, delim, df.shape[0]), lab, idc, others, X)
    df = _read_frame(text, path, delim, names, None if text_mode and txt is None else keep)
    row_lines = LazyLines(text, delim, df.shape[0])
    others = [c for c in df.columns if c not in (lab, idc)]
    return Table(df, text, delim, row_lines, lab, idc, others)


#: the characters of a plain number cell (digits, sign, point, exponent, spaces)
_PLAIN_NUMBERS = re.compile(r"[0-9eE+\-. \t]*")
#: from this many columns on, pandas' per-column cost dominates and the fast path is tried
_FAST_MIN_COLUMNS = 64


def _fast_numeric_table(
    text: str, delimiter: str, names: list[str], raw_columns: list[str]
) -> tuple[pd.DataFrame, np.ndarray] | None:
    """Read a wide, plain numeric CSV without pandas' per-column cost; None when it is not one.

    The fast path takes files with at least :data:`_FAST_MIN_COLUMNS` columns, no quoting, no
    unnamed column, every data row exactly as wide as the header, and every feature cell a plain
    number (digits, sign, point, exponent). Anything else (a missing value, a quoted cell, a
    ragged row, a bad cell) returns None and pandas reads the file, naming any problem; both
    paths give the same data set on the files the fast path takes.

    Returns
    -------
    (DataFrame, ndarray) or None
        The ``raw_columns`` as the stripped text of their cells, and the feature matrix (float64,
        the other columns in header order).
    """
    n = len(names)
    if n < _FAST_MIN_COLUMNS or '"' in text or "" in names:
        return None
    rows = [ln.split(delimiter) for ln in text.split("\n") if ln and not ln.isspace()][1:]
    if not rows or any(len(r) != n for r in rows):
        return None
    raw_idx = [names.index(c) for c in raw_columns]
    feat_idx = sorted(set(range(n)) - set(raw_idx))
    if len(feat_idx) < 2:  # only under a lowered _FAST_MIN_COLUMNS: itemgetter needs two indices
        return None
    flat = list(itertools.chain.from_iterable(map(operator.itemgetter(*feat_idx), rows)))
    if not _PLAIN_NUMBERS.fullmatch("".join(flat)):
        return None
    try:
        X = np.fromiter(map(float, flat), dtype=np.float64, count=len(flat))
    except ValueError:  # an empty cell, a lone sign or point: pandas decides
        return None
    df = pd.DataFrame({c: [r[j].strip() for r in rows] for c, j in zip(raw_columns, raw_idx)})
    return df, X.reshape(len(rows), len(feat_idx))


def looks_like_text(s: pd.Series) -> bool:
    """Whether a column holds free text: some cell is not a number, and cells are long or
    mostly hold white space."""
    v = s.astype(str).str.strip()
    non_num = pd.to_numeric(v.where(~v.isin(MISSING), "0"), errors="coerce").isna()
    if not non_num.any():
        return False
    return bool(v.str.contains(r"\s", regex=True).mean() > 0.5 or v.str.len().mean() > 20)


# ============================================================================ reading, writing
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
    spath, text = source_text(path, text, "read_csv_dataset")
    tab = prepare_table(text, spath, label_column, id_column, spath)
    X = tab.X if tab.X is not None else _numeric_block(tab.df, tab.others, spath, tab.row_lines)
    refuse_nonfinite(X, True, spath, tab.row_lines, tab.others)
    X, means = impute(X, impute_means)
    y, tax = tab.labels(taxonomy, label_sep, spath)
    return HierDataset(
        X,
        y,
        tax,
        feature_names=list(tab.others),
        name=dataset_name(name, spath, "csv"),
        description=f"CSV file {spath}" if spath else "CSV data",
        meta=tab.base_meta(impute_means=means, format="csv"),
    )


def write_csv_dataset(ds: HierDataset, path: PathArg, label_sep: str = ";") -> None:
    """Write ``ds`` (dense or sparse) as a CSV: feature columns, then a ``label`` column.

    Parameters
    ----------
    ds : HierDataset
    path : path-like
    label_sep : str, default ";"
        Separator of the labels of a multi-label row.
    """
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
    names = ds.feature_names or [f"x{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    df["label"] = [label_sep.join(v) if isinstance(v, tuple) else v for v in ds.y]
    df.to_csv(path, index=False)
