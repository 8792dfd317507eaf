"""Quantized gradients (``use_quantized_grad``): few levels per row, exact integer sums.

The kernel against its definition (levels in range, unbiased stochastic rounding keyed
by global row ids, nearest rounding), the parameters at the boundary, and training:
as accurate as full precision and as LightGBM's quantized training on the same data.
Thread and shard independence are in test_fixed_point.py and test_shards.py.
"""
import numba
import numpy as np
import pytest

import boostwood as bw
from boostwood._comm import LocalReducer
from boostwood._kernels.fixed import quantize_gh_low
from boostwood.tree.stats import MAX_QUANT_BINS, FixedPointStats

from conftest import make_classification


def _gh(n, seed=0):
    r = np.random.default_rng(seed)
    gh = np.empty((n, 2), dtype=np.float32)
    gh[:, 0] = r.normal(size=n)
    gh[:, 1] = r.random(n) * 0.25
    return gh


@pytest.mark.parametrize("bins", [2, 4, 16, MAX_QUANT_BINS])
def test_levels_stay_in_range_and_round_to_a_neighbour(bins):
    gh = _gh(50_000)
    stats = FixedPointStats(gh.shape[0], LocalReducer())
    stats.use_quantized(bins, stochastic=True, seed=7)
    q = stats.quantize(gh).astype(np.int64)
    assert stats.gq.dtype == np.int16
    assert np.abs(q[:, 0]).max() <= bins // 2 and q[:, 1].min() >= 0 and q[:, 1].max() <= bins
    exact = gh.astype(np.float64) / stats.units  # the value in levels
    assert np.all((q == np.floor(exact)) | (q == np.floor(exact) + 1))
    # the largest magnitudes reach the top levels
    assert np.abs(q[:, 0]).max() >= bins // 2 - 1 and q[:, 1].max() >= bins - 1


def test_stochastic_rounding_is_unbiased_and_nearest_rounding_is_not_random():
    n = 200_000
    gh = np.empty((n, 2), dtype=np.float64)
    gh[:, 0] = 0.3  # 0.3 of the top level: between levels 0 and 1 ...
    gh[0, 0] = 1.0  # ... once the largest gradient sets the unit
    gh[:, 1] = 0.1
    gh[0, 1] = 1.0
    stats = FixedPointStats(n, LocalReducer())
    stats.use_quantized(2, stochastic=True, seed=3)  # one level each side of zero
    q = stats.quantize(gh).astype(np.int64)
    mean_g = q[1:, 0].mean() * stats.units[0]
    mean_h = q[1:, 1].mean() * stats.units[1]
    se = 0.5 / np.sqrt(n)
    assert abs(mean_g - 0.3) < 5 * se and abs(mean_h - 0.1) < 5 * se
    stats.use_quantized(2, stochastic=False)
    q = stats.quantize(gh).astype(np.int64)
    assert np.all(q[1:, 0] == 0) and np.all(q[1:, 1] == 0)  # 0.3 and 0.2 levels: to 0


def test_draws_follow_global_row_ids_not_positions_or_threads():
    gh = _gh(30_000, seed=1)
    ids = np.arange(30_000, dtype=np.int64) * 3 + 11
    scales = np.array([8.0, 64.0])
    full = np.empty((30_000, 2), dtype=np.int16)
    quantize_gh_low(gh, scales, True, 5, 9, ids, full)
    order = np.random.default_rng(2).permutation(30_000)[:10_000]
    part = np.empty((10_000, 2), dtype=np.int16)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        quantize_gh_low(gh[order], scales, True, 5, 9, ids[order], part)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(part, full[order])
    other = np.empty_like(full)
    quantize_gh_low(gh, scales, True, 5, 10, ids, other)  # another round draws anew
    assert np.mean(other != full) > 0.2


