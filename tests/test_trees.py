"""Decision trees, forests and AdaBoost on the one tree engine, against scikit-learn."""
import warnings

import numpy as np
import pytest

import boostwood as bw

sk_tree = pytest.importorskip("sklearn.tree")
sk_ensemble = pytest.importorskip("sklearn.ensemble")

import shared_data  # noqa: E402


def _data(n=600, f=5, K=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32).astype(np.float64)  # sklearn's precision
    score = X[:, 0] + 0.7 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, K + 1)[1:-1]))
    return X, y


def _same_tree(ours, ref):
    """Same structure, features, thresholds (node ids differ: compare in pre-order)."""
    def walk(feature, threshold, left, right, node, out):
        if left[node] < 0:
            out.append(("leaf",))
            return
        out.append((int(feature[node]), round(float(threshold[node]), 9)))
        walk(feature, threshold, left, right, left[node], out)
        walk(feature, threshold, left, right, right[node], out)
    a, b = [], []
    t = ours.tree_
    walk(t.feature, t.threshold, t.left, t.right, 0, a)
    s = ref.tree_
    walk(s.feature, s.threshold, s.children_left, s.children_right, 0, b)
    return a == b


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classification_tree_equals_sklearn(criterion):
    X, y = _data()
    # leaves of >= 5 rows: no exact ties between candidate splits, which scikit-learn
    # breaks by its random feature order and boostwood by the lowest feature
    ours = bw.DecisionTreeClassifier(criterion=criterion, max_depth=5,
                                     min_samples_leaf=5).fit(X, y)
    ref = sk_tree.DecisionTreeClassifier(criterion=criterion, max_depth=5, min_samples_leaf=5,
                                         random_state=0).fit(X, y)
    assert _same_tree(ours, ref)
    assert np.allclose(ours.predict_proba(X), ref.predict_proba(X))
    assert np.allclose(ours.feature_importances_, ref.feature_importances_)


@pytest.mark.parametrize("settings", [dict(min_impurity_decrease=0.004),
                                      dict(min_samples_split=40),
                                      dict(max_depth=4, min_samples_leaf=5)])
def test_stopping_rules_equal_sklearn(settings):
    """min_impurity_decrease, min_samples_split and max_depth stop the same nodes."""
    X, y = _data(n=800, seed=3)
    ours = bw.DecisionTreeClassifier(**settings).fit(X, y)
    ref = sk_tree.DecisionTreeClassifier(random_state=0, **settings).fit(X, y)
    assert _same_tree(ours, ref)
    assert ours.get_n_leaves() == ref.get_n_leaves() > 4


def test_regression_tree_equals_sklearn():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4)).astype(np.float32).astype(np.float64)
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=500)
    w = rng.uniform(0.5, 2, 500)
    ours = bw.DecisionTreeRegressor(min_samples_leaf=5).fit(X, y, sample_weight=w)
    ref = sk_tree.DecisionTreeRegressor(min_samples_leaf=5, random_state=0).fit(
        X, y, sample_weight=w)
    assert _same_tree(ours, ref)
    assert np.allclose(ours.predict(X), ref.predict(X))


def test_pruning_path_and_ccp_alpha_equal_sklearn():
    X, y = _data(n=300, seed=2)
    ours = bw.DecisionTreeClassifier(min_samples_leaf=4).cost_complexity_pruning_path(X, y)
    ref = sk_tree.DecisionTreeClassifier(min_samples_leaf=4,
                                         random_state=0).cost_complexity_pruning_path(X, y)
    assert np.allclose(ours.ccp_alphas, ref.ccp_alphas)
    assert np.allclose(ours.impurities, ref.impurities)
    alpha = ours.ccp_alphas[len(ours.ccp_alphas) // 2]
    a = bw.DecisionTreeClassifier(ccp_alpha=alpha, min_samples_leaf=4).fit(X, y)
    b = sk_tree.DecisionTreeClassifier(ccp_alpha=alpha, min_samples_leaf=4,
                                       random_state=0).fit(X, y)
    assert a.get_n_leaves() == b.get_n_leaves() and _same_tree(a, b)


def test_regression_pruning_path_equals_sklearn():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3)).astype(np.float32).astype(np.float64)
    y = X[:, 0] + rng.normal(size=200)
    ours = bw.DecisionTreeRegressor().cost_complexity_pruning_path(X, y)
    ref = sk_tree.DecisionTreeRegressor(random_state=0).cost_complexity_pruning_path(X, y)
    assert np.allclose(ours.ccp_alphas, ref.ccp_alphas)
    assert np.allclose(ours.impurities, ref.impurities)


