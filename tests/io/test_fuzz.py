"""Fuzz harness (issue 10): every reader and the taxonomy builder, fed malformed input.

Each generated case must end in one of two ways: an error of the hierlab family
(:class:`~hierlab.core.exceptions.HierlabError`, with a non-empty message), or a *valid* result
(a :class:`~hierlab.core.dataset.HierDataset` / :class:`~hierlab.core.taxonomy.Taxonomy` whose
invariants hold: finite features, every label a node, ids in topological order, ...). Any other
exception, a hang (each case runs under :func:`tests._hang.hang_stop`) or a crash fails the
test; a valid result is also held to a budget in its input's size (rows at most the input's
lines; dense columns, stored sparse values and nodes at most its characters).

Inputs: random bytes and text, files built from valid pieces then mutated (truncated, binary
garbage inserted, wrong delimiter, re-encoded as latin-1 / UTF-16 / UTF-8 with BOM, ragged rows,
NaN/Inf, huge numbers, duplicate ids, unknown labels, cycles, self loops, several roots, unknown
parents), a single class, classes with one example, and 100,000-node chains.

Hypothesis runs derandomized (the same cases in every CI run). The module counts the cases
it ran and :func:`test_zz_case_count` prints the total and asserts at least 1,000.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hierlab import io as hio
from hierlab.core.dataset import HierDataset
from hierlab.core.exceptions import HierlabError
from hierlab.core.taxonomy import Taxonomy
from hierlab.datasets.hieron import make_hieron_synthetic, symmetric_tree
from hierlab.datasets.nhsvm import make_nhsvm_synthetic
from hierlab.datasets.text import make_hierarchical_text, random_level_tree
from tests._hang import hang_stop
from tests._taxonomy_strategies import dag_edges, tree_edges

# ---------------------------------------------------------------------------- bookkeeping
CASES: Counter[str] = Counter()  # cases run per target
OUTCOMES: Counter[tuple[str, str]] = Counter()  # (target, "ok" | "error")
_T0 = time.perf_counter()
MIN_CASES = 1000

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


def run_case(target: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Run one case: return the result, or the HierlabError it raised; anything else fails."""
    CASES[target] += 1
    with hang_stop():
        try:
            out = fn(*args, **kw)
        except HierlabError as exc:
            assert str(exc).strip(), f"{target}: empty error message ({type(exc).__name__})"
            OUTCOMES[(target, "error")] += 1
            return exc
    OUTCOMES[(target, "ok")] += 1
    return out


# ---------------------------------------------------------------------------- validity
def check_taxonomy(t: Taxonomy, deep: bool = True) -> None:
    """The invariants of a valid taxonomy (DESIGN.md): one root, parent[i] < i, ..."""
    assert isinstance(t, Taxonomy)
    n = t.n_nodes
    assert n >= 1
    names = [str(x) for x in t.names]
    assert len(set(names)) == n, "duplicate node names"
    assert all(names), "empty node name"
    parent = np.asarray(t.parent)
    assert parent[0] == -1
    assert np.all(parent[1:] >= 0) and np.all(parent[1:] < np.arange(1, n)), "parent[i] < i"
    depth = np.asarray(t.depth)
    assert depth[0] == 0
    edges = t.to_edges()
    assert len(edges) == int(t.n_children.sum())
    ids = {nm: i for i, nm in enumerate(names)}
    for p, c in edges:  # every parent shallower and earlier than its child
        assert ids[p] < ids[c] and depth[ids[p]] < depth[ids[c]]
    if t.is_tree:
        assert len(edges) == n - 1
        assert np.array_equal(depth[1:], depth[parent[1:]] + 1)
        assert int(t.subtree_size[0]) == n
    assert len(t.leaves) >= 1
    assert sum(len(lv) for lv in t.levels) == n
    if deep and n <= 2000:
        # rebuilt from its own edges, it is the same taxonomy
        again = Taxonomy(edges, nodes=names) if edges else Taxonomy([], nodes=names)
        assert again == t


def check_dataset(ds: HierDataset) -> None:
    """A valid data set: 2-D float64 finite X, one label (or a non-empty set) per row."""
    assert isinstance(ds, HierDataset)
    X = ds.X
    assert X.ndim == 2 and X.dtype == np.float64
    vals = X.data if sp.issparse(X) else X
    assert np.isfinite(vals).all(), "non-finite features in a data set"
    assert X.shape[0] == len(ds.y) >= 1
    check_taxonomy(ds.taxonomy, deep=False)
    for lab in ds.y:
        labs = lab if isinstance(lab, tuple) else (lab,)
        assert len(labs) >= 1, "a row without a label"
        for v in labs:
            assert v in ds.taxonomy
    if ds.feature_names is not None:
        assert len(ds.feature_names) == X.shape[1]


def _source(args: tuple[Any, ...], kw: dict[str, Any]) -> str | bytes | None:
    """The file content a case reads (its first str or bytes argument), if any."""
    for a in (*args, kw.get("text"), kw.get("data")):
        if isinstance(a, str | bytes):
            return a
    return None


def check_budget(out: HierDataset | Taxonomy, src: str | bytes) -> None:
    """What was read is no larger than the input allows: rows at most its lines; dense columns,
    stored sparse values and taxonomy nodes at most its characters (a blow-up, not a clock, is
    what fails)."""
    n = len(src)
    if isinstance(src, str):
        lines = src.count("\n") + src.count("\r")
    else:
        lines = src.count(b"\n") + src.count(b"\r")
    if isinstance(out, Taxonomy):
        assert out.n_nodes <= n + 2, (out.n_nodes, n)  # + a synthetic root
        return
    assert out.X.shape[0] <= lines + 1, (out.X.shape, lines)
    if sp.issparse(out.X):  # svmlight's width is its largest index, bounded by max_features
        assert out.X.nnz <= n, (out.X.nnz, n)
    else:
        assert out.X.shape[1] <= n, (out.X.shape, n)
    assert len(out.taxonomy.names) <= n + 2


