"""hierlab: hierarchical classification with the methods of five papers, and a lab to explore them.

The public API is re-exported here; see the README for a tour.
"""

from hierlab import metrics, plots
from hierlab.callbacks import EarlyStopping, FunctionCallback, History, Timeout
from hierlab.datasets import (
    HierDataset,
    load_20newsgroups,
    load_builtin,
    load_clus,
    make_hierarchical_text,
    make_hieron_synthetic,
    make_nhsvm_synthetic,
)
from hierlab.estimators.base import HierarchicalClassifier
from hierlab.exceptions import (
    ConvergenceError,
    DataError,
    HierlabError,
    ModelFileError,
    ParameterError,
    TaxonomyError,
)
from hierlab.experiments.compare import compare
from hierlab.experiments.registry import get_method, list_methods, make_estimator
from hierlab.experiments.scoring import hierarchical_scorer
from hierlab.induction import induce_taxonomy
from hierlab.io import (
    load_dataset,
    parse_taxonomy_text,
    read_dataset_bytes,
    read_taxonomy,
    write_taxonomy,
)
from hierlab.persistence import load, save
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
    "compare",
    "get_method",
    "hierarchical_scorer",
    "induce_taxonomy",
    "list_methods",
    "load",
    "load_20newsgroups",
    "load_builtin",
    "load_clus",
    "load_dataset",
    "make_estimator",
    "make_hierarchical_text",
    "make_hieron_synthetic",
    "make_nhsvm_synthetic",
    "metrics",
    "parse_taxonomy_text",
    "plots",
    "read_dataset_bytes",
    "read_taxonomy",
    "save",
    "solve",
    "write_taxonomy",
]
