"""Seed 003's methods on IPC titles: ``python -m hierlab.benchmarks.pegasos_ipc``.

The figures of ``hsvm``, ``nhsvm``, ``nhsvm13`` and ``ssvm`` on IPC (70/30 split,
seed 0), measured side by side in one run:

* ``--epoch``: one Pegasos epoch of HSVM, the compiled epoch against the numpy loop it replaces
  (``HIERLAB_NO_JIT=1``), same process, and the ratio.
* the table (default): for each method, scikit-learn's ``LinearSVC(C=1)`` and then the method
  with its registry defaults (HSVM/NHSVM: ``solver="auto"``, BCFW on IPC; ``--param
  solver=pegasos`` for the paper's SGD; ``--param name=value`` overrides), **each fit in a fresh
  Python process** so that its peak RSS (``resource.getrusage``) is its own: fit seconds, the
  ratio to the LinearSVC fit just before it (wall-clock, and CPU seconds: less sensitive to
  other jobs on a shared machine), peak RSS in GB, exact accuracy and tree-induced error on the
  test part.
  ``--root DIR`` runs the fits on another checkout's ``hierlab`` (e.g. an exported
  older commit, for before/after figures).

IPC is read by :func:`hierlab.load_ipc` (``../shared/datasets`` or ``$HIERLAB_DATA``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

__all__ = ["fit_in_fresh_process", "main"]

#: the code a fresh process runs: load IPC, fit, time, score, report peak RSS as JSON
_CHILD = r"""
import json, resource, sys, time, warnings
warnings.simplefilter("ignore")
import numpy as np
import hierlab
from hierlab.evaluation.metrics import tree_induced_error
name, params = sys.argv[1], json.loads(sys.argv[2])
tr, te = hierlab.load_ipc()
if name == "LinearSVC":
    from sklearn.svm import LinearSVC
    est = LinearSVC(**params)
    ytr = np.asarray([str(v) for v in tr.y])
    c0, t0 = time.process_time(), time.perf_counter()
    est.fit(tr.X, ytr)
else:
    est = hierlab.make_estimator(name, taxonomy=tr.taxonomy, **params)
    c0, t0 = time.process_time(), time.perf_counter()
    est.fit(tr.X, tr.y)
fit, cpu = time.perf_counter() - t0, time.process_time() - c0
pred = np.asarray([str(v) for v in est.predict(te.X)], dtype=object)
yt = np.asarray([str(v) for v in te.y], dtype=object)
print(json.dumps({
    "fit_s": fit,
    "cpu_s": cpu,
    "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    "accuracy": float(np.mean(pred == yt)),
    "tree_error": float(tree_induced_error(yt, pred, te.taxonomy)),
    "n_iter": int(np.max(getattr(est, "n_iter_", 0))),
}))
"""


def fit_in_fresh_process(
    name: str, params: dict[str, Any], root: str | None = None
) -> dict[str, Any]:
    """Fit ``name`` (a registry name or ``"LinearSVC"``) on IPC in a new Python process.

    Parameters
    ----------
    name : str
    params : dict
        Constructor parameters (registry defaults for the rest).
    root : str, optional
        Directory whose ``hierlab`` is imported: first on ``PYTHONPATH`` and the child's
        working directory (``python -c`` puts the working directory first on ``sys.path``).

    Returns
    -------
    dict
        ``fit_s``, ``peak_gb`` (the child's peak RSS), ``accuracy``, ``tree_error``,
        ``n_iter``; or ``error`` with the child's last output line.
    """
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, name, json.dumps(params)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    lines = out.stdout.strip().splitlines()
    try:
        row: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
        row = {"error": tail}
    return row


def _epoch_ratio() -> None:
    """One HSVM Pegasos epoch on IPC: numpy loop vs compiled epoch, same process."""
    import numpy as np

    from hierlab.datasets.ipc import load_ipc
    from hierlab.methods.nhsvm.model import HierarchicalHinge
    from hierlab.methods.nhsvm.sgd import PegasosSGD

    tr, _ = load_ipc()
    tax = tr.taxonomy
    c = np.ones(tax.n_nodes)
    c[0] = 0.0
    obj = HierarchicalHinge(tr.X, tax.index(tr.y), tax, c, 0.5 / tr.X.shape[0])
    times = {}
    results = {}
    for label, flag in (("compiled", ""), ("compiled (again)", ""), ("numpy", "1")):
        os.environ["HIERLAB_NO_JIT"] = flag
        sgd = PegasosSGD(random_state=0, eta0=1.0)  # a fixed first step: no calibration
        W = np.zeros(obj.coef_shape)
        t0 = time.perf_counter()
        W, B, _, _ = sgd.run_epoch(obj, W, W.copy(), 0)
        times[label] = time.perf_counter() - t0
        results[label] = (W, B)
        print(f"one HSVM epoch on IPC, {label:17s}: {times[label]:7.2f} s", flush=True)
    os.environ["HIERLAB_NO_JIT"] = ""
    same = all(np.array_equal(a, b) for a, b in zip(results["compiled"], results["numpy"]))
    print(
        f"numpy / compiled (second call, compiled code cached): "
        f"{times['numpy'] / times['compiled (again)']:.1f}x; iterates bit-identical: {same}"
    )


def main(argv: list[str] | None = None) -> None:
    """Print the table (or, with ``--epoch``, the epoch ratio)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=["hsvm", "nhsvm", "nhsvm13", "ssvm"])
    ap.add_argument("--param", action="append", default=[], help="name=value (JSON value)")
    ap.add_argument("--root", default=None, help="import hierlab from this directory")
    ap.add_argument("--epoch", action="store_true", help="only the one-epoch ratio")
    ap.add_argument(
        "--ref-s",
        type=float,
        nargs=2,
        default=None,
        metavar=("WALL", "CPU"),
        help="skip the LinearSVC fits: use these seconds (measured earlier) in the ratios",
    )
    args = ap.parse_args(argv)
    if args.epoch:
        _epoch_ratio()
        return
    params = {}
    for item in args.param:
        key, _, value = item.partition("=")
        params[key] = json.loads(value)
    head = f"{'method':9s} {'fit s':>7s} {'cpu s':>7s} {'LinearSVC s':>11s} {'ratio':>6s}"
    head += f" {'cpu ratio':>9s}"
    head += f" {'peak GB':>8s} {'accuracy':>8s} {'LSVC acc':>8s} {'tree err':>8s} {'epochs':>6s}"
    print(head, flush=True)
    for name in args.methods:
        if args.ref_s is None:
            ref = fit_in_fresh_process("LinearSVC", {"C": 1.0}, args.root)
        else:
            ref = {"fit_s": args.ref_s[0], "cpu_s": args.ref_s[1], "accuracy": float("nan")}
        row = fit_in_fresh_process(name, params, args.root)
        if "error" in row or "error" in ref:
            print(f"{name:9s} error: {row.get('error') or ref.get('error')}", flush=True)
            continue
        print(
            f"{name:9s} {row['fit_s']:7.1f} {row['cpu_s']:7.1f} {ref['fit_s']:11.1f} "
            f"{row['fit_s'] / ref['fit_s']:6.2f} {row['cpu_s'] / ref['cpu_s']:9.2f} "
            f"{row['peak_gb']:8.2f} {row['accuracy']:8.4f} "
            f"{ref['accuracy']:8.4f} {row['tree_error']:8.4f} {row['n_iter']:6d}",
            flush=True,
        )


if __name__ == "__main__":
    main()
