"""Layer 3: growing one regression tree from gradient and hessian arrays.

``tree`` never imports ``objectives``: the grower sees g and h arrays only.
"""
from .exact import exact_grower
from .grower import GrowerParams, TreeGrower
from .tree import Tree

__all__ = ["GrowerParams", "Tree", "TreeGrower", "exact_grower"]
