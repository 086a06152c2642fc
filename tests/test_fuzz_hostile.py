"""Fuzz harness, second pass (issue 21): generated cases for every class of hostile input.

The red-team pass of issue 21 found crashes, hangs and silent corruptions in classes of input
that ``tests/io/test_fuzz.py`` did not generate. This module generates cases for each class
(not only the examples of the issue), with an oracle for each:

- **sizes declared vs actual**: svmlight indices and CSV headers against ``max_features``,
  ``.npy`` headers of model files against their bytes, manifests against
  ``max_manifest_entries``, estimator widths against ``max_features`` / ``max_weight_cells``;
- **encodings and Unicode normalisation**: names in NFC and NFD, a byte-order mark mid-file,
  whole files in UTF-8, UTF-16 or Windows-1252 (read back as the NFC names), files mixing
  encodings or holding a byte Windows-1252 leaves undefined (refused with that line);
- **path/taxonomy contradictions**: label paths along the edges of a random tree (mapped to
  their node) or with a wrong step (refused with the row's line);
- **special files**: FIFOs, devices (through symlinks), sockets, directories, dangling and
  looping symlinks, for every reader and :func:`hierlab.load`;
- **label type mixtures**: ints, strs, numpy scalars, bytes, ``None`` and NaN in ``y``;
- **model-file integrity**: edits of the manifest or the arrays without the checksums
  recomputed (refused), duplicate, extra and encrypted members, forged class paths and state
  keys with them recomputed (refused, or an estimator of a registered class);
- **liblinear scales**: feature magnitudes from 1 to 1e100 (refused above
  ``max_abs_feature_liblinear``, fitted below, never spinning);
- **the wide-CSV fast path**: wide files with plain and odd cells read alike by the fast path
  and by pandas.

Every case ends as *loaded* (and its oracle holds), or a *clean error* (a hierlab error whose
message names the file and the line, column, node or member where the oracle says so). Any
other exception is a *crash*, a case running past :data:`tests._hang.HANG_STOP` a *hang*; both fail
the run. Hypothesis runs derandomized (the same cases in every run); ``test_zz_report`` prints
the counts and asserts at least :data:`MIN_CASES`.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import socket
import time
import unicodedata
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hierlab
from hierlab import io as hio
from hierlab import persistence
from hierlab.core import limits
from hierlab.core.exceptions import HierlabError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io import csv as hcsv
from tests._hang import Hang, hang_stop
from tests._solver_starts import counted_solver_starts
from tests._taxonomy_strategies import tree_edges
from tests.test_persistence_integrity import _encrypt_flag

# ---------------------------------------------------------------------------- bookkeeping
COUNTS: Counter[tuple[str, str]] = Counter()  # (family, loaded | error | crash | hang)
MIN_CASES = 2000
_T0 = time.perf_counter()

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def run_case(family: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run one case: its result, or the HierlabError it raised; anything else fails the run."""
    try:
        with hang_stop():
            out = fn(*args, **kw)
    except HierlabError as exc:
        assert str(exc).strip(), f"{family}: empty error message"
        COUNTS[(family, "error")] += 1
        return exc
    except Hang:
        COUNTS[(family, "hang")] += 1
        raise
    except Exception:
        COUNTS[(family, "crash")] += 1
        raise
    COUNTS[(family, "loaded")] += 1
    return out


def refused(out: Any, *where: str) -> str:
    """Assert ``out`` is a clean error whose message holds every string of ``where``."""
    assert isinstance(out, HierlabError), f"accepted (silent corruption?): {out!r}"
    msg = str(out)
    for w in where:
        assert w in msg, (w, msg)
    return msg


def loaded(out: Any) -> Any:
    """Assert ``out`` is a result, not an error."""
    assert not isinstance(out, HierlabError), f"refused a valid case: {out}"
    return out


