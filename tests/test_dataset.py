"""Dataset inputs and validation at the boundary."""
import json

import numpy as np
import pytest

import boostwood as bw


def _fit_predict(X, y):
    b = bw.train({"max_depth": 3}, bw.Dataset(X, y), 5, verbose_eval=False)
    return b.predict(X)


def test_numeric_dtypes_and_orders_give_the_same_model(rng):
    X = rng.integers(0, 50, size=(300, 4))
    y = X[:, 0] * 1.5 + rng.normal(size=300)
    ref = _fit_predict(X.astype(np.float64), y)
    for arr in (X, X.astype(np.int32), X.astype(np.float32), np.asfortranarray(X.astype(float)),
                X.astype(np.uint8), X.astype(np.float16)):
        np.testing.assert_array_equal(_fit_predict(arr, y), ref)


def test_pandas_and_sparse_inputs(rng):
    pd = pytest.importorskip("pandas")
    sp = pytest.importorskip("scipy.sparse")
    X = rng.normal(size=(400, 3))
    X[X < 0.3] = 0.0
    y = X[:, 0] + X[:, 1]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    d = bw.Dataset(df, y)
    assert d.feature_names == ["a", "b", "c"]
    ref = _fit_predict(X, y)
    for data in (df, sp.csr_matrix(X), sp.csc_matrix(X)):
        b = bw.train({"max_depth": 3}, bw.Dataset(data, y), 5, verbose_eval=False)
        np.testing.assert_array_equal(b.predict(data), ref)
    nullable = df.astype({"a": "Float64"})
    nullable.loc[0, "a"] = None
    assert np.isnan(bw.Dataset(nullable, y).features.dense[0, 0])


def _arrow_frames(X):
    """The frames of X with columns a, b, c: a pyarrow Table and RecordBatch, and a
    polars DataFrame where polars is installed."""
    pa = pytest.importorskip("pyarrow")
    cols = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2]}
    frames = [pa.table(cols), pa.RecordBatch.from_pydict(cols)]
    try:
        import polars as pl
        frames.append(pl.DataFrame(cols))
    except ImportError:
        pass
    return frames


