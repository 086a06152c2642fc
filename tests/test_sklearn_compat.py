"""Every registered estimator passes scikit-learn's estimator checks (flat taxonomy by default)."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

import hierlab
from hierlab.experiments.registry import get_method


def _instances() -> list:
    out = []
    for name in hierlab.list_methods():
        spec = get_method(name)
        out.append(hierlab.make_estimator(name, **getattr(spec, "check_params", {})))
    return out


@parametrize_with_checks(_instances())
def test_sklearn_estimator_checks(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
