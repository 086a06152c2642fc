"""``hierlab bench``: the method table beside LinearSVC, log-log slopes, scale curves, the CLI.

Everything runs on tiny :func:`make_hierarchical_text` data; no assertion is about speed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import LinearSVC

from hierlab.benchmarks import bench
from hierlab.benchmarks.bench import (
    HICLASS,
    REFERENCE,
    bench_table,
    loglog_slope,
    scale_curves,
    scale_curves_many,
    scale_figure,
)
from hierlab.core import registry
from hierlab.core.registry import MethodSpec, Param
from hierlab.datasets.text import make_hierarchical_text
from hierlab.methods.base import HierarchicalClassifier
from hierlab.methods.topdown import TopDownClassifier


@pytest.fixture(scope="module")
def tiny() -> tuple[Any, Any]:
    return make_hierarchical_text(
        300, n_classes=6, n_features=200, depth=2, noise=0.5, random_state=0
    )


class _Boom(HierarchicalClassifier):
    """Fails inside fit, as a broken method would."""

    def __init__(self, taxonomy: Any = None) -> None:
        super().__init__(taxonomy=taxonomy)

    def _fit(self, X: Any, Y: Any, callbacks: Any) -> None:
        raise RuntimeError("solver blew up")

    def _predict_ids(self, X: Any) -> np.ndarray:  # pragma: no cover - never fitted
        raise AssertionError


class _Sleepy(HierarchicalClassifier):
    """Ignores every budget: sleeps in fit (a hanging method)."""

    def __init__(self, taxonomy: Any = None, seconds: float = 60.0) -> None:
        super().__init__(taxonomy=taxonomy)
        self.seconds = seconds

    def _fit(self, X: Any, Y: Any, callbacks: Any) -> None:
        time.sleep(self.seconds)

    def _predict_ids(self, X: Any) -> np.ndarray:
        return np.full(X.shape[0], self.taxonomy_.leaves[0])


class _Counting(TopDownClassifier):
    """The top-down cascade, recording the rows and classes of every fit (in this process)."""

    seen: ClassVar[list[tuple[int, int]]] = []

    def _fit(self, X: Any, Y: Any, callbacks: Any) -> None:
        type(self).seen.append((X.shape[0], len(np.unique(Y))))
        super()._fit(X, Y, callbacks)


@pytest.fixture
def fake_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.list_methods()  # load the real ones first
    monkeypatch.setitem(registry._REGISTRY, "boom", MethodSpec("boom", _Boom))
    monkeypatch.setitem(
        registry._REGISTRY,
        "sleepy",
        MethodSpec("sleepy", _Sleepy, params=(Param("seconds", "float", 60.0),)),
    )


def test_table_rows_ratio_and_reference_accuracy(tiny: tuple[Any, Any]) -> None:
    train, test = tiny
    methods = ["topdown", "hieron-batch", "ovr-svm"]
    df = bench_table(train, test, methods=methods, hiclass=False)
    assert list(df.method) == [REFERENCE, *methods]
    assert df.error.isna().all()
    ref = df.iloc[0]
    # every ratio is the method's fit time over LinearSVC's, measured in the same run
    np.testing.assert_allclose(df.fit_ratio, df.fit_time / ref.fit_time, rtol=1e-12)
    np.testing.assert_allclose(df.cpu_ratio, df.fit_cpu / ref.fit_cpu, rtol=1e-12)
    assert df.fit_ratio.iloc[0] == pytest.approx(1.0)
    assert (df.fit_time > 0).all() and (df.predict_time > 0).all()
    assert df.accuracy.between(0, 1).all() and (df.tree_error >= 0).all()
    assert list(df.seed) == ["sklearn", "baseline", "002", "baseline"]
    # the reference row is LinearSVC on the leaf names: same accuracy as a direct fit
    direct = LinearSVC().fit(train.X, np.asarray(train.y, dtype=str))
    acc = np.mean(direct.predict(test.X) == np.asarray(test.y, dtype=str))
    assert ref.accuracy == pytest.approx(acc)


def test_methods_can_learn_the_tiny_task(tiny: tuple[Any, Any]) -> None:
    """The accuracy column is the estimator's own test accuracy (not a placeholder)."""
    train, test = tiny
    df = bench_table(train, test, methods=["topdown"], hiclass=False, isolate=False)
    from hierlab.core.registry import make_estimator

    est = make_estimator("topdown", taxonomy=train.taxonomy).fit(train.X, train.y)
    acc = np.mean(est.predict(test.X).astype(str) == np.asarray(test.y, dtype=str))
    assert df.set_index("method").loc["topdown", "accuracy"] == pytest.approx(acc)
    assert acc > 1 / 6 + 0.2  # the tiny task is learnable: far above chance


