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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import builtin_choices, get_state, load_builtin  # noqa: E402
from app.ui.errors import show_error  # noqa: E402
from app.ui.jobs import cluster_setting, jobs_panel, sidebar_slot  # noqa: E402
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
# the teaching pages, listed when present
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


def sidebar_summary(slot: Any) -> None:
    """The current data set and the number of runs, in ``slot``."""
    ds = state.dataset
    with slot.container():
        if ds is not None:
            st.caption(f"Data: **{ds.name}** — {ds.describe_split()}")
        elif st.session_state.get("default_failed"):
            st.caption(f"Default data set failed to load: {st.session_state['default_failed']}")
        else:
            st.caption("No data set yet: choose or upload one on the Data page.")
        st.caption(f"Runs in this session: {len(state.runs)}")


with st.sidebar:
    st.markdown("### hierlab")
    # filled again after the page: a data set chosen or a run trained on it shows at once,
    # not one rerun later
    summary = st.empty()
    sidebar_summary(summary)
    jobs = sidebar_slot()
    cluster_setting(state)


jobs_panel(state, jobs)  # at the top level of the main area: see app.ui.jobs
page = st.navigation(pages)
try:
    page.run()
except Exception as exc:  # HierlabError and anything unexpected: a message, not a traceback
    show_error(exc)
sidebar_summary(summary)
