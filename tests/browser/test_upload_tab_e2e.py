"""In a real browser: Home's "Upload a file" opens the Data page on its upload tab, and attaching
a file (a rerun of the page) keeps that tab open instead of snapping back to the first one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from hierlab.benchmarks.newcomer import attach_file, wait_idle

ROOT = Path(__file__).resolve().parents[2]


def _selected(page: Page) -> str:
    return page.locator('[role="tab"][aria-selected="true"]').first.inner_text().strip()


@pytest.mark.browser
def test_upload_from_home_keeps_the_upload_tab_open(page: Page, app_url: str) -> None:
    page.set_default_timeout(60_000)
    expect.set_options(timeout=60_000)
    page.goto(app_url)
    # the first visit loads the default data set: wait for the page to be done
    expect(page.get_by_role("button", name=re.compile(r"^Train .* now$"))).to_be_visible()
    wait_idle(page)
    page.get_by_role("button", name="Upload a file").click()
    expect(page.get_by_role("heading", name="Data")).to_be_visible()
    wait_idle(page)
    assert _selected(page) == "Upload your own"
    attach_file(page, 0, ROOT / "datasets" / "example_paths.csv")
    wait_idle(page)
    assert _selected(page) == "Upload your own"  # the rerun did not move the tabs
    attach_file(page, 2, ROOT / "datasets" / "example_paths_test.csv")
    assert _selected(page) == "Upload your own"
    page.get_by_role("button", name="Use this upload").click()
    expect(page.get_by_text("Loaded example_paths.csv")).to_be_visible()
    expect(page.get_by_text("the test file as given").first).to_be_visible()
    assert _selected(page) == "Upload your own"