def expect_dataset(target: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    out = run_case(target, fn, *args, **kw)
    if not isinstance(out, HierlabError):
        check_dataset(out)
        src = _source(args, kw)
        if src is not None and "taxonomy" not in kw:
            check_budget(out, src)
    return out


def expect_taxonomy(target: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    out = run_case(target, fn, *args, **kw)
    if not isinstance(out, HierlabError):
        check_taxonomy(out)
        src = _source(args, kw)
        if src is not None:
            check_budget(out, src)
    return out


# ---------------------------------------------------------------------------- mutations
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "latin-1")


@st.composite
def encoded(draw: Any, text: str) -> bytes:
    """``text`` in a random encoding (characters it cannot hold replaced)."""
    enc = draw(st.sampled_from(ENCODINGS))
    return text.encode(enc, errors="replace")


@st.composite
def mutated(draw: Any, data: bytes) -> bytes:
    """Up to three random edits: truncate, insert garbage, duplicate or drop a line, swap."""
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(["truncate", "insert", "dupline", "dropline", "swapdelim", "flip"])
        )
        if kind == "truncate" and data:
            data = data[: draw(st.integers(0, len(data)))]
        elif kind == "insert":
            at = draw(st.integers(0, len(data)))
            junk = draw(
                st.one_of(
                    st.binary(min_size=1, max_size=8),
                    st.sampled_from(
                        [b",", b"\n", b'"', b"\t", b";", b"nan", b"inf", b"-1e400", b"#", b"@"]
                    ),
                )
            )
            data = data[:at] + junk + data[at:]
        elif kind in ("dupline", "dropline"):
            lines = data.split(b"\n")
            if lines:
                k = draw(st.integers(0, len(lines) - 1))
                if kind == "dupline":
                    lines.insert(k, lines[k])
                else:
                    del lines[k]
            data = b"\n".join(lines)
        elif kind == "swapdelim":
            a, b = draw(st.sampled_from([(b",", b";"), (b",", b"\t"), (b" ", b","), (b":", b"=")]))
            data = data.replace(a, b)
        elif kind == "flip" and data:
            at = draw(st.integers(0, len(data) - 1))
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
    return data


NAME = st.sampled_from(["a", "b", "c", "d", "e", "root", "a/b", "x y", "é", "1", "", "a,b"])
NUMBER_CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["", "?", "NA", "nan", "inf", "-inf", "1e400", "-1e309", "1e-400", "abc"]),
)
LABELS = st.sampled_from(["a", "b", "c", "a/x", "b/y", "a/x/z", "root", "q", "a;b", ";", ""])


# ---------------------------------------------------------------------------- generators
GOOD_LABEL_NAMES = ("a", "b", "c", "a/x", "b/y", "a/x/z", "q")
GOOD_LABELS = st.sampled_from(GOOD_LABEL_NAMES)


@st.composite
def csv_bytes(draw: Any) -> tuple[bytes, str, np.ndarray | None, list[str]]:
    """A CSV data file: label (+ optional id) column, numeric columns, mutations.

    Returns the bytes, a file name and, for a well-formed file (no mutation), the feature
    matrix and labels it must parse to (else None): the oracle of the clean cases.
    """
    n_rows = draw(st.integers(0, 8))
    n_feat = draw(st.integers(0, 4))
    delim = draw(st.sampled_from([",", ",", "\t", ";"]))
    with_id = draw(st.booleans())
    clean = draw(st.booleans())
    label_name = draw(st.sampled_from(["label", "class", "y", "Category", "nolabel"]))
    if clean:
        n_rows = max(n_rows, 1)
        delim = draw(st.sampled_from([",", "\t"]))
        label_name = draw(st.sampled_from(["label", "class", "y", "Category"]))
    header = [label_name] + (["id"] if with_id else []) + [f"f{j}" for j in range(n_feat)]
    if not clean and n_feat and draw(st.booleans()):
        header[-1] = header[1]  # a duplicate column name
    rows = [delim.join(header)]
    values = np.zeros((n_rows, n_feat))
    labels = []
    for i in range(n_rows):
        lab = draw(GOOD_LABELS if clean else LABELS)
        labels.append(lab)
        cells = [lab]
        if with_id:
            cells.append(str(draw(st.integers(0, 3))))  # duplicate ids on purpose
        for j in range(n_feat):
            if clean:
                v = draw(st.floats(-1e300, 1e300, allow_nan=False) | st.integers(-5, 5))
                values[i, j] = float(v)
                cells.append(repr(v))
            else:
                cells.append(draw(NUMBER_CELLS))
        if not clean and draw(st.integers(0, 5)) == 0:  # ragged row
            cells = cells[: draw(st.integers(0, len(cells)))] + ["7"] * draw(st.integers(0, 2))
        rows.append(delim.join(cells))
    text = "\n".join(rows) + draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))
    data = draw(encoded(text)) if not clean else text.encode(draw(st.sampled_from(ENCODINGS)))
    if not clean:
        data = draw(mutated(data))
    name = draw(st.sampled_from(["d.csv", "d.tsv", "d.txt", "data", "d.CSV"]))
    if clean and delim == "\t" and not name.endswith(".tsv") and n_feat + with_id == 0:
        name = "d.tsv"  # a lone column: nothing tells the delimiter
    return data, name, (values if clean else None), labels


@st.composite
def svmlight_bytes(draw: Any) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        lab = draw(st.sampled_from(["a", "b", "a,b", "a/x", "", ",", "q", "3", "-1"]))
        toks = []
        idx = 0
        for _ in range(draw(st.integers(0, 4))):
            step = draw(st.sampled_from([1, 1, 2, 0, -1, 10**9, 10**20]))
            idx += step
            val = draw(
                st.one_of(
                    st.floats(-1e3, 1e3, allow_nan=False).map(repr),
                    st.sampled_from(["nan", "inf", "1e400", "x", "", "1e308"]),
                )
            )
            toks.append(f"{idx}:{val}")
        if draw(st.integers(0, 6)) == 0:
            toks.insert(0, draw(st.sampled_from(["qid:1", "qid:x", ":", "1", "a:b"])))
        comment = draw(st.sampled_from(["", "", " # note", "#"]))
        lines.append(" ".join([lab, *toks]) + comment)
    text = "\n".join(lines) + "\n"
    return draw(mutated(draw(encoded(text))))


