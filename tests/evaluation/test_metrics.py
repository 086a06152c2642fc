"""Every metric of hierlab.evaluation.metrics against a brute-force Python version (networkx,
loops, sets) on random trees and DAGs, plus the worked examples the seeds print."""

from __future__ import annotations

import itertools
from collections import Counter

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, f1_score

from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.evaluation import metrics as M
from tests._taxonomy_strategies import tax_and_label_sets, tax_and_labels, trees

SETTINGS = settings(max_examples=40, deadline=None)


# ---------------------------------------------------------------------------- brute force
def graph(tax: Taxonomy) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(str(x) for x in tax.names)
    g.add_edges_from(tax.to_edges())
    return g


def anc_self(g: nx.DiGraph, v: str) -> set[str]:
    return set(nx.ancestors(g, v)) | {v}


def root_of(g: nx.DiGraph) -> str:
    return next(v for v in g if g.in_degree(v) == 0)


def depth_of(g: nx.DiGraph) -> dict[str, int]:
    """Longest path from the root (the DAG depth convention), by dynamic programming."""
    d: dict[str, int] = {}
    for v in nx.topological_sort(g):
        ps = list(g.predecessors(v))
        d[v] = 0 if not ps else 1 + max(d[p] for p in ps)
    return d


def gamma_brute(g: nx.DiGraph, u: str, v: str) -> int:
    """Shortest path through a common ancestor (= the undirected path length on trees)."""
    best = None
    for a in anc_self(g, u) & anc_self(g, v):
        d = nx.shortest_path_length(g, a, u) + nx.shortest_path_length(g, a, v)
        best = d if best is None else min(best, d)
    assert best is not None
    return best


def closure_brute(g: nx.DiGraph, labels, drop_root: bool) -> set[str]:
    out: set[str] = set()
    for lab in labels:
        out |= anc_self(g, lab)
    if drop_root:
        out.discard(root_of(g))
    return out


# ---------------------------------------------------------------------------- 0/1 and gamma
@SETTINGS
@given(tax_and_labels())
def test_zero_one_error_ancestor_rule_matches_brute_force(data):
    tax, yt, yp = data
    g = graph(tax)
    wrong = [t not in anc_self(g, p) for t, p in zip(yt, yp)]
    assert M.zero_one_error(yt, yp, tax) == pytest.approx(np.mean(wrong))
    # ids give the same answer as names
    assert M.zero_one_error(tax.index(yt), tax.index(yp), tax) == pytest.approx(np.mean(wrong))


@SETTINGS
@given(tax_and_labels())
def test_accuracy_is_exact_match_and_the_ancestor_rule_is_named_apart(data):
    """ "accuracy" counts only exact hits; "accuracy_ancestor" is seed 000's rule."""
    tax, yt, yp = data
    g = graph(tax)
    exact = np.mean([str(t) == str(p) for t, p in zip(yt, yp)])
    ancestor = np.mean([t in anc_self(g, p) for t, p in zip(yt, yp)])
    assert M.accuracy(yt, yp, tax) == pytest.approx(exact)
    assert M.accuracy_ancestor(yt, yp, tax) == pytest.approx(ancestor)
    out = M.evaluate(yt, yp, tax)
    assert out["accuracy"] == pytest.approx(exact)
    assert out["accuracy_ancestor"] == pytest.approx(ancestor)


def test_accuracy_differs_from_the_ancestor_rule_on_internal_labels():
    """The issue's case: internal true labels, leaves predicted below them."""
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    yt, yp = ["a", "a", "a1", "b"], ["a1", "a2", "a1", "a1"]
    assert M.accuracy(yt, yp, tax) == 0.25
    assert M.accuracy_ancestor(yt, yp, tax) == 0.75
    assert M.evaluate(yt, yp, tax)["accuracy"] == 0.25


def test_every_evaluated_metric_has_a_definition():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1")])
    single = M.evaluate(["a1", "b"], ["a", "b"], tax)
    multi = M.evaluate([("a1", "b"), ("a",)], [("a1",), ("a", "b")], tax)
    for key in set(single) | set(multi):
        info = M.METRICS[key]
        assert info.name == key and info.display and info.definition
        assert info.definition in M.metric_help(key)
    assert M.metric_label("accuracy_ancestor") == "accuracy (ancestor rule)"
    assert M.metric_label("accuracy") == "accuracy"
    assert M.metric_label("fit_time") == "fit time"


