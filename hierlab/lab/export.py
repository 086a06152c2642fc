"""Export a lab session as a runnable Python script and as a Jupyter notebook.

The app is the notebook's front end; the export is its source. A :class:`Session` records what
the app did: where the data came from (a built-in data set and its generator arguments, or data
and taxonomy files), how it was split, and the runs (method, parameters, seed, given or induced
taxonomy). :func:`export_script` writes a plain Python script that loads the same data, makes the
same split, trains the same runs through the public ``hierlab`` API, prints every run's metrics
(:func:`hierlab.evaluation.metrics.evaluate`) as one JSON line, and draws the figures the app
shows with :mod:`hierlab.plots`. :func:`export_notebook` writes the same cells as an nbformat-4
notebook (plain JSON; no ``nbformat`` dependency): its code cells are exactly the script's cells,
which are separated by ``# %%`` marker comments (the "percent" format that VS Code, Spyder and
Jupytext read as cells).

Contract for the app (how it fills a :class:`Session`)
------------------------------------------------------
* ``DataSource.builtin(name, params)`` for a catalogue data set loaded with
  ``hierlab.datasets.catalog.load_builtin(name, **params)`` (the app's ``DatasetEntry.params``);
  ``DataSource.files(path, taxonomy_path, test_path)`` for files (write uploaded bytes to files
  first: the script reads them with :func:`hierlab.io.load_dataset`).
* ``SplitSpec.from_dict(entry.split)``: ``{"mode": "own"}`` keeps the data set's own (train,
  test); ``{"mode": "random", "test_size": t, "seed": s}`` concatenates the own train and test
  (or takes the single file) and splits with ``train_test_split(arange(n), test_size=t,
  random_state=s)``, indices sorted (:func:`split_dataset`, which the app uses too).
* one ``RunSpec(method, params, seed, taxonomy="given" | "induced", induce={"tau": k})`` per run.
  ``seed`` goes to the method's ``random_state`` (through the schema parameter when there is one,
  else ``set_params``); :func:`make_run_estimator` does exactly what the script does.

:func:`run_session` trains a session in-process through the same steps (used by the tests to
check that the exported script prints the same numbers).
"""

from __future__ import annotations

import datetime as _dt
import json
import pprint
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.dataset import HierDataset, concat_datasets
from hierlab.core.exceptions import DataError, ParameterError
from hierlab.core.registry import get_method, make_estimator
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "CELL_MARKER",
    "COMPARISON_PREFIX",
    "METRICS_PREFIX",
    "ComparisonSpec",
    "DataSource",
    "Progress",
    "RunResult",
    "RunSpec",
    "Session",
    "SplitSpec",
    "concat_datasets",
    "export_notebook",
    "export_script",
    "load_session_data",
    "make_run_estimator",
    "notebook_code_cells",
    "parse_comparison_line",
    "parse_metrics_lines",
    "parse_what_ran",
    "run_session",
    "script_cells",
    "split_dataset",
    "write_session",
]

#: ``progress(fraction_done, text)``: how the lab's long tasks (a session, a demo, a
#: reproduction) report; the return value is ignored.
Progress = Callable[[float, str], object]

#: Every cell of an exported script starts with this marker line (``# %% [markdown]`` for text).
CELL_MARKER = "# %%"
#: Prefix of the JSON line the script prints for each run's metrics.
METRICS_PREFIX = "HIERLAB_METRICS "
#: Prefix of the JSON line the script prints for a comparison's summary.
COMPARISON_PREFIX = "HIERLAB_COMPARISON "


