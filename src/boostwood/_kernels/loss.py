"""Gradients and hessians of the built-in losses, written into ``out`` arrays.

``raw`` is the margin F(x) of shape (n_rows, n_outputs); gradients and
hessians go into ``gh_out`` of shape (n_outputs, n_rows, 2): each output's
(g, h) pairs are contiguous and a row's pair shares one cache line, which is
what the histogram kernel reads. Sample weights multiply both.
"""
import math

import numpy as np
from numba import literally, njit, prange, types
from numba.extending import overload

from .._config import lock_cache_writes
from .intrinsics import bits_of_float, float_of_bits

# Hessians are floored here so that a leaf of confidently classified rows
# never divides by (almost) zero when lambda = 0.
HESS_FLOOR = 1e-16


@njit(cache=True, nogil=True, inline="always")
def sigmoid(x):
    """Numerically stable logistic function 1 / (1 + exp(-x)): ``1 / (1 + e)`` for
    x >= 0 and ``e / (1 + e)`` below, with ``e = exp(-|x|)`` in both cases, so the sign
    picks a numerator (a select, not a branch: margins' signs are unpredictable, and
    the branch cost 1.6x the time of the whole gradient loop)."""
    e = math.exp(-abs(x))
    return (1.0 if x >= 0.0 else e) / (1.0 + e)


def as_kernel_weights(w):
    """Row weights as the gradient kernels take them: a C-contiguous float64 vector, of
    shape (1,) when every row weighs one value by construction (a stride-0 view such as
    :class:`~boostwood.data.RowInfo`'s unit weights; the kernels read it as that value),
    read-only. Weighted and unweighted data then share one compiled specialisation of
    each kernel (a view of stride 0, and a read-only array, are numba types of their
    own)."""
    w = np.asarray(w, dtype=np.float64)
    if w.ndim == 1 and w.shape[0] > 1 and w.strides[0] == 0:
        w = w[:1]
    view = np.ascontiguousarray(w).view()
    view.flags.writeable = False  # read-only always (also a numba type of its own)
    return view


@njit(parallel=True, cache=True, nogil=True)
def squared_error_grad(y, raw, w, gh_out):
    """L = w (F - y)^2 / 2:  g = w (F - y),  h = w.

    y : ndarray of shape (n_rows,), float64   # IN
    w : ndarray of shape (n_rows,) or (1,): one weight for every row, float64   # IN
    raw : ndarray of shape (n_rows, 1), float64   # IN
    gh_out : ndarray of shape (1, n_rows, 2), float32   # OUT
    """
    one = w.shape[0] != y.shape[0]  # one weight for every row (as_kernel_weights)
    for i in prange(y.shape[0]):
        wi = w[0] if one else w[i]
        gh_out[0, i, 0] = wi * (raw[i, 0] - y[i])
        gh_out[0, i, 1] = wi


#: Rows per task of the gradient kernels whose row loop is vector code: each task runs
#: its rows through a serial loop (a parallel loop's own body is not vectorized). 800k
#: rows on 16 threads are 196 tasks, the busiest thread 1.06x the mean rows (16,384-row
#: tasks: 49, 1.31x).
GRAD_BLOCK = 4096
#: The clip of predicted probabilities in the log loss metric.
LOGLOSS_EPS = 1e-15

# exp(t) = 2^k exp(r), k = round(t / ln 2), r = t - k ln 2 (ln 2 in two parts, so r is
# exact to ~1e-26), |r| <= ln(2) / 2, where the Taylor series to r^13 is within 3e-18
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_MIN = -700.0
#: Margins entering exp() are clipped to this, so exp never overflows float64.
EXP_CLIP = 700.0
#: 1023 + 2**52: adding it to an integral k in [-1010, 1010] puts k + 1023 in the low bits of
#: the double's mantissa, above the bits of 2**52 (``_BITS_52``)
_EXP_BIAS_52 = 1023.0 + 4503599627370496.0
_BITS_52 = 0x4330000000000000
_C2, _C3, _C4, _C5, _C6, _C7 = (1.0 / math.factorial(k) for k in range(2, 8))
_C8, _C9, _C10, _C11, _C12, _C13 = (1.0 / math.factorial(k) for k in range(8, 14))


