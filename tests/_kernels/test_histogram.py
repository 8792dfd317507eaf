import numpy as np
import pytest

from boostwood._kernels.histogram import sum_gradients
from boostwood._kernels.reference import histogram_naive
from boostwood.tree.histogram import HIST_BLOCK, HistogramBuilder


def _data(n, F, nb, seed=0):
    """Binned rows and fixed-point (g, h) as the grower hands them to the builder."""
    r = np.random.default_rng(seed)
    X = r.integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = r.normal(size=(n, 2)).astype(np.float32)
    gh[:, 1] = np.abs(gh[:, 1])
    return X, np.rint(gh.astype(np.float64) * 2.0 ** 40).astype(np.int64)


@pytest.mark.parametrize("n", [1, 50, HIST_BLOCK + 7, 3 * HIST_BLOCK + 1])
def test_histogram_matches_naive_across_blocks(n):
    X, gh = _data(n, 4, 9)
    rows = np.sort(np.random.default_rng(1).choice(n, max(1, n // 2), replace=False)).astype(np.int32)
    b = HistogramBuilder(X, 10)
    feats = np.arange(4, dtype=np.int64)
    b.build(gh, rows[None, :], np.zeros(1, np.int64), np.array([0]), np.array([rows.size]),
            np.array([3]), feats)
    np.testing.assert_allclose(b.hist[3], histogram_naive(X, gh[:, 0], gh[:, 1], rows, 10),
                               rtol=1e-12, atol=1e-9)


def test_batch_of_nodes_and_feature_subset():
    X, gh = _data(5000, 5, 7)
    idx = np.random.default_rng(2).permutation(5000).astype(np.int32)
    starts, counts = np.array([0, 1000, 1001]), np.array([1000, 1, 3999])
    b = HistogramBuilder(X, 8)
    feats = np.array([1, 3], dtype=np.int64)
    b.hist[:] = -7
    b.build(gh, idx[None, :], np.zeros(3, np.int64), starts, counts, np.array([0, 1, 2]), feats)
    for k in range(3):
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], idx[starts[k]:starts[k] + counts[k]], 8)
        np.testing.assert_allclose(b.hist[k][feats], naive[feats], rtol=1e-12, atol=1e-9)
        assert np.all(b.hist[k][[0, 2, 4]] == -7.0)  # features not asked for stay untouched


def test_subtraction_equals_brute_force_and_totals_agree():
    X, gh = _data(40000, 3, 12)
    idx = np.arange(40000, dtype=np.int32)
    left = X[:, 0] <= 5
    part = np.concatenate([idx[left], idx[~left]]).astype(np.int32)
    nl = int(left.sum())
    b = HistogramBuilder(X, 13)
    feats = np.arange(3, dtype=np.int64)
    b.build(gh, part[None, :], np.zeros(1, np.int64), np.array([0]), np.array([40000]),
            np.array([0]), feats)  # parent
    b.build(gh, part[None, :], np.zeros(2, np.int64), np.array([0, nl]), np.array([nl, 40000 - nl]),
            np.array([1, 2]), feats)
    b.subtract(np.array([0]), np.array([1]), feats)  # parent - left = right
    np.testing.assert_allclose(b.hist[0], b.hist[2], rtol=1e-9, atol=1e-7)
    # every feature's histogram sums to the node totals
    tot = np.empty(3, dtype=np.int64)
    sum_gradients(gh, part, nl, 40000 - nl, tot)
    np.testing.assert_allclose(b.hist[2].sum(axis=1), np.tile(tot, (3, 1)), rtol=1e-9)


def test_result_does_not_depend_on_threads():
    import numba
    X, gh = _data(3 * HIST_BLOCK, 6, 30)
    idx = np.arange(X.shape[0], dtype=np.int32)
    out = []
    for t in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(t)
        b = HistogramBuilder(X, 31)
        b.build(gh, idx[None, :], np.zeros(1, np.int64), np.array([0]), np.array([idx.size]),
                np.array([0]), np.arange(6, dtype=np.int64))
        out.append(b.hist[0].copy())
    assert np.array_equal(out[0], out[1])


def test_integer_histograms_are_exact():
    """Fixed-point cells are exact sums: equal to the naive sum to the last bit, and
    parent - left is exactly the right child's histogram."""
    X, gh = _data(3 * HIST_BLOCK + 5, 4, 11, seed=5)
    idx = np.arange(X.shape[0], dtype=np.int32)
    b = HistogramBuilder(X, 12)
    feats = np.arange(4, dtype=np.int64)
    nl = 20000
    b.build(gh, idx[None, :], np.zeros(3, np.int64), np.array([0, 0, nl]),
            np.array([idx.size, nl, idx.size - nl]), np.array([0, 1, 2]), feats)
    assert b.hist.dtype == np.int64
    np.testing.assert_array_equal(b.hist[0], histogram_naive(X, gh[:, 0], gh[:, 1], idx, 12))
    b.subtract(np.array([0]), np.array([1]), feats)
    np.testing.assert_array_equal(b.hist[0], b.hist[2])


def _extreme_gh(n, seed):
    """int32 fixed-point rows at the edges of the range, negative hessians included."""
    r = np.random.default_rng(seed)
    gh = r.integers(-2 ** 31, 2 ** 31, size=(n, 2), dtype=np.int64)
    gh[r.random(n) < 0.3] = 2 ** 31 - 1
    gh[r.random(n) < 0.2, 1] = -2 ** 31
    return gh.astype(np.int32)


@pytest.mark.parametrize("dtype,nb", [(np.uint8, 256), (np.uint16, 300)])
def test_packed_block_equals_direct_and_naive(dtype, nb):
    """The packed accumulation (two channels, count in the low bits of h) gives the
    direct three-channel sums to the last bit, at the largest block and extreme values,
    for all features and a subset, and leaves other features untouched."""
    from boostwood._kernels.histogram import (COUNT_BITS, _packed_accumulate,
                                              _zero_and_accumulate)
    n, F = 3 * HIST_BLOCK, 5
    X = np.random.default_rng(3).integers(0, nb, size=(n, F)).astype(dtype)
    X[: HIST_BLOCK // 2, 2] = 7  # one crowded bin: its count reaches ~HIST_BLOCK / 2
    gh = _extreme_gh(n, 4)
    rows = np.sort(np.random.default_rng(5).choice(n, 2 * HIST_BLOCK, replace=False))
    rows = rows.astype(np.int32)
    count = (1 << COUNT_BITS) - 1  # the most rows a packed block may hold
    assert count <= rows.size
    for features, flo, fhi in ((np.arange(F, dtype=np.int64), 0, F),
                               (np.array([0, 2, 4], dtype=np.int64), 1, 3)):
        all_f = features.size == F
        packed = np.full(F * nb * 3, -9, dtype=np.int64)
        direct = packed.copy()
        scratch = np.full(F * nb * 2, 5, dtype=np.int64)  # dirty workspace
        _packed_accumulate(X, gh, rows, 0, count, features, flo, fhi, all_f, nb, scratch, packed)
        _zero_and_accumulate(X, gh, rows, 0, count, features, flo, fhi, all_f, nb, direct)
        np.testing.assert_array_equal(packed, direct)
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], rows[:count], nb)
        got = packed.reshape(F, nb, 3)
        for j in range(flo, fhi):
            np.testing.assert_array_equal(got[features[j]], naive[features[j]])
        untouched = np.setdiff1d(np.arange(F), features[flo:fhi])
        assert np.all(got[untouched] == -9)


