"""Seed 001: hierarchical regularisation (HR-SVM, HR-LR) and the one-vs-rest baselines."""

from hierlab.methods.hr.estimators import (
    HRLRClassifier,
    HRSVMClassifier,
    OneVsRestLRClassifier,
    OneVsRestSVMClassifier,
)

__all__ = ["HRLRClassifier", "HRSVMClassifier", "OneVsRestLRClassifier", "OneVsRestSVMClassifier"]
