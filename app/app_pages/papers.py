"""Paper tables: run a ``hierlab reproduce`` table with a progress bar and show our numbers
beside the published ones, with the figure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when the page runs on its own (AppTest.from_file)
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import session_dict  # noqa: E402
from app.ui.page import stored_result  # noqa: E402
from app.ui.widgets import number_columns, param_widget  # noqa: E402
from hierlab.core.params import Param  # noqa: E402
from hierlab.lab.tables import (  # noqa: E402
    ReproResult,
    classroom_options,
    reproduction_options,
    reproductions,
    run_reproduction,
)

RESULTS_KEY = "papers_results"
#: options that write files: never offered here
FILE_OPTIONS = ("figure", "json")

st.title("Paper tables")
st.caption(
    "Each table of the seed papers that hierlab reproduces (`hierlab reproduce <name>`), run "
    "here with a progress bar: our numbers beside the published ones."
)
names = reproductions()
if not names:
    st.info("No reproduction is installed.")
    st.stop()
results: dict[str, ReproResult] = session_dict(RESULTS_KEY)
name = st.selectbox(
    "Reproduction", list(names), format_func=lambda n: f"{n} — {names[n]}", key="papers_name"
)
classroom = classroom_options(name)
quick = st.toggle(
    "Classroom size (fast)",
    value=classroom is not None,
    key=f"papers_quick_{name}",
    help="Smaller data and fewer seeds; off = the paper's protocol (can take many minutes).",
    disabled=classroom is None,
)


def option_value(
    name: str, default: Any, helptext: str, key: str, choices: tuple[Any, ...] | None = None
) -> Any:
    """One option of the reproduction's command line, as a widget of its default's type."""
    label = name.replace("_", " ")
    if not isinstance(default, list | tuple):
        kind = {bool: "bool", int: "int", float: "float"}.get(type(default), "str")
        p = Param(name, kind, default, symbol=label, help=helptext, choices=choices)
        return param_widget(p, key)
    text = st.text_input(label, value=" ".join(str(v) for v in default), key=key, help=helptext)
    try:
        return [type(default[0])(v) for v in text.split()] if default else []
    except ValueError:
        st.error(f"{label}: expected {len(default)} numbers separated by spaces")
        st.stop()


overrides: dict[str, Any] = {}
with st.expander("Options", expanded=False):
    for opt in reproduction_options(name):
        oname = opt["name"]
        if oname in FILE_OPTIONS:
            continue
        default = (classroom or {}).get(oname, opt["default"]) if quick else opt["default"]
        key = f"papers_opt_{name}_{oname}_{quick}"
        overrides[oname] = option_value(oname, default, opt["help"] or "", key, opt.get("choices"))

res = stored_result(
    results,
    name,
    lambda progress: run_reproduction(name, progress=progress, **overrides),
    button=("Run", "papers_run"),
    what=f"Running the reproduction {name!r}",
    hint="Press **Run** (classroom size takes a few seconds).",
)

st.success(f"{name}: done in {res.seconds:.1f} s.")
if res.checks:
    st.markdown("**The paper's claims, checked on our numbers**")
    for claim, ok in res.checks.items():
        (st.success if ok else st.warning)(("✓ " if ok else "✗ ") + claim)
for k, (title, table) in enumerate(res.tables.items()):
    st.markdown(f"**{title}**")
    st.dataframe(
        table,
        hide_index=True,
        key=f"papers_table_{name}_{k}",
        column_config=number_columns(table),
    )
if res.figure is not None:
    st.plotly_chart(res.figure, key=f"papers_fig_{name}", theme=None)
if res.text:
    with st.expander("Notes and printed output", expanded=not res.tables):
        st.code(res.text, language=None)
