"""Evaluation metrics.

An additive metric returns ``(sum, weight)`` for a block of rows, so that
blocks (or data shards) add up exactly before ``finalize`` turns the totals
into the reported value. AUC is not additive and is computed on all rows.
Predictions passed in are on the output scale (probabilities for
classification), labels as the objective sees them.
"""
import numpy as np

_EPS = 1e-15


class Metric:
    """A named metric.

    Attributes
    ----------
    name : str
    higher_better : bool, direction used by early stopping
    additive : bool, whether ``partial`` sums add up across blocks
    """

    name = None
    higher_better = False
    additive = True

    def partial(self, y, pred, w):
        """(sum, weight) over these rows."""
        raise NotImplementedError

    def finalize(self, total, weight):
        return total / weight if weight > 0 else float("nan")

    def __call__(self, y, pred, w):
        return float(self.finalize(*self.partial(y, pred, w)))


class RMSE(Metric):
    """Root mean squared error sqrt(sum w (y - p)^2 / sum w)."""

    name = "rmse"

    def partial(self, y, pred, w):
        return float(np.sum(w * (y - pred) ** 2)), float(np.sum(w))

    def finalize(self, total, weight):
        return np.sqrt(total / weight) if weight > 0 else float("nan")


class MAE(Metric):
    """Mean absolute error sum w |y - p| / sum w."""

    name = "mae"

    def partial(self, y, pred, w):
        return float(np.sum(w * np.abs(y - pred))), float(np.sum(w))


class LogLoss(Metric):
    """Binary log loss -sum w [y log p + (1 - y) log(1 - p)] / sum w, p clipped to [1e-15, 1 - 1e-15]."""

    name = "logloss"

    def partial(self, y, pred, w):
        p = np.clip(pred, _EPS, 1 - _EPS)
        return float(-np.sum(w * (y * np.log(p) + (1 - y) * np.log(1 - p)))), float(np.sum(w))


class ErrorRate(Metric):
    """Binary error rate: weighted share of rows with (p > 0.5) != y."""

    name = "error"

    def partial(self, y, pred, w):
        return float(np.sum(w * ((pred > 0.5) != (y > 0.5)))), float(np.sum(w))


class MultiLogLoss(Metric):
    """Multiclass log loss -sum w log p_y / sum w."""

    name = "mlogloss"

    def partial(self, y, pred, w):
        p = np.clip(pred[np.arange(y.shape[0]), y.astype(np.int64)], _EPS, 1.0)
        return float(-np.sum(w * np.log(p))), float(np.sum(w))


class MultiError(Metric):
    """Multiclass error rate: weighted share of rows with argmax p != y."""

    name = "merror"

    def partial(self, y, pred, w):
        return float(np.sum(w * (np.argmax(pred, axis=1) != y))), float(np.sum(w))


class AUC(Metric):
    """Area under the ROC curve, weighted; tied predictions count one half."""

    name = "auc"
    higher_better = True
    additive = False

    def partial(self, y, pred, w):
        return roc_auc(y, pred, w), 1.0

    def finalize(self, total, weight):
        return total


def roc_auc(y, score, w=None):
    """Weighted ROC AUC: P(score of a positive > score of a negative), ties 1/2.

    Returns NaN when one class has no weight.
    """
    y = np.asarray(y) > 0.5
    w = np.ones(y.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    order = np.argsort(score, kind="mergesort")
    s, y, w = np.asarray(score)[order], y[order], w[order]
    group_start = np.concatenate([[0], np.nonzero(np.diff(s))[0] + 1])
    pos = np.add.reduceat(w * y, group_start)
    neg = np.add.reduceat(w * ~y, group_start)
    w_pos, w_neg = pos.sum(), neg.sum()
    if w_pos <= 0 or w_neg <= 0:
        return float("nan")
    neg_below = np.cumsum(neg) - neg
    return float(np.sum(pos * (neg_below + 0.5 * neg)) / (w_pos * w_neg))


METRICS = {cls.name: cls for cls in (RMSE, MAE, LogLoss, ErrorRate, MultiLogLoss, MultiError, AUC)}


def get_metric(name):
    if name not in METRICS:
        raise ValueError(f"unknown eval_metric {name!r}; available: {sorted(METRICS)}")
    return METRICS[name]()
