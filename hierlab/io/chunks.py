"""Data sets larger than memory: a file read as fixed-size blocks of rows in one feature space.

:func:`iter_chunks` opens an svmlight, CSV or text-CSV file and makes one streaming pass over it
(a line, or a block of CSV rows, at a time) to learn what every block must share: the number of
rows ``N``, the labels (hence the taxonomy, built from them when none is given), and the
feature space: svmlight's width (the largest index: svmlight lists a row's indices in
increasing order, so it is each line's last one) and index base, the CSV's numeric columns, or
the text's vocabulary and inverse document frequencies (``TfidfVectorizer(sublinear_tf=True)``:
the blocks are then the rows of the TF-IDF matrix of the whole file, to rounding), and, for
a numeric CSV, the means that fill its missing cells (as the whole-file reader imputes them).
Iterating the returned :class:`ChunkedFile` (as often as needed: one pass per epoch) yields
:class:`~hierlab.core.dataset.HierDataset` blocks of ``chunk_rows`` rows, parsed by the same
code as the whole-file readers, so memory is bounded by one block whatever the file's size.

Text is read as UTF-8 (a file in another encoding is refused with its line). A test file is read
in the training file's space with ``reference=`` (its width, vocabulary and taxonomy).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.csv import ID_COLUMNS, LABEL_COLUMNS, TEXT_COLUMNS, pick_column
from hierlab.io.decoding import PathArg, check_path, int32_csr, open_regular, split_multi
from hierlab.io.labels import resolve_labels, taxonomy_arg
from hierlab.io.loaders import guess_dataset_format
from hierlab.io.svmlight import _load_features, _split_lines

__all__ = ["ChunkedFile", "iter_chunks"]

#: bytes read to guess the format
_HEAD_BYTES = 1 << 16


@dataclass
class ChunkedFile:
    """A file to read block by block; iterate it for :class:`HierDataset` blocks.

    Attributes
    ----------
    path : str
    format : {"svmlight", "csv", "text"}
    chunk_rows : int
        Rows per block (the last block may be shorter).
    n_samples : int
        Rows of the whole file (``N``).
    n_features : int
        Width shared by every block.
    taxonomy : Taxonomy
        Given, or built from every label of the file.
    multilabel : bool
    classes : ndarray of str
        Every label of the file (node names), sorted.
    options : dict
        What the blocks are parsed with (svmlight ``zero_based``; CSV ``label``, ``features``,
        ``sep``; text ``label``, ``text``, ``vectorizer``).
    """

    path: str
    format: str
    chunk_rows: int
    n_samples: int
    n_features: int
    taxonomy: Taxonomy
    multilabel: bool
    classes: np.ndarray
    options: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        """The number of blocks."""
        return -(-self.n_samples // self.chunk_rows)

    def __iter__(self) -> Iterator[HierDataset]:
        if self.format == "svmlight":
            return _svmlight_blocks(self)
        return _csv_blocks(self)

    def block(self, X: Any, y: np.ndarray, k: int, first_row: int) -> HierDataset:
        """Block ``k`` (its first row ``first_row`` of the file) as a data set."""
        return HierDataset(
            X,
            y,
            self.taxonomy,
            feature_names=self.options.get("feature_names"),
            name=f"{self.path} [block {k}]",
            description=f"rows {first_row}-{first_row + X.shape[0] - 1} of {self.path}",
            meta={"format": self.format, "block": k, "first_row": first_row},
        )


def iter_chunks(
    path: PathArg,
    chunk_rows: int = 10_000,
    *,
    taxonomy: Taxonomy | PathArg | None = None,
    format: str | None = None,
    label_column: str | None = None,
    text_column: str | None = None,
    label_sep: str = ";",
    reference: ChunkedFile | None = None,
) -> ChunkedFile:
    """Open ``path`` for reading in blocks of ``chunk_rows`` rows (one streaming pass first).

    Parameters
    ----------
    path : str or Path
        An svmlight, CSV (numeric features) or text-CSV file.
    chunk_rows : int, default 10000
        Rows per block.
    taxonomy : Taxonomy or path, optional
        The hierarchy; built from the file's labels when None.
    format : {"svmlight", "csv", "text"}, optional
        Guessed from the extension and the first 64 KiB when None.
    label_column, text_column : str, optional
        CSV columns (default: the usual names, as the whole-file readers).
    label_sep : str, default ";"
        Separator of several labels in a CSV cell.
    reference : ChunkedFile, optional
        A training file: read this one (a test file) in its feature space and taxonomy.

    Returns
    -------
    ChunkedFile

    Raises
    ------
    DataError
        Malformed lines (with the file's line), an unknown label, no data line.
    """
    spath = check_path(path)
    if isinstance(chunk_rows, bool) or int(chunk_rows) != chunk_rows or chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    tax = reference.taxonomy if reference is not None else taxonomy_arg(taxonomy)
    fmt = format or (reference.format if reference is not None else _guess(spath))
    if fmt == "svmlight":
        return _scan_svmlight(spath, int(chunk_rows), tax, reference)
    if fmt in ("csv", "text"):
        cols = (label_column, text_column, label_sep)
        return _scan_csv(spath, int(chunk_rows), tax, fmt, cols, reference)
    raise ParameterError(f"iter_chunks reads svmlight, csv and text files, not {fmt!r}")


def _guess(path: str) -> str:
    with open_regular(path) as fh:
        head = fh.read(_HEAD_BYTES)
    text = head.decode("utf-8", errors="replace")
    if len(head) == _HEAD_BYTES:  # a partial last line would confuse the guess
        text = text[: text.rfind("\n") + 1] or text
    return guess_dataset_format(text, path)


def _taxonomy(labels: list[str], tax: Taxonomy | None, path: str) -> Taxonomy:
    """The taxonomy of the file's distinct labels (checked against ``tax`` when given)."""
    _, out = resolve_labels([(u,) for u in labels], tax, False, path, None, "label")
    return out


# ---------------------------------------------------------------------------- svmlight
def _scan_svmlight(
    path: str, chunk_rows: int, tax: Taxonomy | None, reference: ChunkedFile | None
) -> ChunkedFile:
    """Rows, labels, width and index base of an svmlight file, a line at a time."""
    n, width, zero, multi = 0, 0, False, False
    labels: dict[str, None] = {}
    with open_regular(path) as fh:
        for k, raw in enumerate(fh, start=1):
            s = raw.split(b"#", 1)[0].strip()
            if not s:
                continue
            toks = s.split(None, 1)
            labs = split_multi(_utf8(toks[0], path, k), ",")
            multi |= len(labs) > 1
            labels.update(dict.fromkeys(labs))
            n += 1
            if len(toks) == 2:
                feats = [t for t in toks[1].split(None, 1)[:1] if not t.startswith(b"qid:")]
                last = toks[1].rsplit(None, 1)[-1]
                first_idx = _index(feats[0], path, k) if feats else 1
                zero |= first_idx == 0
                width = max(width, _index(last, path, k))
    if n == 0:
        raise DataError("no data line", path=path)
    if reference is not None:
        width, zero = reference.n_features, bool(reference.options["zero_based"])
    else:
        width += 1 if zero else 0
    taxonomy = _taxonomy(list(labels), tax, path)
    classes = np.array(sorted(labels), dtype=object)
    opts = {"zero_based": zero}
    return ChunkedFile(path, "svmlight", chunk_rows, n, width, taxonomy, multi, classes, opts)


def _utf8(b: bytes, path: str, line: int) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"not UTF-8 ({exc.reason}): a file read in blocks must be UTF-8", path=path, line=line
        ) from None


