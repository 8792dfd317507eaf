"""Training on Dask gives the single-machine model to the byte ([Q5]).

A LocalCluster of 1-4 in-process workers (one thread each); the rows are spread over
partitions of random, skewed and empty sizes, which the scheduler places where it
likes. Each case trains with ``boostwood.dask.train`` and with ``boostwood.train`` on the
concatenated partitions, and compares the saved models and the evaluation history.
"""
import json
import threading
import time

import numpy as np
import pytest

import boostwood as bw

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
bwd = pytest.importorskip("boostwood.dask")

from conftest import make_classification  # noqa: E402


def _json(booster):
    m = booster._to_dict()
    m.pop("boostwood_version", None)
    return json.dumps(m, sort_keys=True)


def _chunks(n, kind, seed):
    r = np.random.default_rng(seed)
    if kind == "skewed":
        sizes = [int(0.7 * n), int(0.2 * n)]
        sizes.append(n - sum(sizes))
    elif kind == "empty":
        sizes = [n // 3, 0, n - n // 3 - n // 4, 0, n // 4]
    else:
        cuts = np.sort(r.choice(np.arange(1, n), size=5, replace=False))
        sizes = np.diff(np.concatenate([[0], cuts, [n]])).tolist()
    return tuple(int(s) for s in sizes)


@pytest.fixture(scope="module")
def clusters():
    made = {}

    def get(k):
        if k not in made:
            cluster = distributed.LocalCluster(n_workers=k, threads_per_worker=1,
                                               processes=False, dashboard_address=":0")
            made[k] = (cluster, distributed.Client(cluster))
        return made[k][1]
    yield get
    for cluster, client in made.values():
        client.close()
        cluster.close()


CASES = {
    "hist-depthwise-bagging": dict(objective="binary:logistic", max_depth=4, subsample=0.7,
                                   colsample_bynode=0.6, eta=0.3),
    "hist-lossguide": dict(objective="binary:logistic", grow_policy="lossguide", max_leaves=12,
                           max_depth=0, colsample_bytree=0.8, eta=0.3,
                           eval_metric=["auc", "aucpr", "logloss"]),  # (AUC: at rank 0)
    "pseudo-huber": dict(objective="reg:pseudohubererror", huber_slope=0.4, max_depth=3,
                         eta=0.3),  # (initial score: a bisection over exact sums)
    "approx-global": dict(objective="binary:logistic", tree_method="approx", max_depth=3,
                          subsample=0.8, eta=0.3),
    # (proposals from 1,000 of the 2,400 rows, drawn by row id)
    "approx-global-sampled": dict(objective="binary:logistic", tree_method="approx",
                                  max_depth=3, subsample=0.8, eta=0.3, sketch_sample_cnt=1000),
    "hist-multiclass": dict(objective="multi:softprob", num_class=3, max_depth=3,
                            subsample=0.8, eta=0.3),
}


@pytest.mark.parametrize("name", CASES)
def test_dask_training_is_the_single_machine_model(name, clusters):
    params = {**CASES[name], "seed": 5, "nthread": 1, "bin_construct_sample_cnt": 1500}
    X, y = make_classification(2400, 6, seed=0, missing=0.1)
    Xv, yv = make_classification(600, 6, seed=1, missing=0.1)
    if params["objective"].startswith("multi"):
        y = np.digitize(X[:, 0] + np.nan_to_num(X[:, 1]), [-0.7, 0.7]).astype(float)
        yv = np.digitize(Xv[:, 0] + np.nan_to_num(Xv[:, 1]), [-0.7, 0.7]).astype(float)
    res = {}
    single = bw.train(params, bw.Dataset(X, y), 8, evals=[(bw.Dataset(Xv, yv), "valid")],
                      early_stopping_rounds=3, verbose_eval=False, evals_result=res)
    for k, kind in [(1, "random"), (2, "skewed"), (3, "empty"), (4, "random")]:
        client = clusters(k)
        rows = _chunks(len(y), kind, seed=k)
        dtrain = bwd.DaskDataset(client, da.from_array(X, chunks=(rows, 6)),
                                 da.from_array(y, chunks=(rows,)))
        dvalid = bwd.DaskDataset(client, da.from_array(Xv, chunks=(250, 6)),
                                 da.from_array(yv, chunks=(250,)))
        out = bwd.train(client, params, dtrain, 8, evals=[(dvalid, "valid")],
                        early_stopping_rounds=3)
        assert out["history"] == res, (k, kind)
        assert _json(out["booster"]) == _json(single), (k, kind)
        pred = bwd.predict(client, out["booster"], da.from_array(Xv, chunks=(250, 6)))
        np.testing.assert_array_equal(pred.compute(), single.predict(Xv))


def test_dask_dataframes_with_categorical_columns(clusters):
    """Each worker codes its own partitions' categories; the dictionaries merge in the
    collectives, so the model is the one of the whole frame."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(3)
    n = 2000
    df = pd.DataFrame({"a": rng.normal(size=n), "city": rng.choice(list("pqrstuvw"), n),
                       "b": rng.normal(size=n)})
    df.loc[rng.random(n) < 0.05, "city"] = None
    y = ((df.a + df.city.isin(list("pqr")) + rng.normal(scale=0.5, size=n)) > 0.5).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 3, "seed": 1, "nthread": 1}
    single = bw.train(params, bw.Dataset(df, y.to_numpy()), 6)
    client = clusters(3)
    ddf = dd.from_pandas(df, npartitions=4)
    out = bwd.train(client, params, bwd.DaskDataset(client, ddf, dd.from_pandas(y, npartitions=4)),
                    6)
    assert out["booster"].feature_types == ["numeric", "categorical", "numeric"]
    assert _json(out["booster"]) == _json(single)
    np.testing.assert_array_equal(bwd.predict(client, out["booster"], ddf).compute(),
                                  single.predict(df))


def test_bad_input_is_a_clear_error(clusters):
    client = clusters(2)
    X = da.from_array(np.zeros((100, 3)), chunks=(50, 3))
    with pytest.raises(ValueError, match="no label"):
        bwd.train(client, {"objective": "binary:logistic"}, bwd.DaskDataset(client, X), 2)
    with pytest.raises(TypeError, match="DaskDataset"):
        bwd.train(client, {}, X, 2)
    with pytest.raises(ValueError, match="partition"):
        bwd.DaskDataset(client, X, da.from_array(np.zeros(100), chunks=(30,)))
    with pytest.raises(TypeError, match="dask Array, DataFrame or Series"):
        bwd.DaskDataset(client, np.zeros((10, 2)))


def test_a_lost_worker_ends_training_with_a_clear_error_not_a_hang(clusters):
    """One worker leaves mid-training: the call fails within the collective timeout."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        X, y = make_classification(20000, 8, seed=2)
        dtrain = bwd.DaskDataset(client, da.from_array(X, chunks=(5000, 8)),
                                 da.from_array(y, chunks=(5000,)))
        assert len(set(dtrain.workers)) == 2
        params = {"objective": "binary:logistic", "max_depth": 8, "nthread": 1}
        box = {}

        def run():
            try:
                bwd.train(client, params, dtrain, 100000, timeout=5.0)
            except BaseException as exc:  # what the user sees
                box["error"] = exc
        thread = threading.Thread(target=run, daemon=True)
        start = time.monotonic()
        thread.start()
        time.sleep(1.5)
        victim = [w for w in cluster.workers.values() if w.address != min(dtrain.workers)][0]
        client.sync(victim.close)
        thread.join(60)
        assert not thread.is_alive(), "training hung after a worker left"
        assert time.monotonic() - start < 60
        error = box.get("error")
        assert isinstance(error, bwd.CollectiveTimeout), repr(error)
        assert "did not arrive" in str(error) or "did not answer" in str(error)
    finally:
        client.close()
        cluster.close()


def test_dask_estimators_are_the_local_estimators(clusters):
    """DaskGBDTClassifier / Regressor: the local estimators' model and predictions, lazily;
    string class labels, an evaluation set, clone and to_local."""
    from sklearn.base import clone
    client = clusters(2)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 5))
    labels = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    target = 2 * X[:, 0] + rng.normal(size=2000)
    Xd = da.from_array(X, chunks=(450, 5))
    clf = bwd.DaskGBDTClassifier(n_estimators=15, max_depth=3, client=client).fit(
        Xd, da.from_array(labels, chunks=450))
    local = bw.GBDTClassifier(n_estimators=15, max_depth=3, n_jobs=1).fit(X, labels)
    assert list(clf.classes_) == ["no", "yes"]
    proba = clf.predict_proba(Xd)
    assert isinstance(proba, da.Array)
    np.testing.assert_array_equal(proba.compute(), local.predict_proba(X))
    np.testing.assert_array_equal(clf.predict(Xd).compute(), local.predict(X))
    yd = da.from_array(target, chunks=450)
    reg = bwd.DaskGBDTRegressor(n_estimators=15, max_depth=3, client=client,
                                early_stopping_rounds=3).fit(Xd, yd, eval_set=[(Xd, yd)])
    lreg = bw.GBDTRegressor(n_estimators=15, max_depth=3, n_jobs=1,
                            early_stopping_rounds=3).fit(X, target, eval_set=[(X, target)])
    assert reg.evals_result_ == lreg.evals_result_
    np.testing.assert_array_equal(reg.predict(Xd).compute(), lreg.predict(X))
    np.testing.assert_array_equal(reg.to_local().predict(X), lreg.predict(X))
    assert clone(reg).get_params()["timeout"] == 60.0
    with pytest.raises(ValueError, match="timeout"):
        bwd.train(client, {"objective": "reg:squarederror"},
                  bwd.DaskDataset(client, Xd, yd), 2, timeout=0)


