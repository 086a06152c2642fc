"""Every page of the app at real size, timed in a real browser: ``python -m
hierlab.benchmarks.app_pages``.

Starts the app as ``make run`` does (:func:`hierlab.benchmarks.newcomer.start_app`) on a free
port, drives it with Playwright in Debian's Chromium (``/usr/bin/chromium``) the way a person
does, and for each data set

1. loads it on the Data page: IPC titles (``catalog:ipc``, 645 leaves) and/or the generated
   text set (``make_hierarchical_text``: 50,000 rows, 2,000 leaves, through the generator's
   widgets);
2. trains the methods (default ``topdown flatmult hr-svm nhsvm``, each with the Train page's
   defaults) by clicking Train, reading the progress text on screen every 0.25 s; a run is
   done when the sidebar counts it. Printed per method: its wall time, the longest time
   without a change of the progress shown, and at a quarter of the run the time left in all
   shown (a range), its geometric middle and the time that actually remained then: within 3x
   when the middle is, and whether the time remaining lies inside the range;
3. visits every page of the navigation, then switches runs and moves Explore's controls,
   each timed from the click to the end of the script run it triggers (the app's root says
   ``notRunning`` and no "Running" widget shows); sections (between two headings) that took
   over 1 s are listed with whether a progress bar or spinner was on screen meanwhile, and a
   section still filling after the script run (a fragment's progress bar, e.g. the calibrated
   probabilities computed in the background) with the moment its progress bar went.

The target: every page <= 5 s on both sets on a 2-core machine. Nothing is
pre-computed: the runs are trained through the app, and the pages are opened right after, as a
user would. ``--screenshots DIR`` saves screenshots of the Data, Train, Explore and Compare pages
of each set as ``DIR/<set>_<page>.png`` (the README shows ``docs/screenshots/ipc_*.png``).
Run it under ``flock /tmp/hierlab-heavy.lock`` on a shared machine and print ``uptime`` beside
it. Playwright is optional (``pip install playwright``); its absence is
reported, not raised.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hierlab.benchmarks.newcomer import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    free_port,
    start_app,
    stop_app,
    wait_healthy,
)

__all__ = ["PAGES", "SETS", "judge_eta", "main", "parse_eta", "sections"]

#: the navigation's pages, in its order
PAGES = (
    "Start here",
    "Data",
    "Taxonomy",
    "Train",
    "Explore",
    "Compare",
    "Guided demos",
    "Methods",
    "Paper tables",
    "Solver race",
)
#: the data sets: name -> (the Data page's choice, generator widgets to set, by label)
SETS: dict[str, tuple[str, dict[str, int]]] = {
    "ipc": ("ipc (real data)", {}),
    "text": ("hierarchical-text", {"n samples": 50_000, "n classes": 2_000}),
}
#: pages screenshotted with ``--screenshots`` (saved as ``<set>_<name>.png``)
SHOTS = {
    "Data": "data",
    "Train": "train",
    "Explore": "explore",
    "Compare": "compare",
}
TARGET = 5.0
#: seconds a section may still fill after the script run before the look gives up
FILL_WAIT = 600.0

#: one look at the page: idle or not, the fresh headings of the main area, the main area's fresh
#: progress bars and spinners (with their text), every progress bar's text (the sidebar's jobs
#: panel included), the run count in the sidebar and how many jobs it lists as ended
_LOOK = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const fresh = el => !el.closest('[data-stale="true"]');
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const heads = [...main.querySelectorAll('h1, h2, h3')].filter(fresh)
    .map(h => h.innerText.trim()).filter(Boolean);
  const busy = [...main.querySelectorAll(
    '[data-testid="stProgress"], [data-testid="stSpinner"]')].filter(fresh);
  const bars = [...document.querySelectorAll('[data-testid="stProgress"]')].filter(fresh);
  const side = document.querySelector('[data-testid="stSidebar"]');
  const text = side ? side.innerText : '';
  const runs = (text.match(/Runs in this session: (\\d+)/) || [])[1];
  const ended = (text.match(/: done in |: failed|stopped by you|stopped before/g) || []).length;
  return {
    idle: !!app && app.dataset.testScriptState === 'notRunning'
      && !document.querySelector('[data-testid="stStatusWidget"]'),
    heads: heads,
    busy: busy.map(b => b.innerText.trim() || 'spinner'),
    progress: bars.map(b => b.innerText.trim()),
    runs: runs === undefined ? -1 : parseInt(runs),
    ended: ended,
  };
}"""
#: the ETA in a progress text: "about 14 s left", "2-26 min left", "1.5 h left", ...
_ETA = re.compile(
    r"(\d+(?:\.\d+)?)\s*(?:(s|sec|min|h)\w*\s*)?(?:-|–|to)\s*(\d+(?:\.\d+)?)\s*(s|sec|min|h)\w*"
    r"|(\d+(?:\.\d+)?)\s*(s|sec|min|h)\w*\s+(?:left|remaining)"
)
_UNIT = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0}


