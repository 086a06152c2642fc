"""Views that scale with the number of classes, against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from hierlab import Taxonomy
from hierlab.core.exceptions import ParameterError
from hierlab.evaluation.metrics import confusion_at_level
from hierlab.evaluation.views import STOPPED_ABOVE, collapsed_subtree, confused_pairs


def _random_tree(n: int, seed: int) -> Taxonomy:
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    return Taxonomy.from_parent_array(parent, [f"n{i}" for i in range(n)])


@pytest.mark.parametrize("seed", range(5))
def test_confused_pairs_are_the_nonzero_cells_of_the_confusion_table(seed: int) -> None:
    tax = _random_tree(40, seed)
    rng = np.random.default_rng(seed)
    t = rng.choice(np.flatnonzero(tax.depth >= 1), 300)
    p = rng.integers(0, tax.n_nodes, 300)  # some predictions stop above (internal, root)
    for level in range(1, tax.max_depth + 1):
        table = confusion_at_level(t, p, tax, level)
        pairs = confused_pairs(t, p, tax, level)
        dense = {
            (str(r), str(c)): int(table.loc[r, c])
            for r in table.index
            for c in table.columns
            if table.loc[r, c] > 0
        }
        got = {(a, b): int(n) for a, b, n in zip(pairs["true"], pairs["predicted"], pairs["count"])}
        assert got == dense
        assert list(pairs["count"]) == sorted(pairs["count"], reverse=True)
        for a, b, share in zip(pairs["true"], pairs["predicted"], pairs["share"]):
            assert share == pytest.approx(table.loc[a, b] / table.loc[a].sum())
        assert list(pairs["correct"]) == [a == b for a, b in zip(pairs["true"], pairs["predicted"])]
        assert (pairs["predicted_id"] == -1).sum() == (pairs["predicted"] == STOPPED_ABOVE).sum()


def test_confused_pairs_rejects_a_level_outside_the_tree() -> None:
    tax = _random_tree(10, 0)
    with pytest.raises(ParameterError, match="level must be in"):
        confused_pairs([1], [1], tax, tax.max_depth + 1)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("budget", [1, 5, 20, 60, 500])
def test_collapsed_subtree_is_the_deepest_cut_under_the_budget(seed: int, budget: int) -> None:
    tax = _random_tree(120, seed)
    for root in (0, int(np.argmax(tax.subtree_size * (tax.depth == 1)))):
        got = collapsed_subtree(tax, root, budget)
        below = [v for v in range(tax.n_nodes) if root in tax.path(v)]
        rel = {v: int(tax.depth[v] - tax.depth[root]) for v in below}
        # brute force: the largest cut whose nodes fit (root and its children always)
        best = 0
        for d in range(max(rel.values()) + 1):
            if sum(r <= d for r in rel.values()) <= budget:
                best = d
        best = max(best, min(1, max(rel.values())))
        assert list(got) == sorted(v for v in below if rel[v] <= best)
        kept = set(got.tolist())
        assert all(int(tax.parent[v]) in kept for v in got if v != root)


@pytest.mark.parametrize("seed", range(4))
def test_pr_table_equals_the_stable_argsort_oracle(seed: int) -> None:
    """The value-sort PR table (``_pr_table``) against the pairs sorted by score with ties."""
    from hierlab.evaluation.metrics import _pr_table

    rng = np.random.default_rng(seed)
    s = np.round(rng.random(5000), 2)  # many ties
    y = (rng.random(5000) < s).astype(np.int64)
    order = np.argsort(-s, kind="mergesort")
    ys, ss = y[order], s[order]
    ends = [i for i in range(len(ss)) if i == len(ss) - 1 or ss[i + 1] != ss[i]]
    thresholds, tp, fp = _pr_table(y, s)
    assert thresholds.tolist() == [ss[i] for i in ends]
    assert tp.tolist() == [int(ys[: i + 1].sum()) for i in ends]
    assert fp.tolist() == [i + 1 - int(ys[: i + 1].sum()) for i in ends]