def test_a_run_resumes_from_its_checkpoint_on_another_cluster_size(clusters, tmp_path,
                                                                    monkeypatch):
    """The first worker saves every 4 rounds; a run that fails after round 8 resumes from
    the file, on 2 workers instead of 3, to the model of an uninterrupted run."""
    from boostwood.boosting import callback
    X, y = make_classification(1500, 5, seed=6, missing=0.05)
    params = {"objective": "binary:logistic", "max_depth": 3, "subsample": 0.8, "seed": 2,
              "nthread": 1}
    whole = bw.train(params, bw.Dataset(X, y), 12)
    path = str(tmp_path / "run.checkpoint.json")
    saved = callback.Checkpoint.after_iteration

    def crash_after_8(self, model, epoch, evals_log):
        saved(self, model, epoch, evals_log)
        if epoch + 1 == 8:
            raise RuntimeError("the machine went away")
        return False

    def data(client, rows):
        return bwd.DaskDataset(client, da.from_array(X, chunks=(rows, 5)),
                               da.from_array(y, chunks=(rows,)))
    monkeypatch.setattr(callback.Checkpoint, "after_iteration", crash_after_8)
    client = clusters(3)
    with pytest.raises(RuntimeError, match="went away"):
        bwd.train(client, params, data(client, 400), 12, checkpoint=path,
                  checkpoint_every=4, timeout=5.0)
    assert bw.Booster(model_file=path).num_boosted_rounds() == 8
    monkeypatch.setattr(callback.Checkpoint, "after_iteration", saved)
    client = clusters(2)
    out = bwd.train(client, params, data(client, 700), 12, checkpoint=path, checkpoint_every=4)
    assert _json(out["booster"]) == _json(whole)
    assert not (tmp_path / "run.checkpoint.json").exists()


