"""The byte level of a model file: its zip members and ``.npy`` arrays, read in bounded memory.

:mod:`hierlab.persistence` decides what a model file means; this module only reads its bytes,
checking every size an archive declares before anything of that size is allocated:

- a member's inflated size against its cap and against what deflate can produce from its
  compressed bytes (:data:`MAX_DEFLATE_RATIO`: a larger declared size is a forged header);
- ``arrays.npz`` is inflated in chunks into a spooled temporary file (memory up to
  :data:`SPOOL_BYTES`, disk beyond), its SHA-256 computed on the way;
- every ``.npy`` header is read from the member's first bytes (at most
  :data:`MAX_NPY_HEADER` bytes), its shape and dtype checked against the member's declared
  size and against ``max_weight_cells`` (:mod:`hierlab.core.limits`) before the array is
  allocated, then the data is read into that one array, chunk by chunk.
"""

from __future__ import annotations

import hashlib
import io
import re
import struct
import tempfile
import tokenize
import warnings
import zipfile
import zlib
from typing import IO, Any

import numpy as np

from hierlab.core import limits
from hierlab.core.exceptions import ModelFileError

__all__ = [
    "MAX_DEFLATE_RATIO",
    "MAX_MANIFEST_BYTES",
    "check_head",
    "read_archive",
    "read_arrays",
]

MEMBERS = ("manifest.json", "arrays.npz")
_ARRAY_MEMBER = re.compile(r"a[0-9]{1,9}\.npy")
_PICKLE_MAGIC = (b"\x80", b"(", b"c")
#: the manifest is JSON text: more than this (uncompressed) is refused before it is read
MAX_MANIFEST_BYTES = 64 * 2**20
#: deflate turns one 258-byte match into at least two bits: no member inflates beyond about
#: 1032 times its compressed size (plus a little for the block headers)
MAX_DEFLATE_RATIO = 1100
#: ``arrays.npz`` stays in memory up to this size, and goes to a temporary file beyond
SPOOL_BYTES = 64 * 2**20
#: the largest ``.npy`` header read (numpy writes a few hundred bytes)
MAX_NPY_HEADER = 1 << 16
_CHUNK = 1 << 24

#: what reading a damaged archive or array can raise (each becomes a ModelFileError)
READ_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    OSError,
    EOFError,
    NotImplementedError,  # an unsupported compression method
    RuntimeError,  # zipfile: a member needing a password
    zipfile.BadZipFile,
    zlib.error,
)
_ARCHIVE_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.LargeZipFile,
    UnicodeDecodeError,
    KeyError,
    *READ_ERRORS,
)
_READ_ERRORS_WITH_MEMORY: tuple[type[BaseException], ...] = (*READ_ERRORS, MemoryError)
_NPY_HEADER_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    SyntaxError,
    TypeError,
    KeyError,
    OverflowError,
    RecursionError,
    tokenize.TokenError,
    struct.error,
)


def check_head(path: Any, head: bytes) -> None:
    """Refuse a pickle or anything that is not a zip archive, from the first bytes."""
    if head[:1] in _PICKLE_MAGIC and not head.startswith(b"PK"):
        raise ModelFileError(
            f"{path}: this looks like a Python pickle; hierlab never unpickles files "
            "(they can run arbitrary code). Re-save the model with hierlab.save()."
        )
    if not head.startswith(b"PK"):
        raise ModelFileError(f"{path}: not a hierlab model file (expected a zip archive)")


def _check_members(
    path: Any, infos: list[zipfile.ZipInfo], cap: int, prefix: str = ""
) -> dict[str, zipfile.ZipInfo]:
    """The members by name; refuse duplicates, encrypted members and inflated sizes over ``cap``
    or beyond what their compressed bytes can inflate to.

    ``zipfile`` stops reading a member at its declared size, so a member that lies about it
    cannot inflate further.
    """
    seen: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        name = f"{prefix}{info.filename}"
        if info.filename in seen:
            raise ModelFileError(f"{path}: member {name!r} appears twice (a tampered archive)")
        if info.flag_bits & 0x1:
            raise ModelFileError(f"{path}: member {name!r} is encrypted: refused")
        if info.file_size > cap:
            raise ModelFileError(
                f"{path}: member {name!r} would inflate to {info.file_size:,} bytes "
                f"(limit {cap:,}); refused"
            )
        stored = info.compress_type == zipfile.ZIP_STORED
        most = info.compress_size if stored else MAX_DEFLATE_RATIO * info.compress_size + 1024
        if info.file_size > most:
            raise ModelFileError(
                f"{path}: member {name!r} declares {info.file_size:,} bytes, more than its "
                f"{info.compress_size:,} stored bytes can hold: a forged archive"
            )
        seen[info.filename] = info
    return seen


