"""One way to show an error: a readable ``st.error``, never a traceback."""

from __future__ import annotations

import logging

import streamlit as st

from hierlab.core.exceptions import HierlabError

__all__ = ["show_error"]

_log = logging.getLogger("hierlab.app")


def show_error(exc: BaseException, what: str | None = None) -> None:
    """Show ``exc`` as a readable message: no traceback, no exception type name.

    hierlab's own errors are shown verbatim (they name the file and the line, column, node or
    member, and what to do). Other errors of bad input (``ValueError``, ``TypeError``, ...)
    show their message; anything else a sentence, its details going to the server log.

    Parameters
    ----------
    exc : BaseException
    what : str, optional
        What was being done ("Reading the upload"), prefixed to the message.
    """
    prefix = f"{what}: " if what else ""
    if isinstance(exc, HierlabError):
        st.error(prefix + str(exc))
    elif isinstance(exc, ValueError | TypeError | KeyError | IndexError) and str(exc).strip():
        st.error(prefix + str(exc).strip("'\""))
    else:
        _log.exception("unexpected error in the app", exc_info=exc)
        st.error(
            f"{prefix}hierlab could not finish this step (out of memory or an internal "
            "problem; the details are in the server log). Earlier data sets and runs are kept."
        )
