import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from boostwood._kernels.reference import bin_values_naive
from boostwood.data import binning as binning_mod
from boostwood.data.binning import BinMapper, edges_from_counts
from boostwood.data.validation import as_feature_matrix

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 60), st.integers(1, 4)), elements=floats),
       st.integers(2, 8))
def test_bin_dense_matches_naive(X, max_bin):
    mapper = BinMapper(max_bin=max_bin).fit(as_feature_matrix(X))
    binned = mapper.transform(as_feature_matrix(X))
    assert np.array_equal(binned, bin_values_naive(X, mapper.edges))
    assert np.all(mapper.n_bins <= max_bin)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(2, 80), elements=st.floats(-1e300, 1e300)),
       st.integers(2, 10))
def test_edges_separate_values_and_agree_with_raw_thresholds(col, max_bin):
    distinct, counts = np.unique(col, return_counts=True)
    edges = edges_from_counts(distinct, counts, max_bin)
    assert edges[-1] == np.inf and np.all(np.diff(edges) > 0)
    b = np.searchsorted(edges, col, side="left")
    # the documented equivalence: bin(x) <= k  <=>  x <= edges[k]
    for k in range(len(edges)):
        assert np.array_equal(b <= k, col <= edges[k])
    if distinct.size <= max_bin:  # every distinct value has its own bin
        assert len(np.unique(b)) == distinct.size


def test_infinities_and_nan_have_their_places():
    X = np.array([[-np.inf], [0.0], [1.0], [np.inf], [np.nan]])
    mapper = BinMapper().fit(as_feature_matrix(X))
    b = mapper.transform(as_feature_matrix(X))[:, 0]
    assert b[0] == 0 and b[3] == mapper.n_bins[0] - 1 and b[4] == mapper.missing_bins[0]
    assert len(set(b[:4])) == 4


def test_quantile_bins_are_balanced():
    x = np.random.default_rng(0).normal(size=(100000, 1))
    mapper = BinMapper(max_bin=16).fit(as_feature_matrix(x))
    counts = np.bincount(mapper.transform(as_feature_matrix(x))[:, 0])
    assert mapper.n_bins[0] == 16
    assert counts.min() > 0.8 * counts.max()


def test_sample_for_edges_is_seeded():
    x = np.random.default_rng(1).normal(size=(5000, 2))
    a = BinMapper(max_bin=10, sample_cnt=500, seed=3).fit(as_feature_matrix(x))
    b = BinMapper(max_bin=10, sample_cnt=500, seed=3).fit(as_feature_matrix(x))
    c = BinMapper(max_bin=10, sample_cnt=500, seed=4).fit(as_feature_matrix(x))
    assert all(np.array_equal(e, f) for e, f in zip(a.edges, b.edges))
    assert not all(np.array_equal(e, f) for e, f in zip(a.edges, c.edges))


def test_wide_bins_use_uint16():
    x = np.arange(1000, dtype=float)[:, None]
    m = BinMapper(max_bin=300).fit(as_feature_matrix(x))
    assert m.dtype == np.uint16 and m.n_bins[0] == 300
    assert BinMapper(max_bin=255).fit(as_feature_matrix(x)).dtype == np.uint8


def test_zero_weight_rows_do_not_move_edges():
    x = np.array([[0.0], [1.0], [2.0], [50.0]])
    w = np.array([1.0, 1.0, 1.0, 0.0])
    m = BinMapper().fit(as_feature_matrix(x), w)
    assert m.n_bins[0] == 3 and m.edges[0][1] == 1.5


