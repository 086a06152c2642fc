"""Save ``docs/screenshots/train_live.png``: the Train page while ORTHOGNL's bounds close, live.

Run with ``python tests/browser/screenshot_train.py`` (needs /usr/bin/chromium). It starts
``streamlit run`` on a free port, trains ORTHOGNL (or the default method) on the default data
set with C = 1000 (about 20 BCFW passes), takes the screenshot mid-training, then stops the run.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from conftest import CHROMIUM, CHROMIUM_FLAGS, ROOT, free_port, start_app, wait_healthy  # noqa: E402

OUT = ROOT / "docs" / "screenshots" / "train_live.png"


def main(seconds: float = 8.0) -> int:
    """Train, wait ``seconds``, save the screenshot, stop."""
    port = free_port()
    proc = start_app(port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(120_000)
            page.goto(f"{url}/train")
            page.get_by_role("button", name="Train", exact=True).wait_for()
            page.locator('[data-testid="stSelectbox"]').first.click()
            option = page.get_by_role("option", name=re.compile(r"^ORTHOGNL"))
            if option.count():
                option.click()
                page.get_by_label("α", exact=True).wait_for()
                time.sleep(1.0)
                # C = 1 is solved in one BCFW pass on this set (a single point on the chart);
                # C = 1000 takes about 20 passes, so the bounds are seen closing
                box = page.get_by_label("C", exact=True)
                box.fill("1000")
                box.press("Enter")
                time.sleep(1.5)
            else:
                page.keyboard.press("Escape")
            page.get_by_role("button", name="Train", exact=True).click()
            stop = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop")
            stop.wait_for()
            time.sleep(seconds)
            OUT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT))
            stop.click()
            page.get_by_text("Last run:").wait_for()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"saved {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
