"""Weighted quantile sketch: the eps-approximation guarantee against exact weighted ranks."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostwood.data.sketch import Summary, WeightedQuantileSketch


def true_rank_interval(x, w, value):
    """(r^-, r^+): total weight of points < value and <= value."""
    return w[x < value].sum(), w[x <= value].sum()


def assert_answers_within(summary, x, w, eps):
    W = w.sum()
    assert summary.total == pytest.approx(W, rel=1e-12)
    ranks = np.concatenate([np.linspace(0, W, 101), np.random.default_rng(0).uniform(0, W, 50)])
    for d, value in zip(ranks, summary.query(ranks)):
        lo, hi = true_rank_interval(x, w, value)
        # the answer's rank interval comes within eps W of the asked rank
        assert lo <= d + eps * W * (1 + 1e-9) and hi >= d - eps * W * (1 + 1e-9), (d, value, lo, hi)


def _points(draw_seed, n, kind):
    r = np.random.default_rng(draw_seed)
    if kind == "continuous":
        x, w = r.normal(size=n), r.uniform(0.1, 2.0, n)
    elif kind == "ties":
        x, w = r.integers(0, 7, n).astype(float), r.uniform(0.0, 1.0, n)
    else:  # a few huge weights among many small ones
        x, w = r.exponential(size=n), np.full(n, 1e-3)
        w[r.choice(n, min(3, n), replace=False)] = 1e3
    return x, w


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 30000), st.sampled_from(["continuous", "ties", "heavy"]),
       st.sampled_from([0.01, 0.03, 0.1]))
def test_streamed_sketch_is_eps_approximate(seed, n, kind, eps):
    x, w = _points(seed, n, kind)
    sk = WeightedQuantileSketch(eps=eps)
    for s in range(0, n, 997):  # pushes of uneven sizes
        sk.push(x[s:s + 997], w[s:s + 997])
    summary = sk.summary()
    assert summary.eps() <= eps + 1e-12
    assert len(summary) <= len(np.unique(x))
    assert_answers_within(summary, x, w, eps)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 60), st.sampled_from([0.02, 0.05]))
def test_merge_of_many_small_sketches(seed, n_parts, eps):
    r = np.random.default_rng(seed)
    parts = [(r.gamma(2.0, size=r.integers(1, 2000)), None) for _ in range(n_parts)]
    parts = [(x, r.uniform(0.5, 3.0, x.size)) for x, _ in parts]
    total = WeightedQuantileSketch(eps=eps)
    for x, w in parts:
        total.merge(WeightedQuantileSketch(eps=eps).push(x, w))
    x = np.concatenate([p[0] for p in parts])
    w = np.concatenate([p[1] for p in parts])
    summary = total.summary()
    assert summary.eps() <= eps + 1e-12
    assert_answers_within(summary, x, w, eps)


def test_exact_summary_answers_exact_weighted_quantiles():
    x = np.array([3.0, 1.0, 2.0, 2.0, np.nan, 5.0])
    w = np.array([1.0, 1.0, 2.0, 1.0, 9.0, 0.0])  # NaN and zero weight are left out
    s = Summary.from_points(x, w)
    assert s.values.tolist() == [1.0, 2.0, 3.0] and s.total == 5.0 and s.eps() == 0.0
    assert s.rmin.tolist() == [0.0, 1.0, 4.0] and s.rmax.tolist() == [1.0, 4.0, 5.0]
    assert s.query([0.0, 0.4, 2.5, 4.6, 5.0]).tolist() == [1.0, 1.0, 2.0, 3.0, 3.0]


def test_prune_adds_at_most_one_over_b():
    x = np.random.default_rng(3).normal(size=5000)
    s = Summary.from_points(x)
    for b in (4, 16, 64):
        p = s.prune(b)
        assert len(p) <= b + 1 and p.eps() <= 1.0 / b + 1e-12
        assert p.values[0] == x.min() and p.values[-1] == x.max()


def test_bad_input():
    with pytest.raises(ValueError, match="eps"):
        WeightedQuantileSketch(eps=0.0)
    with pytest.raises(ValueError, match="non-negative"):
        Summary.from_points([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="shape"):
        WeightedQuantileSketch().push([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="empty"):
        Summary.empty().query(0.5)


@pytest.mark.parametrize("sparse", [False, True])
def test_weighted_bin_edges_equal_repeated_rows(sparse):
    """Binning with integer weights places the edges like that many copies of each row."""
    import scipy.sparse as sp

    import boostwood as bw
    r = np.random.default_rng(4)
    X = r.exponential(size=(3000, 3))
    X[r.random(X.shape) < 0.3] = 0.0
    X[r.random(X.shape) < 0.05] = np.nan
    w = r.integers(1, 6, 3000).astype(float)
    Xr = np.repeat(X, w.astype(int), axis=0)
    wrap = (lambda A: sp.csr_matrix(np.nan_to_num(A, nan=np.nan))) if sparse else (lambda A: A)
    weighted = bw.Dataset(wrap(X), np.zeros(3000), weight=w, max_bin=16).construct().bin_mapper
    repeated = bw.Dataset(wrap(Xr), np.zeros(len(Xr)), max_bin=16).construct().bin_mapper
    plain = bw.Dataset(wrap(X), np.zeros(3000), max_bin=16).construct().bin_mapper
    for f in range(3):
        np.testing.assert_array_equal(weighted.edges[f], repeated.edges[f])
    assert any(not np.array_equal(weighted.edges[f], plain.edges[f]) for f in range(3))


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(-30, 30), min_size=1, max_size=60, unique=True),
       extra=st.lists(st.integers(-40, 40), max_size=8), data=st.data())
def test_approx_bins_of_sorted_values_are_searchsorted(values, extra, data):
    """``tree_method="approx"`` bins each feature's distinct values (ascending) by cuts
    searched among the values, run by run: the same bins as searching every value among
    the cuts, for cuts on values, between them, beyond both ends, and the last cut the
    largest value (as the proposal sets it) or not."""
    from boostwood.tree.approx import _bins_of_sorted
    v = np.array(sorted(values), dtype=np.float64) / 4
    pool = np.unique(np.concatenate([v, np.array(extra, dtype=np.float64) / 4 + 0.125]))
    k = data.draw(st.integers(1, min(pool.size, 12)))
    cuts = np.sort(data.draw(st.permutations(pool.tolist()))[:k])
    if data.draw(st.booleans()):
        cuts[-1] = v[-1]
        cuts = np.unique(cuts)
    for dtype in (np.uint8, np.uint16):
        got = _bins_of_sorted(cuts, v, dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.searchsorted(cuts, v, side="left"))


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(-60, 60), min_size=1, max_size=80, unique=True),
       data=st.data())
def test_exact_cuts_are_the_exact_summarys_cuts(values, data):
    """The compiled cuts of ``tree_method="approx"`` are, to the bit, the cuts of
    ``Summary.from_value_weights`` (zero weights left out, every value of zero weight,
    ties of the query rule on integer weights, fewer values than ranks and more)."""
    from boostwood._kernels.fixed import exact_cuts
    v = np.array(sorted(values), dtype=np.float64) / 8
    w = np.array(data.draw(st.lists(st.integers(0, 50), min_size=v.size, max_size=v.size)),
                 dtype=np.int64)
    unit = data.draw(st.sampled_from([1.0, 0.37, 2.0 ** -20, 1e-3]))
    n = data.draw(st.integers(1, 40))
    summary = Summary.from_value_weights(v, w * unit)
    want = summary.cuts(n) if len(summary) else np.zeros(0)
    got = exact_cuts(v, w, unit, n)
    assert got.dtype == np.float64 and np.array_equal(got, want)


def test_sampled_approx_proposals_are_within_the_documented_rank_error():
    """``sketch_sample_cnt``: the proposals are the exact weighted quantiles of the rows
    drawn by row id (the last cut the largest value of all rows), and each one's rank
    in all rows is within the Dvoretzky-Kiefer-Wolfowitz bound the module documents
    (delta 0.001; equal hessians, so m_eff = m) of its rank in the sample."""
    from boostwood._kernels.random import STREAM_SKETCH_SAMPLE, row_uniforms
    from boostwood.data import Dataset
    from boostwood.tree.approx import GlobalProposal, _cuts

    r = np.random.default_rng(5)
    n, m = 60000, 6000
    X = np.column_stack([r.normal(size=n), r.exponential(size=n), r.integers(0, 50, n)])
    cols = Dataset(X, np.zeros(n)).sorted_columns()
    unit = 2.0 ** -20
    hess = np.full(n, 1 << 20, dtype=np.int64)
    prop = GlobalProposal(cols, 0.03, sample=(m, 9, None)).propose(hess, unit)
    u = np.empty(n)
    row_uniforms(9, STREAM_SKETCH_SAMPLE, 0, np.arange(n, dtype=np.int64), u)
    drawn = u < m / n
    assert abs(drawn.sum() - m) < 4 * np.sqrt(m)
    bound = np.sqrt(np.log(2 / 1e-3) / (2 * drawn.sum()))
    for f in range(X.shape[1]):
        values, counts = np.unique(X[drawn, f], return_counts=True)
        want = _cuts(values, counts.astype(np.int64) << 20, unit, prop.n_cand)
        want[-1] = X[:, f].max()
        np.testing.assert_array_equal(prop.cut_values[f], want)
        everywhere = np.searchsorted(np.sort(X[:, f]), want, side="right") / n
        in_sample = np.searchsorted(np.sort(X[drawn, f]), want, side="right") / drawn.sum()
        assert np.max(np.abs(everywhere - in_sample)) <= bound, f


def test_the_parts_shards_send_approx_give_the_cuts_of_every_value():
    """What a shard sends the global approx proposals (:func:`_weighed`: its values of
    nonzero weight and its largest value) gives the cuts of every shard's every value,
    also where a value's parts have either sign (hessians of a custom objective may) or
    every weight is zero."""
    from boostwood.tree.approx import _cuts, _merged, _weighed

    values = np.arange(1.0, 11.0)
    a, b = np.full(10, 4, np.int64), np.r_[np.full(5, -3), np.zeros(5)].astype(np.int64)
    every = _cuts(*_merged([(values, a), (values, b)]), 1.0, 4)
    assert every.tolist() == [6, 7, 9, 10]
    np.testing.assert_array_equal(
        _cuts(*_merged([_weighed(values, a), _weighed(values, b)]), 1.0, 4), every)
    r = np.random.default_rng(11)
    for trial in range(300):
        k = int(r.integers(1, 5))
        parts = []
        for _ in range(k):
            values = np.unique(r.integers(0, 40, int(r.integers(0, 30))).astype(np.float64))
            weight = r.integers(-3 if trial % 3 == 0 else 0, 6, values.size).astype(np.int64)
            weight[r.random(values.size) < 0.4] = 0
            parts.append((values, weight))
        if not any(p[0].size for p in parts):
            continue
        every = _merged(parts)
        if np.any(every[1] < 0):  # (a negative total: not a summary's weight)
            continue
        want = _cuts(*every, 0.5, 8)
        np.testing.assert_array_equal(_cuts(*_merged([_weighed(*p) for p in parts]), 0.5, 8),
                                      want)
