"""Method cards: what every registered method does, in words, in one objective, and in numbers.

A card is the teaching view of a method, built for the app's Methods and Train pages and for
notebooks. Each family keeps its cards beside its code and passes each to
:func:`~hierlab.core.registry.register`. The parameter rows are *generated* from the class's
parameter declarations (:mod:`hierlab.core.params`: type, default, range, symbol, help line and
note), so they never go stale; the card adds what a parameter list cannot say:

* a short plain-language idea,
* the training objective in LaTeX (for ``st.latex`` / MathJax) with the seed's equation numbers,
* the prediction rule,
* the solver and what the two curves of the live bound chart (``upper`` / ``lower``) mean,
* the citation.

Every registered method has a card: :func:`~hierlab.core.registry.register` takes it as a
required argument.

Examples
--------
>>> from hierlab.core.cards import method_card
>>> card = method_card("orthognl")
>>> card.equations
'seed 000, eq. (4)-(7); K by eq. (6); Algorithm 1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import MethodSpec, get_method, list_methods

__all__ = [
    "ONE_SHOT_BOUNDS",
    "MethodCard",
    "MissingCardError",
    "ParamDoc",
    "cards_markdown",
    "method_card",
    "missing_cards",
]


#: the "bounds" text of every method fitted in one shot (liblinear calls, induced trees)
ONE_SHOT_BOUNDS = (
    "No iterative solver: one state is reported, with no objective (`upper` is NaN) and no "
    "lower bound."
)


class MissingCardError(ParameterError):
    """A registered method has no :class:`MethodCard` (pass ``card=`` to its ``register`` call)."""


@dataclass(frozen=True)
class ParamDoc:
    """One parameter as a card shows it (registry schema + the card's note).

    Attributes
    ----------
    name, type : str
    default : Any
    range : str
        Human-readable allowed values (``"1e-4 … 1e5 (log scale)"``, ``"one of: a, b"``).
    help : str
        The registry's one-line help.
    note : str
        The card's explanation: what the parameter does and which values are sensible.
    """

    name: str
    type: str
    default: Any
    range: str
    help: str
    note: str

    @property
    def text(self) -> str:
        """``help`` and ``note`` joined into one description."""
        parts = [p.strip().rstrip(".") for p in (self.help, self.note) if p.strip()]
        return ". ".join(parts) + ("." if parts else "")


@dataclass(frozen=True)
class MethodCard:
    """The card of one registered method.

    Attributes
    ----------
    name : str
        Registry key.
    display_name : str
        The method as the papers name it, in lists, run labels and chart titles
        (``"ORTHOGNL"``, ``"HR-SVM"``, ``"Hieron (online)"``); required by
        :func:`~hierlab.core.registry.register`.
    title : str
        The card's heading (``"ORTHOGNL — hierarchical SVM with orthogonal transfer"``).
    idea : str
        Two or three plain sentences: what the method does and why.
    objective : str
        The training problem in LaTeX (no surrounding ``$$``), for ``st.latex``.
    equations : str
        Where it is in the seed (``"seed 000, eq. (4)-(7)"``).
    prediction : str
        The prediction rule in LaTeX.
    solver : str
        The optimisation algorithm, in words.
    bounds : str
        What the ``upper`` and ``lower`` curves of the solver report mean for this method.
    citation : str
        The paper(s).
    symbols : str
        The notation of the objective, in words.
    presets : str
        What the ``"paper"`` and ``"fast"`` presets (:attr:`MethodSpec.presets`) run and why
        they differ; the card lists their values from the registry.
    paper_algorithm : str
        What the estimator's ``algorithm_`` says after a fit with the ``"paper"`` preset: the
        seed's algorithm by its number (the preset tests hold every method to it).
    """

    title: str
    idea: str
    objective: str
    equations: str
    prediction: str
    solver: str
    bounds: str
    citation: str
    symbols: str = ""
    name: str = ""
    presets: str = ""
    display_name: str = ""
    paper_algorithm: str = ""

    @property
    def spec(self) -> MethodSpec:
        """The registry entry of this method."""
        return get_method(self.name)

    def objective_lines(self) -> list[str]:
        """The objective split at its top-level line breaks (``\\\\``), one ``st.latex`` each."""
        return _split_lines(self.objective)

    def parameters(self) -> list[ParamDoc]:
        """One :class:`ParamDoc` per parameter of the registry schema, in schema order."""
        return [
            ParamDoc(
                name=p.name,
                type=p.type,
                default=p.default,
                range=p.range_text(),
                help=p.help,
                note=p.note,
            )
            for p in self.spec.params
        ]

    def tags(self) -> str:
        """``"seed 000 · certified lower bound · DAG taxonomies"``: the method in one line."""
        spec = self.spec
        flags = {"multi-label": spec.multilabel, "DAG taxonomies": spec.dag}
        first = f"seed {spec.seed}" if spec.seed != "baseline" else "baseline"
        bounds = "certified lower bound" if spec.bounds else "no certificate"
        return " · ".join([first, bounds, *(tag for tag, on in flags.items() if on)])

    def markdown(self, heading: str = "###") -> str:
        """The card as Markdown (LaTeX in ``$$ ... $$`` blocks, parameters as a table)."""
        spec = self.spec
        lines = [
            f"{heading} {self.title} (`{self.name}`)",
            "",
            f"*{self.tags()}* — {spec.summary}",
            "",
            self.idea,
            "",
            f"**Objective** ({self.equations}):",
            "",
        ]
        for line in self.objective_lines():
            lines += ["$$", line, "$$", ""]
        if self.symbols:
            lines += [self.symbols, ""]
        lines += ["**Prediction:**", "", "$$", self.prediction, "$$", ""]
        lines += [f"**Solver.** {self.solver}", "", f"**Bounds.** {self.bounds}", ""]
        lines += [self.presets_markdown(), ""]
        params = self.parameters()
        if params:
            lines += ["| parameter | default | range | what it does |", "|---|---|---|---|"]
            for d in params:
                text = d.text.replace("|", "\\|")
                lines.append(f"| `{d.name}` | `{d.default!r}` | {d.range} | {text} |")
            lines.append("")
        fixed = spec.fixed
        if fixed:
            shown = ", ".join(f"`{k}={v!r}`" for k, v in fixed.items())
            lines += [f"Fixed by this registry entry: {shown}.", ""]
        lines += [f"**Citation.** {self.citation}", ""]
        return "\n".join(lines)

    def presets_markdown(self) -> str:
        """The presets paragraph: each preset's values and the card's explanation; then how a
        fitted estimator says what ran (``solver_``, ``algorithm_``)."""
        presets = getattr(self.spec, "presets", {})
        parts = []
        for key in ("paper", "fast"):
            values = presets.get(key)
            if values is None:
                continue
            shown = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "the defaults"
            parts.append(f"`{key}`: `{shown}`" if values else f"`{key}`: {shown}")
        text = "**Presets.** " + "; ".join(parts) + "."
        if self.presets:
            text += " " + self.presets.strip()
        return (
            text + " After `fit`, `solver_` and `algorithm_` say what ran "
            "(make_estimator(name, preset='paper'))."
        )


def _split_lines(tex: str) -> list[str]:
    """Split LaTeX at ``\\\\`` outside braces (KaTeX's ``st.latex`` shows one line per call)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(tex):
        if tex[i] == "\\" and i + 1 < len(tex):
            if tex[i + 1] == "\\" and depth == 0:
                out.append(tex[start:i].strip())
                start = i + 2
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(tex[i], 0)
        i += 1
    out.append(tex[start:].strip())
    return [ln for ln in out if ln]


def missing_cards() -> list[str]:
    """Registered methods without a card (always empty: :func:`register` requires one)."""
    return [m for m in list_methods() if get_method(m).card is None]


def method_card(name: str) -> MethodCard:
    """The card of the registered method ``name`` (case-insensitive).

    Raises
    ------
    ParameterError
        ``name`` is not a registered method (from the registry).
    MissingCardError
        The method is registered but has no card.
    """
    spec = get_method(name)  # raises ParameterError for an unknown method
    if spec.card is None:
        raise MissingCardError(
            f"method {spec.name!r} is registered but has no method card: pass card= to its "
            "register call (idea, objective with the seed's equation numbers, solver, bounds, "
            "citation)"
        )
    return spec.card  # type: ignore[no-any-return]


def cards_markdown(names: list[str] | None = None) -> str:
    """Every method card (or those in ``names``) as one Markdown document.

    Raises
    ------
    MissingCardError
        When a requested method has no card.
    """
    names = list_methods() if names is None else names
    parts = ["# hierlab method cards", ""]
    for n in names:
        parts.append(method_card(n).markdown(heading="##"))
    return "\n".join(parts)
