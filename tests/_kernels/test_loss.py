"""Numerical-derivative checks of every built-in loss, and extreme margins."""
import numpy as np
import pytest

from boostwood.objectives import get_objective

CASES = [("reg:squarederror", None, lambda r, n: r.normal(size=n) * 3),
         ("binary:logistic", None, lambda r, n: r.integers(0, 2, n).astype(float)),
         ("multi:softprob", 4, lambda r, n: r.integers(0, 4, n).astype(float))]


@pytest.mark.parametrize("name,k,labels", CASES)
def test_gradient_and_hessian_match_finite_differences(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(0)
    n, K = 200, obj.n_outputs
    y = labels(r, n)
    w = r.uniform(0.5, 2.0, n)
    raw = r.normal(size=(n, K)) * 2
    gh = np.empty((K, n, 2), np.float32)
    obj.gradient(y, raw, w, gh)
    eps = 1e-5
    for c in range(K):
        up, down = raw.copy(), raw.copy()
        up[:, c] += eps
        down[:, c] -= eps
        num_g = w * (obj.loss(y, up) - obj.loss(y, down)) / (2 * eps)
        np.testing.assert_allclose(gh[c, :, 0], num_g, rtol=1e-4, atol=1e-5)
        # hessian (diagonal) from differences of the analytic gradient
        gu, gd = np.empty_like(gh), np.empty_like(gh)
        obj.gradient(y, up, w, gu)
        obj.gradient(y, down, w, gd)
        num_h = (gu[c, :, 0].astype(float) - gd[c, :, 0]) / (2 * eps)
        np.testing.assert_allclose(gh[c, :, 1], num_h, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name,k,labels", CASES)
def test_extreme_margins_give_finite_derivatives(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(1)
    n = 50
    y = labels(r, n)
    raw = np.where(r.random((n, obj.n_outputs)) < 0.5, -800.0, 800.0)
    gh = np.empty((obj.n_outputs, n, 2), np.float32)
    obj.gradient(y, raw, np.ones(n), gh)
    assert np.all(np.isfinite(gh)) and np.all(gh[:, :, 1] > 0)
    assert np.all(np.isfinite(obj.transform(raw)))


@pytest.mark.parametrize("name,k,labels", CASES)
def test_initial_score_minimises_the_loss(name, k, labels):
    obj = get_objective(name, k)
    r = np.random.default_rng(2)
    n = 300
    y = labels(r, n)
    w = r.uniform(0.1, 3.0, n)
    c = obj.init_score(y, w)
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
