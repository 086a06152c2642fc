"""Pages generated from the code at build time (imported by ``conf.py``).

* :func:`api_pages`: one autodoc page per name of ``hierlab.__all__`` and the index of them;
* :func:`card_pages`: one page per registered method, from its :class:`~hierlab.core.cards.MethodCard`;
* :func:`plotly_static`: plotly.js copied from the installed plotly, and the offline renderer
  through which the gallery's figures are embedded.
"""

from __future__ import annotations

import inspect
import re
import shutil
from pathlib import Path

import hierlab

HERE = Path(__file__).resolve().parent
STATIC = HERE / "_build" / "_static_generated"

#: the API index's sections, in order: (title, test on the object)
_SECTIONS = (
    ("Estimators", lambda o: inspect.isclass(o) and issubclass(o, hierlab.HierarchicalClassifier)),
    ("Exceptions and warnings", lambda o: inspect.isclass(o) and issubclass(o, Warning | Exception)),
    ("Data, taxonomies and results", inspect.isclass),
    ("Modules", inspect.ismodule),
    ("Functions", callable),
    ("Other", lambda o: True),
)


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (no needless rebuilds)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _estimator_note(cls: type) -> str:
    """For an estimator class: its method cards (every parameter) and the shared methods."""
    from hierlab.core.registry import get_method, list_methods

    if not issubclass(cls, hierlab.HierarchicalClassifier) or cls is hierlab.HierarchicalClassifier:
        return ""
    cards = [m for m in list_methods() if get_method(m).estimator is cls]
    lines = ["", ".. rubric:: See also", ""]
    if cards:
        shown = ", ".join(f":doc:`../methods/{m}`" for m in cards)
        lines.append(f"The method card(s) {shown}: the objective, every parameter with its "
                     "range, the presets.")
        lines.append("")
    lines.append("``fit``, ``predict``, ``predict_proba``, ``node_proba``, ``decision_function``, "
                 "``calibrate`` and the other shared methods: :class:`hierlab.HierarchicalClassifier`.")
    return "\n".join(lines) + "\n"


def _page(name: str, obj: object) -> str:
    title = f"hierlab.{name}"
    head = f"{title}\n{'=' * len(title)}\n\n.. currentmodule:: hierlab\n\n"
    if inspect.ismodule(obj):
        return (
            f"{title}\n{'=' * len(title)}\n\n.. automodule:: {obj.__name__}\n"
            "   :members:\n   :no-show-inheritance:\n"
        )
    if obj is hierlab.HierarchicalClassifier:  # its scores and probabilities live in its bases
        return head + f".. autoclass:: {name}\n   :inherited-members:\n"
    if inspect.isclass(obj):
        return head + f".. autoclass:: {name}\n" + _estimator_note(obj)
    if callable(obj):
        return head + f".. autofunction:: {name}\n"
    return head + f".. autodata:: {name}\n   :annotation: = {obj!r}\n"


def api_pages(out: Path) -> list[str]:
    """Write ``out/<name>.rst`` for every public name and ``out/index.rst`` listing them.

    Returns
    -------
    list of str
        The names documented (``hierlab.__all__``, in its order).
    """
    out.mkdir(parents=True, exist_ok=True)
    names = list(hierlab.__all__)
    sections: dict[str, list[str]] = {title: [] for title, _ in _SECTIONS}
    for name in names:
        obj = getattr(hierlab, name)
        _write(out / f"{name}.rst", _page(name, obj))
        title = next(t for t, test in _SECTIONS if test(obj))
        sections[title].append(name)
    lines = ["API reference", "=============", "",
             "Every public name of ``hierlab`` (``hierlab.__all__``), one page each, from the "
             "docstrings. Estimators share the methods of :class:`hierlab.HierarchicalClassifier` "
             "(``fit``, ``predict``, ``predict_proba``, ``node_scores``, ``calibrate`` ...).", ""]
    for title, members in sections.items():
        if not members:
            continue
        lines += [title, "-" * len(title), "", ".. toctree::", "   :maxdepth: 1", ""]
        lines += [f"   {m}" for m in sorted(members, key=str.lower)]
        lines.append("")
    _write(out / "index.rst", "\n".join(lines))
    for stale in out.glob("*.rst"):
        if stale.stem not in names and stale.stem != "index":
            stale.unlink()
    return names


_SPANS = re.compile(r"\$\$(.+?)\$\$|\$([^$]+)\$|``([^`]+)``|`([^`]+)`")