def test_accuracy_scorer_is_exact_match():
    from hierlab.evaluation.scoring import hierarchical_scorer

    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])

    class Fixed:
        taxonomy_ = tax

        def predict(self, X):
            return np.array(["a1", "a2", "a1", "a1"], dtype=object)

    y = np.array(["a", "a", "a1", "b"], dtype=object)
    assert hierarchical_scorer("accuracy")(Fixed(), None, y) == 0.25
    assert hierarchical_scorer("accuracy_ancestor")(Fixed(), None, y) == 0.75


@SETTINGS
@given(tax_and_label_sets())
def test_zero_one_error_multilabel_is_subset_loss_on_closures(data):
    tax, yt, yp = data
    g = graph(tax)
    wrong = [closure_brute(g, t, False) != closure_brute(g, p, False) for t, p in zip(yt, yp)]
    assert M.zero_one_error(yt, yp, tax) == pytest.approx(np.mean(wrong))


@SETTINGS
@given(tax_and_labels())
def test_tree_induced_error_and_half_match_brute_force(data):
    tax, yt, yp = data
    g = graph(tax)
    gam = [gamma_brute(g, t, p) for t, p in zip(yt, yp)]
    if tax.is_tree:
        # on a tree gamma is the undirected path length
        ug = g.to_undirected()
        assert gam == [nx.shortest_path_length(ug, t, p) for t, p in zip(yt, yp)]
    assert M.tree_induced_error(yt, yp, tax) == pytest.approx(np.mean(gam))
    assert M.tree_induced_error(yt, yp, tax, half=True) == pytest.approx(np.mean(gam) / 2)


@SETTINGS
@given(tax_and_labels())
def test_gamma_histogram_matches_counter(data):
    tax, yt, yp = data
    g = graph(tax)
    c = Counter(gamma_brute(g, t, p) for t, p in zip(yt, yp))
    df = M.gamma_histogram(yt, yp, tax)
    assert list(df.columns) == ["gamma", "count", "fraction"]
    assert df["gamma"].tolist() == list(range(max(c) + 1))
    assert df["count"].tolist() == [c.get(k, 0) for k in range(max(c) + 1)]
    assert df["fraction"].sum() == pytest.approx(1.0)


# ---------------------------------------------------------------------------- F1
def f1_single_brute(g, yt, yp):
    tp, fp, fn = Counter(), Counter(), Counter()
    for t, p in zip(yt, yp):
        if t in anc_self(g, p):
            tp[t] += 1
        else:
            fn[t] += 1
            fp[p] += 1
    classes = set(tp) | set(fp) | set(fn)
    micro = 2 * sum(tp.values()) / (2 * sum(tp.values()) + sum(fp.values()) + sum(fn.values()))
    macro = np.mean([2 * tp[c] / (2 * tp[c] + fp[c] + fn[c]) for c in classes])
    return micro, macro


@SETTINGS
@given(tax_and_labels())
def test_single_label_f1_match_brute_force(data):
    tax, yt, yp = data
    micro, macro = f1_single_brute(graph(tax), yt, yp)
    assert M.micro_f1(yt, yp, tax) == pytest.approx(micro)
    assert M.macro_f1(yt, yp, tax) == pytest.approx(macro)
    # seed 000: micro-F1 = 1 - 0/1 loss for single-label data
    assert M.micro_f1(yt, yp, tax) == pytest.approx(1 - M.zero_one_error(yt, yp, tax))


@SETTINGS
@given(tax_and_labels(leaves_only=True))
def test_single_label_f1_on_leaves_equal_sklearn(data):
    tax, yt, yp = data
    labels = sorted(set(yt) | set(yp))
    assert M.micro_f1(yt, yp, tax) == pytest.approx(f1_score(yt, yp, average="micro"))
    assert M.macro_f1(yt, yp, tax) == pytest.approx(
        f1_score(yt, yp, average="macro", labels=labels, zero_division=0)
    )


def _binarize(sets, names):
    col = {n: j for j, n in enumerate(names)}
    # one spare all-zero column keeps sklearn in multilabel-indicator mode for 1-node trees
    out = np.zeros((len(sets), len(names) + 1), dtype=int)
    for i, s in enumerate(sets):
        for lab in s:
            out[i, col[lab]] = 1
    return out


