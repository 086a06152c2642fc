"""Side-by-side comparison of methods on identical splits, with paired significance tests.

:func:`compare` fixes the splits once (the given split, ``k`` repeated random splits, or k-fold,
all from one ``random_state``), fits every method on every split (in parallel with joblib, or on
a dask.distributed cluster: ``client=`` or :func:`hierlab.connect`, the rows sent to every
worker once and each (method, split) task carrying only its indices), and returns a
:class:`Comparison`: a tidy table of every (method, split, metric) value with fit and predict
times, its mean ± std summary, and paired tests against a baseline — the tests the seeds use:
a paired t-test over splits, a sign test on per-example correctness, and the Wilcoxon
signed-rank test on per-class F1.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold, ShuffleSplit

from hierlab.core.cluster import job_cluster, run_tasks, share
from hierlab.core.dataset import HierDataset, concat_datasets, is_multilabel
from hierlab.core.exceptions import ParameterError
from hierlab.core.params import Param, validate_params
from hierlab.core.registry import list_methods, make_estimator
from hierlab.core.taxonomy import Taxonomy

__all__ = ["Comparison", "MethodRun", "compare", "make_splits", "paired_tests"]


@dataclass(frozen=True)
class MethodRun:
    """One method to compare: a label, a registry name and its parameters (or an estimator)."""

    label: str
    name: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    estimator: BaseEstimator | None = None

    def build(self, taxonomy: Taxonomy) -> BaseEstimator:
        """A fresh, unfitted estimator for ``taxonomy``."""
        if self.estimator is not None:
            return clone(self.estimator).set_params(taxonomy=taxonomy)
        assert self.name is not None
        return make_estimator(self.name, taxonomy=taxonomy, **self.params)


def _as_runs(methods: Sequence[Any]) -> list[MethodRun]:
    runs: list[MethodRun] = []
    for m in methods:
        if isinstance(m, MethodRun):
            runs.append(m)
        elif isinstance(m, str):
            runs.append(MethodRun(label=m, name=m))
        elif isinstance(m, dict):
            name, params = _name_and_params(m.get("name"), m.get("params", {}), m)
            runs.append(
                MethodRun(label=str(m.get("label", _label(name, params))), name=name, params=params)
            )
        elif isinstance(m, tuple) and len(m) == 2 and isinstance(m[1], BaseEstimator):
            runs.append(MethodRun(label=str(m[0]), estimator=m[1]))
        elif isinstance(m, tuple) and len(m) == 2:
            name, params = _name_and_params(m[0], m[1], m)
            runs.append(MethodRun(label=_label(name, params), name=name, params=params))
        else:
            raise ParameterError(
                f"cannot read method {m!r}: give a name, (name, params), {{'name', 'params'}}, "
                "or (label, estimator)"
            )
    labels = [r.label for r in runs]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        raise ParameterError(f"two methods share the label(s) {sorted(dup)}; set 'label'")
    if not runs:
        raise ParameterError("compare needs at least one method")
    return runs


def _name_and_params(name: Any, params: Any, given: Any) -> tuple[str, dict[str, Any]]:
    """A method's registry name and parameters, refused unless a known name and a dict."""
    if not isinstance(name, str):
        raise ParameterError(
            f"methods: {given!r} needs a method name ('name': one of hierlab.list_methods())"
        )
    if name not in list_methods():
        raise ParameterError(f"methods: unknown method {name!r}; known: {list_methods()}")
    if not isinstance(params, dict):
        raise ParameterError(
            f"methods: the params of {name!r} must be a dict, got {type(params).__name__}"
        )
    return name, dict(params)


def _check_runs(runs: list[MethodRun], taxonomy: Taxonomy) -> None:
    """Build each method once and validate its parameters: a wrong name or value is an
    argument error, raised before any fit (a fit that fails is recorded instead)."""
    for run in runs:
        try:
            validate_params(run.build(taxonomy))
        except (ParameterError, TypeError, ValueError) as exc:
            raise ParameterError(f"methods: {run.label}: {exc}") from None


#: compare's keywords, declared as the estimators declare theirs (:mod:`hierlab.core.params`)
_KEYWORDS = (
    Param("n_splits", "int", 5, low=1),
    Param("test_size", "float", 0.3, low=0.0, high=1.0, low_open=True, high_open=True),
    Param("random_state", "seed", 0),
    Param("n_jobs", "int", None),
)