def parse_eta(text: str) -> tuple[float, float] | None:
    """The time left a progress text announces, as ``(low, high)`` seconds (equal for a single
    value, ``high`` infinite for "at least ..."), or None when it gives none ("no estimate
    yet"). Only the part of the text (between ``·`` or ``|``) that says "left" is read.

    >>> parse_eta("iteration 3 of 100 · about 14 s left")
    (14.0, 14.0)
    >>> parse_eta("pass 2 · gap 1.2e-3 · 40 s - 3 min left · at most 100 passes")
    (40.0, 180.0)
    """
    part = next((p for p in re.split(r"[·|]", text) if re.search(r"left|remaining", p)), None)
    if part is None:
        return None
    m = _ETA.search(part)
    if m is None:
        return None
    if m.group(1) is not None:
        hi_unit = _UNIT[m.group(4)]
        lo_unit = _UNIT[m.group(2)] if m.group(2) else hi_unit
        return float(m.group(1)) * lo_unit, float(m.group(3)) * hi_unit
    v = float(m.group(5)) * _UNIT[m.group(6)]
    return (v, math.inf) if "at least" in part else (v, v)


@dataclass
class Timeline:
    """What a click led to, looked at every 0.1 s until the script run ended (and until every
    progress bar left by it had gone).

    Attributes
    ----------
    seconds : float
        From the click to the end of the script run (or to ``until``).
    filled : float
        From the click to the moment no progress bar or spinner was left on the page (a
        section a fragment fills after the script run); ``seconds`` when there was none.
    looks : list of (float, dict)
        Time since the click and the page's look (:data:`_LOOK`).
    """

    seconds: float = 0.0
    filled: float = 0.0
    looks: list[tuple[float, dict[str, Any]]] = field(default_factory=list)


def follow(page: Any, click: Any, until: Any = None, timeout: float = 3600.0) -> Timeline:
    """Call ``click()``, then look at the page every 0.1 s until the script run it triggered
    has ended (or, with ``until``, until ``until(look)`` holds), then until no progress bar
    is left."""
    tl = Timeline()
    t0 = time.perf_counter()
    click()
    started = False
    while time.perf_counter() - t0 < timeout:
        look = page.evaluate(_LOOK)
        t = time.perf_counter() - t0
        tl.looks.append((t, look))
        started = started or not look["idle"] or t > 0.5
        if not tl.seconds and (
            until(look) if until is not None else (started and look["idle"] and t > 0.3)
        ):
            tl.seconds = t
        if tl.seconds and look["idle"] and not look["busy"]:
            tl.filled = t
            return tl
        if tl.seconds and t > tl.seconds + FILL_WAIT:
            tl.filled = float("nan")  # a progress bar that never went
            return tl
        page.wait_for_timeout(100 if until is None else 250)
    raise TimeoutError(f"still running after {timeout:.0f} s")


def sections(tl: Timeline, before: set[str]) -> list[tuple[str, float, bool]]:
    """The page's sections: ``(heading, seconds, progress shown)``, one per heading that
    appeared after the click (the first, ``"(top)"``, from the click to the first heading);
    a section lasts until the next heading appears (the last until the script run ended)."""
    first: dict[str, float] = {}
    for t, look in tl.looks:
        for h in look["heads"]:
            if h not in before and h not in first:
                first[h] = t
    marks = [("(top)", 0.0), *sorted(first.items(), key=lambda kv: kv[1])]
    out = []
    for i, (name, start) in enumerate(marks):
        end = marks[i + 1][1] if i + 1 < len(marks) else tl.seconds
        shown = any(look["busy"] for t, look in tl.looks if start <= t <= end)
        out.append((name, end - start, shown))
    return out


def heads_now(page: Any) -> set[str]:
    """The headings on screen now (stale ones of the page being left)."""
    return set(page.evaluate(_LOOK)["heads"])


def go(page: Any, link: str) -> Timeline:
    """Open ``link`` from the sidebar's navigation; the timeline of its first script run."""
    nav = page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True)
    return follow(page, nav.click)


