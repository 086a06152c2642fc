"""Model files from elsewhere (issue 10): size limits, object arrays, class paths, fuzzed bytes.

Complements ``tests/test_persistence.py`` (round trips, pickles, foreign zips, tampered
manifests): every malformed file must end in a :class:`~hierlab.core.exceptions.ModelFileError`
with a clear message, never in another exception, a huge allocation, or code of the file's
choosing.
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hierlab
from hierlab import ModelFileError, Taxonomy
from hierlab.io import model_archive
from hierlab.persistence import load, save


def _fitted() -> Any:
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])
    rng = np.random.default_rng(0)
    leaves = tax.names[tax.leaves]
    lab = rng.integers(0, len(leaves), size=60)
    X = np.abs(rng.normal(size=(len(leaves), 4))[lab] * 3 + rng.normal(size=(60, 4)))
    return hierlab.make_estimator("flatmult", taxonomy=tax).fit(X, leaves[lab].astype(object)), X


@pytest.fixture(scope="module")
def saved() -> tuple[Any, np.ndarray]:
    """The model the ``good`` file holds, and its training rows."""
    return _fitted()


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory, saved: tuple[Any, np.ndarray]) -> Path:
    path = tmp_path_factory.mktemp("models") / "good.hlm"
    save(saved[0], path)
    return path


def _rewrite(
    good: Path,
    out: Path,
    manifest: Callable[[dict[str, Any]], Any] | None = None,
    arrays: bytes | None = None,
    raw_manifest: bytes | None = None,
) -> Path:
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        man = json.loads(zin.read("manifest.json"))
        if manifest is not None:
            manifest(man)
        zout.writestr(
            "manifest.json", raw_manifest if raw_manifest is not None else json.dumps(man)
        )
        zout.writestr("arrays.npz", arrays if arrays is not None else zin.read("arrays.npz"))
    return out


def test_size_limits_are_checked_before_decompressing(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a manifest that would inflate past the limit (a zip bomb) is refused unread
    bomb = _rewrite(good, tmp_path / "bomb.hlm", raw_manifest=b" " * 5_000_000)
    monkeypatch.setattr(model_archive, "MAX_MANIFEST_BYTES", 1_000_000)
    with pytest.raises(ModelFileError, match="manifest would inflate to 5,000,000 bytes"):
        load(bomb)
    monkeypatch.undo()
    # arrays larger than the caller's limit
    with pytest.raises(ModelFileError, match="arrays would inflate"):
        load(good, max_bytes=100)
    # a bomb nested in the npz (one member declaring a huge size)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a0.npy", b"\0" * 20_000_000)
    nested = _rewrite(good, tmp_path / "nested.hlm", arrays=buf.getvalue())
    with pytest.raises(ModelFileError, match=r"a0\.npy"):
        load(nested, max_bytes=10_000_000)
    # and the good file still loads with the default limits
    est, X = _fitted()
    assert list(load(good).predict(X)) == list(est.predict(X))


def test_object_arrays_are_refused_as_pickles(good: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(good) as z:
        keys = list(np.load(io.BytesIO(z.read("arrays.npz"))).files)
    buf = io.BytesIO()
    evil = np.empty(2, dtype=object)
    evil[:] = [print, "x"]  # np.savez pickles object arrays
    np.savez(buf, **{k: evil for k in keys})
    path = _rewrite(good, tmp_path / "objects.hlm", arrays=buf.getvalue())
    with pytest.raises(ModelFileError, match=r"Python objects, i\.e\. a pickle"):
        load(path)


@pytest.mark.parametrize(
    ("cls", "pattern"),
    [
        ("hierlab.__main__.main", "special module"),
        ("sklearn.base.np", "not a hierlab/sklearn class"),
        ("sklearn.base.clone", "not an estimator class"),
        ("hierlab.io.decoding.Path", "not a hierlab/sklearn class"),
        ("hierlab.io.os.system", "unknown class|not a hierlab/sklearn class"),
        ("hierlab..x", "invalid class path"),
        ("hierlab.core.taxonomy.Taxonomy;import os", "invalid class path"),
        ("hierlab.nope.Nothing", "unknown class"),
        ("builtins.eval", "outside hierlab/sklearn"),
    ],
)
def test_class_paths_are_restricted(good: Path, tmp_path: Path, cls: str, pattern: str) -> None:
    path = _rewrite(good, tmp_path / "m.hlm", lambda m: m["root"].update({"__estimator__": cls}))
    with pytest.raises(ModelFileError, match=pattern):
        load(path)


def test_deep_or_malformed_manifests(good: Path, tmp_path: Path) -> None:
    deep = b'{"format": "hierlab-model", "version": 1, "root": ' + b"[" * 100_000
    deep += b"]" * 100_000 + b"}"
    with pytest.raises(ModelFileError, match="corrupt"):
        load(_rewrite(good, tmp_path / "deep.hlm", raw_manifest=deep))
    cases: list[Callable[[dict[str, Any]], Any]] = [
        lambda m: m.update(root=[[[[1]]]]),
        lambda m: m.update(root={"__array__": ["a0"]}),
        lambda m: m.update(root={"__csr__": [1, 2], "shape": "x"}),
        lambda m: m.update(root={"__taxonomy__": {"nodes": [], "edges": [["a", "a"]]}}),
        lambda m: m["root"]["params"].update(C={"__object__": "hierlab.io.DataError"}),
        lambda m: m["root"]["params"].update(nope=1.0),
        lambda m: m["root"].update(state=[1, 2]),
        lambda m: m.update(root={"__tuple__": 5}),
    ]
    for k, edit in enumerate(cases):
        with pytest.raises(ModelFileError):
            load(_rewrite(good, tmp_path / f"bad{k}.hlm", edit))
            pytest.fail(f"case {k} loaded")


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.none() | st.floats(0, 1),
)
def test_fuzzed_model_files(
    good: Path,
    saved: tuple[Any, np.ndarray],
    tmp_path_factory: pytest.TempPathFactory,
    edits: list[tuple[float, int]],
    cut: float | None,
) -> None:
    """Flipped bytes and truncations: a ModelFileError, or (a flip the archive's checks prove
    harmless: zip metadata outside the checksummed bytes) the very model that was saved."""
    data = bytearray(good.read_bytes())
    for where, value in edits:
        data[int(where * (len(data) - 1))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    path = tmp_path_factory.mktemp("fz") / "m.hlm"
    path.write_bytes(bytes(data))
    try:
        est = load(path)
    except ModelFileError as exc:
        assert str(exc).startswith(str(path))
    else:
        ref, X = saved
        assert type(est) is type(ref)
        assert repr(est.get_params()) == repr(ref.get_params())
        np.testing.assert_array_equal(est.predict(X), ref.predict(X))
        np.testing.assert_array_equal(est.decision_function(X), ref.decision_function(X))