# ------------------------------------------------------------------------------ the session
@dataclass
class DataSource:
    """Where a session's data comes from.

    Attributes
    ----------
    kind : {"builtin", "files"}
    name : str
        Built-in: the catalogue name (``hierlab.datasets.catalog``).
    params : dict
        Built-in: loader arguments overriding the catalogue's (``random_state``, sizes...).
    path : str
        Files: the data file (CSV, svmlight, ARFF).
    taxonomy_path : str, optional
        Files: the taxonomy file (default: what the data file implies).
    test_path : str, optional
        Files: a separate test file (the data set's "own" split).
    """

    kind: str = "builtin"
    name: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    path: str = ""
    taxonomy_path: str | None = None
    test_path: str | None = None

    @classmethod
    def builtin(cls, name: str, params: dict[str, Any] | None = None) -> DataSource:
        """A catalogue data set ``name`` with loader arguments ``params``."""
        return cls(kind="builtin", name=name, params=dict(params or {}))

    @classmethod
    def files(
        cls, path: str | Path, taxonomy_path: str | Path | None = None, test_path: str | None = None
    ) -> DataSource:
        """A data file, with an optional taxonomy file and test file."""
        return cls(
            kind="files",
            path=str(path),
            taxonomy_path=None if taxonomy_path is None else str(taxonomy_path),
            test_path=None if test_path is None else str(test_path),
        )

    def describe(self) -> str:
        """One line for titles."""
        if self.kind == "builtin":
            extra = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
            return f"built-in data set {self.name!r}" + (f" ({extra})" if extra else "")
        return f"file {Path(self.path).name}" + (
            f" with taxonomy {Path(self.taxonomy_path).name}" if self.taxonomy_path else ""
        )


@dataclass
class SplitSpec:
    """How the session splits the data.

    Attributes
    ----------
    mode : {"own", "random"}
        The data set's own (train, test), or a random split of all rows.
    test_size : float
        Fraction of rows in the test set (random mode).
    seed : int
        ``random_state`` of ``train_test_split`` (random mode).
    """

    mode: str = "own"
    test_size: float = 0.3
    seed: int = 0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SplitSpec:
        """From the app's split dict (``{"mode": "own"}`` or ``{"mode": "random", ...}``)."""
        return cls(
            mode=str(d.get("mode", "own")),
            test_size=float(d.get("test_size", 0.3)),
            seed=int(d.get("seed", 0)),
        )


@dataclass
class RunSpec:
    """One training run of a session.

    Attributes
    ----------
    method : str
        A registry name (``hierlab.list_methods()``).
    params : dict
        Values of the method's schema parameters (others keep their defaults).
    seed : int, optional
        The run's ``random_state`` (ignored by deterministic methods that have none).
    taxonomy : {"given", "induced"}
        Train with the data set's taxonomy, or with one induced on the training rows by
        MF-Tree (``hierlab.induce_taxonomy``).
    induce : dict
        Arguments of the induction (``{"tau": 2}``), when ``taxonomy="induced"``.
    label : str
        Name of the run in the output (default ``"<method> #<k>"``).
    """

    method: str
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    taxonomy: str = "given"
    induce: dict[str, Any] = field(default_factory=dict)
    label: str = ""


@dataclass
class ComparisonSpec:
    """A comparison of configurations on identical splits (:func:`hierlab.compare`).

    Attributes
    ----------
    configs : list of dict
        ``{"label", "method", "params"}`` per configuration (labels unique).
    mode : {"random", "own"}
        Repeated random splits of every row, or the data set's own (train, test).
    n_splits : int
    test_size : float
    seed : int
        ``random_state`` of the splits.
    baseline : str
        The label the paired tests compare against.
    taxonomy : {"given", "induced"}
        Score with the data set's taxonomy, or one MF-Tree induces on the session's training
        rows (``induce`` holds its arguments).
    induce : dict
    """

    configs: list[dict[str, Any]] = field(default_factory=list)
    mode: str = "random"
    n_splits: int = 3
    test_size: float = 0.3
    seed: int = 0
    baseline: str = ""
    taxonomy: str = "given"
    induce: dict[str, Any] = field(default_factory=dict)


