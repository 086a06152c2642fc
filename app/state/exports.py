"""Runs and comparisons of the session as a script and a notebook that reproduce their numbers.

One source: :mod:`hierlab.lab.export` (what the guided demos export too). This module fills a
:class:`~hierlab.lab.export.Session` from the app's records: the data set (a built-in with its
generator arguments, or the uploaded files, bundled in a zip beside the script), the split, the
runs' methods and parameters, a comparison's plan.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hierlab import DataError
from hierlab.lab.export import (
    ComparisonSpec,
    DataSource,
    RunSpec,
    Session,
    SplitSpec,
    export_notebook,
    export_script,
)

if TYPE_CHECKING:
    from app.state.compare import ComparisonEntry
    from app.state.data import DatasetEntry
    from app.state.runs import Run
    from app.state.session import AppState

__all__ = [
    "DATA_DIR",
    "Export",
    "comparison_session",
    "data_source",
    "export_files",
    "runs_session",
]

#: the folder of the bundled data files, beside the script
DATA_DIR = "data"


def data_source(entry: DatasetEntry) -> tuple[DataSource, dict[str, bytes]]:
    """Where the script reads the entry's data, and the files to bundle (relative path ->
    content): nothing for a built-in data set, the uploaded (or example) files otherwise."""
    if entry.source == "builtin":
        return DataSource.builtin(entry.name, dict(entry.params)), {}
    if "features" not in entry.files:
        raise DataError(f"{entry.name}: the session no longer holds its files; load it again")
    bundled = {f"{DATA_DIR}/{name}": content for name, content in entry.files.values()}
    path = f"{DATA_DIR}/{entry.files['features'][0]}"
    tax = entry.files.get("taxonomy")
    test = entry.files.get("test")
    src = DataSource.files(
        path,
        f"{DATA_DIR}/{tax[0]}" if tax else None,
        f"{DATA_DIR}/{test[0]}" if test else None,
    )
    return src, bundled


def _entry(state: AppState, key: str, what: str) -> DatasetEntry:
    entry = state.datasets.get(key)
    if entry is None:
        raise DataError(f"{what}: its data set is no longer in this session; load it again")
    return entry


def _induce(state: AppState, key: str, taxonomy_source: str) -> dict[str, Any]:
    if taxonomy_source != "induced":
        return {}
    found = state.induced.get(key)
    return dict(found["params"]) if found else {}


def runs_session(state: AppState, runs: Sequence[Run], title: str = "") -> Session:
    """The session that reproduces ``runs`` (all on one data set and one split).

    Raises
    ------
    DataError
        Runs on different data sets or splits, or a data set no longer in the session.
    """
    if not runs:
        raise DataError("choose at least one run to export")
    first = runs[0]
    for r in runs[1:]:
        if r.dataset_key != first.dataset_key or r.split != first.split:
            raise DataError(
                f"{r.label} and {first.label} were trained on different data or splits: "
                "export them separately"
            )
    entry = _entry(state, first.dataset_key, first.label)
    src, _ = data_source(entry)
    specs = [
        RunSpec(
            method=r.method,
            params=dict(r.params),
            taxonomy=r.taxonomy_source,
            induce=_induce(state, r.dataset_key, r.taxonomy_source),
            label=r.label,
        )
        for r in runs
    ]
    return Session(
        data=src,
        split=SplitSpec.from_dict(first.split),
        runs=specs,
        title=title or ("hierlab: " + ", ".join(r.label for r in runs)),
    )


def comparison_session(state: AppState, comp: ComparisonEntry) -> Session:
    """The session that reproduces a comparison (its plan, configurations and taxonomy)."""
    entry = _entry(state, comp.dataset_key, f"Comparison #{comp.id}")
    src, _ = data_source(entry)
    plan = comp.plan
    spec = ComparisonSpec(
        configs=[
            {"label": c["label"], "method": c["method"], "params": dict(c.get("params", {}))}
            for c in comp.configs
        ],
        mode="own" if plan.get("mode") == "own" else "random",
        n_splits=int(plan.get("n_splits", 1)),
        test_size=float(plan.get("test_size", 0.3)),
        seed=int(plan.get("seed", 0)),
        baseline=comp.baseline,
        taxonomy=comp.taxonomy_source,
        induce=_induce(state, comp.dataset_key, comp.taxonomy_source),
    )
    return Session(
        data=src,
        split=SplitSpec.from_dict(comp.split or {"mode": "own"}),
        comparison=spec,
        title=f"hierlab: comparison #{comp.id} on {comp.dataset_name}",
        figures=False,
    )


@dataclass
class Export:
    """The files of an export.

    Attributes
    ----------
    script : str
        The Python script (``# %%`` cells).
    notebook : str
        The same cells as an nbformat-4 notebook (JSON).
    bundle : bytes
        A zip of the script, the notebook, the session (JSON) and the data files under
        ``data/``: unzip it and run the script (or open the notebook) in its folder.
    stem : str
        The files' name without suffix.
    """

    script: str
    notebook: str
    bundle: bytes
    stem: str


def export_files(state: AppState, session: Session, dataset_key: str, stem: str) -> Export:
    """The script, the notebook and the zip bundle of ``session``."""
    script = export_script(session)
    notebook = json.dumps(export_notebook(script=script), indent=1) + "\n"
    _, files = data_source(_entry(state, dataset_key, session.title))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{stem}/{stem}.py", script)
        zf.writestr(f"{stem}/{stem}.ipynb", notebook)
        zf.writestr(f"{stem}/{stem}.json", json.dumps(session.to_dict(), indent=1, default=str))
        for rel, content in files.items():
            zf.writestr(f"{stem}/{rel}", content)
    return Export(script=script, notebook=notebook, bundle=buf.getvalue(), stem=stem)
