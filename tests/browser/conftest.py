"""Playwright with Debian's Chromium (never ``playwright install``), and the app on a free port."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from hierlab.benchmarks.newcomer import (  # the app's start-up, shared with the benchmark
    CHROMIUM,
    CHROMIUM_FLAGS,
    ROOT,
    free_port,
    start_app,
    stop_app,
    wait_healthy,
)

__all__ = ["CHROMIUM", "CHROMIUM_FLAGS", "ROOT", "free_port", "start_app", "wait_healthy"]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """pytest-playwright's launch arguments, pointed at Debian's Chromium."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: `make browser-deps` installs Debian's chromium")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": CHROMIUM_FLAGS,
        "headless": True,
    }


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served by a real ``streamlit run`` on a free port."""
    if shutil.which("chromium") is None and not os.path.exists(CHROMIUM):
        pytest.skip("no chromium")
    port = free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    proc = start_app(port, log)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url
    finally:
        stop_app(proc)
