"""Serve the app with a warm start: ``python -m app.serve [streamlit options]`` (``make run``).

``streamlit run app/streamlit_app.py`` executes nothing of the app until the first browser
connects: the first visitor then waits for everything the home page and the first fit need
(``hierlab`` with scikit-learn, SciPy, numba and plotly: 1.5 to 2.5 s), the default data set
(0.4 s) and the first fit's compiled kernels loaded from numba's cache (0.3 s), one after the
other, while the server sat idle as the browser loaded Streamlit's page.

This launcher starts the same server (``streamlit run app/streamlit_app.py`` with the options
given, through Streamlit's own command line) and, in a daemon thread of the server's process,
:func:`warm` does that work ahead of the first visit. Nothing of it is skipped or cached
differently later: the session's script imports the very same modules (already in
``sys.modules``), finds the default data set in ``st.cache_data`` under the key it would have
computed, and calls kernels numba has already loaded. A failure while warming is logged and
changes nothing: the session then does the work itself, as with ``streamlit run``.

BLAS runs on one thread in the server unless the environment says otherwise
(``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS``): the fits' hot loops are
compiled single-threaded kernels and sparse products, and between its calls a multi-threaded
OpenBLAS spins on the other cores, taking them from the browser and the background comparisons.
Measured with ``python -m hierlab.benchmarks.newcomer --repeat 3`` on 2 cores: cold start -> first
trained chart 10.24 s (server CPU 12.3 s) with threaded BLAS, 9.33 s (8.5 s) with one thread.

The warm-up's tiny fit stops at its first certified gap (``tol`` huge), so it emits no
warning: ``warnings.catch_warnings`` (the app records a fit's warnings with it) is not
thread-safe, and a warning raised here during a visitor's fit could land in that run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["SCRIPT", "WARM_ROWS", "main", "warm", "warm_fit", "warm_in_background"]

#: the app's main script
SCRIPT = Path(__file__).resolve().with_name("streamlit_app.py")
#: rows of the default data set the warm-up fit trains on (enough to call every kernel)
WARM_ROWS = 64


def _log(message: str) -> None:
    from streamlit.logger import get_logger

    get_logger(__name__).info(message)


def warm(rows: int = WARM_ROWS, runtime_wait: float = 0.0) -> dict[str, float]:
    """Do what the first visit needs before it comes: imports, default data set, kernels.

    Parameters
    ----------
    rows : int
        Training rows of the warm-up fit (the default method with the home page's settings, on
        the first ``rows`` rows of the default data set, so the kernels are the same).
    runtime_wait : float
        Seconds to wait, after the imports, for Streamlit's runtime (the server starting in the
        main thread): ``st.cache_data`` stores into the runtime's cache only once it exists.

    Returns
    -------
    dict of str -> float
        Seconds spent per stage: ``imports``, ``data``, ``fit`` (absent when a stage had
        nothing to do: no default data set or no method).
    """
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    # what the main script and the home page import (the pages run as scripts, their
    # modules are imported once per process)
    from streamlit import runtime

    import app.state
    import app.ui.errors
    import app.ui.live
    import app.ui.training

    times["imports"] = time.perf_counter() - t0
    deadline = time.monotonic() + runtime_wait
    while not runtime.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    t0 = time.perf_counter()
    choices = [b for b in app.state.builtin_choices() if b.kind != "real"]
    if not choices:
        return times
    entry = app.state.load_builtin(choices[0].key)  # st.cache_data: the session's call hits it
    times["data"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    if warm_fit(entry, rows) is None:
        return times
    times["fit"] = time.perf_counter() - t0
    return times


def warm_fit(entry: Any, rows: int = WARM_ROWS) -> Any:
    """Fit the home page's first run (default method, its ``fast`` preset) on the first ``rows``
    rows of ``entry``, stopping at the first certified gap (``tol`` huge); predict.

    Parameters
    ----------
    entry : app.state.DatasetEntry
        The default data set.
    rows : int

    Returns
    -------
    HierarchicalClassifier or None
        The fitted estimator (None when no method accepts the data set).
    """
    import app.state
    import hierlab

    tax = entry.taxonomy
    method = app.state.default_method(app.state.compatible_methods(entry.train, tax))
    if method is None:
        return None
    spec = hierlab.get_method(method)
    params = {**app.state.suggested_params(method, tax), **spec.presets.get("fast", {})}
    if "tol" in params:
        params["tol"] = 1e300  # one iteration, certified: no ConvergenceWarning
    train = entry.train
    n = min(rows, train.n_samples)
    est = hierlab.make_estimator(method, taxonomy=tax, **params)
    est.fit(train.X[:n], train.y[:n])
    est.predict(entry.test.X[:n])
    return est


def _warm_logged() -> None:
    try:
        times = warm(runtime_wait=60.0)
    except Exception as exc:  # the session does the work itself
        _log(f"warm start failed ({type(exc).__name__}: {exc}); the first visit does it")
        return
    _log("warm start: " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()))


def warm_in_background() -> threading.Thread:
    """Start :func:`warm` in a daemon thread; returns the thread."""
    thread = threading.Thread(target=_warm_logged, name="hierlab-warm", daemon=True)
    thread.start()
    return thread


def _one_blas_thread() -> None:
    """BLAS on one thread in this process unless a thread count is set in the environment."""
    if any(os.environ.get(v) for v in _BLAS_ENV):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read when OpenBLAS loads (with numpy)
    if "numpy" in sys.modules:  # already loaded: limit it in place
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")


#: environment variables by which a person sets BLAS's threads (then the server keeps them)
_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def main(argv: list[str] | None = None) -> Any:
    """``streamlit run app/streamlit_app.py <argv>`` with :func:`warm` in the background."""
    root = str(SCRIPT.parents[1])
    if root not in sys.path:
        sys.path.insert(0, root)
    from streamlit.web import cli

    _one_blas_thread()
    warm_in_background()
    args = list(sys.argv[1:] if argv is None else argv)
    return cli.main(["run", str(SCRIPT), *args], prog_name="streamlit")


if __name__ == "__main__":
    main()
