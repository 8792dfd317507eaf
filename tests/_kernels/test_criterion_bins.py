"""The node-by-node histogram scan of forests against brute force on each node's rows."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from boostwood._kernels.criterion import criterion_settings
from boostwood._kernels.criterion_bins import binned_node_scan, pack_row_stats
from boostwood._kernels.splits import N_PICK, P_BIN, P_DEFAULT_LEFT, P_NEXT
from boostwood._kernels.reference import criterion_split_naive
from boostwood.tree.criterion import CRITERIA


def _problem(seed, n, F, K, criterion, missing, n_bins):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_bins, size=(n, F))
    codes[rng.random(codes.shape) < missing] = n_bins  # the missing bin
    codes[:, 0] = 3  # a feature constant everywhere
    weight = rng.integers(1, 4, n).astype(float)
    if criterion == "squared_error":
        K, channel = 1, np.zeros(n, dtype=np.int64)
        stat = weight * rng.normal(size=n)
    else:
        channel = rng.integers(0, K, n)
        stat = weight.copy()
    # three nodes: rows split at random into segments of one buffer, ascending
    perm = np.sort(rng.permutation(n)[:n - n // 5])  # some rows belong to no node
    cuts = np.sort(rng.choice(np.arange(1, perm.size), 2, replace=False))
    starts = np.array([0, cuts[0], cuts[1]], dtype=np.int64)
    counts = np.diff(np.append(starts, perm.size)).astype(np.int64)
    buf = np.zeros((2, n), dtype=np.int32)
    buf[1, :perm.size] = perm
    return codes.astype(np.uint8), stat, channel, weight, K, buf, starts, counts


def _scan(codes, stat, channel, weight, K, buf, starts, counts, criterion, keys, n_pick,
          n_bins, msl, known_const=None):
    B, F = starts.size, codes.shape[1]
    totals = np.zeros((B, K + 2))
    for k in range(B):
        rows = buf[1, starts[k]:starts[k] + counts[k]]
        np.add.at(totals[k], channel[rows], stat[rows])
        totals[k, K], totals[k, K + 1] = weight[rows].sum(), rows.size
    gain, pick, left = np.empty((B, F)), np.empty((N_PICK, B, F), dtype=np.int64), \
        np.empty((B, F, K + 2))
    const = np.empty((B, 1), dtype=np.uint64)
    if known_const is None:
        known_const = np.zeros((B, 1), dtype=np.uint64)
    binned_node_scan(codes, pack_row_stats(stat, channel.astype(np.int32), weight),
                     np.full(F, n_bins, dtype=np.int64),
                     (buf, np.ones(B, dtype=np.int64), starts, counts), totals,
                     np.arange(F, dtype=np.int64), keys, n_pick, known_const,
                     criterion_settings(CRITERIA[criterion], 2, msl, 0.0, 0), 2,
                     (gain, pick, left), const,
                     (np.zeros(F, dtype=np.uint8), np.zeros((B, F, 0), dtype=np.uint32)))
    return gain, pick[P_BIN], pick[P_NEXT], pick[P_DEFAULT_LEFT], left, const


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 90), K=st.integers(2, 4),
       criterion=st.sampled_from(["gini", "entropy", "gain_ratio", "squared_error"]),
       missing=st.floats(0.0, 0.4), msl=st.integers(1, 3), n_bins=st.sampled_from([4, 9, 70]))
def test_every_node_and_feature_gets_the_brute_force_best(seed, n, K, criterion, missing, msl,
                                                          n_bins):
    codes, stat, channel, weight, K, buf, starts, counts = _problem(seed, n, 4, K, criterion,
                                                                   missing, n_bins)
    gain, code, nxt, dl, left, const = _scan(codes, stat, channel, weight, K, buf, starts,
                                             counts, criterion, np.zeros((3, 4)), 4, n_bins, msl)
    for k in range(3):
        rows = buf[1, starts[k]:starts[k] + counts[k]]
        constant = [np.unique(codes[rows, f]).size == 1 for f in range(4)]
        assert [bool(const[k, 0] >> np.uint64(f) & np.uint64(1)) for f in range(4)] == constant
        for f in range(4):
            x = codes[rows, f].astype(float)
            x[x == n_bins] = np.nan
            want = criterion_split_naive(x, stat[rows], channel[rows], weight[rows], K,
                                         criterion, msl)
            if want == -np.inf:
                assert gain[k, f] == -np.inf
                continue
            assert gain[k, f] == pytest.approx(want, rel=1e-9, abs=1e-12)
            # the reported left child is the rows the split sends left
            go = np.where(np.isnan(x), dl[k, f] == 1, x <= code[k, f])
            assert left[k, f, K + 1] == go.sum()
            assert left[k, f, K] == pytest.approx(weight[rows][go].sum())
            assert nxt[k, f] == -1 or nxt[k, f] == np.min(x[x > code[k, f]])


def test_a_node_uses_its_drawn_features_and_walks_on_past_constant_ones():
    """With n_pick = 2, each node scans the two features of smallest key; a node whose
    two drawn features are both constant goes on to the next varying one (Breiman)."""
    codes, stat, channel, weight, K, buf, starts, counts = _problem(3, 300, 5, 2, "gini", 0.1,
                                                                   16)
    node2 = buf[1, starts[2]:starts[2] + counts[2]]
    codes[node2, 1] = 7  # feature 1 constant in node 2 (feature 0 is constant everywhere)
    keys = np.array([[0.9, 0.1, 0.5, 0.2, 0.8],    # node 0 draws 1 and 3
                     [0.3, 0.6, 0.1, 0.7, 0.9],    # node 1 draws 2 and 0 (0 constant)
                     [0.1, 0.2, 0.9, 0.8, 0.3]])   # node 2 draws 0 and 1: walks on to 4
    gain = _scan(codes, stat, channel, weight, K, buf, starts, counts, "gini", keys, 2, 16,
                 1)[0]
    used = np.isfinite(gain)
    assert used[0].tolist() == [False, True, False, True, False]
    assert used[1].tolist() == [False, False, True, False, False]
    assert used[2].tolist() == [False, False, False, False, True]
    # a feature known constant (from the parent) is passed over without reading the rows
    known = np.zeros((3, 1), dtype=np.uint64)
    known[2, 0] = 1 << 4
    out = _scan(codes, stat, channel, weight, K, buf, starts, counts, "gini", keys, 2, 16, 1,
                known)
    assert np.isfinite(out[0][2]).tolist() == [False, False, False, True, False]
    assert int(out[5][2, 0]) == 0b10011  # known 4, found 0 and 1
    assert int(out[5][0, 0]) == 0  # feature 0 not drawn in node 0: not known
