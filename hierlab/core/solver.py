"""The solver contract shared by every method (DESIGN.md, "Solver contract").

A solver is an object whose :meth:`Solver.iterate` is a generator of frozen
:class:`SolverState` records, one per iteration (or per epoch / outer iteration), and whose
:attr:`Solver.coef` is the best iterate seen so far. :func:`solve` drains the generator,
calls the callbacks on each state, stops on the certified gap ``upper - lower <= tol``, on a
state flagged ``converged``, or when a callback asks to stop, and returns a
:class:`SolverResult`.

Stopping on request. A callback that has a ``stop_requested()`` method (a
:class:`~hierlab.core.callbacks.StopFlag`, set from another thread: a Stop button) is polled by
:func:`solve` before each state and, through :meth:`Solver.interrupted`, by solvers inside
their long passes (every few blocks or examples, where a pass can take seconds): the solver
then returns at once, keeping the best iterate of its last reported state.

The clock lives in :func:`solve`: ``SolverState.elapsed`` is the time spent inside the
generator only, so the callbacks' own time (a live plot, a progress bar) is never charged to the
solver.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sklearn.exceptions import ConvergenceWarning

from hierlab.core.exceptions import ConvergenceError, FitStopped, ParameterError

__all__ = [
    "Callback",
    "Solver",
    "SolverChoice",
    "SolverResult",
    "SolverState",
    "choose_solver",
    "report_stage",
    "report_work",
    "solve",
]


@dataclass(frozen=True)
class SolverState:
    """One iteration's report.

    Attributes
    ----------
    iteration : int
        1-based iteration (or epoch) counter.
    elapsed : float
        Seconds spent inside the solver so far (callbacks excluded; stamped by :func:`solve`).
    upper : float
        Best (smallest) objective value seen: an upper bound on the optimum ``J*``.
    lower : float or None
        A certified lower bound on ``J*``, or None where the method has no certificate.
    extra : mapping
        Method-specific numbers (e.g. ``{"kkt": 1e-3}``, ``{"cumulative_loss": 12.0}``).
    converged : bool
        Set by a solver whose own stopping rule (not the gap) is met on this iteration.
    """

    iteration: int
    elapsed: float
    upper: float
    lower: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    converged: bool = False

    @property
    def gap(self) -> float | None:
        """``upper - lower``, or None without a lower bound."""
        if self.lower is None:
            return None
        return self.upper - self.lower

    def as_dict(self) -> dict[str, Any]:
        """Flat record for tables: iteration, elapsed, upper, lower, gap, and the extras."""
        out: dict[str, Any] = {
            "iteration": self.iteration,
            "elapsed": self.elapsed,
            "upper": self.upper,
            "lower": self.lower,
            "gap": self.gap,
        }
        for k, v in self.extra.items():
            if isinstance(v, int | float | str | bool) or v is None:
                out[k] = v
        return out


@runtime_checkable
class Callback(Protocol):
    """Called with every :class:`SolverState`; returning True asks the solver to stop.

    A callback may also define ``on_work(done, total, elapsed)`` (:func:`report_work`: fits
    without solver states), ``on_pass(passes, elapsed)`` (inside a long pass, see
    :meth:`Solver.within_pass`), ``on_stage(stage, done, total, elapsed)`` (the work after
    the solver, :func:`report_stage`), ``on_start(info)``, called once before the first state with a
    dict of the solver's limits (``solver``, ``max_iter``, ``max_time``, ``tol``, ``rtol``,
    ``budget``: the estimator parameter that caps the passes), and ``on_end(result)``, called
    once with the :class:`SolverResult`.
    """

    def __call__(self, state: SolverState) -> bool | None: ...


class Solver(ABC):
    """Base class of the solvers.

    Subclasses implement :meth:`iterate` and keep :attr:`coef` (the best iterate so far) up to
    date before each ``yield``.
    """

    coef: Any = None
    #: True where :attr:`coef` is formed on access (copies of the model: Hieron's prototypes
    #: and their average): :func:`solve` then leaves ``SolverResult.coef`` None instead of
    #: forming it once more at the peak of the fit; ask the solver when it is wanted
    coef_on_request: bool = False
    #: which iterate :attr:`coef` holds: ``"best"``, the one that gave ``upper`` (RDA, BCFW),
    #: or ``"last"``, the last pass's (dual coordinate descent)
    keeps: str = "best"

    @abstractmethod
    def iterate(self, objective: Any) -> Iterator[SolverState]:
        """Yield one :class:`SolverState` per iteration until the solver's own limit."""

    def interrupted(self) -> bool:
        """True once a stop was requested (:func:`solve` installs the check of its callbacks'
        ``stop_requested()``): a solver checks it inside a long pass and returns, keeping
        :attr:`coef` as of its last reported state. Cheap: a few attribute reads."""
        return False

    def within_pass(self, passes: float, step: str | None = None) -> bool:
        """Report how far the pass under way has gone and tell whether a stop was requested.

        A solver whose passes take seconds calls it every fraction of a second inside them
        (:func:`solve` installs a version that calls each callback's ``on_pass(passes,
        elapsed)`` with the solver's own clock, with ``step=step`` where the callback takes
        it, then polls the stop request as :meth:`interrupted` does).

        Parameters
        ----------
        passes : float
            The pass counter with its fraction: 6.4 is 40% into the seventh pass.
        step : str, optional
            What the solver does after the pass counted by ``passes`` when it is no pass
            (``"certificate 40%"``: the bounds of that pass's iterate).

        Returns
        -------
        bool
            True once a stop was requested.
        """
        return self.interrupted()