@dataclass
class Session:
    """A lab session: data, split and runs (see the module docstring for the contract).

    Attributes
    ----------
    data : DataSource
    split : SplitSpec
    runs : list of RunSpec
    title : str
    figures : bool
        Draw the figures (bounds, gamma histogram, error per level, metric bars).
    comparison : ComparisonSpec, optional
        A comparison to run after the runs: the script prints its mean and std per method
        and metric (one ``HIERLAB_COMPARISON`` line).
    """

    data: DataSource
    split: SplitSpec = field(default_factory=SplitSpec)
    runs: list[RunSpec] = field(default_factory=list)
    title: str = "hierlab session"
    figures: bool = True
    comparison: ComparisonSpec | None = None

    def labels(self) -> list[str]:
        """The unique label of every run."""
        out: list[str] = []
        for k, r in enumerate(self.runs, start=1):
            lab = r.label or f"{r.method} #{k}"
            while lab in out:
                lab += "'"
            out.append(lab)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Session:
        """Inverse of :meth:`to_dict`."""
        return cls(
            data=DataSource(**d["data"]),
            split=SplitSpec(**d.get("split", {})),
            runs=[RunSpec(**r) for r in d.get("runs", [])],
            title=d.get("title", "hierlab session"),
            figures=bool(d.get("figures", True)),
            comparison=ComparisonSpec(**d["comparison"]) if d.get("comparison") else None,
        )

    def validate(self) -> None:
        """Check methods and parameters against the registry and the split and data fields.

        Raises
        ------
        ParameterError, DataError
        """
        if self.data.kind not in ("builtin", "files"):
            raise DataError(f"data kind must be 'builtin' or 'files', got {self.data.kind!r}")
        if self.data.kind == "builtin" and not self.data.name:
            raise DataError("a built-in data source needs a name")
        if self.data.kind == "files" and not self.data.path:
            raise DataError("a file data source needs a path")
        if self.split.mode not in ("own", "random"):
            raise DataError(f"split mode must be 'own' or 'random', got {self.split.mode!r}")
        if self.split.mode == "random" and not 0.0 < self.split.test_size < 1.0:
            raise DataError(f"test size must be in (0, 1), got {self.split.test_size}")
        for r in self.runs:
            spec = get_method(r.method)
            for k, v in r.params.items():
                spec.param(k).validate(v)
            if r.taxonomy not in ("given", "induced"):
                raise ParameterError(
                    f"run taxonomy must be 'given' or 'induced', not {r.taxonomy!r}"
                )
        if self.comparison is not None:
            _validate_comparison(self.comparison)


def _validate_comparison(c: ComparisonSpec) -> None:
    """Methods, parameters, unique labels and the plan of a comparison."""
    labels = [str(cfg.get("label", "")) for cfg in c.configs]
    if not labels:
        raise ParameterError("a comparison needs at least one configuration")
    if len(set(labels)) != len(labels) or "" in labels:
        raise ParameterError(f"comparison labels must be unique and non-empty, got {labels}")
    for cfg in c.configs:
        spec = get_method(str(cfg["method"]))
        for k, v in dict(cfg.get("params", {})).items():
            spec.param(k).validate(v)
    if c.mode not in ("own", "random"):
        raise DataError(f"comparison mode must be 'own' or 'random', got {c.mode!r}")
    if c.mode == "random" and not (0.0 < c.test_size < 1.0 and c.n_splits >= 1):
        raise DataError(f"need test size in (0, 1) and >= 1 split, got {c.test_size}, {c.n_splits}")
    if c.taxonomy not in ("given", "induced"):
        raise ParameterError(f"taxonomy must be 'given' or 'induced', not {c.taxonomy!r}")


# ------------------------------------------------------------------------------ in-process
def split_dataset(
    data: HierDataset, test_size: float, seed: int
) -> tuple[HierDataset, HierDataset]:
    """Random (train, test): ``train_test_split(arange(n), test_size, random_state=seed)``."""
    from sklearn.model_selection import train_test_split

    tr, te = train_test_split(np.arange(data.n_samples), test_size=test_size, random_state=seed)
    return data.subset(np.sort(tr)), data.subset(np.sort(te))


