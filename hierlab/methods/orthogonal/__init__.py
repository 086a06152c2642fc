"""Seed 000: hierarchical SVM with orthogonal transfer (ORTHOGNL) and its four baselines."""

from hierlab.methods.orthogonal.estimators import (
    FlatMulticlassClassifier,
    HierarchicalMulticlassClassifier,
    OrthogonalTransferClassifier,
    TransferClassifier,
    TreeLossClassifier,
)

__all__ = [
    "FlatMulticlassClassifier",
    "HierarchicalMulticlassClassifier",
    "OrthogonalTransferClassifier",
    "TransferClassifier",
    "TreeLossClassifier",
]
