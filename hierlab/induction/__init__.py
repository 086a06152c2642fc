"""Taxonomy induction when no hierarchy is given (MF-Tree, seed 004)."""