@st.composite
def arff_bytes(draw: Any) -> bytes:
    tree = draw(st.booleans())
    if tree:
        terms = draw(
            st.lists(st.sampled_from(["1", "1/1", "1/2", "2", "2/1", "1/1/1", "3/1"]), max_size=6)
        )
    else:
        terms = draw(
            st.lists(
                st.sampled_from(["root/a", "root/b", "a/c", "b/c", "c/a", "a/a", "x/y"]),
                max_size=6,
            )
        )
    n_num = draw(st.integers(0, 3))
    nominal = draw(st.booleans())
    head = ["@RELATION r"]
    head += [f"@ATTRIBUTE f{j} numeric" for j in range(n_num)]
    if nominal:
        head.append("@ATTRIBUTE g {u,v,'w'}")
    cls_pos = draw(st.integers(0, len(head) - 1)) + 1
    head.insert(cls_pos, "@ATTRIBUTE class hierarchical " + ",".join(terms))
    head.append("@DATA")
    n_attr = n_num + int(nominal) + 1
    sparse = draw(st.booleans()) and not nominal
    rows = []
    labels = [*terms, "9", "@", "?", "1@1/1"] if terms else ["1", "?"]
    for _ in range(draw(st.integers(0, 5))):
        cells = []
        for j in range(n_attr):
            if j == cls_pos - 1:
                cells.append(draw(st.sampled_from(labels)))
            elif nominal and j == n_attr - 1 - (cls_pos - 1 == n_attr - 1):
                cells.append(draw(st.sampled_from(["u", "v", "w", "z", "?"])))
            else:
                cells.append(draw(NUMBER_CELLS) or "?")
        if sparse:
            rows.append("{" + ", ".join(f"{j} {c}" for j, c in enumerate(cells)) + "}")
        else:
            rows.append(",".join(cells))
    text = "\n".join(head + rows) + "\n"
    return draw(mutated(draw(encoded(text))))


@st.composite
def text_csv_bytes(draw: Any) -> bytes:
    words = st.sampled_from(["alpha", "beta", "gamma", "the", "a", "ünï", "1", "", "x,y", '"q"'])
    rows = ["label,text"]
    for _ in range(draw(st.integers(0, 6))):
        doc = " ".join(draw(st.lists(words, max_size=5)))
        if "," in doc or '"' in doc:
            doc = '"' + doc.replace('"', '""') + '"'
        rows.append(f"{draw(LABELS)},{doc}")
    return draw(mutated(draw(encoded("\n".join(rows) + "\n"))))


# ---------------------------------------------------------------------------- clean files
# Each generator below writes a file from known content, returns the bytes and, while no
# mutation changed them, that content: the acceptance oracle (a reader refusing everything, or
# reading a valid file wrongly, fails).
WORDS = st.sampled_from(["alpha", "beta", "gamma", "the", "a", "ünï", "1", "x,y", '"q"', "Éé"])
TREE_TERMS = ("1", "1/1", "1/2", "1/1/1", "2", "2/1", "3")
DAG_TERMS = ("root/a", "root/b", "a/c", "b/c", "c/d", "a/e")


@st.composite
def maybe_mutated(
    draw: Any, text: str, content_of: Callable[[str], Any], first_row: int = 0
) -> tuple[bytes, Any]:
    """``text`` in a random encoding: intact, with lines dropped, repeated or swapped (the
    ``first_row`` header lines kept, or not), or with byte mutations. Returns the bytes and
    ``content_of`` the text read (None after byte mutations that changed it: no claim)."""
    enc = draw(st.sampled_from(ENCODINGS))
    kind = draw(st.sampled_from(["intact", "intact", "lines", "bytes"]))
    if kind == "lines":  # still well formed line by line: its content is known
        lines = text.split("\n")
        lo = min(draw(st.sampled_from([0, first_row])), len(lines) - 1)
        for _ in range(draw(st.integers(1, 3))):
            k = draw(st.integers(lo, len(lines) - 1))
            edit = draw(st.sampled_from(["drop", "repeat", "swap"]))
            if edit == "drop" and len(lines) > lo + 1:
                del lines[k]
            elif edit == "repeat":
                lines.insert(k, lines[k])
            else:
                j = draw(st.integers(lo, len(lines) - 1))
                lines[k], lines[j] = lines[j], lines[k]
        edited = "\n".join(lines)
        return edited.encode(enc), content_of(edited)
    data = text.encode(enc)
    if kind == "intact":
        return data, content_of(text)
    bad = draw(mutated(data))
    return bad, (content_of(text) if bad == data else None)


def rows_of(text: str, head: list[str], rows: dict[str, Any]) -> list[Any] | None:
    """The rows a line-edited file holds: its header lines ``head`` first and unchanged, then
    lines of ``rows`` (blank lines skipped), at least one; else None (no claim)."""
    lines = text.split("\n")
    if lines[: len(head)] != head:
        return None
    body = [ln for ln in lines[len(head) :] if ln]
    if not body or any(ln not in rows for ln in body):
        return None
    return [rows[ln] for ln in body]


@st.composite
def clean_svmlight(draw: Any) -> tuple[bytes, Any]:
    """``label idx:value ...`` lines (1-based increasing indices), labels as paths or comma
    lists. Content: (dense X of width = the largest index, label paths per row)."""
    n_rows = draw(st.integers(1, 6))
    width = draw(st.integers(1, 5))
    X = np.zeros((n_rows, width))
    labels: list[tuple[str, ...]] = []
    lines = []
    for i in range(n_rows):
        labs = tuple(draw(st.lists(GOOD_LABELS, min_size=1, max_size=2, unique=True)))
        labels.append(labs)
        cols = sorted(draw(st.sets(st.integers(1, width), max_size=width)))
        if i == 0:
            cols = sorted({*cols, width})  # the largest index sets the width
        toks = []
        for j in cols:
            v = draw(st.floats(-1e300, 1e300, allow_nan=False) | st.integers(-5, 5))
            X[i, j - 1] = float(v)
            toks.append(f"{j}:{v!r}")
        if draw(st.integers(0, 4)) == 0:
            toks.insert(0, "qid:3")
        comment = draw(st.sampled_from(["", "", " # note"]))
        lines.append(" ".join([",".join(labs), *toks]) + comment)
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), "# a comment line")
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    return draw(maybe_mutated(text, lambda t: (X, labels) if t == text else None))


