"""``hierlab reproduce orthognl-subset``: seed 000's hierarchical subset (Tables 5-8).

* Tables 6-8 are the seed text's numbers, in order after their anchors, and agree with
  ``published_tables.json``; the verdicts on the published columns say what the text says;
* the subset rule on hand-made trees: one-leaf first-level branches go (leaf or chain), the
  others stay, per task root;
* a tiny run on 20 Newsgroups prints the five methods beside the paper.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from hierlab.cli import main
from hierlab.core.dataset import HierDataset
from hierlab.core.taxonomy import Taxonomy
from hierlab.lab.reproduce import available
from hierlab.lab.reproduce import orthognl_subset as sub

ROOT = Path(__file__).resolve().parents[2]
SEEDS = Path(os.environ.get("HIERLAB_SEEDS", ROOT.parent / "shared" / "seeds"))


@pytest.mark.parametrize("table", list(sub.TABLES))
def test_tables_6_to_8_are_the_seed_text(table: str) -> None:
    tr = sub.TABLES[table]
    text = (SEEDS / tr.seed_file).read_text(encoding="utf-8")
    pos = text.index(tr.anchor) + len(tr.anchor)
    for key, token in tr.values.items():
        found = text.find(token, pos)
        assert 0 <= found - pos < 400, (table, key, token)
        pos = found + len(token)
    pub = json.loads((SEEDS / "published_tables.json").read_text())["000_orthogonal_transfer"]
    key = {"CCAT": "table6_CCAT_hierarchical", "MCAT": "table7_MCAT_hierarchical",
           "ECAT": "table8_ECAT_hierarchical"}[table]  # fmt: skip
    assert json.dumps(pub[key])  # present
    flat = json.dumps(pub[key])
    for value in sub.published(table).values():
        assert f"{value}" in flat or f"{value:.2f}" in flat


def test_the_published_columns_give_the_texts_verdicts() -> None:
    cols = {t: sub.published(t) for t in sub.TABLES}
    v = sub.verdicts(sub.CLAIMS, cols)
    assert (v[list(sub.TABLES)] == "holds").all().all()


def test_the_rule_removes_one_leaf_first_level_branches_per_task() -> None:
    # root -> a (leaf), b -> b1 (chain to one leaf), c -> c1, c2
    tax = Taxonomy.from_paths(["a", "b/b1", "c/c1", "c/c2"], root="r")
    names = [str(tax.names[i]) for i in sub.one_level_branches(tax, 0)]
    assert sorted(names) == ["a", "b"]
    # sections as task roots: S/x has one subclass, S/y two; T/z two
    tax = Taxonomy.from_paths(["S/x/x1", "S/y/y1", "S/y/y2", "T/z/z1", "T/z/z2"], root="r")
    assert [str(tax.names[i]) for i in sub.one_level_branches(tax, 1)] == ["x"]
    X = np.eye(5)
    y = np.array(["x1", "y1", "y2", "z1", "z2"], dtype=object)
    ds = HierDataset(X, y, tax)
    tr, _, dropped = sub.hierarchical_subset(ds, ds, 1)
    assert dropped == ["x"] and list(tr.y) == ["y1", "y2", "z1", "z2"]
    assert "x" not in [str(n) for n in tr.taxonomy.names]


@pytest.mark.slow
@pytest.mark.realdata
def test_tiny_run_on_20_newsgroups(capsys) -> None:  # type: ignore[no-untyped-def]
    assert "orthognl-subset" in available()
    assert main(["reproduce", "orthognl-subset", "--size", "tiny", "--data", "20newsgroups"]) == 0
    out = capsys.readouterr().out
    for m in sub.METHODS:
        assert f"{m}  0/1 loss %" in out
    assert "removed 1 one-level branch(es): misc" in out
    assert "Published patterns" in out and "What differs" in out