@pytest.mark.parametrize("n_groups,n_threads", [(1, 1), (3, 2), (1, 5)])
@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized"])
def test_build_mixes_packed_and_direct_blocks_exactly(n_groups, n_threads, rows_kind):
    """Nodes of many sizes (below and above the packing rule, one and several blocks)
    built in one batch equal the exact naive histograms: int32 rows (two-lane packed cells
    where the rule allows) and int16 quantized rows (one-lane cells). The same batch with
    int64 rows (always direct) gives the same cells."""
    from boostwood._kernels.histogram import PACKED_MIN_ROWS_PER_BIN, build_histograms
    n, F, nb = 4 * HIST_BLOCK, 6, 64
    X = np.random.default_rng(6).integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = _extreme_gh(n, 7) if rows_kind == "int32" else _extreme_quantized(n, 7)
    idx = np.random.default_rng(8).permutation(n).astype(np.int32)
    rule = PACKED_MIN_ROWS_PER_BIN * nb
    counts = np.array([1, rule - 1, rule, rule + 1, HIST_BLOCK, 2 * HIST_BLOCK + 3])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    assert starts[-1] + counts[-1] <= n
    feats = np.arange(F, dtype=np.int64)
    results = []
    for rows_gh in (gh, gh.astype(np.int64)):
        hist = np.zeros((counts.size, F, nb, 3), dtype=np.int64)
        partial = np.zeros((8, F, nb, 3), dtype=np.int64)
        build_histograms(X, rows_gh, idx[None, :], np.zeros(counts.size, np.int64), starts,
                         counts, np.arange(counts.size, dtype=np.int64), feats, HIST_BLOCK,
                         n_groups, n_threads, hist, partial)
        results.append(hist)
    np.testing.assert_array_equal(results[0], results[1])
    for k in range(counts.size):
        seg = np.sort(idx[starts[k]:starts[k] + counts[k]])
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], seg, nb)
        np.testing.assert_array_equal(results[0][k], naive)

