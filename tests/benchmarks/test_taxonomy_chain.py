"""``python -m hierlab.benchmarks.taxonomy --chain``: the chain readers build the chain they
name, and the table has one row per format (its seconds are printed, never asserted)."""

from __future__ import annotations

import pytest

from hierlab.benchmarks.taxonomy import chain_scaling, chain_texts


def test_every_chain_reader_builds_the_chain() -> None:
    readers = chain_texts(50)
    assert set(readers) == {"edges", "csv", "paths", "json", "builder"}
    for fmt, read in readers.items():
        tax = read()
        assert tax.n_nodes == 51 and tax.max_depth == 50, fmt
        assert [str(tax.names[i]) for i in tax.ancestors("n50")] == [f"n{i}" for i in range(50)]


def test_the_chain_table_has_a_row_per_format(capsys: pytest.CaptureFixture[str]) -> None:
    chain_scaling(20, 200, repeat=1)
    rows = capsys.readouterr().out.splitlines()[2:]
    assert [r.split()[0] for r in rows] == ["edges", "csv", "paths", "json", "builder"]
    assert all(len([float(x) for x in r.split()[1:]]) == 3 for r in rows)  # small, large, ratio
