"""The session's data sets: built-ins, example files and uploads, their splits and reports.

Parsing is cached (``st.cache_data``) and never touches the session until it succeeded, so a
bad upload cannot lose earlier data or runs. Loading, parsing, splitting and inducing a taxonomy
are ``hierlab``'s own functions; this module keeps what the session needs around them.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import streamlit as st

from hierlab import DataError, HierlabError, Taxonomy
from hierlab.core.params import Param
from hierlab.core.registry import MethodSpec
from hierlab.datasets import HierDataset, available_datasets, concat_datasets
from hierlab.datasets import load_builtin as load_catalog_dataset
from hierlab.io import parse_taxonomy_text, read_dataset_bytes
from hierlab.lab.export import split_dataset

__all__ = [
    "DEFAULT_BUILTINS",
    "Builtin",
    "DatasetEntry",
    "builtin_choices",
    "example_files",
    "example_texts",
    "generator_params",
    "induce_taxonomy",
    "load_builtin",
    "make_entry",
    "parse_test_upload",
    "parse_upload",
    "report_messages",
    "resplit",
    "upload_entry",
    "validation_report",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO_ROOT / "datasets"
DATA_EXTENSIONS = (".csv", ".tsv", ".svm", ".svmlight", ".libsvm", ".arff", ".txt")
TAXONOMY_EXTENSIONS = (".txt", ".csv", ".tsv", ".json", ".paths", ".edges", ".tax")
#: the data set loaded when the app opens (first one available)
DEFAULT_BUILTINS = ("hieron-synthetic", "nhsvm-balanced", "hierarchical-text")


@dataclass
class DatasetEntry:
    """A data set in the session, with its current train/test split.

    Attributes
    ----------
    key : str
        Unique key in :attr:`AppState.datasets`.
    name : str
        Shown in the app.
    source : str
        ``"builtin"``, ``"example"`` or ``"upload"``.
    train, test : HierDataset
        The current split.
    split : dict
        How the split was made: ``{"mode": "own"}`` or ``{"mode": "random", "test_size", "seed"}``.
    own_split : tuple of HierDataset, optional
        The data set's own (train, test) split, when it has one.
    params : dict
        Generator parameters or file names.
    rows : HierDataset, optional
        A single file's rows in the file's order (what a random split splits, as the exported
        script does); None when the data set has its own split.
    files : dict of str -> (str, bytes)
        Uploaded files by role (``"features"``, ``"taxonomy"``, ``"test"``): name and content,
        which an export bundles with the script.
    """

    key: str
    name: str
    source: str
    train: HierDataset
    test: HierDataset
    split: dict[str, Any]
    own_split: tuple[HierDataset, HierDataset] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    rows: HierDataset | None = None
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    @property
    def taxonomy(self) -> Taxonomy:
        """The data set's (given) taxonomy."""
        return self.train.taxonomy

    @property
    def full(self) -> HierDataset:
        """Every row (train then test), for re-splitting."""
        return concat_datasets(self.train, self.test)

    @property
    def all_rows(self) -> HierDataset:
        """Every row: the own split's train then test rows, else the file's rows in order."""
        if self.own_split:
            return concat_datasets(*self.own_split)
        return self.rows if self.rows is not None else self.full

    def describe_split(self) -> str:
        """One line: how many rows in train/test and how the split was made."""
        if self.split.get("mode") == "own":
            how = "the test file as given" if "test" in self.files else "the data set's own split"
        else:
            how = (
                f"random split, test size {self.split['test_size']:.0%}, seed {self.split['seed']}"
            )
        return f"{self.train.n_samples} train / {self.test.n_samples} test rows ({how})"


# ---------------------------------------------------------------------------------- built-ins
@dataclass(frozen=True)
class Builtin:
    """A built-in data set the Data page offers.

    Attributes
    ----------
    key : str
        ``"catalog:<name>"`` or ``"file:<relative path>"``.
    label, description : str
    kind : str
        ``"generator"``, ``"real"`` or ``"example"``.
    """

    key: str
    label: str
    description: str
    kind: str