def load_session_data(session: Session) -> tuple[HierDataset, HierDataset]:
    """The session's (train, test), as the exported script builds them."""
    src, split = session.data, session.split
    if src.kind == "builtin":
        from hierlab.datasets.catalog import load_builtin

        train, test = load_builtin(src.name, **src.params)
        own: tuple[HierDataset, HierDataset] | None = (train, test)
        full = concat_datasets(train, test)
    else:
        from hierlab.io import load_dataset, read_taxonomy

        tax = read_taxonomy(src.taxonomy_path) if src.taxonomy_path else None
        full = load_dataset(src.path, taxonomy=tax)
        own = None
        if src.test_path:
            test = load_dataset(src.test_path, reference=full)
            own = (full, test)
            full = concat_datasets(full, test)
    if split.mode == "own":
        if own is None:
            raise DataError(f"{src.describe()} has no split of its own; use a random split")
        return own
    return split_dataset(full, split.test_size, split.seed)


def _seeded_params(run: RunSpec) -> tuple[dict[str, Any], bool]:
    """The run's parameters with ``random_state`` from the seed when the schema has it;
    and whether the seed still has to be set with ``set_params``."""
    spec = get_method(run.method)
    params = dict(run.params)
    if run.seed is None or "random_state" in params:
        return params, False
    if any(p.name == "random_state" for p in spec.params):
        params["random_state"] = int(run.seed)
        return params, False
    return params, True


def make_run_estimator(run: RunSpec, taxonomy: Taxonomy | None) -> Any:
    """A new estimator for ``run`` (validated parameters, the seed as ``random_state``)."""
    params, via_set_params = _seeded_params(run)
    est = make_estimator(run.method, taxonomy=taxonomy, **params)
    if via_set_params and "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(run.seed))  # type: ignore[arg-type]
    return est


@dataclass
class RunResult:
    """A run trained in-process by :func:`run_session`.

    Attributes
    ----------
    label : str
    spec : RunSpec
    estimator : HierarchicalClassifier
    taxonomy : Taxonomy
        The taxonomy the run was trained and scored with.
    y_pred : ndarray of shape (n_test,)
    metrics : dict of str to float
    history : DataFrame
    fit_time, predict_time : float
        Seconds.
    solver, algorithm : str
        What ran (the estimator's ``solver_`` and ``algorithm_``).
    """

    label: str
    spec: RunSpec
    estimator: Any
    taxonomy: Taxonomy
    y_pred: np.ndarray
    metrics: dict[str, float]
    history: pd.DataFrame
    fit_time: float = 0.0
    predict_time: float = 0.0
    solver: str = ""
    algorithm: str = ""


def run_session(
    session: Session, progress: Progress | None = None
) -> tuple[HierDataset, HierDataset, list[RunResult]]:
    """Train every run of ``session`` in-process, exactly as the exported script does.

    Parameters
    ----------
    session : Session
    progress : callable, optional
        ``progress(fraction_done, text)`` before each run.

    Returns
    -------
    train, test : HierDataset
    results : list of RunResult
    """
    from hierlab.evaluation.metrics import evaluate

    session.validate()
    train, test = load_session_data(session)
    results = []
    for k, (label, run) in enumerate(zip(session.labels(), session.runs)):
        if progress is not None:
            progress(k / max(len(session.runs), 1), f"training {label}")
        tax = train.taxonomy
        if run.taxonomy == "induced":
            from hierlab.methods.mftree.induce import induce_taxonomy

            tax = induce_taxonomy(train.X, train.y, method="mftree", **run.induce)
        est = make_run_estimator(run, tax)
        t0 = time.perf_counter()
        est.fit(train.X, train.y)
        t1 = time.perf_counter()
        y_pred = np.asarray(est.predict(test.X), dtype=object)
        t2 = time.perf_counter()
        metrics = evaluate(np.asarray(test.y, dtype=object), y_pred, tax)
        hist = getattr(est, "history_", None)
        results.append(
            RunResult(
                label=label,
                spec=run,
                estimator=est,
                taxonomy=tax,
                y_pred=y_pred,
                metrics={k: float(v) for k, v in metrics.items()},
                history=hist.copy() if isinstance(hist, pd.DataFrame) else pd.DataFrame(),
                fit_time=t1 - t0,
                predict_time=t2 - t1,
                solver=str(getattr(est, "solver_", "")),
                algorithm=str(getattr(est, "algorithm_", "")),
            )
        )
    if progress is not None:
        progress(1.0, "done")
    return train, test, results


