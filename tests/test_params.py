import warnings

import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting.params import resolve_params


def test_defaults_and_aliases():
    p = resolve_params({"learning_rate": 0.05, "reg_lambda": 2, "num_leaves": 31})
    assert p["eta"] == 0.05 and p["lambda"] == 2.0 and p["max_leaves"] == 31
    assert resolve_params(None)["max_depth"] == 6
    # a LightGBM user's parameters, by LightGBM's names of the parameters and values
    p = resolve_params({"application": "binary", "metrics": ["binary_logloss", "auc"],
                        "num_leaves": 31, "bagging_fraction": 0.8, "bagging_freq": 5})
    assert (p["objective"], p["eval_metric"]) == ("binary:logistic", ["binary_logloss", "auc"])
    assert resolve_params({"loss": "l1"})["objective"] == "reg:absoluteerror"
    # LightGBM's comma-separated metrics (no metric name holds a comma)
    assert resolve_params({"metric": "auc, binary_logloss"})["eval_metric"] == \
        ["auc", "binary_logloss"]
    for bad in ("auc,", ",", ""):
        with pytest.raises(TypeError, match="a name or a list of names"):
            resolve_params({"metric": bad})


def test_lightgbm_parameter_values_mean_the_same_here():
    """LightGBM's values of shared parameters: boosting "gbdt" (second-order trees, also
    as boosting_type), max_depth -1 (no limit) and verbosity -1 (quiet) train the model of
    this library's values; its other boosting modes and other negative values are refused."""
    r = np.random.default_rng(3)
    X = r.normal(size=(400, 3))
    y = (X[:, 0] + 0.3 * r.normal(size=400) > 0) * 1.0
    lgb_style = {"objective": "binary", "boosting_type": "gbdt", "max_depth": -1,
                 "num_leaves": 7, "verbose": -1, "grow_policy": "lossguide"}
    ours = {"objective": "binary:logistic", "boosting": "newton", "max_depth": 0,
            "max_leaves": 7, "verbosity": 0, "grow_policy": "lossguide"}
    a = bw.train(lgb_style, bw.Dataset(X, y), 3, verbose_eval=False)
    b = bw.train(ours, bw.Dataset(X, y), 3, verbose_eval=False)
    assert a.dump_model() == b.dump_model()
    assert (a.params["boosting"], a.params["max_depth"], a.params["verbosity"]) == ("newton", 0, 0)
    for params, match in (({"boosting": "dart"}, "'dart' is not a boosting mode here"),
                          ({"boosting_type": "rf"}, "RandomForestClassifier"),
                          ({"max_depth": -2}, r"max_depth' must be in \[0, inf\]"),
                          ({"verbosity": -2}, "verbosity"),
                          ({"max_depth": -1}, "max_depth=0 or -1 .* needs max_leaves")):
        with pytest.raises(ValueError, match=match):
            resolve_params(params)


@pytest.mark.parametrize("params,error,match", [
    ({"etaa": 0.1}, ValueError, "did you mean 'eta'"),
    ({"max_dept": 3}, ValueError, "did you mean 'max_depth'"),
    ({"frobnicate": 1}, ValueError, "unknown parameter 'frobnicate'$"),
    ({"eta": 0}, ValueError, r"eta.*\(0.0, inf\]"),
    ({"subsample": 1.5}, ValueError, "subsample"),
    ({"max_depth": -1}, ValueError, "max_depth"),
    ({"max_depth": 2.5}, TypeError, "integer"),
    ({"lambda": "big"}, TypeError, "number"),
    ({"eta": float("nan")}, ValueError, "NaN"),
    ({"grow_policy": "random"}, ValueError, "grow_policy"),
    ({"objective": "reg:nonsense"}, ValueError, "objective"),
    ({"eta": 0.1, "learning_rate": 0.2}, ValueError, "given twice"),
    ({"objective": "multi:softprob"}, ValueError, "num_class"),
    ({"max_depth": 0}, ValueError, "max_leaves"),
    ({"eval_metric": 3}, TypeError, "eval_metric"),
])
def test_bad_parameters_raise_clear_errors(params, error, match):
    with pytest.raises(error, match=match):
        resolve_params(params)


def test_train_rejects_bad_arguments():
    import numpy as np
    d = bw.Dataset(np.zeros((4, 1)), np.zeros(4))
    with pytest.raises(TypeError, match="Dataset"):
        bw.train({}, np.zeros((4, 1)))
    with pytest.raises(ValueError, match="num_boost_round"):
        bw.train({}, d, -1)
    with pytest.raises(ValueError, match="no label"):
        bw.train({}, bw.Dataset(np.zeros((4, 1))), 1)
    with pytest.raises(ValueError, match="unknown eval_metric"):
        bw.train({"eval_metric": "accuracyy"}, d, 1, evals=[(d, "t")], verbose_eval=False)
    with pytest.raises(TypeError, match="evals"):
        bw.train({}, d, 1, evals=[d])


