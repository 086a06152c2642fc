"""Safe model files: ``save(estimator, path)`` / ``load(path)``. Never a pickle.

A model file is a zip archive holding

- ``manifest.json``: ``{"format": "hierlab-model", "version": 1, "hierlab": <version>,
  "root": <encoded estimator>}``;
- ``arrays.npz``: every numpy array, read back with ``allow_pickle=False``.

An estimator is encoded as its class path (which must live in ``hierlab`` or ``sklearn`` and
derive from ``sklearn.base.BaseEstimator``), its constructor parameters and its fitted
attributes, recursively: numbers, strings, lists, dicts, numpy arrays, CSR/CSC matrices, pandas
DataFrames, :class:`~hierlab.Taxonomy` (as its edge list), nested estimators (a top-down
classifier's per-node LinearSVCs) and hierlab's own plain-data helper objects (their fields; no
constructor or other code of theirs runs on load). Nothing in a file can name a function to
call; loading a file from elsewhere can at worst build a wrong scikit-learn/hierlab estimator,
never run code.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import zipfile
import zlib
from os import PathLike
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from hierlab.core.exceptions import ModelFileError
from hierlab.core.taxonomy import Taxonomy
from hierlab.core.version import __version__

__all__ = ["FORMAT", "VERSION", "load", "save"]

FORMAT = "hierlab-model"
VERSION = 1
_ALLOWED_PREFIXES = ("hierlab.", "sklearn.")
_PICKLE_MAGIC = (b"\x80", b"(", b"c")
#: the manifest is JSON text: more than this (uncompressed) is refused before it is read
MAX_MANIFEST_BYTES = 64 * 2**20
#: default cap on the uncompressed size of all arrays of a file (``load(max_bytes=...)``)
MAX_ARRAY_BYTES = 4 * 2**30


class _Encoder:
    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, a: np.ndarray) -> dict[str, Any]:
        if a.dtype == object:
            try:
                return {
                    "__object_array__": [self.encode(v, "array item") for v in a.tolist()],
                    "shape": list(a.shape),
                }
            except ModelFileError:
                raise
        key = f"a{len(self.arrays)}"
        self.arrays[key] = np.ascontiguousarray(a)
        return {"__array__": key}

    def encode(self, v: Any, where: str) -> Any:
        if v is None or isinstance(v, bool | str):
            return v
        if isinstance(v, int | np.integer):
            return {"__int__": int(v)} if isinstance(v, np.integer) else v
        if isinstance(v, float | np.floating):
            f = float(v)
            if np.isfinite(f):
                return {"__float__": f} if isinstance(v, np.floating) else f
            return {"__nonfinite__": repr(f)}
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, np.str_):
            return str(v)
        if isinstance(v, np.ndarray):
            return self.array(v)
        if sp.issparse(v):
            m = sp.csr_matrix(v)
            return {
                "__csr__": [self.array(m.data), self.array(m.indices), self.array(m.indptr)],
                "shape": list(m.shape),
            }
        if isinstance(v, Taxonomy):
            return {
                "__taxonomy__": {
                    "nodes": [str(n) for n in v.names],
                    "edges": [list(e) for e in v.to_edges()],
                }
            }
        if isinstance(v, pd.DataFrame):
            return {
                "__frame__": self.encode(v.to_dict(orient="list"), where),
                "columns": [str(c) for c in v.columns],
            }
        if isinstance(v, BaseEstimator):
            return self.estimator(v, where)
        if isinstance(v, list | tuple):
            items = [self.encode(x, where) for x in v]
            return items if isinstance(v, list) else {"__tuple__": items}
        if isinstance(v, dict):
            keys = list(v.keys())
            return {"__dict__": [[self.encode(k, where), self.encode(v[k], where)] for k in keys]}
        if isinstance(v, np.random.RandomState | np.random.Generator):
            return None
        cls = type(v)
        if cls.__module__.startswith("hierlab.") and not callable(v):
            # a plain-data helper object of hierlab (a model, a routing table): its fields
            fields = _fields(v)
            if fields is not None:
                return {
                    "__object__": f"{cls.__module__}.{cls.__qualname__}",
                    "state": {k: self.encode(x, f"{where}.{k}") for k, x in fields.items()},
                }
        raise ModelFileError(
            f"cannot save {where}: values of type {type(v).__module__}.{type(v).__name__} "
            "have no safe encoding"
        )

    def estimator(self, est: BaseEstimator, where: str) -> dict[str, Any]:
        cls = type(est)
        path = f"{cls.__module__}.{cls.__qualname__}"
        if not path.startswith(_ALLOWED_PREFIXES):
            raise ModelFileError(
                f"cannot save {where}: class {path} is not a hierlab/sklearn class"
            )
        params = est.get_params(deep=False)
        state = {k: v for k, v in vars(est).items() if k not in params}
        return {
            "__estimator__": path,
            "params": {k: self.encode(v, f"{where}.{k}") for k, v in params.items()},
            "state": {k: self.encode(v, f"{where}.{k}") for k, v in state.items()},
        }


class _Decoder:
    def __init__(self, arrays: Any) -> None:
        self.arrays = arrays

    def decode(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "__array__" in v:
            key = v["__array__"]
            if not isinstance(key, str) or key not in self.arrays.files:
                raise ModelFileError(f"model file is missing array {key!r} (truncated or tampered)")
            try:
                return self.arrays[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                    raise ModelFileError(
                        f"array {key!r} holds Python objects, i.e. a pickle: refused (hierlab "
                        "never unpickles; model files hold numbers and strings only)"
                    ) from None
                raise
        if "__object_array__" in v:
            out = np.empty(len(v["__object_array__"]), dtype=object)
            out[:] = [self.decode(x) for x in v["__object_array__"]]
            return out.reshape(v["shape"])
        if "__int__" in v:
            return np.int64(v["__int__"])
        if "__float__" in v:
            return np.float64(v["__float__"])
        if "__nonfinite__" in v:
            return float(v["__nonfinite__"])
        if "__csr__" in v:
            data, indices, indptr = (self.decode(x) for x in v["__csr__"])
            return sp.csr_matrix((data, indices, indptr), shape=tuple(v["shape"]))
        if "__taxonomy__" in v:
            t = v["__taxonomy__"]
            return Taxonomy(t["edges"], nodes=t["nodes"])
        if "__frame__" in v:
            return pd.DataFrame(self.decode(v["__frame__"]), columns=v["columns"])
        if "__tuple__" in v:
            return tuple(self.decode(x) for x in v["__tuple__"])
        if "__dict__" in v:
            return {_hashable(self.decode(k)): self.decode(val) for k, val in v["__dict__"]}
        if "__estimator__" in v:
            return self.estimator(v)
        if "__object__" in v:
            return self.plain_object(v)
        raise ModelFileError(f"unknown entry in model file: keys {sorted(v)[:5]}")

    def estimator(self, v: dict[str, Any]) -> BaseEstimator:
        path = v["__estimator__"]
        if not isinstance(path, str) or not path.startswith(_ALLOWED_PREFIXES):
            raise ModelFileError(f"model file names a class outside hierlab/sklearn: {path!r}")
        cls = _import_class(path)
        if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
            raise ModelFileError(f"{path!r} is not an estimator class")
        params = {k: self.decode(p) for k, p in v.get("params", {}).items()}
        try:
            est = cls(**params)
        except TypeError as exc:
            raise ModelFileError(f"parameters of {path} do not match this version: {exc}") from None
        for k, s in v.get("state", {}).items():
            setattr(est, k, self.decode(s))
        return est

    def plain_object(self, v: dict[str, Any]) -> Any:
        path = v["__object__"]
        if not isinstance(path, str) or not path.startswith("hierlab."):
            raise ModelFileError(f"model file names an object outside hierlab: {path!r}")
        cls = _import_class(path)
        if not isinstance(cls, type) or issubclass(cls, BaseException):
            raise ModelFileError(f"{path!r} is not a data class")
        obj = cls.__new__(cls)  # no constructor runs: only the stored fields are set
        for k, s in v.get("state", {}).items():
            object.__setattr__(obj, k, self.decode(s))
        return obj


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: model files written before the package took its current layout name classes by their old
#: module paths (a class's defining module; a Taxonomy is stored by value) and names; they are
#: read through these two maps (data only, no code)
_OLD_MODULES = {
    "hierlab.regularizers": "hierlab.core.regularizers",
    "hierlab.solvers.block_cd": "hierlab.methods.hr.solver",
    "hierlab.solvers.hieron": "hierlab.methods.hieron.solver",
    "hierlab.models.hieron": "hierlab.methods.hieron.model",
    "hierlab.solvers.shared_alpha": "hierlab.methods.nhsvm.shared_alpha",
    "hierlab.solvers.shared_dual": "hierlab.methods.nhsvm.shared_dual",
    "hierlab.models.nhsvm_dual": "hierlab.methods.nhsvm.dual",
    "hierlab.models.nhsvm": "hierlab.methods.nhsvm.model",
    "hierlab.models.orthogonal": "hierlab.methods.orthogonal.model",
    "hierlab.estimators.base": "hierlab.methods.base",
    "hierlab.estimators.orthogonal": "hierlab.methods.orthogonal.estimators",
    "hierlab.estimators.hr": "hierlab.methods.hr.estimators",
    "hierlab.estimators.hieron": "hierlab.methods.hieron.estimators",
    "hierlab.estimators.nhsvm": "hierlab.methods.nhsvm.estimators",
    "hierlab.estimators.mftree": "hierlab.methods.mftree.estimators",
    "hierlab.estimators.topdown": "hierlab.methods.topdown",
    "hierlab.induction.mftree": "hierlab.methods.mftree.induction",
    "hierlab.induction.cmtl": "hierlab.methods.mftree.cmtl",
    "hierlab.datasets.base": "hierlab.core.dataset",
}
_OLD_CLASSES = {
    "OrthogonalTransferSVM": "OrthogonalTransferClassifier",
    "FlatMulticlassSVM": "FlatMulticlassClassifier",
    "HierarchicalMulticlassSVM": "HierarchicalMulticlassClassifier",
    "TransferSVM": "TransferClassifier",
    "TreeLossSVM": "TreeLossClassifier",
    "HSVM": "HSVMClassifier",
    "NHSVM": "NHSVMClassifier",
    "SharedSVM": "SharedSVMClassifier",
    "OneVsRestSVM": "OneVsRestSVMClassifier",
    "OneVsRestLR": "OneVsRestLRClassifier",
}


def _import_class(path: str) -> Any:
    """The class named by a dotted ``path`` in hierlab or scikit-learn.

    Only modules that are already part of the package are imported, never ``__main__`` or a
    dunder module, and the name must be a plain identifier path (no attribute tricks).
    """
    parts = path.split(".")
    if len(parts) < 2 or not all(_NAME.fullmatch(p) for p in parts):
        raise ModelFileError(f"model file names an invalid class path {path[:120]!r}")
    if any(p.startswith("__") for p in parts):
        raise ModelFileError(f"model file names a special module or attribute: {path[:120]!r}")
    mod_name = _OLD_MODULES.get(".".join(parts[:-1]), ".".join(parts[:-1]))
    cls_name = _OLD_CLASSES.get(parts[-1], parts[-1])
    try:
        mod = importlib.import_module(mod_name)
        cls = getattr(mod, cls_name)
    except (ImportError, AttributeError):
        raise ModelFileError(f"model file names an unknown class {path!r}") from None
    if getattr(cls, "__module__", "").split(".")[0] not in ("hierlab", "sklearn"):
        # a name re-exported from elsewhere (e.g. ``sklearn.utils.np``) is not a class of ours
        raise ModelFileError(f"{path!r} is not a hierlab/sklearn class")
    return cls


def _fields(v: Any) -> dict[str, Any] | None:
    """The data fields of an object (``__dict__`` and ``__slots__``), or None if it has none."""
    out: dict[str, Any] = dict(getattr(v, "__dict__", {}))
    for klass in type(v).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(v, name):
                out[name] = getattr(v, name)
    if not out and not hasattr(v, "__dict__"):
        return None
    return out


def _hashable(k: Any) -> Any:
    if isinstance(k, list):
        return tuple(_hashable(x) for x in k)
    if isinstance(k, np.generic):
        return k.item()
    return k


def save(estimator: BaseEstimator, path: str | PathLike[str]) -> None:
    """Write a (fitted or not) hierlab or scikit-learn estimator to a safe model file.

    Parameters
    ----------
    estimator : BaseEstimator
    path : path-like
        Conventionally ``*.hlm`` (a zip archive).

    Raises
    ------
    ModelFileError
        When an attribute has no safe encoding (it names the attribute).
    """
    enc = _Encoder()
    root = enc.estimator(estimator, type(estimator).__name__)
    manifest = {"format": FORMAT, "version": VERSION, "hierlab": __version__, "root": root}
    buf = io.BytesIO()
    np.savez_compressed(buf, **enc.arrays)  # type: ignore[arg-type]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        zf.writestr("arrays.npz", buf.getvalue())


def _check_member(path: Any, info: zipfile.ZipInfo, cap: int, what: str) -> None:
    """Refuse a zip member whose declared uncompressed size exceeds ``cap`` (a zip bomb, or a
    file too large for this machine), before decompressing anything.

    ``zipfile`` stops reading a member at its declared size, so a member that lies about it
    cannot inflate further."""
    if info.file_size > cap:
        raise ModelFileError(
            f"{path}: {what} would inflate to {info.file_size:,} bytes (limit {cap:,}); refused"
        )


def load(path: str | PathLike[str], max_bytes: int = MAX_ARRAY_BYTES) -> BaseEstimator:
    """Read a model file written by :func:`save`.

    Parameters
    ----------
    path : path-like
    max_bytes : int, default 4 GiB
        Largest total uncompressed size of the arrays; a larger file (or a zip bomb) is refused
        before anything is decompressed. The manifest is capped at 64 MiB.

    Raises
    ------
    ModelFileError
        For a pickle (refused, never unpickled), a file that is not a hierlab model, a
        version this hierlab does not know, a truncated/tampered file, an array of Python
        objects, or a file larger than the limits.
    """
    _check_head(path)
    manifest, arrays_bytes = _read_archive(path, max_bytes)
    _check_manifest(path, manifest)
    arrays = _read_arrays(path, arrays_bytes, max_bytes)
    try:
        est = _Decoder(arrays).decode(manifest["root"])
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except RecursionError:
        raise ModelFileError(f"{path}: corrupt model file (nested too deeply)") from None
    except _DECODE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt model file ({type(exc).__name__}: {exc})") from None
    if not isinstance(est, BaseEstimator):
        raise ModelFileError(f"{path}: the file does not hold an estimator")
    return est


#: what reading a damaged archive or array can raise (each becomes a ModelFileError)
_READ_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    OSError,
    EOFError,
    NotImplementedError,  # an unsupported compression method
    zipfile.BadZipFile,
    zlib.error,
)
#: ... and what reading the archive's manifest, or decoding the estimator, adds to them
_ARCHIVE_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.LargeZipFile,
    UnicodeDecodeError,
    KeyError,
    *_READ_ERRORS,
)
_DECODE_ERRORS: tuple[type[BaseException], ...] = (
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    *_READ_ERRORS,
)


def _check_head(path: str | PathLike[str]) -> None:
    """Refuse a pickle or anything that is not a zip archive, from the first bytes."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read ({exc.strerror})") from None
    if head[:1] in _PICKLE_MAGIC and not head.startswith(b"PK"):
        raise ModelFileError(
            f"{path}: this looks like a Python pickle; hierlab never unpickles files "
            "(they can run arbitrary code). Re-save the model with hierlab.save()."
        )
    if not head.startswith(b"PK"):
        raise ModelFileError(f"{path}: not a hierlab model file (expected a zip archive)")


