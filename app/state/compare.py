"""Comparisons: several configurations fitted on identical splits by
``hierlab.evaluation.compare``, kept in the session with their per-level errors."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from app.state.runs import json_default
from hierlab import DataError, HierDataset, Taxonomy, compare
from hierlab.evaluation.metrics import error_per_level

if TYPE_CHECKING:
    from app.state.data import DatasetEntry

__all__ = [
    "ComparisonEntry",
    "ComparisonSession",
    "compare_methods",
    "comparison_data",
    "finish_comparison",
    "run_engine",
]


@dataclass
class ComparisonEntry:
    """A comparison of configurations on identical splits, kept in the session's history: the
    engine's result (``hierlab.evaluation.compare``) and what the Compare page draws of it.

    Attributes
    ----------
    id : int
    dataset_name : str
    configs : list of dict
        ``{"label", "method", "params"}`` per compared configuration.
    plan : dict
        ``{"mode": "random", "n_splits", "test_size", "seed"}`` or ``{"mode": "own"}``.
    engine : hierlab.evaluation.compare.Comparison
        The engine's result: tidy ``results``, ``splits``, predictions, per-example correctness.
    per_level : DataFrame
        config, split, level, error (``hierlab.evaluation.metrics.error_per_level`` per fit).
    baseline : str
        Label of the baseline configuration.
    dataset_key : str
        The data set's key in the session (for exports).
    split : dict
        The data set's split when the comparison ran (an induced taxonomy was induced on its
        training rows).
    taxonomy_source : str
        ``"given"`` or ``"induced"``.
    """

    id: int
    dataset_name: str
    configs: list[dict[str, Any]]
    plan: dict[str, Any]
    engine: Any
    per_level: pd.DataFrame
    baseline: str
    dataset_key: str = ""
    split: dict[str, Any] = field(default_factory=dict)
    taxonomy_source: str = "given"

    @property
    def results(self) -> pd.DataFrame:
        """Tidy: method, split, metric, value, fit_time, predict_time, n_iter."""
        results: pd.DataFrame = self.engine.results
        return results

    def describe_plan(self) -> str:
        """One line: which splits were used."""
        if self.plan.get("mode") == "own":
            return "the data set's own split"
        p = self.plan
        return (
            f"{p['n_splits']} random splits, test fraction {p['test_size']:.0%}, seed {p['seed']}"
        )

    def summary_long(self) -> pd.DataFrame:
        """Mean and std per method and metric: columns method, metric, mean, std."""
        g = self.results.groupby(["method", "metric"], sort=False)["value"]
        return g.agg(mean="mean", std="std").reset_index()

    def level_summary(self) -> dict[str, pd.DataFrame]:
        """Per configuration: level, mean error and its std over the splits."""
        g = self.per_level.groupby(["config", "level"], sort=False)["error"]
        lv = g.mean().rename("error").to_frame().join(g.std().rename("error_std")).reset_index()
        return dict(tuple(lv.groupby("config", sort=False)))

    def numeric_table(self) -> pd.DataFrame:
        """One row per method: ``method``, then ``<metric>_mean`` and ``<metric>_std`` (and
        ``fit_time``, ``predict_time``) as numbers over the splits: what the CSV export holds."""
        return self.engine.summary().reset_index().rename(columns={"index": "method"})

    def trivial(self) -> dict[str, str]:
        """Configurations whose model predicted one class for every test row of a split
        (while the test rows had several): label -> why, in words."""
        out: dict[str, str] = {}
        for (label, s), pred in self.engine.predictions.items():
            labels = {str(v) for v in pred}
            truth = {str(v) for v in self.engine.dataset.y[self.engine.splits[s][1]]}
            if len(pred) > 1 and len(labels) == 1 and len(truth) > 1 and label not in out:
                out[label] = (
                    f"predicts {next(iter(labels))!r} for every one of the {len(pred)} test rows "
                    f"of split {s + 1}"
                )
        return out

    def table(self) -> pd.DataFrame:
        """``mean ± std`` per metric, one row per method (the engine's table)."""
        table: pd.DataFrame = self.engine.table()
        return table.reset_index()

    def tests(self, metric: str = "accuracy", baseline: str | None = None) -> pd.DataFrame:
        """Paired t-test on ``metric``, sign test and Wilcoxon against the baseline."""
        tests: pd.DataFrame = self.engine.tests(baseline or self.baseline, metric)
        return tests.reset_index()

    def times(self) -> pd.DataFrame:
        """Mean fit and predict seconds per method."""
        r = self.results.drop_duplicates(["method", "split"])
        return r.groupby("method", sort=False)[["fit_time", "predict_time"]].mean().reset_index()

    def to_json(self) -> str:
        """The whole comparison (plan, configurations, tidy results, tests) as JSON."""
        metrics = sorted(self.results["metric"].unique())
        tests = {}
        if len(self.configs) > 1:
            tests = {m: self.tests(m).to_dict(orient="records") for m in metrics}
        return json.dumps(
            {
                "dataset": self.dataset_name,
                "plan": self.plan,
                "configs": self.configs,
                "baseline": self.baseline,
                "results": self.results.to_dict(orient="records"),
                "per_level": self.per_level.to_dict(orient="records"),
                "tests": tests,
            },
            indent=1,
            default=json_default,
        )


class ComparisonSession(Protocol):
    """What filing a comparison needs of the session (:class:`app.state.session.AppState`
    has it): the comparison history and the ids."""

    comparisons: list[ComparisonEntry]

    def new_id(self) -> int:
        """A fresh id for a run, job or comparison."""
        ...


def _with_taxonomy(ds: HierDataset, tax: Taxonomy) -> HierDataset:
    if ds.taxonomy is tax:
        return ds
    return HierDataset(
        X=ds.X,
        y=ds.y,
        taxonomy=tax,
        feature_names=ds.feature_names,
        name=ds.name,
        description=ds.description,
        meta=dict(ds.meta),
    )


def _per_level(cmp: Any, tax: Taxonomy) -> pd.DataFrame:
    """config, split, level, error: ``error_per_level`` of every fit (single-label only)."""
    rows = []
    if not cmp.dataset.is_multilabel:
        for (label, s), pred in cmp.predictions.items():
            lv = error_per_level(cmp.dataset.y[cmp.splits[s][1]], pred, tax)
            rows += [
                {"config": label, "split": s, "level": int(lvl), "error": float(err)}
                for lvl, err in zip(lv["level"], lv["error"])
            ]
    return pd.DataFrame(rows, columns=["config", "split", "level", "error"])


def comparison_data(
    entry: DatasetEntry, n_splits: int, test_size: float, seed: int, taxonomy: Taxonomy | None
) -> tuple[Any, dict[str, Any]]:
    """The data ``hierlab.evaluation.compare`` splits (every row, or the own split's pair) with
    ``taxonomy``, and the plan as :class:`ComparisonEntry` records it.

    Raises
    ------
    DataError
        ``n_splits=0`` on a data set without a split of its own.
    """
    tax = taxonomy or entry.taxonomy
    if n_splits > 0:
        data: Any = _with_taxonomy(entry.all_rows, tax)
        plan = {"mode": "random", "n_splits": n_splits, "test_size": test_size, "seed": seed}
        return data, plan
    if entry.own_split is None:
        raise DataError(f"{entry.name} has no split of its own; choose repeated splits")
    return tuple(_with_taxonomy(d, tax) for d in entry.own_split), {"mode": "own"}


def run_engine(
    data: Any,
    configs: Sequence[dict[str, Any]],
    plan: dict[str, Any],
    progress: Callable[[int, int, str, int], Any] | None = None,
) -> Any:
    """``hierlab.evaluation.compare`` of ``configs`` on ``data`` by ``plan``, its warnings
    silenced (the table reports convergence). A module-level function: a worker process runs it
    for a comparison in the background (:mod:`app.state.background`), where silencing warnings
    touches no one else's ``warnings`` state. ``plan["cluster"]``, a dask scheduler's address,
    runs the (method, split) fits there."""
    random = plan.get("mode") == "random"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare(
            data,
            [
                {"name": c["method"], "params": c.get("params", {}), "label": c["label"]}
                for c in configs
            ],
            split="repeated" if random else "given",
            n_splits=max(1, int(plan.get("n_splits", 1))),
            test_size=float(plan.get("test_size", 0.3)),
            random_state=int(plan.get("seed", 0)),
            progress=progress,
            client=plan.get("cluster"),
        )


def finish_comparison(
    comparison_id: int,
    entry: DatasetEntry,
    configs: Sequence[dict[str, Any]],
    plan: dict[str, Any],
    engine: Any,
    taxonomy: Taxonomy | None = None,
    baseline: str | None = None,
) -> ComparisonEntry:
    """The session's :class:`ComparisonEntry` from the engine's result."""
    labels = [c["label"] for c in configs]
    return ComparisonEntry(
        id=comparison_id,
        dataset_name=entry.name,
        configs=[dict(c) for c in configs],
        plan=plan,
        engine=engine,
        per_level=_per_level(engine, taxonomy or entry.taxonomy),
        baseline=str(baseline if baseline in labels else labels[0]),
        dataset_key=entry.key,
        split=dict(entry.split),
        taxonomy_source="given" if taxonomy is None or taxonomy is entry.taxonomy else "induced",
    )


def compare_methods(
    state: ComparisonSession,
    entry: DatasetEntry,
    configs: Sequence[dict[str, Any]],
    n_splits: int = 3,
    test_size: float = 0.3,
    seed: int = 0,
    baseline: str | None = None,
    taxonomy: Taxonomy | None = None,
    progress: Callable[[float, str], Any] | None = None,
) -> ComparisonEntry:
    """Fit every configuration on identical splits with ``hierlab.evaluation.compare``.

    Parameters
    ----------
    state : ComparisonSession
        The session (:class:`~app.state.session.AppState`): gives the comparison its id (the
        caller adds it to ``state.comparisons``).
    entry : DatasetEntry
    configs : sequence of dict
        ``{"label", "method", "params"}``; labels must be unique.
    n_splits : int
        Repeated random splits (one ``random_state=seed`` fixes them all); 0 uses the data
        set's own split.
    test_size : float
    seed : int
    baseline : str, optional
        Label of the baseline (default: the first configuration).
    taxonomy : Taxonomy, optional
        Train and score with this taxonomy (an induced tree; default the data set's).
    progress : callable, optional
        ``progress(fraction, text)`` after each fit.
    """
    if not configs:
        raise DataError("choose at least one method to compare")
    data, plan = comparison_data(entry, n_splits, test_size, seed, taxonomy)

    def _progress(done: int, total: int, method: str, split: int) -> None:
        if progress is not None:
            progress(done / total, f"{method} on split {split + 1}")

    cmp = run_engine(data, configs, plan, _progress)
    return finish_comparison(state.new_id(), entry, configs, plan, cmp, taxonomy, baseline)