def _ranking_data(n_queries=120, seed=8):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 25, n_queries)
    qid = np.repeat(np.arange(n_queries) * 7 + 3, sizes)  # ids, not positions
    X = rng.normal(size=(qid.size, 5))
    rel = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=qid.size)
                           + 1), 0, 4)
    return X, rel, qid, np.cumsum(sizes)


def test_ranking_keeps_queries_whole_and_is_the_single_machine_model(clusters):
    X, rel, qid, ends = _ranking_data()
    params = {"objective": "rank:ndcg", "max_depth": 3, "eta": 0.3, "seed": 4, "nthread": 1,
              "eval_metric": "ndcg@5"}
    Xv, relv, qidv, endsv = _ranking_data(40, seed=9)
    res = {}
    single = bw.train(params, bw.Dataset(X, rel, qid=qid), 6,
                      evals=[(bw.Dataset(Xv, relv, qid=qidv), "valid")], evals_result=res,
                      verbose_eval=False)
    client = clusters(3)
    cuts = [int(ends[i]) for i in (20, 50, 51, 90)]  # partitions end at query boundaries
    rows = tuple(np.diff(np.concatenate([[0], cuts, [len(rel)]])).tolist())

    def collection(v, chunks):
        return da.from_array(v, chunks=(chunks,) + ((v.shape[1],) if v.ndim == 2 else ()))
    dtrain = bwd.DaskDataset(client, collection(X, rows), collection(rel, rows),
                             qid=collection(qid, rows))
    dvalid = bwd.DaskDataset(client, collection(Xv, (len(relv),)),
                             collection(relv, (len(relv),)), qid=collection(qidv, (len(relv),)))
    out = bwd.train(client, params, dtrain, 6, evals=[(dvalid, "valid")])
    assert out["history"] == res
    assert _json(out["booster"]) == _json(single)
    ranker = bwd.DaskGBDTRanker(n_estimators=6, max_depth=3, learning_rate=0.3,
                                random_state=4, client=client).fit(
        collection(X, rows), collection(rel, rows), qid=collection(qid, rows))
    local = bw.GBDTRanker(n_estimators=6, max_depth=3, learning_rate=0.3, random_state=4,
                          n_jobs=1).fit(X, rel, qid=qid)
    np.testing.assert_array_equal(ranker.predict(collection(X, rows)).compute(),
                                  local.predict(X))
    split = tuple(np.diff([0, int(ends[20]) + 2, len(rel)]).tolist())  # query 21 cut in two
    with pytest.raises(ValueError, match="one partition"):
        bwd.DaskDataset(client, collection(X, split), collection(rel, split),
                        qid=collection(qid, split))
    # LightGBM's group sizes (a local array) instead of ids: the model of Dataset(group=)
    sizes = np.diff(np.concatenate([[0], ends]))
    by_group = bw.train(params, bw.Dataset(X, rel, group=sizes), 6, verbose_eval=False)
    out = bwd.train(client, params, bwd.DaskDataset(client, collection(X, rows),
                                                    collection(rel, rows), group=sizes), 6)
    assert _json(out["booster"]) == _json(by_group)
    ranker = bwd.DaskGBDTRanker(n_estimators=6, max_depth=3, learning_rate=0.3,
                                random_state=4, client=client).fit(
        collection(X, rows), collection(rel, rows), group=sizes)
    np.testing.assert_array_equal(
        ranker.predict(collection(X, rows)).compute(),
        bw.GBDTRanker(n_estimators=6, max_depth=3, learning_rate=0.3, random_state=4,
                      n_jobs=1).fit(X, rel, group=sizes).predict(X))
    with pytest.raises(ValueError, match="query 21 .* crosses the end of partition 0"):
        bwd.DaskDataset(client, collection(X, split), collection(rel, split), group=sizes)
    with pytest.raises(ValueError, match="add up"):
        bwd.DaskDataset(client, collection(X, rows), collection(rel, rows), group=sizes[1:])
    with pytest.raises(ValueError, match="qid= or as group="):
        bwd.DaskGBDTRanker(client=client).fit(collection(X, rows), collection(rel, rows))


