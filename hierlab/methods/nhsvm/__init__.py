"""Seed 003: hierarchical structured SVMs, normalised (NHSVM), plain (HSVM) and shared (SSVM)."""

from hierlab.methods.nhsvm.estimators import (
    HSVMClassifier,
    NHSVMClassifier,
    SharedSVMClassifier,
)

__all__ = ["HSVMClassifier", "NHSVMClassifier", "SharedSVMClassifier"]