@st.composite
def clean_arff(draw: Any) -> tuple[bytes, Any]:
    """A Clus HMC file: numeric attributes (``?`` cells), the hierarchical class anywhere, dense
    or sparse rows. Content: (X with ``?`` imputed by the column mean, each row's label set,
    the terms' parents of each node, sparse or not)."""
    tree = draw(st.booleans())
    terms = TREE_TERMS if tree else DAG_TERMS
    parents: dict[str, set[str]] = {}
    for t in terms:
        p, c = ((t.rsplit("/", 1)[0] if "/" in t else "root"), t) if tree else t.split("/")
        parents.setdefault(c, set()).add(p)
    n_num = draw(st.integers(1, 3))
    head = ["@RELATION r", *[f"@ATTRIBUTE f{j} numeric" for j in range(n_num)]]
    cls_pos = draw(st.integers(1, n_num + 1))
    head.insert(cls_pos, "@ATTRIBUTE class hierarchical " + ",".join(terms))
    sparse = draw(st.booleans())
    rows: dict[str, tuple[np.ndarray, list[str]]] = {}
    for _ in range(draw(st.integers(1, 5) | st.just(4))):
        labs = draw(st.lists(st.sampled_from(sorted(parents)), min_size=1, max_size=3, unique=True))
        x, nums = np.zeros(n_num), []
        for j in range(n_num):
            v = draw(st.floats(-1e6, 1e6, allow_nan=False) | st.integers(1, 3))
            missing = not sparse and draw(st.integers(0, 2)) == 0
            x[j] = np.nan if missing else float(v)
            nums.append("?" if missing else repr(v))
        cells = [*nums[: cls_pos - 1], "@".join(labs), *nums[cls_pos - 1 :]]
        if sparse:
            line = "{" + ", ".join(f"{k} {c}" for k, c in enumerate(cells) if c != "0") + "}"
        else:
            line = ",".join(cells)
        rows[line] = (x, labs)
    head += ["@DATA"]

    def content_of(text: str) -> Any:
        held = rows_of(text, head, rows)
        if held is None:
            return None
        X = np.array([x for x, _ in held])
        nan = np.isnan(X)
        means = np.array([np.mean(c[~m]) if (~m).any() else 0.0 for c, m in zip(X.T, nan.T)])
        X[nan] = np.broadcast_to(means, X.shape)[nan]
        return X, [labs for _, labs in held], parents, sparse

    return draw(maybe_mutated("\n".join([*head, *rows]) + "\n", content_of, len(head)))


@st.composite
def clean_text_csv(draw: Any) -> tuple[bytes, Any]:
    """``label,text`` rows (quoted where the text holds a comma or a quote). Content: (the
    documents, label paths per row)."""
    rows: dict[str, tuple[str, tuple[str, ...]]] = {}
    for _ in range(draw(st.integers(1, 6))):
        labs = tuple(draw(st.lists(GOOD_LABELS, min_size=1, max_size=2, unique=True)))
        doc = " ".join(draw(st.lists(WORDS, max_size=5)))
        cell = '"' + doc.replace('"', '""') + '"' if ("," in doc or '"' in doc) else doc
        rows[f"{';'.join(labs)},{cell}"] = (doc, labs)

    def content_of(text: str) -> Any:
        held = rows_of(text, ["label,text"], rows)
        return None if held is None else ([d for d, _ in held], [labs for _, labs in held])

    return draw(maybe_mutated("\n".join(["label,text", *rows]) + "\n", content_of, 1))


SVM_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
SVM_FEATURE = re.compile(r"([0-9]{1,2}):(\S+)")


def reference_svmlight(data: bytes) -> tuple[np.ndarray, list[tuple[str, ...]]] | None:
    """The content of ``data`` if it is plainly valid svmlight, else None (no claim).

    Plainly valid: UTF-8 (a BOM allowed) or UTF-16 with a BOM, ``\\n`` line ends, lines
    ``labels [qid:N] idx:value ... [# comment]`` with labels from :data:`GOOD_LABEL_NAMES` (a
    comma list), indices below 100 and increasing, decimal finite values, at least one index.
    As scikit-learn reads it: indices are 1-based unless one is 0, the width is the largest
    index.
    """
    bom16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    try:
        text = data.decode("utf-16" if bom16 else "utf-8-sig")
    except UnicodeDecodeError:
        return None
    if re.search(r"[^\S \n]", text.replace("\t", " ")):
        return None  # \r or another space: the readers' own rules, not claimed here
    rows: list[dict[int, float]] = []
    paths: list[tuple[str, ...]] = []
    for line in text.split("\n"):
        body = line.split("#", 1)[0]
        if not line.strip() or line.strip().startswith("#"):
            continue
        toks = re.split(r"[ \t]+", body.strip())
        labs = tuple(toks[0].split(","))
        if line[:1].isspace() or len(set(labs)) < len(labs):
            return None
        if not set(labs) <= set(GOOD_LABEL_NAMES):
            return None
        feats: dict[int, float] = {}
        for k, tok in enumerate(toks[1:]):
            if k == 0 and re.fullmatch(r"qid:[0-9]+", tok):
                continue
            m = SVM_FEATURE.fullmatch(tok)
            if not m or not SVM_NUMBER.fullmatch(m.group(2)) or not math.isfinite(float(m[2])):
                return None
            if feats and int(m[1]) <= max(feats):
                return None
            feats[int(m[1])] = float(m[2])
        rows.append(feats)
        paths.append(labs)
    indices = [j for r in rows for j in r]
    if not indices:
        return None
    shift = 1 if min(indices) > 0 else 0
    X = np.zeros((len(rows), max(indices) + 1 - shift))
    for i, r in enumerate(rows):
        for j, v in r.items():
            X[i, j - shift] = v
    return X, paths


def sublinear_tfidf(docs: list[str]) -> tuple[np.ndarray, list[str]]:
    """Sublinear TF-IDF written out (the text format's definition): tokens ``\\w\\w+``
    lowercased, ``tf = 1 + ln(count)``, ``idf = ln((1 + n) / (1 + df)) + 1``, rows scaled to
    unit length. Returns X (n_docs, n_terms) and the sorted vocabulary."""
    toks = [re.findall(r"(?u)\b\w\w+\b", d.lower()) for d in docs]
    vocab = sorted({t for ts in toks for t in ts})
    X = np.zeros((len(docs), len(vocab)))
    for i, ts in enumerate(toks):
        for t, c in Counter(ts).items():
            df = sum(t in other for other in toks)
            X[i, vocab.index(t)] = (1 + math.log(c)) * (math.log((1 + len(docs)) / (1 + df)) + 1)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norms > 0, norms, 1.0), vocab


def check_label_paths(ds: HierDataset, paths: list[tuple[str, ...]]) -> None:
    """Each row's labels are the nodes its ``a/b/c`` paths name, each at that path (below a
    synthetic root when the labels have several top nodes)."""
    tax = ds.taxonomy
    assert len(ds.y) == len(paths)
    for got, want in zip(ds.y, paths):
        nodes = got if isinstance(got, tuple) else (got,)
        assert sorted(str(v) for v in nodes) == sorted(p.rsplit("/", 1)[-1] for p in want)
        for v in nodes:
            path = [str(tax.names[k]) for k in tax.ancestors(str(v), include_self=True)]
            # the root is the labels' one top node, or a synthetic one above several
            assert "/".join(path) in want or "/".join(path[1:]) in want, (v, path, want)
    if all(len(p) == 1 for p in paths):
        assert not any(isinstance(v, tuple) for v in ds.y)  # single-label: node names


