"""Booster: prediction options, importance, the model file, determinism."""
import json

import numba
import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting import model_io

from conftest import make_classification, make_regression


@pytest.fixture(scope="module")
def multiclass_model():
    r = np.random.default_rng(0)
    X = r.normal(size=(1500, 5))
    X[r.random(X.shape) < 0.1] = np.nan
    y = np.digitize(np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]), [-0.7, 0.7]).astype(float)
    params = {"objective": "multi:softprob", "num_class": 3, "eta": 0.3, "max_depth": 4,
              "subsample": 0.8, "colsample_bynode": 0.8}
    return bw.train(params, bw.Dataset(X, y), 15, verbose_eval=False), X, y


def test_save_load_round_trip_is_bit_identical(tmp_path, multiclass_model):
    b, X, _ = multiclass_model
    path = tmp_path / "m.json"
    b.save_model(path)
    loaded = bw.Booster(model_file=path)
    assert np.array_equal(loaded.predict(X), b.predict(X))
    assert np.array_equal(loaded.predict(X, output_margin=True), b.predict(X, output_margin=True))
    assert np.array_equal(loaded.predict(X, pred_leaf=True), b.predict(X, pred_leaf=True))
    assert loaded.num_boosted_rounds() == 15 and loaded.feature_names == b.feature_names
    # the file is strict JSON (no NaN / Infinity literals) with a format header
    doc = json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"literal {c}"))
    # (the version written is the current one; tests/test_model_compat.py keeps v1 files)
    from boostwood.boosting.model_io import FORMAT_VERSION
    assert doc["format"] == "boostwood-model" and doc["version"] == FORMAT_VERSION == 3


def test_infinite_threshold_survives_the_file(tmp_path):
    # a split "value present vs missing" has threshold +inf
    x = np.array([1.0, 1.0, np.nan, np.nan] * 50)
    y = np.isnan(x) * 1.0
    b = bw.train({"max_depth": 1, "eta": 1.0}, bw.Dataset(x[:, None], y), 1, verbose_eval=False)
    assert np.isinf(b.trees[0].threshold[0])
    b.save_model(tmp_path / "m.json")
    loaded = bw.Booster(model_file=tmp_path / "m.json")
    assert np.array_equal(loaded.predict(x[:, None]), b.predict(x[:, None]))


def _saved(tmp_path, b):
    path = tmp_path / "m.json"
    b.save_model(path)
    return path, path.read_text()


def test_corrupt_model_files_raise_clear_errors(tmp_path, multiclass_model):
    b = multiclass_model[0]
    path, text = _saved(tmp_path, b)
    cases = {
        "truncated": text[: len(text) // 2],
        "not json": "hello",
        "empty": "",
        "other json": json.dumps({"a": 1}),
    }
    for name, bad in cases.items():
        path.write_text(bad)
        with pytest.raises(ValueError, match="not a (valid )?boostwood model"):
            bw.Booster(model_file=path)
    doc = json.loads(text)
    doc["version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"version 99, newer than this boostwood reads \(3\)"):
        bw.Booster(model_file=path)
    doc = json.loads(text)
    doc["model"]["trees"][0]["value"][1] += 1.0  # tampered leaf value
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="checksum"):
        bw.Booster(model_file=path)
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="boostwood model"):
        bw.Booster(model_file=path)


def test_tampered_structure_is_caught_even_with_a_fixed_checksum(tmp_path, multiclass_model):
    b = multiclass_model[0]
    _, text = _saved(tmp_path, b)
    for field, value, match in [("left", 0, "not a tree|out of range"),
                                ("feature", 99, "out of range"),
                                ("value", float("nan"), "malformed|non-finite|JSON")]:
        doc = json.loads(text)
        model = doc["model"]
        split = model["trees"][0]["feature"].index(next(f for f in model["trees"][0]["feature"] if f >= 0))
        model["trees"][0][field][split] = value
        with pytest.raises(ValueError, match="checksum|constant"):  # rejected before parsing trees
            model_io.loads(json.dumps({"format": "boostwood-model", "version": 1,
                                       "checksum": "x", "model": model}), "m")
        # with a recomputed checksum, the structural validation still rejects it
        try:
            fixed = model_io.dumps(model)
        except ValueError:
            continue  # NaN cannot even be written as strict JSON
        with pytest.raises(ValueError, match=match):
            bw.Booster()._from_dict(model_io.loads(fixed), "m")


