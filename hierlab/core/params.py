"""Parameter constraints, declared once per estimator class.

Every estimator lists its constructor parameters as :class:`Param` objects in the class
attribute ``_parameters`` (as scikit-learn's ``_parameter_constraints``): type, range, default,
the paper's symbol, a line of help and the card's longer note. Everything else is generated from
that one declaration: validation in ``fit`` (:func:`validate_params`), the registry's schema, the
app's widgets, the CLI's options and the parameter tables of the method cards.
:func:`check_declarations` (run for every registered class) proves that the constructor's
signature and the declaration agree, name by name and default by default.

Examples
--------
>>> C = Param("C", "float", 1.0, low=0.0, low_open=True, log=True, symbol="C",
...           help="weight of the summed loss")
>>> C.validate("10")
10.0
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hierlab.core.exceptions import ParameterError

__all__ = [
    "TYPES",
    "Param",
    "check_declarations",
    "declared",
    "ignored_params",
    "validate_params",
]

#: the kinds of value a parameter can hold; "seed" is scikit-learn's random_state (None, an int
#: >= 0 or a numpy Generator/RandomState) and "object" a value no widget can show (not validated)
TYPES = ("float", "int", "str", "bool", "seed", "object")


@dataclass(frozen=True)
class Param:
    """One constructor parameter: enough to validate a value and to build a widget or an option.

    Attributes
    ----------
    name : str
        The estimator's constructor argument.
    type : {"float", "int", "str", "bool", "seed", "object"}
    default : Any
        The constructor's default (:func:`check_declarations` keeps them equal).
    low, high : float, optional
        Allowed range of a number (inclusive unless ``low_open`` / ``high_open``).
    low_open, high_open : bool
        The bound itself is excluded (``C > 0``).
    log : bool
        Widgets use a log scale.
    choices : tuple, optional
        Allowed values of a ``"str"`` parameter.
    none : bool
        None is allowed (it means "automatic" or "no limit"); implied by ``default=None``.
    words : tuple of str
        Words a number parameter also takes, each a rule the estimator resolves at fit time
        (ORTHOGNL's ``alpha="auto"``).
    symbol : str
        How the paper writes it (``"C"``, ``"alpha"``, ``"tau"``, ``"rho"``, ``"T"``).
    label_text : str
        The parameter in words, the widget's label when it has no symbol (``"RDA splitting"``);
        empty: the common words for a stopping or run-time parameter (``rtol`` -> ``"relative
        gap tolerance"``), else the name with spaces.
    choice_labels : Mapping of str to str, optional
        The choices in words (``{"rda": "RDA: the paper's Algorithm 1"}``); a choice missing
        here is shown as itself.
    help : str
        One line for users: what it does.
    note : str
        The method card's explanation: what it does and which values are sensible.
    used_when : Mapping of str to tuple, optional
        When the parameter is used: ``{"solver": ("rda",)}`` means only when ``solver`` is
        ``"rda"`` (every condition must hold). None: always used. A non-default value of a
        parameter whose condition fails is warned about in ``fit``
        (:class:`~hierlab.core.exceptions.IgnoredParameterWarning`), never dropped silently.
    """

    name: str
    type: str
    default: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    log: bool = False
    choices: tuple[Any, ...] | None = None
    none: bool = False
    words: tuple[str, ...] = ()
    symbol: str = ""
    help: str = ""
    note: str = ""
    used_when: Mapping[str, tuple[Any, ...]] | None = field(default=None, hash=False)
    label_text: str = ""
    choice_labels: Mapping[str, str] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"Param {self.name!r}: type must be one of {TYPES}")

    @property
    def accepts_none(self) -> bool:
        """None is a valid value."""
        return self.none or self.default is None

    def is_used(self, values: Mapping[str, Any]) -> bool:
        """Whether the settings ``values`` (name -> value) use this parameter (``used_when``).

        A condition on a name missing from ``values`` holds (nothing says otherwise).
        """
        if not self.used_when:
            return True
        return all(
            name not in values or values[name] in allowed
            for name, allowed in self.used_when.items()
        )

    def used_text(self) -> str:
        """``"only when solver is 'rda'"`` (empty when always used)."""
        if not self.used_when:
            return ""
        parts = [
            f"{name} is " + " or ".join(repr(v) for v in allowed)
            for name, allowed in self.used_when.items()
        ]
        return "only when " + " and ".join(parts)

    @property
    def label(self) -> str:
        """The widget's label as a reader of the papers knows it, never a code name.

        The paper's symbol typeset (``"alpha"`` -> ``"α"``, ``"C"``) when it has one, else the
        parameter in words (:attr:`label_text`, ``rtol`` -> ``"relative gap tolerance"``).
        """
        if self.symbol:
            return _GREEK.get(self.symbol, self.symbol)
        return self.label_text or _WORDS.get(self.name, self.name.replace("_", " "))

    @property
    def none_text(self) -> str:
        """What None means for this parameter, in words (``max_time`` -> ``"no time limit"``)."""
        return _NONE_WORDS.get(self.name, "automatic")

    def choice_text(self, value: Any) -> str:
        """A choice in words (:attr:`choice_labels`: ``"rda"`` -> ``"RDA: the paper's Algorithm
        1"``); None as :attr:`none_text`."""
        if value is None:
            return self.none_text
        return (self.choice_labels or {}).get(str(value), str(value))

    def validate(self, value: Any, owner: str = "") -> Any:
        """Coerce and check ``value``.

        Parameters
        ----------
        value : Any
        owner : str
            Who takes it (a class or method name), for the message.

        Returns
        -------
        The value as the estimator uses it (``"1e-3"`` becomes ``0.001`` for a float).

        Raises
        ------
        ParameterError
            Naming the parameter, the value and what is allowed.
        """
        where = f"{owner}: " if owner else ""
        if value is None and self.accepts_none:
            return None
        if isinstance(value, str) and value.strip().lower() in self.words:
            return value.strip().lower()
        if self.type == "object":
            return value
        v = self._coerce(value, where)
        if self.choices is not None and v not in self.choices:
            raise ParameterError(
                f"{where}parameter {self.name!r} must be one of {self.choices}, got {v!r}"
            )
        if self.type in ("float", "int"):
            self._check_range(v, where)
        return v

    def _coerce(self, value: Any, where: str) -> Any:
        try:
            if self.type == "seed":
                return _seed(value)
            if isinstance(value, bool) and self.type in ("float", "int"):
                raise ValueError
            if self.type == "float":
                v: Any = float(value)
                if math.isnan(v):
                    raise ValueError
                return v
            if self.type == "int":
                if isinstance(value, float | np.floating) and not float(value).is_integer():
                    raise ValueError
                if isinstance(value, str):
                    value = float(value) if "." in value or "e" in value.lower() else value
                    if isinstance(value, float) and not value.is_integer():
                        raise ValueError
                return int(value)
            if self.type == "bool":
                if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
                    return value.lower() in ("true", "1")
                if not isinstance(value, bool | int | np.bool_) or value not in (0, 1):
                    raise ValueError
                return bool(value)
            if self.type == "str" and not isinstance(value, str):
                raise ValueError
            return value
        except (TypeError, ValueError, OverflowError):
            allowed = "None or " if self.accepts_none else ""
            allowed += "".join(f"{w!r} or " for w in self.words)
            raise ParameterError(
                f"{where}parameter {self.name!r} must be {allowed}{_KIND[self.type]}, got {value!r}"
            ) from None

    def _check_range(self, v: float, where: str) -> None:
        if self.log and self.type == "float" and not _normal_size(v):
            raise ParameterError(
                f"{where}parameter {self.name!r} (a scale) must have a magnitude in "
                f"[{_TINY:.0e}, {_HUGE:.0e}], got {v!r}: beyond, the solver's steps overflow, "
                "underflow or stall"
            )
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            op = ">" if self.low_open else ">="
            raise ParameterError(
                f"{where}parameter {self.name!r} must be {op} {_num(self.low)}, got {v!r}"
            )
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            op = "<" if self.high_open else "<="
            raise ParameterError(
                f"{where}parameter {self.name!r} must be {op} {_num(self.high)}, got {v!r}"
            )

    def range_text(self) -> str:
        """The allowed values in words (``"> 0 (log scale)"``, ``"one of: a, b"``)."""
        if self.choices is not None:
            out = "one of: " + ", ".join(str(c) for c in self.choices)
        elif self.type in ("bool", "str", "seed", "object"):
            out = {
                "bool": "True / False",
                "str": "text",
                "seed": "an integer seed",
                "object": "an object",
            }[self.type]
        else:
            out = _interval(self)
        if self.log:
            out += " (log scale)"
        if self.accepts_none:
            out += f"; None = {self.none_text}"
        for word in self.words:
            out += f"; or {word!r}"
        return out


#: the papers' symbols typeset (Param.symbol -> label)
_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "lambda": "λ",
    "omega": "ω",
    "rho": "ρ",
    "tau": "τ",
    "eta": "η",
    "sigma": "σ",
    "Delta": "Δ",
    "Delta_L": "Δ_L",
}

#: the stopping and run-time parameters every kind of method may take, in words (the label of
#: one without a symbol or a ``label_text``; else its name with spaces)
_WORDS = {
    "rtol": "relative gap tolerance",
    "tol": "tolerance",
    "max_iter": "maximum iterations",
    "max_time": "time limit (s)",
    "random_state": "random seed",
    "n_jobs": "parallel workers",
}

#: what None means, per parameter (default "automatic")
_NONE_WORDS = {
    "max_time": "no time limit",
    "n_jobs": "one worker",
    "random_state": "unseeded",
}


_KIND = {
    "float": "a number",
    "int": "an integer",
    "str": "a string",
    "bool": "True or False",
    "seed": "an integer >= 0 or a numpy random Generator",
    "object": "an object",
}


def _seed(value: Any) -> Any:
    if isinstance(value, np.random.Generator | np.random.RandomState):
        return value
    if isinstance(value, bool) or not isinstance(value, int | np.integer | str):
        raise ValueError
    v = int(value)
    if v < 0:
        raise ValueError
    return v


def _num(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if float(v).is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:g}"


def _interval(p: Param) -> str:
    lo = None if p.low is None else _num(p.low)
    hi = None if p.high is None else _num(p.high)
    if lo is not None and hi is not None:
        ends = [b for b, is_open in ((lo, p.low_open), (hi, p.high_open)) if is_open]
        return f"{lo} … {hi}" + (f" ({' and '.join(ends)} excluded)" if ends else "")
    if lo is not None:
        return f"{'>' if p.low_open else '≥'} {lo}"
    if hi is not None:
        return f"{'<' if p.high_open else '≤'} {hi}"
    return "any number"


def declared(cls: type) -> dict[str, Param]:
    """The parameters ``cls`` declares (its ``_parameters``), by name, in declaration order."""
    params: Iterable[Param] = getattr(cls, "_parameters", ())
    return {p.name: p for p in params}


#: the magnitudes a scale parameter (``log=True``: C, a step, a bandwidth) may take: beyond
#: them a solver's steps underflow or stall (liblinear does not return at C=1e-200), or the
#: reciprocal of the scale overflows
_TINY = 1e-100
_HUGE = 1e300


def _normal_size(v: float) -> bool:
    """``v`` is zero or a finite float in ``[_TINY, _HUGE]`` in magnitude."""
    return v == 0.0 or _TINY <= abs(v) <= _HUGE


def validate_params(estimator: Any) -> dict[str, Any]:
    """Check every declared parameter of ``estimator`` (called at the start of ``fit``).

    Returns
    -------
    dict
        ``{name: validated value}`` (the estimator's attributes are left as they are, as
        scikit-learn requires).
    """
    owner = type(estimator).__name__
    return {
        name: p.validate(getattr(estimator, name), owner)
        for name, p in declared(type(estimator)).items()
    }


def ignored_params(cls: type, values: Mapping[str, Any]) -> list[tuple[Param, str]]:
    """The parameters of ``cls`` set away from their default that the settings do not use.

    Parameters
    ----------
    cls : type
        An estimator class with ``_parameters``.
    values : Mapping of str to Any
        Validated constructor values (:func:`validate_params`).

    Returns
    -------
    list of (Param, str)
        Each ignored parameter with the condition it misses (``"only when solver is 'rda'"``).
    """
    out = []
    for name, p in declared(cls).items():
        if name in values and not p.is_used(values) and not _same(values[name], p.default):
            out.append((p, p.used_text()))
    return out


def check_declarations(cls: type, ignore: Iterable[str] = ("taxonomy",)) -> None:
    """Raise ``TypeError`` unless ``cls.__init__`` and ``cls._parameters`` agree.

    Every keyword of the constructor (but ``ignore``) is declared, every declaration is a
    keyword-only constructor argument, and the defaults are equal.
    """
    sig = inspect.signature(cls.__init__)  # type: ignore[misc]
    args = {n: a for n, a in sig.parameters.items() if n != "self" and n not in set(ignore)}
    decl = declared(cls)
    if set(args) != set(decl):
        raise TypeError(
            f"{cls.__name__}: constructor arguments {sorted(args)} differ from the declared "
            f"parameters {sorted(decl)}"
        )
    for name, arg in args.items():
        if arg.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise TypeError(f"{cls.__name__}: parameter {name!r} must be keyword-only")
        if not _same(arg.default, decl[name].default):
            raise TypeError(
                f"{cls.__name__}: default of {name!r} is {arg.default!r} in __init__ but "
                f"{decl[name].default!r} in _parameters"
            )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b
