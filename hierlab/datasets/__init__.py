"""``HierDataset`` and the bundled, synthetic and real data sets."""

from hierlab.datasets.base import HierDataset, encode_labels

__all__ = ["HierDataset", "encode_labels"]
