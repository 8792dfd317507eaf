import numpy as np
import pytest

from boostwood._kernels.histogram import sum_gradients
from boostwood._kernels.reference import histogram_naive
from boostwood.tree.histogram import HIST_BLOCK, HistogramBuilder


def _data(n, F, nb, seed=0):
    """Binned rows and fixed-point (g, h) as the grower hands them to the builder."""
    r = np.random.default_rng(seed)
    X = r.integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = r.normal(size=(n, 2)).astype(np.float32)
    gh[:, 1] = np.abs(gh[:, 1])
    return X, np.rint(gh.astype(np.float64) * 2.0 ** 40).astype(np.int64)


@pytest.mark.parametrize("n", [1, 50, HIST_BLOCK + 7, 3 * HIST_BLOCK + 1])
def test_histogram_matches_naive_across_blocks(n):
    X, gh = _data(n, 4, 9)
    rows = np.sort(np.random.default_rng(1).choice(n, max(1, n // 2), replace=False)).astype(np.int32)
    b = HistogramBuilder(X, 10)
    feats = np.arange(4, dtype=np.int64)
    b.build(gh, rows[None, :], np.zeros(1, np.int64), np.array([0]), np.array([rows.size]),
            np.array([3]), feats)
    np.testing.assert_allclose(b.hist[3], histogram_naive(X, gh[:, 0], gh[:, 1], rows, 10),
                               rtol=1e-12, atol=1e-9)


def test_batch_of_nodes_and_feature_subset():
    X, gh = _data(5000, 5, 7)
    idx = np.random.default_rng(2).permutation(5000).astype(np.int32)
    starts, counts = np.array([0, 1000, 1001]), np.array([1000, 1, 3999])
    b = HistogramBuilder(X, 8)
    feats = np.array([1, 3], dtype=np.int64)
    b.hist[:] = -7
    b.build(gh, idx[None, :], np.zeros(3, np.int64), starts, counts, np.array([0, 1, 2]), feats)
    for k in range(3):
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], idx[starts[k]:starts[k] + counts[k]], 8)
        np.testing.assert_allclose(b.hist[k][feats], naive[feats], rtol=1e-12, atol=1e-9)
        assert np.all(b.hist[k][[0, 2, 4]] == -7.0)  # features not asked for stay untouched


def test_subtraction_equals_brute_force_and_totals_agree():
    X, gh = _data(40000, 3, 12)
    idx = np.arange(40000, dtype=np.int32)
    left = X[:, 0] <= 5
    part = np.concatenate([idx[left], idx[~left]]).astype(np.int32)
    nl = int(left.sum())
    b = HistogramBuilder(X, 13)
    feats = np.arange(3, dtype=np.int64)
    b.build(gh, part[None, :], np.zeros(1, np.int64), np.array([0]), np.array([40000]),
            np.array([0]), feats)  # parent
    b.build(gh, part[None, :], np.zeros(2, np.int64), np.array([0, nl]), np.array([nl, 40000 - nl]),
            np.array([1, 2]), feats)
    b.subtract(np.array([0]), np.array([1]), feats)  # parent - left = right
    np.testing.assert_allclose(b.hist[0], b.hist[2], rtol=1e-9, atol=1e-7)
    # every feature's histogram sums to the node totals
    tot = np.empty(3, dtype=np.int64)
    sum_gradients(gh, part, nl, 40000 - nl, tot)
    np.testing.assert_allclose(b.hist[2].sum(axis=1), np.tile(tot, (3, 1)), rtol=1e-9)


def test_result_does_not_depend_on_threads():
    import numba
    X, gh = _data(3 * HIST_BLOCK, 6, 30)
    idx = np.arange(X.shape[0], dtype=np.int32)
    out = []
    for t in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(t)
        b = HistogramBuilder(X, 31)
        b.build(gh, idx[None, :], np.zeros(1, np.int64), np.array([0]), np.array([idx.size]),
                np.array([0]), np.arange(6, dtype=np.int64))
        out.append(b.hist[0].copy())
    assert np.array_equal(out[0], out[1])


def test_integer_histograms_are_exact():
    """Fixed-point cells are exact sums: equal to the naive sum to the last bit, and
    parent - left is exactly the right child's histogram."""
    X, gh = _data(3 * HIST_BLOCK + 5, 4, 11, seed=5)
    idx = np.arange(X.shape[0], dtype=np.int32)
    b = HistogramBuilder(X, 12)
    feats = np.arange(4, dtype=np.int64)
    nl = 20000
    b.build(gh, idx[None, :], np.zeros(3, np.int64), np.array([0, 0, nl]),
            np.array([idx.size, nl, idx.size - nl]), np.array([0, 1, 2]), feats)
    assert b.hist.dtype == np.int64
    np.testing.assert_array_equal(b.hist[0], histogram_naive(X, gh[:, 0], gh[:, 1], idx, 12))
    b.subtract(np.array([0]), np.array([1]), feats)
    np.testing.assert_array_equal(b.hist[0], b.hist[2])
