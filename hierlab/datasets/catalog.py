"""The catalogue of built-in data sets: one name -> a ``(train, test)`` loader.

The CLI (``hierlab datasets``, ``hierlab fit <name>``) and the app's data page list what is
here. Each entry names a generator or loader of :mod:`hierlab.datasets` by its dotted path, so
an entry whose module is missing (an optional part not installed) is simply not listed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError

__all__ = ["BuiltinDataset", "available_datasets", "load_builtin"]


@dataclass(frozen=True)
class BuiltinDataset:
    """One built-in data set.

    Attributes
    ----------
    name : str
        The catalogue key (``"hieron-synthetic"``).
    loader : str
        ``"module:function"`` returning ``(train, test)``.
    kwargs : dict
        Arguments passed to the loader.
    description : str
        One line for listings.
    real : bool
        Needs the real data directory (``HIERLAB_DATA``).
    """

    name: str
    loader: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    real: bool = False

    def function(self) -> Any:
        """The loader function, or None when its module is not available."""
        mod_name, fn_name = self.loader.split(":")
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            return None
        return getattr(mod, fn_name, None)


_CATALOG: tuple[BuiltinDataset, ...] = (
    BuiltinDataset(
        "hieron-synthetic",
        "hierlab.datasets.hieron:make_hieron_synthetic",
        {"random_state": 0},
        "Seed 002, Sec. 5: ternary tree of depth 4 (121 labels), 100/50 examples per label",
    ),
    BuiltinDataset(
        "nhsvm-balanced",
        "hierlab.datasets.nhsvm:make_nhsvm_synthetic",
        {"kind": "balanced", "random_state": 0},
        "Seed 003, Sec. 8.1: balanced synthetic tree",
    ),
    BuiltinDataset(
        "nhsvm-unbalanced",
        "hierlab.datasets.nhsvm:make_nhsvm_synthetic",
        {"kind": "unbalanced", "random_state": 0},
        "Seed 003, Sec. 8.1: unbalanced synthetic tree",
    ),
    BuiltinDataset(
        "hierarchical-text",
        "hierlab.datasets.text:make_hierarchical_text",
        {"n_samples": 5000, "n_classes": 50, "n_features": 2000, "depth": 3, "random_state": 0},
        "Sparse bag-of-words with topic words on a known tree (50 classes)",
    ),
    BuiltinDataset(
        "20newsgroups",
        "hierlab.datasets.real:load_20newsgroups",
        {},
        "20 Newsgroups bydate, 6-group taxonomy, sublinear TF-IDF",
        real=True,
    ),
    BuiltinDataset(
        "ipc",
        "hierlab.datasets.ipc:load_ipc",
        {},
        "IPC patent titles, 645 subclass leaves (many classes), 70/30 split, TF-IDF",
        real=True,
    ),
    BuiltinDataset(
        "imclef07d",
        "hierlab.datasets.real:load_clus",
        {"name": "ImCLEF07D"},
        "Clus HMC: ImageCLEF 2007 medical images, tree, single label",
        real=True,
    ),
    BuiltinDataset(
        "enron",
        "hierlab.datasets.real:load_clus",
        {"name": "Enron_corr"},
        "Clus HMC: Enron e-mails, tree, multi-label",
        real=True,
    ),
    BuiltinDataset(
        "cellcycle-fun",
        "hierlab.datasets.real:load_clus",
        {"name": "cellcycle_FUN"},
        "Clus HMC: yeast cell cycle, FunCat tree, multi-label",
        real=True,
    ),
    BuiltinDataset(
        "cellcycle-go",
        "hierlab.datasets.real:load_clus",
        {"name": "cellcycle_GO"},
        "Clus HMC: yeast cell cycle, Gene Ontology DAG, multi-label",
        real=True,
    ),
)


def available_datasets() -> list[BuiltinDataset]:
    """Entries whose loader is importable (real sets are listed even if the files are absent)."""
    return [d for d in _CATALOG if d.function() is not None]


def load_builtin(name: str, **overrides: Any) -> tuple[HierDataset, HierDataset]:
    """Load the built-in data set ``name`` as ``(train, test)``.

    Parameters
    ----------
    name : str
        A name from :func:`available_datasets`.
    **overrides
        Replace the entry's default loader arguments (e.g. ``random_state=3``).

    Raises
    ------
    DataError
        For an unknown name (listing the known ones).
    """
    for d in available_datasets():
        if d.name == name.lower():
            return d.function()(**{**d.kwargs, **overrides})  # type: ignore[no-any-return]
    names = ", ".join(d.name for d in available_datasets())
    raise DataError(f"unknown built-in data set {name!r}; available: {names}")
