"""One definition of multi-label (:func:`hierlab.core.dataset.is_multilabel`) and its users.

Mutations these tests catch: ``any`` -> ``all`` over the rows (the mixed ``y`` and the
HierDataset case), dropping the indicator branch (the sparse and 2-D cases), a user that
re-implements the test on the first row only (``isinstance(y[0], tuple)``: the mixed case
through :func:`hierlab.evaluation.compare` 's per-example correctness).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from hierlab import NHSVMClassifier, TopDownClassifier
from hierlab.core.dataset import (
    HierDataset,
    encode_labels,
    is_label_set,
    is_multilabel,
    label_names,
)
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation import metrics
from hierlab.evaluation.compare import _correct

TAX = Taxonomy.from_edges([("r", "a"), ("a", "b"), ("a", "c"), ("r", "d")])


def _objects(rows: list) -> np.ndarray:
    out = np.empty(len(rows), dtype=object)
    out[:] = rows
    return out


@pytest.mark.parametrize(
    ("y", "multi"),
    [
        ([], False),
        ("bd", False),
        (["b", "d"], False),
        (np.array(["b", "d"]), False),
        (np.array([1, 2]), False),
        (pd.Series(["b", "d"]), False),
        ([("b", "d"), ("c",)], True),
        ([["b"], {"c", "d"}], True),
        ([frozenset({"b"}), np.array(["c"])], True),
        ([("b", "d"), "d"], True),  # a scalar row beside label sets: a set of one label
        (["d", ("b", "d")], True),
        (pd.Series([("b",), ("c",)]), True),
        (np.zeros((2, 5)), True),
        (sp.csr_matrix(np.eye(5)), True),
        (pd.DataFrame(np.eye(5)), True),
        (iter([("b",)]), False),  # not a sized sequence: never consumed
    ],
)
def test_is_multilabel(y, multi: bool) -> None:
    assert is_multilabel(y) is multi


def test_metrics_uses_the_one_definition() -> None:
    assert metrics.is_multilabel is is_multilabel


def test_a_scalar_row_of_a_multilabel_y_is_a_set_of_one_label() -> None:
    y = _objects([("b", "d"), "d", ("c",)])
    Y = encode_labels(y, TAX).toarray()
    want = np.zeros((3, TAX.n_nodes))
    for i, labels in enumerate([("b", "d"), ("d",), ("c",)]):
        want[i, TAX.index(list(labels))] = 1.0
    np.testing.assert_array_equal(Y, want)
    np.testing.assert_array_equal(metrics.label_indicator(y, TAX).toarray(), want)
    ds = HierDataset(np.zeros((3, 2)), y, TAX)
    assert ds.is_multilabel and list(ds.y) == [("b", "d"), ("d",), ("c",)]
    assert all(is_label_set(v) for v in ds.y)


def test_label_names_are_str_or_tuples_of_str() -> None:
    assert label_names([1, "b", np.int64(3)]).tolist() == ["1", "b", "3"]
    assert label_names([[1, "b"], "c", {"d"}]).tolist() == [("1", "b"), ("c",), ("d",)]


def test_compare_counts_a_mixed_y_as_multilabel() -> None:
    y_true = _objects(["d", ("b", "c")])
    y_pred = _objects([("d",), ("c", "b")])  # the same sets, in another order
    assert _correct(y_true, y_pred, TAX).tolist() == [True, True]


@pytest.mark.parametrize("est", [TopDownClassifier, NHSVMClassifier])
def test_estimators_refuse_a_scalar_row_beside_label_sets(est) -> None:
    X = np.arange(8.0).reshape(4, 2)
    y = _objects([("b", "d"), "d", ("c",), ("d",)])
    with pytest.raises(DataError, match=r"y mixes tuple and str values \(y\[0\] = .*y\[1\] = 'd'"):
        est(taxonomy=TAX).fit(X, y)
    y[1] = None
    with pytest.raises(DataError, match=r"y\[1\] is None: every row needs a label"):
        est(taxonomy=TAX).fit(X, y)
