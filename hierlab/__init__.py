"""hierlab: hierarchical classification with the methods of five papers, and a lab to explore them.

The public API is re-exported here; see the README for a tour.
"""

from hierlab.callbacks import EarlyStopping, FunctionCallback, History, Timeout
from hierlab.datasets import HierDataset
from hierlab.estimators.base import HierarchicalClassifier
from hierlab.exceptions import (
    ConvergenceError,
    DataError,
    HierlabError,
    ModelFileError,
    ParameterError,
    TaxonomyError,
)
from hierlab.experiments.registry import get_method, list_methods, make_estimator
from hierlab.solvers.base import SolverResult, SolverState, solve
from hierlab.taxonomy import Taxonomy

__version__ = "0.1.0"

__all__ = [
    "ConvergenceError",
    "DataError",
    "EarlyStopping",
    "FunctionCallback",
    "HierDataset",
    "HierarchicalClassifier",
    "HierlabError",
    "History",
    "ModelFileError",
    "ParameterError",
    "SolverResult",
    "SolverState",
    "Taxonomy",
    "TaxonomyError",
    "Timeout",
    "__version__",
    "get_method",
    "list_methods",
    "make_estimator",
    "solve",
]