def builtin_choices() -> list[Builtin]:
    """The catalogue's data sets (``hierlab.datasets.catalog``) and the example files.

    The default data sets (:data:`DEFAULT_BUILTINS`) come first.
    """
    out = [
        Builtin(f"catalog:{d.name}", d.name, d.description, "real" if d.real else "generator")
        for d in available_datasets()
    ]
    for data_path, tax_path in example_files():
        rel = data_path.relative_to(REPO_ROOT).as_posix()
        desc = f"example file {rel}" + (
            f" with taxonomy {tax_path.name}" if tax_path is not None else ""
        )
        out.append(Builtin(f"file:{rel}", f"file: {data_path.name}", desc, "example"))
    rank = {f"catalog:{n}": i for i, n in enumerate(DEFAULT_BUILTINS)}
    out.sort(key=lambda b: (rank.get(b.key, len(rank)), b.kind == "real"))
    return out


def example_files(directory: Path = EXAMPLES_DIR) -> list[tuple[Path, Path | None]]:
    """Pairs (data file, taxonomy file or None) among the bundled example files.

    A file is a taxonomy when its name contains ``"tax"``; a data file is paired with the
    taxonomy file that shares the longest name prefix with it, else with ``taxonomy.json``
    (ARFF files carry their own hierarchy).
    """
    if not directory.is_dir():
        return []
    files = sorted(p for p in directory.iterdir() if p.is_file())
    taxes = [p for p in files if "tax" in p.name.lower() and p.suffix in TAXONOMY_EXTENSIONS]
    data = [
        p
        for p in files
        if p.suffix.lower() in DATA_EXTENSIONS
        and p not in taxes
        and not p.name.lower().startswith(("readme", "license"))
    ]
    fallback = directory / "taxonomy.json"
    pairs: list[tuple[Path, Path | None]] = []
    for d in data:
        shared = {t: _shared_prefix(d.stem.lower(), t.stem.lower()) for t in taxes}
        best = max(shared, key=lambda t: shared[t], default=None)
        if best is None or shared[best] < 3:
            # ARFF declares its own hierarchy; other files use the folder's main taxonomy
            best = fallback if d.suffix.lower() != ".arff" and fallback.is_file() else None
        pairs.append((d, best))
    return pairs


def _shared_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    return sum(1 for _ in itertools.takewhile(lambda ab: ab[0] == ab[1], zip(a, b)))


def _catalog_entry(name: str) -> Any:
    for d in available_datasets():
        if d.name == name:
            return d
    raise DataError(f"unknown built-in data set {name!r}")


def generator_params(builtin_key: str) -> list[Param]:
    """The tunable arguments of a built-in generator, read from its signature.

    Returns
    -------
    list of Param
        One for each int/float/str/bool argument with a default (the catalogue's own
        arguments override the defaults; ``random_state`` is a seed); empty for files and real
        data.
    """
    if not builtin_key.startswith("catalog:"):
        return []
    entry = _catalog_entry(builtin_key.split(":", 1)[1])
    if entry.real:
        return []
    out = []
    for p in inspect.signature(entry.function()).parameters.values():
        default = entry.kwargs.get(p.name, p.default)
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) or default is p.empty:
            continue
        if p.name == "random_state":
            out.append(Param(p.name, "seed", 0 if default is None else default))
        elif type(default).__name__ in ("int", "float", "str", "bool"):
            out.append(Param(p.name, type(default).__name__, default))
    return out


def load_builtin(builtin_key: str, params: dict[str, Any] | None = None) -> DatasetEntry:
    """Load a built-in data set as a :class:`DatasetEntry` with its own split.

    Parameters
    ----------
    builtin_key : str
        A :attr:`Builtin.key`.
    params : dict, optional
        Generator arguments (see :func:`generator_params`).
    """
    params = dict(params or {})
    kind, _, name = builtin_key.partition(":")
    if kind == "catalog":
        train, test = _cached_builtin(name, tuple(sorted(params.items())))
        query = "&".join(f"{k}={v}" for k, v in sorted(params.items()))
        key = f"{name}?{query}" if query else name
        return make_entry(train, name, "builtin", test=test, params=params, key=key)
    if kind == "file":
        path = REPO_ROOT / name
        tax_path = dict(example_files()).get(path)
        tax = tax_path.read_bytes() if tax_path is not None else None
        content = path.read_bytes()
        ds = parse_upload(content, path.name, tax, tax_path.name if tax_path else None)
        files = {"features": (path.name, content)}
        if tax_path is not None and tax is not None:
            files["taxonomy"] = (tax_path.name, tax)
        return make_entry(ds, name, "example", test_size=0.3, seed=0, files=files)
    raise DataError(f"unknown built-in data set {builtin_key!r}")


