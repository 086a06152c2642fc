"""Compare: runs or methods on identical (repeated) splits; mean ± std, significance, charts."""

from __future__ import annotations

import streamlit as st

from app.state import (
    compare_methods,
    compatible_methods,
    default_method,
    get_state,
    runs_json,
)
from app.ui.errors import show_error
from app.ui.figures import figure
from hierlab.core.registry import get_method

state = get_state()
st.title("Compare")
entry = state.dataset
if entry is None:
    st.info("Load a data set on the Data page first.")
    st.stop()
tax, tax_source = state.training_taxonomy()
st.caption(
    f"Data: **{entry.name}** · taxonomy: {tax_source}. Every configuration is fitted on "
    "the same splits."
)

source = st.radio(
    "Compare",
    ["methods", "runs"],
    horizontal=True,
    key="compare_source",
    format_func=lambda s: (
        "registered methods (default parameters)"
        if s == "methods"
        else "runs from the history (their parameters)"
    ),
)
configs: list[dict] = []
if source == "methods":
    methods = compatible_methods(entry.train, tax)
    first = default_method(methods)
    default = [m for m in ("topdown", first) if m in methods]
    default = list(dict.fromkeys(default)) or methods[:2]
    chosen = st.multiselect("Methods", methods, default=default, key="compare_methods")
    configs = [{"label": m, "method": m, "params": get_method(m).defaults()} for m in chosen]
else:
    if not state.runs:
        st.info("No run yet: train on the Train page, or compare registered methods.")
    labels = {r.id: r.label for r in state.runs}
    picked = st.multiselect(
        "Runs",
        list(labels),
        default=list(labels)[-3:],
        format_func=lambda i: labels[i],
        key="compare_runs",
    )
    for i in picked:
        r = state.run(i)
        if r is not None:
            configs.append({"label": r.label, "method": r.method, "params": dict(r.params)})

c1, c2, c3, c4 = st.columns(4)
plans = ["repeated"] + (["own"] if entry.own_split is not None else [])
plan = c1.radio(
    "Splits",
    plans,
    key="compare_plan",
    format_func=lambda p: (
        "repeated random splits" if p == "repeated" else "the data set's own split"
    ),
)
n_splits = int(
    c2.number_input("Number of splits", 1, 20, 3, key="compare_n_splits", disabled=plan == "own")
)
test_size = c3.slider(
    "Test fraction", 0.1, 0.5, 0.3, 0.05, key="compare_test_size", disabled=plan == "own"
)
seed = int(c4.number_input("Seed", value=0, step=1, key="compare_seed"))
labels_now = [c["label"] for c in configs]
baseline = st.selectbox(
    "Baseline (significance is tested against it)", labels_now or ["-"], key="compare_baseline"
)

if st.button("Run comparison", key="run_compare", type="primary", disabled=not configs):
    bar = st.progress(0.0, text="starting ...")
    try:
        comp = compare_methods(
            state,
            entry,
            configs,
            n_splits=0 if plan == "own" else n_splits,
            test_size=test_size,
            seed=seed,
            baseline=baseline if baseline in labels_now else None,
            taxonomy=tax,
            progress=lambda f, t: bar.progress(f, text=t),
        )
        state.comparisons.append(comp)
    except Exception as exc:
        show_error(exc, "Comparison")
    bar.empty()

if not state.comparisons:
    st.stop()

comp = state.comparisons[-1]
st.subheader(f"Comparison #{comp.id} on {comp.dataset_name}")
plan_txt = (
    "the data set's own split"
    if comp.plan.get("mode") == "own"
    else f"{comp.plan['n_splits']} random splits, test fraction {comp.plan['test_size']:.0%}, "
    f"seed {comp.plan['seed']}"
)
st.caption(f"{plan_txt}; baseline {comp.baseline}. Mean ± std over splits.")
table = comp.table()
st.dataframe(table, hide_index=True, key="compare_table")

metrics = sorted(comp.results["metric"].unique())
if len(comp.configs) > 1:
    m_default = metrics.index("accuracy") if "accuracy" in metrics else 0
    sig_metric = st.selectbox(
        "Significance against the baseline on", metrics, index=m_default, key="compare_sig_metric"
    )
    try:
        st.dataframe(comp.tests(sig_metric), hide_index=True, key="compare_tests")
        st.caption(
            "t_pvalue: paired t-test over splits · sign_pvalue: sign test on per-example "
            "correctness · wilcoxon_pvalue: Wilcoxon signed-rank on per-class F1."
        )
    except Exception as exc:
        show_error(exc, "Significance tests")

try:
    st.plotly_chart(
        figure("metric_bars_figure", comp.summary_long()), key="compare_bars", theme=None
    )
except Exception as exc:
    show_error(exc, "Bar chart")
if not comp.per_level.empty:
    g = comp.per_level.groupby(["config", "level"], sort=False)["error"]
    lv = g.mean().rename("error").to_frame().join(g.std().rename("error_std")).reset_index()
    frames = {c: df for c, df in lv.groupby("config", sort=False)}
    st.plotly_chart(
        figure("error_per_level_figure", frames, title="Error per level (mean ± std over splits)"),
        key="compare_levels",
        theme=None,
    )
st.dataframe(
    comp.times().rename(columns={"fit_time": "fit s (mean)", "predict_time": "predict s (mean)"}),
    hide_index=True,
)

d1, d2, d3 = st.columns(3)
d1.download_button(
    "Table (CSV)",
    table.to_csv(index=False),
    file_name="hierlab_compare.csv",
    mime="text/csv",
    key="dl_summary",
)
d2.download_button(
    "All results (JSON)",
    comp.to_json(),
    file_name="hierlab_compare.json",
    mime="application/json",
    key="dl_json",
)
d3.download_button(
    "Runs (JSON)",
    runs_json(state.runs),
    file_name="hierlab_runs.json",
    mime="application/json",
    key="dl_runs",
    disabled=not state.runs,
)
with st.expander("Per-split results"):
    st.dataframe(comp.results, hide_index=True)
