"""Paper tables in-process: the reproductions' numbers as DataFrames, with progress."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from hierlab.core.exceptions import ParameterError
from hierlab.lab import tables as tables_mod
from hierlab.lab.tables import (
    default_arguments,
    reproduction_options,
    reproductions,
    run_reproduction,
)

HIERON_SMALL = {"seeds": 2, "per_label": (6, 3), "literal": False, "figure": ""}


def test_reproductions_are_listed_with_their_options() -> None:
    names = reproductions()
    assert {"hieron", "nhsvm"} <= set(names)
    assert all(h for h in names.values())
    opts = {o["name"]: o for o in reproduction_options("hieron")}
    assert opts["seeds"]["default"] == 5 and opts["seeds"]["type"] == "int"
    assert default_arguments("hieron", seeds=1).seeds == 1
    with pytest.raises(ParameterError, match="no option"):
        default_arguments("hieron", nope=1)
    with pytest.raises(ParameterError, match="unknown reproduction"):
        run_reproduction("nope")


def test_hieron_tables_beside_the_paper() -> None:
    seen: list[tuple[float, str]] = []
    res = run_reproduction("hieron", progress=lambda f, t: seen.append((f, t)), **HIERON_SMALL)
    assert [f for f, _ in seen] == [0.0, 0.5, 1.0]
    t1 = res.tables["Table 1 (online Hieron), sigma = 0.16"]
    t2 = res.tables["Table 2 (batch Hieron), sigma = 0.16"]
    assert list(t1["data set"]) == ["Synthetic (tree)", "Synthetic (flat)"]
    assert list(t2["data set"]) == ["Synthetic (tree)", "Synthetic (flat)", "Synthetic (greedy)"]
    # published numbers beside ours (seed 002, Table 1: tree 0.83, flat 1.35)
    assert list(t1["tree err (paper)"]) == [0.83, 1.35]
    assert isinstance(res.figure, go.Figure) and len(res.figure.data) == 1
    assert res.checks and res.returncode == (0 if all(res.checks.values()) else 1)


def test_nhsvm_table() -> None:
    res = run_reproduction(
        "nhsvm",
        quick=True,
        kinds="unbalanced",
        n_samples=300,
        n_features=20,
        epochs=2,
        lambdas="1e-3",
    )
    (table,) = res.tables.values()
    assert list(table["method"]) == ["SSVM", "NHSVM", "HSVM", "FlatSVM"]
    assert table["accuracy % (paper)"].tolist() == [74.9, 74.1, 68.4, 68.5]
    assert table["accuracy % (ours)"].between(0, 100).all()
    assert "Table 3" in res.text


def test_a_module_without_an_adapter_runs_through_run(monkeypatch) -> None:
    monkeypatch.setattr(tables_mod, "_ADAPTERS", {})
    res = run_reproduction("hieron", **{**HIERON_SMALL, "figure": "should_not_be_written.html"})
    assert res.tables == {} and res.figure is None
    assert "Table 1. Online Hieron" in res.text and "Table 2" in res.text
    assert res.args is not None and res.args.figure == ""


def test_hieron_noise_readings_side_by_side() -> None:
    """Both readings of N(0, 0.16) in one table beside the paper, the default marked; under the
    literal variance 0.16 the Bayes rule errs far more than under sigma = 0.16."""
    from hierlab.lab.reproduce import hieron

    small = {**HIERON_SMALL, "seeds": 1, "literal": True}
    res = run_reproduction("hieron", **small)
    t = res.tables["Noise readings side by side"].set_index("index")
    assert list(t.columns) == ["paper", hieron.DEFAULT_READING, hieron.LITERAL_READING]
    assert hieron.DEFAULT_READING == "sigma = 0.16 (default)"
    pub = hieron.published()
    assert (
        t.loc["T1 online tree err (tree)", "paper"] == pub["table1_online"]["synthetic"]["tree"][0]
    )
    assert t.loc["T2 mc % Batch (greedy)", "paper"] == pub["table2_batch"]["synthetic"]["greedy"][3]
    bayes = t.loc["Bayes rule mc %"]
    assert bayes[hieron.LITERAL_READING] > 15.0 > 1.0 > bayes[hieron.DEFAULT_READING]
    # the per-reading tables are the ones the side-by-side table summarises
    t2 = res.tables["Table 2 (batch Hieron), sigma = 0.16"].set_index("data set")
    mean = float(t2.loc["Synthetic (tree)", "tree Batch"].split(" ± ")[0])
    assert t.loc["T2 tree err Batch (tree)", hieron.DEFAULT_READING] == pytest.approx(
        mean, abs=1e-3
    )
