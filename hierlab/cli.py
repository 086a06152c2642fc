"""The ``hierlab`` command: ``datasets``, ``methods``, ``fit``, ``evaluate``, ``reproduce``.

Examples
--------
::

    hierlab datasets
    hierlab methods
    hierlab fit hieron-synthetic --method topdown --param C=0.5
    hierlab fit data.csv --taxonomy tax.txt --method orthognl --test-size 0.3 --seed 0
    hierlab evaluate predictions.csv --taxonomy tax.txt
    hierlab reproduce hieron
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

import numpy as np

from hierlab.core.exceptions import HierlabError
from hierlab.core.solver import SolverState

__all__ = ["ProgressBar", "main"]


def _bar(filled: int) -> str:
    """A 30-character progress bar: ``filled`` times ``#``, then ``-``."""
    return "#" * filled + "-" * (30 - filled)


class ProgressBar:
    """A text progress bar callback: iteration, objective, gap, elapsed (redrawn <= 10 times/s).

    Parameters
    ----------
    total : int, optional
        Expected number of iterations (the method's budget parameter), for the bar's length.
    stream : file, default sys.stderr
    """

    def __init__(self, total: int | None = None, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self._last = 0.0
        self._shown = False

    def __call__(self, state: SolverState) -> bool:
        now = time.perf_counter()
        if now - self._last < 0.1:
            return False
        self._last = now
        self._draw(state)
        return False

    def _draw(self, state: SolverState) -> None:
        if self.total:
            bar = _bar(int(30 * min(1.0, state.iteration / self.total)))
            head = f"[{bar}] {state.iteration}/{self.total}"
        else:
            head = f"iter {state.iteration}"
        gap = "" if state.gap is None else f"  gap {state.gap:.3g}"
        self.stream.write(f"\r{head}  obj {state.upper:.6g}{gap}  {state.elapsed:.1f}s   ")
        self.stream.flush()
        self._shown = True

    def on_end(self, result: Any) -> None:
        if result.final is not None:
            self._draw(result.final)
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise HierlabError(f"--param takes name=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def _load_data(args: argparse.Namespace) -> tuple[Any, Any]:
    from hierlab.datasets.catalog import available_datasets, load_builtin

    names = {d.name for d in available_datasets()}
    if args.data.lower() in names and not os.path.exists(args.data):
        return load_builtin(
            args.data, **({"random_state": args.seed} if _takes_seed(args.data) else {})
        )
    from hierlab.io import load_dataset, read_taxonomy

    tax = read_taxonomy(args.taxonomy) if args.taxonomy else None
    data = load_dataset(args.data, taxonomy=tax)
    if args.test:
        return data, load_dataset(args.test, reference=data)
    from sklearn.model_selection import train_test_split

    n_test = int(np.ceil(args.test_size * data.n_samples))
    if not 1 <= n_test < data.n_samples:
        raise HierlabError(
            f"{args.data}: {data.n_samples} row(s); --test-size {args.test_size} leaves "
            f"{data.n_samples - n_test} to train on and {n_test} to test (give more rows, "
            "another --test-size, or a --test file)"
        )
    idx = np.arange(data.n_samples)
    tr, te = train_test_split(idx, test_size=args.test_size, random_state=args.seed)
    return data.subset(tr), data.subset(te)


def _takes_seed(name: str) -> bool:
    from hierlab.datasets.catalog import available_datasets

    return any(d.name == name and "random_state" in d.kwargs for d in available_datasets())


def _print_table(rows: dict[str, Any], stream: TextIO) -> None:
    width = max(len(k) for k in rows)
    for k, v in rows.items():
        shown = f"{v:.4f}" if isinstance(v, float) else str(v)
        stream.write(f"  {k:<{width}}  {shown}\n")


def _cmd_datasets(args: argparse.Namespace) -> int:
    from hierlab.datasets.catalog import available_datasets

    for d in available_datasets():
        tag = " (real data)" if d.real else ""
        print(f"{d.name:<20} {d.description}{tag}")
    return 0


def _cmd_methods(args: argparse.Namespace) -> int:
    from hierlab.core.registry import get_method, list_methods

    if args.name:
        spec = get_method(args.name)
        print(f"{spec.name} [{spec.seed}] {spec.summary}")
        budget = f"; iterations capped by --param {spec.budget}" if spec.budget else ""
        print(f"  {spec.display_name}{budget}")
        for q in spec.params:
            sym = f" ({q.symbol})" if q.symbol and q.symbol != q.name else ""
            print(f"  --param {q.name}=...{sym}  default {q.default!r}; {q.range_text()}")
            if q.help:
                print(f"      {q.help}")
        return 0
    for name in list_methods():
        spec = get_method(name)
        params = ", ".join(f"{p.name}={p.default!r}" for p in spec.params)
        print(f"{name:<16} [{spec.seed}] {spec.summary}")
        if params:
            print(f"{'':<16} params: {params}")
        paper = spec.presets.get("paper")
        if paper:
            shown = ", ".join(f"{k}={v!r}" for k, v in paper.items())
            print(f"{'':<16} --preset paper: {shown}")
    return 0


#: the fits with parts a dask cluster runs (the rest fit in this process under --dask)
_CLUSTER_PARTS = (
    "topdown (one classifier per parent node), ovr-svm / ovr-lr with solver=liblinear (one "
    "task per leaf), hr-svm / hr-lr with solver=block-cd (the leaf blocks of one parity level)"
)


def _where_it_ran(method: str, est: Any, n_tasks: int) -> None:
    """Say on stderr what of a ``fit --dask`` ran on the cluster and what in this process."""
    solver = est.get_params(deep=False).get("solver") or ""
    how = f"{method} (solver {solver})" if solver else method
    if n_tasks:
        print(f"hierlab: {how}: {n_tasks} tasks ran on the cluster", file=sys.stderr)
    else:
        print(
            f"hierlab: {how} fitted in this process: nothing of it runs on a cluster. Parts "
            f"that do: {_CLUSTER_PARTS}; compare and tune send whole fits.",
            file=sys.stderr,
        )


def _cmd_fit(args: argparse.Namespace) -> int:
    from hierlab.core.cluster import tasks_sent
    from hierlab.core.registry import get_method, make_estimator
    from hierlab.evaluation.metrics import evaluate

    if args.out:
        from hierlab.persistence import writable_target

        writable_target(args.out)  # a directory, a device or a FIFO: refused before the fit
    if args.chunk_rows is not None:
        return _fit_chunked(args)
    train, test = _load_data(args)
    params = _parse_params(args.param)
    spec = get_method(args.method)
    if args.calibrate_cv is not None and args.calibrate_cv > train.n_samples:
        raise HierlabError(
            f"--calibrate-cv {args.calibrate_cv}: more folds than the {train.n_samples} "
            "training rows"
        )
    est = make_estimator(args.method, taxonomy=train.taxonomy, preset=args.preset, **params)
    bar = ProgressBar(total=spec.iterations(est.get_params(deep=False)))
    sent = tasks_sent()
    t0 = time.perf_counter()
    est.fit(train.X, train.y, callbacks=[bar])
    if args.calibrate_cv is not None:
        est.calibrate(train.X, train.y, cv=args.calibrate_cv, random_state=args.seed)
    fit_time = time.perf_counter() - t0
    if getattr(args, "dask", None) is not None:
        _where_it_ran(args.method, est, tasks_sent() - sent)
    t0 = time.perf_counter()
    y_pred = est.predict(test.X, threshold=args.threshold)
    pred_time = time.perf_counter() - t0
    report: dict[str, Any] = {
        "method": args.method,
        "n_train": train.n_samples,
        "n_test": test.n_samples,
        "fit_time_s": fit_time,
        "predict_time_s": pred_time,
        "n_iter": int(getattr(est, "n_iter_", 0)),
        "converged": bool(getattr(est, "converged_", True)),
        "solver": str(getattr(est, "solver_", "")),
        "algorithm": str(getattr(est, "algorithm_", "")),
    }
    report.update(evaluate(test.y, y_pred, train.taxonomy))
    if args.threshold is not None:
        report.update(_threshold_report(est, test, y_pred, float(args.threshold)))
    if args.proba:
        from hierlab.evaluation.curves import probability_report

        rep = probability_report(est, test.X, test.y, thresholds=())
        report.update({k: rep[k] for k in ("au_prc", "brier", "ece")})
    if args.json:
        print(json.dumps(report, default=float, indent=2))
    else:
        print(f"{args.method} on {args.data}:")
        _print_table(report, sys.stdout)
    if args.out:
        from hierlab.persistence import save

        save(est, args.out)
        print(f"model written to {args.out}", file=sys.stderr)
    return 0


def _system_arrow_pool() -> None:
    """pandas keeps strings in pyarrow, whose default allocator (mimalloc) reserves 1 GiB of
    address space at its first allocation: more than a bounded-memory run under ``ulimit -v``
    can give. Chosen before that first allocation, the system allocator serves them instead."""
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - pandas without pyarrow: nothing to choose
        return
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())


def _fit_chunked(args: argparse.Namespace) -> int:
    """``hierlab fit FILE --chunk-rows N``: ``partial_fit`` over blocks of N rows, evaluated on
    ``--test`` read the same way; memory bounded by one block and the model."""
    import resource

    from hierlab.core.registry import make_estimator
    from hierlab.evaluation.metrics import evaluate
    from hierlab.evaluation.stream import default_passes, fit_blocks, predict_blocks
    from hierlab.io.chunks import iter_chunks

    if not os.path.isfile(args.data):
        raise HierlabError(f"--chunk-rows reads a data file; {args.data!r} is not one")
    _system_arrow_pool()
    train = iter_chunks(args.data, args.chunk_rows, taxonomy=args.taxonomy)
    params = _parse_params(args.param)
    est = make_estimator(args.method, taxonomy=train.taxonomy, preset=args.preset, **params)
    passes = args.passes if args.passes is not None else default_passes(est)
    t0 = time.perf_counter()
    fit_blocks(est, train, passes)
    report: dict[str, Any] = {
        "method": args.method,
        "n_train": train.n_samples,
        "chunk_rows": train.chunk_rows,
        "blocks": len(train),
        "passes": passes,
        "fit_time_s": time.perf_counter() - t0,
        "solver": str(getattr(est, "solver_", "")),
        "algorithm": str(getattr(est, "algorithm_", "")),
    }
    if args.test:
        test = iter_chunks(args.test, args.chunk_rows, reference=train)
        y_true, y_pred = predict_blocks(est, test)
        report["n_test"] = len(y_true)
        report.update(evaluate(y_true, y_pred, train.taxonomy))
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps(report, default=float, indent=2))
    else:
        print(f"{args.method} on {args.data}, {len(train)} blocks of {train.chunk_rows} rows:")
        _print_table(report, sys.stdout)
    if args.out:
        from hierlab.persistence import save

        save(est, args.out)
        print(f"model written to {args.out}", file=sys.stderr)
    return 0


