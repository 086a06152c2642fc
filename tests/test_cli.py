"""The ``hierlab`` command: every sub-command on small data, and its error path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import hierlab
from hierlab.cli import ProgressBar, main
from hierlab.core.solver import SolverState

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets"


def test_datasets_and_methods_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "hieron-synthetic" in out and "20newsgroups" in out
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in hierlab.list_methods():
        assert name in out


def test_methods_name_lists_its_declared_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["methods", "orthognl"]) == 0
    out = capsys.readouterr().out
    spec = hierlab.get_method("orthognl")
    assert out.startswith(f"orthognl [{spec.seed}] {spec.summary}")
    for p in spec.params:
        line = f"--param {p.name}=..."
        assert line in out and f"default {p.default!r}; {p.range_text()}" in out, p.name
    assert "\n  ORTHOGNL; iterations capped by --param max_iter\n" in out


@pytest.mark.parametrize("name", ["ssvm", "topdown"])
def test_methods_name_says_its_budget(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The budget the registry entry declares (SSVM: its alpha rounds), none for top-down."""
    assert main(["methods", name]) == 0
    second = capsys.readouterr().out.splitlines()[1]
    spec = hierlab.get_method(name)
    want = f"; iterations capped by --param {spec.budget}" if spec.budget else ""
    assert second == f"  {spec.display_name}{want}"
    assert (spec.budget == "rounds") if name == "ssvm" else spec.budget is None