# ---------------------------------------------------------------------------- sizes declared
@FUZZ
@given(
    rows=st.lists(
        st.lists(
            st.sampled_from([1, 2, 7, 999, 1000, 1001, 5000, 10**6, 10**9, 10**15]),
            min_size=0,
            max_size=3,
            unique=True,
        ),
        min_size=1,
        max_size=4,
    ),
    n_features=st.none() | st.sampled_from([5, 999, 1000, 1001, 10**9]),
    cap=st.sampled_from([1000, 10**6]),
)
def test_svmlight_indices_against_max_features(
    rows: list[list[int]], n_features: int | None, cap: int
) -> None:
    lines = [f"c{k % 2} " + " ".join(f"{i}:1.5" for i in sorted(r)) for k, r in enumerate(rows)]
    data = ("\n".join(lines) + "\n").encode()
    with limits.override(max_features=cap):
        out = run_case(
            "sizes/svmlight", hio.read_svmlight, data=data, n_features=n_features, name="s"
        )
    biggest = max((i for r in rows for i in r), default=0)
    width = max(biggest, n_features or 0)  # 1-based indices (zero_based="auto")
    if n_features is not None and n_features > cap:
        refused(out, "max_features")
    elif width > cap or (n_features is not None and biggest > n_features):
        refused(out)
        if n_features is None:
            k = next(k for k, r in enumerate(rows) if any(i > cap for i in r))
            refused(out, f"line {k + 1}", "max_features")
    else:
        ds = loaded(out)
        assert ds.X.shape[1] <= cap and ds.X.nnz == sum(len(r) for r in rows)


@FUZZ
@given(
    n_feat=st.integers(0, 40),
    cap=st.integers(1, 40),
    with_id=st.booleans(),
    trailing=st.booleans(),
)
def test_csv_header_width_against_max_features(
    n_feat: int, cap: int, with_id: bool, trailing: bool
) -> None:
    head = ["label"] + (["id"] if with_id else []) + [f"f{j}" for j in range(n_feat)]
    rows = [",".join(["a", *(["1"] if with_id else []), *["0.5"] * n_feat])] * 2
    end = "," if trailing else ""
    text = "\n".join([",".join(head) + end, *(r + end for r in rows)]) + "\n"
    with limits.override(max_features=cap):
        out = run_case("sizes/csv-header", hio.read_dataset_bytes, text.encode(), "h.csv")
    if n_feat > cap:
        refused(out, "h.csv, line 1", "max_features")
    elif n_feat == 0:  # only a label (and an id): nothing to learn from
        refused(out, "h.csv, line 1", "no feature column")
    else:
        ds = loaded(out)
        assert ds.X.shape == (2, n_feat)  # a trailing comma adds no column


@FUZZ
@given(
    n=st.integers(5, 30),
    d=st.sampled_from([1, 10, 10**3, 10**5, 10**8, 10**10]),
    classes=st.integers(2, 5),
)
def test_estimator_widths_against_the_limits(n: int, d: int, classes: int) -> None:
    rng = np.random.default_rng(n)
    y = np.array([f"k{i % classes}" for i in range(n)], dtype=object)
    cols = rng.integers(0, min(d, 10**9), size=n)
    X = sp.csr_matrix((rng.random(n) + 1, (np.arange(n), cols)), shape=(n, d))
    with limits.override(max_features=10**6, max_weight_cells=10**6):
        out = run_case("sizes/estimator-width", hierlab.TopDownClassifier().fit, X, y)
    if d > 10**6:
        refused(out, f"{d:,} columns", "max_features")
    elif (classes + 1) * d > 10**6:
        refused(out, "max_weight_cells")
    else:
        assert len(loaded(out).predict(X)) == n


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    tax = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])
    rng = np.random.default_rng(0)
    leaves = tax.names[tax.leaves]
    lab = rng.integers(0, len(leaves), size=40)
    X = np.abs(rng.normal(size=(len(leaves), 3))[lab] * 3 + rng.normal(size=(40, 3)))
    est = hierlab.make_estimator("flatmult", taxonomy=tax, max_iter=20)
    est.fit(X, leaves[lab].astype(object))
    path = tmp_path_factory.mktemp("fuzzmodel") / "good.hlm"
    hierlab.save(est, path)
    return path, X


