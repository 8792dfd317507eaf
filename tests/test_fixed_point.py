"""Exact, order-free statistics: fixed-point gradients, units, and models that do not
depend on how the rows were summed."""
import json
import math

import numpy as np
import pytest

import boostwood as bw
from boostwood._comm import LocalReducer
from boostwood._kernels.fixed import max_abs_gh, quantize_gh
from boostwood.tree import histogram as tree_histogram
from boostwood.tree import grower as tree_grower
from boostwood.tree.stats import ROW_BOUND, SUM_BOUND, FixedPointStats, fixed_point_exponent

from conftest import make_classification, make_regression


# -- the unit ------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [1e-300, 1e-20, 2.0 ** -7, 0.25, 1.0, 3.7, 1e6, 1e30, 1e300])
@pytest.mark.parametrize("n", [1, 7, 1000, 2 ** 31 - 1])
def test_exponent_is_the_largest_that_cannot_overflow(m, n):
    e = fixed_point_exponent(m, n)
    assert n * (m * 2.0 ** e + 0.5) <= SUM_BOUND and m * 2.0 ** e + 0.5 <= ROW_BOUND
    if -1000 < e < 1000:  # inside the clamp, e + 1 would break a bound
        q = m * 2.0 ** (e + 1) + 0.5
        assert n * q > SUM_BOUND or q > ROW_BOUND


def test_exponent_edge_cases():
    assert fixed_point_exponent(0.0, 10) == 0
    with pytest.raises(ValueError):
        fixed_point_exponent(float("inf"), 10)
    with pytest.raises(ValueError):
        fixed_point_exponent(1.0, 0)