def test_gain_ratio_root_maximises_the_ratio():
    """C4.5: the root split maximises information gain / split information."""
    from boostwood._kernels.reference import criterion_split_naive
    X, y = _data(n=400, seed=4)
    t = bw.DecisionTreeClassifier(criterion="gain_ratio", max_depth=1).fit(X, y)
    w = np.ones(len(y))
    ratios = [criterion_split_naive(X[:, f], w, y, w, 3, "gain_ratio") for f in range(5)]
    assert t.tree_.feature[0] == int(np.argmax(ratios))


def test_missing_values_follow_a_learned_direction():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(800, 2))
    y = (X[:, 0] > 0).astype(int)
    X[y == 1, 0][:100] = np.nan
    Xm = X.copy()
    Xm[np.flatnonzero(y == 1)[:150], 0] = np.nan  # missing only among the positives
    clf = bw.DecisionTreeClassifier(max_depth=2).fit(Xm, y)
    assert clf.predict(np.array([[np.nan, 0.0]]))[0] == 1
    assert clf.score(Xm, y) > 0.97


def test_class_weight_and_paths():
    X, y = _data(seed=6)
    bal = bw.DecisionTreeClassifier(max_depth=3, class_weight="balanced").fit(X, y)
    counts = np.bincount(y)
    w = (len(y) / (3 * counts))[y]
    same = bw.DecisionTreeClassifier(max_depth=3).fit(X, y, sample_weight=w)
    assert np.allclose(bal.predict_proba(X), same.predict_proba(X))
    path = bal.decision_path(X[:20])
    leaves = bal.apply(X[:20])
    assert path.shape == (20, bal.tree_.n_nodes)
    assert np.all(path[np.arange(20), leaves] == 1) and np.all(path[:, 0].toarray() == 1)
    assert np.array_equal(path.sum(axis=1).A1, [len(p) for p in
                                                 [np.flatnonzero(r) for r in path.toarray()]])
    txt = bal.export_text(feature_names=list("abcde"))
    assert txt.count("class:") == bal.get_n_leaves()


def test_forest_is_the_same_for_any_n_jobs_and_oob_is_sane():
    X, y = _data(n=1500, seed=7)
    a = bw.RandomForestClassifier(15, random_state=3, n_jobs=1, oob_score=True).fit(X, y)
    b = bw.RandomForestClassifier(15, random_state=3, n_jobs=2, oob_score=True).fit(X, y)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    ref = sk_ensemble.RandomForestClassifier(100, random_state=0, oob_score=True).fit(X, y)
    c = bw.RandomForestClassifier(100, random_state=0, oob_score=True).fit(X, y)
    assert abs(c.oob_score_ - ref.oob_score_) < 0.03
    hard = bw.RandomForestClassifier(15, random_state=3, voting="hard").fit(X, y)
    votes = hard.predict_proba(X[:10]) * 15
    assert np.allclose(votes, np.round(votes))  # shares of whole votes


def test_bootstrap_is_integer_weights():
    """Tree t of a forest is the decision tree fitted with its bootstrap counts as weights."""
    X, y = _data(n=400, seed=8)
    rf = bw.RandomForestClassifier(1, random_state=11, max_features=None, splitter="best")
    rf.fit(X, y)
    seed = np.random.default_rng(11).integers(0, 2 ** 31 - 1, size=1)[0]
    n = len(y)  # n draws with replacement, counted
    counts = np.bincount(np.random.default_rng(int(seed)).integers(0, n, n), minlength=n)
    tree = bw.DecisionTreeClassifier(max_features=None).fit(X, y, sample_weight=counts)
    assert np.array_equal(rf.trees_[0].feature, tree.tree_.feature)
    assert np.allclose(rf.trees_[0].threshold, tree.tree_.threshold)


