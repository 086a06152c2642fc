"""Widgets generated from the parameter declarations (:class:`hierlab.core.params.Param`).

One widget per parameter, labelled as the paper writes it (``C``, ``α``, ``τ``; :attr:`Param.label`,
words where the paper has no symbol: "relative gap tolerance"); its help says what it does and
which values are allowed, with no code name. Only the parameters the chosen settings use are
drawn (``MethodSpec.active_params``); a preset control ("as in the
paper" / "fast", from ``MethodSpec.presets``) and a Reset button sit above them
(:func:`preset_bar`). A select box
for choices, a checkbox for booleans, a slider for small integer ranges, an integer input for
seeds (empty = None), a number input otherwise (``%g`` format, log-scale steps for log
parameters). An open bound (``C > 0``) is never offered as a value: the input has no minimum
there and :func:`param_errors` checks the values with ``Param.validate``. Nothing here is
method-specific: a newly registered method gets its widgets.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import streamlit as st

from hierlab import ParameterError
from hierlab.core.params import Param
from hierlab.core.registry import MethodSpec

__all__ = [
    "DIGITS",
    "NUMBER_FORMAT",
    "PRESET_LABELS",
    "active_params",
    "fmt",
    "number_columns",
    "param_errors",
    "param_help",
    "param_widget",
    "param_widgets",
    "preset_bar",
    "trivial_warning",
    "widget_key",
]

#: significant digits of every figure on screen
DIGITS = 4
#: the printf format of number columns in tables (``st.column_config.NumberColumn``)
NUMBER_FORMAT = f"%.{DIGITS}g"


def fmt(value: Any, digits: int = DIGITS) -> str:
    """A number as the screen shows it: ``digits`` significant digits.

    Integers stay whole; a float rounding to zero at 12 decimals (``9e-15``, a sum of rounding
    errors) is ``0``; below ``1e-4`` scientific with ``digits - 1`` significant digits
    (``1.23e-06``); otherwise ``%.{digits}g`` without an exponent below a million; nan and None
    are ``–``. Anything else is ``str(value)``.
    """
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    x = float(value)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if abs(x) < 5e-13:
        return "0"
    if abs(x) < 1e-4:
        return f"{x:.{max(digits - 2, 0)}e}"
    return f"{x:.{digits}g}"


def number_columns(df: Any, digits: int = DIGITS, **labels: str) -> dict[str, Any]:
    """``column_config`` showing every float column of ``df`` with ``digits`` significant
    digits (``labels``: a column's display name, by column name)."""
    return {
        str(c): st.column_config.NumberColumn(labels.get(str(c), str(c)), format=f"%.{digits}g")
        for c in df.columns
        if getattr(df[c], "dtype", None) is not None and df[c].dtype.kind == "f"
    }


def mean_std_table(summary: Any) -> Any:
    """``"0.7837 ± 0.0007"`` per metric (:func:`fmt`), one row per method, from a table with
    ``method`` and ``<metric>_mean`` / ``<metric>_std`` columns (the CSV keeps the numbers)."""
    import pandas as pd

    means = [c[: -len("_mean")] for c in summary.columns if str(c).endswith("_mean")]
    out = pd.DataFrame({"method": summary["method"]})
    for m in means:
        std = summary.get(f"{m}_std")
        out[m] = [
            fmt(a) + ("" if std is None or pd.isna(b) else f" ± {fmt(b, 2)}")
            for a, b in zip(summary[f"{m}_mean"], std if std is not None else [None] * len(out))
        ]
    return out


#: what the calibration columns mean (under every table of them)
CALIBRATION_NOTE = (
    "ECE: expected calibration error of each example's top-1 confidence (15 equal-width "
    "bins). Brier: multi-class Brier score of each example's distribution over the labels, "
    "summed over the labels and averaged over the examples (0 is perfect, 2 the worst). The "
    "pooled node figures treat every (example, node) pair as a separate yes/no forecast: on "
    "many classes they sit near 0 even for a useless model."
)


def trivial_warning(run: Any) -> None:
    """A visible warning when the run's model is trivial (``Run.trivial`` says why)."""
    reasons = list(getattr(run, "trivial", []) or [])
    if reasons:
        st.warning(
            f"**Trivial model ({run.label}):** " + "; ".join(reasons) + ". Its metrics are "
            "not a result of the method: train longer, with another C, or with the fast "
            "settings.",
            icon=":material/warning:",
        )


def calibration_caption(report: dict[str, Any], calibration: dict[str, Any]) -> str:
    """One line: AU(PRC), the standard ECE and Brier score, the pooled node figures by name,
    and how the probabilities were calibrated."""
    note = report.get("calibration_note") or ""
    return (
        f"AU(PRC) {fmt(report['au_prc'])} (pooled over test example x node) · "
        f"ECE (top-1) {fmt(report['ece'])} · Brier (multi-class) {fmt(report['brier'])} · "
        f"pooled node ECE {fmt(report.get('pooled_node_ece'))}, "
        f"pooled node Brier {fmt(report.get('pooled_node_brier'))} · calibration: "
        f"{calibration.get('method')} ({calibration.get('cv')})" + (f". {note}." if note else "")
    )


def calibration_table(reports: dict[str, dict[str, Any]]) -> Any:
    """One row per run from :func:`hierlab.evaluation.curves.probability_report` results:
    AU(PRC), the standard ECE and Brier score, and the pooled node-pair figures by name."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "run": k,
                "AU(PRC)": v["au_prc"],
                "ECE (top-1)": v["ece"],
                "Brier (multi-class)": v["brier"],
                "pooled node ECE": v.get("pooled_node_ece"),
                "pooled node Brier": v.get("pooled_node_brier"),
            }
            for k, v in reports.items()
        ]
    )


#: how the presets of ``MethodSpec.presets`` are offered, in this order
PRESET_LABELS = {"paper": "as in the paper", "fast": "fast"}


def widget_key(method: str, param: str, prefix: str = "param") -> str:
    """The session-state key of a parameter widget."""
    return f"{prefix}:{method}:{param}"


def param_help(p: Param) -> str:
    """The widget's help: its help line and note, the allowed values (no code name)."""
    text = ". ".join(s.strip().rstrip(".") for s in (p.help, p.note) if s.strip())
    text = text[:1].upper() + text[1:]
    empty = "".join(f" Leave the box empty for {w!r}." for w in p.words[:1])
    if p.accepts_none and p.type in ("float", "int", "seed") and not p.words:
        empty += f" Leave the box empty for {p.none_text}."
    return (f"{text}." if text else "") + f"  \nAllowed: {p.range_text()}.{empty}"


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
    return st.number_input(
        p.label,
        min_value=low,
        max_value=high,
        value=value,
        step=1,
        placeholder=p.none_text if p.accepts_none else None,
        **kw,
    )


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
        placeholder=p.words[0] if p.words else (p.none_text if p.accepts_none else None),
        **kw,
    )
    return p.words[0] if got is None and p.words else got


