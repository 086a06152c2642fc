"""The newcomer's path in a real browser (issue 18): home -> a built-in data set -> train ->
explore -> compare -> a guided demo.

Each page is screenshotted into ``tests/browser/artifacts/`` (kept out of git); with
``HIERLAB_UPDATE_SCREENSHOTS=1`` the screenshots are also copied into ``docs/screenshots/``,
where the README shows them. On every page: no traceback, no Streamlit exception box, no
error message, and the figures that page is for.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from hierlab.benchmarks.newcomer import ROOT, wait_idle

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
SHOTS = ROOT / "docs" / "screenshots"
CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot'


_idle = wait_idle


def _clean(page: Page) -> None:
    """No traceback, no exception box and no error message on the page."""
    assert page.get_by_text("Traceback").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0
    errors = page.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()


def _trace(page: Page, name: str) -> None:
    """Wait for a drawn chart holding a trace called ``name``."""
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{CHARTS}')].some(p => p.data && "
        f"p.data.some(t => t.name === '{name}'))"
    )


def _shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    _idle(page)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a drawn page, not a blank one
    if os.environ.get("HIERLAB_UPDATE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SHOTS / path.name)
    return path


def _go(page: Page, link: str, heading: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=link).click()
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    _idle(page)


@pytest.mark.browser
def test_newcomer_path(page: Page, app_url: str) -> None:
    page.set_default_timeout(180_000)
    expect.set_options(timeout=180_000)
    page.set_viewport_size({"width": 1440, "height": 1200})

    # home: what the lab is, three ways in, no Deploy button
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Start here")).to_be_visible()
    for way in ("Choose a data set", "Upload a file", "Open the demos"):
        expect(page.get_by_role("button", name=way)).to_be_visible()
    expect(page.get_by_role("button", name=re.compile(r"^Train .* now$"))).to_be_visible()
    assert page.get_by_role("button", name="Deploy").count() == 0
    _clean(page)
    _shot(page, "1_home")

    # a built-in data set
    page.get_by_role("button", name="Choose a data set").click()
    expect(page.get_by_role("heading", name="Data", exact=True)).to_be_visible()
    page.get_by_role("button", name="Load this data set").click()
    expect(page.get_by_text(re.compile(r"^Loaded "))).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    assert page.locator('[data-testid="stMetric"]').count() >= 3
    _clean(page)
    _shot(page, "2_data")

    # train the default method: the bounds chart, the gap on a log scale, the metric tiles
    _go(page, "Train", "Train")
    page.get_by_role("button", name="Train", exact=True).click()
    expect(page.get_by_text("Last run:")).to_be_visible()
    _trace(page, "gap")
    expect(page.get_by_text("accuracy (ancestor rule)", exact=True).first).to_be_visible()
    _clean(page)
    _shot(page, "3_train")

    # explore the run: the tree coloured by error and the error breakdowns
    _go(page, "Explore", "Explore")
    _trace(page, "nodes")
    assert page.locator(CHARTS).count() >= 3
    _clean(page)
    _shot(page, "4_explore")

    # compare: the run from the history against itself is not a comparison; two methods on
    # one split (topdown and the default method, the page's choice)
    _go(page, "Compare", "Compare")
    box = page.get_by_label("Number of splits")
    box.fill("1")
    box.press("Enter")
    _idle(page)
    page.get_by_role("button", name="Run comparison").click()
    result = page.get_by_text(re.compile(r"Comparison #\d+ on"))
    expect(result).to_be_visible()
    result.scroll_into_view_if_needed()
    expect(page.locator(CHARTS).first).to_be_visible()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    _clean(page)
    _shot(page, "5_compare")

    # a guided demo
    _go(page, "Guided demos", "Guided demos")
    page.get_by_role("button", name="Run this demo").click()
    expect(page.locator(CHARTS).first).to_be_visible()
    page.get_by_text("What it shows").scroll_into_view_if_needed()
    _clean(page)
    _shot(page, "6_demo")
