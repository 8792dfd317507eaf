"""Training on k data shards gives the model of one process holding every row, to the byte.

:class:`boostwood._comm.SimulatedShards` runs k shards of the training and
validation rows in k threads; each calls ``train`` with its shard's reducer, which
adds their contributions in a shuffled order at every collective. Histograms,
node totals, the binning sample, the initial score, bagging draws and metric sums
are all exact and keyed by global row ids, so every shard builds the single
process's model.
"""
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._comm import LocalReducer, SimulatedShards
from boostwood._comm import exact_sums

from conftest import make_classification, record_loop_statuses


def _split(n, k, kind, seed=0):
    """Global row ids of each of k shards."""
    r = np.random.default_rng(seed)
    if kind == "skewed":
        p = np.array([0.72, 0.2, 0.06, 0.02][:k])
        assign = r.choice(k, size=n, p=p / p.sum())
    elif kind == "one-empty":
        assign = r.integers(1, k, size=n) if k > 1 else np.zeros(n, dtype=np.int64)
    else:
        assign = r.integers(0, k, size=n)
    return [np.nonzero(assign == s)[0] for s in range(k)]


def _json(booster):
    m = booster._to_dict()
    m.pop("boostwood_version", None)
    return json.dumps(m, sort_keys=True)


def _data(objective, n=3000, seed=0):
    X, y = make_classification(n, 6, seed=seed, missing=0.1)
    if objective.startswith("multi"):
        y = np.digitize(X[:, 0] + np.nan_to_num(X[:, 1]), [-0.7, 0.7]).astype(float)
    return X, y


def _single(params, rounds, X, y, Xv, yv):
    res = {}
    b = bw.train(params, bw.Dataset(X, y), rounds, evals=[(bw.Dataset(Xv, yv), "valid")],
                 early_stopping_rounds=3, verbose_eval=False, evals_result=res)
    return _json(b), res


def _sharded(params, rounds, X, y, Xv, yv, k, kind):
    parts, vparts = _split(len(y), k, kind, seed=k), _split(len(yv), k, "random", seed=7 * k)

    def shard(reducer, s):
        idx, vidx = parts[s], vparts[s]
        d = bw.Dataset(X[idx], y[idx], row_ids=idx)
        dv = bw.Dataset(Xv[vidx], yv[vidx], row_ids=vidx, reference=d)
        res = {}
        b = bw.train(params, d, rounds, evals=[(dv, "valid")], early_stopping_rounds=3,
                     verbose_eval=False, evals_result=res, reducer=reducer)
        return _json(b), res

    out = SimulatedShards(k, seed=k).run(shard)
    for other in out[1:]:
        assert other == out[0]  # every shard holds the same model
    return out[0]


CASES = {
    "hist-depthwise-bagging": dict(objective="binary:logistic", max_depth=4, subsample=0.7,
                                   colsample_bynode=0.6, eta=0.3),
    "hist-lossguide": dict(objective="binary:logistic", grow_policy="lossguide", max_leaves=12,
                           max_depth=0, colsample_bytree=0.8, subsample=0.8, eta=0.3),
    "approx-global": dict(objective="binary:logistic", tree_method="approx", max_depth=3,
                          subsample=0.8, colsample_bynode=0.7, eta=0.3),
    "hist-multiclass": dict(objective="multi:softprob", num_class=3, max_depth=3,
                            subsample=0.8, colsample_bynode=0.7, eta=0.3),
    "approx-multiclass": dict(objective="multi:softprob", num_class=3, tree_method="approx",
                              max_depth=3, subsample=0.9, eta=0.3),
    # proposals from a row sample drawn by row id (1,000 of 3,000 rows)
    "approx-sampled": dict(objective="binary:logistic", tree_method="approx", max_depth=3,
                           subsample=0.8, eta=0.3, sketch_sample_cnt=1000),
    # stochastic rounding keyed by global row ids: every shard draws the single process's
    "hist-quantized-multiclass": dict(objective="multi:softprob", num_class=3, max_depth=3,
                                      subsample=0.8, eta=0.3, use_quantized_grad=True,
                                      num_grad_quant_bins=6),
    # metrics that are not sums of rows (computed where the shards' rows meet), early
    # stopping on the last
    "hist-auc-metrics": dict(objective="binary:logistic", max_depth=3, eta=0.3,
                             eval_metric=["aucpr", "average_precision", "auc"]),
    # the initial score by bisection over exact sums across shards
    "pseudo-huber": dict(objective="reg:pseudohubererror", huber_slope=0.4, max_depth=3,
                         eta=0.3, subsample=0.8),
}


