"""Loaders for the real benchmark sets kept beside the project (``../shared/datasets``).

The files are never copied into the repository. A loader looks for them in its ``data_home``
argument when given, else in the ``HIERLAB_DATA`` environment variable when set (only there in
both cases), else in ``../shared/datasets`` relative to the repository root and to the working
directory, then ``/work/shared/datasets``; when none holds the files it raises
:class:`DataError` listing where it looked. Every loader returns a ``(train, test)`` pair of
:class:`HierDataset`.

- :func:`load_20newsgroups`: the "bydate" 20 Newsgroups split (11,314 / 7,532 posts) with the
  6-group or name-prefix taxonomy, sublinear TF-IDF fitted on the training posts, cached on disk
  as ``.npz`` + ``.json`` (never pickle) keyed by the parameters.
- :func:`load_clus`: the Clus HMC ARFF benchmarks (ImCLEF07D, Enron_corr, cellcycle_FUN,
  cellcycle_GO), train = train + valid where a set has a validation split.

The IPC patent titles have their own module (:func:`hierlab.datasets.ipc.load_ipc`), which
finds its file and fits its TF-IDF with the helpers here.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import tarfile
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io.arff import read_arff
from hierlab.io.decoding import impute, int32_csr
from hierlab.io.taxonomy_files import read_taxonomy

__all__ = [
    "CLUS_DATASETS",
    "cache_dir",
    "find_data_home",
    "load_20newsgroups",
    "load_clus",
]

_CACHE_VERSION = 1
_NG_DIR = "20newsgroups"
_NG_ARCHIVE = "20news-bydate.tar.gz"
#: the sub-folders of a data root, one per source (20 Newsgroups, Clus HMC, IPC titles)
_DATA_DIRS = (_NG_DIR, "clus", "ipc")

#: Clus data sets: name -> (sub-folder, train files, test file, description).
CLUS_DATASETS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    "ImCLEF07D": (
        "clus",
        ("ImCLEF07D_Train.arff",),
        "ImCLEF07D_Test.arff",
        "ImageCLEF 2007 medical images (Clus HMC): 80 features, tree of 46 nodes + root, "
        "single label",
    ),
    "Enron_corr": (
        "clus",
        ("Enron_corr_trainvalid.arff",),
        "Enron_corr_test.arff",
        "Enron e-mails (Clus HMC): 1,001 binary word features, tree of 56 nodes + root, "
        "multi-label; the training file is train + valid",
    ),
    "cellcycle_FUN": (
        "clus/cellcycle_FUN",
        ("cellcycle_FUN.train.arff", "cellcycle_FUN.valid.arff"),
        "cellcycle_FUN.test.arff",
        "Yeast cell cycle, FunCat tree (Clus HMC): 77 features, 499 nodes + root, multi-label, "
        "missing values; train = train + valid",
    ),
    "cellcycle_GO": (
        "clus/cellcycle_GO",
        ("cellcycle_GO.train.arff", "cellcycle_GO.valid.arff"),
        "cellcycle_GO.test.arff",
        "Yeast cell cycle, Gene Ontology DAG (Clus HMC): 77 features, ~4,100 nodes, multi-label, "
        "missing values; train = train + valid",
    ),
}


# ============================================================================ locations
def _candidates(data_home: str | os.PathLike[str] | None) -> list[Path]:
    """The folders to look in, in order (see :func:`find_data_home`), duplicates removed."""
    if data_home is not None:
        return [Path(data_home).expanduser()]
    env = os.environ.get("HIERLAB_DATA")
    if env:
        return [Path(env).expanduser()]  # an explicit setting: no silent fallback
    out: list[Path] = []
    repo_root = Path(__file__).resolve().parents[2]
    out.append(repo_root.parent / "shared" / "datasets")
    out.append(Path.cwd().parent / "shared" / "datasets")
    out.append(Path("/work/shared/datasets"))
    seen: dict[str, Path] = {}
    for p in out:
        seen.setdefault(str(p.resolve()) if p.exists() else str(p), p)
    return list(seen.values())


def find_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The data root: the first place holding ``20newsgroups/``, ``clus/`` or ``ipc/``.

    Parameters
    ----------
    data_home : path-like, optional
        Look only here. Default: ``$HIERLAB_DATA`` (only there when set), else
        ``../shared/datasets`` relative to the repository root and to the working directory,
        then ``/work/shared/datasets``.

    Raises
    ------
    DataError
        Listing every place it looked.
    """
    tried = []
    for base in _candidates(data_home):
        if any((base / sub).is_dir() for sub in _DATA_DIRS):
            return base
        tried.append(str(base))
    raise DataError(
        f"no data folder (with one of {', '.join(d + '/' for d in _DATA_DIRS)}) found; looked in: "
        f"{'; '.join(tried)}. "
        "Pass data_home=... or set the HIERLAB_DATA environment variable"
    )