def test_determinism_across_thread_counts():
    X, y = make_classification(30000, 8, seed=5, missing=0.05)
    models = []
    for nthread in (1, 2):
        numba.set_num_threads(nthread)
        params = {"objective": "binary:logistic", "nthread": nthread, "subsample": 0.7,
                  "colsample_bytree": 0.8, "colsample_bynode": 0.7, "grow_policy": "lossguide",
                  "max_leaves": 31, "max_depth": 0, "seed": 11}
        b = bw.train(params, bw.Dataset(X, y), 10, verbose_eval=False)
        models.append(model_io.dumps({k: v for k, v in b._to_dict().items() if k != "params"}))
    assert models[0] == models[1]


def test_a_calls_nthread_is_its_own():
    """Training, prediction, cross-validation and a forest's fit run on their nthread
    (n_jobs) and give numba's thread count back as the caller had it, also when the call
    fails; before, a fit with nthread=1 left every later numba loop in the process (the
    binning of the next Dataset included) on one thread."""
    from boostwood.boosting.callback import TrainingCallback
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: nothing to give back")
    X, y = make_classification(2000, 5, seed=2)
    seen = []

    class Threads(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            seen.append(numba.get_num_threads())
            return False

    def bad_objective(preds, dtrain):
        raise RuntimeError("objective failed")

    before = numba.get_num_threads()
    numba.set_num_threads(2)  # the caller's count, told apart from nthread=1
    try:
        _calls_give_threads_back(X, y, Threads(), seen, bad_objective)
    finally:
        numba.set_num_threads(before)


def _calls_give_threads_back(X, y, threads_seen, seen, bad_objective):
    from boostwood.sklearn import RandomForestClassifier
    before = numba.get_num_threads()
    params = {"objective": "binary:logistic", "nthread": 1}
    b = bw.train(params, bw.Dataset(X, y), 3, verbose_eval=False, callbacks=[threads_seen])
    assert seen == [1, 1, 1] and numba.get_num_threads() == before
    b.predict(X)
    assert numba.get_num_threads() == before
    bw.cv(params, bw.Dataset(X, y), 2, nfold=2)
    assert numba.get_num_threads() == before
    RandomForestClassifier(n_estimators=3, n_jobs=1).fit(X, y)
    assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError, match="objective failed"):
        bw.train(params, bw.Dataset(X, y), 3, obj=bad_objective, verbose_eval=False)
    assert numba.get_num_threads() == before


def test_predict_options(multiclass_model):
    b, X, _ = multiclass_model
    p = b.predict(X)
    assert p.shape == (len(X), 3) and np.allclose(p.sum(axis=1), 1)
    margin = b.predict(X, output_margin=True)
    e = np.exp(margin - margin.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), p, rtol=1e-12)
    leaves = b.predict(X, pred_leaf=True)
    assert leaves.shape == (len(X), 45)
    first5 = b.predict(X, iteration_range=(0, 5), output_margin=True)
    assert np.allclose(b[:5].predict(X, output_margin=True), first5)
    with pytest.raises(ValueError, match="iteration_range"):
        b.predict(X, iteration_range=(0, 99))
    with pytest.raises(ValueError, match="trained on 5"):
        b.predict(X[:, :4])


def test_feature_importance(multiclass_model):
    b = multiclass_model[0]
    split = b.feature_importance("split")
    total = b.feature_importance("total_gain")
    assert split.sum() == sum(int((t.feature >= 0).sum()) for t in b.trees)
    np.testing.assert_allclose(b.feature_importance("gain"), np.where(split > 0, total / np.maximum(split, 1), 0))
    assert total[:2].sum() > total[2:].sum()  # the label depends on features 0 and 1
    assert set(b.get_score("split")) <= set(b.feature_names)
    with pytest.raises(ValueError, match="importance_type"):
        b.feature_importance("weight2")


