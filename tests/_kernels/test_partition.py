import numpy as np
import pytest

from boostwood._kernels.partition import partition_nodes
from boostwood._kernels.nodes import node_records
from boostwood._kernels.splits import NO_CATEGORIES
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
    buf = np.stack([idx, np.full(n, -1, np.int32)])
    partition_nodes(Xc, buf, np.empty(n, np.uint8),
                    *node_records(starts, counts, np.zeros(3), feats, bins, dl), NO_CATEGORIES,
                    missing, block, n_left)
    assert np.array_equal(buf[1], expect) and n_left.tolist() == nl_expect
    assert np.array_equal(buf[0], idx)  # the source side is left as it was
    # and back again from side 1: a node whose rows are in buf[1] writes buf[0]
    buf[0] = -1
    partition_nodes(Xc, buf, np.empty(n, np.uint8), *node_records([0], [n], [1], [0], [2], [0]),
                    NO_CATEGORIES, missing, block, n_left[:1])
    col = Xc[0, buf[1]]
    assert np.array_equal(buf[0], np.concatenate([buf[1][col <= 2], buf[1][col > 2]]))
