"""Seed 004: MF-Tree, a taxonomy induced from the data, and the CMTL baseline."""

from hierlab.methods.mftree.estimators import CMTLClassifier, MFTreeClassifier
from hierlab.methods.mftree.induce import induce_taxonomy

__all__ = ["CMTLClassifier", "MFTreeClassifier", "induce_taxonomy"]
