"""Learning to rank, the kernels: LambdaMART's gradients against a naive twin of
LightGBM's, the tie rule against a brute-force average over every order of the tied rows,
permutation invariance to the bit, and the ranking metrics against scikit-learn,
LightGBM and XGBoost."""
import itertools
import math

import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels import rank as R
from boostwood.boosting.metrics import get_metric
from boostwood.data.queries import queries_from
from boostwood.data.rowinfo import RowInfo


def settings(k=30, pairs=R.PAIR_TOPK, exp_gain=True, sigma=1.0, norm=True, score_norm=True,
             ties=R.TIES_EXPECTED, metric=R.R_NDCG, seed=0, rnd=1):
    out = np.zeros(R.N_SETTINGS)
    out[R.S_METRIC], out[R.S_PAIR], out[R.S_K] = metric, pairs, k
    out[R.S_EXP_GAIN], out[R.S_SIGMA] = float(exp_gain), sigma
    out[R.S_NORM], out[R.S_SCORE_NORM], out[R.S_TIES] = float(norm), float(score_norm), ties
    out[R.S_SEED], out[R.S_ROUND] = seed, rnd
    return out


def kernel_query(s, y, st, table=np.zeros(0), key=7):
    """The kernel's float64 g and h of one query (before the float32 output)."""
    m = len(s)
    f = np.zeros((R.N_F, m))
    iw = np.zeros((R.N_I, m), dtype=np.int64)
    f[R.F_S], f[R.F_Y] = s, y
    R._query_lambdas(key, table, st, np.zeros(0), np.zeros(0), f, iw, m, False, -1.0)
    return f[R.F_G].copy(), f[R.F_H].copy()


def naive_lightgbm(s, y, k, sigma=1.0, norm=True, gain=lambda v: 2.0 ** v - 1.0):
    """A transcription of LightGBM's LambdarankNDCG::GetGradientsForOneQuery in plain
    Python: a stable sort by score (ties in input order), pairs whose upper position is
    below the truncation level k, IDCG@k, lambdarank_norm's two normalisations, and the
    exact sigmoid (LightGBM reads a lookup table)."""
    m = len(s)
    order = sorted(range(m), key=lambda i: -s[i])
    ideal = sorted(y, reverse=True)[:k]
    idcg = sum(gain(v) / math.log2(p + 2) for p, v in enumerate(ideal))
    g, h = [0.0] * m, [0.0] * m
    if idcg <= 0:
        return np.array(g), np.array(h)
    best, worst = s[order[0]], s[order[-1]]
    total = 0.0
    for i in range(min(m - 1, k)):
        for j in range(i + 1, m):
            a, b = order[i], order[j]
            if y[a] == y[b]:
                continue
            hi, lo, ph, pl = (a, b, i, j) if y[a] > y[b] else (b, a, j, i)
            ds = s[hi] - s[lo]
            dz = abs(gain(y[hi]) - gain(y[lo])) * abs(1 / math.log2(ph + 2)
                                                       - 1 / math.log2(pl + 2)) / idcg
            if norm and best != worst:
                dz /= 0.01 + abs(ds)
            rho = 1.0 / (1.0 + math.exp(min(sigma * ds, 700.0)))  # (clamped: no overflow)
            lam = sigma * dz * rho
            hes = sigma * sigma * dz * rho * (1 - rho)
            g[hi] -= lam
            g[lo] += lam
            h[hi] += hes
            h[lo] += hes
            total += 2 * lam
    if norm and total > 0:
        scale = math.log2(1 + total) / total
        g, h = [v * scale for v in g], [v * scale for v in h]
    return np.array(g), np.array(h)


def random_query(r, m, n_labels=5, tie_levels=4):
    """Scores with forced ties (a few distinct values) and labels 0..n_labels-1."""
    s = r.integers(0, tie_levels, size=m).astype(float) * 0.37 + r.normal(size=m) * \
        (r.random(m) < 0.3)
    return s, r.integers(0, n_labels, size=m).astype(float)


