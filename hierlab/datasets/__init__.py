"""``HierDataset`` and the bundled, synthetic and real data sets."""

from hierlab.datasets.base import HierDataset, encode_labels
from hierlab.datasets.real import load_20newsgroups, load_clus
from hierlab.datasets.text import make_hierarchical_text

__all__ = [
    "HierDataset",
    "encode_labels",
    "load_20newsgroups",
    "load_clus",
    "make_hierarchical_text",
]