@st.cache_data(show_spinner=False, max_entries=16)
def _cached_builtin(
    name: str, params: tuple[tuple[str, Any], ...]
) -> tuple[HierDataset, HierDataset]:
    return load_catalog_dataset(name, **dict(params))


# ---------------------------------------------------------------------------------- splits
def _random_split(
    data: HierDataset, test_size: float, seed: int
) -> tuple[HierDataset, HierDataset, dict[str, Any]]:
    """``hierlab.lab.export.split_dataset`` (as the exported notebooks split), with the
    session's checks and the split's description."""
    if not 0.0 < test_size < 1.0:
        raise DataError(f"test size must be strictly between 0 and 1, got {test_size}")
    if data.n_samples < 2:
        raise DataError(
            f"{data.n_samples} row(s): at least 2 are needed to split into train and test"
        )
    train, test = split_dataset(data, test_size, seed)
    return train, test, {"mode": "random", "test_size": float(test_size), "seed": int(seed)}


def make_entry(
    data: HierDataset,
    name: str,
    source: str,
    test_size: float = 0.3,
    seed: int = 0,
    test: HierDataset | None = None,
    params: dict[str, Any] | None = None,
    key: str | None = None,
    files: dict[str, tuple[str, bytes]] | None = None,
) -> DatasetEntry:
    """A :class:`DatasetEntry` from one data set (split at random) or a given (train, test).

    ``key`` defaults to ``name``; ``files`` are the uploaded files (kept for exports).
    """
    own: tuple[HierDataset, HierDataset] | None = None
    rows: HierDataset | None = None
    if test is None:
        rows = data
        train, test, split = _random_split(data, test_size, seed)
    else:
        own, train, split = (data, test), data, {"mode": "own"}
    return DatasetEntry(
        key=key or name,
        name=name,
        source=source,
        train=train,
        test=test,
        split=split,
        own_split=own,
        params=dict(params or {}),
        rows=rows,
        files=dict(files or {}),
    )


def resplit(entry: DatasetEntry, mode: str, test_size: float = 0.3, seed: int = 0) -> DatasetEntry:
    """The same data set with a new split: ``"own"`` (when it has one) or ``"random"``."""
    if mode != "own":
        train, test, split = _random_split(entry.all_rows, test_size, seed)
    elif entry.own_split is None:
        raise DataError(f"{entry.name} has no split of its own; choose a random split")
    else:
        (train, test), split = entry.own_split, {"mode": "own"}
    return DatasetEntry(
        key=entry.key,
        name=entry.name,
        source=entry.source,
        train=train,
        test=test,
        split=split,
        own_split=entry.own_split,
        params=entry.params,
        rows=entry.rows,
        files=entry.files,
    )


# ---------------------------------------------------------------------------------- uploads
@st.cache_data(show_spinner=False, max_entries=8)
def parse_upload(
    data: bytes,
    filename: str,
    taxonomy_data: bytes | None = None,
    taxonomy_name: str | None = None,
) -> HierDataset:
    """Parse uploaded features (CSV, svmlight, Clus ARFF, text CSV) and an optional taxonomy.

    ``hierlab.io.read_dataset_bytes`` guesses the format from the name and content, and
    ``hierlab.io.parse_taxonomy_text`` reads the taxonomy (edge list, CSV, ``a/b/c`` paths or
    JSON). Cached on the bytes (``st.cache_data``), so re-running a page does not parse again.
    Nothing is executed or unpickled.

    Raises
    ------
    HierlabError
        ``DataError``/``TaxonomyError`` with a readable message for any malformed input,
        naming the file, line and node.
    """
    if not data:
        raise DataError(f"{filename}: the file is empty")
    tax = (
        parse_taxonomy_text(taxonomy_data, filename=taxonomy_name or "taxonomy")
        if taxonomy_data
        else None
    )
    ds = read_dataset_bytes(data, filename, taxonomy=tax)
    if ds.n_samples < 2:
        raise DataError(f"{filename}: {ds.n_samples} data row(s); at least 2 are needed")
    if not ds.name:
        ds.name = Path(filename).stem
    return ds