@pytest.mark.parametrize("name", CASES)
def test_k_shards_give_the_single_process_model(name):
    params = {**CASES[name], "seed": 5, "bin_construct_sample_cnt": 1500}
    X, y = _data(params["objective"])
    Xv, yv = _data(params["objective"], n=800, seed=1)
    rounds = 12
    expected = _single(params, rounds, X, y, Xv, yv)
    for k, kind in [(1, "random"), (2, "random"), (3, "skewed"), (4, "one-empty"),
                    (4, "random")]:
        got = _sharded(params, rounds, X, y, Xv, yv, k, kind)
        assert got[1] == expected[1], (k, kind)  # the same metric values every round
        assert got[0] == expected[0], (k, kind)


class _CountingReducer:
    """A shard's reducer that counts the shard's ``allgather`` calls."""

    def __init__(self, reducer, calls):
        self._r, self._calls = reducer, calls
        self.n_shards, self.shard = reducer.n_shards, reducer.shard

    def __getattr__(self, name):
        return getattr(self._r, name)

    def allgather(self, obj):
        self._calls[self.shard] += 1
        return self._r.allgather(obj)


@pytest.mark.parametrize("params", [
    {"objective": "binary:logistic", "eval_metric": ["auc", "aucpr", "average_precision"]},
    {"objective": "reg:pseudohubererror", "eval_metric": "auc"},
    {"objective": "multi:softprob", "num_class": 3, "eval_metric": "auc"},
    {"objective": "binary:logistic", "tree_method": "approx", "eval_metric": "aucpr"},
])
def test_auc_metrics_pseudo_huber_and_approx_gather_no_rows_onto_every_shard(params):
    """Every round's AUC-type metrics, reg:pseudohubererror's initial score, every tree's
    global approx proposals and the binning sample reach each shard as their result
    (a value, the cuts, the edges): with them, training makes exactly as many
    ``allgather`` calls as a hist run with none of them, and none at all of rows; and it
    gives the single process's model and history."""
    X, y = _data(params["objective"], n=900)
    Xv, yv = _data(params["objective"], n=300, seed=1)
    plain = {"objective": "binary:logistic", "eval_metric": "logloss"}
    if "num_class" in params:
        plain = {"objective": "multi:softprob", "num_class": 3, "eval_metric": "mlogloss"}
    counts = {}
    for name, p in (("with", params), ("without", plain)):
        p = {**p, "max_depth": 3, "seed": 2}
        calls = [0, 0, 0]
        parts, vparts = _split(len(y), 3, "random"), _split(len(yv), 3, "random", seed=1)

        def shard(reducer, s, p=p, calls=calls):
            d = bw.Dataset(X[parts[s]], y[parts[s]], row_ids=parts[s])
            dv = bw.Dataset(Xv[vparts[s]], yv[vparts[s]], row_ids=vparts[s], reference=d)
            res = {}
            b = bw.train(p, d, 6, evals=[(dv, "v")], verbose_eval=False, evals_result=res,
                         reducer=_CountingReducer(reducer, calls))
            return _json(b), res

        out = SimulatedShards(3, seed=1).run(shard)
        counts[name] = calls
        if name == "with":
            assert all(o == out[0] for o in out)
            assert out[0] == _single_plain(p, 6, X, y, Xv, yv)
    assert counts["with"] == counts["without"] == [0, 0, 0]


