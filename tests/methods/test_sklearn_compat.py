"""Every registered estimator passes scikit-learn's estimator checks (flat taxonomy by default)."""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

import hierlab

# Like scikit-learn's own ``_set_checking_parameters``: the checks test the API, not convergence,
# so iterative methods get small iteration budgets. (Some checks fit unscaled data, X ~ N(100, 1)
# with random labels, where the HR methods would otherwise run their whole default budgets.)
CHECK_PARAMS: dict[str, dict[str, object]] = {
    "hr-svm": {"max_iter": 30},
    "hr-lr": {"max_inner_iter": 50},
}


def _instances() -> list:
    return [hierlab.make_estimator(n, **CHECK_PARAMS.get(n, {})) for n in hierlab.list_methods()]


@parametrize_with_checks(_instances())
def test_sklearn_estimator_checks(estimator, check) -> None:  # type: ignore[no-untyped-def]
    check(estimator)
