"""Seed 002: Hieron, online (Algorithm 1) and batch."""

from hierlab.methods.hieron.estimators import HieronClassifier, HieronGreedyClassifier

__all__ = ["HieronClassifier", "HieronGreedyClassifier"]
