"""boostwood: gradient boosted decision trees in Python, with numba-compiled kernels.

Native API: :class:`Dataset`, :func:`train`, :class:`Booster`, callbacks.
scikit-learn API: :class:`GBDTRegressor`, :class:`GBDTClassifier`, :class:`LeafEncoder`
(needs scikit-learn). Plots: :mod:`boostwood.plotting` (needs matplotlib).
"""
from ._version import __version__
from .boosting import (Booster, EarlyStopping, EvaluationMonitor, RecordEvaluation,
                       TrainingCallback, train)
from .data import Dataset
from .objectives import objective

__all__ = ["Booster", "Dataset", "EarlyStopping", "EvaluationMonitor", "GBDTClassifier",
           "GBDTRegressor", "LeafEncoder", "RecordEvaluation", "TrainingCallback", "__version__", "objective",
           "train"]


def __getattr__(name):
    # the scikit-learn estimators need the optional scikit-learn; import on first use
    if name in ("GBDTRegressor", "GBDTClassifier", "LeafEncoder"):
        from . import sklearn as _sk

        return getattr(_sk, name)
    raise AttributeError(f"module 'boostwood' has no attribute {name!r}")
