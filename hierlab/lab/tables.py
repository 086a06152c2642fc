"""Run a paper-table reproduction in-process: for the app's "Paper tables" page and notebooks.

Every ``hierlab reproduce <name>`` module (:func:`hierlab.lab.reproduce.available`) has a
command-line entry point, ``run(args)``, that prints its tables. :func:`run_reproduction` runs it
in-process with keyword overrides of the command-line options and returns a
:class:`ReproResult`: our numbers beside the published ones as DataFrames, the figure, the
printed text, and ``progress(fraction, text)`` reports along the way.

Reproductions whose module exposes building blocks get a native adapter here (per-seed progress,
tables as DataFrames, the figure as a plotly object):

* ``hieron`` (seed 002): ``run_seed`` per seed, ``tables`` (Tables 1-2 beside the paper's),
  ``figure`` (Fig. 2), ``ordering_checks``;
* ``nhsvm`` (seed 003): ``run_kind`` per synthetic set, ``published`` (Table 3).

Any other reproduction runs through its ``run(args)`` with its printed output captured (the
tables then come as text; progress is reported at its start and end). A reproduction module can
opt into the native path without changes here by defining ``run_tables(args, progress) ->
dict`` with keys ``tables`` (dict of DataFrames), ``figure`` (or None) and optionally ``text`` and
``checks``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from hierlab.core.exceptions import ParameterError
from hierlab.lab.export import Progress

__all__ = [
    "ReproResult",
    "classroom_options",
    "default_arguments",
    "reproduction_options",
    "reproductions",
    "run_reproduction",
]


@dataclass
class ReproResult:
    """A reproduction run in-process.

    Attributes
    ----------
    name : str
        The reproduction (``"hieron"``).
    tables : dict of str to DataFrame
        Our numbers beside the published ones, by table title (empty when the module only
        prints).
    figure : plotly Figure or None
    text : str
        What the reproduction printed (captured).
    checks : dict of str to bool
        The qualitative claims checked (where the module provides them).
    returncode : int
        ``run(args)``'s return value (0: every check passed), or 0 for a native adapter whose
        checks all pass.
    seconds : float
    args : argparse.Namespace
        The options used.
    """

    name: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figure: Any = None
    text: str = ""
    checks: dict[str, bool] = field(default_factory=dict)
    returncode: int = 0
    seconds: float = 0.0
    args: argparse.Namespace | None = None


def reproductions() -> dict[str, str]:
    """``name -> one-line help`` of every available reproduction."""
    from hierlab.lab.reproduce import available

    return {name: str(getattr(mod, "HELP", "")) for name, mod in available().items()}


def classroom_options(name: str) -> dict[str, Any] | None:
    """The options of a classroom-sized run of reproduction ``name`` (seconds, not minutes), as
    its module declares them (``CLASSROOM``); None where it has none."""
    found = getattr(_module(name), "CLASSROOM", None)
    return dict(found) if found is not None else None


def _module(name: str) -> ModuleType:
    from hierlab.lab.reproduce import available

    mods = available()
    if name not in mods:
        raise ParameterError(f"unknown reproduction {name!r}; available: {', '.join(mods)}")
    return mods[name]


def _parser(mod: ModuleType) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"hierlab reproduce {mod.NAME}", add_help=False)
    add = getattr(mod, "add_arguments", None)
    if callable(add):
        add(parser)
    return parser


def reproduction_options(name: str) -> list[dict[str, Any]]:
    """The command-line options of reproduction ``name``, for building widgets.

    Returns
    -------
    list of dict
        ``{"name", "default", "type", "help", "choices"}`` per option (``name`` with
        underscores, as a keyword of :func:`run_reproduction`; ``choices`` a tuple or None).
    """
    out = []
    for a in _parser(_module(name))._actions:
        if not a.option_strings or a.dest == "help":
            continue
        default = a.default
        kind = type(default).__name__ if default is not None else "str"
        if isinstance(default, list | tuple):
            kind = "list"
        choices = tuple(a.choices) if a.choices is not None else None
        out.append(
            {
                "name": a.dest,
                "default": default,
                "type": kind,
                "help": a.help or "",
                "choices": choices,
            }
        )
    return out


def default_arguments(name: str, **overrides: Any) -> argparse.Namespace:
    """The options of reproduction ``name``: its command-line defaults with ``overrides``.

    Raises
    ------
    ParameterError
        An override that is not one of the reproduction's options.
    """
    args = _parser(_module(name)).parse_args([])
    for key, value in overrides.items():
        k = key.replace("-", "_")
        if not hasattr(args, k):
            known = ", ".join(sorted(vars(args)))
            raise ParameterError(f"reproduction {name!r} has no option {key!r}; options: {known}")
        setattr(args, k, value)
    return args


# ------------------------------------------------------------------------------ adapters
def _hieron(mod: ModuleType, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    """Seed 002: Tables 1-2 and Fig. 2, one progress step per seed."""
    from threadpoolctl import threadpool_limits

    if args.seeds < 1 or args.epochs < 1:
        raise ParameterError("seeds and epochs must be >= 1")
    pub = mod.published()
    settings = {f"sigma = {args.noise_std:g}": float(args.noise_std)}
    if args.literal and args.noise_std != 0.4:
        settings["sigma = 0.4 (literal 'variance 0.16')"] = 0.4
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    total = len(seeds) * len(settings)
    done = 0
    results: dict[str, list[dict[str, Any]]] = {}
    tables: dict[str, pd.DataFrame] = {}
    checks: dict[str, bool] = {}
    with threadpool_limits(limits=1):
        for k, (label, sigma) in enumerate(settings.items()):
            runs = []
            for s in seeds:
                progress(done / total, f"{label}: seed {s}")
                runs.append(mod.run_seed(s, sigma, args.epochs, tuple(args.per_label)))
                done += 1
            results[label] = runs
            t1, t2 = mod.tables(runs, pub)
            tables[f"Table 1 (online Hieron), {label}"] = t1.reset_index()
            tables[f"Table 2 (batch Hieron), {label}"] = t2.reset_index()
            if k == 0:
                checks = dict(mod.ordering_checks(runs))
    if hasattr(mod, "side_by_side"):  # both readings of the noise, the default marked
        both = {mod.reading_label(sigma): results[label] for label, sigma in settings.items()}
        tables["Noise readings side by side"] = mod.side_by_side(both, pub).reset_index()
    return {
        "tables": tables,
        "figure": mod.figure(results),
        "checks": checks,
        "text": getattr(mod, "NOTES", ""),
    }


def _nhsvm(mod: ModuleType, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    """Seed 003: Table 3, one progress step per synthetic set."""
    import plotly.graph_objects as go

    lams = [float(v) for v in str(args.lambdas).split(",") if v.strip()]
    if args.quick:
        lams = mod.quick_lambdas(lams)
    kinds = [k.strip() for k in str(args.kinds).split(",") if k.strip()]
    results: dict[str, dict[str, Any]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, kind in enumerate(kinds):
            progress(i / len(kinds), f"{kind} synthetic set")
            results[kind] = mod.run_kind(kind, args, lams)
    pub = mod.published()
    rows = []
    fig = go.Figure()
    for kind in kinds:
        acc = results[kind]["acc"]
        for m in results[kind]["methods"]:
            a = np.asarray(acc[m], dtype=float)
            p = pub.get(kind, {}).get(m)
            rows.append(
                {
                    "data set": kind,
                    "method": m,
                    "accuracy % (ours)": float(a.mean()),
                    "sd (ours)": float(a.std(ddof=1)) if len(a) > 1 else 0.0,
                    "accuracy % (paper)": p[0] if p else np.nan,
                    "sd (paper)": p[1] if p else np.nan,
                    "chosen": str(results[kind]["chosen"][m]),
                }
            )
    table = pd.DataFrame(rows)
    for who, col, sd in (
        ("ours", "accuracy % (ours)", "sd (ours)"),
        ("paper", "accuracy % (paper)", "sd (paper)"),
    ):
        fig.add_trace(
            go.Bar(
                x=[table["data set"], table["method"]],
                y=table[col],
                error_y={"type": "data", "array": table[sd].fillna(0).to_numpy()},
                name=who,
            )
        )
    fig.update_layout(
        barmode="group",
        title="Seed 003, Table 3: test accuracy (%) on the synthetic sets, ours vs published",
        yaxis_title="accuracy %",
        template="plotly_white",
    )
    return {
        "tables": {"Table 3 (seed 003), ours beside the paper": table},
        "figure": fig,
        "text": mod.report(results, pub),
        "checks": {},
    }


_ADAPTERS: dict[str, Callable[[ModuleType, argparse.Namespace, Progress], dict[str, Any]]] = {
    "hieron": _hieron,
    "nhsvm": _nhsvm,
}


def run_reproduction(name: str, progress: Progress | None = None, **overrides: Any) -> ReproResult:
    """Run reproduction ``name`` in-process.

    Parameters
    ----------
    name : str
        A key of :func:`reproductions`.
    progress : callable, optional
        ``progress(fraction_done, text)``.
    **overrides
        Values of the reproduction's command-line options (``seeds=1``, ``per_label=(10, 5)``,
        ``quick=True``...); see :func:`reproduction_options`.

    Returns
    -------
    ReproResult
    """
    mod = _module(name)
    args = default_arguments(name, **overrides)
    report: Progress = progress if progress is not None else (lambda f, t: None)
    t0 = time.perf_counter()
    native = getattr(mod, "run_tables", None)
    adapter = _ADAPTERS.get(name)
    if callable(native) or adapter is not None:
        out = native(args, report) if callable(native) else adapter(mod, args, report)  # type: ignore[misc]
        checks = dict(out.get("checks", {}))
        res = ReproResult(
            name=name,
            tables=dict(out.get("tables", {})),
            figure=out.get("figure"),
            text=str(out.get("text", "")).strip(),
            checks=checks,
            returncode=0 if all(checks.values()) else 1,
            args=args,
        )
    else:
        if hasattr(args, "figure"):
            args.figure = ""  # do not write files from the app
        report(0.0, f"running hierlab reproduce {name}")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):  # the module only prints its tables
            code = mod.run(args)
        res = ReproResult(name=name, text=buf.getvalue(), returncode=int(code or 0), args=args)
    res.seconds = time.perf_counter() - t0
    report(1.0, "done")
    return res
