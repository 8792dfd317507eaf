import numpy as np
import pytest

from boostwood._kernels.partition import (MIN_PARTITION_BLOCK, all_rows, partition_block_size,
                                          partition_nodes)
from boostwood._kernels.nodes import node_records
from boostwood._kernels.splits import NO_CATEGORIES
from boostwood._kernels.reference import partition_naive


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("block", [3, 1024, 2500, 16384])
def test_partition_is_stable_and_matches_naive(block, threads):
    """Whatever the block size the work-size rule picks (from ``block``, the batch's rows
    and the threads), the partition is the naive stable one."""
    r = np.random.default_rng(0)
    n, F = 9000, 3
    Xc = r.integers(0, 6, size=(F, n)).astype(np.uint8)  # bin 5 = missing for every feature
    missing = np.full(F, 5, dtype=np.int32)
    idx = r.permutation(n).astype(np.int32)
    starts, counts = np.array([0, 4000, 4001]), np.array([4000, 1, 4999])
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
    partition_nodes(Xc, buf, np.empty(n, np.int32),
                    *node_records(starts, counts, np.zeros(3), feats, bins, dl), NO_CATEGORIES,
                    missing, block, threads, n_left)
    assert np.array_equal(buf[1], expect) and n_left.tolist() == nl_expect
    assert np.array_equal(buf[0], idx)  # the source side is left as it was
    # and back again from side 1: a node whose rows are in buf[1] writes buf[0]
    buf[0] = -1
    partition_nodes(Xc, buf, np.empty(n, np.int32), *node_records([0], [n], [1], [0], [2], [0]),
                    NO_CATEGORIES, missing, block, threads, n_left[:1])
    col = Xc[0, buf[1]]
    assert np.array_equal(buf[0], np.concatenate([buf[1][col <= 2], buf[1][col > 2]]))


def test_partition_block_size_rule():
    """The fewest blocks of at most max_block rows that is a multiple of the threads (a
    node cut into near-equal blocks then gives every thread the same rows), never under
    MIN_PARTITION_BLOCK rows."""
    assert partition_block_size(3000, 4096, 2) == 1500  # a small node: one block per thread
    assert partition_block_size(1500, 4096, 2) == MIN_PARTITION_BLOCK  # too small to cut
    assert partition_block_size(10 ** 6, 4096, 16) == 3907  # 256 blocks (4,096: 245)
    assert partition_block_size(40000, 4096, 16) == 2500
    assert partition_block_size(50000, 4096, 16) == 3125  # 16 blocks (4,096: 13)
    for n in (2048, 9999, 50001, 123457, 10 ** 6 + 3):
        for t in (2, 3, 8, 16):
            size = partition_block_size(n, 4096, t)
            assert MIN_PARTITION_BLOCK <= size <= 4096 or size == MIN_PARTITION_BLOCK
            if size > MIN_PARTITION_BLOCK:
                assert -(-n // size) % t == 0, (n, t, size)


@pytest.mark.parametrize("count", [1, 37, MIN_PARTITION_BLOCK])
@pytest.mark.parametrize("side", [0, 1])
def test_one_small_node_takes_the_serial_path_and_matches_naive(count, side):
    """A batch of one node of at most MIN_PARTITION_BLOCK rows is partitioned without a
    parallel region: the same stable partition from either side, missing rows following
    the default direction, the rest of both buffers untouched."""
    r = np.random.default_rng(count)
    n, start = 3000, 100
    Xc = r.integers(0, 6, size=(2, n)).astype(np.uint8)  # bin 5 = missing
    seg = np.sort(r.choice(n, count, replace=False)).astype(np.int32)
    buf = np.full((2, n), -3, np.int32)
    buf[side, start:start + count] = seg
    before = buf.copy()
    n_left = np.empty(1, dtype=np.int64)
    partition_nodes(Xc, buf, np.empty(n, np.int32),
                    *node_records([start], [count], [side], [1], [2], [1]), NO_CATEGORIES,
                    np.full(2, 5, np.int32), 16384, 2, n_left)
    col = Xc[1, seg]
    expect, nl = partition_naive(seg, np.where(col == 5, True, col <= 2))
    assert n_left[0] == nl
    assert np.array_equal(buf[1 - side, start:start + count], expect)
    assert np.array_equal(buf[side], before[side])
    rest = np.r_[0:start, start + count:n]
    assert np.array_equal(buf[1 - side, rest], before[1 - side, rest])


@pytest.mark.parametrize("n", [0, 1, 7, 100_003])
def test_all_rows_writes_the_root_segment_in_place(n):
    out = np.full(n + 5, -7, dtype=np.int32)
    all_rows(out, n)
    assert np.array_equal(out[:n], np.arange(n)) and np.all(out[n:] == -7)


@pytest.mark.parametrize("count", [37, 5000])
def test_a_staging_workspace_narrower_than_the_row_ids_is_refused(count):
    """The partition stages row ids in its workspace: one of narrower integers (the
    byte mask it once took) would keep only their low bits, so it is an error, on the
    serial and on the parallel path."""
    n = 6000
    Xc = np.zeros((1, n), np.uint8)
    buf = np.stack([np.arange(n, dtype=np.int32), np.zeros(n, np.int32)])
    with pytest.raises(TypeError, match="staging"):
        partition_nodes(Xc, buf, np.empty(n, np.uint8),
                        *node_records([0], [count], [0], [0], [0], [0]), NO_CATEGORIES,
                        np.full(1, 5, np.int32), 1024, 2, np.empty(1, np.int64))
