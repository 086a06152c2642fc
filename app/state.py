"""The app's typed session state and the wiring between the pages and ``hierlab``.

Pages read like a description of the screen; everything they do to data goes through here:
loading built-in and uploaded data sets (parsing is cached and never touches the session until
it succeeded, so a bad upload cannot lose earlier data or runs), splitting with a seed, training
a run (``hierlab.make_estimator`` + ``fit`` with callbacks), evaluating it with
``hierlab.evaluation.metrics``, and comparing methods on identical splits (``hierlab.evaluation.compare``
when present, a faithful local version otherwise).

Each browser session has its own :class:`AppState` in ``st.session_state``: nobody sees anyone
else's uploads or runs.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from hierlab.core.dataset import HierDataset, concat_datasets
from hierlab.core.exceptions import DataError, HierlabError, TaxonomyError
from hierlab.core.registry import get_method, list_methods, make_estimator
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "AppState",
    "Builtin",
    "Comparison",
    "DatasetEntry",
    "Run",
    "builtin_choices",
    "compare_methods",
    "evaluate_predictions",
    "fit_run",
    "get_state",
    "load_builtin",
    "parse_taxonomy",
    "parse_upload",
]

REPO_ROOT = Path(__file__).resolve().parents[1]
EXAMPLES_DIR = REPO_ROOT / "datasets"
STATE_KEY = "hierlab_state"
DATA_EXTENSIONS = (".csv", ".tsv", ".svm", ".svmlight", ".libsvm", ".arff", ".txt")
TAXONOMY_EXTENSIONS = (".txt", ".csv", ".tsv", ".json", ".paths", ".edges", ".tax")
#: the data set loaded when the app opens (first one available)
DEFAULT_BUILTINS = ("hieron-synthetic", "nhsvm-balanced", "hierarchical-text")
#: parameters that give the number of iterations (for the progress bar)
ITERATION_PARAMS = ("max_iter", "epochs", "n_epochs", "n_iter", "max_epochs")


# ---------------------------------------------------------------------------------------- types
@dataclass
class DatasetEntry:
    """A data set in the session, with its current train/test split.

    Attributes
    ----------
    key : str
        Unique key in :attr:`AppState.datasets`.
    name : str
        Shown in the app.
    source : str
        ``"builtin"``, ``"example"`` or ``"upload"``.
    train, test : HierDataset
        The current split.
    split : dict
        How the split was made: ``{"mode": "own"}`` or ``{"mode": "random", "test_size", "seed"}``.
    own_split : tuple of HierDataset, optional
        The data set's own (train, test) split, when it has one.
    params : dict
        Generator parameters or file names.
    """

    key: str
    name: str
    source: str
    train: HierDataset
    test: HierDataset
    split: dict[str, Any]
    own_split: tuple[HierDataset, HierDataset] | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def taxonomy(self) -> Taxonomy:
        """The data set's (given) taxonomy."""
        return self.train.taxonomy

    @property
    def full(self) -> HierDataset:
        """Every row (train then test), for re-splitting."""
        return concat_datasets(self.train, self.test)

    def describe_split(self) -> str:
        """One line: how many rows in train/test and how the split was made."""
        if self.split.get("mode") == "own":
            how = "the data set's own split"
        else:
            how = (
                f"random split, test size {self.split['test_size']:.0%}, seed {self.split['seed']}"
            )
        return f"{self.train.n_samples} train / {self.test.n_samples} test rows ({how})"


