"""The method registry: method name -> estimator class, its parameter schema and its card.

The CLI, the benchmarks, the app's widgets and the method cards are all built from it. Adding a
method is one module under ``hierlab/methods/<family>/`` that defines the estimator class (its
parameters declared once, in ``_parameters``), its :class:`~hierlab.core.cards.MethodCard`, and
calls :func:`register`. This module imports nothing of the methods: importing :mod:`hierlab`
imports :mod:`hierlab.methods`, whose families register themselves, explicitly, one
``register`` call per method.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from hierlab.core.exceptions import ParameterError
from hierlab.core.params import Param, check_declarations, declared

__all__ = [
    "Check",
    "Inducer",
    "MethodSpec",
    "get_method",
    "list_methods",
    "make_estimator",
    "register",
]


@dataclass(frozen=True)
class Check:
    """What a method's own check (:meth:`MethodSpec.check`) says of settings on a taxonomy.

    Attributes
    ----------
    ok : bool or None
        True: the settings train; False: ``fit`` would refuse them; None: the check could
        not tell (its ``message`` says why).
    message : str
        One line for the screen, the verdict and its figures (``"Admissible: comparison matrix
        λ_min = 0.31 (α must stay below 0.88)"``).
    values : dict
        The settings as they run on this taxonomy: a parameter's word (``alpha="auto"``) as
        the number it resolves to, to the digits a number box shows.
    suggested : dict
        Settings close to ``values`` that pass (``values`` itself when ``ok`` is not False).
    """

    ok: bool | None
    message: str
    values: Mapping[str, Any] = field(default_factory=dict)
    suggested: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Inducer:
    """How a method induces a taxonomy over the classes of labelled rows (seed 004).

    Attributes
    ----------
    estimator : type
        Built from the chosen values of ``params``; ``fit(X, y)`` (one label per row) sets
        ``taxonomy_`` (a Taxonomy whose leaves are the labels) and ``node_hsic()`` gives the
        quality of every node's split (array of shape (n_nodes,), nan at leaves).
    params : tuple of str
        The method's schema parameters a screen offers for the induction.
    about : str
        One paragraph for the screen: how the tree is built.
    """

    estimator: type
    params: tuple[str, ...]
    about: str


#: the parameters that stop a solver, by the names every method takes them under (the gap
#: tolerances of :func:`hierlab.core.solver.solve` and a wall-clock budget in seconds)
STOP_PARAMS = ("max_time", "tol", "rtol")


def _finite_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


#: a method's check: ``check(taxonomy, params) -> Check`` (None: nothing to check there)
CheckHook = Callable[[Any, dict[str, Any]], "Check | None"]


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
    budget : str or None
        The parameter that bounds the iterations (the class's ``_budget_param``: ``max_iter``,
        ``epochs``, ``rounds``), None for a method fitted in one shot.
    check_hook : callable, optional
        The method's own check of settings on a taxonomy (:meth:`check`).
    inducer : Inducer, optional
        How the method induces a taxonomy on its own (MF-Tree), for screens that offer it.
    rank : int, optional
        Where the method stands when a screen picks one for a newcomer (lower first: a quick
        method with certified bounds, whose live chart shows both bounds closing; a baseline
        ranked to be compared against); None: not ranked.
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
    budget: str | None = None
    check_hook: CheckHook | None = None
    rank: int | None = None
    inducer: Inducer | None = None

    @property
    def display_name(self) -> str:
        """The method as the papers and its card name it (``"FLATMULT"``, ``"HR-SVM"``)."""
        return str(self.card.display_name)

    def value(self, name: str, values: Mapping[str, Any]) -> Any:
        """The value the setting ``name`` takes under ``values``: given there, else fixed by
        this entry, else the class's declared default (None for a name it does not take)."""
        if name in values:
            return values[name]
        if name in self.fixed:
            return self.fixed[name]
        p = declared(self.estimator).get(name)
        return None if p is None else p.default

    def iterations(self, values: Mapping[str, Any]) -> int | None:
        """The most iterations these settings run (for a progress bar), if known: the
        :attr:`budget` parameter's value (:meth:`value`); None without a budget or where it is
        None (resolved at fit time)."""
        v = None if self.budget is None else self.value(self.budget, values)
        return int(v) if _finite_number(v) and v else None

    def stopping_rule(self, values: Mapping[str, Any]) -> dict[str, float]:
        """The solver's limits under these settings (:data:`STOP_PARAMS` the method takes, where
        finite): what a progress display knows before the solver reports its own."""
        found = {name: self.value(name, values) for name in STOP_PARAMS}
        return {name: float(v) for name, v in found.items() if _finite_number(v)}

    def check(self, taxonomy: Any, values: Mapping[str, Any]) -> Check | None:
        """The method's own check of the settings ``values`` on ``taxonomy`` (ORTHOGNL: is
        ``alpha`` admissible, seed 000 Corollary 2), or None where the method has none or it
        does not apply (a DAG, a taxonomy too large to check on screen)."""
        if self.check_hook is None:
            return None
        return self.check_hook(taxonomy, dict(values))

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
    check: CheckHook | None = None,
    rank: int | None = None,
    inducer: Inducer | None = None,
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
    check : callable, optional
        ``check(taxonomy, params) -> Check | None``: the method's own check of settings
        (:meth:`MethodSpec.check`).
    rank, inducer
        See :class:`MethodSpec`.

    The card must name the method (``card.display_name``); the budget parameter is the class's
    ``_budget_param`` where that is a declared parameter.
    """
    check_declarations(estimator)
    if not getattr(card, "display_name", ""):
        raise TypeError(f"register({name!r}): the card has no display_name")
    fixed = dict(fixed or {})
    unknown = set(fixed) - set(declared(estimator))
    if unknown:
        raise TypeError(f"register({name!r}): fixed names undeclared parameters {sorted(unknown)}")
    key = name.lower()
    params = schema(estimator, fixed)
    budget = getattr(estimator, "_budget_param", None)
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
        budget=budget if budget in declared(estimator) else None,
        check_hook=check,
        rank=rank,
        inducer=inducer,
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