def _members(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with warnings_off(), zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
    return buf.getvalue()


@contextlib.contextmanager
def warnings_off() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _reseal(manifest: dict[str, Any], arrays: bytes) -> bytes:
    manifest = dict(manifest)
    manifest["checksums"] = persistence.checksums(manifest["root"], arrays)
    return json.dumps(manifest).encode()


def _npy(shape: tuple[int, ...], descr: str, payload: bytes) -> bytes:
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        head, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return head.getvalue() + payload


@FUZZ
@given(
    shape=st.lists(st.sampled_from([0, 1, 2, 3, 5, 10**3, 10**11]), min_size=0, max_size=3),
    descr=st.sampled_from(["<f8", "<i8", "|u1", "<U3", "|O"]),
    n_bytes=st.sampled_from([0, 1, 8, 24, 40, 96, 1000]),
    which=st.integers(0, 50),
)
def test_npy_headers_against_member_bytes(
    model: tuple[Path, np.ndarray],
    tmp_path_factory: pytest.TempPathFactory,
    shape: list[int],
    descr: str,
    n_bytes: int,
    which: int,
) -> None:
    good, _ = model
    (mname, mdata), (aname, adata) = _members(good)
    with zipfile.ZipFile(io.BytesIO(adata)) as z:
        inner = [(i.filename, z.read(i)) for i in z.infolist()]
    k = which % len(inner)
    inner[k] = (inner[k][0], _npy(tuple(shape), descr, b"\x01" * n_bytes))
    npz = _zip(inner)
    path = tmp_path_factory.mktemp("npy") / "m.hlm"
    path.write_bytes(_zip([(mname, _reseal(json.loads(mdata), npz)), (aname, npz)]))
    out = run_case("sizes/npy-header", hierlab.load, path)
    declared = int(np.prod(shape, dtype=object)) * np.dtype(descr).itemsize
    if descr == "|O":
        refused(out, str(path), inner[k][0], "pickle")
    elif declared != n_bytes:
        refused(out, str(path), f"arrays.npz/{inner[k][0]}", "declares shape")
    # a consistent header of the wrong shape or dtype loads or is refused; never a crash


@FUZZ
@given(n_junk=st.integers(0, 4000), cap=st.sampled_from([3000, 10**6]))
def test_manifest_entries_against_the_limit(
    model: tuple[Path, np.ndarray],
    tmp_path_factory: pytest.TempPathFactory,
    n_junk: int,
    cap: int,
) -> None:
    good, X = model
    (mname, mdata), (aname, adata) = _members(good)
    man = json.loads(mdata)
    man["junk"] = [[] for _ in range(n_junk)]
    raw = _reseal(man, adata)
    entries = raw.count(b"[") + raw.count(b"{") + raw.count(b",")
    path = tmp_path_factory.mktemp("man") / "m.hlm"
    path.write_bytes(_zip([(mname, raw), (aname, adata)]))
    with limits.override(max_manifest_entries=cap):
        out = run_case("sizes/manifest", hierlab.load, path)
    if entries > cap:
        refused(out, str(path), "manifest.json", "max_manifest_entries")
    else:
        assert len(loaded(out).predict(X)) == len(X)


# ---------------------------------------------------------------------------- encodings
#: names whose non-ASCII characters Windows-1252 holds (each a lone byte there, never valid
#: UTF-8 next to ASCII), with NFD spellings where Unicode has them
LATIN = ["café", "naïve", "Ångström", "“quoted”", "€uro", "straße", "plain", "x y"]
BEYOND = ["日本", "Ωmega", "emoji😀"]  # not in Windows-1252


def _nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


@settings(FUZZ, max_examples=250)
@given(
    picks=st.lists(
        st.tuples(st.sampled_from(LATIN + BEYOND), st.booleans(), st.booleans()),
        min_size=2,
        max_size=6,
    ),
    scheme=st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "cp1252", "mixed", "undefined"]),
    where=st.integers(0, 5),
)
def test_encodings_and_normal_forms(
    picks: list[tuple[str, bool, bool]], scheme: str, where: int
) -> None:
    names = [(_nfd(n) if nfd else n) for n, nfd, _ in picks]
    names = [("\ufeff" + n if bom and scheme.startswith("utf") else n) for n, (_, _, bom) in
             zip(names, picks)]  # fmt: skip
    rows = [f"{n},{k}" for k, n in enumerate(names)]
    text = "label,f\n" + "\n".join(rows) + "\n"
    expected = [unicodedata.normalize("NFC", n.replace("\ufeff", "")) for n in names]
    if scheme in ("cp1252", "mixed", "undefined") and any(n in BEYOND for n, _, _ in picks):
        scheme = "utf-8"  # Windows-1252 cannot hold these names
    bad_line = None
    if scheme in ("utf-8", "utf-8-sig", "utf-16"):
        data = text.encode(scheme)
    elif scheme == "cp1252":
        data = unicodedata.normalize("NFC", text).encode("cp1252")
    else:
        k = where % len(rows)
        lines = [ln.encode("utf-8") for ln in ["label,f", *rows]]
        if scheme == "mixed":
            lines[k + 1] = unicodedata.normalize("NFC", rows[k]).encode("cp1252")
            utf8_elsewhere = any(not r.isascii() for j, r in enumerate(rows) if j != k)
            if not rows[k].isascii():
                bad_line = k + 2 if utf8_elsewhere else None
        else:  # a byte Windows-1252 leaves undefined, in a file that is otherwise cp1252
            lines = [unicodedata.normalize("NFC", ln.decode()).encode("cp1252") for ln in lines]
            lines[k + 1] = lines[k + 1] + b"\x81"
            bad_line = k + 2
        data = b"\n".join(lines) + b"\n"
    out = run_case("encoding", hio.read_dataset_bytes, data, "enc.csv")
    # a "mixed" file without a bad line is consistent after all (its Windows-1252 line is
    # ASCII, or the only line beyond ASCII): read as UTF-8 or as Windows-1252, to the names
    if bad_line is not None:
        refused(out, "enc.csv", f"line {bad_line}")
        return
    ds = loaded(out)
    assert list(ds.y) == expected
    assert ds.taxonomy.n_nodes == len(set(expected)) + 1


