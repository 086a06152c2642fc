"""Model files in the app: a fitted run downloaded as a safe model file, a model file uploaded
to predict on new rows.

The file is ``hierlab.persistence``'s (a zip of a JSON manifest and numpy arrays, checked
before anything is built, never a pickle): :func:`model_file_bytes` writes one,
:func:`read_model_file` reads one and returns nothing but a message when the file is bad. New
rows are read like the data set the model was trained on (:func:`read_rows_to_predict`: its
vectoriser, imputation means and width), with or without a label column.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hierlab import DataError, HierDataset, HierlabError, persistence
from hierlab.core.dataset import is_label_set
from hierlab.core.exceptions import ModelFileError
from hierlab.evaluation.metrics import evaluate
from hierlab.io import read_dataset_bytes

__all__ = [
    "MODEL_SUFFIX",
    "LoadedModel",
    "model_file_bytes",
    "model_file_name",
    "predict_rows",
    "read_model_file",
    "read_rows_to_predict",
]

#: the conventional suffix of a model file
MODEL_SUFFIX = ".hlm"
#: a larger upload is refused before it is written anywhere
MAX_MODEL_BYTES = 2 * 2**30


def model_file_name(label: str) -> str:
    """``"hierlab_3_FLATMULT_C_10.hlm"`` from a run label: letters, digits, ``_`` and ``-``."""
    safe = "".join(c if c.isalnum() or c in "-" else "_" for c in label.strip("#"))
    return "hierlab_" + "_".join(p for p in safe.split("_") if p)[:80] + MODEL_SUFFIX


def model_file_bytes(estimator: Any) -> bytes:
    """The content of :func:`hierlab.persistence.save`'s model file for ``estimator``.

    Raises
    ------
    ModelFileError
        When the estimator cannot be saved (not a registered hierlab class, an attribute with
        no safe encoding): the message names it.
    """
    with tempfile.TemporaryDirectory(prefix="hierlab-model-") as d:
        path = os.path.join(d, "model" + MODEL_SUFFIX)
        persistence.save(estimator, path)
        with open(path, "rb") as fh:
            return fh.read()


@dataclass
class LoadedModel:
    """A model read from an uploaded file.

    Attributes
    ----------
    name : str
        The file name.
    estimator : HierarchicalClassifier
    n_features : int or None
        The width of the rows it predicts (``n_features_in_``).
    """

    name: str
    estimator: Any
    n_features: int | None

    def describe(self) -> str:
        """One line: class, taxonomy size, width and what ran."""
        est = self.estimator
        tax = getattr(est, "taxonomy_", None)
        parts = [type(est).__name__]
        if tax is not None:
            parts.append(f"{tax.n_nodes} taxonomy nodes")
        if self.n_features is not None:
            parts.append(f"{self.n_features} features")
        what = getattr(est, "algorithm_", "")
        return ", ".join(parts) + (f"; trained by {what}" if what else "")


def read_model_file(data: bytes, name: str) -> LoadedModel:
    """Read an uploaded model file with :func:`hierlab.persistence.load` (every check of a
    model file applies; nothing is unpickled).

    Raises
    ------
    ModelFileError
        Naming the file and what is wrong with it: empty, too large, not a model file, or an
        unfitted model.
    """
    if not data:
        raise ModelFileError(f"{name}: the file is empty")
    if len(data) > MAX_MODEL_BYTES:
        raise ModelFileError(f"{name}: {len(data) / 2**30:.1f} GiB is more than a model file holds")
    with tempfile.TemporaryDirectory(prefix="hierlab-upload-") as d:
        path = os.path.join(d, "upload" + MODEL_SUFFIX)
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            est = persistence.load(path)
        except HierlabError as exc:
            raise ModelFileError(f"{name}: {_without_path(str(exc), path)}") from None
        except Exception as exc:  # anything the checks did not name: still a message
            raise ModelFileError(f"{name}: not a readable hierlab model file ({exc})") from None
    if not hasattr(est, "taxonomy_") or not hasattr(est, "classes_"):
        raise ModelFileError(f"{name}: the model in this file was never fitted: nothing to predict")
    n = getattr(est, "n_features_in_", None)
    return LoadedModel(name=name, estimator=est, n_features=None if n is None else int(n))


def _without_path(message: str, path: str) -> str:
    """The loader's message without the temporary file's path."""
    return message.replace(f"{path}: ", "").replace(path, "the file")


def read_rows_to_predict(data: bytes, filename: str, reference: HierDataset) -> HierDataset:
    """New rows encoded like ``reference`` (the training rows of the model's data set).

    A file without a label column (CSV or text CSV) is read too: its rows get the taxonomy's
    root as a placeholder label and ``meta["unlabelled"] = True`` (nothing is scored).

    Raises
    ------
    DataError
        The reader's message (file, line, column), or the width differs from ``reference``.
    """
    try:
        return read_dataset_bytes(data, filename, reference=reference)
    except DataError as exc:
        if "no label column" not in str(exc):
            raise
    df = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, sep=None, engine="python")
    root = str(reference.taxonomy.names[reference.taxonomy.root])
    df["label"] = root
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    ds = read_dataset_bytes(buf.getvalue().encode("utf-8"), filename, reference=reference)
    ds.meta["unlabelled"] = True
    return ds


def predict_rows(model: LoadedModel, rows: HierDataset) -> tuple[pd.DataFrame, dict[str, float]]:
    """Predictions of ``model`` on ``rows``, and the metrics when the rows carry labels.

    Returns
    -------
    table : DataFrame
        ``row``, ``text`` (the example's own text, when the data has a text column),
        ``predicted``, and ``true`` for labelled rows.
    metrics : dict
        ``hierlab.evaluation.metrics.evaluate`` against the labels (empty when unlabelled).

    Raises
    ------
    DataError
        When the rows' width is not the model's.
    """
    if model.n_features is not None and rows.n_features != model.n_features:
        raise DataError(
            f"the model predicts rows of {model.n_features} features, these have "
            f"{rows.n_features}: load the data set the model was trained on (Data page) so that "
            "new rows are encoded like its training rows"
        )
    pred = np.asarray(model.estimator.predict(rows.X), dtype=object)
    table = pd.DataFrame({"row": np.arange(rows.n_samples)})
    if rows.texts is not None:
        table["text"] = rows.texts
    table["predicted"] = [_cell(p) for p in pred]
    if rows.meta.get("unlabelled"):
        return table, {}
    table["true"] = [_cell(v) for v in rows.y]
    tax = model.estimator.taxonomy_
    return table, evaluate(np.asarray(rows.y, dtype=object), pred, tax)


def _cell(label: Any) -> str:
    """A label as a table cell: a node name, or a label set's names joined by "; "."""
    return "; ".join(map(str, label)) if is_label_set(label) else str(label)
