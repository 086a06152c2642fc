"""Seed 004's label-tree baselines: DAGSVM, RDM, RNMF and DRHL (Table 2)."""

from hierlab.methods.labeltree.dagsvm import DAGSVMClassifier
from hierlab.methods.labeltree.drhl import DRHLClassifier
from hierlab.methods.labeltree.rdm import RDMClassifier
from hierlab.methods.labeltree.rnmf import RNMFClassifier

__all__ = ["DAGSVMClassifier", "DRHLClassifier", "RDMClassifier", "RNMFClassifier"]