@st.cache_data(show_spinner=False, max_entries=8)
def parse_test_upload(
    data: bytes,
    filename: str,
    train_data: bytes,
    train_name: str,
    taxonomy_data: bytes | None = None,
    taxonomy_name: str | None = None,
) -> HierDataset:
    """Parse a separate test file like its training file (:func:`parse_upload`): the training
    file's taxonomy, vectoriser, imputation means and width (``reference=``). Cached on the
    bytes.

    Raises
    ------
    HierlabError
        As :func:`parse_upload`; also when the widths differ or a test label is not a node of
        the training file's taxonomy.
    """
    if not data:
        raise DataError(f"{filename}: the file is empty")
    train = parse_upload(train_data, train_name, taxonomy_data, taxonomy_name)
    ds = read_dataset_bytes(data, filename, reference=train)
    if ds.n_samples < 1:
        raise DataError(f"{filename}: no data row")
    return ds


def upload_entry(
    features: tuple[str, bytes],
    taxonomy: tuple[str, bytes] | None = None,
    test_size: float = 0.3,
    seed: int = 0,
    test: tuple[str, bytes] | None = None,
) -> DatasetEntry:
    """An uploaded data set (:func:`parse_upload`) as a session entry: split at random, or,
    with a separate test file, that file's rows as the test set (no resplit).

    Parameters
    ----------
    features, taxonomy, test : (file name, content)
        The uploaded files; the taxonomy and the test file are optional.
    test_size : float
    seed : int
        The random split (without a test file).
    """
    name, data = features
    tax_name, tax_data = taxonomy if taxonomy is not None else (None, None)
    ds = parse_upload(data, name, tax_data, tax_name)
    files = {"features": features, **({"taxonomy": taxonomy} if taxonomy else {})}
    test_ds = None
    if test is not None:
        test_ds = parse_test_upload(test[1], test[0], data, name, tax_data, tax_name)
        files["test"] = test
    return make_entry(
        ds,
        f"upload: {name}" + (f" + {test[0]}" if test is not None else ""),
        "upload",
        test_size=test_size,
        seed=seed,
        test=test_ds,
        params={"features": name, "taxonomy": tax_name, "test": test[0] if test else None},
        files=files,
    )


def validation_report(ds: HierDataset) -> tuple[dict[str, Any], pd.DataFrame]:
    """The Data page's report: ``HierDataset.summary()`` and examples per node.

    Returns
    -------
    summary : dict
    per_node : DataFrame
        node, depth, leaf, examples (labelled with the node), below (with it or a descendant).
    """
    tax = ds.taxonomy
    per_node = pd.DataFrame(
        {
            "node": [str(x) for x in tax.names],
            "depth": tax.depth,
            "leaf": tax.is_leaf,
            "examples": ds.examples_per_node(closed=False).to_numpy(),
            "below": ds.examples_per_node(closed=True).to_numpy(),
        }
    )
    return ds.summary(), per_node


def report_messages(summary: dict[str, Any], per_node: pd.DataFrame) -> list[tuple[str, str]]:
    """Readable findings of the report as ``(level, message)`` with level info/warning."""
    out: list[tuple[str, str]] = []
    empty = summary.get("nodes_without_data") or []
    if empty:
        shown = ", ".join(map(str, empty[:8])) + (" ..." if len(empty) > 8 else "")
        out.append(("warning", f"{len(empty)} node(s) have no example below them: {shown}"))
    if summary.get("labels_at_internal_nodes"):
        out.append(
            (
                "info",
                f"{summary['labels_at_internal_nodes']} internal node(s) are used as labels "
                "(scored with the ancestor rule).",
            )
        )
    single = int((per_node["examples"] == 1).sum())
    if single:
        out.append(("warning", f"{single} label(s) have a single example."))
    if summary.get("taxonomy") == "DAG":
        out.append(("info", "The taxonomy is a DAG: only methods that support DAGs are offered."))
    if summary.get("multilabel"):
        out.append(("info", "Multi-label data: only multi-label methods are offered."))
    return out


