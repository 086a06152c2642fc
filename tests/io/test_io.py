"""Readers and writers of :mod:`hierlab.io`: taxonomy formats, CSV, text CSV, svmlight, ARFF."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import hierlab
from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import DataError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io import (
    arff_taxonomy,
    decode_bytes,
    guess_dataset_format,
    guess_taxonomy_format,
    load_dataset,
    parse_taxonomy_text,
    read_arff,
    read_dataset_bytes,
    read_svmlight,
    read_taxonomy,
    taxonomy_to_text,
    write_csv_dataset,
    write_svmlight,
    write_taxonomy,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "datasets"

TREE = Taxonomy(
    [
        ("root", "animal"),
        ("root", "vehicle"),
        ("animal", "mammal"),
        ("animal", "bird"),
        ("mammal", "cat"),
        ("mammal", "dog"),
        ("bird", "eagle"),
        ("bird", "penguin"),
        ("vehicle", "car"),
        ("vehicle", "bike"),
    ]
)
DAG = Taxonomy(
    [
        ("root", "animal"),
        ("root", "swimmer"),
        ("animal", "bird"),
        ("animal", "fish"),
        ("swimmer", "fish"),
        ("swimmer", "penguin"),
        ("bird", "penguin"),
        ("bird", "eagle"),
        ("fish", "shark"),
    ]
)


# ============================================================================ taxonomy files
@pytest.mark.parametrize("fmt", ["edges", "csv", "paths", "json"])
def test_taxonomy_round_trip_tree(tmp_path, fmt):
    ext = {"edges": ".txt", "csv": ".csv", "paths": ".paths", "json": ".json"}[fmt]
    path = tmp_path / f"t{ext}"
    write_taxonomy(TREE, path)
    assert guess_taxonomy_format(path.read_text(), str(path)) == fmt
    back = read_taxonomy(path)
    assert back == TREE
    assert back.names.tolist() == TREE.names.tolist()
    # the content alone (no extension) is recognised too
    assert parse_taxonomy_text(path.read_bytes()) == TREE
    # the top-level API (hierlab.write_taxonomy / read_taxonomy) is this writer and reader
    hierlab.write_taxonomy(TREE, tmp_path / f"u{ext}")
    assert hierlab.read_taxonomy(tmp_path / f"u{ext}") == TREE


@pytest.mark.parametrize("fmt", ["edges", "csv", "json"])
def test_taxonomy_round_trip_dag(tmp_path, fmt):
    path = tmp_path / "dag.any"
    write_taxonomy(DAG, path, format=fmt)
    back = read_taxonomy(path, format=fmt)
    assert not back.is_tree
    assert back == DAG
    assert parse_taxonomy_text(path.read_text()) == DAG  # guessed from content


def test_paths_format_refuses_a_dag(tmp_path):
    with pytest.raises(TaxonomyError, match="DAG"):
        write_taxonomy(DAG, tmp_path / "d.paths")


def test_full_path_names_round_trip(tmp_path):
    """Clus FunCat names ("01/02") survive the paths format (a names=full directive)."""
    tax = Taxonomy.from_paths(["01", "01/01", "01/01/03", "02", "02/05"], names="full", root="root")
    text = taxonomy_to_text(tax, "paths")
    assert text.startswith("# hierlab: names=full")
    back = parse_taxonomy_text(text)
    assert back == tax
    assert set(back.names) == {"root", "01", "01/01", "01/01/03", "02", "02/05"}
    for fmt in ("edges", "csv", "json"):
        assert parse_taxonomy_text(taxonomy_to_text(tax, fmt), format=fmt) == tax


def test_single_node_taxonomy_round_trips():
    tax = Taxonomy([], nodes=["only"])
    for fmt in TAXONOMY_FORMATS_ALL:
        back = parse_taxonomy_text(taxonomy_to_text(tax, fmt), format=fmt)
        assert back.names.tolist() == ["only"]


TAXONOMY_FORMATS_ALL = ("edges", "csv", "paths", "json")


@st.composite
def random_taxonomies(draw):
    """Random trees (parent[i] < i) and DAGs (extra parents among earlier nodes)."""
    n = draw(st.integers(1, 25))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, n)]
    names = [f"n{i}" for i in range(n)]
    edges = [(names[p], names[i + 1]) for i, p in enumerate(parents)]
    if draw(st.booleans()) and n > 2:
        for i in range(2, n):
            extra = draw(st.integers(-1, i - 1))
            if extra >= 0 and (names[extra], names[i]) not in edges:
                edges.append((names[extra], names[i]))
    if not edges:
        return Taxonomy([], nodes=names[:1])
    return Taxonomy(edges)


@settings(max_examples=40, deadline=None)
@given(random_taxonomies(), st.sampled_from(TAXONOMY_FORMATS_ALL))
def test_round_trip_property(tax, fmt):
    if fmt == "paths" and not tax.is_tree:
        with pytest.raises(TaxonomyError):
            taxonomy_to_text(tax, fmt)
        return
    text = taxonomy_to_text(tax, fmt)
    back = parse_taxonomy_text(text, format=fmt)
    assert back == tax
    assert back.is_tree == tax.is_tree
    # and the guess finds the format from the content alone (edges and csv are equivalent)
    guessed = parse_taxonomy_text(text)
    assert guessed == tax


def test_example_taxonomy_files_agree():
    ref = read_taxonomy(EXAMPLES / "taxonomy.json")
    for f in ("taxonomy_edges.txt", "taxonomy.csv", "taxonomy.paths"):
        assert read_taxonomy(EXAMPLES / f) == ref, f
    assert ref == TREE
    assert read_taxonomy(EXAMPLES / "dag_taxonomy.json") == DAG


def test_edges_comments_blank_lines_and_csv_header_options():
    text = "# a comment\n\nroot a   # trailing comment\nroot\tb\n\n"
    assert parse_taxonomy_text(text) == Taxonomy([("root", "a"), ("root", "b")])
    for header in ("parent,child\n", "source,target\n", ""):
        t = parse_taxonomy_text(header + "root,a\nroot,b\n", format="csv")
        assert t == Taxonomy([("root", "a"), ("root", "b")])
    tsv = parse_taxonomy_text("parent\tchild\nroot\ta\n", filename="x.tsv")
    assert tsv == Taxonomy([("root", "a")])


def test_paths_with_several_tops_need_a_root():
    with pytest.raises(TaxonomyError, match="several roots"):
        parse_taxonomy_text("a/b\nc/d\n", format="paths")
    t = parse_taxonomy_text("a/b\nc/d\n", format="paths", root="top")
    assert t.names[0] == "top" and set(t.names) == {"top", "a", "b", "c", "d"}


@pytest.mark.parametrize(
    ("text", "fmt", "pattern"),
    [
        ("root a\nroot b c\n", "edges", r"f\.txt, line 2: expected 'parent child'"),
        ("root a\nroot a\n", "edges", r"f\.txt, line 2: duplicate edge 'root' -> 'a'"),
        ("root a\na a\n", "edges", r"f\.txt, line 2: self loop on node 'a'"),
        ("root a\na b\nb a\n", "edges", r"f\.txt, line \d: cycle"),
        ("r1 a\nr2 b\n", "edges", r"f\.txt, line \d: several roots"),
        ("parent,child\nroot,a\nroot,a,b\n", "csv", r"f\.txt, line 3: expected two columns"),
        ("parent,child\nroot,\n", "csv", r"f\.txt, line 2: empty child"),
        ("root\nroot//a\n", "paths", r"f\.txt, line 2: path 'root//a' has an empty component"),
        ('{"name": "r",\n "children": [}', "json", r"f\.txt, line 2: not valid JSON"),
        ("# only comments\n\n", "edges", r"f\.txt: empty taxonomy"),
    ],
)
def test_taxonomy_errors_name_file_and_line(text, fmt, pattern):
    with pytest.raises(TaxonomyError, match=pattern):
        parse_taxonomy_text(text, format=fmt, filename="f.txt")


def test_cycle_error_names_a_node_of_the_cycle(tmp_path):
    p = tmp_path / "cyc.txt"
    p.write_text("root a\na b\nb c\nc a\n")
    with pytest.raises(TaxonomyError) as err:
        read_taxonomy(p)
    assert err.value.node in {"a", "b", "c"}
    assert str(p) in str(err.value)


def test_missing_taxonomy_file_is_a_taxonomy_error(tmp_path):
    with pytest.raises(TaxonomyError, match="no such file"):
        read_taxonomy(tmp_path / "nope.txt")


def test_encodings():
    text = "root café\ncafé crème\n"
    expected = Taxonomy([("root", "café"), ("café", "crème")])
    for data in (
        text.encode("utf-8"),
        b"\xef\xbb\xbf" + text.encode("utf-8"),
        text.encode("utf-16"),  # with a BOM
        text.encode("latin-1"),
        text.replace("\n", "\r\n").encode("utf-8"),
    ):
        assert parse_taxonomy_text(data) == expected
    assert decode_bytes(b"\xef\xbb\xbfa,b\r\n") == "a,b\n"


# ============================================================================ data: examples
def test_every_example_file_reads():
    tax = read_taxonomy(EXAMPLES / "taxonomy.json")
    seen = set()
    for f in sorted(EXAMPLES.iterdir()):
        if f.name.startswith(("taxonomy", "dag_")) or f.suffix == ".md":
            continue
        ds = load_dataset(f)
        assert isinstance(ds, HierDataset)
        assert ds.n_samples > 0
        assert np.all(np.isfinite(ds.X.data if sp.issparse(ds.X) else ds.X))
        seen.add(ds.meta["format"])
        if f.suffix in (".csv", ".svmlight") and "paths" not in f.name:
            with_tax = load_dataset(f, taxonomy=tax)
            assert with_tax.taxonomy == tax
            assert set(np.concatenate([np.atleast_1d(v) for v in with_tax.y])) <= set(tax.names)
    assert seen == {"csv", "text", "svmlight", "arff"}


def test_example_names_csv():
    ds = load_dataset(EXAMPLES / "example_names.csv", taxonomy=EXAMPLES / "taxonomy.paths")
    assert ds.X.shape == (30, 4)
    assert ds.feature_names == ["size", "speed", "weight", "noise"]
    assert ds.meta["ids"][:2].tolist() == ["r0", "r1"]
    assert sorted(set(ds.y)) == ["bike", "car", "cat", "dog", "eagle", "penguin"]
    flat = load_dataset(EXAMPLES / "example_names.csv")  # no taxonomy: flat
    assert flat.taxonomy.max_depth == 1 and len(flat.taxonomy.leaves) == 6


def test_path_labels_build_the_taxonomy_and_test_uses_train_means():
    train = load_dataset(EXAMPLES / "example_paths.csv")
    assert train.taxonomy == TREE
    assert train.y[0] == "cat"
    raw = np.genfromtxt(EXAMPLES / "example_paths.csv", delimiter=",", skip_header=1)[:, :4]
    means = np.nanmean(raw, axis=0)
    np.testing.assert_allclose(train.meta["impute_means"], means)
    missing = np.isnan(raw)
    assert missing.sum() == 2
    np.testing.assert_allclose(train.X[missing], np.broadcast_to(means, raw.shape)[missing])
    np.testing.assert_allclose(train.X[~missing], raw[~missing])
    test = load_dataset(EXAMPLES / "example_paths_test.csv", reference=train)
    assert test.taxonomy is train.taxonomy
    # a test file with a missing cell gets the training mean, not its own
    text = (EXAMPLES / "example_paths_test.csv").read_text().split("\n")
    cells = text[1].split(",")
    cells[0] = "?"
    text[1] = ",".join(cells)
    t2 = read_dataset_bytes("\n".join(text).encode(), "t.csv", reference=train)
    assert t2.X[0, 0] == pytest.approx(means[0])


def test_multilabel_csv():
    ds = load_dataset(EXAMPLES / "example_multilabel.csv", taxonomy=TREE)
    assert ds.is_multilabel
    assert ds.y[0] == ("mammal",)
    assert all(isinstance(v, tuple) for v in ds.y)
    assert any(len(v) == 2 for v in ds.y)
    Y = ds.label_ids()
    assert sp.issparse(Y) and Y.shape == (30, TREE.n_nodes)


def test_text_csv_matches_sklearn_tfidf():
    import pandas as pd
    from sklearn.feature_extraction.text import TfidfVectorizer

    ds = load_dataset(EXAMPLES / "example_text.csv")
    assert ds.meta["format"] == "text"
    df = pd.read_csv(EXAMPLES / "example_text.csv")
    ref = TfidfVectorizer(sublinear_tf=True).fit(df["text"])
    np.testing.assert_allclose(ds.X.toarray(), ref.transform(df["text"]).toarray())
    assert ds.feature_names == ref.get_feature_names_out().tolist()
    assert ds.X.indices.dtype == np.int32
    assert ds.taxonomy == TREE
    # the test split reuses the fitted vectorizer
    test_csv = b'text,label\n"purr meow unknownword",animal/mammal/cat\n'
    te = read_dataset_bytes(test_csv, "t.csv", reference=ds)
    assert te.n_features == ds.n_features
    np.testing.assert_allclose(te.X.toarray(), ref.transform(["purr meow unknownword"]).toarray())


def test_text_column_with_other_name_and_params():
    data = b"doc_id,abstract,label\n1,hello world again,a\n2,goodbye world,b\n"
    assert guess_dataset_format(data.decode(), "x.csv") == "text"
    ds = read_dataset_bytes(data, "x.csv", vectorizer_params={"min_df": 2})
    assert ds.feature_names == ["world"]
    assert ds.meta["ids"].tolist() == ["1", "2"]


def test_svmlight_examples_and_round_trip(tmp_path):
    ds = load_dataset(EXAMPLES / "example.svmlight", taxonomy=TREE)
    assert ds.X.shape == (30, 4)
    assert ds.X.indices.dtype == np.int32 and ds.X.indptr.dtype == np.int32
    csv_ds = load_dataset(EXAMPLES / "example_names.csv", taxonomy=TREE)
    np.testing.assert_allclose(ds.X.toarray(), csv_ds.X)
    assert ds.y.tolist() == csv_ds.y.tolist()
    ml = load_dataset(EXAMPLES / "example_multilabel.svmlight", taxonomy=TREE)
    assert ml.is_multilabel and ml.y[0] == ("cat", "car")
    out = tmp_path / "rt.svmlight"
    write_svmlight(ml, out)
    back = load_dataset(out, taxonomy=TREE)
    assert back.y.tolist() == ml.y.tolist()
    np.testing.assert_allclose(back.X.toarray(), ml.X.toarray())
    # n_features from the reference: a narrower test file keeps the width
    te = read_dataset_bytes(b"cat 1:0.5\n", "t.svm", reference=ds)
    assert te.X.shape == (1, 4)


def test_csv_round_trip(tmp_path):
    ds = load_dataset(EXAMPLES / "example_multilabel.csv", taxonomy=TREE)
    write_csv_dataset(ds, tmp_path / "x.csv")
    back = load_dataset(tmp_path / "x.csv", taxonomy=TREE)
    np.testing.assert_allclose(back.X, ds.X)
    assert back.y.tolist() == ds.y.tolist()


def test_format_guessing():
    assert guess_dataset_format("a 1:2 3:4\nb 2:1\n", "x.txt") == "svmlight"
    assert guess_dataset_format("x,y,label\n1,2,a\n", "x.txt") == "csv"
    assert guess_dataset_format("% c\n@RELATION r\n", "x.txt") == "arff"
    assert guess_dataset_format("anything", "x.arff") == "arff"
    assert guess_dataset_format("text,label\nhello there you,a\n", "x.csv") == "text"
    assert guess_taxonomy_format("a/b\na/c\n") == "paths"
    assert guess_taxonomy_format("parent,child\na,b\n") == "csv"
    assert guess_taxonomy_format("a b\n") == "edges"
    assert guess_taxonomy_format('{"name": "r"}') == "json"


def test_read_dataset_bytes_equals_load_dataset():
    for f in ("example_tree.arff", "example_paths.csv", "example.svmlight", "example_text.csv"):
        a = load_dataset(EXAMPLES / f)
        b = read_dataset_bytes((EXAMPLES / f).read_bytes(), f)
        Xa = a.X.toarray() if sp.issparse(a.X) else a.X
        Xb = b.X.toarray() if sp.issparse(b.X) else b.X
        np.testing.assert_allclose(Xa, Xb)
        assert a.y.tolist() == b.y.tolist()
        assert a.taxonomy == b.taxonomy


def test_public_entry_point():
    assert hasattr(hierlab, "Taxonomy")
    from hierlab.io import load_dataset as ld

    assert ld is load_dataset


def test_latin1_and_bom_csv():
    text = "x,label\n1,café\n2,thé\n"
    for data in (text.encode("latin-1"), b"\xef\xbb\xbf" + text.encode(), text.encode("utf-16")):
        ds = read_dataset_bytes(data, "x.csv")
        assert ds.y.tolist() == ["café", "thé"]
        assert ds.feature_names == ["x"]


# ============================================================================ data: errors
@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"x,y,label\n1,2,a\n1,oops,b\n", r"d\.csv, line 3, column 'y': value 'oops' is not"),
        (b"x,label\n1,a\n\n2,\n", r"d\.csv, line 4, column 'label': empty label"),
        (b"x,z\n1,2\n", r"d\.csv, line 1: no label column"),
        (b"x,label\n1,a\n2,zzz\n", r"d\.csv, line 3, column 'label': label 'zzz' is not a node"),
        (b"x,x,label\n1,2,a\n", r"d\.csv, line 1, column 'x': duplicate column"),
        (b"x,label\n", r"d\.csv: no data row"),
        (b"", r"d\.csv: empty file"),
    ],
)
def test_csv_errors_name_file_line_column(content, pattern):
    tax = Taxonomy.flat(["a", "b"])
    with pytest.raises(DataError, match=pattern):
        read_dataset_bytes(content, "d.csv", taxonomy=tax if b"zzz" in content else None)


def test_csv_quoted_newlines_keep_line_numbers():
    data = b'text,label\n"two\nlines",a\n"ok",\n'
    with pytest.raises(DataError, match=r"line 4, column 'label': empty label"):
        read_dataset_bytes(data, "q.csv", format="text")


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (b"a 1:1\nb 1:x\n", r"s\.svm, line 2, column 'token 2 = 1:x'"),
        (b"a 1:1\n# c\nb 2:1 1:1\n", r"s\.svm, line 3, column 'token 3 = 1:1'"),
        (b"a 1:1\n 1:2\n", r"s\.svm, line 2, column 'label': a line must start"),
        (b"a 1:1\nzz 1:1\n", r"s\.svm, line 2, column 'label': label 'zz' is not a node"),
    ],
)
def test_svmlight_errors(content, pattern):
    with pytest.raises(DataError, match=pattern):
        read_svmlight(data=content, path="s.svm", taxonomy=Taxonomy.flat(["a", "b"]))


# ============================================================================ ARFF
ARFF_TREE = """% a comment
@RELATION toy
@ATTRIBUTE 'a 1' numeric
@ATTRIBUTE b NUMERIC
@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/01,01/01/07

