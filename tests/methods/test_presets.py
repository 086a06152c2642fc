"""Presets, "what ran" and ignored parameters (issue #19).

- every registered method has a "paper" and a "fast" preset, "fast" is the constructor
  defaults, ``make_estimator(preset=...)`` applies them and explicit values override them;
- ``preset="paper"`` of a seed-000 method runs Algorithm 1 with the printed weights 1/t (its
  iterates against the paper's equations: test_seed000_transcriptions.py);
- the other families' "paper" presets run the seed's algorithm (checked on ``algorithm_``
  and, for Hieron, against the online hypothesis);
- every registered estimator says what ran (``solver_``, ``algorithm_``) after fit;
- a non-default parameter the chosen solver ignores is warned about, naming both.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hierlab.core.cards import method_card
from hierlab.core.exceptions import IgnoredParameterWarning, ParameterError
from hierlab.core.registry import get_method, list_methods, make_estimator
from hierlab.core.taxonomy import Taxonomy

SEED000 = ["orthognl", "flatmult", "hiermult", "transfer", "treeloss"]



def small_problem(seed: int = 0, n: int = 24, d: int = 3):
    """A 7-node tree, ``n`` rows labelled with leaves, ``d`` features."""
    rng = np.random.default_rng(seed)
    tax = Taxonomy.from_parent_array([-1, 0, 0, 1, 1, 2, 2])
    proto = rng.normal(size=(tax.n_nodes, d))
    y = rng.choice(tax.leaves, size=n)
    X = proto[y] + 0.8 * rng.normal(size=(n, d))
    return tax, X, y


def fit_quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


# ---------------------------------------------------------------------- the registry
@pytest.mark.parametrize("name", list_methods())
def test_every_method_has_paper_and_fast_presets(name: str) -> None:
    spec = get_method(name)
    assert set(spec.presets) == {"paper", "fast"}
    paper, fast = spec.preset("paper"), spec.preset("fast")
    assert set(paper) == set(fast)
    defaults = spec.defaults()
    assert fast == {k: defaults[k] for k in fast}  # "fast" = today's defaults
    est = make_estimator(name, preset="paper")
    params = est.get_params(deep=False)
    for k, v in paper.items():
        assert params[k] == v
    for k, v in spec.fixed.items():  # a preset never overrides the registry entry
        assert params[k] == v
    default_est = make_estimator(name)
    assert make_estimator(name, preset="fast").get_params() == default_est.get_params()
    # the card documents both presets, with the values
    text = method_card(name).markdown()
    assert "**Presets.**" in text and "`paper`" in text and "`fast`" in text
    for k, v in paper.items():
        assert f"{k}={v!r}" in text
    assert method_card(name).presets.strip(), name


def test_explicit_values_override_the_preset_and_unknown_presets_are_refused() -> None:
    est = make_estimator("flatmult", preset="paper", averaging="linesearch", C=2.0)
    assert (est.solver, est.averaging, est.C) == ("rda", "linesearch", 2.0)
    with pytest.raises(ParameterError, match=r"no preset 'slow'.*'paper', 'fast'"):
        make_estimator("flatmult", preset="slow")


def test_active_params_follow_used_when() -> None:
    spec = get_method("orthognl")
    bcfw = {p.name for p in spec.active_params({"solver": "bcfw"})}
    rda = {p.name for p in spec.active_params({"solver": "rda"})}
    assert rda - bcfw == {"averaging", "split"}
    assert {p.name for p in spec.active_params({})} == bcfw  # the default solver is bcfw
    assert bcfw | {"averaging", "split"} == {p.name for p in spec.params}


# ---------------------------------------------------------------------- Algorithm 1
# The seed-000 presets are compared with Algorithm 1 transcribed from the paper, iterate by
# iterate and with their own stop, in test_seed000_transcriptions.py; plain Pegasos in
# test_pegasos_transcription.py.


# ---------------------------------------------------------------------- what ran
@pytest.mark.parametrize("name", list_methods())
def test_every_estimator_says_what_ran(name: str) -> None:
    tax, X, y = small_problem(seed=2, n=40)
    for preset in ("fast", "paper"):
        kw = {"max_iter": 5} if "max_iter" in get_method(name).defaults() else {}
        if name in SEED000 and preset == "paper":
            kw["max_iter"] = 30
        est = make_estimator(name, taxonomy=tax, preset=preset, **kw)
        fit_quiet(est, X, tax.names[y])
        assert isinstance(est.solver_, str) and est.solver_, (name, preset)
        assert isinstance(est.algorithm_, str) and est.algorithm_.strip(), (name, preset)
        assert "\n" not in est.algorithm_
        if preset == "paper":  # every method: its paper preset runs its card's algorithm
            assert method_card(name).paper_algorithm.strip(), name
            assert est.algorithm_ == method_card(name).paper_algorithm


def test_seed000_fast_preset_says_bcfw() -> None:
    tax, X, y = small_problem()
    est = fit_quiet(make_estimator("orthognl", taxonomy=tax, preset="fast"), X, tax.names[y])
    assert (est.solver_, est.algorithm_) == ("bcfw", "BCFW on the dual")
    est = make_estimator("orthognl", taxonomy=tax, solver="rda", max_iter=20)
    fit_quiet(est, X, tax.names[y])
    assert est.algorithm_ == "Algorithm 1 of seed 000 (RDA), line-search weights"


# ---------------------------------------------------------------------- ignored parameters
def test_a_parameter_the_solver_ignores_is_warned_about() -> None:
    tax, X, y = small_problem()
    est = make_estimator("flatmult", taxonomy=tax, averaging="uniform", max_iter=20)
    with pytest.warns(IgnoredParameterWarning, match=r"averaging='uniform'.*solver='bcfw'"):
        fit_quiet_but(est, X, tax.names[y], IgnoredParameterWarning)
    est = make_estimator("orthognl", taxonomy=tax, split="jacobi", max_iter=20)
    with pytest.warns(IgnoredParameterWarning, match=r"split='jacobi'.*solver='bcfw'"):
        fit_quiet_but(est, X, tax.names[y], IgnoredParameterWarning)


def test_no_warning_when_the_solver_uses_it_or_it_is_left_at_its_default() -> None:
    tax, X, y = small_problem()
    for params in ({"averaging": "uniform", "solver": "rda"}, {"solver": "bcfw"}, {}):
        est = make_estimator("flatmult", taxonomy=tax, max_iter=20, **params)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, tax.names[y])
        assert not [w for w in caught if issubclass(w.category, IgnoredParameterWarning)]


def fit_quiet_but(est, X, y, keep: type) -> None:
    """Fit with every warning silenced but ``keep``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", keep)
        est.fit(X, y)


