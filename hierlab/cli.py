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
from typing import Any, TextIO

import numpy as np

from hierlab.core.exceptions import HierlabError
from hierlab.core.solver import SolverState

__all__ = ["ProgressBar", "main"]


class ProgressBar:
    """A text progress bar callback: iteration, objective, gap, elapsed (redrawn <= 10 times/s).

    Parameters
    ----------
    total : int, optional
        Expected number of iterations (``max_iter``), for the bar's length.
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
            frac = min(1.0, state.iteration / self.total)
            bar = "#" * int(30 * frac) + "-" * (30 - int(30 * frac))
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

    for name in list_methods():
        spec = get_method(name)
        params = ", ".join(f"{p.name}={p.default!r}" for p in spec.params)
        print(f"{name:<16} [{spec.seed}] {spec.summary}")
        if params:
            print(f"{'':<16} params: {params}")
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    from hierlab.core.registry import get_method, make_estimator
    from hierlab.evaluation.metrics import evaluate

    train, test = _load_data(args)
    params = _parse_params(args.param)
    spec = get_method(args.method)
    total = params.get("max_iter", spec.defaults().get("max_iter"))
    est = make_estimator(args.method, taxonomy=train.taxonomy, **params)
    bar = ProgressBar(total=total if isinstance(total, int) else None)
    t0 = time.perf_counter()
    est.fit(train.X, train.y, callbacks=[bar])
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    y_pred = est.predict(test.X)
    pred_time = time.perf_counter() - t0
    report: dict[str, Any] = {
        "method": args.method,
        "n_train": train.n_samples,
        "n_test": test.n_samples,
        "fit_time_s": fit_time,
        "predict_time_s": pred_time,
        "n_iter": int(getattr(est, "n_iter_", 0)),
        "converged": bool(getattr(est, "converged_", True)),
    }
    report.update(evaluate(test.y, y_pred, train.taxonomy))
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


def _cmd_compare(args: argparse.Namespace) -> int:
    from hierlab.evaluation.compare import compare

    data = _load_data_whole(args)
    per_method: dict[str, dict[str, Any]] = {m: {} for m in args.methods}
    for item in args.param:
        if ":" not in item.split("=", 1)[0]:
            raise HierlabError(f"compare --param takes method:name=value, got {item!r}")
        method, rest = item.split(":", 1)
        if method not in per_method:
            raise HierlabError(f"--param {item!r} names a method not in --methods")
        per_method[method].update(_parse_params([rest]))
    methods = [(m, per_method[m]) for m in args.methods]

    def progress(done: int, total: int, method: str, split: int) -> None:
        bar = "#" * int(30 * done / total) + "-" * (30 - int(30 * done / total))
        sys.stderr.write(f"\r[{bar}] {done}/{total}  {method} split {split}      ")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    cmp = compare(
        data,
        methods,
        split=args.split,
        n_splits=args.n_splits,
        test_size=args.test_size,
        random_state=args.seed,
        n_jobs=args.n_jobs,
        progress=progress,
    )
    table = cmp.table()
    print(table.to_string())
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


def _cmd_bench(args: argparse.Namespace) -> int:
    from hierlab.benchmarks import bench

    def note(msg: str) -> None:
        print(f"  ... {msg}", file=sys.stderr, flush=True)

    out: dict[str, Any] = {}
    budget = None if args.budget <= 0 else float(args.budget)
    per_method: dict[str, dict[str, Any]] = {}  # --param: for the table and the scale curves
    for item in args.param:
        method, sep, rest = item.partition(":")
        if not sep:
            raise HierlabError(f"bench --param takes method:name=value, got {item!r}")
        per_method.setdefault(method.lower(), {}).update(_parse_params([rest]))
    if not args.no_table:
        from hierlab.datasets.catalog import load_builtin

        train, test = load_builtin(args.data, **_parse_params(args.data_param))
        table = bench.bench_table(
            train,
            test,
            methods=args.methods or None,
            params=per_method,
            hiclass=not args.no_hiclass,
            progress=note,
            budget=budget,
            hard_timeout=args.hard_timeout,
            use_bench_params=not args.defaults,
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
            cols = [
                "method",
                "seed",
                "fit_time",
                "fit_ratio",
                "cpu_ratio",
                "predict_time",
                "accuracy",
                "tree_error",
                "n_iter",
                "budget_hit",
            ]
            print(
                f"hierlab bench on {args.data} ({train.n_samples} train / {test.n_samples} "
                f"test, {train.n_features} features); ratios to LinearSVC's fit time"
                + (" refitted before each method" if args.ref_each else "")
            )
            shown = table[[c for c in cols if c in table.columns]]
            print(shown.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-"))
            for _, r in table.iterrows():
                if isinstance(r.get("error"), str):
                    print(f"  {r['method']}: {r['error']}")
                elif r.get("params") not in (None, "{}") and isinstance(r.get("params"), str):
                    print(f"  {r['method']} params {r['params']}")
            if not bench.hiclass_available() and not args.no_hiclass:
                print("  (hiclass not installed: pip install 'hierlab[hiclass]' adds its row)")
    if args.scale is not None:
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
            progress=note,
            budget=None if args.scale_budget <= 0 else float(args.scale_budget),
            blas_threads=args.blas_threads or None,
        )
        out["scale"] = {"table": bench.records(df), "slopes": slopes}
        if args.figure:
            bench.scale_figure(df, slopes).write_html(args.figure, include_plotlyjs="cdn")
            out["scale"]["figure"] = args.figure
            note(f"figure written to {args.figure}")
        if not args.json:
            print("\nscale curves on make_hierarchical_text (fit time, s):")
            print(df.to_string(index=False, float_format=lambda v: f"{v:.4g}", na_rep="-"))
            for m, s in slopes.items():
                print(f"{m}: log-log slope vs nnz {s['nnz']:.3f}, vs classes {s['classes']:.3f}")
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
        mse = tree_similarity_mse(given, tax)
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hierlab`` command."""
    p = argparse.ArgumentParser(prog="hierlab", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("datasets", help="list the built-in data sets")
    s.set_defaults(func=_cmd_datasets)
    s = sub.add_parser("methods", help="list the registered methods and their parameters")
    s.set_defaults(func=_cmd_methods)

    s = sub.add_parser("fit", help="train a method and evaluate it on a test split")
    s.add_argument("data", help="a built-in data set name or a data file (CSV, svmlight, ARFF)")
    s.add_argument("--taxonomy", help="taxonomy file (edge list, a/b/c paths, JSON)")
    s.add_argument("--test", help="a separate test file (else a random split)")
    s.add_argument("--test-size", type=float, default=0.3)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--method", default="topdown")
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    s.add_argument("--out", help="save the fitted model here")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_fit)

    s = sub.add_parser("evaluate", help="hierarchical metrics of a predictions CSV")
    s.add_argument("predictions", help="CSV with columns y_true and y_pred")
    s.add_argument("--taxonomy", required=True)
    s.add_argument("--true-column", default="y_true")
    s.add_argument("--pred-column", default="y_pred")
    s.add_argument("--sep", default=None, help="separator of multi-label sets, e.g. ';'")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=_cmd_evaluate)

    s = sub.add_parser("compare", help="compare methods on identical splits")
    s.add_argument("data", help="a built-in data set name or a data file")
    s.add_argument("--taxonomy", help="taxonomy file")
    s.add_argument("--test", help="a separate test file (then split='given')")
    s.add_argument("--methods", nargs="+", default=["topdown"], metavar="NAME")
    s.add_argument("--param", action="append", default=[], metavar="METHOD:NAME=VALUE")
    s.add_argument("--split", choices=["given", "repeated", "kfold"], default=None)
    s.add_argument("--n-splits", type=int, default=5)
    s.add_argument("--test-size", type=float, default=0.3)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--n-jobs", type=int, default=None)
    s.add_argument("--baseline", help="method the others are tested against (default: first)")
    s.add_argument("--metric", default="accuracy", help="metric of the paired t-test")
    s.add_argument("--csv", help="write the tidy results table here")
    s.add_argument("--json", help="write summary, results and tests as JSON here")
    s.set_defaults(func=_cmd_compare)

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
        help="registry defaults only (ignore the 20NG settings of bench.BENCH_PARAMS)",
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
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=_cmd_bench)

    s = sub.add_parser("induce", help="induce a taxonomy from data (MF-Tree, CMTL)")
    s.add_argument("data", help="a built-in data set name or a data file")
    s.add_argument("--taxonomy", help="the given taxonomy, to compare with (MSE)")
    s.add_argument("--test", help=argparse.SUPPRESS)
    s.add_argument("--method", default="mftree", choices=["mftree", "cmtl", "mftree-reference"])
    s.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    s.add_argument("--out", help="write the induced taxonomy here (edge list, .json, .paths)")
    s.set_defaults(func=_cmd_induce)

    s = sub.add_parser("reproduce", help="reproduce a table of a seed paper")
    s.add_argument("table", nargs="?", default=None, help="which reproduction (none: list)")
    s.add_argument("sub_args", nargs=argparse.REMAINDER, help="its own options")
    s.set_defaults(func=_cmd_reproduce)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hierlab`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except HierlabError as exc:
        print(f"hierlab: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"hierlab: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