@njit(cache=True, nogil=True, inline="always")
def exp_nonpositive(t):
    """exp(t) for t <= 0 in arithmetic only (no libm call), so that a row loop calling it
    is vector code: within 1 ulp of libm's exp (``tests/_kernels/test_loss.py``), the same
    bits on every machine. Below -700 it gives exp(-700) (about 1e-304: zero in float32,
    where gradients are stored); NaN stays NaN."""
    return _exp_reduced(_EXP_MIN if t < _EXP_MIN else t)


@njit(cache=True, nogil=True, inline="always")
def exp_clipped(t):
    """exp(t) of t clipped to [-EXP_CLIP, EXP_CLIP] (700), as :func:`exp_nonpositive`:
    arithmetic only (vector code in a row loop), within 1 ulp of libm's exp, the same
    bits on every machine; NaN stays NaN. The log-link losses' exp (Poisson, gamma,
    Tweedie): 2^k of k up to 1,010 is still a normal double."""
    t = _EXP_MIN if t < _EXP_MIN else t
    return _exp_reduced(EXP_CLIP if t > EXP_CLIP else t)


@njit(cache=True, nogil=True, inline="always")
def _exp_reduced(t):
    """exp(t) for t in [-700, 700] (or NaN): 2^k exp(r) (see the constants above)."""
    # k stays a float (math.floor would give an int64) and its exponent field comes from
    # the bits of k + 1023 + 2**52 (an exact integer in the mantissa): no int64/float64
    # conversion, which x86-64 has in vector form only with AVX-512DQ (on AVX2 the two
    # conversions a row kept it at 6.8 ns a row on one thread instead of about 3)
    k = np.floor(t * _INV_LN2 + 0.5)
    r = (t - k * _LN2_HI) - k * _LN2_LO
    p = _C13 * r + _C12
    p = p * r + _C11
    p = p * r + _C10
    p = p * r + _C9
    p = p * r + _C8
    p = p * r + _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + 1.0
    p = p * r + 1.0
    return p * float_of_bits((bits_of_float(k + _EXP_BIAS_52) - _BITS_52) << 52)


#: Rows from which :func:`sigmoid_of` runs across threads. One thread takes about 6 ns a
#: row (libm's exp), so below this many rows the whole loop costs less than 0.1 ms, the
#: order of starting and joining a parallel region on many threads: single-row and small
#: calls stay on the calling thread.
LINK_PARALLEL_ROWS = 16384


@njit(cache=True, nogil=True)
def sigmoid_rows(x, scale, out):
    """``out[i] = sigmoid(scale * x[i])`` on one thread (:func:`sigmoid`, libm's exp).

    x : ndarray of shape (n,), float64   # IN, margins
    scale : float   # IN, 1.0 or an exact power of two (2.0 for the 2F links of
        ``binary:logitboost`` and ``binary:exponential``); scale * x is then exact
    out : ndarray of shape (n,), float64   # OUT
    """
    for i in range(x.shape[0]):
        out[i] = sigmoid(scale * x[i])


