"""Text data sets: a CSV with a raw text column, turned into sublinear TF-IDF.

The vectorizer is scikit-learn's ``TfidfVectorizer(sublinear_tf=True)``, fitted on the file, or
a given fitted one (``train.meta["vectorizer"]``) for a test file. The label and id columns are
found as for :func:`~hierlab.io.csv.read_csv_dataset`.
"""

from __future__ import annotations

from typing import Any

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.csv import TEXT_COLUMNS, Table, pick_column, prepare_table
from hierlab.io.decoding import PathArg, dataset_name, int32_csr, source_text

__all__ = ["read_text_csv"]


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
    path, taxonomy, label_column, id_column, label_sep, text, name
        As in :func:`~hierlab.io.csv.read_csv_dataset`: the file or its content, the
        hierarchy, the label and id columns, the separator of several labels, the name.
    text_column : str, optional
        Default: a column named ``text``, ``document``, ``body``, ``content`` or ``message``,
        else the only column besides the label and id columns.
    vectorizer : TfidfVectorizer, optional
        A fitted vectorizer (``train.meta["vectorizer"]``) to transform a test file with.
        Default: a new ``TfidfVectorizer(sublinear_tf=True, **vectorizer_params)`` fitted here.
    vectorizer_params : dict, optional
        Extra ``TfidfVectorizer`` parameters (e.g. ``{"min_df": 2}``).

    Returns
    -------
    HierDataset
        ``X`` CSR of shape (n_samples, vocabulary size) with int32 indices; the fitted vectorizer
        in ``meta["vectorizer"]``.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    spath, text = source_text(path, text, "read_text_csv")
    tab = prepare_table(text, spath, label_column, id_column, spath, True, text_column)
    tcol = _text_column(tab, text_column, spath)
    docs = tab.df[tcol].fillna("").astype(str).tolist()
    if vectorizer is None:
        vectorizer = TfidfVectorizer(sublinear_tf=True, **(vectorizer_params or {}))
        try:
            X = vectorizer.fit_transform(docs)
        except ValueError as exc:  # empty vocabulary
            raise DataError(f"cannot vectorise the text: {exc}", path=spath, column=tcol) from None
    else:
        X = vectorizer.transform(docs)
    X = int32_csr(X)
    y, tax = tab.labels(taxonomy, label_sep, spath)
    return HierDataset(
        X,
        y,
        tax,
        feature_names=[str(f) for f in vectorizer.get_feature_names_out()],
        name=dataset_name(name, spath, "text"),
        description=f"text CSV {spath}, sublinear TF-IDF" if spath else "text CSV, TF-IDF",
        meta=tab.base_meta(vectorizer=vectorizer, format="text", text_column=tcol),
        texts=tab.df[tcol].fillna("").astype(str).to_numpy(dtype=object),
    )


def _text_column(tab: Table, text_column: str | None, path: str | None) -> str:
    """The column holding the text: the one named, a usual name, or the only other column."""
    tcol = pick_column(tab.df, text_column, TEXT_COLUMNS, "text", path)
    if tcol is not None:
        return tcol
    if len(tab.others) != 1:
        raise DataError(
            "cannot tell which column holds the text: pass text_column=... (columns "
            f"{', '.join(tab.others[:10])})",
            path=path,
            line=1,
        )
    return tab.others[0]
