"""The radix argsort against NumPy's stable argsort, and the AUC of its order against
a pairwise count."""
import numpy as np
import pytest
from numba import get_num_threads

from boostwood._kernels.sort import (SORT_BLOCK_ROWS, argsort_stable, float_keys,
                                     radix_sort_pairs, sort_blocks)
from boostwood.boosting.metrics import roc_auc


def _awkward(n, seed):
    """Probabilities, margins of both signs, many ties, and every special value."""
    r = np.random.default_rng(seed)
    x = np.where(r.random(n) < 0.5, 1 / (1 + np.exp(-3 * r.normal(size=n))),
                 r.normal(scale=1e3, size=n))
    ties = r.random(n) < 0.2
    x[ties] = np.round(x[ties], 1)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324,
                        1.7e308, -1.7e308, 1.0, -1.0])
    k = min(n, 3 * special.size)
    x[r.permutation(n)[:k]] = np.resize(special, k)
    return x


@pytest.mark.parametrize("n", [0, 1, 2, 37, 1000, 2 * SORT_BLOCK_ROWS + 5, 100_003])
def test_argsort_is_numpys_stable_argsort(n):
    x = _awkward(n, n)
    np.testing.assert_array_equal(argsort_stable(x), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 7, 16])
def test_any_number_of_blocks_gives_the_same_order(n_blocks):
    """The passes' blocks (one per thread on large calls) never change the order: the
    stable order is unique."""
    x = _awkward(50_000, 3)
    rows = np.arange(x.size, dtype=np.uint64)
    pairs = np.empty((x.size, 2), dtype=np.uint64)
    float_keys(x, rows, n_blocks, pairs)
    got = radix_sort_pairs(pairs, n_blocks)
    np.testing.assert_array_equal(got[:, 1].astype(np.int64), np.argsort(x, kind="stable"))
    assert np.all(got[1:, 0] >= got[:-1, 0])  # the keys ascend with them


def test_blocks_follow_the_work_size_rule():
    assert sort_blocks(0) == 1 and sort_blocks(2 * SORT_BLOCK_ROWS - 1) == 1
    assert sort_blocks(100 * SORT_BLOCK_ROWS) == min(get_num_threads(), 100)


def _pairwise_auc(y, s, w):
    """The definition: weighted share of (positive, negative) pairs ranked right, ties
    one half."""
    pos, neg = y > 0.5, ~(y > 0.5)
    sp, sn = s[pos][:, None], s[neg][None, :]
    wp, wn = w[pos][:, None], w[neg][None, :]
    right = (sp > sn) + 0.5 * (sp == sn)
    return float((wp * wn * right).sum() / (w[pos].sum() * w[neg].sum()))


@pytest.mark.parametrize("seed", range(4))
def test_auc_is_the_pairwise_definition(seed):
    r = np.random.default_rng(seed)
    n = 1500
    y = (r.random(n) < 0.3).astype(float)
    s = np.round(r.normal(size=n) + y, 1)  # many ties
    s[:5] = [np.inf, -np.inf, 0.0, -0.0, 1e-300]
    w = r.uniform(0.1, 3.0, n)
    assert roc_auc(y, s, w) == pytest.approx(_pairwise_auc(y, s, w), rel=1e-13)
    assert roc_auc(y, s) == _pairwise_auc(y, s, np.ones(n))  # integer sums: exact
    big = np.tile(s, 30)  # a multi-block sort, the same pairs 900 times over
    assert roc_auc(np.tile(y, 30), big) == pytest.approx(roc_auc(y, s), rel=1e-13)


def test_auc_with_nan_scores_ranks_them_last_each_alone():
    """A NaN score sorts after every number (as NumPy sorts) and ties with nothing: the
    same AUC as distinct scores above the maximum in row order."""
    r = np.random.default_rng(5)
    y = (r.random(400) < 0.5).astype(float)
    s = r.normal(size=400)
    nan = r.random(400) < 0.1
    s[nan] = np.nan
    ranked = s.copy()
    ranked[nan] = np.nanmax(s) + 1 + np.arange(nan.sum())
    assert roc_auc(y, s) == roc_auc(y, ranked)


def test_auc_of_one_class_is_nan_and_unit_weights_read_nothing():
    from boostwood.data.rowinfo import unit_weights
    s = np.linspace(0, 1, 10)
    assert np.isnan(roc_auc(np.zeros(10), s)) and np.isnan(roc_auc(np.ones(10), s))
    assert np.isnan(roc_auc(np.zeros(0), np.zeros(0)))
    y = (np.arange(10) % 3 == 0).astype(float)
    assert roc_auc(y, s, unit_weights(10)) == roc_auc(y, s) == roc_auc(y, s, np.ones(10))
    assert np.isnan(roc_auc(y, s, np.zeros(10)))
