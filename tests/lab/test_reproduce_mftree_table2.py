"""``hierlab reproduce mftree-table2``: seed 004's Table 2, its verdicts, a tiny run."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from hierlab.cli import main
from hierlab.lab.reproduce import available, mftree_table2

ROOT = Path(__file__).resolve().parents[2]
SEEDS = Path(os.environ.get("HIERLAB_SEEDS", ROOT.parent / "shared" / "seeds"))


def test_table2_tokens_are_in_the_seed_text_in_order() -> None:
    tr = mftree_table2.TABLE2
    text = (SEEDS / tr.seed_file).read_text(encoding="utf-8")
    start = text.index(tr.anchor)
    pos = start + len(tr.anchor)
    for name, token in tr.values.items():
        found = text.find(token, pos)
        assert found >= 0, f"{name} = {token!r} not found after the previous number"
        assert found - start < 1500, f"{name} = {token!r} is far from the table"
        pos = found + len(token)
    assert len(tr.values) == 4 * 6 * 3


def test_table2_agrees_with_published_tables_json() -> None:
    pub = json.loads((SEEDS / "published_tables.json").read_text())["004_mftree"]["table2"]
    for data_set in mftree_table2.SETS:
        ours = mftree_table2.published(data_set)
        for system in mftree_table2.SYSTEMS:
            row = pub[data_set][system]
            assert ours[f"f1 {system}"] == row["avg_f1"]["mean"]
            assert ours[f"time {system}"] == row["test_seconds"]["mean"]
            assert ours[f"depth {system}"] == row["depth"]


def test_every_pattern_holds_on_every_published_set() -> None:
    """The seed's text (Section 6.2.1) states these patterns of its Table 2."""
    for data_set in mftree_table2.SETS:
        nums = mftree_table2.published(data_set)
        for claim, fn in mftree_table2.CLAIMS.items():
            assert fn(nums), (data_set, claim)


def test_verdicts_can_fail() -> None:
    nums = dict(mftree_table2.published("Wiki1"))
    nums.update({"f1 RDM": 0.9, "time MF-Tree": 5000.0, "depth RNMF": 100.0})
    v = {c: fn(nums) for c, fn in mftree_table2.CLAIMS.items()}
    assert not v["MF-Tree has the best macro-F1"]
    assert not v["MF-Tree has the lowest test time"]
    assert not v["RNMF is the shallowest"]
    assert not v["RDM has the lowest macro-F1"]
    assert not v["RNMF tests slower than MF-Tree despite its shorter tree"]
    assert v["DAGSVM is the deepest (one class removed per level)"]


def test_the_command_is_listed_and_prints_six_systems(capsys: pytest.CaptureFixture[str]) -> None:
    assert "mftree-table2" in available()
    assert main(["reproduce", "mftree-table2", "--size", "tiny", "--data", "imclef07d"]) == 0
    out = capsys.readouterr().out
    assert "ours on imclef07d beside the paper's Caltech1" in out
    for system in mftree_table2.SYSTEMS:
        assert f"\n{system:>7} " in out, system
    assert "Published patterns" in out and "What differs" in out


@pytest.mark.slow
def test_tiny_run_of_all_three_data_sets() -> None:
    args = argparse.Namespace(size="tiny", seed=0, json="", data=list(mftree_table2.BESIDE))
    res = mftree_table2.run_tables(args, lambda f, t: None)
    tables = [t for k, t in res["tables"].items() if k.startswith("Table 2")]
    assert len(tables) == 3
    for table in tables:
        assert list(table["system"]) == list(mftree_table2.SYSTEMS)
        assert ((table["macro-F1 (ours)"] >= 0) & (table["macro-F1 (ours)"] <= 1)).all()
        assert (table["depth (ours)"] >= 1).all()
        dag = table.set_index("system").loc["DAGSVM"]
        assert dag["depth (ours)"] == table["depth (ours)"].max()  # K - 1: the deepest
    assert len(res["checks"]) == 3 * len(mftree_table2.CLAIMS)


def test_a_subset_of_systems_prints_their_rows_and_no_verdicts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["reproduce", "mftree-table2", "--size", "tiny", "--data", "imclef07d"]
    assert main([*argv, "--systems", "RNMF", "DAGSVM"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0] for line in out.splitlines() if line.strip()}
    assert {"RNMF", "DAGSVM"} <= rows and not rows & {"MF-Tree", "CMTL", "RDM", "DRHL"}
    assert "Published patterns" not in out