@FUZZ
@given(
    picks=st.lists(st.sampled_from(LATIN[:3] + BEYOND[:2]), min_size=1, max_size=4, unique=True),
    label_nfd=st.booleans(),
    tax_nfd=st.booleans(),
)
def test_taxonomy_and_labels_in_different_normal_forms(
    picks: list[str], label_nfd: bool, tax_nfd: bool
) -> None:
    nodes = [n.replace(" ", "_") for n in picks]
    tax_text = "\n".join(f"root {_nfd(n) if tax_nfd else n}" for n in nodes)
    tax = run_case("encoding/taxonomy", hio.parse_taxonomy_text, tax_text.encode())
    loaded(tax)
    rows = "\n".join(f"{_nfd(n) if label_nfd else n},1" for n in nodes)
    out = run_case(
        "encoding/taxonomy", hio.read_dataset_bytes, f"label,f\n{rows}\n".encode(), "l.csv",
        taxonomy=tax,
    )  # fmt: skip
    ds = loaded(out)
    assert list(ds.y) == [unicodedata.normalize("NFC", n) for n in nodes]
    assert all(_nfd(n) in tax for n in nodes)  # lookups in either form


# ---------------------------------------------------------------------------- contradictions
@st.composite
def labelled_paths(draw: Any) -> tuple[Taxonomy, list[str], list[str | None]]:
    """A tree, label paths, and the node each path names (None: it contradicts the tree)."""
    edges, names = draw(tree_edges(3, 14))
    tax = Taxonomy(edges, nodes=names)
    labels, expect = [], []
    for _ in range(draw(st.integers(1, 6))):
        node = draw(st.integers(0, tax.n_nodes - 1))
        chain = [str(tax.names[j]) for j in [*tax.ancestors(node)[::-1], node]]
        chain = chain[draw(st.integers(0, len(chain) - 1)) :]
        if draw(st.booleans()) and len(chain) >= 2:
            k = draw(st.integers(0, len(chain) - 2))
            chain[k] = str(draw(st.sampled_from([str(n) for n in tax.names])))
        ok = all(
            tax.index(p).item() in tax.parents(c).tolist() for p, c in itertools.pairwise(chain)
        )
        labels.append("/".join(chain))
        expect.append(chain[-1] if ok else None)
    return tax, labels, expect