def _check_keywords(values: dict[str, Any], n_samples: int, split: str) -> dict[str, Any]:
    """:func:`compare`'s keywords against their declarations and the data's size; the
    validated values (``"5"`` becomes 5)."""
    values = {**values, **{p.name: p.validate(values[p.name], owner="compare") for p in _KEYWORDS}}
    n_splits = int(values["n_splits"])
    if split == "kfold" and not 2 <= n_splits <= n_samples:
        raise ParameterError(
            f"compare: n_splits must be in [2, {n_samples}] for k-fold on {n_samples} rows, "
            f"got {n_splits}"
        )
    n_test = int(np.ceil(float(values["test_size"]) * n_samples))
    if split == "repeated" and not 1 <= n_test < n_samples:
        raise ParameterError(
            f"compare: test_size={values['test_size']} leaves {n_samples - n_test} of "
            f"{n_samples} rows to train on and {n_test} to test"
        )
    if values["progress"] is not None and not callable(values["progress"]):
        raise ParameterError("compare: progress must be a callable or None")
    return values


def _label(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    return name + "(" + ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + ")"


def make_splits(
    dataset: HierDataset | tuple[HierDataset, HierDataset],
    split: str = "repeated",
    n_splits: int = 5,
    test_size: float = 0.3,
    random_state: int | None = 0,
) -> tuple[HierDataset, list[tuple[np.ndarray, np.ndarray]]]:
    """The data to split and the ``(train_index, test_index)`` pairs, fixed once for all methods.

    Parameters
    ----------
    dataset : HierDataset or (train, test) pair
        A pair with ``split="given"`` uses that split; otherwise a pair is concatenated first.
    split : {"given", "repeated", "kfold"}
        The plan: the data set's own split, ``n_splits`` random splits of ``test_size``, or
        ``n_splits``-fold cross-validation (shuffled).
    n_splits : int
    test_size : float
    random_state : int or None

    Returns
    -------
    full : HierDataset
        All rows (train rows first for a given pair).
    splits : list of (ndarray, ndarray)
        Row indices into ``full``.
    """
    if isinstance(dataset, tuple):
        train, test = dataset
        full = concat_datasets(train, test)
        if split == "given":
            n_tr = train.n_samples
            return full, [(np.arange(n_tr), np.arange(n_tr, full.n_samples))]
    else:
        full = dataset
        if split == "given":
            raise ParameterError("split='given' needs a (train, test) pair")
    idx = np.arange(full.n_samples)
    if split == "repeated":
        ss = ShuffleSplit(n_splits=n_splits, test_size=test_size, random_state=random_state)
        return full, [(tr, te) for tr, te in ss.split(idx)]
    if split == "kfold":
        kf = KFold(n_splits=n_splits, shuffle=True, random_state=random_state)
        return full, [(tr, te) for tr, te in kf.split(idx)]
    raise ParameterError(f"split must be 'given', 'repeated' or 'kfold', got {split!r}")


def _fit_one(
    full: HierDataset, run: MethodRun, split_id: int, tr: np.ndarray, te: np.ndarray
) -> dict[str, Any]:
    from hierlab.evaluation.metrics import evaluate

    est = run.build(full.taxonomy)
    Xtr, ytr = full.X[tr], full.y[tr]
    Xte, yte = full.X[te], full.y[te]
    t0 = time.perf_counter()
    est.fit(Xtr, ytr)
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(Xte)
    predict_time = time.perf_counter() - t0
    scores = evaluate(yte, pred, full.taxonomy)
    correct = _correct(yte, pred, full.taxonomy)
    return {
        "method": run.label,
        "split": split_id,
        "scores": {
            k: float(v) for k, v in scores.items() if isinstance(v, int | float | np.number)
        },
        "fit_time": fit_time,
        "predict_time": predict_time,
        "test_index": te,
        "y_pred": pred,
        "correct": correct,
        "n_iter": int(getattr(est, "n_iter_", 0) or 0),
    }


def _paired(
    cmp: Comparison, res: pd.DataFrame, baseline: str, m: str, metric: str
) -> dict[str, Any]:
    """One row of :func:`paired_tests`: ``m`` against ``baseline`` on the splits where both
    fitted (a failed pair, :attr:`Comparison.failures`, leaves its split out)."""
    common = [s for s in range(len(cmp.splits)) if (baseline, s) in cmp.predictions
              and (m, s) in cmp.predictions]  # fmt: skip
    y_all = cmp.dataset.y
    y_true = np.concatenate([y_all[cmp.splits[s][1]] for s in common] or [y_all[:0]])
    base_vals = res[res["method"] == baseline].set_index("split")["value"].loc[common]
    vals = res[res["method"] == m].set_index("split")["value"].loc[common]
    diff = float((vals - base_vals).mean()) if common else float("nan")
    t_p = (
        float(stats.ttest_rel(vals, base_vals).pvalue)
        if len(common) >= 2 and not np.allclose(vals.to_numpy(), base_vals.to_numpy())
        else (1.0 if len(common) >= 2 else float("nan"))
    )
    ok = np.concatenate([cmp.correct[(m, s)] for s in common] or [np.zeros(0, dtype=bool)])
    base_ok = np.concatenate(
        [cmp.correct[(baseline, s)] for s in common] or [np.zeros(0, dtype=bool)]
    )
    wins, losses = int(np.sum(ok & ~base_ok)), int(np.sum(~ok & base_ok))
    sign_p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else 1.0
    wil_p = 1.0
    if common:
        base_f1 = _per_class_f1(
            y_true, np.concatenate([cmp.predictions[(baseline, s)] for s in common])
        )
        pred = np.concatenate([cmp.predictions[(m, s)] for s in common])
        f1 = _per_class_f1(y_true, pred).reindex(base_f1.index, fill_value=0.0)
        if np.any(f1.to_numpy() - base_f1.to_numpy()):
            wil_p = float(stats.wilcoxon(f1.to_numpy(), base_f1.to_numpy()).pvalue)
    return {
        "method": m,
        f"{metric}_diff": diff,
        "t_pvalue": t_p,
        "wins": wins,
        "losses": losses,
        "sign_pvalue": sign_p,
        "wilcoxon_pvalue": wil_p,
    }


def _correct(y_true: np.ndarray, y_pred: np.ndarray, tax: Taxonomy) -> np.ndarray:
    """Per-example correctness as "accuracy" counts it: the exact node (single-label) or the
    exact closed set (multi-label); so the sign test and the "accuracy" column agree."""
    if is_multilabel(y_true):
        A = tax.ancestor_matrix

        def closed(row: Any) -> frozenset[int]:
            ids = tax.index(list(row)) if len(row) else np.empty(0, dtype=np.int64)
            return frozenset(np.unique(A[ids].indices).tolist()) if len(ids) else frozenset()

        return np.array([closed(t) == closed(p) for t, p in zip(y_true, y_pred)])
    t = tax.index(np.asarray([str(v) for v in y_true], dtype=object))
    p = tax.index(np.asarray([str(v) for v in y_pred], dtype=object))
    return np.asarray(t == p)


def _per_class_f1(y_true: np.ndarray, y_pred: np.ndarray) -> pd.Series:
    from sklearn.metrics import f1_score

    if is_multilabel(y_true):
        from sklearn.preprocessing import MultiLabelBinarizer

        mlb = MultiLabelBinarizer()
        mlb.fit(list(y_true) + list(y_pred))
        f1 = f1_score(mlb.transform(y_true), mlb.transform(y_pred), average=None, zero_division=0)
        return pd.Series(f1, index=mlb.classes_)
    yt = np.array([str(v) for v in y_true])
    yp = np.array([str(v) for v in y_pred])
    labels = np.unique(yt)
    return pd.Series(f1_score(yt, yp, labels=labels, average=None, zero_division=0), index=labels)


@dataclass
class Comparison:
    """What :func:`compare` returns.

    Attributes
    ----------
    results : DataFrame
        Tidy: one row per (method, split, metric) with ``value``, ``fit_time``,
        ``predict_time``.
    splits : list of (ndarray, ndarray)
        The row indices used, identical for every method.
    predictions : dict
        ``(method, split) -> y_pred`` on that split's test rows.
    correct : dict
        ``(method, split) -> bool array`` of per-example correctness.
    dataset : HierDataset
        The rows the splits index.
    methods : list of str
        The methods' labels, in the order given.
    failures : dict
        ``(method, split) -> "ErrorType: message"`` of every fit that failed; those pairs
        have no results, predictions or correctness.
    """

    results: pd.DataFrame
    splits: list[tuple[np.ndarray, np.ndarray]]
    predictions: dict[tuple[str, int], np.ndarray]
    correct: dict[tuple[str, int], np.ndarray]
    dataset: HierDataset
    methods: list[str]
    failures: dict[tuple[str, int], str] = field(default_factory=dict)

    def summary(self) -> pd.DataFrame:
        """Mean and std over splits of every metric and of the times, per method."""
        metric = self.results.pivot_table(
            index="method",
            columns="metric",
            values="value",
            aggfunc=["mean", "std"],
            sort=False,
            dropna=False,  # one split: every std is NaN, and the columns must stay
        )
        times = (
            self.results.drop_duplicates(["method", "split"])
            .groupby("method", sort=False)[["fit_time", "predict_time"]]
            .agg(["mean", "std"])
        )
        metric.columns = [f"{m}_{stat}" for stat, m in metric.columns]
        times.columns = [f"{m}_{stat}" for m, stat in times.columns]
        out = metric.join(times)
        return out.reindex(self.methods)

    def table(self, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """Printable ``mean ± std`` strings, one row per method."""
        s = self.summary()
        names = metrics or sorted({c[: -len("_mean")] for c in s.columns if c.endswith("_mean")})
        out = pd.DataFrame(index=s.index)
        for m in names:
            mean, std = s[f"{m}_mean"], s[f"{m}_std"].fillna(0.0)
            out[m] = [f"{a:.4f} ± {b:.4f}" for a, b in zip(mean, std)]
        return out

    def tests(self, baseline: str, metric: str = "accuracy") -> pd.DataFrame:
        """Paired tests of every method against ``baseline``; see :func:`paired_tests`."""
        return paired_tests(self, baseline, metric)


def paired_tests(cmp: Comparison, baseline: str, metric: str = "accuracy") -> pd.DataFrame:
    """Paired significance of each method against ``baseline``.

    - ``t_pvalue``: paired t-test over splits of ``metric`` (``scipy.stats.ttest_rel``; NaN with
      fewer than two splits);
    - ``sign_pvalue``: two-sided sign test on per-example correctness pooled over splits
      (``scipy.stats.binomtest`` on the examples where exactly one of the two is right);
    - ``wilcoxon_pvalue``: Wilcoxon signed-rank test on per-class F1 (classes of the test
      rows, F1 pooled over splits; ``scipy.stats.wilcoxon``).

    Returns
    -------
    DataFrame indexed by method (the baseline excluded), with the mean difference of ``metric``.
    """
    if baseline not in cmp.methods:
        raise ParameterError(f"baseline {baseline!r} is not among the methods {cmp.methods}")
    res = cmp.results[cmp.results["metric"] == metric]
    if res.empty:
        known = sorted(cmp.results["metric"].unique())
        raise ParameterError(f"no metric {metric!r}; the comparison has {known}")
    rows = [_paired(cmp, res, baseline, m, metric) for m in cmp.methods if m != baseline]
    if not rows:
        return pd.DataFrame(columns=["method"]).set_index("method")
    return pd.DataFrame(rows).set_index("method")


def compare(
    dataset: HierDataset | tuple[HierDataset, HierDataset],
    methods: Sequence[Any],
    split: str | None = None,
    n_splits: int = 5,
    test_size: float = 0.3,
    random_state: int | None = 0,
    n_jobs: int | None = None,
    progress: Any = None,
    client: Any = None,
) -> Comparison:
    """Fit every method on identical splits and collect every metric.

    Parameters
    ----------
    dataset : HierDataset or (train, test) pair
    methods : sequence
        Registry names, ``(name, params)`` pairs, ``{"name", "params", "label"}`` dicts,
        ``(label, estimator)`` pairs, or :class:`MethodRun`.
    split : {"given", "repeated", "kfold"}, optional
        Default: "given" for a (train, test) pair, "repeated" for one data set.
    n_splits, test_size, random_state
        The split plan (see :func:`make_splits`).
    n_jobs : int, optional
        joblib workers over (method, split) pairs, without a cluster.
    progress : callable, optional
        Called as ``progress(done, total, method, split)`` after each fit.
    client : distributed.Client or str, optional
        A dask.distributed cluster (a client or its address) the (method, split) pairs run
        on; default: the cluster of :func:`hierlab.connect`, if any. The results equal the
        serial run's (the same splits and seeds; only the times differ).

    Returns
    -------
    Comparison
    """
    keywords = {"n_splits": n_splits, "test_size": test_size, "random_state": random_state,
                "n_jobs": n_jobs, "progress": progress}  # fmt: skip
    runs, full, splits = _checked_plan(dataset, methods, split, keywords)
    tasks = [(r, s, tr, te) for s, (tr, te) in enumerate(splits) for r in runs]
    out: list[dict[str, Any]] = []
    with job_cluster(client):
        # on a cluster: one fit per worker thread, the methods with the longest fits first
        gen = run_tasks(
            _fit_one_recorded, tasks, share(full), n_jobs=n_jobs, kind=lambda t: t[0].label
        )
        for k, rec in enumerate(gen, 1):
            out.append(rec)
            if progress is not None:
                _report(progress, k, len(tasks), rec)
    failures = {(r["method"], r["split"]): r["error"] for r in out if "error" in r}
    out = [r for r in out if "error" not in r]
    rows = []
    for rec in out:
        for metric, value in rec["scores"].items():
            rows.append(
                {
                    "method": rec["method"],
                    "split": rec["split"],
                    "metric": metric,
                    "value": value,
                    "fit_time": rec["fit_time"],
                    "predict_time": rec["predict_time"],
                    "n_iter": rec["n_iter"],
                }
            )
    order = {r.label: i for i, r in enumerate(runs)}
    columns = ["method", "split", "metric", "value", "fit_time", "predict_time", "n_iter"]
    table = pd.DataFrame(rows, columns=columns).sort_values(
        ["method", "split", "metric"], key=lambda c: c.map(order) if c.name == "method" else c
    )
    return Comparison(
        results=table.reset_index(drop=True),
        splits=splits,
        predictions={(rec["method"], rec["split"]): rec["y_pred"] for rec in out},
        correct={(rec["method"], rec["split"]): rec["correct"] for rec in out},
        dataset=full,
        methods=[r.label for r in runs],
        failures=failures,
    )


def _checked_plan(
    dataset: Any, methods: Any, split: str | None, keywords: dict[str, Any]
) -> tuple[list[MethodRun], HierDataset, list[tuple[np.ndarray, np.ndarray]]]:
    """:func:`compare`'s arguments checked: its runs, the rows and the splits."""
    if isinstance(methods, str | bytes) or not isinstance(methods, Sequence):
        raise ParameterError(f"compare: methods must be a list, got {type(methods).__name__}")
    runs = _as_runs(methods)
    plan = split or ("given" if isinstance(dataset, tuple) else "repeated")
    if not isinstance(dataset, HierDataset | tuple):
        raise ParameterError(
            f"compare: dataset must be a HierDataset or a (train, test) pair, got "
            f"{type(dataset).__name__}"
        )
    n_rows = sum(d.n_samples for d in dataset) if isinstance(dataset, tuple) else dataset.n_samples
    kw = _check_keywords(keywords, n_rows, plan)
    full, splits = make_splits(dataset, plan, kw["n_splits"], kw["test_size"], kw["random_state"])
    _check_runs(runs, full.taxonomy)
    return runs, full, splits


def _fit_one_recorded(
    full: HierDataset, run: MethodRun, split_id: int, tr: np.ndarray, te: np.ndarray
) -> dict[str, Any]:
    """:func:`_fit_one`, or the record of its failure: ``{"method", "split", "error"}``."""
    try:
        return _fit_one(full, run, split_id, tr, te)
    except Exception as exc:  # any failure of one fit is that pair's result, not the run's
        msg = " ".join(str(exc).split()) or type(exc).__name__
        return {"method": run.label, "split": split_id, "error": f"{type(exc).__name__}: {msg}"}


def _report(progress: Any, done: int, total: int, rec: dict[str, Any]) -> None:
    """Call the progress callback; what it raises becomes a ParameterError naming it."""
    try:
        progress(done, total, rec["method"], rec["split"])
    except Exception as exc:
        raise ParameterError(
            f"compare: the progress callback raised {type(exc).__name__}: {exc}"
        ) from exc
