"""What a loaded :class:`~hierlab.methods.base.HierarchicalClassifier` must mean before it is used.

:func:`check_loaded` runs after a model file has been decoded (:func:`hierlab.load`), in four
steps, each refusing with a :class:`~hierlab.core.exceptions.ModelFileError` that names the
attribute and the rule:

1. the shared facts: ``taxonomy_`` a Taxonomy (the constructor's ``taxonomy`` when one was
   given), ``n_features_in_`` a positive int, ``classes_`` sorted, distinct and nodes of
   ``taxonomy_``, ``_out_labels_`` the node names in ``taxonomy_`` order;
2. every array of the state (:func:`~hierlab.core.state.check_every_array`): a real, integer,
   boolean or text dtype, finite floats, well-formed sparse matrices;
3. the arrays each class declares (``_state_arrays``, collected along the MRO; see
   :mod:`hierlab.core.state`): dtype, shape against the named dimensions of
   ``_state_dims()``, index bounds; then the calibration maps against their nodes;
4. a probe: ``predict`` and ``node_proba`` on a few rows of the declared width must run
   without error and give nodes of ``taxonomy_`` and probabilities in [0, 1].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.dataset import is_label_set
from hierlab.core.exceptions import HierlabError, ModelFileError
from hierlab.core.state import (
    check_arrays,
    check_every_array,
    declared_arrays,
    resolve,
    walk_arrays,
)
from hierlab.core.taxonomy import Taxonomy

if TYPE_CHECKING:
    from hierlab.methods.base import HierarchicalClassifier

__all__ = ["check_calibration", "check_loaded", "probe"]

#: a dense probe up to this many features; a sparse one beyond
_DENSE_PROBE = 1 << 16


def check_loaded(est: HierarchicalClassifier, compare_derived: bool = True) -> None:
    """Refuse a decoded estimator whose state is not that of a fitted model of its class.

    Parameters
    ----------
    est : HierarchicalClassifier
        Freshly decoded (an unfitted one, without ``taxonomy_``, passes untouched).
    compare_derived : bool, default True
        Refuse derived state that differs from the rebuilt one (files of format 1, written
        by older code, may hold it in an older form: it is only replaced).

    Raises
    ------
    ModelFileError
        Naming the class, the attribute and the rule broken.
    """
    owner = type(est).__name__
    if "taxonomy_" not in vars(est):
        fitted = [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]
        if fitted:
            raise ModelFileError(f"{owner}.{fitted[0]}: fitted state without taxonomy_")
        return
    _check_shared(est, owner)
    check_every_array(est, owner, est._state_nonfinite)
    check_arrays(est, declared_arrays(type(est)), est._state_dims(), owner)
    check_calibration(est, owner)
    from hierlab.methods.base import HierarchicalClassifier

    for v in list(vars(est).values()):  # a nested model (CMTL's top-down router): checked whole
        if isinstance(v, HierarchicalClassifier) and v is not est:
            check_loaded(v, compare_derived)
    est._check_state()
    _check_derived(est, owner, compare_derived)
    probe(est, owner)


def _check_derived(est: HierarchicalClassifier, owner: str, compare: bool = True) -> None:
    """Compare the derived state (``_rebuild_derived()``: functions of the taxonomy, the
    parameters and the label set) with the file's, then keep the rebuilt one.

    Every array the rebuilt objects hold must be in the loaded ones, equal; arrays only the
    loaded ones hold (caches) are dropped with them.
    """
    fresh = est._rebuild_derived()
    skip = est._derived_skip
    for attr, value in fresh.items():
        owner_obj, _, name = (
            (resolve(est, attr.rsplit(".", 1)[0]), ".", attr.rsplit(".", 1)[1])
            if "." in attr
            else (est, "", attr)
        )
        loaded = getattr(owner_obj, name, None)
        where = f"{owner}.{attr}"
        if compare and type(loaded) is not type(value):
            raise ModelFileError(
                f"{where}: holds a {type(loaded).__name__}, the taxonomy gives a "
                f"{type(value).__name__}"
            )
        have = dict(walk_arrays(loaded, where))
        for path, arr in walk_arrays(value, where) if compare else ():
            if path.rsplit(".", 1)[-1] in skip:
                continue
            got = have.get(path)
            if got is None or not _same_array(got, arr):
                raise ModelFileError(
                    f"{path}: does not match what taxonomy_, the parameters and classes_ give "
                    "(derived state, rebuilt on load)"
                )
        setattr(owner_obj, name, value)


def _same_array(a: Any, b: Any) -> bool:
    """Equal shape, kind and values (sparse or dense)."""
    if sp.issparse(a) != sp.issparse(b) or a.shape != b.shape:
        return False
    if sp.issparse(a):
        return bool((sp.csr_matrix(a) != sp.csr_matrix(b)).nnz == 0)
    if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} - {"i", "u"}:
        return False
    return bool(np.array_equal(a, b))


def _check_shared(est: HierarchicalClassifier, owner: str) -> None:
    """Taxonomy, width, classes and output labels, the facts every method shares."""
    tax = vars(est).get("taxonomy_")
    if not isinstance(tax, Taxonomy):
        raise ModelFileError(f"{owner}.taxonomy_: holds a {type(tax).__name__}, not a Taxonomy")
    given = est.taxonomy
    if isinstance(given, Taxonomy) and not est._induces_taxonomy and given != tax:
        raise ModelFileError(
            f"{owner}.taxonomy_: differs from the taxonomy the model was built with (its "
            "parameter taxonomy): a model's taxonomy_ is that one"
        )
    n_features = vars(est).get("n_features_in_")
    if isinstance(n_features, bool) or not isinstance(n_features, int | np.integer):
        raise ModelFileError(f"{owner}.n_features_in_: must be an int, got {n_features!r}")
    if n_features < 1:
        raise ModelFileError(f"{owner}.n_features_in_: must be >= 1, got {n_features}")
    _check_classes(est, tax, owner)
    out = vars(est).get("_out_labels_")
    if not isinstance(out, np.ndarray) or out.shape != (tax.n_nodes,):
        shape = getattr(out, "shape", type(out).__name__)
        raise ModelFileError(
            f"{owner}._out_labels_: shape {shape}, expected (n_nodes={tax.n_nodes},)"
        )
    if [str(v) for v in out.tolist()] != [str(n) for n in tax.names]:
        raise ModelFileError(
            f"{owner}._out_labels_: the output labels are not the names of taxonomy_'s nodes "
            "in its order"
        )


def _check_classes(est: HierarchicalClassifier, tax: Taxonomy, owner: str) -> None:
    """``classes_``: a 1-D array of distinct, sorted nodes of ``taxonomy_``."""
    classes = vars(est).get("classes_")
    if not isinstance(classes, np.ndarray) or classes.ndim != 1 or len(classes) < 1:
        raise ModelFileError(f"{owner}.classes_: must be a non-empty 1-D array")
    names = [str(c) for c in classes.tolist()]
    unknown = [c for c in names if c not in tax]
    if unknown:
        raise ModelFileError(f"{owner}.classes_: {unknown[0]!r} is not a node of taxonomy_")
    if len(set(names)) != len(names):
        raise ModelFileError(f"{owner}.classes_: holds a label twice")
    try:
        ordered = bool(np.all(classes[:-1] < classes[1:])) if len(classes) > 1 else True
    except TypeError:
        ordered = names == sorted(names)
    if not ordered:
        raise ModelFileError(
            f"{owner}.classes_: not sorted (a fitted model's classes_ are np.unique's)"
        )
    if est._induces_taxonomy:
        leaves = {str(tax.names[i]) for i in tax.leaves}
        if leaves != set(names):
            raise ModelFileError(
                f"{owner}.classes_: the leaves of the induced taxonomy_ are not the classes"
            )


def check_calibration(est: HierarchicalClassifier, owner: str) -> None:
    """``calibration_``: its method and mode, and its maps against their nodes."""
    cal = vars(est).get("calibration_")
    if cal is None:
        return
    where = f"{owner}.calibration_"
    if not isinstance(cal, dict):
        raise ModelFileError(f"{where}: holds a {type(cal).__name__}, not a dict")
    from hierlab.methods.probability import CALIBRATION_METHODS

    if cal.get("method") not in CALIBRATION_METHODS:
        raise ModelFileError(f"{where}.method: {cal.get('method')!r} is not one of "
                             f"{CALIBRATION_METHODS}")  # fmt: skip
    mode = est._probability_mode()
    if cal.get("mode") != mode:
        raise ModelFileError(f"{where}.mode: {cal.get('mode')!r}, this model's is {mode!r}")
    n_nodes = est.taxonomy_.n_nodes
    n_maps = 1 if mode == "leaves" else n_nodes
    for key in ("a", "b"):
        _vector(cal.get(key), (n_maps,), "f", f"{where}.{key}")
    if mode == "tree":
        closed = _vector(cal.get("closed"), (n_nodes,), "b", f"{where}.closed")
        stops = np.zeros(n_nodes, dtype=bool)
        stops[est._class_ids()] = True
        if cal.get("cv") != "prefit" and not np.array_equal(closed, ~stops):
            raise ModelFileError(f"{where}.closed: must mark the nodes no class of classes_ is")
    if cal["method"] == "isotonic":
        _check_isotonic(cal, n_maps, where)


def _vector(v: Any, shape: tuple[int, ...], kind: str, where: str) -> np.ndarray:
    """``v`` as an array of ``shape`` and dtype kind ``kind`` (finite when float)."""
    if not isinstance(v, np.ndarray):
        raise ModelFileError(f"{where}: missing, or not an array")
    if v.shape != shape:
        raise ModelFileError(f"{where}: shape {v.shape}, expected {shape} (one per map)")
    kinds = "iu" if kind == "i" else kind
    if v.dtype.kind not in kinds:
        raise ModelFileError(f"{where}: dtype {v.dtype}, expected kind {kind!r}")
    if v.dtype.kind == "f" and not np.isfinite(v).all():
        raise ModelFileError(f"{where}: holds NaN or infinite values")
    return v


def _check_isotonic(cal: dict[str, Any], n_maps: int, where: str) -> None:
    """Isotonic knots: ``iso_ptr`` from 0 to the number of knots, non-decreasing; ``iso_x``
    increasing within each map; ``iso_y`` in [0, 1]."""
    ptr = _vector(cal.get("iso_ptr"), (n_maps + 1,), "i", f"{where}.iso_ptr")
    x = cal.get("iso_x")
    n_knots = x.shape[0] if isinstance(x, np.ndarray) and x.ndim == 1 else -1
    x = _vector(x, (n_knots,), "f", f"{where}.iso_x")
    y = _vector(cal.get("iso_y"), (n_knots,), "f", f"{where}.iso_y")
    if ptr[0] != 0 or ptr[-1] != n_knots or np.any(np.diff(ptr) < 0):
        raise ModelFileError(
            f"{where}.iso_ptr: must rise from 0 to the {n_knots} knots of iso_x, got "
            f"{ptr[0]}..{ptr[-1]}"
        )
    if np.any((y < 0) | (y > 1)):
        raise ModelFileError(f"{where}.iso_y: probabilities outside [0, 1]")
    steps = np.diff(x)
    inside = np.ones(len(steps), dtype=bool)
    inside[ptr[1:-1][(ptr[1:-1] > 0) & (ptr[1:-1] < n_knots)] - 1] = False  # between maps
    if np.any(steps[inside] < 0):
        raise ModelFileError(f"{where}.iso_x: knots not sorted within a map")


def probe(est: HierarchicalClassifier, owner: str) -> None:
    """``predict`` and ``node_proba`` on four rows of the declared width.

    Raises
    ------
    ModelFileError
        When either raises, or gives a node outside ``taxonomy_`` or a probability that is
        not finite or outside [0, 1].
    """
    d = int(est.n_features_in_)
    rng = np.random.default_rng(0)
    scales = np.repeat([0.1, 1.0, 10.0], 20)[:, None]
    rows = np.vstack([np.zeros(d), np.ones(d), rng.normal(size=(60, d)) * scales,
                      np.abs(rng.normal(size=(60, d))) * scales])  # fmt: skip
    X: Any = rows if d <= _DENSE_PROBE else sp.random(8, d, 1e-4, "csr", random_state=0)
    names = {str(n) for n in est.taxonomy_.names}
    try:
        pred = est.predict(X)
        P = est.node_proba(X) if vars(est).get("calibration_") is not None else None
    except (HierlabError, ArithmeticError, LookupError, TypeError, ValueError,
            AttributeError) as exc:  # fmt: skip
        raise ModelFileError(
            f"{owner}: the loaded model fails on valid input of its {d} features "
            f"({type(exc).__name__}: {str(exc)[:200]}): its state does not fit together"
        ) from None
    flat = [v for p in pred.tolist() for v in (p if is_label_set(p) else (p,))]
    if any(str(v) not in names for v in flat):
        raise ModelFileError(f"{owner}: the loaded model predicts a node outside taxonomy_")
    if P is not None and (not np.isfinite(P).all() or P.min() < -1e-9 or P.max() > 1 + 1e-9):
        raise ModelFileError(
            f"{owner}.calibration_: the loaded model's probabilities are not in [0, 1]"
        )
