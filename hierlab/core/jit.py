"""Optional just-in-time compilation of truly sequential inner loops (numba).

A few algorithms are sequential by nature — dual coordinate descent visits one example at a time
and each step depends on the last. Their numpy form (one vectorised step per example, see
:mod:`hierlab.methods.hr.dual_cd`) is exact but pays Python's overhead per example. When numba is
installed (``pip install 'hierlab[fast]'``), such loops are compiled once per machine (cached)
and run the same arithmetic at machine speed; without it, or with ``HIERLAB_NO_JIT=1`` in the
environment, the numpy form runs. Both forms are tested against each other.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

__all__ = [
    "HAVE_NUMBA",
    "choose",
    "jit_enabled",
    "njit",
    "scalar_cfunc",
    "sparse_row_times",
    "sparse_row_times_py",
    "sparse_row_update",
    "sparse_row_update_py",
]

numba: Any
try:  # pragma: no cover - depends on the environment
    numba = importlib.import_module("numba")
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover
    numba = None
    HAVE_NUMBA = False


def jit_enabled() -> bool:
    """Whether compiled kernels are used: numba is importable and ``HIERLAB_NO_JIT`` is not 1."""
    return HAVE_NUMBA and os.environ.get("HIERLAB_NO_JIT", "") != "1"


def choose(
    compiled: Callable[..., Any] | None, python: Callable[..., Any], use_jit: bool | None
) -> Callable[..., Any]:
    """``compiled`` when it exists and ``use_jit`` (None: :func:`jit_enabled`) asks for it,
    else ``python`` (the same steps)."""
    on = jit_enabled() if use_jit is None else use_jit
    return compiled if on and compiled is not None else python


def njit(fn: Callable[..., Any]) -> Callable[..., Any] | None:
    """``numba.njit(cache=True)`` of ``fn``, or None when numba is not installed."""
    if not HAVE_NUMBA:
        return None
    compiled: Callable[..., Any] = numba.njit(cache=True, nogil=True)(fn)
    return compiled


def scalar_cfunc(fn: Callable[[float], float]) -> Callable[[float], float] | None:
    """``fn`` compiled as a ``float64(float64)`` C callback (cached), or None without numba.

    A kernel that takes such a callback as an argument is compiled once for every callback
    of that signature (its type is the signature, not the function), so one compiled kernel
    serves every loss; a kernel that took a plain ``njit`` function would be compiled again for
    each function, in each process (numba cannot cache it)."""
    if not HAVE_NUMBA:
        return None
    compiled: Callable[[float], float] = numba.cfunc("float64(float64)", cache=True)(fn)
    return compiled


def sparse_row_times_py(
    WT: Any, indptr: Any, indices: Any, data: Any, i: int, out: Any
) -> None:  # pragma: no cover - compiled by numba
    """``out = x_i^T WT`` for row ``i`` of a CSR matrix; ``WT`` of shape (n_features, m)."""
    m = out.shape[0]
    for j in range(m):
        out[j] = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        c = indices[k]
        x = data[k]
        for j in range(m):
            out[j] += x * WT[c, j]


def sparse_row_update_py(
    WT: Any, indptr: Any, indices: Any, data: Any, i: int, v: Any
) -> None:  # pragma: no cover - compiled by numba
    """``WT[cols of row i] += outer(x_i, v)``."""
    m = v.shape[0]
    for k in range(indptr[i], indptr[i + 1]):
        c = indices[k]
        x = data[k]
        for j in range(m):
            WT[c, j] += x * v[j]


#: Building blocks of the kernels (None without numba; the kernels are then never compiled).
sparse_row_times: Any = njit(sparse_row_times_py)
sparse_row_update: Any = njit(sparse_row_update_py)