# ------------------------------------------------------------------------------ the script
def _lit(value: Any) -> str:
    """A Python literal for ``value`` (dicts and lists pretty-printed, floats exact)."""
    return pprint.pformat(value, width=88, sort_dicts=False)


def _md(*lines: str) -> str:
    body = "\n".join(("# " + ln) if ln else "#" for ln in "\n".join(lines).split("\n"))
    return f"{CELL_MARKER} [markdown]\n{body}"


def _code(src: str) -> str:
    return f"{CELL_MARKER}\n{src.strip()}"


#: The script's imports and its ``show`` helper (a figure inline, or an HTML file).
_PRELUDE = """
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.model_selection import train_test_split

import hierlab
from hierlab import plots
from hierlab.evaluation.metrics import error_per_level, evaluate, gamma_histogram, is_multilabel

IN_NOTEBOOK = "ipykernel" in sys.modules
FIGURES = None if IN_NOTEBOOK else Path(Path(sys.argv[0]).stem + "_figures")


def show(fig, name):
    \"\"\"Inline in a notebook; an HTML file next to the script otherwise.\"\"\"
    if IN_NOTEBOOK:
        fig.show()
    else:
        FIGURES.mkdir(exist_ok=True)
        fig.write_html(FIGURES / f"{name}.html", include_plotlyjs="cdn")
"""

#: The figures cell: bounds, metric bars, and for single-label trees the error per level and
#: the gamma histogram.
_FIGURES = """
histories = {k: r[0].history_ for k, r in results.items() if hasattr(r[0], "history_")}
show(plots.bounds_figure(histories, title="solver bounds"), "bounds")
table = [{"method": k, **r[3]} for k, r in results.items()]
show(plots.metric_bars_figure(pd.DataFrame(table)), "metrics")
y_true = np.asarray(test.y, dtype=object)
single = {k: r for k, r in results.items() if r[1].is_tree and not is_multilabel(y_true)}
if single:
    per_level = {k: error_per_level(y_true, r[2], r[1]) for k, r in single.items()}
    show(plots.error_per_level_figure(per_level), "error_per_level")
    hists = {k: gamma_histogram(y_true, r[2], r[1]) for k, r in single.items()}
    show(plots.gamma_histogram_figure(hists), "gamma_histogram")
"""


def _intro_cells(session: Session) -> list[str]:
    """The title (source, split, number of runs, export time), the imports and the data title."""
    src, split = session.data, session.split
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    how = (
        "the data set's own train/test split"
        if split.mode == "own"
        else f"a random split (test size {split.test_size:g}, seed {split.seed})"
    )
    return [
        _md(
            f"# {session.title}",
            "",
            f"Exported from hierlab on {stamp}: {src.describe()}, "
            + how
            + f", {len(session.runs)} run(s)"
            + (", a comparison." if session.comparison is not None else "."),
            "Run it with `python <this file>` or open the notebook; every step uses the public "
            "`hierlab` API.",
        ),
        _code(_PRELUDE),
        _md("## Data", "", f"{src.describe()[0].upper()}{src.describe()[1:]}."),
    ]