def _choice_widget(p: Param, init: Any, **kw: Any) -> Any:
    options = ([None] if p.accepts_none else []) + list(p.choices or ())
    return st.selectbox(
        p.label,
        options,
        index=options.index(init) if init in options else 0,
        format_func=p.choice_text,
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
    kw: dict[str, Any] = {"key": key, "help": param_help(p)}
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


def active_params(spec: MethodSpec, values: dict[str, Any]) -> tuple[Param, ...]:
    """The parameters the chosen settings use (``spec.active_params(values)``), less those no
    widget can show."""
    return tuple(p for p in spec.active_params(values) if p.type != "object")


def _widget_value(p: Param, value: Any) -> Any:
    """The value a widget of ``p`` holds for the parameter value ``value`` (a word such as
    ``alpha="auto"`` is an empty number box)."""
    if isinstance(value, str) and p.type in ("float", "int") and value in p.words:
        return None
    return value


def preset_bar(
    spec: MethodSpec,
    base: dict[str, Any] | None = None,
    prefix: str = "param",
    resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The preset control ("as in the paper" / "fast") and a Reset button; returns the values
    the widgets start from (``base`` overlaid with the chosen preset).

    Choosing a preset or clicking Reset writes the preset's values into the widgets. Without
    presets (``spec.presets`` empty), or presets that all set the same values (the defaults are
    the paper's), only Reset is drawn, with a caption in the second case.

    Parameters
    ----------
    spec : MethodSpec
    base : dict, optional
        Starting values (default: the declared defaults).
    prefix : str
        Key prefix, as for :func:`param_widgets`.
    resolve : callable, optional
        Maps the chosen values to what the widgets show (a word such as ``alpha="paper"`` as
        the number it resolves to on the data's taxonomy).
    """
    base = dict(spec.defaults() if base is None else base)
    presets: dict[str, dict[str, Any]] = spec.presets
    names = [n for n in PRESET_LABELS if n in presets] + [
        n for n in presets if n not in PRESET_LABELS
    ]
    # presets that all set the same values offer no choice: say so instead of a radio
    same = len({repr(sorted(v.items())) for v in presets.values()}) <= 1
    if same:
        names = []
    pkey = widget_key(spec.name, "preset", f"{prefix}-preset")

    def current() -> dict[str, Any]:
        chosen = st.session_state.get(pkey) if names else None
        vals = {**base, **{k: v for k, v in presets.get(str(chosen), {}).items()}}
        return resolve(vals) if resolve is not None else vals

    def apply() -> None:
        vals = current()
        for p in spec.params:
            if p.type != "object" and p.name in vals:
                st.session_state[widget_key(spec.name, p.name, prefix)] = _widget_value(
                    p, vals[p.name]
                )

    left, right = st.columns([3, 1], vertical_alignment="bottom")
    if names:
        if pkey not in st.session_state:
            st.session_state[pkey] = "fast" if "fast" in names else names[0]
        left.radio(
            "Settings",
            names,
            format_func=lambda n: PRESET_LABELS.get(n, n),
            key=pkey,
            on_change=apply,
            horizontal=True,
            help="As in the paper: the seed's own algorithm and settings. Fast: hierlab's "
            "defaults, quicker to a certified gap.",
        )
    elif same and presets:
        left.caption("The defaults are the paper's own settings.")
    right.button(
        "Reset",
        key=widget_key(spec.name, "reset", f"{prefix}-reset"),
        on_click=apply,
        help="Put every parameter back to the chosen settings",
    )
    return current()


def param_widgets(
    spec: MethodSpec, values: dict[str, Any] | None = None, columns: int = 2, prefix: str = "param"
) -> dict[str, Any]:
    """Draw the parameters of ``spec`` that the current settings use, in ``columns`` columns;
    return ``{name: value}`` of those drawn.

    Which parameters are used is decided on the values the widgets hold now (their session
    state, else ``values``, else the defaults): switching the solver to BCFW hides RDA's
    averaging. Parameters of type ``"object"`` are skipped.

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
    now = {
        p.name: st.session_state.get(
            widget_key(spec.name, p.name, prefix), values.get(p.name, p.default)
        )
        for p in spec.params
    }
    now = {
        k: (p.words[0] if v is None and (p := spec.param(k)).words else v) for k, v in now.items()
    }
    shown = active_params(spec, now)
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