@pytest.mark.parametrize("k", [1, 3, 30])
@pytest.mark.parametrize("norm", [True, False])
@pytest.mark.parametrize("spread", [1.0, 400.0])
def test_input_order_gradients_are_lightgbms(k, norm, spread):
    """Scores of a small spread take the kernel's fast NDCG path (one exp per row, not
    per pair); a spread beyond 600 / sigma, the general path (an exp per pair)."""
    r = np.random.default_rng(k + 10 * norm)
    for _ in range(60):
        s, y = random_query(r, int(r.integers(1, 40)))
        s = s * spread
        st = settings(k=k, norm=norm, score_norm=norm, ties=R.TIES_INPUT, sigma=1.3)
        g, h = kernel_query(s, y, st)
        eg, eh = naive_lightgbm(s, y, k, sigma=1.3, norm=norm)
        np.testing.assert_allclose(g, eg, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, eh, rtol=1e-12, atol=1e-15)


def _tie_orders(s):
    """Every reordering of the rows that permutes rows of equal scores only."""
    blocks = [np.flatnonzero(s == v) for v in np.unique(s)]
    for perms in itertools.product(*(itertools.permutations(b) for b in blocks)):
        order = np.arange(len(s))
        for b, p in zip(blocks, perms):
            order[b] = p
        yield order


@pytest.mark.parametrize("score_norm", [True, False])
def test_expected_ties_are_the_mean_over_every_order_of_the_tied_rows(score_norm):
    """Without the query normalisation (not linear) and with every pair counted, the
    tie-aware gradients are the input-order gradients averaged over every order of the
    tied rows, and so is each metric."""
    r = np.random.default_rng(3)
    for _ in range(25):
        m = int(r.integers(2, 8))
        s = r.integers(0, 3, size=m).astype(float)
        y = r.integers(0, 3, size=m).astype(float)
        st_e = settings(k=m, norm=False, score_norm=score_norm)
        st_i = settings(k=m, norm=False, score_norm=score_norm, ties=R.TIES_INPUT)
        g, h = kernel_query(s, y, st_e)
        gs, hs, metrics = [], [], []
        for order in _tie_orders(s):
            gi, hi = kernel_query(s[order], y[order], st_i)
            back = np.empty(m)
            back[order] = gi
            gs.append(back.copy())
            back[order] = hi
            hs.append(back.copy())
            metrics.append([_metric(s[order], y[order], kind, k, R.TIES_INPUT)
                            for kind in (R.M_NDCG, R.M_MAP, R.M_MRR) for k in (0, 2)])
        np.testing.assert_allclose(g, np.mean(gs, axis=0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, np.mean(hs, axis=0), rtol=1e-12, atol=1e-15)
        expect = np.mean(metrics, axis=0)
        got = [_metric(s, y, kind, k, R.TIES_EXPECTED)
               for kind in (R.M_NDCG, R.M_MAP, R.M_MRR) for k in (0, 2)]
        np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-15)


def _metric(s, y, kind, k, ties):
    v, d = np.zeros(1), np.zeros(1, dtype=bool)
    R.query_metric(np.asarray(s, float), np.asarray(y, float), np.array([0, len(s)]),
                   np.arange(len(s)), kind, k, True, np.zeros(0), ties, v, d)
    return v[0] if d[0] else np.nan


def _grad(raw, y, ptr, order, st, keys=None, ranked=None, inv_idcg=None):
    gh = np.zeros((1, len(y), 2), dtype=np.float32)
    e = np.zeros(0)
    keys = np.arange(len(ptr) - 1) if keys is None else keys
    ranked = np.zeros(0, np.int64) if ranked is None else ranked
    inv_idcg = e if inv_idcg is None else inv_idcg
    R.lambdarank_grad(raw[:, None], y, np.ones(1), e, keys, ptr, order, e, inv_idcg, st,
                      (np.zeros(0, np.int64), e, e, np.zeros((2, 0))), ranked, gh)
    return gh[0]


@pytest.mark.parametrize("ties", [R.TIES_EXPECTED, R.TIES_INPUT])
def test_the_last_ranking_kept_between_rounds_changes_nothing(ties):
    """The sort of each query starts from the last round's ranking (kept by the
    objective): whatever permutation it starts from, the gradients are the same bits,
    and it is left holding this round's ranking."""
    r = np.random.default_rng(3)
    sizes = r.integers(1, 90, 40)  # short queries (insertion sort) and long ones
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    parts = [random_query(r, int(m)) for m in sizes]
    raw, y = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    order = np.arange(len(y), dtype=np.int64)
    st = settings(ties=ties)
    cold = _grad(raw, y, ptr, order, st)
    start = np.concatenate([r.permutation(int(m)) for m in sizes]).astype(np.int64)
    warm = start.copy()
    assert np.array_equal(_grad(raw, y, ptr, order, st, ranked=warm), cold)
    again = warm.copy()
    assert np.array_equal(_grad(raw, y, ptr, order, st, ranked=again), cold)
    assert np.array_equal(again, warm)  # already sorted: it stays
    for q in range(len(sizes)):
        if sizes[q] <= R.SMALL_QUERY:  # the ranking it holds is by score, then label
            s, lab = raw[ptr[q]:ptr[q + 1]], y[ptr[q]:ptr[q + 1]]
            ranked = warm[ptr[q]:ptr[q + 1]]
            assert np.all(np.diff(s[ranked]) <= 0)