@dataclass(frozen=True)
class SolverChoice:
    """One row of a family's solver table ``{name: SolverChoice}``.

    An estimator's ``solver`` parameter names a row of its family's table (the parameter's
    choices are the table's keys); the estimator builds and describes the solver through the
    row, so a new solver for a family is one row, never a branch in each estimator.

    Attributes
    ----------
    build : callable
        ``build(estimator, *args) -> Solver``: the solver configured from the estimator's
        parameters (``args``: what the family's estimators hand over, e.g. a starting point).
    describe : callable
        ``describe(estimator) -> str``: what ran, in words (the estimator's ``algorithm_``).
    row_span : bool, default False
        The solver's iterates stay in the span of the training rows (each step adds rows of
        ``X`` mixed over the nodes, from ``W = 0``): on sparse data it may run on the used
        columns only, with the same iterates.
    certified : bool, default True
        The solver reports a lower bound, so the fit stops at a certified gap; False for a
        stochastic solver that reports its objective only.
    """

    build: Callable[..., Solver]
    describe: Callable[[Any], str]
    row_span: bool = False
    certified: bool = True


def choose_solver(table: Mapping[str, Any], name: str, where: str = "solver") -> Any:
    """``table[name]``, or a :class:`~hierlab.core.exceptions.ParameterError` naming the
    table's keys (``where``: the parameter's name in the message)."""
    try:
        return table[name]
    except KeyError:
        raise ParameterError(f"{where} must be one of {sorted(table)}, got {name!r}") from None


@dataclass
class SolverResult:
    """What :func:`solve` returns.

    Attributes
    ----------
    coef : Any
        The best iterate (for RDA: the one that gave ``upper``); None for a solver whose
        ``coef_on_request`` is set (read its ``coef``).
    history : list of SolverState
        Every state the solver yielded.
    converged : bool
        True when the gap closed to the tolerance or the solver flagged convergence.
    stop_reason : str
        ``"gap"``, ``"converged"``, ``"callback"`` (a callback returned True, or a stop was
        requested) or ``"max_iter"``.
    keeps : {"best", "last"}
        Which iterate ``coef`` is (the solver's :attr:`Solver.keeps`).
    """

    coef: Any
    history: list[SolverState]
    converged: bool
    stop_reason: str = "max_iter"
    keeps: str = "best"

    @property
    def kept(self) -> SolverState | None:
        """The state whose iterate the solver kept (``keeps``): the first exact state
        (``exact`` extra not False) reaching the best ``upper``, or the last exact state;
        None without states."""
        exact = [s for s in self.history if s.extra.get("exact", True) is not False]
        if not exact:
            return None
        if self.keeps == "last":
            return exact[-1]
        best = min(s.upper for s in exact)
        return next(s for s in exact if s.upper == best)

    @property
    def n_iter(self) -> int:
        """Number of iterations run."""
        return self.history[-1].iteration if self.history else 0

    @property
    def final(self) -> SolverState | None:
        """The last state, or None when the solver yielded nothing."""
        return self.history[-1] if self.history else None


def gap_closed(state: SolverState, tol: float, rtol: float = 0.0) -> bool:
    """True when ``upper - lower <= max(tol, rtol * |upper|)``.

    False without a lower bound, and False while the solver reports that its best point is still
    its starting point (``state.extra["at_start"]``): a method is never "converged" at the point
    it started from (seed 000 at ``C = 1/N``: ``w = 0`` lies within 0.2% of the optimum).
    """
    if state.lower is None or state.extra.get("at_start", False):
        return False
    return state.upper - state.lower <= max(tol, rtol * abs(state.upper))


