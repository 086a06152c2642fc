"""The newcomer's first minute, timed: ``python -m hierlab.benchmarks.newcomer``.

Starts the Streamlit app as ``make run`` does (``python -m app.serve``: ``streamlit run
app/streamlit_app.py`` with the warm start of :mod:`app.serve`) headless on a free port, drives
it with Playwright in Debian's Chromium (``/usr/bin/chromium``; never ``playwright install``) the
way a person does on a first visit, and prints three wall times measured from the moment the
server process is started:

* **server up**: ``/_stcore/health`` answers;
* **first paint**: the home page's "Start here" heading is visible;
* **first trained chart**: after one click on the home page's first-run button (the default
  method on the default data set), the bounds chart holds the finished run's gap curve.

Target: cold start to first trained chart under 10 s on the default data set. The
click-to-chart time is printed apart, with the number of solver states the run drew and the CPU
seconds the server process used (on a shared machine the wall times vary with the load; the CPU
time much less). The browser is launched before the server starts (a person's browser is open
when they start the app; its launch time is printed apart); ``--cold-browser`` launches it after
the server answers instead, counting it in first paint. ``--repeat N`` prints the medians.

The helpers that start the app and find the browser (:func:`start_app`, :func:`wait_healthy`,
:func:`free_port`, :data:`CHROMIUM`, :data:`CHROMIUM_FLAGS`) and drive a page (:func:`wait_idle`,
:func:`attach_file`) are also the browser tests' (``tests/browser/``). This module imports
nothing of the app; Playwright is optional (``pip install playwright``) and its absence is
reported, not raised as a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
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
    "attach_file",
    "free_port",
    "main",
    "newcomer_times",
    "process_cpu",
    "start_app",
    "stop_app",
    "wait_healthy",
    "wait_idle",
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


#: the app's root element says whether a script run is under way (``notRunning`` when idle;
#: ``rerunRequested`` from the moment a widget asks for one, before the server answers)
_IDLE = (
    "() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
    " return !!app && app.dataset.testScriptState === 'notRunning'"
    " && !document.querySelector('[data-testid=\"stStatusWidget\"]'); }"
)


def wait_idle(page: Any) -> None:
    """Wait until the script run triggered by the last interaction has finished.

    A short pause first lets the interaction reach the page's state; then the app's root must
    report ``notRunning`` and no status widget ("Running ...") may be shown.
    """
    page.wait_for_timeout(300)
    page.wait_for_function(_IDLE)


def attach_file(page: Any, index: int, path: Path, attempts: int = 3) -> int:
    """Attach ``path`` to the page's ``index``-th file uploader and wait until the app has it.

    The app acknowledges every file it receives with a caption ``Received <name>`` rendered by
    the server (:mod:`app.app_pages.data`), so the wait ends when the server holds the file, not
    when the browser shows its chip. A file set while a script run re-renders the uploader can
    be dropped by Streamlit's front end (the chip shows, the server never gets it: seen about
    once in fifteen runs on a loaded machine); it is attached again, as a person would, at most
    ``attempts`` times in all.

    Returns
    -------
    int
        The number of attempts it took (printed by the tests when above 1).
    """
    from playwright.sync_api import expect

    inputs = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    ack = page.get_by_text(f"Received {path.name} (", exact=False)
    for attempt in range(1, attempts + 1):
        wait_idle(page)
        inputs.nth(index).set_input_files(str(path))
        try:
            expect(ack.first).to_be_visible(timeout=20_000)
        except AssertionError:
            print(f"{path.name}: not received by the app after attempt {attempt}; attaching again")
            continue
        wait_idle(page)
        return attempt
    raise AssertionError(f"the app never received {path.name} in {attempts} attempts")


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
    """``python -m app.serve`` (``make run``: ``streamlit run app/streamlit_app.py`` with a warm
    start) from the repository root on ``port``.

    The server's output goes to ``log`` (for debugging a failure) or nowhere.
    """
    out: Any = open(log, "wb") if log is not None else subprocess.DEVNULL
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.serve",
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


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``; nan
    elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    # fields after the command name: state is 0, utime 11, stime 12 (man 5 proc: 14 and 15)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def newcomer_times(timeout: float = 120.0, cold_browser: bool = False) -> dict[str, float]:
    """Start the app cold, open it, click the first run; return the wall times in seconds.

    Parameters
    ----------
    timeout : float
        Seconds per step at most.
    cold_browser : bool
        Launch Chromium after the server answers (its launch then counts in first paint and
        first chart) instead of before starting the server (a person's browser is already open
        when they start the app; the default).

    Returns
    -------
    dict
        ``browser_launch`` (seconds to launch Chromium), ``server_up``, ``first_paint``,
        ``first_chart`` (each from the server's start), ``click_to_chart`` and ``states`` (how
        many solver states the first run drew).
    """
    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    out: dict[str, float] = {}
    with sync_playwright() as p:

        def launch() -> Any:
            t = time.perf_counter()
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            out["browser_launch"] = time.perf_counter() - t
            return browser

        browser = None if cold_browser else launch()
        t0 = time.perf_counter()
        proc = start_app(port)
        try:
            wait_healthy(url, proc, timeout)
            out["server_up"] = time.perf_counter() - t0
            if browser is None:
                browser = launch()
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
            out["server_cpu"] = process_cpu(proc.pid)
        finally:
            if browser is not None:
                browser.close()
            stop_app(proc)
    return out


#: the printed columns: key in :func:`newcomer_times`' result -> header
COLUMNS = {
    "browser_launch": "browser",
    "server_up": "server up",
    "first_paint": "first paint",
    "first_chart": "first chart",
    "click_to_chart": "click->chart",
    "server_cpu": "server CPU",
}


def main(argv: list[str] | None = None) -> int:
    """Print the newcomer path's wall times (one cold start per ``--repeat``) and their median."""
    ap = argparse.ArgumentParser(prog="python -m hierlab.benchmarks.newcomer", description=__doc__)
    ap.add_argument("--repeat", type=int, default=1, help="cold starts to time (default 1)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step at most")
    ap.add_argument(
        "--cold-browser",
        action="store_true",
        help="launch Chromium after the server answers (counted in first paint), not before",
    )
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
        "(seconds from the server's start; the browser launched "
        + ("after the server answers, counted in first paint)" if args.cold_browser else "first)")
    )
    print(f"{'run':>3} " + " ".join(f"{h:>12}" for h in COLUMNS.values()) + f" {'states':>7}")
    runs = []
    for k in range(args.repeat):
        t = newcomer_times(args.timeout, cold_browser=args.cold_browser)
        runs.append(t)
        cells = " ".join(f"{t[c]:>11.2f}s" for c in COLUMNS)
        print(f"{k + 1:>3} {cells} {int(t['states']):>7}")
    med = {c: statistics.median(t[c] for t in runs) for c in COLUMNS}
    if len(runs) > 1:
        print("med " + " ".join(f"{med[c]:>11.2f}s" for c in COLUMNS))
    verdict = "within" if med["first_chart"] < 10.0 else "over"
    print(
        f"cold start -> first trained chart {med['first_chart']:.2f} s"
        + (f" (median of {len(runs)})" if len(runs) > 1 else "")
        + f": {verdict} the 10 s target"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
