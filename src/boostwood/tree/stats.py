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

Quantized gradients (``use_quantized_grad``, LightGBM's option of that name). With
``B`` = ``num_grad_quant_bins`` levels, the unit of the gradients is ``M_g / (B / 2)``
and that of the hessians ``M_h / B``: a row's integer is at most ``B / 2`` (gradient)
or ``B`` (hessian) in magnitude, stored as int16, and every histogram cell fits one
int64 (:mod:`boostwood._kernels.histogram`): faster histograms, half the gradient
memory. Rounding is stochastic by default (``floor(g / u + U)``, ``U`` uniform per row,
a hash of the run's seed, round, output and the row's global id): every sum is then
an unbiased estimate of the full-precision one. The sums themselves stay exact
integers, so the rest of the engine -- subtraction, thread and shard independence
-- is unchanged; only the rows' values are coarser.
"""
import math

import numpy as np

from .._config import GQ_DTYPE, GQ_LOW_DTYPE
from .._kernels.fixed import max_abs_gh, quantize_gh, quantize_gh_low

#: Largest magnitude any fixed-point sum may reach (one bit of head room under int64).
SUM_BOUND = 2.0 ** 62
#: Largest magnitude of one row's fixed-point value (stored as int32).
ROW_BOUND = 2.0 ** 31 - 1
#: Most levels ``num_grad_quant_bins`` may ask for: the hessian's level (at most B,
#: either sign) and the gradient's (at most B / 2) must fit the packed histogram cell.
MAX_QUANT_BINS = 254
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
        #: (levels, stochastic, seed) of quantized gradients, or None: full precision
        self.low_bits = None

    def use_quantized(self, n_levels, stochastic=True, seed=0):
        """Quantize to ``n_levels`` levels from now on (see the module docstring)."""
        n_levels = int(n_levels)
        if not 2 <= n_levels <= MAX_QUANT_BINS:
            raise ValueError(f"num_grad_quant_bins must be in [2, {MAX_QUANT_BINS}], "
                             f"got {n_levels}")
        self.low_bits = (n_levels, bool(stochastic), int(seed) & 0x7FFFFFFFFFFFFFFF)
        self.gq = None

    def quantize(self, gh, row_ids=None, counter=0):
        """Fixed-point copy of ``gh`` (shape (n_rows, 2)); sets :attr:`units`.

        ``row_ids`` (global ids; None: 0..n-1) and ``counter`` (one number per round
        and output) key the stochastic rounding of quantized gradients.

        Raises ValueError when a gradient or hessian is NaN or infinite (a custom
        objective's bug, or a loss evaluated where it is not defined).
        """
        m = np.empty(2)
        max_abs_gh(gh, m)
        self.reducer.allreduce_max(m)
        if not np.all(np.isfinite(m)):
            raise ValueError("the objective returned a NaN or infinite gradient or hessian")
        if self.low_bits is not None:
            return self._quantize_low(gh, m, row_ids, counter)
        exps = [fixed_point_exponent(float(v), max(self.n_total, 1)) for v in m]
        scales = np.array([2.0 ** e for e in exps])
        self.units = np.array([2.0 ** -e for e in exps])
        if self.gq is None:
            self.gq = np.empty((self.n_rows, 2), dtype=GQ_DTYPE)
        quantize_gh(gh, scales, self.gq)
        return self.gq

    def _quantize_low(self, gh, m, row_ids, counter):
        n_levels, stochastic, seed = self.low_bits
        top = np.array([n_levels // 2, n_levels], dtype=np.float64)  # largest level of g, h
        scales = np.where(m > 0, top / np.where(m > 0, m, 1.0), 1.0)
        self.units = 1.0 / scales
        if self.gq is None:
            self.gq = np.empty((self.n_rows, 2), dtype=GQ_LOW_DTYPE)
        quantize_gh_low(gh, scales, stochastic, seed, int(counter), row_ids, self.gq)
        return self.gq