@dataclass
class Run:
    """One trained model, kept in the session's run history.

    Attributes
    ----------
    id : int
    method : str
        Registry name.
    params : dict
        The method's parameters as validated.
    dataset_key, dataset_name : str
    split : dict
        The split the run used (see :attr:`DatasetEntry.split`).
    taxonomy_source : str
        ``"given"`` or ``"induced"``.
    taxonomy : Taxonomy
        The taxonomy the model was trained with.
    fit_time, predict_time, solver_time : float
        Seconds (``solver_time`` excludes callbacks such as the live plot).
    metrics : dict of str -> float
        Test-set metrics from ``hierlab.evaluation.metrics``.
    history : DataFrame
        The solver's states (iteration, elapsed, upper, lower, gap, extras).
    estimator : HierarchicalClassifier
        The fitted estimator.
    y_test, y_pred : ndarray
        Test labels and predictions (node names).
    stopped : bool
        Stopped by the user before the solver's own stopping rule.
    converged : bool
    warnings : list of str
    started : float
        Unix time.
    """

    id: int
    method: str
    params: dict[str, Any]
    dataset_key: str
    dataset_name: str
    split: dict[str, Any]
    taxonomy_source: str
    taxonomy: Taxonomy
    fit_time: float
    predict_time: float
    solver_time: float
    metrics: dict[str, float]
    history: pd.DataFrame
    estimator: Any
    y_test: np.ndarray
    y_pred: np.ndarray
    stopped: bool = False
    converged: bool = True
    warnings: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)

    @property
    def label(self) -> str:
        """``"#3 orthognl (C=1, ...)"``: how runs are named in lists."""
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in self.params.items())
        tax = " [induced tree]" if self.taxonomy_source == "induced" else ""
        return f"#{self.id} {self.method}" + (f" ({shown})" if shown else "") + tax

    def record(self) -> dict[str, Any]:
        """JSON-ready summary: parameters, times, metrics and the solver history."""
        hist = self.history.replace({np.nan: None}).to_dict(orient="list")
        return {
            "id": self.id,
            "method": self.method,
            "params": self.params,
            "dataset": self.dataset_name,
            "split": self.split,
            "taxonomy": self.taxonomy_source,
            "fit_time": self.fit_time,
            "predict_time": self.predict_time,
            "solver_time": self.solver_time,
            "n_iter": len(self.history),
            "converged": self.converged,
            "stopped": self.stopped,
            "metrics": self.metrics,
            "history": hist,
            "started": self.started,
        }


@dataclass
class Comparison:
    """A comparison of configurations on identical splits (``hierlab.evaluation.compare``).

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
    """

    id: int
    dataset_name: str
    configs: list[dict[str, Any]]
    plan: dict[str, Any]
    engine: Any
    per_level: pd.DataFrame
    baseline: str

    @property
    def results(self) -> pd.DataFrame:
        """Tidy: method, split, metric, value, fit_time, predict_time, n_iter."""
        return self.engine.results  # type: ignore[no-any-return]

    def summary_long(self) -> pd.DataFrame:
        """Mean and std per method and metric: columns method, metric, mean, std."""
        g = self.results.groupby(["method", "metric"], sort=False)["value"]
        return g.agg(mean="mean", std="std").reset_index()

    def table(self) -> pd.DataFrame:
        """``mean ± std`` per metric, one row per method (the engine's table)."""
        return self.engine.table().reset_index()  # type: ignore[no-any-return]

    def tests(self, metric: str = "accuracy", baseline: str | None = None) -> pd.DataFrame:
        """Paired t-test on ``metric``, sign test and Wilcoxon against the baseline."""
        return self.engine.tests(baseline or self.baseline, metric).reset_index()  # type: ignore[no-any-return]

    def times(self) -> pd.DataFrame:
        """Mean fit and predict seconds per method."""
        r = self.results.drop_duplicates(["method", "split"])
        return r.groupby("method", sort=False)[["fit_time", "predict_time"]].mean().reset_index()

    def to_json(self) -> str:
        """The whole comparison (plan, configurations, tidy results, tests) as JSON."""
        metrics = sorted(self.results["metric"].unique())
        tests = {}
        if len(self.configs) > 1:
            for m in metrics:
                tests[m] = self.tests(m).to_dict(orient="records")
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
            default=_json_default,
        )


@dataclass
class AppState:
    """Everything one browser session holds."""

    datasets: dict[str, DatasetEntry] = field(default_factory=dict)
    current: str | None = None
    runs: list[Run] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    induced: dict[str, Any] = field(default_factory=dict)
    use_induced: dict[str, bool] = field(default_factory=dict)
    next_id: int = 1

    def new_id(self) -> int:
        """A fresh id for a run or comparison."""
        k = self.next_id
        self.next_id += 1
        return k

    @property
    def dataset(self) -> DatasetEntry | None:
        """The current data set."""
        return self.datasets.get(self.current) if self.current else None

    def add_dataset(self, entry: DatasetEntry, make_current: bool = True) -> None:
        """Add (or replace, by key) a data set; earlier runs stay."""
        self.datasets[entry.key] = entry
        if make_current:
            self.current = entry.key

    def run(self, run_id: int) -> Run | None:
        """The run with id ``run_id``."""
        for r in self.runs:
            if r.id == run_id:
                return r
        return None

    def training_taxonomy(self) -> tuple[Taxonomy | None, str]:
        """The taxonomy to train with on the current data set and where it comes from."""
        ds = self.dataset
        if ds is None:
            return None, "given"
        ind = self.induced.get(ds.key)
        if ind is not None and self.use_induced.get(ds.key):
            return ind["taxonomy"], "induced"
        return ds.taxonomy, "given"