def _cmd_tune(args: argparse.Namespace) -> int:
    from hierlab.core.registry import make_estimator
    from hierlab.evaluation.metrics import evaluate
    from hierlab.evaluation.tune import DEFAULT_CS, tune

    train, test = _load_data(args)
    est = make_estimator(args.method, taxonomy=train.taxonomy, **_parse_params(args.param))
    res = tune(
        est,
        train.X,
        train.y,
        Cs=args.Cs or DEFAULT_CS,
        validation=args.validation,
        scoring=args.scoring,
        random_state=args.seed,
        patience=None if args.patience == 0 else args.patience,
        max_time=args.max_time,
    )
    report = {
        "method": args.method,
        "best_C": res.best_C,
        "search_time_s": res.time,
        "path_ended_by": res.stopped,
        "C_not_fitted": " ".join(f"{c:g}" for c in res.skipped) or "-",
    }
    report.update(evaluate(test.y, res.estimator.predict(test.X), train.taxonomy))
    if args.json:
        print(json.dumps({**report, "path": res.path.to_dict("records")}, default=float, indent=2))
        return 0
    print(f"{args.method} on {args.data}: C by a warm-started path, scored by {args.scoring}")
    print(res.path.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    _print_table(report, sys.stdout)
    return 0


def _threshold_report(est: Any, test: Any, y_pred: np.ndarray, t: float) -> dict[str, Any]:
    """Depth of the thresholded predictions and the share stopped above the method's own."""
    tax = est.taxonomy_
    if getattr(est, "multilabel_", False):
        return {"threshold": t}
    cut = tax.index([str(v) for v in y_pred])
    own = tax.index([str(v) for v in est.predict(test.X)])
    return {
        "threshold": t,
        "mean_depth": float(tax.depth[cut].mean()),
        "stopped_above": float((cut != own).mean()),
    }


def _cmd_evaluate(args: argparse.Namespace) -> int:
    import pandas as pd

    from hierlab.evaluation.metrics import evaluate
    from hierlab.io import read_taxonomy

    tax = read_taxonomy(args.taxonomy)
    df = pd.read_csv(args.predictions, dtype=str, keep_default_na=False)
    for col in (args.true_column, args.pred_column):
        if col not in df.columns:
            raise HierlabError(
                f"{args.predictions}: no column {col!r}; columns are {', '.join(df.columns)}"
            )
    y_true = df[args.true_column].to_numpy(dtype=object)
    y_pred = df[args.pred_column].to_numpy(dtype=object)
    if args.sep:
        y_true = np.array([tuple(v.split(args.sep)) for v in y_true] + [()], dtype=object)[:-1]
        y_pred = np.array([tuple(v.split(args.sep)) for v in y_pred] + [()], dtype=object)[:-1]
    report = evaluate(y_true, y_pred, tax)
    if args.json:
        print(json.dumps(report, default=float, indent=2))
    else:
        _print_table(report, sys.stdout)
    return 0


def _compare_methods(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """``(method, parameters)`` of ``compare --methods``, from its ``--param method:name=value``."""
    per_method: dict[str, dict[str, Any]] = {m: {} for m in args.methods}
    for item in args.param:
        if ":" not in item.split("=", 1)[0]:
            raise HierlabError(f"compare --param takes method:name=value, got {item!r}")
        method, rest = item.split(":", 1)
        if method not in per_method:
            raise HierlabError(f"--param {item!r} names a method not in --methods")
        per_method[method].update(_parse_params([rest]))
    return [(m, per_method[m]) for m in args.methods]


def _split_progress(done: int, total: int, method: str, split: int) -> None:
    """``compare``'s progress bar on stderr: one step per (method, split) fit."""
    bar = _bar(int(30 * done / total))
    sys.stderr.write(f"\r[{bar}] {done}/{total}  {method} split {split}      ")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _cmd_compare(args: argparse.Namespace) -> int:
    from hierlab.evaluation.compare import compare

    data = _load_data_whole(args)
    cmp = compare(
        data,
        _compare_methods(args),
        split=args.split,
        n_splits=args.n_splits,
        test_size=args.test_size,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        progress=_split_progress,
    )
    table = cmp.table()
    print(table.to_string())
    for (method, split), error in cmp.failures.items():
        print(f"hierlab: {method} failed on split {split}: {error}", file=sys.stderr)
    baseline = args.baseline or cmp.methods[0]
    tests = cmp.tests(baseline, args.metric) if len(cmp.methods) > 1 else None
    if tests is not None:
        print(f"\npaired tests against {baseline} ({args.metric}):")
        print(tests.to_string(float_format=lambda v: f"{v:.4g}"))
    if args.csv:
        cmp.results.to_csv(args.csv, index=False)
        print(f"results written to {args.csv}", file=sys.stderr)
    if args.json:
        payload = {
            "summary": cmp.summary().reset_index().to_dict(orient="records"),
            "results": cmp.results.to_dict(orient="records"),
            "tests": None if tests is None else tests.reset_index().to_dict(orient="records"),
        }
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, default=float, indent=1)
        print(f"JSON written to {args.json}", file=sys.stderr)
    return 0


def _load_data_whole(args: argparse.Namespace) -> Any:
    """A built-in (train, test) pair, a (file, --test file) pair, or one file to split."""
    from hierlab.datasets.catalog import available_datasets, load_builtin

    names = {d.name for d in available_datasets()}
    if args.data.lower() in names and not os.path.exists(args.data):
        return load_builtin(args.data)
    from hierlab.io import load_dataset, read_taxonomy

    tax = read_taxonomy(args.taxonomy) if args.taxonomy else None
    data = load_dataset(args.data, taxonomy=tax)
    if args.test:
        return data, load_dataset(args.test, reference=data)
    return data


def _note(msg: str) -> None:
    """``bench``'s progress line on stderr."""
    print(f"  ... {msg}", file=sys.stderr, flush=True)


def _bench_params(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """``method -> parameters`` of ``bench --param method:name=value`` (table and curves)."""
    per_method: dict[str, dict[str, Any]] = {}
    for item in args.param:
        method, sep, rest = item.partition(":")
        if not sep:
            raise HierlabError(f"bench --param takes method:name=value, got {item!r}")
        per_method.setdefault(method.lower(), {}).update(_parse_params([rest]))
    return per_method


#: The columns of ``hierlab bench``'s printed table (the JSON has them all).
_BENCH_SHOWN = (
    "method",
    "seed",
    "fit_time",
    "fit_ratio",
    "cpu_ratio",
    "warmup_time",
    "predict_time",
    "accuracy",
    "tree_error",
    "n_iter",
    "budget_hit",
    "peak_rss_mb",
)


def _bench_table(
    args: argparse.Namespace,
    per_method: dict[str, dict[str, Any]],
    budget: float | None,
    out: dict[str, Any],
) -> None:
    """The method table of ``hierlab bench``: into ``out`` and, without ``--json``, printed.

    Parameters
    ----------
    args : Namespace
        The ``bench`` options.
    per_method : dict
        ``method -> parameters`` from ``--param``.
    budget : float or None
        Soft seconds per method.
    out : dict
        The JSON document; gains ``data``, ``budget``, ``hiclass_installed`` and ``table``.
    """
    from hierlab.benchmarks import bench
    from hierlab.datasets.catalog import load_builtin

    train, test = load_builtin(args.data, **_parse_params(args.data_param))
    table = bench.bench_table(
        train,
        test,
        methods=args.methods or None,
        params=per_method,
        hiclass=not args.no_hiclass,
        progress=_note,
        budget=budget,
        hard_timeout=args.hard_timeout,
        reference_each=args.ref_each,
        blas_threads=args.blas_threads or None,
    )
    out["data"] = {
        "name": args.data,
        "n_train": train.n_samples,
        "n_test": test.n_samples,
        "n_features": train.n_features,
        "nnz_train": int(train.X.nnz) if hasattr(train.X, "nnz") else None,
        "n_nodes": train.taxonomy.n_nodes,
    }
    out["budget"] = budget
    out["hiclass_installed"] = bench.hiclass_available()
    out["table"] = bench.records(table)
    if not args.json:
        _print_bench_table(args, train, test, table)


def _print_bench_table(args: argparse.Namespace, train: Any, test: Any, table: Any) -> None:
    """Print ``bench``'s table, then each method's error or non-default parameters."""
    from hierlab.benchmarks import bench

    print(
        f"hierlab bench on {args.data} ({train.n_samples} train / {test.n_samples} "
        f"test, {train.n_features} features); ratios to LinearSVC's fit time"
        + (" refitted before each method" if args.ref_each else "")
    )
    shown = table[[c for c in _BENCH_SHOWN if c in table.columns]]
    print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-"))
    for _, r in table.iterrows():
        if isinstance(r.get("error"), str):
            print(f"  {r['method']}: {r['error']}")
        elif r.get("params") not in (None, "{}") and isinstance(r.get("params"), str):
            print(f"  {r['method']} params {r['params']}")
    if not bench.hiclass_available() and not args.no_hiclass:
        print("  (hiclass not installed: pip install 'hierlab[hiclass]' adds its row)")


def _bench_scale(
    args: argparse.Namespace, per_method: dict[str, dict[str, Any]], out: dict[str, Any]
) -> None:
    """The scale curves of ``hierlab bench --scale``, into ``out["scale"]``.

    The figure goes to ``--figure``; without ``--json`` the table and the slopes are printed.
    """
    from hierlab.benchmarks import bench

    methods = args.scale or ["topdown"]
    scale_params = {m: p for m, p in per_method.items() if m in methods}
    df, slopes = bench.scale_curves_many(
        methods,
        n_docs=[int(v) for v in args.docs],
        n_classes=[int(v) for v in args.classes],
        docs_at_fixed_classes=args.classes_for_docs,
        docs_for_class_curve=args.docs_for_classes,
        n_features=args.features,
        params=scale_params,
        progress=_note,
        budget=None if args.scale_budget <= 0 else float(args.scale_budget),
        blas_threads=args.blas_threads or None,
    )
    out["scale"] = {"table": bench.records(df), "slopes": slopes, "n_features": args.features}
    if args.figure:
        bench.scale_figure(df, slopes).write_html(args.figure, include_plotlyjs="cdn")
        out["scale"]["figure"] = args.figure
        _note(f"figure written to {args.figure}")
    if not args.json:
        print("\nscale curves on make_hierarchical_text (fit time, s):")
        print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-"))
        for m, s in slopes.items():
            print(f"{m}: log-log slope vs nnz {s['nnz']:.3f}, vs classes {s['classes']:.3f}")


def _bench_plan(args: argparse.Namespace, out: dict[str, Any]) -> None:
    """``bench --plan``: the scale curves' slopes extrapolated to LSHTC and DMOZ sizes."""
    import pandas as pd

    from hierlab.benchmarks import bench, plan

    if args.plan_from:
        with open(args.plan_from, encoding="utf-8") as fh:
            scale = json.load(fh)["scale"]
        table, n_features = pd.DataFrame(scale["table"]), int(scale.get("n_features", 20_000))
    else:
        _bench_scale(args, _bench_params(args), out)
        table, n_features = pd.DataFrame(out["scale"]["table"]), int(args.features)
    out["plan"] = {}
    for method in table["method"].unique():
        try:
            model = plan.fit_plan(table, method, n_features)
        except ValueError as exc:
            raise HierlabError(str(exc)) from None
        tab, check = plan.plan_table(model), plan.check_point(table, method, n_features)
        out["plan"][method] = {"table": bench.records(tab), "check": check}
        if not args.json:
            _print_plan(model, tab, check)


def _print_plan(model: Any, tab: Any, check: dict[str, Any] | None) -> None:
    """The plan of one method: its fitted slopes, the table, the check, the assumptions."""
    from hierlab.benchmarks.plan import ASSUMPTIONS

    print(
        f"\n{model.method}: {model.clock} ~ nnz^{model.b:.2f} x leaves^{model.c:.2f} "
        f"({model.n_points} measured points); memory {model.m0 / 2**20:.0f} MB + "
        f"{model.alpha:.0f} B/nnz + {model.beta:.2f} B/(node x feature)"
    )
    print(tab.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if check is not None:
        print(
            f"check at {check['n_classes']} leaves, {check['n_docs']} docs (fitted without "
            f"it): {check['clock']} {check['predicted_s']:.1f} s predicted / "
            f"{check['measured_s']:.1f} s "
            f"measured = {check['time_ratio']:.2f}; memory {check['predicted_mb']:.0f} / "
            f"{check['measured_mb']:.0f} MB = {check['memory_ratio']:.2f}"
        )
    for a in ASSUMPTIONS:
        print(f"  assumption: {a}")


def _bench_cluster(
    args: argparse.Namespace, per_method: dict[str, dict[str, Any]], out: dict[str, Any]
) -> None:
    """``bench --dask ADDRESS``: compare and HR-SVM timed here and on the cluster."""
    from hierlab.benchmarks import bench
    from hierlab.benchmarks.cluster import COMPARE_METHODS, cluster_speedups
    from hierlab.datasets.catalog import load_builtin

    data = load_builtin(args.data, **_parse_params(args.data_param))
    table = cluster_speedups(
        data,
        methods=args.methods or COMPARE_METHODS,
        hr_params=per_method.get("hr-svm"),
        progress=_note,
    )
    out["cluster"] = bench.records(table)
    warm = table.attrs["warm_up_s"]
    out["cluster_warm_up_s"] = warm
    if not args.json:
        print(f"on this machine (serial) and on the dask cluster at {args.dask}, {args.data}:")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        print(
            "warm-up before timing (not in the figures): "
            + ", ".join(f"{where} {sec:.1f} s" for where, sec in warm.items())
        )


def _cmd_bench(args: argparse.Namespace) -> int:
    from hierlab.benchmarks import bench

    out: dict[str, Any] = {}
    budget = None if args.budget <= 0 else float(args.budget)
    per_method = _bench_params(args)  # --param: for the table and the scale curves
    if args.plan:
        _bench_plan(args, out)
    elif args.dask is not None:
        _bench_cluster(args, per_method, out)
    elif not args.no_table:
        _bench_table(args, per_method, budget, out)
    if args.scale is not None:
        _bench_scale(args, per_method, out)
    if args.json:
        print(json.dumps(bench.json_safe(out), indent=1, allow_nan=False))
    return 0


def _cmd_induce(args: argparse.Namespace) -> int:
    from hierlab.evaluation.metrics import tree_similarity_mse
    from hierlab.io import write_taxonomy
    from hierlab.methods.mftree.induce import induce_taxonomy

    data = _load_data_whole(args)
    train = data[0] if isinstance(data, tuple) else data
    if train.is_multilabel:
        raise HierlabError("taxonomy induction needs one label per row")
    params = _parse_params(args.param)
    t0 = time.perf_counter()
    tax = induce_taxonomy(train.X, train.y, method=args.method, **params)
    elapsed = time.perf_counter() - t0
    print(
        f"induced a {tax.n_nodes}-node tree of depth {tax.max_depth} over "
        f"{len(tax.leaves)} classes in {elapsed:.2f} s",
        file=sys.stderr,
    )
    given = train.taxonomy
    if given.is_tree and set(map(str, tax.names[tax.leaves])) <= set(map(str, given.names)):
        # the given leaves with training rows: the others are not in the induced tree
        names = set(map(str, tax.names))
        classes = [str(given.names[i]) for i in given.leaves if str(given.names[i]) in names]
        mse = tree_similarity_mse(given, tax, classes)
        print(f"tree-similarity MSE to the given taxonomy: {mse:.5f}", file=sys.stderr)
    if args.out:
        write_taxonomy(tax, args.out)
        print(f"taxonomy written to {args.out}", file=sys.stderr)
    else:
        for parent, child in tax.to_edges():
            print(parent, child)
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from hierlab.lab.reproduce import available

    mods = available()
    if args.table is None or args.table not in mods:
        stream = sys.stdout if args.table is None else sys.stderr
        if args.table is not None:
            print(f"unknown reproduction {args.table!r}", file=stream)
        print("available reproductions:", file=stream)
        for name, m in mods.items():
            print(f"  {name:<12} {getattr(m, 'HELP', '')}", file=stream)
        return 0 if args.table is None else 2
    mod = mods[args.table]
    sub = argparse.ArgumentParser(prog=f"hierlab reproduce {args.table}", description=mod.HELP)
    mod.add_arguments(sub)
    return int(mod.run(sub.parse_args(args.sub_args)))


if TYPE_CHECKING:  # the ``add_subparsers`` action (argparse keeps its class private)
    _Sub = argparse._SubParsersAction[Any]


def _add_list_parsers(sub: _Sub) -> None:
    """``hierlab datasets`` and ``hierlab methods [NAME]``."""
    s = sub.add_parser("datasets", help="list the built-in data sets")
    s.set_defaults(func=_cmd_datasets)
    s = sub.add_parser("methods", help="list the registered methods and their parameters")
    s.add_argument("name", nargs="?", help="one method: its parameters, ranges and help")
    s.set_defaults(func=_cmd_methods)


_DATA_HELP = "a built-in data set name or a data file"

#: Help of DATA, ``--taxonomy`` and ``--test`` of each sub-command that reads a data set.
_FIT_DATA = (
    _DATA_HELP + " (CSV, svmlight, ARFF)",
    "taxonomy file (edge list, a/b/c paths, JSON)",
    "a separate test file (else a random split)",
)
_DATA_ARGUMENTS = {
    "fit": _FIT_DATA,
    "tune": _FIT_DATA,
    "compare": (_DATA_HELP, "taxonomy file", "a separate test file (then split='given')"),
    "induce": (_DATA_HELP, "the given taxonomy, to compare with (MSE)", argparse.SUPPRESS),
}


def _data_parser(sub: _Sub, name: str, summary: str) -> argparse.ArgumentParser:
    """Sub-command ``name`` with the data arguments: DATA, ``--taxonomy`` and ``--test``."""
    data, taxonomy, test = _DATA_ARGUMENTS[name]
    s = sub.add_parser(name, help=summary)
    s.add_argument("data", help=data)
    s.add_argument("--taxonomy", help=taxonomy)
    s.add_argument("--test", help=test)
    return s


def _add_fit_parser(sub: _Sub) -> None:
    """``hierlab fit DATA --method NAME --param NAME=VALUE ...``."""
    s = _data_parser(sub, "fit", "train a method and evaluate it on a test split")
    s.add_argument("--test-size", type=_fraction, default=0.3)
    s.add_argument("--seed", type=_seed, default=0)
    s.add_argument("--method", default="topdown")
    s.add_argument(
        "--preset",
        choices=("paper", "fast"),
        default=None,
        help="start from the seed's own algorithm and settings (paper) or the defaults (fast); "
        "--param values override it",
    )
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    s.add_argument("--out", help="save the fitted model here")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument(
        "--threshold",
        type=_probability,
        default=None,
        metavar="T",
        help="stop above the leaves: predict the deepest node of the path with P >= T",
    )
    s.add_argument(
        "--calibrate-cv",
        type=_int_at_least(2),
        default=None,
        metavar="K",
        help="cross-fit the probability calibration on K folds (default: in-sample)",
    )
    s.add_argument(
        "--proba", action="store_true", help="also report AU(PRC), Brier and ECE of node_proba"
    )
    s.add_argument(
        "--chunk-rows",
        type=int,
        default=None,
        metavar="N",
        help="train on a file larger than memory: partial_fit over blocks of N rows (hieron, "
        "hsvm, nhsvm ...); --test is read the same way",
    )
    s.add_argument(
        "--passes",
        type=int,
        default=None,
        help="with --chunk-rows: passes over the file (default: the method's epochs)",
    )
    s.set_defaults(func=_cmd_fit)


def _add_tune_parser(sub: _Sub) -> None:
    """``hierlab tune DATA --method NAME [--Cs ...]``: choose C, then test the refitted model."""
    s = _data_parser(sub, "tune", "choose C by a warm-started path on a validation split")
    s.add_argument("--test-size", type=_fraction, default=0.3)
    s.add_argument("--seed", type=_seed, default=0)
    s.add_argument("--method", default="flatmult")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    s.add_argument("--Cs", type=float, nargs="+", help="the grid (default 1e-2 ... 1e2)")
    s.add_argument("--validation", type=_fraction, default=0.2, help="held-out fraction")
    s.add_argument("--scoring", default="hierarchical_f1")
    s.add_argument(
        "--patience",
        type=_int_at_least(0),
        default=2,
        help="end the path after this many C below the best since the last improvement (0: all)",
    )
    s.add_argument("--max-time", type=_seconds, default=None, help="seconds the path may take")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_tune)


def _add_evaluate_parser(sub: _Sub) -> None:
    """``hierlab evaluate PREDICTIONS.csv --taxonomy FILE``."""
    s = sub.add_parser("evaluate", help="hierarchical metrics of a predictions CSV")
    s.add_argument("predictions", help="CSV with columns y_true and y_pred")
    s.add_argument("--taxonomy", required=True)
    s.add_argument("--true-column", default="y_true")
    s.add_argument("--pred-column", default="y_pred")
    s.add_argument("--sep", default=None, help="separator of multi-label sets, e.g. ';'")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_cmd_evaluate)


def _add_compare_parser(sub: _Sub) -> None:
    """``hierlab compare DATA --methods A B ...`` on identical splits."""
    s = _data_parser(sub, "compare", "compare methods on identical splits")
    s.add_argument("--methods", nargs="+", default=["topdown"], metavar="NAME")
    s.add_argument("--param", action="append", default=[], metavar="METHOD:NAME=VALUE")
    s.add_argument("--split", choices=["given", "repeated", "kfold"], default=None)
    s.add_argument("--n-splits", type=_int_at_least(1), default=5)
    s.add_argument("--test-size", type=_fraction, default=0.3)
    s.add_argument("--seed", type=_seed, default=0)
    s.add_argument("--n-jobs", type=int, default=None)
    s.add_argument("--baseline", help="method the others are tested against (default: first)")
    s.add_argument("--metric", default="accuracy", help="metric of the paired t-test")
    s.add_argument("--csv", help="write the tidy results table here")
    s.add_argument("--json", help="write summary, results and tests as JSON here")
    s.set_defaults(func=_cmd_compare)


def _add_bench_parser(sub: _Sub) -> None:
    """``hierlab bench``: the method table options, then the scale-curve options."""
    s = sub.add_parser("bench", help="time every method beside LinearSVC; scale curves")
    s.add_argument("--data", default="20newsgroups", help="built-in data set of the table")
    s.add_argument(
        "--data-param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="loader argument of the built-in data set, e.g. n_samples=400",
    )
    s.add_argument("--methods", nargs="*", default=None, help="default: every method")
    s.add_argument("--param", action="append", default=[], metavar="METHOD:NAME=VALUE")
    s.add_argument(
        "--defaults",
        action="store_true",
        help="the registry defaults (what runs anyway wherever --param sets no value)",
    )
    s.add_argument(
        "--budget",
        type=float,
        default=120.0,
        help="soft seconds per method (max_time / Timeout); 0: none",
    )
    s.add_argument(
        "--hard-timeout",
        type=float,
        default=None,
        help="kill a method after this many seconds (default 2 * budget + 60)",
    )
    s.add_argument("--ref-each", action="store_true", help="refit LinearSVC before every method")
    s.add_argument("--blas-threads", type=int, default=1, help="BLAS threads; 0: unlimited")
    s.add_argument("--no-hiclass", action="store_true", help="leave out the HiClass row")
    s.add_argument("--no-table", action="store_true", help="skip the method table")
    s.add_argument(
        "--plan",
        action="store_true",
        help="size a cluster on paper: fit time and memory per worker at LSHTC- and DMOZ-like "
        "sizes from the scale curves' slopes (--plan-from JSON of bench --scale --json)",
    )
    s.add_argument("--plan-from", default=None, help="a bench --scale --json file to fit")
    _add_scale_arguments(s)
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=_cmd_bench)


