"""The front door for data files: guess the format, then call its reader.

:func:`load_dataset` reads a file, :func:`read_dataset_bytes` content held in memory (the app's
uploads); both guess the format (:func:`guess_dataset_format`) unless it is given, and with a
``reference`` training set read a test split so that it is encoded like the training set.
"""

from __future__ import annotations

import inspect
import io
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.arff import read_arff
from hierlab.io.csv import (
    ID_COLUMNS,
    LABEL_COLUMNS,
    TEXT_COLUMNS,
    _header_text,
    header_names,
    looks_like_text,
    pick_column,
    read_csv_dataset,
    sniff_delimiter,
)
from hierlab.io.decoding import (
    MISSING,
    PathArg,
    check_path,
    decode_bytes,
    extension,
    read_bytes,
)
from hierlab.io.svmlight import SVM_LINE, read_svmlight
from hierlab.io.text import read_text_csv

__all__ = ["DATASET_FORMATS", "guess_dataset_format", "load_dataset", "read_dataset_bytes"]

DATASET_FORMATS = ("csv", "text", "svmlight", "arff")

_SNIFF_CHARS = 200_000


def guess_dataset_format(content: str, filename: str | None = None) -> str:
    """Guess a data file's format from its extension, then its content.

    Parameters
    ----------
    content : str
        The decoded content.
    filename : str, optional
        Its extension decides first; also named in error messages.

    Returns
    -------
    {"csv", "text", "svmlight", "arff"}
        ``.arff`` -> arff; ``.svm``/``.svmlight``/``.libsvm`` -> svmlight; a CSV is ``text``
        when a column besides the label and id holds free text, else ``csv``.

    Raises
    ------
    DataError
        For content without a data line.
    """
    ext = extension(filename)
    if ext == ".arff":
        return "arff"
    if ext in (".svm", ".svmlight", ".libsvm", ".light"):
        return "svmlight"
    head = [
        ln.strip()
        for ln in content[:_SNIFF_CHARS].split("\n")[:50]
        if ln.strip() and not ln.strip().startswith(("%", "#"))
    ]
    if not head:
        raise DataError("empty file", path=filename)
    if head[0].lower().startswith(("@relation", "@attribute")):
        return "arff"
    if ext not in (".csv", ".tsv") and _looks_like_svmlight(head[:20]):
        return "svmlight"
    return _csv_or_text(content, filename)


def _looks_like_svmlight(head: list[str]) -> bool:
    """Whether the first lines read as svmlight: ``label idx:value ...`` lines."""
    if not all(SVM_LINE.match(ln) for ln in head) or not any(
        re.search(r"\s\d+:", ln) for ln in head
    ):
        return False
    toks = head[0].split()
    return len(toks) == 1 or ":" in toks[1]


def _csv_or_text(content: str, filename: str | None) -> str:
    """``"text"`` when a CSV has a text column (by name or content), else ``"csv"``.

    Only a sample is looked at: the header, then the first rows, and these only when some cell
    holds inner white space or more than 20 characters (a wide numeric file is decided by one
    regular expression, not parsed twice).
    """
    delim = sniff_delimiter(content, filename)
    try:
        names = header_names(content, delim, filename)
    except DataError:
        return "csv"  # the reader names the problem
    if any(c.lower() in TEXT_COLUMNS for c in names):
        return "text"
    head = _header_text(content)
    sample = content[len(head) : len(head) + _SNIFF_CHARS]
    d = re.escape(delim)
    if not re.search(rf"[^\s{d}][ \t]+[^\s{d}]|[^{d}\n]{{21,}}", sample):
        return "csv"
    cols = [c or f"\x00unnamed {j}" for j, c in enumerate(names)]
    try:
        df = pd.read_csv(
            io.StringIO(content[: len(head) + _SNIFF_CHARS]),
            sep=delim,
            header=0,
            names=cols,
            index_col=False,
            keep_default_na=False,
            na_values=list(MISSING),
            nrows=200,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError):
        return "csv"
    lab = pick_column(df, None, LABEL_COLUMNS, "label", filename)
    idc = pick_column(df, None, ID_COLUMNS, "id", filename)
    others = [c for c in df.columns if c not in (lab, idc)]
    if any(df[c].dtype.kind == "O" and looks_like_text(df[c].fillna("")) for c in others):
        return "text"
    return "csv"