def test_integer_categories_of_different_partitions_stay_categorical(clusters):
    """A category column whose partitions list different categories (``astype`` on a dask
    frame) keeps its type when a worker joins its partitions: the model is the frame's."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(12)
    n = 1800
    df = pd.DataFrame({"k": np.sort(rng.integers(0, 30, n)), "x": rng.normal(size=n)})
    y = ((df.k % 7 < 3) + 0.5 * df.x > 0.5).astype(float)
    params = {"objective": "binary:logistic", "max_depth": 3, "seed": 1, "nthread": 1}
    single = bw.train(params, bw.Dataset(df.assign(k=df.k.astype("category")), y.to_numpy()), 5)
    client = clusters(2)
    ddf = dd.from_pandas(df, npartitions=6)
    ddf["k"] = ddf["k"].astype("category")  # each partition its own categories
    out = bwd.train(client, params, bwd.DaskDataset(client, ddf, dd.from_pandas(y, npartitions=6)),
                    5)
    assert out["booster"].feature_types == ["categorical", "numeric"]
    assert _json(out["booster"]) == _json(single)


def test_worker_processes_over_tcp():
    """Worker processes (TCP comms): the parts and the model travel serialised; a ranking
    model comes back and goes to the workers again for prediction."""
    import pickle
    X, rel, qid, ends = _ranking_data(60, seed=13)
    params = {"objective": "rank:ndcg", "max_depth": 3, "seed": 3, "nthread": 1}
    single = bw.train(params, bw.Dataset(X, rel, qid=qid), 4)
    rows = tuple(np.diff([0, int(ends[29]), len(rel)]).tolist())
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        chunks = (lambda v: da.from_array(v, chunks=(rows,) + v.shape[1:]))
        out = bwd.train(client, params, bwd.DaskDataset(client, chunks(X), chunks(rel),
                                                        qid=chunks(qid)), 4)
        assert _json(out["booster"]) == _json(single)
        np.testing.assert_array_equal(bwd.predict(client, out["booster"], chunks(X)).compute(),
                                      single.predict(X))
        est = bwd.DaskGBDTRegressor(n_estimators=3, client=client).fit(chunks(X), chunks(rel))
        again = pickle.loads(pickle.dumps(est))  # the client stays behind
        assert again.client is None and again.n_estimators_ == 3
        _a_restart_during_prediction_fails_cleanly(client)


def _a_restart_during_prediction_fails_cleanly(client):
    """[Q5] item 4: the scheduler restarts while a prediction is computed. The call ends
    at once with distributed's cancellation naming the restart (or, had it finished
    first, the right numbers), never a hang or a wrong answer; predicting again gives
    the right numbers (the model travels in the task graph, not in worker state)."""
    X = np.random.default_rng(0).normal(size=(300_000, 8))
    booster = bw.train({"objective": "binary:logistic", "max_depth": 8, "nthread": 1},
                       bw.Dataset(X[:4000], (X[:4000, 0] > 0).astype(float)), 40)
    expect = booster.predict(X)
    Xd = da.from_array(X, chunks=(20_000, 8))
    future = client.compute(bwd.predict(client, booster, Xd))
    time.sleep(0.2)
    client.restart()
    try:
        np.testing.assert_array_equal(future.result(timeout=60), expect)
    except distributed.client.FutureCancelledError as exc:
        assert "restart" in str(exc)
    np.testing.assert_array_equal(bwd.predict(client, booster, Xd).compute(), expect)


@pytest.mark.parametrize("class_weight", ["balanced", {"b": 3.0, "c": 0.5}])
def test_class_weight_on_dask_is_the_local_estimators(clusters, class_weight):
    """class_weight (counts of one pass over y for "balanced"), with and without
    sample_weight, three string classes as a dask Array and as a DataFrame column: the
    local estimator's model to the bit."""
    import dask.dataframe as dd
    import pandas as pd
    client = clusters(2)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 4))
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0] + 0.3 * rng.normal(size=1500),
                                                   [-0.2, 0.9])]
    w = rng.random(1500) + 0.5
    for weight in (None, w):
        local = bw.GBDTClassifier(n_estimators=6, max_depth=3, n_jobs=1,
                                  class_weight=class_weight).fit(X, labels, sample_weight=weight)
        frame = dd.from_pandas(pd.DataFrame(X, columns=list("pqrs")), npartitions=3)
        ys = dd.from_pandas(pd.Series(labels, name="y"), npartitions=3)
        for Xd, yd, wd in ((da.from_array(X, chunks=(500, 4)), da.from_array(labels, chunks=500),
                            None if weight is None else da.from_array(weight, chunks=500)),
                           (frame, ys, None if weight is None else
                            dd.from_pandas(pd.Series(weight), npartitions=3))):
            clf = bwd.DaskGBDTClassifier(n_estimators=6, max_depth=3, client=client,
                                         class_weight=class_weight).fit(Xd, yd,
                                                                        sample_weight=wd)
            np.testing.assert_array_equal(clf.predict_proba(Xd).compute(),
                                          local.predict_proba(X))


