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

from hierlab.exceptions import HierlabError
from hierlab.solvers.base import SolverState

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
    from hierlab.io import load_dataset
    from hierlab.taxonomy import Taxonomy

    tax = Taxonomy.read(args.taxonomy) if args.taxonomy else None
    data = load_dataset(args.data, taxonomy=tax)
    if args.test:
        return data, load_dataset(args.test, taxonomy=data.taxonomy)
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
    from hierlab.experiments.registry import get_method, list_methods

    for name in list_methods():
        spec = get_method(name)
        params = ", ".join(f"{p.name}={p.default!r}" for p in spec.params)
        print(f"{name:<16} [{spec.seed}] {spec.summary}")
        if params:
            print(f"{'':<16} params: {params}")
    return 0


def _cmd_fit(args: argparse.Namespace) -> int:
    from hierlab.experiments.registry import get_method, make_estimator
    from hierlab.metrics import evaluate

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

    from hierlab.metrics import evaluate
    from hierlab.taxonomy import Taxonomy

    tax = Taxonomy.read(args.taxonomy)
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


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from hierlab.experiments.reproduce import available

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
