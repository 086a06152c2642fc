"""Solver race: seed 000's Algorithm 1 as printed, line-search RDA and BCFW on one problem, one
budget each, drawn as certified gap against seconds (:func:`hierlab.lab.race.run_race`)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # when the page runs on its own (AppTest.from_file)
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.state import get_state, load_builtin, session_dict  # noqa: E402
from app.ui.page import stored_result  # noqa: E402
from app.ui.widgets import number_columns  # noqa: E402
from hierlab.lab.race import RACE_METHODS, SOLVERS, RaceResult, run_race  # noqa: E402
from hierlab.plots import race_figure  # noqa: E402

RESULTS_KEY = "race_results"
DEFAULT_DATA = "catalog:hieron-synthetic"

st.title("Solver race")
st.caption(
    "Three solvers minimise the same training objective, each for the same number of seconds: "
    "Algorithm 1 of seed 000 with the weights 1/t as printed, the same iteration with the "
    "weight that maximises its lower bound, and block-coordinate Frank-Wolfe on the dual. Every "
    "point is certified (lower <= optimum <= upper); the chart shows how much certified gap a "
    "second buys."
)
state = get_state()
entry = state.dataset
if entry is None or entry.train.is_multilabel or not entry.taxonomy.is_tree:
    why = "no data set yet" if entry is None else f"{entry.name} is not single-label on a tree"
    st.info(f"The race needs single-label data on a tree ({why}): using the built-in Hieron set.")
    entry = load_builtin(DEFAULT_DATA)
    state.add_dataset(entry)
train, taxonomy = entry.train, entry.taxonomy
st.markdown(
    f"Data: **{entry.name}**, training split: {train.n_samples} rows x {train.n_features} "
    f"features, {entry.taxonomy.n_nodes} nodes."
)

left, mid, right = st.columns(3)
with left:
    method = st.selectbox("Method (seed 000)", RACE_METHODS, key="race_method")
with mid:
    C = st.number_input(
        "C (weight of the summed hinge)",
        min_value=1e-6,
        max_value=1e6,
        value=1.0,
        format="%g",
        key="race_C",
        help="C multiplies the sum of the examples' hinge losses (scikit-learn's convention).",
    )
with right:
    budget = st.slider(
        "Seconds per solver", 0.5, 60.0, 5.0, step=0.5, key="race_budget",
        help="Solver time each racer gets (the chart's x axis); the race takes about 3x this.",
    )  # fmt: skip

results: dict[str, RaceResult] = session_dict(RESULTS_KEY)


def task(progress):  # type: ignore[no-untyped-def]
    """Run the race with the widgets' settings, reporting which solver runs."""
    return run_race(
        train.X,
        train.y,
        taxonomy,
        method=str(method),
        C=float(C),
        max_time=float(budget),
        progress=lambda s, f: progress(f, f"Racing: {s} ({SOLVERS[s]})"),
    )


res = stored_result(
    results,
    "race",
    task,
    button=("Run the race", "race_run"),
    what="Running the race",
    hint="Pick a method, C and a budget, then press **Run the race**.",
)
st.caption(
    f"Last race: {res.method.upper()}, C = {res.C:g}, {res.max_time:g} s per solver; "
    f"J(0) = {res.J0:.6g} is every solver's starting gap (W = 0, lower bound 0)."
)
st.plotly_chart(race_figure(res), key="race_chart", theme=None)
table = res.summary().rename(
    columns={
        "gap": "certified gap",
        "relative_gap": "relative gap",
        "decades_per_second": "gap decades closed / s",
    }
)
table.insert(0, "algorithm", [res.algorithms.get(n, "") for n in table.index])
SHOWN = ["algorithm", "certified gap", "relative gap", "upper", "lower", "iterations", "seconds"]
shown = table[[*SHOWN, "gap decades closed / s"]]
st.dataframe(shown, key="race_table", column_config=number_columns(shown))
st.caption(
    "gap decades closed / s = log10(J(0) / certified gap) / seconds. Upper: the best objective "
    "value seen; lower: the best certified lower bound. BCFW's points between its exact "
    "checkpoints (large data) keep the last exact bounds."
)
