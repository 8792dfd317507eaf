"""boosting="gradient": Friedman's first-order machine, and multi-quantile regression."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import boostwood as bw

import shared_data
from conftest import make_classification, make_regression

GB = dict(boosting="gradient", max_depth=3, eta=0.1, reg_lambda=0.0, min_child_weight=0.0)


def _leaf_rows(booster, X):
    return booster.predict(X, pred_leaf=True)


def _one_round(params, X, y, w=None):
    return bw.train({**GB, **params}, bw.Dataset(X, label=y, weight=w), 1, verbose_eval=False)


def _minimise(fn, lo=-50.0, hi=50.0):
    """Brute-force argmin of a convex function of one variable (golden-section search)."""
    g = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(200):
        c, d = b - g * (b - a), a + g * (b - a)
        if fn(c) < fn(d):
            b = d
        else:
            a = c
    return 0.5 * (a + b)


@pytest.mark.parametrize("objective,extra", [("reg:squarederror", {}),
                                             ("reg:absoluteerror", {}),
                                             ("reg:quantileerror", {"quantile_alpha": 0.8})])
def test_leaves_are_the_line_search_minimisers(objective, extra):
    """Each leaf gamma_j = argmin sum_{i in leaf} w L(y, F0 + gamma), found by brute force."""
    X, y = make_regression(n=600, seed=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    b = _one_round({"objective": objective, **extra}, X, y, w)
    f0 = b.base_score[0]
    obj = b.objective
    leaf = _leaf_rows(b, X)[:, 0]
    tree = b.trees[0]
    for j in np.unique(leaf):
        rows = leaf == j

        def total(gamma):
            return np.sum(w[rows] * obj.loss(y[rows], np.full((rows.sum(), 1), f0 + gamma)))

        best = _minimise(total)
        got = tree.value[j] / 0.1
        assert total(got) <= total(best) + 1e-7 * max(1.0, abs(total(best)))


def test_logistic_leaves_follow_the_notes_equation_16():
    """gamma_j = sum r / sum |r| (1 - |r|) with r = y - p (003 eq. 16)."""
    X, y = make_classification(n=800, seed=4)
    b = _one_round({"objective": "binary:logistic"}, X, y)
    p0 = 1 / (1 + np.exp(-b.base_score[0]))
    r = y - p0
    leaf = _leaf_rows(b, X)[:, 0]
    for j in np.unique(leaf):
        rj = r[leaf == j]
        want = rj.sum() / np.sum(np.abs(rj) * (1 - np.abs(rj)))
        assert b.trees[0].value[j] / 0.1 == pytest.approx(want, rel=1e-5)


def test_softmax_leaves_follow_the_notes_equation_20():
    """gamma_jk = (K-1)/K sum r / sum |r| (1 - |r|), r = [y = k] - p_k (003 eq. 20)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(900, 4))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=900), [-0.5, 0.5]).astype(float)
    K = 3
    b = _one_round({"objective": "multi:softprob", "num_class": K}, X, y)
    p0 = np.exp(b.base_score) / np.exp(b.base_score).sum()
    leaves = _leaf_rows(b, X)
    for k in range(K):
        r = (y == k) - p0[k]
        for j in np.unique(leaves[:, k]):
            rj = r[leaves[:, k] == j]
            want = (K - 1) / K * rj.sum() / np.sum(np.abs(rj) * (1 - np.abs(rj)))
            assert b.trees[k].value[j] / 0.1 == pytest.approx(want, rel=1e-5)


def test_structure_is_a_least_squares_tree_on_the_pseudo_residuals():
    """The first logistic tree splits exactly like a squared-error tree fitted to r = y - p0."""
    X, y = make_classification(n=1500, seed=6)
    b = _one_round({"objective": "binary:logistic", "tree_method": "exact"}, X, y)
    r = y - 1 / (1 + np.exp(-b.base_score[0]))
    ls = _one_round({"objective": "reg:squarederror", "tree_method": "exact", "base_score": 0.0},
                    X, r)
    assert np.array_equal(b.trees[0].feature, ls.trees[0].feature)
    split = b.trees[0].feature >= 0
    assert np.allclose(b.trees[0].threshold[split], ls.trees[0].threshold[split])