@pytest.mark.parametrize("pairs,k", [(R.PAIR_TOPK, 5), (R.PAIR_TOPK, 30), (R.PAIR_MEAN, 3)])
def test_idcg_computed_once_gives_the_same_bits(pairs, k):
    """LambdaMART computes each query's 1 / IDCG once (query_inverse_idcg) instead of every
    round: the values are 1 / ideal_dcg at the pairs' cut (all rows for sampled pairs),
    0 for a query without a relevant row, and the gradients are the same bits as with
    the IDCG computed in the kernel. Queries are scattered (order is a permutation)."""
    r = np.random.default_rng(11)
    sizes = r.integers(1, 90, 50)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(ptr[-1])
    y = r.integers(0, 4, n).astype(float)
    order = r.permutation(n).astype(np.int64)
    y[order[ptr[3]:ptr[4]]] = 0.0  # a query without a relevant row
    raw = np.round(r.normal(size=n), 1)
    cut = k if pairs == R.PAIR_TOPK else 0
    inv = np.empty(len(sizes))
    R.query_inverse_idcg(y, ptr, order, np.zeros(0), cut, True, inv)
    for q in range(len(sizes)):
        ys = y[order[ptr[q]:ptr[q + 1]]]
        top = np.sort(ys)[::-1][:cut or None]
        idcg = np.sum((2.0 ** top - 1) / np.log2(np.arange(len(top)) + 2.0))
        assert inv[q] == pytest.approx(1.0 / idcg if idcg > 0 else 0.0, rel=1e-12)
    assert inv[3] == 0.0
    st = settings(k=k, pairs=pairs)
    assert np.array_equal(_grad(raw, y, ptr, order, st, inv_idcg=inv),
                          _grad(raw, y, ptr, order, st))


@pytest.mark.parametrize("pairs", [R.PAIR_TOPK, R.PAIR_MEAN])
@pytest.mark.parametrize("metric", [R.R_NDCG, R.R_MAP, R.R_PAIRWISE])
def test_permuting_a_querys_rows_changes_no_gradient_bit(pairs, metric):
    """The headline property: under the expected tie rule, every row keeps its g and h
    to the last bit when the rows of its query come in another order (sampled pairs
    too: the draws are keyed by the query and the rank, not the row); the input-order
    rule (LightGBM's and XGBoost's) changes them."""
    r = np.random.default_rng(pairs * 3 + metric)
    sizes = r.integers(1, 60, size=40)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    n = ptr[-1]
    raw = np.round(r.normal(size=n), 1)  # many ties
    y = r.integers(0, 4, size=n).astype(float)
    perm = np.concatenate([ptr[q] + r.permutation(sizes[q]) for q in range(len(sizes))])
    for ties, same in ((R.TIES_EXPECTED, True), (R.TIES_INPUT, False)):
        st = settings(k=5, pairs=pairs, metric=metric, ties=ties)
        if pairs == R.PAIR_MEAN:
            st[R.S_K] = 3
        a = _grad(raw, y, ptr, np.arange(n), st)
        b = _grad(raw[perm], y[perm], ptr, np.arange(n), st)
        back = np.empty_like(b)
        back[perm] = b
        assert np.array_equal(a, back) == same
    for kind in (R.M_NDCG, R.M_MAP, R.M_MRR):
        values = []
        for p in (np.arange(n), perm):
            v, d = np.zeros(len(sizes)), np.zeros(len(sizes), dtype=bool)
            R.query_metric(raw[p], y[p], ptr, np.arange(n), kind, 5, True, np.zeros(0),
                           R.TIES_EXPECTED, v, d)
            values.append(v)
        assert np.array_equal(values[0], values[1])