@settings(FUZZ, max_examples=200)
@given(case=labelled_paths(), fmt=st.sampled_from(["csv", "svmlight"]))
def test_label_paths_against_the_taxonomy(
    case: tuple[Taxonomy, list[str], list[str | None]], fmt: str
) -> None:
    tax, labels, expect = case
    if fmt == "csv":
        data = "label,f\n" + "\n".join(f"{lab},{k}" for k, lab in enumerate(labels)) + "\n"
        name = "p.csv"
    else:
        data = "\n".join(f"{lab} 1:{k + 1}" for k, lab in enumerate(labels)) + "\n"
        name = "p.svm"
    out = run_case("contradiction", hio.read_dataset_bytes, data.encode(), name, taxonomy=tax)
    if None in expect:
        first = expect.index(None)
        line = first + 2 if fmt == "csv" else first + 1
        refused(out, name, f"line {line}", labels[first])
    else:
        assert list(loaded(out).y) == expect


@FUZZ
@given(
    declared=st.lists(st.sampled_from(["01", "01/01", "01/02", "02", "02/03"]), min_size=1),
    used=st.lists(st.sampled_from(["01", "01/01", "02/01", "01/03", "02", "02/03"]), min_size=1),
)
def test_arff_labels_against_the_declared_hierarchy(declared: list[str], used: list[str]) -> None:
    terms = sorted(set(declared) | {t.split("/")[0] for t in declared})
    head = f"@relation r\n@attribute f numeric\n@attribute c hierarchical {','.join(terms)}\n"
    rows = "\n".join(f"{k},{u}" for k, u in enumerate(used))
    out = run_case("contradiction/arff", hio.read_dataset_bytes, f"{head}@data\n{rows}\n".encode(),
                   "h.arff")  # fmt: skip
    unknown = [u for u in used if u not in terms]
    if unknown:
        refused(out, "h.arff", f"line {5 + used.index(unknown[0])}", unknown[0])
    else:
        assert list(loaded(out).y) == used


# ---------------------------------------------------------------------------- special files
def _special(kind: str, d: Path) -> Path:
    p = d / f"{kind}.csv"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev-null":
        p.symlink_to("/dev/null")
    elif kind == "dev-zero":
        p.symlink_to("/dev/zero")
    elif kind == "directory":
        p.mkdir()
    elif kind == "dangling":
        p.symlink_to(d / "missing")
    elif kind == "loop":
        p.symlink_to(d / "loop2.csv")
        (d / "loop2.csv").symlink_to(p)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))
        s.close()
    elif kind == "fifo-link":
        os.mkfifo(d / "f")
        p.symlink_to(d / "f")
    return p


READERS: dict[str, Callable[[Path], Any]] = {
    "load_dataset": hio.load_dataset,
    "read_taxonomy": hio.read_taxonomy,
    "read_csv_dataset": hio.read_csv_dataset,
    "read_svmlight": hio.read_svmlight,
    "read_arff": hio.read_arff,
    "read_text_csv": hio.read_text_csv,
    "hierlab.load": hierlab.load,
    "taxonomy argument": lambda p: hio.read_dataset_bytes(b"label,f\na,1\n", "d.csv", taxonomy=p),
}