def _ancestors(node: str, parents: dict[str, set[str]]) -> set[str]:
    out: set[str] = set()
    todo = [node]
    while todo:
        for p in parents.get(todo.pop(), ()):
            if p not in out:
                out.add(p)
                todo.append(p)
    return out


@st.composite
def taxonomy_text(draw: Any) -> tuple[bytes, str | None, str | None, Taxonomy | None]:
    """A valid taxonomy written in a random format, then possibly broken.

    The last item is the taxonomy a well-formed (unbroken) file must read back as, else None.
    """
    edges, names = draw(st.one_of(tree_edges(1, 12), dag_edges(2, 10)))
    tax = Taxonomy(edges, nodes=names)
    fmt = draw(st.sampled_from(["edges", "csv", "tsv", "paths", "json"]))
    try:
        text = hio.taxonomy_to_text(tax, fmt)
    except HierlabError:  # paths of a DAG
        text = hio.taxonomy_to_text(tax, "edges")
        fmt = "edges"
    extra = draw(
        st.lists(
            st.sampled_from(
                [
                    "n0 n0",  # self loop
                    "n1 n0",  # cycle back to the root (or an unknown node)
                    "zz n1",  # a second parent / another root
                    "n0 n1",  # maybe a duplicate edge
                    "q r",  # several roots
                    "a b c",  # three fields
                    "# comment",
                ]
            ),
            max_size=2,
        )
    )
    if extra:
        sep = {"csv": ",", "tsv": "\t"}.get(fmt, " ")
        text += "\n".join(e.replace(" ", sep) for e in extra) + "\n"
    clean = not extra and draw(st.booleans())
    if clean:  # well-formed: any encoding, the right format or none, a neutral/right name
        data = text.encode(draw(st.sampled_from(ENCODINGS)))
        given_fmt = draw(st.sampled_from([None, fmt if fmt != "tsv" else "csv"]))
        filename = draw(st.sampled_from([None, f"t.{fmt}"] if fmt != "edges" else [None]))
        return data, given_fmt, filename, tax
    data = draw(mutated(draw(encoded(text))))
    given_fmt = draw(st.sampled_from([None, None, fmt if fmt != "tsv" else "csv", "json"]))
    filename = draw(st.sampled_from([None, "t.txt", f"t.{fmt}", "t.json", "t.csv"]))
    return data, given_fmt, filename, None


# ---------------------------------------------------------------------------- tests: bytes
@FUZZ
@given(data=st.binary(max_size=400), name=st.sampled_from(["d.csv", "d.svm", "d.arff", "d"]))
def test_random_bytes_every_data_reader(data: bytes, name: str) -> None:
    expect_dataset("read_dataset_bytes/random", hio.read_dataset_bytes, data, name)
    for fmt in ("csv", "svmlight", "arff", "text"):
        expect_dataset(f"{fmt}/random", hio.read_dataset_bytes, data, name, format=fmt)


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text_every_reader(text: str) -> None:
    expect_dataset("read_csv_dataset/random", hio.read_csv_dataset, text=text)
    expect_dataset("read_arff/random", hio.read_arff, text=text)
    expect_dataset("read_text_csv/random", hio.read_text_csv, text=text)
    expect_dataset("read_svmlight/random", hio.read_svmlight, data=text.encode("utf-8"))
    for fmt in (None, "edges", "csv", "paths", "json"):
        expect_taxonomy(f"taxonomy-{fmt}/random", hio.parse_taxonomy_text, text, format=fmt)


# ---------------------------------------------------------------------------- tests: formats
@FUZZ
@given(case=csv_bytes())
def test_csv_files(case: tuple[bytes, str, np.ndarray | None, list[str]]) -> None:
    data, name, values, labels = case
    out = expect_dataset("csv", hio.read_dataset_bytes, data, name, format="csv")
    if values is not None:  # a well-formed file: it must parse, to exactly these numbers
        assert isinstance(out, HierDataset), out
        assert np.array_equal(out.X, values)
        shown = [str(v) for v in out.y]
        assert [lab.rsplit("/", 1)[-1] for lab in labels] == [v.rsplit("/", 1)[-1] for v in shown]


@FUZZ
@given(case=csv_bytes(), tax=st.sampled_from(["flat", "paths", "unrelated"]))
def test_csv_with_a_given_taxonomy(
    case: tuple[bytes, str, np.ndarray | None, list[str]], tax: str
) -> None:
    """Labels not in a given taxonomy must be reported, never mapped silently."""
    data, name, _, _ = case
    t = {
        "flat": Taxonomy.flat(["a", "b", "c"], root="r"),
        "paths": Taxonomy.from_paths(["a/x/z", "b/y", "c"], root="root"),
        "unrelated": Taxonomy([("r", "s")]),
    }[tax]
    out = expect_dataset("csv+taxonomy", hio.read_dataset_bytes, data, name, taxonomy=t)
    if not isinstance(out, HierlabError):
        assert out.taxonomy is t


def _hostile(gen: st.SearchStrategy[bytes]) -> st.SearchStrategy[tuple[bytes, Any]]:
    return gen.map(lambda data: (data, None))


@settings(FUZZ, max_examples=120)
@given(case=clean_svmlight() | _hostile(svmlight_bytes()))
def test_svmlight_files(case: tuple[bytes, Any]) -> None:
    data, content = case
    out = expect_dataset("svmlight", hio.read_dataset_bytes, data, "d.svm")
    wide = expect_dataset("svmlight/n_features", hio.read_svmlight, data=data, n_features=5)
    if content is None:  # mutated: what a plain reading finds in it, if the file is plain
        content = reference_svmlight(data)
    if content is not None:  # a valid file: it loads, to exactly what it holds
        X, paths = content
        for ds, width in ((out, X.shape[1]), (wide, 5)):
            if width < X.shape[1]:  # wider than n_features: refused
                assert isinstance(ds, HierlabError) and "n_features" in str(ds), ds
                continue
            assert isinstance(ds, HierDataset), ds
            assert sp.issparse(ds.X) and ds.X.shape == (len(X), width)
            np.testing.assert_array_equal(ds.X.toarray()[:, : X.shape[1]], X)
            check_label_paths(ds, paths)