def test_adaboost_samme_equals_sklearn():
    X, y = _data(n=500, seed=9)
    ours = bw.AdaBoostClassifier(n_estimators=20).fit(X, y)
    ref = sk_ensemble.AdaBoostClassifier(sk_tree.DecisionTreeClassifier(max_depth=1),
                                         n_estimators=20, random_state=0).fit(X, y)
    assert np.allclose(ours.estimator_weights_, ref.estimator_weights_[:len(ours.estimators_)])
    assert np.array_equal(ours.predict(X), ref.predict(X))
    assert np.allclose(ours.predict_proba(X), ref.predict_proba(X))
    staged = list(ours.staged_predict(X))
    assert len(staged) == len(ours.estimators_) and np.array_equal(staged[-1], ours.predict(X))


def test_adaboost_regressor_improves_on_its_first_tree():
    rng = np.random.default_rng(10)
    X = rng.uniform(-3, 3, size=(600, 2))
    y = np.sin(X[:, 0]) * 2 + X[:, 1] + 0.2 * rng.normal(size=600)
    m = bw.AdaBoostRegressor(n_estimators=30, random_state=0).fit(X, y)
    staged = [np.mean((p - y) ** 2) for p in m.staged_predict(X)]
    assert staged[-1] < 0.6 * staged[0]
    assert len(m.estimator_weights_) == len(m.estimators_)


@pytest.mark.parametrize("loader", ["default_credit", "adult", "letter_recognition",
                                    "california_housing", "covertype"])
def test_exact_cart_root_split_equals_sklearn(loader):
    X, y, _ = getattr(shared_data, loader)()
    X = np.nan_to_num(X, nan=-1.0)  # scikit-learn's trees route NaN by their own rule
    if loader == "california_housing":
        ours, ref = bw.DecisionTreeRegressor(max_depth=1), sk_tree.DecisionTreeRegressor(
            max_depth=1)
    else:
        ours, ref = bw.DecisionTreeClassifier(max_depth=1), sk_tree.DecisionTreeClassifier(
            max_depth=1)
    ours.fit(X, y)
    ref.fit(X, y)
    assert ours.tree_.feature[0] == ref.tree_.feature[0]
    assert ours.tree_.threshold[0] == pytest.approx(ref.tree_.threshold[0], rel=1e-6)


def test_bad_parameters_raise():
    X, y = _data(n=50)
    for est, msg in [(bw.DecisionTreeClassifier(criterion="mse"), "criterion"),
                     (bw.DecisionTreeClassifier(max_depth=0), "max_depth"),
                     (bw.DecisionTreeClassifier(splitter="fast"), "splitter"),
                     (bw.DecisionTreeClassifier(max_features="half"), "max_features"),
                     (bw.RandomForestClassifier(oob_score=True, bootstrap=False), "oob_score"),
                     (bw.RandomForestClassifier(voting="all"), "voting"),
                     (bw.DecisionTreeClassifier(ccp_alpha=-1), "ccp_alpha"),
                     (bw.AdaBoostClassifier(n_estimators=0), "n_estimators")]:
        with pytest.raises(ValueError, match=msg):
            est.fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        bw.DecisionTreeRegressor().fit(X, np.where(np.arange(50) == 3, np.nan, 1.0))


