"""Measured: does Shared SVM reach NHSVM on the unbalanced set?

``python -m hierlab.benchmarks.ssvm_floor [--draws 20] [--n-samples 0] [--n-features 1000]``

Seed 003's Table 3 has SSVM 0.8 points above NHSVM on the unbalanced synthetic set; with the
paper's Pegasos alternation ours is below. This script runs the protocol of
``hierlab reproduce nhsvm`` (:mod:`hierlab.lab.reproduce.nhsvm`: configuration chosen on a
20 % hold-out of the first draw, then ``--draws`` fresh draws, text sizes by default) for

* ``NHSVM``: the paper's variants (eq. 6, eq. 7, eq. 6 with directional constraints; eq. 10
  and eq. 13), lambda on the grid;
* ``SSVM``: the paper's Shared SVM (Algorithm 1 alpha steps), Δ of eq. (14) and lambda chosen
  on the hold-out;
* ``SSVM-floor``: the same with ``alpha_floor = beta`` (alpha >= beta alpha0 at every alpha
  step, not in the paper), beta chosen on the hold-out too; ``beta`` interpolates between the
  paper's SSVM (0) and NHSVM's fixed alpha with SSVM's loss (1).

It prints the accuracy of each draw as it goes (so a run stopped early still reports), then the
mean ± std over the draws and the paired difference to NHSVM with its standard error. (The
joint certified solver, ``SharedSVMClassifier(solver="bcfw")``, at eq. (14)'s optimum trails by
4.4 points; it is not re-run here.)

Measured (2026-11, shared 2-core machine, text sizes: 6,667 train / 3,333 test rows, d = 1,000,
20 draws, Pegasos 10 epochs, ~10 min per run):

* ``--lambdas 1e-2,1e-1,1 --floors 0.25,0.5,0.75``: NHSVM 73.7 ± 0.88, SSVM 72.6 ± 0.89
  (SSVM − NHSVM = −1.14 ± 0.12 s.e., SSVM >= NHSVM on 1/20 draws); the chosen floor 0.25 never
  binds after the two alpha rounds, so SSVM-floor = SSVM.
* ``--lambdas 1e-3,1e-2,1e-1 --floors 0.5,0.75,0.9``: NHSVM 73.9 ± 0.92, SSVM 72.6 ± 0.89
  (−1.29 ± 0.13, 1/20), SSVM-floor (0.9 chosen) 71.9 ± 0.87 (−1.92 ± 0.11, 0/20).
* ``--lambdas 1e-5,1e-4,1e-3,1e-2 --floors 0.9`` (NHSVM's lambda 1e-3 inside the grid):
  NHSVM 73.9 ± 0.92, SSVM 72.6 ± 0.89 (−1.28 ± 0.14, 0/20), SSVM-floor 72.7 ± 0.87
  (−1.19 ± 0.12, 0/20).

Conclusion: SSVM >= NHSVM (paper +0.8) does not reproduce. Neither solving eq. (14) exactly
nor keeping alpha near NHSVM's (a floor up to 0.9 alpha0) closes the gap, so it is
not alpha's optimisation: with alpha pinned near NHSVM's, SSVM still trails, which points at the
structural error (eq. 14's fixed Δ against NHSVM's normalised Δ~ of eq. 9).
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np

from hierlab.datasets.nhsvm import make_nhsvm_synthetic
from hierlab.lab.reproduce.nhsvm import accuracy, table3_estimator

_NH_RULES = ("eq6", "eq7", "eq6-directional")
_SSVM_LOSSES = ("zero_one", "hamming", "sqrt_hamming")


def configs(lams: list[float], floors: list[float]) -> dict[str, list[dict[str, Any]]]:
    """The hold-out grid of each method."""
    return {
        "NHSVM": [
            {"lam": lam, "alpha_rule": r, "variant": v}
            for lam in lams
            for v in ("eq10", "eq13")
            for r in _NH_RULES
        ],
        "SSVM": [{"lam": lam, "loss": loss} for lam in lams for loss in _SSVM_LOSSES],
        "SSVM-floor": [
            {"lam": lam, "loss": loss, "alpha_floor": b}
            for lam in lams
            for loss in _SSVM_LOSSES
            for b in floors
        ],
    }


def _method(name: str) -> str:
    return "SSVM" if name.startswith("SSVM") else name


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--draws", type=int, default=20)
    p.add_argument("--n-samples", type=int, default=0, help="0: the text's N = 10,000")
    p.add_argument("--n-features", type=int, default=1000)
    p.add_argument("--lambdas", default="1e-2,1e-1,1", help="the paper's scale (summed loss)")
    p.add_argument("--floors", default="0.25,0.5,0.75", help="beta values for SSVM-floor")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--verbose", action="store_true", help="every hold-out score")
    args = p.parse_args(argv)
    args.solver, args.tol, args.quick = "pegasos", 1e-3, False
    lams = [float(v) for v in args.lambdas.split(",")]
    floors = [float(v) for v in args.floors.split(",")]
    n = args.n_samples or None
    d = args.n_features
    warnings.simplefilter("ignore")  # fixed epoch budgets: SGD's convergence warnings
    t0 = time.perf_counter()
    train, _ = make_nhsvm_synthetic("unbalanced", n_samples=n, n_features=d, random_state=0)
    rng = np.random.default_rng(0)
    perm = rng.permutation(train.n_samples)
    hold, fit = perm[: train.n_samples // 5], perm[train.n_samples // 5 :]
    chosen: dict[str, dict[str, Any]] = {}
    for name, cfgs in configs(lams, floors).items():
        scores = []
        for cfg in cfgs:
            est = table3_estimator(_method(name), train.taxonomy, cfg, args, 0)
            est.fit(train.X[fit], train.y[fit])
            scores.append(accuracy(est, train.X[hold], train.y[hold]))
        best = int(np.argmax(scores))
        chosen[name] = cfgs[best]
        if args.verbose:
            for cfg, sc in zip(cfgs, scores):
                print(f"    {name} {cfg}: {sc:.4f}", flush=True)
        print(f"{name:10s} hold-out {scores[best]:.3f} with {cfgs[best]}", flush=True)
    print(f"(selection {time.perf_counter() - t0:.0f} s)", flush=True)
    acc: dict[str, list[float]] = {m: [] for m in chosen}
    for r in range(args.draws):
        tr, te = make_nhsvm_synthetic("unbalanced", n_samples=n, n_features=d, random_state=r)
        row = []
        for name, cfg in chosen.items():
            est = table3_estimator(_method(name), tr.taxonomy, cfg, args, r)
            est.fit(tr.X, tr.y)
            acc[name].append(100.0 * accuracy(est, te.X, te.y))
            row.append(f"{name} {acc[name][-1]:5.1f}")
        print(
            f"draw {r:2d}: " + "  ".join(row) + f"  ({time.perf_counter() - t0:.0f} s)", flush=True
        )
    k = len(acc["NHSVM"])
    print(f"\nunbalanced set, {tr.n_samples} train / {te.n_samples} test rows, d = {d}, {k} draws")
    base = np.asarray(acc["NHSVM"])
    for name, vals in acc.items():
        a = np.asarray(vals)
        line = f"  {name:10s} {a.mean():5.1f} ± {a.std(ddof=1) if k > 1 else 0.0:4.2f}"
        if name != "NHSVM":
            diff = a - base
            se = diff.std(ddof=1) / np.sqrt(k) if k > 1 else 0.0
            line += (
                f"   minus NHSVM {diff.mean():+5.2f} ± {se:4.2f} (s.e.), "
                f">= NHSVM on {int(np.sum(diff >= 0))}/{k} draws"
            )
        print(line)
    print("  paper (Table 3): SSVM 74.9 ± 0.4, NHSVM 74.1 ± 0.2: SSVM - NHSVM = +0.8")
    print(f"(total {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
