"""boostwood: gradient boosted decision trees in Python, with numba-compiled kernels.

Native API: :class:`Dataset`, :func:`train`, :func:`cv`, :class:`Booster`, callbacks.
scikit-learn API: :class:`GBDTRegressor`, :class:`GBDTClassifier`, :class:`GBDTRanker`,
:class:`LeafEncoder` (needs scikit-learn). Plots: :mod:`boostwood.plotting` (needs matplotlib).
"""
from ._version import __version__
from .boosting import (Booster, EarlyStopping, EvaluationMonitor, RecordEvaluation,
                       TrainingCallback, cv, train)
from .data import Dataset
from .objectives import objective

__all__ = ["AdaBoostClassifier", "AdaBoostRegressor", "Booster", "Dataset",
           "DecisionTreeClassifier", "DecisionTreeRegressor", "EarlyStopping",
           "EvaluationMonitor", "ExtraTreesClassifier", "ExtraTreesRegressor", "GBDTClassifier",
           "GBDTRanker", "GBDTRegressor", "LeafEncoder", "RandomForestClassifier",
           "RandomForestRegressor", "RecordEvaluation", "TrainingCallback", "__version__", "cv", "objective", "train"]


_SKLEARN = ("GBDTRegressor", "GBDTClassifier", "GBDTRanker", "LeafEncoder",
            "DecisionTreeClassifier", "DecisionTreeRegressor", "RandomForestClassifier", "RandomForestRegressor",
            "ExtraTreesClassifier", "ExtraTreesRegressor", "AdaBoostClassifier",
            "AdaBoostRegressor")


def __getattr__(name):
    # the scikit-learn estimators need the optional scikit-learn; import on first use
    if name in _SKLEARN:
        from . import sklearn as _sk

        return getattr(_sk, name)
    raise AttributeError(f"module 'boostwood' has no attribute {name!r}")
