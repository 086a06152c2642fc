"""End to end (issue #20): on Explore, clicking a node of the tree shows the words that push
towards it, and clicking a cell of the confusion view lists that cell's examples.

Real app, headless Debian Chromium, real mouse clicks at the pixel position plotly draws the
point at (read from the figure's own axes).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_app_e2e import _idle

CHARTS = '[data-testid="stPlotlyChart"] .js-plotly-plot'

#: page coordinates of point ``i`` of the trace named ``trace`` (scrolled into view first), and
#: what the point is: a node's hover text or a confusion cell's ``customdata``
JS_POINT = (
    "([trace, i]) => {"
    f" const plots = [...document.querySelectorAll('{CHARTS}')];"
    " const gd = plots.find(p => p.data && p.data.some(t => t.name === trace));"
    " if (!gd || !gd.calcdata) return null;"
    " const ti = gd.data.findIndex(t => t.name === trace);"
    " gd.scrollIntoView({block: 'center'});"
    " const fl = gd._fullLayout, xa = fl.xaxis, ya = fl.yaxis, cd = gd.calcdata[ti][i];"
    " const r = gd.getBoundingClientRect();"
    " const t = gd.data[ti];"
    " const what = t.customdata && t.name === 'cells' ? t.customdata[i] :"
    "   String(t.hovertext[i]).split('<br>')[0];"
    " return {x: r.left + xa._offset + xa.c2p(cd.x), y: r.top + ya._offset + ya.c2p(cd.y),"
    "   what: what, n: gd.calcdata[ti].length}; }"
)


def _point(page: Page, trace: str, i: int) -> dict:
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{CHARTS}')].some(p => p.calcdata && "
        f"p.data.some(t => t.name === '{trace}'))"
    )
    page.wait_for_timeout(300)  # the scroll settles
    return page.evaluate(JS_POINT, [trace, i])


@pytest.mark.browser
def test_click_a_node_for_its_words_and_a_cell_for_its_examples(page: Page, app_url: str) -> None:
    page.set_default_timeout(90_000)
    expect.set_options(timeout=90_000)
    page.set_viewport_size({"width": 1400, "height": 1000})

    # a text data set: its features are words
    page.goto(f"{app_url}/data")
    expect(page.get_by_role("heading", name="Data")).to_be_visible()
    page.locator('[data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="hierarchical-text").click()
    _idle(page)
    page.get_by_role("button", name="Load this data set").click()
    expect(page.get_by_text(re.compile(r"Loaded hierarchical-text"))).to_be_visible()

    # train the top-down baseline (fast)
    page.get_by_role("link", name="Train").click()
    expect(page.get_by_role("heading", name="Train")).to_be_visible()
    page.locator('[data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name=re.compile(r"^Top-down")).click()
    _idle(page)
    page.get_by_role("button", name="Train", exact=True).click()
    expect(page.get_by_text("Run history")).to_be_visible()
    _idle(page)

    # Explore: click the last node of the tree (a leaf) -> its top words appear
    page.get_by_role("link", name="Explore").click()
    expect(page.get_by_role("heading", name="Explore")).to_be_visible()
    _idle(page)
    first = _point(page, "nodes", 0)
    leaf = _point(page, "nodes", first["n"] - 1)
    page.mouse.click(leaf["x"], leaf["y"])
    _idle(page)
    expect(page.get_by_text(f"Top words for {leaf['what']}")).to_be_visible()
    words = page.locator('[data-testid="stDataFrame"]').filter(has=page.get_by_text("feature"))
    expect(words.first).to_be_visible()

    # click a confusion cell (the last one: not the default the listing opens on)
    n_cells = _point(page, "cells", 0)["n"]
    assert n_cells > 1
    cell = _point(page, "cells", n_cells - 1)
    true_node, pred_node = cell["what"]
    page.mouse.click(cell["x"], cell["y"])
    _idle(page)
    shown = re.compile(rf"\d+ test examples with true {true_node} and predicted {pred_node} ")
    expect(page.get_by_text(shown)).to_be_visible()
    listing = page.locator('[data-testid="stDataFrame"]').filter(has=page.get_by_text("words"))
    expect(listing.first).to_be_visible()
    assert not page.get_by_text("Traceback").count()