@pytest.mark.parametrize("objective", ["binary:logistic", "reg:absoluteerror", "reg:squarederror"])
def test_global_line_search_finds_the_best_step(objective):
    """line_search="global": the tree is rho times the least-squares tree ("none"), and rho
    minimises the training loss along that direction (notes 000, step 2.3)."""
    X, y = make_classification(n=700, seed=7)
    none = _one_round({"objective": objective, "line_search": "none"}, X, y)
    glob = _one_round({"objective": objective, "line_search": "global"}, X, y)
    leaf = (none.trees[0].feature < 0) & (none.trees[0].value != 0)
    ratio = glob.trees[0].value[leaf] / none.trees[0].value[leaf]
    rho = ratio[0]
    assert np.allclose(ratio, rho, rtol=1e-9)
    h = (none.predict(X, output_margin=True) - none.base_score[0]) / 0.1  # the LS tree
    obj = none.objective

    def total(step):
        return obj.loss(y, (none.base_score[0] + step * h)[:, None]).sum()

    best = _minimise(total, 0.0, 200.0)
    assert total(rho) <= total(best) + 1e-6 * total(best)
    if objective == "reg:squarederror":  # the least-squares tree is already the best step
        assert rho == pytest.approx(1.0, rel=1e-6)
    else:
        assert rho != pytest.approx(1.0, rel=1e-2)


def test_gradient_boosting_reduces_training_loss_every_round():
    X, y = make_classification(n=1000, seed=8)
    log = {}
    d = bw.Dataset(X, label=y)
    bw.train({**GB, "objective": "binary:logistic", "eval_metric": "logloss"}, d, 30,
             evals=[(d, "train")], evals_result=log, verbose_eval=False)
    loss = np.array(log["train"]["logloss"])
    assert np.all(np.diff(loss) < 0)


def test_gradient_boosting_params_are_validated():
    X, y = make_regression(n=100)
    with pytest.raises(ValueError, match="boosting"):
        bw.train({"boosting": "dart"}, bw.Dataset(X, label=y), 1)
    with pytest.raises(ValueError, match="line_search"):
        bw.train({"boosting": "gradient", "line_search": "wolfe"}, bw.Dataset(X, label=y), 1)


def test_gradient_model_round_trips(tmp_path):
    X, y = make_classification(n=500, seed=9)
    b = bw.train({**GB, "objective": "binary:logistic", "subsample": 0.7}, bw.Dataset(X, label=y),
                 10)
    b.save_model(tmp_path / "m.json")
    again = bw.Booster(model_file=tmp_path / "m.json")
    assert np.array_equal(again.predict(X), b.predict(X))
    assert again.params["boosting"] == "gradient"


# -- parity with scikit-learn's GradientBoostingRegressor / Classifier ----------------------------

sk_ensemble = pytest.importorskip("sklearn.ensemble")
sk_metrics = pytest.importorskip("sklearn.metrics")


def _rel(a, b):
    return abs(a / b - 1)


@pytest.mark.parametrize("loss,objective,extra", [
    ("squared_error", "reg:squarederror", {}),
    ("absolute_error", "reg:absoluteerror", {}),
    ("quantile", "reg:quantileerror", {"quantile_alpha": 0.9}),
])
def test_matches_sklearn_regressor_on_california_housing(loss, objective, extra):
    Xtr, Xte, ytr, yte, _, _ = shared_data.split(*shared_data.california_housing())
    sk = sk_ensemble.GradientBoostingRegressor(loss=loss, alpha=0.9, max_depth=3,
                                               learning_rate=0.1, n_estimators=100, subsample=1.0,
                                               random_state=0).fit(Xtr, ytr)
    ours = bw.train({**GB, "objective": objective, "tree_method": "exact", **extra},
                    bw.Dataset(Xtr, label=ytr), 100)
    if loss == "quantile":
        score = lambda p: sk_metrics.mean_pinball_loss(yte, p, alpha=0.9)  # noqa: E731
    elif loss == "absolute_error":
        score = lambda p: sk_metrics.mean_absolute_error(yte, p)  # noqa: E731
    else:
        score = lambda p: sk_metrics.mean_squared_error(yte, p) ** 0.5  # noqa: E731
    ref, got = score(sk.predict(Xte)), score(ours.predict(Xte))
    assert _rel(got, ref) <= 0.01, (ref, got)


def test_matches_sklearn_classifier_on_default_credit():
    Xtr, Xte, ytr, yte, _, _ = shared_data.split(*shared_data.default_credit())
    sk = sk_ensemble.GradientBoostingClassifier(max_depth=3, learning_rate=0.1, n_estimators=100,
                                                subsample=1.0, random_state=0).fit(Xtr, ytr)
    ours = bw.train({**GB, "objective": "binary:logistic", "tree_method": "exact"},
                    bw.Dataset(Xtr, label=ytr), 100)
    ps, pb = sk.predict_proba(Xte)[:, 1], ours.predict(Xte)
    assert _rel(sk_metrics.log_loss(yte, pb), sk_metrics.log_loss(yte, ps)) <= 0.01
    assert _rel(sk_metrics.roc_auc_score(yte, pb), sk_metrics.roc_auc_score(yte, ps)) <= 0.01


