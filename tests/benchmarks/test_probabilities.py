"""``python -m hierlab.benchmarks.probabilities`` on tiny generated text (no timing asserted)."""

from __future__ import annotations

import pytest

from hierlab.benchmarks import probabilities
from hierlab.datasets.text import make_hierarchical_text


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_hierarchical_text(
        400, n_classes=6, n_features=200, depth=2, noise=0.5, random_state=0
    )
    monkeypatch.setitem(probabilities.LOADERS, "20newsgroups", lambda: data)


def test_run_gives_au_prc_and_the_precision_depth_table(tiny: None) -> None:
    summary, table = probabilities.run("20newsgroups", ["topdown", "hieron-batch"], cv=2)
    assert list(summary.index) == ["topdown", "hieron-batch"]
    assert ((summary["au_prc"] > 0) & (summary["au_prc"] <= 1)).all()
    assert set(table.index.get_level_values("threshold")) == {0.0, 0.5, 0.9}
    top = table.loc["topdown"]
    assert top.loc[0.0, "stopped"] == 0.0
    assert top["mean_depth"].is_monotonic_decreasing


def test_main_prints_both_tables(tiny: None, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--data", "20newsgroups", "--methods", "topdown", "--cv", "train"]
    assert probabilities.main(args) == 0
    out = capsys.readouterr().out
    assert "au_prc" in out and "hierarchical_precision" in out and "mean_depth" in out