@DATA
1,?,01/01/07@02
3,4,01@01/02
?,8,02/01
% comment in data
5,6,01/01@01/01/07
"""

ARFF_DAG = """@relation dag
@attribute x numeric
@attribute class hierarchical root/A,root/B,A/C,B/C,C/D
@data
1,D
2,C@A
?,B
"""


def test_arff_tree():
    ds = read_arff(text=ARFF_TREE, path="toy.arff")
    tax = ds.taxonomy
    assert tax.is_tree and tax.names[0] == "root"
    assert set(tax.names) == {"root", "01", "01/01", "01/02", "02", "02/01", "01/01/07"}
    assert tax.tree_distance("01/01/07", "02/01") == 5
    assert ds.feature_names == ["a 1", "b"]
    # "01/01" is an ancestor of "01/01/07" on the last row: dropped (labels="specific")
    assert ds.y.tolist() == [("01/01/07", "02"), ("01/02",), ("02/01",), ("01/01/07",)]
    means = np.array([(1 + 3 + 5) / 3, (4 + 8 + 6) / 3])
    np.testing.assert_allclose(ds.meta["impute_means"], means)
    np.testing.assert_allclose(ds.X, [[1, means[1]], [3, 4], [means[0], 8], [5, 6]])
    assert ds.meta["n_missing"] == 2 and ds.meta["hierarchy_kind"] == "tree"
    as_is = read_arff(text=ARFF_TREE, labels="as_is")
    assert as_is.y[1] == ("01", "01/02") and as_is.y[3] == ("01/01", "01/01/07")
    # a test file uses the given (training) means
    te = read_arff(text=ARFF_TREE, impute_means=np.array([10.0, 20.0]))
    assert te.X[0, 1] == 20.0 and te.X[2, 0] == 10.0
    kept = read_arff(text=ARFF_TREE, impute=False)
    assert np.isnan(kept.X[0, 1])


def test_arff_single_label_when_every_row_has_one_path():
    text = ARFF_TREE.split("@DATA")[0] + "@DATA\n1,2,01@01/01@01/01/07\n3,4,02@02/01\n"
    ds = read_arff(text=text)
    assert ds.y.tolist() == ["01/01/07", "02/01"]
    assert not ds.is_multilabel
    assert read_arff(text=text, multilabel=True).y.tolist() == [("01/01/07",), ("02/01",)]


def test_arff_dag():
    ds = read_arff(text=ARFF_DAG)
    tax = ds.taxonomy
    assert not tax.is_tree and ds.meta["hierarchy_kind"] == "dag"
    assert tax.names[0] == "root"
    assert sorted(tax.names[tax.parents("C")].tolist()) == ["A", "B"]
    # A is an ancestor of C: dropped; every row then holds one label: single-label
    assert ds.y.tolist() == ["D", "C", "B"]
    assert ds.X[2, 0] == pytest.approx(1.5)


def test_arff_taxonomy_kind_guess_and_force():
    tax, kind = arff_taxonomy(["a/b", "b/c"])
    assert kind == "dag" and tax.names[0] == "root" and tax.n_nodes == 4
    tax, kind = arff_taxonomy(["1", "1/1", "1/2"])
    assert kind == "tree" and tax.n_nodes == 4
    tax, kind = arff_taxonomy(["1/1", "1/2"], kind="tree")
    assert set(tax.names) == {"root", "1", "1/1", "1/2"}
    with pytest.raises(TaxonomyError, match="not a 'parent/child' pair"):
        arff_taxonomy(["a/b/c"], kind="dag")


ARFF_SPARSE = """@relation sparse
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute class hierarchical 01,01/01,02,02/01
@data
{0 1.5, 1 2, 3 02/01}
{2 ?, 3 01/01}
{0 ?, 1 4, 3 01@02}
"""


def test_arff_sparse_rows():
    ds = read_arff(text=ARFF_SPARSE, path="s.arff")
    assert sp.issparse(ds.X) and ds.X.shape == (3, 3)
    dense = np.array([[1.5, 2, 0], [0, 0, np.nan], [np.nan, 4, 0]])
    means = np.nanmean(dense, axis=0)  # implicit zeros are values
    np.testing.assert_allclose(ds.meta["impute_means"], means)
    np.testing.assert_allclose(ds.X.toarray(), np.where(np.isnan(dense), means, dense))
    assert ds.meta["n_missing"] == 2
    assert ds.y.tolist() == [("02/01",), ("01/01",), ("01", "02")]
    te = read_arff(text=ARFF_SPARSE, impute_means=np.array([7.0, 8.0, 9.0]))
    assert te.X[1, 2] == 9.0 and te.X[2, 0] == 7.0


def test_arff_through_load_dataset_and_examples():
    tree = load_dataset(EXAMPLES / "example_tree.arff")
    assert tree.X.shape == (30, 4) and tree.meta["n_missing"] == 3
    assert tree.taxonomy.n_nodes == 11
    dag = load_dataset(EXAMPLES / "example_dag.arff")
    assert not dag.taxonomy.is_tree
    assert dag.taxonomy == read_taxonomy(EXAMPLES / "dag_taxonomy.json")


def test_arff_nominal_attributes():
    text = (
        "@relation n\n@attribute bit {0,1}\n@attribute colour {red,green}\n"
        "@attribute class hierarchical a,b\n@data\n1,red,a\n0,green,b\n?,?,a\n"
    )
    ds = read_arff(text=text)
    assert ds.feature_names == ["bit", "colour=red", "colour=green"]
    np.testing.assert_allclose(ds.X, [[1, 1, 0], [0, 0, 1], [0.5, 0.5, 0.5]])


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (ARFF_TREE.replace("5,6,01/01@", "5,6,7,01/01@"), r"t\.arff, line 12: expected 3 "),
        (ARFF_TREE.replace("3,4,01@", "3,x,01@"), r"t\.arff, line 9, column 'b': value 'x'"),
        (ARFF_TREE.replace("?,8,02/01", "?,8,03"), r"t\.arff, line 10, column 'class': label '03'"),
        (ARFF_TREE.replace("?,8,02/01", "?,8,?"), r"t\.arff, line 10, column 'class': missing"),
        (ARFF_TREE.replace(" hierarchical 01,", " string 01,"), r"t\.arff, line 5, column 'class'"),
        (
            ARFF_TREE.replace("class hierarchical", "class numeric").split("01,")[0] + "\n@DATA\n",
            r"t\.arff, line 6: no '@ATTRIBUTE class hierarchical",
        ),
        (ARFF_TREE.split("@DATA")[0], r"t\.arff: no @DATA"),
        (
            ARFF_TREE.replace("@DATA\n1,?", "@DATA\n{0 1}\n1,?"),
            r"t\.arff, line 9: dense and sparse",
        ),
        (ARFF_SPARSE.replace(" 1 2,", " 1 x,"), r"t\.arff, line 7, column 'b': value 'x'"),
        (ARFF_SPARSE.replace(" 1 2,", " 1 2, 0 5,"), r"t\.arff, line 7: attribute index 0 out"),
        (ARFF_SPARSE.replace(", 3 02/01}", "}"), r"t\.arff, line 7, column 'class': missing"),
        (ARFF_DAG.replace("C/D", "C/D,D/C"), r"t\.arff, line 3, column 'class': .*cycle"),
        (ARFF_DAG.replace("C/D", "Z/D"), r"t\.arff, line 3, column 'class': .*several roots"),
    ],
)
def test_arff_errors_name_file_line_column(text, pattern):
    with pytest.raises(DataError, match=pattern):
        read_arff(text=text, path="t.arff")


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="unknown data format"):
        read_dataset_bytes(b"x", "a.csv", format="parquet")
    with pytest.raises(DataError, match="no such file"):
        load_dataset(tmp_path / "none.csv")
    with pytest.raises(TaxonomyError, match="unknown taxonomy format"):
        parse_taxonomy_text("a b", format="yaml")


def test_json_shapes():
    t = parse_taxonomy_text(json.dumps({"parent": {"a": "root", "b": "a"}}))
    assert t == Taxonomy([("root", "a"), ("a", "b")])
    t = parse_taxonomy_text(json.dumps([["r", "a"], ["r", "b"]]))
    assert t == Taxonomy([("r", "a"), ("r", "b")])