def _read_archive(path: str | PathLike[str], max_bytes: int) -> tuple[Any, bytes]:
    """The parsed manifest and the raw ``arrays.npz`` bytes, sizes checked before inflating."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if "manifest.json" not in names or "arrays.npz" not in names:
                raise ModelFileError(f"{path}: not a hierlab model file (no manifest)")
            _check_member(path, zf.getinfo("manifest.json"), MAX_MANIFEST_BYTES, "the manifest")
            _check_member(path, zf.getinfo("arrays.npz"), max_bytes, "the arrays")
            manifest = json.loads(zf.read("manifest.json").decode("utf-8"))
            return manifest, zf.read("arrays.npz")
    except ModelFileError:
        raise
    except RecursionError:
        raise ModelFileError(f"{path}: corrupt model file (manifest nested too deeply)") from None
    except _ARCHIVE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt model file ({exc})") from None


def _check_manifest(path: str | PathLike[str], manifest: Any) -> None:
    """Refuse a manifest of another format or version."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(
            f"{path}: not a hierlab model file (format {manifest.get('format')!r})"
            if isinstance(manifest, dict)
            else f"{path}: not a hierlab model file"
        )
    if manifest.get("version") != VERSION:
        raise ModelFileError(
            f"{path}: model file version {manifest.get('version')!r}; this hierlab reads {VERSION}"
        )


def _read_arrays(path: str | PathLike[str], arrays_bytes: bytes, max_bytes: int) -> Any:
    """``np.load`` of the arrays (no pickles), every member's size checked first."""
    try:
        with zipfile.ZipFile(io.BytesIO(arrays_bytes)) as inner:
            infos = inner.infolist()
            for info in infos:
                _check_member(path, info, max_bytes, f"array {info.filename!r}")
            total = sum(info.file_size for info in infos)
            if total > max_bytes:
                raise ModelFileError(
                    f"{path}: the arrays would inflate to {total:,} bytes (limit {max_bytes:,})"
                )
        return np.load(io.BytesIO(arrays_bytes), allow_pickle=False)
    except ModelFileError:
        raise
    except _READ_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt arrays ({exc})") from None
