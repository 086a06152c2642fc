"""Suite-wide fixtures."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

#: pytest's own ``__main__``, taken when the suite starts
_PYTEST_MAIN = sys.modules.get("__main__")


def _put_back_main() -> None:
    if _PYTEST_MAIN is not None and sys.modules.get("__main__") is not _PYTEST_MAIN:
        sys.modules["__main__"] = _PYTEST_MAIN


@pytest.fixture(autouse=True, scope="module")
def _main_module_before_each_module() -> Iterator[None]:
    """pytest's ``__main__`` before a module's fixtures start (a module-scoped dask cluster)."""
    _put_back_main()
    yield
    _put_back_main()


@pytest.fixture(autouse=True)
def _main_module_around_each_test() -> Iterator[None]:
    """Put pytest's ``sys.modules["__main__"]`` back before and after each test.

    Streamlit's AppTest runs the app's pages as ``__main__`` and leaves the last one there (its
    timed fragments may rerun a page after the test has ended); a process started later by
    spawn (dask's ``LocalCluster(processes=True)``, joblib's loky) then re-runs that page
    instead of pytest's entry point, and its workers fail to start ("Nanny failed to start").
    """
    _put_back_main()
    yield
    _put_back_main()
