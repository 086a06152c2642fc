"""The methods, one package per seed paper, and the top-down baseline.

Importing this package registers every method in :mod:`hierlab.core.registry`: each family
module calls :func:`~hierlab.core.registry.register` once per method, and the list below is the
one place that names the families.
"""

from hierlab.methods import hieron, hr, labeltree, mftree, nhsvm, orthogonal, topdown
from hierlab.methods.base import HierarchicalClassifier

__all__ = [
    "HierarchicalClassifier",
    "hieron",
    "hr",
    "labeltree",
    "mftree",
    "nhsvm",
    "orthogonal",
    "topdown",
]
