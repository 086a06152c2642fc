"""Safe model files: ``save(estimator, path)`` / ``load(path)``. Never a pickle.

A model file is a zip archive of exactly two members:

- ``manifest.json``: ``{"format": "hierlab-model", "version": 2, "hierlab": <version>,
  "root": <encoded estimator>, "checksums": {...}}``;
- ``arrays.npz``: every numpy array (``a0.npy``, ``a1.npy``, ...), never an object array.

An estimator is encoded as its class path, its constructor parameters and its fitted
attributes, recursively: numbers, strings, lists, dicts, numpy arrays, CSR/CSC matrices, pandas
DataFrames, :class:`~hierlab.Taxonomy` (as its edge list), nested estimators (a top-down
classifier's per-node LinearSVCs) and hierlab's own plain-data helper objects (their fields; no
constructor or other code of theirs runs on load). Nothing in a file can name a function to
call.

What :func:`load` checks, before anything of a size the file declares is allocated:

- the path is a regular file (FIFOs, devices and symlinks to them are refused);
- the archive holds ``manifest.json`` and ``arrays.npz`` once each (a duplicate, an encrypted or
  an unexpected member is refused), and so does ``arrays.npz`` (``a<k>.npy`` members only);
- sizes: the manifest's inflated size and its number of JSON values (``max_manifest_entries``
  of :mod:`hierlab.core.limits`, counted before parsing), the arrays' total, and every ``.npy``
  header's declared size against the bytes its member actually holds;
- integrity: the manifest records the SHA-256 of ``arrays.npz`` and of its own ``root`` entry
  (``checksums``), and a file whose content differs is refused. **Files of format version 1**
  (such as ``tests/data/legacy_models``) hold no checksums and are read without this check;
  from version 2 on, a manifest without checksums is refused;
- whitelists: the root class must be one of hierlab's registered estimator classes (nested
  estimators: a hierlab or scikit-learn estimator class); state keys must be plain identifiers
  that shadow neither a method, property or other callable of the class nor a constructor
  parameter; integers must fit in 64 bits.

A checksum detects corruption and careless edits, not a forger who recomputes it: a file from
elsewhere can at worst build a wrong hierlab estimator, never run code.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import io
import json
import os
import re
import stat
import tempfile
import zipfile
from os import PathLike
from typing import IO, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from hierlab.core import limits
from hierlab.core.exceptions import DataError, ModelFileError, ParameterError
from hierlab.core.registry import get_method, list_methods
from hierlab.core.taxonomy import Taxonomy
from hierlab.core.version import __version__
from hierlab.io.decoding import check_path, open_regular
from hierlab.io.model_archive import READ_ERRORS, check_head, read_archive, read_arrays

__all__ = [
    "FORMAT",
    "VERSION",
    "check_model",
    "checksums",
    "load",
    "model_bytes",
    "save",
    "writable_target",
]

FORMAT = "hierlab-model"
#: the format version :func:`save` writes (2: with checksums)
VERSION = 2
#: the versions :func:`load` reads; those before 2 carry no checksums
READABLE_VERSIONS = (1, 2)
_INT64 = (-(2**63), 2**63 - 1)
_ALLOWED_PREFIXES = ("hierlab.", "sklearn.")
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
    def __init__(self, arrays: Any, version: int = VERSION) -> None:
        self.arrays = arrays
        self.version = version

    def decode(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if isinstance(v, int) and not isinstance(v, bool):
            return _int64(v)
        if not isinstance(v, dict):
            return v
        if "__array__" in v:
            key = v["__array__"]
            if not isinstance(key, str) or key not in self.arrays:
                raise ModelFileError(f"model file is missing array {key!r} (truncated or tampered)")
            return self.arrays[key]
        if "__object_array__" in v:
            out = np.empty(len(v["__object_array__"]), dtype=object)
            out[:] = [self.decode(x) for x in v["__object_array__"]]
            return out.reshape(v["shape"])
        if "__int__" in v:
            return np.int64(_int64(v["__int__"]))
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
            return self.frame(v)
        if "__tuple__" in v:
            return tuple(self.decode(x) for x in v["__tuple__"])
        if "__dict__" in v:
            return {_hashable(self.decode(k)): self.decode(val) for k, val in v["__dict__"]}
        if "__estimator__" in v:
            return self.estimator(v)
        if "__object__" in v:
            return self.plain_object(v)
        raise ModelFileError(f"unknown entry in model file: keys {sorted(v)[:5]}")

    def frame(self, v: dict[str, Any]) -> pd.DataFrame:
        """A saved table: its columns checked, its data decoded, any mismatch refused."""
        cols = _frame_columns(v)
        data = self.decode(v["__frame__"])
        if not isinstance(data, dict) or set(data) != set(cols):
            raise ModelFileError("a table's data does not match its column names")
        try:
            return pd.DataFrame(data, columns=cols)
        except (TypeError, ValueError) as exc:
            raise ModelFileError(f"a table in the model file is malformed: {exc}") from None

    def estimator(self, v: dict[str, Any]) -> BaseEstimator:
        path = v["__estimator__"]
        if not isinstance(path, str) or not path.startswith(_ALLOWED_PREFIXES):
            raise ModelFileError(f"model file names a class outside hierlab/sklearn: {path!r}")
        cls = _import_class(path)
        if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
            raise ModelFileError(f"{path!r} is not an estimator class")
        params = {k: self.decode(p) for k, p in v.get("params", {}).items()}
        if self.version >= 2:  # save writes every constructor parameter of the class
            missing = sorted(set(inspect.signature(cls).parameters) - set(params) - {"self"})
            if missing:
                raise ModelFileError(
                    f"the state stored as {path} lacks its parameter(s) {missing[:3]}: the "
                    "file was not written for this class"
                )
        try:
            est = cls(**params)
        except TypeError as exc:
            raise ModelFileError(f"parameters of {path} do not match this version: {exc}") from None
        state = v.get("state", {})
        param_names = set(params)
        for k in state:
            _check_state_key(cls, k, param_names)
        for k, s in state.items():
            setattr(est, k, self.decode(s))
        upgrade = getattr(est, "_upgrade_state", None)
        if callable(upgrade):  # an attribute renamed since the file was written
            upgrade()
        return est

    def plain_object(self, v: dict[str, Any]) -> Any:
        path = v["__object__"]
        if not isinstance(path, str) or not path.startswith("hierlab."):
            raise ModelFileError(f"model file names an object outside hierlab: {path!r}")
        cls = _import_class(path)
        if not isinstance(cls, type) or issubclass(cls, BaseException):
            raise ModelFileError(f"{path!r} is not a data class")
        obj = cls.__new__(cls)  # no constructor runs: only the stored fields are set
        state = v.get("state", {})
        for k in state:
            _check_state_key(cls, k, set())
        for k, s in state.items():
            object.__setattr__(obj, k, self.decode(s))
        return obj


def _frame_columns(v: dict[str, Any]) -> list[str]:
    """The column names of a saved table, refused unless a list of strings."""
    cols = v.get("columns")
    if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
        raise ModelFileError(
            f"a table's column names must be a list of strings, got {str(cols)[:40]!r}"
        )
    return cols


def _int64(v: Any) -> int:
    """``v``, refused unless it is an integer that fits in 64 bits (as every saved one does)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise ModelFileError(f"an '__int__' entry holds {str(v)[:40]!r}, not an integer")
    if not _INT64[0] <= v <= _INT64[1]:
        shown = str(v) if len(str(v)) <= 40 else f"{str(v)[:20]}...({len(str(v))} digits)"
        raise ModelFileError(f"integer {shown} out of range (model files hold 64-bit integers)")
    return v