def test_base_score_and_base_margin():
    X, y = make_regression(500, 4)
    b = bw.train({"base_score": 100.0}, bw.Dataset(X, y), 0, verbose_eval=False)
    assert np.all(b.predict(X) == 100.0)
    b = bw.train({}, bw.Dataset(X, y), 0, verbose_eval=False)
    assert np.allclose(b.predict(X), y.mean())
    d = bw.Dataset(X, y, base_margin=np.full(500, 3.0))
    assert np.all(b.predict(d) == 3.0)
    with pytest.raises(ValueError, match="base_score"):
        bw.train({"objective": "binary:logistic", "base_score": 1.5},
                 bw.Dataset(X, (y > 0) * 1.0), 1, verbose_eval=False)


def test_unfitted_booster_and_bad_slicing():
    with pytest.raises(ValueError, match="no model"):
        bw.Booster().predict(np.zeros((2, 2)))
    X, y = make_regression(100, 4)
    b = bw.train({}, bw.Dataset(X, y), 3, verbose_eval=False)
    with pytest.raises(TypeError, match="sliced"):
        b[::2]


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic", "subsample": 0.7, "colsample_bytree": 0.8,
     "colsample_bynode": 0.7, "seed": 3},
    {"objective": "multi:softprob", "num_class": 2, "tree_method": "exact", "subsample": 0.5},
])
def test_continued_training_equals_one_run(params, tmp_path):
    """8 rounds, saved, then 12 more from the file = 20 rounds in one go, bit for bit
    (round r draws its random numbers from (seed, r))."""
    r = np.random.default_rng(0)
    X = r.normal(size=(1500, 6))
    X[r.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(float)
    full = bw.train(params, bw.Dataset(X, label=y), 20)
    bw.train(params, bw.Dataset(X, label=y), 8).save_model(tmp_path / "half.json")
    rest = bw.train(params, bw.Dataset(X, label=y), 12, init_model=tmp_path / "half.json")
    assert rest.num_boosted_rounds() == 20
    assert np.array_equal(full.predict(X, output_margin=True), rest.predict(X, output_margin=True))
    with pytest.raises(ValueError, match="features"):
        bw.train(params, bw.Dataset(X[:, :5], label=y), 2, init_model=full)


def test_continuing_an_early_stopped_model_starts_from_all_its_rounds():
    """Training went on from the margins of init_model's best_iteration while every
    one of its trees stayed in the new model, so its new trees fitted margins the model
    does not predict (logged RMSE 0.891, the model's own 0.785). Now it starts from all
    of them: the same model as continuing the model without best_iteration."""
    r = np.random.default_rng(2)
    X = r.normal(size=(400, 3))
    y = X[:, 0] + 0.3 * r.normal(size=400)
    d = bw.Dataset(X, label=y)
    init = bw.train({"eta": 0.5}, d, 5)
    stopped = init.copy()
    stopped.best_iteration = 1
    log = {}
    a = bw.train({"eta": 0.5}, d, 2, init_model=stopped, evals=[(d, "t")], evals_result=log,
                 verbose_eval=False)
    b = bw.train({"eta": 0.5}, d, 2, init_model=init)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    rmse = np.sqrt(np.mean((a.predict(X) - y) ** 2))
    assert log["t"]["rmse"][-1] == pytest.approx(rmse, rel=1e-6)


def test_continued_training_keeps_the_margin_scale_and_the_feature_types():
    """Continuing a model under an objective whose margins mean something else (a
    logistic model's log-odds read as regression values, or as log-means) gave a model of
    mixed scales without a word; the same link is allowed. The feature types and
    category dictionaries of the model carry over (they were reset to numeric)."""
    r = np.random.default_rng(1)
    X = r.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(float)
    d = bw.Dataset(X, label=y)
    logistic = bw.train({"objective": "binary:logistic"}, d, 3)
    for objective in ("reg:squarederror", "binary:logitboost", "count:poisson"):
        with pytest.raises(ValueError, match="logit scale.*same link"):
            bw.train({"objective": objective}, d, 2, init_model=logistic)
    squared = bw.train({"objective": "reg:squarederror"}, d, 3)
    assert bw.train({"objective": "reg:pseudohubererror"}, d, 2,
                    init_model=squared).num_boosted_rounds() == 5
    pd = pytest.importorskip("pandas")
    colour = np.where(X[:, 0] > 0.3, "red", "blue").astype(object)
    frame = pd.DataFrame({"c": colour, "x1": X[:, 1], "x2": X[:, 2]})
    dc = bw.Dataset(frame, label=y)
    coloured = bw.train({"objective": "binary:logistic"}, dc, 3)
    assert coloured.feature_types == ["categorical", "numeric", "numeric"]
    more = bw.train({"objective": "binary:logistic"}, dc, 2, init_model=coloured)
    assert more.feature_types == coloured.feature_types
    assert more.category_dictionaries == {0: ["blue", "red"]}
    # numbers where the model learned categories: its sets would test codes of nothing
    with pytest.raises(ValueError, match="categorical features or their categories differ"):
        bw.train({"objective": "binary:logistic"},
                 bw.Dataset(X, label=y, feature_names=["c", "x1", "x2"]), 2,
                 init_model=coloured)


@pytest.mark.parametrize("extra", [{}, {"use_quantized_grad": True},
                                   {"grow_policy": "lossguide", "max_leaves": 12}])
def test_multiclass_rounds_through_class_columns_give_the_same_model(extra, monkeypatch,
                                                                     tmp_path):
    """A round's trees set their leaf values into class-major columns, added to the
    margins at the round's end: the same model, byte for byte, as each tree adding its
    values to the margins straight away."""
    from boostwood.boosting._state import TrainingState
    r = np.random.default_rng(4)
    X = r.normal(size=(3000, 5))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + r.normal(size=3000), [-1, 0, 1]).astype(float)
    params = {"objective": "multi:softprob", "num_class": 4, "eta": 0.3, **extra}
    dtrain = bw.Dataset(X, y)
    bw.train(params, dtrain, 8).save_model(tmp_path / "columns.json")
    monkeypatch.setattr(TrainingState, "_class_columns", lambda self, rows: None)
    bw.train(params, dtrain, 8).save_model(tmp_path / "straight.json")
    assert (tmp_path / "columns.json").read_bytes() == (tmp_path / "straight.json").read_bytes()


