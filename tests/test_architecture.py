"""The shape of the house (issue #16, DESIGN.md): import arrows, the public API, one declaration
per parameter, small functions.

The import graph is read from the source with ``ast`` (function-level imports included), so
these tests see what a reader sees, not what happens to be imported at run time.
"""

from __future__ import annotations

import ast
import inspect
import math
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest

import hierlab
from hierlab.core.exceptions import ParameterError
from hierlab.core.losses import LOSSES
from hierlab.core.params import Param, check_declarations, declared
from hierlab.core.registry import get_method, list_methods, make_estimator, schema

ROOT = Path(hierlab.__file__).resolve().parent
APP = ROOT.parent / "app"


def _modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()
#: the engine's modules and the app's
EVERY_MODULE = {**MODULES, **_modules(APP)}


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _package(module: str) -> str:
    """The package ``module`` belongs to: itself for a package, else its parent."""
    path = EVERY_MODULE.get(module)
    return module if path and path.name == "__init__.py" else module.rpartition(".")[0]


def _import_nodes(
    module: str, source: str | None = None
) -> Iterator[tuple[ast.stmt, str, list[str]]]:
    """Each import statement of ``module`` (function-level ones included) as ``(node, base,
    names)``: ``from base import names`` (relative bases resolved) or ``import base``.
    ``source``: the module's text (default: read from its file)."""
    if source is None:
        source = EVERY_MODULE[module].read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = _package(module).split(".")
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            yield node, base, [a.name for a in node.names]


def _imports(module: str) -> set[str]:
    """Every module named by an import statement of ``module`` (hierlab, app, streamlit)."""
    out: set[str] = set()
    for _, base, names in _import_nodes(module):
        if not names:
            out.add(base)
            continue
        subs = {f"{base}.{name}" for name in names}
        named = {s for s in subs if s in EVERY_MODULE}
        out.update(named)  # ``from pkg import submodule`` imports the submodule ...
        if named != subs:
            out.add(base)  # ... ``from module import name`` the module itself
    return out


def _graph() -> dict[str, set[str]]:
    graph = {}
    for m in MODULES:
        targets = {_resolve(n) for n in _imports(m) if n.split(".")[0] == "hierlab"}
        graph[m] = {t for t in targets if t and t != m}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_cycle() -> None:
    """The oracle itself: a three-module circle and a self-contained chain."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    """No circle among hierlab's modules, function-level imports included."""
    graph = _graph()
    graph.pop("hierlab")  # the package root only re-exports; nothing below may import it
    for targets in graph.values():
        targets.discard("hierlab")
    assert _cycles(graph) == []


def test_nothing_imports_the_package_root() -> None:
    """Modules import what they use from where it lives, never ``hierlab`` itself."""
    offenders = [m for m, t in _graph().items() if m != "hierlab" and "hierlab" in t]
    assert offenders == []


# ------------------------------------------------------------------------------ private names
def _private_crossings(modules: Iterable[str], source: str | None = None) -> list[str]:
    """Imports of a private name (``_name``, a module ``_mod`` included) from outside the
    package that holds it.

    A name whose first private part is ``parts[i]`` of the dotted path ``base.name`` belongs to
    the package of ``parts[:i]`` (the module that defines ``_name``, or the package holding
    ``_mod``); only a module of that same package may import it. Dunder names are not private.
    """
    out = []
    for m in modules:
        for node, base, names in _import_nodes(m, source):
            for full in [f"{base}.{n}" for n in names] or [base]:
                parts = full.split(".")
                if parts[0] not in ("hierlab", "app"):
                    continue
                i = next(
                    (k for k, p in enumerate(parts) if p.startswith("_") and p[:2] != "__"), None
                )
                if i is None:
                    continue
                owner = ".".join(parts[:i])
                if owner in EVERY_MODULE and _package(owner) != _package(m):
                    out.append(f"{m}:{node.lineno} imports {full}")
    return sorted(out)


def test_private_crossing_finder_finds_one() -> None:
    """The oracle itself, on a module written to cross (lines 1 and 3) and to stay home."""
    source = (
        "from hierlab.core.taxonomy import _x, Taxonomy\nfrom hierlab.io.arff import _y\n"
        "import hierlab.core._z\nfrom hierlab.io.arff import __doc__\nfrom . import _w\n"
    )
    assert _private_crossings(["hierlab.io.probe"], source) == [
        "hierlab.io.probe:1 imports hierlab.core.taxonomy._x",
        "hierlab.io.probe:3 imports hierlab.core._z",
    ]


def test_no_private_name_crosses_a_package() -> None:
    """A private name (``_name``, ``_module``) is imported only inside its own package, in the
    engine and in the app: what another package needs is public in its owner."""
    assert _private_crossings(EVERY_MODULE) == []


# ------------------------------------------------------------- names of methods and losses
#: the rooms that serve every method: they may not know one by its name
GENERIC = ("hierlab.core", "hierlab.solvers", "app")


