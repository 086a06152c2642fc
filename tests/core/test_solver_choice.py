"""Solver tables: a family's ``solver`` parameter chooses a row of its table, never a branch.

Each table's rows are its estimators' ``solver`` choices (NHSVM's also ``"auto"``, resolved to
a row), every row builds a solver of the contract, and a name outside the table is refused
with the table's names.
"""

from __future__ import annotations

import numpy as np
import pytest

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import get_method
from hierlab.core.solver import Solver, choose_solver
from hierlab.methods.hr.estimators import HR_SOLVER_TABLE
from hierlab.methods.nhsvm.estimators import HINGE_SOLVERS, SHARED_SOLVERS
from hierlab.methods.orthogonal.estimators import SOLVER_TABLE

TABLES = [
    ("flatmult", SOLVER_TABLE, ()),
    ("orthognl", SOLVER_TABLE, ()),
    ("hsvm", HINGE_SOLVERS, ("auto",)),
    ("nhsvm", HINGE_SOLVERS, ("auto",)),
    ("ssvm", SHARED_SOLVERS, ("auto",)),
    ("hr-svm", HR_SOLVER_TABLE, ()),
    ("hr-lr", HR_SOLVER_TABLE, ()),
]


@pytest.mark.parametrize(("method", "table", "extra"), TABLES, ids=[t[0] for t in TABLES])
def test_the_solver_parameter_chooses_a_row_of_the_table(
    method: str, table: dict[str, object], extra: tuple[str, ...]
) -> None:
    spec = get_method(method)
    (param,) = [p for p in spec.estimator._parameters if p.name == "solver"]
    assert set(param.choices) == set(table) | set(extra)
    est = spec.estimator()
    for name, row in table.items():
        args = (np.ones(3),) if method == "ssvm" else ("hinge",) if method.startswith("hr") else ()
        if method == "ssvm":
            est.alpha_floor = 0.0
        est._solver_used = name  # what fit sets before it builds
        assert isinstance(choose_solver(table, name).build(est, *args), Solver), name
        assert row.describe(est)


def test_a_name_outside_the_table_is_refused_with_its_names() -> None:
    with pytest.raises(ParameterError, match=r"solver must be one of \['bcfw', 'rda'\], got 'sgd'"):
        choose_solver(SOLVER_TABLE, "sgd")
