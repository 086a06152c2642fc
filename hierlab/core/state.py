"""What a fitted estimator's state must hold, declared once beside its class, checked on load.

A model file is checked for integrity by its checksums, but a file built by hand can carry new
checksums: what the loaded state *means* must be checked too. Each estimator class declares the
arrays of its fitted state (its own, not its parents': those are collected along the MRO) as
:class:`StateArray` rows in ``_state_arrays``::

    _state_arrays = (
        StateArray("coef_", "f", ("n_nodes", "n_features")),
        StateArray("intercept_", "f", ("n_nodes",), optional=True),
        StateArray("_model.block_of_row", "i", ("n_nodes",), index_of="n_nodes"),
    )

A row names an attribute (a dotted path reaches into dicts and helper objects), the dtype kinds
it may have, its shape in named dimensions (the estimator's ``_state_dims()``: ``n_nodes``,
``n_features``, ``n_classes``, ...), whether it must be finite and whether its values index a
dimension. :func:`check_arrays` applies the rows; :func:`check_every_array` applies the rules
that hold for every array of a state, declared or not: a real, integer, boolean or text dtype
(never complex, datetime, timedelta or raw bytes) and finite floats. Every refusal is a
:class:`~hierlab.core.exceptions.ModelFileError` naming the attribute and the rule.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ModelFileError
from hierlab.core.taxonomy import Taxonomy

__all__ = ["StateArray", "check_arrays", "check_every_array", "declared_arrays", "resolve"]

#: dtype kinds of a model's arrays: real floating, signed and unsigned integer, boolean, text
#: and labels (object arrays come from the manifest, never from ``arrays.npz``)
_KIND_NAMES = {
    "f": "real floating",
    "i": "integer",
    "u": "integer",
    "b": "boolean",
    "U": "text",
    "O": "labels",
}
_MISSING = object()


@dataclass(frozen=True)
class StateArray:
    """One array of a fitted state and the rules it obeys.

    Parameters
    ----------
    name : str
        Attribute path from the estimator: ``"coef_"``, ``"calibration_.a"`` (a dict key),
        ``"_model.block_of_row"`` (an attribute of a helper object).
    kind : str, default "f"
        The accepted dtype kinds: ``"f"`` real floating, ``"i"`` integer (signed or
        unsigned), ``"b"`` boolean, ``"U"`` text, ``"O"`` labels; ``"fi"`` accepts either.
    shape : tuple of str or int, optional
        The shape in named dimensions of ``_state_dims()`` (or fixed sizes; ``"*"`` any).
    finite : bool, default True
        Float values must be finite.
    index_of : str, optional
        Integer values index this dimension: ``0 <= v < dims[index_of]`` (``-1`` allowed
        where ``allow_missing``).
    allow_missing : bool, default False
        With ``index_of``: ``-1`` marks "none".
    optional : bool, default False
        The attribute may be absent (or None).
    sparse : bool or None, default False
        True: a scipy sparse matrix; None: dense or sparse.
    """

    name: str
    kind: str = "f"
    shape: tuple[str | int, ...] | None = None
    finite: bool = True
    index_of: str | None = None
    allow_missing: bool = False
    optional: bool = False
    sparse: bool | None = False


def declared_arrays(cls: type) -> list[StateArray]:
    """Every :class:`StateArray` of ``cls`` and its bases (``_state_arrays`` of each class's own
    body, base classes first; a later row of the same name replaces an earlier one)."""
    rows: dict[str, StateArray] = {}
    for klass in reversed(cls.__mro__):
        for row in klass.__dict__.get("_state_arrays", ()):
            rows[row.name] = row
    return list(rows.values())


def resolve(obj: Any, path: str) -> Any:
    """The value at dotted ``path`` below ``obj`` (dict keys or attributes), or a sentinel."""
    value = obj
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part, _MISSING)
        else:
            value = getattr(value, part, _MISSING)
        if value is _MISSING:
            return _MISSING
    return value


def check_arrays(obj: Any, rows: Sequence[StateArray], dims: Mapping[str, int], owner: str) -> None:
    """Apply the declared rows to the state of ``obj``.

    Parameters
    ----------
    obj : object
        The estimator.
    rows : sequence of StateArray
    dims : mapping of str to int
        The named dimensions (``n_nodes``, ``n_features``, ...).
    owner : str
        The class name, for the messages.

    Raises
    ------
    ModelFileError
        Naming ``owner.name`` and the rule broken.
    """
    for row in rows:
        value = resolve(obj, row.name)
        where = f"{owner}.{row.name}"
        if value is _MISSING or value is None:
            if row.optional:
                continue
            raise ModelFileError(f"{where}: missing (a fitted {owner} always holds it)")
        _check_one(value, row, dims, where)


def _check_one(value: Any, row: StateArray, dims: Mapping[str, int], where: str) -> None:
    """One declared array against its row."""
    if sp.issparse(value):
        if row.sparse is False:
            raise ModelFileError(f"{where}: a sparse matrix where a dense array belongs")
        values = value.data
    elif isinstance(value, np.ndarray):
        if row.sparse is True:
            raise ModelFileError(f"{where}: a dense array where a sparse matrix belongs")
        values = value
    else:
        raise ModelFileError(f"{where}: holds a {type(value).__name__}, not an array")
    if row.shape is not None:
        expected = tuple(d if isinstance(d, int) or d == "*" else dims[d] for d in row.shape)
        ok = len(value.shape) == len(expected) and all(
            e == "*" or int(s) == e for s, e in zip(value.shape, expected, strict=True)
        )
        if not ok:
            shown = ", ".join(
                f"{d}={dims[d]}" if isinstance(d, str) and d != "*" else str(d) for d in row.shape
            )
            raise ModelFileError(
                f"{where}: shape {tuple(value.shape)}, expected ({shown}) from the rest of the "
                "model"
            )
    kinds = row.kind.replace("i", "iu")
    if values.dtype.kind not in kinds:
        allowed = " or ".join(dict.fromkeys(_KIND_NAMES[k] for k in kinds))
        raise ModelFileError(f"{where}: dtype {values.dtype}, expected {allowed}")
    if row.finite and values.dtype.kind == "f" and not np.isfinite(values).all():
        raise ModelFileError(f"{where}: holds NaN or infinite values; a fitted model's are finite")
    if row.index_of is not None and values.size:
        low = -1 if row.allow_missing else 0
        bound = dims[row.index_of]
        vmin, vmax = int(values.min()), int(values.max())
        if vmin < low or vmax >= bound:
            raise ModelFileError(
                f"{where}: index values from {vmin} to {vmax}, outside [{low}, {bound}) "
                f"({row.index_of}={bound})"
            )


def walk_arrays(obj: Any, path: str, seen: set[int] | None = None) -> Iterator[tuple[str, Any]]:
    """Every ndarray and sparse matrix below ``obj``, with its attribute path.

    Follows dicts, lists, tuples, object arrays and the attributes of hierlab and scikit-learn
    objects (each object once); tables (pandas) are not arrays of the model and are skipped.
    """
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, Taxonomy):  # a taxonomy is rebuilt from its edges
        return
    if isinstance(obj, np.ndarray):
        yield path, obj
        if obj.dtype == object:
            seen.add(id(obj))
            for i, v in enumerate(obj.ravel().tolist()):
                yield from walk_arrays(v, f"{path}[{i}]", seen)
        return
    if sp.issparse(obj):
        yield path, obj
        return
    seen.add(id(obj))
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from walk_arrays(v, f"{path}.{k}", seen)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            yield from walk_arrays(v, f"{path}[{i}]", seen)
    elif type(obj).__module__.split(".")[0] in ("hierlab", "sklearn") and hasattr(obj, "__dict__"):
        for k, v in vars(obj).items():
            yield from walk_arrays(v, f"{path}.{k}", seen)


def check_every_array(obj: Any, owner: str, nonfinite_ok: Sequence[str] = ()) -> None:
    """The rules for every array of a state: a real, integer, boolean or text dtype, finite.

    Parameters
    ----------
    obj : object
        The estimator.
    owner : str
        Its class name, the root of the paths in the messages.
    nonfinite_ok : sequence of str
        Attribute names whose floats may be ``-inf`` ("never", e.g. a mask added to scores);
        NaN and ``+inf`` are refused everywhere.

    Raises
    ------
    ModelFileError
        Naming the array's path and the rule.
    """
    for where, value in walk_arrays(obj, owner):
        values = value.data if sp.issparse(value) else value
        kind = values.dtype.kind
        if kind not in _KIND_NAMES or (kind == "O" and not isinstance(value, np.ndarray)):
            raise ModelFileError(
                f"{where}: dtype {values.dtype}; a model holds real, integer, boolean or text "
                "arrays only"
            )
        if kind == "f" and not np.isfinite(values).all():
            if where.rsplit(".", 1)[-1] not in nonfinite_ok or np.any(
                np.isnan(values) | (values == np.inf)
            ):
                raise ModelFileError(
                    f"{where}: holds NaN or infinite values; a fitted model's are finite"
                )
        if sp.issparse(value):
            _check_sparse_structure(value, where)


def _check_sparse_structure(m: Any, where: str) -> None:
    """A CSR/CSC matrix's ``indptr`` non-decreasing from 0 to nnz, ``indices`` in bounds."""
    if not isinstance(m, sp.csr_matrix | sp.csc_matrix | sp.csr_array | sp.csc_array):
        return
    try:
        m.check_format(full_check=True)
    except ValueError as exc:
        raise ModelFileError(f"{where}: a malformed sparse matrix ({exc})") from None