def get_state() -> AppState:
    """This session's :class:`AppState` (created on first use)."""
    if STATE_KEY not in st.session_state:
        st.session_state[STATE_KEY] = AppState()
    state = st.session_state[STATE_KEY]
    return state  # type: ignore[no-any-return]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


# ---------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Builtin:
    """A built-in data set the Data page offers.

    Attributes
    ----------
    key : str
        ``"catalog:<name>"`` or ``"file:<relative path>"``.
    label, description : str
    kind : str
        ``"generator"``, ``"real"`` or ``"example"``.
    """

    key: str
    label: str
    description: str
    kind: str


def builtin_choices() -> list[Builtin]:
    """The catalogue's data sets (``hierlab.datasets.catalog``) and the example files.

    The default data sets (:data:`DEFAULT_BUILTINS`) come first.
    """
    out: list[Builtin] = []
    try:
        from hierlab.datasets.catalog import available_datasets

        for d in available_datasets():
            out.append(
                Builtin(
                    f"catalog:{d.name}", d.name, d.description, "real" if d.real else "generator"
                )
            )
    except ImportError:  # pragma: no cover - the catalogue is part of the foundation
        pass
    for data_path, tax_path in example_files():
        rel = data_path.relative_to(REPO_ROOT).as_posix()
        desc = f"example file {rel}" + (
            f" with taxonomy {tax_path.name}" if tax_path is not None else ""
        )
        out.append(Builtin(f"file:{rel}", f"file: {data_path.name}", desc, "example"))
    rank = {f"catalog:{n}": i for i, n in enumerate(DEFAULT_BUILTINS)}
    out.sort(key=lambda b: (rank.get(b.key, len(rank)), b.kind == "real"))
    return out


def example_files(directory: Path = EXAMPLES_DIR) -> list[tuple[Path, Path | None]]:
    """Pairs (data file, taxonomy file or None) among the bundled example files.

    A file is a taxonomy when its name contains ``"tax"``; a data file is paired with the
    taxonomy file that shares the longest name prefix with it, else with ``taxonomy.json``
    (ARFF files carry their own hierarchy).
    """
    if not directory.is_dir():
        return []
    files = sorted(p for p in directory.iterdir() if p.is_file())
    taxes = [p for p in files if "tax" in p.name.lower() and p.suffix in TAXONOMY_EXTENSIONS]
    data = [
        p
        for p in files
        if p.suffix.lower() in DATA_EXTENSIONS
        and p not in taxes
        and not p.name.lower().startswith(("readme", "license"))
    ]
    pairs: list[tuple[Path, Path | None]] = []
    fallback = directory / "taxonomy.json"
    for d in data:
        best, best_len = None, 0
        for t in taxes:
            n = len(_common_prefix(d.stem.lower(), t.stem.lower()))
            if n > best_len:
                best, best_len = t, n
        if best_len < 3:
            # ARFF declares its own hierarchy; other files use the folder's main taxonomy
            best = fallback if d.suffix.lower() != ".arff" and fallback.is_file() else None
        pairs.append((d, best))
    return pairs


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _catalog_entry(name: str) -> Any:
    from hierlab.datasets.catalog import available_datasets

    for d in available_datasets():
        if d.name == name:
            return d
    raise DataError(f"unknown built-in data set {name!r}")


