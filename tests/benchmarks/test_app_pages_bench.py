"""The app-pages benchmark's reading of the screen (no browser): ETA texts and sections."""

from __future__ import annotations

import pytest

from hierlab.benchmarks.app_pages import Timeline, judge_eta, parse_eta, progress_report, sections


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("iteration 3 of 100 · about 14 s left", (14.0, 14.0)),
        ("about 3.0 h left", (10800.0, 10800.0)),
        ("2-26 min left", (120.0, 1560.0)),
        ("40 s – 2 min left", (40.0, 120.0)),
        ("pass 4 of 50 · no estimate yet (at most 3 min)", None),
        ("pass 4 · gap 1.2e-3 · at least 3 min left", (180.0, float("inf"))),
        ("12 of 140 node classifiers · 3.1 s · about 2-5 min left", (120.0, 300.0)),
        ("epoch 3 of 10", None),
    ],
)
def test_parse_eta(text: str, expected: tuple[float, float] | None) -> None:
    assert parse_eta(text) == expected


def _look(heads: list[str], busy: list[str]) -> dict:
    return {"idle": False, "heads": heads, "busy": busy, "progress": busy, "runs": 0, "ended": 0}


def test_sections_time_each_heading_and_see_progress() -> None:
    tl = Timeline(
        seconds=6.0,
        looks=[
            (0.1, _look(["Old"], [])),
            (0.5, _look(["Explore"], [])),
            (1.0, _look(["Explore", "Predictions"], [])),
            (3.0, _look(["Explore", "Predictions", "Probabilities"], ["30%"])),
            (5.0, _look(["Explore", "Predictions", "Probabilities"], ["90%"])),
        ],
    )
    got = sections(tl, before={"Old"})
    assert [s[0] for s in got] == ["(top)", "Explore", "Predictions", "Probabilities"]
    assert [round(s[1], 6) for s in got] == [0.5, 0.5, 2.0, 3.0]
    assert [s[2] for s in got] == [False, False, True, True]


def test_progress_report_reads_the_eta_at_a_quarter() -> None:
    looks = [(float(t), _look([], [f"pass {t} · about {40 - t} s left"])) for t in range(40)]
    rep = progress_report(Timeline(seconds=40.0, looks=looks))
    assert rep["eta"] == (30.0, 30.0) and rep["remaining"] == 30.0
    assert rep["max_still"] == 1.0


def test_the_eta_is_judged_on_the_middle_of_its_range() -> None:
    # 40 s - 3 min: middle sqrt(40 x 180) = 84.9 s
    assert judge_eta((40.0, 180.0), 30.0) == {
        "mid": pytest.approx(84.85, abs=0.01),
        "within": True,
        "inside": False,
    }
    assert judge_eta((40.0, 180.0), 28.0)["within"] is False  # 84.9 > 3 x 28
    assert judge_eta((40.0, 180.0), 100.0)["inside"] is True
    assert judge_eta((0.0, 10.0), 4.0)["mid"] == 5.0
    assert judge_eta((30.0, float("inf")), 30.0) == {"mid": None, "within": False, "inside": True}
    assert judge_eta(None, 10.0)["within"] is False
    rep = progress_report(
        Timeline(seconds=40.0, looks=[(10.0, _look([], ["pass 3 · 20-45 s left in all"]))])
    )
    assert rep["eta"] == (20.0, 45.0) and rep["remaining"] == 30.0 and rep["within"]
