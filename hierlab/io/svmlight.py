"""svmlight / libsvm data sets whose labels are node names.

Each line is ``label idx:value idx:value ... # comment``; the label is a node name or an
``a/b/c`` path, a comma list (``a,b``) for a multi-label row. The features are parsed by
scikit-learn's :func:`~sklearn.datasets.load_svmlight_file`.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from hierlab.core import limits
from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.decoding import (
    PathArg,
    check_path,
    dataset_name,
    decode_bytes,
    int32_csr,
    read_bytes,
    split_multi,
)
from hierlab.io.labels import resolve_labels, taxonomy_arg

__all__ = ["SVM_LINE", "read_svmlight", "write_svmlight"]

#: A line of svmlight: a label, then ``qid:`` or ``idx:value`` tokens, then a comment.
SVM_LINE = re.compile(r"^\s*\S+(\s+(qid:\S+|\d+:\S+))*\s*(#.*)?$")


def read_svmlight(
    path: PathArg | None = None,
    taxonomy: Taxonomy | PathArg | None = None,
    n_features: int | None = None,
    zero_based: bool | str = "auto",
    data: bytes | None = None,
    name: str | None = None,
    encoding: str | None = None,
) -> HierDataset:
    """Read an svmlight / libsvm file whose labels are node names.

    Each line is ``label idx:value idx:value ... # comment``; the label is a node name or an
    ``a/b/c`` path, and a comma list (``a,b``) for a multi-label row (as svmlight's multi-label
    extension writes it). Features are parsed by :func:`sklearn.datasets.load_svmlight_file`.

    Parameters
    ----------
    path, taxonomy, name
        As in :func:`~hierlab.io.csv.read_csv_dataset`: the file, the hierarchy, the name.
    n_features : int, optional
        Number of columns (a test file must have the training width).
    zero_based : bool or "auto"
        Whether indices start at 0 (see scikit-learn).
    data : bytes, optional
        The raw content, instead of reading ``path``.
    encoding : str, optional
        The file's declared encoding (see :func:`~hierlab.io.decoding.decode_bytes`).

    Returns
    -------
    HierDataset
        ``X`` CSR float64 with int32 indices (LinearSVC rejects int64 ones).

    Raises
    ------
    DataError
        Naming the file, line and token: malformed lines, non-finite values, or a width (the
        largest index, or ``n_features``) beyond ``max_features`` (:mod:`hierlab.core.limits`):
        a 40-byte file naming index 10^9 is refused, not read as 10^9 features.
    """
    spath = None if path is None else check_path(path)
    if data is None:
        if path is None:
            raise DataError("read_svmlight needs a path or data")
        data = read_bytes(path)
    if not isinstance(data, bytes | bytearray):
        raise DataError(f"data must be bytes, got {type(data).__name__}", path=spath)
    cap = limits.current().max_features
    if n_features is not None and (
        isinstance(n_features, bool) or not isinstance(n_features, int | np.integer)
    ):
        raise DataError(f"n_features must be an int, got {n_features!r}", path=spath)
    if n_features is not None and n_features > cap:
        raise DataError(
            f"n_features={n_features:,} " + limits.how_to_raise("max_features"), path=spath
        )
    raw, lines, body = _split_lines(decode_bytes(bytes(data), spath, encoding), spath)
    X = _load_features(body, lines, n_features, zero_based, spath)
    multi = any(len(labs) > 1 for labs in raw)
    y, tax = resolve_labels(raw, taxonomy_arg(taxonomy), multi, spath, lines, "label")
    return HierDataset(
        int32_csr(X),
        y,
        tax,
        name=dataset_name(name, spath, "svmlight"),
        description=f"svmlight file {spath}" if spath else "svmlight data",
        meta={"format": "svmlight"},
    )


def _split_lines(text: str, path: str | None) -> tuple[list[tuple[str, ...]], list[int], list[str]]:
    """The labels, file line and features (``"0 idx:value ..."``) of every data line."""
    raw: list[tuple[str, ...]] = []
    lines: list[int] = []
    body: list[str] = []
    for k, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if line[:1].isspace():
            raise DataError("a line must start with its label", path=path, line=k, column="label")
        lab, _, rest = s.partition(" ")
        if "\t" in lab:
            lab, _, rest2 = lab.partition("\t")
            rest = rest2 + " " + rest
        labs = split_multi(lab, ",")
        if not labs:
            raise DataError(f"empty label {lab!r}", path=path, line=k, column="label")
        raw.append(labs)
        lines.append(k)
        body.append("0 " + rest)
    if not raw:
        raise DataError("no data line", path=path)
    return raw, lines, body


def _load_features(
    body: list[str],
    lines: list[int],
    n_features: int | None,
    zero_based: bool | str,
    path: str | None,
) -> sp.csr_matrix:
    """Parse the feature tokens with scikit-learn; refuse malformed or non-finite values."""
    from sklearn.datasets import load_svmlight_file

    text = "\n".join(body) + "\n"
    _refuse_huge_indices(text, lines, path)
    try:
        X, _ = load_svmlight_file(
            io.BytesIO(text.encode("utf-8")),
            n_features=n_features,
            zero_based=zero_based,
        )
    except (ValueError, OverflowError, TypeError) as exc:
        bad_line, col = _locate_svmlight_error(body, lines)
        raise DataError(
            f"malformed svmlight: {exc}", path=path, line=bad_line, column=col
        ) from None
    _refuse_too_wide(X, lines, path)
    if X.nnz and not np.isfinite(X.data).all():
        k = int(np.flatnonzero(~np.isfinite(X.data))[0])
        row = int(np.searchsorted(X.indptr, k, side="right") - 1)
        raise DataError(
            f"value {float(X.data[k])!r} is not finite (beyond +-1.8e308, or inf/nan): "
            "features must be finite numbers (svmlight has no missing values; omit an "
            "entry for a zero)",
            path=path,
            line=lines[row],
            column=f"feature {int(X.indices[k]) + (0 if zero_based is True else 1)}",
        )
    return X


def _refuse_huge_indices(text: str, lines: list[int], path: str | None) -> None:
    """Refuse, before parsing, the first feature index beyond ``max_features`` (its line).

    ``text`` is the feature part of the file, one line per entry of ``lines``.
    """
    cap = limits.current().max_features
    pattern = rf"(?<![^\s])([0-9]{{{len(str(cap))},}}):"
    for m in re.finditer(pattern, text):
        idx = int(m.group(1))
        if idx > cap:
            k = text.count("\n", 0, m.start())
            raise DataError(
                f"feature index {idx:,}: X would have at least {idx:,} features "
                + limits.how_to_raise("max_features"),
                path=path,
                line=lines[k],
                column=f"token {m.group(0)}...",
            )


def _refuse_too_wide(X: sp.csr_matrix, lines: list[int], path: str | None) -> None:
    """Refuse a width beyond ``max_features``, naming the line of the first too-large index."""
    cap = limits.current().max_features
    if X.shape[1] <= cap:
        return
    over = np.flatnonzero(X.indices >= cap)
    line, col = None, None
    if len(over):
        row = int(np.searchsorted(X.indptr, over[0], side="right") - 1)
        line, col = lines[row], f"feature index {int(X.indices[over[0]]):,}"
    raise DataError(
        f"{X.shape[1]:,} features (the largest index in the file) "
        + limits.how_to_raise("max_features"),
        path=path,
        line=line,
        column=col,
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
    """Write ``ds`` as svmlight: node names as labels (comma lists for multi-label rows).

    Parameters
    ----------
    ds : HierDataset
    path : path-like
    zero_based : bool, default False
        Write feature indices from 0 (else from 1, svmlight's convention).

    Raises
    ------
    DataError
        When a node name holds white space, ``,`` or ``#`` (svmlight cannot hold it).
    """
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