def _locate(relative: str, data_home: str | os.PathLike[str] | None) -> Path:
    """The existing file or folder ``relative`` under the data root (or under data_home)."""
    tried = []
    parts = Path(relative).parts
    for base in _candidates(data_home):
        for k in range(len(parts)):
            cand = base.joinpath(*parts[k:])
            if cand.exists():
                return cand
            if data_home is None:
                break  # automatic places must be the data root itself
        tried.append(str(base / relative))
    raise DataError(
        f"cannot find {relative!r}; looked in: {'; '.join(tried)}. Pass data_home=... or set "
        "the HIERLAB_DATA environment variable to the folder that holds "
        f"{', '.join(d + '/' for d in _DATA_DIRS)}"
    )


def cache_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder: ``path``, else ``$HIERLAB_CACHE``, else ``~/.cache/hierlab``."""
    if path is not None:
        return Path(path).expanduser()
    env = os.environ.get("HIERLAB_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "hierlab"


# ============================================================================ 20 newsgroups
def _strip_header(text: str) -> str:
    """The post without its header (everything up to the first blank line)."""
    return text.partition("\n\n")[2]


_QUOTE_RE = re.compile(r"(writes in|writes:|wrote:|says:|said:|^In article|^Quoted from|^\||^>)")


def _strip_quotes(text: str) -> str:
    """The post without quoted lines (``>``, ``|``, "... writes:"), as scikit-learn."""
    return "\n".join(line for line in text.split("\n") if not _QUOTE_RE.search(line))


def _strip_footer(text: str) -> str:
    """The post without its signature block (after the last blank or ``--`` line)."""
    lines = text.strip().split("\n")
    for k in range(len(lines) - 1, -1, -1):
        if lines[k].strip().strip("-") == "":
            break
    return "\n".join(lines[:k]) if k > 0 else text


def _read_20ng_archive(archive: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Posts and group names of the train and test folders of the bydate archive."""
    out: dict[str, list[tuple[str, int, str]]] = {"train": [], "test": []}
    try:
        with tarfile.open(archive, "r:gz") as tf:
            for m in tf:
                if not m.isfile():
                    continue
                parts = m.name.split("/")
                if len(parts) != 3:
                    continue
                split = "train" if parts[0].endswith("train") else "test"
                f = tf.extractfile(m)
                if f is None:
                    continue
                doc = f.read().decode("latin-1")
                key = int(parts[2]) if parts[2].isdigit() else 0
                out[split].append((parts[1], key, doc))
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"cannot read the archive: {exc}", path=str(archive)) from None
    res = {}
    for split, items in out.items():
        items.sort(key=lambda t: (t[0], t[1]))
        res[split] = ([t[2] for t in items], [t[0] for t in items])
    if not res["train"][0] or not res["test"][0]:
        raise DataError(
            "the archive holds no 20news-bydate-train/ or 20news-bydate-test/ posts",
            path=str(archive),
        )
    return res


