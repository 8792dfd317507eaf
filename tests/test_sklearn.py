"""Behaviour of the scikit-learn estimators beyond scikit-learn's generic checks."""
import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import cross_val_score  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood import Booster, GBDTClassifier, GBDTRegressor  # noqa: E402

from conftest import make_classification, make_regression  # noqa: E402


def test_string_labels_multiclass_and_proba():
    r = np.random.default_rng(0)
    X = r.normal(size=(600, 4))
    y = np.array(["cat", "dog", "emu"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    clf = GBDTClassifier(n_estimators=20).fit(X, y)
    assert list(clf.classes_) == ["cat", "dog", "emu"] and clf.n_classes_ == 3
    p = clf.predict_proba(X)
    assert p.shape == (600, 3) and np.allclose(p.sum(axis=1), 1)
    assert (clf.predict(X) == y).mean() > 0.95
    assert clf.apply(X).shape == (600, 60)


def test_binary_proba_columns_follow_classes():
    X, y = make_classification(800, 4)
    labels = np.where(y == 1, 7, -3)
    clf = GBDTClassifier(n_estimators=20).fit(X, labels)
    p = clf.predict_proba(X)
    assert list(clf.classes_) == [-3, 7]
    assert np.array_equal(clf.predict(X), np.where(p[:, 1] > p[:, 0], 7, -3))


def test_early_stopping_with_eval_set_and_validation_fraction():
    X, y = make_classification(3000, 6, seed=2)
    clf = GBDTClassifier(n_estimators=400, learning_rate=0.5, early_stopping_rounds=5)
    clf.fit(X[:2000], y[:2000], eval_set=[(X[2000:], y[2000:])])
    assert clf.best_iteration_ is not None and clf.n_estimators_ < 400
    assert set(clf.evals_result_) == {"validation_0"}
    reg = GBDTRegressor(n_estimators=400, learning_rate=0.5, early_stopping_rounds=5,
                        validation_fraction=0.2)
    Xr, yr = make_regression(2000, 5)
    reg.fit(Xr, yr)
    assert reg.n_estimators_ < 400 and reg.best_iteration_ is not None


def test_eval_set_with_unseen_label_is_rejected():
    X, y = make_classification(300, 4)
    with pytest.raises(ValueError, match="not seen in training"):
        GBDTClassifier(n_estimators=3).fit(X, y, eval_set=[(X, np.full(300, 5.0))])


def test_feature_names_from_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = make_regression(300, 4)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    reg = GBDTRegressor(n_estimators=10).fit(df, y)
    assert list(reg.feature_names_in_) == ["a", "b", "c", "d"]
    assert reg.booster_.feature_names == ["a", "b", "c", "d"]
    imp = reg.feature_importances_
    assert imp.shape == (4,) and imp.sum() == pytest.approx(1.0) and imp[0] == imp.max()


def test_native_params_map_every_estimator_parameter():
    """Changing any estimator parameter changes the parameters train() receives."""
    from boostwood.boosting.params import resolve_params
    # (categorical_features goes to the Dataset: tests/test_categorical.py checks it)
    not_train = {"n_estimators", "early_stopping_rounds", "validation_fraction", "importance_type",
                 "categorical_features"}
    new_values = {"grow_policy": "lossguide", "tree_method": "exact", "eval_metric": "mae",
                  "base_score": 0.3, "random_state": 5, "n_jobs": 1, "verbose": True,
                  "max_bin": 63, "boosting": "gradient", "line_search": "global",
                  "objective": "reg:absoluteerror", "quantile_alpha": 0.3, "huber_delta": 2.0,
                  "tweedie_variance_power": 1.2, "use_quantized_grad": True}
    base = resolve_params(GBDTRegressor()._native_params())
    for name, default in GBDTRegressor().get_params().items():
        if name in not_train:
            continue
        if name in new_values:
            value = new_values[name]
        elif isinstance(default, float):
            value = default * 0.5 + 0.01 if default <= 1 else default + 1
        else:
            value = (default or 0) + 3
        changed = resolve_params(GBDTRegressor(**{name: value})._native_params())
        assert changed != base, name
    p = resolve_params(GBDTRegressor(learning_rate=0.07, reg_alpha=0.5)._native_params())
    assert p["eta"] == 0.07 and p["alpha"] == 0.5


def test_regressor_passes_huber_slope_to_the_pseudo_huber_loss():
    """GBDTRegressor(objective='reg:pseudohubererror', huber_slope=d) is train's model with
    that d (it had no such parameter: the loss always ran with d = 1), and d matters."""
    X, y = make_regression(500, 4, seed=3)
    y = y * 20.0
    m = GBDTRegressor(objective="reg:pseudohubererror", huber_slope=5.0, n_estimators=5)
    m.fit(X, y)
    b = bw.train({"objective": "reg:pseudohubererror", "huber_slope": 5.0, "max_depth": 6,
                  "eta": 0.1}, bw.Dataset(X, y), 5, verbose_eval=False)
    np.testing.assert_array_equal(m.predict(X), b.predict(X))
    one = GBDTRegressor(objective="reg:pseudohubererror", n_estimators=5).fit(X, y)
    assert not np.allclose(one.predict(X), m.predict(X))
    assert m.booster_.params["huber_slope"] == 5.0


def test_subsample_freq_is_lightgbms_bagging_frequency():
    """LGBMClassifier's subsample_freq: the bag is kept for k rounds (the model train()
    grows with bagging_freq=k), 0 turns bagging off; a negative value is refused."""
    X, y = make_classification(600, 5, seed=4)
    m = GBDTClassifier(n_estimators=6, subsample=0.6, subsample_freq=3, random_state=2)
    m.fit(X, y)
    b = bw.train({"objective": "binary:logistic", "subsample": 0.6, "bagging_freq": 3,
                  "seed": 2, "max_depth": 6, "eta": 0.1}, bw.Dataset(X, y), 6,
                 verbose_eval=False)
    np.testing.assert_array_equal(m.predict_proba(X)[:, 1], b.predict(X))
    every = GBDTClassifier(n_estimators=6, subsample=0.6, random_state=2).fit(X, y)
    assert not np.array_equal(every.predict_proba(X), m.predict_proba(X))
    off = GBDTClassifier(n_estimators=6, subsample=0.6, subsample_freq=0).fit(X, y)
    full = GBDTClassifier(n_estimators=6).fit(X, y)
    np.testing.assert_array_equal(off.predict_proba(X), full.predict_proba(X))
    with pytest.raises(ValueError, match="subsample_freq"):
        GBDTClassifier(subsample_freq=-1).fit(X, y)


def test_invalid_parameter_raises_at_fit():
    X, y = make_regression(100, 4)
    with pytest.raises(ValueError, match="subsample"):
        GBDTRegressor(subsample=0.0).fit(X, y)
    with pytest.raises(ValueError, match="grow_policy"):
        GBDTRegressor(grow_policy="random").fit(X, y)


def test_works_in_cross_validation_and_clone():
    X, y = make_classification(600, 4)
    scores = cross_val_score(GBDTClassifier(n_estimators=20), X, y, cv=3)
    assert scores.mean() > 0.8
    est = clone(GBDTClassifier(n_estimators=5, max_depth=2))
    assert est.get_params()["max_depth"] == 2


def test_booster_of_the_estimator_round_trips(tmp_path):
    X, y = make_regression(500, 4)
    reg = GBDTRegressor(n_estimators=15).fit(X, y)
    reg.booster_.save_model(tmp_path / "reg.json")
    assert np.array_equal(Booster(model_file=tmp_path / "reg.json").predict(X), reg.predict(X))


def test_regressor_objectives_and_quantile_levels():
    from boostwood.sklearn import GBDTRegressor
    X, y = make_regression(n=600)
    m = GBDTRegressor(objective="reg:quantileerror", quantile_alpha=[0.8, 0.2], n_estimators=30)
    pred = m.fit(X, y).predict(X)
    assert pred.shape == (600, 2) and np.all(pred[:, 0] <= pred[:, 1])
    assert m.booster_.params["quantile_alpha"] == [0.2, 0.8]
    counts = np.random.default_rng(0).poisson(np.exp(X[:, 0]))
    assert GBDTRegressor(objective="count:poisson", n_estimators=5).fit(X, counts).predict(X).min() > 0
    with pytest.raises(ValueError, match="regression objective"):
        GBDTRegressor(objective="binary:logistic").fit(X, (y > 0).astype(float))
    with pytest.raises(ValueError, match="non-negative"):
        GBDTRegressor(objective="count:poisson").fit(X, y)


def test_classifier_class_weight_is_scikit_learn_s_sample_weight_product():
    """``class_weight`` (scikit-learn's and LGBMClassifier's; before: an unknown parameter,
    a TypeError): the model of ``sample_weight`` times ``compute_sample_weight`` to the
    bit, for "balanced" and a dict of string labels, multiplied into given weights and
    into the validation split of early stopping."""
    from sklearn.utils.class_weight import compute_sample_weight
    r = np.random.default_rng(3)
    X = r.normal(size=(900, 4))
    y = np.array(["no", "maybe", "yes"])[np.digitize(X[:, 0] + r.normal(size=900), [0.8, 1.6])]
    sw = r.uniform(0.5, 2.0, 900)
    for cw in ("balanced", {"yes": 5.0, "maybe": 2.0}):
        kw = dict(n_estimators=8, max_depth=3, early_stopping_rounds=3)
        a = GBDTClassifier(class_weight=cw, **kw).fit(X, y, sample_weight=sw)
        b = GBDTClassifier(**kw).fit(X, y, sample_weight=sw * compute_sample_weight(cw, y))
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
        assert a.evals_result_ == b.evals_result_
    plain = GBDTClassifier(n_estimators=8, max_depth=3).fit(X, y)
    heavy = GBDTClassifier(n_estimators=8, max_depth=3, class_weight={"yes": 20.0}).fit(X, y)
    assert np.mean(heavy.predict(X) == "yes") > np.mean(plain.predict(X) == "yes")
    with pytest.raises(ValueError, match=r"not in y: \['nope'\]"):
        GBDTClassifier(n_estimators=2, class_weight={"nope": 2.0}).fit(X, y)
    for bad in ("heavy", {"yes": -1.0}, [1.0, 2.0]):
        with pytest.raises((ValueError, TypeError), match="class_weight"):
            GBDTClassifier(n_estimators=2, class_weight=bad).fit(X, y)


def test_classifier_scale_pos_weight_weighs_the_second_class():
    """``scale_pos_weight`` (XGBClassifier's): the model of weighting ``classes_[1]``'s
    rows, probabilities shifted towards it; refused for more than two classes."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 4))
    y = np.where(X[:, 0] + rng.normal(size=600) > 1.2, "pos", "neg")
    a = GBDTClassifier(n_estimators=5, tree_method="exact", scale_pos_weight=4.0).fit(X, y)
    b = GBDTClassifier(n_estimators=5, tree_method="exact").fit(
        X, y, sample_weight=np.where(y == "pos", 4.0, 1.0))
    plain = GBDTClassifier(n_estimators=5, tree_method="exact").fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean() + 0.1
    with pytest.raises(ValueError, match="binary objectives and reg:logistic only"):
        GBDTClassifier(n_estimators=2, scale_pos_weight=2.0).fit(X, np.digitize(X[:, 0], [0, 1]))
    for bad in (0.0, -1.0, np.inf):
        with pytest.raises(ValueError, match="scale_pos_weight"):
            GBDTClassifier(n_estimators=2, scale_pos_weight=bad).fit(X, y)


def test_classifier_is_unbalance_weighs_the_rarer_class():
    """``is_unbalance`` (LGBMClassifier's): the model of weighting the rarer class's rows
    by majority / minority (here the second class is the majority, so the first class is
    scaled up), after ``class_weight``; refused beside ``scale_pos_weight``, for three
    classes, and for a value that is not a bool. The ratio counts rows, not weights (as
    LightGBM's)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(800, 4))
    y = np.where(X[:, 0] + rng.normal(size=800) > -1.0, "common", "rare")
    n_rare = np.sum(y == "rare")
    ratio = (y.size - n_rare) / n_rare
    a = GBDTClassifier(n_estimators=5, tree_method="exact", is_unbalance=True).fit(X, y)
    b = GBDTClassifier(n_estimators=5, tree_method="exact").fit(
        X, y, sample_weight=np.where(y == "rare", ratio, 1.0))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    plain = GBDTClassifier(n_estimators=5, tree_method="exact").fit(X, y)
    assert a.predict_proba(X)[:, 1].mean() > plain.predict_proba(X)[:, 1].mean() + 0.1
    both = GBDTClassifier(n_estimators=5, tree_method="exact", is_unbalance=True,
                          class_weight={"common": 2.0}).fit(X, y)
    c = GBDTClassifier(n_estimators=5, tree_method="exact").fit(  # rows counted, as LightGBM
        X, y, sample_weight=np.where(y == "rare", ratio, 2.0))
    np.testing.assert_allclose(both.predict_proba(X), c.predict_proba(X), rtol=1e-12)
    with pytest.raises(ValueError, match="is_unbalance and scale_pos_weight"):
        GBDTClassifier(n_estimators=2, is_unbalance=True, scale_pos_weight=2.0).fit(X, y)
    with pytest.raises(ValueError, match="binary objectives only"):
        GBDTClassifier(n_estimators=2, is_unbalance=True).fit(
            X, np.digitize(X[:, 0], [0, 1]))
    with pytest.raises((TypeError, ValueError), match="is_unbalance"):
        GBDTClassifier(n_estimators=2, is_unbalance="yes").fit(X, y)


def test_staged_predictions_and_get_booster():
    """scikit-learn's staged predictions: each stage r equals the booster's prediction
    over rounds [0, r + 1) to the last bit, up to best_iteration_ after early stopping
    (the last stage is predict's); get_booster is XGBoost's name for booster_."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y3 = np.digitize(np.nan_to_num(X[:, 0]), [-0.5, 0.5])
    yr = np.nan_to_num(X[:, 0]) + 0.1 * rng.normal(size=400)
    models = [GBDTClassifier(n_estimators=6).fit(X, y3),
              GBDTClassifier(n_estimators=6).fit(X, np.array(["a", "b"])[(y3 > 0).astype(int)]),
              GBDTRegressor(n_estimators=6).fit(X, yr),
              GBDTRegressor(n_estimators=6, objective="reg:quantileerror",
                            quantile_alpha=[0.2, 0.8]).fit(X, yr),
              GBDTRegressor(n_estimators=40, learning_rate=0.5, early_stopping_rounds=2).fit(
                  X, yr + rng.normal(size=400))]
    for m in models:
        b = m.get_booster()
        assert b is m.booster_
        stages = list(m.staged_predict(X))
        rounds = b.num_boosted_rounds() if m.best_iteration_ is None else m.best_iteration_ + 1
        assert len(stages) == rounds
        np.testing.assert_array_equal(stages[-1], m.predict(X))
        sp = pytest.importorskip("scipy.sparse")
        np.testing.assert_array_equal(list(m.staged_predict(sp.csr_matrix(np.nan_to_num(X))))[-1],
                                      m.predict(np.nan_to_num(X)))
        for r in (0, len(stages) // 2, len(stages) - 1):
            want = b.predict(X, iteration_range=(0, r + 1))
            if isinstance(m, GBDTClassifier):
                proba = want if want.ndim == 2 else np.column_stack([1 - want, want])
                np.testing.assert_array_equal(list(m.staged_predict_proba(X))[r], proba)
                np.testing.assert_array_equal(stages[r], m.classes_[np.argmax(proba, axis=1)])
            else:
                np.testing.assert_array_equal(stages[r], want)
    assert models[-1].best_iteration_ + 1 < models[-1].booster_.num_boosted_rounds()


def test_xgboost_and_lightgbm_estimator_arguments():
    """What XGBClassifier / LGBMClassifier users pass (before: TypeErrors): predictions of
    an ``iteration_range`` equal the booster's; ``output_margin``; ``importance_type``
    (XGBoost's "weight" is the split count); ``evals_result()``."""
    X, y = make_classification(n=600)
    clf = GBDTClassifier(n_estimators=6, max_depth=3, importance_type="weight")
    clf.fit(X, y, eval_set=[(X[:100], y[:100])])
    b = clf.get_booster()
    np.testing.assert_array_equal(clf.predict_proba(X, iteration_range=(0, 2))[:, 1],
                                  b.predict(X, iteration_range=(0, 2)))
    assert not np.array_equal(clf.predict_proba(X, (0, 2)), clf.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(X, (1, 4)),
                                  (b.predict(X, iteration_range=(1, 4)) > 0.5).astype(float))
    np.testing.assert_array_equal(clf.apply(X, (2, 3)), b.predict(X, pred_leaf=True,
                                                                  iteration_range=(2, 3)))
    splits = b.feature_importance("split")
    np.testing.assert_allclose(clf.feature_importances_, splits / splits.sum(), rtol=1e-15)
    clf.set_params(importance_type="gain")
    gain = b.feature_importance("gain")
    np.testing.assert_allclose(clf.feature_importances_, gain / gain.sum(), rtol=1e-15)
    assert clf.evals_result() == clf.evals_result_ and clf.evals_result() is not clf.evals_result_
    Xr, yr = make_regression(n=400)
    reg = GBDTRegressor(n_estimators=4, objective="count:poisson").fit(Xr, np.exp(yr / 4))
    np.testing.assert_allclose(np.exp(reg.predict(Xr, output_margin=True)), reg.predict(Xr),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="importance_type"):
        GBDTRegressor(n_estimators=2, importance_type="gini").fit(Xr, yr)
    with pytest.raises(ValueError, match="importance_type"):  # set after fit: not a KeyError
        _ = reg.set_params(importance_type="gini").feature_importances_
    with pytest.raises(ValueError, match="no evaluation result"):  # as XGBoost's
        reg.evals_result()


def test_fit_continues_an_init_model_as_lightgbm_and_xgboost_do(tmp_path):
    """``fit(..., init_model=)`` (LightGBM) / ``xgb_model=`` (XGBoost), before a TypeError:
    4 rounds continued by 3 are the model of 7 in one fit, from a fitted estimator, its
    Booster or a saved model file; other classes, or both names, are refused."""
    X, y = make_classification(n=800)
    labels = np.where(y > 0, "yes", "no")
    first = GBDTClassifier(n_estimators=4, max_depth=3).fit(X, labels)
    whole = GBDTClassifier(n_estimators=7, max_depth=3).fit(X, labels).predict_proba(X)
    first.get_booster().save_model(tmp_path / "m.json")
    for init in (dict(init_model=first), dict(xgb_model=first.get_booster()),
                 dict(init_model=str(tmp_path / "m.json"))):
        more = GBDTClassifier(n_estimators=3, max_depth=3).fit(X, labels, **init)
        assert more.n_estimators_ == 7
        np.testing.assert_array_equal(more.predict_proba(X), whole)
    with pytest.raises(ValueError, match="fitted on the classes"):
        GBDTClassifier(n_estimators=2).fit(X, np.where(y > 0, "yes", "maybe"), init_model=first)
    with pytest.raises(ValueError, match="not both"):
        GBDTClassifier(n_estimators=2).fit(X, labels, init_model=first, xgb_model=first)
    with pytest.raises(TypeError, match="init_model must be"):
        GBDTClassifier(n_estimators=2).fit(X, labels, init_model=GBDTRegressor())
    Xr, yr = make_regression(n=500)
    r4 = GBDTRegressor(n_estimators=4).fit(Xr, yr)
    np.testing.assert_array_equal(GBDTRegressor(n_estimators=2).fit(Xr, yr, init_model=r4)
                                  .predict(Xr), GBDTRegressor(n_estimators=6).fit(Xr, yr)
                                  .predict(Xr))


def test_a_refused_fit_leaves_the_fitted_classifier_as_it_was():
    """A fit that raises after setting ``classes_`` (classes of another init_model, a
    class_weight naming an unknown class) left the new classes beside the old booster,
    so predict answered in the new labels (found by review); ``init_model=self`` compared
    the new classes with themselves."""
    X, y = make_classification(n=500)
    clf = GBDTClassifier(n_estimators=3).fit(X, y)
    before = clf.predict(X)
    with pytest.raises(ValueError, match="fitted on the classes"):
        clf.fit(X, y + 5, init_model=clf)
    with pytest.raises(ValueError, match="not in y"):
        clf.set_params(class_weight={7: 2.0}).fit(X, y + 5)
    with pytest.raises(ValueError):
        clf.set_params(class_weight=None).fit(X[:, :3], np.zeros(500))
    assert clf.classes_.tolist() == [0.0, 1.0] and clf.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(clf.predict(X), before)
    clf.set_params(n_estimators=2).fit(X, y, init_model=clf)  # the same classes: continues
    assert clf.n_estimators_ == 5


@pytest.mark.parametrize("n_classes", [2, 3])
def test_decision_function_is_the_margin_scikit_learn_expects(n_classes):
    """decision_function as scikit-learn's gradient boosting gives it: (n,) log-odds of
    classes_[1] for two classes, (n, K) softmax inputs else; the link of it is
    predict_proba, its sign (or argmax) is predict, it equals XGBoost's output_margin and
    the booster's margins of each iteration_range, and staged_decision_function's stages
    are the margins of the rounds so far (the last one decision_function's, to the bit)."""
    from sklearn.metrics import roc_auc_score
    X, y = make_classification(500, 4, seed=n_classes)
    if n_classes == 3:
        y = np.digitize(X[:, 1] + y, [0.5, 1.2])
    labels = np.array(["no", "yes", "zz"])[y.astype(int)]
    clf = GBDTClassifier(n_estimators=8, max_depth=3).fit(X, labels)
    d = clf.decision_function(X)
    p = clf.predict_proba(X)
    if n_classes == 2:
        assert d.shape == (500,)
        np.testing.assert_allclose(1 / (1 + np.exp(-d)), p[:, 1], rtol=1e-12)
        assert np.array_equal(clf.predict(X), clf.classes_[(d > 0).astype(int)])
        assert roc_auc_score(labels, d) == roc_auc_score(labels, p[:, 1])
    else:
        assert d.shape == (500, 3)
        e = np.exp(d - d.max(axis=1, keepdims=True))
        np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), p, rtol=1e-10)
        assert np.array_equal(clf.predict(X), clf.classes_[np.argmax(d, axis=1)])
    np.testing.assert_array_equal(d, clf.predict(X, output_margin=True))
    np.testing.assert_array_equal(clf.decision_function(X, iteration_range=(0, 3)),
                                  clf.booster_.predict(X, output_margin=True,
                                                       iteration_range=(0, 3)))
    stages = list(clf.staged_decision_function(X))
    assert len(stages) == 8
    np.testing.assert_array_equal(stages[-1], d)
    np.testing.assert_array_equal(stages[2], clf.decision_function(X, iteration_range=(0, 3)))


def test_weights_and_repeated_rows_agree_within_the_fixed_point_rounding():
    """scikit-learn's check_sample_weight_equivalence (its data: 15 rows, 3 classes,
    integer weights 0-4, shuffled), which GBDTClassifier lists as an expected failure
    since it has decision_function: a row of weight w is quantized as one value w * g,
    w repeated rows as w values g, to a unit set by the largest |w * g| (here 4x apart),
    so margins may differ in their last bits. They agree within 1e-6 (relative), and
    predict_proba within scikit-learn's own tolerance. Friedman's line searches
    (``boosting="gradient"``) take the margins far from 0 in their first step and then
    search on vanished gradients: their margins agree within 1e-3."""
    from sklearn.utils import shuffle
    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15)
    sw = rng.randint(0, 5, size=15)
    Xw, yw, sww = shuffle(X, y, sw, random_state=0)
    sparse = pytest.importorskip("scipy.sparse")
    for kw, rtol in (({}, 1e-6), (dict(tree_method="approx", sketch_eps=0.1), 1e-6),
                     (dict(boosting="gradient", line_search="global"), 1e-3)):
        repeated = GBDTClassifier(n_estimators=10, **kw).fit(X.repeat(sw, axis=0),
                                                           y.repeat(sw))
        weighted = GBDTClassifier(n_estimators=10, **kw).fit(sparse.csr_matrix(Xw), yw,
                                                             sample_weight=sww)
        np.testing.assert_allclose(weighted.decision_function(X),
                                   repeated.decision_function(X), rtol=rtol)
        np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X),
                                   rtol=1e-7, atol=1e-9)
        assert np.array_equal(weighted.predict(X), repeated.predict(X))
