"""Experiments: the method registry, comparisons on identical splits, reproductions."""

from hierlab.experiments.registry import (
    MethodSpec,
    Param,
    get_method,
    list_methods,
    make_estimator,
    register,
)

__all__ = ["MethodSpec", "Param", "get_method", "list_methods", "make_estimator", "register"]
