"""Benchmarks of the seed 003 code: ``python -m hierlab.benchmarks.nhsvm``.

Part 1 (speed, ratios measured side by side in one run):

* loss-augmented inference on a tree: the O(M) dynamic programme vectorised over a batch vs the
  LP relaxation of eq. (19) (what a DAG needs) on the same rewards;
* the ancestor-closed label space on a DAG: the minimum cut (``closure_cut``) vs the LP
  (``closure_lp``, the exact reference the tests hold it to) on the same rewards;
* one Pegasos epoch with mini-batches of 128 vs batches of 1 (the vectorisation over examples);
* one epoch on dense vs CSR input of the same sparse matrix.

Part 2 (``--real``, needs the Clus HMC files under ``$HIERLAB_DATA`` or ``../shared/datasets``):
HSVM and NHSVM on ``Enron_corr`` (tree), ``cellcycle_FUN`` (tree) and ``cellcycle_GO`` (DAG,
LP/IP inference): micro-F1 of the predicted (ancestor-closed) label sets, AU(PRC) from the
per-node scores of ``node_scores`` (pooled over nodes, root excluded, as C-HMCNN computes
it), and training time, beside the published AU(PRC) of C-HMCNN (Giunchiglia & Lukasiewicz
2020) on the same sets: 0.756, 0.255, 0.413. Features are standardised on the training part
(missing values imputed by the loader) and a constant feature is appended (the node biases).
The label space is every ancestor-closed set (Clus rows end at internal nodes too), with the
Hamming loss over all nodes.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.nhsvm.estimators import HSVMClassifier, NHSVMClassifier
from hierlab.methods.nhsvm.model import (
    HierarchicalHinge,
    closure_cut,
    closure_lp,
    dag_max_label,
    tree_max_label,
)
from hierlab.methods.nhsvm.sgd import PegasosSGD

CHMCNN_AUPRC = {"Enron_corr": 0.756, "cellcycle_FUN": 0.255, "cellcycle_GO": 0.413}


def _time(f: Any, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return float(best)


def bench_speed(seed: int = 0) -> None:
    """Part 1: the speed ratios."""
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(max(0, i - 8), i)) for i in range(1, 300)]
    tax = Taxonomy.from_parent_array(parent)
    R = rng.normal(size=(256, tax.n_nodes))
    t_dp = _time(lambda: tree_max_label(R, tax, True))
    t_lp = _time(lambda: dag_max_label(R[:32], tax, True, batch=32), repeat=1) * (256 / 32)
    Z1, _, _, _ = tree_max_label(R[:32], tax, True)
    Z2, _ = dag_max_label(R[:32], tax, True, batch=32)
    print(f"inference, tree of {tax.n_nodes} nodes, 256 rows:")
    print(
        f"  DP {t_dp * 1e3:8.1f} ms   LP/IP {t_lp * 1e3:8.1f} ms   "
        f"ratio LP/DP = {t_lp / t_dp:6.0f}x"
    )
    print(f"  same argmax on 32 rows: {bool(np.array_equal(Z1, Z2))}")

    # the same tree plus 150 second parents (each above its child in the order: acyclic)
    extra = np.random.default_rng(seed + 1)  # leaves rng (the data below) as it was
    edges = {(str(p), str(c)) for c, p in enumerate(parent) if p >= 0}
    edges |= {(str(int(extra.integers(1, c))), str(c)) for c in extra.integers(2, len(parent), 150)}
    dag = Taxonomy(sorted(edges), nodes=[str(i) for i in range(len(parent))])
    Rd = R - 0.3
    t_cut = _time(lambda: closure_cut(Rd, dag))
    t_clp = _time(lambda: closure_lp(Rd, dag, 32), repeat=1)
    same = np.array_equal(closure_cut(Rd, dag), closure_lp(Rd, dag, 32))
    print(f"ancestor-closed sets, DAG of {dag.n_nodes} nodes and {len(edges)} edges, 256 rows:")
    print(
        f"  min cut {t_cut * 1e3:8.1f} ms   LP {t_clp * 1e3:8.1f} ms   "
        f"ratio LP/cut = {t_clp / t_cut:5.1f}x   same sets: {same}"
    )

    n, d = 4000, 2000
    X = sp.random(n, d, density=0.01, random_state=seed, format="csr", dtype=np.float64)
    tax2 = Taxonomy.from_parent_array([-1, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6])
    y = tax2.leaves[rng.integers(0, len(tax2.leaves), size=n)]
    from hierlab.methods.nhsvm.model import normalization_alpha

    alpha = normalization_alpha(tax2)
    obj_s = HierarchicalHinge(X, y, tax2, np.sqrt(alpha), 1e-4, "normalized", alpha)
    obj_d = HierarchicalHinge(X.toarray(), y, tax2, np.sqrt(alpha), 1e-4, "normalized", alpha)

    def epoch(obj: HierarchicalHinge, bs: int) -> None:
        s = PegasosSGD(epochs=1, batch_size=bs, random_state=0)
        W = np.zeros(obj.coef_shape)
        s.run_epoch(obj, W, W.copy(), 0)

    t128 = _time(lambda: epoch(obj_s, 128))
    t1 = _time(lambda: epoch(obj_s, 1), repeat=1)
    td = _time(lambda: epoch(obj_d, 128))
    print(f"Pegasos epoch, {n} x {d} CSR (1% dense), {tax2.n_nodes} nodes:")
    print(
        f"  batch 128 {t128 * 1e3:8.1f} ms   batch 1 {t1 * 1e3:8.1f} ms   ratio = {t1 / t128:5.1f}x"
    )
    print(
        f"  dense {td * 1e3:8.1f} ms   CSR {t128 * 1e3:8.1f} ms   "
        f"ratio dense/CSR = {td / t128:5.1f}x"
    )


def bench_real(
    names: list[str],
    epochs: int,
    lam: float,
    go_epochs: int,
    batch_size: int = 32,
    methods: tuple[str, ...] = ("HSVM", "NHSVM"),
) -> None:
    """Part 2: multi-label and DAG on the Clus HMC sets."""
    from sklearn.preprocessing import StandardScaler

    from hierlab.datasets.real import load_clus

    try:
        from hierlab.evaluation.metrics import au_prc, micro_f1
    except ImportError:  # pragma: no cover - until the metrics land
        au_prc = micro_f1 = None  # type: ignore[assignment]
    print(
        f"\n{'data set':14s} {'method':6s} {'kind':5s} {'epochs':>6s} {'micro-F1':>8s} "
        f"{'AU(PRC)':>8s} {'C-HMCNN':>8s} {'train s':>8s}"
    )
    for name in names:
        try:
            train, test = load_clus(name)
        except Exception as exc:
            print(f"{name}: not available ({exc})")
            continue
        sc = StandardScaler().fit(train.X)
        # standardised features plus a constant one: the per-node bias (node frequencies
        # matter for the pooled AU(PRC); without it Enron drops from ~0.58 to ~0.36)
        Xtr = np.hstack([sc.transform(train.X), np.ones((train.n_samples, 1))])
        Xte = np.hstack([sc.transform(test.X), np.ones((test.n_samples, 1))])
        tax = train.taxonomy
        ep = go_epochs if not tax.is_tree else epochs
        Ytrue = test.label_indicator(closed=True).toarray()
        for label, cls in (("HSVM", HSVMClassifier), ("NHSVM", NHSVMClassifier)):
            if label not in methods:
                continue
            est = cls(
                taxonomy=tax,
                lam=lam * train.n_samples,  # per-row lambda -> the paper's (summed loss)
                epochs=ep,
                batch_size=batch_size,
                label_space="closed",
                random_state=0,
            )
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xtr, train.y)
            secs = time.perf_counter() - t0
            pred = est.predict(Xte)
            S = est.node_scores(Xte)
            if micro_f1 is not None and au_prc is not None:
                f1 = micro_f1(test.y, pred, tax, closure=True)
                ap = au_prc(Ytrue, S)
            else:
                from sklearn.metrics import average_precision_score

                P = est.decision_path(Xte).toarray()[:, 1:]
                T = Ytrue[:, 1:]
                tp = float((P * T).sum())
                f1 = 2 * tp / (P.sum() + T.sum())
                ap = average_precision_score(T, S[:, 1:], average="micro")
            kind = "tree" if tax.is_tree else "DAG"
            print(
                f"{name:14s} {label:6s} {kind:5s} {ep:6d} {f1:8.3f} {ap:8.3f} "
                f"{CHMCNN_AUPRC.get(name, float('nan')):8.3f} {secs:8.1f}",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--real", action="store_true", help="also run the Clus HMC data sets")
    p.add_argument("--no-speed", action="store_true", help="skip part 1")
    p.add_argument("--sets", default="Enron_corr,cellcycle_FUN,cellcycle_GO", help="Clus data sets")
    p.add_argument("--epochs", type=int, default=20, help="Pegasos epochs (trees)")
    p.add_argument("--go-epochs", type=int, default=2, help="Pegasos epochs on the DAG")
    p.add_argument(
        "--lam", type=float, default=1e-4, help="lambda per training row (estimators: lam x N)"
    )
    p.add_argument("--batch-size", type=int, default=32, help="rows per SGD step")
    p.add_argument("--methods", default="HSVM,NHSVM", help="which of HSVM, NHSVM")
    args = p.parse_args(argv)
    if not args.no_speed:
        bench_speed()
    if args.real:
        sets = [s for s in args.sets.split(",") if s]
        methods = tuple(m.strip() for m in args.methods.split(","))
        bench_real(sets, args.epochs, args.lam, args.go_epochs, args.batch_size, methods)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