def _add_scale_arguments(s: argparse.ArgumentParser) -> None:
    """The scale-curve options of ``hierlab bench`` (``--scale`` to ``--figure``)."""
    s.add_argument(
        "--scale",
        nargs="*",
        default=None,
        metavar="METHOD",
        help="scale curves for these methods on make_hierarchical_text (default topdown)",
    )
    s.add_argument("--docs", nargs="+", default=[10_000, 100_000, 1_000_000])
    s.add_argument("--classes", nargs="+", default=[100, 1_000, 10_000])
    s.add_argument("--classes-for-docs", type=int, default=100)
    s.add_argument("--docs-for-classes", type=int, default=50_000)
    s.add_argument("--features", type=int, default=20_000, help="vocabulary of the curves")
    s.add_argument(
        "--scale-budget",
        type=float,
        default=300.0,
        help="seconds; a slower fit ends that method's curve; 0: none",
    )
    s.add_argument("--figure", default="scale_curves.html", help="plotly HTML of the curves")


def _add_induce_parser(sub: _Sub) -> None:
    """``hierlab induce DATA --method mftree|cmtl|mftree-reference``."""
    s = _data_parser(sub, "induce", "induce a taxonomy from data (MF-Tree, CMTL)")
    s.add_argument("--method", default="mftree", choices=["mftree", "cmtl", "mftree-reference"])
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    s.add_argument("--out", help="write the induced taxonomy here (edge list, .json, .paths)")
    s.set_defaults(func=_cmd_induce)


