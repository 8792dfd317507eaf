"""Numerical-derivative checks of every built-in loss, and extreme margins."""
import numpy as np
import pytest

from boostwood.data import RowInfo
from boostwood.objectives import get_objective

_binary = lambda r, n: r.integers(0, 2, n).astype(float)  # noqa: E731
_real = lambda r, n: r.normal(size=n) * 3  # noqa: E731
_positive = lambda r, n: r.gamma(2.0, 1.5, n)  # noqa: E731
CASES = [("reg:squarederror", None, _real),
         ("binary:logistic", None, _binary),
         ("multi:softprob", 4, lambda r, n: r.integers(0, 4, n).astype(float)),
         ("reg:absoluteerror", None, _real),
         ("reg:huber", None, _real),
         ("reg:pseudohubererror", None, _real),
         ("reg:quantileerror", None, _real),
         ("count:poisson", None, lambda r, n: r.poisson(3.0, n).astype(float)),
         ("reg:gamma", None, _positive),
         ("reg:tweedie", None, lambda r, n: np.where(r.random(n) < 0.3, 0.0, _positive(r, n))),
         ("binary:logitboost", None, _binary),
         ("binary:exponential", None, _binary),
         ("binary:logitraw", None, _binary),
         ("reg:logistic", None, lambda r, n: r.random(n)),
         ("multi:softmax", 3, lambda r, n: r.integers(0, 3, n).astype(float)),
         ("reg:squaredlogerror", None, _positive)]
#: these use h = w by design and re-estimate leaves by line search (no curvature to match)
UNIT_HESSIAN = {"reg:absoluteerror", "reg:huber", "reg:quantileerror"}


