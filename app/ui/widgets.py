"""Widgets generated from the registry's parameter schemas (``hierlab.core.registry``).

One widget per :class:`~hierlab.core.registry.Param`: a select box for choices, a checkbox
for booleans, a slider for small integer ranges, a number input otherwise (log-scale floats get
a ``%g`` format). Nothing here is method-specific: a newly registered method gets its widgets.
"""

from __future__ import annotations

import math
from typing import Any

import streamlit as st

from hierlab.core.registry import MethodSpec, Param

__all__ = ["param_widget", "param_widgets", "widget_key"]


def widget_key(method: str, param: str, prefix: str = "param") -> str:
    """The session-state key of a parameter widget."""
    return f"{prefix}:{method}:{param}"


def param_widget(p: Param, key: str, value: Any = None) -> Any:
    """Draw the widget for ``p`` and return its value.

    Parameters
    ----------
    p : Param
    key : str
        Widget key (unique per method and parameter).
    value : Any, optional
        Initial value (default: ``p.default``).
    """
    init = p.default if value is None else value
    label = p.name
    helptext = p.help or None
    if p.choices is not None:
        options = list(p.choices)
        index = options.index(init) if init in options else 0
        return st.selectbox(label, options, index=index, key=key, help=helptext)
    if p.type == "bool":
        return st.checkbox(label, value=bool(init), key=key, help=helptext)
    if p.type == "int":
        low = None if p.low is None else math.ceil(p.low)
        high = None if p.high is None else math.floor(p.high)
        if (
            low is not None
            and high is not None
            and high - low <= 50
            and init is not None
            and not p.log
        ):
            return st.slider(label, low, high, int(init), key=key, help=helptext)
        return st.number_input(
            label,
            min_value=low,
            max_value=high,
            value=None if init is None else int(init),
            step=1,
            key=key,
            help=helptext,
        )
    if p.type == "float":
        return st.number_input(
            label,
            min_value=None if p.low is None else float(p.low),
            max_value=None if p.high is None else float(p.high),
            value=None if init is None else float(init),
            step=_float_step(init, p),
            format="%g",
            key=key,
            help=helptext,
        )
    return st.text_input(label, value="" if init is None else str(init), key=key, help=helptext)


def _float_step(init: Any, p: Param) -> float:
    if p.log and init:
        return float(10 ** math.floor(math.log10(abs(float(init)))))
    if p.low is not None and p.high is not None and p.high > p.low:
        return float(p.high - p.low) / 100.0
    return 0.1


def param_widgets(
    spec: MethodSpec, values: dict[str, Any] | None = None, columns: int = 2, prefix: str = "param"
) -> dict[str, Any]:
    """Draw every parameter of ``spec`` in ``columns`` columns; return ``{name: value}``.

    Parameters
    ----------
    spec : MethodSpec
    values : dict, optional
        Initial values (e.g. a previous run's parameters).
    columns : int
    prefix : str
        Key prefix, so two forms of the same method can coexist.
    """
    values = values or {}
    out: dict[str, Any] = {}
    if not spec.params:
        st.caption("This method has no tunable parameter.")
        return out
    cols = st.columns(columns)
    for i, p in enumerate(spec.params):
        with cols[i % columns]:
            out[p.name] = param_widget(p, widget_key(spec.name, p.name, prefix), values.get(p.name))
    return out
