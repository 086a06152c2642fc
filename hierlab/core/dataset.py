"""``HierDataset``: features, hierarchical labels and their taxonomy, in one object."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "HierDataset",
    "as_rng",
    "check_int",
    "concat_datasets",
    "encode_labels",
    "is_label_set",
    "is_multilabel",
    "label_names",
]


def as_rng(random_state: Any) -> np.random.Generator:
    """``numpy.random.default_rng(random_state)``, or a ParameterError naming the bad seed.

    Accepts None, a non-negative int, a ``Generator`` or a legacy ``RandomState``.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, bool) or not (
        random_state is None or isinstance(random_state, int | np.integer)
    ):
        raise ParameterError(
            f"random_state must be None, a non-negative int or a numpy Generator, "
            f"got {random_state!r}"
        )
    if random_state is not None and random_state < 0:
        raise ParameterError(f"random_state must be >= 0, got {random_state}")
    return np.random.default_rng(random_state)


def check_int(name: str, value: Any, low: int) -> int:
    """``value`` as an int ``>= low``, or a ParameterError naming the parameter."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


#: the types of one example's label that make it a set of labels
LABEL_SET_TYPES = (tuple, list, set, frozenset, np.ndarray)


def is_label_set(row: Any) -> bool:
    """True when one example's label is a set of labels (a tuple, list, set, frozenset or
    1-D array of node names or ids) rather than one label."""
    return isinstance(row, LABEL_SET_TYPES)


def is_multilabel(y: Any) -> bool:
    """True when ``y`` holds a set of labels per example (multi-label), False for one label
    per example.

    A scalar row of a multi-label ``y`` is a set of one label.

    Parameters
    ----------
    y : array-like
        A 1-D sequence of labels (single-label); a sequence in which some row is a label set
        (:func:`is_label_set`), or a 2-D indicator of shape (n_samples, n_nodes), dense
        numeric, sparse or a DataFrame (multi-label).
    """
    if sp.issparse(y) or isinstance(y, pd.DataFrame):
        return True
    if isinstance(y, np.ndarray) and y.dtype != object:
        return y.ndim == 2 and y.dtype.kind in "biuf"
    seq = y.to_numpy() if isinstance(y, pd.Series) else y
    if isinstance(seq, str | bytes):
        return False
    try:
        len(seq)  # a sized sequence (an iterator is not consumed here)
        kinds = set(map(type, seq))  # one pass in C; the check then runs once per type
    except TypeError:
        return False
    return any(issubclass(k, LABEL_SET_TYPES) for k in kinds)


def label_names(y: Any) -> np.ndarray:
    """The labels as node names: a str per row, or for a multi-label ``y`` (:func:`is_multilabel`)
    a tuple of str per row (a row of one label becomes a tuple of one).

    Parameters
    ----------
    y : sequence of shape (n_samples,)
        Labels (node names or other values, turned into str), or label sets.

    Returns
    -------
    ndarray of object of shape (n_samples,)
    """
    out = np.empty(len(y), dtype=object)
    if is_multilabel(y):
        out[:] = [tuple(str(v) for v in lab) if is_label_set(lab) else (str(lab),) for lab in y]
    else:
        out[:] = [str(lab) for lab in y]
    return out


def encode_labels(y: Any, taxonomy: Taxonomy) -> np.ndarray | sp.csr_matrix:
    """Node ids of the labels: an int array (single-label) or a 0/1 CSR indicator (multi-label).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Node names, or for multi-label a tuple/list/set of node names per row.
    taxonomy : Taxonomy

    Returns
    -------
    ndarray of int of shape (n_samples,), or csr_matrix of shape (n_samples, n_nodes)
        The indicator is not closed under ancestors (``Y @ A > 0`` closes it).

    Raises
    ------
    DataError
        Naming the row and the label that is not a node of the taxonomy.
    """
    arr = np.empty(len(y), dtype=object)
    arr[:] = list(y)
    if is_multilabel(arr):
        rows, cols = [], []
        for i, labs in enumerate(arr):
            for lab in labs if is_label_set(labs) else (labs,):
                j = taxonomy._index.get(str(lab))
                if j is None:
                    raise DataError(f"row {i}: label {str(lab)!r} is not a node of the taxonomy")
                rows.append(i)
                cols.append(j)
        data = np.ones(len(rows), dtype=np.float64)
        m = sp.csr_matrix((data, (rows, cols)), shape=(len(arr), taxonomy.n_nodes))
        m.sum_duplicates()
        m.data[:] = 1.0
        return m
    # pandas factorize on Python str: numpy's ``astype(str)`` would drop trailing NUL
    # characters and so map two different labels ("a" and "a\0") to one node
    inv, uniq = pd.factorize(np.asarray([str(v) for v in arr], dtype=object))
    ids = np.empty(len(uniq), dtype=np.int64)
    for k, u in enumerate(uniq):
        j = taxonomy._index.get(str(u))
        if j is None:
            row = int(np.flatnonzero(inv == k)[0])
            raise DataError(
                f"row {row}: label {str(u)!r} is not a node of the taxonomy "
                f"({taxonomy.n_nodes} nodes, e.g. {', '.join(map(str, taxonomy.names[:3]))})"
            )
        ids[k] = j
    return ids[np.asarray(inv, dtype=np.int64)]


@dataclass
class HierDataset:
    """A data set for hierarchical classification.

    Attributes
    ----------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
        Features, float64; sparse data stays CSR.
    y : ndarray of object, shape (n_samples,)
        One node name (str) per row, or a tuple of node names per row for multi-label data.
    taxonomy : Taxonomy
        The label hierarchy; every label is a node of it (nodes without data are allowed).
    feature_names : list of str, optional
        One name per column of ``X``.
    name : str
        A short name, shown in the app and in tables.
    description : str
        Where the data comes from.
    meta : dict
        What the reader or generator knows besides (a fitted vectoriser, imputation means).
    texts : ndarray of object of shape (n_samples,), optional
        The example's own text, for data read from text (a text CSV's text column, IPC
        titles, newsgroup posts): what the app shows wherever it lists examples.
    """

    X: Any
    y: np.ndarray
    taxonomy: Taxonomy
    feature_names: list[str] | None = None
    name: str = ""
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    texts: np.ndarray | None = None

    def __post_init__(self) -> None:
        if sp.issparse(self.X):
            self.X = sp.csr_matrix(self.X, dtype=np.float64)
        else:
            self.X = np.asarray(self.X, dtype=np.float64)
            if self.X.ndim != 2:
                raise DataError(f"X must be 2-D, got shape {self.X.shape}")
        self.y = label_names(self.y)
        values = self.X.data if sp.issparse(self.X) else self.X
        if np.isinf(values).any():
            if sp.issparse(self.X):
                k = int(np.flatnonzero(np.isinf(values))[0])
                i = int(np.searchsorted(np.asarray(self.X.indptr), k, side="right") - 1)
                j = int(self.X.indices[k])
            else:
                i, j = (int(v) for v in np.argwhere(np.isinf(values))[0])
            raise DataError(
                f"X[{i}, {j}] is infinite: features must be finite (NaN marks a missing value)"
            )
        if self.X.shape[0] != len(self.y):
            raise DataError(f"X has {self.X.shape[0]} rows but y has {len(self.y)} labels")
        if self.texts is not None:
            texts = np.empty(len(self.texts), dtype=object)
            texts[:] = [str(t) for t in self.texts]
            if len(texts) != len(self.y):
                raise DataError(f"{len(texts)} texts for {len(self.y)} rows")
            self.texts = texts
        if self.feature_names is not None and len(self.feature_names) != self.X.shape[1]:
            raise DataError(
                f"{len(self.feature_names)} feature names for {self.X.shape[1]} columns"
            )
        encode_labels(self.y, self.taxonomy)  # validates every label

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns."""
        return int(self.X.shape[1])

    @property
    def is_multilabel(self) -> bool:
        """True when rows carry a set of nodes."""
        return is_multilabel(self.y)

    def label_ids(self) -> np.ndarray | sp.csr_matrix:
        """See :func:`encode_labels`."""
        return encode_labels(self.y, self.taxonomy)

    def label_indicator(self, closed: bool = True) -> sp.csr_matrix:
        """0/1 CSR matrix of shape (n_samples, n_nodes); ``closed`` adds every ancestor."""
        ids = self.label_ids()
        if sp.issparse(ids):
            ind = sp.csr_matrix(ids)
        else:
            ids = np.asarray(ids)
            ind = sp.csr_matrix(
                (np.ones(len(ids)), (np.arange(len(ids)), ids)),
                shape=(len(ids), self.taxonomy.n_nodes),
            )
        if closed:
            ind = (ind @ self.taxonomy.ancestor_matrix).tocsr()
            ind.data[:] = 1.0
        return ind

    def subset(self, index: Sequence[int] | np.ndarray) -> HierDataset:
        """Rows ``index`` as a new data set (same taxonomy)."""
        idx = np.asarray(index)
        return HierDataset(
            X=self.X[idx],
            y=self.y[idx],
            taxonomy=self.taxonomy,
            feature_names=self.feature_names,
            name=self.name,
            description=self.description,
            meta=dict(self.meta),
            texts=None if self.texts is None else self.texts[idx],
        )

    def examples_per_node(self, closed: bool = False) -> pd.Series:
        """Count of rows labelled with each node (``closed``: with the node or a descendant)."""
        counts = np.asarray(self.label_indicator(closed=closed).sum(axis=0)).ravel()
        return pd.Series(counts.astype(np.int64), index=[str(n) for n in self.taxonomy.names])

    def summary(self) -> dict[str, Any]:
        """The validation report: sizes, label kind, taxonomy shape, nodes without data."""
        tax = self.taxonomy
        direct = self.examples_per_node(closed=False)
        closed = self.examples_per_node(closed=True)
        sparse = sp.issparse(self.X)
        nnz = self.X.nnz if sparse else int(np.count_nonzero(self.X))
        return {
            "name": self.name,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "sparse": sparse,
            "density": nnz / max(1, self.n_samples * self.n_features),
            "multilabel": self.is_multilabel,
            "taxonomy": "tree" if tax.is_tree else "DAG",
            "n_nodes": tax.n_nodes,
            "n_leaves": len(tax.leaves),
            "depth": tax.max_depth,
            "n_labels_used": int((direct > 0).sum()),
            "labels_at_internal_nodes": int((direct[~tax.is_leaf] > 0).sum()),
            "nodes_without_data": [str(n) for n, c in closed.items() if c == 0],
        }

    def __repr__(self) -> str:
        kind = "sparse" if sp.issparse(self.X) else "dense"
        ml = ", multi-label" if self.is_multilabel else ""
        return (
            f"HierDataset({self.name!r}, {self.n_samples} x {self.n_features} {kind}{ml}, "
            f"{self.taxonomy!r})"
        )


