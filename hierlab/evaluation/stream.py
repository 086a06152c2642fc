"""Training and scoring on a file larger than memory, block by block.

:func:`fit_blocks` makes ``passes`` passes of an estimator's ``partial_fit`` over the blocks of a
:class:`~hierlab.io.chunks.ChunkedFile` (one block in memory at a time); :func:`predict_blocks`
predicts a file block by block, keeping only the labels. The estimators that learn this way are
the online or stochastic ones: the Hieron family (seed 002, Algorithm 1 is an online algorithm:
blocks in the file's order give the fit of the whole file in that order: the same updates,
equal to the bit to ``partial_fit`` on the same blocks of rows, and to rounding (1e-16) on other
block boundaries, where a block's sums of scores are formed in another order) and HSVM / NHSVM
by Pegasos (seed 003; stochastic: the same optimum, not the same iterates).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from hierlab.core.exceptions import ParameterError

__all__ = ["default_passes", "fit_blocks", "predict_blocks"]


def default_passes(estimator: Any) -> int:
    """The passes ``fit`` would make: the estimator's ``epochs`` (Pegasos' default for None)."""
    from hierlab.methods.nhsvm.estimators import PEGASOS_EPOCHS

    epochs = estimator.get_params().get("epochs")
    return int(epochs) if epochs is not None else int(PEGASOS_EPOCHS)


def fit_blocks(
    estimator: Any,
    blocks: Any,
    passes: int | None = None,
    progress: Callable[[int, int, int], None] | None = None,
) -> Any:
    """Train ``estimator`` by ``partial_fit`` over ``blocks``, ``passes`` times.

    Parameters
    ----------
    estimator : HierarchicalClassifier with ``partial_fit``
    blocks : ChunkedFile
        Re-iterable blocks of one training file (``n_samples``, ``classes``, ``taxonomy``).
    passes : int, optional
        Passes over the file (default :func:`default_passes`).
    progress : callable, optional
        ``progress(pass, block, n_blocks)`` after each block.

    Returns
    -------
    estimator

    Raises
    ------
    ParameterError
        The method has no ``partial_fit`` (a batch algorithm), or ``passes < 1``.
    """
    if not callable(getattr(estimator, "partial_fit", None)):
        raise ParameterError(
            f"{type(estimator).__name__} learns from the whole training set at once (no "
            "partial_fit): a file read in blocks trains hieron, hieron-batch, hieron-flat, "
            "hieron-greedy, hsvm, nhsvm or nhsvm13"
        )
    n_passes = default_passes(estimator) if passes is None else int(passes)
    if n_passes < 1:
        raise ParameterError(f"passes must be >= 1, got {passes!r}")
    takes = inspect.signature(estimator.partial_fit).parameters
    extra = {"n_samples": blocks.n_samples} if "n_samples" in takes else {}
    for p in range(1, n_passes + 1):
        for k, block in enumerate(blocks):
            estimator.partial_fit(block.X, block.y, **extra)
            if progress is not None:
                progress(p, k + 1, len(blocks))
    return estimator


def predict_blocks(estimator: Any, blocks: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(y_true, y_pred)`` over every block of ``blocks`` (only the labels are kept)."""
    y_true: list[np.ndarray] = []
    y_pred: list[np.ndarray] = []
    for block in blocks:
        y_true.append(np.asarray(block.y, dtype=object))
        y_pred.append(np.asarray(estimator.predict(block.X), dtype=object))
    return np.concatenate(y_true), np.concatenate(y_pred)
