"""Compare: runs or methods on identical (repeated) splits; mean ± std, significance, charts."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app.state import (
    AppState,
    ComparisonEntry,
    DatasetEntry,
    compare_methods,
    compatible_methods,
    default_baseline,
    default_method,
    display_name,
    runs_json,
)
from app.state.background import start_comparison, take_failed
from app.state.views import has_probabilities, run_views
from app.ui.errors import show_error
from app.ui.model_io import comparison_exports
from app.ui.page import run_with_progress, training_page
from app.ui.reports import ready_reports
from app.ui.training import metric_columns
from app.ui.widgets import CALIBRATION_NOTE, calibration_table, mean_std_table, number_columns
from hierlab import Taxonomy, get_method
from hierlab.evaluation.metrics import metric_label
from hierlab.plots import (
    error_per_level_figure,
    metric_bars_figure,
    pr_curve_figure,
    reliability_figure,
)


def choose_configs(state: AppState, methods: list[str]) -> list[dict[str, Any]]:
    """The configurations to compare: registered methods with their defaults, or past runs."""
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
    if source == "methods":
        default = list(
            dict.fromkeys(
                m for m in (default_baseline(methods), default_method(methods)) if m in methods
            )
        )
        chosen = st.multiselect(
            "Methods",
            methods,
            default=default or methods[:2],
            key="compare_methods",
            format_func=display_name,
        )
        return [
            {"label": display_name(m), "method": m, "params": get_method(m).defaults()}
            for m in chosen
        ]
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
    runs = [r for r in (state.run(i) for i in picked) if r is not None]
    return [{"label": r.label, "method": r.method, "params": dict(r.params)} for r in runs]


def choose_plan(has_own_split: bool) -> dict[str, Any]:
    """``compare_methods``'s split arguments: ``n_splits`` (0 = own split), test size, seed."""
    c1, c2, c3, c4 = st.columns(4)
    plan = c1.radio(
        "Splits",
        ["repeated"] + (["own"] if has_own_split else []),
        key="compare_plan",
        format_func=lambda p: (
            "repeated random splits" if p == "repeated" else "the data set's own split"
        ),
    )
    own = plan == "own"
    n_splits = int(
        c2.number_input("Number of splits", 1, 20, 3, key="compare_n_splits", disabled=own)
    )
    test_size = c3.slider(
        "Test fraction", 0.1, 0.5, 0.3, 0.05, key="compare_test_size", disabled=own
    )
    seed = int(c4.number_input("Seed", value=0, step=1, key="compare_seed"))
    return {"n_splits": 0 if own else n_splits, "test_size": test_size, "seed": seed}


def show_significance(comp: ComparisonEntry) -> None:
    """The significance tests against the baseline, on a metric the user picks."""
    metrics = sorted(comp.results["metric"].unique())
    sig_metric = st.selectbox(
        "Significance against the baseline on",
        metrics,
        index=metrics.index("accuracy") if "accuracy" in metrics else 0,
        key="compare_sig_metric",
        format_func=metric_label,
        help="Each metric's definition is in the tooltip of its column in the table above.",
    )
    try:
        p_value = "p-value: the chance of a difference at least this large if the two were equal"
        st.dataframe(
            comp.tests(sig_metric),
            hide_index=True,
            key="compare_tests",
            column_config={
                c: st.column_config.NumberColumn(c, format="%.2e", help=p_value)
                for c in ("t_pvalue", "sign_pvalue", "wilcoxon_pvalue")
            },
        )
        st.caption(
            "t_pvalue: paired t-test over splits · sign_pvalue: sign test on per-example "
            "correctness · wilcoxon_pvalue: Wilcoxon signed-rank on per-class F1."
        )
    except Exception as exc:
        show_error(exc, "Significance tests")


def show_charts(comp: ComparisonEntry) -> None:
    """Metric bars with error bars, error per level, and the mean times."""
    try:
        st.plotly_chart(metric_bars_figure(comp.summary_long()), key="compare_bars", theme=None)
    except Exception as exc:
        show_error(exc, "Bar chart")
    if not comp.per_level.empty:
        st.plotly_chart(
            error_per_level_figure(
                comp.level_summary(), title="Error per level (mean ± std over splits)"
            ),
            key="compare_levels",
            theme=None,
        )
    times = comp.times().rename(
        columns={"fit_time": "fit s (mean)", "predict_time": "predict s (mean)"}
    )
    st.dataframe(times, hide_index=True, column_config=number_columns(times))


def show_downloads(state: AppState, comp: ComparisonEntry, table_csv: str) -> None:
    """The summary table, the whole comparison and the run history, as files."""
    files = [
        ("Table (CSV)", table_csv, "hierlab_compare.csv", "text/csv", "dl_summary"),
        (
            "All results (JSON)",
            comp.to_json(),
            "hierlab_compare.json",
            "application/json",
            "dl_json",
        ),
        ("Runs (JSON)", runs_json(state.runs), "hierlab_runs.json", "application/json", "dl_runs"),
    ]
    for col, (label, data, name, mime, key) in zip(st.columns(3), files):
        col.download_button(
            label,
            data,
            file_name=name,
            mime=mime,
            key=key,
            disabled=key == "dl_runs" and not state.runs,
        )