def _open(box: Any, attempts: int = 4) -> None:
    """Click a select box until its list is open (the first click after another widget's
    keyboard use only moves the focus)."""
    for _ in range(attempts):
        box.click()
        try:
            box.page.wait_for_function(
                "el => el.getAttribute('aria-expanded') === 'true'",
                arg=box.element_handle(),
                timeout=2000,
            )
            return
        except Exception:
            continue


def choose(page: Any, label: str, option: str) -> Timeline:
    """Pick ``option`` in the select box labelled ``label``."""

    def click() -> None:
        _open(page.get_by_role("combobox", name=label, exact=True).first)
        page.get_by_role("option", name=option, exact=True).click()

    return follow(page, click)


def load_set(page: Any, name: str) -> float:
    """Load the data set ``name`` on the Data page; the seconds the load took."""
    choice, widgets = SETS[name]
    go(page, "Data")
    choose(page, "Data set", choice)
    for label, value in widgets.items():
        box = page.get_by_label(label, exact=True)
        box.fill(str(value))
        follow(page, lambda b=box: b.press("Enter"))
    button = page.get_by_role("button", name="Load this data set")
    return follow(page, button.click).seconds


def _titles() -> dict[str, str]:
    """The Train page's name of each method (its card's title)."""
    from hierlab.core.registry import get_method, list_methods

    return {m: str(get_method(m).card.title) for m in list_methods()}


def train(page: Any, method: str, title: str) -> Timeline:
    """Train ``method`` with the Train page's defaults; done when the sidebar counts one more
    run or lists one more job as ended (done, failed, stopped) and no progress bar is left."""
    go(page, "Train")
    choose(page, "Method", title)
    before = page.evaluate(_LOOK)
    button = page.get_by_role("button", name="Train", exact=True)

    def done(look: dict[str, Any]) -> bool:
        more = look["runs"] > before["runs"] or look["ended"] > before["ended"]
        return bool(more and look["idle"] and not look["progress"])

    return follow(page, button.click, until=done)


def progress_report(tl: Timeline) -> dict[str, Any]:
    """From a training timeline: the longest time the progress text stood still (from its
    first appearance to the end), and the ETA shown at a quarter of the run against the time
    that actually remained then (:func:`judge_eta`)."""
    changes = []
    last = None
    for t, look in tl.looks:
        text = " | ".join(look["progress"])
        if look["progress"] and text != last:
            changes.append(t)
            last = text
    gaps = [b - a for a, b in zip(changes, [*changes[1:], tl.seconds])]
    quarter = tl.seconds / 4
    at: tuple[float, dict[str, Any]] = next(
        ((t, look) for t, look in tl.looks if t >= quarter), (tl.seconds, {"progress": []})
    )
    bars = at[1]["progress"]
    shown = next((b for b in reversed(bars) if parse_eta(b) is not None), " | ".join(bars))
    eta = parse_eta(shown)
    remaining = tl.seconds - at[0]
    return {
        "seconds": tl.seconds,
        "max_still": max(gaps) if gaps else float("nan"),
        "eta_text": shown,
        "eta": eta,
        "remaining": remaining,
        **judge_eta(eta, remaining),
    }


def judge_eta(eta: tuple[float, float] | None, remaining: float) -> dict[str, Any]:
    """The ETA shown against the time that actually remained: ``mid``, the range's geometric
    middle (its high end's half when the low end is 0; None without a range or with an open
    one); ``within`` (``remaining / 3 <= mid <= 3 remaining``) and ``inside`` (``low <=
    remaining <= high``)."""
    if eta is None:
        return {"mid": None, "within": False, "inside": False}
    low, high = eta
    mid = None if not math.isfinite(high) else (math.sqrt(low * high) if low > 0 else high / 2)
    within = mid is not None and remaining / 3 <= mid <= 3 * remaining
    return {"mid": mid, "within": within, "inside": low <= remaining <= high}


def print_training(method: str, rep: dict[str, Any]) -> None:
    """One line per trained method: its time, the longest still progress, and at a quarter
    of the run the range shown, its middle, the time that actually remained, the verdict."""
    eta, rem = rep["eta"], rep["remaining"]
    if eta is None:
        verdict = f"no ETA shown ({rem:.0f} s left)"
    else:
        hi = f"{eta[1]:.0f}" if math.isfinite(eta[1]) else "inf"
        mid = "none" if rep["mid"] is None else f"{rep['mid']:.0f}"
        verdict = (
            f"shown {eta[0]:.0f}-{hi} s (middle {mid} s) vs {rem:.0f} s left: "
            + ("within" if rep["within"] else "NOT within")
            + " 3x, "
            + ("inside" if rep["inside"] else "outside")
            + " the range"
        )
    print(
        f"  train {method:<10} {rep['seconds']:7.1f} s · progress still at most "
        f"{rep['max_still']:.1f} s · at 1/4: {verdict}  [{rep['eta_text'][:160]}]",
        flush=True,
    )


