"""The exact scan against the brute-force split search of the reference module."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boostwood._kernels.exact import exact_scan, mark_nodes
from boostwood._kernels.split import pick_best_features, split_settings
from boostwood._kernels.reference import best_split_naive
from boostwood._kernels.splits import N_PICK, P_BIN, P_DEFAULT_LEFT, P_NEXT
from boostwood.data.columns import SortedColumns
from boostwood.data.validation import as_feature_matrix


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 60), st.floats(0, 2), st.sampled_from([0.0, 0.2]),
       st.integers(1, 4))
def test_exact_scan_matches_brute_force(seed, n, lam, missing, min_data):
    r = np.random.default_rng(seed)
    X = np.column_stack([r.integers(0, 4, n), r.normal(size=n).round(1)]).astype(float)
    X[r.random(X.shape) < missing] = np.nan
    cols = SortedColumns(as_feature_matrix(X, "data"))
    g, h = r.normal(size=n), r.uniform(0.1, 1.0, n)
    unit = 2.0 ** -30
    gh = np.rint(np.column_stack([g, h]) / unit).astype(np.int64)  # fixed point
    g, h = gh[:, 0] * unit, gh[:, 1] * unit
    rows = np.sort(r.choice(n, max(2, n * 2 // 3), replace=False))  # one node: a subset
    node_of = np.full(n, -1, dtype=np.int32)
    buf = np.zeros((2, n), dtype=np.int32)
    buf[0, :rows.size] = rows
    mark_nodes(buf, np.zeros(1, np.int64), np.zeros(1, np.int64), np.array([rows.size]), node_of)
    totals = np.array([[gh[rows, 0].sum(), gh[rows, 1].sum(), rows.size]])
    gain, pick, left = np.empty((1, 2)), np.empty((N_PICK, 1, 2), np.int64), \
        np.empty((1, 2, 3), np.int64)
    exact_scan(cols.codes, cols.lists, gh, node_of, totals, np.arange(2, dtype=np.int64),
               np.ones((1, 2), np.uint8),
               split_settings(lam, 0.0, 0.0, 0.0, 0.0, min_data, (unit, unit)), 0.0,
               (gain, pick, left))
    out = [gain, pick[P_BIN], pick[P_NEXT], pick[P_DEFAULT_LEFT], left]
    best = np.empty(1, np.int64)
    pick_best_features(out[0], best)
    expected = best_split_naive(cols.codes.T.astype(np.int64), g, h, rows,
                                cols.n_values, lam, 0.0, 0.0, min_data)
    if expected[1] < 0 or expected[0] <= 1e-9:
        assert best[0] < 0 or out[0][0, best[0]] <= 1e-9
    else:
        assert best[0] >= 0
        assert out[0][0, best[0]] == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
        # the split sends exactly the rows with code <= out_code left (plus NaN if default left)
        f = best[0]
        assert out[4][0, f, 2] == pytest.approx(
            ((cols.codes[f, rows] <= out[1][0, f]) | ((cols.codes[f, rows] == cols.n_values[f])
                                                      & (out[3][0, f] == 1))).sum())
