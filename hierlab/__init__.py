"""hierlab: hierarchical classification with the methods of five papers, and a lab to explore them.

The public API is re-exported here, every estimator class included; see the README for a tour.
Importing the package registers every method (:mod:`hierlab.methods`).
"""

from typing import Any

from hierlab import plots
from hierlab.core.callbacks import EarlyStopping, FunctionCallback, History, StopFlag, Timeout
from hierlab.core.cluster import connect, disconnect, use_cluster
from hierlab.core.exceptions import (
    ConvergenceError,
    DataError,
    FitStopped,
    HierlabError,
    HierlabWarning,
    IgnoredParameterWarning,
    ModelFileError,
    ParameterError,
    TaxonomyError,
)
from hierlab.core.registry import get_method, list_methods, make_estimator
from hierlab.core.solver import SolverResult, SolverState, solve
from hierlab.core.taxonomy import Taxonomy
from hierlab.core.version import __version__
from hierlab.datasets import (
    HierDataset,
    load_20newsgroups,
    load_builtin,
    load_clus,
    load_ipc,
    make_hierarchical_text,
    make_hieron_synthetic,
    make_nhsvm_synthetic,
)
from hierlab.evaluation import curves, metrics
from hierlab.evaluation.compare import compare
from hierlab.evaluation.explain import explain
from hierlab.evaluation.scoring import hierarchical_scorer
from hierlab.evaluation.tune import TuneResult, tune
from hierlab.io import (
    load_dataset,
    parse_taxonomy_text,
    read_dataset_bytes,
    read_taxonomy,
    write_taxonomy,
)
from hierlab.methods import HierarchicalClassifier
from hierlab.methods.hieron import HieronClassifier, HieronGreedyClassifier
from hierlab.methods.hr import (
    HRLRClassifier,
    HRSVMClassifier,
    OneVsRestLRClassifier,
    OneVsRestSVMClassifier,
)
from hierlab.methods.labeltree import (
    DAGSVMClassifier,
    DRHLClassifier,
    RDMClassifier,
    RNMFClassifier,
)
from hierlab.methods.mftree import CMTLClassifier, MFTreeClassifier, induce_taxonomy
from hierlab.methods.nhsvm import HSVMClassifier, NHSVMClassifier, SharedSVMClassifier
from hierlab.methods.orthogonal import (
    FlatMulticlassClassifier,
    HierarchicalMulticlassClassifier,
    OrthogonalTransferClassifier,
    TransferClassifier,
    TreeLossClassifier,
)
from hierlab.methods.topdown import TopDownClassifier
from hierlab.persistence import check_model, load, save

__all__ = [
    "CMTLClassifier",
    "ConvergenceError",
    "DAGSVMClassifier",
    "DRHLClassifier",
    "DataError",
    "EarlyStopping",
    "FitStopped",
    "FlatMulticlassClassifier",
    "FunctionCallback",
    "HRLRClassifier",
    "HRSVMClassifier",
    "HSVMClassifier",
    "HierDataset",
    "HierarchicalClassifier",
    "HierarchicalMulticlassClassifier",
    "HierlabError",
    "HierlabWarning",
    "HieronClassifier",
    "HieronGreedyClassifier",
    "History",
    "IgnoredParameterWarning",
    "MFTreeClassifier",
    "ModelFileError",
    "NHSVMClassifier",
    "OneVsRestLRClassifier",
    "OneVsRestSVMClassifier",
    "OrthogonalTransferClassifier",
    "ParameterError",
    "RDMClassifier",
    "RNMFClassifier",
    "SharedSVMClassifier",
    "SolverResult",
    "SolverState",
    "StopFlag",
    "Taxonomy",
    "TaxonomyError",
    "Timeout",
    "TopDownClassifier",
    "TransferClassifier",
    "TreeLossClassifier",
    "TuneResult",
    "__version__",
    "check_model",
    "compare",
    "connect",
    "curves",
    "disconnect",
    "explain",
    "get_method",
    "hierarchical_scorer",
    "induce_taxonomy",
    "list_methods",
    "load",
    "load_20newsgroups",
    "load_builtin",
    "load_clus",
    "load_dataset",
    "load_ipc",
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
    "tune",
    "use_cluster",
    "write_taxonomy",
]

#: every registered estimator class is public, also one added later by a family module alone
_REGISTERED = {get_method(m).estimator.__name__: get_method(m).estimator for m in list_methods()}
__all__ += sorted(set(_REGISTERED) - set(__all__))


def __getattr__(name: str) -> Any:
    """``hierlab.<EstimatorClass>`` for a registered class that is not imported above."""
    try:
        return _REGISTERED[name]
    except KeyError:
        raise AttributeError(f"module 'hierlab' has no attribute {name!r}") from None
