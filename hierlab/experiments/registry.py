"""The method registry: name -> estimator class + parameter schema.

The CLI, the benchmarks and the app's widgets are all built from it, so adding a method is one
:func:`register` call at the bottom of its estimator module; every module in
``hierlab/estimators/`` is imported on first use, so nothing else needs editing.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

from hierlab.exceptions import ParameterError

__all__ = ["MethodSpec", "Param", "get_method", "list_methods", "make_estimator", "register"]


@dataclass(frozen=True)
class Param:
    """One parameter of a method, enough to build a widget and to validate a value.

    Attributes
    ----------
    name : str
        The estimator's constructor argument.
    type : {"float", "int", "str", "bool"}
    default : Any
    low, high : float, optional
        Inclusive range for numbers.
    log : bool
        Widgets use a log scale.
    choices : tuple, optional
        Allowed values for ``"str"`` parameters.
    help : str
        One line for users: what it does, sensible range.
    """

    name: str
    type: str
    default: Any
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple[Any, ...] | None = None
    help: str = ""

    def validate(self, value: Any) -> Any:
        """Coerce and check ``value``; raise :class:`ParameterError` naming the parameter."""
        if value is None and self.default is None:
            return None
        try:
            if self.type == "float":
                v: Any = float(value)
            elif self.type == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                v = int(value)
            elif self.type == "bool":
                if not isinstance(value, bool | int):
                    raise ValueError
                v = bool(value)
            else:
                v = value
        except (TypeError, ValueError):
            raise ParameterError(
                f"parameter {self.name!r} must be {self.type}, got {value!r}"
            ) from None
        if self.choices is not None and v not in self.choices:
            raise ParameterError(
                f"parameter {self.name!r} must be one of {self.choices}, got {v!r}"
            )
        if self.low is not None and v < self.low:
            raise ParameterError(f"parameter {self.name!r} must be >= {self.low}, got {v!r}")
        if self.high is not None and v > self.high:
            raise ParameterError(f"parameter {self.name!r} must be <= {self.high}, got {v!r}")
        return v


@dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : str
        Registry key, lower case (``"orthognl"``, ``"hr-svm"``).
    estimator : type
        The estimator class (a :class:`~hierlab.estimators.base.HierarchicalClassifier`).
    params : tuple of Param
        The tunable parameters shown in the app and CLI.
    seed : str
        Which seed paper it comes from (``"000"`` ... ``"004"``), or ``"baseline"``.
    summary : str
        One line: what it is.
    multilabel, dag, bounds : bool
        Supports several labels per row / a DAG taxonomy / certified lower bounds.
    fixed : dict
        Constructor arguments set by the registry entry (e.g. a variant flag).
    """

    name: str
    estimator: type
    params: tuple[Param, ...] = ()
    seed: str = "baseline"
    summary: str = ""
    multilabel: bool = False
    dag: bool = False
    bounds: bool = False
    fixed: dict[str, Any] = field(default_factory=dict)

    def param(self, name: str) -> Param:
        """The :class:`Param` called ``name``."""
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(
            f"method {self.name!r} has no parameter {name!r}; it has "
            + ", ".join(p.name for p in self.params)
        )

    def defaults(self) -> dict[str, Any]:
        """Default value of every parameter."""
        return {p.name: p.default for p in self.params}


_REGISTRY: dict[str, MethodSpec] = {}
_LOADED = False


def register(
    name: str,
    estimator: type,
    params: list[Param] | tuple[Param, ...] = (),
    **kwargs: Any,
) -> MethodSpec:
    """Register a method (called at import time by each estimator module).

    Parameters
    ----------
    name : str
        Registry key.
    estimator : type
        Estimator class.
    params : list of Param
        Parameter schema.
    **kwargs
        Other :class:`MethodSpec` fields (seed, summary, multilabel, dag, bounds, fixed).
    """
    key = name.lower()
    spec = MethodSpec(name=key, estimator=estimator, params=tuple(params), **kwargs)
    _REGISTRY[key] = spec
    return spec


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    import hierlab.estimators as pkg

    for mod in pkgutil.iter_modules(pkg.__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"hierlab.estimators.{mod.name}")
    _LOADED = True


def list_methods() -> list[str]:
    """Names of every registered method, sorted."""
    _load_all()
    return sorted(_REGISTRY)


def get_method(name: str) -> MethodSpec:
    """The :class:`MethodSpec` registered as ``name`` (case-insensitive)."""
    _load_all()
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        raise ParameterError(
            f"unknown method {name!r}; registered: {', '.join(sorted(_REGISTRY))}"
        ) from None


def make_estimator(name: str, taxonomy: Any = None, **params: Any) -> Any:
    """A new estimator for the method ``name`` with validated ``params``.

    Parameters
    ----------
    name : str
        A name from :func:`list_methods`.
    taxonomy : Taxonomy, optional
        Passed to the estimator.
    **params
        Values for the method's schema parameters; unknown names raise ``ParameterError``.
    """
    spec = get_method(name)
    kwargs = dict(spec.fixed)
    for key, value in params.items():
        p = spec.param(key)
        kwargs[key] = p.validate(value)
    return spec.estimator(taxonomy=taxonomy, **kwargs)
