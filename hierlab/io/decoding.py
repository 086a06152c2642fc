"""Bytes to text, and the low-level helpers every reader shares.

Decoding (:func:`decode_bytes`), decided once for every reader:

- UTF-8 (a BOM is honoured), UTF-16 with a BOM (or BOM-less UTF-16 of Latin text); binary
  content (a NUL byte) is refused.
- A file that is not valid UTF-8 is read as **one legacy encoding, consistently**: Windows-1252
  (cp1252, a superset of latin-1's printable characters, with the typographic quotes of Windows
  editors). It is refused, naming the line of the first offending byte, when it also holds valid
  UTF-8 multi-byte characters (mixed encodings: one stray byte never turns a UTF-8 file into
  mojibake such as ``cafÃ©``), or when a byte is undefined in Windows-1252. Pass
  ``encoding=...`` to declare another encoding; the whole file must then decode in it.
- Names are compared in Unicode normal form C: the text is NFC-normalised, so that ``é`` written
  precomposed or as ``e`` plus a combining accent is one name. A byte-order mark in the middle
  of the text (two files pasted together) is dropped, like the one at its start.

The other helpers read a regular file's bytes (:func:`read_bytes`: FIFOs, devices, directories
and symlinks to them are refused, as are files over ``max_file_bytes``), take a file name's
extension, split a multi-label cell, refuse non-finite features, impute missing values and give
a CSR matrix int32 indices.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import unicodedata
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.exceptions import DataError

__all__ = [
    "LEGACY_ENCODING",
    "MISSING",
    "PathArg",
    "check_path",
    "clean_text",
    "dataset_name",
    "decode_bytes",
    "extension",
    "impute",
    "int32_csr",
    "open_regular",
    "read_bounded",
    "read_bytes",
    "refuse_nonfinite",
    "source_text",
    "split_multi",
    "to_float_column",
]

PathArg = str | PathLike[str]

#: Cell values that stand for a missing value in a feature column (CSV; ARFF uses ``?``).
#: They are ordinary text in a label, id or text column.
MISSING = ("?", "", "NA", "N/A", "NaN", "nan", "null", "NULL")

#: The one legacy encoding a file that is not UTF-8 is read in (unless one is declared).
LEGACY_ENCODING = "cp1252"

_SNIFF_BYTES = 1 << 16

#: a well-formed UTF-8 multi-byte character (RFC 3629): its presence beside an invalid byte
#: means the file mixes UTF-8 with something else
_UTF8_MULTIBYTE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)


# ============================================================================ text decoding
def decode_bytes(data: bytes, path: str | None = None, encoding: str | None = None) -> str:
    """Decode file content (see the module docstring for the rules).

    Parameters
    ----------
    data : bytes
        The raw file content.
    path : str, optional
        Only used in error messages.
    encoding : str, optional
        The file's declared encoding (any Python codec name); the whole file must decode in it.
        Default: UTF-8 / UTF-16 by their BOM, else UTF-8, else Windows-1252 when the file is
        consistently in it.

    Returns
    -------
    str
        The text, NFC-normalised, without byte-order marks, ``\\r\\n`` and ``\\r`` turned
        into ``\\n``.

    Raises
    ------
    DataError
        Naming the line: binary content (a NUL byte outside UTF-16 text), invalid UTF-16,
        invalid UTF-8 in a UTF-8 file (mixed encodings), a byte undefined in Windows-1252, or
        content invalid in the declared encoding.
    """
    if encoding is not None:
        text = _decode_declared(data, encoding, path)
    elif data.startswith(b"\xef\xbb\xbf"):
        text = _decode_as(data, "utf-8-sig", path)
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = _decode_as(data, "utf-16", path)
    elif b"\x00" in data[:_SNIFF_BYTES]:
        enc = _utf16_without_bom(data)
        if enc is None:
            offset = data.index(b"\x00")
            raise DataError(
                f"binary content (a NUL byte at offset {offset}): not a text "
                "file. Upload a CSV, svmlight, ARFF or taxonomy text file (UTF-8, Windows-1252/"
                "latin-1, or UTF-16 with a BOM)",
                path=path,
                line=data.count(b"\n", 0, offset) + 1,
            )
        text = _decode_as(data, enc, path)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = _decode_legacy(data, exc, path)
    return clean_text(text, path)


def _bad_byte(data: bytes, offset: int) -> tuple[int, str]:
    """``(line, description)`` of the byte at ``offset``: its value and its place on the line."""
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, f"byte 0x{data[offset]:02x} (byte {col} of the line)"


def _decode_legacy(data: bytes, exc: UnicodeDecodeError, path: str | None) -> str:
    """Not UTF-8: the whole file in Windows-1252, unless it mixes encodings (refused)."""
    line, what = _bad_byte(data, exc.start)
    if _UTF8_MULTIBYTE.search(data):
        raise DataError(
            f"{what} is not valid UTF-8, while the file holds UTF-8 text elsewhere (mixed "
            "encodings): re-save the file as UTF-8, or pass encoding=... if it is all in one "
            "other encoding",
            path=path,
            line=line,
        )
    try:
        return data.decode(LEGACY_ENCODING)
    except UnicodeDecodeError as exc2:
        line, what = _bad_byte(data, exc2.start)
        raise DataError(
            f"{what} is neither UTF-8 nor Windows-1252 text: re-save the file as UTF-8, or "
            "pass encoding=... (e.g. encoding='latin-1')",
            path=path,
            line=line,
        ) from None


def _decode_declared(data: bytes, encoding: str, path: str | None) -> str:
    """``data`` decoded in the declared ``encoding``; the first bad byte's line when not."""
    try:
        codecs.lookup(encoding)
    except (LookupError, TypeError):
        raise DataError(f"unknown encoding {encoding!r}", path=path) from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line, what = _bad_byte(data, exc.start)
        raise DataError(
            f"{what} is not valid {encoding} text (the declared encoding)", path=path, line=line
        ) from None