def test_arrow_tables_and_polars_frames_are_named_features(rng):
    """Arrow tables and polars DataFrames are features by name, nulls missing: the same
    model and predictions as the numpy array with NaN (before, a TypeError)."""
    pa = pytest.importorskip("pyarrow")
    X = rng.normal(size=(400, 3))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.nan_to_num(X[:, 0]) + rng.normal(size=400) * 0.1
    ref = bw.train({"max_depth": 3}, bw.Dataset(X, y, feature_names=["a", "b", "c"]), 5)
    for frame in _arrow_frames(X):
        d = bw.Dataset(frame, y)
        assert d.feature_names == ["a", "b", "c"]
        np.testing.assert_array_equal(d.features.dense, X)
        b = bw.train({"max_depth": 3}, d, 5)
        np.testing.assert_array_equal(b.predict(frame), ref.predict(X, validate_features=False))
        np.testing.assert_array_equal(ref.predict(frame), b.predict(frame))
        # columns in another order are selected by name ([Q2]); other names are refused
        np.testing.assert_array_equal(ref.predict(frame.select(["c", "b", "a"])),
                                      ref.predict(frame))
        with pytest.raises(ValueError, match="feature names differ"):
            ref.predict(frame.rename({"c": "z"}) if hasattr(frame, "with_columns")
                        else frame.rename_columns(["a", "b", "z"]))
    nulls = pa.table({"a": pa.array([1, None, 3]), "b": pa.array([True, None, False]),
                      "c": pa.array([None, None, None])})
    want = np.array([[1, 1, np.nan], [np.nan, np.nan, np.nan], [3, 0, np.nan]])
    np.testing.assert_array_equal(bw.Dataset(nulls, [0, 1, 2]).features.dense, want)
    # strings are categorical features now ([Q2]); a type neither numbers nor categories is
    # still refused by name
    with pytest.raises(TypeError, match=r"not supported: .*'when \(date32"):
        bw.Dataset(pa.table({"x": [1.0, 2.0], "when": pa.array([1, 2], pa.date32())}), [0, 1])
    assert bw.Dataset(pa.table({"x": [1.0, 2.0], "colour": ["red", "blue"]}),
                      [0, 1]).feature_types == ["numeric", "categorical"]
    with pytest.raises(ValueError, match="label contains 1 NaN"):
        bw.Dataset(X, pa.array(np.where(np.arange(400) == 7, None, y).tolist()))
    got = bw.Dataset(X, pa.chunked_array([y[:100], y[100:]])).label
    np.testing.assert_array_equal(got, y)
    big = np.array([2**62 + 1, -(2**60) - 3, 7], dtype=np.int64)  # beyond 2**53: rounded
    np.testing.assert_array_equal(bw.Dataset(pa.table({"id": big}), [0, 1, 2]).features.dense,
                                  big.astype(np.float64)[:, None])
    with pytest.raises(ValueError, match="label contains 1 NaN"):
        bw.Dataset(X[:2], pa.array([True, None]))
    with pytest.raises(TypeError, match="label must be numeric"):
        bw.Dataset(X[:2], pa.array(["a", "b"]))


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(data=np.zeros((0, 3)), label=np.zeros(0)), ValueError, "no rows"),
    (dict(data=np.zeros((3, 0)), label=np.zeros(3)), ValueError, "no features"),
    (dict(data=np.zeros(3), label=np.zeros(3)), ValueError, "2-dimensional"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(4)), ValueError, "label has 4 entries"),
    (dict(data=np.zeros((3, 2)), label=np.array([0, np.nan, 1])), ValueError, "label contains 1 NaN"),
    (dict(data=np.zeros((3, 2)), label=np.array([0, np.inf, 1])), ValueError, "label contains"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), weight=[1, -1, 1]), ValueError, "non-negative"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), weight=[0, 0, 0]), ValueError, "positive"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), weight=[1, np.nan, 1]), ValueError, "weight"),
    (dict(data=np.array([["a", "b"]]), label=[0]), TypeError, "numeric dtype"),
    (dict(data="nonsense", label=[0]), TypeError, "numpy array"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), max_bin=1), ValueError, "max_bin"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), feature_names=["a"]), ValueError, "feature_names"),
    (dict(data=np.zeros((3, 2)), label=np.zeros(3), feature_names=["a", "a"]), ValueError, "unique"),
])
def test_bad_input_gives_a_clear_error(kwargs, error, match):
    with pytest.raises(error, match=match):
        bw.Dataset(**kwargs)


def test_non_numeric_dataframe_column_is_named():
    pd = pytest.importorskip("pandas")
    when = pd.DataFrame({"x": [1.0, 2.0], "when": pd.to_datetime(["2020-01-01", "2021-01-01"])})
    with pytest.raises(TypeError, match="not supported: .*when"):
        bw.Dataset(when, [0, 1])
    # strings are categorical features now ([Q2])
    df = pd.DataFrame({"x": [1.0, 2.0], "colour": ["red", "blue"]})
    assert bw.Dataset(df, [0, 1]).feature_types == ["numeric", "categorical"]


def test_reference_reuses_training_bins_and_checks_width(rng):
    X = rng.normal(size=(500, 3))
    dtr = bw.Dataset(X, X[:, 0])
    dva = bw.Dataset(X[:50] * 10, X[:50, 0], reference=dtr).construct()
    assert dva.bin_mapper is dtr.bin_mapper
    with pytest.raises(ValueError, match="3"):
        bw.Dataset(X[:, :2], X[:, 0], reference=dtr)


def test_constant_features_are_never_split_on(rng):
    X = np.column_stack([np.full(500, 7.0), rng.normal(size=500), np.zeros(500)])
    b = bw.train({"max_depth": 4}, bw.Dataset(X, X[:, 1] ** 2), 10, verbose_eval=False)
    used = b.feature_importance("split")
    assert used[0] == 0 and used[2] == 0 and used[1] > 0


def test_infinite_features_are_ordinary_extreme_values(rng):
    x = rng.normal(size=400)
    x[:20], x[20:40] = np.inf, -np.inf
    y = (x > 0).astype(float)
    b = bw.train({"objective": "binary:logistic", "max_depth": 2}, bw.Dataset(x[:, None], y), 20,
                 verbose_eval=False)
    p = b.predict(np.array([[np.inf], [-np.inf]]))
    assert p[0] > 0.9 and p[1] < 0.1


