"""Suite-wide fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _restore_main_module() -> Iterator[None]:
    """Put back ``sys.modules["__main__"]`` after each test.

    Streamlit's AppTest runs the app script as ``__main__`` and leaves it there; a process
    started later by spawn (dask's ``LocalCluster(processes=True)``, joblib's loky) would then
    re-run the app's script instead of pytest's entry point, and its workers fail to start
    ("Nanny failed to start" in the cluster tests of a whole-suite run).
    """
    main = sys.modules.get("__main__")
    yield
    if main is not None and sys.modules.get("__main__") is not main:
        sys.modules["__main__"] = main