def _index(tok: bytes, path: str, line: int) -> int:
    """The index of an ``idx:value`` token."""
    idx, sep, _ = tok.partition(b":")
    if not sep or not idx.isdigit():
        raise DataError(f"expected idx:value, got {tok[:40]!r}", path=path, line=line)
    return int(idx)


def _svmlight_blocks(cf: ChunkedFile) -> Iterator[HierDataset]:
    """The blocks of an svmlight file, ``chunk_rows`` data lines each."""
    buf: list[bytes] = []
    start_line, rows, k, line = 1, 0, 0, 0
    with open_regular(cf.path) as fh:
        for line, raw in enumerate(fh, start=1):
            buf.append(raw)
            s = raw.split(b"#", 1)[0].strip()
            rows += bool(s)
            if rows == cf.chunk_rows:
                yield _svmlight_block(cf, buf, start_line, k)
                buf, start_line, rows, k = [], line + 1, 0, k + 1
    if rows:
        yield _svmlight_block(cf, buf, start_line, k)


def _svmlight_block(cf: ChunkedFile, buf: list[bytes], start_line: int, k: int) -> HierDataset:
    """Parse one block's lines (file lines from ``start_line``) as :func:`read_svmlight` does."""
    text = _utf8(b"".join(buf), cf.path, start_line).replace("\r\n", "\n")
    try:
        raw, lines, body = _split_lines(text, cf.path)
    except DataError as exc:
        raise DataError(f"{exc} (in the block from line {start_line})") from None
    lines = [ln + start_line - 1 for ln in lines]
    X = _load_features(body, lines, cf.n_features, cf.options["zero_based"], cf.path)
    y, _ = resolve_labels(raw, cf.taxonomy, cf.multilabel, cf.path, lines, "label")
    return cf.block(int32_csr(X), y, k, k * cf.chunk_rows)


