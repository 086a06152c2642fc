"""Methods: the card of every registered method (idea, objective, parameters, solver, bounds)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when the page runs on its own (AppTest.from_file)
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.ui.method_card import show_card  # noqa: E402
from hierlab.core.cards import cards_markdown  # noqa: E402
from hierlab.core.registry import MethodSpec, get_method, list_methods  # noqa: E402

SEEDS = {
    "000": "000 — orthogonal transfer (Zhou, Xiao, Wu 2011)",
    "001": "001 — HR-SVM / HR-LR (Gopal, Yang, Niculescu-Mizil)",
    "002": "002 — Hieron (Dekel, Keshet, Singer 2004)",
    "003": "003 — normalised hierarchical SVM",
    "004": "004 — MF-Tree",
    "baseline": "baselines",
}

st.title("Methods")
st.caption(
    "One card per registered method, generated from the registry: the idea in plain words, the "
    "training objective with the seed paper's equation numbers, what each parameter does, the "
    "solver and what its bounds certify, and the citation."
)
specs = {n: get_method(n) for n in list_methods()}
left, right = st.columns([1, 2])
with left:
    groups = sorted({s.seed for s in specs.values()}, key=lambda s: (s == "baseline", s))
    chosen = st.multiselect(
        "Papers",
        groups,
        default=groups,
        format_func=lambda s: SEEDS.get(s, s),
        key="methods_seeds",
    )
with right:
    query = st.text_input("Search (name, title or idea)", key="methods_search").strip().lower()


def matches(spec: MethodSpec) -> bool:
    """In a chosen paper, and the query (if any) in its name, title or idea."""
    text = f"{spec.name} {spec.card.title} {spec.card.idea}".lower()
    return spec.seed in chosen and query in text


shown = [n for n, spec in specs.items() if matches(spec)]
if not shown:
    st.info("No method matches.")
    st.stop()

overview = [
    {
        "method": n,
        "name": specs[n].card.title,
        "paper": SEEDS.get(specs[n].seed, specs[n].seed),
        "equations": specs[n].card.equations,
        "certificate": "upper + lower bound" if specs[n].bounds else "-",
    }
    for n in shown
]
st.dataframe(overview, hide_index=True, key="methods_overview")
method = st.selectbox(
    "Method",
    shown,
    key="methods_method",
    format_func=lambda n: f"{n} — {specs[n].summary}",
)
show_card(method, key="methods_card")

st.divider()
st.download_button(
    "Download every card (Markdown)",
    cards_markdown(list(specs)),
    file_name="hierlab_method_cards.md",
    mime="text/markdown",
    key="methods_download",
)
