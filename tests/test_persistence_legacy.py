"""Model files written before the package took its current layout still load and predict alike.

``tests/data/legacy_models`` holds one file per registered method, saved by hierlab at commit
4fd8bfb (old module paths such as ``hierlab.estimators.orthogonal.OrthogonalTransferSVM``), with
the predictions that version made on ``X.npy``.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import hierlab

DATA = Path(__file__).parent / "data" / "legacy_models"
EXPECTED = json.loads((DATA / "predictions.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_old_model_file_loads_and_predicts_the_same(name: str) -> None:
    est = hierlab.load(DATA / f"{name}.hlm")
    spec = hierlab.get_method(name)
    assert type(est) is spec.estimator  # today's class, through the old path
    X = np.load(DATA / "X.npy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = [str(v) for v in est.predict(X)]
    assert pred == EXPECTED[name]


#: the registry at 4fd8bfb, when the files were written: each of its methods has a file
METHODS_AT_4FD8BFB = [
    "cmtl", "flatmult", "hiermult", "hieron", "hieron-batch", "hieron-flat", "hieron-greedy",
    "hr-lr", "hr-svm", "hsvm", "mftree", "nhsvm", "nhsvm13", "orthognl", "ovr-lr", "ovr-svm",
    "ssvm", "topdown", "transfer", "treeloss",
]  # fmt: skip


def test_every_method_of_that_version_has_a_legacy_file() -> None:
    assert sorted(EXPECTED) == METHODS_AT_4FD8BFB
    assert set(METHODS_AT_4FD8BFB) <= set(hierlab.list_methods())  # none was dropped


@pytest.mark.parametrize("name", ["ovr-lr", "ovr-svm"])
def test_old_one_vs_rest_files_say_liblinear_fitted_them(name: str) -> None:
    """Those files predate the global-CD default: their parameters and ``solver_`` say what
    fitted them (liblinear per leaf), not today's default solver."""
    est = hierlab.load(DATA / f"{name}.hlm")
    assert est.get_params()["solver"] == "liblinear" and est.solver_ == "liblinear"
    assert "liblinear" in est.algorithm_


@pytest.mark.parametrize("name", ["hr-svm", "hr-lr", "ovr-lr", "ovr-svm"])
def test_old_seed001_files_had_no_intercept(name: str) -> None:
    """Those files predate ``fit_intercept`` (default True today): they load as fitted, with
    ``fit_intercept=False`` and a zero ``intercept_``."""
    est = hierlab.load(DATA / f"{name}.hlm")
    assert est.get_params()["fit_intercept"] is False
    np.testing.assert_array_equal(est.intercept_, np.zeros(est.taxonomy_.n_nodes))
