"""Benchmarks of MF-Tree (seed 004), measured side by side in one run.

Run ``python -m hierlab.benchmarks.mftree`` (all sections) or pick sections with
``--sections speed,tau,test,mse,20ng``; ``--quick`` shrinks every size for a smoke run.

Sections
--------
speed
    Induction time of the fast linear path
    (:class:`~hierlab.methods.mftree.induction.MFTree`) against the explicit-kernel reference
    (:class:`~hierlab.methods.mftree.induction.MFTreeReference`, the paper's ``O(n^2)`` form)
    at n = 2,000 / 5,000 / 20,000, and whether the two trees are identical.
tau
    Approximate MF-Tree (Algorithm 3) at tau = 0..6 on 1,000 classes: induction time,
    % improvement over tau = 0, macro-F1, depth (the shape of the paper's Table 3).
test
    Test time per example of MF-Tree routing against one-vs-rest (one linear score per
    class, then argmax) at 1,000 classes.
mse
    Tree-similarity MSE (Section 6.2.3) to the known taxonomy of ``make_hierarchical_text``,
    MF-Tree against CMTL, over 5 seeds; with macro-F1.
20ng
    The same on 20 Newsgroups (sublinear TF-IDF) against the 6-group taxonomy, 5 seeds
    (a random 80% of the training posts each), and the induced tree of the full training set.
rules
    ``split_rule`` x ``routing`` ("sign" / "argmax", the printed Algorithms 1-2) on 20
    Newsgroups: test macro-F1, the HSIC of the root split and the summed HSIC of all splits
    (``split_info_``), tree-similarity MSE to the 6-group taxonomy.

The 1,000-class data of ``tau``/``test`` are dense Gaussian classes on a known 3-level
tree (branching 10): class mean = sum of random vectors on its path, ``d = 128`` (``tau``:
unequal class sizes, 10-30 training examples per class).
"""

from __future__ import annotations

import argparse
import time
from functools import partial
from typing import Any

import numpy as np
from sklearn.linear_model import RidgeClassifier
from sklearn.svm import LinearSVC
from threadpoolctl import threadpool_limits

from hierlab.benchmarks.taxonomy import best_of
from hierlab.core.exceptions import DataError
from hierlab.core.taxonomy import Taxonomy
from hierlab.datasets.real import load_20newsgroups
from hierlab.evaluation.metrics import macro_f1, tree_similarity_mse
from hierlab.methods.mftree.cmtl import CMTLTree
from hierlab.methods.mftree.estimators import CMTLClassifier, MFTreeClassifier
from hierlab.methods.mftree.induction import MFTree, MFTreeReference
from hierlab.methods.topdown import TopDownClassifier


# ---------------------------------------------------------------------------- helpers
def _print_mse_summary(res: list[tuple[float, float]]) -> None:
    """The mean tree-similarity MSE of MF-Tree and CMTL over the seeds, and who won how often."""
    r = np.asarray(res)
    print(
        f"mean {r[:, 0].mean():.5f} vs {r[:, 1].mean():.5f}; "
        f"MF-Tree lower on {(r[:, 0] < r[:, 1]).sum()}/{len(r)} seeds"
    )