@FUZZ
@given(case=clean_arff() | _hostile(arff_bytes()))
def test_arff_files(case: tuple[bytes, Any]) -> None:
    data, content = case
    out = expect_dataset("arff", hio.read_dataset_bytes, data, "d.arff")
    if content is not None:  # a valid file: it loads, to exactly what was written
        X, labels, parents, sparse = content
        assert isinstance(out, HierDataset), out
        assert sp.issparse(out.X) == sparse
        np.testing.assert_allclose(out.X.toarray() if sparse else out.X, X, rtol=1e-15, atol=0)
        assert out.feature_names == [f"f{j}" for j in range(X.shape[1])]
        tax = out.taxonomy
        assert {(p, c) for c, ps in parents.items() for p in ps} == set(tax.to_edges())
        specific = [
            sorted(v for v in labs if not any(v in _ancestors(u, parents) for u in labs))
            for labs in labels
        ]
        got = [sorted(v) if isinstance(v, tuple) else [v] for v in out.y]
        assert [[str(v) for v in g] for g in got] == specific
        assert isinstance(out.y[0], tuple) == any(len(s) > 1 for s in specific)


@FUZZ
@given(case=clean_text_csv() | _hostile(text_csv_bytes()))
def test_text_csv_files(case: tuple[bytes, Any]) -> None:
    data, content = case
    out = expect_dataset("text", hio.read_dataset_bytes, data, "d.csv", format="text")
    if content is not None:
        docs, paths = content
        X, vocab = sublinear_tfidf(docs)
        if not vocab:  # no word of two letters: nothing to learn from, refused
            assert isinstance(out, HierlabError) and "vectorise" in str(out), out
            return
        assert isinstance(out, HierDataset), out
        assert out.feature_names == vocab
        np.testing.assert_allclose(out.X.toarray(), X, rtol=1e-12, atol=1e-15)
        assert out.texts is not None and list(out.texts) == docs
        check_label_paths(out, paths)


@FUZZ
@given(case=taxonomy_text(), root=st.sampled_from([None, None, "R", "n0"]))
def test_taxonomy_files(
    case: tuple[bytes, str | None, str | None, Taxonomy | None], root: str | None
) -> None:
    data, fmt, filename, expected = case
    out = expect_taxonomy("parse_taxonomy_text", hio.parse_taxonomy_text, data, fmt, filename, root)
    if expected is not None and root is None:  # the oracle: a clean file reads back equal
        assert out == expected, (data, out)


@settings(FUZZ, max_examples=40)
@given(case=taxonomy_text())
def test_files_on_disk_through_load_dataset_and_read_taxonomy(
    case: tuple[bytes, str | None, str | None, Taxonomy | None],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data, fmt, _, _ = case
    d = tmp_path_factory.mktemp("fuzz")
    (d / "t.txt").write_bytes(data)
    tax = expect_taxonomy("read_taxonomy", hio.read_taxonomy, d / "t.txt", format=fmt)
    lines = [f"{n},1" for n in (tax.names if isinstance(tax, Taxonomy) else ["n0", "zz"])]
    (d / "d.csv").write_bytes(("label,f\n" + "\n".join(lines) + "\n").encode())
    expect_dataset("load_dataset", hio.load_dataset, d / "d.csv", taxonomy=d / "t.txt")


# ---------------------------------------------------------------------------- tests: builder
@FUZZ
@given(
    edges=st.lists(st.tuples(NAME, NAME), max_size=8),
    nodes=st.none() | st.lists(NAME, max_size=6),
    root=st.none() | NAME,
)
def test_taxonomy_builder_on_arbitrary_edges(
    edges: list[tuple[str, str]], nodes: list[str] | None, root: str | None
) -> None:
    """Cycles, self loops, duplicates, several roots, unknown parents: error or a valid tree."""
    out = expect_taxonomy("Taxonomy", Taxonomy, edges, nodes=nodes, root=root)
    if not isinstance(out, HierlabError):
        extra = {(root, r) for r in out.names} if root is not None else set()
        assert set(edges) <= set(out.to_edges()) <= set(edges) | extra


@FUZZ
@given(
    paths=st.lists(
        st.text(alphabet="ab/ ", max_size=6) | st.sampled_from(["a/b", "b/a", "a/a/a", "/", ""]),
        max_size=6,
    ),
    root=st.none() | st.sampled_from(["a", "root"]),
    names=st.sampled_from(["auto", "leaf", "full", "bad"]),
)
def test_taxonomy_from_paths(paths: list[str], root: str | None, names: str) -> None:
    expect_taxonomy("Taxonomy.from_paths", Taxonomy.from_paths, paths, root=root, names=names)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=True)
    | st.sampled_from(["a", "b", "c", ""]),
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "children", "edges", "nodes", "root", "parent"]),
            kids,
            max_size=3,
        )
    ),
    max_leaves=12,
)


@FUZZ
@given(doc=JSON_VALUES)
def test_taxonomy_from_json_values(doc: Any) -> None:
    expect_taxonomy("Taxonomy.from_json", Taxonomy.from_json, doc)
    expect_taxonomy("json text", hio.parse_taxonomy_text, json.dumps(doc), format="json")


@FUZZ
@given(parent=st.lists(st.integers(-2, 6) | st.none() | st.floats(-1, 5), max_size=7))
def test_taxonomy_from_parent_array(parent: list[Any]) -> None:
    expect_taxonomy("Taxonomy.from_parent_array", Taxonomy.from_parent_array, parent)


# ---------------------------------------------------------------------------- tests: loaders
@settings(FUZZ, max_examples=30)
@given(
    seed=st.none() | st.integers(-2, 3) | st.just(1.5),
    n_per=st.integers(-1, 3),
    branching=st.integers(-1, 3),
    depth=st.integers(-1, 3),
    noise=st.sampled_from([0.0, 0.16, -1.0, math.inf, math.nan]),
)
def test_hieron_generator(seed: Any, n_per: int, branching: int, depth: int, noise: float) -> None:
    out = run_case(
        "make_hieron_synthetic",
        make_hieron_synthetic,
        seed,
        n_per,
        n_per,
        branching=branching,
        depth=depth,
        noise_std=noise,
    )
    if not isinstance(out, HierlabError):
        for part in out:
            if part.n_samples:
                check_dataset(part)


