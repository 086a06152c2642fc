"""Label losses ``Delta(y, y')`` between nodes of a taxonomy: one table shared by every family.

Every loss the seeds use is a function of the symmetric difference of the two labels' paths,
``A+(y) Δ A+(y')`` (the root excluded), weighted per node and then transformed:

==================  =========================================  ===================================
name                ``Delta(y, y')``                            used by
==================  =========================================  ===================================
``zero_one``        ``[y != y']``                               seed 000 FLATMULT (eq. 12), 003
``hamming``         ``|A+(y) Δ A+(y')|`` = ``gamma(y, y')``      seed 002 eq. (1), 003 eq. (2)
                    on a tree
``half_hamming``    ``gamma(y, y') / 2``                        seed 000 TREELOSS (Section 5)
``sqrt_hamming``    ``sqrt(gamma(y, y'))``                      seed 002 eq. (4)-(5), 003
``normalized``      ``sqrt(sum_{n in A+(y) Δ A+(y')} alpha_n)``  seed 003 eq. (9)
==================  =========================================  ===================================

A family that can use a loss takes its name as a parameter and calls :func:`delta`, which works
from the sparse ancestor matrix on a batch of labels against a set of candidates, so memory is
``O(batch x candidates)``, never ``O(n_nodes^2)`` unless asked for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.exceptions import ParameterError
from hierlab.core.taxonomy import Taxonomy

__all__ = ["LOSSES", "LabelLoss", "delta", "get_loss"]


@dataclass(frozen=True)
class LabelLoss:
    """One row of the loss table (the definitions are in the module docstring's table).

    Attributes
    ----------
    name : str
    weighted : bool
        Needs a weight per node (``alpha`` of seed 003).
    transform : callable
        Applied to the (weighted) size of the path difference; None for ``zero_one``.
    """

    name: str
    weighted: bool = False
    transform: Callable[[np.ndarray], np.ndarray] | None = None


def _identity(d: np.ndarray) -> np.ndarray:
    return d


def _half(d: np.ndarray) -> np.ndarray:
    return d / 2.0


LOSSES: dict[str, LabelLoss] = {
    loss.name: loss
    for loss in (
        LabelLoss("zero_one"),
        LabelLoss("hamming", transform=_identity),
        LabelLoss("half_hamming", transform=_half),
        LabelLoss("sqrt_hamming", transform=np.sqrt),
        LabelLoss("normalized", weighted=True, transform=np.sqrt),
    )
}


def get_loss(name: str) -> LabelLoss:
    """The :class:`LabelLoss` called ``name``."""
    try:
        return LOSSES[name]
    except KeyError:
        raise ParameterError(f"loss must be one of {sorted(LOSSES)}, got {name!r}") from None


def delta(
    name: str,
    taxonomy: Taxonomy,
    labels: Any,
    candidates: Any,
    weights: Any = None,
) -> np.ndarray:
    """``Delta(labels[i], candidates[j])`` for the loss ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`LOSSES`.
    taxonomy : Taxonomy
        Tree or DAG.
    labels : array-like of int of shape (k,)
        Node ids (the label of each row is ``A+(labels[i])``).
    candidates : array-like of int of shape (L,)
        Node ids.
    weights : array-like of shape (n_nodes,), optional
        Per-node weights, needed by weighted losses (the root's is ignored).

    Returns
    -------
    ndarray of shape (k, L), float64
    """
    loss = get_loss(name)
    labels = np.asarray(labels, dtype=np.int64)
    candidates = np.asarray(candidates, dtype=np.int64)
    if loss.transform is None:
        return (labels[:, None] != candidates[None, :]).astype(np.float64)
    if loss.weighted:
        if weights is None:
            raise ParameterError(f"the {name!r} loss needs a weight per node (alpha)")
        w = np.asarray(weights, dtype=np.float64).copy()
    else:
        w = np.ones(taxonomy.n_nodes)
    w[taxonomy.root] = 0.0
    A = taxonomy.ancestor_matrix  # cached CSR of float64: rows are gathered, not copied whole
    Am, Al = A[labels], A[candidates]
    inter = (Am @ sp.diags(w) @ Al.T).toarray()
    size = np.maximum((Am @ w)[:, None] + (Al @ w)[None, :] - 2.0 * inter, 0.0)
    return loss.transform(size)