def _flat_macro_f1(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Macro-F1 over the classes of ``y_true`` (a flat taxonomy)."""
    labels = sorted({str(v) for v in y_true})
    tax = Taxonomy.flat(labels)
    return macro_f1(
        np.asarray(y_true).astype(str), np.asarray(y_pred).astype(str), tax, labels=labels
    )


def hierarchical_gaussians(
    branching: int = 10,
    depth: int = 3,
    d: int = 128,
    n_train: int = 20,
    n_test: int = 10,
    scales: tuple[float, ...] = (1.0, 0.7, 0.5),
    noise: float = 1.0,
    seed: int = 0,
    unequal: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Taxonomy]:
    """Dense classes on a known tree: mean of a leaf = sum of N(0, scale_k^2 I) on its path.

    ``unequal`` draws each class's training size uniformly in ``[n_train / 2, 3 n_train / 2]``
    (Partition2 then picks its two seed classes by size, as on real data).
    """
    rng = np.random.default_rng(seed)
    edges = []
    level = ["r"]
    vec = {"r": np.zeros(d)}
    for k in range(depth):
        nxt = []
        for p in level:
            for b in range(branching):
                name = f"{p}.{b}" if p != "r" else f"t{b}"
                edges.append((p, name))
                vec[name] = vec[p] + rng.normal(size=d) * scales[min(k, len(scales) - 1)]
                nxt.append(name)
        level = nxt
    means = np.asarray([vec[c] for c in level])
    c = len(level)
    sizes = rng.integers(n_train // 2, 3 * n_train // 2 + 1, size=c) if unequal else n_train
    ytr = np.repeat(np.arange(c), sizes)
    yte = np.repeat(np.arange(c), n_test)
    Xtr = means[ytr] + noise * rng.normal(size=(len(ytr), d)) / np.sqrt(d) * 4
    Xte = means[yte] + noise * rng.normal(size=(len(yte), d)) / np.sqrt(d) * 4
    names = np.asarray(level, dtype=object)
    return Xtr, names[ytr], Xte, names[yte], Taxonomy(edges)


def format_tree(tax: Taxonomy, max_lines: int = 200) -> str:
    """An indented text drawing of a taxonomy (internal nodes as '+')."""
    lines: list[str] = []

    def walk(i: int, indent: str) -> None:
        if len(lines) >= max_lines:
            return
        label = str(tax.names[i]) if tax.is_leaf[i] else "+"
        lines.append(indent + label)
        for ch in tax.children(i):
            walk(int(ch), indent + "  ")

    walk(0, "")
    return "\n".join(lines)


def clade_report(truth: Taxonomy, induced: Taxonomy) -> list[tuple[str, int, int, bool]]:
    """For each internal node of ``truth`` below the root: is its leaf set a clade of ``induced``?

    Returns (group, size, size of the smallest induced subtree holding it, is clade).
    """
    out = []
    for g in truth.internal_nodes:
        if g == 0:
            continue
        members = [str(truth.names[x]) for x in truth.descendants(g) if truth.is_leaf[x]]
        ids = induced.index(np.asarray(members, dtype=object))
        anc = ids[0]
        for j in ids[1:]:
            anc = int(induced.lca(anc, j))
        under = [x for x in induced.descendants(anc, include_self=True) if induced.is_leaf[x]]
        out.append((str(truth.names[g]), len(members), len(under), len(under) == len(members)))
    return out


# ---------------------------------------------------------------------------- sections
def bench_speed(quick: bool) -> None:
    """Section ``speed``: the fast linear path against the explicit-kernel reference."""
    print("\n== speed: fast linear path vs explicit-kernel reference (induction) ==")
    print(
        f"{'n':>7} {'c':>4} {'d':>4} {'fast (s)':>10} {'reference (s)':>14} {'ratio':>8} identical"
    )
    sizes = (500, 1000) if quick else (2000, 5000, 20000)
    for n in sizes:
        rng = np.random.default_rng(n)
        c, d = 50, 100
        means = rng.normal(size=(c, d)) * 0.6
        y = np.concatenate([np.arange(c), rng.integers(0, c, n - c)])
        X = means[y] + rng.normal(size=(n, d))
        t_fast, fast = best_of(partial(MFTree().fit, X, y), repeat=3)
        t_ref, ref = best_of(partial(MFTreeReference().fit, X, y), repeat=1)
        same = fast.partitions() == ref.partitions()
        print(f"{n:>7} {c:>4} {d:>4} {t_fast:>10.4f} {t_ref:>14.2f} {t_ref / t_fast:>7.0f}x {same}")
        del ref


def bench_tau(quick: bool) -> None:
    """Section ``tau``: approximate MF-Tree (Algorithm 3) at tau = 0..6."""
    print("\n== tau: approximate MF-Tree (Algorithm 3) on 1,000 classes (cf. Table 3) ==")
    b = 6 if quick else 10
    Xtr, ytr, Xte, yte, truth = hierarchical_gaussians(branching=b, seed=0, unequal=True)
    print(f"train {Xtr.shape}, test {Xte.shape}, {len(set(ytr))} classes")
    print(
        f"{'tau':>4} {'induce (s)':>11} {'improvement':>12} {'macro-F1':>9} {'depth':>6} {'MSE':>8}"
    )
    base = None
    for tau in range(7):
        t, m = best_of(partial(MFTree(tau=tau).fit, Xtr, ytr), repeat=3)
        base = t if base is None else base
        f1 = _flat_macro_f1(yte, m.predict(Xte))
        mse = tree_similarity_mse(truth, m.taxonomy_)
        imp = 100.0 * (base - t) / base
        print(f"{tau:>4} {t:>11.3f} {imp:>11.1f}% {f1:>9.4f} {m.depth_:>6} {mse:>8.5f}")


def bench_test(quick: bool) -> None:
    """Section ``test``: test time per example, MF-Tree routing against one-vs-rest."""
    print("\n== test: test time per example, MF-Tree routing vs one-vs-rest, 1,000 classes ==")
    b = 6 if quick else 10
    Xtr, ytr, Xte, yte, _ = hierarchical_gaussians(branching=b, seed=1, n_test=20)
    mf = MFTreeClassifier().fit(Xtr, ytr)
    ovr = RidgeClassifier(alpha=1.0).fit(Xtr, ytr)  # one linear score per class, argmax
    t_mf, p_mf = best_of(lambda: mf.predict(Xte), repeat=5)
    t_ovr, p_ovr = best_of(lambda: ovr.predict(Xte), repeat=5)
    n = Xte.shape[0]
    print(
        f"{n} test examples, d = {Xte.shape[1]}, {len(set(ytr))} classes, "
        f"MF-Tree depth {mf.tree_.depth_}"
    )
    print(f"{'method':>14} {'us/example':>11} {'macro-F1':>9}")
    print(f"{'MF-Tree':>14} {1e6 * t_mf / n:>11.2f} {_flat_macro_f1(yte, p_mf):>9.4f}")
    print(f"{'one-vs-rest':>14} {1e6 * t_ovr / n:>11.2f} {_flat_macro_f1(yte, p_ovr):>9.4f}")
    print(f"speed-up: {t_ovr / t_mf:.1f}x")
    from hierlab.datasets.text import make_hierarchical_text

    tr, te = make_hierarchical_text(
        12_000 if quick else 40_000,
        n_classes=200 if quick else 1000,
        n_features=5000,
        depth=3,
        test_size=0.25,
        random_state=0,
    )
    mf = MFTreeClassifier().fit(tr.X, tr.y)
    ovr = RidgeClassifier(alpha=1.0, solver="sparse_cg").fit(tr.X, tr.y)
    t_mf, p_mf = best_of(partial(mf.predict, te.X), repeat=5)
    t_ovr, p_ovr = best_of(partial(ovr.predict, te.X), repeat=5)
    n = te.X.shape[0]
    print(
        f"sparse text (make_hierarchical_text): {n} test examples, {te.X.shape[1]} features, "
        f"{len(set(tr.y))} classes, MF-Tree depth {mf.tree_.depth_}"
    )
    print(f"{'MF-Tree':>14} {1e6 * t_mf / n:>11.2f} {_flat_macro_f1(te.y, p_mf):>9.4f}")
    print(f"{'one-vs-rest':>14} {1e6 * t_ovr / n:>11.2f} {_flat_macro_f1(te.y, p_ovr):>9.4f}")
    print(f"speed-up: {t_ovr / t_mf:.1f}x")


def bench_mse(quick: bool) -> None:
    """Section ``mse``: tree-similarity MSE of MF-Tree and CMTL to a known taxonomy."""
    from hierlab.datasets.text import make_hierarchical_text

    print("\n== mse: induced tree vs known taxonomy (make_hierarchical_text), 5 seeds ==")
    print(
        f"{'seed':>4} {'MSE MF-Tree':>12} {'MSE CMTL':>9} {'F1 MF-Tree':>11} {'F1 CMTL':>8} "
        f"{'F1 MF-Tree+SVM':>15}"
    )
    res = []
    for seed in range(5):
        tr, te = make_hierarchical_text(
            2000 if quick else 6000,
            n_classes=20 if quick else 40,
            n_features=3000,
            depth=2,
            random_state=seed,
        )
        mf = MFTreeClassifier().fit(tr.X, tr.y)
        cm = CMTLClassifier(random_state=seed).fit(tr.X, tr.y)
        classes = sorted({str(v) for v in tr.y})  # the classes seen in training
        m1 = tree_similarity_mse(tr.taxonomy, mf.taxonomy_, classes)
        m2 = tree_similarity_mse(tr.taxonomy, cm.taxonomy_, classes)
        f1 = _flat_macro_f1(te.y, mf.predict(te.X))
        f2 = _flat_macro_f1(te.y, cm.predict(te.X))
        f3 = _flat_macro_f1(
            te.y, TopDownClassifier(taxonomy=mf.taxonomy_).fit(tr.X, tr.y).predict(te.X)
        )
        res.append((m1, m2))
        print(f"{seed:>4} {m1:>12.5f} {m2:>9.5f} {f1:>11.4f} {f2:>8.4f} {f3:>15.4f}")
    _print_mse_summary(res)


def load_20newsgroups_tfidf() -> tuple[Any, np.ndarray, Any, np.ndarray, Taxonomy]:
    """20NG bydate, sublinear TF-IDF fitted on train; the 6-group taxonomy
    (:func:`~hierlab.datasets.real.load_20newsgroups`, cached on disk)."""
    tr, te = load_20newsgroups()
    return tr.X, np.asarray(tr.y).astype(str), te.X, np.asarray(te.y).astype(str), tr.taxonomy


def bench_20ng(quick: bool) -> None:
    """Section ``20ng``: the induced trees of 20 Newsgroups against its 6-group taxonomy."""
    print("\n== 20ng: induced trees vs the 6-group taxonomy, 5 seeds (80% of train each) ==")
    t0 = time.perf_counter()
    try:
        Xtr, ytr, Xte, yte, truth = load_20newsgroups_tfidf()
    except DataError as exc:
        print(f"skipped: {exc}")
        return
    print(
        f"loaded {Xtr.shape[0]} / {Xte.shape[0]} posts, {Xtr.shape[1]} features "
        f"in {time.perf_counter() - t0:.1f}s"
    )
    print(f"{'seed':>4} {'MSE MF-Tree':>12} {'MSE CMTL':>9}")
    res = []
    for seed in range(2 if quick else 5):
        rng = np.random.default_rng(seed)
        idx = np.sort(rng.choice(Xtr.shape[0], int(0.8 * Xtr.shape[0]), replace=False))
        mf = MFTree().fit(Xtr[idx], ytr[idx])
        cm = CMTLTree(random_state=seed).fit(Xtr[idx], ytr[idx])
        m1 = tree_similarity_mse(truth, mf.taxonomy_)
        m2 = tree_similarity_mse(truth, cm.taxonomy_)
        res.append((m1, m2))
        print(f"{seed:>4} {m1:>12.5f} {m2:>9.5f}")
    _print_mse_summary(res)
    # full training set: the induced tree, classifiers, test time
    t_ind, mf_clf = best_of(lambda: MFTreeClassifier().fit(Xtr, ytr), repeat=1)
    t_cm, cm_clf = best_of(lambda: CMTLClassifier(random_state=0).fit(Xtr, ytr), repeat=1)
    ovr = LinearSVC(C=1.0).fit(Xtr, ytr)
    mf_svm = TopDownClassifier(taxonomy=mf_clf.taxonomy_).fit(Xtr, ytr)
    print(f"\nfit: MF-Tree {t_ind:.2f}s, CMTL {t_cm:.2f}s (OvR confusion + node SVMs)")
    print("MF-Tree+SVM: the induced MF-Tree taxonomy with a LinearSVC per node (TopDownClassifier)")
    print(f"{'method':>12} {'macro-F1':>9} {'test us/ex':>11} {'depth':>6} {'nodes':>6} {'MSE':>8}")
    rows: list[tuple[str, Any, Taxonomy]] = [
        ("MF-Tree", mf_clf, mf_clf.taxonomy_),
        ("CMTL", cm_clf, cm_clf.taxonomy_),
        ("MF-Tree+SVM", mf_svm, mf_clf.taxonomy_),
        ("OvR SVM", ovr, Taxonomy.flat(sorted(set(ytr)), root="r")),
    ]
    for name, clf, tax in rows:
        t, p = best_of(partial(clf.predict, Xte), repeat=3)
        print(
            f"{name:>12} {_flat_macro_f1(yte, p):>9.4f} {1e6 * t / Xte.shape[0]:>11.2f} "
            f"{tax.max_depth:>6} {tax.n_nodes:>6} {tree_similarity_mse(truth, tax):>8.5f}"
        )
    print("\ninduced MF-Tree on the full 20NG training set:")
    print(format_tree(mf_clf.taxonomy_))
    print("\ntrue group -> is it a clade of the induced tree? (size, smallest induced subtree)")
    for name, tax in (("MF-Tree", mf_clf.taxonomy_), ("CMTL", cm_clf.taxonomy_)):
        rep = clade_report(truth, tax)
        print(
            f"  {name}: "
            + ", ".join(f"{g} {'yes' if ok else 'no'} ({k}/{u})" for g, k, u, ok in rep)
        )
    print("\ninduced CMTL tree:")
    print(format_tree(cm_clf.taxonomy_))


def bench_rules(quick: bool) -> None:
    """Section ``rules``: the sign and the printed argmax rules of Algorithms 1-2 on 20NG."""
    print("\n== rules: split_rule x routing on 20 Newsgroups (full training set) ==")
    try:
        Xtr, ytr, Xte, yte, truth = load_20newsgroups_tfidf()
    except DataError as exc:
        print(f"skipped: {exc}")
        return
    if quick:
        Xtr, ytr = Xtr[::4], ytr[::4]
    print(
        f"{'split':>6} {'routing':>7} {'macro-F1':>9} {'root HSIC':>10} {'sum HSIC':>9} "
        f"{'MSE':>8} {'depth':>5}"
    )
    for split in ("sign", "argmax"):
        for route in ("sign", "argmax"):
            m = MFTree(split_rule=split, routing=route).fit(Xtr, ytr)
            info = m.split_info_
            print(
                f"{split:>6} {route:>7} {_flat_macro_f1(yte, m.predict(Xte)):>9.4f} "
                f"{info['hsic'].iloc[0]:>10.3e} {info['hsic'].sum():>9.3e} "
                f"{tree_similarity_mse(truth, m.taxonomy_):>8.5f} {m.depth_:>5}"
            )


SECTIONS = {
    "speed": bench_speed,
    "tau": bench_tau,
    "test": bench_test,
    "mse": bench_mse,
    "20ng": bench_20ng,
    "rules": bench_rules,
}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: run the chosen sections with a fixed number of BLAS threads."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sections", default=",".join(SECTIONS), help="comma-separated sections")
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS threads for every method (default 1)"
    )
    args = parser.parse_args(argv)
    names = args.sections.split(",")
    for name in names:
        if name not in SECTIONS:
            parser.error(f"unknown section {name!r}; choose from {', '.join(SECTIONS)}")
    print(f"BLAS threads: {args.threads} (same for every method)")
    with threadpool_limits(args.threads):
        for name in names:
            SECTIONS[name](args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