def test_without_ties_both_rules_agree_to_the_bit():
    r = np.random.default_rng(5)
    sizes = r.integers(2, 30, size=50)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    raw, y = r.normal(size=ptr[-1]), r.integers(0, 5, size=ptr[-1]).astype(float)
    for pairs in (R.PAIR_TOPK, R.PAIR_MEAN):
        a = _grad(raw, y, ptr, np.arange(ptr[-1]), settings(k=4, pairs=pairs))
        b = _grad(raw, y, ptr, np.arange(ptr[-1]), settings(k=4, pairs=pairs, ties=R.TIES_INPUT))
        assert np.array_equal(a, b)


def test_sampled_pairs_are_keyed_by_seed_round_and_query():
    r = np.random.default_rng(6)
    sizes = np.full(30, 20)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    raw, y = r.normal(size=600), r.integers(0, 3, size=600).astype(float)
    base = _grad(raw, y, ptr, np.arange(600), settings(k=2, pairs=R.PAIR_MEAN))
    again = _grad(raw, y, ptr, np.arange(600), settings(k=2, pairs=R.PAIR_MEAN))
    assert np.array_equal(base, again)
    for change in (dict(seed=1), dict(rnd=2)):
        other = _grad(raw, y, ptr, np.arange(600), settings(k=2, pairs=R.PAIR_MEAN, **change))
        assert not np.array_equal(base, other)
    keys = np.arange(30) + 1000
    assert not np.array_equal(base, _grad(raw, y, ptr, np.arange(600),
                                          settings(k=2, pairs=R.PAIR_MEAN), keys))


def test_queries_of_one_label_and_of_one_row_get_no_gradient():
    g, h = kernel_query(np.array([0.3, -1.0, 2.0]), np.array([2.0, 2.0, 2.0]), settings())
    assert not g.any() and not h.any()
    g, h = kernel_query(np.array([0.3]), np.array([4.0]), settings())
    assert not g.any() and not h.any()
    g, h = kernel_query(np.zeros(4), np.array([0.0, 0, 0, 0]), settings(metric=R.R_MAP))
    assert not g.any()


def test_gradients_push_relevant_rows_up_and_sum_to_zero():
    r = np.random.default_rng(8)
    s, y = r.normal(size=25), r.integers(0, 5, size=25).astype(float)
    for metric in (R.R_NDCG, R.R_MAP, R.R_PAIRWISE):
        g, h = kernel_query(s, y, settings(metric=metric))
        assert abs(g.sum()) < 1e-12 and np.all(h >= 0)
        top, bottom = np.argmax(y), np.argmin(y)
        assert g[top] <= 0 <= g[bottom]


def test_ndcg_is_scikit_learns_tie_averaged_ndcg():
    """Linear gain, ties averaged, queries without relevance 0: sklearn's ndcg_score."""
    metrics = pytest.importorskip("sklearn.metrics")
    r = np.random.default_rng(9)
    n_q, m = 60, 12
    y = r.integers(0, 4, size=(n_q, m)).astype(float)
    y[:3] = 0  # queries without a relevant row
    s = np.round(r.normal(size=(n_q, m)), 1)
    info = RowInfo.of(y.ravel(), queries=queries_from(n_q * m, group=np.full(n_q, m)))
    params = {"ndcg_exp_gain": False, "eval_empty_query": "zero"}
    for k in (1, 3, 5, None):
        name = "ndcg" if k is None else f"ndcg@{k}"
        ours = get_metric(name, params).evaluate(info, s.ravel())
        theirs = metrics.ndcg_score(y, s, k=k, ignore_ties=False)
        assert abs(ours - theirs) < 1e-12


def test_empty_queries_are_skipped_scored_one_or_zero():
    y = np.array([0.0, 0, 0, 1, 0, 2])
    s = np.array([0.5, 0.1, 0.3, 0.2, 0.9, 0.4])
    info = RowInfo.of(y, queries=queries_from(6, group=[3, 3]))
    one = get_metric("ndcg", {}).query_values(info, s)[0][1]
    assert get_metric("ndcg", {}).evaluate(info, s) == one
    assert get_metric("ndcg", {"eval_empty_query": "one"}).evaluate(info, s) == (one + 1) / 2
    assert get_metric("ndcg-", {}).evaluate(info, s) == one / 2
    assert get_metric("ndcg", {"eval_empty_query": "zero"}).evaluate(info, s) == one / 2


