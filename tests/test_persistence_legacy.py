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


def test_every_registered_method_has_a_legacy_file() -> None:
    assert sorted(EXPECTED) == hierlab.list_methods()