def _data_code(src: DataSource, split: SplitSpec) -> str:
    """The code that loads ``src`` and makes ``train`` and ``test`` as ``split`` says.

    It also leaves ``full`` (every row: the own train then test rows, or the data file) and
    ``own`` (the data set's own (train, test), or None), which a comparison splits.

    Raises
    ------
    DataError
        A file source without a test file asked for its own split.
    """
    load = "from hierlab.datasets import concat_datasets as concat\n\n"
    if src.kind == "builtin":
        load += (
            "from hierlab.datasets.catalog import load_builtin\n\n"
            f"own = load_builtin({src.name!r}, **{_lit(src.params)})\n"
            "full = concat(*own)\n"
        )
    else:
        tax_line = (
            f"taxonomy = hierlab.read_taxonomy({src.taxonomy_path!r})\n"
            if src.taxonomy_path
            else "taxonomy = None  # from the data file itself\n"
        )
        load += tax_line + f"full = hierlab.load_dataset({src.path!r}, taxonomy=taxonomy)\n"
        if src.test_path:
            load += (
                "# the separate test file, encoded like the training file\n"
                f"test = hierlab.load_dataset({src.test_path!r}, reference=full)\n"
                "own = (full, test)\n"
                "full = concat(full, test)\n"
            )
        elif split.mode == "own":
            raise DataError(f"{src.describe()} has no split of its own; use a random split")
        else:
            load += "own = None\n"
    if split.mode == "random":
        load += (
            "\n# the random split of the app: train_test_split on the row indices, sorted\n"
            "train_idx, test_idx = train_test_split(\n"
            f"    np.arange(full.n_samples), test_size={split.test_size!r}, "
            f"random_state={split.seed!r}\n"
            ")\n"
            "train, test = full.subset(np.sort(train_idx)), full.subset(np.sort(test_idx))\n"
        )
    else:
        load += "train, test = own\n"
    return load + (
        'print(f"train: {train.n_samples} rows, test: {test.n_samples} rows, "\n'
        '      f"{train.n_features} features, {train.taxonomy.n_nodes} taxonomy nodes")\n'
    )


def _run_code(label: str, run: RunSpec) -> str:
    """The code of one run: its taxonomy, estimator, fit, predictions and metrics line."""
    params, via_set_params = _seeded_params(run)
    lines = [f"# {label}: {get_method(run.method).summary}"]
    if run.taxonomy == "induced":
        lines += [
            "# MF-Tree (seed 004) induces the taxonomy on the training rows",
            f'tax = hierlab.induce_taxonomy(train.X, train.y, method="mftree", '
            f"**{_lit(run.induce)})",
        ]
    else:
        lines.append("tax = train.taxonomy")
    lines.append(f"est = hierlab.make_estimator({run.method!r}, taxonomy=tax, **{_lit(params)})")
    if via_set_params:
        lines.append(
            'if "random_state" in est.get_params(deep=False):\n'
            f"    est.set_params(random_state={run.seed!r})"
        )
    lines += [
        "est.fit(train.X, train.y)",
        "y_pred = np.asarray(est.predict(test.X), dtype=object)",
        "metrics = evaluate(np.asarray(test.y, dtype=object), y_pred, tax)",
        f"results[{label!r}] = (est, tax, y_pred, metrics)",
        'print("' + METRICS_PREFIX + '" + json.dumps(',
        f'    {{"label": {label!r}, "method": {run.method!r}, "metrics": metrics,',
        '     "solver": est.solver_, "algorithm": est.algorithm_}',
        "))",
    ]
    return _code("\n".join(lines))