def solve(
    solver: Solver,
    objective: Any = None,
    callbacks: Iterable[Callback] = (),
    tol: float = 0.0,
    rtol: float = 0.0,
    warn: bool = True,
    budget: str = "max_iter",
) -> SolverResult:
    """Drain ``solver.iterate(objective)``, run the callbacks, stop on the gap or on request.

    Parameters
    ----------
    solver : Solver
        The solver, configured with its own iteration limits.
    objective : Any
        What the solver minimises (an ``Objective`` or method-specific data).
    callbacks : iterable of Callback
        Each gets every state; any returning True stops the solver after that state.
    tol, rtol : float
        Stop when ``upper - lower <= max(tol, rtol * |upper|)``.
    warn : bool, default True
        Emit a ``ConvergenceWarning`` quoting the gap when the solver stops unconverged.
    budget : str, default "max_iter"
        The estimator parameter that caps the iterations, named by that warning.

    Returns
    -------
    SolverResult

    Raises
    ------
    ConvergenceError
        When a state reports a non-finite ``upper`` (divergence, NaN in the data).
    FitStopped
        When a stop was requested (a callback's ``stop_requested()``) before the first state.
    """
    cbs = list(callbacks)
    _announce(cbs, solver, tol, rtol, budget)
    probe = _stop_probe(cbs)
    clock = _Clock()
    if probe is not None:
        solver.interrupted = probe  # type: ignore[method-assign]
    solver.within_pass = _pass_reporter(cbs, probe, clock)  # type: ignore[method-assign,assignment]
    try:
        history, reason = _drain(solver, objective, cbs, probe, tol, rtol, clock)
    finally:
        if probe is not None:
            del solver.interrupted
        del solver.within_pass
    if reason == "callback" and not history and probe is not None:
        raise FitStopped(
            f"{type(solver).__name__} was stopped before its first state: no iterate to keep"
        )
    converged = reason in ("gap", "converged")
    result = SolverResult(
        coef=None if solver.coef_on_request else solver.coef,
        history=history,
        converged=converged,
        stop_reason=reason,
        keeps=getattr(solver, "keeps", "best"),
    )
    if warn and not converged and reason != "callback" and history:
        message = _unconverged_message(solver, history[-1], tol, rtol, budget)
        warnings.warn(message, ConvergenceWarning, stacklevel=2)
    for cb in cbs:
        on_end = getattr(cb, "on_end", None)
        if callable(on_end):
            on_end(result)
    return result


def report_work(
    callbacks: Iterable[Any],
    done: int,
    total: int,
    elapsed: float,
    cost: tuple[float, float] | None = None,
) -> None:
    """Progress of a fit without solver states (one classifier per node, say): each callback's
    ``on_work(done, total, elapsed)`` is called (with ``cost=cost`` when given and the
    callback takes it), then a requested stop ends the fit.

    Parameters
    ----------
    callbacks : iterable
    done, total : int
        Units of work done (node classifiers fitted) and in all.
    elapsed : float
        Seconds since the work started.
    cost : (float, float), optional
        The work done and in all in a measure the time is about proportional to, where the
        units differ in size (a node's classifier: its rows times its binary problems), for
        the time left.

    Raises
    ------
    FitStopped
        When a callback's ``stop_requested()`` is True (there is no partial model to keep).
    """
    cbs = list(callbacks)
    for cb in cbs:
        on_work = getattr(cb, "on_work", None)
        if callable(on_work):
            with_cost = cost is not None and _takes(on_work, "cost")
            on_work(done, total, elapsed, **({"cost": cost} if with_cost else {}))
    probe = _stop_probe(cbs)
    if probe is not None and probe() and done < total:
        raise FitStopped(f"stopped after {done} of {total} parts of the fit: no model to keep")


@dataclass
class _Clock:
    """The solver's own clock: seconds spent inside its generator (``inside``, up to the last
    state) and when it was last entered (``entered``, a ``perf_counter`` stamp moved forward
    by the time callbacks take inside a pass)."""

    inside: float = 0.0
    entered: float = 0.0

    def now(self) -> float:
        """Solver seconds so far, within the pass under way."""
        return self.inside + time.perf_counter() - self.entered


def _pass_reporter(cbs: list[Any], probe: Any, clock: _Clock) -> Callable[..., bool]:
    """:meth:`Solver.within_pass` as :func:`solve` installs it: each callback's ``on_pass(
    passes, elapsed[, step])``, then the stop request; the callbacks' time is not the
    solver's."""
    hooks = [
        (f, _takes(f, "step")) for cb in cbs if callable(f := getattr(cb, "on_pass", None))
    ]

    def within_pass(passes: float, step: str | None = None) -> bool:
        if hooks:
            t0 = time.perf_counter()
            elapsed = clock.now()
            for hook, takes_step in hooks:
                hook(float(passes), elapsed, **({"step": step} if takes_step else {}))
            clock.entered += time.perf_counter() - t0
        return bool(probe()) if probe is not None else False

    return within_pass