def _decode_as(data: bytes, encoding: str, path: str | None) -> str:
    """``data`` decoded as ``encoding``; a DataError naming the encoding and line when not."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line, what = _bad_byte(data, exc.start)
        if encoding.startswith("utf-16"):  # a line count in bytes means nothing here
            raise DataError(f"invalid {encoding.upper()} text: {exc}", path=path) from None
        raise DataError(f"{what} is not valid {encoding.upper()}", path=path, line=line) from None


def clean_text(text: str, path: str | None = None) -> str:
    """Refuse text holding a NUL (binary content); normalise line ends, BOMs and Unicode.

    A trailing Ctrl-Z (a DOS end-of-file mark) is dropped; ``\\r\\n`` and ``\\r`` become
    ``\\n``; every U+FEFF (a byte-order mark, at the start
    or pasted mid-file) is dropped; the text is put in Unicode normal form C (NFC), so that one
    name has one spelling.

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
    if text.endswith("\x1a"):  # a DOS end-of-file mark (Ctrl-Z), not content
        text = text.rstrip("\x1a")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    if not text.isascii() and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
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
_FILE_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_path(path: Any) -> str:
    """``path`` as a ``str``; a DataError unless it is a ``str`` or ``os.PathLike`` of ``str``.

    Parameters
    ----------
    path : str or path-like
    """
    if isinstance(path, str):
        return path
    if isinstance(path, PathLike):
        fs = os.fspath(path)
        if isinstance(fs, str):
            return fs
    raise DataError(
        f"path must be a str or a pathlib.Path, got {type(path).__name__} "
        "(to parse content held in memory use read_dataset_bytes / parse_taxonomy_text)"
    )


