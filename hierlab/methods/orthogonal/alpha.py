"""ORTHOGNL's ``alpha``: its words, and whether a value is admissible on a taxonomy.

``K`` of seed 000's eq. (6) defines a valid regulariser only while the comparison matrix
``Kbar`` is positive definite (Corollary 2); :func:`~hierlab.core.regularizers.max_admissible_alpha`
gives the exact limit of ``alpha`` on a tree. :func:`resolve_alpha` turns the words ``"auto"``
and ``"paper"`` into the number that runs; :func:`check_alpha` is the method's registry check
(:meth:`hierlab.core.registry.MethodSpec.check`): what the Train page shows beside ``alpha``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import Check
from hierlab.core.regularizers import max_admissible_alpha, smallest_comparison_eigenvalue
from hierlab.core.taxonomy import Taxonomy

__all__ = ["AUTO_ALPHA_FRACTION", "CHECK_MAX_NODES", "PAPER_ALPHA", "check_alpha", "resolve_alpha"]

#: ``alpha="auto"``: this fraction of the taxonomy's largest admissible alpha. Half keeps
#: ``lambda_min(Kbar)`` well away from 0 (RDA's step and BCFW's metric stay well conditioned) while
#: the penalty still acts; on IPC titles (limit 0.7218) it is 0.361, on the Hieron tree 0.302.
AUTO_ALPHA_FRACTION = 0.5

#: ``alpha="paper"``: Section 6's alpha, taken where the taxonomy admits it
PAPER_ALPHA = 1.0

#: :func:`check_alpha` answers on trees of at most this many nodes (each answer is a dense
#: eigenproblem over the nodes: IPC's 785 nodes take 1 to 4 s on a shared machine)
CHECK_MAX_NODES = 3000

#: an inadmissible ``alpha`` is suggested as this fraction of the largest admissible one
SUGGESTED_FRACTION = 0.9


def resolve_alpha(alpha: float | str, taxonomy: Taxonomy, limit: float | None = None) -> float:
    """The ``alpha`` that runs: a number as given; ``"auto"`` as :data:`AUTO_ALPHA_FRACTION` of
    :func:`~hierlab.core.regularizers.max_admissible_alpha` (1.0 on a flat taxonomy, where no
    two nodes are in an ancestor relation and alpha is idle); ``"paper"`` as
    :data:`PAPER_ALPHA` (Section 6) when it is strictly below that limit, else as ``"auto"``.
    ``limit``: that largest admissible alpha when the caller already has it (an eigenproblem
    over the nodes otherwise).
    """
    if isinstance(alpha, str):
        word = alpha.strip().lower()
        if word not in ("auto", "paper"):
            raise ParameterError(f"alpha must be a number, 'auto' or 'paper', got {alpha!r}")
        limit = max_admissible_alpha(taxonomy) if limit is None else limit
        if word == "paper" and PAPER_ALPHA < limit:
            return PAPER_ALPHA
        return 1.0 if not np.isfinite(limit) else AUTO_ALPHA_FRACTION * float(limit)
    return float(alpha)


# Each is a dense eigenproblem over the nodes, and a page asks for both more than once per
# rerun: cached per taxonomy (hashed by its nodes and edges; both values are invariant to the
# order of the nodes).
@functools.lru_cache(maxsize=32)
def _min_eigenvalue(taxonomy: Taxonomy, alpha: float) -> float:
    return float(smallest_comparison_eigenvalue(taxonomy, alpha))


@functools.lru_cache(maxsize=8)
def _max_alpha(taxonomy: Taxonomy) -> float:
    return float(max_admissible_alpha(taxonomy))


def check_alpha(taxonomy: Taxonomy, params: dict[str, Any]) -> Check | None:
    """Is ``K`` of eq. (6) admissible for ``params["alpha"]`` on ``taxonomy`` (Corollary 2)?

    Parameters
    ----------
    taxonomy : Taxonomy
    params : dict
        ORTHOGNL's settings; ``alpha`` a number or one of its words.

    Returns
    -------
    Check or None
        ``ok`` is ``lambda_min(Kbar) > 0``; the message gives ``lambda_min(Kbar)`` and the
        largest admissible ``alpha``; ``values`` show a word of ``alpha`` as its number (3
        significant digits, what a number box holds); ``suggested`` lowers an inadmissible
        ``alpha`` to :data:`SUGGESTED_FRACTION` of the limit (2 digits). None without ``alpha``,
        on a DAG and on trees over :data:`CHECK_MAX_NODES` nodes.
    """
    alpha = params.get("alpha")
    if alpha is None or not taxonomy.is_tree or taxonomy.n_nodes > CHECK_MAX_NODES:
        return None
    values = dict(params)
    try:
        amax = _max_alpha(taxonomy)
        if isinstance(alpha, str):
            values["alpha"] = float(f"{resolve_alpha(alpha, taxonomy, amax):.3g}")
        lam = _min_eigenvalue(taxonomy, resolve_alpha(values["alpha"], taxonomy, amax))
    except Exception as exc:  # a check must never break the page that asks
        return Check(None, f"check unavailable: {exc}", values, values)
    shown = f"comparison matrix λ_min = {lam:.4g} (α must stay below {amax:.4g})"
    if lam > 0:
        return Check(True, f"Admissible: {shown}", values, values)
    suggested = dict(values)
    if math.isfinite(amax):
        suggested["alpha"] = float(f"{SUGGESTED_FRACTION * amax:.2g}")
    return Check(False, f"Not admissible: {shown}", values, suggested)