def _takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` accepts the keyword argument ``name`` (callbacks written before it)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def report_stage(
    callbacks: Iterable[Any], stage: str, done: int, total: int, elapsed: float
) -> bool:
    """Progress of the work after the solver (calibration, predictions on the test rows):
    each callback's ``on_stage(stage, done, total, elapsed)`` is called; returns whether a
    stop was requested (a callback's ``stop_requested()``), for the caller to end the stage.

    Parameters
    ----------
    callbacks : iterable
    stage : str
        What is done, in words ("calibrating on the training rows").
    done, total : int
        Units done (rows scored) and in all.
    elapsed : float
        Seconds since the stage started.

    Returns
    -------
    bool
    """
    cbs = list(callbacks)
    for cb in cbs:
        on_stage = getattr(cb, "on_stage", None)
        if callable(on_stage):
            on_stage(stage, done, total, elapsed)
    probe = _stop_probe(cbs)
    return bool(probe()) if probe is not None else False


def _drain(
    solver: Solver,
    objective: Any,
    cbs: list[Any],
    probe: Any,
    tol: float,
    rtol: float,
    clock: _Clock,
) -> tuple[list[SolverState], str]:
    """Run the solver's generator until its end, the gap, a flagged convergence or a stop;
    the states (``elapsed``: time inside the generator only, on ``clock``) and why it ended."""
    history: list[SolverState] = []
    gen = solver.iterate(objective)
    reason = "max_iter"
    try:
        while True:
            if probe is not None and probe():
                return history, "callback"
            clock.entered = time.perf_counter()
            try:
                state = next(gen)
            except StopIteration:
                # the solver returns inside a pass on a stop request
                return history, "callback" if probe is not None and probe() else reason
            clock.inside = clock.now()
            state = dataclasses.replace(state, elapsed=clock.inside)
            _check_finite(state, solver)
            history.append(state)
            stop = any([cb(state) for cb in cbs])  # a list: every callback sees every state
            if gap_closed(state, tol, rtol):
                return history, "gap"
            if state.converged:
                return history, "converged"
            if stop:
                return history, "callback"
    finally:
        close = getattr(gen, "close", None)
        if callable(close):
            close()


def _announce(cbs: list[Any], solver: Solver, tol: float, rtol: float, budget: str) -> None:
    """Call each callback's ``on_start`` with the solver's limits (its own ``max_iter`` and
    ``max_time``, as resolved by the estimator)."""
    info: dict[str, Any] | None = None
    for cb in cbs:
        on_start = getattr(cb, "on_start", None)
        if not callable(on_start):
            continue
        if info is None:
            info = {
                "solver": solver,
                "max_iter": getattr(solver, "max_iter", None),
                "max_time": getattr(solver, "max_time", None),
                "tol": tol,
                "rtol": rtol,
                "budget": budget,
            }
        on_start(dict(info))


def _stop_probe(cbs: list[Any]) -> Any:
    """``probe() -> bool``: whether any callback's ``stop_requested()`` is True; None when no
    callback has one."""
    checks = [cb.stop_requested for cb in cbs if callable(getattr(cb, "stop_requested", None))]
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return lambda: any(check() for check in checks)


def _check_finite(state: SolverState, solver: Solver) -> None:
    """Raise :class:`ConvergenceError` when ``upper`` is not finite or ``lower`` is NaN."""
    if math.isfinite(state.upper) and (state.lower is None or not math.isnan(state.lower)):
        return
    what = (
        f"objective {state.upper!r}"
        if not math.isfinite(state.upper)
        else f"lower bound {state.lower!r}"
    )
    raise ConvergenceError(
        f"{type(solver).__name__} diverged at iteration {state.iteration}: {what}. "
        "Check the data for NaN/Inf or very large values, or lower C."
    )


def _unconverged_message(
    solver: Solver, last: SolverState, tol: float, rtol: float, budget: str = "max_iter"
) -> str:
    """The warning text for a solver that ran out of iterations, quoting its gap and ``budget``."""
    if last.lower is not None:
        return (
            f"{type(solver).__name__} stopped after {last.iteration} iterations without "
            f"closing the gap: upper - lower = {last.gap:.3g} "
            f"(tol {max(tol, rtol * abs(last.upper)):.3g})"
            + ("; its best point is still the starting point" if last.extra.get("at_start") else "")
            + f". Raise {budget} or loosen tol."
        )
    return (
        f"{type(solver).__name__} stopped after {last.iteration} iterations before its "
        f"convergence test held. Raise {budget} or loosen tol."
    )