@FUZZ
@given(
    kind=st.sampled_from(
        ["fifo", "dev-null", "dev-zero", "directory", "dangling", "loop", "socket", "fifo-link"]
    ),
    reader=st.sampled_from(sorted(READERS)),
)
def test_special_files_are_refused(
    tmp_path_factory: pytest.TempPathFactory, kind: str, reader: str
) -> None:
    d = tmp_path_factory.mktemp("special")
    path = _special(kind, d)
    out = run_case("special-files", READERS[reader], path)
    msg = refused(out, str(path))
    assert any(
        w in msg
        for w in ("not a regular file", "no such file", "directory", "cannot read", "symbolic")
    ), msg


# ---------------------------------------------------------------------------- label types
LABEL_VALUES: list[Any] = [
    1, 2, 3, np.int64(2), np.int32(3), True, 2.5, np.float64(1.5),
    "a", "b", "1", np.str_("c"), b"x", b"y", None, float("nan"),
]  # fmt: skip


@settings(FUZZ, max_examples=150)
@given(
    picks=st.lists(st.integers(0, len(LABEL_VALUES) - 1), min_size=4, max_size=12),
    one_kind=st.sampled_from([None, "int", "str"]),
)
def test_label_type_mixtures(picks: list[int], one_kind: str | None) -> None:
    pool = {None: LABEL_VALUES, "int": LABEL_VALUES[:5], "str": LABEL_VALUES[8:12]}[one_kind]
    y = np.empty(len(picks), dtype=object)
    y[:] = [pool[k % len(pool)] for k in picks]
    if len({str(v) for v in y}) < 2:
        y[0], y[1] = "a", "b"  # two classes at least (one class is scikit-learn's ValueError)
    X = np.arange(len(y) * 2, dtype=float).reshape(len(y), 2) % 5
    out = run_case("label-types", hierlab.TopDownClassifier().fit, X, y)
    kinds = set()
    for i, v in enumerate(y):  # the first missing label, or the first row of a second kind
        if v is None or (isinstance(v, float) and np.isnan(v)):
            refused(out, f"y[{i}] is")
            return
        kinds.add("str" if isinstance(v, str) else "bytes" if isinstance(v, bytes) else "num")
        if len(kinds) > 1:
            refused(out, "mixes", f"y[{i}] =")
            return
    est = loaded(out)
    assert set(map(str, est.predict(X))) <= {str(v) for v in y}