def test_matches_sklearn_multiclass_on_covertype():
    Xtr, Xte, ytr, yte, _, _ = shared_data.split(*shared_data.covertype())
    sk = sk_ensemble.GradientBoostingClassifier(max_depth=3, learning_rate=0.1, n_estimators=20,
                                                random_state=0).fit(Xtr, ytr)
    ours = bw.train({**GB, "objective": "multi:softprob", "num_class": 7, "tree_method": "exact"},
                    bw.Dataset(Xtr, label=ytr), 20)
    ps, pb = sk.predict_proba(Xte), ours.predict(Xte)
    assert _rel(sk_metrics.log_loss(yte, pb), sk_metrics.log_loss(yte, ps)) <= 0.01


# -- several quantiles in one model -------------------------------------------------------------

def test_multi_quantile_margins_equal_separate_models():
    """Each level's trees depend on its own margins only, so one call with a list of
    levels grows the same trees as one model per level."""
    X, y = make_regression(n=800, seed=10)
    alphas = [0.1, 0.5, 0.9]
    params = {"objective": "reg:quantileerror", "max_depth": 3, "eta": 0.2}
    multi = bw.train({**params, "quantile_alpha": alphas}, bw.Dataset(X, label=y), 15)
    raw = multi.predict(X, output_margin=True)
    assert raw.shape == (800, 3)
    for k, a in enumerate(alphas):
        one = bw.train({**params, "quantile_alpha": a}, bw.Dataset(X, label=y), 15)
        assert np.allclose(raw[:, k], one.predict(X, output_margin=True))


def test_multi_quantile_levels_are_sorted_and_cover():
    X, y = make_regression(n=3000, seed=11)
    b = bw.train({"objective": "reg:quantileerror", "quantile_alpha": [0.9, 0.1, 0.5], "eta": 0.1},
                 bw.Dataset(X, label=y), 60)
    assert b.params["quantile_alpha"] == [0.1, 0.5, 0.9]
    pred = b.predict(X)
    cover = (y[:, None] <= pred).mean(axis=0)
    assert np.allclose(cover, [0.1, 0.5, 0.9], atol=0.03)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000),
       alphas=st.lists(st.floats(0.02, 0.98), min_size=2, max_size=5, unique=True),
       noise=st.floats(0.0, 3.0))