def _comparison_code(c: ComparisonSpec) -> str:
    """The code of a comparison: the data it splits, ``hierlab.compare``, the summary line."""
    configs = [
        {"name": cfg["method"], "params": dict(cfg.get("params", {})), "label": cfg["label"]}
        for cfg in c.configs
    ]
    lines = []
    if c.taxonomy == "induced":
        lines += [
            "# MF-Tree (seed 004) induces the taxonomy on the training rows; every row is",
            "# scored against it",
            f'tax = hierlab.induce_taxonomy(train.X, train.y, method="mftree", **{_lit(c.induce)})',
            "def retax(ds):",
            "    return hierlab.HierDataset(X=ds.X, y=ds.y, taxonomy=tax, "
            "feature_names=ds.feature_names)",
        ]
    else:
        lines.append("def retax(ds):\n    return ds")
    if c.mode == "own":
        lines.append("data = tuple(retax(d) for d in own)  # the data set's own split")
    else:
        lines.append("data = retax(full)  # every row, split at random below")
    lines += [
        f"configs = {_lit(configs)}",
        "comparison = hierlab.compare(",
        "    data,",
        "    configs,",
        f"    split={'given' if c.mode == 'own' else 'repeated'!r},",
        f"    n_splits={max(1, int(c.n_splits))!r},",
        f"    test_size={float(c.test_size)!r},",
        f"    random_state={int(c.seed)!r},",
        ")",
        "summary = comparison.summary()  # mean and std over the splits, per method",
        "print(summary.T)",
        f"print(comparison.tests({c.baseline or c.configs[0]['label']!r}, 'accuracy'))",
        'print("' + COMPARISON_PREFIX + '" + json.dumps(',
        '    summary.reset_index().rename(columns={"index": "method"}).to_dict(orient="records")',
        "))",
    ]
    return _code("\n".join(lines))


def _runs_cells(session: Session) -> list[str]:
    """The title of the runs, the results dict, and one cell per run."""
    return [
        _md(
            "## Runs",
            "",
            "Each run: `hierlab.make_estimator(method, taxonomy, **params)` (parameters are "
            "validated by the registry), `fit`, `predict`, then "
            "`hierlab.evaluation.metrics.evaluate` on the test rows.",
        ),
        _code("results = {}  # label -> (estimator, taxonomy, predictions, metrics)"),
        *[_run_code(label, run) for label, run in zip(session.labels(), session.runs)],
    ]


def _comparison_cells(c: ComparisonSpec) -> list[str]:
    """The title of the comparison (its plan) and its code."""
    plan = (
        "the data set's own split"
        if c.mode == "own"
        else f"{c.n_splits} random splits (test size {c.test_size:g}, seed {c.seed})"
    )
    return [
        _md(
            "## Comparison",
            "",
            f"{len(c.configs)} configuration(s) on identical splits, {plan}, by "
            "`hierlab.compare`: mean and standard deviation of every metric over the splits, "
            "and paired tests against the baseline.",
        ),
        _comparison_code(c),
    ]


def export_script(session: Session) -> str:
    """The session as a runnable Python script (cells separated by ``# %%`` markers).

    Running it (``python session.py``) prints, for each run, one line
    ``HIERLAB_METRICS {"label": ..., "method": ..., "metrics": {...}, "solver": ...,
    "algorithm": ...}`` (what ran: the estimator's ``solver_`` and ``algorithm_``) and saves
    the figures as HTML files in ``<script name>_figures/``; in a notebook the figures are
    shown inline.

    Raises
    ------
    ParameterError, DataError
        An invalid session (unknown method or parameter, bad split).
    """
    session.validate()
    cells = _intro_cells(session)
    cells.append(_code(_data_code(session.data, session.split)))
    if session.runs:
        cells += _runs_cells(session)
    if session.comparison is not None:
        cells += _comparison_cells(session.comparison)
    if session.figures and session.runs:
        cells.append(
            _md(
                "## Figures",
                "",
                "The app's figures, drawn by `hierlab.plots`: the solver's bounds, the metrics "
                "side by side, the error per level and the distribution of the tree distance "
                "gamma(y, y_hat).",
            )
        )
        cells.append(_code(_FIGURES))
    return "\n\n\n".join(cells) + "\n"