def _extreme_quantized(n, seed):
    """int16 quantized rows at the edges of the levels the one-lane cell takes
    (|g| <= 128, |h| <= 255, negative hessians included)."""
    r = np.random.default_rng(seed)
    gh = np.empty((n, 2), dtype=np.int16)
    gh[:, 0] = r.integers(-128, 129, n)
    gh[:, 1] = r.integers(-255, 256, n)
    gh[r.random(n) < 0.3] = (128, 255)
    gh[r.random(n) < 0.2] = (-128, -255)
    return gh


@pytest.mark.parametrize("dtype,nb", [(np.uint8, 256), (np.uint16, 300)])
def test_one_lane_block_equals_direct_and_naive(dtype, nb):
    """Quantized rows summed in one-lane cells (g, h and the count in one int64) give the
    direct three-channel sums to the last bit, at the largest block, with one bin holding
    the whole block at the extreme levels of both signs, for all features and a subset."""
    from boostwood._kernels.histogram import (COUNT_BITS, _one_lane_accumulate,
                                              _zero_and_accumulate)
    n, F = 3 * HIST_BLOCK, 5
    X = np.random.default_rng(3).integers(0, nb, size=(n, F)).astype(dtype)
    gh = _extreme_quantized(n, 4)
    rows = np.sort(np.random.default_rng(5).choice(n, 2 * HIST_BLOCK, replace=False))
    rows = rows.astype(np.int32)
    count = (1 << COUNT_BITS) - 1
    X[rows[:count], 2] = 7  # one bin holding the whole block, ...
    gh[rows[:count * 7 // 8]] = (128, 255)  # ... its cell near the largest sums (7/8 of
    gh[rows[count * 7 // 8:count]] = (-128, -255)  # 2**23 for h), then back down
    for features, flo, fhi in ((np.arange(F, dtype=np.int64), 0, F),
                               (np.array([0, 2, 4], dtype=np.int64), 1, 3)):
        all_f = features.size == F
        one = np.full(F * nb * 3, -9, dtype=np.int64)
        direct = one.copy()
        scratch = np.full(F * nb, 5, dtype=np.int64)  # dirty workspace
        _one_lane_accumulate(X, gh, rows, 0, count, features, flo, fhi, all_f, nb, scratch, one)
        _zero_and_accumulate(X, gh, rows, 0, count, features, flo, fhi, all_f, nb, direct)
        np.testing.assert_array_equal(one, direct)
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], rows[:count], nb)
        got = one.reshape(F, nb, 3)
        for j in range(flo, fhi):
            np.testing.assert_array_equal(got[features[j]], naive[features[j]])
        assert np.all(got[np.setdiff1d(np.arange(F), features[flo:fhi])] == -9)
    # the crowded cell really came near the edge of its fields
    assert int(gh[rows[:count], 1].astype(np.int64).sum()) > 2 ** 22



@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized"])
@pytest.mark.parametrize("counts,n_threads,all_features", [
    ([40000], 3, True),  # one node over 2**COUNT_BITS rows, in 3 pieces
    ([2048], 2, False),  # the smallest node that is cut, feature subset
    ([5000, 20000], 2, True),  # two nodes (one built child each of a depthwise pair)
    ([1, 3000], 4, True),  # a one-row node beside a cut one
    ([50000], 2, True),  # four blocks: four pieces, two per thread
    ([4000], 16, True),  # 4 pieces of 5 features in 4 ranges (piece_groups): 16 tasks
    ([2048], 16, False),  # 2 pieces, the 2 features of the subset one range each
    ([1, 3000], 16, True),  # 1 + 3 pieces, 4 ranges each
])
def test_small_batch_cut_into_pieces_equals_naive(rows_kind, counts, n_threads, all_features):
    """A small batch built in pieces, one per thread (each summed in packed cells, then
    added cell by cell), equals the naive histograms to the bit, including a bin that
    holds every row of a node of more than 2**COUNT_BITS rows at extreme values (each
    piece must be unpacked before the pieces are added), and leaves the features it was
    not asked for untouched. The path is checked to be the one taken."""
    from boostwood._kernels.histogram import (COUNT_BITS, FEW_BLOCKS_PER_THREAD, _pieces_rows,
                                              build_histograms, piece_rows)
    n, F, nb = 50000, 5, 40
    X = np.random.default_rng(9).integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = _extreme_gh(n, 10) if rows_kind == "int32" else _extreme_quantized(n, 10)
    idx = np.random.default_rng(11).permutation(n).astype(np.int32)
    counts = np.array(counts, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    X[idx[:counts[0]], 1] = 3  # a crowded bin: all the first node's rows
    feats = np.arange(F, dtype=np.int64) if all_features else np.array([1, 4], dtype=np.int64)
    n_buffers = FEW_BLOCKS_PER_THREAD * n_threads + counts.size
    partial = np.full((n_buffers, F, nb, 3), 77, dtype=np.int64)  # dirty
    rows = _pieces_rows(counts, HIST_BLOCK, n_threads, partial.shape[0])
    assert rows == piece_rows(counts.sum(), HIST_BLOCK, n_threads) > 0
    assert _pieces_rows(counts, HIST_BLOCK, 1, partial.shape[0]) == 0  # one thread: blocks
    hist = np.full((counts.size + 1, F, nb, 3), -5, dtype=np.int64)
    slots = np.arange(1, counts.size + 1, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(counts.size, np.int64), starts, counts,
                     slots, feats, HIST_BLOCK, 1, n_threads, hist, partial)
    for k in range(counts.size):
        naive = histogram_naive(X, gh[:, 0], gh[:, 1], idx[starts[k]:starts[k] + counts[k]], nb)
        np.testing.assert_array_equal(hist[slots[k]][feats], naive[feats])
        others = np.setdiff1d(np.arange(F), feats)
        assert np.all(hist[slots[k]][others] == -5)
    assert np.all(hist[0] == -5)
    if counts[0] >= 1 << COUNT_BITS:
        assert hist[1, 1, 3, 2] == counts[0]


def test_pieces_fewer_than_threads_share_their_features():
    """piece_groups: a piece is cut into n_threads // n_pieces feature ranges, at most
    one per feature, and never on 2 threads (a small batch has 2 pieces or more there)."""
    from boostwood._kernels.histogram import MIN_PIECE_ROWS, piece_groups, piece_rows
    assert piece_groups(4, 28, 16) == 4 and piece_groups(5, 28, 16) == 3
    assert piece_groups(16, 28, 16) == 1 and piece_groups(64, 28, 16) == 1
    assert piece_groups(2, 5, 16) == 5  # no more ranges than features
    for total in range(2 * MIN_PIECE_ROWS, 40_000, 997):
        rows = piece_rows(total, HIST_BLOCK, 2)
        assert piece_groups(-(-total // rows), 28, 2) == 1


def test_pieces_are_a_multiple_of_the_threads():
    """A batch under FEW_BLOCKS_PER_THREAD blocks per thread is cut into the fewest pieces
    that is a multiple of the threads and fits the block size, so every thread sums the
    same rows; ``piece_rows`` is never under MIN_PIECE_ROWS (a node smaller than that
    is one piece of its own size)."""
    from boostwood._kernels.histogram import MIN_PIECE_ROWS, piece_rows
    assert piece_rows(800_000, HIST_BLOCK, 16) == 12_500  # 64 pieces, 4 a thread (not 49)
    assert piece_rows(100_000, HIST_BLOCK, 2) == 12_500  # 8 pieces, 4 a thread (not 7)
    assert piece_rows(40_000, HIST_BLOCK, 3) == 13_334  # 3 pieces
    assert piece_rows(20_000, HIST_BLOCK, 2) == 10_000
    assert piece_rows(3_000, HIST_BLOCK, 4) == MIN_PIECE_ROWS
    for total in (2_048, 33_000, 99_999, 250_000):
        for t in (2, 3, 4, 8, 16):
            rows = piece_rows(total, HIST_BLOCK, t)
            assert MIN_PIECE_ROWS <= rows <= HIST_BLOCK
            if rows > MIN_PIECE_ROWS and total <= 4 * t * HIST_BLOCK:
                assert -(-total // rows) % t == 0, (total, t, rows)


def test_piece_buffers_follow_threads_and_a_memory_cap():
    """Up to FEW_BLOCKS_PER_THREAD partial buffers per thread plus one for small batches'
    pieces, one per thread plus one when those would pass the cap, none on one thread,
    none when even those would pass it (wide data on many threads); the builder
    reserves them with its first build."""
    import numba
    from boostwood.tree.histogram import PIECE_BUFFER_BYTES, piece_buffers
    small = 28 * 256 * 3 * 8
    assert piece_buffers(2, small) == 9 and piece_buffers(16, small) == 65
    assert piece_buffers(1, small) == 0
    assert piece_buffers(16, PIECE_BUFFER_BYTES // 16) == 0
    assert piece_buffers(3, PIECE_BUFFER_BYTES // 4) == 4
    assert piece_buffers(3, PIECE_BUFFER_BYTES // 13) == 13
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: no pieces")
    X, gh = _data(5000, 4, 9)
    b = HistogramBuilder(X, 10)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        b.build(gh, np.arange(5000, dtype=np.int32)[None, :], np.zeros(1, np.int64),
                np.array([0]), np.array([5000]), np.array([0]), np.arange(4, dtype=np.int64))
    finally:
        numba.set_num_threads(before)
    assert b.partial.shape[0] == 9
    np.testing.assert_allclose(b.hist[0], histogram_naive(X, gh[:, 0], gh[:, 1],
                                                          np.arange(5000), 10), rtol=0, atol=0)


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("rows_kind", ["int32", "int16 quantized", "int64"])
def test_many_blocks_need_one_partial_per_worker_boundary(n_threads, rows_kind):
    """A batch of many blocks: each worker adds its run of a node's blocks into one
    histogram, so the build uses only ``partials_needed`` buffers (n_threads - 1 here,
    not one per extra block; a buffer past them stays untouched) and still equals the
    exact naive histograms -- packed (int32, int16) and direct (int64) blocks alike."""
    from boostwood._kernels.histogram import (FEW_BLOCKS_PER_THREAD, build_histograms,
                                              partials_needed)
    block, F, nb = 300, 5, 16
    counts = np.array([12 * block + 17, 5 * block - 3])
    n = int(counts.sum())
    X = np.random.default_rng(9).integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = {"int32": _extreme_gh(n, 10), "int16 quantized": _extreme_quantized(n, 10),
          "int64": _data(n, 1, 2, seed=10)[1]}[rows_kind]
    idx = np.random.default_rng(11).permutation(n).astype(np.int32)
    starts = np.array([0, counts[0]])
    n_blocks = int(sum(-(-c // block) for c in counts))
    need = partials_needed(n_blocks, 2, n_threads)
    assert n_blocks >= FEW_BLOCKS_PER_THREAD * n_threads and need == n_threads - 1
    hist = np.zeros((2, F, nb, 3), dtype=np.int64)
    partial = np.full((need + 1, F, nb, 3), -5, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(2, np.int64), starts, counts,
                     np.arange(2, dtype=np.int64), np.arange(F, dtype=np.int64), block, 1,
                     n_threads, hist, partial)
    assert np.all(partial[need:] == -5)
    for k in range(2):
        seg = np.sort(idx[starts[k]:starts[k] + counts[k]])
        np.testing.assert_array_equal(
            hist[k], histogram_naive(X, gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64),
                                     seg, nb))


@pytest.mark.parametrize("n_threads", [2, 3, 8])
def test_worker_runs_are_equal_work_not_equal_task_counts(n_threads):
    """A depth-wise level mixes full blocks with nodes of a few rows: each worker's run of
    consecutive tasks holds about a 1/n_threads share of the rows (never a whole task
    more or less than a share), where equal numbers of tasks gave one worker several
    times another's rows; the build over such a level stays exact within
    ``partials_needed`` buffers."""
    from boostwood._kernels.histogram import (_plan_tasks, build_histograms, feature_groups,
                                              partials_needed)
    block, F, nb = 300, 4, 16
    rng = np.random.default_rng(21)
    counts = np.concatenate([[7 * block + 11, 3 * block], rng.integers(1, 60, size=40),
                             [5 * block - 7], rng.integers(1, 40, size=30)]).astype(np.int64)
    n = int(counts.sum())
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    k = counts.size
    n_blocks = int(sum(max(1, -(-c // block)) for c in counts))
    n_groups = feature_groups(n_blocks, F, n_threads)
    assert n_groups == 1
    plan = _plan_tasks(starts, counts, np.arange(k, dtype=np.int64), np.zeros(k, np.int64),
                       block, n_groups, F, n_threads)
    t_count, n_workers, run_first = plan[1], plan[8], plan[9]
    work = [int(t_count[run_first[w]:run_first[w + 1]].sum()) for w in range(n_workers)]
    assert sum(work) == n and run_first[0] == 0 and run_first[-1] == t_count.size
    assert max(work) - n / n_workers <= block and n / n_workers - min(work) <= block
    X = rng.integers(0, nb, size=(n, F)).astype(np.uint8)
    gh = _extreme_gh(n, 22)
    idx = rng.permutation(n).astype(np.int32)
    need = partials_needed(n_blocks, k, n_threads)
    hist = np.zeros((k, F, nb, 3), dtype=np.int64)
    partial = np.full((need + 1, F, nb, 3), -5, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(k, np.int64), starts, counts,
                     np.arange(k, dtype=np.int64), np.arange(F, dtype=np.int64), block, 1,
                     n_threads, hist, partial)
    assert np.all(partial[need:] == -5)
    for j in (0, 1, 2, 42, k - 1):
        seg = np.sort(idx[starts[j]:starts[j] + counts[j]])
        np.testing.assert_array_equal(
            hist[j], histogram_naive(X, gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64),
                                     seg, nb))


def test_more_feature_ranges_than_features_share_one_buffer_per_block():
    """Ranges of one block may be empty (more ranges than features): a block's ranges
    still share its one buffer, within ``partials_needed``, and the sums stay exact."""
    from boostwood._kernels.histogram import build_histograms, partials_needed
    block, nb = 300, 8
    n = 4 * block
    X = np.random.default_rng(12).integers(0, nb, size=(n, 1)).astype(np.uint8)
    gh = _extreme_gh(n, 13)
    idx = np.arange(n, dtype=np.int32)
    need = partials_needed(4, 1, 2)
    hist = np.zeros((1, 1, nb, 3), dtype=np.int64)
    partial = np.full((need + 1, 1, nb, 3), -5, dtype=np.int64)
    build_histograms(X, gh, idx[None, :], np.zeros(1, np.int64), np.array([0]), np.array([n]),
                     np.array([0]), np.arange(1, dtype=np.int64), block, 2, 2, hist, partial)
    assert np.all(partial[need:] == -5)
    np.testing.assert_array_equal(hist[0], histogram_naive(X, gh[:, 0].astype(np.int64),
                                                           gh[:, 1].astype(np.int64), idx, nb))


def test_subtract_kernel_takes_every_cell_of_the_features_asked_for():
    """``subtract_histograms`` on cells all non-zero (the missing bin's count and every
    channel included), several pairs at once, a feature subset: parent - child exactly
    on those features, the others and the children untouched."""
    from boostwood._kernels.histogram import subtract_histograms
    r = np.random.default_rng(3)
    hist = r.integers(1, 2 ** 40, size=(6, 5, 9, 3))
    before = hist.copy()
    parents, children = np.array([4, 0]), np.array([1, 5])
    feats = np.array([0, 2, 4], dtype=np.int64)
    subtract_histograms(parents, children, feats, hist)
    want = before.copy()
    for p, c in zip(parents, children):
        want[p][feats] -= before[c][feats]
    np.testing.assert_array_equal(hist, want)


@pytest.mark.parametrize("count", [1, 40, 300])
def test_one_small_node_on_a_feature_subset(count):
    """A batch of one node (40 rows of 28 features: below SERIAL_MAX_UPDATES, built on the
    calling thread; 300 rows: the parallel plan) over a slot full of stale sums: the
    naive histogram on the features asked for, the others untouched."""
    from boostwood._kernels.histogram import SERIAL_MAX_UPDATES
    assert (40 * 20 < SERIAL_MAX_UPDATES) and (300 * 28 >= SERIAL_MAX_UPDATES)
    X, gh = _data(6000, 28, 200, seed=count)
    gh = (gh >> 20).astype(np.int32)
    rows = np.sort(np.random.default_rng(count).choice(6000, count, replace=False))
    buf = np.zeros((2, 6000), np.int32)
    buf[1, 500:500 + count] = rows
    feats = np.arange(0, 28, 1 if count == 300 else 4, dtype=np.int64)
    b = HistogramBuilder(X, 201)
    b.hist[:] = 12345
    b.build(gh, buf, np.ones(1, np.int64), np.array([500]), np.array([count]), np.array([2]),
            feats)
    naive = histogram_naive(X, gh[:, 0].astype(np.int64), gh[:, 1].astype(np.int64), rows, 201)
    np.testing.assert_array_equal(b.hist[2][feats], naive[feats])
    others = np.setdiff1d(np.arange(28), feats)
    assert np.all(b.hist[2][others] == 12345) and np.all(b.hist[1] == 12345)
