"""Hostile input, second pass (issue 21): one test per root cause found in the readers.

Each test holds the example of the issue that crashed, hung or loaded silently wrong on the
code before the fix, and checks the outcome now: a correct data set, or a hierlab error whose
message names the file and the line, column or node.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from hierlab import io as hio
from hierlab.core import limits
from hierlab.core.exceptions import DataError, HierlabError, TaxonomyError
from hierlab.core.taxonomy import Taxonomy
from hierlab.io import csv as hcsv

TREE = Taxonomy([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1")])


# ---------------------------------------------------------------------------- CSV columns
def test_columns_equal_after_trimming_are_refused_with_the_column() -> None:
    data = b"label,f, f\na,1,2\nb,3,4\n"
    assert hio.guess_dataset_format(data.decode(), "d.csv") == "csv"
    with pytest.raises(DataError, match=r"d\.csv, line 1, column 'f': duplicate column"):
        hio.read_dataset_bytes(data, "d.csv")


@pytest.mark.parametrize(
    "data",
    [b"label,f1,f2,\na,1,2,\nb,3,4,\n", b"label,f1,f2,\na,1,2\nb,3,4\n"],
    ids=["every-row-trailing-comma", "header-only"],
)
def test_trailing_comma_in_the_header_adds_no_phantom_feature(data: bytes) -> None:
    ds = hio.read_dataset_bytes(data, "d.csv")
    assert ds.feature_names == ["f1", "f2"]
    assert np.array_equal(ds.X, [[1.0, 2.0], [3.0, 4.0]])


def test_an_unnamed_column_holding_values_is_refused() -> None:
    with pytest.raises(DataError, match=r"line 1.*column 3 has no name"):
        hio.read_dataset_bytes(b"label,f1,\na,1,5\nb,3,6\n", "d.csv")
    with pytest.raises(DataError, match=r"line 1.*column 2 has no name"):
        hio.read_dataset_bytes(b"label,,f2\na,1,5\nb,3,6\n", "d.csv")


def test_a_row_longer_than_the_header_is_refused_not_shifted() -> None:
    # pandas would make the first column the index and shift every cell left by one
    with pytest.raises(DataError, match=r"line 3"):
        hio.read_dataset_bytes(b"label,f1\na,1\nb,2,9\n", "d.csv")


@pytest.mark.parametrize("label", ["NA", "null", "nan", "?", "NaN", "NULL"])
def test_missing_value_markers_are_valid_labels(label: str) -> None:
    data = f"label,f1\n{label},1\nb,?\n".encode()
    ds = hio.read_dataset_bytes(data, "d.csv")
    assert list(ds.y) == [label, "b"]
    assert np.array_equal(ds.X, [[1.0], [1.0]])  # '?' in a feature column is still missing


def test_a_text_document_reading_na_is_kept() -> None:
    ds = hio.read_dataset_bytes(b"label,text\na,NA\nb,hello world\n", "d.csv", format="text")
    assert "na" in ds.feature_names
    assert ds.X[0].nnz == 1


# ---------------------------------------------------------------------------- encodings
def test_one_invalid_byte_in_utf8_text_is_refused_with_its_line() -> None:
    data = "label,f1\ncafé,1\n".encode() + b"x\xff,2\n"
    with pytest.raises(DataError, match=r"d\.csv, line 3: .*not valid UTF-8"):
        hio.read_dataset_bytes(data, "d.csv")


def test_a_consistent_legacy_file_is_read_as_windows_1252() -> None:
    data = "label,f1\ncafé,1\n“q”,2\n".encode("cp1252")
    ds = hio.read_dataset_bytes(data, "d.csv")
    assert list(ds.y) == ["café", "“q”"]


def test_a_declared_encoding_is_used() -> None:
    data = "label,f1\nжук,1\nb,2\n".encode("koi8-r")
    ds = hio.read_dataset_bytes(data, "d.csv", encoding="koi8-r")
    assert list(ds.y) == ["жук", "b"]
    with pytest.raises(DataError, match=r"t\.txt, line 2: byte 0xff .*not valid ascii"):
        hio.decode_bytes(b"a\n\xff\xfe\x00", "t.txt", encoding="ascii")


def test_bytes_undefined_in_windows_1252_are_refused() -> None:
    with pytest.raises(DataError, match=r"d\.csv, line 2: .*0x81"):
        hio.read_dataset_bytes(b"label,f1\na\x81,1\nb,2\n", "d.csv")


def test_nfc_and_nfd_spellings_are_one_node() -> None:
    ds = hio.read_dataset_bytes("label,f1\ncaf\u00e9,1\ncafe\u0301,2\n".encode(), "d.csv")
    assert list(ds.y) == ["caf\u00e9", "caf\u00e9"]
    assert ds.taxonomy.n_nodes == 2
    tax = hio.parse_taxonomy_text("r caf\u00e9\nr cafe\u0301x\n".encode())
    assert [str(n) for n in tax.names] == ["r", "caf\u00e9", "caf\u00e9x"]  # stored in NFC


def test_a_bom_in_mid_file_is_dropped() -> None:
    ds = hio.read_dataset_bytes("label,f1\na,1\n\ufeffa,2\n".encode(), "d.csv")
    assert list(ds.y) == ["a", "a"] and ds.taxonomy.n_nodes == 2


# ---------------------------------------------------------------------------- labels vs taxonomy
def test_a_label_path_contradicting_the_taxonomy_is_refused_with_the_row() -> None:
    data = b"label,f1\na/a2,1\nb/a1,2\n"
    with pytest.raises(DataError, match=r"d\.csv, line 3, column 'label': .*'b/a1'.*'a'"):
        hio.read_dataset_bytes(data, "d.csv", taxonomy=TREE)
    ok = hio.read_dataset_bytes(b"label,f1\na/a2,1\nr/b/b1,2\n", "d.csv", taxonomy=TREE)
    assert list(ok.y) == ["a2", "b1"]


def test_an_undeclared_arff_label_is_refused_not_mapped_to_a_top_level_node() -> None:
    data = (
        b"@relation r\n@attribute f numeric\n@attribute c hierarchical 01,01/01,02\n@data\n"
        b"1,01/01\n2,02/01\n"
    )
    with pytest.raises(DataError, match=r"d\.arff, line 6, column 'c': .*'02/01'"):
        hio.read_dataset_bytes(data, "d.arff")


def test_nested_json_with_a_name_under_two_parents_is_refused() -> None:
    doc = (
        '{"name":"r","children":[{"name":"a","children":[{"name":"x"}]},'
        '{"name":"b","children":[{"name":"x"}]}]}'
    )
    with pytest.raises(TaxonomyError, match=r"'x'.*twice"):
        hio.parse_taxonomy_text(doc, filename="t.json")


# ---------------------------------------------------------------------------- special files
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "d.csv"
    os.mkfifo(fifo)
    out: list[BaseException] = []

    def read() -> None:
        try:
            hio.load_dataset(fifo)
        except BaseException as exc:  # handed to the main thread
            out.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():  # unblock the reader before failing
        with open(fifo, "wb"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert isinstance(out[0], DataError) and "not a regular file" in str(out[0])
    assert str(fifo) in str(out[0])
    with pytest.raises(TaxonomyError, match="not a regular file"):
        hio.read_taxonomy(fifo)


def test_a_symlink_to_a_device_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "z.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(DataError, match=r"z\.csv.*not a regular file \(a character device\)"):
        hio.load_dataset(link)
    good = tmp_path / "g.csv"
    good.write_bytes(b"label,f\na,1\nb,2\n")
    (tmp_path / "l.csv").symlink_to(good)
    assert hio.load_dataset(tmp_path / "l.csv").n_samples == 2


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    big.write_bytes(b"label,f\n" + b"a,1\n" * 1000)
    with limits.override(max_file_bytes=100), pytest.raises(DataError, match="max_file_bytes"):
        hio.load_dataset(big)


# ---------------------------------------------------------------------------- argument mistakes
@pytest.mark.parametrize(
    ("kw", "pattern"),
    [
        ({"label_sep": ""}, "label_sep"),
        ({"foo": 1}, "unknown option 'foo'"),
        ({"taxonomy": 123}, "taxonomy must be"),
        ({"taxonomy": b"r a\n"}, "taxonomy must be"),
        ({"format": "xls"}, "unknown data format"),
    ],
)
def test_argument_mistakes_give_hierlab_errors(kw: dict[str, object], pattern: str) -> None:
    with pytest.raises(HierlabError, match=pattern):
        hio.read_dataset_bytes(b"label,f1\na,1\nb,2\n", "d.csv", **kw)  # type: ignore[arg-type]


def test_path_arguments_of_the_wrong_type_give_hierlab_errors() -> None:
    with pytest.raises(DataError, match="path must be"):
        hio.load_dataset(b"/tmp/x.csv")  # type: ignore[arg-type]
    with pytest.raises(TaxonomyError, match="path must be"):
        hio.read_taxonomy(123)  # type: ignore[arg-type]
    with pytest.raises(TaxonomyError, match="sep"):
        Taxonomy.from_paths(["a/b"], sep="")


# ---------------------------------------------------------------------------- declared sizes
def test_a_huge_svmlight_index_is_refused_with_its_line() -> None:
    data = b"a 1:1\nb 1000000000:1\n"
    with pytest.raises(DataError, match=r"d\.svm, line 2.*1,000,000,000 features.*max_features"):
        hio.read_dataset_bytes(data, "d.svm")
    with pytest.raises(DataError, match="max_features"):
        hio.read_svmlight(data=b"a 1:1\n", n_features=10**9)
    with limits.override(max_features=2 * 10**9):
        assert hio.read_dataset_bytes(data, "d.svm").n_features == 10**9


def test_a_csv_wider_than_the_limit_is_refused_from_its_header() -> None:
    header = "label," + ",".join(f"f{j}" for j in range(50))
    with limits.override(max_features=20), pytest.raises(DataError, match=r"line 1.*max_features"):
        hio.read_dataset_bytes((header + "\n").encode(), "d.csv")


def test_a_taxonomy_over_the_node_limit_is_refused() -> None:
    text = "\n".join(f"r n{i}" for i in range(100))
    with limits.override(max_nodes=50), pytest.raises(TaxonomyError, match="max_nodes"):
        hio.parse_taxonomy_text(text)


# ---------------------------------------------------------------------------- wide CSV
def test_the_wide_csv_fast_path_reads_what_pandas_reads() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(scale=1e3, size=(7, 90))
    names = ",".join(f"g{j}" for j in range(90))
    rows = [f"{'abc'[i % 3]},{i},{','.join(map(repr, values[i].tolist()))}" for i in range(7)]
    plain = f"label,id,{names}\n" + "\n".join(rows) + "\n"
    quoted = plain.replace("\na,", '\n"a",')  # a quote: pandas reads this one
    header = ["label", "id", *(f"g{j}" for j in range(90))]
    assert hcsv._fast_numeric_table(plain, ",", header, ["label", "id"]) is not None
    assert hcsv._fast_numeric_table(quoted, ",", header, ["label", "id"]) is None
    fast = hio.read_dataset_bytes(plain.encode(), "w.csv")
    slow = hio.read_dataset_bytes(quoted.encode(), "w.csv")
    for ds in (fast, slow):
        assert np.array_equal(ds.X, values)
        assert list(ds.y) == ["abc"[i % 3] for i in range(7)]
        assert list(ds.meta["ids"]) == [str(i) for i in range(7)]
        assert ds.feature_names == [f"g{j}" for j in range(90)]
    bad = plain.replace(f"\nb,1,{float(values[1, 0])!r}", "\nb,1,x")
    with pytest.raises(DataError, match=r"line 3, column 'g0': value 'x' is not a number"):
        hio.read_dataset_bytes(bad.encode(), "w.csv")
    missing = plain.replace(f"\nb,1,{float(values[1, 0])!r}", "\nb,1,?")
    ds = hio.read_dataset_bytes(missing.encode(), "w.csv")
    assert ds.X[1, 0] == pytest.approx(np.delete(values[:, 0], 1).mean())
