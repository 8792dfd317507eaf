"""Gradients and hessians of the built-in losses, written into ``out`` arrays.

``raw`` is the margin F(x) of shape (n_rows, n_outputs); gradients and
hessians go into ``gh_out`` of shape (n_outputs, n_rows, 2): each output's
(g, h) pairs are contiguous and a row's pair shares one cache line, which is
what the histogram kernel reads. Sample weights multiply both.
"""
import math

from numba import njit, prange

# Hessians are floored here so that a leaf of confidently classified rows
# never divides by (almost) zero when lambda = 0.
HESS_FLOOR = 1e-16


@njit(cache=True, nogil=True, inline="always")
def sigmoid(x):
    """Numerically stable logistic function 1 / (1 + exp(-x))."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(parallel=True, cache=True, nogil=True)
def squared_error_grad(y, raw, w, gh_out):
    """L = w (F - y)^2 / 2:  g = w (F - y),  h = w.

    y, w : ndarray of shape (n_rows,), float64   # IN
    raw : ndarray of shape (n_rows, 1), float64   # IN
    gh_out : ndarray of shape (1, n_rows, 2), float32   # OUT
    """
    for i in prange(y.shape[0]):
        gh_out[0, i, 0] = w[i] * (raw[i, 0] - y[i])
        gh_out[0, i, 1] = w[i]


@njit(parallel=True, cache=True, nogil=True)
def logistic_grad(y, raw, w, gh_out):
    """Binary log loss with p = sigmoid(F):  g = w (p - y),  h = w p (1 - p)."""
    for i in prange(y.shape[0]):
        p = sigmoid(raw[i, 0])
        gh_out[0, i, 0] = w[i] * (p - y[i])
        gh_out[0, i, 1] = max(w[i] * p * (1.0 - p), HESS_FLOOR * w[i])


@njit(parallel=True, cache=True, nogil=True)
def softmax_grad(y, raw, w, gh_out):
    """Multinomial log loss, p = softmax(F):  g_k = w (p_k - [y = k]),  h_k = w p_k (1 - p_k).

    The hessian is the diagonal of the true Hessian (Newton step per class
    channel, one tree per class and round). ``y`` holds class ids 0..K-1.
    """
    n = y.shape[0]
    K = raw.shape[1]
    for i in prange(n):
        m = raw[i, 0]
        for k in range(1, K):
            m = max(m, raw[i, k])
        s = 0.0
        for k in range(K):
            s += math.exp(raw[i, k] - m)
        label = int(y[i])
        for k in range(K):
            p = math.exp(raw[i, k] - m) / s
            target = 1.0 if k == label else 0.0
            gh_out[k, i, 0] = w[i] * (p - target)
            gh_out[k, i, 1] = max(w[i] * p * (1.0 - p), HESS_FLOOR * w[i])
