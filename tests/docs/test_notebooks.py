"""The teaching notebooks (``docs/notebooks``): each runs top to bottom, and each ``.ipynb`` holds
exactly the cells of its jupytext ``.py`` pair.

The notebooks run in a real Jupyter kernel (nbclient), at the size the test suite uses
(``HIERLAB_NOTEBOOK_SIZE=tiny``: the paper-table cells run the reproduction at its smallest
size; every other cell is as a student gets it). A cell that raises fails the test with the
cell's traceback.
"""

from __future__ import annotations

import os
from pathlib import Path

import jupytext  # the [docs] extra, in [dev]
import nbclient
import pytest

from hierlab.lab.demos import DEMOS

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "docs" / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("[0-9][0-9][0-9]_*.py"))
SEEDS = ("000", "001", "002", "003", "004")


def _cells(nb: object) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]  # type: ignore[attr-defined]


def test_one_notebook_per_seed_and_bring_your_own_data() -> None:
    names = [p.stem for p in SOURCES]
    assert [n[:3] for n in names[:5]] == list(SEEDS)
    assert any("bring_your_own_data" in n for n in names)


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_ipynb_is_paired_with_its_py(source: Path) -> None:
    pair = source.with_suffix(".ipynb")
    assert pair.exists(), f"{pair.name} missing: run `jupytext --sync {source.name}`"
    py, ipynb = jupytext.read(source), jupytext.read(pair)
    assert _cells(ipynb) == _cells(py), f"{pair.name} is out of sync: jupytext --sync"
    assert all(not getattr(c, "outputs", None) for c in ipynb.cells), "commit without outputs"


def test_every_guided_demo_is_in_its_notebook() -> None:
    """The app's demos and the notebooks share one source: the notebook calls the preset."""
    for name, preset in DEMOS.items():
        text = (NOTEBOOKS / preset.notebook).with_suffix(".py").read_text(encoding="utf-8")
        assert f'DEMOS["{name}"]' in text and "run_demo(demo.name)" in text, name
        assert "demo.markdown()" in text and "demo.exercises_markdown()" in text, name


@pytest.mark.slow
@pytest.mark.realdata  # the seed notebooks' tables read 20 Newsgroups and the IPC titles
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIERLAB_NOTEBOOK_SIZE", "tiny")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    nb = jupytext.read(source)
    client = nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    widgets = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    if "LiveBounds(" in source.read_text(encoding="utf-8"):
        assert widgets, "LiveBounds drew no live figure in the kernel"


def test_demo_text_is_one_markdown_source() -> None:
    """What the app's Guided demos page and the notebooks display: the preset's own fields."""
    for preset in DEMOS.values():
        md = preset.markdown()
        assert md.startswith(f"**{preset.question}**")
        assert preset.idea and preset.idea.strip() in md
        for k, text in enumerate(preset.look_at, start=1):
            assert f"{k}. {text}" in md
        ex = preset.exercises_markdown()
        assert len(preset.exercises) >= 2 and all(e in ex for e in preset.exercises)
    app_page = (ROOT / "app" / "app_pages" / "demos.py").read_text(encoding="utf-8")
    assert "preset.markdown()" in app_page and "preset.exercises_markdown()" in app_page
    assert "res.markdown()" in app_page
