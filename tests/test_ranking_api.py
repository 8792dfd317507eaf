"""Learning to rank, everywhere a row set goes: Dataset's group/qid (any order) and
group_weight, subset and get_group, cv by query, shards that keep queries whole, threads,
the GBDTRanker estimator under scikit-learn's model selection, the command line's
``.query`` and ``qid:``, model files, and position-bias learning on simulated clicks."""
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._comm import SimulatedShards


def _json(booster):
    m = booster._to_dict()
    m.pop("boostwood_version", None)
    m["params"].pop("nthread", None)
    return json.dumps(m, sort_keys=True)


def make_queries(n_queries=60, size=(5, 30), seed=0, n_features=5, levels=None):
    """Queries of random sizes whose relevance (0..4) follows the first two features;
    ``levels`` rounds the features to that many values (so that binning sees every
    distinct value, whatever the rows' multiplicity)."""
    r = np.random.default_rng(seed)
    sizes = r.integers(size[0], size[1], n_queries)
    n = int(sizes.sum())
    X = r.normal(size=(n, n_features))
    if levels:
        X = np.round(X * levels / 4)
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + 1.5 + 0.5 * r.normal(size=n)), 0, 4)
    return X, y, sizes


PARAMS = {"objective": "rank:ndcg", "max_depth": 4, "eta": 0.3, "verbosity": 0,
          "eval_metric": "ndcg@5"}


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise", "rank_xendcg"])
def test_qid_in_any_order_gives_the_model_of_contiguous_queries(objective):
    """Rows of one qid scattered anywhere form one query: the model is the one trained
    on the rows sorted by query (group sizes), to the byte, and predictions come back in
    the caller's order. The mean pair method draws by query id (a query's index under
    group sizes), so this holds for it too when the ids are the indices."""
    X, y, sizes = make_queries()
    qid = np.repeat(np.arange(len(sizes)), sizes)
    perm = np.random.default_rng(1).permutation(len(y))
    params = {**PARAMS, "objective": objective, "lambdarank_pair_method": "mean"}
    if objective == "rank_xendcg":
        params.pop("lambdarank_pair_method")
    sorted_model = bw.train(params, bw.Dataset(X, y, group=sizes), 8)
    # XE-NDCG draws a number per row, keyed by the row's global id: row_ids name them
    ids = perm if objective == "rank_xendcg" else None
    shuffled = bw.Dataset(X[perm], y[perm], qid=qid[perm], row_ids=ids)
    assert shuffled.get_group().tolist() == sizes.tolist()
    shuffled_model = bw.train(params, shuffled, 8)
    assert _json(shuffled_model) == _json(sorted_model)
    assert np.array_equal(shuffled_model.predict(X[perm]), sorted_model.predict(X)[perm])
    if objective == "rank:ndcg":  # any ids, when no pair is drawn
        top = {**params, "lambdarank_pair_method": "topk"}
        other_ids = bw.Dataset(X[perm], y[perm], qid=qid[perm] * 3 + 11)
        assert _json(bw.train(top, other_ids, 8)) == _json(
            bw.train(top, bw.Dataset(X, y, group=sizes), 8))
    # the same ids as strings: one query per distinct string
    strings = bw.Dataset(X[perm], y[perm], qid=np.array([f"q{v}" for v in qid[perm]]))
    assert sorted(strings.get_group().tolist()) == sorted(sizes.tolist())


def test_group_weight_counts_a_query_that_many_times():
    """A query of group_weight 3 trains as the query given three times (features with
    few values, so that the bins do not depend on how often a row occurs)."""
    X, y, sizes = make_queries(n_queries=20, levels=4)
    ends = np.cumsum(sizes)
    rows = [np.arange(e - s, e) for s, e in zip(sizes, ends)]
    gw = np.ones(len(sizes))
    gw[[2, 7]] = 3
    repeat = [r for q, r in enumerate(rows) for _ in range(int(gw[q]))]
    Xr, yr = X[np.concatenate(repeat)], y[np.concatenate(repeat)]
    params = {**PARAMS, "min_child_weight": 0}
    weighted = bw.train(params, bw.Dataset(X, y, group=sizes, group_weight=gw), 6)
    repeated = bw.train(params, bw.Dataset(Xr, yr, group=[len(r) for r in repeat]), 6)
    # equal up to the float32 rounding of gradients (3 g rounded once, against g thrice)
    assert np.allclose(weighted.predict(X), repeated.predict(X), rtol=0, atol=1e-6)
    unweighted = bw.train(params, bw.Dataset(X, y, group=sizes), 6)
    assert np.abs(weighted.predict(X) - unweighted.predict(X)).max() > 1e-2


