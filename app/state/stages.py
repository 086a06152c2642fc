"""The work of a run after its solver, in blocks with its progress reported: the test rows'
predictions (the calibration on the training rows reports from inside ``fit``).

Each block's progress goes to the fit's callbacks as ``on_stage(stage, done, total, elapsed)``
(:func:`hierlab.core.solver.report_stage`), which the jobs panel shows. A stop requested here
does not end the stage: the run needs its predictions to be recorded (the model is kept).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from hierlab.core.solver import report_stage

__all__ = ["EVALUATING", "PREDICTING", "PREDICT_ROWS", "predict_by_block"]

#: the stages reported after the fit
PREDICTING = "predicting the test rows"
EVALUATING = "evaluating the predictions"
#: test rows predicted per block (the progress moves after each)
PREDICT_ROWS = 4000


def predict_by_block(est: Any, X: Any, callbacks: Iterable[Any] = ()) -> np.ndarray:
    """``est.predict(X)`` as an object array, :data:`PREDICT_ROWS` rows at a time, the rows
    done reported to ``callbacks`` after each block.

    Parameters
    ----------
    est : fitted estimator
    X : array-like or sparse matrix of shape (n_samples, n_features)
    callbacks : iterable
        The fit's callbacks (``on_stage``).

    Returns
    -------
    ndarray of object of shape (n_samples,)
    """
    cbs = list(callbacks)
    n = X.shape[0]
    out = np.empty(n, dtype=object)
    t0 = time.perf_counter()
    report_stage(cbs, PREDICTING, 0, n, 0.0)
    for start in range(0, n, PREDICT_ROWS):
        stop = min(n, start + PREDICT_ROWS)
        out[start:stop] = np.asarray(est.predict(X[start:stop]), dtype=object)
        report_stage(cbs, PREDICTING, stop, n, time.perf_counter() - t0)
    report_stage(cbs, EVALUATING, 0, 1, time.perf_counter() - t0)
    return out
