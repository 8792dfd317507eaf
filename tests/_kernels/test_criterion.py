"""The impurity-criterion scan against its naive twin (every threshold tried by brute force)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from boostwood._kernels.criterion import criterion_scan, criterion_settings
from boostwood._kernels.splits import N_PICK, P_BIN, P_DEFAULT_LEFT, P_NEXT
from boostwood._kernels.reference import criterion_split_naive
from boostwood.data.columns import SortedColumns
from boostwood.data.validation import as_feature_matrix
from boostwood.tree.criterion import CRITERIA


def _scan_root(X, stat, channel, weight, K, criterion, msl=1.0, mwl=0.0):
    cols = SortedColumns(as_feature_matrix(X, "X"))
    n, F = X.shape
    totals = np.zeros((1, K + 2))
    np.add.at(totals[0], channel, stat)
    totals[0, K], totals[0, K + 1] = weight.sum(), n
    node_of = np.zeros(n, dtype=np.int32)
    feats = np.arange(F, dtype=np.int64)
    gain, pick, left = np.empty((1, F)), np.empty((N_PICK, 1, F), dtype=np.int64), \
        np.empty((1, F, K + 2))
    varies = np.empty((1, F), dtype=np.uint8)
    criterion_scan(cols.codes, cols.lists, (stat, channel.astype(np.int32), weight), node_of,
                   totals, feats, np.ones((1, F), dtype=np.uint8),
                   criterion_settings(CRITERIA[criterion], 2, msl, mwl, 0), (gain, pick, left),
                   varies)
    return dict(gain=gain, code=pick[P_BIN], nxt=pick[P_NEXT], dl=pick[P_DEFAULT_LEFT],
                left=left, varies=varies)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), K=st.integers(2, 4),
       criterion=st.sampled_from(["gini", "entropy", "gain_ratio", "squared_error"]),
       missing=st.floats(0.0, 0.4), msl=st.integers(1, 4), distinct=st.integers(2, 12))
def test_scan_finds_the_best_split(seed, n, K, criterion, missing, msl, distinct):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, distinct, size=(n, 3)).astype(float)  # ties on purpose
    X[rng.random(X.shape) < missing] = np.nan
    weight = rng.integers(1, 4, n).astype(float)
    if criterion == "squared_error":
        K = 1
        y = rng.normal(size=n)
        channel, stat = np.zeros(n, dtype=np.int64), weight * y
    else:
        channel = rng.integers(0, K, n)
        stat = weight.copy()
    out = _scan_root(X, stat, channel, weight, K, criterion, float(msl))
    for f in range(3):
        want = criterion_split_naive(X[:, f], stat, channel, weight, K, criterion, msl)
        got = out["gain"][0, f]
        if want == -np.inf:
            assert got == -np.inf
        else:
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert out["varies"][0, f] == int(np.unique(X[:, f]).size > 1)


def test_left_statistics_are_those_of_the_chosen_split():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 2))
    channel = (X[:, 0] > 0.3).astype(np.int64)
    w = np.ones(200)
    out = _scan_root(X, w.copy(), channel, w, 2, "gini")
    left = out["left"][0, 0]
    thr_code = out["code"][0, 0]
    cols = SortedColumns(as_feature_matrix(X, "X"))
    go_left = cols.codes[0] <= thr_code
    assert left[3] == go_left.sum()
    assert left[1] == channel[go_left].sum()
    assert out["gain"][0, 0] > out["gain"][0, 1]  # the informative feature wins
