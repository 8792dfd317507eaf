"""The hardened boundary, second part: every named argument is checked by one table
(estimator hyperparameters, Booster methods, train / cv / Dataset arguments), a
loaded model's header is validated before anything trusts it, sizes are checked
before anything is allocated, and the CLI's readers name what is wrong in a file.
Each test failed before its fix (the message or the old behaviour is in a comment)."""
import io
import json
import math
import os
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
import scipy.sparse as sp

import boostwood as bw
from boostwood.boosting import model_io
from boostwood.cli import main

sk = pytest.importorskip("boostwood.sklearn")


def _data(n=80):
    r = np.random.default_rng(0)
    X = r.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(float)


# -- estimator hyperparameters ---------------------------------------------------------------
@pytest.mark.parametrize("make,error,match", [
    # all of these were accepted (coerced) or crashed before the hyperparameter table
    (lambda: sk.RandomForestClassifier(n_estimators=3, bootstrap="no"), TypeError, "bootstrap"),
    (lambda: sk.RandomForestRegressor(n_estimators=3, oob_score=1), TypeError, "oob_score"),
    (lambda: sk.DecisionTreeClassifier(max_depth=True), TypeError, "max_depth"),
    (lambda: sk.DecisionTreeRegressor(min_samples_leaf=True), ValueError, "min_samples_leaf"),
    (lambda: sk.DecisionTreeRegressor(ccp_alpha=float("nan")), ValueError, "ccp_alpha"),
    (lambda: sk.ExtraTreesRegressor(n_estimators=3, min_impurity_decrease=math.inf),
     ValueError, "min_impurity_decrease"),
    (lambda: sk.DecisionTreeClassifier(max_bin="x"), TypeError, "max_bin"),
    (lambda: sk.RandomForestClassifier(n_estimators=3, n_jobs=1.5), TypeError, "n_jobs"),
    (lambda: sk.DecisionTreeClassifier(class_weight=[1]), TypeError, "class_weight"),
    (lambda: sk.DecisionTreeClassifier(random_state=[1]), TypeError, "random_state"),
    (lambda: sk.AdaBoostClassifier(learning_rate=math.inf), ValueError, "learning_rate"),
    (lambda: sk.AdaBoostRegressor(n_estimators=True), TypeError, "n_estimators"),
    (lambda: sk.GBDTRegressor(n_estimators=2**70), ValueError, "n_estimators"),  # a hang
    (lambda: sk.GBDTClassifier(random_state=math.inf), TypeError, "random_state"),  # Overflow
    (lambda: sk.GBDTRegressor(validation_fraction="x"), TypeError, "validation_fraction"),
    (lambda: sk.GBDTRegressor(learning_rate=0.0), ValueError, "learning_rate"),
    (lambda: sk.GBDTRegressor(quantile_alpha=1.5, objective="reg:quantileerror"),
     ValueError, "quantile_alpha"),
])
def test_a_bad_hyperparameter_is_a_clear_error_naming_it(make, error, match):
    X, y = _data()
    with pytest.raises(error, match=match):
        make().fit(X, y)


def test_the_hyperparameter_table_keeps_every_legal_value():
    X, y = _data()
    rs = np.random.RandomState(3)
    for est in (sk.RandomForestClassifier(n_estimators=3, max_features="log2",
                                          min_samples_split=0.2, max_samples=0.5,
                                          class_weight={0.0: 1, 1.0: 2}, random_state=rs),
                sk.DecisionTreeRegressor(max_depth=np.int64(3), min_samples_leaf=0.05),
                sk.GBDTClassifier(n_estimators=3, random_state=rs, n_jobs=-1, verbose=0),
                sk.AdaBoostClassifier(n_estimators=np.int64(2), learning_rate=0.5)):
        assert est.fit(X, y).predict(X).shape == (len(y),)


# -- Booster methods, train, cv, Dataset, callbacks ----------------------------------------
@pytest.fixture(scope="module")
def booster():
    X, y = _data()
    return bw.train({"objective": "binary:logistic", "max_depth": 2}, bw.Dataset(X, y), 3,
                    verbose_eval=False), bw.Dataset(X, y)


