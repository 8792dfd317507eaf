"""A feature's histogram is its used cells (its value bins and its missing bin): the build
writes those and nothing above them, and nothing that reads a histogram looks above them."""
import json

import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.histogram import build_histograms, partials_bound, used_cells
from boostwood._kernels.reference import histogram_naive
from boostwood.tree.histogram import HistogramBuilder

JUNK = -(2 ** 41) + 17


def _rows(kind, n, seed):
    r = np.random.default_rng(seed)
    if kind == "int16 quantized":
        gh = np.column_stack([r.integers(-128, 129, n), r.integers(0, 256, n)])
        return gh.astype(np.int16)
    gh = np.column_stack([r.integers(-2 ** 30, 2 ** 30, n), r.integers(0, 2 ** 30, n)])
    return gh.astype(np.int32 if kind == "int32" else np.int64)


def _binned(n, n_bins, seed):
    """Rows whose feature f takes bins 0..n_bins[f] (n_bins[f] is its missing bin)."""
    r = np.random.default_rng(seed)
    X = np.column_stack([r.integers(0, nb + 1, n) for nb in n_bins])
    return X.astype(np.uint8)


def test_used_cells_are_the_value_bins_and_the_missing_bin():
    n_bins = np.array([0, 1, 2, 254, 255, 300], dtype=np.int32)
    assert [used_cells(n_bins, f, 257) for f in range(6)] == [1, 2, 3, 255, 256, 257]


@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized", "int64"])
@pytest.mark.parametrize("counts,n_threads,subset", [
    ([60], 1, False),  # one small node: the calling thread's direct loop
    ([3000], 2, False),  # packed blocks (int32, int16), two runs and a partial buffer
    ([700, 9000, 1], 3, True),  # direct and packed blocks, runs cut inside a node
    ([4000], 16, False),  # runs of feature ranges
    ([20000], 2, True),  # two blocks per run
])
def test_build_writes_the_used_cells_only(rows_kind, counts, n_threads, subset):
    """Over slots and partial buffers full of junk, every path of the build (direct,
    packed two-lane, one-lane, runs with partial buffers, the serial small node) gives
    the naive sums on each feature's used cells and leaves every cell above them, and
    every feature not asked for, as it was."""
    n_bins = np.array([1, 2, 255, 7, 1, 40, 0, 128], dtype=np.int32)
    F, width = n_bins.size, 257
    counts = np.array(counts, dtype=np.int64)
    n = int(counts.sum()) + 500
    X = _binned(n, n_bins, seed=n)
    gh = _rows(rows_kind, n, seed=n + 1)
    idx = np.random.default_rng(3).permutation(n).astype(np.int32)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    feats = np.array([0, 2, 3, 6, 7] if subset else range(F), dtype=np.int64)
    hist = np.full((counts.size + 1, F, width, 3), JUNK, dtype=np.int64)
    partial = np.full((partials_bound(int(counts.sum()), n_threads), F, width, 3), JUNK,
                      dtype=np.int64)
    slots = np.arange(1, counts.size + 1, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(counts.size, np.int64), starts, counts,
                     slots, feats, n_bins, 16384, n_threads, hist, partial)
    g, h = gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64)
    for k in range(counts.size):
        naive = histogram_naive(X, g, h, idx[starts[k]:starts[k] + counts[k]], width)
        for f in range(F):
            used = n_bins[f] + 1
            if f in feats:
                np.testing.assert_array_equal(hist[slots[k], f, :used], naive[f, :used])
            else:
                assert np.all(hist[slots[k], f, :used] == JUNK)
            assert np.all(hist[slots[k], f, used:] == JUNK), (k, f)
    assert np.all(hist[0] == JUNK)


def test_builder_defaults_to_every_cell_and_checks_n_bins():
    X = np.zeros((10, 3), np.uint8)
    assert list(HistogramBuilder(X, 9).n_bins) == [8, 8, 8]
    with pytest.raises(ValueError, match="int32 array of one entry per feature"):
        HistogramBuilder(X, 9, n_bins=np.array([8, 8], np.int32))
    with pytest.raises(ValueError, match="int32"):
        HistogramBuilder(X, 9, n_bins=np.array([8, 8, 8]))


def _junk_pools(monkeypatch):
    """Every histogram slot and partial buffer the builder allocates starts as junk."""
    init, reserve = HistogramBuilder.__init__, HistogramBuilder.reserve_partials
    grow = HistogramBuilder.ensure_free

    def junk_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.hist[:] = JUNK

    def junk_reserve(self, n_buffers):
        reserve(self, n_buffers)
        self.partial[:] = JUNK

    def junk_grow(self, n_free):
        n_old = self.hist.shape[0]
        grow(self, n_free)
        self.hist[n_old:] = JUNK

    monkeypatch.setattr(HistogramBuilder, "__init__", junk_init)
    monkeypatch.setattr(HistogramBuilder, "reserve_partials", junk_reserve)
    monkeypatch.setattr(HistogramBuilder, "ensure_free", junk_grow)


@pytest.mark.parametrize("params", [
    dict(tree_method="hist", grow_policy="lossguide", max_leaves=24, max_depth=0),
    dict(tree_method="hist", max_depth=5),
    dict(tree_method="hist", max_depth=4, use_quantized_grad=True),
    dict(tree_method="approx", max_depth=4, sketch_eps=0.05),  # bins change per tree
])
def test_models_do_not_read_cells_above_the_bins(params, monkeypatch):
    """Models grown with every histogram cell junk to begin with (so every cell above a
    feature's bins holds junk through the fit, the root totals' feature included) are the
    models grown on zeroed pools, byte for byte: on columns of 2 to 256 bins, with missing
    values, leaf-wise and depth-wise, and with the bins re-proposed per tree (approx)."""
    r = np.random.default_rng(4)
    n = 4000
    X = np.column_stack([r.integers(0, 2, n), r.integers(0, 5, n), r.normal(size=n),
                         r.integers(0, 30, n), r.normal(size=n)]).astype(float)
    X[r.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 2]) + X[:, 0] + 0.3 * np.nan_to_num(X[:, 3]) % 2
         + r.logistic(size=n) > 1).astype(float)
    params = dict(params, objective="binary:logistic", learning_rate=0.3, seed=1)
    clean = _model(params, X, y)
    _junk_pools(monkeypatch)
    assert _model(params, X, y) == clean


def _model(params, X, y):
    booster = bw.train(params, bw.Dataset(X, y), 6, verbose_eval=False)
    return json.dumps(booster._to_dict(), sort_keys=True)
