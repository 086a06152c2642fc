"""Resource limits: explicit, documented settings that bound what hostile input can cost.

Every reader, the taxonomy builder, the estimators and the model-file loader check their input
against :data:`LIMITS` *before* allocating what the input declares (a column count, a node
count, a manifest's entries, an array's shape), and refuse with an error that names the limit
and how to raise it. The defaults suit a laptop; raise one for a run with :func:`override`::

    from hierlab.core import limits
    with limits.override(max_features=50_000_000):
        ds = hierlab.io.load_dataset("huge.svm")

or for the whole process with ``limits.set_limits(max_nodes=5_000_000)``.

===========================  ==================  ===================================================
setting                      default             what it bounds
===========================  ==================  ===================================================
``max_features``             2**24 (16.8 M)      columns of a data file or of ``X`` in ``fit``
``max_nodes``                2,000,000           nodes of a taxonomy
``max_weight_cells``         2**28 (268 M)       ``n_nodes x n_features`` of dense weights (2 GiB)
``max_file_bytes``           4 GiB               bytes of a data, taxonomy or model file
``max_manifest_entries``     2,000,000           JSON values (lists, objects, items) of a manifest
``max_abs_feature_liblinear``  1e30              ``max |x|`` given to liblinear (it spins beyond)
===========================  ==================  ===================================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

__all__ = ["LIMITS", "Limits", "current", "how_to_raise", "override", "set_limits"]


@dataclass(frozen=True)
class Limits:
    """The resource limits (see the module docstring for what each bounds).

    Attributes
    ----------
    max_features : int
        Largest number of feature columns a reader builds or an estimator fits on.
    max_nodes : int
        Largest number of nodes of a :class:`~hierlab.core.taxonomy.Taxonomy`.
    max_weight_cells : int
        Largest ``n_nodes * n_features`` an estimator allocates for dense weights.
    max_file_bytes : int
        Largest file a reader or :func:`hierlab.load` reads.
    max_manifest_entries : int
        Largest number of JSON values in a model file's manifest (counted before parsing).
    max_abs_feature_liblinear : float
        Largest feature magnitude passed to liblinear (``LinearSVC``, ``LogisticRegression``):
        beyond it liblinear's coordinate descent does not terminate (scikit-learn refuses
        ``> 1e30`` for its logistic regression for the same reason).
    """

    max_features: int = 2**24
    max_nodes: int = 2_000_000
    max_weight_cells: int = 2**28
    max_file_bytes: int = 4 * 2**30
    max_manifest_entries: int = 2_000_000
    max_abs_feature_liblinear: float = 1e30


#: the limits in force (replaced, never mutated: :func:`override`, :func:`set_limits`)
LIMITS = Limits()
_current = [LIMITS]


def current() -> Limits:
    """The limits in force."""
    return _current[-1]


def set_limits(**changes: float) -> Limits:
    """Change limits for the rest of the process; return the previous ones.

    Parameters
    ----------
    **changes
        New values of :class:`Limits` fields (an unknown name raises ``TypeError``).
    """
    old = _current[-1]
    _current[-1] = replace(old, **changes)  # type: ignore[arg-type]
    return old


@contextlib.contextmanager
def override(**changes: float) -> Iterator[Limits]:
    """Change limits inside a ``with`` block (restored on exit).

    Parameters
    ----------
    **changes
        New values of :class:`Limits` fields.

    Yields
    ------
    Limits
        The limits in force inside the block.
    """
    _current.append(replace(_current[-1], **changes))  # type: ignore[arg-type]
    try:
        yield _current[-1]
    finally:
        _current.pop()


def how_to_raise(name: str) -> str:
    """The sentence every refusal ends with: which limit, and how to raise it."""
    return (
        f"(limit hierlab.core.limits {name}={getattr(current(), name):,}; raise it with "
        f"hierlab.core.limits.override({name}=...))"
    )
