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
    presets : dict of str to dict
        Named settings of the schema parameters: ``"paper"`` (the seed's own algorithm and
        settings) and ``"fast"`` (the constructor defaults), each ``{name: value}`` over the
        parameters either preset sets, so that switching presets resets them;
        :func:`make_estimator` takes ``preset=``. The card explains them.
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
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)

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

    def preset(self, name: str) -> dict[str, Any]:
        """The values of preset ``name`` (``"paper"`` or ``"fast"``).

        Raises
        ------
        ParameterError
            Naming the presets there are.
        """
        try:
            return dict(self.presets[str(name).lower()])
        except KeyError:
            raise ParameterError(
                f"method {self.name!r} has no preset {name!r}; it has "
                + ", ".join(repr(k) for k in self.presets)
            ) from None

    def active_params(self, values: dict[str, Any]) -> tuple[Param, ...]:
        """The parameters the settings ``values`` use (``Param.used_when``), in schema order.

        Parameters
        ----------
        values : dict
            Parameter values; missing names take their default (and ``fixed`` its value).

        Returns
        -------
        tuple of Param
            ``params`` less those the chosen settings ignore (``averaging`` under
            ``solver="bcfw"``).
        """
        full = {**self.defaults(), **self.fixed, **values}
        return tuple(p for p in self.params if p.is_used(full))


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
    paper: dict[str, Any] | None = None,
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
    paper : dict, optional
        The ``"paper"`` preset: the schema values that run the seed's own algorithm and
        settings (empty: the defaults already are). The ``"fast"`` preset is the defaults of
        the same names (:attr:`MethodSpec.presets`).
    """
    check_declarations(estimator)
    fixed = dict(fixed or {})
    unknown = set(fixed) - set(declared(estimator))
    if unknown:
        raise TypeError(f"register({name!r}): fixed names undeclared parameters {sorted(unknown)}")
    key = name.lower()
    params = schema(estimator, fixed)
    presets = _presets(key, params, paper or {})
    spec = MethodSpec(
        name=key,
        estimator=estimator,
        params=params,
        seed=seed,
        summary=summary,
        multilabel=getattr(estimator, "_supports_multilabel", False)
        if multilabel is None
        else multilabel,
        dag=getattr(estimator, "_supports_dag", False) if dag is None else dag,
        bounds=bounds,
        fixed=fixed,
        card=replace(card, name=key),
        presets=presets,
    )
    _REGISTRY[key] = spec
    return spec


def _presets(
    name: str, params: tuple[Param, ...], paper: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """``{"paper": ..., "fast": ...}`` over the names ``paper`` sets, each value validated."""
    by_name = {p.name: p for p in params}
    unknown = set(paper) - set(by_name)
    if unknown:
        raise TypeError(f"register({name!r}): paper preset names {sorted(unknown)}, not in schema")
    return {
        "paper": {k: by_name[k].validate(v, name) for k, v in paper.items()},
        "fast": {k: by_name[k].default for k in paper},
    }


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


def make_estimator(
    name: str, taxonomy: Any = None, *, preset: str | None = None, **params: Any
) -> Any:
    """A new estimator for the method ``name`` with validated ``params``.

    Parameters
    ----------
    name : str
        A name from :func:`list_methods`.
    taxonomy : Taxonomy, optional
        Passed to the estimator.
    preset : {"paper", "fast"}, optional
        Start from these settings (:attr:`MethodSpec.presets`): ``"paper"`` runs the seed's
        own algorithm and settings, ``"fast"`` (the same as None) the constructor defaults.
        ``params`` override them.
    **params
        Values for the method's schema parameters; unknown names raise ``ParameterError``.

    Examples
    --------
    >>> est = make_estimator("flatmult", preset="paper", max_iter=50)
    >>> est.solver, est.averaging, est.C, est.max_iter
    ('rda', 'uniform', '1/n', 50)
    """
    spec = get_method(name)
    kwargs = dict(spec.fixed)
    if preset is not None:
        kwargs.update(spec.preset(preset))
    for key, value in params.items():
        kwargs[key] = spec.param(key).validate(value, spec.name)
    return spec.estimator(taxonomy=taxonomy, **kwargs)
