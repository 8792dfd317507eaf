"""Native categorical features ([Q2]): input, the set splits against naive searches,
unseen and missing categories, round trips, shards and threads."""
import itertools
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._comm import SimulatedShards
from boostwood._kernels.categorical import category_settings, scan_categorical
from boostwood._kernels.gain import split_settings

pd = pytest.importorskip("pandas")

# one split, squared error, no regularisation but what a test names
PLAIN = {"max_depth": 1, "eta": 1.0, "lambda": 0.0, "min_child_weight": 0.0,
         "base_score": 0.0, "cat_smooth": 0.0, "cat_l2": 0.0, "min_data_per_group": 0,
         "max_cat_threshold": 64}


def _frame(n=3000, k=12, seed=0, missing=0.05):
    rng = np.random.default_rng(seed)
    names = np.array([f"v{i:02d}" for i in range(k)], dtype=object)
    effect = rng.normal(size=k) * 2
    c = rng.integers(0, k, n)
    x = rng.normal(size=n)
    y = effect[c] + 0.5 * x + rng.normal(size=n) * 0.3
    col = names[c].copy()
    col[rng.random(n) < missing] = None
    return pd.DataFrame({"x": x, "c": col}), y


def _json(booster):
    """The saved model, but for the thread count it records."""
    m = booster._to_dict()
    m["params"].pop("nthread", None)
    m.pop("boostwood_version", None)
    return json.dumps(m, sort_keys=True)


def _gain(G, H, lam=0.0):
    return G * G / (H + lam) if H + lam > 0 else 0.0


def _brute_force(g, h, codes, k, singletons):
    """The best gain over every set of categories (or every single category) sent left,
    squared error (h = 1): the naive twin of the scan."""
    Gt, Ht = g.sum(), h.sum()
    Gc = np.bincount(codes, g, k)
    Hc = np.bincount(codes, h, k)
    held = [c for c in range(k) if Hc[c] > 0]
    sets = [(c,) for c in held] if singletons else [
        s for r in range(1, len(held)) for s in itertools.combinations(held, r)]
    best = max(sets, key=lambda s: _gain(Gc[list(s)].sum(), Hc[list(s)].sum())
               + _gain(Gt - Gc[list(s)].sum(), Ht - Hc[list(s)].sum()))
    GL, HL = Gc[list(best)].sum(), Hc[list(best)].sum()
    return 0.5 * (_gain(GL, HL) + _gain(Gt - GL, Ht - HL) - _gain(Gt, Ht)), set(best)


@pytest.mark.parametrize("k,onehot", [(3, True), (4, True), (6, False), (9, False)])
def test_the_root_split_is_the_best_set_a_brute_force_search_finds(k, onehot):
    """Squared error: many-vs-many picks the best of all 2^(k-1) - 1 partitions (Fisher's
    ordering theorem), one-vs-rest the best single category; gain and set (or its
    complement) equal the naive search's."""
    rng = np.random.default_rng(k)
    n = 400
    codes = rng.integers(0, k, n)
    y = rng.normal(size=k)[codes] * 3 + rng.normal(size=n)
    df = pd.DataFrame({"c": pd.Categorical([f"q{c}" for c in codes])})
    params = dict(PLAIN, max_cat_to_onehot=4)
    b = bw.train(params, bw.Dataset(df, label=y), 1)
    tree = b.trees[0]
    assert tree.split_kind[0] == 1
    chosen = set(tree.categories(0).tolist())
    want_gain, want_set = _brute_force(-y, np.ones(n), codes, k, onehot)
    assert tree.gain[0] == pytest.approx(want_gain, rel=1e-6)  # float32 gradients
    if onehot:
        assert chosen == want_set
    else:
        assert chosen in (want_set, set(range(k)) - want_set)


def test_scan_kernel_takes_missing_rows_the_better_way_and_its_bits_match():
    """The kernel alone, on a hand-made histogram: NaN rows with large positive gradients
    go with the categories of positive gradient; the bits written are the set."""
    cell = np.zeros((5, 3), dtype=np.int64)
    # categories 0..3: G, H, count; missing bin 4
    cell[:4] = [[-50, 10, 10], [40, 10, 10], [-45, 10, 10], [35, 10, 10]]
    cell[4] = [60, 10, 10]
    Gt, Ht, Ct = cell.sum(axis=0)
    s = split_settings(0.0, 0.0, 0.0, 0.0, 0.0, 1)
    cs = category_settings(1, 0.0, 0.0, 64, 0)
    left = np.zeros(3, dtype=np.int64)
    bits = np.zeros(1, dtype=np.uint32)
    gain, dl = scan_categorical(cell, 4, Gt, Ht, Ct, s, cs, left, bits)
    chosen = {c for c in range(4) if bits[0] >> c & 1}
    assert chosen == {0, 2} and not dl  # negative gradients left, NaN with the positives
    assert left.tolist() == [-95, 20, 20]
    want = 0.5 * (95 ** 2 / 20 + 135 ** 2 / 30 - 40 ** 2 / 50)
    assert gain == pytest.approx(want)


def test_categories_beat_their_codes_as_numbers():
    """A target driven by 12 unordered categories: trees with set splits (sorted
    partitions: max_cat_to_onehot=1) predict held-out rows better, in the same rounds of
    the same depth, than trees on the category codes. (One-vs-rest, the default, needs
    more rounds here: 0.72 against the codes' 0.75 at 10 rounds.)"""
    df, y = _frame(n=4000)
    train, test = np.arange(3000), np.arange(3000, 4000)
    codes = df.assign(c=df["c"].astype("category").cat.codes.replace(-1, np.nan)
                      .astype(float))
    params = {"max_depth": 2, "eta": 0.3, "max_cat_to_onehot": 1}
    rmse = lambda p: float(np.sqrt(np.mean((p - y[test]) ** 2)))  # noqa: E731
    errors, models = [], []
    for frame in (df, codes):
        models.append(bw.train(params, bw.Dataset(frame.iloc[train], label=y[train]), 10))
        errors.append(rmse(models[-1].predict(frame.iloc[test])))
    assert errors[0] < 0.8 * errors[1]
    assert any(np.any(t.split_kind == 1) for t in models[0].trees)


def test_predictions_follow_values_not_codes_or_declared_categories(tmp_path):
    """Save, load, predict: categories declared in another order, columns in another
    order, a frame holding only some of the categories, strings as object or category dtype, Arrow dictionary and polars
    Categorical columns: the same predictions row for row. The caller's frame is not
    changed."""
    df, y = _frame()
    b = bw.train({"max_depth": 3, "eta": 0.3, "max_cat_to_onehot": 1}, bw.Dataset(df, label=y),
                 10)
    want = b.predict(df)
    path = tmp_path / "m.json"
    b.save_model(path)
    loaded = bw.Booster(model_file=path)
    before = df.copy()
    cat = df.assign(c=pd.Categorical(df["c"], categories=sorted(set(df["c"].dropna()),
                                                                  reverse=True)))
    assert np.array_equal(loaded.predict(df), want)
    assert np.array_equal(loaded.predict(cat), want)
    assert np.array_equal(loaded.predict(cat[["c", "x"]]), want)  # columns by name
    part = df[df["c"].isin(["v01", "v05"])]
    one = part.assign(c=pd.Categorical(part["c"], categories=["v05", "v01"]))
    assert np.array_equal(loaded.predict(one), want[part.index])
    pd.testing.assert_frame_equal(df, before)
    pa = pytest.importorskip("pyarrow")
    table = pa.Table.from_pandas(cat, preserve_index=False)
    assert np.array_equal(loaded.predict(table), want)
    pl = pytest.importorskip("polars")
    assert np.array_equal(loaded.predict(pl.from_pandas(df).with_columns(
        pl.col("c").cast(pl.Categorical))), want)