@settings(FUZZ, max_examples=30)
@given(
    kind=st.sampled_from(["balanced", "unbalanced", "other"]),
    n=st.integers(-1, 30),
    d=st.integers(-1, 4),
    depth=st.none() | st.integers(-1, 4),
    test_size=st.sampled_from([0.3, 0.0, 1.0, math.nan]),
)
def test_nhsvm_generator(kind: str, n: int, d: int, depth: int | None, test_size: float) -> None:
    out = run_case(
        "make_nhsvm_synthetic",
        make_nhsvm_synthetic,
        kind,
        n_samples=n,
        n_features=d,
        depth=depth,
        test_size=test_size,
        random_state=0,
    )
    if not isinstance(out, HierlabError):
        for part in out:
            if part.n_samples:
                check_dataset(part)


@settings(FUZZ, max_examples=30)
@given(
    n=st.integers(-1, 40),
    c=st.integers(-1, 6),
    f=st.integers(-1, 40),
    depth=st.integers(-1, 3),
    doc_length=st.sampled_from([5.0, 0.0, math.nan, math.inf]),
    test_size=st.sampled_from([0.25, 0.0, 1.0, 3]),
)
def test_text_generator(
    n: int, c: int, f: int, depth: int, doc_length: float, test_size: float
) -> None:
    out = run_case(
        "make_hierarchical_text",
        make_hierarchical_text,
        n,
        c,
        f,
        depth,
        doc_length=doc_length,
        test_size=test_size,
        random_state=0,
    )
    if not isinstance(out, HierlabError):
        for part in out:
            check_dataset(part)
    expect_taxonomy("random_level_tree", lambda: random_level_tree(c, depth, 0)[0])


# ---------------------------------------------------------------------------- fixed cases
CHAIN = 100_000


def _chain_edges(n: int = CHAIN) -> list[tuple[str, str]]:
    return [(f"n{i}", f"n{i + 1}") for i in range(n)]


