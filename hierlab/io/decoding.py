"""Bytes to text, and the low-level helpers every reader shares.

Text is decoded as UTF-8 (a BOM is honoured), UTF-16 with a BOM (or BOM-less UTF-16 of Latin
text), and latin-1 when the bytes are not valid UTF-8; binary content is refused. The other
helpers read a file's bytes, take a file name's extension, split a multi-label cell, refuse
non-finite features, impute missing values and give a CSR matrix int32 indices.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.exceptions import DataError

__all__ = [
    "MISSING",
    "PathArg",
    "clean_text",
    "dataset_name",
    "decode_bytes",
    "extension",
    "impute",
    "int32_csr",
    "read_bytes",
    "refuse_nonfinite",
    "source_text",
    "split_multi",
    "to_float_column",
]

PathArg = str | PathLike[str]

#: Cell values that stand for a missing value (CSV; ARFF uses ``?``).
MISSING = ("?", "", "NA", "N/A", "NaN", "nan", "null", "NULL")

_SNIFF_BYTES = 1 << 16


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

    Raises
    ------
    DataError
        For binary content (a NUL byte outside UTF-16 text) or invalid UTF-16.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        text = data[3:].decode("utf-8", errors="replace")
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = _decode_as(data, "utf-16", path)
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
        text = _decode_as(data, enc, path)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    return clean_text(text, path)


def _decode_as(data: bytes, encoding: str, path: str | None) -> str:
    """``data`` decoded as ``encoding``; a DataError naming the encoding when it is not."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DataError(f"invalid {encoding.upper()} text: {exc}", path=path) from None


def clean_text(text: str, path: str | None = None) -> str:
    """Refuse text holding a NUL (binary content); turn ``\\r\\n`` and ``\\r`` into ``\\n``.

    Parameters
    ----------
    text : str
        Decoded content.
    path : str, optional
        Only used in error messages.

    Returns
    -------
    str
    """
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise DataError("binary content (a NUL character): not a text file", path=path, line=line)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


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


# ============================================================================ files
def read_bytes(path: PathArg) -> bytes:
    """The content of the file ``path``.

    Raises
    ------
    DataError
        When the file is missing, is a directory or cannot be read.
    """
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise DataError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a file", path=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path=str(path)) from None


def source_text(path: PathArg | None, text: str | None, reader: str) -> tuple[str | None, str]:
    """``(path as str or None, text)``: ``text`` cleaned, else the file ``path`` decoded.

    Parameters
    ----------
    path : path-like, optional
        The file to read when ``text`` is None; always the name used in error messages.
    text : str, optional
        Content already in memory.
    reader : str
        The calling reader's name, for the error raised when both are None.
    """
    spath = None if path is None else str(path)
    if text is not None:
        return spath, clean_text(text, spath)
    if path is None:
        raise DataError(f"{reader} needs a path or text")
    return spath, decode_bytes(read_bytes(path), spath)


def extension(filename: str | None) -> str:
    """The lower-case extension of ``filename`` (``".csv"``), a compression suffix removed."""
    if not filename:
        return ""
    name = str(filename).lower()
    for comp in (".gz", ".bz2", ".xz"):
        if name.endswith(comp):
            name = name[: -len(comp)]
    return os.path.splitext(name)[1]


def dataset_name(name: str | None, spath: str | None, default: str) -> str:
    """A data set's name: ``name``, else the file stem, else ``default``."""
    return name or (Path(spath).stem if spath else default)


# ============================================================================ cells and values
def split_multi(raw: str, sep: str) -> tuple[str, ...]:
    """The non-empty, stripped parts of ``raw`` split at ``sep`` (the labels of one cell)."""
    return tuple(p.strip() for p in raw.split(sep) if p.strip())


