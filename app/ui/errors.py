"""One way to show an error: a readable ``st.error``, never a traceback."""

from __future__ import annotations

import logging

import streamlit as st

from hierlab.core.exceptions import HierlabError

__all__ = ["show_error"]

_log = logging.getLogger("hierlab.app")


def show_error(exc: BaseException, what: str | None = None) -> None:
    """Show ``exc`` as a message; hierlab's own errors verbatim, others with their type.

    Parameters
    ----------
    exc : BaseException
    what : str, optional
        What was being done ("Reading the upload"), prefixed to the message.
    """
    prefix = f"{what}: " if what else ""
    if isinstance(exc, HierlabError):
        st.error(prefix + str(exc))
    elif isinstance(exc, ValueError | TypeError | KeyError | IndexError):
        st.error(f"{prefix}{type(exc).__name__}: {exc}")
    else:
        _log.exception("unexpected error in the app", exc_info=exc)
        st.error(f"{prefix}unexpected {type(exc).__name__}: {exc}")
