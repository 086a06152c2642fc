"""Guided demos: one click runs a preset (data, taxonomy, methods, parameters) and says what to
look at; the result can be opened in the lab or downloaded as a notebook."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when the page runs on its own (AppTest.from_file)
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import get_state, load_builtin, run_from_result, session_dict  # noqa: E402
from app.ui.errors import show_error  # noqa: E402
from app.ui.page import stored_result  # noqa: E402
from app.ui.training import metric_columns  # noqa: E402
from hierlab.lab.demos import DEMOS, DemoResult, run_demo  # noqa: E402
from hierlab.lab.export import export_notebook, export_script  # noqa: E402

RESULTS_KEY = "demo_results"

st.title("Guided demos")
st.caption(
    "Each demo sets the data, the taxonomy, the methods and their parameters in one click, runs "
    "them through the hierlab engine (small sizes: a few seconds), and tells you what to look at."
)
results: dict[str, DemoResult] = session_dict(RESULTS_KEY)

name = st.radio(
    "Demo",
    list(DEMOS),
    format_func=lambda n: DEMOS[n].title,
    horizontal=True,
    key="demo_choice",
)
preset = DEMOS[name]
st.markdown(preset.markdown())  # the same text as the seed's teaching notebook
with st.expander("The preset: data, split, methods and parameters", expanded=False):
    st.markdown(
        f"- data: built-in `{preset.data}` with "
        + ", ".join(f"`{k}={v!r}`" for k, v in preset.data_params.items())
        + f"\n- split: {preset.split}\n- seed paper(s): {preset.seeds or '-'}"
    )
    st.dataframe(
        [
            {
                "run": r.label,
                "method": r.method,
                "parameters": ", ".join(f"{k}={v!r}" for k, v in r.params.items()),
                "seed": r.seed,
                "taxonomy": r.taxonomy,
            }
            for r in preset.runs
        ],
        hide_index=True,
        key=f"demo_preset_{name}",
    )
if preset.notebook:
    st.caption(
        f"The teaching notebook `docs/notebooks/{preset.notebook}` runs this demo with the "
        "same text and code, and goes further (the objective, a live fit, the paper's table)."
    )

res = stored_result(
    results,
    name,
    lambda progress: run_demo(name, progress=progress),
    button=("Run this demo", "demo_run"),
    what=f"Running the demo {preset.title!r}",
    hint="Press **Run this demo**.",
)

st.success(f"Done in {res.seconds:.1f} s. What it shows:")
st.markdown(res.markdown())
SHOWN = ("label", "method", "zero_one_error", "tree_induced_error", "accuracy", "macro_f1")
cols = [c for c in (*SHOWN, "hierarchical_f1") if c in res.metrics.columns]
shown = res.metrics[cols]
st.dataframe(
    shown, hide_index=True, key=f"demo_metrics_{name}", column_config=metric_columns(shown)
)
for k, (title, fig) in enumerate(res.figures.items()):
    st.markdown(f"**{title}**")
    st.plotly_chart(fig, key=f"demo_fig_{name}_{k}", theme=None)

if preset.exercises:
    st.markdown(preset.exercises_markdown())

st.divider()
left, mid, right = st.columns(3)
script = export_script(preset.session())
with left:
    st.download_button(
        "Download as a notebook (.ipynb)",
        json.dumps(export_notebook(script=script), indent=1),
        file_name=f"hierlab_demo_{name}.ipynb",
        mime="application/x-ipynb+json",
        key=f"demo_nb_{name}",
    )
with mid:
    st.download_button(
        "Download as a script (.py)",
        script,
        file_name=f"hierlab_demo_{name}.py",
        mime="text/x-python",
        key=f"demo_py_{name}",
    )
with right:
    open_in_lab = st.button(
        "Open in the lab",
        key=f"demo_open_{name}",
        help="Load the demo's data set and its runs into this session (Train, Explore, Compare).",
    )
if open_in_lab:
    try:
        state = get_state()
        entry = load_builtin(f"catalog:{preset.data}", dict(preset.data_params))
        state.add_dataset(entry)
        state.runs += [run_from_result(state, entry, r) for r in res.runs]
        st.success(
            f"Loaded {entry.name} and {len(res.runs)} run(s) into the lab: see Explore and Compare."
        )
    except Exception as exc:  # the demo stays on the page
        show_error(exc, "Opening the demo in the lab")
