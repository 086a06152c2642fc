"""The memory-by-classes benchmark runs and prints one row per method (small sizes)."""

from __future__ import annotations

import pytest

from hierlab.benchmarks.memory_classes import main, peak_memory


def test_memory_table_prints_a_row_per_method(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--methods", "flatmult", "topdown", "--leaves", "200", "400"]) == 0
    out = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in out[2:]}
    assert set(rows) == {"flatmult", "topdown"}
    for cells in rows.values():
        small, large, ratio = float(cells[0]), float(cells[1]), float(cells[2])
        assert 0 < small and 0 < large
        assert ratio == pytest.approx(large / small, rel=0.05, abs=0.01)


def test_peak_grows_with_the_data() -> None:
    """A fit on ten times the classes (and examples) allocates more at its peak."""
    assert peak_memory("flatmult", 300)[0] > peak_memory("flatmult", 30)[0]