def run_comparison(
    state: AppState, entry: DatasetEntry, configs: list[dict[str, Any]], tax: Taxonomy
) -> None:
    """The plan and baseline widgets, and the button that runs the comparison."""
    plan = choose_plan(entry.own_split is not None)
    labels_now = [c["label"] for c in configs]
    baseline = st.selectbox(
        "Baseline (significance is tested against it)", labels_now or ["-"], key="compare_baseline"
    )
    background = st.checkbox(
        "Run in the background",
        key="compare_background",
        help="Keep browsing (train, explore) while it runs in a separate process; the sidebar "
        "shows it running, and its results land on this page when it is done.",
    )
    clicked = st.button("Run comparison", key="run_compare", type="primary", disabled=not configs)
    if clicked and background:
        try:
            start_comparison(
                state,
                entry,
                configs,
                baseline=baseline if baseline in labels_now else None,
                taxonomy=tax,
                **plan,
            )
        except Exception as exc:
            show_error(exc, "Starting the comparison")
        else:
            st.rerun()  # the sidebar shows it running from now on
    elif clicked:
        comp = run_with_progress(
            lambda progress: compare_methods(
                state,
                entry,
                configs,
                baseline=baseline if baseline in labels_now else None,
                taxonomy=tax,
                progress=progress,
                **plan,
            ),
            "Comparison",
        )
        if comp is not None:
            state.comparisons.append(comp)


def run_probabilities(state: AppState, entry: DatasetEntry) -> None:
    """PR curves and reliability diagrams of the session's runs on this data set and split
    (each run's report computed once, in the background; a progress bar while it runs)."""
    runs = [
        r
        for r in state.runs
        if r.dataset_key == entry.key
        and r.split == entry.split
        and len(r.y_test) == entry.test.n_samples
        and has_probabilities(r)
    ]
    if not runs:
        return
    st.subheader("Calibrated probabilities of the trained runs")
    labels = {r.id: r.label for r in runs}
    picked = st.multiselect(
        "Runs",
        list(labels),
        default=list(labels)[-4:],
        format_func=lambda i: labels[i],
        key="compare_proba_runs",
    )
    jobs = []
    for r in (x for x in runs if x.id in picked):
        try:
            job = run_views(r, entry.test).proba
        except Exception as exc:
            show_error(exc, f"Probabilities of {r.label}")
            continue
        if job is not None:
            jobs.append((r.label, job))
    reports = ready_reports(jobs)
    if not reports:
        return
    table = calibration_table(reports)
    st.dataframe(
        table, hide_index=True, key="compare_proba_table", column_config=number_columns(table)
    )
    st.caption(CALIBRATION_NOTE)
    c1, c2 = st.columns(2)
    with c1:
        fig = pr_curve_figure({k: v["pr_curve"] for k, v in reports.items()})
        st.plotly_chart(fig, key="compare_pr", theme=None)
    with c2:
        fig = reliability_figure(
            {k: v["reliability"] for k, v in reports.items()},
            title="Reliability of the top-1 confidence",
        )
        st.plotly_chart(fig, key="compare_reliability", theme=None)


def show_comparison(state: AppState, comp: ComparisonEntry) -> None:
    """The last comparison: its table, significance tests, charts and downloads."""
    state.landed.clear()  # shown here: the sidebar's notices are done
    st.subheader(f"Comparison #{comp.id} on {comp.dataset_name}")
    st.caption(f"{comp.describe_plan()}; baseline {comp.baseline}. Mean ± std over splits.")
    for label, why in comp.trivial().items():
        st.warning(
            f"**Trivial model ({label}):** it {why}: its row is not a result of the method.",
            icon=":material/warning:",
        )
    numeric = comp.numeric_table()
    table = mean_std_table(numeric)
    st.dataframe(
        table,
        hide_index=True,
        key="compare_table",
        column_config={
            **metric_columns(table),
            "fit_time": st.column_config.Column("fit time (s)", help="Seconds per fit"),
            "predict_time": st.column_config.Column("predict time (s)", help="Seconds per predict"),
        },
    )
    if len(comp.configs) > 1:
        show_significance(comp)
    show_charts(comp)
    show_downloads(state, comp, numeric.to_csv(index=False))
    comparison_exports(state, comp)
    with st.expander("Per-split results"):
        st.dataframe(comp.results, hide_index=True, column_config=number_columns(comp.results))


state, entry, tax, tax_source = training_page("Compare")
st.caption(
    f"Data: **{entry.name}** · taxonomy: {tax_source}. Every configuration is fitted on "
    "the same splits."
)
for job in take_failed(state):  # background comparisons that failed: said here, then gone
    st.error(job.describe())
configs = choose_configs(state, compatible_methods(entry.train, tax))
run_comparison(state, entry, configs, tax)
if state.comparisons:
    show_comparison(state, state.comparisons[-1])
run_probabilities(state, entry)  # last: the one section that may still be computing
