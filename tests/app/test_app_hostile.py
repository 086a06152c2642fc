"""AppTest (issue 21): the hostile uploads of the issue give readable messages and lose nothing.

Each upload that the red-team pass found crashing, loading silently wrong or accepted with an
absurd width is sent through the Data page: the page must show a message that names the file
and the line, column or node, with no exception type name and no traceback, and the session
keeps its earlier data sets. Valid files the readers used to refuse (labels ``NA``) or misread
(a trailing comma) load; so does a 20,000-column CSV.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app" / "streamlit_app.py")
TIMEOUT = 120

#: an exception type name in a message shown to a person
TYPE_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Warning)\b|Traceback")

_TREE_TAX = ("tree.txt", b"r a\nr b\na a1\na a2\nb b1\n")
_ARFF = (
    b"@relation r\n@attribute f numeric\n@attribute c hierarchical 01,01/01,02\n@data\n"
    b"1,01/01\n2,02/01\n3,01\n"
)
REFUSED: dict[str, tuple[tuple[str, bytes], tuple[str, bytes] | None, str]] = {
    "columns equal after trimming": (
        ("dup.csv", b"label,f, f\na,1,2\nb,3,4\nc,5,6\n"), None, "line 1, column 'f'",
    ),
    "svmlight index 10^9": (
        ("wide.svm", b"a 1:1\nb 1000000000:1\nc 2:1\n"), None, "line 2",
    ),
    "mixed encodings": (
        ("enc.csv", "label,f\ncafé,1\n".encode() + b"th\xe9,2\nx,3\n"), None, "line 3",
    ),
    "path contradicting the taxonomy": (
        ("paths.csv", b"label,f\na/a1,1\nb/a1,2\nb/b1,3\n"), _TREE_TAX, "line 3",
    ),
    "undeclared ARFF label": (("h.arff", _ARFF), None, "line 6"),
    "nested JSON under two parents": (
        ("x.csv", b"label,f\nx,1\na,2\nb,3\n"),
        ("t.json", b'{"name":"r","children":[{"name":"a","children":[{"name":"x"}]},'
                   b'{"name":"b","children":[{"name":"x"}]}]}'),
        "'x'",
    ),
    "binary": (("noise.csv", bytes(range(256)) * 4), None, "noise.csv"),
}  # fmt: skip


def _upload(at: AppTest, features: tuple[str, bytes], taxonomy: tuple[str, bytes] | None) -> None:
    at.switch_page("app_pages/data.py")
    at.run()
    at.file_uploader(key="upload_features").set_value((*features, "text/plain"))
    at.file_uploader(key="upload_taxonomy").set_value(
        (*taxonomy, "text/plain") if taxonomy is not None else None
    )
    at.run()
    at.button(key="use_upload").click()
    at.run()


@pytest.fixture(scope="module")
def app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception and not at.error
    return at


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_hostile_uploads_give_readable_messages_and_keep_the_session(
    app: AppTest, case: str
) -> None:
    features, taxonomy, where = REFUSED[case]
    state = app.session_state["hierlab_state"]
    before = dict(state.datasets)
    _upload(app, features, taxonomy)
    assert not app.exception, [e.value for e in app.exception]
    assert app.error, f"{case}: accepted"
    msg = app.error[0].value
    assert features[0] in msg or (taxonomy is not None and taxonomy[0] in msg), msg
    assert where in msg, msg
    assert not TYPE_NAME.search(msg), msg
    assert dict(app.session_state["hierlab_state"].datasets) == before


def test_valid_uploads_the_readers_used_to_refuse_or_misread_load(app: AppTest) -> None:
    _upload(app, ("na.csv", b"label,f1,f2,\nNA,1,2,\nnull,3,4,\n?,5,6,\nNA,7,8,\n"), None)
    assert not app.exception and not app.error, [e.value for e in app.error]
    entry = app.session_state["hierlab_state"].dataset
    assert entry.name == "upload: na.csv"
    assert entry.train.n_features == 2  # the trailing comma added no feature
    assert set(entry.taxonomy.names) == {"NA", "null", "?", "root"}


def test_a_20000_column_csv_loads(app: AppTest) -> None:
    from hierlab.benchmarks.wide_csv import wide_csv

    data, _ = wide_csv(12, 20_000)
    _upload(app, ("genes.csv", data), None)
    assert not app.exception and not app.error, [e.value for e in app.error]
    entry = app.session_state["hierlab_state"].dataset
    assert entry.train.n_features == 20_000
    assert any("20000 features" in s.value for s in app.success)


def test_errors_from_elsewhere_show_no_type_name() -> None:
    """show_error: a non-hierlab error still reads as a sentence, its type only in the log."""
    at = AppTest.from_string(
        "from app.ui.errors import show_error\n"
        "show_error(ValueError('bad value 3'), 'Reading x.csv')\n"
        "show_error(MemoryError(), 'Training')\n",
        default_timeout=TIMEOUT,
    )
    at.run()
    msgs = [e.value for e in at.error]
    assert msgs[0] == "Reading x.csv: bad value 3"
    assert msgs[1].startswith("Training: hierlab could not finish")
    assert not any(TYPE_NAME.search(m) for m in msgs), msgs
