"""``HierDataset`` and the bundled, synthetic and real data sets."""

from hierlab.core.dataset import HierDataset, concat_datasets, encode_labels
from hierlab.datasets.catalog import available_datasets, load_builtin
from hierlab.datasets.hieron import make_hieron_synthetic
from hierlab.datasets.ipc import load_ipc
from hierlab.datasets.nhsvm import make_nhsvm_synthetic
from hierlab.datasets.real import load_20newsgroups, load_clus
from hierlab.datasets.text import make_hierarchical_text

__all__ = [
    "HierDataset",
    "available_datasets",
    "concat_datasets",
    "encode_labels",
    "load_20newsgroups",
    "load_builtin",
    "load_clus",
    "load_ipc",
    "make_hierarchical_text",
    "make_hieron_synthetic",
    "make_nhsvm_synthetic",
]