def _docstrings(tree: ast.AST) -> set[int]:
    """``id`` of every docstring constant (module, class, function): prose, not code."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _identifiers(node: ast.AST) -> list[str]:
    """The names ``node`` binds or reads: variables, attributes, arguments, functions,
    classes, import aliases."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.rpartition(".")[2]]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def _names_used(source: str, names: Iterable[str]) -> list[tuple[int, str]]:
    """``(line, name)`` for every string constant of ``source`` that equals one of ``names``
    (docstrings excepted) and every identifier that spells one (case-insensitive, ``-`` read
    as ``_``)."""
    wanted = {n.lower(): n for n in names}
    spelled = {n.lower().replace("-", "_"): n for n in names}
    tree = ast.parse(source)
    prose = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            if node.value.lower() in wanted:
                out.append((node.lineno, wanted[node.value.lower()]))
        for ident in _identifiers(node):
            if ident.lower() in spelled:
                out.append((getattr(node, "lineno", 0), spelled[ident.lower()]))
    return sorted(set(out))


def _generic_modules() -> dict[str, Path]:
    return {m: p for m, p in EVERY_MODULE.items() if m.startswith(GENERIC)}


def test_name_finder_finds_names() -> None:
    """The oracle itself: a literal, an identifier, case and dash; a docstring and a longer
    word are not names."""
    source = (
        '"""hr-svm in prose."""\nx = "HR-SVM"\ndef f(hr_svm): return hr_svm.flatmult\n'
        'y = "flatmultiple"\n'
    )
    assert _names_used(source, ["hr-svm", "flatmult"]) == [
        (2, "hr-svm"),
        (3, "flatmult"),
        (3, "hr-svm"),
    ]


def test_no_method_named_outside_its_family() -> None:
    """No code in ``core/``, ``solvers/`` or ``app/`` names a registered method.

    A method's name is its registry key (:func:`list_methods`: ``"orthognl"``, ``"hr-svm"``).
    Naming one there is deciding something for it outside its family (which to select first,
    which parameter is its budget, which check it needs); those facts are declared by the
    family on its :class:`~hierlab.core.registry.MethodSpec` (``rank``, ``budget``,
    ``check``, ``inducer``, the card's ``display_name``) and read from the registry. Counted:
    every string constant equal to a name, case-insensitive (``"ORTHOGNL"``), and every
    identifier that spells one (``hr_svm``, ``MFTree``); docstrings are prose and may cite
    the papers' methods. Elsewhere (the families, ``lab``, ``benchmarks``, the CLI's
    examples) a method may be named.
    """
    found = {
        m: hits
        for m, path in _generic_modules().items()
        if (hits := _names_used(path.read_text(encoding="utf-8"), list_methods()))
    }
    assert found == {}


def _loss_rows() -> dict[str, set[str]]:
    """Each loss name and the modules that declare its row (a ``LabelLoss("name", ...)`` call)."""
    rows: dict[str, set[str]] = {name: set() for name in LOSSES}
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and _identifiers(node.func) == ["LabelLoss"]
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in rows
            ):
                rows[node.args[0].value].add(m)
    return rows


def test_every_loss_has_one_row() -> None:
    """The oracle of the next test: each registered loss is declared by exactly one module."""
    rows = _loss_rows()
    assert rows and all(len(owners) == 1 for owners in rows.values()), rows


def test_no_loss_named_outside_its_row() -> None:
    """No code in ``core/``, ``solvers/`` or ``app/`` names a label loss, but the module that
    declares its row.

    A loss's name is its key in :data:`hierlab.core.losses.LOSSES` (``"zero_one"``,
    ``"sqrt_hamming"``); its row is the one ``LabelLoss("name", ...)`` that declares it (the
    shared table in ``core/losses.py``, or a family's own loss in its package). A solver or a
    screen that names a loss special-cases it: a loss forgotten in such a branch is computed
    wrongly without an error. Counted as for methods (string constants and identifiers;
    :func:`test_no_method_named_outside_its_family`).
    """
    rows = _loss_rows()
    found = {}
    for m, path in _generic_modules().items():
        hits = _names_used(path.read_text(encoding="utf-8"), LOSSES)
        hits = [(line, name) for line, name in hits if m not in rows[name]]
        if hits:
            found[m] = hits
    assert found == {}


# ------------------------------------------------------------------------------ the app
def _app_graph() -> dict[str, set[str]]:
    """The app's modules and the app modules each imports (function-level and type-checking
    imports included)."""
    app = {m for m in EVERY_MODULE if m.split(".")[0] == "app"}
    graph = {}
    for m in app:
        targets = set()
        for n in _imports(m):
            while n and n not in app:
                n = n.rpartition(".")[0]
            if n and n != m:
                targets.add(n)
        graph[m] = targets
    return graph


def test_app_graph_sees_the_app() -> None:
    """The oracle: the app's graph holds its pages and the arrows they draw."""
    graph = _app_graph()
    assert "app.state.runs" in graph["app.app_pages.train"]
    assert "app.ui.widgets" in graph["app.app_pages.train"]