@njit(parallel=True, cache=True, nogil=True)
def sigmoid_rows_parallel(x, scale, out):
    """:func:`sigmoid_rows` across threads, in blocks of ``GRAD_BLOCK`` rows: the same
    numbers (each row is computed alone)."""
    n = x.shape[0]
    for j in prange((n + GRAD_BLOCK - 1) // GRAD_BLOCK):
        lo = j * GRAD_BLOCK
        hi = min(n, lo + GRAD_BLOCK)
        sigmoid_rows(x[lo:hi], scale, out[lo:hi])


def sigmoid_of(x, scale=1.0):
    """sigmoid(scale * x) of a float64 vector as a new float64 array: one pass, no
    temporaries, across threads from ``LINK_PARALLEL_ROWS`` rows. The predictions of
    the logistic links (``Booster.predict``, evaluation metrics each round)."""
    out = np.empty(x.shape[0], dtype=np.float64)
    if x.shape[0] >= LINK_PARALLEL_ROWS:
        sigmoid_rows_parallel(x, scale, out)
    else:
        sigmoid_rows(x, scale, out)
    return out


@njit(parallel=True, cache=True, nogil=True)
def binary_logloss_columns(y, pred, w, one_weight, cols):
    """The log loss metric's per-row (term, weight) of 0/1 labels into ``cols``, across
    threads: ``-(w log(y ? q : 1 - q))`` with q = pred clipped to [eps, 1 - eps] (NaN
    stays NaN), the same operations as the NumPy formula of
    :class:`boostwood.boosting.metrics.LogLoss`. Returns how many labels are neither 0
    nor 1 (their rows hold the one-log term all the same; callers use another formula).

    y, pred : ndarray of shape (n,), float64   # IN
    w : ndarray of shape (n,), float64, or of shape (1,) with ``one_weight``   # IN
    one_weight : bool   # IN, every row weighs ``w[0]``
    cols : ndarray of shape (n, 2), float64   # OUT
    """
    n = y.shape[0]
    bad = 0
    for j in prange((n + GRAD_BLOCK - 1) // GRAD_BLOCK):
        for i in range(j * GRAD_BLOCK, min(n, (j + 1) * GRAD_BLOCK)):
            q = pred[i]
            if q < LOGLOSS_EPS:
                q = LOGLOSS_EPS
            if q > 1.0 - LOGLOSS_EPS:
                q = 1.0 - LOGLOSS_EPS
            yi = y[i]
            wi = w[0] if one_weight else w[i]
            cols[i, 0] = -(wi * math.log(q if yi == 1.0 else 1.0 - q))
            cols[i, 1] = wi
            bad += not (yi == 0.0 or yi == 1.0)
    return bad


@njit(parallel=True, cache=True, nogil=True)
def logistic_grad(y, raw, w, gh_out):
    """Binary log loss with p = sigmoid(F):  g = w (p - y),  h = w p (1 - p).

    The rows go in blocks of ``GRAD_BLOCK`` through a serial loop that is vector code
    (2.0 ns a row on one thread against 5.8 with libm's exp, the same float32 bits). The
    loop needs unit strides: one weight for every row (``w`` of shape (1,), see
    :func:`as_kernel_weights`) enters as that value, other weights are copied per block
    when not contiguous."""
    n = y.shape[0]
    one = w.shape[0] != n  # one weight for every row (as_kernel_weights)
    pairs = gh_out[0].reshape(2 * n)  # (g, h) of row i at 2i, 2i + 1: a constant stride
    for j in prange((n + GRAD_BLOCK - 1) // GRAD_BLOCK):
        lo = j * GRAD_BLOCK
        hi = min(n, lo + GRAD_BLOCK)
        if one:
            _logistic_rows_one_weight(y[lo:hi], raw[lo:hi], w[0], pairs[2 * lo:2 * hi])
        else:
            _logistic_rows(y[lo:hi], raw[lo:hi], np.ascontiguousarray(w[lo:hi]),
                           pairs[2 * lo:2 * hi])


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _logistic_row(x, y, w):
    """(g, h) of one row: ``sigmoid`` with :func:`exp_nonpositive`. ``error_model=
    "numpy"`` drops the zero-division test of ``e / (1 + e)`` (the divisor is at least
    1), which kept the loop scalar."""
    e = exp_nonpositive(-abs(x))
    p = (1.0 if x >= 0.0 else e) / (1.0 + e)
    return w * (p - y), max(w * p * (1.0 - p), HESS_FLOOR * w)


@njit(cache=True, nogil=True, error_model="numpy")
def _logistic_rows(y, raw, w, pairs):
    """:func:`logistic_grad` on a block of rows with their weights."""
    for i in range(y.shape[0]):
        pairs[2 * i], pairs[2 * i + 1] = _logistic_row(raw[i, 0], y[i], w[i])


@njit(cache=True, nogil=True, error_model="numpy")
def _logistic_rows_one_weight(y, raw, w, pairs):
    """:func:`logistic_grad` on a block of rows of one weight ``w``."""
    for i in range(y.shape[0]):
        pairs[2 * i], pairs[2 * i + 1] = _logistic_row(raw[i, 0], y[i], w)


@njit(parallel=True, cache=True, nogil=True)
def softmax_grad(y, raw, w, gh_out):
    """Multinomial log loss, p = softmax(F):  g_k = w (p_k - [y = k]),  h_k = w p_k (1 - p_k).

    The hessian is the diagonal of the true Hessian (Newton step per class
    channel, one tree per class and round). ``y`` holds class ids 0..K-1.

    Blocks of ``GRAD_BLOCK`` rows go class by class through serial loops over the rows
    (vector code): the rows' maxima, the sums of ``exp(F_k - max)`` (in class order, by
    :func:`exp_nonpositive`: the arguments are never positive), then each class's
    (g, h). 800k rows of 10 classes: 0.52-0.68x the time of a row at a time with libm's
    exp, on one and two threads (the same float32 values there).
    """
    n = y.shape[0]
    one = w.shape[0] != n  # one weight for every row (as_kernel_weights)
    for j in prange((n + GRAD_BLOCK - 1) // GRAD_BLOCK):
        lo = j * GRAD_BLOCK
        hi = min(n, lo + GRAD_BLOCK)
        if one:
            _softmax_block(y[lo:hi], raw[lo:hi], w[:1], True, gh_out, lo)
        else:
            _softmax_block(y[lo:hi], raw[lo:hi], np.ascontiguousarray(w[lo:hi]), False,
                           gh_out, lo)


@njit(cache=True, nogil=True, error_model="numpy")
def _softmax_block(y, raw, w, one, gh_out, lo):
    """:func:`softmax_grad` on the rows lo..lo+len(y) (``y``, ``raw`` and ``w`` are the
    block's; ``one``: every row weighs ``w[0]``). The block's margins are first copied
    class-major, so that every loop after reads unit strides."""
    B, K = raw.shape
    e = np.empty((K, B))
    for i in range(B):
        for k in range(K):
            e[k, i] = raw[i, k]
    m = e[0].copy()
    for k in range(1, K):
        ek = e[k]
        for i in range(B):
            m[i] = max(m[i], ek[i])
    total = np.zeros(B)
    for k in range(K):
        ek = e[k]
        for i in range(B):
            ek[i] = exp_nonpositive(ek[i] - m[i])
            total[i] += ek[i]
    for k in range(K):
        ek = e[k]
        pairs = gh_out[k].reshape(2 * gh_out.shape[1])[2 * lo:2 * (lo + B)]
        if one:
            for i in range(B):
                pairs[2 * i], pairs[2 * i + 1] = _softmax_row(ek[i], total[i], y[i] == k,
                                                              w[0])
        else:
            for i in range(B):
                pairs[2 * i], pairs[2 * i + 1] = _softmax_row(ek[i], total[i], y[i] == k,
                                                              w[i])


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _softmax_row(e, total, is_label, w):
    """(g, h) of one row and class: p = e / total, e = exp(F_k - max F)."""
    p = e / total
    return w * (p - (1.0 if is_label else 0.0)), max(w * p * (1.0 - p), HESS_FLOOR * w)


# Pointwise losses of one margin per row, selected by an integer code (one compiled
# kernel serves them all; the branch is the same for every row, so it predicts well).
ABSOLUTE, HUBER, PSEUDO_HUBER, QUANTILE, POISSON, GAMMA, TWEEDIE, LOGITBOOST, EXPONENTIAL, \
    SQUARED_LOG = range(10)
#: SQUARED_LOG: margins are floored here (log1p needs F > -1), and hessians at
#: SQUARED_LOG_HESS (the loss is not convex where F > e y + e - 1), as XGBoost does.
SQUARED_LOG_FLOOR = -1.0 + 1e-6
SQUARED_LOG_HESS = 1e-6

#: |g|, |h| are clamped here before they are stored as float32 (which overflows
#: at 3.4e38): a margin of 800 under a log link must not turn into inf or NaN.
GH_CLAMP = 1e30


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def pointwise_grad_hess(kind, y, F, p):
    """(g, h) of one row for loss ``kind`` at margin F, label y, parameter p (unweighted).

    ABSOLUTE      L = |F - y|                        g = sign(F - y), h = 1 (leaves by line search)
    HUBER         L = r^2/2 if |r| <= p else p(|r| - p/2), r = F - y
                                                     g = clip(r, -p, p), h = 1 (leaves by line search)
    PSEUDO_HUBER  L = p^2 (sqrt(1 + (r/p)^2) - 1)    g = r / s, h = 1 / s^3, s = sqrt(1 + (r/p)^2)
    QUANTILE      L = a (y - F) if y >= F else (1 - a)(F - y), a = p
                                                     g = 1 - a if F > y else -a, h = 1 (line search)
    POISSON       L = e^F - y F                      g = e^F - y, h = e^(F + p) (p: the step
                                                     damping poisson_max_delta_step)
    GAMMA         L = y e^-F + F                     g = 1 - y e^-F, h = y e^-F
    TWEEDIE       L = -y e^((1-p)F)/(1-p) + e^((2-p)F)/(2-p)
                                                     g = -y e^((1-p)F) + e^((2-p)F),
                                                     h = -(1-p) y e^((1-p)F) + (2-p) e^((2-p)F)
    LOGITBOOST    L = log(1 + e^(-2 y* F)), y* = 2y - 1, P(y=1) = 1/(1 + e^(-2F))
                                                     g = 2 (q - y), h = 4 q (1 - q), q = sigmoid(2F)
    EXPONENTIAL   L = e^(-y* F)                      g = -y* e^(-y* F), h = e^(-y* F)
    SQUARED_LOG   L = (log1p(F) - log1p(y))^2 / 2    g = d / (1 + F), h = max((1 - d) / (1 + F)^2,
                  d = log1p(F) - log1p(y)                SQUARED_LOG_HESS), F >= SQUARED_LOG_FLOOR

    Each loss is a function of its own (``_gh_absolute`` ...), so that a row loop of one
    loss (:func:`_pointwise_block`) compiles its formula only.
    """
    if kind == ABSOLUTE:
        return _gh_absolute(y, F, p)
    if kind == HUBER:
        return _gh_huber(y, F, p)
    if kind == PSEUDO_HUBER:
        return _gh_pseudo_huber(y, F, p)
    if kind == QUANTILE:
        return _gh_quantile(y, F, p)
    if kind == POISSON:
        return _gh_poisson(y, F, p)
    if kind == GAMMA:
        return _gh_gamma(y, F, p)
    if kind == TWEEDIE:
        return _gh_tweedie(y, F, p)
    if kind == LOGITBOOST:
        return _gh_logitboost(y, F, p)
    if kind == SQUARED_LOG:
        return _gh_squared_log(y, F, p)
    return _gh_exponential(y, F, p)  # EXPONENTIAL


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_absolute(y, F, p):
    return (1.0 if F > y else (-1.0 if F < y else 0.0)), 1.0


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_huber(y, F, p):
    r = F - y
    return min(max(r, -p), p), 1.0


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_pseudo_huber(y, F, p):
    r = F - y
    s = math.sqrt(1.0 + (r / p) * (r / p))
    return r / s, 1.0 / (s * s * s)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_quantile(y, F, p):
    return ((1.0 - p) if F > y else (-p if F < y else 0.5 - p)), 1.0


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_poisson(y, F, p):
    mu = exp_clipped(F)
    return mu - y, exp_clipped(F + p)  # LightGBM's exp(F + p), clipped: never inf; p = 0: mu


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_gamma(y, F, p):
    e = y * exp_clipped(-F)
    return 1.0 - e, e


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_tweedie(y, F, p):
    a = y * exp_clipped((1.0 - p) * F)
    b = exp_clipped((2.0 - p) * F)
    return -a + b, -(1.0 - p) * a + (2.0 - p) * b


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_logitboost(y, F, p):
    q = sigmoid(2.0 * F)
    return 2.0 * (q - y), 4.0 * q * (1.0 - q)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_squared_log(y, F, p):
    f = max(F, SQUARED_LOG_FLOOR)
    d = math.log1p(f) - math.log1p(y)
    return d / (1.0 + f), max((1.0 - d) / ((1.0 + f) * (1.0 + f)), SQUARED_LOG_HESS)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _gh_exponential(y, F, p):
    ys = 2.0 * y - 1.0
    e = exp_clipped(-ys * F)
    return -ys * e, e


@njit(parallel=True, cache=True, nogil=True)
def pointwise_grad(kind, y, raw, w, param, gh_out):
    """Weighted g and h of every row for a pointwise loss (see :func:`pointwise_grad_hess`).

    y : ndarray of shape (n_rows,), float64   # IN
    w : ndarray of shape (n_rows,), or (1,) for one weight of every row
        (:func:`as_kernel_weights`): the blocks then read a block of copies of it   # IN
    raw : ndarray of shape (n_rows, 1), float64   # IN
    gh_out : ndarray of shape (1, n_rows, 2), float32   # OUT; hessians floored at
        HESS_FLOOR * w, both clamped to +-GH_CLAMP
    """
    # ``kind`` a compile-time constant: each loss compiles on its first use, with its own
    # row loop only (:func:`_pointwise_block` keeps just its branch)
    literally(kind)
    n = y.shape[0]
    pairs = gh_out[0].reshape(2 * n)  # (g, h) of row i at 2i, 2i + 1, as logistic_grad
    one = w.shape[0] != n and n > 0
    copies = np.empty(min(n, GRAD_BLOCK) if one else 0, dtype=w.dtype)
    for i in range(copies.shape[0]):  # a serial loop: copies[:] = w[0] is a parallel region
        copies[i] = w[0]
    for j in prange((n + GRAD_BLOCK - 1) // GRAD_BLOCK):
        lo = j * GRAD_BLOCK
        hi = min(n, lo + GRAD_BLOCK)
        wb = copies[:hi - lo] if one else np.ascontiguousarray(w[lo:hi])
        _pointwise_block(kind, y[lo:hi], raw[lo:hi], wb, param, pairs[2 * lo:2 * hi])


@njit(cache=True, nogil=True, error_model="numpy")
def _pointwise_block(kind, y, raw, w, p, pairs):
    """:func:`pointwise_grad` on a block of rows, through the loss's own row loop: its
    kind is a constant there, so the loop has no branch on it, and the log-link losses'
    loops (:func:`exp_clipped`) are vector code. 678k rows, against one row loop over every
    kind with libm's exp: Poisson, gamma, Tweedie 0.36-0.38x the time on one thread,
    0.22-0.25x on two, Huber and absolute error 0.4-0.5x; the same float32 values.

    Each loss's loop is a function of its own, called, not inlined (numba optimises a
    function again with every function it inlines or calls), on contiguous weights only,
    and inlines only its own loss's formula: on a 2-core Zen 5 VM the kernel compiles in
    7 s, then 3 s for broadcast weights, where the four loops inlined here (each twice,
    for a broadcast weight, and each with every loss's formula) took 80 s and 42 s. The
    loops of the losses without exp also lost their branch on the kind: absolute, Huber
    and quantile error 0.27-0.60x the time, Poisson and Tweedie 1.04-1.10x, gamma 1.00x."""
    literally(kind)
    _loss_rows(kind, y, raw, w, p, pairs)


def _loss_rows(kind, y, raw, w, p, pairs):
    """The row loop of loss ``kind`` (:data:`_ROWS`). Compiled code calls the overload
    below, which picks the loop while typing from ``kind``'s literal value: a loss's
    first fit compiles its own loop only, not all ten (a branch on ``kind`` typed and
    compiled every loop: about 8 s where one takes under 1)."""
    raise NotImplementedError("_loss_rows is called from compiled code only")


@overload(_loss_rows, prefer_literal=True, jit_options={"nogil": True,
                                                      "error_model": "numpy"})
def _loss_rows_typed(kind, y, raw, w, p, pairs):
    if not isinstance(kind, types.IntegerLiteral):
        return None  # numba asks again with the literal value
    rows = _ROWS[kind.literal_value]

    def impl(kind, y, raw, w, p, pairs):
        rows(y, raw, w, p, pairs)
    return impl


def _row_loop(gh):
    """The row loop of one loss, ``gh`` its compiled (g, h) (``_gh_poisson`` ...): weighted
    g and h of a block's rows into ``pairs``. Each loss's loop is a function of its own,
    named after its loss (``_rows_gh_tweedie`` ...). The name matters: numba names a
    compiled function's symbol by its module, qualified name and argument types, plus a
    counter of the process that compiled it, and the cached :func:`pointwise_grad` of
    each loss carries its loop inside. Ten loops of one name (``_row_loop.<locals>.rows``)
    compiled in two processes could get the same symbol, and a process that then loaded two
    losses' cached kernels ran the first one's loop for both: a Tweedie fit computed
    pseudo-Huber gradients (a CI run). The loops are not cached themselves: numba keys
    a closure's cache by a pickle of ``gh`` that differs per process, so another process
    would never load one, and each compile would leave one more file."""
    def rows(y, raw, w, p, pairs):
        for i in range(y.shape[0]):
            g, h = gh(y[i], raw[i, 0], p)
            pairs[2 * i], pairs[2 * i + 1] = _weighted(g, h, w[i])
    rows.__name__ = rows.__qualname__ = "_rows" + getattr(gh, "py_func", gh).__name__
    return njit(nogil=True, error_model="numpy")(rows)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _weighted(g, h, w):
    """A row's g and h times its weight, the hessian floored at HESS_FLOOR * w, both
    clamped to +-GH_CLAMP."""
    return min(max(w * g, -GH_CLAMP), GH_CLAMP), min(max(w * h, HESS_FLOOR * w), GH_CLAMP)


_rows_absolute, _rows_huber = _row_loop(_gh_absolute), _row_loop(_gh_huber)
_rows_pseudo_huber, _rows_quantile = _row_loop(_gh_pseudo_huber), _row_loop(_gh_quantile)
_rows_poisson, _rows_gamma = _row_loop(_gh_poisson), _row_loop(_gh_gamma)
_rows_tweedie, _rows_logitboost = _row_loop(_gh_tweedie), _row_loop(_gh_logitboost)
_rows_squared_log, _rows_exponential = _row_loop(_gh_squared_log), _row_loop(_gh_exponential)
#: Each pointwise loss's row loop, by its kind.
_ROWS = {ABSOLUTE: _rows_absolute, HUBER: _rows_huber, PSEUDO_HUBER: _rows_pseudo_huber,
         QUANTILE: _rows_quantile, POISSON: _rows_poisson, GAMMA: _rows_gamma,
         TWEEDIE: _rows_tweedie, LOGITBOOST: _rows_logitboost, SQUARED_LOG: _rows_squared_log,
         EXPONENTIAL: _rows_exponential}


@njit(parallel=True, nogil=True)
def compiled_objective_grad(fn, y, raw, w, gh_out):
    """g and h of every row from a user's compiled ``fn(label, margin) -> (g, h)``,
    times the sample weight (one margin per row). Not cached: ``fn`` is the user's.

    y, w : ndarray of shape (n_rows,), float64   # IN
    raw : ndarray of shape (n_rows, 1), float64   # IN
    gh_out : ndarray of shape (1, n_rows, 2), float32   # OUT
    """
    for i in prange(y.shape[0]):
        g, h = fn(y[i], raw[i, 0])
        gh_out[0, i, 0] = min(max(w[i] * g, -GH_CLAMP), GH_CLAMP)
        gh_out[0, i, 1] = min(max(w[i] * h, -GH_CLAMP), GH_CLAMP)  # < 0: refused after


@njit(cache=True, nogil=True)
def pointwise_grad_sum(kind, y, c, w, param):
    """sum_i w_i g(y_i, c): the derivative of sum_i w_i L(y_i, c) at one constant
    margin c, in float64 (row order, deterministic). Used to find the loss-minimising
    initial score by bisection.

    y, w : ndarray of shape (n_rows,), float64   # IN
    """
    total = 0.0
    for i in range(y.shape[0]):
        g, _ = pointwise_grad_hess(kind, y[i], c, param)
        total += w[i] * g
    return total


@njit(parallel=True, cache=True, nogil=True)
def pointwise_grad_terms(kind, y, c, w, param, out):
    """out[i] = w_i g(y_i, c): the terms of the derivative of sum_i w_i L(y_i, c) at one
    constant margin c, in float64, to be summed exactly (across shards too).

    y : ndarray of shape (n_rows,), float64   # IN
    w : ndarray of shape (n_rows,), or (1,) for one weight of every row   # IN
    out : ndarray of shape (n_rows,), float64   # OUT
    """
    one = w.shape[0] != y.shape[0]
    for i in prange(y.shape[0]):
        g, _ = pointwise_grad_hess(kind, y[i], c, param)
        out[i] = (w[0] if one else w[i]) * g


@njit(parallel=True, cache=True, nogil=True)
def log_factorial(y, out):
    """out[i] = log(y[i]!) = lgamma(y[i] + 1) (the Poisson likelihood's constant).

    y : ndarray of shape (n_rows,), float64   # IN
    out : ndarray of shape (n_rows,), float64   # OUT
    """
    for i in prange(y.shape[0]):
        out[i] = math.lgamma(y[i] + 1.0)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