def test_an_unseen_category_goes_the_missing_way_or_is_an_error():
    """Golden: category a -> +5, b -> -5, missing rows with b's target. An unseen category
    predicts what NaN predicts (the learned missing direction, here b's side), or with
    unseen_category='error' raises naming the column and the value."""
    n = 300
    c = np.array(["a", "b", None] * (n // 3), dtype=object)
    y = np.where(c == "a", 5.0, -5.0)
    df = pd.DataFrame({"c": c})
    b = bw.train(dict(PLAIN, max_cat_to_onehot=4), bw.Dataset(df, label=y), 1)
    pred = b.predict(pd.DataFrame({"c": ["a", "b", None, "zzz"]}))
    assert pred.tolist() == pytest.approx([5.0, -5.0, -5.0, -5.0])
    strict = bw.train(dict(PLAIN, unseen_category="error"), bw.Dataset(df, label=y), 1)
    with pytest.raises(ValueError, match=r"column 'c' holds 1 categories not seen in "
                                         r"training: 'zzz'"):
        strict.predict(pd.DataFrame({"c": ["a", "zzz"]}))
    # evaluation sets alike: with or without reference= (coded when made), the set, the
    # column and the value named; under the default they go the missing way
    dtrain = bw.Dataset(df, label=y)
    odd = pd.DataFrame({"c": ["a", "zzz", None]})
    for dvalid in (bw.Dataset(odd, label=[5.0, -5, -5]),
                   bw.Dataset(odd, label=[5.0, -5, -5], reference=dtrain)):
        with pytest.raises(ValueError, match=r"evaluation set 'valid': column 'c' holds 1 "
                                             r"categories not seen in training: 'zzz'"):
            bw.train(dict(PLAIN, unseen_category="error"), dtrain, 1,
                     evals=[(dvalid, "valid")])
        history = {}
        bw.train(dict(PLAIN, max_cat_to_onehot=4, eval_metric="rmse"), dtrain, 1,
                 evals=[(dvalid, "valid")], evals_result=history, verbose_eval=False)
        assert history["valid"]["rmse"][0] == pytest.approx(0.0, abs=1e-9)


def test_numbers_declared_categorical_and_wrong_inputs():
    """categorical_feature= on a numpy array codes the values (not the array: it is not
    changed); codes for a string-category model, a categorical column for a numeric
    feature, and mixed types are errors naming the column."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=500), rng.integers(10, 20, 500).astype(float)])
    y = np.where(np.isin(X[:, 1], [11, 14, 17]), 3.0, 0.0) + X[:, 0]
    given = X.copy()
    b = bw.train({"max_depth": 2, "max_cat_to_onehot": 1, "min_data_per_group": 10},
                 bw.Dataset(X, label=y, categorical_feature=[1]), 5)
    assert np.array_equal(X, given)
    assert b.feature_types == ["numeric", "categorical"]
    assert b.category_dictionaries[1] == list(range(10, 20))
    assert np.array_equal(b.predict(X), b.predict(X[::-1])[::-1])
    df, y2 = _frame(n=400)
    sb = bw.train({"max_depth": 2}, bw.Dataset(df, label=y2), 2)
    codes = df.assign(c=df["c"].astype("category").cat.codes.astype(float))
    with pytest.raises(TypeError, match=r"column 'c' holds numbers, but the model learned "
                                        r"string categories"):
        sb.predict(codes)
    numeric = bw.train({"max_depth": 2}, bw.Dataset(codes, label=y2), 2)
    with pytest.raises(TypeError, match=r"column 'c' holds categories, but the model's "
                                        "feature of that name is numeric"):
        numeric.predict(df)
    with pytest.raises(TypeError, match=r"column 'c' mixes strings and numbers"):
        bw.Dataset(pd.DataFrame({"c": ["a", 1, "b"]}), label=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"categorical_feature names 'nope'"):
        bw.Dataset(df, label=y2, categorical_feature=["nope"])
    with pytest.raises(ValueError, match=r"tree_method='exact' cannot split categorical"):
        bw.train({"tree_method": "exact"}, bw.Dataset(df, label=y2), 1)
    with pytest.raises(ValueError, match=r"approx_proposal='local' cannot split categorical"):
        bw.train({"tree_method": "approx", "approx_proposal": "local"},
                 bw.Dataset(df, label=y2), 1)


def test_eval_sets_with_or_without_reference_score_like_predict():
    """An evaluation set made with reference= (binned by the training bins) and one made
    without (its own dictionary, recoded by value) log what predict's margins give."""
    df, y = _frame(n=2000, seed=1)
    va, yv = _frame(n=600, seed=2)
    va = va[va["c"] != "v03"]  # its own dictionary lacks a category: other codes
    yv = yv[va.index]
    dtrain = bw.Dataset(df, label=y)
    evals_result = {}
    b = bw.train({"max_depth": 3, "eval_metric": "rmse"}, dtrain, 8,
                 evals=[(bw.Dataset(va, label=yv, reference=dtrain), "ref"),
                        (bw.Dataset(va, label=yv), "own")], evals_result=evals_result)
    rmse = float(np.sqrt(np.mean((b.predict(va) - yv) ** 2)))
    assert evals_result["ref"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)
    assert evals_result["own"]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)


@pytest.mark.parametrize("n_shards,onehot", [(2, 1), (3, 1), (3, 1 << 16)])
def test_shards_and_threads_give_the_single_process_model(n_shards, onehot):
    """Data shards, each holding some of the categories (one shard none of 'v00'), merge
    their dictionaries and grow the single process's model, byte for byte, with set
    splits or one-vs-rest, bagging, column sampling by node (and quantized gradients with
    one-vs-rest); so does one thread."""
    df, y = _frame(n=1500, seed=4)
    params = {"max_depth": 4, "eta": 0.3, "max_cat_to_onehot": onehot,
              "min_data_per_group": 20, "subsample": 0.8, "colsample_bynode": 0.5,
              "nthread": 2, "use_quantized_grad": onehot > 1}
    want = _json(bw.train(params, bw.Dataset(df, label=y), 6))
    assert _json(bw.train(dict(params, nthread=1), bw.Dataset(df, label=y), 6)) == want
    order = np.argsort((df["c"] == "v00").to_numpy(), kind="stable")  # v00 rows last
    parts = np.array_split(order, n_shards)

    def shard(reducer, rank):
        rows = np.sort(parts[rank])
        d = bw.Dataset(df.iloc[rows].reset_index(drop=True), label=y[rows], row_ids=rows)
        return _json(bw.train(params, d, 6, reducer=reducer))

    models = SimulatedShards(n_shards).run(shard)
    assert all(m == want for m in models)


def _naive_partition(cell, nb, s, cs):
    """The set scan written out: every category of at least min_data_per_category rows
    sorted by (G / (H + cat_smooth), code), every prefix of L of them with min(L, n - L) <=
    max_cat_threshold (and all of them, when missing rows or other categories are left
    for the right), missing rows right then left, the first candidate kept on ties;
    float64 scores of the exact sums."""
    from boostwood._kernels.gain import TIE_RTOL
    lam, mcw, mdl = s[0], s[4], s[5]
    smooth, l2, T, group, fewest = cs[1], cs[2], cs[3], cs[4], cs[5]
    held = [c for c in range(nb) if cell[c, 2] > 0 and cell[c, 2] >= fewest]
    rest = cell[:nb, 2].sum()  # every category's rows: those not held stay right
    key = {c: cell[c, 0] / (cell[c, 1] + smooth) if cell[c, 1] + smooth > 0 else 0.0
           for c in held}
    order = sorted(held, key=lambda c: (key[c], c))
    n = len(order)
    Gt, Ht, Ct = cell[:nb + 1].sum(axis=0)
    Gm, Hm, Cm = cell[nb]
    score = lambda g, h, lm: g * g / (h + lm) if h + lm > 0 else 0.0  # noqa: E731
    parent = score(Gt, Ht, lam)
    best, best_set, best_t = -np.inf, None, 0
    for L in range(1, n + 1 if Cm > 0 or rest > cell[held, 2].sum() else n):
        if min(L, n - L) > T:
            continue
        left = order[:L]
        GL, HL, CL = cell[left].sum(axis=0)
        if CL < group or (rest - CL < group and rest > CL):
            continue
        for t in (0, 1) if Cm > 0 else (0,):
            g, h, c = GL + Gm * t, HL + Hm * t, CL + Cm * t
            if c < mdl or Ct - c < mdl or h < mcw or Ht - h < mcw:
                continue
            delta = score(g, h, lam + l2) + score(Gt - g, Ht - h, lam + l2) - parent
            if 0.5 * delta <= 1e-10 * abs(parent):
                continue
            gain = 0.5 * delta
            if best_set is None or gain > best + TIE_RTOL * abs(best):
                best, best_set, best_t = gain, set(left), t
    return best, best_set, best_t


@pytest.mark.parametrize("nb,T,seed,fewest", [
    (300, 5, 0, 0), (300, 40, 1, 0), (40, 3, 2, 0), (7, 32, 3, 0), (1000, 32, 4, 0),
    (200, 7, -1, 0), (200, 30, -2, 0), (300, 5, 5, 25), (40, 32, 6, 30)])
def test_set_scan_equals_a_full_sort_of_every_category(nb, T, seed, fewest):
    """The kernel finds the first and last max_cat_threshold categories of the order
    without sorting them all; a naive twin sorts them all: same gain, same set, same
    missing side, on wide features with empty categories, tied keys, missing rows and
    categories too small to be candidates."""
    rng = np.random.default_rng(abs(seed))
    cell = np.zeros((nb + 1, 3), dtype=np.int64)
    counts = rng.integers(0, 40, nb + 1)
    counts[rng.random(nb + 1) < 0.2] = 0
    cell[:, 2] = counts
    cell[:, 1] = counts * 4  # hessian 4 per row
    cell[:, 0] = rng.integers(-30, 30, nb + 1) * counts
    cell[rng.integers(0, nb, 10), 0] = 0  # some tied keys
    if seed < 0:  # (key, count) from a few values: ties decide which categories go left
        cell[:nb, 2] = 10
        cell[:nb, 1] = 40
        cell[:nb, 0] = rng.choice([-60, -30, 30, 60], nb) * 10
    s = split_settings(1.0, 0.0, 0.0, 0.0, 1.0, 1)
    cs = category_settings(1, 10.0, 5.0, T, 20, fewest)
    left = np.zeros(3, dtype=np.int64)
    bits = np.zeros((nb + 31) // 32, dtype=np.uint32)
    gain, dl = scan_categorical(cell, nb, *cell.sum(axis=0), s, cs, left, bits)
    want, want_set, want_t = _naive_partition(cell.astype(np.float64), nb, s, cs)
    assert gain == pytest.approx(want, rel=1e-12)
    chosen = {c for c in range(nb) if bits[c >> 5] >> (c & 31) & 1}
    assert chosen == want_set
    assert dl == (want_t == 1)


def test_scikit_learn_estimators_take_categorical_frames():
    """GBDTRegressor / GBDTClassifier on a DataFrame with category and string columns
    (categorical_features="from_dtype", scikit-learn HGB's default): the booster's feature
    types, predictions equal to native training on the same frame, early stopping's
    holdout, cross_val_score, a list and a mask naming more columns; a numpy array, or
    categorical_features=None, refuses the strings with a clear error."""
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from sklearn.model_selection import cross_val_score
    df, y = _frame(n=1500, seed=5)
    df["s"] = df["c"].astype("category")
    est = bw.GBDTRegressor(n_estimators=15, learning_rate=0.3, max_depth=3).fit(df, y)
    assert est.booster_.feature_types == ["numeric", "categorical", "categorical"]
    assert list(est.feature_names_in_) == ["x", "c", "s"]
    native = bw.train({"eta": 0.3, "max_depth": 3, "nthread": 0, "seed": 0,
                       "min_child_weight": 1.0}, bw.Dataset(df, label=y), 15)
    np.testing.assert_allclose(est.predict(df), native.predict(df), rtol=1e-12)
    labels = (y > np.median(y)).astype(int)
    clf = bw.GBDTClassifier(n_estimators=30, early_stopping_rounds=3).fit(df, labels)
    assert clf.score(df, labels) > 0.8 and clf.best_iteration_ is not None
    assert np.all(cross_val_score(bw.GBDTRegressor(n_estimators=10), df, y, cv=3) > 0.5)
    for spec in (["x"], [True, False, False]):
        m = bw.GBDTRegressor(n_estimators=2, categorical_features=spec).fit(df, y)
        assert m.booster_.feature_types == ["categorical"] * 3
    with pytest.raises(TypeError, match="must hold numbers only"):
        est.predict(df.to_numpy())
    with pytest.raises(TypeError, match="categorical_features='from_dtype'"):
        bw.GBDTRegressor(categorical_features=None).fit(df, y)
    pl = pytest.importorskip("polars")
    np.testing.assert_array_equal(est.predict(pl.from_pandas(df)), est.predict(df))


@pytest.mark.parametrize("onehot", [1 << 16, 4])
def test_a_feature_of_more_categories_than_max_bin_pools_the_rare_ones(onehot):
    """1,500 categories, max_bin 63: the 62 categories most rows hold keep bins of their
    own and the others share one, so the feature has 63 bins and the bins one byte; a
    split sends the pooled group one way (the saved sets list all its categories or none
    of them); the training margins (bagging: rows outside the bag by the bins), a
    reference-binned and a value-coded evaluation set and predict agree; two shards
    give the single process's model byte for byte."""
    rng = np.random.default_rng(8)
    n, k = 6000, 1500
    codes = np.minimum(rng.zipf(1.3, n) - 1, k - 1)
    effect = rng.normal(size=k)
    x = rng.normal(size=n)
    names = np.array([f"z{c:04d}" for c in range(k)], dtype=object)
    df = pd.DataFrame({"x": x, "c": pd.Categorical(names[codes], categories=names)})
    y = effect[codes] + x + rng.normal(size=n) * 0.3
    dtrain = bw.Dataset(df, label=y, max_bin=63)
    params = {"max_depth": 4, "eta": 0.3, "subsample": 0.7, "eval_metric": "rmse",
              "max_cat_to_onehot": onehot, "min_data_per_group": 5, "cat_smooth": 1.0}
    va = df.iloc[:2000]
    log = {}
    b = bw.train(params, dtrain, 8, evals=[
        (dtrain, "train"), (bw.Dataset(va, label=y[:2000], reference=dtrain), "ref"),
        (bw.Dataset(va, label=y[:2000]), "own")], evals_result=log)
    mapper = dtrain.bin_mapper
    held = np.unique(codes)  # the training dictionary: the categories rows hold
    assert mapper.n_bins[1] == 63 and dtrain.X_binned.dtype == np.uint8
    pooled = set(np.nonzero(mapper.category_bins[1] == 62)[0].tolist())
    assert len(pooled) == held.size - 62
    split_on = [set(t.categories(j).tolist()) for t in b.trees
                for j in np.nonzero(t.split_kind)[0]]
    assert split_on and all(pooled <= s or not (pooled & s) for s in split_on)
    for name, frame, target in (("train", df, y), ("ref", va, y[:2000]),
                                ("own", va, y[:2000])):
        rmse = float(np.sqrt(np.mean((b.predict(frame) - target) ** 2)))
        assert log[name]["rmse"][-1] == pytest.approx(rmse, rel=1e-12)

    def shard(reducer, rank):
        rows = np.arange(rank, n, 2)
        d = bw.Dataset(df.iloc[rows].reset_index(drop=True), label=y[rows], row_ids=rows,
                       max_bin=63)
        return _json(bw.train(params, d, 8, reducer=reducer))

    want = _json(b)
    assert all(m == want for m in SimulatedShards(2).run(shard))


def test_category_dtypes_coded_again_give_the_held_sorted_dictionary():
    """The sorted order of a pandas category dtype is kept between calls (prediction in
    small calls codes one dtype again and again); every call still gets the dictionary
    of the values its rows hold, sorted, and the codes under it -- the general path's
    result -- and a dtype whose unheld categories the general path would refuse (mixed
    strings and numbers) keeps the general path, which checks only the held ones."""
    from boostwood.data import categories as C
    dtype = pd.CategoricalDtype(["pear", "apple", "fig", "kiwi"])
    for held in (["fig", "pear", None, "fig"], ["kiwi", "apple"], [None, None]):
        col = pd.Series(held, dtype=dtype)
        codes, dictionary = C.encode_pandas(col, "c")
        want = sorted(v for v in set(held) if v is not None)
        assert dictionary == want
        expect = [want.index(v) if v is not None else np.nan for v in held]
        np.testing.assert_array_equal(codes, expect)
    kept = [hit[0] for hit in C._DTYPE_ORDERS.values()]
    assert any(k is dtype.categories for k in kept)
    again = pd.CategoricalDtype(["pear", "apple", "fig", "kiwi"])  # (a frame made anew)
    assert again.categories is not dtype.categories
    assert C._dtype_order(again, "c") is C._dtype_order(dtype, "c")
    assert C._dtype_order(pd.CategoricalDtype(["apple", "pear", "fig", "kiwi"]), "c") \
        is not C._dtype_order(dtype, "c")
    mixed = pd.CategoricalDtype(["a", 1])
    for odd in (mixed, pd.CategoricalDtype([1, 1.5, 2.0])):
        col = pd.Series([odd.categories[0]] * 3, dtype=odd)
        codes, dictionary = C.encode_pandas(col, "c")
        assert dictionary == [odd.categories[0]] and codes.tolist() == [0, 0, 0]
    assert not any(hit[0] is mixed.categories for hit in C._DTYPE_ORDERS.values())


def test_equal_category_dtypes_in_another_order_are_coded_by_their_own_order():
    """pandas finds two unordered category dtypes of the same categories in another order
    equal (and hashes them alike), but their codes name other values: each column is
    coded by its own dtype's order, also right after the other was coded (the kept
    orders were once looked up by the dtype, and coded the second frame's x, y, z as z,
    y, x)."""
    from boostwood.data import categories as C
    first = pd.Series(["x", "y", "z", "x"], dtype=pd.CategoricalDtype(["x", "y", "z"]))
    second = pd.Series(["x", "y", "z", "x"], dtype=pd.CategoricalDtype(["z", "y", "x"]))
    assert first.dtype == second.dtype and hash(first.dtype) == hash(second.dtype)
    for col in (first, second, first, second):
        codes, dictionary = C.encode_pandas(col, "c")
        assert dictionary == ["x", "y", "z"] and codes.tolist() == [0, 1, 2, 0]
    df, y = _frame(n=400, seed=2)
    df["c"] = df["c"].astype("category")
    b = bw.train(PLAIN, bw.Dataset(df, label=y), 3)
    want = b.predict(df)
    flipped = df.assign(c=df["c"].cat.reorder_categories(df["c"].cat.categories[::-1]))
    assert flipped["c"].dtype == df["c"].dtype
    for frame in (flipped, df, flipped):
        np.testing.assert_array_equal(b.predict(frame), want)


def test_a_category_dtype_is_coded_by_a_model_as_its_values_are():
    """A pandas category column is coded by a model's dictionary through a table made
    once per dtype and dictionary: the same codes, unseen values and errors as the
    column's values as strings (the general path, a lookup per value), whatever the
    dtype's order, its unheld or unseen categories, missing values, rows or columns."""
    from boostwood.data import categories as C
    r = np.random.default_rng(3)
    levels = [f"v{i}" for i in range(40)]
    X = pd.DataFrame({"c": pd.Categorical(r.choice(levels[:30], 600), categories=levels[:30]),
                      "x": r.normal(size=600)})
    y = (X["c"].cat.codes.to_numpy() % 3 == 0) + 0.3 * X["x"].to_numpy()
    b = bw.train(dict(max_depth=4, eta=0.5), bw.Dataset(X, y), 5)
    strict = bw.train(dict(max_depth=4, eta=0.5, unseen_category="error"), bw.Dataset(X, y), 1)
    for trial in range(12):
        cats = [str(v) for v in r.permutation(levels[:35] if trial % 2 else levels)]
        n = int(r.integers(1, 50))
        held = [None if r.random() < 0.1 else cats[int(r.integers(len(cats)))]
                for _ in range(n)]
        frame = pd.DataFrame({"x": r.normal(size=n),
                              "c": pd.Categorical(held, categories=cats)})[["c", "x"]]
        strings = frame.assign(c=frame["c"].astype(object))
        fm = b._features_of(frame, True)[0]
        assert fm.categories[0] == b.category_dictionaries[0]
        np.testing.assert_array_equal(fm.dense, b._features_of(strings, True)[0].dense)
        np.testing.assert_array_equal(b.predict(frame), b.predict(strings))
        unseen = sorted({v for v in held if v is not None and v not in levels[:30]})  # v30..
        for data in (frame, strings):
            if unseen:
                with pytest.raises(ValueError, match=repr(unseen[0])):
                    strict.predict(data)
            else:
                strict.predict(data)
    assert any(hit[1] is b.category_dictionaries[0] for hit in C._DTYPE_TABLES.values())
    import pickle  # a shard's dictionary travels as its values, not the dtype's cache
    from boostwood.data import as_feature_matrix
    own = as_feature_matrix(frame).categories[0]
    assert hasattr(own, "source")
    sent = pickle.loads(pickle.dumps(own))
    assert type(sent) is list and sent == list(own)
    assert len(pickle.dumps(own)) < len(pickle.dumps(list(own))) + 64


def test_a_frame_of_the_models_columns_is_coded_in_one_pass_as_the_general_path_does(
        monkeypatch):
    """Prediction codes a pandas frame of the model's columns, in order, of numpy numbers
    and ``category`` columns, in one pass (``Booster._coded_frame``): to the bit what the
    general path gives (each column coded by its own dictionary, then by the model's),
    whatever the dtypes' category order, unheld categories or missing values. Other
    frames take the general path: columns in another order, strings, nullable numbers,
    an unseen value held by a row, categories of numbers for a string feature."""
    from boostwood import Booster
    from boostwood.data import as_feature_matrix
    from boostwood.data.categories import recode
    r = np.random.default_rng(5)
    levels = [f"v{i}" for i in range(40)]
    wide = [f"w{i}" for i in range(300)]  # (a dtype of more than 127 categories)
    n = 800
    X = pd.DataFrame({"a": pd.Categorical(r.choice(levels[:30], n)),
                      "i": r.integers(0, 9, n), "b": r.random(n) < 0.5,
                      "f": r.normal(size=n).astype(np.float32),
                      "c": pd.Categorical(r.choice(levels[5:12], n))})
    y = (X["a"].cat.codes.to_numpy() % 3 == 0) + 0.2 * X["i"] - X["b"] + X["f"] \
        + (X["c"].cat.codes.to_numpy() % 2)
    b = bw.train(dict(max_depth=4, eta=0.5, max_cat_to_onehot=4), bw.Dataset(X, y), 8)

    def general(frame):
        fm = as_feature_matrix(frame, allow_empty_rows=True)
        return recode(fm, b.category_dictionaries, "missing", names=b.feature_names).dense

    def bits(a):
        return np.asarray(a, dtype=np.float64).view(np.uint64)

    fast_calls = []
    real = Booster._coded_frame

    def spy(self, data):
        out = real(self, data)
        fast_calls.append(out is not None)
        return out

    monkeypatch.setattr(Booster, "_coded_frame", spy)
    for trial in range(10):
        m = int(r.integers(1, 60))
        rows = X.iloc[r.integers(0, n, m)].reset_index(drop=True)
        frame = rows.assign(
            a=pd.Categorical([None if r.random() < 0.1 else v for v in rows["a"].astype(object)],
                             categories=[str(v) for v in r.permutation(levels[:30])]),
            c=pd.Categorical(rows["c"].astype(object),  # unheld categories, int16 codes
                             categories=list(r.permutation(levels[:20] + wide))))
        fast = real(b, frame)
        assert fast is not None
        np.testing.assert_array_equal(bits(fast.dense), bits(general(frame)))
        strings = frame.assign(a=frame["a"].astype(object), c=frame["c"].astype(object))
        assert real(b, strings) is None
        fast_calls.clear()
        np.testing.assert_array_equal(bits(b.predict(frame)), bits(b.predict(strings)))
        assert fast_calls == [True, False]  # (predict took the one pass, then the general)
    unseen = frame.assign(a=pd.Categorical(["v39"] + list(frame["a"].astype(object))[1:]))
    others = (frame[["c", "i", "b", "f", "a"]], frame.assign(i=frame["i"].astype("Int64")),
              unseen, frame.assign(c=pd.Categorical(np.arange(len(frame)) % 3)))
    for other in others:
        assert real(b, other) is None
    np.testing.assert_array_equal(b.predict(others[0]), b.predict(frame))
    np.testing.assert_array_equal(b.predict(others[1]), b.predict(frame))
    np.testing.assert_array_equal(b.predict(unseen), b.predict(unseen.astype({"a": object})))
    with pytest.raises(TypeError, match="'c'"):
        b.predict(others[3])
    strict = bw.train(dict(max_depth=3, unseen_category="error"), bw.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="'v39'"):
        strict.predict(unseen)
    # numbers declared categorical: their category columns take the one pass too
    Xn = X.assign(a=X["a"].cat.codes.astype(np.int64))
    bn = bw.train(dict(max_depth=3), bw.Dataset(Xn, y, categorical_feature=["a"]), 3)
    frame = Xn.iloc[:50].assign(a=pd.Categorical(Xn["a"].iloc[:50], categories=range(30)))
    assert real(bn, frame) is not None
    np.testing.assert_array_equal(bits(bn.predict(frame)), bits(bn.predict(Xn.iloc[:50])))
    names = list(bn.feature_names)  # a model's names changed in place: not matched by
    bn.feature_names[0], bn.feature_names[1] = names[1], names[0]  # the old frame's
    assert real(bn, frame) is None


def test_arrow_and_polars_frames_of_the_models_columns_are_coded_in_one_pass(monkeypatch):
    """An Arrow table (or a polars frame, through Arrow) of the model's columns, in order,
    is coded in one pass (categories looked up in the model's dictionary by Arrow's hash
    lookup over the column's dictionary): to the bit what the general path gives, for
    dictionary columns of signed and unsigned indices with missing values and unheld
    categories, string columns, several chunks, and numeric columns of ints, bools and
    floats with nulls, a RecordBatch. An unseen value held by a row, another column order
    and a dictionary holding a value twice (the general path's error) take the general
    path."""
    pa = pytest.importorskip("pyarrow")
    pl = pytest.importorskip("polars")
    from boostwood import Booster
    from boostwood.data import as_feature_matrix
    from boostwood.data.categories import recode
    r = np.random.default_rng(8)
    levels = [f"v{i}" for i in range(40)]
    n = 600
    X = pd.DataFrame({"a": pd.Categorical(r.choice(levels[:30], n)), "i": r.integers(0, 9, n),
                      "f": r.normal(size=n), "c": pd.Categorical(r.choice(levels[5:12], n))})
    y = (X["a"].cat.codes.to_numpy() % 3 == 0) + 0.2 * X["i"] + X["f"] \
        + (X["c"].cat.codes.to_numpy() % 2)
    b = bw.train(dict(max_depth=4, eta=0.5, max_cat_to_onehot=4), bw.Dataset(X, y), 6)

    def bits(a):
        return np.asarray(a, dtype=np.float64).view(np.uint64)

    def general(data):
        fm = as_feature_matrix(data, allow_empty_rows=True)
        return recode(fm, b.category_dictionaries, "missing", names=b.feature_names).dense

    calls = []
    real = Booster._coded_frame
    monkeypatch.setattr(Booster, "_coded_frame",
                        lambda self, data: calls.append(real(self, data)) or calls[-1])
    for trial in range(6):
        m = int(r.integers(1, 80))
        a = [None if r.random() < 0.1 else levels[int(r.integers(30))] for _ in range(m)]
        c = [levels[int(r.integers(5, 12))] for _ in range(m)]
        i = pa.array([None if r.random() < 0.1 else int(v) for v in r.integers(0, 9, m)])
        f = pa.array(r.normal(size=m).astype(np.float32))
        kind = (pa.int8(), pa.uint32(), pa.int16())[trial % 3]
        extra = list(r.permutation(levels[30:]))  # unseen categories no row holds
        da = pa.DictionaryArray.from_arrays(
            pa.array([None if v is None else (levels[:30] + extra).index(v) for v in a],
                     type=kind), pa.array(levels[:30] + extra))
        table = pa.table({"a": da, "i": i, "f": f, "c": pa.array(c, type=pa.large_string())})
        if trial % 2:  # two chunks
            table = pa.concat_tables([table.slice(0, m // 2), table.slice(m // 2)])
        for data in (table, pl.from_arrow(table)):
            calls.clear()
            got = b.predict(data)
            assert calls[0] is not None  # (the one pass)
            np.testing.assert_array_equal(bits(calls[0].dense), bits(general(data)))
            np.testing.assert_array_equal(bits(got), bits(b.predict(table)))
        strings = pd.DataFrame({"a": pd.Series(a, dtype=object), "i": i.to_pandas(),
                                "f": f.to_pandas().astype(np.float64), "c": c})
        np.testing.assert_array_equal(bits(b.predict(table)),
                                      bits(b.predict(strings.astype({"i": float}))))
    held = table.set_column(0, "a", pa.array(["v39"] + [None] * (table.num_rows - 1)))
    for other in (held, table.select(["c", "i", "f", "a"])):
        assert real(b, other) is None
    np.testing.assert_array_equal(bits(b.predict(table.select(["c", "i", "f", "a"]))),
                                  bits(b.predict(table)))
    missing = held.set_column(0, "a", pa.array([None] * table.num_rows, type=pa.string()))
    np.testing.assert_array_equal(bits(b.predict(held)), bits(b.predict(missing)))
    # chunks of different dictionaries: one pass, as the general path codes them
    two = pa.Table.from_batches([pa.record_batch([pa.array(["v1", "v2"]).dictionary_encode(),
                                                  pa.array([1, 2]), pa.array([0.5, 1.5]),
                                                  pa.array(["v5", "v6"])], names=list("aifc")),
                                 pa.record_batch([pa.array(["v3", None]).dictionary_encode(),
                                                  pa.array([3, None]), pa.array([2.5, None]),
                                                  pa.array(["v7", None])], names=list("aifc"))])
    assert two.column(0).num_chunks == 2 and real(b, two) is not None
    np.testing.assert_array_equal(bits(real(b, two).dense), bits(general(two)))
    batch = two.combine_chunks().to_batches()[0]
    np.testing.assert_array_equal(bits(real(b, batch).dense), bits(general(batch)))
    twice = two.set_column(0, "a", pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 2, 0], pa.int8()), pa.array(["v1", "v2", "v1"])))
    assert real(b, twice) is None
    with pytest.raises(ValueError, match="under two values"):
        b.predict(twice)


def test_the_ranker_takes_categorical_frames():
    """GBDTRanker on a frame with a string column and qid in any order: categorical
    features from the dtype, predictions equal to native ranking training on the same
    frame, an eval_set frame with its qid, early stopping's query holdout, score; a
    numpy array of strings is refused as the other estimators refuse it."""
    pytest.importorskip("sklearn")
    df, y = _frame(n=1200, seed=6)
    rel = np.clip(np.round(y - y.min()) // 3, 0, 3).astype(int)
    qid = np.random.default_rng(6).permutation(np.repeat(np.arange(60), 20))
    est = bw.GBDTRanker(n_estimators=12, learning_rate=0.3, max_depth=3).fit(df, rel, qid=qid)
    assert est.booster_.feature_types == ["numeric", "categorical"]
    native = bw.train({"objective": "rank:ndcg", "eta": 0.3, "max_depth": 3, "nthread": 0,
                       "seed": 0, "min_child_weight": 1.0},
                      bw.Dataset(df, label=rel, qid=qid), 12)
    np.testing.assert_allclose(est.predict(df), native.predict(df), rtol=1e-12)
    assert est.score(df, rel, qid=qid) > 0.8
    held = bw.GBDTRanker(n_estimators=40, early_stopping_rounds=3).fit(
        df.iloc[:900], rel[:900], qid=qid[:900],
        eval_set=[(df.iloc[900:], rel[900:])], eval_qid=[qid[900:]])
    assert held.best_iteration_ is not None
    assert bw.GBDTRanker(n_estimators=5, early_stopping_rounds=2).fit(
        df, rel, qid=qid).best_iteration_ is not None
    with pytest.raises(TypeError, match="must hold numbers only"):
        bw.GBDTRanker(n_estimators=2).fit(df.to_numpy(), rel, qid=qid)


def test_dumps_plots_and_report_print_category_values():
    """A trained model's text and JSON dumps, export_text, trees_to_dataframe, the
    graphviz source and the report's drawing write its sets as category values; the JSON
    dump's categories evaluate the rows' values to the model's predictions."""
    df = pd.DataFrame({"colour": ["red", "green", "blue", "red", None] * 60})
    y = np.where(df["colour"] == "red", 3.0, np.where(df["colour"] == "blue", -2.0, 0.0))
    b = bw.train(dict(PLAIN, max_depth=2, max_cat_to_onehot=1), bw.Dataset(df, label=y), 1)
    text = b.dump_model()
    assert "colour in {'red'}" in text or "colour in {'blue'," in text, text
    assert "'" in b.export_text() and "colour" in b.export_text()
    frame = b.trees_to_dataframe()
    sets = [c for c in frame["Category"] if isinstance(c, list)]
    assert sets and all(isinstance(v, str) for s in sets for v in s)
    tree = json.loads(b.dump_model(format="json"))[0]

    def walk(node, value):
        while "leaf" not in node:
            if value is None or value != value:  # (pandas 3 strings hold NaN)
                go = node["missing"] == node["yes"]
            else:
                go = value in node["categories"]
            node = next(c for c in node["children"]
                        if c["nodeid"] == (node["yes"] if go else node["no"]))
        return node["leaf"]

    values = df["colour"].tolist()
    np.testing.assert_allclose([walk(tree, v) for v in values],
                               b.predict(df, output_margin=True) - b.base_score[0])
    from boostwood import plotting
    from boostwood.cli.svg import tree_drawing
    assert "'red'" in plotting.to_graphviz(b, 0)
    assert "&#x27;red&#x27;" in tree_drawing(b.trees[0], b.feature_names,
                                             labels=b.category_dictionaries) or \
        "'red'" in tree_drawing(b.trees[0], b.feature_names, labels=b.category_dictionaries)


def test_approx_keeps_one_bin_per_category():
    """tree_method='approx' re-proposes the numeric features' bins per tree and keeps a
    categorical feature's one bin per category: with as many candidates as distinct values
    (sketch_eps small), the same trees as hist, whose bins are then every value too; with
    fewer candidates than categories (sketch_eps 0.5), the sets still split categories."""
    df, y = _frame(n=800, k=12, seed=6)
    df["x"] = np.round(df["x"], 1)  # few distinct values: every one is a candidate
    params = {"max_depth": 3, "eta": 0.3, "max_cat_to_onehot": 1, "min_data_per_group": 10}
    hist = bw.train(params, bw.Dataset(df, label=y), 5)
    approx = bw.train(dict(params, tree_method="approx", sketch_eps=1e-3),
                      bw.Dataset(df, label=y), 5)
    for a, h in zip(approx.trees, hist.trees):
        assert a.split_kind.tolist() == h.split_kind.tolist()
        assert a.feature.tolist() == h.feature.tolist()
        assert [a.categories(k).tolist() for k in np.nonzero(a.split_kind)[0]] == \
            [h.categories(k).tolist() for k in np.nonzero(h.split_kind)[0]]
    np.testing.assert_allclose(approx.predict(df), hist.predict(df), rtol=1e-12)
    coarse = bw.train(dict(params, tree_method="approx", sketch_eps=0.5),
                      bw.Dataset(df, label=y), 5)
    sets = [coarse.trees[0].categories(k) for k in np.nonzero(coarse.trees[0].split_kind)[0]]
    assert sets and max(s.max() for s in sets) > 2  # codes beyond 1 / sketch_eps bins


def test_shap_and_partial_dependence_of_a_categorical_model():
    """TreeSHAP values and interactions of a trained categorical model sum to its
    margins; partial dependence takes category values and comes close to the mean margin
    of the rows with the feature set to that value (the recursion weighs the other
    feature's branches by training cover, so they agree up to that: loosely); the plot
    draws one bar per category, labelled by its value."""
    df, y = _frame(n=1200, seed=7)
    b = bw.train({"max_depth": 3, "eta": 0.3, "max_cat_to_onehot": 1,
                  "min_data_per_group": 20}, bw.Dataset(df, label=y), 10)
    margin = b.predict(df, output_margin=True)
    phi = b.predict(df, pred_contribs=True)
    np.testing.assert_allclose(phi.sum(axis=1), margin, rtol=1e-9, atol=1e-9)
    inter = b.predict(df.iloc[:20], pred_interactions=True)
    np.testing.assert_allclose(inter.sum(axis=(1, 2)), margin[:20], rtol=1e-9, atol=1e-9)
    values = ["v01", "v07"]
    pdp = b.partial_dependence(1, values)
    brute = [b.predict(df.assign(c=v), output_margin=True).mean() for v in values]
    np.testing.assert_allclose(pdp, brute, atol=0.1)
    assert abs(pdp[0] - pdp[1]) > 0.5  # the categories' effects differ
    with pytest.raises(ValueError, match=r"feature 'c' has no categories \['zzz'\]"):
        b.partial_dependence(1, ["zzz"])
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from boostwood import plotting
    ax = plotting.plot_partial_dependence(b, df, ["x", "c"])
    assert [t.get_text() for t in ax[1].get_xticklabels()][:2] == ["v00", "v01"]


def test_command_line_reads_text_columns_as_categories(tmp_path):
    """The CLI on a CSV with a text column: it trains categorical splits on it (no
    config needed), Parquet gives the same trees, predict streams the file and writes
    what the Booster predicts on the frame, and a number-valued column named in the
    config's categorical list becomes categorical too."""
    import io
    import os
    from contextlib import redirect_stderr, redirect_stdout

    from boostwood.cli import main

    def cli(*args):
        old = os.getcwd()
        os.chdir(tmp_path)
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
                code = main(list(args))
        finally:
            os.chdir(old)
        assert code == 0, err.getvalue()

    df, y = _frame(n=600, seed=8)
    df["target"] = (y > np.median(y)).astype(int)
    df["level"] = np.arange(600) % 3 + 1
    df.to_csv(tmp_path / "train.csv", index=False)
    cli("train", "--data", "train.csv", "--label", "target", "--rounds", "5", "--param",
        "objective=binary:logistic", "--quiet", "--model", "m.json")
    b = bw.Booster(model_file=tmp_path / "m.json")
    assert b.feature_types == ["numeric", "categorical", "numeric"]
    assert b.category_dictionaries[1][:2] == ["v00", "v01"]
    features = df.drop(columns="target")
    features.iloc[:100].to_csv(tmp_path / "new.csv", index=False)
    cli("predict", "--model", "m.json", "--data", "new.csv", "--output", "p.csv",
        "--chunk-size", "30")
    written = pd.read_csv(tmp_path / "p.csv")["prediction"].to_numpy()
    np.testing.assert_allclose(written, b.predict(features.iloc[:100]), rtol=1e-8)
    pytest.importorskip("pyarrow")
    df.to_parquet(tmp_path / "train.parquet")
    cli("train", "--data", "train.parquet", "--label", "target", "--rounds", "5", "--param",
        "objective=binary:logistic", "--quiet", "--model", "m2.json")
    assert _json(bw.Booster(model_file=tmp_path / "m2.json")) == _json(b)
    (tmp_path / "cfg.toml").write_text('[data]\ncategorical = ["level"]\n')
    cli("train", "cfg.toml", "--data", "train.csv", "--label", "target", "--rounds", "2",
        "--param", "objective=binary:logistic", "--quiet", "--model", "m3.json")
    assert bw.Booster(model_file=tmp_path / "m3.json").feature_types == [
        "numeric", "categorical", "categorical"]


def _wide_frame(n, levels, seed):
    """Numbers and categorical columns of the given numbers of levels (one with 1,500:
    more codes than one-byte bins hold), 3 % missing, a target that depends on all."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    frame, y = {"x": x}, x.copy()
    for i, k in enumerate(levels):
        codes = rng.integers(0, k, n)
        y = y + rng.normal(size=k)[codes]
        col = np.array([f"L{c}" for c in range(k)], dtype=object)[codes]
        col[rng.random(n) < 0.03] = None
        frame[f"c{i}"] = pd.Categorical(col)
    return pd.DataFrame(frame), y + rng.normal(size=n) * 0.3


@pytest.mark.parametrize("onehot, grow, leaves", [
    (65536, "depthwise", 0), (4, "depthwise", 0), (65536, "lossguide", 30),
    (4, "lossguide", 30), (65536, "lossguide", 150), (4, "lossguide", 150)])
def test_the_binned_mask_and_level_walks_with_category_sets_equal_the_node_walk(
        onehot, grow, leaves):
    """A trained categorical model's binned walk with category sets (runs of codes, with
    missing values either way, and other sets by their bits; a 1,500-level feature) and
    its leaf-mask walk (which ``predict`` takes: one word per table entry for trees of
    up to 64 leaves, four up to 256) add the same leaf values, to the bit, as the
    node-by-node walk -- and so does the level walk of balanced trees -- on rows with
    missing and unseen (coded missing) categories, in calls of every size the kernels
    cut apart."""
    from boostwood._kernels.predict import predict_levels, predict_raw
    from boostwood._kernels.predict_binned import predict_binned
    from boostwood._kernels.predict_masks import predict_masks
    df, y = _wide_frame(9000, [6, 40, 1500], seed=9)  # 9,000 rows: blocks of 1,125
    params = {"max_depth": 6 if grow == "depthwise" else 0, "eta": 0.3,
              "max_cat_to_onehot": onehot, "grow_policy": grow, "max_leaves": leaves,
              "min_data_per_group": 5, "cat_smooth": 1.0, "min_child_weight": 0}
    b = bw.train(params, bw.Dataset(df.iloc[:3000], label=y[:3000]), 12)
    packed = b._pack(0, 12)
    words = 1 if max(int(np.sum(t.feature < 0)) for t in b.trees) <= 64 else 4
    tables, entries = packed["masks"][6], packed["masks"][5][-1]
    assert tables.shape[1] == words == (4 if leaves > 64 else 1)
    assert tables.shape[0] == entries if words == 1 else tables.shape[0] < entries
    lo, z, aux = (packed["binned_sets"][3], packed["binned_sets"][4],
                  packed["binned_sets"][0])
    # runs with missing values either way; sets of other codes where partitions are asked
    # for (one-vs-rest may also send the 1,500-level feature's pooled group left)
    assert np.any(z) and np.any(lo > 0) and (np.any(aux > 0) or onehot != 4)
    new = df.assign(c1=df["c1"].astype(object).where(np.arange(9000) % 7 != 0, "never seen"))
    X = b._features_of(new, True)[0].dense
    args = (packed["value"], packed["offsets"], packed["group"])
    for rows in (slice(None), slice(0, 3), slice(5, 60), slice(100, 1117)):
        part = np.ascontiguousarray(X[rows])
        raw = np.zeros((part.shape[0], 1))
        predict_raw(part, packed["nodes"], *args, raw)
        binned = np.zeros_like(raw)
        predict_binned(part, *packed["binned"], *args, binned, packed["binned_sets"])
        assert np.array_equal(binned, raw)
        masked = np.zeros_like(raw)
        predict_masks(part, *packed["masks"], packed["group"], masked)
        assert np.array_equal(masked, raw)
        if packed["levels"] is not None:
            walked = np.zeros_like(raw)
            predict_levels(part, packed["levels"], *args, walked, packed["level_sets"])
            assert np.array_equal(walked, raw)
    from_base = np.full((9000, 1), b.base_score[0])  # predict: the mask walk, as raw
    predict_raw(X, packed["nodes"], *args, from_base)
    assert np.array_equal(b.predict(new, output_margin=True), from_base[:, 0])


def test_the_binned_walk_bins_a_wide_feature_by_the_runs_of_its_sets():
    """Category sets over a 1,500-level feature name few of its codes: the binned walk
    cuts the codes only where a set's run starts or ends, so the bins fit one byte
    (codes no set holds share bins); a forest whose categorical features the model's
    dictionaries do not code (a hand-made tree) keeps the general walks."""
    from boostwood.tree.tree import pack_trees
    df, y = _wide_frame(4000, [1500], seed=3)
    b = bw.train({"max_depth": 3, "eta": 0.3}, bw.Dataset(df, label=y), 4)
    packed = b._pack(0, 4)
    assert packed["binned"][6].dtype == np.uint8  # top_thr: the bins' type
    held = {int(c) for t in b.trees for j in np.nonzero(t.split_kind)[0]
            for c in t.categories(j)}
    cuts, cut_start = packed["binned"][:2]
    n_cuts = np.sum(np.isfinite(cuts[cut_start[1]:cut_start[2]]))
    assert 1 < n_cuts <= 2 * len(held) + 1
    assert pack_trees(b.trees, 1)["binned"] is None  # not coded: no binned walk


def test_predict_takes_the_mask_walk_up_to_256_leaves_and_the_binned_walk_above(
        monkeypatch):
    """``predict`` of a forest with category sets takes the leaf-mask walk while every
    tree has at most 256 leaves and the tables fit ``MAX_MASK_BYTES``, else the binned
    walk; numeric forests keep the binned walk. Every walk gives the node-by-node walk's
    margins to the bit, multiclass (trees adding to their own class) included."""
    from boostwood.boosting import booster as booster_module
    from boostwood.tree import tree as tree_module
    df, y = _wide_frame(3000, [12, 300], seed=4)
    classes = np.digitize(y, np.quantile(y, [0.33, 0.66])).astype(float)
    calls = []
    for name in ("predict_masks", "predict_binned"):
        monkeypatch.setattr(booster_module, name, lambda *a, kernel=getattr(
            booster_module, name), name=name: (calls.append(name), kernel(*a))[1])
    for params, label, walk in (
            ({"max_depth": 6}, y, "predict_masks"),
            ({"grow_policy": "lossguide", "max_leaves": 64, "max_depth": 0}, y,
             "predict_masks"),
            ({"objective": "multi:softprob", "num_class": 3, "max_depth": 5}, classes,
             "predict_masks"),
            ({"grow_policy": "lossguide", "max_leaves": 65, "max_depth": 0,
              "min_child_weight": 0}, y, "predict_masks"),
            ({"grow_policy": "lossguide", "max_leaves": 257, "max_depth": 0,
              "min_child_weight": 0}, y, "predict_binned")):
        b = bw.train(dict(params, eta=0.3, max_cat_to_onehot=4, min_data_per_group=5),
                     bw.Dataset(df, label=label), 6)
        leaves = max(int(np.sum(t.feature < 0)) for t in b.trees)
        assert leaves == params.get("max_leaves", leaves), (params, leaves)
        calls.clear()
        margin = b.predict(df, output_margin=True)
        assert calls == [walk], params
        assert np.array_equal(margin.reshape(3000, -1), _node_walk(b, df)), params
    numeric = bw.train({"max_depth": 6}, bw.Dataset(df[["x"]], label=y), 3)
    calls.clear()
    numeric.predict(df[["x"]])
    assert calls == ["predict_binned"] and numeric._pack(0, 3)["masks"] is None
    b = bw.train({"max_depth": 6, "max_cat_to_onehot": 4, "eta": 0.3}, bw.Dataset(
        df, label=y), 6)
    masks = b._pack(0, 6)["masks"]
    size = masks[6].nbytes + masks[7].nbytes + masks[9].nbytes  # tables, index, leaves
    monkeypatch.setattr(tree_module, "MAX_MASK_BYTES", size)
    b._packed = {}
    assert b._pack(0, 6)["masks"] is not None
    monkeypatch.setattr(tree_module, "MAX_MASK_BYTES", size - 8)
    b._packed = {}
    assert b._pack(0, 6)["masks"] is None and b._pack(0, 6)["binned"] is not None
    calls.clear()
    assert np.array_equal(b.predict(df, output_margin=True), _node_walk(b, df)[:, 0])
    assert calls == ["predict_binned"]
    monkeypatch.undo()  # (MAX_MASK_BYTES)
    from boostwood._kernels.predict import predict_raw
    from boostwood._kernels.predict_masks import predict_masks
    from boostwood.tree.tree import Tree, pack_trees
    leaf = Tree([-1], [0.0], [-1], [-1], [0], [0.25], [0.0], [1.0], [1.0])  # one leaf
    packed = pack_trees([leaf] + b.trees[:3] + [leaf], 1, coded=True)
    X = np.ascontiguousarray(b._features_of(df, True)[0].dense)
    walks = [np.zeros((3000, 1)), np.zeros((3000, 1))]
    predict_masks(X, *packed["masks"], packed["group"], walks[0])
    predict_raw(X, packed["nodes"], packed["value"], packed["offsets"], packed["group"],
                walks[1])
    assert np.array_equal(*walks) and np.any(walks[0] != 0.5)


def _node_walk(b, df):
    """The margins of ``b`` on ``df`` by the node-by-node walk."""
    from boostwood._kernels.predict import predict_raw
    packed = b._pack(0, b.num_boosted_rounds())
    out = np.tile(b.base_score, (len(df), 1)).astype(np.float64)
    predict_raw(b._features_of(df, True)[0].dense, packed["nodes"], packed["value"],
                packed["offsets"], packed["group"], out)
    return out


@pytest.mark.parametrize("case", ["missing or not", "minus infinity"])
def test_the_mask_walk_takes_infinite_thresholds_float32_and_every_call_size(case):
    """A numeric feature whose only split is "missing or not" (threshold +inf, which
    takes no bin of its own) and one split at -inf (a value of -inf: a cut) predict by
    the leaf-mask walk as by the node walk, from float32 input too, in calls of 0, 1, 7
    and all rows."""
    from boostwood._kernels.predict import predict_raw
    from boostwood._kernels.predict_masks import predict_masks
    rng = np.random.default_rng(0)
    n = 400
    c = rng.integers(0, 6, n)
    if case == "missing or not":
        x = np.where(rng.random(n) < 0.5, 1.0, np.nan)
        y = np.isnan(x) * 2.0 + c % 2
    else:
        x = rng.normal(size=n)
        x[:60] = -np.inf
        y = (x == -np.inf) * 3.0 + (x > 0) + c % 2
    df = pd.DataFrame({"x": x, "c": pd.Categorical(c)})
    b = bw.train({"max_depth": 3, "max_cat_to_onehot": 4}, bw.Dataset(df, label=y), 3)
    thresholds = np.concatenate([t.threshold[t.feature == 0] for t in b.trees])
    assert np.any(thresholds == (np.inf if case == "missing or not" else -np.inf))
    packed = b._pack(0, 3)
    assert packed["masks"] is not None
    X = b._features_of(df, True)[0].dense
    for rows in (slice(0, 0), slice(0, 1), slice(3, 10), slice(None)):
        for data in (X[rows], X[rows].astype(np.float32)):
            data = np.ascontiguousarray(data)
            walks = [np.zeros((data.shape[0], 1)), np.zeros((data.shape[0], 1))]
            predict_masks(data, *packed["masks"], packed["group"], walks[0])
            predict_raw(data, packed["nodes"], packed["value"], packed["offsets"],
                        packed["group"], walks[1])
            assert np.array_equal(*walks), (case, rows, data.dtype)
    assert np.array_equal(b.predict(df, output_margin=True), _node_walk(b, df)[:, 0])


def test_a_pickled_booster_leaves_its_packed_trees_behind():
    """A Booster's packed trees (the walks' arrays, a categorical forest's mask tables)
    are a cache: a Booster that has predicted pickles to the same bytes as before, and
    the copy predicts the same bits (a Dask worker receives no tables)."""
    import copy
    import pickle
    df, y = _wide_frame(2000, [12, 300], seed=5)
    b = bw.train({"max_depth": 6, "max_cat_to_onehot": 4}, bw.Dataset(df, label=y), 5)
    before = pickle.dumps(b)
    margin = b.predict(df, output_margin=True)
    assert b._packed and b._pack(0, 5)["masks"] is not None
    assert pickle.dumps(b) == before
    for twin in (pickle.loads(before), copy.deepcopy(b)):
        assert twin._packed == {}
        assert np.array_equal(twin.predict(df, output_margin=True), margin)
