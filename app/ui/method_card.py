"""Draw a method card (``hierlab.core.cards``): one call for the Methods and Train pages.

``show_card(name)`` writes the idea, the objective (``st.latex``, one call per line), the
prediction rule, the parameters table, the solver, what the bounds mean and the citation.
``compact=True`` (beside the Train page's widgets) keeps the idea and the objective in view and
folds the rest into an expander.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hierlab.core.cards import MethodCard, MissingCardError, method_card

__all__ = ["params_frame", "show_card"]


def params_frame(card: MethodCard) -> pd.DataFrame:
    """The card's parameters as a table: parameter, default, range, what it does."""
    return pd.DataFrame(
        [
            {
                "parameter": d.name,
                "default": repr(d.default),
                "range": d.range,
                "what it does": d.text,
            }
            for d in card.parameters()
        ],
        columns=["parameter", "default", "range", "what it does"],
    )


def _details(card: MethodCard, key: str) -> None:
    st.markdown("**Prediction**")
    st.latex(card.prediction)
    if card.symbols:
        st.caption(card.symbols)
    params = params_frame(card)
    if len(params):
        st.markdown("**Parameters**")
        st.dataframe(params, hide_index=True, key=f"{key}_params")
    fixed = card.spec.fixed
    if fixed:
        st.caption("Fixed by this entry: " + ", ".join(f"{k}={v!r}" for k, v in fixed.items()))
    st.markdown(f"**Solver.** {card.solver}")
    st.markdown(f"**Bounds.** {card.bounds}")
    st.markdown(card.presets_markdown())
    st.markdown(f"**Citation.** {card.citation}")


def show_card(name: str, compact: bool = False, key: str | None = None) -> MethodCard | None:
    """Draw the card of method ``name``; a message (not an exception) when it has none.

    Parameters
    ----------
    name : str
        A registered method.
    compact : bool, default False
        Idea and objective only, the rest in an expander.
    key : str, optional
        Prefix of the element keys (default ``"card_<name>"``).

    Returns
    -------
    MethodCard or None
    """
    key = key or f"card_{name}"
    try:
        card = method_card(name)
    except MissingCardError as exc:
        st.info(str(exc))
        return None
    if not compact:
        st.subheader(card.title)
    st.caption(f"{card.tags()} · {card.equations}")
    st.markdown(card.idea)
    for line in card.objective_lines():
        st.latex(line)
    if compact:
        with st.expander("Prediction, parameters, solver, bounds, citation"):
            _details(card, key)
    else:
        _details(card, key)
    return card
