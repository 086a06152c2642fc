"""End to end: the real app (``streamlit run``) in headless Chromium, driven by Playwright.

Upload a small CSV and its taxonomy, train ORTHOGNL (or the default method) and watch the bound
chart grow while it trains, stop it, then open Compare and run a comparison.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from hierlab.benchmarks.newcomer import attach_file, wait_idle
from hierlab.core.registry import list_methods

ROOT = Path(__file__).resolve().parents[2]
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
# number of points of a trace's x: a plain array, or plotly's typed {dtype, bdata} encoding
JS_LEN = (
    "const n = a => !a ? 0 : (a.length !== undefined ? a.length : (a.bdata ? "
    "atob(a.bdata).length / ({f8: 8, f4: 4, i4: 4, u4: 4, i2: 2, u2: 2, i1: 1, u1: 1}"
    "[a.dtype] || 8) : 0));"
)


def _points_js(cond: str) -> str:
    """A predicate on ``k``, the number of points of the first trace of the first chart."""
    return (
        "() => { " + JS_LEN + f" const el = document.querySelector('{CHART}');"
        f" if (!el || !el.data || el.data.length < 2) return false; const k = n(el.data[0].x);"
        f" return {cond}; }}"
    )


_idle = wait_idle


def _set_number(page: Page, label: str, value: str) -> None:
    box = page.get_by_label(label, exact=True)
    expect(box).to_have_count(1)  # the previous run's widgets are gone
    box.fill(value)
    box.press("Enter")
    _idle(page)


def _chart_points(page: Page) -> dict[str, int]:
    js = (
        "() => { " + JS_LEN + f" const el = document.querySelector('{CHART}');"
        " return el && el.data ? el.data.map(t => [String(t.name), n(t.x)]) : null; }"
    )
    return {name: k for name, k in page.wait_for_function(js).json_value()}


@pytest.mark.browser
def test_upload_train_live_bounds_stop_compare(page: Page, app_url: str) -> None:
    page.set_default_timeout(60_000)
    expect.set_options(timeout=60_000)
    page.goto(f"{app_url}/data")
    expect(page.get_by_role("heading", name="Data")).to_be_visible()

    # upload features and taxonomy
    page.get_by_role("tab", name="Upload your own").click()
    attach_file(page, 0, ROOT / "datasets" / "example_names.csv")
    attach_file(page, 1, ROOT / "datasets" / "taxonomy.json")
    page.get_by_role("button", name="Use this upload").click()
    expect(page.get_by_text("Loaded example_names.csv")).to_be_visible()

    # train: a method with certified bounds, run long enough to see the chart move
    page.get_by_role("link", name="Train").click()
    expect(page.get_by_role("heading", name="Train")).to_be_visible()
    expect(page.get_by_text("upload: example_names.csv").first).to_be_visible()
    method = "orthognl" if "orthognl" in list_methods() else None
    if method is not None:
        page.locator('[data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name=re.compile(r"^ORTHOGNL")).click()
        _idle(page)
        expect(page.get_by_label("α", exact=True)).to_be_visible()
    _set_number(page, "tolerance", "0")
    _set_number(page, "relative gap tolerance", "0")
    _set_number(page, "maximum iterations", "1000000")
    page.get_by_role("button", name="Train", exact=True).click()

    # the live chart appears with both bounds, then grows
    stop = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    page.wait_for_function(_points_js("k >= 2"))
    first = _chart_points(page)
    assert {"upper", "lower"} <= set(first), first
    page.wait_for_function(_points_js(f"k > {first['upper']}"))
    assert _chart_points(page)["upper"] > first["upper"]

    # stop: the run is kept with the best iterate so far
    stop.click()
    main = page.get_by_test_id("stMainBlockContainer")
    expect(main.get_by_text("stopped by you")).to_be_visible()
    expect(page.get_by_text("Run history")).to_be_visible()
    assert page.locator(CHART).count() >= 1

    # compare on identical splits
    page.get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare")).to_be_visible()
    page.get_by_role("button", name="Run comparison").click()
    expect(page.get_by_text(re.compile(r"Comparison #\d+ on"))).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    expect(page.locator(CHART).first).to_be_visible()
    assert not page.get_by_text("Traceback").count()