@pytest.mark.parametrize("call,error,match", [
    (lambda b, d: b.dump_model(0), TypeError, "fout"),  # wrote to (and closed) stdin's fd
    (lambda b, d: b.dump_model(None, "text", "yes"), TypeError, "with_stats"),
    (lambda b, d: b.export_text(True), TypeError, "tree_index"),
    (lambda b, d: b.export_text(0, 2.5), TypeError, "decimals"),
    (lambda b, d: b.partial_dependence(1.5, [0.0]), TypeError, "feature"),
    (lambda b, d: b.partial_dependence(0, 1.5), ValueError, "grid"),
    (lambda b, d: b.save_model(3), TypeError, "fname"),
    (lambda b, d: bw.Booster(0), TypeError, "params"),
    (lambda b, d: bw.train({}, d, 2**40, verbose_eval=False), ValueError, "num_boost_round"),
    (lambda b, d: bw.train({}, d, 2, evals=[(d, "t")], verbose_eval=1.5), TypeError,
     "verbose_eval"),
    (lambda b, d: bw.train({}, d, 2, evals=0), TypeError, "evals"),
    (lambda b, d: bw.train({}, d, 2, callbacks=0), TypeError, "callbacks"),
    (lambda b, d: bw.train({}, d, 2, reducer=0), TypeError, "reducer"),  # AttributeError
    (lambda b, d: bw.train({}, d, 2, obj=3), TypeError, "obj"),
    (lambda b, d: bw.train({}, d, 2, evals_result=[]), TypeError, "evals_result"),
    (lambda b, d: bw.cv({}, d, 2, stratified="x"), TypeError, "stratified"),
    (lambda b, d: bw.cv({}, d, 2, nfold=2.0), TypeError, "nfold"),
    (lambda b, d: bw.Dataset(d.features.dense, d.label, seed=1.5), TypeError, "seed"),
    (lambda b, d: bw.EarlyStopping(2, maximize="yes"), TypeError, "maximize"),
    (lambda b, d: bw.EvaluationMonitor(1.5), TypeError, "period"),
    (lambda b, d: bw.train({"eta": math.inf}, d, 1), ValueError, "eta"),
])
def test_a_bad_argument_is_a_clear_error_naming_it(booster, call, error, match):
    with pytest.raises(error, match=match):
        call(*booster)


# -- model header ----------------------------------------------------------------------------
def _tampered(tmp_path, b, edit):
    b.save_model(tmp_path / "m.json")
    model = json.loads((tmp_path / "m.json").read_text())["model"]
    edit(model)
    (tmp_path / "t.json").write_text(model_io.dumps(model))  # checksum recomputed
    return tmp_path / "t.json"


@pytest.mark.parametrize("edit,match", [
    (lambda m: m.update(objective="reg:squarederror"), "disagrees"),
    (lambda m: m["params"].update(objective="reg:squarederror"), "disagrees"),  # a wrong link
    (lambda m: m.update(n_outputs=2), "disagrees"),
    (lambda m: m.update(best_iteration=7), "best_iteration"),
    (lambda m: m.update(best_iteration=True), "best_iteration"),
    (lambda m: m.update(best_score="0.5"), "best_score"),
    (lambda m: m.update(feature_names=[0, 1, 2]), "feature_names"),
    (lambda m: m.update(feature_names=["a", "a", "b"]), "feature_names"),
    (lambda m: m.update(n_features=True), "n_features"),
    (lambda m: m.update(base_score=[True]), "base_score"),
    (lambda m: m.update(surprise=1), "unknown keys"),
    (lambda m: m.pop("params"), "missing keys"),
    (lambda m: m["params"].update(eta=-1), "invalid params"),
])
def test_a_tampered_model_header_is_refused(tmp_path, booster, edit, match):
    path = _tampered(tmp_path, booster[0], edit)
    with pytest.raises(ValueError, match=match):
        bw.Booster(model_file=path)


def test_a_failed_load_leaves_the_booster_as_it_was(tmp_path, booster):
    b = booster[0]
    path = _tampered(tmp_path, b, lambda m: m.update(objective="reg:squarederror"))
    target = bw.Booster(model_file=tmp_path / "m.json")
    before = target.predict(booster[1])
    with pytest.raises(ValueError):
        target.load_model(path)
    assert target.params["objective"] == "binary:logistic"
    np.testing.assert_array_equal(target.predict(booster[1]), before)


# -- sizes before allocation -----------------------------------------------------------------
def test_an_absurd_sparse_shape_is_a_size_error_not_an_allocation():
    n, width = 50, 10**8  # binning it needs ~1 TiB (the process was killed by the OOM killer)
    X = sp.csr_matrix((np.ones(n), np.arange(n) * 7, np.arange(n + 1)), shape=(n, width))
    with pytest.raises(ValueError, match="GiB"):
        bw.train({}, bw.Dataset(X, np.arange(n, dtype=float)), 1, verbose_eval=False)


# -- the CLI's readers -----------------------------------------------------------------------
def _train_cli(tmp_path, name, content, *extra):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        content(path)
    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        code = main(["train", "--data", str(path), "--rounds", "1", "--quiet",
                     "--model", str(tmp_path / "m.json"), *extra])
    return code, err.getvalue().strip()


