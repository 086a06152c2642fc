"""Every public evaluation call validates its arguments: ``compare``, ``tune``, ``explain``.

Each case raised a raw ``KeyError``, ``AttributeError``, ``ValueError`` or
``ZeroDivisionError`` on main, or aborted a whole comparison for one failing fit. Each must now
raise a hierlab error naming the argument, or, for a fit that fails, finish the comparison with
that (method, split) pair recorded as failed. Mutations that make them fail: dropping the
declarations of compare's keywords, ``_fit_one_recorded``'s catch, tune's ``_C_GRID`` /
``_VALIDATION`` checks or its row-count check, ``check_X``'s DataError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hierlab
from hierlab.core.exceptions import HierlabError
from hierlab.core.registry import register
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation.compare import compare
from hierlab.evaluation.tune import tune

TAX = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])


def _data() -> hierlab.HierDataset:
    rng = np.random.default_rng(0)
    leaves = TAX.names[TAX.leaves]
    lab = np.arange(40) % len(leaves)
    X = np.abs(rng.normal(size=(len(leaves), 4))[lab] * 3 + rng.normal(size=(40, 4)))
    return hierlab.HierDataset(X=X, y=leaves[lab].astype(object), taxonomy=TAX, name="toy")


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"methods": [{"params": {}}]}, "name"),
        ({"methods": [{"name": "topdown", "params": [1, 2]}]}, "params"),
        ({"methods": [("topdown", "C=1")]}, "params"),
        ({"methods": ["no-such"]}, "no-such"),
        ({"methods": [("topdown", {"C": -1})]}, "'C'"),
        ({"methods": "topdown"}, "methods"),
        ({"n_splits": 0}, "n_splits"),
        ({"n_splits": 1000, "split": "kfold"}, "n_splits"),
        ({"n_splits": 2.5}, "n_splits"),
        ({"test_size": 0}, "test_size"),
        ({"test_size": 1.0}, "test_size"),
        ({"test_size": 0.99}, "test_size"),
        ({"random_state": -1}, "random_state"),
        ({"progress": 3}, "progress"),
        ({"progress": lambda *a: 1 / 0}, "progress"),
    ],
)
def test_compare_arguments(kwargs: dict[str, Any], word: str) -> None:
    kw: dict[str, Any] = {"methods": ["topdown"], "n_splits": 2, **kwargs}
    with pytest.raises(HierlabError, match=word):
        compare(_data(), **kw)


class _ThirdFitFails(hierlab.TopDownClassifier):
    """A method that raises on its third fit (as a solver meeting bad data would)."""

    fits = 0

    def fit(self, X: Any, y: Any, callbacks: Any = ()) -> Any:
        type(self).fits += 1
        if type(self).fits == 3:
            raise ArithmeticError("the third fit fails")
        return super().fit(X, y, callbacks)


def test_a_failing_fit_is_recorded_and_the_comparison_goes_on() -> None:
    _ThirdFitFails.fits = 0
    est = _ThirdFitFails(taxonomy=TAX)
    cmp = compare(_data(), [("flaky", est), "flatmult"], n_splits=3, random_state=0)
    assert cmp.failures == {("flaky", 2): "ArithmeticError: the third fit fails"}
    done = cmp.results.drop_duplicates(["method", "split"])
    assert sorted(zip(done["method"], done["split"], strict=True)) == [
        ("flaky", 0), ("flaky", 1), ("flatmult", 0), ("flatmult", 1), ("flatmult", 2)
    ]  # fmt: skip
    assert set(cmp.summary().index) == {"flaky", "flatmult"}
    tests = cmp.tests("flatmult")
    assert np.isfinite(tests.loc["flaky", "accuracy_diff"])  # on splits 0 and 1


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"Cs": ["a"]}, "Cs"),
        ({"Cs": [0.0, 1.0]}, "Cs"),
        ({"Cs": "1,2"}, "Cs"),
        ({"Cs": []}, "Cs"),
        ({"validation": 0.999}, "validation"),
        ({"validation": 0.0}, "validation"),
        ({"validation": "x"}, "validation"),
        ({"random_state": -2}, "random_state"),
    ],
)
def test_tune_arguments(kwargs: dict[str, Any], word: str) -> None:
    d = _data()
    with pytest.raises(HierlabError, match=word):
        tune(hierlab.make_estimator("flatmult", taxonomy=TAX), d.X, d.y, **kwargs)


def test_tune_refuses_x_and_y_of_different_lengths() -> None:
    d = _data()
    with pytest.raises(HierlabError, match="40 rows but y has 39"):
        tune(hierlab.make_estimator("flatmult", taxonomy=TAX), d.X, d.y[:-1])


@pytest.mark.parametrize("row", ["nan", "wide", "narrow"])
def test_explain_refuses_a_bad_row(row: str) -> None:
    d = _data()
    est = hierlab.make_estimator("topdown", taxonomy=TAX).fit(d.X, d.y)
    x = {"nan": np.array([np.nan, 1.0, 0.0, 0.0]), "wide": np.ones(5), "narrow": np.ones(3)}[row]
    with pytest.raises(HierlabError, match=r"NaN|features"):
        hierlab.explain(est, x)


def test_register_is_untouched() -> None:
    assert register is not None  # the registry is not changed by these tests
