"""Real-data loaders: ``load_20newsgroups``, ``load_clus`` and ``load_ipc``.

The first half builds miniature archives in a temporary folder and checks the loaders' logic
(locations, caching, TF-IDF, train + valid, imputation) without the real files. The second half
(``@pytest.mark.realdata``) reads ``../shared/datasets`` and checks the documented sizes; it is
skipped, with the reason, only when that folder is absent.
"""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from hierlab.core.exceptions import DataError, ParameterError
from hierlab.datasets import load_20newsgroups, load_clus, load_ipc
from hierlab.datasets import real as real_mod
from hierlab.datasets.real import find_data_home

GROUPS = {
    "comp.graphics": ["pixels render polygon shading", "render the scene pixels", "gif jpeg"],
    "rec.autos": ["engine car brake wheel", "my car engine stalls", "wheel alignment car"],
    "sci.med": ["doctor patient disease", "the patient took medicine", "disease symptoms"],
}


def _post(i: int, body: str) -> bytes:
    return f"From: user{i}@example.com\nSubject: post {i}\n\n{body}\n-- \nsignature\n".encode(
        "latin-1"
    )


def _fake_20ng(root: Path) -> Path:
    folder = root / "20newsgroups"
    folder.mkdir(parents=True)
    with tarfile.open(folder / "20news-bydate.tar.gz", "w:gz") as tf:
        k = 100
        for split in ("train", "test"):
            for g, bodies in GROUPS.items():
                use = bodies if split == "train" else bodies[:1]
                for body in use:
                    data = _post(k, body + (" café" if k % 2 else ""))
                    info = tarfile.TarInfo(f"20news-bydate-{split}/{g}/{k}")
                    info.size = len(data)
                    tf.addfile(info, io.BytesIO(data))
                    k += 1
    (folder / "hierarchy_6groups.txt").write_text(
        "# parent child\nroot comp\nroot rec\nroot sci\ncomp comp.graphics\n"
        "rec rec.autos\nsci sci.med\n"
    )
    (folder / "hierarchy_nameprefix.txt").write_text(
        "root comp\nroot rec\nroot sci\ncomp comp.graphics\nrec rec.autos\nsci sci.med\n"
    )
    return folder


def _docs(split: str) -> tuple[list[str], list[str]]:
    docs, labels = [], []
    k = 100
    for s in ("train", "test"):
        for g, bodies in GROUPS.items():
            use = bodies if s == "train" else bodies[:1]
            for body in use:
                if s == split:
                    docs.append(_post(k, body + (" café" if k % 2 else "")).decode("latin-1"))
                    labels.append(g)
                k += 1
    return docs, labels


def test_20ng_logic_on_a_miniature_archive(tmp_path, monkeypatch):
    from sklearn.feature_extraction.text import TfidfVectorizer

    _fake_20ng(tmp_path / "data")
    cache = tmp_path / "cache"
    train, test = load_20newsgroups(data_home=tmp_path / "data", cache_path=cache)
    assert train.n_samples == 9 and test.n_samples == 3
    assert train.taxonomy.max_depth == 2 and len(train.taxonomy.leaves) == 3
    # the TF-IDF is sklearn's sublinear one fitted on the training posts, headers kept
    docs_tr, y_tr = _docs("train")
    docs_te, y_te = _docs("test")
    vec = TfidfVectorizer(sublinear_tf=True).fit(docs_tr)
    assert train.feature_names == vec.get_feature_names_out().tolist()
    assert "subject" in train.feature_names and "café" in train.feature_names
    np.testing.assert_allclose(train.X.toarray(), vec.transform(docs_tr).toarray())
    np.testing.assert_allclose(test.X.toarray(), vec.transform(docs_te).toarray())
    assert train.y.tolist() == y_tr and test.y.tolist() == y_te
    assert train.X.indices.dtype == np.int32
    # each post's own text, as vectorised (what the app lists beside an example)
    assert train.texts.tolist() == docs_tr and test.texts.tolist() == docs_te

    # the cache: .npz + .json, readable without pickle, then used instead of the archive
    npz = sorted(cache.glob("20newsgroups-*.npz"))
    js = sorted(cache.glob("20newsgroups-*.json"))
    assert len(npz) == 1 and len(js) == 1
    with np.load(npz[0], allow_pickle=False) as arrs:
        for key in arrs.files:
            assert arrs[key].dtype != object
    assert json.loads(js[0].read_text())["n_train"] == 9

    def boom(*a, **k):
        raise AssertionError("the archive was read although the cache holds the result")

    monkeypatch.setattr(real_mod, "_read_20ng_archive", boom)
    again, again_te = load_20newsgroups(data_home=tmp_path / "data", cache_path=cache)
    assert (again.X != train.X).nnz == 0 and (again_te.X != test.X).nnz == 0
    assert again.feature_names == train.feature_names and again.y.tolist() == train.y.tolist()
    assert again.texts.tolist() == docs_tr and again_te.texts.tolist() == docs_te
    # other parameters: another key, so the archive is needed again
    with pytest.raises(AssertionError, match="archive was read"):
        load_20newsgroups(
            data_home=tmp_path / "data", cache_path=cache, vectorizer_params={"min_df": 2}
        )
    monkeypatch.undo()

    # a damaged cache is rebuilt, not trusted
    npz[0].write_bytes(b"not a zip file")
    rebuilt, _ = load_20newsgroups(data_home=tmp_path / "data", cache_path=cache)
    assert (rebuilt.X != train.X).nnz == 0


