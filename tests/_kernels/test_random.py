"""The bag split against the uniforms it replaces."""
import numpy as np
import pytest

from boostwood._kernels.random import STREAM_BAGGING, row_uniforms, split_rows


@pytest.mark.parametrize("n", [0, 1, 1000, 65536, 200_003])
@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.8, 1.0])
def test_split_rows_is_the_rows_whose_uniform_is_below_the_fraction(n, fraction):
    """Inside: the ascending rows with row_uniforms(...) < fraction, as int32; outside:
    the rest, ascending; for ids 0..n-1 given or implied, and for a shard's global ids."""
    for ids, implied in ((np.arange(n, dtype=np.int64), True),
                         (np.arange(n, dtype=np.int64), False),
                         (np.arange(n, dtype=np.int64) * 7 + 1_000_003, False)):
        u = np.empty(n)
        row_uniforms(42, STREAM_BAGGING, 5, ids, u)
        inside, outside = np.empty(n, np.int32), np.empty(n, np.int64)
        k = split_rows(42, STREAM_BAGGING, 5, np.zeros(0, np.int64) if implied else ids,
                       implied, n, fraction, inside, outside)
        np.testing.assert_array_equal(inside[:k], np.flatnonzero(u < fraction))
        np.testing.assert_array_equal(outside[:n - k], np.flatnonzero(u >= fraction))
    if n > 1000 and 0 < fraction < 1:
        assert abs(k / n - fraction) < 0.05