@SETTINGS
@given(tax_and_label_sets(), st.booleans())
def test_multilabel_f1_equal_sklearn_on_raw_or_closed_sets(data, closure):
    tax, yt, yp = data
    g = graph(tax)
    names = [str(x) for x in tax.names]
    if closure:
        st_, sp_ = (
            [closure_brute(g, s, True) if s else set() for s in yt],
            [closure_brute(g, s, True) if s else set() for s in yp],
        )
    else:
        st_, sp_ = [set(s) for s in yt], [set(s) for s in yp]
    T, P = _binarize(st_, names), _binarize(sp_, names)
    seen = [j for j in range(len(names)) if T[:, j].any() or P[:, j].any()]
    if not seen:
        assert np.isnan(M.macro_f1(yt, yp, tax, closure=closure))
        return
    assert M.micro_f1(yt, yp, tax, closure=closure) == pytest.approx(
        f1_score(T, P, average="micro", zero_division=0)
    )
    assert M.macro_f1(yt, yp, tax, closure=closure) == pytest.approx(
        f1_score(T, P, average="macro", labels=seen, zero_division=0)
    )
    # the indicator form gives the same as the label sets
    Ts = M.label_indicator(yt, tax)
    Ps = sp.csr_matrix(M.label_indicator(yp, tax).toarray())
    assert M.micro_f1(Ts, Ps, tax, closure=closure) == pytest.approx(
        M.micro_f1(yt, yp, tax, closure=closure)
    )


def test_macro_f1_explicit_labels_counts_unseen_class_as_zero():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("r", "c")])
    assert M.macro_f1(["a", "b"], ["a", "b"], tax) == 1.0
    assert M.macro_f1(["a", "b"], ["a", "b"], tax, labels=["a", "b", "c"]) == pytest.approx(2 / 3)


# ---------------------------------------------------------------------------- hierarchical PRF
def hprf_brute(g, yt, yp):
    inter = n_pred = n_true = 0
    for t, p in zip(yt, yp):
        ct = closure_brute(g, [t] if isinstance(t, str) else t, True)
        cp = closure_brute(g, [p] if isinstance(p, str) else p, True)
        inter += len(ct & cp)
        n_pred += len(cp)
        n_true += len(ct)
    return inter, n_pred, n_true


@SETTINGS
@given(st.one_of(tax_and_labels(), tax_and_label_sets()))
def test_hierarchical_prf_matches_brute_force(data):
    tax, yt, yp = data
    inter, n_pred, n_true = hprf_brute(graph(tax), yt, yp)
    h = M.hierarchical_prf(yt, yp, tax)
    if n_pred:
        assert h.precision == pytest.approx(inter / n_pred)
    else:
        assert np.isnan(h.precision)
    if n_true:
        assert h.recall == pytest.approx(inter / n_true)
    else:
        assert np.isnan(h.recall)
    if n_pred and n_true:
        hp, hr = inter / n_pred, inter / n_true
        assert h.f1 == pytest.approx(0.0 if hp + hr == 0 else 2 * hp * hr / (hp + hr))
        # micro-F1 on ancestor-closed sets is the hierarchical F1
        assert M.micro_f1(yt, yp, tax, closure=True) == pytest.approx(h.f1)


# ---------------------------------------------------------------------------- per level / node
@SETTINGS
@given(st.one_of(tax_and_labels(), tax_and_label_sets()))
def test_error_per_level_matches_brute_force(data):
    tax, yt, yp = data
    g = graph(tax)
    depth = depth_of(g)
    maxd = max(depth.values())
    df = M.error_per_level(yt, yp, tax)
    assert df["level"].tolist() == list(range(1, maxd + 1))
    for d in range(1, maxd + 1):
        n = err = 0
        for t, p in zip(yt, yp):
            ct = closure_brute(g, [t] if isinstance(t, str) else t, False)
            cp = closure_brute(g, [p] if isinstance(p, str) else p, False)
            td = {a for a in ct if depth[a] == d}
            pd_ = {a for a in cp if depth[a] == d}
            if td:
                n += 1
                err += td != pd_
        row = df[df["level"] == d].iloc[0]
        assert row["n"] == n
        if n:
            assert row["error"] == pytest.approx(err / n)
        else:
            assert np.isnan(row["error"])


def test_error_per_level_hand_example():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])
    df = M.error_per_level(["a1", "a", "b1", "a2"], ["a1", "a2", "a1", "a"], tax)
    # level 1: only b1 -> a1 is wrong (1/4); level 2: truths a1, b1, a2 (n=3), wrong b1, a2
    assert df["n"].tolist() == [4, 3]
    assert df["error"].tolist() == pytest.approx([0.25, 2 / 3])


