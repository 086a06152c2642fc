"""Seed 000: hierarchical SVM with orthogonal transfer (ORTHOGNL) and its four baselines."""

from hierlab.methods.orthogonal.estimators import *  # noqa: F403 (the five estimators)
from hierlab.methods.orthogonal.estimators import __all__ as __all__