# ---------------------------------------------------------------------------- CSV, text
def _scan_csv(
    path: str,
    chunk_rows: int,
    tax: Taxonomy | None,
    fmt: str,
    cols: tuple[str | None, str | None, str],
    reference: ChunkedFile | None,
) -> ChunkedFile:
    """Rows, labels and the feature space of a CSV, ``chunk_rows`` rows at a time."""
    label_column, text_column, label_sep = cols
    sep = "\t" if path.endswith(".tsv") else ","
    with open_regular(path) as fh:
        head = pd.read_csv(fh, sep=sep, nrows=0)
    lab = pick_column(head, label_column, LABEL_COLUMNS, "label", path)
    if lab is None:
        raise DataError("no label column: pass label_column=...", path=path, line=1)
    idc = pick_column(head, None, ID_COLUMNS, "id", path)
    others = [c for c in head.columns if c not in (lab, idc)]
    opts: dict[str, Any] = {"label": lab, "sep": sep, "label_sep": label_sep}
    if fmt == "text":
        tcol = pick_column(head, text_column, TEXT_COLUMNS, "text", path)
        opts["text"] = tcol if tcol is not None else (others[0] if len(others) == 1 else None)
        if opts["text"] is None:
            raise DataError("cannot tell which column holds the text: pass text_column=...", path)
    else:
        opts["features"] = others
    usecols = [lab] + ([opts["text"]] if fmt == "text" else others)
    n, multi, labels, df_counts = 0, False, {}, Counter[str]()
    sums, counts = np.zeros(len(others)), np.zeros(len(others))
    analyzer = _vectorizer().build_analyzer()
    for block in _csv_reader(path, sep, usecols, chunk_rows, {lab: str}):
        raw = _raw_labels(block[lab], label_sep)
        multi |= any(len(r) > 1 for r in raw)
        labels.update(dict.fromkeys(v for r in raw for v in r))
        n += len(block)
        if fmt == "text" and reference is None:
            for doc in block[opts["text"]].fillna("").astype(str):
                df_counts.update(set(analyzer(doc)))
        elif fmt == "csv":
            Xb = _numeric(block[others], path, n - len(block), None)
            sums += np.nansum(Xb, axis=0)
            counts += np.sum(~np.isnan(Xb), axis=0)
    if n == 0:
        raise DataError("no data line", path=path)
    if fmt == "text":
        opts["vectorizer"] = (
            reference.options["vectorizer"] if reference else _fitted_tfidf(df_counts, n, path)
        )
        opts["feature_names"] = [str(f) for f in opts["vectorizer"].get_feature_names_out()]
        width = len(opts["feature_names"])
    else:
        opts["feature_names"] = [str(c) for c in others]
        width = len(others)
        ref_means = reference.options.get("means") if reference is not None else None
        opts["means"] = ref_means if ref_means is not None else _means(sums, counts)
    taxonomy = _taxonomy(list(labels), tax, path)
    classes = np.array(sorted(labels), dtype=object)
    return ChunkedFile(path, fmt, chunk_rows, n, width, taxonomy, multi, classes, opts)