@SETTINGS
@given(st.one_of(tax_and_labels(), tax_and_label_sets()))
def test_error_per_node_matches_brute_force(data):
    tax, yt, yp = data
    g = graph(tax)
    df = M.error_per_node(yt, yp, tax).set_index("node")
    for v in g:
        n = miss = 0
        for t, p in zip(yt, yp):
            ct = closure_brute(g, [t] if isinstance(t, str) else t, False)
            cp = closure_brute(g, [p] if isinstance(p, str) else p, False)
            if v in ct:
                n += 1
                miss += v not in cp
        assert df.loc[v, "n"] == n
        assert df.loc[v, "errors"] == miss
        if n:
            assert df.loc[v, "error"] == pytest.approx(miss / n)


# ---------------------------------------------------------------------------- tree similarity
def tree_mse_brute(t1: Taxonomy, t2: Taxonomy, classes):
    u1, u2 = graph(t1).to_undirected(), graph(t2).to_undirected()
    n = len(classes)
    total = 0.0
    for a in classes:
        for b in classes:
            if a == b:
                continue
            h1 = nx.shortest_path_length(u1, a, b)
            h2 = nx.shortest_path_length(u2, a, b)
            total += (1 / h1 - 1 / h2) ** 2
    return total / n**2


@st.composite
def two_trees_same_leaves(draw):
    t1 = draw(trees(min_nodes=3, max_nodes=15))
    leaves = [str(t1.names[i]) for i in t1.leaves]
    # a second tree over the same leaves: random internal nodes, leaves hung below them
    k = draw(st.integers(1, 6))
    parent = [-1] + [draw(st.integers(0, i - 1)) for i in range(1, k)]
    edges = [(f"i{parent[i]}", f"i{i}") for i in range(1, k)]
    edges += [(f"i{draw(st.integers(0, k - 1))}", leaf) for leaf in leaves]
    return t1, Taxonomy(edges), leaves


@SETTINGS
@given(two_trees_same_leaves())
def test_tree_similarity_mse_matches_brute_force(data):
    t1, t2, leaves = data
    assert M.tree_similarity_mse(t1, t2) == pytest.approx(tree_mse_brute(t1, t2, leaves))
    assert M.tree_similarity_mse(t1, t2, classes=leaves) == pytest.approx(
        M.tree_similarity_mse(t2, t1, classes=leaves)
    )
    assert M.tree_similarity_mse(t1, t1) == 0.0


def test_tree_similarity_mse_seed004_figure3_result1():
    """Seed 004, Section 6.2.3: swapping c2 and c3 in a balanced 4-leaf tree gives 0.03125."""
    actual = Taxonomy([("r", "x"), ("r", "y"), ("x", "c1"), ("x", "c2"), ("y", "c3"), ("y", "c4")])
    result1 = Taxonomy([("r", "x"), ("r", "y"), ("x", "c1"), ("x", "c3"), ("y", "c2"), ("y", "c4")])
    classes = ["c1", "c2", "c3", "c4"]
    assert M.tree_similarity_mse(actual, result1, classes) == pytest.approx(0.03125)


# ---------------------------------------------------------------------------- AU(PRC)
def ap_brute(y, s):
    """Average precision by thresholds: sum over distinct thresholds of (R_k - R_k-1) P_k."""
    P = sum(y)
    prev_r, total = 0.0, 0.0
    for thr in sorted(set(s), reverse=True):
        sel = [yy for yy, ss in zip(y, s) if ss >= thr]
        tp = sum(sel)
        r = tp / P
        total += (r - prev_r) * (tp / len(sel))
        prev_r = r
    return total


