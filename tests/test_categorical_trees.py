"""Categorical features in the classic learners: decision trees, forests, extra trees and
AdaBoost through the criterion splitter ([Q2] item 4).

The best set is checked against brute force over every subset of a node's categories
(Breiman's ordering is exact for two classes and squared error, with missing values on
either side); one-vs-rest for three classes against every single category; the growth
paths (level-wise, node by node, exact, histogram) against each other; prediction codes
categories by value, as the boosted models do.
"""
import itertools

import numpy as np
import pytest

import boostwood as bw
from boostwood.tree import criterion

pd = pytest.importorskip("pandas")


def _impurity(stats, kind):
    """Weighted impurity of a node from per-class weights (classification) or (sum w y,
    sum w) for squared error."""
    if kind == "squared_error":
        s, w = stats
        return -s * s / w if w > 0 else 0.0
    n = stats.sum()
    if n <= 0:
        return 0.0
    p = stats[stats > 0]
    if kind == "gini":
        return n - (p * p).sum() / n
    return n * np.log2(n) - (p * np.log2(p)).sum()


def _brute_force(codes, y, w, kind, singletons=False):
    """Best impurity decrease over every (set of present categories, missing side); with
    ``singletons``, over each category alone and every present one (missing apart)."""
    present = np.unique(codes[codes >= 0])
    miss = codes < 0

    def stats(mask):
        if kind == "squared_error":
            return np.array([np.sum(w[mask] * y[mask]), np.sum(w[mask])])
        return np.bincount(y[mask], weights=w[mask], minlength=int(y.max()) + 1)

    parent = _impurity(stats(np.ones(len(y), bool)), kind)
    subsets = [(c,) for c in present] + [tuple(present)] if singletons else \
        [s for size in range(1, len(present) + 1)
         for s in itertools.combinations(present, size)]
    best = -np.inf
    for subset in subsets:
        in_set = np.isin(codes, subset)
        for miss_left in ((False, True) if miss.any() else (False,)):
            left = in_set | (miss & miss_left)
            if left.all() or not left.any():
                continue
            dec = parent - _impurity(stats(left), kind) - _impurity(stats(~left), kind)
            best = max(best, dec)
    return best


def _frame(codes, extra=None):
    labels = np.array([f"k{c}" if c >= 0 else None for c in codes], dtype=object)
    cols = {"c": pd.Categorical(labels)}
    if extra is not None:
        cols["x"] = extra
    return pd.DataFrame(cols)


@pytest.mark.parametrize("kind", ["gini", "entropy", "squared_error"])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_root_set_is_the_best_of_every_subset(kind, missing, seed):
    """Breiman's ordering finds the best of all 2^(k-1) - 1 partitions, with missing rows
    on either side, for two classes and for squared error."""
    rng = np.random.default_rng(seed)
    n, k = 300, 7
    codes = rng.integers(0, k, n)
    if missing:
        codes[rng.random(n) < 0.1] = -1
    w = rng.uniform(0.5, 2.0, n)
    if kind == "squared_error":
        y = rng.normal(size=k + 1)[codes + 1] + rng.normal(scale=0.5, size=n)
        est = bw.DecisionTreeRegressor(max_depth=1)
    else:
        p = rng.uniform(0.1, 0.9, k + 1)[codes + 1]
        y = (rng.random(n) < p).astype(int)
        est = bw.DecisionTreeClassifier(max_depth=1, criterion=kind)
    est.fit(_frame(codes), y, sample_weight=w)
    tree = est.tree_
    assert tree.split_kind[0] == 1
    expected = _brute_force(codes, y, w, kind)
    assert tree.gain[0] == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_three_classes_split_one_category_against_the_rest():
    rng = np.random.default_rng(3)
    n, k = 400, 6
    codes = rng.integers(0, k, n)
    codes[rng.random(n) < 0.08] = -1
    y = (codes + rng.integers(0, 2, n)) % 3
    w = np.ones(n)
    est = bw.DecisionTreeClassifier(max_depth=1).fit(_frame(codes), y)
    tree = est.tree_
    assert tree.split_kind[0] == 1 and len(tree.categories(0)) == 1
    assert tree.gain[0] == pytest.approx(_brute_force(codes, y, w, "gini", singletons=True),
                                         rel=1e-9)


