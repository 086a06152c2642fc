"""Out-of-core training of seed 003's Pegasos path: ``partial_fit`` over a stream of row blocks.

The objective of HSVM / NHSVM is ``lam ||W||^2 + sum_{i=1}^{N} xi_i`` (eq. 3/10, the summed loss
of the paper), which Pegasos minimises as ``lam/N ||W||^2 + mean_i xi_i``
(:class:`~hierlab.methods.nhsvm.sgd.PegasosSGD`). A stream of blocks ``X_1, X_2, ...`` of one
training set of ``N`` rows is the same objective: each call runs the mini-batch steps of one pass
over its block (rows visited in a seeded random order, the step counter, the polynomial-decay
average and the projection radius carried over from the previous call), with the
regularisation ``lam / N`` of the whole set. ``N`` must therefore be known up front
(``n_samples=``; the chunked readers count it in a first, streaming pass). Several passes over
the stream are several epochs; the fitted weights are the running average ``W_bar``, as in
``fit``. The steps are those of ``fit`` on a data set whose epochs visit the blocks one after
the other: the path is stochastic, so it reaches the same optimum, not the same iterates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.params import validate_params
from hierlab.core.solver import Callback, SolverState
from hierlab.methods.base import check_X, warn_ignored
from hierlab.methods.guards import check_width
from hierlab.methods.nhsvm.sgd import PegasosSGD

__all__ = ["PegasosStream", "check_stream_start", "partial_fit_blocks", "stream_step"]


@dataclass
class PegasosStream:
    """What ``partial_fit`` carries from one block to the next.

    Attributes
    ----------
    sgd : PegasosSGD
        Its step counter ``t`` and random generator (the visiting order of each block).
    W, W_bar : ndarray of shape (n_nodes, n_features)
        The last and the averaged iterate (the fitted weights are ``W_bar``).
    n_avg : int
        Averaging steps so far.
    n_samples : int
        ``N``, the rows of the whole training set (the regularisation is ``lam / N``).
    rows_seen : int
        Rows of every block so far (passes included).
    leaf_terminated : bool
        The label space fixed by the first block (multi-label).
    """

    sgd: PegasosSGD
    W: np.ndarray
    W_bar: np.ndarray
    n_avg: int
    n_samples: int
    rows_seen: int = 0
    leaf_terminated: bool = True


def check_stream_start(solver: str, n_samples: Any, n_rows: int) -> int:
    """``N`` of the stream, checked; the solver must be Pegasos (``"auto"`` or ``"pegasos"``).

    Raises
    ------
    ParameterError
        ``solver="bcfw"`` (a batch solver: it needs every row at once), or ``n_samples``
        smaller than the first block. A missing ``n_samples`` is the first block's rows, with a
        warning (scikit-learn's ``partial_fit(X, y)`` takes no ``N``).
    """
    if solver == "bcfw":
        raise ParameterError(
            "partial_fit trains by Pegasos (seed 003's stochastic path); solver='bcfw' needs "
            "every row at once: use fit, or solver='auto'/'pegasos'"
        )
    if n_samples is None:
        warnings.warn(
            f"partial_fit without n_samples: N is taken as this first block's {n_rows} rows. "
            "The objective is lam ||W||^2 + the sum of N losses (eq. 3), so each block is "
            "weighed by lam / N: for a stream of several blocks pass n_samples=N, the rows of "
            "the whole training set (hierlab.io.count_rows counts a file's rows in one pass)",
            UserWarning,
            stacklevel=4,
        )
        return int(n_rows)
    if isinstance(n_samples, bool) or int(n_samples) != n_samples or int(n_samples) < n_rows:
        raise ParameterError(
            f"n_samples must be an integer >= the first block's {n_rows} rows, got {n_samples!r}"
        )
    return int(n_samples)


def stream_step(state: PegasosStream, obj: Any) -> float:
    """One pass of Pegasos over the block of ``obj`` (its ``lam`` already ``lam / N``), in place
    on ``state``; the block's mean loss (before each step, as Pegasos reports it).

    Parameters
    ----------
    state : PegasosStream
    obj : HierarchicalHinge
        The objective on this block.
    """
    if bool(getattr(obj, "leaf_terminated", True)) != state.leaf_terminated:
        raise DataError(
            f"this block's label sets {'are' if state.leaf_terminated else 'are not'} "
            "leaf-terminated unlike the first block's: set label_space= explicitly"
        )
    W, W_bar, n_avg, mean_loss = state.sgd.run_epoch(
        obj, state.W, state.W_bar, state.n_avg, own=True
    )
    state.W, state.W_bar, state.n_avg = W, W_bar, n_avg
    state.rows_seen += int(obj.n_samples)
    return float(mean_loss)


def new_stream(
    sgd: PegasosSGD, shape: tuple[int, int], n_samples: int, leaf_terminated: bool = True
) -> PegasosStream:
    """A fresh stream state for ``sgd``: zero weights (Fortran order: the sparse epochs update
    them in place); Pegasos calibrates its first step on the first block, as in ``fit``."""
    W = np.zeros(shape[::-1]).T
    return PegasosStream(sgd, W, W.copy(order="K"), 0, n_samples, 0, bool(leaf_terminated))


def _start(est: Any, X: Any, y: Any, classes: Any, n_samples: Any) -> Any:
    """First block: the parameters, ``N``, the taxonomy and label encoding, an empty history."""
    warn_ignored(est, validate_params(est))
    X = check_X(X, est, reset=True)
    N = check_stream_start(str(est.solver), n_samples, X.shape[0])
    labels = y if classes is None else classes
    est._encode_fit_labels(labels, len(labels))
    check_width(N, X.shape[1], None, est.taxonomy_.n_nodes)
    est.history_ = pd.DataFrame(columns=["iteration", "elapsed", "upper", "lower", "gap"])
    est.n_iter_ = 0
    est.converged_ = False  # a stream has no stopping test: the caller decides the passes
    return X, N


def partial_fit_blocks(
    est: Any, X: Any, y: Any, classes: Any, n_samples: Any, callbacks: list[Callback]
) -> Any:
    """``partial_fit`` of HSVM / NHSVM: one Pegasos pass over the block ``(X, y)``.

    Parameters
    ----------
    est : HSVMClassifier or NHSVMClassifier
    X : array-like or sparse matrix of shape (n_rows, n_features)
    y : array-like of shape (n_rows,)
    classes : array-like or None
        Every label of the stream (first call; needed when ``est.taxonomy`` is None).
    n_samples : int or None
        ``N`` of the stream (first call).
    callbacks : list of Callback
        Called with one state per block (``upper``: the block's mean loss).

    Returns
    -------
    est
    """
    first = "stream_" not in est.__dict__
    if first:
        X, N = _start(est, X, y, classes, n_samples)
    else:
        X = check_X(X, est, reset=False)
    Y = est._encode(y)
    if not sp.issparse(Y) and classes is None:
        seen = np.unique(np.asarray(y, dtype=object).astype(str))
        est.classes_ = np.union1d(np.asarray(est.classes_).astype(str), seen).astype(object)
    tax = est.taxonomy_
    alpha = est._alpha(tax)
    c = np.ones(tax.n_nodes) if alpha is None else np.sqrt(np.maximum(alpha, 0.0))
    c[0] = 0.0
    obj = est._objective(X, Y, c, alpha)
    if first:
        est._solver_used = "pegasos"
        sgd = est._pegasos()  # the estimator's own Pegasos: step rule, batch size, seed
        sgd.epochs = 1
        est.stream_ = new_stream(sgd, obj.coef_shape, N, bool(obj.leaf_terminated))
    state = est.stream_
    obj.lam = float(est.lam) / state.n_samples  # eq. (3)'s sum over all N rows, as one mean
    loss = stream_step(state, obj)
    _report(est, state, loss, callbacks)
    est._solver_used = "pegasos"
    _set_weights(est, obj, state.W_bar, c, alpha)
    est.solver_, est.algorithm_ = est._what_ran()
    est.algorithm_ += f"; partial_fit over blocks ({state.rows_seen} rows of N = {state.n_samples})"
    return est


def _set_weights(est: Any, obj: Any, W_bar: np.ndarray, c: np.ndarray, alpha: Any) -> None:
    """The fitted attributes from the averaged iterate (copied: the next block moves it);
    ``objective_`` is NaN (a stream never holds the whole training set to evaluate it)."""
    W = np.array(W_bar, order="C")
    est.W_ = W
    est.class_attributes_ = c
    est.coef_ = c[:, None] * W
    if alpha is not None:
        est.alpha_ = np.asarray(alpha)
    est.objective_ = float("nan")
    est.lower_bound_ = float("nan")
    obj.release_data()
    est._objective_model_ = obj


def _report(est: Any, state: PegasosStream, loss: float, callbacks: list[Callback]) -> None:
    """One solver state per block into ``history_`` and to the callbacks."""
    k = int(est.n_iter_) + 1
    st = SolverState(k, 0.0, loss, None, {"rows_seen": state.rows_seen, "steps": state.sgd.t})
    for cb in callbacks:
        cb(st)
    row = pd.DataFrame([st.as_dict()])
    est.history_ = row if est.history_.empty else pd.concat([est.history_, row], ignore_index=True)
    est.n_iter_ = k
