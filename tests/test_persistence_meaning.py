"""A model file is checked for what it means: files built by hand, their checksums recomputed.

Each case below loaded without a word on main before the semantic checks (``hierlab.methods.
loaded``, ``hierlab.core.state``) and then failed at use with a raw numpy error or predicted
silently wrong. Each must now be refused with a ``ModelFileError`` naming the attribute and the
rule, and ``check_model`` must say the same. The mutation that makes each fail: delete the
corresponding check (the finiteness rule, the declared shapes, the class's own rows, the label
checks, the calibration checks, the probe).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hierlab
from hierlab import ModelFileError, persistence
from hierlab.core.taxonomy import Taxonomy

TAX = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    leaves = TAX.names[TAX.leaves]
    lab = np.arange(45) % len(leaves)
    X = np.abs(rng.normal(size=(len(leaves), 4))[lab] * 3 + rng.normal(size=(45, 4)))
    return X, leaves[lab].astype(object)


def fitted(name: str, **kw: Any) -> tuple[hierlab.HierarchicalClassifier, np.ndarray]:
    X, y = _data()
    return hierlab.make_estimator(name, taxonomy=TAX, **kw).fit(X, y), X


def members(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and the arrays of a model file."""
    with zipfile.ZipFile(path) as z:
        man = json.loads(z.read("manifest.json"))
        npz = np.load(io.BytesIO(z.read("arrays.npz")))
        return man, {k: npz[k] for k in npz.files}


def reseal(path: Path, man: dict[str, Any], arrays: dict[str, np.ndarray]) -> Path:
    """Write ``man`` and ``arrays`` as a model file with freshly computed checksums."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    npz = buf.getvalue()
    man = dict(man)
    if man.get("version", 2) >= 2:
        man["checksums"] = persistence.checksums(man["root"], npz)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(man))
        z.writestr("arrays.npz", npz)
    return path


def array_key(man: dict[str, Any], *path: str) -> str:
    """The ``aK`` key of the array at ``path`` in the manifest's root (state, then deeper)."""
    node: Any = man["root"]["state"]
    for p in path:
        node = node[p] if isinstance(node, dict) and p in node else _dict_item(node, p)
    return str(node["__array__"])


def _dict_item(node: dict[str, Any], key: str) -> Any:
    if "state" in node:
        return node["state"][key]
    for k, v in node["__dict__"]:
        if k == key:
            return v
    raise KeyError(key)


def edited(
    tmp_path: Path, name: str, edit: Callable[[dict[str, Any], dict[str, np.ndarray]], None]
) -> Path:
    est, _ = fitted(name)
    good = tmp_path / f"{name}.hlm"
    hierlab.save(est, good)
    man, arrays = members(good)
    edit(man, arrays)
    return reseal(tmp_path / f"{name}-edited.hlm", man, arrays)


def refused(path: Path, *words: str) -> str:
    with pytest.raises(ModelFileError) as info:
        hierlab.load(path)
    msg = str(info.value)
    for w in (str(path), *words):
        assert w in msg, (w, msg)
    with pytest.raises(ModelFileError):
        hierlab.check_model(path)
    return msg


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("name", ["flatmult", "hr-svm", "nhsvm", "mftree", "topdown"])
def test_nonfinite_weights_are_refused(tmp_path: Path, name: str, value: float) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        k = array_key(man, "coef_")
        arrays[k] = arrays[k].copy()
        arrays[k][1, 0] = value

    refused(edited(tmp_path, name, edit), "coef_", "NaN or infinite")


def test_hieron_nonfinite_prototypes_are_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        k = array_key(man, "engine_", "W")
        arrays[k] = np.full_like(arrays[k], np.nan)

    refused(edited(tmp_path, "hieron", edit), "engine_.W", "NaN or infinite")


@pytest.mark.parametrize("dtype", ["complex128", "datetime64[ns]", "timedelta64[s]"])
def test_weights_of_a_foreign_dtype_are_refused(tmp_path: Path, dtype: str) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        k = array_key(man, "coef_")
        arrays[k] = arrays[k].astype("int64").astype(dtype)

    refused(edited(tmp_path, "flatmult", edit), "coef_", "dtype")


@pytest.mark.parametrize("change", ["extra row", "missing row", "other width"])
def test_arrays_of_the_wrong_shape_are_refused(tmp_path: Path, change: str) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        k = array_key(man, "coef_")
        W = arrays[k]
        arrays[k] = {
            "extra row": np.vstack([W, W[:1]]),
            "missing row": W[:-1],
            "other width": np.hstack([W, W[:, :1]]),
        }[change]

    refused(edited(tmp_path, "ovr-svm", edit), "coef_", "shape")


def test_a_different_feature_count_is_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        man["root"]["state"]["n_features_in_"] = 7

    refused(edited(tmp_path, "hr-svm", edit), "shape", "n_features=7")


def test_a_model_stored_under_another_class_is_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        man["root"]["__estimator__"] = "hierlab.methods.mftree.cmtl.CMTLClassifier"
        man["root"]["params"] = {"taxonomy": man["root"]["params"]["taxonomy"]}

    refused(edited(tmp_path, "flatmult", edit), "CMTLClassifier")


def test_swapped_class_labels_are_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        k = array_key(man, "classes_")
        arrays[k] = arrays[k][::-1].copy()

    refused(edited(tmp_path, "flatmult", edit), "classes_", "sorted")


def test_a_taxonomy_with_swapped_names_is_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        t = man["root"]["state"]["taxonomy_"]["__taxonomy__"]
        swap = {"a1": "b1", "b1": "a1"}
        t["nodes"] = [swap.get(n, n) for n in t["nodes"]]
        t["edges"] = [[swap.get(p, p), swap.get(c, c)] for p, c in t["edges"]]

    refused(edited(tmp_path, "topdown", edit), "taxonomy_")


def test_isotonic_calibration_without_knots_is_refused(tmp_path: Path) -> None:
    est, X = fitted("flatmult")
    _, y = _data()
    est.calibrate(X, y, method="isotonic", cv="train")
    good = tmp_path / "iso.hlm"
    hierlab.save(est, good)
    man, arrays = members(good)
    entries = man["root"]["state"]["calibration_"]["__dict__"]
    man["root"]["state"]["calibration_"]["__dict__"] = [e for e in entries if e[0] != "iso_ptr"]
    refused(reseal(tmp_path / "noknots.hlm", man, arrays), "calibration_.iso_ptr")


def test_a_format_1_file_with_nan_weights_is_refused(tmp_path: Path) -> None:
    def edit(man: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        man["version"] = 1
        man.pop("checksums")
        k = array_key(man, "coef_")
        arrays[k] = np.full_like(arrays[k], np.nan)

    refused(edited(tmp_path, "treeloss", edit), "coef_")


def test_check_model_describes_a_valid_file(tmp_path: Path) -> None:
    est, X = fitted("topdown")
    path = tmp_path / "ok.hlm"
    hierlab.save(est, path)
    info = hierlab.check_model(path)
    assert info == {
        "class": "TopDownClassifier",
        "method": "topdown",
        "n_features": 4,
        "n_classes": 3,
        "n_nodes": TAX.n_nodes,
    }
    assert list(hierlab.load(path).predict(X)) == list(est.predict(X))
