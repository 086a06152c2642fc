"""Solver starts counted: the work budget of the liblinear-scale tests, instead of a clock.

liblinear spins, uninterruptibly, on features of huge magnitude; the one-vs-rest baselines'
global coordinate descent is liblinear's dual CD on every leaf at once. A fit that must refuse
such features must do so before any of these solvers starts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core import limits

__all__ = ["counted_solver_starts", "magnitude"]


def magnitude(X: Any) -> float:
    """``max |x|`` over the stored values of ``X`` (0 for an empty matrix)."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.abs(values).max(initial=0.0))


@contextlib.contextmanager
def counted_solver_starts() -> Iterator[list[tuple[str, float]]]:
    """Count every start of liblinear's solver or of the one-vs-rest baselines' global CD in
    the block, as ``(solver, max |x| of the problem it was handed)``.

    A problem beyond ``max_abs_feature_liblinear`` is counted and not solved (it would spin):
    an ``AssertionError`` names it.
    """
    from sklearn.svm import _liblinear

    from hierlab.methods.hr.global_cd import GlobalDualCD
    from hierlab.methods.hr.global_lr import GlobalLogisticCD

    calls: list[tuple[str, float]] = []

    def count(who: str, X: Any) -> None:
        calls.append((who, magnitude(X)))
        if calls[-1][1] > limits.current().max_abs_feature_liblinear:
            raise AssertionError(f"{who} was handed features of magnitude {calls[-1][1]:.3g}")

    train = _liblinear.train_wrap

    def counted_train(X: Any, *args: Any, **kw: Any) -> Any:
        count("liblinear", X)
        return train(X, *args, **kw)

    saved: list[tuple[Any, str, Any]] = [(_liblinear, "train_wrap", train)]
    _liblinear.train_wrap = counted_train
    for cls in (GlobalDualCD, GlobalLogisticCD):
        iterate = cls.__dict__["iterate"]

        def counted_iterate(self: Any, objective: Any, iterate: Any = iterate) -> Any:
            count(type(self).__name__, objective.X)
            return iterate(self, objective)

        saved.append((cls, "iterate", iterate))
        setattr(cls, "iterate", counted_iterate)  # noqa: B010
    try:
        yield calls
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