def test_no_row_ids_means_ids_0_to_n_minus_1():
    """One process holding every row passes no id array (None): the draws of ids 0..n-1,
    without an array of 8 bytes a row allocated every round."""
    gh = _gh(20_000, seed=3)
    scales = np.array([8.0, 64.0])
    given, implied = (np.empty((20_000, 2), dtype=np.int16) for _ in range(2))
    quantize_gh_low(gh, scales, True, 5, 9, np.arange(20_000, dtype=np.int64), given)
    quantize_gh_low(gh, scales, True, 5, 9, None, implied)
    np.testing.assert_array_equal(implied, given)
    shifted = np.empty_like(given)
    quantize_gh_low(gh, scales, True, 5, 9, np.arange(20_000, dtype=np.int64) + 1, shifted)
    assert np.mean(shifted != given) > 0.2  # the ids do matter


def _auc(y, p):
    from sklearn.metrics import roc_auc_score
    return roc_auc_score(y, p)


def test_quantized_training_is_as_accurate_as_full_precision_and_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = make_classification(40_000, 8, seed=4, missing=0.05)
    Xt, yt = make_classification(20_000, 8, seed=5, missing=0.05)
    common = dict(objective="binary:logistic", eta=0.1, max_leaves=31, max_depth=0,
                  grow_policy="lossguide", min_data_in_leaf=20, reg_lambda=1.0,
                  min_child_weight=1e-3)
    full = bw.train(common, bw.Dataset(X, y), 80, verbose_eval=False)
    quant = bw.train({**common, "use_quantized_grad": True}, bw.Dataset(X, y), 80,
                     verbose_eval=False)
    assert quant.trees[0].feature.size > 3
    auc_full, auc_quant = _auc(yt, full.predict(Xt)), _auc(yt, quant.predict(Xt))
    lq = lgb.train(dict(objective="binary", learning_rate=0.1, num_leaves=31,
                        min_data_in_leaf=20, lambda_l2=1.0, use_quantized_grad=True,
                        verbose=-1), lgb.Dataset(X, y), 80)
    auc_lgb = _auc(yt, lq.predict(Xt))
    assert abs(auc_quant - auc_full) < 0.003, (auc_quant, auc_full)
    assert auc_quant > auc_lgb - 0.003, (auc_quant, auc_lgb)
    # and it really is another model: the rows' values were rounded
    assert not np.array_equal(full.predict(Xt), quant.predict(Xt))


def test_squared_error_hessians_quantize_exactly():
    """A constant hessian is its own top level: min_data / min_child_weight see exact
    row counts, and the trees have the full-precision structure on a clean target."""
    r = np.random.default_rng(0)
    X = r.normal(size=(5000, 4))
    y = np.where(X[:, 0] > 0.3, 2.0, -1.0) + np.where(X[:, 1] > -0.5, 0.5, 0.0)
    p = dict(objective="reg:squarederror", max_depth=2, eta=1.0, reg_lambda=0.0,
             min_child_weight=0.0)
    full = bw.train(p, bw.Dataset(X, y), 1, verbose_eval=False)
    quant = bw.train({**p, "use_quantized_grad": True}, bw.Dataset(X, y), 1,
                     verbose_eval=False)
    np.testing.assert_array_equal(full.trees[0].feature, quant.trees[0].feature)
    np.testing.assert_array_equal(full.trees[0].cover, quant.trees[0].cover)


@pytest.mark.parametrize("params,match", [
    (dict(use_quantized_grad=True, num_grad_quant_bins=1), "num_grad_quant_bins"),
    (dict(use_quantized_grad=True, num_grad_quant_bins=MAX_QUANT_BINS + 1),
     "num_grad_quant_bins"),
    (dict(use_quantized_grad=True, tree_method="exact"), "use_quantized_grad"),
    (dict(use_quantized_grad=True, tree_method="approx", approx_proposal="local"),
     "use_quantized_grad"),
    (dict(use_quantized_grad="yes"), "use_quantized_grad"),
])
def test_bad_settings_are_clear_errors(params, match):
    X, y = make_classification(200, 3)
    with pytest.raises((ValueError, TypeError), match=match):
        bw.train({"objective": "binary:logistic", **params}, bw.Dataset(X, y), 2,
                 verbose_eval=False)