def test_failures_are_rows(tiny: tuple[Any, Any], fake_methods: None) -> None:
    train, test = tiny
    df = bench_table(
        train,
        test,
        methods=["boom", "no-such-method", "topdown", "sleepy"],
        params={"topdown": {"C": -1.0}},
        hiclass=False,
        hard_timeout=3.0,
    )
    by = df.set_index("method")
    assert list(df.method) == [REFERENCE, "boom", "no-such-method", "topdown", "sleepy"]
    assert by.loc["boom", "error"].startswith("RuntimeError: solver blew up")
    assert by.loc["no-such-method", "error"].startswith("ParameterError: unknown method")
    assert "ParameterError" in by.loc["topdown", "error"] and "'C'" in by.loc["topdown", "error"]
    assert by.loc["sleepy", "error"].startswith("timeout: killed after")
    failed = by.drop(index=REFERENCE)
    assert failed.fit_time.isna().all() and failed.fit_ratio.isna().all()
    assert by.loc[REFERENCE, "error"] is None or pd.isna(by.loc[REFERENCE, "error"])


def test_every_timed_fit_follows_a_warm_up_on_rows_of_every_class(
    tiny: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    train, test = tiny
    train = train.subset(np.argsort(np.asarray(train.y, dtype=str), kind="stable"))  # by class
    n_classes = len(np.unique(np.asarray(train.y, dtype=str)))
    registry.list_methods()
    monkeypatch.setitem(registry._REGISTRY, "counting", MethodSpec("counting", _Counting))
    monkeypatch.setattr(bench, "WARM_ROWS", 40)
    _Counting.seen.clear()
    df = bench_table(train, test, methods=["counting"], hiclass=False, isolate=False)
    # first the warm-up on 40 rows spread over the sorted file (every class), then the timed fit
    assert _Counting.seen == [(40, n_classes), (train.n_samples, n_classes)]
    assert df.error.isna().all()
    assert (df.warmup_time > 0).all()  # LinearSVC's row warmed up too


def test_in_process_failure_without_isolation(tiny: tuple[Any, Any], fake_methods: None) -> None:
    train, test = tiny
    df = bench_table(train, test, methods=["boom"], hiclass=False, isolate=False)
    assert df.error.iloc[1].startswith("RuntimeError: solver blew up")


def test_soft_budget_stops_iterative_methods(tiny: tuple[Any, Any]) -> None:
    train, test = tiny
    free = bench_table(
        train, test, methods=["flatmult"], params={"flatmult": {"C": 100.0}}, hiclass=False
    )
    capped = bench_table(
        train,
        test,
        methods=["flatmult"],
        params={"flatmult": {"C": 100.0}},
        hiclass=False,
        budget=1e-4,
    )
    f, c = free.iloc[1], capped.iloc[1]
    assert not f.budget_hit and c.budget_hit
    assert c.n_iter < f.n_iter and not c.converged
    assert json.loads(c.params) == {"C": 100.0}


def test_registry_defaults_unless_params_say_otherwise(tiny: tuple[Any, Any]) -> None:
    """The table measures the registry defaults (what a newcomer gets); ``params`` overrides."""
    train, test = tiny
    off = bench_table(train, test, methods=["topdown"], hiclass=False)
    given = {"topdown": {"C": 2.0}}
    over = bench_table(train, test, methods=["topdown"], params=given, hiclass=False)
    assert json.loads(off.params.iloc[1]) == {}
    assert json.loads(over.params.iloc[1]) == {"C": 2.0}


def test_reference_each_refits_linearsvc(tiny: tuple[Any, Any]) -> None:
    train, test = tiny
    df = bench_table(
        train, test, methods=["topdown", "ovr-svm"], hiclass=False, reference_each=True
    )
    # the first method uses the opening reference; the second its own fresh one
    assert df.ref_fit_time.iloc[1] == df.fit_time.iloc[0]
    assert df.ref_fit_time.iloc[2] != df.ref_fit_time.iloc[1]
    np.testing.assert_allclose(df.fit_ratio, df.fit_time / df.ref_fit_time)


def test_hiclass_row_matches_topdown(tiny: tuple[Any, Any]) -> None:
    """HiClass's LCPN(LinearSVC) is the same model as our top-down LinearSVC per parent."""
    if not bench.hiclass_available():
        assert HICLASS not in set(bench_table(*tiny, methods=[], hiclass=True).method)
        return
    train, test = tiny
    df = bench_table(train, test, methods=["topdown"], hiclass=True).set_index("method")
    assert pd.isna(df.loc[HICLASS, "error"])
    assert df.loc[HICLASS, "accuracy"] == pytest.approx(df.loc["topdown", "accuracy"], abs=0.02)
    assert df.loc[HICLASS, "fit_ratio"] == pytest.approx(
        df.loc[HICLASS, "fit_time"] / df.loc[REFERENCE, "fit_time"]
    )


def test_guard_reports_a_crashed_child() -> None:
    out = bench._run_guarded(lambda: os._exit(3), True, 30.0, 1)
    assert out["error"].startswith("crashed (exit code 3")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_guard_reports_the_childs_peak_memory() -> None:
    def allocate(mb: int) -> dict[str, Any]:
        block = np.ones(mb * 2**20 // 8)  # every page written
        return {"sum": float(block.sum())}

    small = bench._run_guarded(lambda: allocate(8), True, 60.0, 1)
    big = bench._run_guarded(lambda: allocate(300), True, 60.0, 1)
    assert big["fit_rss_mb"] >= 300 > small["fit_rss_mb"]
    assert big["peak_rss_mb"] >= big["fit_rss_mb"]
    assert big["peak_rss_mb"] - small["peak_rss_mb"] >= 250


def test_guard_in_process_keeps_blas_limit() -> None:
    from threadpoolctl import threadpool_info

    def probe() -> dict[str, Any]:
        return {"threads": [p["num_threads"] for p in threadpool_info()]}

    for isolate in (False, True):
        out = bench._run_guarded(probe, isolate, 30.0, 1)
        assert all(t == 1 for t in out["threads"])


@pytest.mark.parametrize("b", [0.5, 1.0, 1.7, 2.0])
def test_loglog_slope_exact_power_law(b: float) -> None:
    x = np.array([1e3, 3e3, 1e4, 5e4, 2e5])
    t = 0.003 * x**b
    slope = loglog_slope(x, t)
    assert slope == pytest.approx(b, abs=1e-10)
    assert slope == pytest.approx(np.polyfit(np.log(x), np.log(t), 1)[0], abs=1e-12)


def test_loglog_slope_noisy_equals_polyfit_and_ignores_missing() -> None:
    rng = np.random.default_rng(0)
    x = np.logspace(2, 6, 7)
    t = 1e-5 * x**1.1 * np.exp(rng.normal(0, 0.2, x.size))
    ref = np.polyfit(np.log(x), np.log(t), 1)[0]
    assert loglog_slope(x, t) == pytest.approx(ref, abs=1e-12)
    # a missing (NaN) point is left out, not propagated
    t2 = np.append(t, np.nan)
    x2 = np.append(x, 1e7)
    assert loglog_slope(x2, t2) == pytest.approx(ref, abs=1e-12)
    assert np.isnan(loglog_slope([10.0], [1.0]))
    assert np.isnan(loglog_slope([10.0, 10.0], [1.0, 2.0]))


def test_scale_curves_tiny_grid() -> None:
    grid_docs, grid_classes = (200, 400, 800), (4, 8)
    df, slopes = scale_curves_many(
        ["topdown", "hieron-batch"],
        n_docs=grid_docs,
        n_classes=grid_classes,
        docs_at_fixed_classes=4,
        docs_for_class_curve=300,
        n_features=300,
    )
    assert len(df) == 2 * (len(grid_docs) + len(grid_classes))
    assert df.error.isna().all() and (df.fit_time > 0).all()
    assert (df.n_iter >= 1).all()  # each fit's n_iter_ (one pass or more) is recorded
    assert (df.warmup_time > 0).all()  # each timed fit followed an untimed warm-up
    if bench._can_fork() and os.path.exists("/proc/self/status"):  # each fit's own peak
        assert (df.peak_rss_mb > 0).all()
    for m in ("topdown", "hieron-batch"):
        d = df[(df.method == m) & (df.curve == "docs")]
        c = df[(df.method == m) & (df.curve == "classes")]
        assert list(d.n_classes) == [4, 4, 4] and list(c.n_docs) == [297, 297]
        assert (np.diff(d.nnz) > 0).all() and list(c.n_classes) == list(grid_classes)
        assert slopes[m]["nnz"] == pytest.approx(loglog_slope(d.nnz, d.fit_time))
        assert slopes[m]["classes"] == pytest.approx(loglog_slope(c.n_classes, c.fit_time))
    # same data for both methods at each point
    pts = df.groupby(["curve", "n_docs", "n_classes"]).nnz.nunique()
    assert (pts == 1).all()
    fig = scale_figure(df, slopes)
    assert len(fig.data) == 4
    topdown_docs = df[(df.method == "topdown") & (df.curve == "docs")]
    assert list(fig.data[0].x) == list(topdown_docs.nnz)
    assert "topdown" in fig.data[0].name and f"{slopes['topdown']['nnz']:.2f}" in fig.data[0].name


def test_scale_curves_single_method_and_budget_skips() -> None:
    df, slopes = scale_curves(
        "topdown",
        n_docs=(200, 400),
        n_classes=(4, 8),
        docs_at_fixed_classes=4,
        docs_for_class_curve=300,
        n_features=300,
        budget=1e-9,  # every fit is over budget: each curve stops after its first point
    )
    assert set(slopes) == {"nnz", "classes"}
    assert np.isnan(slopes["nnz"]) and np.isnan(slopes["classes"])
    assert df.fit_time.notna().sum() == 2
    skipped = df[df.fit_time.isna()]
    assert list(skipped.n_docs) == [400, 300] and list(skipped.n_classes) == [4, 8]
    assert (skipped.error == "skipped (over budget)").all()
    fig = scale_figure(df, slopes, "topdown")
    assert len(fig.data) == 2


TINY = [
    "--data",
    "hierarchical-text",
    "--data-param",
    "n_samples=300",
    "--data-param",
    "n_classes=6",
    "--data-param",
    "n_features=200",
    "--data-param",
    "depth=2",
]


def test_cli_bench_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from hierlab.cli import main

    fig = tmp_path / "curves.html"
    code = main(
        [
            "bench",
            *TINY,
            "--methods",
            "topdown",
            "hieron-batch",
            "--param",
            "topdown:C=0.5",
            "--no-hiclass",
            "--budget",
            "30",
            "--scale",
            "topdown",
            "--docs",
            "200",
            "400",
            "--classes",
            "4",
            "8",
            "--classes-for-docs",
            "4",
            "--docs-for-classes",
            "300",
            "--features",
            "300",
            "--figure",
            str(fig),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)  # stdout is pure (strict) JSON
    rows = out["table"]
    assert [r["method"] for r in rows] == [REFERENCE, "topdown", "hieron-batch"]
    assert json.loads(rows[1]["params"]) == {"C": 0.5}
    for r in rows:
        assert r["fit_ratio"] == pytest.approx(r["fit_time"] / rows[0]["fit_time"])
        assert 0 <= r["accuracy"] <= 1
    assert out["data"]["n_train"] + out["data"]["n_test"] == 300
    assert out["budget"] == 30.0
    sc = out["scale"]
    assert set(sc["slopes"]) == {"topdown"} and len(sc["table"]) == 4
    docs = [r for r in sc["table"] if r["curve"] == "docs"]
    assert sc["slopes"]["topdown"]["nnz"] == pytest.approx(
        loglog_slope([r["nnz"] for r in docs], [r["fit_time"] for r in docs])
    )
    assert fig.exists() and "plotly" in fig.read_text()[:5000].lower()


def test_cli_bench_text_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from hierlab.cli import main

    assert main(["bench", *TINY, "--methods", "topdown", "nope", "--no-hiclass"]) == 0
    out = capsys.readouterr().out
    assert "LinearSVC" in out and "topdown" in out and "nope: ParameterError" in out
    assert main(["bench", *TINY, "--param", "C=1", "--methods", "topdown"]) == 2
    assert "method:name=value" in capsys.readouterr().err


def test_cli_bench_param_reaches_the_scale_curves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--param`` applies to the scale curves too (an invalid C fails the curves)."""
    from hierlab.cli import main

    grid = ["--docs", "200", "400", "--classes", "4", "8", "--classes-for-docs", "4"]
    grid += ["--docs-for-classes", "300", "--features", "300", "--json"]
    grid += ["--figure", str(tmp_path / "curves.html")]
    args = ["bench", "--no-table", "--scale", "topdown", *grid]
    assert main([*args, "--param", "topdown:C=0.5"]) == 0
    ok = json.loads(capsys.readouterr().out)["scale"]["table"]
    assert all(r["error"] in (None, "-", "") for r in ok)
    assert main([*args, "--param", "topdown:C=-1"]) == 0
    bad = json.loads(capsys.readouterr().out)["scale"]["table"]
    assert [r["error"].split(":")[0] for r in bad if r["n_nodes"] is not None] == [
        "ParameterError",
        "ParameterError",
    ]


def test_wide_csv_benchmark_reads_the_same_numbers_as_pandas(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The wide-CSV script runs and checks both readers agree; its times are only printed."""
    from hierlab.benchmarks import wide_csv

    res = wide_csv.run(n_rows=4, n_columns=300, repeat=1)
    assert set(res) == {"hierlab", "pandas", "ratio", "bytes"}
    assert res["ratio"] == pytest.approx(res["hierlab"] / res["pandas"])
    wide_csv.main(["--columns", "100", "--rows", "3", "--repeat", "1"])
    assert "ratio hierlab / pandas" in capsys.readouterr().out
