"""hierlab's Streamlit app: ``streamlit run app/streamlit_app.py`` (``make run``).

Layout and wiring only: the navigation over ``app_pages/`` (opening on "Start here",
``home.py``), the sidebar, and the default data set loaded on the first visit so that a person
can train in one click. Every page runs inside a
guard that turns an error into an ``st.error`` message (never a traceback) and keeps the
session's data and runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import builtin_choices, get_state, load_builtin  # noqa: E402
from app.state.background import collect, pending  # noqa: E402
from app.ui.errors import show_error  # noqa: E402
from hierlab.core.exceptions import HierlabError  # noqa: E402

st.set_page_config(page_title="hierlab", page_icon=":material/account_tree:", layout="wide")

PAGES = Path(__file__).resolve().parent / "app_pages"
home = st.Page(
    PAGES / "home.py", title="Start here", icon=":material/home:", url_path="home", default=True
)
lab = [
    st.Page(PAGES / "data.py", title="Data", icon=":material/dataset:", url_path="data"),
    st.Page(
        PAGES / "taxonomy.py", title="Taxonomy", icon=":material/account_tree:", url_path="taxonomy"
    ),
    st.Page(
        PAGES / "train.py",
        title="Train",
        icon=":material/model_training:",
        url_path="train",
    ),
    st.Page(
        PAGES / "explore.py", title="Explore", icon=":material/search_insights:", url_path="explore"
    ),
    st.Page(PAGES / "compare.py", title="Compare", icon=":material/compare:", url_path="compare"),
]
# the teaching pages (issue 11), listed when present
LEARN = (
    ("demos.py", "Guided demos", ":material/school:", "demos"),
    ("methods.py", "Methods", ":material/menu_book:", "methods"),
    ("papers.py", "Paper tables", ":material/table_chart:", "papers"),
    ("race.py", "Solver race", ":material/speed:", "race"),
)
learn = [
    st.Page(PAGES / f, title=t, icon=i, url_path=u) for f, t, i, u in LEARN if (PAGES / f).is_file()
]
pages = {"": [home], "Lab": lab, "Learn": learn} if learn else {"": [home], "Lab": lab}

state = get_state()
if not state.datasets and not st.session_state.get("default_failed"):
    choices = [b for b in builtin_choices() if b.kind != "real"]
    if choices:
        try:
            with st.spinner(f"Loading the built-in data set {choices[0].label} ..."):
                state.add_dataset(load_builtin(choices[0].key))
        except (HierlabError, Exception) as exc:  # the Data page offers the others
            st.session_state["default_failed"] = str(exc)

with st.sidebar:
    st.markdown("### hierlab")
    ds = state.dataset
    if ds is not None:
        st.caption(f"Data: **{ds.name}** — {ds.describe_split()}")
    elif st.session_state.get("default_failed"):
        st.caption(f"Default data set failed to load: {st.session_state['default_failed']}")
    else:
        st.caption("No data set yet: choose or upload one on the Data page.")
    # filled again after the page: a run trained on it counts at once, not one rerun later
    run_count = st.empty()
    run_count.caption(f"Runs in this session: {len(state.runs)}")


@st.fragment(run_every=2.0)
def background_comparisons() -> None:
    """Comparisons running in the background: their progress, and each one as it lands (this
    fragment's timer never interrupts a running page, a live fit included)."""
    collect(state)
    for job in pending(state):
        st.caption(job.describe())
    for k in state.landed:
        st.caption(f"Comparison #{k} is done: its results are on the Compare page.")


collect(state)  # a job finished since the last rerun lands now
if state.background or state.landed:
    with st.sidebar:
        background_comparisons()

page = st.navigation(pages)
try:
    page.run()
except Exception as exc:  # HierlabError and anything unexpected: a message, not a traceback
    show_error(exc)
run_count.caption(f"Runs in this session: {len(state.runs)}")
