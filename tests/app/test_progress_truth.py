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
from app.state.runs import fit_run
from app.state.stages import EVALUATING, PREDICTING
from hierlab import StopFlag, make_estimator
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
    assert "iteration 6" in text and "60.0 s" in text and "solver: " in text
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
    assert "this stage: about 15 s left" in text  # (4 - 2) s / 4,000 rows x 29,500 rows
    assert "then the calibration maps and the test predictions: no estimate yet" in text
    assert frac == pytest.approx(8000 / 37500)
    cb.on_stage(FITTING_MAPS, 1000, 90000, 9.0)
    _, text = job.progress()
    assert text.startswith("calibration: fitting the maps: 1,000 of 90,000 (example, node) pairs")
    assert "then the test predictions: no estimate yet" in text
    cb.on_stage(PREDICTING, 4000, 12500, 1.0)
    assert "then the evaluation" in job.progress()[1]


def test_top_down_time_left_weighs_each_node_classifier_by_its_size() -> None:
    job = _job("topdown")
    cb = job.progress_cb
    cb.on_work(0, 3, 0.0, cost=(0.0, 200.0))  # the work starts
    _, text = job.progress()
    assert text.startswith("0 of 3 node classifiers · 0.0 s · classifier 1 running for 0 s")
    assert "classifiers: no estimate yet" in text
    # the root's classifier: 1 of 3 classifiers, but 100 of 200 units of work, in 10 s
    cb.on_work(1, 3, 10.0, cost=(100.0, 200.0))
    _, text = job.progress()
    assert text.startswith(
        "1 of 3 node classifiers · 10.0 s · classifier 2 running for 0 s · "
        "classifiers: about 10 s left"
    )
    assert "then calibration and test predictions: no estimate yet" in text


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