def generator_params(builtin_key: str) -> list[dict[str, Any]]:
    """The tunable arguments of a built-in generator, read from its signature.

    Returns
    -------
    list of dict
        ``{"name", "default", "type"}`` for each int/float/str/bool argument with a default (the
        catalogue's own arguments override the defaults); empty for files and real data.
    """
    if not builtin_key.startswith("catalog:"):
        return []
    entry = _catalog_entry(builtin_key.split(":", 1)[1])
    if entry.real:
        return []
    fn = entry.function()
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        default = entry.kwargs.get(p.name, p.default)
        if default is inspect.Parameter.empty:
            continue
        if p.name == "random_state" and default is None:
            default = 0
        kind = type(default).__name__
        if kind in ("int", "float", "str", "bool"):
            out.append({"name": p.name, "default": default, "type": kind})
    return out


def load_builtin(builtin_key: str, params: dict[str, Any] | None = None) -> DatasetEntry:
    """Load a built-in data set as a :class:`DatasetEntry` with its own split.

    Parameters
    ----------
    builtin_key : str
        A :attr:`Builtin.key`.
    params : dict, optional
        Generator arguments (see :func:`generator_params`).
    """
    params = dict(params or {})
    if builtin_key.startswith("catalog:"):
        name = builtin_key.split(":", 1)[1]
        train, test = _cached_builtin(name, tuple(sorted(params.items())))
        key = name + (
            "" if not params else "?" + "&".join(f"{k}={v}" for k, v in sorted(params.items()))
        )
        return DatasetEntry(
            key=key,
            name=name,
            source="builtin",
            train=train,
            test=test,
            split={"mode": "own"},
            own_split=(train, test),
            params=params,
        )
    if builtin_key.startswith("file:"):
        rel = builtin_key.split(":", 1)[1]
        path = REPO_ROOT / rel
        tax_path = dict(example_files()).get(path)
        data = path.read_bytes()
        tax = tax_path.read_bytes() if tax_path is not None else None
        ds = parse_upload(data, path.name, tax, tax_path.name if tax_path else None)
        return make_entry(ds, rel, "example", test_size=0.3, seed=0)
    raise DataError(f"unknown built-in data set {builtin_key!r}")


@st.cache_data(show_spinner=False, max_entries=16)
def _cached_builtin(
    name: str, params: tuple[tuple[str, Any], ...]
) -> tuple[HierDataset, HierDataset]:
    from hierlab.datasets.catalog import load_builtin as _lb

    return _lb(name, **dict(params))  # type: ignore[no-any-return]