def test_quantize_kernels_match_numpy():
    r = np.random.default_rng(0)
    gh = (r.standard_cauchy(size=(200_003, 2)) * 10).astype(np.float32)
    m = np.empty(2)
    max_abs_gh(gh, m)
    np.testing.assert_array_equal(m, np.abs(gh.astype(np.float64)).max(axis=0))
    scales = np.array([2.0 ** 20, 2.0 ** -3])
    for dtype in (np.int32, np.int64):
        out = np.empty(gh.shape, dtype=dtype)
        quantize_gh(gh, scales, out)
        np.testing.assert_array_equal(out, np.rint(gh.astype(np.float64) * scales).astype(dtype))
    gh[12345, 1] = np.nan
    max_abs_gh(gh, m)
    assert np.isnan(m[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_abs_flags_every_non_finite_value_and_reads_every_block(dtype):
    """The maximum is taken on the values' bits: a NaN or an infinity of either sign,
    in any block (the last, partial one too), makes both maxima NaN; the largest value
    counts wherever it sits; no rows give zeros."""
    r = np.random.default_rng(1)
    gh = r.normal(size=(3 * 65536 + 7, 2)).astype(dtype)
    m = np.empty(2)
    for row in (0, 65535, 65536, gh.shape[0] - 1):
        g2 = gh.copy()
        g2[row, 0] = -1e30
        max_abs_gh(g2, m)
        assert m[0] == 1e30 if dtype == np.float64 else m[0] == np.float64(np.float32(1e30))
        assert m[1] == np.abs(gh[:, 1].astype(np.float64)).max()
        for bad in (np.nan, np.inf, -np.inf):
            g2[row, 1] = bad
            max_abs_gh(g2, m)
            assert np.isnan(m).all()
    max_abs_gh(gh[:0], m)
    assert (m == 0.0).all()


def test_worst_case_sums_stay_in_range():
    """Every row at the largest magnitude, all of one sign: the sum still fits."""
    n = 100_000
    gh = np.full((n, 2), 3.999e7, dtype=np.float32)
    stats = FixedPointStats(n, LocalReducer())
    gq = stats.quantize(gh)
    total = sum(int(v) for v in gq[:, 0])  # Python ints: the true sum
    assert gq.dtype == np.int32 and np.abs(gq).max() <= ROW_BOUND
    assert abs(total) <= SUM_BOUND and gq[:, 0].sum(dtype=np.int64) == total
    assert total * stats.units[0] == pytest.approx(n * float(np.float32(3.999e7)), rel=1e-12)


# -- models that do not depend on summation order -----------------------------------------
def _model(params, X, y, rounds=8, **data):
    b = bw.train({"seed": 3, **params}, bw.Dataset(X, y, **data), rounds, verbose_eval=False)
    m = json.loads(b.save_raw()) if hasattr(b, "save_raw") else b._to_dict()
    m["params"].pop("nthread", None)
    m.pop("boostwood_version", None)
    return json.dumps(m, sort_keys=True)


CASES = {
    "hist-depthwise-logistic": dict(objective="binary:logistic", max_depth=5),
    "hist-lossguide-bagging": dict(objective="binary:logistic", grow_policy="lossguide",
                                   max_leaves=20, max_depth=0, subsample=0.7,
                                   colsample_bytree=0.8, colsample_bynode=0.6),
    "approx-global": dict(objective="reg:squarederror", tree_method="approx", max_depth=4),
    "approx-local-lossguide": dict(objective="reg:squarederror", tree_method="approx",
                                   approx_proposal="local", grow_policy="lossguide",
                                   max_leaves=12, max_depth=0),
    "exact-softmax": dict(objective="multi:softprob", num_class=3, tree_method="exact",
                          max_depth=3, subsample=0.8),
    "hist-poisson": dict(objective="count:poisson", max_depth=4),
    "hist-gamma": dict(objective="reg:gamma", max_depth=4, colsample_bynode=0.5),
    "hist-tweedie": dict(objective="reg:tweedie", grow_policy="lossguide", max_leaves=16),
    "hist-quantile": dict(objective="reg:quantileerror", quantile_alpha=0.3, max_depth=4),
    "hist-huber-l1": dict(objective="reg:pseudohubererror", max_depth=4, alpha=0.5,
                          max_delta_step=0.8),
    "hist-gradient-boosting": dict(objective="reg:squarederror", boosting="gradient",
                                   max_depth=3),
    "hist-quantized-lossguide": dict(objective="binary:logistic", grow_policy="lossguide",
                                     max_leaves=20, max_depth=0, subsample=0.8,
                                     use_quantized_grad=True, num_grad_quant_bins=8),
    "approx-quantized-softmax": dict(objective="multi:softprob", num_class=3,
                                     tree_method="approx", max_depth=3,
                                     use_quantized_grad=True),
}


def _data_for(params, n=6000):
    X, y = make_regression(n, 6, seed=11)
    X[np.random.default_rng(2).random(X.shape) < 0.15] = np.nan  # NaN in every feature
    obj = params["objective"]
    if obj.startswith("binary"):
        y = (y > 0).astype(float)
    elif obj.startswith("multi"):
        y = np.digitize(y, [-1.0, 1.0]).astype(float)
    elif obj in ("count:poisson", "reg:tweedie"):
        y = np.random.default_rng(4).poisson(np.exp(np.clip(y, -3, 3) / 2)).astype(float)
    elif obj == "reg:gamma":
        y = np.exp(np.clip(y, -3, 3) / 3) * np.random.default_rng(4).gamma(2.0, 0.5, y.size)
    return X, y


@pytest.mark.parametrize("name", CASES)
def test_model_is_byte_identical_for_one_and_two_threads(name):
    params = CASES[name]
    X, y = _data_for(params)
    one = _model({**params, "nthread": 1}, X, y)
    two = _model({**params, "nthread": 2}, X, y)
    assert one == two


@pytest.mark.parametrize("name", ["hist-depthwise-logistic", "hist-lossguide-bagging",
                                  "approx-global", "hist-poisson", "hist-quantized-lossguide"])
def test_model_does_not_depend_on_the_summation_order(name, monkeypatch):
    """Histograms summed over row blocks of 64 instead of 16384 rows (another order of
    additions, as other shards or threads would produce) give the same model to the bit.
    Sample weights spanning many decades make float sums of these gradients depend on
    the order of additions (the release before fixed point gave different models here)."""
    params = CASES[name]
    X, y = _data_for(params, n=40_000)
    w = np.exp(3.0 * np.random.default_rng(9).normal(size=y.size))
    default = _model(params, X, y, rounds=4, weight=w)
    monkeypatch.setattr(tree_histogram, "HIST_BLOCK", 64)
    monkeypatch.setattr(tree_grower, "HIST_BLOCK", 64)
    assert _model(params, X, y, rounds=4, weight=w) == default


# -- extreme statistics ----------------------------------------------------------------------
def _logloss(y, p):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def test_saturated_logistic_rows_with_lambda_zero():
    """Half the rows start at margins of +-40 (hessians at the 1e-16 floor, far below one
    fixed-point unit), with lambda = 0: no division by zero, finite leaves, and the fit
    of the other rows is as good as XGBoost's on the same margins."""
    xgb = pytest.importorskip("xgboost")
    X, y = make_classification(4000, 5, seed=8)
    margin = np.zeros(y.size)
    sat = np.arange(y.size) % 2 == 0
    margin[sat] = np.where(y[sat] > 0, 40.0, -40.0)
    params = {"objective": "binary:logistic", "lambda": 0.0, "max_depth": 4, "eta": 0.3,
              "min_child_weight": 0.0}
    with np.errstate(all="raise"):
        b = bw.train(params, bw.Dataset(X, y, base_margin=margin), 20, verbose_eval=False)
        ours = b.predict(bw.Dataset(X, base_margin=margin))
    assert np.all(np.isfinite(ours))
    for tree in b.trees:
        assert np.all(np.isfinite(tree.value))
    d = xgb.DMatrix(X, y, base_margin=margin)
    ref = xgb.train({**params, "reg_lambda": 0.0, "tree_method": "hist", "nthread": 2}, d, 20)
    theirs = ref.predict(d)
    free = ~sat
    assert _logloss(y[free], ours[free]) <= _logloss(y[free], theirs[free]) * 1.02


@pytest.mark.parametrize("objective", ["count:poisson", "reg:gamma", "reg:tweedie"])
def test_large_margins_keep_accuracy(objective):
    """Labels spanning 1e-2 .. 1e6 (margins up to ~14, hessians over ten decades): no
    overflow, no division by zero, and the deviance is as good as XGBoost's with the same
    parameters. (Both need max_delta_step here, XGBoost's Poisson default: without it
    XGBoost's Newton steps diverge to NaN on these labels.)"""
    xgb = pytest.importorskip("xgboost")
    r = np.random.default_rng(5)
    X = r.normal(size=(5000, 4))
    mu = np.exp(3.0 * X[:, 0] + 1.5 * np.abs(X[:, 1]) + 2.0)
    if objective == "count:poisson":
        y = r.poisson(mu).astype(float)
    else:
        y = mu * r.gamma(3.0, 1 / 3.0, mu.size)
    params = {"objective": objective, "max_depth": 5, "eta": 0.3, "lambda": 0.0,
              "max_delta_step": 0.7}
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        b = bw.train(params, bw.Dataset(X, y), 40, verbose_eval=False)
        ours = b.predict(X)
    assert np.all(np.isfinite(ours)) and np.all(ours > 0)
    ref = xgb.train({**params, "reg_lambda": 0.0, "tree_method": "hist", "nthread": 2},
                    xgb.DMatrix(X, y), 40)
    theirs = ref.predict(xgb.DMatrix(X))

    def deviance(mu_hat):  # the negative log-likelihood up to constants, per family
        if objective == "count:poisson":
            return float(np.mean(mu_hat - y * np.log(mu_hat)))
        if objective == "reg:gamma":
            return float(np.mean(y / mu_hat + np.log(mu_hat)))
        rho = 1.5
        return float(np.mean(-y * mu_hat ** (1 - rho) / (1 - rho) + mu_hat ** (2 - rho) / (2 - rho)))

    assert deviance(ours) <= deviance(theirs) + 0.01 * abs(deviance(theirs)) + 1e-9


def test_non_finite_gradients_are_a_clear_error():
    X, y = make_regression(500, 4)

    def bad(preds, dtrain):
        g = preds - dtrain.get_label()
        g[7] = np.nan
        return g, np.ones_like(g)

    with pytest.raises(ValueError, match="non-finite grad"):
        bw.train({"objective": "reg:squarederror"}, bw.Dataset(X, y), 2, obj=bad,
                 verbose_eval=False)
    stats = FixedPointStats(4, LocalReducer())
    for v in (np.nan, np.inf):
        gh = np.ones((4, 2), dtype=np.float32)
        gh[2, 1] = v
        with pytest.raises(ValueError, match="NaN or infinite gradient"):
            stats.quantize(gh)


def test_units_follow_the_largest_gradient_of_each_tree():
    X, y = make_regression(3000, 4)
    for scale in (1e-8, 1.0, 1e8):
        b = bw.train({"objective": "reg:squarederror", "max_depth": 3}, bw.Dataset(X, y * scale),
                     5, verbose_eval=False)
        ref = bw.train({"objective": "reg:squarederror", "max_depth": 3}, bw.Dataset(X, y), 5,
                       verbose_eval=False)
        # the same trees up to the label scale and float32 rounding of g: the units
        # follow the gradients, so nothing underflows or overflows at either end
        for t, u in zip(b.trees, ref.trees):
            np.testing.assert_array_equal(t.feature, u.feature)
            np.testing.assert_allclose(t.value, u.value * scale, rtol=1e-6,
                                       atol=1e-6 * scale * np.abs(u.value).max())
    assert math.isfinite(float(b.predict(X).sum()))
