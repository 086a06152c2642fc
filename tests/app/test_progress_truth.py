"""What the jobs panel says while a run trains is what is going on: the time left from a
recorded FLATMULT history on 2,000 leaves, the progress inside a long pass, the stages after
the solver (calibration, test predictions) with their own rates, top-down's node
classifiers weighed by their size; a stop while calibrating keeps the model, without
probabilities, and the record says it stopped."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.state import load_builtin
from app.state.jobs import Job, Progress
from app.state.post_fit import PostFitCost, probe_post_fit
from app.state.runs import fit_run
from app.state.stages import EVALUATING, PREDICTING
from hierlab import StopFlag, make_estimator
from hierlab.benchmarks.app_pages import parse_eta
from hierlab.core.progress import estimate_eta
from hierlab.core.solver import SolverState
from hierlab.methods.calibrated import CALIBRATING, FITTING_MAPS

HISTORY = Path(__file__).resolve().parents[1] / "data" / "eta" / "flatmult_text2000.json"


def _eta(states: list[dict[str, Any]], limits: dict[str, Any], now: float | None = None) -> Any:
    return estimate_eta(
        states,
        max_iter=limits["max_iter"],
        tol=limits["tol"],
        rtol=limits["rtol"],
        certified=True,
        now=now,
    )


def test_flatmult_eta_on_a_recorded_2000_leaf_history() -> None:
    rec = json.loads(HISTORY.read_text())
    states, limits = rec["states"], rec["limits"]
    end = states[-1]["elapsed"]
    etas = [_eta(states[: k + 1], limits) for k in range(len(states))]
    # an estimate from the second pass on, not "no estimate yet" for the whole run
    known = [e.known for e, s in zip(etas, states) if s.get("epoch", s["iteration"]) >= 2]
    assert known and all(known)
    # at a quarter of the solver's time: within 3x of the time that actually remained
    k = next(i for i, s in enumerate(states) if s["elapsed"] >= end / 4)
    left = end - states[k]["elapsed"]
    eta = etas[k]
    assert eta.low is not None and eta.high is not None and eta.mid is not None
    assert left / 3 <= eta.mid <= 3 * left
    # inside the pass after a state, the range is shorter by the time spent since it
    later = _eta(states[: k + 1], limits, now=states[k]["elapsed"] + 5.0)
    assert later.low == pytest.approx(max(0.0, eta.low - 5.0))
    assert later.high == pytest.approx(eta.high - 5.0)
    spent = _eta(states[: k + 1], limits, now=states[k]["elapsed"] + eta.high + 1.0)
    assert not spent.known  # the estimate ran out: no estimate, never a negative time


def _job(method: str) -> Job:
    return Job(id=1, kind="train", method=method, params={}, entry=None, taxonomy=None)  # type: ignore[arg-type]


def test_progress_inside_a_pass_and_through_the_stages_after_the_solver() -> None:
    job = _job("hr-svm")
    cb: Progress = job.progress_cb
    cb.on_start({"max_iter": 300, "max_time": None, "tol": 0.01, "rtol": 0.0})
    cb.on_pass(0.5, 12.0)  # half of the first pass, no state yet
    frac, text = job.progress()
    assert text.startswith("pass 1: 50% done · 12.0 s") and "no estimate yet" in text
    for k, gap in enumerate([100.0, 30.0, 9.0], start=1):
        cb(SolverState(iteration=2 * k, elapsed=20.0 * k, upper=1e3, lower=1e3 - gap))
    _, text = job.progress()
    assert "iteration 6" in text and "60.0 s" in text
    # without a measure of the work after the solver, the whole run has no estimate
    assert "time left in all: no estimate yet · solver 2-23 min, then calibration and test " in text
    assert parse_eta(text) is None
    cb.on_pass(6.4, 68.0)
    _, inside = job.progress()
    assert inside.startswith("pass 7: 40% done · gap 9 · 68.0 s")
    assert "then calibration and test predictions: no estimate yet" in inside
    cb.on_pass(6.0, 70.0, step="certificate 40%")  # the bounds of pass 6's iterate
    assert job.progress()[1].startswith("after pass 6: certificate 40% · gap 9 · 70.0 s")
    # after the solver: each stage with its own rate, and what follows it
    cb.on_stage(CALIBRATING, 4000, 37500, 2.0)
    cb.on_stage(CALIBRATING, 8000, 37500, 4.0)
    frac, text = job.progress()
    assert text.startswith("calibration: scoring the training rows: 8,000 of 37,500 rows · 4.0 s")
    assert "this stage about 15 s" in text  # (4 - 2) s / 4,000 rows x 29,500 rows
    assert "then the calibration maps and the test predictions: no estimate yet" in text
    assert frac == pytest.approx(8000 / 37500)
    cb.on_stage(FITTING_MAPS, 1000, 90000, 9.0)
    _, text = job.progress()
    assert text.startswith("calibration: fitting the maps: 1,000 of 90,000 (example, node) pairs")
    assert "then the test predictions: no estimate yet" in text
    cb.on_stage(PREDICTING, 4000, 12500, 1.0)
    assert "then the evaluation" in job.progress()[1]


#: a probe's measure of the work after the solver: 10 s of scoring (1 ms x 10,000 rows),
#: 4 s of maps, 2 s of predictions (0.5 ms x 4,000 rows): 16 s, shown as [0.45, 2.2] x 16 s
POST = PostFitCost(score=1e-3, maps=4.0, predict=5e-4, n_train=10_000, n_test=4_000)


def test_the_time_left_counts_the_work_after_the_solver_as_measured() -> None:
    assert POST.seconds == pytest.approx(16.0)
    assert POST.remaining() == pytest.approx((7.2, 35.2))
    assert POST.remaining(CALIBRATING) == pytest.approx((0.45 * 6.0, 2.2 * 6.0))
    assert POST.remaining(FITTING_MAPS) == pytest.approx((0.9, 4.4))
    assert POST.remaining(PREDICTING) == (0.0, 0.0)
    assert POST.remaining(EVALUATING) == (0.0, 0.0)
    assert POST.remaining(CALIBRATING, ratio=2.0) == pytest.approx((5.4, 26.4))
    assert POST.remaining(CALIBRATING, ratio=100.0) == pytest.approx((10.8, 52.8))  # capped x4
    job = _job("hr-svm")
    cb = job.progress_cb
    cb.post = POST
    cb.on_start({"max_iter": 300, "max_time": None, "tol": 0.01, "rtol": 0.0})
    for k, gap in enumerate([100.0, 30.0, 9.0], start=1):
        cb(SolverState(iteration=2 * k, elapsed=20.0 * k, upper=1e3, lower=1e3 - gap))
    solver = job.eta()
    assert solver.known and solver.low is not None and solver.high is not None
    _, text = job.progress()
    lo, hi = solver.low + 7.2, solver.high + 35.2
    assert parse_eta(text) == (60 * round(lo / 60), 60 * round(hi / 60))  # shown in minutes
    assert "then calibration and test predictions 7-35 s" in text
    # the calibration's own rate: 2 ms a row against the probe's 1 ms doubles what follows
    cb.on_stage(CALIBRATING, 1000, 10_000, 1.0)
    cb.on_stage(CALIBRATING, 2000, 10_000, 3.0)
    assert cb.score_ratio == pytest.approx(2.0)
    _, text = job.progress()
    after = "then the calibration maps and the test predictions 5-26 s"
    assert f"this stage about 16 s, {after}" in text
    assert parse_eta(text) == (21.0, 42.0)  # 16 + 5.4 s, 16 + 26.4 s


def test_probe_of_the_work_after_the_solver(entry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.state import post_fit

    for X in (entry.train.X, entry.train.X.toarray()):  # sparse and dense rows
        post = probe_post_fit(X, entry.train.y, entry.test.n_samples, entry.taxonomy)
        assert post is not None and post.n_train == entry.train.n_samples
        assert post.n_test == entry.test.n_samples
        assert all(v > 0 and math.isfinite(v) for v in (post.score, post.maps, post.predict))
        assert post.probe_time >= post.maps  # the maps' time is part of the probe's
    monkeypatch.setattr(post_fit, "PRODUCT_ENTRIES", 1)  # one column of the stand-in at once
    post = probe_post_fit(entry.train.X, entry.train.y, 10, entry.taxonomy)
    assert post is not None and post.score > 0 and math.isfinite(post.score)
    bad = np.array(["no such node"] * entry.train.n_samples, dtype=object)
    assert probe_post_fit(entry.train.X, bad, 10, entry.taxonomy) is None


def test_top_down_time_left_weighs_each_fit_by_its_size() -> None:
    job = _job("topdown")
    cb = job.progress_cb
    cb.on_work(0, 3, 0.0, cost=(0.0, 200.0))  # the work starts
    _, text = job.progress()
    assert text.startswith("0 of 3 node classifier fits · 0.0 s · fit 1 running for 0 s")
    assert "time left in all: no estimate yet · classifiers: no estimate yet" in text
    # the root's classifier: 1 of 3 fits, but 100 of 200 units of work, in 10 s: one fit
    # is no rate yet
    cb.on_work(1, 3, 10.0, cost=(100.0, 200.0))
    _, text = job.progress()
    assert text.startswith("1 of 3 node classifier fits · 10.0 s · fit 2 running for 0 s")
    assert "classifiers: no estimate yet, then calibration and test predictions: no est" in text
    cb.on_work(2, 3, 15.0, cost=(150.0, 200.0))  # 0.1 s a unit: 50 units, 5 s left
    _, text = job.progress()
    assert "classifiers about 5 s, then calibration and test predictions: no estimate yet" in text
    cb.post = POST
    _, text = job.progress()
    assert parse_eta(text) == (12.0, 40.0)  # 5 + 7.2 s, 5 + 35.2 s


class _StopWhenCalibrating:
    """Sets ``flag`` at the first calibration report; records every stage reported."""

    def __init__(self, flag: StopFlag | None) -> None:
        self.flag = flag
        self.stages: list[tuple[str, int, int]] = []

    def __call__(self, state: object) -> bool:
        return False

    def on_stage(self, stage: str, done: int, total: int, elapsed: float) -> None:
        self.stages.append((stage, done, total))
        if self.flag is not None and stage == CALIBRATING:
            self.flag.set()


@pytest.fixture(scope="module")
def entry() -> Any:
    return load_builtin(
        "catalog:hierarchical-text",
        {"n_samples": 1500, "n_classes": 40, "n_features": 300, "random_state": 0},
    )


def test_a_stop_while_calibrating_keeps_the_model_and_says_so(
    entry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hierlab.methods import probability

    monkeypatch.setattr(probability, "GATHER_ENTRIES", 1)  # blocks of 64 rows
    X, y = entry.train.X, entry.train.y
    whole = make_estimator("topdown", taxonomy=entry.taxonomy).fit(X, y)
    flag = StopFlag()
    rec = _StopWhenCalibrating(flag)
    est = make_estimator("topdown", taxonomy=entry.taxonomy).fit(X, y, callbacks=[rec, flag])
    assert est.calibration_ is None and est.stop_reason_ == "callback"
    assert whole.calibration_ is not None and whole.stop_reason_ != "callback"
    assert [s[1] for s in rec.stages if s[0] == CALIBRATING] == [64]  # ended at once
    np.testing.assert_array_equal(est.predict(entry.test.X), whole.predict(entry.test.X))
    flag, rec = StopFlag(), None
    rec = _StopWhenCalibrating(flag)
    run = fit_run(None, entry, "topdown", {}, callbacks=[rec, flag], run_id=7)
    assert run.stopped and not run.converged
    assert run.views is not None and run.views.proba is None  # no probabilities to report


def test_the_test_predictions_are_reported_block_by_block(
    entry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.state import stages

    monkeypatch.setattr(stages, "PREDICT_ROWS", 100)
    rec = _StopWhenCalibrating(None)
    run = fit_run(None, entry, "topdown", {}, callbacks=[rec], run_id=3)
    n = entry.test.n_samples
    predicted = [s for s in rec.stages if s[0] == PREDICTING]
    assert predicted == [(PREDICTING, d, n) for d in [0, *range(100, n, 100), n]]
    assert rec.stages[-1] == (EVALUATING, 0, 1)
    calibrated = [s[1] for s in rec.stages if s[0] == CALIBRATING]
    assert calibrated == sorted(calibrated) and calibrated[-1] == entry.train.n_samples
    np.testing.assert_array_equal(run.y_pred, run.estimator.predict(entry.test.X))
    assert not run.stopped and math.isfinite(run.fit_time)


class _Steps:
    """Records the ``on_pass`` reports of a solver (passes, step)."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str | None]] = []

    def __call__(self, state: object) -> bool:
        return False

    def on_pass(self, passes: float, elapsed: float, step: str | None = None) -> None:
        self.seen.append((passes, step))