class _CombineSizes:
    """A shard's reducer that records, per ``combine`` call, the values the shard sent
    (the largest number over its features)."""

    def __init__(self, reducer, sizes):
        self._r, self._sizes = reducer, sizes
        self.n_shards, self.shard = reducer.n_shards, reducer.shard

    def __getattr__(self, name):
        return getattr(self._r, name)

    def combine(self, obj, fn):
        if isinstance(obj, list) and obj and isinstance(obj[0], tuple):  # approx's parts
            self._sizes[self.shard].append(max(len(values) for values, _ in obj))
        return self._r.combine(obj, fn)


def test_sampled_approx_proposals_send_the_sampled_rows_values_only():
    """With ``sketch_sample_cnt``, a shard sends the proposals the distinct values of its
    sampled rows (and its largest value) only, where every distinct value went before;
    the model is the single process's, which differs from the unsampled one; a count of
    every row or more is no sample (the unsampled trees)."""
    X, y = _data("binary", n=4000)
    X[:, :2] = np.round(X[:, :2], 6)  # (continuous: a distinct value a row)
    base = {"objective": "binary:logistic", "tree_method": "approx", "max_depth": 3,
            "seed": 4, "eta": 0.3}
    parts = _split(len(y), 2, "random", seed=3)
    sizes = {}
    for count in (0, 400):
        p = {**base, "sketch_sample_cnt": count}
        sent = sizes[count] = [[], []]

        def shard(reducer, s, p=p, sent=sent):
            d = bw.Dataset(X[parts[s]], y[parts[s]], row_ids=parts[s])
            return _json(bw.train(p, d, 4, verbose_eval=False,
                                  reducer=_CombineSizes(reducer, sent)))

        out = SimulatedShards(2, seed=2).run(shard)
        assert out[0] == out[1] == _json(bw.train(p, bw.Dataset(X, y), 4))
    for s in (0, 1):
        assert len(sizes[0][s]) == len(sizes[400][s]) == 4  # one combine a tree
        assert min(sizes[0][s]) > 1500  # every distinct value of the shard's ~2,000 rows
        assert max(sizes[400][s]) < 300  # ~200 sampled rows, and the largest value
    trees = {c: bw.train({**base, "sketch_sample_cnt": c}, bw.Dataset(X, y), 4).dump_model()
             for c in (0, 400, 4000, 10**9)}
    assert trees[400] != trees[0] and trees[4000] == trees[10**9] == trees[0]


def _single_plain(params, rounds, X, y, Xv, yv):
    res = {}
    b = bw.train(params, bw.Dataset(X, y), rounds, evals=[(bw.Dataset(Xv, yv), "v")],
                 verbose_eval=False, evals_result=res)
    return _json(b), res


def test_early_stopping_happens_identically_on_shards():
    """A validation set the model overfits: early stopping stops at the same round."""
    params = {"objective": "binary:logistic", "max_depth": 6, "eta": 1.0, "seed": 1}
    X, y = _data("binary", n=1200)
    Xv, yv = _data("binary", n=400, seed=3)
    yv = np.where(np.random.default_rng(0).random(yv.size) < 0.3, 1 - yv, yv)  # noisy
    model, log = _sharded(params, 60, X, y, Xv, yv, 3, "skewed")
    single_model, single_log = _single(params, 60, X, y, Xv, yv)
    assert len(log["valid"]["logloss"]) < 60  # it did stop early
    assert model == single_model and log == single_log


def test_unsupported_settings_are_refused_on_shards():
    X, y = _data("binary", n=300)
    parts = _split(300, 2, "random")
    for params in ({"tree_method": "exact"}, {"objective": "reg:absoluteerror"},
                   {"boosting": "gradient"}):
        def shard(reducer, s, params=params):
            d = bw.Dataset(X[parts[s]], y[parts[s]], row_ids=parts[s])
            return bw.train(params, d, 2, verbose_eval=False, reducer=reducer)
        with pytest.raises(ValueError, match="shards"):
            SimulatedShards(2).run(shard)


