"""Layer 3: growing one regression tree from gradient and hessian arrays.

``tree`` never imports ``objectives``: the grower sees g and h arrays only.
"""
from .exact import exact_grower
from .grower import GrowerParams, TreeGrower
from .tree import Tree

#: The name ``exact_grower`` had when the exact grower was a subclass (it takes the same
#: arguments and returns a composed TreeGrower).
ExactTreeGrower = exact_grower

__all__ = ["ExactTreeGrower", "GrowerParams", "Tree", "TreeGrower", "exact_grower"]
