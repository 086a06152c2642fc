"""The out-of-core benchmark's pieces on a small file: the repeated block, the lean child
process and its VmPeak, the control under a cap, and the exact oracle (which must also say no)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from hierlab.benchmarks.out_of_core import (
    BLOCK_ROWS,
    hierlab_under_cap,
    oracle_equal,
    repeat_file,
    write_block,
)


@pytest.mark.skipif(sys.platform != "linux", reason="VmPeak and ulimit -v are Linux's")
def test_the_chunked_fit_of_repeated_blocks_is_the_oracle(tmp_path: Path) -> None:
    block, big, model = tmp_path / "block.svm", tmp_path / "big.svm", tmp_path / "m.hlm"
    write_block(block)
    assert sum(1 for _ in open(block)) == BLOCK_ROWS
    reps = repeat_file(block, big, 2 * block.stat().st_size)
    assert reps == 3 and big.read_bytes() == block.read_bytes() * 3
    args = ["fit", str(big), "--method", "hieron"]
    fit = hierlab_under_cap([*args, "--chunk-rows", "500", "--out", str(model)], None)
    assert fit["rc"] == 0, fit["error"]
    assert fit["vmpeak_kb"] > 0
    assert oracle_equal(block, reps, 500, model)
    assert not oracle_equal(block, reps - 1, 500, model)  # one repeat short: another model
    starved = hierlab_under_cap(args, 200 * 1024)  # 200 MB: not even the imports fit
    assert starved["rc"] != 0
    rows = np.loadtxt(block, usecols=[0], dtype=str)
    assert len(set(rows)) == 16  # every leaf of the block's tree has rows
