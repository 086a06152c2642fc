"""Reproductions of the seed papers' tables: ``hierlab reproduce <name>``.

Every module of this package is one reproduction. It defines ``NAME`` (the CLI word), ``HELP``
(one line), ``add_arguments(parser)`` and ``run(args) -> int``; :func:`available` discovers them,
so a new reproduction is a new module and nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["available"]


def available() -> dict[str, ModuleType]:
    """Map each reproduction's ``NAME`` to its module."""
    out: dict[str, ModuleType] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        name = getattr(mod, "NAME", None)
        if isinstance(name, str) and callable(getattr(mod, "run", None)):
            out[name] = mod
    return dict(sorted(out.items()))