def test_unnamed_data_for_a_model_of_named_features_is_an_error():
    """Columns of a plain array can only be matched to named features by position: an
    error (as XGBoost's DMatrix gives), with validate_features=False as the way to ask
    for position. A model trained without names (f0, f1, ...) takes plain arrays."""
    pd = pytest.importorskip("pandas")
    X, y = make_regression(300, 4)
    df = pd.DataFrame(X, columns=["age", "income", "height", "weight"])
    named = bw.train({}, bw.Dataset(df, y), 3, verbose_eval=False)
    for data in (X, bw.Dataset(X), X[:, ::-1].copy()):
        with pytest.raises(ValueError, match="no feature names.*'age'.*validate_features=False"):
            named.predict(data)
    with pytest.raises(ValueError, match="no feature names"):
        named.predict(X, pred_contribs=True)
    # continuing a named model on unnamed data would match its columns by position too
    with pytest.raises(ValueError, match="no feature names"):
        bw.train({}, bw.Dataset(X, y), 2, verbose_eval=False, init_model=named)
    assert np.array_equal(named.predict(X, validate_features=False), named.predict(df))
    assert np.array_equal(named.predict(bw.Dataset(X, feature_names=list(df.columns))),
                          named.predict(df))
    unnamed = bw.train({}, bw.Dataset(X, y), 3, verbose_eval=False)
    assert unnamed.predict(X).shape == (300,) and unnamed.predict(bw.Dataset(X)).shape == (300,)
    # the scikit-learn wrapper keeps scikit-learn's rule: a warning, then by position
    from boostwood.sklearn import GBDTRegressor
    reg = GBDTRegressor(n_estimators=3).fit(df, y)
    with pytest.warns(UserWarning, match="feature names"):
        assert np.array_equal(reg.predict(X), reg.predict(df))