# ---------------------------------------------------------------------------- model integrity
def _json_paths(v: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from _json_paths(x, (*at, k))
    elif isinstance(v, list):
        for k, x in enumerate(v):
            yield from _json_paths(x, (*at, k))


def _set(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    node = doc
    for k in at[:-1]:
        node = node[k]
    node[at[-1]] = value
    return doc


EDIT_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.sampled_from(
        ["", "x", "predict", "sklearn.dummy.DummyClassifier", "hierlab.core.taxonomy.Taxonomy",
         "os.system", "a0"]
    ),
    st.just({"__int__": 10**30}),
    st.just({"__array__": "a0"}),
    st.just([[]] * 3),
)  # fmt: skip


@FUZZ
@given(
    where=st.integers(0, 10**6),
    value=EDIT_VALUES,
    reseal=st.booleans(),
    key=st.none() | st.sampled_from(["predict", "fit", "coef_", "__dict__", "C", "x_"]),
)
def test_manifest_edits(
    model: tuple[Path, np.ndarray],
    tmp_path_factory: pytest.TempPathFactory,
    where: int,
    value: Any,
    reseal: bool,
    key: str | None,
) -> None:
    good, _ = model
    (mname, mdata), (aname, adata) = _members(good)
    man = json.loads(mdata)
    original = json.dumps(man["root"], sort_keys=True)
    if key is not None:
        man["root"]["state"][key] = value
    else:
        paths = list(_json_paths(man["root"]))
        man["root"] = _set(man["root"], paths[where % len(paths)], value)
    raw = _reseal(man, adata) if reseal else json.dumps(man).encode()
    path = tmp_path_factory.mktemp("edit") / "m.hlm"
    path.write_bytes(_zip([(mname, raw), (aname, adata)]))
    out = run_case("model/manifest-edit", hierlab.load, path)
    changed = json.dumps(man["root"], sort_keys=True) != original
    if changed and not reseal:
        refused(out, str(path))  # the checksum, or a structural check that comes first
    elif key in ("predict", "fit", "__dict__", "C"):
        refused(out, str(path), f"state key {key!r}")
    elif not isinstance(out, HierlabError):
        assert type(out) in {hierlab.get_method(n).estimator for n in hierlab.list_methods()}


@FUZZ
@given(
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=3),
    reseal=st.booleans(),
)
def test_array_bytes_edits(
    model: tuple[Path, np.ndarray],
    tmp_path_factory: pytest.TempPathFactory,
    flips: list[tuple[int, int]],
    reseal: bool,
) -> None:
    good, _ = model
    (mname, mdata), (aname, adata) = _members(good)
    with zipfile.ZipFile(io.BytesIO(adata)) as z:
        inner = [(i.filename, bytearray(z.read(i))) for i in z.infolist()]
    for at, x in flips:
        data = inner[at % len(inner)][1]
        data[(at // 7) % len(data)] ^= x
    npz = _zip([(n, bytes(d)) for n, d in inner])
    raw = _reseal(json.loads(mdata), npz) if reseal else mdata
    path = tmp_path_factory.mktemp("arr") / "m.hlm"
    path.write_bytes(_zip([(mname, raw), (aname, npz)]))
    out = run_case("model/array-edit", hierlab.load, path)
    if not reseal:
        refused(out, str(path))  # a header the npy check refuses, or the checksum


@FUZZ
@given(
    op=st.sampled_from(["duplicate", "extra", "encrypt", "drop", "swap", "rename"]),
    member=st.sampled_from(["manifest.json", "arrays.npz"]),
)
def test_archive_structure_edits(
    model: tuple[Path, np.ndarray], tmp_path_factory: pytest.TempPathFactory, op: str, member: str
) -> None:
    good, _ = model
    members = _members(good)
    data = dict(members)
    if op == "duplicate":
        members.append((member, data[member]))
    elif op == "extra":
        members.append(("readme.txt", b"hello"))
    elif op == "drop":
        members = [(n, d) for n, d in members if n != member]
    elif op == "swap":
        members = [(n, data["arrays.npz" if n == "manifest.json" else "manifest.json"])
                   for n, _ in members]  # fmt: skip
    elif op == "rename":
        members = [(n + ".bak" if n == member else n, d) for n, d in members]
    blob = _zip(members)
    if op == "encrypt":
        blob = _encrypt_flag(blob, member.encode())
    path = tmp_path_factory.mktemp("arch") / "m.hlm"
    path.write_bytes(blob)
    out = run_case("model/archive-edit", hierlab.load, path)
    msg = refused(out, str(path))
    if op in ("duplicate", "encrypt"):
        assert member in msg, msg


# ---------------------------------------------------------------------------- liblinear
@settings(FUZZ, max_examples=40)
@given(
    exponent=st.integers(0, 100),
    name=st.sampled_from(["topdown", "ovr-svm", "ovr-lr", "cmtl"]),
    sparse=st.booleans(),
)
def test_liblinear_scales(exponent: int, name: str, sparse: bool) -> None:
    rng = np.random.default_rng(exponent)
    y = np.array(["a", "b", "c"] * 6, dtype=object)
    X = (rng.normal(size=(18, 4)) + (y == "a")[:, None]) * 10.0**exponent
    Xs = sp.csr_matrix(X) if sparse else X
    with warnings_off(), counted_solver_starts() as starts:
        out = run_case("liblinear-scale", hierlab.make_estimator(name).fit, Xs, y)
    if np.abs(X).max() > 1e100:
        refused(out, "magnitude")
    elif np.abs(X).max() > 1e30:
        refused(out, "liblinear", "max_abs_feature_liblinear")
    else:
        loaded(out)
        assert starts  # the counting sees the fits it guards
    if isinstance(out, HierlabError):
        assert starts == []  # refused before any solver started


# ---------------------------------------------------------------------------- wide CSV
WIDE_CELLS = st.one_of(
    st.floats(-1e12, 1e12, allow_nan=False).map(repr),
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(
        ["1e5", "-0", "+3", ".5", "5.", " 7", "8 ", "1E-3", "0007", "?", "", "nan", "inf",
         "1e400", "x", "1_0", "+", ".", "-", "1 2", "NA", "0x1f", "1e", "--1"]
    ),
)  # fmt: skip


PLAIN = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@settings(FUZZ, max_examples=150)
@given(
    cells=st.lists(st.lists(WIDE_CELLS, min_size=70, max_size=70), min_size=1, max_size=4),
    plain=st.booleans(),
    with_id=st.booleans(),
)
def test_wide_csv_fast_path_reads_like_pandas(
    cells: list[list[str]], plain: bool, with_id: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if plain:  # plain numbers only: the fast path takes the file
        cells = [[c if PLAIN.fullmatch(c.strip()) else "1.25" for c in row] for row in cells]
    head = "label," + ("id," if with_id else "") + ",".join(f"g{j}" for j in range(70))
    rows = [f"{'ab'[i % 2]}," + (f"{i}," if with_id else "") + ",".join(r)
            for i, r in enumerate(cells)]  # fmt: skip
    data = ("\n".join([head, *rows]) + "\n").encode()
    if plain:  # the fast path does take these files (else the comparison below proves nothing)
        keep = ["label", "id"] if with_id else ["label"]
        assert hcsv._fast_numeric_table(data.decode(), ",", head.split(","), keep) is not None
    fast = run_case("wide-csv", hio.read_dataset_bytes, data, "w.csv")
    with monkeypatch.context() as m:
        m.setattr(hcsv, "_FAST_MIN_COLUMNS", 10**9)  # pandas reads every file
        slow = run_case("wide-csv", hio.read_dataset_bytes, data, "w.csv")
    if isinstance(slow, HierlabError):
        refused(fast)
        assert str(fast) == str(slow)
    else:
        ds = loaded(fast)
        assert np.array_equal(ds.X, slow.X)
        assert list(ds.y) == list(slow.y) and ds.feature_names == slow.feature_names


# ---------------------------------------------------------------------------- the report
def test_zz_report(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """Print the counts per family and outcome; assert no crash, no hang, enough cases."""
    outcomes = ("loaded", "error", "crash", "hang")
    total = Counter({o: sum(v for (_, oc), v in COUNTS.items() if oc == o) for o in outcomes})
    n = sum(total.values())
    with capsys.disabled():
        print(
            f"\n[fuzz-hostile] {n} cases in {time.perf_counter() - _T0:.1f} s: "
            + ", ".join(f"{total[o]} {o if o != 'error' else 'clean error'}" for o in outcomes)
        )
        for family in sorted({f for f, _ in COUNTS}):
            counts = "  ".join(f"{o} {COUNTS[(family, o)]:4d}" for o in outcomes)
            print(f"[fuzz-hostile]   {family:24s} {counts}")
    assert total["crash"] == 0 and total["hang"] == 0
    module_tests = [it for it in request.session.items if it.module is request.module]
    if len(module_tests) < 15:
        pytest.skip("only part of the module ran; the case count needs the whole module")
    assert n >= MIN_CASES
    for family in sorted({f for f, _ in COUNTS}):
        assert COUNTS[(family, "loaded")] + COUNTS[(family, "error")] > 0