def test_fit_file_with_taxonomy_json_and_model(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    model = tmp_path / "m.hlm"
    code = main(
        [
            "fit",
            str(DATA / "example_names.csv"),
            "--taxonomy",
            str(DATA / "taxonomy_edges.txt"),
            "--method",
            "topdown",
            "--param",
            "C=0.5",
            "--test-size",
            "0.3",
            "--seed",
            "1",
            "--json",
            "--out",
            str(model),
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["method"] == "topdown" and report["n_train"] + report["n_test"] == 30
    assert 0.0 <= report["accuracy"] <= 1.0
    est = hierlab.load(model)
    data = hierlab.load_dataset(
        DATA / "example_names.csv", taxonomy=hierlab.read_taxonomy(DATA / "taxonomy_edges.txt")
    )
    assert len(est.predict(data.X)) == 30


def test_fit_separate_test_file(capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(
        [
            "fit",
            str(DATA / "example_paths.csv"),
            "--test",
            str(DATA / "example_paths_test.csv"),
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_test"] == 12


def test_evaluate_predictions_csv(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    tax = hierlab.read_taxonomy(DATA / "taxonomy_edges.txt")
    leaves = [str(n) for n in tax.names[tax.leaves]]
    rng = np.random.default_rng(0)
    y_true = rng.choice(leaves, 50)
    y_pred = rng.choice(leaves, 50)
    path = tmp_path / "pred.csv"
    pd.DataFrame({"y_true": y_true, "y_pred": y_pred}).to_csv(path, index=False)
    assert (
        main(["evaluate", str(path), "--taxonomy", str(DATA / "taxonomy_edges.txt"), "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report == pytest.approx(hierlab.evaluation.metrics.evaluate(y_true, y_pred, tax))


def test_compare_writes_tables(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out_csv, out_json = tmp_path / "r.csv", tmp_path / "r.json"
    code = main(
        [
            "compare",
            str(DATA / "example_names.csv"),
            "--taxonomy",
            str(DATA / "taxonomy_edges.txt"),
            "--methods",
            "topdown",
            "ovr-svm",
            "--param",
            "topdown:C=0.1",
            "--n-splits",
            "2",
            "--csv",
            str(out_csv),
            "--json",
            str(out_json),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "paired tests against topdown" in text
    df = pd.read_csv(out_csv)
    assert set(df["method"]) == {"topdown(C=0.1)", "ovr-svm"} and set(df["split"]) == {0, 1}
    payload = json.loads(out_json.read_text())
    assert {"summary", "results", "tests"} <= set(payload)


def test_reproduce_lists_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce"]) == 0
    assert "hieron" in capsys.readouterr().out
    assert main(["reproduce", "no-such-table"]) == 2


def test_errors_are_messages_not_tracebacks(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["fit", str(tmp_path / "missing.csv")]) == 2
    assert "hierlab: error" in capsys.readouterr().err
    assert main(["fit", "hieron-synthetic", "--method", "nope"]) == 2
    assert "unknown method" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,label\n1,x\n2,y\n")
    assert main(["fit", str(bad), "--taxonomy", str(DATA / "taxonomy_edges.txt")]) == 2
    assert "not a node" in capsys.readouterr().err


def test_progress_bar_draws_and_finishes() -> None:
    import io

    buf = io.StringIO()
    bar = ProgressBar(total=10, stream=buf)
    bar(SolverState(3, 0.5, upper=2.0, lower=1.0))

    class R:
        final = SolverState(10, 1.0, upper=1.5, lower=1.49)

    bar.on_end(R())
    text = buf.getvalue()
    assert "10/10" in text and "gap 0.01" in text and text.endswith("\n")


def test_induce_writes_a_taxonomy_over_the_classes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "induced.json"
    code = main(
        [
            "induce",
            str(DATA / "example_names.csv"),
            "--taxonomy",
            str(DATA / "taxonomy_edges.txt"),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    assert "tree-similarity MSE" in capsys.readouterr().err
    tax = hierlab.read_taxonomy(out)
    data = hierlab.load_dataset(
        DATA / "example_names.csv", taxonomy=hierlab.read_taxonomy(DATA / "taxonomy_edges.txt")
    )
    assert set(map(str, tax.names[tax.leaves])) == set(map(str, data.y))


def test_induce_compares_over_the_leaves_with_data(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A given leaf without rows is not in the induced tree: the MSE is over the others."""
    edges = tmp_path / "edges.txt"
    edges.write_text((DATA / "taxonomy_edges.txt").read_text() + "\nvehicle scooter\n")
    code = main(["induce", str(DATA / "example_names.csv"), "--taxonomy", str(edges)])
    assert code == 0
    err = capsys.readouterr().err
    assert "tree-similarity MSE" in err, err


def test_fit_with_a_threshold_stops_above_the_leaves(capsys) -> None:  # type: ignore[no-untyped-def]
    """``--threshold`` predicts with ``predict(X, threshold=t)``: t = 0 is the plain fit, t = 1
    keeps only the certain nodes (the root at least), so predictions get shallower."""
    args = ["fit", str(DATA / "example_paths.csv"), "--test", str(DATA / "example_paths_test.csv")]
    reports = {}
    for t in ("0", "0.5", "1"):
        assert main([*args, "--threshold", t, "--calibrate-cv", "2", "--proba", "--json"]) == 0
        reports[t] = json.loads(capsys.readouterr().out)
    assert main([*args, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert reports["0"]["accuracy"] == plain["accuracy"]
    assert reports["0"]["stopped_above"] == 0.0
    assert reports["1"]["mean_depth"] <= reports["0.5"]["mean_depth"] <= reports["0"]["mean_depth"]
    assert reports["1"]["mean_depth"] < reports["0"]["mean_depth"]
    assert 0.0 <= reports["0.5"]["au_prc"] <= 1.0 and "brier" in reports["0.5"]
    assert main([*args, "--threshold", "2"]) == 2  # refused with a message


def test_tune_ends_its_path_by_patience_or_time(capsys: pytest.CaptureFixture[str]) -> None:
    """``hierlab tune``: the report says how the path ended and which C were not fitted."""
    grid = ["0.001", "0.01", "0.1", "1", "10", "100"]
    args = ["tune", str(DATA / "example_paths.csv"), "--method", "topdown", "--Cs", *grid]
    assert main([*args, "--max-time", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["path_ended_by"] == "max_time"
    assert [row["C"] for row in out["path"]] == [0.001]
    assert out["C_not_fitted"] == "0.01 0.1 1 10 100"
    assert main([*args, "--patience", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["path_ended_by"] == "grid" and out["C_not_fitted"] == "-"
    assert len(out["path"]) == len(grid)


# ---------------------------------------------------------------------------- no traceback, ever
def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit status and stderr of ``hierlab argv`` (argparse's own exits included)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def _one_line(err: str, *words: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("\r")]
    assert "Traceback" not in err, err
    assert len(lines) == 1 and "error:" in lines[0], err
    for w in words:
        assert w in lines[0], (w, err)


FIT = ["fit", str(DATA / "example_names.csv"), "--taxonomy", str(DATA / "taxonomy_edges.txt")]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--test-size", "0"], ["--test-size"]),
        (["--test-size", "1.5"], ["--test-size"]),
        (["--seed", "-3"], ["--seed"]),
        (["--seed", "abc"], ["--seed"]),
        (["--calibrate-cv", "1"], ["--calibrate-cv"]),
        (["--calibrate-cv", "1000"], ["--calibrate-cv", "1000"]),
        (["--threshold", "2"], ["--threshold"]),
        (["--param", "C=5e-324"], ["'C'"]),
        (["--param", "C=1e-200"], ["'C'"]),
        (["--param", "nonsense=1"], ["nonsense"]),
        (["--method", "no-such-method"], ["no-such-method"]),
    ],
)
def test_fit_argument_errors_are_one_line(
    extra: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _cli([*FIT, *extra], capsys)
    assert code != 0
    _one_line(err, *words)


def test_fit_output_targets_are_refused_before_the_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for target in (str(tmp_path), "/dev/full"):
        if not Path(target).exists():
            continue
        code, err = _cli([*FIT, "--out", target], capsys)
        assert code != 0
        _one_line(err, target)
    code, err = _cli([*FIT, "--out", str(tmp_path / "no" / "m.hlm")], capsys)
    assert code != 0
    _one_line(err, "no such directory")


def test_fit_data_errors_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = tmp_path / "one.csv"
    one.write_text("x,y,label\n1,2,cat\n")
    code, err = _cli(["fit", str(one)], capsys)
    assert code != 0
    _one_line(err, str(one), "row")
    code, err = _cli(["fit", str(tmp_path / "missing.csv")], capsys)
    assert code != 0
    _one_line(err, "missing.csv")
    code, err = _cli(["fit", str(tmp_path)], capsys)
    assert code != 0
    _one_line(err, str(tmp_path))


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--n-splits", "0"], ["--n-splits"]),
        (["--split", "kfold", "--n-splits", "1000"], ["n_splits"]),
        (["--test-size", "0"], ["--test-size"]),
        (["--methods", "topdown", "bogus"], ["bogus"]),
        (["--param", "topdown:C=-1"], ["'C'"]),
    ],
)
def test_compare_argument_errors_are_one_line(
    extra: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _cli(["compare", str(DATA / "example_names.csv"), *extra], capsys)
    assert code != 0
    _one_line(err, *words)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--Cs", "a"], ["--Cs"]),
        (["--Cs", "-1"], ["Cs"]),
        (["--validation", "0.999"], ["validation"]),
        (["--validation", "1"], ["--validation"]),
        (["--max-time", "-1"], ["--max-time"]),
    ],
)
def test_tune_argument_errors_are_one_line(
    extra: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _cli(["tune", str(DATA / "example_names.csv"), "--method", "flatmult", *extra],
                     capsys)  # fmt: skip
    assert code != 0
    _one_line(err, *words)


def test_an_unexpected_error_is_one_line_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import hierlab.cli as cli

    def boom(args: Any) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli, "_cmd_datasets", boom)
    code, err = _cli(["datasets"], capsys)
    assert code == 1
    _one_line(err, "ZeroDivisionError")
