"""The documentation site builds with warnings as errors, from a fresh copy of ``docs/``: every
public name has a reference page, every registered method a card page, and the example gallery
executes (a raising example fails the build) and embeds its figures.

This is ``make docs`` itself (``sphinx -W``), built into a temporary folder so that nothing
cached from an earlier build (sphinx-gallery skips unchanged examples) is reused.
"""

from __future__ import annotations

import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hierlab
from hierlab.core.registry import list_methods

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ("_build", "api", "methods", "auto_examples", "sg_execution_times.rst")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("docs") / "docs"
    shutil.copytree(ROOT / "docs", src, ignore=shutil.ignore_patterns(*GENERATED))
    out = src / "_build" / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", src, out],
        capture_output=True,
        text=True,
        timeout=1500,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    return out


@pytest.mark.slow
def test_every_public_name_has_a_reference_page(site: Path) -> None:
    for name in hierlab.__all__:
        page = site / "api" / f"{name}.html"
        assert page.exists(), name
        obj = getattr(hierlab, name)
        anchor = f"module-{obj.__name__}" if inspect.ismodule(obj) else f"hierlab.{name}"
        assert f'id="{anchor}"' in page.read_text(encoding="utf-8"), name


@pytest.mark.slow
def test_every_method_has_its_card(site: Path) -> None:
    from hierlab.core.cards import method_card

    for name in list_methods():
        html = (site / "methods" / f"{name}.html").read_text(encoding="utf-8")
        card = method_card(name)
        assert card.title.split(" ")[0] in html and "Parameters" in html, name
        assert html.count('class="math') >= len(card.objective_lines()), name


@pytest.mark.slow
def test_gallery_executed_with_figures(site: Path) -> None:
    examples = sorted((ROOT / "docs" / "examples").glob("plot_*.py"))
    assert len(examples) >= 8
    for ex in examples:
        html = (site / "auto_examples" / f"{ex.stem}.html").read_text(encoding="utf-8")
        assert "broken_example" not in html, ex.name
        assert re.search(r'class="plotly-graph-div"', html), f"{ex.name}: no embedded figure"
        assert "Total running time of the script" in html, ex.name
    assert (site / "_static" / "plotly.min.js").exists()  # figures work offline
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()