def test_replace_param_drops_every_alias_of_the_name():
    from boostwood.boosting.params import replace_param
    given = {"n_jobs": 4, "eta": 0.1, "colsample_by_tree": 0.5}  # a typo stays, for train
    out = replace_param(given, "nthread", 1)
    assert out == {"eta": 0.1, "colsample_by_tree": 0.5, "nthread": 1}
    assert given == {"n_jobs": 4, "eta": 0.1, "colsample_by_tree": 0.5}
    assert replace_param(None, "nthread", 2) == {"nthread": 2}


def test_params_as_xgboost_list_of_pairs_with_several_metrics():
    """XGBoost takes ``params`` as (name, value) pairs, eval_metric repeated for several
    metrics (before: a TypeError). The same model and log as the dict; another name
    twice is an error, not a silent last-one-wins."""
    r = np.random.default_rng(1)
    X = r.normal(size=(300, 3))
    d = bw.Dataset(X, (X[:, 0] > 0).astype(float))
    pairs = [("objective", "binary:logistic"), ("eval_metric", "logloss"),
             ("eval_metric", "auc"), ("max_depth", 3)]
    as_dict = dict(objective="binary:logistic", eval_metric=["logloss", "auc"], max_depth=3)
    logs = ({}, {})
    models = [bw.train(p, d, 3, evals=[(d, "t")], evals_result=log, verbose_eval=False)
              for p, log in zip((pairs, as_dict), logs)]
    assert logs[0] == logs[1] and list(logs[0]["t"]) == ["logloss", "auc"]
    np.testing.assert_array_equal(models[0].predict(X), models[1].predict(X))
    a, b = bw.cv(pairs, d, 2, nfold=2), bw.cv(as_dict, d, 2, nfold=2)
    assert list(a) == list(b) == ["train-logloss-mean", "train-logloss-std", "train-auc-mean",
                                  "train-auc-std", "test-logloss-mean", "test-logloss-std",
                                  "test-auc-mean", "test-auc-std"]
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    with pytest.raises(ValueError, match="'max_depth' given twice"):
        bw.train(pairs + [("max_depth", 4)], d, 1)
    with pytest.raises(ValueError, match=r"eval_metric names \['auc'\] more than once"):
        bw.train(pairs + [("eval_metric", "auc")], d, 1, evals=[(d, "t")])  # (a log of
    # 2 x rounds values under one name, early stopping reading the mix: found by review)
    with pytest.raises(TypeError, match=r"\(name, value\) pairs"):
        bw.train([("max_depth", 3, 1)], d, 1)
    with pytest.raises(TypeError, match="params must be a dict or a list"):
        bw.train("max_depth=3", d, 1)


@pytest.mark.parametrize("lightgbm, xgboost, extra", [
    ("regression", "reg:squarederror", {}), ("rmse", "reg:squarederror", {}),
    ("regression_l1", "reg:absoluteerror", {}), ("mae", "reg:absoluteerror", {}),
    ("binary", "binary:logistic", {}), ("cross_entropy", "reg:logistic", {}),
    ("multiclass", "multi:softprob", {"num_class": 3}), ("softmax", "multi:softprob",
                                                         {"num_class": 3}),
    ("poisson", "count:poisson", {}), ("gamma", "reg:gamma", {}),
    ("tweedie", "reg:tweedie", {"tweedie_variance_power": 1.3})])
def test_lightgbm_objective_names_train_the_same_model(lightgbm, xgboost, extra):
    """LightGBM's objective names (and its aliases of them) train the model of the same
    loss's XGBoost name, bit for bit, and the model keeps the XGBoost name; also in
    GBDTRegressor."""
    r = np.random.default_rng(5)
    X = r.normal(size=(400, 4))
    y = {"multi:softprob": np.digitize(X[:, 0], [-0.4, 0.4]) * 1.0,
         "reg:logistic": 1 / (1 + np.exp(-X[:, 0])), "binary:logistic": (X[:, 0] > 0) * 1.0,
         "count:poisson": r.poisson(np.exp(0.5 * X[:, 0])) * 1.0,
         "reg:gamma": np.exp(0.5 * X[:, 0]) + 0.1, "reg:tweedie": r.poisson(np.exp(X[:, 0])) * 1.0
         }.get(xgboost, X[:, 0] + 0.3 * r.normal(size=400))
    a = bw.train(dict(objective=lightgbm, **extra), bw.Dataset(X, y), 4, verbose_eval=False)
    b = bw.train(dict(objective=xgboost, **extra), bw.Dataset(X, y), 4, verbose_eval=False)
    assert a.params["objective"] == xgboost
    assert a.dump_model() == b.dump_model()
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if xgboost.startswith(("reg:", "count:")):
        from boostwood.sklearn import GBDTRegressor
        m = GBDTRegressor(objective=lightgbm, n_estimators=4, **extra).fit(X, y)
        assert m.booster_.params["objective"] == xgboost