def _reference_options(
    reference: HierDataset, fmt: str, taxonomy: Taxonomy | PathArg | None, kw: dict[str, Any]
) -> Taxonomy | PathArg | None:
    """Fill ``kw`` with what the training set ``reference`` fixes; return the taxonomy."""
    if fmt in ("csv", "arff") and "impute_means" in reference.meta:
        kw.setdefault("impute_means", reference.meta["impute_means"])
    if fmt == "text" and "vectorizer" in reference.meta:
        kw.setdefault("vectorizer", reference.meta["vectorizer"])
    if fmt == "svmlight":
        kw.setdefault("n_features", reference.n_features)
    return reference.taxonomy if taxonomy is None else taxonomy


_READERS: dict[str, Callable[..., HierDataset]] = {
    "csv": read_csv_dataset,
    "text": read_text_csv,
    "svmlight": read_svmlight,
    "arff": read_arff,
}


def _check_options(fmt: str, kw: dict[str, Any], filename: str) -> None:
    """Refuse reader options the reader of ``fmt`` does not take (named in the message)."""
    taken = set(inspect.signature(_READERS[fmt]).parameters) - {"path", "text", "data", "taxonomy"}
    unknown = sorted(set(kw) - taken)
    if unknown:
        raise DataError(
            f"unknown option {unknown[0]!r} for the {fmt} reader; its options are "
            f"{', '.join(sorted(taken))}",
            path=filename,
        )
    for k, v in kw.items():
        if (
            (k in _TEXT_OPTIONS or k.endswith("_column"))
            and v is not None
            and not isinstance(v, str)
        ):
            raise DataError(f"option {k} must be a str, got {type(v).__name__}", path=filename)


#: reader options that hold text (a column name, a separator, a name)
_TEXT_OPTIONS = ("label_sep", "name", "delimiter", "sep")


def read_dataset_bytes(
    data: bytes,
    filename: str,
    taxonomy: Taxonomy | PathArg | None = None,
    format: str | None = None,
    reference: HierDataset | None = None,
    encoding: str | None = None,
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
    encoding : str, optional
        The file's encoding, when it is neither UTF-8/UTF-16 nor Windows-1252 (see
        :func:`~hierlab.io.decoding.decode_bytes`).
    **kw
        Passed to the reader (:func:`~hierlab.io.csv.read_csv_dataset`,
        :func:`~hierlab.io.text.read_text_csv`, :func:`~hierlab.io.svmlight.read_svmlight`,
        :func:`~hierlab.io.arff.read_arff`).

    Returns
    -------
    HierDataset

    Raises
    ------
    DataError
        Naming the file and the line, column or node of the problem; also for an unknown
        format or an option the format's reader does not take.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DataError(f"data must be bytes, got {type(data).__name__}", path=str(filename))
    text = decode_bytes(bytes(data), filename, encoding)
    if format is not None and not isinstance(format, str):
        raise DataError(f"format must be a str, got {type(format).__name__}", path=filename)
    fmt = (format or guess_dataset_format(text, filename)).lower()
    fmt = "svmlight" if fmt in ("libsvm", "svm") else fmt
    if fmt not in _READERS:
        raise DataError(
            f"unknown data format {format!r}; expected one of {', '.join(DATASET_FORMATS)}",
            path=filename,
        )
    _check_options(fmt, kw, filename)
    if reference is not None:
        taxonomy = _reference_options(reference, fmt, taxonomy, kw)
    if fmt == "svmlight":
        ds = read_svmlight(filename, taxonomy=taxonomy, data=text.encode("utf-8"), **kw)
    else:
        ds = _READERS[fmt](filename, taxonomy=taxonomy, text=text, **kw)
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
        Reader options (``label_column``, ``label_sep``, ``impute_means``, ``vectorizer``, ...)
        and ``encoding`` (see :func:`read_dataset_bytes`).

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
    spath = check_path(path)
    return read_dataset_bytes(
        read_bytes(spath), spath, taxonomy=taxonomy, format=format, reference=reference, **kw
    )
