"""Shared pieces of the real-data reproductions (``hierlab reproduce hrsvm-ipc`` ...).

* :class:`Transcription`: published numbers copied from a seed's text *as printed* (the token
  strings), with the table they come from and an anchor in the seed file after which they
  appear in order (the tests check that against the seed text);
* :data:`SIZES` / :func:`ipc_data`: the ``--size`` option (``classroom``, ``medium``, ``full``)
  and the IPC titles restricted to it (a subtree of sections and/or a row subsample);
* :func:`verdicts`: a table of "does the published pattern hold" for the published columns and
  ours, each verdict computed from the numbers by a claim function;
* :func:`stderr_progress`: the progress lines ``hierlab reproduce`` writes to stderr while an
  entry runs (its table is printed only at the end).

This module's name starts with ``_``: :func:`hierlab.lab.reproduce.available` skips it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np
import pandas as pd

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = [
    "SIZES",
    "Claim",
    "IPCSize",
    "Transcription",
    "add_common_arguments",
    "app_result",
    "ipc_data",
    "print_result",
    "stderr_progress",
    "verdicts",
]


@dataclass(frozen=True)
class Transcription:
    """Published numbers as printed in a seed's text.

    Attributes
    ----------
    seed_file : str
        The seed text (``"001_eb8da712253374a1.txt"`` under ``../shared/seeds``).
    where : str
        Table and rows (``"Table 2, IPC rows (Section 5)"``).
    anchor : str
        A string of the seed text after which ``values``' tokens appear in their order.
    values : dict of str to str
        ``key -> token as printed`` (``"47.89"``, ``".069"``), in the order of the text.
    """

    seed_file: str
    where: str
    anchor: str
    values: dict[str, str] = field(default_factory=dict)

    def number(self, key: str) -> float:
        """The printed token of ``key`` as a float (``".069"`` -> 0.069, ``"22.6%"`` -> 22.6)."""
        return float(self.values[key].rstrip("%"))

    def numbers(self) -> dict[str, float]:
        """Every value as a float."""
        return {k: self.number(k) for k in self.values}


#: a claim: name -> function of a ``{key: number}`` mapping returning a bool
Claim = Callable[[Mapping[str, float]], bool]


def verdicts(
    claims: Mapping[str, Claim], columns: Mapping[str, Mapping[str, float]]
) -> pd.DataFrame:
    """Whether each claim holds on each column of numbers.

    Parameters
    ----------
    claims : dict of str to callable
        ``claim text -> f(numbers) -> bool``.
    columns : dict of str to dict
        ``column title -> {key: number}`` (``"paper (IPC)"``, ``"ours"``).

    Returns
    -------
    DataFrame
        One row per claim: ``pattern`` and one column of ``"holds"`` / ``"fails"`` per column.
    """
    rows = []
    for text, fn in claims.items():
        row: dict[str, Any] = {"pattern": text}
        for title, nums in columns.items():
            row[title] = "holds" if bool(fn(nums)) else "fails"
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ sizes
@dataclass(frozen=True)
class IPCSize:
    """How much of the IPC titles a ``--size`` uses.

    Attributes
    ----------
    sections : tuple of str or None
        IPC sections kept (the subtree of the taxonomy below them), None for all eight.
    max_train, max_test : int or None
        Row subsample of the 70/30 split (seeded), None for every row.
    """

    sections: tuple[str, ...] | None
    max_train: int | None
    max_test: int | None

    def describe(self) -> str:
        """One line: what part of IPC this is."""
        where = "all 8 sections" if self.sections is None else "sections " + "+".join(self.sections)
        tr = "all training rows" if self.max_train is None else f"<= {self.max_train:,} train"
        te = "all test rows" if self.max_test is None else f"<= {self.max_test:,} test"
        return f"IPC titles, {where}, {tr}, {te} (70/30 random split)"


#: ``--size`` of the IPC tables: classroom runs in seconds, full is the whole set
SIZES: dict[str, IPCSize] = {
    "tiny": IPCSize(("D",), 400, 300),
    "classroom": IPCSize(("D", "E"), 3000, 2000),
    "medium": IPCSize(None, 15000, 8000),
    "full": IPCSize(None, None, None),
}


def add_common_arguments(parser: argparse.ArgumentParser, default: str = "full") -> None:
    """``--size``, ``--seed`` and ``--json``, shared by the real-data reproductions."""
    parser.add_argument(
        "--size",
        choices=tuple(SIZES),
        default=default,
        help="classroom: seconds (a subtree, a row subsample); medium: minutes; full: every row "
        "(tiny is for tests)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and subsamples")
    parser.add_argument("--json", default="", help="also write every number to this JSON file")


def size_of(name: str) -> IPCSize:
    """The :class:`IPCSize` called ``name``; a ``ParameterError`` names the choices."""
    try:
        return SIZES[str(name)]
    except KeyError:
        raise ParameterError(f"size must be one of {', '.join(SIZES)}; got {name!r}") from None


def _subtree(taxonomy: Taxonomy, leaves: Sequence[str]) -> Taxonomy:
    """The taxonomy spanned by ``leaves`` and their ancestors (same names, same root)."""
    ids = taxonomy.index(list(leaves))
    paths = set()
    for i in np.unique(ids):
        names = [str(taxonomy.names[j]) for j in taxonomy.path(int(i))][1:]
        paths.add("/".join(names))
    return Taxonomy.from_paths(sorted(paths), root=str(taxonomy.names[taxonomy.root]))


def _restrict(
    data: HierDataset, keep: np.ndarray, taxonomy: Taxonomy, cap: int | None, seed: int
) -> HierDataset:
    rows = np.flatnonzero(keep)
    if cap is not None and len(rows) > cap:
        rows = np.sort(np.random.default_rng(seed).choice(rows, cap, replace=False))
    return HierDataset(
        data.X[rows],
        data.y[rows],
        taxonomy,
        data.feature_names,
        data.name,
        data.description,
        dict(data.meta),
    )


def ipc_data(size: str | IPCSize, seed: int = 0) -> tuple[HierDataset, HierDataset, str]:
    """IPC titles (:func:`hierlab.load_ipc`, split seed ``seed``) restricted to ``size``.

    Parameters
    ----------
    size : str or IPCSize
        A key of :data:`SIZES` or a custom size.
    seed : int, default 0
        Seed of the 70/30 split and of the row subsamples.

    Returns
    -------
    train, test : HierDataset
        CSR TF-IDF rows; with ``sections`` the taxonomy is the subtree below those sections
        (root -> section -> class -> subclass) and only their rows are kept.
    description : str
        What was used (for the printed notes).
    """
    from hierlab.datasets.ipc import load_ipc

    spec = size if isinstance(size, IPCSize) else size_of(size)
    train, test = load_ipc(random_state=seed)
    tax = train.taxonomy
    if spec.sections is None:
        sub = tax
        keep_tr = np.ones(train.n_samples, bool)
        keep_te = np.ones(test.n_samples, bool)
    else:
        wanted = set(spec.sections)
        leaves = [str(tax.names[i]) for i in tax.leaves]
        section = {name: str(tax.names[tax.path(int(i))[1]]) for name, i in zip(leaves, tax.leaves)}
        unknown = wanted - set(section.values())
        if unknown:
            raise ParameterError(f"unknown IPC sections {sorted(unknown)}")
        kept = [name for name in leaves if section[name] in wanted]
        sub = _subtree(tax, kept)
        keep_tr = np.isin(train.y, kept)
        keep_te = np.isin(test.y, kept)
    tr = _restrict(train, keep_tr, sub, spec.max_train, seed)
    te = _restrict(test, keep_te, sub, spec.max_test, seed + 1)
    desc = (
        f"{spec.describe()}: {tr.n_samples:,} train / {te.n_samples:,} test rows, "
        f"{len(sub.leaves)} leaves, {sub.n_nodes} nodes, {tr.X.shape[1]:,} TF-IDF features"
    )
    return tr, te, desc


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def non_increasing(values: Sequence[float]) -> bool:
    """``values[k+1] <= values[k]`` for every k."""
    a = np.asarray(values, dtype=float)
    return bool(np.all(np.diff(a) <= 0))


def non_decreasing(values: Sequence[float]) -> bool:
    """``values[k+1] >= values[k]`` for every k."""
    a = np.asarray(values, dtype=float)
    return bool(np.all(np.diff(a) >= 0))


def write_json(path: str, payload: dict[str, Any]) -> None:
    """Write ``payload`` as JSON to ``path`` (no-op for an empty path)."""
    if not path:
        return
    import json
    from pathlib import Path

    Path(path).write_text(json.dumps(payload, indent=1, default=float))


def app_result(
    numbers: Mapping[str, Any],
    claims: Mapping[str, Callable[[Mapping[str, Any]], Any]],
    lines: Sequence[str],
    tables: dict[str, pd.DataFrame],
) -> dict[str, Any]:
    """What the app's Paper tables page shows of a run (``run_tables`` of each module):
    its ``tables``, the ``checks`` (each published pattern's verdict, computed from our
    ``numbers``) and the ``text`` (``lines``: the data, where the published numbers are, what
    differs)."""
    checks = {claim: bool(fn(numbers)) for claim, fn in claims.items()}
    return {"tables": tables, "figure": None, "text": "\n".join(lines), "checks": checks}


def print_result(out: Mapping[str, Any]) -> int:
    """Print an :func:`app_result` for ``hierlab reproduce``: each table under its title, then
    the text; returns the exit code 0."""
    for title, table in out["tables"].items():
        print(title)
        print(table.to_string(index=False))
        print()
    print(out["text"])
    return 0


def stderr_progress(name: str, stream: TextIO | None = None) -> Callable[[float, str], None]:
    """A ``progress(fraction, text)`` callback that writes one line per step.

    Parameters
    ----------
    name : str
        The entry's name, at the start of every line.
    stream : text file, optional
        Where the lines go; ``sys.stderr`` (looked up at each call) when None, so the printed
        table on stdout stays clean.

    Returns
    -------
    callable
        ``progress(fraction, text)`` printing ``[name] 40% resample 3/50: TRANSFER (CPU 812 s,
        wall 830 s)``: the share of the entry's steps done, the step starting, and the CPU and
        wall-clock seconds of this process since the callback was made.
    """
    c0, t0 = time.process_time(), time.perf_counter()

    def progress(fraction: float, text: str) -> None:
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        out = sys.stderr if stream is None else stream
        print(
            f"[{name}] {100.0 * fraction:3.0f}% {text} (CPU {cpu:.0f} s, wall {wall:.0f} s)",
            file=out,
            flush=True,
        )

    return progress