def test_missing_values_learn_a_direction(rng):
    x = rng.normal(size=2000)
    y = (x > 0).astype(float)
    x[y == 1][:300] = np.nan
    x[np.flatnonzero(y == 1)[:300]] = np.nan  # NaN only among positives
    b = bw.train({"objective": "binary:logistic", "max_depth": 2}, bw.Dataset(x[:, None], y), 20,
                 verbose_eval=False)
    assert b.predict(np.array([[np.nan]]))[0] > 0.9


def test_nan_without_training_nan_goes_to_the_heavier_child(rng):
    x = np.concatenate([rng.uniform(0, 1, 1800), rng.uniform(2, 3, 200)])
    y = (x > 1.5) * 5.0
    b = bw.train({"max_depth": 1, "eta": 1.0}, bw.Dataset(x[:, None], y), 1, verbose_eval=False)
    assert b.predict(np.array([[np.nan]]))[0] == pytest.approx(b.predict(np.array([[0.5]]))[0])


def test_unweighted_rows_hold_no_weight_array_and_train_as_unit_weights():
    """Without weights the row info's weights are ones that take no memory (one value
    seen through a stride of 0, read-only), and training gives the model of explicit
    unit weights to the bit."""
    from boostwood.data.rowinfo import RowInfo
    r = np.random.default_rng(3)
    X = r.normal(size=(3000, 4))
    y = (X[:, 0] + r.normal(size=3000) > 0).astype(float)
    for w in (bw.Dataset(X, y).row_info().weight, RowInfo.of(y).weight):
        assert w.shape == (3000,) and w.strides == (0,) and not w.flags.writeable
        assert np.all(w == 1.0)
    params = dict(objective="binary:logistic", max_depth=4)
    plain = bw.train(params, bw.Dataset(X, y), 5, verbose_eval=False)
    ones = bw.train(params, bw.Dataset(X, y, weight=np.ones(3000)), 5, verbose_eval=False)
    assert np.array_equal(plain.predict(X, output_margin=True), ones.predict(X, output_margin=True))


@pytest.mark.parametrize("params", [
    {"max_depth": 4, "subsample": 0.7, "colsample_bynode": 0.6},
    {"grow_policy": "lossguide", "max_leaves": 15, "max_depth": 0, "eval_metric": "auc"},
    {"bin_construct_sample_cnt": 700},  # the binning sample taken across the blocks
    {"tree_method": "approx"},  # (sorted columns need the whole matrix: joined then)
])
def test_row_blocks_train_the_model_of_the_joined_array(params, rng):
    """A FeatureMatrix held as row blocks (a Dask worker's partitions, empty ones too)
    trains the model of the joined array to the byte, weighted or not, and histogram
    training never joins the blocks (no copy of the data)."""
    from boostwood.data.validation import FeatureMatrix
    X = rng.normal(size=(3000, 5))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (X[:, 0] + rng.normal(size=3000) > 0).astype(float)
    w = rng.random(3000) + 0.5
    params = {"objective": "binary:logistic", "seed": 3, **params}
    for weight in (None, w):
        single = bw.train(params, bw.Dataset(X, y, weight=weight), 5, verbose_eval=False)
        fm = FeatureMatrix.from_blocks([X[:700], X[700:700], X[700:2100], X[2100:]])
        d = bw.Dataset(fm, y, weight=weight, row_ids=np.arange(3000))
        blocked = bw.train(params, d, 5, verbose_eval=False)
        assert json.dumps(blocked._to_dict()) == json.dumps(single._to_dict())
        assert (d.features._blocks is None) == (params.get("tree_method") == "approx")
    np.testing.assert_array_equal(fm.take_rows([2999, 0, 701, 700, 2100]).dense,
                                  X[[2999, 0, 701, 700, 2100]])
    fm = FeatureMatrix.from_blocks([X[:700], X[700:]])
    np.testing.assert_array_equal(fm.take_rows([-1, 700, 3]).dense, X[[-1, 700, 3]])
    for bad in ([3000], [-3001], np.ones(3000, dtype=bool), [0.5]):
        with pytest.raises(IndexError):
            fm.take_rows(bad)  # (never rows of uninitialised memory)
    for blocks in ([X[:5], X[:5, :3]], [X[:5], X[0]], []):
        with pytest.raises(ValueError, match="row blocks"):
            FeatureMatrix.from_blocks(blocks)