@pytest.mark.parametrize("name,k,labels", CASES)
def test_gradient_and_hessian_match_finite_differences(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(0)
    n, K = 200, obj.n_outputs
    y = labels(r, n)
    w = r.uniform(0.5, 2.0, n)
    raw = r.normal(size=(n, K)) * (0.5 if name in ("reg:tweedie", "count:poisson",
                                                     "reg:gamma") else 2)
    if name == "reg:squaredlogerror":  # where the loss is convex (the hessian's floor aside)
        raw = (y * r.uniform(0.8, 1.25, n))[:, None]
    gh = np.empty((K, n, 2), np.float32)
    obj.gradient(RowInfo.of(y, w), raw, gh)
    eps = 1e-5
    for c in range(K):
        up, down = raw.copy(), raw.copy()
        up[:, c] += eps
        down[:, c] -= eps
        num_g = w * (obj.loss(y, up) - obj.loss(y, down)) / (2 * eps)
        np.testing.assert_allclose(gh[c, :, 0], num_g, rtol=1e-4, atol=1e-5)
        # hessian (diagonal) from differences of the analytic gradient
        gu, gd = np.empty_like(gh), np.empty_like(gh)
        obj.gradient(RowInfo.of(y, w), up, gu)
        obj.gradient(RowInfo.of(y, w), down, gd)
        num_h = (gu[c, :, 0].astype(float) - gd[c, :, 0]) / (2 * eps)
        if name in UNIT_HESSIAN:
            np.testing.assert_allclose(gh[c, :, 1], w.astype(np.float32))
        elif name == "count:poisson":  # e^(F + poisson_max_delta_step): damped by e^0.7
            assert obj.param == 0.7
            np.testing.assert_allclose(gh[c, :, 1] / np.exp(0.7), num_h, rtol=2e-2, atol=2e-2)
        else:
            np.testing.assert_allclose(gh[c, :, 1], num_h, rtol=2e-2, atol=2e-2)


def test_poisson_hessian_is_damped_by_poisson_max_delta_step():
    """count:poisson's hessian is w e^(F + d), d = poisson_max_delta_step (LightGBM's and
    XGBoost's default 0.7); d = 0 is the loss's curvature w e^F, to the bit; the gradient
    does not depend on d."""
    r = np.random.default_rng(2)
    n = 300
    y, w, raw = r.poisson(2.0, n).astype(float), r.uniform(0.5, 2.0, n), r.normal(size=(n, 1))
    out = {}
    for d in (None, 0.0, 0.7, 2.0):
        obj = get_objective("count:poisson", params={"poisson_max_delta_step": d})
        out[d] = np.empty((1, n, 2), np.float32)
        obj.gradient(RowInfo.of(y, w), raw, out[d])
    np.testing.assert_array_equal(out[None], out[0.7])
    for d in (0.0, 0.7, 2.0):
        np.testing.assert_array_equal(out[d][0, :, 0], out[0.0][0, :, 0])
        np.testing.assert_allclose(out[d][0, :, 1], w * np.exp(raw[:, 0] + d), rtol=1e-6)
    np.testing.assert_array_equal(out[0.0][0, :, 1],
                                  (w * np.exp(raw[:, 0])).astype(np.float32))


@pytest.mark.parametrize("name,k,labels", CASES)
def test_extreme_margins_give_finite_derivatives(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(1)
    n = 50
    y = labels(r, n)
    raw = np.where(r.random((n, obj.n_outputs)) < 0.5, -800.0, 800.0)
    gh = np.empty((obj.n_outputs, n, 2), np.float32)
    obj.gradient(RowInfo.of(y), raw, gh)
    assert np.all(np.isfinite(gh)) and np.all(gh[:, :, 1] > 0)
    assert np.all(np.isfinite(obj.transform(raw)))


@pytest.mark.parametrize("name,k,labels", CASES)
def test_initial_score_minimises_the_loss(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(2)
    n = 300
    y = labels(r, n)
    w = r.uniform(0.1, 3.0, n)
    c = obj.init_score(RowInfo.of(y, w))
    best = np.sum(w * obj.loss(y, np.tile(c, (n, 1))))
    for _ in range(20):
        other = c + r.normal(size=c.shape) * 0.05
        assert np.sum(w * obj.loss(y, np.tile(other, (n, 1)))) >= best - 1e-9


def test_labels_out_of_domain_are_rejected():
    with pytest.raises(ValueError, match="labels 0 or 1"):
        get_objective("binary:logistic").check_labels(np.array([0.0, 2.0]))
    with pytest.raises(ValueError, match="integer labels"):
        get_objective("multi:softprob", 3).check_labels(np.array([0.0, 3.0]))
    with pytest.raises(ValueError, match="num_class"):
        get_objective("multi:softprob", None)


@pytest.mark.parametrize("name,param", [("reg:absoluteerror", None), ("reg:quantileerror", 0.2),
                                        ("reg:quantileerror", 0.9)])
def test_leaf_line_search_is_the_loss_minimiser(name, param):
    obj = get_objective(name, None, {"quantile_alpha": param})
    r = np.random.default_rng(5)
    y, F, w = r.normal(size=40) * 2, r.normal(size=40), r.uniform(0.2, 3.0, 40)
    gamma = obj.leaf_values(y, F, w)
    total = lambda g: np.sum(w * obj.loss(y, (F + g)[:, None]))  # noqa: E731
    grid = np.linspace(-8, 8, 16001)
    assert total(gamma) <= min(total(g) for g in grid) + 1e-9


def test_huber_leaf_is_one_m_step_from_the_median():
    obj = get_objective("reg:huber", None, {"huber_delta": 0.8})
    r = np.random.default_rng(6)
    y, F, w = r.standard_t(2, 60), np.zeros(60), r.uniform(0.5, 2.0, 60)
    gamma = obj.leaf_values(y, F, w)
    from boostwood.objectives.pointwise import weighted_quantile
    med = weighted_quantile(y, w, 0.5)
    d = y - med
    assert gamma == pytest.approx(med + np.sum(w * np.sign(d) * np.minimum(0.8, np.abs(d)))
                                  / w.sum())
    total = lambda g: np.sum(w * obj.loss(y, np.full((60, 1), g)))  # noqa: E731
    assert total(gamma) <= total(med) + 1e-12  # the step improves on the median


def test_objective_parameters_reach_the_loss_and_are_validated():
    import boostwood as bw
    from boostwood.boosting.params import resolve_params
    assert get_objective("reg:quantileerror", None, {"quantile_alpha": 0.9}).param == 0.9
    assert get_objective("reg:tweedie", None, {"tweedie_variance_power": 1.2}).param == 1.2
    for bad in ({"quantile_alpha": 1.0}, {"quantile_alpha": 0.0}, {"tweedie_variance_power": 2.0},
                {"tweedie_variance_power": 1.0}, {"huber_delta": 0.0}):
        with pytest.raises(ValueError, match=list(bad)[0]):
            resolve_params(bad)
    X = np.random.default_rng(0).normal(size=(200, 2))
    for name, y, match in [("count:poisson", -np.ones(200), "non-negative"),
                           ("reg:gamma", np.zeros(200), "positive"),
                           ("reg:tweedie", -np.ones(200), "non-negative"),
                           ("binary:exponential", np.full(200, 2.0), "labels 0 or 1")]:
        with pytest.raises(ValueError, match=match):
            bw.train({"objective": name}, bw.Dataset(X, y), 1)


def test_quantile_predictions_cover_their_level():
    import boostwood as bw
    r = np.random.default_rng(7)
    X = r.uniform(-2, 2, size=(4000, 2))
    y = X[:, 0] + r.normal(size=4000) * (0.5 + np.abs(X[:, 1]))
    for a in (0.1, 0.5, 0.9):
        b = bw.train({"objective": "reg:quantileerror", "quantile_alpha": a, "eta": 0.1,
                      "max_depth": 3}, bw.Dataset(X, y), 100, verbose_eval=False)
        assert abs((y <= b.predict(X)).mean() - a) < 0.03


def test_sigmoid_is_the_stable_two_sided_formula_bit_for_bit():
    """The select form gives exactly the stable two-branch formula (1 / (1 + exp(-x)) for
    x >= 0, exp(x) / (1 + exp(x)) below, with the same libm exp) on every kind of margin,
    extremes included."""
    import math

    from numba import njit

    from boostwood._kernels.loss import sigmoid

    @njit
    def apply(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = sigmoid(x[i])
        return out

    @njit
    def two_branches(x):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            if x[i] >= 0.0:
                out[i] = 1.0 / (1.0 + math.exp(-x[i]))
            else:
                e = math.exp(x[i])
                out[i] = e / (1.0 + e)
        return out

    r = np.random.default_rng(0)
    x = np.concatenate([r.normal(scale=5.0, size=10000), r.normal(scale=1e-8, size=100),
                        [0.0, -0.0, 1e-300, -1e-300, 36.0, -36.0, 745.0, -745.0, 800.0, -800.0,
                         np.inf, -np.inf, np.nan]])
    got, ref = apply(x), two_branches(x)
    np.testing.assert_array_equal(got, ref)
    assert got[-3] == 1.0 and got[-2] == 0.0 and np.isnan(got[-1])  # +inf, -inf, NaN


@pytest.mark.parametrize("n", [1, 5000, 16384, 70001])
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_sigmoid_of_is_the_scalar_sigmoid_of_each_row_on_one_thread_or_many(n, scale):
    """The logistic link of predictions (one thread below LINK_PARALLEL_ROWS rows, blocks
    across threads from it) is the scalar formula row by row, to the bit: the naive twin
    is a plain loop of the two-branch formula with libm's exp; extremes included, and
    within an ulp or two of NumPy's own exp (which has SIMD versions on some machines)."""
    import math

    from numba import njit

    from boostwood._kernels.loss import (LINK_PARALLEL_ROWS, sigmoid_of, sigmoid_rows,
                                         sigmoid_rows_parallel)

    @njit
    def two_branches(x, scale):
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            t = scale * x[i]
            if t >= 0.0:
                out[i] = 1.0 / (1.0 + math.exp(-t))
            else:
                e = math.exp(t)
                out[i] = e / (1.0 + e)
        return out

    r = np.random.default_rng(n)
    x = r.normal(scale=8.0, size=n)
    extremes = np.array([0.0, -0.0, 1e-300, -5e-324, 36.0, -36.0, 709.0, -746.0, 400.0,
                         1e308, -1e308, np.inf, -np.inf])
    k = min(n, extremes.size)
    x[:k] = extremes[r.permutation(extremes.size)[:k]]
    if n > 20:
        x[20] = np.nan
    ref = two_branches(x, scale)
    got = sigmoid_of(x, scale)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_array_equal(got, ref)
    serial, parallel = np.empty(n), np.empty(n)
    sigmoid_rows(x, scale, serial)
    sigmoid_rows_parallel(x, scale, parallel)
    np.testing.assert_array_equal(serial, ref)
    np.testing.assert_array_equal(parallel, ref)
    assert (n >= LINK_PARALLEL_ROWS) == (n in (16384, 70001))
    with np.errstate(over="ignore"):
        t = scale * x
        e = np.exp(-np.abs(t))
        numpy_ref = np.where(t >= 0, 1.0, e) / (1.0 + e)
    np.testing.assert_array_max_ulp(got, numpy_ref, maxulp=2)


@pytest.mark.parametrize("objective, scale", [("binary:logistic", 1.0),
                                              ("binary:logitboost", 2.0)])
def test_predicted_probabilities_are_the_link_of_the_margins(objective, scale):
    """Booster.predict's probabilities are sigmoid(scale * margin) by the two-branch
    formula, on a call large enough for the link to run across threads."""
    import boostwood as bw

    r = np.random.default_rng(7)
    X = r.normal(size=(20000, 4))
    y = (X[:, 0] + r.normal(size=20000) > 0).astype(float)
    b = bw.train({"objective": objective, "max_depth": 3}, bw.Dataset(X[:3000], y[:3000]),
                 20, verbose_eval=False)
    t = scale * b.predict(X, output_margin=True)
    expect = np.where(t >= 0, 1.0 / (1.0 + np.exp(-np.abs(t))),
                      np.exp(-np.abs(t)) / (1.0 + np.exp(-np.abs(t))))
    got = b.predict(X)
    np.testing.assert_array_max_ulp(got, expect, maxulp=2)
    assert np.array_equal(b.predict(X[:7]), got[:7])


def _elementwise(scalar):
    """A compiled loop applying the compiled scalar function ``scalar`` to a 1-D array."""
    from numba import njit

    @njit
    def apply(t):
        out = np.empty_like(t)
        for i in range(t.shape[0]):
            out[i] = scalar(t[i])
        return out
    return apply


def test_exp_nonpositive_is_within_one_ulp_of_libm():
    """The arithmetic exp of the logistic kernel against libm's on (-700, 0]: every
    value within 1 ulp, most equal; below -700 it holds exp(-700), NaN stays NaN."""
    import math

    from boostwood._kernels.loss import exp_nonpositive

    apply = _elementwise(exp_nonpositive)

    r = np.random.default_rng(0)
    t = np.concatenate([-r.exponential(30.0, 200000), -r.random(100000) * 0.7,
                        -r.random(1000) * 1e-12, [0.0, -0.0, -1e-300, -700.0, -0.5 * math.log(2)]])
    got, ref = apply(t), np.exp(t)
    assert np.all(np.abs(got - ref) <= np.spacing(ref))
    assert (got == ref).mean() > 0.8
    tail = apply(np.array([-700.5, -745.0, -1e5, -np.inf, np.nan]))
    assert np.all(tail[:4] == math.exp(-700.0)) and np.isnan(tail[4])


@pytest.mark.parametrize("n", [1, 16383, 40000])
def test_logistic_kernel_gives_the_libm_formulas_float32_bits(n):
    """The blocked, vector-code logistic gradient against the two-sided sigmoid with
    libm's exp, row by row: the same float32 gradients and hessians, on margins of every
    size (extremes, infinities and NaN included) and on block edges (16,383 rows: one
    short block; 40,000: two whole blocks and a part)."""
    from numba import njit

    from boostwood._kernels.loss import HESS_FLOOR, logistic_grad, sigmoid

    @njit
    def reference(y, raw, w, gh):
        for i in range(y.shape[0]):
            p = sigmoid(raw[i, 0])
            gh[0, i, 0] = w[i] * (p - y[i])
            gh[0, i, 1] = max(w[i] * p * (1.0 - p), HESS_FLOOR * w[i])

    r = np.random.default_rng(n)
    raw = r.normal(scale=4.0, size=(n, 1))
    special = [np.inf, -np.inf, np.nan, 800.0, -800.0, 745.0, -745.0, 36.0, -36.0, 0.0, -0.0]
    raw[-len(special):, 0] = special[-n:]
    y = r.integers(0, 2, n).astype(float)
    w = r.random(n) * 3.0
    got = np.full((1, n, 2), 7.0, np.float32)
    want = np.empty_like(got)
    logistic_grad(y, raw, w, got)
    reference(y, raw, w, want)
    np.testing.assert_array_equal(got, want)


def test_exp_clipped_is_within_one_ulp_of_libm():
    """The arithmetic exp of the log-link losses against libm's on [-700, 700]: every
    value within 1 ulp, most equal; beyond +-700 it holds exp(+-700), NaN stays NaN."""
    import math

    from boostwood._kernels.loss import exp_clipped

    apply = _elementwise(exp_clipped)

    r = np.random.default_rng(1)
    t = np.concatenate([r.uniform(-700.0, 700.0, 300000), r.normal(scale=3.0, size=100000),
                        [0.0, -0.0, 1e-300, 700.0, -700.0, 0.5 * math.log(2), 709.0 - 9.0]])
    got, ref = apply(t), np.exp(t)
    assert np.all(np.abs(got - ref) <= np.spacing(ref))
    assert (got == ref).mean() > 0.8
    tail = apply(np.array([700.5, 745.0, 1e5, np.inf, -1e5, -np.inf, np.nan]))
    assert np.all(tail[:4] == math.exp(700.0)) and np.all(tail[4:6] == math.exp(-700.0))
    assert np.isnan(tail[6])


def _pointwise_reference(kind, y, F, p, w):
    """g and h of the log-link losses by NumPy's exp (float64), weighted, floored and
    clamped as the kernel's docstring says, in float32."""
    from boostwood._kernels import loss as K
    e = lambda t: np.exp(np.clip(t, -K.EXP_CLIP, K.EXP_CLIP))  # noqa: E731
    if kind == K.POISSON:
        g, h = e(F) - y, e(F) * np.exp(p)
    elif kind == K.GAMMA:
        h = y * e(-F)
        g = 1.0 - h
    elif kind == K.TWEEDIE:
        a, b = y * e((1.0 - p) * F), e((2.0 - p) * F)
        g, h = -a + b, -(1.0 - p) * a + (2.0 - p) * b
    else:  # EXPONENTIAL
        ys = 2.0 * y - 1.0
        h = e(-ys * F)
        g = -ys * h
    g = np.clip(w * g, -K.GH_CLAMP, K.GH_CLAMP)
    h = np.minimum(np.maximum(w * h, K.HESS_FLOOR * w), K.GH_CLAMP)
    return np.stack([g, h], axis=1).astype(np.float32)


@pytest.mark.parametrize("n", [1, 4095, 10000])
@pytest.mark.parametrize("one_weight", [False, True])
def test_pointwise_kernel_gives_the_row_formulas(n, one_weight):
    """The blocked pointwise gradient (each loss's own row loop) against the row formulas:
    every loss without exp to the bit (the scalar ``pointwise_grad_hess`` row by row), the
    log-link losses against NumPy's exp within one float32 ulp, most to the bit, on
    margins up to the clip (and past it), block edges (4,095 rows: one short block;
    10,000: two whole and a part), row weights and one broadcast weight."""
    from numba import njit

    from boostwood._kernels import loss as K

    @njit
    def rows(kind, y, raw, w, p, out):
        for i in range(y.shape[0]):
            g, h = K.pointwise_grad_hess(kind, y[i], raw[i, 0], p)
            out[i, 0] = min(max(w[i] * g, -K.GH_CLAMP), K.GH_CLAMP)
            out[i, 1] = min(max(w[i] * h, K.HESS_FLOOR * w[i]), K.GH_CLAMP)

    r = np.random.default_rng(n)
    raw = r.normal(scale=3.0, size=(n, 1))
    raw[-4:, 0] = [750.0, -750.0, 40.0, -0.0][-n:]
    y = r.poisson(1.5, n).astype(float) + (r.random(n) < 0.5)
    w = np.broadcast_to(np.array([1.7]), (n,)) if one_weight else r.random(n) * 3.0
    log_link = (K.POISSON, K.GAMMA, K.TWEEDIE, K.EXPONENTIAL)
    for kind, p in ((K.ABSOLUTE, 0.0), (K.HUBER, 0.8), (K.PSEUDO_HUBER, 1.3),
                    (K.QUANTILE, 0.3), (K.LOGITBOOST, 0.0), (K.SQUARED_LOG, 0.0),
                    (K.POISSON, 0.0), (K.POISSON, 0.7), (K.GAMMA, 0.0), (K.TWEEDIE, 1.4),
                    (K.EXPONENTIAL, 0.0)):
        yk = np.minimum(y, 1.0) if kind in (K.LOGITBOOST, K.EXPONENTIAL) else y
        got = np.full((1, n, 2), 7.0, np.float32)
        K.pointwise_grad(kind, yk, raw, w, p, got)
        if kind in log_link:
            want = _pointwise_reference(kind, yk, raw[:, 0], p, np.asarray(w))
            np.testing.assert_array_max_ulp(got[0], want, maxulp=1)
            assert (got[0] == want).mean() > 0.99
        else:
            want = np.empty((n, 2))
            rows(kind, yk, raw, np.ascontiguousarray(w), p, want)
            np.testing.assert_array_equal(got[0], want.astype(np.float32))


@pytest.mark.parametrize("n", [1, 4095, 10000])
@pytest.mark.parametrize("one_weight", [False, True])
def test_softmax_kernel_gives_the_row_formulas(n, one_weight):
    """The blocked, class-major softmax gradient against a row at a time with NumPy's
    exp: within one float32 ulp, most to the bit, with extreme and tied margins, on block
    edges, with row weights and one broadcast weight; every row's hessian floored."""
    from boostwood._kernels.loss import HESS_FLOOR, softmax_grad
    K = 4
    r = np.random.default_rng(n + 7)
    raw = r.normal(scale=4.0, size=(n, K))
    raw[-1] = [800.0, -800.0, 3.0, 3.0][:K]
    y = r.integers(0, K, n).astype(float)
    w = np.broadcast_to(np.array([0.6]), (n,)) if one_weight else r.random(n) * 2.0
    z = np.exp(raw - raw.max(axis=1, keepdims=True))
    p = z / z.sum(axis=1, keepdims=True)
    wc = np.asarray(w)[:, None]
    g = wc * (p - (y[:, None] == np.arange(K)))
    h = np.maximum(wc * p * (1.0 - p), HESS_FLOOR * wc)
    want = np.stack([g.T, h.T], axis=2).astype(np.float32)
    got = np.full((K, n, 2), 7.0, np.float32)
    softmax_grad(y, raw, w, got)
    np.testing.assert_array_max_ulp(got, want, maxulp=1)
    assert (got == want).mean() > 0.99
