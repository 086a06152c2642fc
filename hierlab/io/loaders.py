"""The front door for data files: guess the format, then call its reader.

:func:`load_dataset` reads a file, :func:`read_dataset_bytes` content held in memory (the app's
uploads); both guess the format (:func:`guess_dataset_format`) unless it is given, and with a
``reference`` training set read a test split so that it is encoded like the training set.
"""

from __future__ import annotations

import io
import re
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
    looks_like_text,
    pick_column,
    read_csv_dataset,
    sniff_delimiter,
)
from hierlab.io.decoding import MISSING, PathArg, decode_bytes, extension, read_bytes
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
    """``"text"`` when a CSV has a text column (by name or content), else ``"csv"``."""
    try:
        delim = sniff_delimiter(content, filename)
        df = pd.read_csv(
            io.StringIO(content[:_SNIFF_CHARS]),
            sep=delim,
            keep_default_na=False,
            na_values=list(MISSING),
            nrows=200,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return "csv"
    df.columns = [str(c).strip() for c in df.columns]
    lab = pick_column(df, None, LABEL_COLUMNS, "label", filename)
    idc = pick_column(df, None, ID_COLUMNS, "id", filename)
    lower = {c.lower() for c in df.columns}
    if any(c in lower for c in TEXT_COLUMNS):
        return "text"
    others = [c for c in df.columns if c not in (lab, idc)]
    if any(df[c].dtype == object and looks_like_text(df[c].fillna("")) for c in others):
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
        Passed to the reader (:func:`~hierlab.io.csv.read_csv_dataset`,
        :func:`~hierlab.io.text.read_text_csv`, :func:`~hierlab.io.svmlight.read_svmlight`,
        :func:`~hierlab.io.arff.read_arff`).

    Returns
    -------
    HierDataset
    """
    text = decode_bytes(data, filename)
    fmt = (format or guess_dataset_format(text, filename)).lower()
    if fmt in ("libsvm", "svm"):
        fmt = "svmlight"
    if reference is not None:
        taxonomy = _reference_options(reference, fmt, taxonomy, kw)
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
        read_bytes(path), str(path), taxonomy=taxonomy, format=format, reference=reference, **kw
    )