def script_cells(script: str) -> list[tuple[str, str]]:
    """Split an exported script into ``(kind, source)`` cells at the ``# %%`` markers.

    Markdown cells (``# %% [markdown]``) have their leading ``# `` removed; code cells are
    returned verbatim (without the marker line and the blank lines around the cell).
    """
    cells: list[tuple[str, str]] = []
    kind: str | None = None
    buf: list[str] = []
    for line in script.split("\n"):
        if line.startswith(CELL_MARKER):
            if kind is not None:
                cells.append((kind, "\n".join(buf).strip("\n")))
            kind = "markdown" if "[markdown]" in line else "code"
            buf = []
        else:
            buf.append(line)
    if kind is not None:
        cells.append((kind, "\n".join(buf).strip("\n")))
    out = []
    for k, s in cells:
        if k == "markdown":
            s = "\n".join(ln[2:] if ln.startswith("# ") else ln.lstrip("#") for ln in s.split("\n"))
        out.append((k, s))
    return out


def _source_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [ln + "\n" for ln in lines[:-1]] + [lines[-1]]


def export_notebook(session: Session | None = None, script: str | None = None) -> dict[str, Any]:
    """The session as an nbformat-4 notebook (a JSON-ready dict).

    Parameters
    ----------
    session : Session, optional
    script : str, optional
        An exported script to convert instead (its cells, in order).

    Returns
    -------
    dict
        ``nbformat`` 4, ``nbformat_minor`` 5, one cell per script cell; write it with
        ``json.dump``.
    """
    if script is None:
        if session is None:
            raise ParameterError("give a session or a script")
        script = export_script(session)
    cells = []
    for i, (kind, text) in enumerate(script_cells(script)):
        cell: dict[str, Any] = {
            "cell_type": kind,
            "id": f"cell-{i}",
            "metadata": {},
            "source": _source_lines(text),
        }
        if kind == "code":
            cell["execution_count"] = None
            cell["outputs"] = []
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "pygments_lexer": "ipython3"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def notebook_code_cells(notebook: dict[str, Any]) -> list[str]:
    """The source of every code cell of a notebook dict, in order."""
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def write_session(
    session: Session, directory: str | Path, stem: str = "hierlab_session"
) -> dict[str, Path]:
    """Write ``<stem>.py``, ``<stem>.ipynb`` and ``<stem>.json`` (the session) to ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    script = export_script(session)
    paths = {
        "script": d / f"{stem}.py",
        "notebook": d / f"{stem}.ipynb",
        "session": d / f"{stem}.json",
    }
    paths["script"].write_text(script)
    paths["notebook"].write_text(json.dumps(export_notebook(script=script), indent=1) + "\n")
    paths["session"].write_text(json.dumps(session.to_dict(), indent=1, default=str) + "\n")
    return paths


def parse_what_ran(output: str) -> dict[str, str]:
    """``label -> algorithm_`` from the ``HIERLAB_METRICS`` lines of a script's output."""
    out: dict[str, str] = {}
    for line in output.splitlines():
        if line.startswith(METRICS_PREFIX):
            rec = json.loads(line[len(METRICS_PREFIX) :])
            out[rec["label"]] = str(rec.get("algorithm", ""))
    return out


def parse_comparison_line(output: str) -> list[dict[str, Any]]:
    """The records of the ``HIERLAB_COMPARISON`` line of a script's output (one per method:
    ``method``, ``<metric>_mean``, ``<metric>_std``, times)."""
    for line in output.splitlines():
        if line.startswith(COMPARISON_PREFIX):
            return list(json.loads(line[len(COMPARISON_PREFIX) :]))
    raise DataError("the output holds no HIERLAB_COMPARISON line")


def parse_metrics_lines(output: str) -> dict[str, dict[str, float]]:
    """``label -> metrics`` from the ``HIERLAB_METRICS`` lines of a script's output."""
    out: dict[str, dict[str, float]] = {}
    for line in output.splitlines():
        if line.startswith(METRICS_PREFIX):
            rec = json.loads(line[len(METRICS_PREFIX) :])
            out[rec["label"]] = {k: float(v) for k, v in rec["metrics"].items()}
    return out
