"""Benchmark of the Streamlit app: open -> trained -> all plots, and the live plot's cost.

Run with ``python -m app.bench_app`` (add ``--browser`` to also time the real
app in headless Chromium at ``/usr/bin/chromium``). Prints, in one run:

1. **open -> trained -> all plots** on the default data set with the default method, driven by
   ``streamlit.testing.v1.AppTest`` (server side: every script run, no browser rendering):
   seconds to open the app (default data set loaded), to train in one click (live bound chart
   included), and to draw every figure of the Explore page. With ``--browser``, the same path
   through a real ``streamlit run`` in Chromium, until the figures are on screen.
2. **LivePlot overhead**: the wall time of ``fit`` with and without the live plot callback
   (``app.ui.live.LivePlot`` with a stand-in for ``st.empty()`` that serialises each figure as
   ``st.plotly_chart`` does), repeated and interleaved, medians and their ratio; and the time
   spent inside the callback itself (the wall-time difference is noisy on a shared machine).

Targets: < 10 s for the first, < 10% overhead for the second.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app" / "streamlit_app.py"


def _app_on_path() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def bench_apptest() -> dict[str, Any]:
    """Seconds for open, train (one click) and the Explore figures, with AppTest."""
    from streamlit.testing.v1 import AppTest

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    at = AppTest.from_file(str(APP), default_timeout=600)
    at.run()
    out["open_s"] = time.perf_counter() - t0
    state = at.session_state["hierlab_state"]
    out["dataset"] = state.dataset.name if state.dataset else None
    out["method"] = at.selectbox(key="train_method").value
    t1 = time.perf_counter()
    at.button(key="train").click()
    at.run()
    out["train_s"] = time.perf_counter() - t1
    run = state.runs[-1]
    out["fit_s"] = run.fit_time
    out["iterations"] = len(run.history)
    t2 = time.perf_counter()
    at.switch_page("app_pages/explore.py")
    at.run()
    out["explore_s"] = time.perf_counter() - t2
    out["n_figures"] = len(at.get("plotly_chart"))
    out["errors"] = [e.value for e in at.error] + [str(e.value) for e in at.exception]
    out["total_s"] = time.perf_counter() - t0
    return out


def bench_browser() -> dict[str, Any]:
    """The same path in headless Chromium against ``streamlit run`` (seconds, wall clock)."""
    import subprocess
    import urllib.request

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from conftest import CHROMIUM, CHROMIUM_FLAGS, free_port, start_app, wait_healthy

    port = free_port()
    proc = start_app(port)
    url = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {}
    try:
        wait_healthy(url, proc)
        with urllib.request.urlopen(url, timeout=10):
            pass
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(120_000)
            t0 = time.perf_counter()
            page.goto(url)
            page.get_by_role("button", name="Train", exact=True).wait_for()
            out["open_s"] = time.perf_counter() - t0
            t1 = time.perf_counter()
            page.get_by_role("button", name="Train", exact=True).click()
            page.get_by_text("Last run:").wait_for()
            out["train_s"] = time.perf_counter() - t1
            t2 = time.perf_counter()
            page.get_by_role("link", name="Explore").click()
            page.wait_for_function(
                "() => document.querySelectorAll("
                "'[data-testid=\"stPlotlyChart\"] .js-plotly-plot .main-svg').length >= 5"
            )
            out["explore_s"] = time.perf_counter() - t2
            out["total_s"] = time.perf_counter() - t0
            browser.close()
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        proc.kill()  # nothing happens when it has exited
    return out


class _SerialisingSlot:
    """Stands for ``st.empty()``: serialises the figure as ``st.plotly_chart`` does."""

    def __init__(self) -> None:
        self.bytes = 0

    def plotly_chart(self, fig: Any, **kwargs: Any) -> None:
        import plotly.io

        self.bytes += len(plotly.io.to_json(fig, validate=False))

    def progress(self, *args: Any, **kwargs: Any) -> None:
        pass


def bench_live_overhead(method: str, params: dict[str, Any], repeats: int = 5) -> dict[str, Any]:
    """Median wall time of ``fit`` with and without LivePlot, interleaved ``repeats`` times."""
    from app.state import default_method, load_builtin
    from app.ui.live import LivePlot
    from hierlab import list_methods, make_estimator
    from hierlab.datasets import available_datasets
    from hierlab.plots import bounds_figure

    first = next(d for d in available_datasets() if not d.real)
    entry = load_builtin(f"catalog:{first.name}")
    method = method or default_method(list_methods()) or list_methods()[0]
    without, with_live, solver_without, solver_with = [], [], [], []
    draws: list[int] = []
    draw_time: list[float] = []
    for _ in range(repeats):
        for live_on in (False, True):
            est = make_estimator(method, taxonomy=entry.taxonomy, **params)
            cbs: list[Any] = []
            live = None
            if live_on:
                live = LivePlot(_SerialisingSlot(), bounds_figure)
                cbs.append(live)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                est.fit(entry.train.X, entry.train.y, callbacks=cbs)
                wall = time.perf_counter() - t0
            solver = float(est.history_["elapsed"].iloc[-1]) if len(est.history_) else wall
            if live is None:
                without.append(wall)
                solver_without.append(solver)
            else:
                with_live.append(wall)
                solver_with.append(solver)
                draws.append(live.n_draws)
                draw_time.append(live.draw_time)
    a, b = statistics.median(without), statistics.median(with_live)
    return {
        "dataset": entry.name,
        "method": method,
        "params": params,
        "iterations": len(est.history_),
        "wall_without_s": a,
        "wall_with_s": b,
        "overhead": b / a - 1.0,
        "solver_without_s": statistics.median(solver_without),
        "solver_with_s": statistics.median(solver_with),
        "draws": statistics.median(draws),
        "draw_time_s": statistics.median(draw_time),
        "draw_share": statistics.median(draw_time) / a,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m app.bench_app")
    parser.add_argument("--browser", action="store_true", help="also time the app in Chromium")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    _app_on_path()

    r = bench_apptest()
    print(f"open -> trained -> all plots (AppTest), {r['dataset']}, {r['method']}:")
    print(
        f"  open {r['open_s']:.2f} s | train (one click) {r['train_s']:.2f} s "
        f"(fit {r['fit_s']:.2f} s, {r['iterations']} iterations) | explore "
        f"{r['explore_s']:.2f} s ({r['n_figures']} figures) | total {r['total_s']:.2f} s"
    )
    if r["errors"]:
        print("  errors:", r["errors"])
    if args.browser:
        b = bench_browser()
        print("open -> trained -> all plots (Chromium, streamlit run):")
        print(
            f"  open {b['open_s']:.2f} s | train {b['train_s']:.2f} s | explore "
            f"{b['explore_s']:.2f} s | total {b['total_s']:.2f} s"
        )
    cases: list[tuple[str, dict[str, Any]]] = [
        ("", {}),
        ("", {"tol": 0.0, "rtol": 0.0, "max_iter": 60}),  # the default method, to a budget
    ]
    for method, params in cases:
        o = bench_live_overhead(method, params, repeats=args.repeats)
        print(
            f"LivePlot overhead, {o['method']} {o['params'] or '(defaults)'} on {o['dataset']} "
            f"({o['iterations']} iterations, {o['draws']:.0f} redraws):"
        )
        print(
            f"  fit wall time without {o['wall_without_s']:.3f} s, with {o['wall_with_s']:.3f} s"
            f" -> overhead {100 * o['overhead']:+.1f}% (solver clock: "
            f"{o['solver_without_s']:.3f} s vs {o['solver_with_s']:.3f} s)"
        )
        print(
            f"  time inside LivePlot (drawing + serialising): {o['draw_time_s']:.3f} s = "
            f"{100 * o['draw_share']:.1f}% of the fit without it"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
