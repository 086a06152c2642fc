"""Where a model is written and how ``load`` is called: non-regular targets are refused at once,
keywords are type-checked, an unreadable file is a clean error.

Mutations that make these fail: ``save`` opening the path with ``zipfile.ZipFile(path, "w")``
(a FIFO blocks for a reader forever; ``/dev/full`` raises ``OSError: No space left``; a
directory ``IsADirectoryError``); ``load`` comparing ``max_bytes`` without checking its type
(``TypeError``); ``load`` reading the head of the file without catching ``OSError``.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import hierlab
from hierlab import ModelFileError, ParameterError
from tests._hang import hang_stop


@pytest.fixture(scope="module")
def est() -> hierlab.HierarchicalClassifier:
    return hierlab.make_estimator("topdown").fit(np.eye(4), ["a", "b", "a", "b"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_save_to_a_fifo_refuses_at_once(
    est: hierlab.HierarchicalClassifier, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with hang_stop(), pytest.raises(ModelFileError, match="not a regular file"):
        hierlab.save(est, fifo)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_save_to_a_device_or_a_directory_is_refused(
    est: hierlab.HierarchicalClassifier, tmp_path: Path
) -> None:
    with pytest.raises(ModelFileError, match="/dev/full: not a regular file"):
        hierlab.save(est, "/dev/full")
    with pytest.raises(ModelFileError, match="is a directory"):
        hierlab.save(est, tmp_path)
    with pytest.raises(ModelFileError, match="no such directory"):
        hierlab.save(est, tmp_path / "missing" / "m.hlm")
    with pytest.raises(ParameterError, match="path must be"):
        hierlab.save(est, 3)  # type: ignore[arg-type]


def test_save_replaces_a_file_whole_and_writes_to_a_buffer(
    est: hierlab.HierarchicalClassifier, tmp_path: Path
) -> None:
    path = tmp_path / "m.hlm"
    path.write_bytes(b"old content")
    hierlab.save(est, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.hlm"]  # no temporary left
    buf = io.BytesIO()
    hierlab.save(est, buf)
    assert buf.getvalue() == path.read_bytes()
    assert list(hierlab.load(path).predict(np.eye(4))) == ["a", "b", "a", "b"]


@pytest.mark.parametrize("bad", ["10", 10.0, True, 0, -5, None])
def test_load_max_bytes_is_a_parameter_error(
    est: hierlab.HierarchicalClassifier, tmp_path: Path, bad: object
) -> None:
    path = tmp_path / "m.hlm"
    hierlab.save(est, path)
    with pytest.raises(ParameterError, match="max_bytes must be a positive int"):
        hierlab.load(path, max_bytes=bad)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="max_bytes"):
        hierlab.check_model(path, max_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.skipif(sys.platform != "linux", reason="/proc is Linux's")
def test_a_link_to_proc_self_mem_is_a_clean_error(tmp_path: Path) -> None:
    link = tmp_path / "m.hlm"
    link.symlink_to("/proc/self/mem")
    with pytest.raises(ModelFileError, match=str(link)):
        hierlab.load(link)
