"""Files larger than memory: ``iter_chunks`` blocks equal the whole-file readers' rows,
``partial_fit`` over blocks equals ``fit`` (online Hieron) or reaches its accuracy (Pegasos), and
a chunked fit trains under an address-space limit that the same file read whole does not fit in.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import hierlab
from hierlab import DataError, ParameterError
from hierlab.evaluation.stream import fit_blocks
from hierlab.io import iter_chunks, load_dataset, write_svmlight

DATA = Path(__file__).resolve().parents[2] / "datasets"


def _rows(blocks: list) -> tuple[np.ndarray, np.ndarray]:
    Xs = [b.X.toarray() if sp.issparse(b.X) else b.X for b in blocks]
    return np.vstack(Xs), np.concatenate([np.asarray(b.y, dtype=object) for b in blocks])


@pytest.mark.parametrize(
    "name",
    [
        "example.svmlight",
        "example_multilabel.svmlight",
        "example_paths.csv",  # a missing cell: the file's column mean, as the whole reader
        "example_names.csv",  # an id column
        "example_multilabel.csv",
        "example_text.csv",  # TF-IDF with the whole file's vocabulary and idf
    ],
)
@pytest.mark.parametrize("chunk_rows", [1, 7, 1000])
def test_blocks_are_the_whole_file(name: str, chunk_rows: int) -> None:
    path = DATA / name
    whole = load_dataset(path)
    cf = iter_chunks(path, chunk_rows)
    blocks = list(cf)
    assert len(blocks) == len(cf) == -(-whole.n_samples // chunk_rows)
    assert all(b.X.shape[0] == chunk_rows for b in blocks[:-1])
    X, y = _rows(blocks)
    Xw = whole.X.toarray() if sp.issparse(whole.X) else whole.X
    np.testing.assert_allclose(X, Xw, rtol=0, atol=1e-15)
    assert [str(v) for v in y] == [str(v) for v in whole.y]
    assert cf.n_samples == whole.n_samples and cf.n_features == whole.n_features
    assert sorted(map(str, cf.taxonomy.names)) == sorted(map(str, whole.taxonomy.names))
    assert list(cf) and _rows(list(cf))[0].shape == X.shape  # re-iterable: one pass per epoch


def test_a_test_file_in_the_training_space(tmp_path: Path) -> None:
    train = load_dataset(DATA / "example_text.csv")
    cf = iter_chunks(DATA / "example_text.csv", 4)
    lines = (DATA / "example_text.csv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "test.csv").write_text("\n".join(lines[:1] + lines[5:9]) + "\n", "utf-8")
    ref = iter_chunks(tmp_path / "test.csv", 3, reference=cf)
    X, _ = _rows(list(ref))
    want = train.meta["vectorizer"].transform([ln.split(",", 1)[1] for ln in lines[5:9]])
    assert X.shape == (4, cf.n_features)
    assert np.abs(X - want.toarray()).max() < 0.5  # the csv quoting aside, same vocabulary
    np.testing.assert_allclose(X, _rows(list(cf))[0][4:8], atol=1e-15)


def test_errors_name_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.svmlight"
    bad.write_text("a 1:1 2:2\nb 1:1\nb x:3\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 3"):
        iter_chunks(bad, 1)  # the first pass reads each line's indices
    bad.write_text("a 1:1 2:2\n# a comment\nb 1:1\nb 3:x\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 4"):
        list(iter_chunks(bad, 1))  # a value, when its block is parsed
    csv = tmp_path / "bad.csv"
    csv.write_text("f1,f2,label\n1,2,a\n3,oops,b\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3.*'f2'.*'oops'|'oops'.*line 3"):
        list(iter_chunks(csv, 1))
    with pytest.raises(ParameterError, match="chunk_rows"):
        iter_chunks(csv, 0)


def _text(n: int, seed: int = 0, classes: int = 12) -> tuple:
    return hierlab.make_hierarchical_text(
        n_samples=n, n_classes=classes, n_features=600, test_size=0.5, random_state=seed
    )


def test_hieron_partial_fit_over_10_blocks_is_fit(tmp_path: Path) -> None:
    train, test = _text(1200, seed=1)
    path = tmp_path / "train.svmlight"
    write_svmlight(train, path)
    cf = iter_chunks(path, 60)
    assert len(cf) == 10
    for name in ("hieron", "hieron-batch", "hieron-flat", "hieron-greedy"):
        whole = hierlab.make_estimator(name, taxonomy=cf.taxonomy, shuffle=False)
        whole.fit(sp.vstack([b.X for b in cf]), np.concatenate([b.y for b in cf]))
        part = fit_blocks(hierlab.make_estimator(name, taxonomy=cf.taxonomy), cf)
        np.testing.assert_array_equal(part.coef_, whole.coef_)  # order-exact: to the bit
        np.testing.assert_array_equal(part.predict(test.X), whole.predict(test.X))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hsvm", "nhsvm"])
def test_pegasos_partial_fit_reaches_fit_accuracy(name: str) -> None:
    train, test = _text(8000, classes=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = hierlab.make_estimator(name, taxonomy=train.taxonomy, solver="pegasos")
        whole.fit(train.X, train.y)
    part = hierlab.make_estimator(name, taxonomy=train.taxonomy, solver="pegasos")
    blocks = np.array_split(np.arange(train.n_samples), 10)
    for _ in range(whole.n_iter_):  # as many passes as fit's epochs
        for b in blocks:
            part.partial_fit(train.X[b], train.y[b], n_samples=train.n_samples)
    acc_whole = float(np.mean(whole.predict(test.X) == test.y))
    acc_part = float(np.mean(part.predict(test.X) == test.y))
    assert abs(acc_part - acc_whole) <= 0.005, (acc_part, acc_whole)
    assert part.solver_ == "pegasos" and "partial_fit" in part.algorithm_


def test_pegasos_partial_fit_dense_equals_sparse_and_refuses_what_it_cannot() -> None:
    train, _ = _text(300)
    rows = np.array_split(np.arange(train.n_samples), 3)
    fitted = []
    for X in (train.X, train.X.toarray()):
        est = hierlab.make_estimator("nhsvm", taxonomy=train.taxonomy)
        for b in rows:
            est.partial_fit(X[b], train.y[b], n_samples=train.n_samples)
        fitted.append(est.coef_)
    np.testing.assert_allclose(fitted[0], fitted[1], atol=1e-10)
    est = hierlab.make_estimator("hsvm", taxonomy=train.taxonomy)
    with pytest.warns(UserWarning, match="n_samples"):
        est.partial_fit(train.X[:10], train.y[:10])
    told = hierlab.make_estimator("hsvm", taxonomy=train.taxonomy)
    told.partial_fit(train.X[:10], train.y[:10], n_samples=10)
    np.testing.assert_array_equal(est.coef_, told.coef_)  # N defaults to the first block's rows
    with pytest.raises(ParameterError, match="n_samples"):
        told.__class__(taxonomy=train.taxonomy).partial_fit(train.X[:10], train.y[:10], n_samples=5)
    with pytest.raises(ParameterError, match="bcfw"):
        hierlab.make_estimator("hsvm", solver="bcfw").partial_fit(
            train.X[:10], train.y[:10], n_samples=300
        )
    assert not hasattr(hierlab.make_estimator("ssvm"), "partial_fit")
    with pytest.raises(AttributeError, match="Shared SVM"):
        hierlab.make_estimator("ssvm").partial_fit(train.X, train.y, n_samples=300)
    with pytest.raises(ParameterError, match="partial_fit"):
        fit_blocks(hierlab.make_estimator("topdown"), [])


def _vm_peak_kb(args: list[str], limit_kb: int | None) -> subprocess.CompletedProcess[str]:
    """Run ``hierlab ARGS`` (under ``ulimit -v limit_kb``); stdout ends with its VmPeak."""
    code = textwrap.dedent(
        """
        import sys
        from hierlab.cli import main
        try:
            rc = main(sys.argv[1:])
        except MemoryError:
            rc = 3
        peak = open("/proc/self/status").read().split("VmPeak:")[1].split()[0]
        print("VmPeak", peak)
        sys.exit(rc)
        """
    )
    ulimit = f"ulimit -v {limit_kb} && " if limit_kb else ""
    cmd = f'{ulimit}exec "$0" -c "$1" "${{@:2}}"'
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        ["bash", "-c", cmd, sys.executable, code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _write_csv(path: Path, n_rows: int, d: int = 600) -> None:
    """A numeric CSV of ``n_rows`` rows (4 leaves, each with its own feature), one block of
    5,000 distinct rows written again and again."""
    rng = np.random.default_rng(0)
    leaves = np.array(["a/a1", "a/a2", "b/b1", "b/b2"])
    lab = rng.integers(0, 4, 5000)
    X = (rng.random((5000, d)) < 0.2).astype(np.int8)
    X[np.arange(5000), lab] = 5
    block = "".join(",".join(map(str, r)) + f",{leaves[k]}\n" for r, k in zip(X.tolist(), lab))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(f"f{j}" for j in range(d)) + ",label\n")
        for _ in range(n_rows // 5000):
            fh.write(block)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ulimit -v is a Linux limit")
def test_a_chunked_fit_trains_where_the_whole_file_does_not_fit(tmp_path: Path) -> None:
    """The cap leaves the process ``headroom`` above what hierlab itself takes; the file is
    3x that headroom: read whole it cannot be held, read in blocks it trains."""
    tiny, big = tmp_path / "tiny.csv", tmp_path / "big.csv"
    _write_csv(tiny, 5000)
    base = _vm_peak_kb(["fit", str(tiny), "--chunk-rows", "2000", "--method", "hieron"], None)
    assert base.returncode == 0, base.stderr
    baseline = int(base.stdout.split("VmPeak")[-1])
    headroom_kb = 60_000
    _write_csv(big, 155_000)  # about 190 MB: 3x the headroom
    assert big.stat().st_size > 3 * headroom_kb * 1024
    cap = baseline + headroom_kb
    args = ["fit", str(big), "--method", "hieron", "--json"]
    chunked = _vm_peak_kb([*args, "--chunk-rows", "2000", "--test", str(tiny)], cap)
    assert chunked.returncode == 0, chunked.stderr[-2000:]
    assert '"n_train": 155000' in chunked.stdout
    assert int(chunked.stdout.split("VmPeak")[-1]) <= cap
    whole = _vm_peak_kb(args, cap)  # the control: the same fit reading the file whole
    assert whole.returncode != 0
