"""``DeltaRows``: the label losses a row at a time, against the table of :func:`delta`.

Every loss on a tree and a DAG: the numpy rows and the compiled row equal the table built from
the ancestor matrix (bit for bit: the same numbers added in the same order in both forms), and
the single-label hinge of seed 003 built at 2,000 leaves holds no (labels x leaves) table.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core import losses
from hierlab.core.exceptions import ParameterError
from hierlab.core.losses import LOSSES, DeltaRows, LabelLoss, delta, get_loss, register_loss
from hierlab.core.taxonomy import Taxonomy
from hierlab.methods.nhsvm.model import HierarchicalHinge

TREE = Taxonomy(
    [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2"), ("b2", "c1"),
     ("b2", "c2"), ("b2", "c3")]
)  # fmt: skip
DAG = Taxonomy(
    [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "c1"), ("b", "b1"), ("b", "b2"), ("b2", "c1"),
     ("b2", "c2")]
)  # fmt: skip


@pytest.mark.parametrize("tax", [TREE, DAG], ids=["tree", "dag"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_rows_equal_the_table(
    tax: Taxonomy, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(len(name))
    w = rng.uniform(0.1, 2.0, tax.n_nodes)
    labels = np.arange(tax.n_nodes)
    rows = DeltaRows.of(name, tax, tax.leaves, w)
    table = delta(name, tax, labels, tax.leaves, w)
    got = rows.rows(labels)
    with monkeypatch.context() as mp:  # the numpy rows: the compiled batch's numbers to the bit
        mp.setattr(losses, "DELTA_ROWS", None)
        np.testing.assert_array_equal(rows.rows(labels), got)
    # compared before the square root: the table's sums in another order leave rounding noise
    # (1e-16) where the distance is 0, which sqrt lifts to 1e-8; the rows give 0 there
    square = LOSSES[name].transform(4.0) == 2.0
    np.testing.assert_allclose(
        got**2 if square else got, table**2 if square else table, rtol=1e-13, atol=1e-13
    )
    same = labels[:, None] == tax.leaves[None, :]
    assert np.all(got[same] == 0.0)  # Delta(y, y) = 0 exactly
    for v in labels:  # the compiled row and its Python steps: the numpy rows to the bit
        np.testing.assert_array_equal(rows.row(v), got[v])
        out = np.empty(len(tax.leaves))
        losses._delta_row(int(v), *rows.args(), np.zeros(tax.n_nodes), out)
        np.testing.assert_array_equal(out, got[v])
    assert rows.max_over(labels, batch=3) == got.max()


def test_hinge_at_2000_leaves_holds_no_labels_by_leaves_table() -> None:
    """Building the single-label hinge (every leaf a training label) allocates O(m d + n),
    not the 32 MB of a (2,000 x 2,000) Delta table."""
    edges = [("root", f"s{i}") for i in range(40)]
    edges += [(f"s{i}", f"s{i}.{j}") for i in range(40) for j in range(50)]
    tax = Taxonomy(edges)
    leaves = tax.leaves
    X = sp.random(len(leaves), 50, density=0.1, random_state=0, format="csr")
    _ = tax.ancestor_matrix, tax.subtree_size, tax.depth  # cached, built before the count
    tracemalloc.start()
    hinge = HierarchicalHinge(X, leaves, tax, np.ones(tax.n_nodes), 1e-3, "hamming")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert hinge.max_loss == 4.0  # two leaves under different top nodes: 4 nodes apart
    table_bytes = 8 * len(leaves) ** 2
    assert peak < table_bytes / 4, (peak, table_bytes)


@pytest.mark.parametrize("method", ["hsvm", "nhsvm13"])
def test_fits_with_the_table_and_with_rows_on_the_fly_are_identical(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the (labels x leaves) table is kept (few classes) or each example's row is
    formed on the fly (many), the compiled epochs see the same numbers: the same weights."""
    import warnings

    import hierlab

    rng = np.random.default_rng(0)
    X = sp.random(80, 30, density=0.2, random_state=1, format="csr")
    y = rng.choice(TREE.names[TREE.leaves], size=80)
    fits = []
    for cap in (None, 0):
        if cap is not None:
            monkeypatch.setattr(losses, "DELTA_TABLE_MAX_BYTES", cap)
        # the compiled Pegasos epochs read the table or the rows (BCFW reads neither)
        est = hierlab.make_estimator(method, taxonomy=TREE, epochs=5, solver="pegasos")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
        fits.append(est.coef_.copy())
    np.testing.assert_array_equal(fits[0], fits[1])


def _cube_root(size: float) -> float:
    return np.cbrt(size)


def test_a_loss_is_one_row_and_every_form_calls_its_transform(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loss registered once is computed by the table, the numpy rows, the compiled rows and
    the compiled row alike (one transform, no per-loss branch in any of them), against the
    brute-force path difference of each pair on the DAG."""
    monkeypatch.setitem(LOSSES, "cube_root", None)  # the table as it was after the test
    del LOSSES["cube_root"]
    loss = register_loss(LabelLoss("cube_root", _cube_root))
    assert get_loss("cube_root") is loss
    anc = [set(DAG.ancestor_matrix[n].indices) - {DAG.root} for n in range(DAG.n_nodes)]
    labels = np.arange(DAG.n_nodes)
    want = np.array([[np.cbrt(len(anc[a] ^ anc[b])) for b in DAG.leaves] for a in labels])
    rows = DeltaRows.of("cube_root", DAG, DAG.leaves)
    np.testing.assert_allclose(delta("cube_root", DAG, labels, DAG.leaves), want, rtol=1e-15)
    np.testing.assert_allclose(rows.rows(labels), want, rtol=1e-15)
    with monkeypatch.context() as mp:
        mp.setattr(losses, "DELTA_ROWS", None)
        np.testing.assert_allclose(rows.rows(labels), want, rtol=1e-15)
    for v in labels:
        np.testing.assert_allclose(rows.row(v), want[v], rtol=1e-15)


def test_an_unknown_or_doubled_loss_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"loss must be one of .*'hamming'.* got 'hammming'"):
        delta("hammming", TREE, [1], TREE.leaves)
    with pytest.raises(ParameterError, match="loss must be one of"):
        DeltaRows.of("hammming", TREE, TREE.leaves)
    with pytest.raises(ParameterError, match="'hamming' is already registered"):
        register_loss(LabelLoss("hamming", np.sqrt))
    with pytest.raises(ParameterError, match="must be 0 between equal labels"):
        register_loss(LabelLoss("plus_one", lambda size: size + 1.0))
    assert "plus_one" not in LOSSES