def test_a_categorical_label_s_unused_categories_are_no_classes(clusters):
    """y as a pandas Categorical whose categories include one no row holds: the classes
    are those y holds (the local estimator's), not its categories."""
    import dask.dataframe as dd
    import pandas as pd
    client = clusters(2)
    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 3))
    labels = pd.Series(pd.Categorical(np.where(X[:, 0] > 0, "a", "b"),
                                      categories=["a", "b", "c"]), name="y")
    Xd = dd.from_pandas(pd.DataFrame(X, columns=list("pqr")), npartitions=2)
    clf = bwd.DaskGBDTClassifier(n_estimators=4, max_depth=2, client=client,
                                 class_weight="balanced").fit(
        Xd, dd.from_pandas(labels, npartitions=2))
    local = bw.GBDTClassifier(n_estimators=4, max_depth=2, n_jobs=1,
                              class_weight="balanced").fit(X, np.asarray(labels))
    assert list(clf.classes_) == ["a", "b"]
    np.testing.assert_array_equal(clf.predict_proba(Xd).compute(), local.predict_proba(X))


@pytest.mark.parametrize("spec", [[1], [False, True, False], ["b"]])
def test_categorical_features_by_index_mask_or_name_on_dask(clusters, spec):
    """``categorical_features`` as indices or a boolean mask (a dask Array) or names (a
    DataFrame): the local estimator's model on the same columns, to the bit."""
    import dask.dataframe as dd
    import pandas as pd
    client = clusters(2)
    rng = np.random.default_rng(9)
    X = np.column_stack([rng.normal(size=900), rng.integers(0, 12, 900).astype(float),
                         rng.normal(size=900)])
    y = ((X[:, 1] % 4 == 1) + 0.5 * X[:, 0] > 0.5).astype(float)
    named = isinstance(spec[0], str)
    local = bw.GBDTClassifier(n_estimators=5, max_depth=3, n_jobs=1, categorical_features=spec)
    frame = pd.DataFrame(X, columns=list("abc"))
    local.fit(frame if named else X, y)
    Xd = dd.from_pandas(frame, npartitions=3) if named else da.from_array(X, chunks=(300, 3))
    yd = dd.from_pandas(pd.Series(y), npartitions=3) if named else \
        da.from_array(y, chunks=300)
    clf = bwd.DaskGBDTClassifier(n_estimators=5, max_depth=3, client=client,
                                 categorical_features=spec).fit(Xd, yd)
    assert clf.booster_.feature_types[1] == "categorical"
    np.testing.assert_array_equal(clf.predict_proba(Xd).compute(),
                                  local.predict_proba(frame if named else X))