def _mixed(n=1500, seed=0, k=30):
    rng = np.random.default_rng(seed)
    effect = rng.normal(size=k)
    c = rng.integers(0, k, n)
    x = rng.normal(size=n)
    score = effect[c] + 0.6 * x + rng.normal(scale=0.4, size=n)
    labels = np.array([f"city{i:02d}" for i in range(k)])[c].astype(object)
    labels[rng.random(n) < 0.04] = None
    df = pd.DataFrame({"city": labels, "x": x,
                       "tier": pd.Categorical(np.array(["a", "b", "c"])[c % 3])})
    return df, (score > 0).astype(int), score


def _same_trees(a, b):
    for s, t in zip(a, b):
        for f in ("feature", "left", "right", "split_kind", "cat_len", "cat_bits"):
            assert np.array_equal(getattr(s, f), getattr(t, f)), f
        # (regression leaves' means differ in their last bits between the two paths,
        # numeric features alike: the sums' order)
        np.testing.assert_allclose(s.value, t.value, rtol=1e-12, atol=1e-12)
        num = s.split_kind == 0
        assert np.array_equal(s.threshold[num], t.threshold[num])


@pytest.mark.parametrize("make", [
    lambda: bw.DecisionTreeClassifier(max_depth=6),
    lambda: bw.DecisionTreeClassifier(max_depth=6, splitter="hist"),
    lambda: bw.RandomForestClassifier(4, max_depth=8, random_state=1),
    lambda: bw.RandomForestClassifier(4, splitter="hist", random_state=1),
    lambda: bw.ExtraTreesClassifier(4, max_depth=8, random_state=1),
    lambda: bw.RandomForestRegressor(3, max_depth=8, random_state=1)],
    ids=["cart", "cart-hist", "forest", "forest-hist", "extra", "forest-reg"])
def test_level_wise_and_node_by_node_growth_agree(make, monkeypatch):
    df, y, score = _mixed()
    target = score if isinstance(make(), bw.RandomForestRegressor) else y
    fast = make().fit(df, target)
    monkeypatch.setattr(criterion, "LEVEL_WISE", False)
    slow = make().fit(df, target)
    trees = (fast.trees_, slow.trees_) if hasattr(fast, "trees_") else ([fast.tree_],
                                                                        [slow.tree_])
    assert sum(int((t.split_kind == 1).sum()) for t in trees[0]) > 0
    _same_trees(*trees)