def test_query_arguments_are_checked():
    X, y, sizes = make_queries(n_queries=5)
    n = len(y)
    with pytest.raises(ValueError, match="add up to"):
        bw.Dataset(X, y, group=sizes[:-1])
    with pytest.raises(ValueError, match="not both"):
        bw.Dataset(X, y, group=sizes, qid=np.zeros(n))
    with pytest.raises(ValueError, match="qid"):
        bw.Dataset(X, y, qid=np.zeros(n - 1))
    with pytest.raises(ValueError, match="group_weight"):
        bw.Dataset(X, y, group=sizes, group_weight=np.ones(4))
    with pytest.raises(ValueError, match="group_weight"):
        bw.Dataset(X, y, group_weight=np.ones(5))
    with pytest.raises(TypeError, match="group_weight must hold numbers"):
        bw.Dataset(X, y, group=sizes, group_weight=["a"] * 5)
    with pytest.raises(ValueError, match="per query"):
        bw.Dataset(X, y, group=sizes, weight=np.ones(5))
    with pytest.raises(ValueError, match="position"):
        bw.Dataset(X, y, group=sizes, position=-np.ones(n))
    with pytest.raises(ValueError, match="queries"):  # a ranking objective without them
        bw.train(PARAMS, bw.Dataset(X, y), 1)
    with pytest.raises(ValueError, match="gradient"):  # row sampling would cut queries
        bw.train({**PARAMS, "boosting": "gradient"}, bw.Dataset(X, y, group=sizes), 1)
    with pytest.raises(ValueError, match="queries"):  # an eval set without queries
        d = bw.Dataset(X, y, group=sizes)
        bw.train(PARAMS, d, 1, evals=[(bw.Dataset(X, y, reference=d), "v")])


def test_subset_keeps_whole_queries_and_get_group():
    X, y, sizes = make_queries(n_queries=6)
    d = bw.Dataset(X, y, group=sizes)
    ends = np.cumsum(sizes)
    keep = np.concatenate([np.arange(ends[q] - sizes[q], ends[q]) for q in (4, 1)])
    sub = d.subset(keep)
    assert sub.get_group().tolist() == [sizes[1], sizes[4]]  # in query order
    assert sub.queries.ids.tolist() == [1, 4]
    assert np.array_equal(sub.get_label(), y[keep])
    with pytest.raises(ValueError, match="query"):
        d.subset(keep[1:])
    assert bw.Dataset(X, y).get_group() is None


def test_cv_keeps_each_query_in_one_fold():
    """cv folds by query (a fold of rows that cut a query would be an error), and gives
    the logs of training each fold by hand on whole queries."""
    from boostwood.boosting.cv import fold_ids
    X, y, sizes = make_queries(n_queries=30)
    d = bw.Dataset(X, y, group=sizes)
    res = bw.cv(PARAMS, d, 4, nfold=3, seed=2)
    query_of = np.repeat(np.arange(len(sizes)), sizes)
    folds = fold_ids(len(sizes), 3, seed=2)[query_of]
    by_hand = []
    for f in range(3):
        train, test = d.subset(np.nonzero(folds != f)[0]), d.subset(np.nonzero(folds == f)[0])
        log = {}
        bw.train(PARAMS, train, 4, evals=[(test, "test")], evals_result=log)
        by_hand.append(log["test"]["ndcg@5"])
    assert np.allclose(res["test-ndcg@5-mean"], np.mean(by_hand, axis=0), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="query"):  # row folds that cut queries
        bw.cv(PARAMS, d, 2, folds=np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="stratified"):
        bw.cv(PARAMS, d, 2, stratified=True)


