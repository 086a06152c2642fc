"""The solver race (hierlab.lab.race) against the SLSQP optimum of small problems.

Every state of every racer brackets the exact optimum ``J*`` (``tests/solvers/test_rda.py``'s
SLSQP oracle); the certified gap never grows; all racers start from ``J(0)``; the summary's
numbers are those of the traces; the figure draws one line per solver on a log axis.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.lab.race import SOLVERS, run_race
from hierlab.plots import race_figure
from tests.solvers.test_rda import C_ORACLE, TREES, cached_optimum, make_problem

CASE = ("9 nodes, depth 3", 1)
#: the oracle's problems (ORTHOGNL's with alpha = 0.6 on 7 nodes: its epigraph is enumerated)
ORACLE = {"flatmult": (CASE, {}), "orthognl": (("7 nodes", 2), {"alpha": 0.6})}


@pytest.mark.parametrize("method", list(ORACLE))
def test_three_certified_traces(method: str) -> None:
    (tree, seed), params = ORACLE[method]
    tax, X, y = make_problem(TREES[tree], seed=seed)
    J_star = cached_optimum(method, tree, seed)
    seen: list[tuple[str, float]] = []
    res = run_race(
        X,
        tax.names[y],
        tax,
        method=method,
        C=C_ORACLE,
        max_time=0.3,
        params=params,
        progress=lambda s, f: seen.append((s, f)),
    )
    assert list(res.traces) == ["rda-paper", "rda-linesearch", "bcfw"]
    assert res.J0 == pytest.approx(C_ORACLE * len(y))  # unit-margin hinge at W = 0
    for name, df in res.traces.items():
        assert len(df) >= 2, name
        up, lo, gap = (df[c].to_numpy(dtype=float) for c in ("upper", "lower", "gap"))
        slack = 1e-7 * J_star  # SLSQP's own accuracy (as tests/solvers/test_rda.py)
        assert np.all(lo <= J_star + slack) and np.all(up >= J_star - slack), name
        assert np.all(np.diff(up) <= 0) and np.all(np.diff(lo) >= 0), name
        assert np.all(np.diff(gap) <= 1e-12 * res.J0), name
        np.testing.assert_allclose(gap, up - lo, rtol=0, atol=0)
        assert np.all(np.diff(df["seconds"].to_numpy()) >= 0), name
        assert up[0] == pytest.approx(res.J0, rel=1e-12), name  # every racer starts at W = 0
        assert df["seconds"].iloc[-1] >= 0.3 or gap[-1] == 0.0, name  # used its budget
    # progress: per solver, in running order, fractions rising to 1
    fr = [f for _, f in seen]
    assert [s for s, _ in seen] == sorted((s for s, _ in seen), key=list(SOLVERS).index)
    assert all(0 <= a <= b <= 1 for a, b in itertools.pairwise(fr)) and fr[-1] == 1.0
    summary = res.summary()
    for name, df in res.traces.items():
        row, last = summary.loc[name], df.iloc[-1]
        assert row["gap"] == last["gap"] and row["iterations"] == last["iteration"]
        expect = math.log10(res.J0 / last["gap"]) / last["seconds"]
        assert row["decades_per_second"] == pytest.approx(expect, rel=1e-12)


def test_race_figure_one_log_line_per_solver() -> None:
    tree, seed = CASE
    tax, X, y = make_problem(TREES[tree], seed=seed)
    res = run_race(X, y, tax, method="flatmult", C=C_ORACLE, max_time=0.2)
    fig = race_figure(res)
    assert [t.name for t in fig.data] == list(res.traces)
    assert fig.layout.yaxis.type == "log"
    for t in fig.data:
        df = res.traces[t.name]
        pos = df["gap"].to_numpy() > 0
        np.testing.assert_array_equal(np.asarray(t.x), df["seconds"].to_numpy()[pos])
        np.testing.assert_array_equal(np.asarray(t.y), df["gap"].to_numpy()[pos])
    with pytest.raises(DataError):
        race_figure({})


def test_race_refuses_what_it_cannot_run() -> None:
    tax, X, y = make_problem(TREES["5 nodes"], seed=1)
    with pytest.raises(ParameterError, match="solver"):
        run_race(X, y, tax, solvers=("rda-paper", "sgd"), max_time=0.1)
    with pytest.raises(ParameterError, match="seed-000"):
        run_race(X, y, tax, method="hieron", max_time=0.1)
    with pytest.raises(ParameterError, match="max_time"):
        run_race(X, y, tax, max_time=0)
    with pytest.raises(ParameterError, match="C"):
        run_race(X, y, tax, C=-1.0, max_time=0.1)
    with pytest.raises(DataError):
        run_race(X, np.array(["no such node"] * len(y)), tax, max_time=0.1)
    with pytest.raises(DataError, match="rows"):
        run_race(X[:-1], y, tax, max_time=0.1)
