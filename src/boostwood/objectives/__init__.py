"""Layer 3: losses, their derivatives, initial scores and links."""
from .builtin import OBJECTIVES, Objective, get_objective

__all__ = ["OBJECTIVES", "Objective", "get_objective"]