def test_sparse_and_dense_bin_alike():
    import scipy.sparse as sp
    X = np.random.default_rng(2).normal(size=(300, 5))
    X[np.abs(X) < 0.8] = 0.0
    dense = BinMapper(max_bin=20).fit(as_feature_matrix(X))
    sparse = BinMapper(max_bin=20).fit(as_feature_matrix(sp.csr_matrix(X)))
    assert all(np.array_equal(e, f) for e, f in zip(dense.edges, sparse.edges))
    assert np.array_equal(dense.transform(as_feature_matrix(X)),
                          sparse.transform(as_feature_matrix(sp.csc_matrix(X))))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_padded_and_general_searches_bin_alike_at_every_edge(monkeypatch, dtype):
    """Features of 255, 256 (uint16 rows) and 2 bins through the padded edge table, and
    through the general search (more features than MAX_PADDED_FEATURES): both equal the
    naive binning on every edge, one ulp either side, +-inf and NaN; wider bins fall back."""
    r = np.random.default_rng(6)
    n = 4000
    X = np.column_stack([r.normal(size=n), r.integers(0, 256, n).astype(float),
                         r.integers(0, 2, n).astype(float), np.arange(n, dtype=float)])
    for max_bin, width in ((255, 3), (256, 3), (400, 4)):
        mapper = BinMapper(max_bin=max_bin).fit(as_feature_matrix(X[:, :width]))
        edges = np.concatenate(mapper.edges)
        finite = edges[np.isfinite(edges)]
        probe = np.concatenate([finite, np.nextafter(finite, np.inf),
                                np.nextafter(finite, -np.inf), [np.inf, -np.inf, np.nan, 0.0]])
        P = np.resize(r.permutation(probe), (probe.size, width))
        P = np.concatenate([P, X[:, :width]]).astype(dtype)
        expect = bin_values_naive(P.astype(np.float64), mapper.edges)
        padded = (mapper._padded_edges() is not None)
        assert padded == (max_bin <= 256)
        assert np.array_equal(mapper.transform(as_feature_matrix(P)), expect)
        monkeypatch.setattr(binning_mod, "MAX_PADDED_FEATURES", 0)
        assert mapper._padded_edges() is None
        assert np.array_equal(mapper.transform(as_feature_matrix(P)), expect)
        monkeypatch.undo()


@pytest.mark.parametrize("n", [1, 4095, 4096 * 3 + 17])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_feature_major_is_the_transpose(n, dtype):
    """Blocks of rows cut anywhere (a last partial block, fewer rows than a block), both
    bin widths, and a strided view of a wider matrix."""
    from boostwood._kernels.binning import feature_major
    r = np.random.default_rng(n)
    wide = r.integers(0, np.iinfo(dtype).max, size=(n, 9)).astype(dtype)
    for X in (wide, wide[:, ::2]):
        out = np.empty(X.shape[::-1], dtype=dtype)
        feature_major(X, out)
        np.testing.assert_array_equal(out, X.T)


@pytest.mark.parametrize("n", [0, 1, 4096 * 2 + 5])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_bins_of_codes_against_numpy(n, dtype):
    """Tables of different lengths one after another (one feature with no values but the
    missing code), each feature's codes through its own table, against NumPy's gather per
    feature."""
    from boostwood._kernels.binning import bins_of_codes
    r = np.random.default_rng(n)
    n_values = np.array([7, 0, 300, 1])
    tables = [r.integers(0, np.iinfo(dtype).max, size=k + 1).astype(dtype) for k in n_values]
    codes = np.stack([r.integers(0, k + 1, size=n) for k in n_values]).astype(np.uint32)
    starts = np.concatenate([[0], np.cumsum(n_values + 1)[:-1]]).astype(np.int64)
    X_columns = np.empty((4, n), dtype)
    bins_of_codes(codes, np.concatenate(tables), starts, X_columns)
    want = np.stack([tables[f][codes[f]] for f in range(4)]).reshape(4, n)
    np.testing.assert_array_equal(X_columns, want)


@pytest.mark.parametrize("n", [1, 4096 * 2 + 5])
def test_missing_features_flags_each_feature_with_a_missing_bin_row(n):
    """One row in the missing bin, in the last block, is enough; a feature whose rows all
    sit below its missing bin, or whose missing bin is a value no row has, is not flagged."""
    from boostwood._kernels.binning import missing_features
    r = np.random.default_rng(n)
    missing_bins = np.array([5, 5, 9, 200], dtype=np.int32)
    X = r.integers(0, 5, size=(n, 4)).astype(np.uint8)
    X[-1, 1] = 5          # the very last row of feature 1
    X[:, 2] = 9 * (r.random(n) < 0.5)
    out = np.empty(4, np.bool_)
    missing_features(X, missing_bins, out)
    want = np.any(X == missing_bins.astype(np.uint8)[None, :], axis=0)
    np.testing.assert_array_equal(out, want)
    assert out[1] and not out[0] and not out[3]