def test_estimator_settings_dask_cannot_honour_are_errors(clusters):
    client = clusters(2)
    Xd = da.from_array(np.random.default_rng(0).normal(size=(200, 3)), chunks=(100, 3))
    yd = da.from_array(np.arange(200) % 2 * 1.0, chunks=100)
    with pytest.raises(ValueError, match="needs an eval_set"):
        bwd.DaskGBDTRegressor(early_stopping_rounds=2, client=client).fit(Xd, yd)
    for bad, error in (([3], "out of range"), (["x"], "not a feature name"),
                       ([True, False], "one entry per feature")):
        with pytest.raises(ValueError, match=error):  # on the client, before training
            bwd.DaskGBDTClassifier(categorical_features=bad, client=client).fit(Xd, yd)
    with pytest.raises(ValueError, match="class_weight names classes"):
        bwd.DaskGBDTClassifier(class_weight={7: 2.0}, client=client).fit(Xd, yd)
    with pytest.raises(ValueError, match="pred_leaf"):
        bwd.predict(client, bw.train({}, bw.Dataset(np.zeros((10, 3)), np.arange(10.0)), 1),
                    Xd, pred_leaf=True)


def test_a_workers_partitions_are_binned_as_row_blocks_not_joined():
    """The memory bound: a rank's array partitions (and numeric DataFrame partitions)
    become the row blocks of its Dataset, not a joined copy; categorical frames are
    joined (their categories are coded once over the rank's rows)."""
    import pandas as pd
    from boostwood.dask import _local_dataset
    X, y = make_classification(900, 4, seed=2)
    cuts = [0, 300, 300, 900]
    arrays = [(X[a:b], y[a:b], None, None, None) for a, b in zip(cuts, cuts[1:])]
    d = _local_dataset(arrays, cuts[:-1], None, None)
    assert len(d.features._blocks) == 3 and np.shares_memory(d.features._blocks[0], X)
    d.construct()
    assert d.features._blocks is not None  # binned block by block
    frames = [(pd.DataFrame(p[0], columns=list("abcd")),) + p[1:] for p in arrays]
    assert _local_dataset(frames, cuts[:-1], None, None).features._blocks is not None
    for p in frames:
        p[0]["c"] = pd.Categorical(np.where(p[0]["c"] > 0, "x", "y"))
    joined = _local_dataset(frames, cuts[:-1], None, None)
    assert joined.features._blocks is None and joined.categories