def test_named_data_that_is_not_the_models_says_how_it_differs():
    """Named columns that are not the model's are refused with what differs and the way
    out: an unnamed model (f0, f1, ...) given named columns (XGBoost and LightGBM match
    them by position without a word), names missing. The model's names in another order
    are selected by name."""
    pd = pytest.importorskip("pandas")
    X, y = make_regression(300, 4)
    unnamed = bw.train({}, bw.Dataset(X, y), 3, verbose_eval=False)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    with pytest.raises(ValueError, match=r"trained without feature names.*\['a', 'b', 'c', 'd'\];"
                                         r".*validate_features=False.*array without names"):
        unnamed.predict(frame)
    assert np.array_equal(unnamed.predict(frame, validate_features=False), unnamed.predict(X))
    named = bw.train({}, bw.Dataset(frame, y), 3, verbose_eval=False)
    # the model's names in another order ([Q2]: they were refused, with the fix of
    # selecting them): the columns are selected by name, never matched by position
    assert np.array_equal(named.predict(frame[["b", "a", "c", "d"]]), named.predict(frame))
    assert not np.array_equal(named.predict(frame[["b", "a", "c", "d"]],
                                            validate_features=False), named.predict(frame))
    with pytest.raises(ValueError, match=r"features \['d'\] are not in the data, which has "
                                         r"\['e'\] instead.*validate_features=False"):
        named.predict(frame.rename(columns={"d": "e"}))
    assert np.array_equal(named.predict(frame[["b", "a", "c", "d"]][named.feature_names]),
                          named.predict(frame))


def test_inplace_predict_is_predict_with_xgboosts_arguments(multiclass_model):
    """``inplace_predict`` (XGBoost's signature): the bits of ``predict``, a ``missing``
    sentinel read as NaN without touching the caller's array, ``base_margin`` as a
    Dataset's."""
    b, X, _ = multiclass_model
    np.testing.assert_array_equal(b.inplace_predict(X), b.predict(X))
    np.testing.assert_array_equal(b.inplace_predict(X, predict_type="margin"),
                                  b.predict(X, output_margin=True))
    sentinel = np.where(np.isnan(X), -999.0, X)
    kept = sentinel.copy()
    np.testing.assert_array_equal(b.inplace_predict(sentinel, missing=-999.0), b.predict(X))
    np.testing.assert_array_equal(sentinel, kept)
    assert not np.array_equal(b.inplace_predict(sentinel), b.predict(X))  # -999 is a value
    tenth = np.where(np.isnan(X), 0.1, X).astype(np.float32)  # a float32 sentinel matches
    np.testing.assert_array_equal(b.inplace_predict(tenth, missing=0.1),
                                  b.predict(X.astype(np.float32)))
    margin = np.random.default_rng(1).normal(size=(len(X), 3))
    np.testing.assert_array_equal(b.inplace_predict(X, base_margin=margin),
                                  b.predict(bw.Dataset(X, base_margin=margin)))
    np.testing.assert_array_equal(b.inplace_predict(X, iteration_range=(0, 5)),
                                  b.predict(X, iteration_range=(0, 5)))
    sp = pytest.importorskip("scipy.sparse")
    sparse = sp.csr_matrix(np.where(np.isnan(X), 7.0, X))
    np.testing.assert_array_equal(b.inplace_predict(sparse, missing=7.0), b.predict(X))
    for kwargs, error, match in ((dict(predict_type="prob"), ValueError, "predict_type"),
                                 (dict(missing="NA"), TypeError, "missing"),
                                 (dict(base_margin=np.ones(len(X))), ValueError, "3 outputs"),
                                 (dict(validate_features=1), TypeError, "validate_features")):
        with pytest.raises(error, match=match):
            b.inplace_predict(X, **kwargs)
    with pytest.raises(ValueError, match="sparse"):
        b.inplace_predict(sparse, missing=0.0)
    with pytest.raises(TypeError, match="not a Dataset"):
        b.inplace_predict(bw.Dataset(X))


def test_one_kind_of_prediction_at_a_time(multiclass_model):
    """pred_leaf, pred_contribs and pred_interactions together returned one of them
    without a word; as in XGBoost, that is an error."""
    b, X, _ = multiclass_model
    for flags in (dict(pred_leaf=True, pred_contribs=True),
                  dict(pred_contribs=True, pred_interactions=True),
                  dict(pred_leaf=True, pred_interactions=True)):
        with pytest.raises(ValueError, match="one kind of prediction"):
            b.predict(X[:5], **flags)
    assert b.predict(X[:5], pred_contribs=True, output_margin=True).shape == (5, 3, 6)