def test_multi_quantile_predictions_never_cross(seed, alphas, noise):
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.normal(size=(n, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + noise * rng.standard_cauchy(n)
    alphas = sorted(set(round(a, 4) for a in alphas))
    if len(alphas) < 2:
        return
    b = bw.train({"objective": "reg:quantileerror", "quantile_alpha": alphas, "max_depth": 3,
                  "eta": 0.5, "subsample": 0.8, "seed": seed}, bw.Dataset(X, label=y), 8)
    Xnew = rng.normal(size=(200, 3)) * 3
    pred = b.predict(Xnew)
    assert pred.shape == (200, len(alphas))
    assert np.all(np.diff(pred, axis=1) >= 0)


def test_multi_quantile_metric_and_bad_levels():
    X, y = make_regression(n=300)
    d = bw.Dataset(X, label=y)
    log = {}
    bw.train({"objective": "reg:quantileerror", "quantile_alpha": [0.25, 0.75]}, d, 3,
             evals=[(d, "train")], evals_result=log, verbose_eval=False)
    assert len(log["train"]["quantile"]) == 3
    for bad, msg in [([], "empty"), ([0.5, 0.5], "repeated"), ([0.2, 1.0], r"\(0, 1\)"),
                     ([0.0, 0.5], "quantile_alpha")]:
        with pytest.raises(ValueError, match=msg):
            bw.train({"objective": "reg:quantileerror", "quantile_alpha": bad}, d, 1)
    with pytest.raises(TypeError):
        bw.train({"objective": "reg:quantileerror", "quantile_alpha": ["a", 0.5]}, d, 1)


@pytest.mark.parametrize("params", [
    dict(tree_method="hist", grow_policy="lossguide", max_leaves=31),
    dict(tree_method="hist", grow_policy="depthwise", max_depth=5),
    dict(tree_method="approx", max_depth=4),
    dict(tree_method="exact", max_depth=4)])
def test_bagged_training_margins_are_the_models_predictions(params):
    """With row subsampling the rows in a tree's bag take its leaf values from the
    partition and the rows outside it walk the tree: every training margin is what the
    model predicts, to the bit (the training RMSE of the probabilities equals the one of
    predict's). Zero weights keep rows out of exact/approx growth the same way."""
    r = np.random.default_rng(11)
    X = r.normal(size=(3000, 5))
    X[r.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + r.normal(size=3000) > 0).astype(float)
    w = np.where(r.random(3000) < 0.1, 0.0, 1.0) if params["tree_method"] != "hist" else None
    d = bw.Dataset(X, y, weight=w)
    log = {}
    p = dict(params, objective="binary:logistic", eta=0.3, subsample=0.6, seed=3,
             eval_metric="rmse")
    b = bw.train(p, d, 12, evals=[(d, "train")], evals_result=log, verbose_eval=False)
    from boostwood.boosting.metrics import get_metric
    expect = get_metric("rmse")(y, b.predict(X), np.ones(3000) if w is None else w)
    assert log["train"]["rmse"][-1] == expect


def test_bagging_freq_keeps_each_bag_for_k_rounds(monkeypatch):
    """LightGBM's bagging_freq (subsample_freq): every k-th round draws a new bag, the
    rounds between keep it (their draws keyed by the round that drew it); 0 turns
    bagging off (the model of subsample=1); the default, 1, draws every round (XGBoost's
    subsample). With k = 3, the training margins are still the model's predictions."""
    import boostwood.boosting._state as state
    keys = []
    real = state.split_rows

    def spy(seed, stream, key, *args):
        keys.append(key)
        return real(seed, stream, key, *args)

    monkeypatch.setattr(state, "split_rows", spy)
    r = np.random.default_rng(4)
    X = r.normal(size=(2000, 4))
    y = (X[:, 0] + r.normal(size=2000) > 0).astype(float)
    d = bw.Dataset(X, y)
    p = dict(objective="binary:logistic", subsample=0.6, seed=5, eval_metric="rmse")
    log = {}
    every3 = bw.train(dict(p, bagging_freq=3), d, 7, evals=[(d, "t")], evals_result=log,
                      verbose_eval=False)
    assert keys == [1, 1, 1, 4, 4, 4, 7]  # (rounds count from 1 here)
    from boostwood.boosting.metrics import get_metric
    assert log["t"]["rmse"][-1] == get_metric("rmse")(y, every3.predict(X), np.ones(2000))
    keys.clear()
    every1 = bw.train(p, d, 7, verbose_eval=False)
    assert keys == list(range(1, 8)) and every1.dump_model() != every3.dump_model()
    keys.clear()
    off = bw.train(dict(p, subsample_freq=0), d, 7, verbose_eval=False)
    assert keys == []
    assert off.dump_model() == bw.train(dict(p, subsample=1.0), d, 7,
                                        verbose_eval=False).dump_model()


@pytest.mark.parametrize("threshold", [1.0, -1.0])
def test_is_unbalance_weighs_the_rarer_class_as_lightgbm(threshold):
    """is_unbalance (LightGBM's): the rarer class's rows weigh majority / minority times,
    the other class's as given, whichever class is rarer (LightGBM scales the negatives
    when positives are the majority; checked: its is_unbalance model equals its model of
    these weights to 2e-8 with boost_from_average off). Here the initial margin follows
    the balanced weights, as scale_pos_weight's does; LightGBM starts from the unbalanced
    labels' log-odds. Refused beside scale_pos_weight and for other objectives."""
    r = np.random.default_rng(6)
    X = r.normal(size=(1500, 3))
    y = (X[:, 0] + 0.3 * r.normal(size=1500) > threshold).astype(float)
    w = r.uniform(0.5, 2.0, size=1500)
    pos, neg = y.sum(), (1 - y).sum()
    rule = np.where(y == 1, neg / pos, 1.0) if neg > pos else np.where(y == 1, 1.0, pos / neg)
    exact = {"objective": "binary:logistic", "tree_method": "exact"}  # (bins follow weights)
    a = bw.train(dict(exact, is_unbalance=True), bw.Dataset(X, y, weight=w), 4,
                 verbose_eval=False)
    b = bw.train(exact, bw.Dataset(X, y, weight=w * rule), 4, verbose_eval=False)
    assert a.dump_model() == b.dump_model()
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    for params, match in (({"scale_pos_weight": 2.0}, "cannot be used together"),
                          ({"objective": "reg:logistic"}, "binary objectives only")):
        with pytest.raises(ValueError, match=match):
            bw.train(dict({"objective": "binary:logistic", "unbalance": True}, **params),
                     bw.Dataset(X, y), 1)