def _ng_taxonomy(kind: str | Taxonomy, folder: Path, labels: Sequence[str]) -> Taxonomy:
    """The taxonomy asked for: given, flat, or one of the files beside the archive."""
    if isinstance(kind, Taxonomy):
        return kind
    if kind == "flat":
        return Taxonomy.flat(sorted(set(labels)))
    files = {"6groups": "hierarchy_6groups.txt", "nameprefix": "hierarchy_nameprefix.txt"}
    if kind not in files:
        raise ParameterError(
            f"taxonomy must be '6groups', 'nameprefix', 'flat' or a Taxonomy, got {kind!r}"
        )
    path = folder / files[kind]
    if not path.exists():
        raise DataError(f"missing taxonomy file for taxonomy={kind!r}", path=str(path))
    return read_taxonomy(path, format="edges")


def _save_csr(prefix: str, X: sp.csr_matrix) -> dict[str, np.ndarray]:
    """The arrays of the CSR ``X``, named ``<prefix>_data`` etc. (for ``np.savez``)."""
    return {
        f"{prefix}_data": X.data,
        f"{prefix}_indices": X.indices,
        f"{prefix}_indptr": X.indptr,
        f"{prefix}_shape": np.asarray(X.shape, dtype=np.int64),
    }


def _load_csr(arrs: Any, prefix: str) -> sp.csr_matrix:
    """The CSR matrix :func:`_save_csr` stored under ``prefix``."""
    shape = tuple(int(v) for v in arrs[f"{prefix}_shape"])
    return sp.csr_matrix(
        (arrs[f"{prefix}_data"], arrs[f"{prefix}_indices"], arrs[f"{prefix}_indptr"]),
        shape=shape,
    )


def _write_atomic(path: Path, write: Any) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_20newsgroups(
    data_home: str | os.PathLike[str] | None = None,
    taxonomy: str | Taxonomy = "6groups",
    remove: Sequence[str] = (),
    vectorizer_params: dict[str, Any] | None = None,
    cache: bool = True,
    cache_path: str | os.PathLike[str] | None = None,
) -> tuple[HierDataset, HierDataset]:
    """The 20 Newsgroups "bydate" split, sublinear TF-IDF, with a 2-level taxonomy.

    Reads ``20newsgroups/20news-bydate.tar.gz`` (the files scikit-learn's
    ``fetch_20newsgroups`` downloads, decoded as latin-1 like it). Posts are kept whole by default
    (headers included, as scikit-learn's ``remove=()``): a flat ``LinearSVC()`` then reaches
    0.862 test accuracy. The TF-IDF (``TfidfVectorizer(sublinear_tf=True,
    **vectorizer_params)``) is fitted on the 11,314 training posts and applied to the 7,532 test
    posts. The result is cached under :func:`cache_dir` as ``20newsgroups-<key>.npz`` (arrays
    only, read with ``allow_pickle=False``) and ``.json`` (the parameters), ``<key>`` a hash of
    the parameters and of the archive's size and date.

    Parameters
    ----------
    data_home : path-like, optional
        The data root (holding ``20newsgroups/``) or the ``20newsgroups`` folder itself.
        Default: see the module docstring (``$HIERLAB_DATA``, ``../shared/datasets``).
    taxonomy : {"6groups", "nameprefix", "flat"} or Taxonomy, default "6groups"
        ``6groups``: root -> comp, rec, sci, politics, religion, misc -> 20 groups (depth 2);
        ``nameprefix``: the tree of the dotted group names (deeper, unbalanced).
    remove : sequence of {"headers", "footers", "quotes"}, default ()
        Parts of each post to strip, as scikit-learn's ``remove``.
    vectorizer_params : dict, optional
        Extra ``TfidfVectorizer`` parameters (JSON-serialisable to be cached).
    cache : bool, default True
        Read/write the cache.
    cache_path : path-like, optional
        The cache folder (default ``$HIERLAB_CACHE`` or ``~/.cache/hierlab``).

    Returns
    -------
    (train, test) : tuple of HierDataset
        ``X`` CSR float64 (int32 indices) of shape (11314, V) and (7532, V); ``y`` the newsgroup
        names (leaves of the taxonomy).

    Raises
    ------
    DataError
        When the archive is not found (saying where it looked).
    """
    remove = tuple(sorted(set(remove)))
    bad = set(remove) - {"headers", "footers", "quotes"}
    if bad:
        raise ParameterError(f"remove takes 'headers', 'footers', 'quotes'; got {sorted(bad)}")
    archive = _locate(f"{_NG_DIR}/{_NG_ARCHIVE}", data_home)
    params = dict(vectorizer_params or {})
    key_json = _ng_cache_key(archive, remove, params)
    cache = cache and key_json is not None  # parameters that cannot be keyed: no cache
    key = hashlib.sha256((key_json or "").encode()).hexdigest()[:20]
    base = cache_dir(cache_path) / f"20newsgroups-{key}"
    loaded = _read_ng_cache(base, key_json or "") if cache else None
    if loaded is None:
        loaded = _vectorise_20ng(archive, remove, params)
        if cache:
            _write_ng_cache(base, key_json or "", loaded)
    X_tr, X_te, y_tr, y_te, groups, vocab, t_tr, t_te = loaded
    garr = np.asarray(groups, dtype=object)
    tax = _ng_taxonomy(taxonomy, archive.parent, groups)
    desc = "20 Newsgroups (bydate), sublinear TF-IDF fitted on the training posts" + (
        f", removed {', '.join(remove)}" if remove else ", headers kept"
    )
    meta = {"remove": remove, "vectorizer_params": params, "cache": str(base) if cache else None}
    def split(X: sp.spmatrix, y: np.ndarray, texts: Sequence[str]) -> HierDataset:
        return HierDataset(
            int32_csr(X), garr[y], tax, vocab, "20newsgroups", desc, dict(meta),
            texts=np.asarray(texts, dtype=object),
        )

    return split(X_tr, y_tr, t_tr), split(X_te, y_te, t_te)