def clus_brute(y, s):
    """A line-by-line Python port of clus.error.ROCAndPRCurve (enumerateThresholdsAll,
    addOutputPR with Davis-Goadrich interpolation, addPointPROptimized, computeArea)."""
    n_pos = sum(y)
    pr: list[list[float]] = []
    state = {"extend": True, "prev_tp": 0, "prev_fp": 0}

    def add_point(prec, rec):
        pr.append([rec, prec])

    def add_opt(prec, rec):
        prev = pr[-1]
        if prev[0] == rec and prev[1] == prec:
            return
        if len(pr) <= 1:
            add_point(prec, rec)
            return
        prev2 = pr[-2]
        if abs(prev[1] - prec) < 1e-15 and abs(prev2[1] - prec) < 1e-15:
            prev[0] = rec
        elif abs(prev[0] - rec) < 1e-15 and abs(prev2[0] - rec) < 1e-15:
            prev[1] = prec
        else:
            add_point(prec, rec)

    def add_output(tp, fp):
        if tp + fp == 0:
            return
        prec, rec = tp / (tp + fp), tp / n_pos
        if state["extend"]:
            add_point(prec, 0.0)
            state["extend"] = False
        else:
            ptp, pfp = state["prev_tp"], state["prev_fp"]
            for cr in range(ptp + 1, tp):
                crfp = pfp + (fp - pfp) / (tp - ptp) * (cr - ptp)
                add_opt(cr / (cr + crfp), cr / n_pos)
        add_opt(prec, rec)
        state["prev_tp"], state["prev_fp"] = tp, fp

    vals = sorted(zip(s, y), key=lambda v: -v[0])
    tp = fp = 0
    prev = None
    for k, (sc, lab) in enumerate(vals):
        if k > 0 and sc != prev:
            add_output(tp, fp)
        tp += lab
        fp += 1 - lab
        prev = sc
    add_output(tp, fp)
    area = 0.0
    for a, b in itertools.pairwise(pr):
        area += 0.5 * (b[1] + a[1]) * (b[0] - a[0])
    return area


@st.composite
def score_matrices(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(2, 6))
    Y = np.array(draw(st.lists(st.integers(0, 1), min_size=n * m, max_size=n * m))).reshape(n, m)
    # few distinct values so that ties happen
    S = np.array(
        draw(st.lists(st.integers(0, 6), min_size=n * m, max_size=n * m)), dtype=float
    ).reshape(n, m)
    return Y, S / 6


@SETTINGS
@given(score_matrices())
def test_au_prc_average_precision_matches_brute_force_and_sklearn(data):
    Y, S = data
    y, s = Y[:, 1:].ravel().tolist(), S[:, 1:].ravel().tolist()
    got = M.au_prc(Y, S)
    if sum(y) == 0:
        assert np.isnan(got)
        return
    assert got == pytest.approx(ap_brute(y, s))
    # C-HMCNN: average_precision_score(Y[:, to_eval], scores[:, to_eval], average="micro")
    assert got == pytest.approx(average_precision_score(Y[:, 1:], S[:, 1:], average="micro"))


@SETTINGS
@given(score_matrices())
def test_au_prc_clus_interpolation_matches_port_of_clus(data):
    Y, S = data
    y, s = Y[:, 1:].ravel().tolist(), S[:, 1:].ravel().tolist()
    got = M.au_prc(sp.csr_matrix(Y), S, interpolation="clus")
    if sum(y) == 0:
        assert np.isnan(got)
        return
    assert got == pytest.approx(clus_brute(y, s))
    assert 0.0 <= got <= 1.0 + 1e-12


def test_au_prc_perfect_and_label_input():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    y = ["a1", "b", "a2"]
    Y = M.label_indicator(y, tax, closure=True).toarray()
    assert M.au_prc(Y, Y.astype(float)) == 1.0
    assert M.au_prc(Y, Y.astype(float), interpolation="clus") == 1.0
    # labels plus a taxonomy are closed under ancestors first
    S = np.random.default_rng(0).random(Y.shape)
    assert M.au_prc(y, S, taxonomy=tax) == pytest.approx(M.au_prc(Y, S))
    assert M.au_prc(y, S, taxonomy=tax, nodes=["a1", "a2"]) == pytest.approx(
        average_precision_score(Y[:, [3, 4]], S[:, [3, 4]], average="micro")
    )
    with pytest.raises(ValueError, match="interpolation"):
        M.au_prc(Y, S, interpolation="nope")
    with pytest.raises(DataError):
        M.au_prc(Y, S[:, :2])


# ---------------------------------------------------------------------------- evaluate, inputs
@SETTINGS
@given(tax_and_labels())
def test_evaluate_is_consistent_with_the_single_measures(data):
    tax, yt, yp = data
    out = M.evaluate(yt, yp, tax)
    assert out["zero_one_error"] == M.zero_one_error(yt, yp, tax)
    assert out["accuracy_ancestor"] == pytest.approx(1 - out["zero_one_error"])
    assert out["accuracy"] == pytest.approx(M.accuracy(yt, yp, tax))
    assert out["tree_induced_error"] == pytest.approx(M.tree_induced_error(yt, yp, tax))
    assert out["half_tree_induced_error"] == pytest.approx(out["tree_induced_error"] / 2)
    assert out["macro_f1"] == pytest.approx(M.macro_f1(yt, yp, tax))
    h = M.hierarchical_prf(yt, yp, tax)
    assert out["hierarchical_recall"] == h.recall or np.isnan(h.recall)
    assert all(isinstance(v, float) for v in out.values())