@pytest.mark.parametrize("make", [
    lambda: bw.DecisionTreeClassifier(min_samples_leaf=2),
    lambda: bw.DecisionTreeClassifier(criterion="entropy", max_depth=7, splitter="hist"),
    lambda: bw.RandomForestClassifier(3, random_state=1, max_depth=9),
    lambda: bw.ExtraTreesClassifier(3, random_state=1, criterion="gain_ratio", max_depth=9),
    lambda: bw.RandomForestRegressor(2, random_state=1, max_features=0.4, max_depth=9),
])
def test_level_growth_equals_node_by_node_growth(make, monkeypatch):
    """The vectorised level loop (rows regrouped by node) grows the very trees of the
    generic grower (flat feature lists, one node at a time), NaN included."""
    from boostwood.tree import criterion
    X, y = _data(n=1200, f=6, seed=12)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    fast = make().fit(X, y)
    monkeypatch.setattr(criterion, "LEVEL_WISE", False)
    slow = make().fit(X, y)
    a = fast.trees_ if hasattr(fast, "trees_") else [fast.tree_]
    b = slow.trees_ if hasattr(slow, "trees_") else [slow.tree_]
    for s, t in zip(a, b):
        assert np.array_equal(s.feature, t.feature)
        assert np.array_equal(s.threshold, t.threshold)
        assert np.array_equal(s.value, t.value) and np.allclose(s.gain, t.gain)


def test_level_growth_with_many_mostly_constant_features(monkeypatch):
    """130 features (the known-constant bitmask spans three words), most of them sparse
    binary ones that become constant in deep nodes: the histogram forest's level path
    still grows the generic grower's trees."""
    from boostwood.tree import criterion
    rng = np.random.default_rng(5)
    X = np.hstack([rng.normal(size=(900, 10)), (rng.random((900, 120)) < 0.03) * 1.0])
    y = (X[:, 0] + X[:, 10:].sum(axis=1) > 0.5).astype(int) + (X[:, 1] > 1)
    fast = bw.RandomForestClassifier(3, random_state=2).fit(X, y)
    monkeypatch.setattr(criterion, "LEVEL_WISE", False)
    slow = bw.RandomForestClassifier(3, random_state=2).fit(X, y)
    for s, t in zip(fast.trees_, slow.trees_):
        assert s.n_nodes > 50 and np.array_equal(s.feature, t.feature)
        assert np.array_equal(s.threshold, t.threshold)
    assert len(np.unique(np.concatenate([t.feature for t in fast.trees_]))) > 20


def test_importance_types_for_every_tree_model():
    """split / gain / total_gain / cover / total_cover exist on CART, forests and AdaBoost,
    and total_gain normalised is scikit-learn's impurity importance."""
    X, y = _data(n=500, seed=13)
    models = [bw.DecisionTreeClassifier(max_depth=4).fit(X, y),
              bw.RandomForestClassifier(5, random_state=0).fit(X, y),
              bw.AdaBoostClassifier(n_estimators=5).fit(X, y)]
    for m in models:
        if hasattr(m, "trees_"):
            trees = m.trees_
        elif hasattr(m, "estimators_"):
            trees = [t.tree_ for t in m.estimators_]
        else:
            trees = [m.tree_]
        splits = m.feature_importance("split")
        assert splits.sum() == sum(int((t.feature >= 0).sum()) for t in trees)
        tg = m.feature_importance("total_gain")
        with np.errstate(invalid="ignore"):
            assert np.allclose(m.feature_importance("gain"), np.nan_to_num(tg / splits))
        assert m.feature_importances_.sum() == pytest.approx(1.0)
    tree = models[0]
    tg = tree.feature_importance("total_gain")
    assert np.allclose(tg / tg.sum(), tree.feature_importances_)
    with pytest.raises(ValueError, match="importance_type"):
        tree.feature_importance("weight")