def _ng_cache_key(archive: Path, remove: tuple[str, ...], params: dict[str, Any]) -> str | None:
    """The JSON of what the cached arrays depend on (None when the parameters are not JSON)."""
    st = archive.stat()
    key_src: dict[str, Any] = {
        "version": _CACHE_VERSION,
        "remove": list(remove),
        "vectorizer_params": params,
        "archive_size": st.st_size,
        "archive_mtime": int(st.st_mtime),
    }
    try:
        return json.dumps(key_src, sort_keys=True)
    except TypeError:
        return None


def _vectorise_20ng(
    archive: Path, remove: tuple[str, ...], params: dict[str, Any]
) -> tuple[Any, ...]:
    """``(X_train, X_test, y_train, y_test, groups, vocabulary, texts_train, texts_test)``
    read from the archive.

    The parts named in ``remove`` are stripped from each post; the TF-IDF is fitted on the
    training posts; ``y`` are indices into the sorted group names; the texts are the posts as
    vectorised.
    """
    raw = _read_20ng_archive(archive)
    docs = {s: raw[s][0] for s in raw}
    for part, fn in (
        ("headers", _strip_header),
        ("footers", _strip_footer),
        ("quotes", _strip_quotes),
    ):
        if part in remove:
            docs = {s: [fn(d) for d in docs[s]] for s in docs}
    X_tr, X_te, vocab = _fit_tfidf(docs["train"], docs["test"], params)
    groups = sorted(set(raw["train"][1]) | set(raw["test"][1]))
    code = {g: i for i, g in enumerate(groups)}
    y_tr = np.asarray([code[g] for g in raw["train"][1]], dtype=np.int64)
    y_te = np.asarray([code[g] for g in raw["test"][1]], dtype=np.int64)
    return X_tr, X_te, y_tr, y_te, groups, vocab, list(docs["train"]), list(docs["test"])