# ---------------------------------------------------------------------- the CLI
def test_cli_fit_takes_a_preset_and_reports_what_ran(capsys) -> None:  # type: ignore[no-untyped-def]
    import json
    from pathlib import Path

    from hierlab.cli import main

    data = Path(__file__).resolve().parents[2] / "datasets"
    base = ["fit", str(data / "example_paths.csv"), "--method", "flatmult", "--json"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main([*base, "--preset", "paper", "--param", "max_iter=30"]) == 0
        paper = json.loads(capsys.readouterr().out)
        assert main([*base, "--param", "max_iter=30"]) == 0
        fast = json.loads(capsys.readouterr().out)
    assert (paper["solver"], paper["algorithm"]) == (
        "rda", "Algorithm 1 of seed 000 (RDA), weights 1/t"
    )
    assert (fast["solver"], fast["algorithm"]) == ("bcfw", "BCFW on the dual")
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "--preset paper: solver='rda', averaging='uniform', C='1/n', tol=1e-05, rtol=0.0" in out


def test_hieron_kernel_parameters_the_linear_kernel_ignores_are_warned_about() -> None:
    tax, X, y = small_problem()
    est = make_estimator("hieron", taxonomy=tax, degree=5)
    with pytest.warns(IgnoredParameterWarning, match=r"degree=5.*kernel='linear'"):
        fit_quiet_but(est, X, tax.names[y], IgnoredParameterWarning)
    spec = get_method("hieron")
    names = {p.name for p in spec.active_params({"kernel": "rbf"})}
    assert "gamma" in names and "degree" not in names and "coef0" not in names
    assert {"gamma", "degree", "coef0"} <= {p.name for p in spec.active_params({"kernel": "poly"})}


def test_hiermult_paper_preset_divides_each_node_loss_by_its_own_n_p() -> None:
    """Section 5: HIERMULT solves eq. (12) with Y replaced by C(p) at each internal node p, on
    the N_p examples below p, with the paper's C = 1 on that node's mean loss."""
    tax, X, y = small_problem(seed=4, n=30)
    est = make_estimator("hiermult", taxonomy=tax, preset="paper", max_iter=20)
    fit_quiet(est, X, tax.names[y])
    below = {p: sum(1 for v in y if p in tax.ancestors(int(v)) and p != v) for p in (0, 1, 2)}
    want = [1.0 / below[int(p)] for p in tax.internal_nodes]
    np.testing.assert_allclose(est.node_C_, want)
    # a number is one C on every node's summed loss (the default's convention)
    est = make_estimator("hiermult", taxonomy=tax, C=2.0, max_iter=5)
    fit_quiet(est, X, tax.names[y])
    np.testing.assert_allclose(est.node_C_, 2.0)