def test_exact_and_histogram_search_find_the_same_sets():
    """With fewer distinct values than bins, a category is its own bin and a rank its
    own value: both searches give the same tree."""
    df, y, _ = _mixed()
    df["x"] = np.round(df["x"], 1)  # < 255 distinct values
    a = bw.DecisionTreeClassifier(max_depth=5).fit(df, y).tree_
    b = bw.DecisionTreeClassifier(max_depth=5, splitter="hist").fit(df, y).tree_
    for f in ("feature", "split_kind", "cat_bits", "value"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_categories_absent_from_training_do_not_shift_the_sets():
    """A category dtype may list categories no training row holds: the sets are over the
    dictionary's codes, so a row of such a category (and an unseen one) is coded by value
    and goes where the tree sends categories its node did not hold, or missing values."""
    df, y, _ = _mixed()
    df["tier"] = pd.Categorical(df["tier"], categories=["z", "a", "b", "c", "d"])
    est = bw.DecisionTreeClassifier(max_depth=6).fit(df, y)
    test = df.iloc[:200].copy()
    test["tier"] = pd.Categorical(test["tier"], categories=["d", "c", "b", "a", "z"])
    np.testing.assert_array_equal(est.predict_proba(test), est.predict_proba(df.iloc[:200]))


@pytest.mark.parametrize("make", [
    lambda: bw.DecisionTreeClassifier(max_depth=5),
    lambda: bw.RandomForestClassifier(10, random_state=0),
    lambda: bw.ExtraTreesClassifier(10, random_state=0),
    lambda: bw.AdaBoostClassifier(n_estimators=10)],
    ids=["cart", "forest", "extra", "adaboost"])
def test_prediction_codes_categories_by_value(make, monkeypatch):
    from boostwood.sklearn import trees
    df, y, _ = _mixed()
    est = make().fit(df, y)
    p = est.predict_proba(df)
    shuffled = df.copy()
    shuffled["city"] = pd.Categorical(df["city"], categories=sorted(
        df["city"].dropna().unique(), reverse=True))
    passes = []  # a frame of the fitted columns is coded in one pass (and the same)
    real = trees.coded_features
    monkeypatch.setattr(trees, "coded_features", lambda *a: passes.append(real(*a)) or
                        passes[-1])
    np.testing.assert_array_equal(est.predict_proba(shuffled), p)
    assert passes and passes[-1] is not None
    strings = shuffled.astype({"city": object})
    np.testing.assert_array_equal(est.predict_proba(strings), p)
    assert passes[-1] is None  # (strings: the general path)
    unseen = df.iloc[:50].copy()
    unseen["city"] = "atlantis"
    missing = df.iloc[:50].copy()
    missing["city"] = None
    np.testing.assert_array_equal(est.predict_proba(unseen), est.predict_proba(missing))
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df[["x", "city", "tier"]])  # columns by name, never by position
    pl = pytest.importorskip("polars")
    np.testing.assert_array_equal(est.predict_proba(pl.from_pandas(df)), p)


def test_native_categories_beat_ordinal_codes():
    """A tree that may group categories freely fits random per-category effects better
    than one cutting their arbitrary codes (the reason the feature exists)."""
    df, y, _ = _mixed(n=3000, seed=4)
    train, test = slice(0, 2000), slice(2000, None)
    coded = df.assign(city=df["city"].astype("category").cat.codes.replace(-1, np.nan),
                      tier=df["tier"].cat.codes)
    for make in (lambda: bw.DecisionTreeClassifier(max_depth=4),
                 lambda: bw.AdaBoostClassifier(n_estimators=20)):
        native = make().fit(df.iloc[train], y[train]).score(df.iloc[test], y[test])
        ordinal = make().fit(coded.iloc[train], y[train]).score(coded.iloc[test], y[test])
        assert native > ordinal + 0.02, (native, ordinal)


def test_numpy_columns_named_categorical():
    """``categorical_features`` as indices marks a numpy array's columns categorical, in
    the classic learners and in the GBDT estimators (which trained them as numbers)."""
    rng = np.random.default_rng(5)
    X = np.c_[rng.integers(0, 20, 2000), rng.normal(size=2000)]
    y = np.isin(X[:, 0], [1, 5, 7, 11, 13]).astype(int)
    tree = bw.DecisionTreeClassifier(max_depth=1, categorical_features=[0]).fit(X, y)
    assert tree.tree_.split_kind[0] == 1 and tree.score(X, y) == 1.0
    assert sorted(tree.tree_.categories(0)) in ([1, 5, 7, 11, 13],
                                                sorted(set(range(20)) - {1, 5, 7, 11, 13}))
    mask = bw.DecisionTreeClassifier(max_depth=1, categorical_features=[True, False]).fit(X, y)
    np.testing.assert_array_equal(mask.predict(X), tree.predict(X))
    gbdt = bw.GBDTClassifier(n_estimators=3, categorical_features=[0]).fit(X, y)
    assert gbdt.booster_.feature_types == ["categorical", "numeric"]
    X_new = X.copy()
    X_new[:5, 0] = 99  # a value fit never saw: the missing way
    assert np.isfinite(tree.predict_proba(X_new)).all()