def _shard_run(params, X, y, qid, parts, rounds=6):
    def shard(reducer, s):
        idx = parts[s]
        d = bw.Dataset(X[idx], y[idx], qid=qid[idx], row_ids=idx)
        return _json(bw.train(params, d, rounds, reducer=reducer))
    return SimulatedShards(len(parts), seed=len(parts)).run(shard)


@pytest.mark.parametrize("pairs", ["topk", "mean"])
def test_shards_holding_whole_queries_give_the_single_process_model(pairs):
    X, y, sizes = make_queries(n_queries=40)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    params = {**PARAMS, "lambdarank_pair_method": pairs, "subsample": 0.8}
    single = _json(bw.train(params, bw.Dataset(X, y, qid=qid), 6))
    owner = np.random.default_rng(3).integers(0, 3, len(sizes))[qid]  # queries to shards
    out = _shard_run(params, X, y, qid, [np.nonzero(owner == s)[0] for s in range(3)])
    assert out == [single] * 3


def test_a_query_on_two_shards_is_refused_naming_it():
    X, y, sizes = make_queries(n_queries=10)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    rows = np.arange(len(y))
    cut = np.nonzero(qid == 4)[0][2]
    with pytest.raises(ValueError, match=r"query 4 .*shards|shards.*query 4"):
        _shard_run(PARAMS, X, y, qid, [rows[:cut], rows[cut:]])

    def by_sizes(reducer, s):  # group sizes cannot say which queries are whose
        idx = rows[:cut] if s == 0 else rows[cut:]
        d = bw.Dataset(X[idx], y[idx], group=[len(idx)], row_ids=idx)
        return bw.train(PARAMS, d, 1, reducer=reducer)
    with pytest.raises(ValueError, match="qid"):
        SimulatedShards(2).run(by_sizes)


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:map", "rank_xendcg", "lambdarank"])
def test_any_number_of_threads_gives_the_same_model(objective):
    """1, 2 and every thread numba has (16 under NUMBA_NUM_THREADS=16)."""
    import numba
    X, y, sizes = make_queries(n_queries=80)
    if objective == "rank:map":
        y = (y > 2).astype(float)
    d = bw.Dataset(X, y, group=sizes)
    counts = sorted({1, 2, numba.config.NUMBA_NUM_THREADS})
    models = [_json(bw.train({**PARAMS, "objective": objective, "nthread": t,
                              "eval_metric": "ndcg"}, d, 5)) for t in counts]
    assert models == [models[0]] * len(counts)


def test_a_ranking_model_saves_loads_and_continues(tmp_path):
    X, y, sizes = make_queries()
    d = bw.Dataset(X, y, group=sizes)
    params = {**PARAMS, "objective": "lambdarank", "label_gain": [0, 1, 3, 7, 15],
              "lambdarank_num_pair_per_sample": 10}
    b = bw.train(params, d, 5)
    b.save_model(tmp_path / "m.json")
    loaded = bw.Booster(model_file=tmp_path / "m.json")
    assert np.array_equal(loaded.predict(X), b.predict(X))
    saved = json.loads((tmp_path / "m.json").read_text())
    text = json.dumps(saved)
    assert "label_gain" in text and "lambdarank_num_pair_per_sample" in text
    more = bw.train(params, d, 3, init_model=loaded)
    assert np.array_equal(more.predict(X), bw.train(params, d, 8).predict(X))


# -- the estimator ------------------------------------------------------------------

def test_ranker_takes_group_or_qid_and_scores_by_query():
    sk = pytest.importorskip("sklearn.metrics")
    X, y, sizes = make_queries()
    qid = np.repeat(np.arange(len(sizes)), sizes)
    perm = np.random.default_rng(4).permutation(len(y))
    a = bw.GBDTRanker(n_estimators=10, max_depth=4).fit(X, y, group=sizes)
    b = bw.GBDTRanker(n_estimators=10, max_depth=4).fit(X[perm], y[perm], qid=qid[perm])
    assert np.array_equal(a.predict(X)[perm], b.predict(X[perm]))
    # score: the mean over queries of NDCG@10, scikit-learn's ndcg_score per query (which
    # reads y_true as the gain: the default gain is 2^y - 1)
    pred = a.predict(X)
    gain = 2 ** y - 1
    expect = np.mean([sk.ndcg_score([gain[qid == q]], [pred[qid == q]], k=10)
                      for q in range(len(sizes)) if y[qid == q].max() > 0])
    assert abs(a.score(X, y, group=sizes) - expect) < 1e-12
    assert abs(b.score(X[perm], y[perm], qid=qid[perm]) - expect) < 1e-12


