"""Exact, order-free node statistics: gradients and hessians in fixed point.

Before a tree is grown, every row's gradient ``g_i`` and hessian ``h_i`` become
integers ``q_i = round(g_i / u)`` of a power-of-two unit ``u`` (one unit for
the gradients, one for the hessians). Histograms, node totals and children
obtained by subtraction are int64 sums of those integers: exact, so the same in
any summation order, on any number of threads and across any number of data
shards, and the subtraction trick loses nothing. Floats appear only when a
split is scored or a leaf is set (``G = u * sum q_i``).

The bound. Let ``n`` be the number of training rows over all shards and ``M``
the largest ``|g_i|`` (or ``|h_i|``) over all shards. The unit is ``u = 2**-e``
with ``e`` the largest integer such that both

* ``M * 2**e + 1/2 <= 2**31 - 1``: every ``|q_i|`` fits the int32 a row is stored in;
* ``n * (M * 2**e + 1/2) <= 2**62``: the sum of *any* subset of rows, and with it
  every histogram cell, node total and parent-minus-child difference (all int64), has
  magnitude at most ``2**62 < 2**63``, so no sum can overflow (this one binds only
  beyond 2**31 rows).

The rounding error is at most ``u / 2 <= M * 2**-31`` per row: half a unit of a
31-bit grid over ``[-M, M]``, finer than float32's 24-bit mantissa for every row
within a factor 128 of the largest, and added without any further rounding.
"""
import math

import numpy as np

from .._config import GQ_DTYPE
from .._kernels.fixed import max_abs_gh, quantize_gh

#: Largest magnitude any fixed-point sum may reach (one bit of head room under int64).
SUM_BOUND = 2.0 ** 62
#: Largest magnitude of one row's fixed-point value (stored as int32).
ROW_BOUND = 2.0 ** 31 - 1
#: Exponents are kept within this range so that 2**e is a normal float64.
_MAX_EXPONENT = 1000


def fixed_point_exponent(max_abs, n_rows):
    """The largest ``e`` with ``max_abs * 2**e + 1/2 <= 2**31 - 1`` and
    ``n_rows * (max_abs * 2**e + 1/2) <= 2**62`` (0 when max_abs is 0)."""
    if n_rows < 1:
        raise ValueError("fixed point needs at least one row")
    if max_abs == 0.0:
        return 0
    if not math.isfinite(max_abs):
        raise ValueError(f"cannot quantize a non-finite magnitude {max_abs!r}")
    limit = min(SUM_BOUND / n_rows, ROW_BOUND) - 0.5
    # floor(log2(limit / max_abs)) without forming the quotient (it overflows for tiny max_abs)
    ml, kl = math.frexp(limit)
    mm, km = math.frexp(max_abs)
    e = kl - km + math.frexp(ml / mm)[1] - 1
    e = max(min(e, _MAX_EXPONENT), -_MAX_EXPONENT)
    while e > -_MAX_EXPONENT and (n_rows * (max_abs * 2.0 ** e + 0.5) > SUM_BOUND
                                  or max_abs * 2.0 ** e + 0.5 > ROW_BOUND):
        e -= 1
    return e


class FixedPointStats:
    """Quantizes one tree's gradients; owns the int32 array they are written to.

    Parameters
    ----------
    n_rows : int, training rows of this shard
    reducer : the run's reducer; the largest magnitudes and the row count are
        all-reduced, so every shard picks the same units
    """

    def __init__(self, n_rows, reducer):
        self.reducer = reducer
        self.n_rows = n_rows
        self.gq = None  # allocated by the first quantize
        total = np.array([n_rows], dtype=np.int64)
        self.n_total = int(self.reducer.allreduce_sum(total)[0])
        #: (unit of g, unit of h) of the last quantization: G = unit * sum of integers
        self.units = np.ones(2)

    def quantize(self, gh):
        """Fixed-point copy of ``gh`` (shape (n_rows, 2)); sets :attr:`units`.

        Raises ValueError when a gradient or hessian is NaN or infinite (a custom
        objective's bug, or a loss evaluated where it is not defined).
        """
        m = np.empty(2)
        max_abs_gh(gh, m)
        self.reducer.allreduce_max(m)
        if not np.all(np.isfinite(m)):
            raise ValueError("the objective returned a NaN or infinite gradient or hessian")
        exps = [fixed_point_exponent(float(v), max(self.n_total, 1)) for v in m]
        scales = np.array([2.0 ** e for e in exps])
        self.units = np.array([2.0 ** -e for e in exps])
        if self.gq is None:
            self.gq = np.empty((self.n_rows, 2), dtype=GQ_DTYPE)
        quantize_gh(gh, scales, self.gq)
        return self.gq
