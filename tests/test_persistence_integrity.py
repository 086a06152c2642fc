"""Model-file integrity (issue 21): checksums, whitelists, declared sizes, special files.

Each case is a file that crashed, exhausted memory, or loaded and failed only later at
``predict`` before the fix; each must now end in a :class:`~hierlab.ModelFileError` that names
the file and the member, entry or key at fault, before anything of a declared size is allocated.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hierlab
from hierlab import ModelFileError, persistence
from hierlab.core import limits
from hierlab.persistence import load, save
from tests.test_persistence_hardening import _fitted

LEGACY = Path(__file__).parent / "data" / "legacy_models"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    est, _ = _fitted()
    path = tmp_path_factory.mktemp("models") / "good.hlm"
    save(est, path)
    return path


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def _write(out: Path, members: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
    return out


def _resealed(good: Path, out: Path, edit: Callable[[dict[str, Any]], Any]) -> Path:
    """``good`` with its manifest edited and its checksums recomputed (a forged, valid file)."""
    m = _members(good)
    man = json.loads(m["manifest.json"])
    edit(man)
    man["checksums"] = persistence.checksums(man["root"], m["arrays.npz"])
    return _write(
        out, [("manifest.json", json.dumps(man).encode()), ("arrays.npz", m["arrays.npz"])]
    )


def _npz(arrays: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in arrays.items():
            z.writestr(name, data)
    return buf.getvalue()


# ---------------------------------------------------------------------------- checksums
def test_the_manifest_records_a_sha256_of_every_member(good: Path) -> None:
    m = _members(good)
    man = json.loads(m["manifest.json"])
    assert man["version"] == persistence.VERSION >= 2
    assert man["checksums"]["arrays.npz"] == hashlib.sha256(m["arrays.npz"]).hexdigest()
    assert set(man["checksums"]) == {"arrays.npz", "manifest.json#root"}


def test_changed_coefficients_are_refused(good: Path, tmp_path: Path) -> None:
    m = _members(good)
    arrays = dict(np.load(io.BytesIO(m["arrays.npz"])))
    key = max(arrays, key=lambda k: arrays[k].size)
    arrays[key] = arrays[key] + 1.0
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
    bad = _write(
        tmp_path / "c.hlm", [("manifest.json", m["manifest.json"]), ("arrays.npz", buf.getvalue())]
    )
    with pytest.raises(ModelFileError, match=r"c\.hlm: member 'arrays\.npz': sha256 .* differs"):
        load(bad)


def test_a_changed_manifest_is_refused(good: Path, tmp_path: Path) -> None:
    m = _members(good)
    man = json.loads(m["manifest.json"])
    man["root"]["params"]["C"] = 1000.0
    bad = _write(
        tmp_path / "m.hlm",
        [("manifest.json", json.dumps(man).encode()), ("arrays.npz", m["arrays.npz"])],
    )
    with pytest.raises(ModelFileError, match=r"member 'manifest\.json'.*sha256"):
        load(bad)


def test_a_current_manifest_without_checksums_is_refused(good: Path, tmp_path: Path) -> None:
    m = _members(good)
    man = json.loads(m["manifest.json"])
    del man["checksums"]
    bad = _write(
        tmp_path / "n.hlm",
        [("manifest.json", json.dumps(man).encode()), ("arrays.npz", m["arrays.npz"])],
    )
    with pytest.raises(ModelFileError, match="no checksums"):
        load(bad)


@pytest.mark.parametrize("name", ["flatmult", "topdown", "ovr-lr"])
def test_legacy_files_without_checksums_still_load(name: str) -> None:
    man = json.loads(_members(LEGACY / f"{name}.hlm")["manifest.json"])
    assert man["version"] == 1 and "checksums" not in man
    assert type(load(LEGACY / f"{name}.hlm")) is hierlab.get_method(name).estimator


# ---------------------------------------------------------------------------- whitelists
@pytest.mark.parametrize(
    "root_class",
    ["sklearn.dummy.DummyClassifier", "sklearn.pipeline.Pipeline", "sklearn.svm.LinearSVC"],
)
def test_a_foreign_root_class_is_refused(good: Path, tmp_path: Path, root_class: str) -> None:
    bad = _resealed(
        good, tmp_path / "f.hlm", lambda m: m["root"].update({"__estimator__": root_class})
    )
    with pytest.raises(ModelFileError, match=r"root class .* is not one of hierlab's registered"):
        load(bad)


def test_saving_a_foreign_root_is_refused(tmp_path: Path) -> None:
    from sklearn.dummy import DummyClassifier

    with pytest.raises(ModelFileError, match="registered"):
        save(DummyClassifier(), tmp_path / "d.hlm")


@pytest.mark.parametrize(
    "key", ["predict", "fit", "score", "decision_path", "__class__", "1x", "C"]
)
def test_a_state_key_shadowing_a_method_or_parameter_is_refused(
    good: Path, tmp_path: Path, key: str
) -> None:
    bad = _resealed(good, tmp_path / "s.hlm", lambda m: m["root"]["state"].update({key: 1}))
    with pytest.raises(ModelFileError, match=rf"state key {key!r}"):
        load(bad)


def test_a_duplicate_member_is_refused(good: Path, tmp_path: Path) -> None:
    m = _members(good)
    members = [("manifest.json", m["manifest.json"]), ("arrays.npz", m["arrays.npz"])]
    with pytest.warns(UserWarning, match="Duplicate name"):
        bad = _write(tmp_path / "d.hlm", [*members, ("manifest.json", b'{"format": "x"}')])
    with pytest.raises(ModelFileError, match=r"member 'manifest\.json' appears twice"):
        load(bad)


def test_an_unexpected_member_is_refused(good: Path, tmp_path: Path) -> None:
    m = _members(good)
    bad = _write(tmp_path / "u.hlm", [*m.items(), ("run.py", b"print(1)")])
    with pytest.raises(ModelFileError, match=r"unexpected member 'run\.py'"):
        load(bad)


def _encrypt_flag(data: bytes, member: bytes) -> bytes:
    """``data`` (a zip) with the 'encrypted' flag set on ``member`` (local and central headers)."""
    out = bytearray(data)
    # signature, offset of the flags, of the name's length, of the name
    for sig, flag_at, len_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        pos = out.find(sig)
        while pos != -1:
            n = struct.unpack_from("<H", out, pos + len_at)[0]
            if out[pos + name_at : pos + name_at + n] == member:
                out[pos + flag_at] |= 1
            pos = out.find(sig, pos + 4)
    return bytes(out)


def test_an_encrypted_member_is_refused(good: Path, tmp_path: Path) -> None:
    bad = tmp_path / "e.hlm"
    bad.write_bytes(_encrypt_flag(good.read_bytes(), b"arrays.npz"))
    with zipfile.ZipFile(bad) as z:
        assert z.getinfo("arrays.npz").flag_bits & 1  # the forgery took
    with pytest.raises(ModelFileError, match=r"member 'arrays\.npz' is encrypted"):
        load(bad)


# ---------------------------------------------------------------------------- declared sizes
def test_an_npy_header_declaring_more_than_the_member_holds_is_refused(
    good: Path, tmp_path: Path
) -> None:
    m = _members(good)
    keys = list(np.load(io.BytesIO(m["arrays.npz"])).files)
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.zeros(3))
    small = buf.getvalue()  # a 3-element array: 24 bytes of data after the header
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**11,)}
    )
    fake = bytearray(header.getvalue()) + small[-24:]
    npz = _npz({f"{k}.npy": bytes(fake) for k in keys})
    bad = _resealed_arrays(m, tmp_path / "big.hlm", npz)
    with pytest.raises(
        ModelFileError, match=r"member 'arrays\.npz/a\d+\.npy' declares shape \(100000000000,\)"
    ):
        load(bad)


def _resealed_arrays(m: dict[str, bytes], out: Path, npz: bytes) -> Path:
    man = json.loads(m["manifest.json"])
    man["checksums"] = persistence.checksums(man["root"], npz)
    return _write(out, [("manifest.json", json.dumps(man).encode()), ("arrays.npz", npz)])


@pytest.mark.parametrize("value", [10**30, -(2**63) - 1, 2**63])
def test_integers_out_of_range_are_refused(good: Path, tmp_path: Path, value: int) -> None:
    bad = _resealed(
        good, tmp_path / "i.hlm", lambda m: m["root"]["state"].update(n_iter_={"__int__": value})
    )
    with pytest.raises(ModelFileError, match=r"integer .* out of range"):
        load(bad)
    bad2 = _resealed(good, tmp_path / "j.hlm", lambda m: m["root"]["state"].update(n_iter_=value))
    with pytest.raises(ModelFileError, match=r"integer .* out of range"):
        load(bad2)


def test_a_manifest_with_too_many_entries_is_refused_before_parsing(
    good: Path, tmp_path: Path
) -> None:
    m = _members(good)
    man = json.loads(m["manifest.json"])
    raw = json.dumps(man)[:-1] + ', "junk": [' + "[]," * 3_000_000 + "[]]}"
    bad = _write(
        tmp_path / "many.hlm", [("manifest.json", raw.encode()), ("arrays.npz", m["arrays.npz"])]
    )
    assert bad.stat().st_size < 200_000
    with pytest.raises(ModelFileError, match="max_manifest_entries"):
        load(bad)
    with limits.override(max_manifest_entries=50), pytest.raises(ModelFileError, match="entries"):
        load(good)


# ---------------------------------------------------------------------------- special files
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "m.hlm"
    os.mkfifo(fifo)
    out: list[BaseException] = []

    def read() -> None:
        try:
            load(fifo)
        except BaseException as exc:  # handed to the main thread
            out.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        with open(fifo, "wb"):
            pass
        pytest.fail("loading a FIFO blocked")
    assert isinstance(out[0], ModelFileError) and "not a regular file" in str(out[0])


def test_the_round_trip_still_predicts_alike(good: Path) -> None:
    est, X = _fitted()
    assert list(load(good).predict(X)) == list(est.predict(X))
