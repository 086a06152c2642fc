"""Method cards: every registered method has one, complete and consistent with the registry."""

from __future__ import annotations

import re

import pytest

from hierlab.core import registry
from hierlab.core.cards import (
    MethodCard,
    MissingCardError,
    cards_markdown,
    method_card,
    missing_cards,
)
from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import MethodSpec, get_method, list_methods, register

METHODS = list_methods()


def test_every_registered_method_has_a_card() -> None:
    # fails as soon as a method is registered without a card (issue 11, "Done when")
    assert missing_cards() == [], f"methods without a card: {missing_cards()}"
    for m in METHODS:
        assert isinstance(get_method(m).card, MethodCard), m


def test_each_card_is_filed_under_its_method() -> None:
    assert [method_card(m).name for m in METHODS] == METHODS


def test_a_method_without_a_card_is_refused() -> None:
    class _Dummy:  # never instantiated
        pass

    with pytest.raises(TypeError, match="card"):
        register("zz-no-card-test", _Dummy, summary="test")  # type: ignore[call-arg]
    assert "zz-no-card-test" not in list_methods()
    registry._REGISTRY["zz-no-card-test"] = MethodSpec("zz-no-card-test", _Dummy)
    try:
        assert "zz-no-card-test" in missing_cards()
        with pytest.raises(MissingCardError, match="no method card"):
            method_card("zz-no-card-test")
        with pytest.raises(MissingCardError):
            cards_markdown(["zz-no-card-test"])
    finally:
        registry._REGISTRY.pop("zz-no-card-test")
    assert missing_cards() == []
    with pytest.raises(ParameterError, match="unknown method"):
        method_card("no-such-method")


def _balanced(tex: str) -> bool:
    depth = 0
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\" and i + 1 < len(tex) and tex[i + 1] in "{}":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


@pytest.mark.parametrize("name", METHODS)
def test_card_content(name: str) -> None:
    card = method_card(name)
    assert isinstance(card, MethodCard) and card.name == name
    spec = get_method(name)
    for field in ("title", "idea", "objective", "equations", "prediction", "solver", "bounds"):
        assert getattr(card, field).strip(), f"{name}: empty {field}"
    assert len(card.idea.split()) >= 15, f"{name}: the idea needs a few plain sentences"
    # the seed's equation numbers (seed methods) and a citation that names the seed
    if spec.seed != "baseline":
        assert f"seed {spec.seed}" in card.equations
        assert re.search(r"eq\. \(\d+|Algorithm \d", card.equations), card.equations
        assert f"seed {spec.seed}" in card.citation
    assert card.citation.strip()
    # LaTeX that KaTeX can parse: balanced braces and \left/\right pairs
    for tex in (card.objective, card.prediction):
        assert _balanced(tex), f"{name}: unbalanced braces in {tex!r}"
        n_left = len(re.findall(r"\\left(?![a-zA-Z])", tex))
        assert n_left == len(re.findall(r"\\right(?![a-zA-Z])", tex))
        assert "$$" not in tex
    # one st.latex call per line of the objective: every line is balanced on its own
    lines = card.objective_lines()
    assert lines and all(_balanced(ln) for ln in lines)
    assert "".join(lines).replace(" ", "") == card.objective.replace("\\\\", "").replace(" ", "")
    # the bounds text says whether the method has a certificate, as the registry does
    if spec.bounds:
        assert "Certified" in card.bounds, name
    else:
        assert "No " in card.bounds, name


@pytest.mark.parametrize("name", METHODS)
def test_parameters_follow_the_registry(name: str) -> None:
    card = method_card(name)
    spec = get_method(name)
    docs = card.parameters()
    assert [d.name for d in docs] == [p.name for p in spec.params]
    for d, p in zip(docs, spec.params):
        assert d.text.strip(), f"{name}.{d.name}: no description"
        assert d.default == p.default and d.type == p.type
        if p.choices is not None:
            assert all(str(c) in d.range for c in p.choices)
        if p.low is not None and p.high is not None and p.type in ("int", "float"):
            assert "…" in d.range
        if p.log:
            assert "log" in d.range
    md = card.markdown()
    for p in spec.params:
        assert f"`{p.name}`" in md
    # the card's note is the parameter's own declaration, not a copy that could go stale
    assert [d.note for d in docs] == [p.note for p in spec.params]


def test_cards_markdown_lists_every_method() -> None:
    md = cards_markdown()
    for m in METHODS:
        assert f"(`{m}`)" in md
    assert md.count("$$") % 2 == 0


def test_orthognl_card_names_the_admissibility_limit() -> None:
    card = method_card("ORTHOGNL")  # case-insensitive, like the registry
    assert "max_admissible_alpha" in get_method("orthognl").param("alpha").note
    assert r"\lambda_{\min}" in card.solver
    assert "eq. (6)" in card.equations