@pytest.mark.parametrize("content,match", [
    (b"1 99999999999999999999:1\n0 1:2\n", "bad feature index"),  # OverflowError's text
    (b"1 3:1 3:2\n0 1:1\n", "appears twice"),  # silently kept one of them
    (b"1 1:1e999999\n0 1:2\n", "out of the range"),  # read as infinity
])
def test_libsvm_errors_name_the_line(tmp_path, content, match):
    code, err = _train_cli(tmp_path, "d.libsvm", content)
    assert code == 2 and match in err and ":1:" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("column,match", [
    ([[1, 2], [3], []], "list"),  # "setting an array element with a sequence"
    ([{"p": 1}, {"p": 2}, {"p": 3}], "struct"),
    # (a string column is a categorical feature since [Q2]: tests/test_categorical.py)
])
def test_parquet_columns_that_are_not_numbers_are_named(tmp_path, column, match):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    def write(path):
        pq.write_table(pa.table({"y": [1.0, 0.0, 1.0], "b": column}), path)

    code, err = _train_cli(tmp_path, "d.parquet", write, "--label", "y")
    assert code == 2 and "column 'b'" in err and match in err


def test_predict_on_a_file_without_rows_is_an_error_and_writes_nothing(tmp_path):
    X, y = _data()
    bw.train({}, bw.Dataset(X, y, feature_names=["a", "b", "c"]), 2,
             verbose_eval=False).save_model(tmp_path / "m.json")
    (tmp_path / "empty.csv").write_text("a,b,c\n")
    for out in ("p.csv", "p.parquet"):
        err = io.StringIO()
        with redirect_stderr(err):
            code = main(["predict", "--model", str(tmp_path / "m.json"), "--data",
                         str(tmp_path / "empty.csv"), "--output", str(tmp_path / out)])
        # before: exit 0 and an empty file (CSV), or "p.parquet.tmp: No such file"
        assert code == 2 and "no data rows" in err.getvalue()
        assert not any(p.startswith("p.") for p in os.listdir(tmp_path))


def test_evals_sets_must_have_the_training_columns_by_name():
    """An evaluation set is scored, and early stopping decided, on its columns: a
    different number of them (before: a 2-column set was scored against a 3-column
    model, logloss 0.436 ...), other names or order, or no names against named training
    data would match them by position."""
    pd = pytest.importorskip("pandas")
    X, y = _data(200)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    named, unnamed = bw.Dataset(df, y), bw.Dataset(X, y)
    cases = [(unnamed, bw.Dataset(X[:, :2], y), "2 features but the training data has 3"),
             (unnamed, bw.Dataset(np.hstack([X, X]), y), "6 features"),
             (named, bw.Dataset(df[["c", "b", "a"]], y), r"\['c', 'b', 'a'\]"),
             (named, bw.Dataset(X, y), r"\['f0', 'f1', 'f2'\].*\['a', 'b', 'c'\]"),
             (named, bw.Dataset(X, y, reference=named), "matched by position"),
             (unnamed, bw.Dataset(df, y), r"\['a', 'b', 'c'\].*\['f0', 'f1', 'f2'\]")]
    for dtrain, dvalid, match in cases:
        with pytest.raises(ValueError, match=match):
            bw.train({}, dtrain, 2, evals=[(dvalid, "v")], verbose_eval=False)
    with pytest.raises(TypeError, match="must be a boostwood.Dataset"):
        bw.train({}, unnamed, 2, evals=[(X, "v")], verbose_eval=False)
    # before: TypeError "unsupported operand type(s) for -: 'NoneType' and 'float'"
    with pytest.raises(ValueError, match="evals set 'v' has no label"):
        bw.train({}, unnamed, 2, evals=[(bw.Dataset(X), "v")], verbose_eval=False)
    for dtrain, dvalid in ((named, bw.Dataset(df, y, reference=named)),
                           (unnamed, bw.Dataset(X, y))):
        r = {}
        bw.train({}, dtrain, 2, evals=[(dvalid, "v")], verbose_eval=False, evals_result=r)
        assert len(r["v"]["rmse"]) == 2


def test_early_stopping_split_of_a_dataframe_does_not_warn_about_names():
    """The validation rows an estimator splits off its own (checked) X are not checked
    again: that warned "X does not have valid feature names" on every DataFrame fit."""
    pd = pytest.importorskip("pandas")
    import warnings
    X, y = _data(200)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        sk.GBDTRegressor(n_estimators=5, early_stopping_rounds=2).fit(df, y)
    with pytest.warns(UserWarning, match="feature names"):  # scikit-learn's rule stays
        sk.GBDTRegressor(n_estimators=5).fit(df, y, eval_set=[(X, y)])


def test_eval_set_must_be_a_list_of_pairs():
    """``eval_set=(X, y)`` (one pair, not a list of pairs) failed with "too many values
    to unpack"; a 2-row X even unpacked into two rows taken as (X, y)."""
    X, y = _data(200)
    for bad in ((X, y), [X], [(X, y, y)], (X[:2], y[:2]), "xy"):
        with pytest.raises(TypeError, match=r"list of \(X, y\) pairs"):
            sk.GBDTRegressor(n_estimators=3).fit(X, y, eval_set=bad)
    m = sk.GBDTRegressor(n_estimators=3).fit(X, y, eval_set=[(X, y), [X, y]])
    assert set(m.evals_result_) == {"validation_0", "validation_1"}
