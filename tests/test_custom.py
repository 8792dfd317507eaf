"""Custom objectives (Python callable and compiled elementwise) and custom metrics."""
import numpy as np
import pytest

import boostwood as bw


def _data(n=3000, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 4))
    return X, X[:, 0] * 2 + r.normal(size=n), r.uniform(0.5, 2.0, n)


@bw.objective
def squared(label, margin):
    return margin - label, 1.0


@bw.objective
def logistic(label, margin):
    p = 1.0 / (1.0 + np.exp(-margin))
    return p - label, max(p * (1.0 - p), 1e-16)


def test_custom_objectives_reproduce_the_built_in_loss_exactly():
    X, y, w = _data()
    p = {"objective": "reg:squarederror", "base_score": 0.0, "max_depth": 4}
    built_in = bw.train(p, bw.Dataset(X, y, weight=w), 10, verbose_eval=False)

    def python_squared(preds, dtrain):  # XGBoost's signature; weights are the function's job
        return (preds - dtrain.get_label()) * dtrain.get_weight(), dtrain.get_weight()

    for obj in (squared, python_squared):
        model = bw.train(p, bw.Dataset(X, y, weight=w), 10, verbose_eval=False, obj=obj)
        np.testing.assert_array_equal(model.predict(X), built_in.predict(X))


def test_compiled_logistic_matches_binary_logistic_and_keeps_the_link():
    X, _, _ = _data(seed=1)
    y = (X[:, 0] + X[:, 1] > 0).astype(float)
    p = {"objective": "binary:logistic", "base_score": 0.5, "max_depth": 3}
    built_in = bw.train(p, bw.Dataset(X, y), 10, verbose_eval=False)
    custom = bw.train(p, bw.Dataset(X, y), 10, verbose_eval=False, obj=logistic)
    # exp in the user's function and in the kernel may differ in the last bit
    np.testing.assert_allclose(custom.predict(X), built_in.predict(X), rtol=1e-6)
    assert custom.predict(X).min() >= 0 and custom.predict(X).max() <= 1  # the link applies


def test_bad_custom_objectives_raise_clear_errors():
    X, y, _ = _data(n=200)
    d = bw.Dataset(X, y)
    with pytest.raises(TypeError, match="callable"):
        bw.train({}, d, 1, obj="squared")
    with pytest.raises(TypeError, match=r"\(grad, hess\)"):
        bw.train({}, d, 1, obj=lambda p, d: p)
    with pytest.raises(ValueError, match="shape"):
        bw.train({}, d, 1, obj=lambda p, d: (p[:10], p[:10]))
    with pytest.raises(ValueError, match="non-finite"):
        bw.train({}, d, 1, obj=lambda p, d: (p * np.nan, np.ones_like(p)))
    with pytest.raises(TypeError, match="decorates a function"):
        bw.objective(3)


def test_custom_metric_is_logged_and_drives_early_stopping():
    X, y, _ = _data(seed=2)
    dtr, dva = bw.Dataset(X[:2000], y[:2000]), bw.Dataset(X[2000:], y[2000:])
    calls = []

    def worst_error(preds, dataset):
        calls.append(len(preds))
        return "max_abs", float(np.max(np.abs(preds - dataset.get_label())))

    ev = {}
    b = bw.train({"eta": 0.3}, dtr, 200, evals=[(dva, "valid")], evals_result=ev,
                 custom_metric=worst_error, early_stopping_rounds=5, verbose_eval=False)
    assert list(ev["valid"]) == ["rmse", "max_abs"] and calls[0] == 1000
    best = int(np.argmin(ev["valid"]["max_abs"]))
    assert b.best_iteration == best and len(ev["valid"]["max_abs"]) == best + 6
    with pytest.raises(TypeError, match="name, value"):
        bw.train({}, dtr, 1, evals=[(dva, "v")], custom_metric=lambda p, d: 1.0,
                 verbose_eval=False)


def test_custom_hessians_summing_to_zero_or_less_are_refused_negative_ones_warned():
    """Hessians summing to 0 or less broke every Newton step without a word: a Python
    objective's stopped every split (the model learned nothing), a compiled one's were
    clamped to 0 (leaves -G / lambda, margins near 1e5). That is an error now. Some
    negative ones (focal losses) train, as in XGBoost and LightGBM, with one warning;
    first-order boosting without leaf Newton steps does not read them."""
    import warnings
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(float)
    d = bw.Dataset(X, y)

    @bw.objective
    def concave(label, margin):
        return margin - label, -1.0

    for obj in (concave, lambda p, dt: (p - dt.label, -np.ones_like(p))):
        with pytest.raises(ValueError, match="hessians sum to -200 <= 0"):
            bw.train({}, d, 2, obj=obj)
    half = np.where(np.arange(200) % 2 == 0, 1.0, -0.5)
    with pytest.warns(RuntimeWarning, match="100 negative hessians in round 1") as caught:
        b = bw.train({}, d, 3, obj=lambda p, dt: (p - dt.label, half))
    assert len(caught) == 1 and b.num_boosted_rounds() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for search in ("none", "global"):
            bw.train({"boosting": "gradient", "line_search": search}, d, 2, obj=concave)