def _vectorizer(**kw: Any) -> Any:
    """The text readers' ``TfidfVectorizer(sublinear_tf=True)``."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(sublinear_tf=True, **kw)


def _fitted_tfidf(df_counts: Counter[str], n_docs: int, path: str) -> Any:
    """``TfidfVectorizer(sublinear_tf=True)`` as fitted on the whole file: its vocabulary
    (sorted terms) and ``idf = ln((1 + n) / (1 + df)) + 1`` (scikit-learn's smooth idf)."""
    if not df_counts:
        raise DataError("cannot vectorise the text: empty vocabulary", path=path)
    terms = sorted(df_counts)
    vec = _vectorizer(vocabulary={t: j for j, t in enumerate(terms)})
    df = np.array([df_counts[t] for t in terms], dtype=np.float64)
    vec.fit([""])  # the vocabulary is given: this only sets the fitted state
    vec.idf_ = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
    return vec


def _raw_labels(col: pd.Series, label_sep: str) -> list[tuple[str, ...]]:
    return [split_multi(str(v), label_sep) if isinstance(v, str) else () for v in col]


def _csv_blocks(cf: ChunkedFile) -> Iterator[HierDataset]:
    """The blocks of a CSV / text CSV."""
    o = cf.options
    usecols = [o["label"], o["text"]] if cf.format == "text" else [o["label"], *o["features"]]
    dtype = dict.fromkeys(usecols[:2] if cf.format == "text" else usecols[:1], str)
    for k, block in enumerate(_csv_reader(cf.path, o["sep"], usecols, cf.chunk_rows, dtype)):
        first = k * cf.chunk_rows
        raw = _raw_labels(block[o["label"]], o["label_sep"])
        lines = range(first + 2, first + 2 + len(block))
        y, _ = resolve_labels(raw, cf.taxonomy, cf.multilabel, cf.path, lines, o["label"])
        if cf.format == "text":
            X: Any = int32_csr(o["vectorizer"].transform(block[o["text"]].fillna("").tolist()))
        else:
            X = _numeric(block[o["features"]], cf.path, first, o["means"])
        yield cf.block(X, y, k, first)


def _csv_reader(
    path: str, sep: str, usecols: list[str], chunk_rows: int, dtype: dict[str, Any]
) -> Iterator[pd.DataFrame]:
    """``chunk_rows`` rows at a time of the columns ``usecols`` (a regular file only)."""
    with open_regular(path) as fh:
        yield from pd.read_csv(fh, sep=sep, usecols=usecols, chunksize=chunk_rows, dtype=dtype)


def _means(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Column means over the cells present (0 for a column with none)."""
    return np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)


def _numeric(df: pd.DataFrame, path: str, first: int, means: np.ndarray | None) -> np.ndarray:
    """The feature columns as float64, an empty cell filled by its column's mean over the
    file (left NaN when ``means`` is None); a cell that is not a finite number is refused
    with its line and column."""
    text = [c for c in df.columns if df[c].dtype.kind not in "biuf"]  # a non-number inside
    num = df if not text else df.assign(**{c: pd.to_numeric(df[c], errors="coerce") for c in text})
    X = num.to_numpy(dtype=np.float64)
    missing = df.isna().to_numpy()
    bad = np.argwhere(~np.isfinite(X) & ~missing)
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise DataError(
            f"{df.iat[i, j]!r} is not a finite number",
            path=path,
            line=first + i + 2,
            column=str(df.columns[j]),
        )
    if means is not None and missing.any():
        X[missing] = np.broadcast_to(means, X.shape)[missing]
    return X
