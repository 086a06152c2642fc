"""A method's facts are declared by its family on its registry entry (:class:`MethodSpec`): the
budget parameter, the display name, the choices in words, its own check of settings, its rank
and how it induces a taxonomy; screens read them from there."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import hierlab  # noqa: F401  (the families register themselves)
from hierlab.core.params import declared
from hierlab.core.registry import Check, get_method, list_methods, register
from hierlab.core.regularizers import max_admissible_alpha, smallest_comparison_eigenvalue
from hierlab.core.taxonomy import Taxonomy


@pytest.mark.parametrize("name", list_methods())
def test_budget_is_a_declared_iteration_count(name: str) -> None:
    """The budget is the class's ``_budget_param`` where declared, an int parameter; the
    iterations it gives are the value passed, else the fixed one, else the declared default."""
    spec = get_method(name)
    decl = declared(spec.estimator)
    own = getattr(spec.estimator, "_budget_param", None)
    assert spec.budget == (own if own in decl else None)
    if spec.budget is None:
        assert spec.iterations({"max_iter": 7, "epochs": 7}) is None
        return
    p = decl[spec.budget]
    assert p.type == "int"
    want = spec.fixed.get(spec.budget, p.default)
    assert spec.iterations({}) == (int(want) if want else None)
    assert spec.iterations({spec.budget: 7}) == 7


@pytest.mark.parametrize("name", list_methods())
def test_stopping_rule_reads_values_then_fixed_then_defaults(name: str) -> None:
    spec = get_method(name)
    decl = declared(spec.estimator)
    want = {}
    for stop in ("max_time", "tol", "rtol"):
        v = spec.fixed.get(stop, decl[stop].default) if stop in decl else None
        if isinstance(v, float | int) and not isinstance(v, bool) and np.isfinite(v):
            want[stop] = float(v)
    assert spec.stopping_rule({}) == want
    given = {stop: 0.25 for stop in ("max_time", "tol", "rtol")}
    assert spec.stopping_rule(given) == given  # what the caller sets, even a name not taken
    assert spec.stopping_rule({"tol": None, "rtol": float("inf")}).keys() <= {"max_time"}


def test_shared_svm_counts_its_rounds() -> None:
    """SSVM's budget is ``rounds`` (its alpha updates), so its progress bar has a total."""
    spec = get_method("ssvm")
    assert spec.budget == "rounds"
    assert spec.iterations({}) == declared(spec.estimator)["rounds"].default == 5
    assert spec.iterations({"rounds": 3, "max_iter": 100}) == 3


@pytest.mark.parametrize("name", list_methods())
def test_display_name_is_declared_and_heads_the_card(name: str) -> None:
    spec = get_method(name)
    assert spec.display_name and spec.card.title.startswith(spec.display_name)


def test_register_refuses_a_card_without_display_name() -> None:
    spec = get_method("topdown")
    with pytest.raises(TypeError, match="display_name"):
        register("probe-no-name", spec.estimator, card=replace(spec.card, display_name=""))
    assert "probe-no-name" not in list_methods()


@pytest.mark.parametrize("name", list_methods())
def test_choice_labels_name_real_choices(name: str) -> None:
    """A label for a value the parameter does not take would never be shown: a typo."""
    for p in declared(get_method(name).estimator).values():
        if p.choice_labels:
            assert p.choices is not None and set(p.choice_labels) <= set(map(str, p.choices))
            for value, text in p.choice_labels.items():
                assert p.choice_text(value) == text


def test_ranks_are_distinct() -> None:
    ranks = [get_method(n).rank for n in list_methods() if get_method(n).rank is not None]
    assert ranks and len(ranks) == len(set(ranks))


def test_inducer_offers_schema_parameters() -> None:
    inducing = [get_method(n) for n in list_methods() if get_method(n).inducer is not None]
    assert inducing
    for spec in inducing:
        assert spec.inducer is not None
        for name in spec.inducer.params:
            spec.param(name)  # a schema parameter: a widget can show it
        assert spec.inducer.about


# ------------------------------------------------------------------- ORTHOGNL's own check
def _tree(seed: int) -> Taxonomy:
    rng = np.random.default_rng(seed)
    parents = {"a": "root", "b": "root"}
    for k in range(int(rng.integers(4, 9))):
        parents[f"n{k}"] = str(rng.choice(list(parents)))
    return Taxonomy.from_edges([(p, c) for c, p in parents.items()])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_orthognl_check_against_the_eigenvalue(seed: int) -> None:
    """ok is ``lambda_min(Kbar) > 0`` (seed 000, Corollary 2), computed directly; an
    inadmissible alpha is suggested as 90% of the exact limit, which passes."""
    spec = get_method("orthognl")
    tax = _tree(seed)
    amax = max_admissible_alpha(tax)
    assert np.isfinite(amax)
    for alpha in (0.5 * amax, 0.99 * amax, 1.01 * amax, 2.0 * amax):
        found = spec.check(tax, {"alpha": alpha, "C": 1.0})
        assert isinstance(found, Check)
        lam = smallest_comparison_eigenvalue(tax, alpha)
        assert found.ok is bool(lam > 0), alpha
        assert f"λ_min = {lam:.4g}" in found.message
        assert found.values == {"alpha": alpha, "C": 1.0}
        if found.ok:
            assert found.suggested == found.values
        else:
            assert found.suggested["alpha"] == float(f"{0.9 * amax:.2g}")
            assert smallest_comparison_eigenvalue(tax, found.suggested["alpha"]) > 0


def test_orthognl_check_shows_a_word_as_its_number() -> None:
    spec = get_method("orthognl")
    tax = _tree(3)
    amax = max_admissible_alpha(tax)
    found = spec.check(tax, {"alpha": "auto"})
    assert found is not None and found.ok is True
    assert found.values["alpha"] == float(f"{0.5 * amax:.3g}")
    paper = spec.check(tax, {"alpha": "paper"})
    assert paper is not None
    assert paper.values["alpha"] == (1.0 if amax > 1.0 else float(f"{0.5 * amax:.3g}"))


def test_check_does_not_apply_where_it_cannot_answer() -> None:
    dag = Taxonomy.from_edges([("root", "a"), ("root", "b"), ("a", "c"), ("b", "c")])
    assert get_method("orthognl").check(dag, {"alpha": 0.1}) is None
    assert get_method("orthognl").check(_tree(0), {}) is None  # no alpha to check
    assert get_method("flatmult").check(_tree(0), {"alpha": 0.1}) is None  # no check at all