@pytest.mark.parametrize("splitter", ["best", "hist"])
def test_pure_nodes_are_leaves(splitter):
    """A node of one class is a leaf (scikit-learn's rule): no split on rounding noise of
    fractional weights, and no scan spent on it."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1)
    w = rng.uniform(0.1, 3.0, size=y.size) / 7.0
    for est in (bw.DecisionTreeClassifier(splitter=splitter),
                bw.RandomForestClassifier(3, splitter=splitter, random_state=0)):
        est.fit(X, y, sample_weight=w)
        for t, stats in zip(*((est.trees_, est.node_stats_) if hasattr(est, "trees_")
                              else ([est.tree_], [est.node_stats_]))):
            internal = t.feature >= 0
            n_classes = np.count_nonzero(stats[:, :3] > 0, axis=1)
            assert internal.any() and np.all(n_classes[internal] >= 2)


@pytest.mark.parametrize("voting", ["soft", "hard"])
def test_forest_predictions_are_the_mean_over_trees(voting):
    """predict_proba averages each tree's leaf probabilities (or one-hot votes), and the
    regressor averages the trees' leaf values, over rows from any leaf of any tree."""
    X, y = _data(n=500, seed=6)
    X[::7, 1] = np.nan
    rf = bw.RandomForestClassifier(7, random_state=3, max_depth=6, voting=voting).fit(X, y)
    leaves = rf.apply(X)
    per_tree = np.stack([s[leaves[:, t], :3] / s[leaves[:, t], 3:4]
                         for t, s in enumerate(rf.node_stats_)], axis=1)
    if voting == "hard":
        per_tree = np.eye(3)[per_tree.argmax(axis=2)]
    assert np.allclose(rf.predict_proba(X), per_tree.mean(axis=1), rtol=0, atol=1e-12)
    reg = bw.RandomForestRegressor(5, random_state=3).fit(X, X[:, 0] * y)
    want = np.mean([t.value[reg.apply(X)[:, i]] for i, t in enumerate(reg.trees_)], axis=0)
    assert np.allclose(reg.predict(X), want, rtol=0, atol=1e-12)


def test_adaboost_r2_stops_at_a_first_tree_no_better_than_half():
    """A first tree whose average loss is 0.5 or more is kept alone (scikit-learn's
    rule): before, a loss of 1 divided by zero, and one in (0.5, 1) got a negative
    weight while later trees went on, so the weighted median mixed in a negative weight."""
    from boostwood.ensemble.adaboost import adaboost_r2
    y = np.array([0.0, 1.0, 2.0, 3.0])
    rounds = iter([np.array([3.0, 3.0, 3.0, 0.0]), y.copy()])  # losses 1, 1, 1/3, 1 / 0

    def fit(counts, seed):
        pred = next(rounds)
        return pred, pred

    models, weights, errors = adaboost_r2(fit, y, np.full(4, 0.25), 5, 1.0, "linear",
                                          np.random.default_rng(0))
    assert len(models) == 1 and weights.tolist() == [1.0] and errors[0] > 0.5
    for seed in range(6):  # equal rows, unequal targets: every tree's losses are equal
        m = bw.AdaBoostRegressor(n_estimators=5, random_state=seed).fit(
            np.array([[-1.0, 1.0], [-1.0, 1.0]]), np.array([1.0, 2.0]))
        assert np.all(m.estimator_weights_ > 0)
        assert np.all((m.predict(np.zeros((1, 2))) >= 1) & (m.predict(np.zeros((1, 2))) <= 2))


def test_forest_warns_when_rows_have_no_out_of_bag_estimate():
    """With few trees some rows are in every bag: oob_score_ covers the others only. It
    said nothing (scikit-learn warns); now it warns with the count, and a forest with no
    row out of bag has oob_score_ NaN instead of a score of nothing."""
    import warnings
    X, y = _data(n=40, seed=2)
    for cls, target in ((bw.RandomForestClassifier, y), (bw.RandomForestRegressor, X[:, 0])):
        with pytest.warns(UserWarning, match=r"of 40 rows were in every tree's bag") as w:
            m = cls(2, oob_score=True, random_state=0).fit(X, target)
        assert w[0].filename == __file__  # the caller's line, not the library's
        assert np.isfinite(m.oob_score_)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cls(60, oob_score=True, random_state=0).fit(X, target)
        with pytest.warns(UserWarning, match="1 of 1 rows"):
            assert np.isnan(cls(3, oob_score=True, random_state=0).fit(X[:1], target[:1])
                            .oob_score_)