def _add_reproduce_parser(sub: _Sub) -> None:
    """``hierlab reproduce [TABLE] [its own options]``."""
    s = sub.add_parser("reproduce", help="reproduce a table of a seed paper")
    s.add_argument("table", nargs="?", default=None, help="which reproduction (none: list)")
    s.add_argument("sub_args", nargs=argparse.REMAINDER, help="its own options")
    s.set_defaults(func=_cmd_reproduce)


#: The sub-commands that fit, compare, tune or benchmark: they take ``--dask ADDRESS``.
_CLUSTER_COMMANDS = ("fit", "tune", "compare", "bench")


def _add_dask_argument(s: argparse.ArgumentParser) -> None:
    """``--dask tcp://host:port``: run the command's parallel parts on that dask cluster."""
    s.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="a dask.distributed scheduler (tcp://host:port): the comparisons, tuning paths "
        "and parallel parts of a fit run on its workers, the data sent to each once",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hierlab`` command."""
    p = _Parser(prog="hierlab", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for add in (
        _add_list_parsers,
        _add_fit_parser,
        _add_tune_parser,
        _add_evaluate_parser,
        _add_compare_parser,
        _add_bench_parser,
        _add_induce_parser,
        _add_reproduce_parser,
    ):
        add(sub)
    for name, s in sub.choices.items():
        if name in _CLUSTER_COMMANDS:
            _add_dask_argument(s)
    return p


def _cluster(args: argparse.Namespace) -> AbstractContextManager[Any]:
    """The dask cluster of ``--dask`` for the command (this machine without it)."""
    from hierlab.core.cluster import job_cluster

    address = getattr(args, "dask", None)
    if address is not None:
        print(f"hierlab: running on the dask cluster at {address}", file=sys.stderr)
    return job_cluster(address)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hierlab`` console script.

    Every error ends as one line on stderr, ``hierlab: error: ...`` naming the argument or the
    file, and a non-zero exit status (:func:`_run`); never a traceback (``HIERLAB_DEBUG=1``
    shows one for an unexpected error).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a one-line argument error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Run the sub-command, every error mapped to one line and an exit status.

    2: bad input (a hierlab error, an argument scikit-learn refuses, a file that cannot be
    read or written); 1: out of memory, or an unexpected error; 130: interrupted.
    """
    try:
        with _cluster(args):
            return int(args.func(args))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except HierlabError as exc:
        return _fail(str(exc), 2)
    except OSError as exc:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return _fail(f"{where}{exc.strerror or exc}", 2)
    except MemoryError:
        return _fail("out of memory: use a smaller data set or a sparse format", 1)
    except (ValueError, TypeError) as exc:  # scikit-learn's InvalidParameterError included
        if os.environ.get("HIERLAB_DEBUG"):
            raise
        return _fail(str(exc) or type(exc).__name__, 2)
    except Exception as exc:
        if os.environ.get("HIERLAB_DEBUG"):
            raise
        return _fail(f"unexpected {type(exc).__name__}: {exc} (HIERLAB_DEBUG=1 shows where)", 1)


def _fail(message: str, status: int) -> int:
    """Print ``hierlab: error: message`` on one line of stderr; return ``status``."""
    print(f"hierlab: error: {' '.join(message.split())}", file=sys.stderr)
    return status


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (``hierlab fit: error: argument --seed: ...``)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


def _fraction(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a share of the rows)."""
    v = _number(text)
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1), got {text!r}")
    return v


def _probability(text: str) -> float:
    """An argparse type: a number in [0, 1]."""
    v = _number(text)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}")
    return v


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0."""
    v = _number(text)
    if not 0.0 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds >= 0, got {text!r}")
    return v


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if v != v:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}")
    return v


def _int_at_least(low: int, high: int | None = None) -> Any:
    """An argparse type: an int in ``[low, high]``."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if v < low or (high is not None and v > high):
            upper = f" and <= {high}" if high is not None else ""
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}{upper}, got {v}")
        return v

    parse.__name__ = "int"
    return parse


#: a seed: what scikit-learn's random_state takes
_seed = _int_at_least(0, 2**32 - 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
