"""The error family of hierlab.

Every error hierlab raises on bad input derives from :class:`HierlabError` and says what is
wrong, where (file, line, node, column) and, where there is one, what to do about it. The
subclasses also derive from the built-in exception a Python or scikit-learn user would expect
(``ValueError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = [
    "ConvergenceError",
    "DataError",
    "FitStopped",
    "HierlabError",
    "HierlabWarning",
    "IgnoredParameterWarning",
    "ModelFileError",
    "ParameterError",
    "TaxonomyError",
]


class HierlabError(Exception):
    """Base class of every error hierlab raises on purpose."""


class TaxonomyError(HierlabError, ValueError):
    """An invalid taxonomy: cycle, self loop, several roots, unknown parent, duplicate edge, ...

    ``TaxonomyError(message, node=None)``: what is wrong and what to do, and the offending
    node when there is one (kept as ``.node``).
    """

    def __init__(self, message: str, node: str | None = None) -> None:
        super().__init__(message)
        self.node = node


class DataError(HierlabError, ValueError):
    """A data file or array that cannot be read or does not fit the taxonomy.

    Parameters
    ----------
    message : str
        What is wrong and what to do.
    path : str, optional
        The file, when there is one.
    line : int, optional
        The 1-based line number in the file, when known.
    column : str, optional
        The column, when known.
    """

    def __init__(
        self,
        message: str,
        path: str | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        full = f"{', '.join(where)}: {message}" if where else message
        super().__init__(full)
        self.path = path
        self.line = line
        self.column = column


class ParameterError(HierlabError, ValueError):
    """A method parameter out of its range or of the wrong type."""


class ConvergenceError(HierlabError, RuntimeError):
    """A solver met non-finite values or diverged."""


class FitStopped(HierlabError, RuntimeError):
    """A stop was requested (``StopFlag``) before the solver reported any state: there is no
    iterate to keep."""


class ModelFileError(HierlabError, ValueError):
    """A model file that is foreign, tampered with, of an unknown version, or a pickle."""


class HierlabWarning(UserWarning):
    """Base class of every warning hierlab issues on purpose."""


class IgnoredParameterWarning(HierlabWarning):
    """A parameter was set away from its default but the chosen settings do not use it
    (``averaging="uniform"`` with ``solver="bcfw"``): the message names the parameter, its
    value and the setting that ignores it."""