@pytest.mark.parametrize("cls", ["RandomForestClassifier", "ExtraTreesRegressor"])
def test_warm_start_adds_trees_to_the_forest_of_one_fit(cls):
    """``warm_start`` (scikit-learn's; before: an unknown parameter): 6 trees, then 15,
    are the forest of one fit of 15, the same predictions, importances and OOB scores;
    fewer trees, the same number (a warning), or data of other features or classes are
    refused or said, never mixed in silently."""
    X, y = _data(n=600, seed=9)
    est = getattr(bw, cls)
    if cls.endswith("Regressor"):
        y = y + X[:, 0]
    kw = dict(random_state=4, oob_score=True, bootstrap=True, max_samples=0.7)
    one = est(15, **kw).fit(X, y)
    warm = est(6, warm_start=True, **kw).fit(X, y)
    first = warm.trees_[:6]
    warm.set_params(n_estimators=15).fit(X, y)
    assert all(a is b for a, b in zip(warm.trees_, first)) and len(warm.trees_) == 15
    predict = "predict_proba" if cls.endswith("Classifier") else "predict"
    np.testing.assert_array_equal(getattr(warm, predict)(X), getattr(one, predict)(X))
    np.testing.assert_array_equal(warm.feature_importances_, one.feature_importances_)
    assert warm.oob_score_ == one.oob_score_
    with pytest.warns(UserWarning, match="no tree added") as w:
        warm.fit(X, y)
    assert w[0].filename == __file__  # the caller's line, not the library's
    with pytest.raises(ValueError, match="below the 15 trees"):
        warm.set_params(n_estimators=10).fit(X, y)
    with pytest.raises(ValueError, match="same features and classes"):
        warm.set_params(n_estimators=20).fit(X[:, :3], y)
    with pytest.raises(ValueError, match="that the forest.s trees were grown on"):
        warm.fit(X[:500], y[:500])
    cold = est(6, **kw).fit(X, y)
    cold.set_params(n_estimators=8).fit(X, y)  # without warm_start: a new forest
    np.testing.assert_array_equal(getattr(cold, predict)(X),
                                  getattr(est(8, **kw).fit(X, y), predict)(X))


def test_warm_start_oob_uses_the_bags_the_trees_were_grown_on(monkeypatch):
    """The out-of-bag rows of the trees kept by a warm start are those each was grown on,
    also when ``random_state`` (a RandomState draws a new seed every fit) or
    ``max_samples`` changed between the fits; they were drawn again from the current
    settings, and in-bag rows counted as out of bag (found by review). Other rows with
    the same count are refused, as is a forest whose bags are unknown."""
    from boostwood.ensemble import forest as forest_loop
    grown_bags = []
    real = forest_loop.grow_forest

    def recording(*args, **kwargs):
        out = real(*args, **kwargs)
        grown_bags.append(out.in_bag)
        return out

    monkeypatch.setattr(forest_loop, "grow_forest", recording)
    X, y = _data(n=400, seed=12)
    y = y + X[:, 1]
    for first, second in ((dict(random_state=np.random.RandomState(0)), {}),
                          (dict(random_state=1), dict(random_state=2)),
                          (dict(random_state=1, max_samples=0.5), dict(max_samples=None))):
        grown_bags.clear()
        warm = bw.RandomForestRegressor(5, warm_start=True, oob_score=True, **first)
        warm.fit(X, y).set_params(n_estimators=12, **second)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warm.fit(X, y)
        bags = np.concatenate(grown_bags)
        per_tree = np.stack([t.value[leaf] for t, leaf in zip(warm.trees_, warm.apply(X).T)],
                            axis=1)
        expected = np.nanmean(np.where(bags.T, np.nan, per_tree), axis=1)
        np.testing.assert_allclose(warm.oob_prediction_, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="rows .* that the forest's trees were grown on"):
        warm.set_params(n_estimators=13).fit(X[::-1], y[::-1])
    # the same values in another memory order or float type are the same rows
    warm.fit(np.asfortranarray(X), y)
    # a warm fit without OOB on other rows, then one with: the older trees' bags name
    # rows of X, not of X[::-1] (review: R2 0.773 reported, 0.042 true)
    warm.set_params(n_estimators=14, oob_score=False).fit(X[::-1], y[::-1])
    with pytest.raises(ValueError, match="that the forest's trees were grown on"):
        warm.set_params(n_estimators=15, oob_score=True).fit(X[::-1], y[::-1])
    warm._tree_bags = [spec[:3] for spec in warm._tree_bags]  # (pickled at d18c284)
    with pytest.raises(ValueError, match="did not keep"):
        warm.set_params(oob_score=True).fit(X, y)
    del warm._tree_bags  # (a forest pickled before they were kept)
    for _ in range(2):  # refused before and after a warm fit that needs no bags (review)
        with pytest.raises(ValueError, match="did not keep"):
            warm.set_params(oob_score=True).fit(X, y)
        warm.set_params(oob_score=False).fit(X, y)  # without an OOB score no bag is needed
    assert len(warm.trees_) == 15


