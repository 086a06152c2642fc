"""A stop for a hung case: the fuzz harnesses' only use of the clock.

A case that has not returned after :data:`HANG_STOP` seconds is stuck (an endless loop, an
``open`` blocking on a FIFO), not slow: the slowest case of these harnesses, a 100,000-node
chain, takes about 5 s on a loaded 2-core machine; the others milliseconds. No test passes or
fails on how long a case takes below the stop: how much work a case may do is checked on what
the code counts (rows, columns and nodes against the input's size, solver starts).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["HANG_STOP", "Hang", "hang_stop"]

#: seconds after which a case is declared hung
HANG_STOP = 300


class Hang(Exception):
    """Raised in a case that ran past :data:`HANG_STOP`."""


@contextlib.contextmanager
def hang_stop(seconds: int = HANG_STOP) -> Iterator[None]:
    """Raise :class:`Hang` in the block if it is still running after ``seconds`` (SIGALRM)."""

    def _alarm(signum: int, frame: Any) -> None:
        raise Hang(f"no answer after {seconds} s: hung")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
