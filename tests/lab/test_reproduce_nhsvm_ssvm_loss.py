"""``hierlab reproduce nhsvm --ssvm-loss``: Shared SVM with eq. (14)'s fixed Δ and with NHSVM's
normalised Δ~ of eq. (9), side by side on the same draws, compared draw by draw."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from scipy import stats

from hierlab.core.exceptions import ParameterError
from hierlab.lab.reproduce import nhsvm
from hierlab.lab.tables import run_reproduction


def test_rows_follow_the_options() -> None:
    ns = argparse.Namespace
    assert nhsvm.methods(ns(methods="SSVM,NHSVM,HSVM,FlatSVM", ssvm_loss="fixed")) == list(
        nhsvm.METHODS
    )
    assert nhsvm.methods(ns(methods="NHSVM,SSVM", ssvm_loss="both")) == [
        "SSVM", nhsvm.SSVM_NORMALIZED, "NHSVM",
    ]
    assert nhsvm.methods(ns(methods="SSVM", ssvm_loss="normalized")) == [nhsvm.SSVM_NORMALIZED]
    with pytest.raises(ParameterError, match="unknown rows"):
        nhsvm.methods(ns(methods="SSVM,LinearSVC", ssvm_loss="fixed"))


def test_paired_comparison_by_hand() -> None:
    a = [70.0, 71.5, 69.0, 72.0, 70.5]
    b = [71.0, 71.0, 70.5, 73.5, 70.5]
    d = np.subtract(b, a)
    c = nhsvm.paired(a, b)
    sd = math.sqrt(sum((x - d.mean()) ** 2 for x in d) / (len(d) - 1))
    t = d.mean() / (sd / math.sqrt(len(d)))
    assert c["mean"] == pytest.approx(0.7) and c["sd"] == pytest.approx(sd)
    assert c["t_p"] == pytest.approx(2 * stats.t.sf(abs(t), len(d) - 1), rel=1e-12)
    assert (c["wins"], c["n"]) == (3, 5)
    assert 0 < c["wilcoxon_p"] <= 1
    same = nhsvm.paired(a, a)
    assert same["mean"] == 0 and math.isnan(same["t_p"])


def test_both_forms_run_on_the_same_draws() -> None:
    res = run_reproduction(
        "nhsvm", quick=True, kinds="unbalanced", n_samples=300, n_features=20, epochs=2,
        lambdas="1e-3", methods="SSVM", ssvm_loss="both",
    )
    (table,) = res.tables.values()
    assert list(table["method"]) == ["SSVM", nhsvm.SSVM_NORMALIZED]
    assert "normalized" in table["chosen"].iloc[1] and "normalized" not in table["chosen"].iloc[0]
    assert table["accuracy % (ours)"].between(0, 100).all()


def test_run_kind_reports_each_fit_before_it_starts() -> None:
    args = argparse.Namespace(
        quick=True, n_samples=300, n_features=20, epochs=2, repeats=2, first_seed=0,
        solver="pegasos", tol=1e-3, batch_size=128, methods="SSVM,FlatSVM", ssvm_loss="both",
    )  # fmt: skip
    steps: list[tuple[float, str]] = []
    out = nhsvm.run_kind("unbalanced", args, [1e-3, 1e-1], lambda f, t: steps.append((f, t)))
    holdout = [t for _, t in steps if "hold-out" in t]
    draws = [t for _, t in steps if "draw" in t]
    # hold-out (quick: one fixed Δ): 2 lambdas each of FlatSVM, SSVM, SSVM-Δ~; then 2 draws
    assert len(holdout) == sum(len(v) for v in out["holdout"].values()) == 2 + 2 + 2
    assert draws == [f"unbalanced: draw {r}/2, {m}" for r in (1, 2) for m in out["methods"]]
    fractions = [f for f, _ in steps]
    assert fractions[0] == 0 and fractions == sorted(fractions) and fractions[-1] < 1
    assert all(t.startswith("unbalanced: ") for _, t in steps)