def _check_state_key(cls: type, key: Any, params: set[str]) -> None:
    """Refuse a state key that is not a plain identifier, or would shadow a method, property
    or other callable of ``cls``, or a constructor parameter."""
    if not isinstance(key, str) or not _NAME.fullmatch(key) or key.startswith("__"):
        raise ModelFileError(f"state key {key!r} of {cls.__name__} is not a plain attribute name")
    if key in params:
        raise ModelFileError(
            f"state key {key!r} of {cls.__name__} would overwrite its constructor parameter"
        )
    try:
        attr = inspect.getattr_static(cls, key)
    except AttributeError:
        return
    if callable(attr) or hasattr(attr, "__get__"):
        raise ModelFileError(
            f"state key {key!r} would shadow {cls.__name__}.{key} (a method or property): refused"
        )


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: module paths a model file may name for a class (a Taxonomy is stored by value), each mapped
#: to the module that defines the class; read as data, no code
MODULE_PATHS = {
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
#: class names a model file may name, each mapped to the class's name
CLASS_NAMES = {
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
    mod_name = MODULE_PATHS.get(".".join(parts[:-1]), ".".join(parts[:-1]))
    cls_name = CLASS_NAMES.get(parts[-1], parts[-1])
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


def save(estimator: BaseEstimator, path: str | PathLike[str] | IO[bytes]) -> None:
    """Write a (fitted or not) hierlab estimator to a safe model file.

    The file is written next to its target under a temporary name, then renamed over it: a
    failed write (a full disk) leaves no half-written model behind.

    Parameters
    ----------
    estimator : BaseEstimator
        One of hierlab's registered estimator classes.
    path : path-like or binary file
        Conventionally ``*.hlm`` (a zip archive); an existing target must be a regular file
        (a FIFO, a device such as ``/dev/full`` or a directory is refused at once). A binary
        file object open for writing (``io.BytesIO``) receives the bytes.

    Raises
    ------
    ModelFileError
        When ``estimator`` is not of a registered hierlab class, an attribute has no safe
        encoding (it names the attribute), or the target cannot be written (it names the file).
    """
    if type(estimator) not in _root_classes():
        raise ModelFileError(
            f"cannot save a {type(estimator).__module__}.{type(estimator).__qualname__}: model "
            "files hold hierlab's registered estimators (hierlab.list_methods())"
        )
    if hasattr(path, "write"):
        path.write(model_bytes(estimator))
        return
    target = writable_target(path)
    blob = model_bytes(estimator)
    folder, name = os.path.split(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder or ".")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise ModelFileError(f"{target}: cannot write the model: {exc.strerror}") from None


def model_bytes(estimator: BaseEstimator) -> bytes:
    """The content of the model file of ``estimator`` (what :func:`save` writes)."""
    enc = _Encoder()
    root = enc.estimator(estimator, type(estimator).__name__)
    buf = io.BytesIO()
    np.savez_compressed(buf, **enc.arrays)  # type: ignore[arg-type]
    arrays = buf.getvalue()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "hierlab": __version__,
        "root": root,
        "checksums": checksums(root, arrays),
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        zf.writestr("arrays.npz", arrays)
    return out.getvalue()


def writable_target(path: Any) -> str:
    """``path`` (a symlink resolved) if a model may be written there; else ModelFileError.

    A missing file in an existing directory, or an existing regular file, may be written; a
    directory, a FIFO, a device or a socket may not (checked without opening: a FIFO never
    blocks).
    """
    try:
        spath = check_path(path)
    except DataError as exc:
        raise ParameterError(f"save: {exc}") from None
    target = os.path.realpath(spath)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        folder = os.path.dirname(target) or "."
        if not os.path.isdir(folder):
            raise ModelFileError(f"{spath}: cannot write the model: no such directory") from None
        return target
    except OSError as exc:
        raise ModelFileError(f"{spath}: cannot write the model: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ModelFileError(f"{spath}: is a directory; give a file name such as model.hlm")
    if not stat.S_ISREG(st.st_mode):
        raise ModelFileError(
            f"{spath}: not a regular file (a FIFO, a device or a socket): a model is written "
            "to a regular file only"
        )
    return target


def _check_max_bytes(max_bytes: Any) -> int:
    """``max_bytes`` of :func:`load`: a positive int, else a ParameterError."""
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int | np.integer):
        raise ParameterError(
            f"max_bytes must be a positive int (bytes), got {type(max_bytes).__name__} "
            f"{max_bytes!r}"
        )
    if max_bytes <= 0:
        raise ParameterError(f"max_bytes must be a positive int (bytes), got {max_bytes}")
    return int(max_bytes)


def checksums(root: Any, arrays: bytes) -> dict[str, str]:
    """The ``checksums`` entry of a manifest: SHA-256 of ``arrays.npz`` and of the root entry.

    The manifest cannot hold its own digest, so its ``root`` entry is hashed in a canonical
    JSON form (sorted keys, no spaces), which reads back identically.

    Parameters
    ----------
    root : JSON value
        The manifest's ``root`` entry.
    arrays : bytes
        The content of the ``arrays.npz`` member.

    Returns
    -------
    dict
        ``{"arrays.npz": hex digest, "manifest.json#root": hex digest}``.
    """
    return {
        "arrays.npz": hashlib.sha256(arrays).hexdigest(),
        "manifest.json#root": _root_digest(root),
    }


def _root_digest(root: Any) -> str:
    """SHA-256 of the manifest's ``root`` entry in canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(root, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(canonical).hexdigest()


def _root_classes() -> set[type]:
    """hierlab's registered estimator classes: the only classes a model file's root may name."""
    return {get_method(name).estimator for name in list_methods()}


def load(path: str | PathLike[str], max_bytes: int = MAX_ARRAY_BYTES) -> BaseEstimator:
    """Read a model file written by :func:`save` (see the module docstring for every check).

    Parameters
    ----------
    path : path-like
    max_bytes : int, default 4 GiB
        Largest total uncompressed size of the arrays; a larger file (or a zip bomb) is refused
        before anything is decompressed. The manifest is capped at 64 MiB and at
        ``max_manifest_entries`` JSON values (:mod:`hierlab.core.limits`).

    Returns
    -------
    BaseEstimator
        An instance of one of hierlab's registered estimator classes.

    Raises
    ------
    ModelFileError
        Naming the file and the member, entry or key at fault: a pickle (refused, never
        unpickled), a file that is not a regular file or not a hierlab model, a version this
        hierlab does not read, a checksum that differs, a duplicate, encrypted or unexpected
        member, a declared size beyond the member's bytes or the limits, an array of Python
        objects, a foreign root class, a state key shadowing a method, an integer beyond 64
        bits.
    """
    max_bytes = _check_max_bytes(max_bytes)
    try:
        fh = open_regular(path)
    except DataError as exc:
        raise ModelFileError(str(exc)) from None
    with fh:
        try:
            check_head(path, fh.read(4))
            fh.seek(0)
        except OSError as exc:
            raise ModelFileError(f"{path}: cannot read: {exc.strerror}") from None
        manifest_bytes, arrays_file, arrays_sha = read_archive(path, fh, max_bytes)
    with arrays_file:
        manifest = _parse_manifest(path, manifest_bytes)
        _check_manifest(path, manifest)
        _check_root_class(path, manifest["root"])
        arrays = read_arrays(path, arrays_file, max_bytes)
    _verify_checksums(path, manifest, arrays_sha)  # before any class is built
    try:
        est = _Decoder(arrays, manifest["version"]).decode(manifest["root"])
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except RecursionError:
        raise ModelFileError(f"{path}: corrupt model file (nested too deeply)") from None
    except _DECODE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt model file ({type(exc).__name__}: {exc})") from None
    if type(est) not in _root_classes():  # pragma: no cover - _check_root_class decided
        raise ModelFileError(f"{path}: the file does not hold a hierlab estimator")
    _check_meaning(path, est, manifest["version"])
    return est


def _check_meaning(path: Any, est: BaseEstimator, version: int = VERSION) -> None:
    """What the decoded state means, checked by its class's declarations (see
    :mod:`hierlab.methods.loaded`); a ModelFileError naming the file, attribute and rule."""
    from hierlab.methods.base import HierarchicalClassifier
    from hierlab.methods.loaded import check_loaded

    if not isinstance(est, HierarchicalClassifier):  # pragma: no cover - the root classes are
        return
    try:
        check_loaded(est, compare_derived=version >= 2)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    except RecursionError:
        raise ModelFileError(f"{path}: corrupt model file (nested too deeply)") from None
    except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError) as exc:
        raise ModelFileError(
            f"{path}: the {type(est).__name__} state does not fit together "
            f"({type(exc).__name__}: {str(exc)[:200]})"
        ) from None


def check_model(path: str | PathLike[str], max_bytes: int = MAX_ARRAY_BYTES) -> dict[str, Any]:
    """Check a model file without keeping what it holds: every check of :func:`load`.

    Parameters
    ----------
    path : path-like
    max_bytes : int, default 4 GiB
        As in :func:`load`.

    Returns
    -------
    dict
        What the file holds: ``class``, ``method`` (the registry name of the class),
        ``n_features``, ``n_classes``, ``n_nodes`` (None for an unfitted estimator).

    Raises
    ------
    ModelFileError
        As :func:`load`: the file, the member or attribute, and the rule broken.
    """
    est = load(path, max_bytes=max_bytes)
    names = [n for n in list_methods() if get_method(n).estimator is type(est)]
    tax = getattr(est, "taxonomy_", None)
    return {
        "class": type(est).__name__,
        "method": names[0] if names else None,
        "n_features": getattr(est, "n_features_in_", None),
        "n_classes": len(est.classes_) if hasattr(est, "classes_") else None,
        "n_nodes": None if tax is None else tax.n_nodes,
    }


#: what decoding the estimator can raise (each becomes a ModelFileError)
_DECODE_ERRORS: tuple[type[BaseException], ...] = (
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    OverflowError,
    *READ_ERRORS,
)


def _parse_manifest(path: Any, raw: bytes) -> Any:
    """The manifest's JSON, its number of values bounded before it is parsed."""
    entries = raw.count(b"[") + raw.count(b"{") + raw.count(b",")
    cap = limits.current().max_manifest_entries
    if entries > cap:
        raise ModelFileError(
            f"{path}: member 'manifest.json' holds about {entries:,} JSON entries, more than a "
            "model file needs " + limits.how_to_raise("max_manifest_entries")
        )
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ModelFileError(f"{path}: corrupt model file (manifest nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"{path}: corrupt model file (manifest: {exc})") from None


def _check_manifest(path: Any, manifest: Any) -> None:
    """Refuse a manifest of another format or of a version this hierlab does not read."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(
            f"{path}: not a hierlab model file (format {manifest.get('format')!r})"
            if isinstance(manifest, dict)
            else f"{path}: not a hierlab model file"
        )
    version = manifest.get("version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ModelFileError(
            f"{path}: model file version {version!r}; this hierlab reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    if "root" not in manifest:
        raise ModelFileError(f"{path}: corrupt model file (the manifest has no root)")


def _verify_checksums(path: Any, manifest: dict[str, Any], arrays_sha: str) -> None:
    """Compare the recorded SHA-256 digests with the members (version 1 files have none)."""
    recorded = manifest.get("checksums")
    if manifest["version"] < 2 and recorded is None:
        return
    if not isinstance(recorded, dict):
        raise ModelFileError(
            f"{path}: the manifest (version {manifest['version']}) has no checksums: a "
            "truncated or tampered file"
        )
    actual = {"arrays.npz": arrays_sha, "manifest.json#root": _root_digest(manifest["root"])}
    for key, digest in actual.items():
        if recorded.get(key) != digest:
            member = key.split("#", 1)[0]
            raise ModelFileError(
                f"{path}: member {member!r}: sha256 {digest[:16]}... differs from the one "
                "recorded in the manifest (the file was changed after it was saved)"
            )


def _check_root_class(path: Any, root: Any) -> None:
    """Refuse a root that is not one of hierlab's registered estimator classes."""
    cls_path = root.get("__estimator__") if isinstance(root, dict) else None
    if not isinstance(cls_path, str):
        raise ModelFileError(f"{path}: the file does not hold an estimator")
    if not cls_path.startswith(_ALLOWED_PREFIXES):
        raise ModelFileError(
            f"{path}: model file names a class outside hierlab/sklearn: {cls_path!r}"
        )
    try:
        cls = _import_class(cls_path)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
        raise ModelFileError(f"{path}: {cls_path!r} is not an estimator class")
    if cls not in _root_classes():
        raise ModelFileError(
            f"{path}: root class {cls_path!r} is not one of hierlab's registered estimators "
            "(hierlab.list_methods()); model files hold those only"
        )