def _plain(text: str) -> str:
    """Plain card text for reStructuredText: ``|`` and a word's trailing ``_`` escaped."""
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return re.sub(r"(\w)_(?=\W|$)", r"\1\\_", text)


def _rst_text(text: str) -> str:
    """Markdown-flavoured card text as reStructuredText: ``$x$`` becomes ``:math:`x```, code
    spans get double backquotes, the rest is escaped where reST would read markup."""
    out, pos = [], 0
    text = text.strip()
    for m in _SPANS.finditer(text):
        out.append(_plain(text[pos : m.start()]))
        math = m.group(1) or m.group(2)
        code = m.group(3) or m.group(4)
        out.append(f":math:`{math.strip()}`" if math is not None else f"``{code}``")
        nxt = text[m.end() : m.end() + 1]
        if nxt and (nxt.isalnum() or nxt in "_("):
            out.append("\\ ")  # reST needs a boundary after an inline role
        pos = m.end()
    out.append(_plain(text[pos:]))
    return "".join(out)


def _card_page(name: str) -> str:
    from hierlab.core.cards import method_card

    card = method_card(name)
    spec = card.spec
    title = f"{card.title} (``{name}``)"
    lines = [title, "=" * len(title), "", f"*{card.tags()}* — {_rst_text(spec.summary)}", ""]
    lines += [_rst_text(card.idea), "", f"**Objective** ({_rst_text(card.equations)}):", ""]
    for line in card.objective_lines():
        lines += [".. math::", "", f"   {line}", ""]
    if card.symbols:
        lines += [_rst_text(card.symbols), ""]
    lines += ["**Prediction:**", "", ".. math::", "", f"   {card.prediction}", ""]
    lines += [f"**Solver.** {_rst_text(card.solver)}", "", f"**Bounds.** {_rst_text(card.bounds)}"]
    lines += ["", _rst_text(card.presets_markdown()), ""]
    params = card.parameters()
    if params:
        lines += [".. list-table:: Parameters", "   :header-rows: 1", "   :widths: 15 15 20 50", ""]
        lines += ["   * - parameter", "     - default", "     - range", "     - what it does"]
        for d in params:
            lines += [f"   * - ``{d.name}``", f"     - ``{d.default!r}``",
                      f"     - {_rst_text(d.range) or '-'}", f"     - {_rst_text(d.text) or '-'}"]
        lines.append("")
    if spec.fixed:
        shown = ", ".join(f"``{k}={v!r}``" for k, v in spec.fixed.items())
        lines += [f"Fixed by this registry entry: {shown}.", ""]
    cls = spec.estimator.__name__
    lines += [f"Estimator class: :class:`hierlab.{cls}`.", "", f"**Citation.** {_rst_text(card.citation)}", ""]
    return "\n".join(lines)


def card_pages(out: Path) -> list[str]:
    """Write one page per registered method from its card, and ``out/index.rst``.

    Returns
    -------
    list of str
        The registered methods, in registry order.
    """
    from hierlab.core.registry import list_methods

    out.mkdir(parents=True, exist_ok=True)
    names = list_methods()
    for name in names:
        _write(out / f"{name}.rst", _card_page(name))
    lines = ["Method cards", "============", "",
             "One card per registered method, rendered from the card's data "
             "(:mod:`hierlab.core.cards`) and the parameter declarations, the same data the "
             "app's Methods page and ``hierlab methods NAME`` show.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {n}" for n in names]
    _write(out / "index.rst", "\n".join(lines) + "\n")
    return names


def plotly_static() -> None:
    """Copy plotly.js beside the pages and route the gallery's figures through HTML without
    plotly.js inside (the pages load the copy once)."""
    import plotly
    import plotly.io as pio
    from plotly.io._base_renderers import MimetypeRenderer

    STATIC.mkdir(parents=True, exist_ok=True)
    src = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    dst = STATIC / "plotly.min.js"
    if not dst.exists() or dst.stat().st_size != src.stat().st_size:
        shutil.copyfile(src, dst)

    class OfflineHtml(MimetypeRenderer):  # type: ignore[misc]
        def to_mimebundle(self, fig_dict: dict) -> dict:
            html = pio.to_html(
                fig_dict,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                default_width="100%",
                default_height=480,
                validate=False,
            )
            return {"text/html": html}

    pio.renderers["hierlab_docs"] = OfflineHtml()
    pio.renderers.default = "hierlab_docs"


__all__ = ["api_pages", "card_pages", "plotly_static"]
