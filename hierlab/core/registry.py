"""The method registry: method name -> estimator class, its parameter schema and its card.

The CLI, the benchmarks, the app's widgets and the method cards are all built from it. Adding a
method is one module under ``hierlab/methods/<family>/`` that defines the estimator class (its
parameters declared once, in ``_parameters``), its :class:`~hierlab.core.cards.MethodCard`, and
calls :func:`register`. This module imports nothing of the methods: importing :mod:`hierlab`
imports :mod:`hierlab.methods`, whose families register themselves, explicitly, one
``register`` call per method.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hierlab.core.exceptions import ParameterError
from hierlab.core.params import Param, check_declarations, declared

__all__ = ["MethodSpec", "get_method", "list_methods", "make_estimator", "register"]


@dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : str
        Registry key, lower case (``"orthognl"``, ``"hr-svm"``).
    estimator : type
        The estimator class (a :class:`~hierlab.methods.base.HierarchicalClassifier`).
    params : tuple of Param
        The tunable parameters shown in the app and CLI: the class's declared parameters
        (``_parameters``), less those fixed by this entry and those no widget can show.
    seed : str
        Which seed paper it comes from (``"000"`` ... ``"004"``), or ``"baseline"``.
    summary : str
        One line: what it is.
    multilabel, dag, bounds : bool
        Supports several labels per row / a DAG taxonomy / certified lower bounds.
    fixed : dict
        Constructor arguments set by the registry entry (e.g. a variant flag).
    card : MethodCard
        The teaching view (:mod:`hierlab.core.cards`).
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
    card: Any = None

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


def schema(estimator: type, fixed: dict[str, Any] | None = None) -> tuple[Param, ...]:
    """The registry schema of ``estimator``: its declared parameters but ``fixed`` and objects."""
    fixed = fixed or {}
    return tuple(
        p for p in declared(estimator).values() if p.name not in fixed and p.type != "object"
    )


def register(
    name: str,
    estimator: type,
    *,
    card: Any,
    seed: str = "baseline",
    summary: str = "",
    fixed: dict[str, Any] | None = None,
    bounds: bool = False,
    multilabel: bool | None = None,
    dag: bool | None = None,
) -> MethodSpec:
    """Register a method (one call per method, in its family's module).

    Parameters
    ----------
    name : str
        Registry key.
    estimator : type
        Estimator class; its ``_parameters`` must match its constructor
        (:func:`~hierlab.core.params.check_declarations`).
    card : MethodCard
        The method's card (required: every method has one).
    seed, summary, fixed, bounds
        See :class:`MethodSpec`.
    multilabel, dag : bool, optional
        Default: the class's ``_supports_multilabel`` / ``_supports_dag``.
    """
    check_declarations(estimator)
    fixed = dict(fixed or {})
    unknown = set(fixed) - set(declared(estimator))
    if unknown:
        raise TypeError(f"register({name!r}): fixed names undeclared parameters {sorted(unknown)}")
    key = name.lower()
    spec = MethodSpec(
        name=key,
        estimator=estimator,
        params=schema(estimator, fixed),
        seed=seed,
        summary=summary,
        multilabel=getattr(estimator, "_supports_multilabel", False)
        if multilabel is None
        else multilabel,
        dag=getattr(estimator, "_supports_dag", False) if dag is None else dag,
        bounds=bounds,
        fixed=fixed,
        card=replace(card, name=key),
    )
    _REGISTRY[key] = spec
    return spec


def list_methods() -> list[str]:
    """Names of every registered method, sorted."""
    return sorted(_REGISTRY)


def get_method(name: str) -> MethodSpec:
    """The :class:`MethodSpec` registered as ``name`` (case-insensitive)."""
    try:
        return _REGISTRY[str(name).lower()]
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
        kwargs[key] = spec.param(key).validate(value, spec.name)
    return spec.estimator(taxonomy=taxonomy, **kwargs)