def test_lightgbm_objective_names_in_any_case():
    """LightGBM reads its objective names in any case ("Regression" trains for LightGBM
    4.7): the same model as the lower-case name, its renamed ones refused the same way;
    XGBoost's names stay case-sensitive (XGBoost refuses "Reg:SquaredError")."""
    r = np.random.default_rng(2)
    X = r.normal(size=(300, 3))
    y = X[:, 0] + 0.3 * r.normal(size=300)
    a = bw.train({"objective": "Regression"}, bw.Dataset(X, y), 3, verbose_eval=False)
    b = bw.train({"objective": "regression"}, bw.Dataset(X, y), 3, verbose_eval=False)
    assert a.params["objective"] == "reg:squarederror" and a.dump_model() == b.dump_model()
    assert resolve_params({"objective": "BINARY"})["objective"] == "binary:logistic"
    with pytest.raises(ValueError, match="'reg:huber' here"):
        resolve_params({"objective": "Huber"})
    with pytest.raises(ValueError, match="parameter 'objective' must be one of"):
        resolve_params({"objective": "Reg:SquaredError"})


@pytest.mark.parametrize("name, match", [
    ("quantile", "'reg:quantileerror' here, its alpha is 'quantile_alpha'"),
    ("huber", "'reg:huber' here, its alpha is 'huber_delta'"),
    ("cross_entropy_lambda", "parameter 'objective' must be one of")])
def test_lightgbm_objectives_whose_parameter_is_renamed_say_how_to_write_them(name, match):
    """LightGBM's quantile and huber objectives take ``alpha``, which is the L1 penalty
    here: refused with the name to use (not trained with alpha as an L1 penalty)."""
    with pytest.raises(ValueError, match=match):
        resolve_params({"objective": name, "alpha": 0.9})
    pytest.importorskip("sklearn")
    from boostwood.sklearn import GBDTRegressor
    with pytest.raises(ValueError, match=match):
        GBDTRegressor(objective=name).fit(np.zeros((4, 1)), np.arange(4.0))


def test_lightgbm_rounds_and_early_stopping_in_params():
    """LightGBM's num_iterations (or an alias: n_estimators, num_boost_round, ...) in params
    replaces train's num_boost_round, with LightGBM's warning where they differ; its
    early_stopping_round in params stops as the argument does, and the two given with
    different values are an error. cv takes them the same way: the folds train every
    round and early stopping reads their mean curve, as with the arguments."""
    r = np.random.default_rng(2)
    X = r.normal(size=(800, 3))
    y = (X[:, 0] + r.normal(size=800) > 0).astype(float)
    d, v = bw.Dataset(X[:600], y[:600]), bw.Dataset(X[600:], y[600:])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # params win without a word over the default 10
        b = bw.train({"objective": "binary", "n_estimators": 25}, d, verbose_eval=False)
        assert b.num_boosted_rounds() == 25
        bw.train({"objective": "binary", "n_estimators": 3}, d, 3, verbose_eval=False)
    with pytest.warns(UserWarning, match="num_iterations=25 in params replaces "
                                         "num_boost_round=40") as caught:
        b = bw.train({"objective": "binary", "n_estimators": 25}, d, 40, verbose_eval=False)
    assert b.num_boosted_rounds() == 25 and caught[0].filename == __file__
    # the model keeps what steers the run out of its params: training again from them
    # takes the rounds asked for, without early stopping (LightGBM's 0 is off too)
    again = bw.train(b.params, d, 6, verbose_eval=False)
    assert again.num_boosted_rounds() == 6 and b.params["num_iterations"] is None
    assert bw.train(dict(b.params, early_stopping_round=0), d, 2).num_boosted_rounds() == 2
    p = {"objective": "binary", "eta": 0.5}
    a = bw.train(dict(p, early_stopping_round=4), d, 200, evals=[(v, "v")], verbose_eval=False)
    b = bw.train(p, d, 200, evals=[(v, "v")], early_stopping_rounds=4, verbose_eval=False)
    assert a.best_iteration == b.best_iteration < 150
    assert a.num_boosted_rounds() == b.num_boosted_rounds()
    with pytest.raises(ValueError, match="disagree: give one"):
        bw.train(dict(p, early_stopping_round=4), d, 20, evals=[(v, "v")],
                 early_stopping_rounds=3)
    dall = bw.Dataset(X, y)
    with pytest.warns(UserWarning, match="num_iterations=200") as caught:
        got = bw.cv(dict(p, num_iterations=200, early_stopping_round=4), dall, 30, nfold=3)
    assert caught[0].filename == __file__
    want = bw.cv(p, dall, 200, nfold=3, early_stopping_rounds=4)
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])