def test_collectives_of_the_simulated_reducer():
    def shard(reducer, s):
        a = np.array([s + 1, 10 * s], dtype=np.int64)
        reducer.allreduce_sum(a)
        m = np.array([float(s), -float(s)])
        reducer.allreduce_max(m)
        hist = np.full((3, 2), s, dtype=np.int64)
        reducer.allreduce_histograms(hist, np.array([2]))
        return a.tolist(), m.tolist(), hist.tolist(), reducer.allgather(s)

    out = SimulatedShards(3).run(shard)
    for s, (a, m, hist, gathered) in enumerate(out):
        assert a == [6, 30] and m == [2.0, 0.0] and gathered == [0, 1, 2]
        assert hist == [[s, s], [s, s], [3, 3]]  # only slot 2 is summed: 0 + 1 + 2
    lr = LocalReducer()
    assert lr.allgather("x") == ["x"] and lr.n_shards == 1


def test_exact_sums_are_order_free_and_correctly_rounded():
    import math
    r = np.random.default_rng(0)
    v = np.exp(25 * r.normal(size=20_000)) * np.sign(r.normal(size=20_000))
    v[:3] = [1e308, -1e308, 5e-324]
    expect = math.fsum(v)
    assert exact_sums(v)[0] == expect
    assert exact_sums(r.permutation(v))[0] == expect

    def shard(reducer, s):
        return exact_sums(v[s::3], reducer)[0]

    assert SimulatedShards(3).run(shard) == [expect] * 3


@pytest.mark.parametrize("bad", [[], [np.nan], [np.inf], [-np.inf], [np.inf, -np.inf, np.nan]])
def test_exact_sums_of_finite_leave_out_and_flag_the_rest(bad):
    """One pass: the finite entries summed exactly (math.fsum of them), each kind of
    non-finite entry flagged, on one shard and across three; exact_sums refuses them."""
    import math
    from boostwood._comm import exact_sums_of_finite
    r = np.random.default_rng(1)
    v = np.exp(10 * r.normal(size=(150_000, 2))) * np.sign(r.normal(size=(150_000, 2)))
    where = r.choice(v.size, size=len(bad), replace=False)
    v.flat[where] = bad
    expect = [math.fsum(c[np.isfinite(c)]) for c in v.T]
    flags = [float(any(x != x for x in bad)), float(np.inf in bad), float(-np.inf in bad)]
    totals, got = exact_sums_of_finite(v)
    assert totals.tolist() == expect and got.tolist() == flags
    runs = SimulatedShards(3).run(lambda red, s: exact_sums_of_finite(
        np.ascontiguousarray(v[s::3]), red))
    assert all(t.tolist() == expect and f.tolist() == flags for t, f in runs)
    if bad:
        with pytest.raises(ValueError, match="NaN or infinite"):
            exact_sums(v)


def test_a_nan_on_one_shard_fails_every_shard_after_the_collectives():
    """Every shard takes part in both collectives, then each refuses the sum."""
    raised = []

    def shard(reducer, s):
        v = np.ones((50, 1))
        if s == 2:
            v[7] = np.nan
        try:
            exact_sums(v, reducer)
        except ValueError as e:
            raised.append((s, str(e)))
        return s

    assert SimulatedShards(3, timeout=60).run(shard) == [0, 1, 2]
    assert sorted(raised) == [(s, "cannot sum NaN or infinite values exactly")
                              for s in range(3)]


def test_a_failing_shard_fails_the_run_instead_of_hanging():
    def shard(reducer, s):
        if s == 1:
            raise KeyError("shard 1 broke")
        reducer.allreduce_sum(np.zeros(1, dtype=np.int64))
        return s

    with pytest.raises(KeyError, match="shard 1"):
        SimulatedShards(3, timeout=60).run(shard)