def open_regular(path: PathArg) -> BinaryIO:
    """Open ``path`` for reading, refusing anything but a regular file of acceptable size.

    The file is opened without blocking (a FIFO would otherwise wait for a writer forever) and
    checked on the opened descriptor (no race with a swapped symlink): FIFOs, devices (also
    through a symlink such as one to ``/dev/zero``), sockets and directories are refused, and so
    are files larger than ``max_file_bytes`` (:mod:`hierlab.core.limits`).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    BinaryIO
        The open file (close it, e.g. with ``with``).

    Raises
    ------
    DataError
        Naming the file: missing, a directory, not a regular file, too large, unreadable.
    """
    spath = check_path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(spath, flags)
    except FileNotFoundError:
        raise DataError("no such file", path=spath) from None
    except IsADirectoryError:
        raise DataError("is a directory, not a file", path=spath) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror}", path=spath) from None
    try:
        st = os.fstat(fd)
        mode, size = st.st_mode, st.st_size
        if stat.S_ISDIR(mode):
            raise DataError("is a directory, not a file", path=spath)
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "a special file")
            raise DataError(f"not a regular file ({kind}): only regular files are read", path=spath)
        cap = limits.current().max_file_bytes
        if size > cap:
            raise DataError(
                f"the file has {size:,} bytes, more than hierlab reads "
                + limits.how_to_raise("max_file_bytes"),
                path=spath,
            )
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return fh


def read_bytes(path: PathArg) -> bytes:
    """The content of the regular file ``path`` (see :func:`open_regular`).

    The file is read by its size (``fstat``), in chunks of at most :data:`READ_CHUNK` bytes:
    memory follows the data, never the limit (a read sized by ``max_file_bytes`` would ask for
    4 GiB up front and fail under an address-space limit such as ``ulimit -v``).

    Raises
    ------
    DataError
        When the file is missing, is a directory, a FIFO or a device, is larger than
        ``max_file_bytes`` (also when it grows past it while being read), or cannot be read.
    """
    with open_regular(path) as fh:
        cap = limits.current().max_file_bytes
        try:
            size = os.fstat(fh.fileno()).st_size
            data = read_bounded(fh, size, cap)
        except OSError as exc:
            raise DataError(f"cannot read: {exc.strerror}", path=str(path)) from None
    if data is None:  # grew while being read
        raise DataError(
            "the file is larger than hierlab reads " + limits.how_to_raise("max_file_bytes"),
            path=str(path),
        )
    return data


#: the largest single read of :func:`read_bounded` (16 MiB)
READ_CHUNK = 1 << 24


def read_bounded(fh: BinaryIO, expected: int, cap: int) -> bytes | None:
    """Up to ``cap`` bytes of ``fh``, read in chunks; None when it holds more than ``cap``.

    Parameters
    ----------
    fh : binary file
    expected : int
        The size the file declares (its ``fstat`` size): the first chunk is sized by it, so
        that a file of the size it says is read in one allocation of that size.
    cap : int
        The most bytes accepted.

    Returns
    -------
    bytes or None
    """
    parts: list[bytes] = []
    total = 0
    hint = min(max(expected, 0), cap)
    while True:
        want = hint - total if total < hint else READ_CHUNK
        chunk = fh.read(max(1, min(want, READ_CHUNK, cap + 1 - total)))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        if total > cap:
            return None
    return b"".join(parts)


def source_text(
    path: PathArg | None, text: str | None, reader: str, encoding: str | None = None
) -> tuple[str | None, str]:
    """``(path as str or None, text)``: ``text`` cleaned, else the file ``path`` decoded.

    Parameters
    ----------
    path : path-like, optional
        The file to read when ``text`` is None; always the name used in error messages.
    text : str, optional
        Content already in memory.
    reader : str
        The calling reader's name, for the error raised when both are None.
    encoding : str, optional
        The file's declared encoding (see :func:`decode_bytes`).
    """
    spath = None if path is None else check_path(path)
    if text is not None:
        if not isinstance(text, str):
            raise DataError(f"{reader}: text must be a str, got {type(text).__name__}", spath)
        return spath, clean_text(text, spath)
    if path is None:
        raise DataError(f"{reader} needs a path or text")
    return spath, decode_bytes(read_bytes(path), spath, encoding)


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
    if not sep:
        raise DataError("the separator of several labels (label_sep) must not be empty")
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
    """``means`` as float64, refused unless numbers of shape ``(n_features,)``."""
    try:
        means = np.asarray(means, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(
            f"impute_means must be {n_features} numbers, got {str(means)[:40]!r}"
        ) from None
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
