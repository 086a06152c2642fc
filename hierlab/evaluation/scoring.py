"""Hierarchical scorers for scikit-learn's model selection (``GridSearchCV``, ``cross_val_score``).

A scorer reads the taxonomy from the fitted estimator (``taxonomy_``), so one scorer works for
every hierlab estimator and every taxonomy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hierlab.core.exceptions import ParameterError

__all__ = ["SCORERS", "hierarchical_scorer"]

#: metric name -> (function name in hierlab.evaluation.metrics, greater is better)
SCORERS: dict[str, tuple[str, bool]] = {
    "accuracy": ("accuracy", True),
    "accuracy_ancestor": ("accuracy_ancestor", True),
    "tree_induced_error": ("tree_induced_error", False),
    "micro_f1": ("micro_f1", True),
    "macro_f1": ("macro_f1", True),
    "hierarchical_f1": ("hierarchical_prf", True),
}


def hierarchical_scorer(metric: str = "tree_induced_error") -> Callable[[Any, Any, Any], float]:
    """A scorer ``(estimator, X, y) -> float`` where greater is better.

    Losses (zero-one error, tree-induced error) are negated, as scikit-learn's ``neg_*`` scorers
    are. ``"accuracy"`` is exact match; ``"accuracy_ancestor"`` is seed 000's ancestor rule
    (:data:`hierlab.evaluation.metrics.METRICS` defines each).

    Parameters
    ----------
    metric : {"accuracy", "accuracy_ancestor", "tree_induced_error", "micro_f1", "macro_f1", \
"hierarchical_f1"}

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV  # doctest: +SKIP
    >>> GridSearchCV(est, {"C": [0.1, 1]}, scoring=hierarchical_scorer())  # doctest: +SKIP
    """
    if metric not in SCORERS:
        raise ParameterError(f"unknown metric {metric!r}; choose one of {sorted(SCORERS)}")
    fname, greater = SCORERS[metric]

    def scorer(estimator: Any, X: Any, y: Any) -> float:
        from hierlab.evaluation import metrics

        func = getattr(metrics, fname)
        value = func(y, estimator.predict(X), estimator.taxonomy_)
        if fname == "hierarchical_prf":
            value = value.f1
        return float(value) if greater else -float(value)

    scorer.__name__ = f"hierarchical_{metric}"
    return scorer