def test_20ng_options(tmp_path, monkeypatch):
    _fake_20ng(tmp_path)
    monkeypatch.setenv("HIERLAB_DATA", str(tmp_path))
    monkeypatch.setenv("HIERLAB_CACHE", str(tmp_path / "c"))
    tr, _ = load_20newsgroups(remove=("headers", "footers"))
    assert "subject" not in tr.feature_names and "signature" not in tr.feature_names
    assert list((tmp_path / "c").glob("*.npz"))  # HIERLAB_CACHE honoured
    flat, _ = load_20newsgroups(taxonomy="flat", cache=False)
    assert flat.taxonomy.max_depth == 1
    # data_home may also be the 20newsgroups folder itself
    sub, _ = load_20newsgroups(data_home=tmp_path / "20newsgroups", cache=False)
    assert sub.n_samples == 9
    with pytest.raises(ParameterError, match="remove"):
        load_20newsgroups(remove=("signatures",))
    with pytest.raises(ParameterError, match="taxonomy"):
        load_20newsgroups(taxonomy="deep", cache=False)


def test_missing_data_says_where_it_looked(tmp_path, monkeypatch):
    with pytest.raises(DataError, match=str(tmp_path / "nowhere")):
        load_20newsgroups(data_home=tmp_path / "nowhere")
    with pytest.raises(DataError, match=r"looked in: .*nowhere"):
        load_clus("ImCLEF07D", data_home=tmp_path / "nowhere")
    with pytest.raises(DataError, match="unknown Clus data set 'iris'; known: ImCLEF07D"):
        load_clus("iris")
    monkeypatch.setenv("HIERLAB_DATA", str(tmp_path / "env"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=str(tmp_path / "env")):
        find_data_home()


ARFF_HEAD = (
    "@RELATION mini\n@ATTRIBUTE a numeric\n@ATTRIBUTE b numeric\n"
    "@ATTRIBUTE class hierarchical 01,01/01,01/02,02,02/01\n@DATA\n"
)


def test_clus_logic_train_plus_valid_and_train_means(tmp_path):
    folder = tmp_path / "clus" / "cellcycle_FUN"
    folder.mkdir(parents=True)
    (folder / "cellcycle_FUN.train.arff").write_text(ARFF_HEAD + "1,?,01/01\n3,4,01/02@02\n")
    (folder / "cellcycle_FUN.valid.arff").write_text(ARFF_HEAD + "?,8,02/01\n")
    (folder / "cellcycle_FUN.test.arff").write_text(ARFF_HEAD + "?,?,01@01/01\n")
    train, test = load_clus("cellcycle_fun", data_home=tmp_path)
    assert train.n_samples == 3 and test.n_samples == 1
    means = np.array([2.0, 6.0])  # over train + valid
    np.testing.assert_allclose(train.meta["impute_means"], means)
    np.testing.assert_allclose(train.X, [[1, 6], [3, 4], [2, 8]])
    np.testing.assert_allclose(test.X, [[2, 6]])  # the test part uses the training means
    assert train.meta["n_missing"] == 2
    assert train.y.tolist() == [("01/01",), ("01/02", "02"), ("02/01",)]
    assert test.y.tolist() == [("01/01",)]
    only_train, _ = load_clus("cellcycle_FUN", data_home=tmp_path, include_valid=False)
    assert only_train.n_samples == 2
    np.testing.assert_allclose(only_train.meta["impute_means"], [2.0, 4.0])
    # the folder holding the files can be given directly
    direct, _ = load_clus("cellcycle_FUN", data_home=folder)
    assert direct.n_samples == 3


# ============================================================================ real files
def _real_root() -> Path | None:
    try:
        return find_data_home()
    except DataError:
        return None


REAL = _real_root()
needs_real = pytest.mark.skipif(
    REAL is None, reason="../shared/datasets not found (set HIERLAB_DATA to the data folder)"
)

# rows train / test, features, nodes (with root), leaves, depth, multi-label, tree
CLUS_SIZES = {
    "ImCLEF07D": (10000, 1006, 80, 47, 26, 3, False, True),
    "Enron_corr": (988, 660, 1001, 57, 52, 3, True, True),
    "cellcycle_FUN": (1628 + 848, 1281, 77, 500, 324, 6, True, True),
    "cellcycle_GO": (1625 + 848, 1278, 77, 4126, 2041, 14, True, False),
}


@pytest.mark.realdata
@needs_real
@pytest.mark.parametrize("name", list(CLUS_SIZES))
def test_clus_real_sizes(name):
    n_tr, n_te, d, n_nodes, n_leaves, depth, multi, tree = CLUS_SIZES[name]
    train, test = load_clus(name)
    assert train.X.shape == (n_tr, d) and test.X.shape == (n_te, d)
    tax = train.taxonomy
    assert test.taxonomy is tax
    # the data README counts the nodes without the synthetic root (46, 56, 499)
    assert tax.n_nodes == n_nodes and len(tax.leaves) == n_leaves and tax.max_depth == depth
    assert tax.is_tree == tree and tax.names[0] == "root"
    assert train.is_multilabel == multi
    assert np.isfinite(train.X).all() and np.isfinite(test.X).all()
    if name == "cellcycle_GO":
        multi_parent = sum(len(tax.parents(i)) > 1 for i in range(tax.n_nodes))
        assert 1400 <= multi_parent <= 1550  # "about 1,480"
    if multi:
        per_row = np.mean([len(t) for t in train.y])
        assert 2.5 <= per_row <= 5.5


@pytest.mark.realdata
@needs_real
def test_clus_real_imputation_uses_train_and_valid_means():
    from hierlab.io import read_arff

    folder = REAL / "clus" / "cellcycle_FUN"
    parts = [
        read_arff(folder / f, impute=False)
        for f in ("cellcycle_FUN.train.arff", "cellcycle_FUN.valid.arff")
    ]
    raw = np.vstack([p.X for p in parts])
    raw_test = read_arff(folder / "cellcycle_FUN.test.arff", impute=False).X
    train, test = load_clus("cellcycle_FUN")
    means = np.nanmean(raw, axis=0)
    np.testing.assert_allclose(train.meta["impute_means"], means)
    assert np.isnan(raw).sum() == train.meta["n_missing"] > 0
    miss = np.isnan(raw_test)
    assert miss.any()
    np.testing.assert_allclose(test.X[miss], np.broadcast_to(means, raw_test.shape)[miss])
    np.testing.assert_allclose(test.X[~miss], raw_test[~miss])


@pytest.mark.realdata
@needs_real
def test_20newsgroups_real_sizes_and_taxonomies():
    train, test = load_20newsgroups()
    assert train.X.shape[0] == 11314 and test.X.shape[0] == 7532
    assert train.X.shape[1] == test.X.shape[1] == len(train.feature_names)
    assert sp.issparse(train.X) and train.X.indices.dtype == np.int32
    tax = train.taxonomy
    assert len(tax.leaves) == 20 and tax.max_depth == 2 and tax.n_nodes == 27
    assert set(tax.names[tax.children(0)]) == {"comp", "rec", "sci", "politics", "religion", "misc"}
    assert set(train.y) == set(tax.names[tax.leaves])
    deep, _ = load_20newsgroups(taxonomy="nameprefix")
    assert len(deep.taxonomy.leaves) == 20 and deep.taxonomy.max_depth > 2


@pytest.mark.realdata
@pytest.mark.slow
@needs_real
def test_20newsgroups_flat_svm_and_topdown_baseline():
    """The data README's sanity level (flat LinearSVC ~0.86) and the issue's criterion that the
    top-down LinearSVC baseline lands within 2 points of it."""
    from sklearn.svm import LinearSVC

    from hierlab.methods.topdown import TopDownClassifier

    train, test = load_20newsgroups()
    flat = float(np.mean(LinearSVC().fit(train.X, train.y).predict(test.X) == test.y))
    assert abs(flat - 0.862) < 0.01
    td = TopDownClassifier(taxonomy=train.taxonomy).fit(train.X, train.y)
    top_down = float(np.mean(td.predict(test.X) == test.y))
    assert flat - top_down <= 0.02


def _mini_ipc(tmp_path: Path, rows: list[tuple[str, str]], header: str = "text,label") -> Path:
    import gzip

    (tmp_path / "ipc").mkdir()
    lines = [header] + [f'"{t}",{lab}' for t, lab in rows]
    with gzip.open(tmp_path / "ipc" / "ipc_titles.csv.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return tmp_path


def test_ipc_logic_on_a_miniature_file(tmp_path):
    rows = [
        (f"title {k} about {w}", lab)
        for k, (w, lab) in enumerate(
            [("pipes", "F/F16/F16L"), ("valves", "F/F16/F16K"), ("cells", "H/H01/H01M")] * 10
        )
    ]
    home = _mini_ipc(tmp_path, rows)
    train, test = load_ipc(data_home=home, test_size=0.3, random_state=1)
    assert (train.n_samples, test.n_samples) == (21, 9)
    tax = train.taxonomy
    assert tax.n_nodes == 1 + 2 + 2 + 3 and sorted(map(str, tax.names[tax.leaves])) == [
        "F16K",
        "F16L",
        "H01M",
    ]
    assert str(tax.names[tax.parent[tax.node_id("F16L")]]) == "F16"
    # the TF-IDF is fitted on the training titles only: its vocabulary is theirs
    texts = {t for t, _ in rows}
    assert len(train.feature_names) == train.X.shape[1] == test.X.shape[1]
    assert set(train.feature_names) <= {w for t in texts for w in t.split()}
    # ... and not the test titles': their own numbers (k >= 10 is a token) are missing
    assert train.X.shape[1] < len({w for t in texts for w in t.split() if len(w) > 1})
    # each title's own text beside its row, in both parts
    label_of = {t: lab.rsplit("/", 1)[-1] for t, lab in rows}
    for part in (train, test):
        assert [label_of[t] for t in part.texts] == list(part.y)
    assert sorted([*train.texts, *test.texts]) == sorted(texts)
    again, _ = load_ipc(data_home=home, test_size=0.3, random_state=1)
    assert list(again.y) == list(train.y)  # seeded
    other, _ = load_ipc(data_home=home, test_size=0.3, random_state=2)
    assert list(other.y) != list(train.y)
    with pytest.raises(ParameterError, match="test_size"):
        load_ipc(data_home=home, test_size=1.0)


def test_ipc_refuses_other_columns(tmp_path):
    home = _mini_ipc(tmp_path, [("a", "F/F16/F16L")], header="title,code")
    with pytest.raises(DataError, match="text,label"):
        load_ipc(data_home=home)


@pytest.mark.realdata
@needs_real
def test_ipc_real_sizes():
    """The documented sizes: 75,043 titles, 785 nodes, 645 leaves, depth 3; 70/30 seed 0."""
    train, test = load_ipc()
    assert (train.n_samples, test.n_samples) == (52530, 22513)
    tax = train.taxonomy
    assert (tax.n_nodes, len(tax.leaves), tax.max_depth) == (785, 645, 3)
    leaf_names = set(map(str, tax.names[tax.leaves]))
    assert set(map(str, train.y)) <= leaf_names and set(map(str, test.y)) <= leaf_names
    assert sp.isspmatrix_csr(train.X) and train.X.shape[1] > 20000