def test_copy_num_features_and_slices_keep_the_feature_types(multiclass_model):
    b, X, _ = multiclass_model
    c = b.copy()
    assert c.num_features() == b.num_features() == 5
    c.trees.pop()
    with pytest.raises(TypeError):  # (resolved parameters are read-only)
        c.params["eta"] = 0.0
    c.params = c.params.replace(eta=0.1)
    assert len(b.trees) == 45 and b.params["eta"] == 0.3 and c.params["eta"] == 0.1
    c = b.copy()
    c.feature_types = ["categorical"] + ["numeric"] * 4
    c.category_dictionaries = {0: ["red", "blue"]}
    s = c[2:7]  # before, a slice reset every feature to numeric
    assert s.feature_types == c.feature_types and s.category_dictionaries == {0: ["red", "blue"]}
    s.category_dictionaries[0].append("green")
    assert c.category_dictionaries == {0: ["red", "blue"]}
    # (s's feature 0 now learned the categories "red" and "blue": numbers are refused)
    np.testing.assert_array_equal(b[2:7].predict(X), b.predict(X, iteration_range=(2, 7)))


def _twins(tmp_path, params, twin, X, y, rounds=4):
    """A model of ``params`` (saved and loaded back) and of ``twin`` (the objective
    it shares its loss with), each with its evaluation log."""
    logs = ({}, {})
    models = [bw.train(p, bw.Dataset(X, y), rounds, evals=[(bw.Dataset(X, y), "t")],
                       evals_result=log, verbose_eval=False) for p, log in zip((params, twin), logs)]
    models[0].save_model(tmp_path / "m.json")
    return bw.Booster(model_file=tmp_path / "m.json"), models[1], logs


def test_multi_softmax_predicts_the_class_of_multi_softprob(tmp_path):
    """``multi:softmax`` (before: unknown) grows multi:softprob's trees and predicts the
    most probable class as a float; metrics read the probabilities, so its log is
    softprob's (an mlogloss of class ids would be meaningless)."""
    r = np.random.default_rng(5)
    X = r.normal(size=(600, 4))
    y = np.digitize(X[:, 0] + 0.5 * r.normal(size=600), [-0.5, 0.5]).astype(float)
    soft, prob, (log_a, log_b) = _twins(
        tmp_path, dict(objective="multi:softmax", num_class=3, eval_metric=["mlogloss", "merror"]),
        dict(objective="multi:softprob", num_class=3, eval_metric=["mlogloss", "merror"]), X, y)
    assert log_a == log_b
    p = prob.predict(X)
    out = soft.predict(X)
    assert out.shape == (600,) and out.dtype == np.float64
    np.testing.assert_array_equal(out, np.argmax(p, axis=1))
    np.testing.assert_array_equal(soft.predict(X, output_margin=True),
                                  prob.predict(X, output_margin=True))
    with pytest.raises(ValueError, match="'multi:softmax' needs the parameter num_class"):
        bw.train(dict(objective="multi:softmax"), bw.Dataset(X, y), 1)
    with pytest.raises(ValueError, match=r"multi:softmax with num_class=2 needs integer labels"):
        bw.train(dict(objective="multi:softmax", num_class=2), bw.Dataset(X, y), 1)


def test_binary_logitraw_predicts_the_margins_of_binary_logistic(tmp_path):
    """``binary:logitraw`` (before: unknown) predicts binary:logistic's margins; its
    metrics read probabilities (XGBoost computes its default logloss on the margins), and
    a ``base_score`` is a margin, as its predictions are."""
    X, y = make_classification(n=800)
    raw, logistic, (log_a, log_b) = _twins(tmp_path, dict(objective="binary:logitraw"),
                                           dict(objective="binary:logistic"), X, y)
    assert log_a == log_b and list(log_a["t"]) == ["logloss"]
    np.testing.assert_array_equal(raw.predict(X), logistic.predict(X, output_margin=True))
    b = bw.train(dict(objective="binary:logitraw", base_score=-0.25), bw.Dataset(X, y), 0)
    np.testing.assert_array_equal(b.predict(X[:3]), np.full(3, -0.25))


