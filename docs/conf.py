"""Sphinx configuration of hierlab's documentation site (``make docs``).

Three parts of the site are generated at build time from the code, so they never go stale:

* ``api/<name>.rst``: one reference page per public name of ``hierlab.__all__`` (autodoc, the
  docstrings read by numpydoc);
* ``methods/<name>.rst``: one page per registered method, rendered from its method card (the
  card's fields and the parameter declarations, :mod:`hierlab.core.cards`);
* ``auto_examples/``: the example gallery, executed by sphinx-gallery; its plotly figures are
  embedded as HTML with plotly.js served from this site (no network at build or view time).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _generate  # noqa: E402

import hierlab  # noqa: E402

project = "hierlab"
author = "the hierlab developers"
copyright = "the hierlab developers, BSD-3-Clause"
release = hierlab.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from the site itself (no network)
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "notebooks/*.ipynb", "examples/README.rst"]
templates_path: list[str] = []
html_theme = "alabaster"
html_title = f"hierlab {release}"
html_static_path = [str(_generate.STATIC)]
html_js_files = ["plotly.min.js"]  # copied from the installed plotly: the gallery works offline
html_theme_options = {"description": "hierarchical classification lab", "fixed_sidebar": True}

autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc's parameter lists say the types
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

sphinx_gallery_conf = {
    "examples_dirs": str(HERE / "examples"),
    "gallery_dirs": str(HERE / "auto_examples"),
    "filename_pattern": r"/plot_",
    "image_scrapers": (),
    "reset_modules": (),
    "capture_repr": ("_repr_html_", "__repr__"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
}

_generate.api_pages(HERE / "api")
_generate.card_pages(HERE / "methods")
_generate.plotly_static()


def _skip_foreign(app, what, name, obj, skip, options):  # noqa: ANN001, ANN201
    """Skip members a class inherits from scikit-learn's machinery (``set_fit_request``...)."""
    module = getattr(obj, "__module__", None)
    if callable(obj) and isinstance(module, str) and not module.startswith("hierlab"):
        return True
    return skip


def setup(app):  # noqa: ANN001, ANN201
    app.connect("autodoc-skip-member", _skip_foreign)
