import numpy as np
import pytest

from boostwood._kernels.partition import partition_nodes
from boostwood._kernels.reference import partition_naive


@pytest.mark.parametrize("block", [3, 16384])
def test_partition_is_stable_and_matches_naive(block):
    r = np.random.default_rng(0)
    n, F = 1000, 3
    Xc = r.integers(0, 6, size=(F, n)).astype(np.uint8)  # bin 5 = missing for every feature
    missing = np.full(F, 5, dtype=np.int32)
    idx = r.permutation(n).astype(np.int32)
    starts, counts = np.array([0, 400, 401]), np.array([400, 1, 599])
    feats, bins, dl = np.array([0, 1, 2]), np.array([2, 0, 4]), np.array([1, 0, 0], np.uint8)
    expect = idx.copy()
    nl_expect = []
    for k in range(3):
        seg = idx[starts[k]:starts[k] + counts[k]]
        col = Xc[feats[k], seg]
        goes_left = np.where(col == 5, dl[k] == 1, col <= bins[k])
        expect[starts[k]:starts[k] + counts[k]], nl = partition_naive(seg, goes_left)
        nl_expect.append(nl)
    n_left = np.empty(3, dtype=np.int64)
    partition_nodes(Xc, idx, np.empty(n, np.int32), np.empty(n, np.uint8), starts, counts, feats,
                    bins, dl, missing, block, n_left)
    assert np.array_equal(idx, expect) and n_left.tolist() == nl_expect