def _lambdarank_example():
    load = pytest.importorskip("sklearn.datasets").load_svmlight_file
    from conftest import shared_file
    base = "lightgbm_examples", "lambdarank"
    Xtr, ytr = load(str(shared_file(*base, "rank.train")))
    Xte, yte = load(str(shared_file(*base, "rank.test")), n_features=Xtr.shape[1])
    gtr = np.loadtxt(shared_file(*base, "rank.train.query"), dtype=np.int64)
    gte = np.loadtxt(shared_file(*base, "rank.test.query"), dtype=np.int64)
    return Xtr.toarray(), ytr, gtr, Xte.toarray(), yte, gte


def test_metrics_in_input_order_are_lightgbms_and_xgboosts():
    """With LightGBM's and XGBoost's rules (ties in input order, a query without a
    relevant row scores 1, gain 2^y - 1), the metrics are theirs on their own
    predictions (which tie often, a few trees on a small data set)."""
    lgb = pytest.importorskip("lightgbm")
    xgb = pytest.importorskip("xgboost")
    Xtr, ytr, gtr, Xte, yte, gte = _lambdarank_example()
    rules = {"eval_ties": "input_order", "eval_empty_query": "one"}
    info = RowInfo.of(yte, queries=queries_from(len(yte), group=gte))
    rec = {}
    model = lgb.train({"objective": "lambdarank", "metric": ["ndcg", "map"],
                       "eval_at": [1, 3, 5, 10], "verbose": -1, "num_leaves": 7},
                      lgb.Dataset(Xtr, ytr, group=gtr), 5,
                      valid_sets=[lgb.Dataset(Xte, yte, group=gte)],
                      callbacks=[lgb.record_evaluation(rec)])
    pred = model.predict(Xte)
    for k in (1, 3, 5, 10):
        for name in ("ndcg", "map"):
            ours = get_metric(f"{name}@{k}", rules).evaluate(info, pred)
            assert abs(ours - rec["valid_0"][f"{name}@{k}"][-1]) < 1e-7, (name, k)
    qid = np.repeat(np.arange(len(gte)), gte)
    binary = (yte > 0).astype(float)  # (XGBoost's MAP reads binary labels)
    for labels, names in ((yte, ["ndcg@1", "ndcg@5", "ndcg@10", "ndcg"]),
                          (binary, ["map@3", "map@10"])):
        dtr = xgb.DMatrix(Xtr, ytr if labels is yte else (ytr > 0).astype(float),
                          qid=np.repeat(np.arange(len(gtr)), gtr))
        dte = xgb.DMatrix(Xte, labels, qid=qid)
        log = {}
        booster = xgb.train({"objective": "rank:ndcg", "eval_metric": names, "max_depth": 3},
                            dtr, 5, evals=[(dte, "test")], evals_result=log, verbose_eval=False)
        pred = booster.predict(dte)
        info = RowInfo.of(labels, queries=queries_from(len(labels), group=gte))
        for name in names:
            ours = get_metric(name, rules).evaluate(info, pred.astype(np.float64))
            assert abs(ours - log["test"][name][-1]) < 1e-6, name


def test_a_long_query_large_labels_and_real_relevance_train():
    """No cap on a query's rows (LightGBM refuses 10,000), labels up to 52 with the
    exponential gain (LightGBM's default table stops at 30), real-valued relevance with
    the linear gain; real values with the exponential gain are a clear error."""
    r = np.random.default_rng(10)
    n = 20_000
    X = r.normal(size=(n, 4))
    y = np.clip(np.round(X[:, 0] * 10 + 20), 0, 40)
    b = bw.train({"objective": "rank:ndcg", "verbosity": 0}, bw.Dataset(X, y, group=[n]), 3)
    assert y[np.argsort(-b.predict(X))[:10]].min() >= 38  # (the labels' mean is 20)
    soft = 1 / (1 + np.exp(-X[:, 0]))
    d = bw.Dataset(X, soft, group=[n // 2, n // 2])
    b = bw.train({"objective": "rank:ndcg", "ndcg_exp_gain": False, "verbosity": 0}, d, 3)
    assert np.corrcoef(b.predict(X), soft)[0, 1] > 0.5
    with pytest.raises(ValueError, match="ndcg_exp_gain=False"):
        bw.train({"objective": "rank:ndcg"}, d, 1)
    with pytest.raises(ValueError, match="label_gain has 3 entries"):
        bw.train({"objective": "lambdarank", "label_gain": [0, 1, 3]},
                 bw.Dataset(X, y, group=[n]), 1)