def to_float_column(
    col: pd.Series, markers: Sequence[str] = MISSING
) -> tuple[np.ndarray, np.ndarray, pd.Series | None]:
    """A column as float64, its missing cells NaN.

    Parameters
    ----------
    col : Series
        A column as pandas read it (numbers, or text when some cell is not a number).
    markers : sequence of str, default MISSING
        Cell texts that mark a missing value, besides the cells pandas read as NaN.

    Returns
    -------
    values : ndarray of float64
    bad : ndarray of bool
        Cells that are neither a number nor missing.
    text : Series or None
        The stripped text of the cells (None when pandas read the column as numbers).
    """
    if col.dtype.kind in "fiub":
        num = col.to_numpy(dtype=np.float64)
        return num, np.zeros(len(num), dtype=bool), None
    s = col.astype(str).str.strip()
    missing = (col.isna() | s.isin(markers)).to_numpy()
    num = pd.to_numeric(s.where(~missing, "nan"), errors="coerce").to_numpy(dtype=np.float64)
    return num, np.isnan(num) & ~missing, s


def _first_nonfinite(X: np.ndarray, allow_nan: bool) -> tuple[int, int] | None:
    """(row, column) of the first infinite (or, unless ``allow_nan``, NaN) entry, or None."""
    bad = np.isinf(X) if allow_nan else ~np.isfinite(X)
    if not bad.any():
        return None
    i, j = np.argwhere(bad)[0]
    return int(i), int(j)


def refuse_nonfinite(
    X: np.ndarray,
    allow_nan: bool,
    path: str | None,
    lines: Any,
    columns: Sequence[str],
) -> None:
    """Raise DataError naming the line and column of the first Inf (or NaN) value.

    ``1e400`` parses as infinity: the message says so. NaN stands for a missing value only
    where ``allow_nan`` (CSV, ARFF ``?``), and is imputed afterwards.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_columns)
    allow_nan : bool
        NaN marks a missing value (not refused).
    path : str, optional
        For the message.
    lines : indexable of int, optional
        File line number of every row (None: no line in the message).
    columns : sequence of str
        Column names, for the message.
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


def impute(X: Any, means: np.ndarray | None) -> tuple[Any, np.ndarray]:
    """Replace NaN by the column means.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Dense, or CSR whose stored NaN are the missing cells (implicit zeros count as values).
    means : ndarray of shape (n_features,), optional
        The means to use; computed here when None (0 for an all-NaN column).

    Returns
    -------
    X : ndarray or csr_matrix
        A copy without NaN (``X`` itself when dense with nothing missing).
    means : ndarray of shape (n_features,)
        The means used.
    """
    if sp.issparse(X):
        return _impute_sparse(X, means)
    if means is None:
        with np.errstate(invalid="ignore"):
            counts = np.sum(~np.isnan(X), axis=0)
            sums = np.nansum(X, axis=0)
            means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    means = _checked_means(means, X.shape[1])
    nan = np.isnan(X)
    if nan.any():
        X = np.where(nan, means[None, :], X)
    return X, means


def _impute_sparse(X: Any, means: np.ndarray | None) -> tuple[sp.csr_matrix, np.ndarray]:
    """:func:`impute` for a sparse ``X`` (a CSR copy, explicit zeros removed)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    nan = np.isnan(X.data)
    cols = X.indices
    if means is None:
        n_nan = np.bincount(cols[nan], minlength=X.shape[1])
        sums = np.bincount(cols[~nan], weights=X.data[~nan], minlength=X.shape[1])
        counts = X.shape[0] - n_nan
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    means = _checked_means(means, X.shape[1])
    X.data[nan] = means[cols[nan]]
    X.eliminate_zeros()
    return X, means


def _checked_means(means: Any, n_features: int) -> np.ndarray:
    """``means`` as float64, refused unless of shape ``(n_features,)``."""
    means = np.asarray(means, dtype=np.float64)
    if means.shape != (n_features,):
        raise DataError(f"impute_means has shape {means.shape}, expected ({n_features},)")
    return means


def int32_csr(X: Any) -> sp.csr_matrix:
    """``X`` as CSR float64 with int32 indices when they fit (LinearSVC rejects int64 ones)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.nnz < np.iinfo(np.int32).max:
        X.indices = X.indices.astype(np.int32, copy=False)
        X.indptr = X.indptr.astype(np.int32, copy=False)
    return X