def split_indices(n: int, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random train/test row indices (``train_test_split`` with ``random_state=seed``)."""
    from sklearn.model_selection import train_test_split

    if not 0.0 < test_size < 1.0:
        raise DataError(f"test size must be strictly between 0 and 1, got {test_size}")
    if n < 2:
        raise DataError(f"{n} row(s): at least 2 are needed to split into train and test")
    tr, te = train_test_split(np.arange(n), test_size=test_size, random_state=seed)
    return np.sort(tr), np.sort(te)


def make_entry(
    data: HierDataset,
    name: str,
    source: str,
    test_size: float = 0.3,
    seed: int = 0,
    test: HierDataset | None = None,
    params: dict[str, Any] | None = None,
) -> DatasetEntry:
    """A :class:`DatasetEntry` from one data set (split at random) or a given (train, test)."""
    if test is not None:
        return DatasetEntry(
            key=name,
            name=name,
            source=source,
            train=data,
            test=test,
            split={"mode": "own"},
            own_split=(data, test),
            params=dict(params or {}),
        )
    tr, te = split_indices(data.n_samples, test_size, seed)
    return DatasetEntry(
        key=name,
        name=name,
        source=source,
        train=data.subset(tr),
        test=data.subset(te),
        split={"mode": "random", "test_size": float(test_size), "seed": int(seed)},
        params=dict(params or {}),
    )


def resplit(entry: DatasetEntry, mode: str, test_size: float = 0.3, seed: int = 0) -> DatasetEntry:
    """The same data set with a new split: ``"own"`` (when it has one) or ``"random"``."""
    if mode == "own":
        if entry.own_split is None:
            raise DataError(f"{entry.name} has no split of its own; choose a random split")
        train, test = entry.own_split
        split: dict[str, Any] = {"mode": "own"}
    else:
        base = concat_datasets(*entry.own_split) if entry.own_split else entry.full
        tr, te = split_indices(base.n_samples, test_size, seed)
        train, test = base.subset(tr), base.subset(te)
        split = {"mode": "random", "test_size": float(test_size), "seed": int(seed)}
    return DatasetEntry(
        key=entry.key,
        name=entry.name,
        source=entry.source,
        train=train,
        test=test,
        split=split,
        own_split=entry.own_split,
        params=entry.params,
    )


# ---------------------------------------------------------------------------------------- uploads
def parse_taxonomy(data: bytes, filename: str) -> Taxonomy:
    """Parse an uploaded taxonomy (edge list, CSV, ``a/b/c`` paths or JSON) with ``hierlab.io``.

    Raises
    ------
    TaxonomyError
        For an undecodable or invalid file, naming the file, line and node.
    """
    from hierlab.io import parse_taxonomy_text

    if not data:
        raise TaxonomyError(f"{filename}: the taxonomy file is empty")
    return parse_taxonomy_text(data, filename=filename)


def parse_upload(
    data: bytes,
    filename: str,
    taxonomy_data: bytes | None = None,
    taxonomy_name: str | None = None,
) -> HierDataset:
    """Parse uploaded features (CSV, svmlight, Clus ARFF, text CSV) and an optional taxonomy.

    ``hierlab.io.read_dataset_bytes`` guesses the format from the name and content. Cached on
    the bytes (``st.cache_data``), so re-running a page does not parse again. Nothing is
    executed or unpickled.

    Raises
    ------
    HierlabError
        ``DataError``/``TaxonomyError`` with a readable message for any malformed input.
    """
    return _cached_parse(data, filename, taxonomy_data, taxonomy_name)  # type: ignore[no-any-return]


@st.cache_data(show_spinner=False, max_entries=8)
def _cached_parse(
    data: bytes, filename: str, taxonomy_data: bytes | None, taxonomy_name: str | None
) -> HierDataset:
    from hierlab.io import read_dataset_bytes

    if not data:
        raise DataError(f"{filename}: the file is empty")
    tax = parse_taxonomy(taxonomy_data, taxonomy_name or "taxonomy") if taxonomy_data else None
    ds = read_dataset_bytes(data, filename, taxonomy=tax)
    if ds.n_samples < 2:
        raise DataError(f"{filename}: {ds.n_samples} data row(s); at least 2 are needed")
    if not ds.name:
        ds.name = Path(filename).stem
    return ds


def validation_report(ds: HierDataset) -> tuple[dict[str, Any], pd.DataFrame]:
    """The Data page's report: ``HierDataset.summary()`` and examples per node.

    Returns
    -------
    summary : dict
    per_node : DataFrame
        node, depth, leaf, examples (labelled with the node), below (with it or a descendant).
    """
    summary = ds.summary()
    tax = ds.taxonomy
    per_node = pd.DataFrame(
        {
            "node": [str(x) for x in tax.names],
            "depth": tax.depth,
            "leaf": tax.is_leaf,
            "examples": ds.examples_per_node(closed=False).to_numpy(),
            "below": ds.examples_per_node(closed=True).to_numpy(),
        }
    )
    return summary, per_node


def report_messages(summary: dict[str, Any], per_node: pd.DataFrame) -> list[tuple[str, str]]:
    """Readable findings of the report as ``(level, message)`` with level info/warning."""
    out: list[tuple[str, str]] = []
    empty = summary.get("nodes_without_data") or []
    if empty:
        shown = ", ".join(map(str, empty[:8])) + (" ..." if len(empty) > 8 else "")
        out.append(("warning", f"{len(empty)} node(s) have no example below them: {shown}"))
    if summary.get("labels_at_internal_nodes"):
        out.append(
            (
                "info",
                f"{summary['labels_at_internal_nodes']} internal node(s) are used as labels "
                "(scored with the ancestor rule).",
            )
        )
    single = per_node[(per_node["examples"] == 1)]
    if len(single):
        out.append(("warning", f"{len(single)} label(s) have a single example."))
    if summary.get("taxonomy") == "DAG":
        out.append(("info", "The taxonomy is a DAG: only methods that support DAGs are offered."))
    if summary.get("multilabel"):
        out.append(("info", "Multi-label data: only multi-label methods are offered."))
    return out


# ---------------------------------------------------------------------------------------- methods
def compatible_methods(ds: HierDataset | None, taxonomy: Taxonomy | None = None) -> list[str]:
    """Registered methods that accept the data set (multi-label, DAG)."""
    names = list_methods()
    if ds is None:
        return names
    tax = taxonomy or ds.taxonomy
    out = []
    for n in names:
        spec = get_method(n)
        if ds.is_multilabel and not spec.multilabel:
            continue
        if not tax.is_tree and not spec.dag:
            continue
        out.append(n)
    return out


def default_method(names: Sequence[str]) -> str | None:
    """The method selected first: a quick one with certified bounds (the live chart shows both
    bounds closing), else any with bounds, else the first."""
    preferred = ("flatmult", "orthognl", "hiermult", "transfer", "treeloss")
    for p in preferred:
        if p in names:
            return p
    for n in names:
        if get_method(n).bounds:
            return n
    return names[0] if names else None


def iteration_budget(method: str, params: dict[str, Any]) -> int | None:
    """The number of iterations the method will run at most (for the progress bar), if known."""
    spec = get_method(method)
    for name in ITERATION_PARAMS:
        if params.get(name):
            return int(params[name])
        if spec.fixed.get(name):
            return int(spec.fixed[name])
    try:
        defaults = spec.estimator().get_params()
    except Exception:
        return None
    for name in ITERATION_PARAMS:
        v = defaults.get(name)
        if isinstance(v, int | float) and v and math.isfinite(v):
            return int(v)
    return None


def admissibility(method: str, params: dict[str, Any], taxonomy: Taxonomy) -> dict[str, Any] | None:
    """Optional extra: is the comparison matrix of ``K`` positive definite for these parameters?

    Applies to methods whose estimator resolves an orthogonal-transfer ``K`` (``resolve_K``) from
    an ``alpha`` parameter (ORTHOGNL, seed 000 eq. 6 and Corollary 2): the live indicator shows
    ``lambda_min(Kbar)`` from ``hierlab.core.regularizers`` and the largest admissible ``alpha``.
    Other methods: None.

    Returns
    -------
    dict or None
        ``{"admissible": bool, "min_eigenvalue": float, "max_alpha": float}``.
    """
    spec = get_method(method)
    if not callable(getattr(spec.estimator, "resolve_K", None)) or "alpha" not in params:
        return None
    if not taxonomy.is_tree or taxonomy.n_nodes > 3000 or params["alpha"] is None:
        return None
    try:
        from hierlab.core.regularizers import max_admissible_alpha, smallest_comparison_eigenvalue
    except ImportError:
        return None
    try:
        lam = smallest_comparison_eigenvalue(taxonomy, float(params["alpha"]))
        amax = max_admissible_alpha(taxonomy)
    except Exception as exc:  # an extra must never break the page
        return {"admissible": None, "message": f"check unavailable: {exc}"}
    return {"admissible": bool(lam > 0), "min_eigenvalue": float(lam), "max_alpha": float(amax)}


def suggested_params(method: str, taxonomy: Taxonomy) -> dict[str, Any]:
    """Initial widget values: the defaults, except an inadmissible ``alpha`` is lowered to 90%
    of the largest admissible one (so the first click trains)."""
    spec = get_method(method)
    values = spec.defaults()
    adm = admissibility(method, values, taxonomy)
    if adm and adm.get("admissible") is False and math.isfinite(adm.get("max_alpha", math.inf)):
        values["alpha"] = float(f"{0.9 * adm['max_alpha']:.2g}")
    return values


# ---------------------------------------------------------------------------------------- metrics
def evaluate_predictions(y_true: Any, y_pred: Any, taxonomy: Taxonomy) -> dict[str, float]:
    """Test metrics from ``hierlab.evaluation.metrics`` (``evaluate`` when present, else each function)."""
    import hierlab.evaluation.metrics as M

    evaluate = getattr(M, "evaluate", None)
    out: dict[str, float] = {}
    if callable(evaluate):
        res = evaluate(y_true, y_pred, taxonomy)
        items = res.items() if hasattr(res, "items") else []
        for k, v in items:
            if isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool):
                out[str(k)] = float(v)
        if out:
            return out
    for name in ("zero_one_error", "tree_induced_error", "micro_f1", "macro_f1"):
        fn = getattr(M, name, None)
        if callable(fn):
            try:
                v = fn(y_true, y_pred, taxonomy)
            except Exception:
                continue
            if isinstance(v, int | float | np.integer | np.floating):
                out[name] = float(v)
    if "tree_induced_error" not in out and taxonomy.is_tree and not _multi(y_true):
        t = taxonomy.index(np.asarray([str(v) for v in y_true], dtype=object))
        p = taxonomy.index(np.asarray([str(v) for v in y_pred], dtype=object))
        out["tree_induced_error"] = float(np.mean(taxonomy.tree_distance(t, p)))
    return out


def _multi(y: Any) -> bool:
    return len(y) > 0 and isinstance(y[0], tuple | list | set | frozenset)


# ---------------------------------------------------------------------------------------- training
def fit_run(
    state: AppState,
    entry: DatasetEntry,
    method: str,
    params: dict[str, Any],
    callbacks: Iterable[Any] = (),
    taxonomy: Taxonomy | None = None,
    taxonomy_source: str = "given",
    stopped: Callable[[], bool] | None = None,
) -> Run:
    """Train ``method`` on the entry's training rows, evaluate on its test rows.

    Parameters
    ----------
    state : AppState
        Gives the run its id (the caller adds the run to ``state.runs``).
    entry : DatasetEntry
    method : str
    params : dict
        Validated by the registry (``make_estimator``).
    callbacks : iterable
        Solver callbacks (the live plot).
    taxonomy : Taxonomy, optional
        Train with this taxonomy instead of the data set's (an induced tree).
    taxonomy_source : str
    stopped : callable, optional
        Tells whether the user stopped the solver (recorded in the run).
    """
    from sklearn.exceptions import ConvergenceWarning

    tax = taxonomy if taxonomy is not None else entry.taxonomy
    spec = get_method(method)
    clean = {p.name: p.validate(params[p.name]) for p in spec.params if p.name in params}
    est = make_estimator(method, taxonomy=tax, **clean)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        est.fit(entry.train.X, entry.train.y, callbacks=list(callbacks))
        fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    y_pred = np.asarray(est.predict(entry.test.X), dtype=object)
    predict_time = time.perf_counter() - t0
    y_test = np.asarray(entry.test.y, dtype=object)
    metrics = evaluate_predictions(y_test, y_pred, tax)
    history = getattr(est, "history_", None)
    history = history.copy() if isinstance(history, pd.DataFrame) else pd.DataFrame()
    solver_time = (
        float(history["elapsed"].iloc[-1]) if "elapsed" in history and len(history) else fit_time
    )
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    was_stopped = bool(stopped()) if stopped is not None else False
    return Run(
        id=state.new_id(),
        method=method,
        params=clean,
        dataset_key=entry.key,
        dataset_name=entry.name,
        split=dict(entry.split),
        taxonomy_source=taxonomy_source,
        taxonomy=tax,
        fit_time=fit_time,
        predict_time=predict_time,
        solver_time=solver_time,
        metrics=metrics,
        history=history,
        estimator=est,
        y_test=y_test,
        y_pred=y_pred,
        stopped=was_stopped,
        converged=bool(getattr(est, "converged_", True)) and not was_stopped,
        warnings=[] if was_stopped else msgs,
    )


def runs_table(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per run: id, method, data, taxonomy, parameters, times, iterations, metrics."""
    rows = []
    for r in runs:
        row: dict[str, Any] = {
            "run": r.id,
            "method": r.method,
            "data": r.dataset_name,
            "taxonomy": r.taxonomy_source,
            "params": ", ".join(f"{k}={_fmt(v)}" for k, v in r.params.items()),
            "fit s": round(r.fit_time, 3),
            "iterations": len(r.history),
            "status": "stopped" if r.stopped else ("converged" if r.converged else "max iter"),
        }
        row.update({k: round(v, 4) for k, v in r.metrics.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def runs_json(runs: Sequence[Run]) -> str:
    """Every run's :meth:`Run.record` as a JSON document."""
    return json.dumps([r.record() for r in runs], indent=1, default=_json_default)


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ---------------------------------------------------------------------------------------- compare
def compare_methods(
    state: AppState,
    entry: DatasetEntry,
    configs: Sequence[dict[str, Any]],
    n_splits: int = 3,
    test_size: float = 0.3,
    seed: int = 0,
    baseline: str | None = None,
    taxonomy: Taxonomy | None = None,
    progress: Callable[[float, str], Any] | None = None,
) -> Comparison:
    """Fit every configuration on identical splits with ``hierlab.evaluation.compare``.

    Parameters
    ----------
    state : AppState
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
    from hierlab.evaluation.compare import compare
    from hierlab.evaluation.metrics import error_per_level

    if not configs:
        raise DataError("choose at least one method to compare")
    tax = taxonomy or entry.taxonomy
    if n_splits <= 0:
        if entry.own_split is None:
            raise DataError(f"{entry.name} has no split of its own; choose repeated splits")
        data: Any = tuple(_with_taxonomy(d, tax) for d in entry.own_split)
        plan: dict[str, Any] = {"mode": "own"}
    else:
        base = concat_datasets(*entry.own_split) if entry.own_split else entry.full
        data = _with_taxonomy(base, tax)
        plan = {"mode": "random", "n_splits": n_splits, "test_size": test_size, "seed": seed}
    methods = [
        {"name": c["method"], "params": c.get("params", {}), "label": c["label"]} for c in configs
    ]

    def _progress(done: int, total: int, method: str, split: int) -> None:
        if progress is not None:
            progress(done / total, f"{method} on split {split + 1}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare(
            data,
            methods,
            split="given" if n_splits <= 0 else "repeated",
            n_splits=max(1, n_splits),
            test_size=test_size,
            random_state=seed,
            progress=_progress,
        )
    level_rows = []
    multi = cmp.dataset.is_multilabel
    for (label, s), pred in cmp.predictions.items():
        y_true = cmp.dataset.y[cmp.splits[s][1]]
        if multi:
            continue
        lv = error_per_level(y_true, pred, tax)
        for lvl, err in zip(lv["level"], lv["error"]):
            level_rows.append({"config": label, "split": s, "level": int(lvl), "error": float(err)})
    labels = [c["label"] for c in configs]
    return Comparison(
        id=state.new_id(),
        dataset_name=entry.name,
        configs=[dict(c) for c in configs],
        plan=plan,
        engine=cmp,
        per_level=pd.DataFrame(level_rows, columns=["config", "split", "level", "error"]),
        baseline=baseline if baseline is not None and baseline in labels else labels[0],
    )


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


# ---------------------------------------------------------------------------------------- induction
def _induce_fn() -> tuple[Any, str]:
    try:
        mod = importlib.import_module("hierlab.methods.mftree.induce")
    except ImportError:
        return None, "hierlab.methods.mftree.induce is missing"
    fn = getattr(mod, "induce_taxonomy", None)
    if not callable(fn):
        return None, "hierlab.methods.mftree.induce has no induce_taxonomy yet"
    return fn, ""


def induction_available() -> tuple[bool, str]:
    """Whether MF-Tree induction is installed, and why not."""
    fn, why = _induce_fn()
    return fn is not None, why


def induce_taxonomy(entry: DatasetEntry, tau: int) -> dict[str, Any]:
    """Induce a taxonomy over the training labels with the approximate MF-Tree (seed 004).

    ``hierlab.methods.mftree.induce.induce_taxonomy(X, y, method="mftree", tau=tau)``; the leaves are the
    training labels, so the induced tree can replace the given one for training.

    Returns
    -------
    dict
        ``{"taxonomy": Taxonomy, "tau": tau, "counts": examples per node or None}``.
    """
    fn, why = _induce_fn()
    if fn is None:
        raise DataError(f"MF-Tree is not available: {why}")
    if entry.train.is_multilabel:
        raise DataError(
            "MF-Tree induces a tree over single-label classes; this data is multi-label"
        )
    tax = fn(entry.train.X, entry.train.y, method="mftree", tau=int(tau))
    try:
        counts = (
            HierDataset(X=entry.train.X, y=entry.train.y, taxonomy=tax)
            .examples_per_node()
            .to_numpy()
        )
    except HierlabError:
        counts = None
    return {"taxonomy": tax, "tau": int(tau), "counts": counts}


def tree_similarity(given: Taxonomy, induced: Taxonomy) -> float | None:
    """``hierlab.evaluation.metrics.tree_similarity_mse(given, induced)`` (seed 004), when available."""
    import hierlab.evaluation.metrics as M

    fn = getattr(M, "tree_similarity_mse", None)
    if not callable(fn):
        return None
    return float(fn(given, induced))