def test_log_probabilities_staged_scores_and_forest_decision_paths():
    """scikit-learn's methods the classifiers lacked (before: AttributeError):
    ``predict_log_proba``; AdaBoost's ``staged_predict_proba`` and ``staged_score``
    (equal to scikit-learn's AdaBoost with stumps, stage by stage); a forest's
    ``decision_path`` (each tree's root-to-leaf nodes, blocks at ``n_nodes_ptr``)."""
    X, y = _data(n=500, seed=13)
    for est in (bw.DecisionTreeClassifier(max_depth=4), bw.RandomForestClassifier(5),
                bw.AdaBoostClassifier(n_estimators=5)):
        est.fit(X, y)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(est.predict_log_proba(X), np.log(est.predict_proba(X)))
    ours = bw.AdaBoostClassifier(n_estimators=6).fit(X, y)
    ref = sk_ensemble.AdaBoostClassifier(n_estimators=6).fit(X, y)
    for a, b in zip(ours.staged_predict_proba(X), ref.staged_predict_proba(X)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert np.allclose(list(ours.staged_score(X, y)), list(ref.staged_score(X, y)), rtol=1e-12)
    reg = bw.AdaBoostRegressor(n_estimators=4).fit(X, y.astype(float))
    assert list(reg.staged_score(X, y))[-1] == pytest.approx(reg.score(X, y), rel=1e-12)
    tree = bw.DecisionTreeClassifier(max_depth=6).fit(X, y)
    from boostwood.ensemble.cart import decision_path_nodes  # the naive twin: node by node
    path, naive = tree.decision_path(X), decision_path_nodes(tree.tree_)
    assert path.shape == (500, tree.tree_.n_nodes) and path.has_sorted_indices
    for i, leaf in enumerate(tree.apply(X)):
        assert path[i].indices.tolist() == sorted(naive[leaf].tolist())
    forest = bw.RandomForestClassifier(4, max_depth=5, random_state=1).fit(X, y)
    indicator, ptr = forest.decision_path(X[:50])
    assert ptr.tolist() == np.cumsum([0] + [t.n_nodes for t in forest.trees_]).tolist()
    leaves = forest.apply(X[:50])
    for t, tree in enumerate(forest.trees_):
        block = indicator[:, ptr[t]:ptr[t + 1]].toarray()
        for i in range(50):  # the nodes are the walk from the root down to the row's leaf
            node, walk = 0, [0]
            while node != leaves[i, t]:
                node = next(c for c in (tree.left[node], tree.right[node]) if block[i, c])
                walk.append(int(node))
            assert sorted(walk) == np.flatnonzero(block[i]).tolist()


def test_the_rows_fingerprint_reads_values_not_their_storage():
    """What a warm start's OOB score compares: the same values in C or Fortran order, as
    CSR or CSC, with explicit zeros or duplicate entries summed, are the same rows; a
    changed value or row order is not."""
    import scipy.sparse as sp
    from boostwood.data import as_feature_matrix
    from boostwood.sklearn.forest import _rows_fingerprint
    X = np.random.default_rng(3).normal(size=(300, 7))
    X[X < 0.5] = 0.0
    y = np.arange(300.0)

    def fp(data):
        return _rows_fingerprint(as_feature_matrix(data, "X"), y)

    assert fp(X) == fp(np.asfortranarray(X)) != fp(X[::-1])
    csr = sp.csr_matrix(X)
    zeros = sp.csc_matrix(X)
    zeros.data[:3] = 0.0  # explicit zeros, entries still stored
    dense_zeros = X.copy()
    dense_zeros[zeros.indices[:3], np.searchsorted(zeros.indptr, np.arange(3), "right") - 1] = 0
    dup = sp.coo_matrix((np.r_[csr.tocoo().data, 0.0], (np.r_[csr.tocoo().row, 0],
                                                        np.r_[csr.tocoo().col, 0])),
                        shape=X.shape)
    assert fp(csr) == fp(csr.tocsc()) == fp(dup.tocsc()) != fp(sp.csr_matrix(X * 2))
    assert fp(zeros) == fp(sp.csc_matrix(dense_zeros))


def test_forest_predicts_on_its_n_jobs(monkeypatch):
    """A forest walks its trees on n_jobs threads, as its fit does (scikit-learn's forests
    predict on n_jobs too): the OOB score in fit, predict and apply; numba's thread count
    is given back after each."""
    import numba
    from boostwood.sklearn import forest as forest_module
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: nothing to tell apart")
    seen = []
    real = forest_module._leaves

    def spy(trees, fm):
        seen.append(numba.get_num_threads())
        return real(trees, fm)

    monkeypatch.setattr(forest_module, "_leaves", spy)
    X, y = _data(n=200, seed=3)
    before = numba.get_num_threads()
    numba.set_num_threads(2)  # the caller's count, told apart from n_jobs=1
    try:
        m = bw.RandomForestClassifier(5, n_jobs=1, oob_score=True, random_state=0).fit(X, y)
        m.predict(X)
        m.apply(X)
        assert seen == [1, 1, 1] and numba.get_num_threads() == 2
    finally:
        numba.set_num_threads(before)


def test_level_growth_takes_its_levels_from_the_one_policy(monkeypatch):
    """The level-wise criterion growth asks the compiled policy (next_batch) which of a
    level's nodes to split, as every other growth path does: with a leaf budget that a
    full level would pass, it splits the nodes of highest gain, the tree of the
    node-by-node path, and stops at the budget."""
    from boostwood.data.columns import SortedColumns
    from boostwood.data.validation import as_feature_matrix
    from boostwood.tree import GrowerParams
    from boostwood.tree import levels
    from boostwood.tree import criterion
    X, y = _data(n=1500, f=5, seed=3)
    yc = (np.asarray(y) > np.median(y)).astype(np.int32)
    calls = [0]
    real = levels.next_batch

    def spy(*args):
        calls[0] += 1
        return real(*args)

    monkeypatch.setattr(levels, "next_batch", spy)
    trees = []
    for level_wise in (True, False):
        monkeypatch.setattr(criterion, "LEVEL_WISE", level_wise)
        g = criterion.criterion_grower(SortedColumns(as_feature_matrix(X, "data")),
                                       GrowerParams(grow_policy="depthwise", max_depth=8,
                                                    max_leaves=11, min_child_weight=0.0),
                                       2, "gini")
        w = np.ones(len(yc))
        trees.append(criterion.grow_tree(g, w, yc, w, None, np.arange(5, dtype=np.int64),
                                         np.random.default_rng(0))[0])
    fast, slow = trees
    assert calls[0] >= 3  # one per level, up to the budget
    assert fast.n_leaves == slow.n_leaves == 11
    for f in ("feature", "threshold", "left", "right", "value"):
        assert np.array_equal(getattr(fast, f), getattr(slow, f)), f