def test_pruning_keeps_the_sets():
    df, y, _ = _mixed(seed=6)
    full = bw.DecisionTreeClassifier(random_state=0).fit(df, y)
    path = full.cost_complexity_pruning_path(df, y)
    alpha = path.ccp_alphas[len(path.ccp_alphas) // 2]
    pruned = bw.DecisionTreeClassifier(ccp_alpha=alpha, random_state=0).fit(df, y)
    t = pruned.tree_
    assert 1 < t.n_leaves < full.tree_.n_leaves and (t.split_kind == 1).any()
    # the pruned tree routes rows as the full tree's top does: its leaves are unions
    # of the full tree's leaves, so the full tree's leaf decides the pruned one's
    full_leaf, pruned_leaf = full.apply(df), pruned.apply(df)
    for leaf in np.unique(full_leaf):
        assert len(np.unique(pruned_leaf[full_leaf == leaf])) == 1


def test_forest_is_the_same_on_any_thread_count():
    df, y, _ = _mixed(seed=7)
    a = bw.RandomForestClassifier(12, n_jobs=1, random_state=3, oob_score=True).fit(df, y)
    b = bw.RandomForestClassifier(12, n_jobs=2, random_state=3, oob_score=True).fit(df, y)
    _same_trees(a.trees_, b.trees_)
    assert a.oob_score_ == b.oob_score_ > 0.7


def test_wrong_categorical_features_are_refused():
    df, y, _ = _mixed()
    with pytest.raises(ValueError, match="categorical_features must be"):
        bw.DecisionTreeClassifier(categorical_features="auto").fit(df, y)
    with pytest.raises(ValueError, match="boolean mask"):
        bw.RandomForestClassifier(2, categorical_features=[True]).fit(df, y)
    with pytest.raises((ValueError, KeyError), match="nope"):
        bw.DecisionTreeClassifier(categorical_features=["nope"]).fit(df, y)
    with pytest.raises(TypeError, match="must hold numbers only"):
        bw.DecisionTreeClassifier(categorical_features=None).fit(df, y)


def test_export_text_prints_category_values():
    df, y, _ = _mixed()
    text = bw.DecisionTreeClassifier(max_depth=2).fit(df, y).export_text()
    first = text.split("\n")[0]
    assert first.startswith("|--- city in {'city") or first.startswith("|--- tier in {'"), text


@pytest.mark.parametrize("splitter", ["exact", "hist"])
def test_sets_over_ranks_become_sets_over_categories(splitter):
    """Sorted columns code a feature by the rank of its values, so where some categories
    of the dictionary hold no training row, rank and category differ: the finished tree's
    sets are over categories, and walking the training rows by value reaches the leaves
    the grower partitioned them into."""
    from boostwood.data import as_feature_matrix
    from boostwood.ensemble import cart
    df, y, _ = _mixed(n=3000, seed=8)
    fm = as_feature_matrix(df[["city", "x"]], "X")
    keep = np.nonzero(np.nan_to_num(fm.dense[:, 0], nan=1.0) % 3 != 0)[0]
    sub, yk, ones = fm.take_rows(keep), y[keep].astype(np.int32), np.ones(len(keep))
    columns = cart.search_columns(sub, splitter, 255, 0, ones)
    assert columns.codes_are_categories(0) == (splitter == "hist")
    grower = cart.make_grower(columns, cart.TreeSpec(max_depth=6), 2, 2)
    tree, _ = cart.grow(grower, yk, ones, ones, 0)
    sets = [tree.categories(j) for j in np.nonzero(tree.split_kind == 1)[0]]
    assert sets and all(np.all(s % 3 != 0) for s in sets)
    leaves = cart.leaf_ids([tree], sub.dense)[:, 0]
    is_leaf = tree.feature < 0
    np.testing.assert_array_equal(np.bincount(leaves, minlength=tree.n_nodes)[is_leaf],
                                  tree.count[is_leaf])


def test_pooled_categories_move_together():
    """A feature of more categories than ``max_bin`` pools its rare ones in one bin
    (as the boosted trees do): every set holds all of a pooled bin's categories or none,
    and walking the training rows by value reaches the leaves they were grown into."""
    df, y, _ = _mixed(n=3000, seed=9, k=40)
    est = bw.DecisionTreeClassifier(splitter="hist", max_bin=15, max_depth=8).fit(df, y)
    tree = est.tree_
    city = list(df.columns).index("city")
    dictionary = est.category_dictionaries_[city]
    counts = df["city"].value_counts().reindex(dictionary).to_numpy()
    by_count = sorted(range(len(dictionary)), key=lambda c: (-counts[c], c))  # ties: code
    rare = set(by_count[14:])  # below the 14 most frequent: one pooled bin
    nodes = [j for j in np.nonzero(tree.split_kind == 1)[0] if tree.feature[j] == city]
    assert nodes
    for j in nodes:
        inside = rare & set(tree.categories(j).tolist())
        assert inside in (set(), rare)
    is_leaf = tree.feature < 0
    np.testing.assert_array_equal(np.bincount(est.apply(df), minlength=tree.n_nodes)[is_leaf],
                                  tree.count[is_leaf])


def test_three_classes_try_present_against_missing():
    """One-vs-rest also tries every present category against the missing rows (as the
    numeric scan does): here missingness is the whole signal."""
    rng = np.random.default_rng(10)
    codes = rng.integers(0, 5, 600)
    missing = rng.random(600) < 0.3
    codes[missing] = -1
    y = np.where(missing, 2, rng.integers(0, 2, 600))
    tree = bw.DecisionTreeClassifier(max_depth=1).fit(_frame(codes), y).tree_
    assert sorted(tree.categories(0)) == [0, 1, 2, 3, 4] and tree.default_left[0] == 0


def test_empty_list_or_mask_keeps_the_dtype_categories():
    df, y, _ = _mixed()
    for spec in ([], [False, False, False]):
        est = bw.DecisionTreeClassifier(max_depth=3, categorical_features=spec).fit(df, y)
        assert sorted(est.category_dictionaries_) == [0, 2]
        gbdt = bw.GBDTClassifier(n_estimators=2, categorical_features=spec).fit(df, y)
        assert gbdt.booster_.feature_types == ["categorical", "numeric", "categorical"]


def test_sparse_data_with_a_categorical_list_is_a_clear_error():
    from scipy import sparse
    X = sparse.random(50, 3, density=0.5, format="csr", random_state=0)
    y = np.arange(50) % 2
    for est in (bw.DecisionTreeClassifier(categorical_features=[0]),
                bw.GBDTClassifier(n_estimators=2, categorical_features=[0])):
        with pytest.raises(TypeError, match="dense"):
            est.fit(X, y)


def test_too_many_categories_for_exact_splits_is_a_clear_error():
    rng = np.random.default_rng(11)
    codes = np.arange(3000)
    df = pd.DataFrame({"id": pd.Categorical([f"u{i}" for i in codes]),
                       "x": rng.normal(size=3000)})
    y = rng.integers(0, 2, 3000)
    with pytest.raises(ValueError, match="splitter='hist'"):
        bw.DecisionTreeClassifier(max_depth=2).fit(df, y)
    est = bw.DecisionTreeClassifier(max_depth=2, splitter="hist").fit(df, y)
    assert est.tree_.n_nodes >= 1


def test_warm_start_needs_the_same_categories():
    df, y, _ = _mixed()
    forest = bw.RandomForestClassifier(3, warm_start=True, random_state=0).fit(df, y)
    other = df.copy()
    other["city"] = other["city"].where(other["city"] != "city00", "elsewhere")
    with pytest.raises(ValueError, match="categories"):
        forest.set_params(n_estimators=5).fit(other, y)
    assert len(forest.trees_) == 3 and forest.category_dictionaries_[0][0] == "city00"
    forest.fit(df, y)
    assert len(forest.trees_) == 5
