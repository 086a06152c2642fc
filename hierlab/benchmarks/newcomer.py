"""The newcomer's first minute, timed: ``python -m hierlab.benchmarks.newcomer``.

Starts the Streamlit app (``streamlit run app/streamlit_app.py``) headless on a free port,
drives it with Playwright in Debian's Chromium (``/usr/bin/chromium``; never ``playwright
install``) the way a person does on a first visit, and prints three wall times measured from
the moment the server process is started:

* **server up**: ``/_stcore/health`` answers;
* **first paint**: the home page's "Start here" heading is visible;
* **first trained chart**: after one click on the home page's first-run button (the default
  method on the default data set), the bounds chart holds the finished run's gap curve.

Target: cold start to first trained chart under 10 s on the default data set (issue 18). The
click-to-chart time is printed apart, with the number of solver states the run drew.

The helpers that start the app and find the browser (:func:`start_app`, :func:`wait_healthy`,
:func:`free_port`, :data:`CHROMIUM`, :data:`CHROMIUM_FLAGS`) are also the browser tests'
(``tests/browser/conftest.py``). This module imports nothing of the app; Playwright is optional
(``pip install playwright``) and its absence is reported, not raised as a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

__all__ = [
    "CHROMIUM",
    "CHROMIUM_FLAGS",
    "ROOT",
    "free_port",
    "main",
    "newcomer_times",
    "start_app",
    "stop_app",
    "wait_healthy",
]

#: the repository root (where ``app/`` and ``.streamlit/config.toml`` live)
ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]

#: the bounds chart holds a trace named "gap" (the first run's certified gap)
_GAP_CHART = (
    "() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')]"
    ".some(p => p.data && p.data.some(t => t.name === 'gap'))"
)
_STATES_TEXT = r"\d+ state\(s\) in"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen[Any], timeout: float = 60.0) -> None:
    """Poll ``url/_stcore/health`` until the server answers 200.

    Raises
    ------
    RuntimeError
        The server exited or did not answer within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"streamlit did not become healthy within {timeout} s")


def start_app(port: int, log: Path | None = None) -> subprocess.Popen[Any]:
    """``streamlit run app/streamlit_app.py`` from the repository root on ``port``.

    The server's output goes to ``log`` (for debugging a failure) or nowhere.
    """
    out: Any = open(log, "wb") if log is not None else subprocess.DEVNULL
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app/streamlit_app.py",
            "--server.port",
            str(port),
        ],
        cwd=ROOT,
        stdout=out,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def stop_app(proc: subprocess.Popen[Any]) -> None:
    """Stop the server ``start_app`` started (killed if it has not exited after 10 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def newcomer_times(timeout: float = 120.0) -> dict[str, float]:
    """Start the app cold, open it, click the first run; return the wall times in seconds.

    Returns
    -------
    dict
        ``server_up``, ``first_paint``, ``first_chart`` (each from the server's start),
        ``click_to_chart`` and ``states`` (how many solver states the first run drew).
    """
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = start_app(port)
    out: dict[str, float] = {}
    try:
        wait_healthy(url, proc, timeout)
        out["server_up"] = time.perf_counter() - t0
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.set_default_timeout(timeout * 1000)
            page.goto(url)
            page.get_by_role("heading", name="Start here").wait_for()
            first_train = page.get_by_role("button", name="now")
            first_train.wait_for()
            out["first_paint"] = time.perf_counter() - t0
            t_click = time.perf_counter()
            first_train.click()
            page.wait_for_function(_GAP_CHART)
            page.get_by_text(re.compile(_STATES_TEXT)).wait_for()
            out["first_chart"] = time.perf_counter() - t0
            out["click_to_chart"] = time.perf_counter() - t_click
            text = page.get_by_text(re.compile(_STATES_TEXT)).inner_text()
            out["states"] = float(text.split()[0].strip("*"))
            browser.close()
    finally:
        stop_app(proc)
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the newcomer path's wall times (one cold start per ``--repeat``)."""
    ap = argparse.ArgumentParser(prog="python -m hierlab.benchmarks.newcomer", description=__doc__)
    ap.add_argument("--repeat", type=int, default=1, help="cold starts to time (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step at most")
    args = ap.parse_args(argv)
    try:
        import playwright  # noqa: F401
    except ImportError:
        print("Playwright is missing: pip install playwright (and apt-get install chromium)")
        return 2
    if not os.path.exists(CHROMIUM):
        print(f"{CHROMIUM} is missing: apt-get install chromium")
        return 2
    print("newcomer path: cold start -> first paint -> one click -> first trained chart")
    print(
        f"{'run':>3} {'server up':>10} {'first paint':>12} {'first chart':>12} "
        f"{'click->chart':>13} {'states':>7}"
    )
    for k in range(args.repeat):
        t = newcomer_times(args.timeout)
        print(
            f"{k + 1:>3} {t['server_up']:>9.2f}s {t['first_paint']:>11.2f}s "
            f"{t['first_chart']:>11.2f}s {t['click_to_chart']:>12.2f}s {int(t['states']):>7}"
        )
        verdict = "within" if t["first_chart"] < 10.0 else "over"
        print(
            f"    cold start -> first trained chart {t['first_chart']:.2f} s: "
            f"{verdict} the 10 s target"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