def test_row_ids_are_validated():
    X = np.zeros((3, 2))
    for ids in ([0, 1], [0, 0, 1], [-1, 0, 1], [0.5, 1, 2]):
        with pytest.raises(ValueError, match="row_ids"):
            bw.Dataset(X, row_ids=np.array(ids))
    assert bw.Dataset(np.zeros((0, 2)), label=np.zeros(0), row_ids=np.zeros(0, int)).num_row() == 0


def test_sharded_histogram_trees_grow_in_the_compiled_loop(monkeypatch):
    """With several shards the compiled expansion loop grows the histogram trees: it stops
    for the reducer after each batch's histograms are built (NEED_REDUCE) and goes on
    where it stopped; the Python expansion step never runs, and the model is the single
    process's, byte for byte."""
    import boostwood.tree.grower as grower_module
    from boostwood._kernels.expand import NEED_REDUCE

    def python_step(*args):
        raise AssertionError("the Python expansion loop ran")

    params = {**CASES["hist-lossguide"], "seed": 5, "bin_construct_sample_cnt": 1500}
    X, y = _data(params["objective"])
    Xv, yv = _data(params["objective"], n=800, seed=1)
    expected = _single(params, 6, X, y, Xv, yv)
    statuses = record_loop_statuses(monkeypatch)
    monkeypatch.setattr(grower_module.TreeGrower, "_expand", python_step)
    got = _sharded(params, 6, X, y, Xv, yv, 3, "skewed")
    assert got == expected
    # each of 3 shards, 6 trees of up to 11 batches: every batch stopped for the reducer
    assert statuses.count(NEED_REDUCE) >= 3 * 6 * 5


def test_sharded_leafwise_batches_split_ahead_to_meet_less_often(monkeypatch):
    """On shards a leaf-wise batch splits the best leaf and the next ones ahead of their
    turn (``shard_ahead_width``, any size, any threads): their histograms meet in one
    collective, so a 63-leaf tree stops for the reducer about half as often as one leaf
    at a time does (once per split; more rarely on bigger trees: 56 against 255 times at
    255 leaves of 100k rows), and the model is the single process's, byte for byte,
    either way."""
    import boostwood.tree.grower as grower_module
    from boostwood._kernels.expand import NEED_REDUCE
    params = {"objective": "binary:logistic", "grow_policy": "lossguide", "max_leaves": 63,
              "max_depth": 0, "min_data_in_leaf": 5, "seed": 5,
              "bin_construct_sample_cnt": 1500}
    X, y = _data(params["objective"])
    Xv, yv = _data(params["objective"], n=800, seed=1)
    expected = _single(params, 4, X, y, Xv, yv)
    statuses = record_loop_statuses(monkeypatch)
    stops = {}
    for width in (1, 8):
        monkeypatch.setattr(grower_module.TreeGrower, "shard_ahead_width", width)
        statuses.clear()
        assert _sharded(params, 4, X, y, Xv, yv, 2, "random") == expected, width
        stops[width] = statuses.count(NEED_REDUCE)
    assert stops[1] >= 2 * 4 * 50, stops  # one per split: 2 shards, 4 trees, 50+ splits
    assert stops[8] <= 0.6 * stops[1], stops


def test_shards_that_all_reduce_different_slots_stop_with_an_error():
    """The simulated reducer is a divergence detector: shards that hand it different
    numbers of histogram slots at one collective get an error, never a partial sum."""
    hists = [np.zeros((4, 2, 3, 3), dtype=np.int64) for _ in range(2)]

    def shard(reducer, s):
        reducer.allreduce_histograms(hists[s], [1] if s == 0 else [1, 2])

    with pytest.raises(ValueError, match="different numbers of histogram slots"):
        SimulatedShards(2).run(shard)
