"""scikit-learn estimators. Every module here registers its methods when imported.

The registry imports every module of this package on first use, so a new method is a new module
that calls :func:`hierlab.experiments.registry.register` at its bottom.
"""

from hierlab.estimators.base import HierarchicalClassifier

__all__ = ["HierarchicalClassifier"]
