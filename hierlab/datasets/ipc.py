"""IPC titles: the many-class real text set (645 leaves) kept beside the project.

``ipc/ipc_titles.csv.gz`` holds 75,043 International Patent Classification titles (columns
``text,label``), each labelled with the path ``section/class/subclass`` of its code
(``F/F16/F16L``): 8 sections, 131 classes, 645 subclass leaves, 785 nodes with the root. The set
has no fixed split; :func:`load_ipc` draws a seeded random split (70/30 by default) and fits a
sublinear TF-IDF on the training titles only. Reading and vectorising take about a second, so
nothing is cached (unlike 20 Newsgroups).
It is the analogue here of the IPC experiments of seeds 001 and 003.
"""

from __future__ import annotations

import gzip
import os
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.datasets.real import _fit_tfidf, _locate
from hierlab.io.decoding import int32_csr

__all__ = ["load_ipc"]

_IPC_FILE = "ipc/ipc_titles.csv.gz"


def load_ipc(
    data_home: str | os.PathLike[str] | None = None,
    test_size: float = 0.3,
    random_state: int = 0,
    vectorizer_params: dict[str, Any] | None = None,
) -> tuple[HierDataset, HierDataset]:
    """IPC titles, split at random, sublinear TF-IDF fitted on the training titles.

    Parameters
    ----------
    data_home : path-like, optional
        The data root (holding ``ipc/``) or the ``ipc`` folder itself. Default: as
        :func:`~hierlab.datasets.real.load_20newsgroups` (``$HIERLAB_DATA``,
        ``../shared/datasets``).
    test_size : float, default 0.3
        Share of the rows in the test set, in (0, 1).
    random_state : int, default 0
        Seed of the split (a permutation of the rows).
    vectorizer_params : dict, optional
        Extra ``TfidfVectorizer`` parameters.

    Returns
    -------
    (train, test) : tuple of HierDataset
        ``X`` CSR float64 of shape (n_train, V) and (n_test, V); ``y`` the subclass codes (the
        leaves of the taxonomy, named by their last path part, e.g. ``"F16L"``); the taxonomy is
        root -> section -> class -> subclass.

    Raises
    ------
    DataError
        When the file is not found (saying where it looked) or is not the expected CSV.
    """
    if not 0.0 < float(test_size) < 1.0:
        raise ParameterError(f"test_size must be in (0, 1), got {test_size!r}")
    path = _locate(_IPC_FILE, data_home)
    texts, paths = _read_titles(path)
    tax = Taxonomy.from_paths(sorted(set(paths)), root="<root>")
    leaves = np.asarray([p.rsplit("/", 1)[-1] for p in paths], dtype=object)
    order = np.random.default_rng(random_state).permutation(len(texts))
    n_test = round(len(texts) * float(test_size))
    test_idx, train_idx = np.sort(order[:n_test]), np.sort(order[n_test:])
    X_tr, X_te, vocab = _fit_tfidf(texts[train_idx], texts[test_idx], vectorizer_params)
    desc = (
        f"IPC titles: {len(texts):,} patent-scheme titles, {len(tax.leaves)} subclass leaves; "
        f"random {1 - float(test_size):.0%}/{float(test_size):.0%} split (seed {random_state}), "
        "sublinear TF-IDF fitted on the training titles"
    )
    meta = {"test_size": float(test_size), "random_state": random_state}
    return (
        HierDataset(
            int32_csr(X_tr),
            leaves[train_idx],
            tax,
            vocab,
            "ipc",
            desc,
            dict(meta),
            texts=texts[train_idx],
        ),
        HierDataset(
            int32_csr(X_te),
            leaves[test_idx],
            tax,
            vocab,
            "ipc",
            desc,
            dict(meta),
            texts=texts[test_idx],
        ),
    )


def _read_titles(path: Any) -> tuple[np.ndarray, np.ndarray]:
    """The ``text`` and ``label`` columns of the gzip CSV, as object arrays."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            df = pd.read_csv(fh, dtype=str, keep_default_na=False)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot read the IPC titles: {exc}", path=str(path)) from None
    if list(df.columns) != ["text", "label"]:
        raise DataError(
            f"expected the columns text,label, got {','.join(map(str, df.columns))}",
            path=str(path),
        )
    return df["text"].to_numpy(dtype=object), df["label"].to_numpy(dtype=object)
