"""CSV cases of the third hostile-input pass: each loads the right content or is refused with
its line. On main a label holding ``\\r`` came back holding ``\\n``, a trailing Ctrl-Z added a
row, a file of one label column loaded with zero features, and a 200 kB header name raised the
csv module's ``field larger than field limit``. Mutations that make these fail: dropping the
line-break check of ``_raw_label_column``, the Ctrl-Z strip of ``clean_text``, the
no-feature-column check of ``prepare_table``, the ``csv.Error`` mapping of ``_checked``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import hierlab
from hierlab.core.exceptions import DataError


def test_a_label_with_a_line_break_is_refused_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "cr.csv"
    f.write_bytes(b'x,label\n1,c\n1,"a\rb"\n2,c\n')
    with pytest.raises(DataError, match=r"line 3, column 'label'.*line break"):
        hierlab.load_dataset(f)


def test_a_trailing_ctrl_z_adds_no_row(tmp_path: Path) -> None:
    f = tmp_path / "z.csv"
    f.write_bytes(b"x,label\n1,a\n2,b\n\x1a")
    d = hierlab.load_dataset(f)
    assert d.n_samples == 2 and list(d.y) == ["a", "b"] and d.X.tolist() == [[1.0], [2.0]]


def test_a_file_of_only_labels_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "labels.csv"
    f.write_text("label\na\nb\n")
    with pytest.raises(DataError, match="line 1: no feature column"):
        hierlab.load_dataset(f)
    g = tmp_path / "labels_ids.csv"
    g.write_text("id,label\nr1,a\nr2,b\n")
    with pytest.raises(DataError, match="no feature column"):
        hierlab.load_dataset(g)


def test_a_huge_header_cell_is_refused_with_its_line(tmp_path: Path) -> None:
    f = tmp_path / "wide.csv"
    f.write_text("x" * 200_000 + ",label\n1,a\n2,b\n")
    with pytest.raises(DataError, match=r"line 1: malformed CSV .*131,072 characters"):
        hierlab.load_dataset(f)


def test_path_labels_build_their_tree_without_rechecking_it(tmp_path: Path) -> None:
    f = tmp_path / "paths.csv"
    rows = [f"{i % 3},g{i % 2}/s{i % 4}/c{i}" for i in range(40)]
    f.write_text("x,label\n" + "\n".join(rows) + "\n")
    d = hierlab.load_dataset(f)
    assert list(d.y[:3]) == ["c0", "c1", "c2"]
    assert d.taxonomy.n_nodes == 1 + 2 + 4 + 40  # root, g*, s* (each under one g), c*
    amb = tmp_path / "amb.csv"  # the same last step under two parents: named by full path
    amb.write_text("x,label\n1,x/c\n2,y/c\n")
    d = hierlab.load_dataset(amb)
    assert list(d.y) == ["x/c", "y/c"]


@pytest.mark.parametrize(
    ("kw", "word"),
    [
        ({"label_sep": 5}, "label_sep"),
        ({"id_column": [1]}, "id_column"),
        ({"label_column": 3}, "label_column"),
        ({"impute_means": "x"}, "impute_means"),
        ({"name": 7}, "name"),
        ({"format": 3}, "format"),
        ({"encoding": 3}, "encoding"),
    ],
)
def test_reader_keywords_are_type_checked(kw: dict[str, object], word: str) -> None:
    data = Path(__file__).resolve().parents[2] / "datasets" / "example_names.csv"
    with pytest.raises(hierlab.HierlabError, match=word):
        hierlab.load_dataset(data, **kw)  # type: ignore[arg-type]


def test_taxonomy_format_is_type_checked() -> None:
    tax = Path(__file__).resolve().parents[2] / "datasets" / "taxonomy_edges.txt"
    with pytest.raises(hierlab.HierlabError, match="format must be a str"):
        hierlab.read_taxonomy(tax, format=3)  # type: ignore[arg-type]
