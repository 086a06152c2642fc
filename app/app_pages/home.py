"""Start here: what the lab is, the three ways in, and a one-click first run that shows a solver
certifying its optimum (the Train page's live chart, :func:`app.ui.training.train_live`)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when the page runs on its own (AppTest.from_file)
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import (  # noqa: E402
    compatible_methods,
    default_method,
    display_name,
    get_state,
    suggested_params,
)
from app.ui.training import bounds_chart, show_metrics, train_live, x_axis_toggle  # noqa: E402
from app.ui.widgets import trivial_warning  # noqa: E402
from hierlab import get_method  # noqa: E402

#: the pages the three ways in open (paths as ``st.switch_page`` takes them)
DATA_PAGE = "app_pages/data.py"
DEMOS_PAGE = "app_pages/demos.py"
TRAIN_PAGE = "app_pages/train.py"
EXPLORE_PAGE = "app_pages/explore.py"

#: the session key of the first run's id
FIRST_RUN = "home_first_run"

state = get_state()
st.title("Start here")
st.markdown(
    "**hierlab** is a lab for *hierarchical classification*: the labels sit in a tree, and a "
    "mistake between siblings costs less than one across the tree. It trains the methods of "
    "five research papers on the same data and shows, live, how each solver closes the gap "
    "between an upper and a lower bound on its objective until the optimum is certified. "
    "You can then explore where a model errs in the tree and compare methods on identical "
    "splits."
)

st.subheader("Three ways in")
ways = st.columns(3)
with ways[0]:
    st.markdown("**A built-in data set**  \nNewsgroups, patents, synthetic trees: ready to train.")
    if st.button("Choose a data set", key="home_builtin", icon=":material/dataset:"):
        st.switch_page(DATA_PAGE)
with ways[1]:
    st.markdown("**Your own data**  \nUpload a CSV, svmlight or ARFF file and its taxonomy.")
    if st.button("Upload a file", key="home_upload", icon=":material/upload_file:"):
        st.session_state["data_open_upload"] = True
        st.switch_page(DATA_PAGE)
with ways[2]:
    st.markdown("**A guided demo**  \nOne click sets up a question from a paper and answers it.")
    if st.button("Open the demos", key="home_demos", icon=":material/school:"):
        st.switch_page(DEMOS_PAGE)

st.subheader("Your first run")
entry = state.dataset
if entry is None:
    st.info("No data set is loaded yet: choose one above, then come back for the first run.")
    st.stop()
tax, tax_source = state.training_taxonomy()
assert tax is not None
methods = compatible_methods(entry.train, tax)
method = default_method(methods)
if method is None:
    st.info("No method accepts this data set: choose another one above.")
    st.stop()
assert method is not None
spec = get_method(method)
name = display_name(method)
st.markdown(
    f"Train **{name}** ({spec.summary or 'the default method'}) on **{entry.name}** "
    f"({entry.describe_split()}) and watch its upper and lower bounds meet: the gap between "
    "them, on a log scale, is how far the solver can still be from the best possible model."
)
clicked = st.button(
    f"Train {name} now",
    key="home_first_train",
    type="primary",
    icon=":material/play_arrow:",
)
x = x_axis_toggle("home_bounds_x")
slots = [st.empty(), st.empty(), st.empty()]  # chart, progress bar, Stop button
if clicked:
    fast = (getattr(spec, "presets", None) or {}).get("fast", {})  # the registry's quick settings
    params = {**suggested_params(method, tax), **fast}
    run = train_live(state, entry, method, params, (tax, tax_source), slots, x)
    if run is not None:
        st.session_state[FIRST_RUN] = run.id
first = state.run(st.session_state.get(FIRST_RUN, -1))
if first is not None:
    if not clicked:
        bounds_chart(slots[0], first, x, key="home_bounds")
    gap = first.history.get("gap")
    states = len(first.history)
    st.markdown(
        f"**{states} state(s)** in {first.fit_time:.1f} s"
        + (
            f"; the gap fell from {gap.iloc[0]:.3g} to {gap.iloc[-1]:.3g}."
            if gap is not None and len(gap.dropna()) >= 2
            else "."
        )
    )
    trivial_warning(first)
    show_metrics(first.metrics)
    nxt = st.columns(2)
    if nxt[0].button("Explore this model", key="home_explore", icon=":material/search_insights:"):
        st.switch_page(EXPLORE_PAGE)
    if nxt[1].button("Try other methods and settings", key="home_train", icon=":material/tune:"):
        st.switch_page(TRAIN_PAGE)