def test_lightgbm_parameters_whose_defaults_differ_here_warn():
    """A LightGBM user's bagging_fraction without bagging_freq (LightGBM does not bag;
    here every round) and max_depth=-1 without grow_policy (LightGBM grows leaf-wise;
    here depth-wise) train something else than LightGBM would: a warning says so and
    how to choose; given explicitly (or under XGBoost's names), no warning."""
    with pytest.warns(UserWarning, match="bagging_fraction without bagging_freq"):
        resolve_params({"bagging_fraction": 0.8})
    with pytest.warns(UserWarning, match="grow_policy='lossguide' gives its trees"):
        resolve_params({"max_depth": -1, "num_leaves": 31})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resolve_params({"bagging_fraction": 0.8, "bagging_freq": 1})
        resolve_params({"subsample": 0.8})
        resolve_params({"max_depth": -1, "num_leaves": 31, "grow_policy": "depthwise"})
        resolve_params({"max_depth": 0, "num_leaves": 31})


# -- the resolved record --------------------------------------------------------------------
def _count_resolutions(monkeypatch):
    """Counts resolve_params's resolutions (each warns about LightGBM defaults once)."""
    from boostwood.boosting import params as mod
    calls = []
    real = mod._warn_lightgbm_defaults

    def spy(*args):
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(mod, "_warn_lightgbm_defaults", spy)
    return calls


def test_train_and_cv_resolve_the_parameters_once(monkeypatch):
    X = np.random.default_rng(0).normal(size=(120, 3))
    d = bw.Dataset(X, X[:, 0])
    calls = _count_resolutions(monkeypatch)
    bw.train({"max_depth": 2, "num_iterations": 2}, d, verbose_eval=False)
    assert len(calls) == 1
    calls.clear()
    bw.cv({"max_depth": 2, "nthread": 1}, d, 2, nfold=3)
    assert len(calls) == 1


def test_resolved_parameters_are_a_read_only_record():
    import copy
    import pickle
    from boostwood.boosting.params import PARAMS, Params
    p = resolve_params({"learning_rate": 0.1, "max_bins": 63})
    assert isinstance(p, Params) and resolve_params(p) is p
    assert set(p) == set(PARAMS) and "_given" not in p  # (no bookkeeping key inside)
    assert p.given == {"eta", "max_bin"} and p.non_default() == {"eta": 0.1, "max_bin": 63}
    with pytest.raises(TypeError):
        p["eta"] = 0.2
    with pytest.raises(AttributeError):
        p.given = frozenset()
    for twin in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert twin == p and twin.given == p.given
    q = p.replace(eta=0.2, max_bin=255)
    assert (q["eta"], q["max_bin"], q.given, p["eta"]) == (0.2, 255, {"eta"}, 0.1)
    with pytest.raises(ValueError, match="eta"):
        p.replace(eta=-1)
    with pytest.raises(ValueError, match="unknown parameter"):
        p.replace(etaa=1)


@pytest.mark.parametrize("params", [
    {}, {"objective": "lambdarank", "lambdarank_norm": False},
    {"objective": "lambdarank", "lambdarank_norm": False, "lambdarank_score_normalization": True},
    {"objective": "lambdarank", "lambdarank_normalization": False},
    {"objective": "binary", "bagging_fraction": 0.5, "bagging_freq": 1, "num_leaves": 7},
    {"objective": "multi:softprob", "num_class": 3, "eval_metric": ["mlogloss", "merror"]}])
def test_what_a_model_records_resolves_to_the_same_parameters(params):
    """A model file records the parameters that differ from their defaults: resolving
    those again gives every parameter as trained (no rule reads what was left out)."""
    p = resolve_params(params)
    assert resolve_params(p.non_default()) == p


def test_lambdarank_norm_sets_both_normalisations_by_its_name_only():
    both = resolve_params({"objective": "lambdarank", "lambdarank_norm": False})
    one = resolve_params({"objective": "lambdarank", "lambdarank_normalization": False})
    assert not both["lambdarank_score_normalization"] and one["lambdarank_score_normalization"]