def test_bcfw_reports_its_passes_and_each_step_of_its_certificates(entry: Any) -> None:
    rec = _Steps()
    est = make_estimator(
        "flatmult", taxonomy=entry.taxonomy, solver="bcfw", tol=0.0, rtol=0.0, max_iter=3
    )
    with pytest.warns(Warning):
        est.fit(entry.train.X, entry.train.y, callbacks=[rec])
    steps = [(p, s) for p, s in rec.seen if s is not None]
    for epoch in (1.0, 2.0, 3.0):  # every certificate, step by step
        assert [s for p, s in steps if p == epoch] == [
            "certificate (weights)",
            "certificate (dual value)",
            "certificate (primal value)",
        ]
    inside = [p for p, s in rec.seen if s is None]
    assert inside == sorted(inside) and inside[0] == 0.0 and max(inside) < 3.0


def test_bcfw_reports_inside_the_primal_value_and_takes_a_stop_there(
    entry: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hierlab.core import objective

    monkeypatch.setattr(objective, "CHUNK", 1 << 12)  # the scores a chunk of ~100 rows at a time
    rec = _Steps()
    est = make_estimator(
        "flatmult", taxonomy=entry.taxonomy, solver="bcfw", tol=0.0, rtol=0.0, max_iter=2
    )
    with pytest.warns(Warning):
        est.fit(entry.train.X, entry.train.y, callbacks=[rec])
    inside = [s for p, s in rec.seen if p == 1.0 and s and s.startswith("certificate (primal")]
    shares = [float(s.rsplit(" ", 1)[1].rstrip("%")) for s in inside[1:]]
    assert inside[0] == "certificate (primal value)" and len(shares) >= 5
    assert shares == sorted(shares) and shares[-1] == 100.0
    # a stop in the middle of the primal value: the fit keeps the last certified iterate
    flag = StopFlag()

    class _StopInside(_Steps):
        def on_pass(self, passes: float, elapsed: float, step: str | None = None) -> None:
            super().on_pass(passes, elapsed, step)
            if passes == 2.0 and (step or "").startswith("certificate (primal value) "):
                flag.set()  # at its first share

    rec = _StopInside()
    stopped = make_estimator(
        "flatmult", taxonomy=entry.taxonomy, solver="bcfw", tol=0.0, rtol=0.0, max_iter=3
    ).fit(entry.train.X, entry.train.y, callbacks=[rec, flag])
    assert stopped.stop_reason_ == "callback"
    first = next(s for p, s in rec.seen if p == 2.0 and s and s.endswith("%"))
    assert rec.seen[-1] == (2.0, first) and first != "certificate (primal value) 100%"
    kept = stopped.kept_state_  # pass 2's certificate was not finished: pass 1's iterate
    assert kept is not None and kept["iteration"] == 1 and stopped.n_iter_ < 2


def test_nhsvm_reports_the_objective_at_its_solution_before_the_calibration(entry: Any) -> None:
    from hierlab.methods.nhsvm.estimators import OBJECTIVE_AT_SOLUTION

    rec = _StopWhenCalibrating(None)
    est = make_estimator("nhsvm", taxonomy=entry.taxonomy, epochs=2)
    with pytest.warns(Warning):
        est.fit(entry.train.X, entry.train.y, callbacks=[rec])
    n = entry.train.n_samples
    stages = [s[0] for s in rec.stages]
    assert stages[0] == OBJECTIVE_AT_SOLUTION and rec.stages[0][1:] == (n, n)
    assert stages.index(CALIBRATING) == 1  # then the calibration
    # what the jobs panel says meanwhile: the stage, then everything after it as probed
    job = _job("nhsvm")
    job.progress_cb.post = POST
    job.progress_cb.on_stage(OBJECTIVE_AT_SOLUTION, 1000, 10_000, 0.5)
    job.progress_cb.on_stage(OBJECTIVE_AT_SOLUTION, 2000, 10_000, 1.0)
    _, text = job.progress()
    assert text.startswith("the objective at the solution: 2,000 of 10,000 rows · 1.0 s")
    assert "this stage about 4 s, then calibration and test predictions 7-35 s" in text
    assert parse_eta(text) == (11.0, 39.0)  # 4 + 7.2 s, 4 + 35.2 s


def test_a_probability_report_waits_while_a_training_job_runs(entry: Any) -> None:
    import time

    from app.state import views

    run = fit_run(None, entry, "topdown", {}, run_id=5)
    assert run.views is not None and run.views.proba is not None
    first = run.views.proba.future.result(timeout=120)  # its own report, after its training
    with views.training():  # a training job runs: a new report waits before its first block
        job = views.probability_job(run, entry.test)
        deadline = time.monotonic() + 60
        while job.stage != "waiting for the training under way" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert job.stage == "waiting for the training under way" and not job.done()
    rep = job.future.result(timeout=120)  # the training over: it runs to its end
    assert job.stage == "done" and set(rep) == set(first)