# ---------------------------------------------------------------------------------- examples
#: characters of an example's text shown in a table cell (the whole text is in the tooltip)
TEXT_CHARS = 300


def example_texts(ds: HierDataset, rows: Any, k: int = 8, limit: int = 5000) -> list[str]:
    """What each listed example says: its own text (``HierDataset.texts``, cut at
    :data:`TEXT_CHARS`) when the data came from text, else its ``k`` largest features by name
    ("words: a, b, c" for bag-of-words data without the text, ``x3=1.2`` for numeric columns).

    Parameters
    ----------
    ds : HierDataset
    rows : array-like of int
        Row indices into ``ds``.
    k : int
    limit : int
        Only the first ``limit`` rows are described (the rest get ``""``): a table shows a
        few hundred.
    """
    idx = np.asarray(rows, dtype=np.int64).ravel()
    head = idx[:limit]
    if ds.texts is not None:
        out = [_cut(str(t)) for t in ds.texts[head]]
    else:
        out = _top_features(ds, head, k)
    return out + [""] * (len(idx) - len(head))


def _cut(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1] + "…"


def _top_features(ds: HierDataset, rows: np.ndarray, k: int) -> list[str]:
    """Each row's ``k`` largest features: the words of sparse (bag-of-words) data, ``name=value``
    of dense columns (one slice of the rows, no dense copy of a sparse matrix)."""
    if not len(rows):
        return []
    words = sp.issparse(ds.X) and ds.feature_names is not None
    names = ds.feature_names or [f"x{j}" for j in range(ds.n_features)]
    X = ds.X[rows]
    X = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.nan_to_num(np.asarray(X)))
    out = []
    for i in range(X.shape[0]):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        vals, cols = X.data[lo:hi], X.indices[lo:hi]
        top = np.argsort(-np.abs(vals) if not words else -vals, kind="stable")[:k]
        if words:
            out.append("words: " + ", ".join(str(names[cols[j]]) for j in top if vals[j] > 0))
        else:
            out.append(", ".join(f"{names[cols[j]]}={vals[j]:.3g}" for j in top))
    return out


# ---------------------------------------------------------------------------------- induction
def induce_taxonomy(
    entry: DatasetEntry, spec: MethodSpec, values: dict[str, Any]
) -> dict[str, Any]:
    """Induce a taxonomy over the training labels as the method ``spec`` does
    (:attr:`MethodSpec.inducer`: MF-Tree, seed 004), with its parameters ``values``; the leaves
    are the training labels, so the induced tree can replace the given one for training.

    Returns
    -------
    dict
        ``{"taxonomy": Taxonomy, "method": its display name, "params": values, "counts":
        examples per node or None, "hsic": the quality of every node's split (nan at
        leaves)}``, as kept in
        :attr:`AppState.induced`.
    """
    inducer = spec.inducer
    if inducer is None:
        raise DataError(f"{spec.display_name} does not induce a taxonomy")
    if entry.train.is_multilabel:
        raise DataError(
            f"{spec.display_name} induces a tree over single-label classes; this data is "
            "multi-label"
        )
    values = {name: spec.param(name).validate(v, spec.name) for name, v in values.items()}
    tree = inducer.estimator(**values).fit(entry.train.X, entry.train.y)
    tax = tree.taxonomy_
    try:
        counts = (
            HierDataset(X=entry.train.X, y=entry.train.y, taxonomy=tax)
            .examples_per_node()
            .to_numpy()
        )
    except HierlabError:
        counts = None
    return {
        "taxonomy": tax,
        "method": spec.display_name,
        "params": values,
        "counts": counts,
        "hsic": tree.node_hsic(),
    }