def test_no_import_circle_in_the_app() -> None:
    """No circle among the app's modules, function-level and type-checking imports included
    (a type a module only annotates with is still a fact it takes from the other)."""
    assert _cycles(_app_graph()) == []


def test_engine_never_imports_the_app() -> None:
    bad = {
        m: sorted(n for n in _imports(m) if n.split(".")[0] in ("app", "streamlit"))
        for m in MODULES
    }
    assert {m: n for m, n in bad.items() if n} == {}


#: DESIGN.md's arrows: a module may import its own layer and the layers before it
LAYERS = {
    "core": 0,
    "io": 1,
    "datasets": 2,
    "solvers": 3,
    "methods": 4,
    "persistence": 4,
    "evaluation": 5,
    "plots": 6,
    "lab": 7,
    "notebook": 7,
    "benchmarks": 7,
    "cli": 8,
}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else 99


def test_every_module_has_a_layer() -> None:
    assert {m.split(".")[1] for m in MODULES if "." in m} <= set(LAYERS)


def test_arrows_run_one_way() -> None:
    """core <- io <- datasets <- solvers <- methods <- evaluation <- lab, benchmarks, cli."""
    wrong = sorted(
        (m, t)
        for m, targets in _graph().items()
        if m != "hierlab"
        for t in targets
        if _layer(t) > _layer(m)
    )
    assert wrong == []


def test_io_never_imports_datasets() -> None:
    wrong = [
        m
        for m, t in _graph().items()
        if m.startswith("hierlab.io") and any(x.startswith("hierlab.datasets") for x in t)
    ]
    assert wrong == []


# ---------------------------------------------------------------------------- the public API
def test_every_registered_class_is_public() -> None:
    for name in list_methods():
        cls = get_method(name).estimator
        assert getattr(hierlab, cls.__name__, None) is cls, name
        assert cls.__name__ in hierlab.__all__, name


def test_one_naming_scheme() -> None:
    for name in list_methods():
        assert get_method(name).estimator.__name__.endswith("Classifier"), name


# ------------------------------------------------------------------- one declaration per param
@pytest.mark.parametrize("name", list_methods())
def test_registry_schema_is_the_class_declaration(name: str) -> None:
    spec = get_method(name)
    cls = spec.estimator
    check_declarations(cls)  # constructor == declaration, keyword-only, same defaults
    assert spec.params == schema(cls, spec.fixed)
    decl = declared(cls)
    for p in spec.params:
        assert decl[p.name] is p  # the same object, not a copy that could drift
    sig = inspect.signature(cls.__init__)
    assert set(decl) | {"taxonomy"} == set(sig.parameters) - {"self"}


def _outside(p: Param) -> object | None:
    """A value just outside ``p``'s range, or None when the range is open on both sides."""
    if p.type not in ("float", "int"):
        return None
    if p.low is not None and math.isfinite(p.low):
        return p.low if p.low_open else (p.low - 1 if p.type == "int" else p.low - 1e-3)
    if p.high is not None and math.isfinite(p.high):
        return p.high if p.high_open else (p.high + 1 if p.type == "int" else p.high + 1e-3)
    return None


@pytest.mark.parametrize("name", list_methods())
def test_class_and_registry_refuse_the_same_values(name: str) -> None:
    """``Cls(p=v).fit`` and ``make_estimator(name, p=v)`` agree on every bound."""
    spec = get_method(name)
    X = np.random.default_rng(0).normal(size=(12, 3))
    y = np.array(["a", "b", "c"] * 4)
    for p in spec.params:
        bad = _outside(p)
        if bad is None:
            continue
        with pytest.raises(ParameterError, match=p.name):
            make_estimator(name, **{p.name: bad})
        est = spec.estimator(**{**spec.fixed, p.name: bad})
        with pytest.raises(ParameterError, match=p.name):
            est.fit(X, y)


def test_large_C_accepted_by_both_paths() -> None:
    """The disagreement issue #16 measured: the class ran C = 1e6, the registry refused it."""
    assert make_estimator("flatmult", C=1e6).C == 1e6
    assert hierlab.FlatMulticlassClassifier(C=1e6).C == 1e6
    declared(hierlab.FlatMulticlassClassifier)["C"].validate(1e6)
    # the class path proper is ``fit`` (the constructor above only stores C): it trains
    X = np.random.default_rng(0).normal(size=(12, 3))
    est = hierlab.FlatMulticlassClassifier(C=1e6, max_iter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three iterations do not close the gap
        est.fit(X, np.array(["a", "b", "c"] * 4))
    assert est.n_iter_ == 3


def test_constructors_are_keyword_only() -> None:
    for name in list_methods():
        cls = get_method(name).estimator
        with pytest.raises(TypeError):
            cls(None)


# ---------------------------------------------------------------------------- small functions
def _long_functions(limit: int = 80) -> list[str]:
    out = []
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > limit and not node.name.endswith("_kernel"):  # numba kernels excepted
                    out.append(f"{m}.{node.name} ({n} lines)")
    return out


def test_no_function_over_80_lines() -> None:
    assert _long_functions() == []
