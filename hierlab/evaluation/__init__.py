"""Evaluation: hierarchical metrics (pure functions), comparisons on identical splits, scoring."""