def test_evaluate_multilabel_has_no_gamma():
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1")])
    out = M.evaluate([("a1", "b"), ("a",)], [("a1",), ("a", "b")], tax)
    assert "tree_induced_error" not in out
    assert out["zero_one_error"] == 1.0


def test_input_errors_and_empty():
    tax = Taxonomy([("r", "a"), ("r", "b")])
    with pytest.raises(DataError, match="2 examples"):
        M.zero_one_error(["a", "b"], ["a"], tax)
    with pytest.raises(TaxonomyError, match="zzz"):
        M.tree_induced_error(["a"], ["zzz"], tax)
    with pytest.raises(DataError, match="single-label"):
        M.tree_induced_error([("a", "b")], [("a",)], tax)
    with pytest.raises(DataError, match="1-D"):
        M.tree_induced_error(np.array([["a", "b"], ["a", "a"]]), ["a", "b"], tax)
    assert np.isnan(M.zero_one_error([], [], tax))
    assert np.isnan(M.tree_induced_error([], [], tax))
    # pandas Series and numpy str arrays work like lists
    import pandas as pd

    assert M.zero_one_error(pd.Series(["a", "b"]), np.array(["a", "a"]), tax) == 0.5


def test_vectorised_on_a_large_tree():
    """Metrics on 200k pairs run on arrays (a Python loop would take far longer than CI allows)."""
    rng = np.random.default_rng(1)
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, 3000)]
    tax = Taxonomy.from_parent_array(parent)
    t = rng.integers(0, tax.n_nodes, 200_000)
    p = rng.integers(0, tax.n_nodes, 200_000)
    out = M.evaluate(t, p, tax)
    sub = slice(0, 300)
    g = graph(tax).to_undirected()
    gam = [
        nx.shortest_path_length(g, str(tax.names[a]), str(tax.names[b]))
        for a, b in zip(t[sub], p[sub])
    ]
    assert M.tree_induced_error(t[sub], p[sub], tax) == pytest.approx(np.mean(gam))
    assert 0.0 <= out["zero_one_error"] <= 1.0
    assert M.error_per_level(t, p, tax)["n"].iloc[0] == int((tax.depth[t] >= 1).sum())


def test_evaluate_empty_and_dag():
    tree = Taxonomy([("r", "a"), ("r", "b")])
    out = M.evaluate([], [], tree)
    assert set(out) >= {"zero_one_error", "tree_induced_error", "micro_f1"}
    assert all(np.isnan(v) for v in out.values())
    dag = Taxonomy([("r", "a"), ("r", "b"), ("a", "c"), ("b", "c"), ("b", "d")])
    out = M.evaluate(["c", "d", "a"], ["c", "c", "c"], dag)
    assert out["zero_one_error"] == pytest.approx(1 / 3)  # d is wrong; a is an ancestor of c
    assert out["tree_induced_error"] == pytest.approx((0 + 2 + 1) / 3)


def test_confusion_at_level_equals_a_python_count() -> None:
    from hierlab.evaluation.metrics import confusion_at_level

    tax = Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2"), ("a1", "x")]
    )
    rng = np.random.default_rng(3)
    names = [str(n) for n in tax.names[1:]]
    y_true = rng.choice(names, 80)
    y_pred = rng.choice(names, 80)
    for level in (1, 2, 3):
        got = confusion_at_level(y_true, y_pred, tax, level)
        expected: dict[tuple[str, str], int] = {}
        for t, p in zip(y_true, y_pred):
            at = [
                str(tax.names[i])
                for i in tax.ancestors(t, include_self=True)
                if tax.depth[i] == level
            ]
            ap = [
                str(tax.names[i])
                for i in tax.ancestors(p, include_self=True)
                if tax.depth[i] == level
            ]
            if not at:
                continue
            key = (at[0], ap[0] if ap else "(stopped above)")
            expected[key] = expected.get(key, 0) + 1
        assert int(got.to_numpy().sum()) == sum(expected.values())
        for (t, p), c in expected.items():
            assert got.loc[t, p] == c