def concat_datasets(a: HierDataset, b: HierDataset) -> HierDataset:
    """Rows of ``a`` then ``b`` (same taxonomy) as one data set; name and meta from ``a``.

    Parameters
    ----------
    a, b : HierDataset
        Same taxonomy and number of features; CSR if either is sparse.

    Returns
    -------
    HierDataset of ``a.n_samples + b.n_samples`` rows
    """
    if a.n_features != b.n_features:
        raise DataError(f"cannot stack {a.n_features} and {b.n_features} features")
    if sp.issparse(a.X) or sp.issparse(b.X):
        X: Any = sp.vstack([sp.csr_matrix(a.X), sp.csr_matrix(b.X)], format="csr")
    else:
        X = np.vstack([a.X, b.X])
    y = np.empty(a.n_samples + b.n_samples, dtype=object)
    y[: a.n_samples] = list(a.y)
    y[a.n_samples :] = list(b.y)
    texts = None
    if a.texts is not None or b.texts is not None:
        texts = np.empty(a.n_samples + b.n_samples, dtype=object)
        texts[: a.n_samples] = list(a.texts) if a.texts is not None else [""] * a.n_samples
        texts[a.n_samples :] = list(b.texts) if b.texts is not None else [""] * b.n_samples
    return HierDataset(
        X=X,
        y=y,
        taxonomy=a.taxonomy,
        feature_names=a.feature_names,
        name=a.name,
        description=a.description,
        meta=dict(a.meta),
        texts=texts,
    )
