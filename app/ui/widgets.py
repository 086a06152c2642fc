"""Widgets generated from the parameter declarations (:class:`hierlab.core.params.Param`).

One widget per parameter, labelled with the paper's symbol (``C``, ``alpha``, ``tau``); its help
names the constructor argument and says what it does and which values are allowed. A select box
for choices, a checkbox for booleans, a slider for small integer ranges, an integer input for
seeds (empty = None), a number input otherwise (``%g`` format, log-scale steps for log
parameters). An open bound (``C > 0``) is never offered as a value: the input has no minimum
there and :func:`param_errors` checks the values with ``Param.validate``. Nothing here is
method-specific: a newly registered method gets its widgets.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import streamlit as st

from hierlab import ParameterError
from hierlab.core.params import Param
from hierlab.core.registry import MethodSpec

__all__ = ["param_errors", "param_help", "param_widget", "param_widgets", "widget_key"]


def widget_key(method: str, param: str, prefix: str = "param") -> str:
    """The session-state key of a parameter widget."""
    return f"{prefix}:{method}:{param}"


def param_help(p: Param) -> str:
    """The widget's help: the argument's name, its help line and note, the allowed values."""
    text = ". ".join(s.strip().rstrip(".") for s in (p.help, p.note) if s.strip())
    empty = "".join(f" Leave the box empty for {w!r}." for w in p.words[:1])
    return f"`{p.name}`" + (f": {text}." if text else "") + f"  \nAllowed: {p.range_text()}.{empty}"


def _int_bounds(p: Param) -> tuple[int | None, int | None]:
    """The integer range of ``p`` (an open bound moves to the next integer inside)."""
    low = high = None
    if p.type == "seed":
        low = 0
    if p.low is not None and math.isfinite(p.low):
        low = math.floor(p.low) + 1 if p.low_open else math.ceil(p.low)
    if p.high is not None and math.isfinite(p.high):
        high = math.ceil(p.high) - 1 if p.high_open else math.floor(p.high)
    return low, high


def _closed(bound: float | None, is_open: bool) -> float | None:
    """A bound a number input may offer: finite and inclusive, else no limit."""
    return float(bound) if bound is not None and math.isfinite(bound) and not is_open else None


def _float_step(init: Any, p: Param) -> float:
    if p.log and init:
        return float(10 ** math.floor(math.log10(abs(float(init)))))
    low, high = p.low, p.high
    if low is not None and high is not None and math.isfinite(high - low) and high > low:
        return float(high - low) / 100.0
    return 0.1


def _int_widget(p: Param, init: Any, **kw: Any) -> Any:
    low, high = _int_bounds(p)
    value = int(init) if isinstance(init, numbers.Integral) and not isinstance(init, bool) else None
    if low is not None and high is not None and high - low <= 50 and value is not None:
        if not p.log and not p.accepts_none:
            return st.slider(p.label, low, high, value, **kw)
    return st.number_input(p.label, min_value=low, max_value=high, value=value, step=1, **kw)


def _float_widget(p: Param, init: Any, **kw: Any) -> Any:
    """A number box; for a parameter that also takes a word (``alpha="auto"``) an empty box
    means the word."""
    low, high = _closed(p.low, p.low_open), _closed(p.high, p.high_open)
    value = None if init is None or isinstance(init, str) else float(init)
    got = st.number_input(
        p.label,
        min_value=low,
        max_value=high,
        value=value,
        step=_float_step(value, p),
        format="%g",
        **kw,
    )
    return p.words[0] if got is None and p.words else got


def _choice_widget(p: Param, init: Any, **kw: Any) -> Any:
    options = ([None] if p.accepts_none else []) + list(p.choices or ())
    return st.selectbox(
        p.label,
        options,
        index=options.index(init) if init in options else 0,
        format_func=lambda v: "None (automatic)" if v is None else str(v),
        **kw,
    )


def param_widget(p: Param, key: str, value: Any = None) -> Any:
    """Draw the widget for ``p`` and return its value (not validated: see :func:`param_errors`).

    Parameters
    ----------
    p : Param
        Not of type ``"object"`` (no widget can show one).
    key : str
        Widget key (unique per method and parameter).
    value : Any, optional
        Initial value (default: ``p.default``).
    """
    init = p.default if value is None else value
    kw = {"key": key, "help": param_help(p)}
    if p.choices is not None:
        return _choice_widget(p, init, **kw)
    if p.type == "bool":
        return st.checkbox(p.label, value=bool(init), **kw)
    if p.type in ("int", "seed"):
        return _int_widget(p, init, **kw)
    if p.type == "float":
        return _float_widget(p, init, **kw)
    if p.type == "object":
        raise TypeError(f"parameter {p.name!r} holds an object: no widget can show it")
    text = st.text_input(p.label, value="" if init is None else str(init), **kw)
    return None if text == "" and p.accepts_none else text


def param_widgets(
    spec: MethodSpec, values: dict[str, Any] | None = None, columns: int = 2, prefix: str = "param"
) -> dict[str, Any]:
    """Draw every parameter of ``spec`` in ``columns`` columns; return ``{name: value}``.

    Parameters of type ``"object"`` are skipped.

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
    shown = [p for p in spec.params if p.type != "object"]
    if not shown:
        st.caption("This method has no tunable parameter.")
        return {}
    cols = st.columns(columns)
    out: dict[str, Any] = {}
    for i, p in enumerate(shown):
        with cols[i % columns]:
            out[p.name] = param_widget(p, widget_key(spec.name, p.name, prefix), values.get(p.name))
    return out


def param_errors(spec: MethodSpec, values: dict[str, Any]) -> list[str]:
    """What ``Param.validate`` says against the values (an empty list when all are valid)."""
    errors = []
    for p in spec.params:
        if p.name in values:
            try:
                p.validate(values[p.name], spec.name)
            except ParameterError as exc:
                errors.append(str(exc))
    return errors
