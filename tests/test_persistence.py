"""Safe model files: round trips for every registered method, refusals of foreign files."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import hierlab
from hierlab import ModelFileError, Taxonomy
from hierlab.persistence import load, save


def _problem(seed: int = 0) -> tuple[Taxonomy, np.ndarray, np.ndarray]:
    tax = Taxonomy(
        [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("b", "b2"), ("b", "b3")]
    )
    rng = np.random.default_rng(seed)
    leaves = tax.names[tax.leaves]
    centers = rng.normal(scale=2.0, size=(len(leaves), 5))
    lab = rng.integers(0, len(leaves), size=120)
    X = np.abs(centers[lab] + rng.normal(size=(120, 5)))  # non-negative: every method accepts it
    return tax, X, leaves[lab].astype(object)


@pytest.mark.parametrize("name", hierlab.list_methods())
def test_round_trip_gives_identical_predictions(name: str, tmp_path: Path) -> None:
    tax, X, y = _problem()
    est = hierlab.make_estimator(name, taxonomy=tax)
    est.fit(X, y)
    path = tmp_path / "m.hlm"
    save(est, path)
    back = load(path)
    assert type(back) is type(est)
    assert back.get_params().keys() == est.get_params().keys()
    for Xs in (X, sp.csr_matrix(X)):
        a, b = est.predict(Xs), back.predict(Xs)
        assert [str(v) for v in a] == [str(v) for v in b]
    assert back.taxonomy_ == est.taxonomy_


def test_pickle_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ModelFileError, match="pickle"):
        load(path)


def test_foreign_and_tampered_files(tmp_path: Path) -> None:
    tax, X, y = _problem()
    est = hierlab.make_estimator("topdown", taxonomy=tax).fit(X, y)
    good = tmp_path / "good.hlm"
    save(est, good)

    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ModelFileError, match="not a hierlab model"):
        load(text)

    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as zf:
        zf.writestr("data.csv", "a,b\n")
    with pytest.raises(ModelFileError, match="no manifest"):
        load(other_zip)

    def rewrite(manifest_edit) -> Path:  # type: ignore[no-untyped-def]
        out = tmp_path / "edited.hlm"
        with zipfile.ZipFile(good) as zin, zipfile.ZipFile(out, "w") as zout:
            man = json.loads(zin.read("manifest.json"))
            manifest_edit(man)
            zout.writestr("manifest.json", json.dumps(man))
            zout.writestr("arrays.npz", zin.read("arrays.npz"))
        return out

    with pytest.raises(ModelFileError, match="version"):
        load(rewrite(lambda m: m.update(version=99)))
    with pytest.raises(ModelFileError, match="outside hierlab/sklearn"):
        load(rewrite(lambda m: m["root"].update({"__estimator__": "os.system"})))
    with pytest.raises(ModelFileError, match="not an estimator class"):
        load(
            rewrite(lambda m: m["root"].update({"__estimator__": "hierlab.core.taxonomy.Taxonomy"}))
        )

    truncated = tmp_path / "trunc.hlm"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ModelFileError):
        load(truncated)


def test_unsafe_attribute_cannot_be_saved(tmp_path: Path) -> None:
    tax, X, y = _problem()
    est = hierlab.make_estimator("topdown", taxonomy=tax).fit(X, y)
    est.hook_ = print  # a function has no safe encoding
    with pytest.raises(ModelFileError, match="hook_"):
        save(est, tmp_path / "x.hlm")
