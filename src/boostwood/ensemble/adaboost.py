"""The AdaBoost loops: SAMME (multiclass) and AdaBoost.R2 (regression).

They need no scikit-learn: a round is "fit a weak learner to the weighted rows,
predict the training rows", given as a function, so the scikit-learn estimators
(:mod:`boostwood.sklearn.adaboost`) and plain engine trees drive the same loop.

SAMME (Zhu, Zou, Rosset & Hastie 2009): with weighted error ``err`` of a round,
``alpha = lr (log((1 - err) / err) + log(K - 1))`` and the weights of the rows it
got wrong are multiplied by ``exp(alpha)``. AdaBoost.R2 (Drucker 1997): losses
``e_i`` scaled to [0, 1] by the largest error (linear, square or exponential),
``avg = sum w e``, ``beta = avg / (1 - avg)``, estimator weight ``lr log(1/beta)``,
row weights multiplied by ``beta ** ((1 - e_i) lr)``; trees are fitted on
weighted bootstraps.
"""
import warnings

import numpy as np


#: Smallest row weight a round fits on (scikit-learn's: float64's machine epsilon, its
#: issue 20320): a row the rounds keep getting right is not weighed down to nothing.
MIN_WEIGHT = float(np.finfo(np.float64).eps)


def _floored(w, zero):
    """The round's weights: at least :data:`MIN_WEIGHT`, except rows given weight 0."""
    w = np.maximum(w, MIN_WEIGHT)
    w[zero] = 0.0
    return w


def _renormalised(w, i):
    """``w`` divided by its sum, or None where the loop stops as scikit-learn's does: a
    sum that overflowed (with a warning: the learning rate is too large for the data)
    or is not positive."""
    total = float(np.sum(w))
    if not np.isfinite(total):
        warnings.warn(f"Sample weights have reached infinite values at iteration {i}, "
                      "causing overflow. Iterations stopped. Try lowering the learning "
                      "rate.", UserWarning, stacklevel=4)
        return None
    return w / total if total > 0 else None


def samme(fit, y, w, n_classes, n_estimators, learning_rate, rng):
    """Run SAMME, with scikit-learn's weight rules: each round's weights floored at
    :data:`MIN_WEIGHT` (rows given weight 0 stay 0), the update ``exp(log w + alpha)``
    on the rows the tree got wrong, and a stop where the weights' sum overflows (a
    warning) or the tree is perfect or no better than chance.

    Parameters
    ----------
    fit : callable ``fit(sample_weight, seed) -> (model, predicted labels of the rows)``
    y : ndarray of shape (n_rows,), class labels
    w : ndarray of shape (n_rows,), float64, row weights summing to 1
    n_classes, n_estimators : int
    learning_rate : float
    rng : numpy Generator, draws each round's seed

    Returns
    -------
    models : list, weights : ndarray, errors : ndarray
    """
    K = n_classes
    zero = w == 0
    models, weights, errors = [], [], []
    for i in range(n_estimators):
        w = _floored(w, zero)
        model, pred = fit(w, int(rng.integers(2 ** 31 - 1)))
        wrong = pred != y
        err = float(np.sum(w[wrong]) / np.sum(w))
        if err <= 0.0:  # a perfect tree: it decides alone
            models.append(model)
            errors.append(err)
            weights.append(1.0)
            break
        if err >= 1.0 - 1.0 / K:  # no better than chance: stop (keep nothing of it)
            if not models:
                raise ValueError("the first tree is no better than chance; AdaBoost "
                                 "cannot continue")
            break
        models.append(model)
        errors.append(err)
        alpha = learning_rate * (np.log((1.0 - err) / err) + np.log(K - 1.0))
        weights.append(alpha)
        if i == n_estimators - 1:
            break
        with np.errstate(over="ignore", divide="ignore"):  # an overflow stops the loop
            w = np.exp(np.log(w) + alpha * (wrong & (w > 0)))
        w = _renormalised(w, i)
        if w is None:
            break
    return models, np.array(weights), np.array(errors)


R2_LOSSES = ("linear", "square", "exponential")


def adaboost_r2(fit, y, w, n_estimators, learning_rate, loss, rng):
    """Run AdaBoost.R2 (arguments as in :func:`samme`; ``fit`` returns predicted values,
    and receives bootstrap counts drawn from the row weights as its sample weights),
    with scikit-learn's rules: weights floored as in :func:`samme`, losses scaled by the
    largest loss of a row of positive weight, a stop where the weighted loss reaches 0.5
    (the first tree is kept alone) or 0."""
    if loss not in R2_LOSSES:
        raise ValueError(f"loss must be one of {R2_LOSSES}, got {loss!r}")
    n = len(y)
    zero = w == 0
    models, weights, errors = [], [], []
    for i in range(n_estimators):
        w = _floored(w, zero)
        counts = rng.multinomial(n, w / w.sum()).astype(np.float64)  # weighted bootstrap
        model, pred = fit(counts, int(rng.integers(2 ** 31 - 1)))
        live = w > 0
        e = np.abs(pred - y)[live]
        top = e.max()
        if top > 0:
            e = e / top
        if loss == "square":
            e = e ** 2
        elif loss == "exponential":
            e = 1.0 - np.exp(-e)
        avg = float(np.sum(w[live] * e))
        if avg >= 0.5:  # no better than the R2 bound: stop
            if not models:  # the first tree alone is the model (scikit-learn keeps it too)
                models.append(model)
                errors.append(avg)
                weights.append(1.0)
            break
        models.append(model)
        errors.append(avg)
        if avg <= 0.0:
            weights.append(1.0)
            break
        beta = avg / (1.0 - avg)
        weights.append(learning_rate * np.log(1.0 / beta))
        if i == n_estimators - 1:
            break
        w = w.copy()
        with np.errstate(under="ignore"):  # tiny factors are floored next round
            w[live] *= beta ** ((1.0 - e) * learning_rate)
        w = _renormalised(w, i)
        if w is None:
            break
    return models, np.array(weights), np.array(errors)


def weighted_median(preds, weights):
    """Per row, the weighted median of its predictions (the lower one at exactly half).

    preds : ndarray of shape (n_rows, n_models); weights : ndarray of shape (n_models,)
    """
    order = np.argsort(preds, axis=1, kind="stable")
    cum = np.cumsum(weights[order], axis=1)
    k = np.argmax(cum >= 0.5 * cum[:, -1:], axis=1)
    rows = np.arange(preds.shape[0])
    return preds[rows, order[rows, k]]
