"""Layer 4: the Booster, the training loop, callbacks and metrics."""
from .booster import Booster
from .callback import (CallbackContainer, EarlyStopping, EvaluationMonitor, RecordEvaluation,
                       TrainingCallback)
from .cv import cv
from .engine import train
from .params import PARAMS, resolve_params

__all__ = ["Booster", "CallbackContainer", "EarlyStopping", "EvaluationMonitor", "PARAMS",
           "RecordEvaluation", "TrainingCallback", "cv", "resolve_params", "train"]
