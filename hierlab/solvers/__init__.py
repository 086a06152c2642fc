"""Solvers on the DESIGN.md contract: ``iterate`` yields states, :func:`solve` drains them."""

from hierlab.core.solver import Callback, Solver, SolverResult, SolverState, gap_closed, solve

__all__ = ["Callback", "Solver", "SolverResult", "SolverState", "gap_closed", "solve"]
