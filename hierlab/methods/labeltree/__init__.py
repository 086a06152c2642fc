"""Seed 004's label-tree baselines: DAGSVM, RDM, RNMF and DRHL (Table 2)."""

from hierlab.methods.labeltree.dagsvm import DAGSVMClassifier

__all__ = ["DAGSVMClassifier"]
