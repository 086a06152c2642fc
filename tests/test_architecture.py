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
from pathlib import Path

import numpy as np
import pytest

import hierlab
from hierlab.core.exceptions import ParameterError
from hierlab.core.params import Param, check_declarations, declared
from hierlab.core.registry import get_method, list_methods, make_estimator, schema

ROOT = Path(hierlab.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """Every module named by an import statement of ``module`` (hierlab, app, streamlit)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base] if base else pkg)
            subs = {f"{base}.{a.name}" for a in node.names}
            named = {s for s in subs if s in MODULES}
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