def print_page(name: str, tl: Timeline, before: set[str]) -> float:
    """One line per page (seconds, within the target) and one per section over 1 s."""
    ok = "ok" if tl.seconds <= TARGET else "OVER"
    late = tl.filled - tl.seconds
    filled = f"  (progress until filled at {tl.filled:.1f} s)" if not late <= 0.3 else ""
    print(f"  {name:<34} {tl.seconds:7.2f} s  {ok}{filled}", flush=True)
    for head, secs, shown in sections(tl, before):
        if secs > 1.0:
            print(f"      section {head[:40]!r:<44} {secs:6.2f} s  progress shown: {shown}")
    return tl.seconds


def _pick(page: Any, label: str, index: int) -> Any:
    """A click that picks option ``index`` of the select box whose label starts ``label``."""

    def click() -> None:
        box = page.get_by_role("combobox", name=re.compile("^" + re.escape(label)))
        _open(box.first)
        page.get_by_role("option").nth(index).click()

    return click


def explore_controls(page: Any, n_runs: int) -> list[float]:
    """Explore: switch to each other run, then move its controls; print each click's time."""
    go(page, "Explore")
    runs = range(1, n_runs)
    controls = [(f"Explore: switch to run {k + 1}", _pick(page, "Run", k)) for k in runs]
    controls += [
        ("Explore: Only mistakes", page.get_by_text("Only mistakes", exact=True).click),
        (
            "Explore: confusion at the deepest level",
            lambda: (
                page.locator('[data-testid="stSlider"]')
                .filter(has=page.get_by_text("Confusion at depth"))
                .get_by_role("slider")
                .press("End")
            ),
        ),
        ("Explore: open a subtree", _pick(page, "Subtree", 1)),
    ]
    times = []
    for name, click in controls:
        before = heads_now(page)
        try:
            times.append(print_page(name, follow(page, click), before))
        except Exception as exc:  # a control this data set lacks (no subtree on a small tree)
            why = " ".join(str(exc).split())[:300]
            print(f"  {name:<34} not done: {type(exc).__name__}: {why}")
    return times


def bench_set(browser: Any, name: str, methods: list[str], shots: Path | None) -> list[float]:
    """Load ``name``, train ``methods``, time every page and Explore's controls."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_app(port)
    try:
        wait_healthy(url, proc, 120)
        page = browser.new_page(viewport={"width": 1440, "height": 1200})
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("heading", name="Start here").wait_for()
        follow(page, lambda: None)
        print(f"\n== {name}: loaded in {load_set(page, name):.1f} s", flush=True)
        titles = _titles()
        for m in methods:
            print_training(m, progress_report(train(page, m, titles[m])))
        times = []
        for link in PAGES:
            before = heads_now(page)
            times.append(print_page(link, go(page, link), before))
            if shots is not None and link in SHOTS:
                page.screenshot(path=str(shots / f"{name}_{SHOTS[link]}.png"), full_page=True)
        return times + explore_controls(page, len(methods))
    finally:
        stop_app(proc)


def main(argv: list[str] | None = None) -> int:
    """Time every page on each data set chosen; print the table."""
    ap = argparse.ArgumentParser(prog="python -m hierlab.benchmarks.app_pages", description=__doc__)
    ap.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    ap.add_argument("--methods", nargs="+", default=["topdown", "flatmult", "hr-svm", "nhsvm"])
    ap.add_argument("--text-rows", type=int, default=50_000, help="rows of the generated set")
    ap.add_argument("--text-classes", type=int, default=2_000, help="its leaf classes")
    ap.add_argument("--screenshots", type=Path, help="save the pages' screenshots here")
    args = ap.parse_args(argv)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("Playwright is missing: pip install playwright (and apt-get install chromium)")
        return 2
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: apt-get install chromium")
        return 2
    SETS["text"][1].update({"n samples": args.text_rows, "n classes": args.text_classes})
    print(f"app pages at real size: sets {args.sets}, methods {args.methods}; target <= {TARGET} s")
    print(f"load: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores", flush=True)
    worst = 0.0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            if args.screenshots is not None:
                args.screenshots.mkdir(parents=True, exist_ok=True)
            for name in args.sets:
                worst = max([worst, *bench_set(browser, name, args.methods, args.screenshots)])
        finally:
            browser.close()
    print(f"\nslowest page or control: {worst:.2f} s: " + ("within" if worst <= TARGET else "OVER"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
