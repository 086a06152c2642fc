"""The methods, one package per seed paper, and the top-down baseline.

Importing this package registers every method in :mod:`hierlab.core.registry`: each family
module calls :func:`~hierlab.core.registry.register` once per method, and the import lines
below, one per family, are the one place that names the families (a new family is its package
and its line here).
"""

from hierlab.methods import hieron as hieron
from hierlab.methods import hr as hr
from hierlab.methods import labeltree as labeltree
from hierlab.methods import mftree as mftree
from hierlab.methods import nhsvm as nhsvm
from hierlab.methods import orthogonal as orthogonal
from hierlab.methods import topdown as topdown
from hierlab.methods.base import HierarchicalClassifier

__all__ = ["HierarchicalClassifier"]
