"""Layer 4: the classic tree learners on the one tree engine -- CART decision trees and
their pruning, the random forest / extra trees loop, AdaBoost (SAMME, R2) -- all without
scikit-learn; the scikit-learn estimators built on them are in :mod:`boostwood.sklearn`."""
from . import adaboost, cart, forest, pruning

__all__ = ["adaboost", "cart", "forest", "pruning"]