def _pack_texts(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Texts as one UTF-8 byte array and the offsets of each (no object array in a cache)."""
    encoded = [t.encode("utf-8") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def _unpack_texts(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    """Inverse of :func:`_pack_texts`."""
    raw = data.tobytes()
    return [raw[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets.tolist())]


def _fit_tfidf(
    train_docs: Iterable[str], test_docs: Iterable[str], params: dict[str, Any] | None = None
) -> tuple[sp.csr_matrix, sp.csr_matrix, list[str]]:
    """Sublinear TF-IDF fitted on ``train_docs`` only (the test documents are transformed).

    Parameters
    ----------
    train_docs, test_docs : iterable of str
    params : dict, optional
        Extra ``TfidfVectorizer`` parameters.

    Returns
    -------
    X_train, X_test : csr_matrix of float64
    vocabulary : list of str
        The feature names.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(sublinear_tf=True, **(params or {}))
    X_tr = sp.csr_matrix(vec.fit_transform(train_docs), dtype=np.float64)
    X_te = sp.csr_matrix(vec.transform(test_docs), dtype=np.float64)
    return X_tr, X_te, [str(w) for w in vec.get_feature_names_out()]


def _read_ng_cache(base: Path, key_json: str) -> tuple[Any, ...] | None:
    """The cached arrays under ``base`` when their key is ``key_json`` and they are sound."""
    npz, js = base.with_suffix(".npz"), base.with_suffix(".json")
    if not (npz.exists() and js.exists()):
        return None
    try:
        info = json.loads(js.read_text(encoding="utf-8"))
        if info.get("key") != key_json:
            return None
        with np.load(npz, allow_pickle=False) as arrs:
            X_tr = _load_csr(arrs, "train")
            X_te = _load_csr(arrs, "test")
            y_tr = arrs["y_train"].astype(np.int64)
            y_te = arrs["y_test"].astype(np.int64)
            vocab = bytes(arrs["vocabulary"]).decode("utf-8").split("\n")
            t_tr = _unpack_texts(arrs["texts_train"], arrs["texts_train_offsets"])
            t_te = _unpack_texts(arrs["texts_test"], arrs["texts_test_offsets"])
        groups = [str(g) for g in info["groups"]]
        if len(vocab) != X_tr.shape[1] or X_te.shape[1] != X_tr.shape[1]:
            return None
        if y_tr.max(initial=0) >= len(groups) or y_te.max(initial=0) >= len(groups):
            return None
        if len(t_tr) != X_tr.shape[0] or len(t_te) != X_te.shape[0]:
            return None
        return X_tr, X_te, y_tr, y_te, groups, vocab, t_tr, t_te
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None  # a damaged cache is rebuilt


def _write_ng_cache(base: Path, key_json: str, loaded: tuple[Any, ...]) -> None:
    """Cache ``loaded`` as ``base.npz`` (arrays only) and ``base.json`` (key and sizes)."""
    X_tr, X_te, y_tr, y_te, groups, vocab, t_tr, t_te = loaded
    (p_tr, o_tr), (p_te, o_te) = _pack_texts(t_tr), _pack_texts(t_te)
    arrays = {
        "texts_train": p_tr,
        "texts_train_offsets": o_tr,
        "texts_test": p_te,
        "texts_test_offsets": o_te,
        **_save_csr("train", X_tr),
        **_save_csr("test", X_te),
        "y_train": y_tr,
        "y_test": y_te,
        "vocabulary": np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8),
    }
    info = {
        "key": key_json,
        "groups": list(groups),
        "n_train": int(X_tr.shape[0]),
        "n_test": int(X_te.shape[0]),
        "n_features": int(X_tr.shape[1]),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    try:
        # the .npz first: a .json names a complete .npz
        _write_atomic(base.with_suffix(".npz"), lambda p: _savez(p, arrays))
        _write_atomic(
            base.with_suffix(".json"),
            lambda p: Path(p).write_text(json.dumps(info, indent=1), encoding="utf-8"),
        )
    except OSError:
        pass  # a read-only cache folder only costs the recomputation


def _savez(path: str, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez`` into ``path`` exactly (``np.savez`` would append ``.npz`` to a name)."""
    with open(path, "wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]


# ============================================================================ Clus HMC
def load_clus(
    name: str,
    data_home: str | os.PathLike[str] | None = None,
    include_valid: bool = True,
    labels: str = "specific",
) -> tuple[HierDataset, HierDataset]:
    """A Clus HMC benchmark (Vens et al. 2008) as ``(train, test)``.

    The hierarchy is the one the ARFF files declare (see :func:`hierlab.io.read_arff`): full
    path names under a synthetic ``root`` for trees, the GO terms under the file's ``root`` for
    the DAG. The training part is train + valid where the set has a validation split
    (``cellcycle_FUN``, ``cellcycle_GO``; ``Enron_corr``'s training file already is train +
    valid). Missing values ``?`` are imputed by the training column means (over train + valid),
    which are also applied to the test part (``meta["impute_means"]``).

    Parameters
    ----------
    name : {"ImCLEF07D", "Enron_corr", "cellcycle_FUN", "cellcycle_GO"}
        Case-insensitive.
    data_home : path-like, optional
        The data root (holding ``clus/``), or the folder that holds the files.
    include_valid : bool, default True
        Append the validation split to the training part.
    labels : {"specific", "as_is"}, default "specific"
        Drop the labels that are ancestors of another label of the same row (Clus rows list whole
        paths), or keep the rows as written.

    Returns
    -------
    (train, test) : tuple of HierDataset
        Dense ``X``. ImCLEF07D: 10,000 / 1,006 rows, single-label; the others multi-label.

    Raises
    ------
    DataError
        For an unknown name, or files not found (saying where it looked).
    """
    canon = {k.lower(): k for k in CLUS_DATASETS}
    key = canon.get(str(name).lower())
    if key is None:
        raise DataError(f"unknown Clus data set {name!r}; known: {', '.join(CLUS_DATASETS)}")
    sub, train_files, test_file, desc = CLUS_DATASETS[key]
    files = train_files if include_valid else train_files[:1]
    first = _locate(f"{sub}/{files[0]}", data_home)
    folder = first.parent
    parts = _read_clus_parts(first, files[1:], labels)
    tax = parts[0].taxonomy
    X, means, n_missing = _impute_jointly(parts)
    test_path = folder / test_file
    if not test_path.exists():
        raise DataError("missing test file", path=str(test_path))
    test = read_arff(test_path, taxonomy=tax, labels=labels, impute_means=means, multilabel=True)
    y = np.empty(X.shape[0], dtype=object)
    y[:] = [t for p in parts for t in p.y]
    single = all(len(t) == 1 for t in y) and all(len(t) == 1 for t in test.y)
    if single:
        y = _first(y)
        test.y = _first(test.y)
    splits = " + ".join(files)
    meta = {
        "impute_means": means,
        "n_missing": n_missing,
        "train_files": list(files),
        "test_file": test_file,
        "hierarchy_kind": parts[0].meta["hierarchy_kind"],
    }
    train = HierDataset(X, y, tax, parts[0].feature_names, key, f"{desc}. Train: {splits}", meta)
    test.name = key
    test.description = f"{desc}. Test: {test_file}"
    test.meta.update(train_files=list(files), test_file=test_file)
    return train, test


def _read_clus_parts(first: Path, others: Sequence[str], labels: str) -> list[HierDataset]:
    """The training files, missing values kept as NaN; ``others`` beside ``first``, read with
    its taxonomy."""
    parts = [read_arff(first, labels=labels, impute=False, multilabel=True)]
    tax = parts[0].taxonomy
    for f in others:
        path = first.parent / f
        if not path.exists():
            raise DataError("missing split file", path=str(path))
        parts.append(read_arff(path, taxonomy=tax, labels=labels, impute=False, multilabel=True))
    return parts


def _impute_jointly(parts: list[HierDataset]) -> tuple[Any, np.ndarray, int]:
    """The stacked features of ``parts`` imputed with their joint column means.

    Returns
    -------
    X : ndarray or csr_matrix
    means : ndarray of shape (n_features,)
    n_missing : int
        Missing values before the imputation.
    """
    if any(sp.issparse(p.X) for p in parts):
        X_raw: Any = sp.vstack([sp.csr_matrix(p.X) for p in parts], format="csr")
        n_missing = int(np.isnan(X_raw.data).sum())
    else:
        X_raw = np.vstack([p.X for p in parts])
        n_missing = int(np.isnan(X_raw).sum())
    X, means = impute(X_raw, None)
    return X, means, n_missing


def _first(y: np.ndarray) -> np.ndarray:
    """The first label of every row (tuples of one label to node names)."""
    out = np.empty(len(y), dtype=object)
    out[:] = [t[0] for t in y]
    return out
