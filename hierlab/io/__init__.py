"""Readers and writers: taxonomy files and labelled data sets, one module per format.

Taxonomy files (:mod:`hierlab.io.taxonomy_files`: :func:`read_taxonomy`,
:func:`write_taxonomy`, :func:`parse_taxonomy_text`):

- ``edges``: one ``parent child`` pair per line, separated by white space; ``#`` starts a comment;
  a line holding a single name declares a node (a taxonomy of one node).
- ``csv``: two columns ``parent,child`` with an optional header row; a row with an empty parent
  declares a node.
- ``paths``: one ``a/b/c`` path per line (prefixes are implied); ``#`` comments.
- ``json``: see :meth:`hierlab.core.taxonomy.Taxonomy.from_json`.

Data sets (:mod:`hierlab.io.loaders`: :func:`load_dataset`, :func:`read_dataset_bytes`), each
returned as a :class:`~hierlab.core.dataset.HierDataset`:

- ``csv`` (:mod:`hierlab.io.csv`): a label column (node names or ``a/b/c`` paths, ``;`` between
  several labels of a multi-label row), numeric feature columns, an optional id column.
- ``text`` (:mod:`hierlab.io.text`): a CSV with a raw text column, turned into sublinear TF-IDF
  by scikit-learn's ``TfidfVectorizer`` (fitted on the file, or a given fitted vectorizer for a
  test file).
- ``svmlight`` (:mod:`hierlab.io.svmlight`): ``label idx:value ...`` lines; the label is a node
  name (or ``a/b/c`` path), a comma list for multi-label rows.
- ``arff`` (:mod:`hierlab.io.arff`): the Clus HMC ARFF format (Vens et al. 2008): numeric
  attributes, ``?`` for a missing value, and a ``hierarchical`` class attribute declaring the
  hierarchy (tree: full paths such as ``01/01/03``; DAG: ``parent/child`` pairs), one
  ``@``-separated label set per row.

Missing values (``?``, an empty CSV cell) are imputed by the mean of their column over the file
being read; pass ``impute_means`` (``train.meta["impute_means"]``), or ``reference=train``, when
reading a test file so that it uses the training means. Text is decoded
(:mod:`hierlab.io.decoding`) as UTF-8 (a BOM is honoured), UTF-16 with a BOM, or, for a file
that is not UTF-8, Windows-1252 for the whole file (a file mixing encodings is refused with the
line; ``encoding=`` declares another), then NFC-normalised. Only regular files are read, and
declared sizes are bounded by :mod:`hierlab.core.limits`. Label strings become node names in
:mod:`hierlab.io.labels` (a path label contradicting the taxonomy is refused with its row).

This package reads and writes files only: it never imports :mod:`hierlab.datasets` (whose
real-data loaders use it).
"""

# ``ArffHeader``, ``arff_taxonomy``, ``taxonomy_to_text`` and ``PathArg`` are importable from
# here without being in ``__all__`` (the ``X as X`` form re-exports them).
from hierlab.io.arff import ArffHeader as ArffHeader
from hierlab.io.arff import arff_taxonomy as arff_taxonomy
from hierlab.io.arff import read_arff
from hierlab.io.chunks import ChunkedFile, iter_chunks
from hierlab.io.csv import read_csv_dataset, write_csv_dataset
from hierlab.io.decoding import PathArg as PathArg
from hierlab.io.decoding import decode_bytes
from hierlab.io.loaders import (
    DATASET_FORMATS,
    guess_dataset_format,
    load_dataset,
    read_dataset_bytes,
)
from hierlab.io.svmlight import read_svmlight, write_svmlight
from hierlab.io.taxonomy_files import (
    TAXONOMY_FORMATS,
    guess_taxonomy_format,
    parse_taxonomy_text,
    read_taxonomy,
    write_taxonomy,
)
from hierlab.io.taxonomy_files import taxonomy_to_text as taxonomy_to_text
from hierlab.io.text import read_text_csv

__all__ = [
    "DATASET_FORMATS",
    "TAXONOMY_FORMATS",
    "ChunkedFile",
    "decode_bytes",
    "guess_dataset_format",
    "guess_taxonomy_format",
    "iter_chunks",
    "load_dataset",
    "parse_taxonomy_text",
    "read_arff",
    "read_csv_dataset",
    "read_dataset_bytes",
    "read_svmlight",
    "read_taxonomy",
    "read_text_csv",
    "write_csv_dataset",
    "write_svmlight",
    "write_taxonomy",
]