def test_ranker_early_stops_on_an_eval_set_and_on_a_holdout_by_query():
    X, y, sizes = make_queries(n_queries=80)
    Xv, yv, sv = make_queries(n_queries=30, seed=9)
    qv = np.repeat(np.arange(len(sv)), sv)
    m = bw.GBDTRanker(n_estimators=300, learning_rate=0.5, max_depth=6,
                      early_stopping_rounds=5)
    m.fit(X, y, group=sizes, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert m.best_iteration_ < 299
    assert list(m.evals_result_["validation_0"]) == ["ndcg@10"]
    h = bw.GBDTRanker(n_estimators=300, learning_rate=0.5, max_depth=6,
                      early_stopping_rounds=5, validation_fraction=0.2)
    h.fit(X, y, group=sizes)
    assert h.n_estimators_ < 300
    with pytest.raises(ValueError, match="query of every row"):
        bw.GBDTRanker().fit(X, y)
    with pytest.raises(ValueError, match="eval_group|eval_qid"):
        bw.GBDTRanker(n_estimators=2).fit(X, y, group=sizes, eval_set=[(Xv, yv)])
    with pytest.raises(ValueError, match="ranking objective"):
        bw.GBDTRanker(objective="binary:logistic").fit(X, y, group=sizes)
    with pytest.raises(ValueError, match="GBDTRanker|queries"):
        bw.GBDTRegressor(objective="lambdarank").fit(X, y)


def test_ranker_under_group_kfold_and_metadata_routing():
    ms = pytest.importorskip("sklearn.model_selection")
    import sklearn
    X, y, sizes = make_queries(n_queries=40)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    with sklearn.config_context(enable_metadata_routing=True):
        est = bw.GBDTRanker(n_estimators=5).set_fit_request(qid=True).set_score_request(qid=True)
        res = ms.cross_validate(est, X, y, cv=ms.GroupKFold(3),
                                params={"qid": qid, "groups": qid})
        by_hand = []
        for tr, te in ms.GroupKFold(3).split(X, y, qid):
            fit = bw.GBDTRanker(n_estimators=5).fit(X[tr], y[tr], qid=qid[tr])
            by_hand.append(fit.score(X[te], y[te], qid=qid[te]))
        assert np.allclose(res["test_score"], by_hand, rtol=0, atol=1e-12)
        grid = ms.GridSearchCV(est, {"max_depth": [2, 4]}, cv=ms.GroupKFold(3))
        grid.fit(X, y, groups=qid, qid=qid)
        assert grid.best_params_["max_depth"] in (2, 4)


# -- the command line --------------------------------------------------------------

def _write_libsvm(path, X, y, qid=None):
    with open(path, "w") as f:
        for i in range(len(y)):
            head = f"{y[i]:g}" + ("" if qid is None else f" qid:{qid[i]}")
            f.write(head + "".join(f" {j}:{v:.17g}" for j, v in enumerate(X[i])) + "\n")


def test_cli_reads_query_files_and_interleaved_qid(tmp_path):
    from test_cli import run
    X, y, sizes = make_queries(n_queries=20)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    perm = np.random.default_rng(5).permutation(len(y))
    _write_libsvm(tmp_path / "a.libsvm", X, y)
    np.savetxt(tmp_path / "a.libsvm.query", sizes, fmt="%d")
    _write_libsvm(tmp_path / "b.libsvm", X[perm], y[perm], qid[perm])
    args = ["--rounds", "4", "--quiet", "--param", "objective=rank:ndcg",
            "--param", "max_depth=3", "--param", "data.zero_based=true"]
    run("train", "--data", "a.libsvm", "--model", "a.json", *args, cwd=tmp_path)
    run("train", "--data", "b.libsvm", "--model", "b.json", *args, cwd=tmp_path)
    a = bw.Booster(model_file=tmp_path / "a.json")
    b = bw.Booster(model_file=tmp_path / "b.json")
    assert np.array_equal(a.predict(X), b.predict(X))
    out = run("eval", "--model", "a.json", "--data", "b.libsvm", "--param",
              "data.zero_based=true", cwd=tmp_path)
    assert "ndcg" in out.stdout
    np.savetxt(tmp_path / "b.libsvm.query", sizes, fmt="%d")  # both: which is meant?
    bad = run("train", "--data", "b.libsvm", "--model", "c.json", *args, cwd=tmp_path,
              check=False)
    assert bad.returncode != 0 and "qid" in bad.stderr and "Traceback" not in bad.stderr


# -- position bias -----------------------------------------------------------------

def _clicks(n_queries, m, seed):
    """Clicks of a cascade-free examination model: the row at position p (the order of
    a logging ranker that also likes feature 1, which relevance ignores) is examined
    with probability 1/(p+1), and clicked when examined with probability rel/4."""
    r = np.random.default_rng(seed)
    n = n_queries * m
    X = r.normal(size=(n, 6))
    rel = np.clip(np.round(1.2 * X[:, 0] + 1.5 + 0.5 * r.normal(size=n)), 0, 4)
    qid = np.repeat(np.arange(n_queries), m)
    logged = (X[:, 0] + X[:, 1]).reshape(n_queries, m)
    position = np.argsort(np.argsort(-logged, axis=1), axis=1).ravel()
    click = (r.random(n) < rel / 4 / (position + 1)).astype(float)
    return X, rel, click, qid, position


def test_unbiased_lambdamart_ranks_true_relevance_better_than_biased():
    X, rel, click, qid, pos = _clicks(1500, 20, 0)
    Xt, relt, _, qidt, _ = _clicks(300, 20, 1)
    test = bw.Dataset(Xt, relt, qid=qidt)
    scores = {}
    for unbiased in (False, True):
        log = {}
        b = bw.train({"objective": "rank:ndcg", "lambdarank_unbiased": unbiased, "eta": 0.1,
                      "max_depth": 4, "verbosity": 0, "eval_metric": "ndcg@10"},
                     bw.Dataset(X, click, qid=qid, position=pos), 60, evals=[(test, "t")],
                     evals_result=log)
        scores[unbiased] = log["t"]["ndcg@10"][-1]
    assert scores[True] > scores[False] + 0.02, scores
    bias = b.objective.position_bias
    assert bias[0] > bias[5] > bias[15]  # the learnt offsets fall with the position
    with pytest.raises(ValueError, match="position"):
        bw.train({"objective": "rank:ndcg", "lambdarank_unbiased": True},
                 bw.Dataset(X, click, qid=qid), 1)


def test_the_lambdarank_example_passes_lightgbms_own_thresholds():
    """LightGBM's test of its ranker on this example: after early stopping on the test
    queries, NDCG@1 > 0.5674 and NDCG@3 > 0.578 (its metric rules: ties in input order,
    a query without a relevant document scores 1)."""
    from test_ranking import _lambdarank_example
    Xtr, ytr, gtr, Xte, yte, gte = _lambdarank_example()
    m = bw.GBDTRanker(objective="lambdarank", n_estimators=50, early_stopping_rounds=10,
                      eval_metric=["ndcg@1", "ndcg@3"], eval_ties="input_order",
                      eval_empty_query="one")
    m.fit(Xtr, ytr, group=gtr, eval_set=[(Xte, yte)], eval_group=[gte])
    log = m.evals_result_["validation_0"]
    best = m.best_iteration_
    assert log["ndcg@1"][best] > 0.5674 and log["ndcg@3"][best] > 0.578, \
        (log["ndcg@1"][best], log["ndcg@3"][best])


def test_query_keys_are_the_ids_values_whatever_their_dtype():
    """A query's key (what shards compare and pair draws are keyed by) is a function of
    its id's value: -1.0 and 1.0 differ, 1 and 1.0 agree, 3.5 is no integer."""
    from boostwood.data.queries import query_keys
    floats = query_keys(np.array([-1.0, 1.0, 3.5, 3.0]))
    assert floats[0] != floats[1] and floats[2] != 3 and floats[3] == 3
    assert query_keys(np.array([1, -1])).tolist() == floats[[1, 0]].tolist()
    X, y, sizes = make_queries(n_queries=6)
    qid = np.repeat(np.array([-1.0, 1.0, -2.0, 2.0, -3.0, 3.0]), sizes)
    owner = (qid > 0).astype(int)  # -q and q on different shards: different queries
    out = _shard_run(PARAMS, X, y, qid, [np.nonzero(owner == s)[0] for s in range(2)])
    assert out == [_json(bw.train(PARAMS, bw.Dataset(X, y, qid=qid), 6))] * 2


def test_cli_qid_must_be_an_exact_integer(tmp_path):
    from test_cli import run
    X, y, sizes = make_queries(n_queries=4)
    big = 1234567890123456789  # float64 would read it and the next id alike
    qid = np.repeat([big, big + 1, big + 2, big + 3], sizes)
    with open(tmp_path / "a.libsvm", "w") as f:
        for i in range(len(y)):
            f.write(f"{y[i]:g} qid:{qid[i]}" + "".join(f" {j}:{v:.17g}"
                                                     for j, v in enumerate(X[i])) + "\n")
    from boostwood.cli.data import DataSpec, read_table
    table = read_table(DataSpec(str(tmp_path / "a.libsvm"), zero_based=True))
    assert np.array_equal(table.qid, qid)
    (tmp_path / "b.libsvm").write_text("1 qid:3.5 0:1\n0 qid:3 0:2\n")
    bad = run("train", "--data", "b.libsvm", "--param", "objective=rank:ndcg", cwd=tmp_path,
              check=False)
    assert bad.returncode != 0 and "qid '3.5' is not an integer" in bad.stderr


def test_score_is_the_objectives_metric():
    """A rank:map ranker scores MAP@10, its objective's metric, not NDCG."""
    from boostwood.boosting.metrics import get_metric
    from boostwood.data.queries import queries_from
    from boostwood.data.rowinfo import RowInfo
    X, y, sizes = make_queries()
    yb = (y > 2).astype(float)
    m = bw.GBDTRanker(objective="rank:map", n_estimators=5).fit(X, yb, group=sizes)
    info = RowInfo.of(yb, queries=queries_from(len(yb), group=sizes))
    pred = m.predict(X)
    assert m.score(X, yb, group=sizes) == get_metric("map@10", {}).evaluate(info, pred)
    assert m.score(X, yb, group=sizes) != get_metric("ndcg@10", {}).evaluate(info, pred)


def test_lambdarank_norm_is_kept_in_the_model_file(tmp_path):
    """LightGBM's lambdarank_norm=False switches both normalisations; a reloaded model
    resolves them as trained (and continues training to the same model)."""
    X, y, sizes = make_queries(n_queries=20)
    d = bw.Dataset(X, y, group=sizes)
    for extra in ({"lambdarank_norm": False},
                  {"lambdarank_norm": False, "lambdarank_score_normalization": True}):
        params = {**PARAMS, "objective": "lambdarank", **extra}
        b = bw.train(params, d, 3)
        b.save_model(tmp_path / "m.json")
        loaded = bw.Booster(model_file=tmp_path / "m.json")
        assert np.array_equal(loaded.objective.settings, b.objective.settings)
    assert b.params["lambdarank_score_normalization"] is True
    b = bw.train({**PARAMS, "objective": "lambdarank", "lambdarank_norm": False}, d, 1)
    assert b.params["lambdarank_score_normalization"] is False


def test_cv_with_fewer_queries_than_folds_says_queries():
    X, y, sizes = make_queries(n_queries=2)
    with pytest.raises(ValueError, match="at least 3 queries"):
        bw.cv(PARAMS, bw.Dataset(X, y, group=sizes), 2, nfold=3)