def _check_chain(t: Any, n_nodes: int = CHAIN + 1) -> None:
    assert isinstance(t, Taxonomy), t
    check_taxonomy(t, deep=False)
    assert t.n_nodes == n_nodes and t.max_depth == n_nodes - 1 and len(t.leaves) == 1
    last = t.n_nodes - 1
    assert int(t.tree_distance(0, last)) == last
    assert int(t.lca(last, last // 2)) == last // 2
    assert len(t.ancestors(last)) == last
    assert len(t.descendants(0)) == last
    assert int(t.subtree_size[0]) == n_nodes


@pytest.mark.parametrize("fmt", ["edges", "csv", "json", "paths", "builder"])
def test_100000_node_chain(fmt: str) -> None:
    """A 100,000-deep chain in every format: no recursion limit (its time, against a
    10,000-node chain's: ``python -m hierlab.benchmarks.taxonomy --chain``)."""
    edges = _chain_edges()
    if fmt == "builder":
        t = run_case("chain", Taxonomy, edges)
    elif fmt == "paths":
        t = run_case("chain", hio.parse_taxonomy_text, "/".join(f"n{i}" for i in range(CHAIN + 1)))
    elif fmt == "json":
        t = run_case("chain", hio.parse_taxonomy_text, json.dumps({"edges": edges}))
    else:
        sep = "," if fmt == "csv" else " "
        text = "\n".join(f"{p}{sep}{c}" for p, c in edges)
        t = run_case("chain", hio.parse_taxonomy_text, text, format=fmt)
    _check_chain(t)
    if fmt == "builder":
        # written as JSON and read back: the edge form (nested children would be too deep);
        # paths would be quadratic in size and are refused with a message
        back = run_case("chain", hio.parse_taxonomy_text, hio.taxonomy_to_text(t, "json"))
        assert back == t
        assert isinstance(run_case("chain", hio.taxonomy_to_text, t, "paths"), HierlabError)
        # the O(depth^2) ancestor matrix is refused with a message, never a hang
        assert isinstance(run_case("chain", lambda: t.ancestor_matrix), HierlabError)


def test_100000_node_chain_errors() -> None:
    """A 100,001-node cycle and a 100,000-deep nested JSON end in clear errors."""
    edges = _chain_edges()
    cyc = run_case("chain", Taxonomy, [*edges, (f"n{CHAIN}", "n0")])
    assert isinstance(cyc, HierlabError) and "cycle" in str(cyc)
    cyc2 = run_case("chain", Taxonomy, [("r", "n0"), *edges, (f"n{CHAIN}", "n0")])
    assert isinstance(cyc2, HierlabError) and "cycle" in str(cyc2)
    nested = '{"name":"leaf"}'
    nested = "".join(f'{{"name":"n{i}","children":[' for i in range(CHAIN)) + nested
    nested += "]}" * CHAIN
    deep = run_case("chain", hio.parse_taxonomy_text, nested, format="json")
    assert isinstance(deep, HierlabError) and "edge list" in str(deep)


def test_100000_node_chain_as_labels() -> None:
    """A data set whose labels are the nodes of a 100,000-deep chain (paths labels)."""
    t = Taxonomy(_chain_edges())
    names = [str(t.names[-1]), str(t.names[CHAIN // 2]), "n0"]
    text = "label,f\n" + "\n".join(f"{n},{k}" for k, n in enumerate(names)) + "\n"
    ds = expect_dataset("chain", hio.read_dataset_bytes, text.encode(), "d.csv", taxonomy=t)
    assert list(ds.y) == names


_ARFF_HEAD = b"@relation r\n@attribute f numeric\n@attribute c hierarchical "
SPECIAL = {
    "empty": b"",
    "blank lines": b"\n\n  \n",
    "BOM only": b"\xef\xbb\xbf",
    "UTF-16 BOM only": b"\xff\xfe",
    "odd UTF-16": b"\xff\xfel\x00a\x00b",
    "header only": b"label,f1\n",
    "single class": b"label,f1\na,1\na,2\na,3\n",
    "one example per class": b"label,f1\na,1\nb,2\nc,3\n",
    "one row": b"label,f1\na,1\n",
    "duplicate ids": b"id,label,f1\n1,a,1\n1,b,2\n",
    "NaN cells": b"label,f1,f2\na,nan,1\nb,,2\nc,?,3\n",
    "all NaN column": b"label,f1\na,nan\nb,?\n",
    "Inf cell": b"label,f1\na,inf\nb,1\n",
    "huge number": b"label,f1\na,1e308\nb,1e400\n",
    "huge integer": b"label,f1\na,99999999999999999999999999\nb,1\n",
    "ragged": b"label,f1,f2\na,1\nb,1,2,3\n",
    "semicolons": b"label;f1\na;1\n",
    "latin-1": "label,f1\ncafé,1\nthé,2\n".encode("latin-1"),
    "UTF-16 BOM": "label,f1\na,1\nb,2\n".encode("utf-16"),
    "UTF-16-LE no BOM": "label,f1\na,1\nb,2\n".encode("utf-16-le"),
    "UTF-8 BOM": "label,f1\na,1\nb,2\n".encode("utf-8-sig"),
    "NUL in label": b"label,f1\na\x00,1\na,2\n",
    "binary": bytes(range(256)) * 3,
    "zip": b"PK\x03\x04" + bytes(40),
    "pickle": b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94.",
    "path labels with a cycle": b"label,f1\na/b,1\nb/a,2\n",
    "label named root": b"label,f1\nroot,1\n__root__,2\nx,3\n",
    "empty label set": b"label,f1\na;b,1\n;,2\n",
    "svm index overflow": b"a 99999999999999999999999:1\n",
    "svm NaN": b"a 1:nan\nb 1:2\n",
    "arff inf": _ARFF_HEAD + b"1,1/1\n@data\ninf,1\n",
    "arff @ only": _ARFF_HEAD + b"1,1/1\n@data\n1,@\n",
    "arff DAG cycle": _ARFF_HEAD + b"a/b,b/a\n@data\n1,a\n",
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("filename", ["d.csv", "d.svm", "d.arff", "d.txt"])
def test_special_files(name: str, filename: str) -> None:
    expect_dataset("special", hio.read_dataset_bytes, SPECIAL[name], filename)
    expect_taxonomy("special/taxonomy", hio.parse_taxonomy_text, SPECIAL[name], None, filename)


def test_special_files_expected_outcomes() -> None:
    """The outcome of the named cases, checked (not just 'no crash')."""

    def read(name: str, filename: str = "d.csv") -> Any:
        return run_case("special", hio.read_dataset_bytes, SPECIAL[name], filename)

    single = read("single class")
    assert isinstance(single, HierDataset) and set(single.y) == {"a"}
    one = read("one example per class")
    assert isinstance(one, HierDataset) and sorted(one.y) == ["a", "b", "c"]
    dup = read("duplicate ids")
    assert isinstance(dup, HierDataset) and list(dup.meta["ids"]) == ["1", "1"]
    nan = read("NaN cells")
    assert isinstance(nan, HierDataset) and np.allclose(nan.X[:, 0], [0.0, 0.0, 0.0])
    for name in ("UTF-16 BOM", "UTF-16-LE no BOM", "UTF-8 BOM"):
        ds = read(name)
        assert isinstance(ds, HierDataset) and list(ds.y) == ["a", "b"], name
    lat = read("latin-1")
    assert isinstance(lat, HierDataset) and list(lat.y) == ["café", "thé"]
    root = read("label named root")
    assert isinstance(root, HierDataset)
    assert {"root", "__root__", "x"} <= set(root.taxonomy.names)
    for name, where in [
        ("Inf cell", "line 2, column 'f1'"),
        ("huge number", "line 3, column 'f1'"),
        ("ragged", "line 3"),
        ("NUL in label", "binary"),
        ("empty label set", "line 3"),
    ]:
        err = read(name)
        assert isinstance(err, HierlabError) and where in str(err), (name, err)
    for name, filename in [
        ("svm index overflow", "d.svm"),
        ("svm NaN", "d.svm"),
        ("arff inf", "d.arff"),
        ("arff @ only", "d.arff"),
        ("arff DAG cycle", "d.arff"),
        ("binary", "d.csv"),
        ("pickle", "d.csv"),
    ]:
        assert isinstance(read(name, filename), HierlabError), name


def test_taxonomy_builder_named_errors() -> None:
    """Each structural error is named in the message (node included)."""
    cases = [
        ([("a", "a")], None, "self loop"),
        ([("a", "b"), ("b", "a")], None, "cycle"),
        ([("a", "b"), ("c", "d")], None, "several roots"),
        ([("a", "b"), ("a", "b")], None, "duplicate edge"),
        ([("x", "b")], ["b"], "unknown parent"),
        ([("a", "b")], ["a", "b", "a"], "listed twice"),
        ([("a", "")], None, "empty node name"),
        ([("a", "b", "c")], None, "pair"),
        ([], None, "empty taxonomy"),
    ]
    for edges, nodes, pattern in cases:
        err = run_case("Taxonomy/named", Taxonomy, edges, nodes=nodes)
        assert isinstance(err, HierlabError) and pattern in str(err), (edges, err)
    single = run_case("Taxonomy/named", Taxonomy, [], nodes=["only"])
    check_taxonomy(single)
    assert run_case("Taxonomy/named", Taxonomy.flat, ["a"]).n_nodes == 2
    err = run_case("Taxonomy/named", Taxonomy.flat, ["root", "a"])
    assert isinstance(err, HierlabError) and "flat root" in str(err)
    assert symmetric_tree(1, 3).n_nodes == 4


def test_zz_case_count(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> None:
    """Print the number of cases run (and the time); at least 1,000 when the module ran whole."""
    total = sum(CASES.values())
    ok = sum(v for (t, o), v in OUTCOMES.items() if o == "ok")
    err = sum(v for (t, o), v in OUTCOMES.items() if o == "error")
    with capsys.disabled():
        print(
            f"\n[fuzz] {total} cases in {time.perf_counter() - _T0:.1f} s: {ok} valid data sets/"
            f"taxonomies, {err} hierlab errors, 0 other exceptions"
        )
        for target, n in sorted(CASES.items()):
            print(
                f"[fuzz]   {target:32s} {n:5d} cases  ok {OUTCOMES[(target, 'ok')]:5d}  "
                f"error {OUTCOMES[(target, 'error')]:5d}"
            )
    module_tests = [it for it in request.session.items if it.module is request.module]
    if len(module_tests) < 20:
        pytest.skip("only part of the fuzz module was selected; the count needs the whole module")
    assert total >= MIN_CASES
    # the generators reach both outcomes on each family (a harness where everything errors
    # would prove nothing)
    for family in ("csv", "svmlight", "arff", "text", "parse_taxonomy_text", "Taxonomy"):
        assert OUTCOMES[(family, "ok")] > 0, family
        assert OUTCOMES[(family, "error")] > 0, family
