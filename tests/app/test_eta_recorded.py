"""The time left the jobs panel shows, replayed on recorded runs of the four methods the
app-pages benchmark trains (topdown, FLATMULT, HR-SVM, NHSVM; the Train page's defaults) on
IPC titles and on 2,000 generated leaves (``tests/data/eta/<method>_<set>.json``: every
progress report of a real run with its wall time, and the probe of the work after the
solver). At a quarter, half and three quarters of each run, the whole run's time left it
shows is either no estimate or a range whose geometric middle is within 3x of the time that
actually remained; at a quarter, three methods of each set show one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import app.state.jobs as jobs_module
from app.state.jobs import Job
from app.state.post_fit import PostFitCost
from hierlab import get_method
from hierlab.benchmarks.app_pages import judge_eta, parse_eta
from hierlab.core.solver import SolverState

DATA = Path(__file__).resolve().parents[1] / "data" / "eta"
METHODS = ("topdown", "flatmult", "hr-svm", "nhsvm")
SETS = ("ipc", "text")
#: the state fields of a recorded report (the rest are its extras)
FIELDS = ("kind", "t", "iteration", "elapsed", "upper", "lower", "gap")


def _report(job: Job, e: dict[str, Any]) -> None:
    """Hand one recorded report to the job's progress callback, as the fit did."""
    cb = job.progress_cb
    kind = e["kind"]
    if kind == "start":
        cb.on_start({k: e.get(k) for k in ("max_iter", "max_time", "tol", "rtol", "budget")})
    elif kind == "state":
        extra = {k: v for k, v in e.items() if k not in FIELDS}
        lower = e["lower"]
        cb(SolverState(e["iteration"], e["elapsed"], e["upper"], lower, extra=extra))
    elif kind == "work":
        cb.on_work(e["done"], e["total"], e["elapsed"], cost=tuple(e["cost"]))
    elif kind == "pass":
        cb.on_pass(e["passes"], e["elapsed"], step=e["step"])
    elif kind == "stage":
        cb.on_stage(e["stage"], e["done"], e["total"], e["elapsed"])


def replay(rec: dict[str, Any], at: float, monkeypatch: pytest.MonkeyPatch) -> tuple[str, float]:
    """The progress line the panel showed at ``at`` of the run (after the last report
    before it), and the seconds that remained then."""
    spec = get_method(rec["method"])
    job = Job(id=1, kind="train", method=rec["method"], params={}, entry=None, taxonomy=None)  # type: ignore[arg-type]
    job.progress_cb.limits = {
        **spec.stopping_rule(rec["params"]),
        "max_iter": spec.iterations(rec["params"]),
        "budget": spec.budget or "max_iter",
    }
    job.progress_cb.post = PostFitCost(**rec["post"])
    clock = {"now": 0.0}
    monkeypatch.setattr(jobs_module.time, "monotonic", lambda: clock["now"])
    job.started = 0.0
    when = at * rec["end"]
    for e in rec["events"]:
        if e["t"] > when:
            break
        clock["now"] = e["t"]
        _report(job, e)
    clock["now"] = when
    return job.progress()[1], rec["end"] - when


@pytest.fixture(scope="module")
def recorded() -> dict[tuple[str, str], dict[str, Any]]:
    return {(m, s): json.loads((DATA / f"{m}_{s}.json").read_text()) for m in METHODS for s in SETS}


@pytest.mark.parametrize("at", [0.25, 0.5, 0.75])
def test_the_time_left_shown_is_no_estimate_or_within_3x(
    recorded: dict[tuple[str, str], dict[str, Any]], at: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: dict[str, list[str]] = {s: [] for s in SETS}
    for (method, name), rec in recorded.items():
        text, left = replay(rec, at, monkeypatch)
        eta = parse_eta(text)
        if eta is None:
            assert "time left in all: no estimate yet" in text, text
            continue
        verdict = judge_eta(eta, left)
        assert verdict["within"], f"{method} on {name} at {at}: {text!r}, {left:.1f} s left"
        shown[name].append(method)
    if at == 0.25:  # the target: three methods of each set show a time left within 3x
        assert all(len(v) >= 3 for v in shown.values()), shown


def test_the_recorded_runs_cover_the_work_after_the_solver(
    recorded: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """The probe's range holds the recorded stretch after the solver (from its last state or
    node classifier to the end)."""
    for (method, name), rec in recorded.items():
        last = max(e["t"] for e in rec["events"] if e["kind"] in ("state", "work", "pass"))
        low, high = PostFitCost(**rec["post"]).remaining()
        assert low <= rec["end"] - last <= high, (method, name, rec["end"] - last, low, high)
