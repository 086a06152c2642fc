"""Guided demos: each preset runs end to end and shows what it says it shows."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from hierlab.core.exceptions import ParameterError
from hierlab.core.registry import get_method
from hierlab.core.regularizers import max_admissible_alpha
from hierlab.lab.demos import DEMOS, DemoResult, list_demos, run_demo
from hierlab.lab.export import export_notebook, export_script


@pytest.fixture(scope="module")
def results() -> dict[str, DemoResult]:
    return {name: run_demo(name) for name in list_demos()}


def test_at_least_three_presets_as_data() -> None:
    assert len(DEMOS) >= 3
    for preset in DEMOS.values():
        assert preset.title and preset.question and preset.look_at
        assert len(preset.runs) >= 2
        for r in preset.runs:
            spec = get_method(r.method)  # registered
            for k, v in r.params.items():
                spec.param(k).validate(v)
        # every preset is an exportable session
        session = preset.session()
        script = export_script(session)
        assert json.dumps(export_notebook(script=script))
        assert preset.data in script


def test_every_demo_runs_with_progress(results: dict[str, DemoResult]) -> None:
    seen: list[float] = []
    res = run_demo("certified-optimality", progress=lambda f, text: seen.append(f))
    assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
    for name, res in results.items():
        assert [r.label for r in res.runs] == [r.label for r in DEMOS[name].runs]
        assert len(res.metrics) == len(res.runs)
        assert res.figures and all(isinstance(f, go.Figure) for f in res.figures.values())
        assert res.observations
        for r in res.runs:
            assert 0.0 <= r.metrics["accuracy"] <= 1.0
        assert not any(k.startswith("_") for k in res.extra)


def test_hierarchy_helps(results: dict[str, DemoResult]) -> None:
    res = results["hierarchy-helps"]
    tree, flat = res.runs
    assert tree.estimator.hierarchy == "tree" and flat.estimator.hierarchy == "flat"
    # the hierarchy's effect: fewer far mistakes and a lower tree-induced error
    assert res.extra["tree_error"] < res.extra["flat_error"]
    assert res.extra["far_tree"] < res.extra["far_flat"]
    diff = res.figures["gamma difference (tree - flat)"].data[0]
    y = np.asarray(diff.y, dtype=float)
    x = np.asarray(diff.x, dtype=float)
    assert np.isclose(y.sum(), 0.0, atol=1e-12)  # two distributions over the same test set
    assert y[x >= 3].sum() < 0


def test_certified_optimality(results: dict[str, DemoResult]) -> None:
    res = results["certified-optimality"]
    ortho = res.runs[0]
    est = ortho.estimator
    hist = ortho.history
    # certified: lower <= upper at every iteration, the gap closes below the tolerance
    assert (hist["lower"].to_numpy() <= hist["upper"].to_numpy() + 1e-12).all()
    assert est.converged_ and est.gap_ <= max(1e-3, 1e-3 * est.objective_) + 1e-12
    assert hist["upper"].is_monotonic_decreasing and hist["lower"].is_monotonic_increasing
    # the admissibility limit is the taxonomy's, and an alpha above it is refused by name
    amax = max_admissible_alpha(ortho.taxonomy)
    assert res.extra["max_alpha"] == pytest.approx(amax)
    assert ortho.spec.params["alpha"] < amax < res.extra["inadmissible_alpha"]
    assert "not admissible" in res.extra["inadmissible_error"]
    assert f"{amax:.6g}" in res.extra["inadmissible_error"]
    assert res.extra["lambda_min"] > 0
    curve = res.figures["admissibility"].data[0]
    xs, lams = np.asarray(curve.x, float), np.asarray(curve.y, float)
    below, above = xs < amax * (1 - 1e-9), xs > amax * (1 + 1e-9)
    assert (lams[below] > 0).all() and (lams[above] < 0).all() and below.any() and above.any()


def test_induce_taxonomy(results: dict[str, DemoResult]) -> None:
    res = results["induce-taxonomy"]
    mf = res.runs[0]
    induced = res.extra["induced_taxonomy"]
    assert induced is mf.estimator.taxonomy_
    # a binary tree whose leaves are the classes
    assert set(np.unique(induced.n_children)) <= {0, 2}
    # MF-Tree recovers the hidden grouping: far closer to the truth than chance
    assert res.extra["tree_mse"] < 0.75 * res.extra["random_tree_mse"]
    assert res.extra["tree_mse"] < 1.1 * res.extra["best_binary_mse"]


def test_unknown_demo() -> None:
    with pytest.raises(ParameterError, match="unknown demo"):
        run_demo("nope")
