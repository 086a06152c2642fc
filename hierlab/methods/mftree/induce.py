"""Taxonomy induction when no hierarchy is given (MF-Tree, seed 004; CMTL baseline).

:func:`induce_taxonomy` is the induction step usable before any classifier::

    tax = induce_taxonomy(X, y, method="mftree")        # a hierlab Taxonomy, leaves = classes
    clf = make_estimator("hr-svm", taxonomy=tax).fit(X, y)
"""

from __future__ import annotations

from typing import Any

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.mftree.cmtl import CMTLTree, confusion_affinity, spectral_bipartition
from hierlab.methods.mftree.induction import (
    MFTree,
    MFTreeReference,
    build_binary_taxonomy,
    mftree_partition,
    partition2,
)

__all__ = [
    "CMTLTree",
    "MFTree",
    "MFTreeReference",
    "build_binary_taxonomy",
    "confusion_affinity",
    "induce_taxonomy",
    "mftree_partition",
    "partition2",
    "spectral_bipartition",
]

_METHODS = {"mftree": MFTree, "mftree-reference": MFTreeReference, "cmtl": CMTLTree}


def induce_taxonomy(X: Any, y: Any, method: str = "mftree", **params: Any) -> Taxonomy:
    """Induce a binary taxonomy over the classes of ``y``.

    Parameters
    ----------
    X : array-like or csr_matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        One class label per row; the leaves of the result are named ``str(label)``.
    method : {"mftree", "cmtl", "mftree-reference"}, default "mftree"
        :class:`MFTree` (seed 004, fast path), :class:`CMTLTree` (Bengio et al. 2010) or the
        explicit-kernel :class:`MFTreeReference` (small data only).
    **params
        Constructor arguments of the chosen class (``kernel``, ``gamma``, ``tau``,
        ``random_state``, ... for MF-Tree; ``C``, ``holdout``, ``random_state`` for CMTL).

    Returns
    -------
    Taxonomy
        Internal nodes are named ``"node:<path code>"`` (0 = left, 1 = right).
    """
    key = method.lower()
    if key not in _METHODS:
        raise ParameterError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    cls: Any = _METHODS[key]
    try:
        model = cls(**params)
    except TypeError as exc:
        raise ParameterError(f"bad parameter for {key!r}: {exc}") from None
    return model.fit(X, y).taxonomy_
