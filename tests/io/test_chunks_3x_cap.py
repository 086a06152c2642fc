"""Issue #40's bullet as printed: a chunked fit of a file 3x larger than a ``ulimit -v`` cap
finishes under the cap (:mod:`hierlab.benchmarks.out_of_core`, run whole: a 2.4 GB svmlight
file, about 2.5 min). The cap is the fit of one 2,000-row block alone plus 128 MB; the control
(the same file read whole under the same cap) must fail, and the model must equal, to the bit,
Hieron's ``partial_fit`` of the block in memory once per repeat (seed 002's Algorithm 1 is
online: the exact oracle)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hierlab.benchmarks.out_of_core import run

pytestmark = pytest.mark.slow


@pytest.mark.skipif(sys.platform != "linux", reason="VmPeak and ulimit -v are Linux's")
def test_a_file_three_times_the_cap_trains_under_the_cap(tmp_path: Path) -> None:
    res = run(tmp_path, cap_mb=None, headroom_mb=128.0, chunk_rows=500)
    cap_kb, chunked, whole = res["cap_kb"], res["chunked"], res["whole"]
    assert res["file_bytes"] >= 3 * cap_kb * 1024
    assert chunked["rc"] == 0, chunked["error"]
    assert 0 < chunked["vmpeak_kb"] <= cap_kb
    assert whole["rc"] != 0  # the control: the file read whole does not fit under the cap
    assert res["equals_oracle"]
