"""Layer 4: the classic tree learners (CART decision trees, their pruning) on the one
tree engine; the scikit-learn estimators built on them are in :mod:`boostwood.sklearn`."""
from . import cart, pruning

__all__ = ["cart", "pruning"]