def read_archive(path: Any, fh: IO[bytes], max_bytes: int) -> tuple[bytes, IO[bytes], str]:
    """The raw manifest, ``arrays.npz`` (a spooled file) and its SHA-256 hex digest.

    Members and their declared sizes are checked before anything is inflated; the caller
    closes the returned file.
    """
    try:
        with zipfile.ZipFile(fh) as zf:
            infos = zf.infolist()
            names = {i.filename for i in infos}
            if "manifest.json" not in names or "arrays.npz" not in names:
                raise ModelFileError(f"{path}: not a hierlab model file (no manifest)")
            extra = sorted(names - set(MEMBERS))
            if extra:
                raise ModelFileError(f"{path}: unexpected member {extra[0]!r} in a model file")
            seen = _check_members(path, infos, max(max_bytes, MAX_MANIFEST_BYTES))
            for name, cap in (("manifest.json", MAX_MANIFEST_BYTES), ("arrays.npz", max_bytes)):
                if seen[name].file_size > cap:
                    what = "the manifest" if name == "manifest.json" else "the arrays"
                    raise ModelFileError(
                        f"{path}: {what} would inflate to {seen[name].file_size:,} bytes "
                        f"(limit {cap:,}); refused"
                    )
            manifest = zf.read(seen["manifest.json"])
            arrays, digest = _spool(zf, seen["arrays.npz"])
            return manifest, arrays, digest
    except ModelFileError:
        raise
    except _ARCHIVE_ERRORS as exc:
        raise ModelFileError(f"{path}: corrupt model file ({exc})") from None


def _spool(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[IO[bytes], str]:
    """Member ``info`` inflated in chunks into a spooled temporary file, and its SHA-256."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    sha = hashlib.sha256()
    try:
        with zf.open(info) as src:
            while chunk := src.read(_CHUNK):
                sha.update(chunk)
                out.write(chunk)
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out, sha.hexdigest()


def read_arrays(path: Any, fh: IO[bytes], max_bytes: int) -> dict[str, np.ndarray]:
    """Every array of ``arrays.npz`` (the open file ``fh``), each header checked first."""
    try:
        with zipfile.ZipFile(fh) as inner:
            infos = inner.infolist()
            _check_members(path, infos, max_bytes, prefix="arrays.npz/")
            total = sum(info.file_size for info in infos)
            if total > max_bytes:
                raise ModelFileError(
                    f"{path}: the arrays would inflate to {total:,} bytes (limit {max_bytes:,})"
                )
            out = {}
            for info in infos:
                name = f"arrays.npz/{info.filename}"
                if not _ARRAY_MEMBER.fullmatch(info.filename):
                    raise ModelFileError(f"{path}: unexpected member {name!r} in a model file")
                with inner.open(info) as member:
                    out[info.filename[:-4]] = _npy_array(path, name, member, info.file_size)
            return out
    except ModelFileError:
        raise
    except _READ_ERRORS_WITH_MEMORY as exc:
        raise ModelFileError(f"{path}: corrupt arrays ({type(exc).__name__}: {exc})") from None


def _npy_header(fp: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype[Any], int]:
    """``(shape, fortran_order, dtype, header length)`` of the ``.npy`` member ``fp``.

    The header's declared length is checked (at most :data:`MAX_NPY_HEADER`) before it is read.
    """
    magic = fp.read(8)
    if len(magic) != 8 or magic[:6] != b"\x93NUMPY":
        raise ValueError("not a .npy member")
    major = magic[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", fp.read(2))
        size_bytes = 2
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", fp.read(4))
        size_bytes = 4
    else:
        raise ValueError(f"unsupported .npy version {major}")
    if hlen > MAX_NPY_HEADER:
        raise ValueError(f"a .npy header of {hlen:,} bytes")
    header = fp.read(hlen)
    if len(header) != hlen:
        raise ValueError("truncated .npy header")
    buf = io.BytesIO(magic + struct.pack("<H" if size_bytes == 2 else "<I", hlen) + header)
    version = np.lib.format.read_magic(buf)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran, dtype = read(buf)
    return shape, fortran, dtype, 8 + size_bytes + hlen


def _npy_array(path: Any, member: str, fp: IO[bytes], member_size: int) -> np.ndarray:
    """The array of a ``.npy`` member, its declared shape and dtype checked before allocation."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # an old dtype alias
            shape, fortran, dtype, head = _npy_header(fp)
    except _NPY_HEADER_ERRORS as exc:  # numpy parses the header with ast
        raise ModelFileError(
            f"{path}: member {member!r}: corrupt .npy header ({type(exc).__name__})"
        ) from None
    if dtype.hasobject:
        raise ModelFileError(
            f"{path}: member {member!r} holds Python objects, i.e. a pickle: refused (hierlab "
            "never unpickles; model files hold numbers and strings only)"
        )
    count = 1
    for n in shape:
        count *= int(n)
    declared = count * dtype.itemsize
    held = member_size - head
    if declared != held:
        raise ModelFileError(
            f"{path}: member {member!r} declares shape {tuple(shape)} ({declared:,} bytes) but "
            f"holds {held:,} bytes: a truncated or tampered file"
        )
    cap = limits.current().max_weight_cells
    if count > cap:
        raise ModelFileError(
            f"{path}: member {member!r} declares {count:,} values (shape {tuple(shape)}), more "
            "than any model holds " + limits.how_to_raise("max_weight_cells")
        )
    out = np.empty(count, dtype=dtype)
    done = 0
    if declared:
        view = out.view(np.uint8).reshape(-1)
        while done < declared:
            chunk = fp.read(min(_CHUNK, declared - done))
            if not chunk:
                raise ModelFileError(f"{path}: member {member!r} is truncated")
            view[done : done + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
            done += len(chunk)
    return out.reshape(shape, order="F" if fortran else "C")