def test_reg_logistic_takes_probabilities_as_labels():
    """Soft labels: ``reg:logistic`` minimises the log loss at p = y (a constant label
    0.3 is learned as 0.3); binary:logistic refuses them and names reg:logistic."""
    X = np.random.default_rng(0).normal(size=(200, 2))
    y = np.full(200, 0.3)
    b = bw.train(dict(objective="reg:logistic"), bw.Dataset(X, y), 0)
    np.testing.assert_allclose(b.predict(X[:2]), 0.3, rtol=1e-12)
    with pytest.raises(ValueError, match="use reg:logistic"):
        bw.train(dict(objective="binary:logistic"), bw.Dataset(X, y), 1)
    with pytest.raises(ValueError, match=r"reg:logistic needs labels in \[0, 1\]"):
        bw.train(dict(objective="reg:logistic"), bw.Dataset(X, y + 1), 1)


def test_eval_and_eval_set_give_the_training_log_s_last_values():
    """XGBoost's ``Booster.eval`` / ``eval_set`` (before: no such methods): the model's
    metrics, in XGBoost's line format, equal to the training log at the last round, and
    at the best one after early stopping (the rounds ``predict`` uses); a custom metric
    reads what the built-in ones read."""
    from boostwood.boosting.metrics import get_metric
    X, y = make_classification(n=500)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 500)
    dtest = bw.Dataset(X[:200], y[:200], weight=w[:200])
    log = {}
    b = bw.train(dict(objective="binary:logitraw", eval_metric=["logloss", "auc", "error@0.6"]),
                 bw.Dataset(X, y), 4, evals=[(dtest, "test")], evals_result=log,
                 verbose_eval=False)
    line = b.eval(dtest, "test", iteration=3)
    head, *fields = line.split("\t")
    assert head == "[3]"
    values = {k: float(v) for k, v in (f.split(":") for f in fields)}
    assert values == {f"test-{m}": vals[-1] for m, vals in log["test"].items()}
    both = b.eval_set([(dtest, "a"), (bw.Dataset(X, y), "b")], output_margin=False,
                      feval=lambda p, d: ("meanp", float(np.mean(p))))
    assert both.startswith("[0]\ta-logloss:") and "\tb-auc:" in both
    mean_p = float(both.split("b-meanp:")[1])
    assert mean_p == pytest.approx(np.mean(1 / (1 + np.exp(-b.predict(X)))), rel=1e-12)
    stopped = bw.train(dict(objective="binary:logistic", eta=1.0), bw.Dataset(X[200:], y[200:]),
                       60, evals=[(dtest, "test")], evals_result=log, early_stopping_rounds=3,
                       verbose_eval=False)
    assert stopped.num_boosted_rounds() > stopped.best_iteration + 1
    assert float(stopped.eval(dtest, "test").split(":")[1]) == \
        log["test"]["logloss"][stopped.best_iteration]
    line = b.eval_set([(dtest, "t")], iteration_range=(0, 2),  # (margins: XGBoost's default)
                      feval=lambda m, d: [("lo", float(m.min())), ("hi", float(m.max()))])
    margins = b.predict(dtest, iteration_range=(0, 2))  # (logitraw: margins)
    assert f"t-lo:{float(margins.min())!r}\tt-hi:{float(margins.max())!r}" in line
    assert float(line.split("t-logloss:")[1].split("\t")[0]) == pytest.approx(
        get_metric("logloss")(y[:200], 1 / (1 + np.exp(-margins)), w[:200]), rel=1e-12)
    for bad in (None, (("a", 1.0), ("b", 2.0)), [("a", 1.0), "x"], ("a", "high"), []):
        with pytest.raises(TypeError, match="feval"):  # (before: crashes in the unpacking)
            b.eval_set([(dtest, "t")], feval=lambda m, d, bad=bad: bad)
    with pytest.raises(ValueError, match="has no label"):
        b.eval(bw.Dataset(X))
    with pytest.raises(TypeError, match=r"\(Dataset, name\) pairs"):
        b.eval_set([(X, "x")])
    with pytest.raises(ValueError, match="no model"):
        bw.Booster().eval(dtest)