def test_a_prediction_graph_holds_the_model_once(clusters):
    """The model is one task that every block reads, not a copy inside each block's task
    (a 20-block prediction's graph was 20 models large)."""
    import pickle
    import cloudpickle
    client = clusters(1)
    X = np.random.default_rng(0).normal(size=(200, 3))
    boosters = [bw.train({"max_depth": 6}, bw.Dataset(X, X[:, 0] + X[:, 1],
                                                      feature_names=names), 30)
                for names in (None, ["0", "1", "2"])]
    import dask.dataframe as dd
    for data, booster in ((da.from_array(X, chunks=(10, 3)), boosters[0]),
                          (dd.from_array(X, chunksize=10), boosters[1])):
        pred = bwd.predict(client, booster, data)
        graph = dict(pred.__dask_graph__())
        # one task is the model itself; the others read it by its key
        assert sum(getattr(v, "value", None) is booster for v in graph.values()) == 1
        assert len(cloudpickle.dumps(graph)) < 3 * len(pickle.dumps(booster))
        np.testing.assert_array_equal(pred.compute(), boosters[0].predict(X))  # (same trees)


def _slow_combine_task(run, rank):
    from boostwood.dask._collective import DaskReducer
    run_id, n, hub, timeout = run
    reducer = DaskReducer(run_id, rank, n, hub, timeout)
    try:
        def slow_sum(parts):
            time.sleep(2.5 * timeout)  # rank 0's work, longer than the timeout
            return sum(parts)
        return reducer.combine(rank + 1, slow_sum)
    finally:
        reducer.close()


def test_a_combine_longer_than_the_timeout_is_work_not_a_lost_rank(clusters):
    """``combine`` runs its function at rank 0 once every part is in: the other ranks wait
    for it (asking again every half timeout) instead of failing as if rank 0 were gone."""
    import uuid
    from boostwood.dask import _register
    client = clusters(2)
    workers = sorted(client.nthreads())
    client.run(_register, workers=workers)
    run = (uuid.uuid4().hex, 2, workers[0], 1.0)
    futures = [client.submit(_slow_combine_task, run, r, workers=[w], pure=False,
                             allow_other_workers=False) for r, w in enumerate(workers)]
    assert client.gather(futures) == [3, 3]


def _three_ranks(late, combine_seconds, timeout=0.5):
    """Rank 0 (a thread) and ranks 1 and 2 (handler calls as ``DaskReducer._send`` makes
    them) in one collective whose ``combine`` takes ``combine_seconds``; rank 2 arrives
    ``late``. Returns what ranks 1 and 2 got."""
    import asyncio
    from boostwood.dask import _collective as C
    hub = C._Hub(3, timeout)
    C._HUBS["three-ranks"] = hub

    def slow(parts):
        time.sleep(combine_seconds)
        return sum(parts)

    async def rank(r, delay):
        await asyncio.sleep(delay)
        deadline, poll = time.monotonic() + timeout, False
        while True:
            status, value = C._unwrap(await C.collective_handler(
                "three-ranks", 1, r, None if poll else r + 1, timeout, poll))
            if status == "result":
                return value
            if status == "combining":
                deadline = time.monotonic() + timeout
            elif time.monotonic() > deadline:
                return "timed out"
            poll = status != "absent"

    async def run():
        return await asyncio.gather(rank(1, 0.0), rank(2, late))
    worker = threading.Thread(target=lambda: hub.meet(1, slow, 1) if late < timeout else None)
    worker.start()
    try:
        return asyncio.run(run())
    finally:
        worker.join()
        C._HUBS.pop("three-ranks", None)


def test_a_late_rank_and_a_long_combine_are_not_a_lost_rank():
    """A rank arriving after half the timeout, then a combine longer than the timeout:
    every rank gets the result (before, the first rank had given up after half a timeout
    of waiting plus half of combining); a rank later than the timeout is still missed."""
    assert _three_ranks(late=1.3, combine_seconds=2.5, timeout=2.0) == [6, 6]
    assert _three_ranks(late=2.6, combine_seconds=0.0, timeout=2.0) == ["timed out"] * 2
