"""The compiled expansion loop (``_kernels/expand.py``), which grows every histogram tree,
against its naive twin (``tests/naive_tree.py``: per-node histograms summed from the
node's rows, NumPy masks for the partition, the policy written out in Python).

Both must give the same trees bit for bit, also when the loop stops for a larger node
table, histogram pool or partial buffers and goes on, with a row bag, wide bins,
``colsample_bynode`` and node masks. Sharded trees: test_shards.py.
"""
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import boostwood as bw
from boostwood.tree import GrowerParams, TreeGrower
from boostwood.tree import grower as grower_module
from boostwood.tree import histogram as histogram_module
from boostwood._kernels.expand import NEED_NODES, NEED_SLOTS
from boostwood.data.columns import SortedColumns
from boostwood.data.validation import as_feature_matrix
from boostwood.tree.exact import exact_grower
from boostwood.tree.histogram import HistogramBuilder
from boostwood.tree.nodes import NodeTable

from conftest import make_classification, record_loop_statuses
from naive_tree import assert_twin, twin_of

TREE_FIELDS = ("feature", "threshold_bin", "left", "right", "default_left", "value", "gain",
               "cover", "count")

CONFIGS = [
    ("lossguide", dict(max_depth=0, max_leaves=31)),
    ("lossguide", dict(max_depth=4, max_leaves=64, min_data_in_leaf=40)),
    ("lossguide", dict(max_depth=0, max_leaves=200, min_child_weight=3.0, reg_lambda=0.0)),
    ("depthwise", dict(max_depth=6)),
    ("depthwise", dict(max_depth=7, max_leaves=20)),
    ("depthwise", dict(max_depth=5, min_data_in_leaf=30, gamma=0.5)),
]


def _data(n=4000, p=7, seed=0, max_bin=32):
    X, y = make_classification(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 2] = np.round(X[:, 2])  # a few distinct values: ties in gains
    d = bw.Dataset(X, y, max_bin=max_bin).construct()
    p_ = 1.0 / (1.0 + np.exp(-rng.normal(size=n)))
    gh = np.column_stack([p_ - y, p_ * (1 - p_)]).astype(np.float32)
    return d, gh


def _grow(d, gh, policy, kw, small=False, rows=None, with_grower=False):
    m = d.bin_mapper
    grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max, GrowerParams(grow_policy=policy, **kw))
    if small:  # start with room for almost nothing: the loop must stop and go on
        grower.builder = HistogramBuilder(d.X_binned, m.n_bins_max, initial_slots=2)
        grower._new_table = lambda: NodeTable(3, np.int64, 4)
    features = np.arange(d.num_feature(), dtype=np.int64)
    tree, (sides, starts, counts, values) = grower.grow(gh, rows, features,
                                                        np.random.default_rng(1))
    leaf_rows = [grower.buf[b, s:s + c].copy() for b, s, c in zip(sides, starts, counts)]
    if with_grower:
        return (tree, (sides, starts, counts, values), leaf_rows), grower
    return tree, (sides, starts, counts, values), leaf_rows


def _assert_twin(d, gh, policy, kw, rows=None, small=False):
    """The loop grows the naive twin's tree (and leaves' rows); returns the twin."""
    (tree, _, leaf_rows), grower = _grow(d, gh, policy, kw, small=small, rows=rows,
                                         with_grower=True)
    twin = twin_of(grower, rows)
    assert_twin(grower, tree, leaf_rows, twin)
    return twin


def _assert_same(a, b):
    tree_a, seg_a, rows_a = a
    tree_b, seg_b, rows_b = b
    for f in TREE_FIELDS:
        assert np.array_equal(getattr(tree_a, f), getattr(tree_b, f)), f
    for x, y in zip(seg_a, seg_b):
        assert np.array_equal(x, y)
    assert len(rows_a) == len(rows_b)
    for x, y in zip(rows_a, rows_b):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("policy,kw", CONFIGS)
def test_the_loop_grows_the_naive_twins_tree(policy, kw):
    d, gh = _data()
    twin = _assert_twin(d, gh, policy, kw)
    assert len(twin.leaf_rows) > 4  # a real tree, not a stump


def test_the_loop_with_a_row_bag_and_wide_bins():
    d, gh = _data(n=6000, p=5, seed=3, max_bin=255)
    rows = np.sort(np.random.default_rng(2).choice(6000, 3500, replace=False)).astype(np.int32)
    for policy, kw in (("lossguide", dict(max_depth=0, max_leaves=40)),
                       ("depthwise", dict(max_depth=6))):
        _assert_twin(d, gh, policy, kw, rows=rows)


@pytest.mark.parametrize("policy,kw", [CONFIGS[0], CONFIGS[3]])
def test_compiled_loop_stops_for_room_and_goes_on(policy, kw, monkeypatch):
    d, gh = _data()
    statuses = record_loop_statuses(monkeypatch)
    # no partial buffers reserved by the root's build (it then takes one run; it would
    # otherwise reserve all the loop asks for), so that the loop must stop for partial
    # histograms too: one per thread after the first, so this needs two threads (set
    # here: a fit with nthread=1 earlier in the session leaves numba at one)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one thread: a build needs no partial histograms")
    monkeypatch.setattr(grower_module, "HIST_BLOCK", 1000)
    monkeypatch.setattr(histogram_module, "partials_bound", lambda n_rows, n_threads: 0)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        _assert_twin(d, gh, policy, kw, small=True)
    finally:
        numba.set_num_threads(before)
    # every kind of stop happened, and the tree is the twin's and the one grown with
    # room to spare
    assert set(statuses) == {0, 1, 2, 3}
    _assert_twin(d, gh, policy, kw)


@pytest.mark.parametrize("params", [
    dict(objective="binary:logistic", tree_method="hist", grow_policy="lossguide",
         max_leaves=31, max_depth=0, subsample=0.7),
    dict(objective="multi:softprob", num_class=3, tree_method="hist", max_depth=5),
    dict(objective="reg:squarederror", tree_method="hist", max_depth=6, max_leaves=12,
         min_child_weight=2.0, colsample_bytree=0.6),
])
def test_models_are_byte_identical_with_room_or_without(params, monkeypatch, tmp_path):
    """A model (a row bag, three classes, column sampling) is the same whether the loop
    had room for its trees or stopped for a larger node table and histogram pool and
    went on (the trees themselves are the naive twin's, above)."""
    X, y = make_classification(3000, 6, seed=5)
    if params["objective"].startswith("multi"):
        y = (np.abs(X[:, 0] * 3).astype(int) % 3).astype(float)
    params = dict(params, seed=7, learning_rate=0.3)
    files = []
    for small in (False, True):
        if small:  # room for almost nothing
            statuses = record_loop_statuses(monkeypatch)
            monkeypatch.setattr(TreeGrower, "_new_table", lambda self: NodeTable(3, np.int64, 4))
            monkeypatch.setattr(TreeGrower, "held_histograms", lambda self, n_threads=None: 1)
        files.append(tmp_path / f"small_{small}.json")
        bw.train(params, bw.Dataset(X, y), 8).save_model(files[-1])
    assert {NEED_NODES, NEED_SLOTS} <= set(statuses)
    assert files[0].read_bytes() == files[1].read_bytes()


def _python_calls_per_tree(max_leaves, exact=False):
    d, gh = _data(n=20000, p=6, max_bin=64)
    kw = dict(max_depth=0, max_leaves=max_leaves, min_data_in_leaf=1, min_child_weight=0.0)
    if exact:  # a grower stepped from Python
        X, _ = make_classification(20000, 6, seed=0)
        grower = exact_grower(SortedColumns(as_feature_matrix(X, "data")),
                              GrowerParams(grow_policy="lossguide", **kw))

        def grow():
            return grower.grow(gh, None, np.arange(6, dtype=np.int64), np.random.default_rng(1))
    else:
        def grow():
            return _grow(d, gh, "lossguide", kw)
    grow()  # compile first
    calls = [0]

    def count(frame, event, arg):
        if event == "call":
            calls[0] += 1

    sys.setprofile(count)
    try:
        tree, *_ = grow()
    finally:
        sys.setprofile(None)
    return calls[0], tree.n_leaves


def test_python_calls_per_tree_do_not_grow_with_leaves():
    few, n_few = _python_calls_per_tree(8)
    many, n_many = _python_calls_per_tree(128)
    assert (n_few, n_many) == (8, 128)
    # some calls depend on the tree's size only through array lengths (none per node)
    assert many <= few + 5, (few, many)


def test_python_loop_calls_per_leaf_do_not_grow_with_leaves():
    """The Python loop (the exact grower's) makes a fixed number of Python calls a split:
    retiring the leaves beyond the ``max_leaves`` budget is the compiled retire_next, not
    a Python key call per open leaf at every split (which made it 2.5x the calls per leaf
    at 255 leaves as at 15)."""
    few, n_few = _python_calls_per_tree(16, exact=True)
    many, n_many = _python_calls_per_tree(128, exact=True)
    assert (n_few, n_many) == (16, 128)
    assert many / n_many <= 1.1 * few / n_few, (few / n_few, many / n_many)


@pytest.mark.parametrize("depth", [4, 6])
def test_depthwise_pool_holds_one_level_of_histograms(depth):
    """A depth-wise tree grown to its depth limit needs at most 2**(depth - 1) histograms
    at once (the parents of the last level that builds them and their smaller children):
    the loop asks for a slot only for nodes whose children may be split again, so the
    last level, whose children are leaves, asks for none and the pool sized by the
    grower (2**(depth - 1) + 2 slots) never grows."""
    d, gh = _data(n=20000, max_bin=64)
    m = d.bin_mapper
    grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                        GrowerParams(grow_policy="depthwise", max_depth=depth, min_data_in_leaf=1,
                                     min_child_weight=0.0))
    slots = grower.builder.hist.shape[0]
    assert slots == 2 ** (depth - 1) + 2
    features = np.arange(d.num_feature(), dtype=np.int64)
    tree, _ = grower.grow(gh, None, features, np.random.default_rng(1))
    # (nearly) full: the last level split many more nodes than the pool has free slots
    assert np.sum(tree.left < 0) >= 2 ** depth - 2
    assert grower.builder.hist.shape[0] == slots


def _slots_touched(max_leaves, policy="lossguide", max_depth=0):
    """Histogram slots a tree ever writes (the pool's free slots are a stack, so that is
    the most it held at once), and the naive twin of the tree, which it grew."""
    d, gh = _data(n=20000, max_bin=64)
    m = d.bin_mapper
    grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                        GrowerParams(grow_policy=policy, max_depth=max_depth,
                                     max_leaves=max_leaves, min_data_in_leaf=1,
                                     min_child_weight=0.0))
    sentinel = np.iinfo(grower.builder.hist.dtype).min
    grower.builder.hist[...] = sentinel
    features = np.arange(d.num_feature(), dtype=np.int64)
    tree, segments = grower.grow(gh, None, features, np.random.default_rng(1))
    leaf_rows = [grower.buf[b, s:s + c].copy() for b, s, c in zip(*segments[:3])]
    touched = int(np.sum(np.any(grower.builder.hist != sentinel, axis=(1, 2, 3))))
    assert touched <= grower.held_histograms()  # the memory rule's estimate
    twin = twin_of(grower)
    assert_twin(grower, tree, leaf_rows, twin)
    return touched, tree, twin


@pytest.mark.parametrize("max_leaves", [16, 64, 127])
def test_leafwise_retires_leaves_beyond_the_budget(max_leaves, monkeypatch):
    """A leaf that ``max_leaves`` leaves no step to reach gives its histogram back: the
    loop holds at most about half of ``max_leaves`` histograms, where keeping every open
    leaf's (the naive twin's open leaves, at most) holds nearly one per leaf, and it
    grows the twin's tree. (One leaf at a time: no leaves split ahead, which the
    compiled loop does by default on 16 threads or more.)"""
    monkeypatch.setattr(TreeGrower, "ahead_max_rows", 0)
    held, tree, twin = _slots_touched(max_leaves)
    held_all = twin.most_open
    assert tree.n_leaves == max_leaves
    assert held <= max_leaves // 2 + 2, (held, held_all)
    assert held_all > max_leaves * 3 // 4, held_all


@pytest.mark.parametrize("policy, max_depth, max_leaves", [
    ("depthwise", 0, 127), ("depthwise", 6, 0), ("depthwise", 9, 40), ("lossguide", 5, 0)])
def test_held_histograms_bounds_what_a_tree_holds(policy, max_depth, max_leaves):
    """The memory rule's estimate holds for every policy and limit (a depth-wise tree
    limited by leaves alone holds a level of them, not one histogram)."""
    held, tree, _ = _slots_touched(max_leaves, policy=policy, max_depth=max_depth)
    assert tree.n_leaves >= 16 and held >= 4


@pytest.mark.parametrize("policy,kw", [CONFIGS[0], CONFIGS[3]])
def test_profile_clock_counts_every_step_and_changes_no_tree(policy, kw, monkeypatch):
    """TreeGrower.profile_clock (benchmarks/bench_tree_profile.py): the compiled loop with a
    clock grows the same tree, and charges one partition and one build to each split
    batch, a scan to each batch of children, and cycles to every section it ran."""
    from boostwood._kernels.expand import (C_BOOKKEEP, C_BUILD, C_PARTITION, C_SCAN,
                                           new_clock)
    monkeypatch.setattr(TreeGrower, "ahead_max_rows", 0)  # one split per step, any machine
    d, gh = _data()
    plain = _grow(d, gh, policy, kw)
    clock = new_clock()
    monkeypatch.setattr(TreeGrower, "profile_clock", clock)
    timed = _grow(d, gh, policy, kw)
    _assert_same(timed, plain)
    tree = plain[0]
    n_splits = int((tree.left >= 0).sum())
    calls = clock[:, :, 1].sum(axis=1)
    steps = calls[C_PARTITION]
    assert steps == (n_splits if policy == "lossguide" else kw["max_depth"])
    # a scan per batch whose children may split again, and the root's
    assert calls[C_BUILD] <= steps and 1 <= calls[C_SCAN] <= steps + 1
    if policy == "depthwise":  # the children of the last level are never scanned
        assert calls[C_SCAN] == steps and calls[C_BUILD] == steps - 1
    assert calls[C_BOOKKEEP] >= steps
    cycles = clock[:, :, 0].sum(axis=1)
    assert (cycles[[C_BUILD, C_PARTITION, C_SCAN]] > 0).all()


AHEAD_CASES = [dict(max_depth=0, max_leaves=31),
               dict(max_depth=0, max_leaves=12, min_data_in_leaf=100),
               dict(max_depth=5, max_leaves=40, min_child_weight=20.0)]


def test_leaves_split_ahead_of_their_turn_leave_the_one_at_a_time_tree(monkeypatch):
    """Leaf-wise, with several threads a small best leaf is split together with the next
    open leaves, ahead of their turn: they take their turns later in the order of one
    leaf at a time, or are undone when the tree ends first. The tree, node ids and leaf
    segments are those of the loop splitting one leaf at a time, whose tree is the naive
    twin's; and the cases include leaves undone (some of them retired beyond the leaf budget first,
    their waiting children's histograms freed). (By default it takes AHEAD_MIN_THREADS
    threads; here two are made enough.)"""
    import numba
    from boostwood._kernels.expand import AHEAD_MAX_ROWS, ST_AHEAD, ST_UNDONE
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("splitting ahead needs two threads")
    monkeypatch.setattr(grower_module, "AHEAD_MIN_THREADS", 2)
    d, gh = _data(seed=7)
    m = d.bin_mapper
    features = np.arange(d.num_feature(), dtype=np.int64)
    undone_any = 0
    for kw in AHEAD_CASES:
        monkeypatch.setattr(TreeGrower, "ahead_max_rows", 0)
        one_at_a_time, reference = _grow(d, gh, "lossguide", kw, with_grower=True)
        monkeypatch.setattr(TreeGrower, "ahead_max_rows", AHEAD_MAX_ROWS)
        assert_twin(reference, one_at_a_time[0], one_at_a_time[2], twin_of(reference))
        before = numba.get_num_threads()
        numba.set_num_threads(2)
        try:
            grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                                GrowerParams(grow_policy="lossguide", **kw))
            grower.ahead_max_rows = AHEAD_MAX_ROWS
            tree, segments = grower.grow(gh, None, features, np.random.default_rng(1))
        finally:
            numba.set_num_threads(before)
        leaf_rows = [grower.buf[b, s:s + c].copy() for b, s, c in zip(*segments[:3])]
        _assert_same((tree, segments, leaf_rows), one_at_a_time)
        # every slot back exactly once: none lost, none twice, no -1 (a retired leaf that
        # was split ahead must not push its own released slot)
        assert sorted(grower.builder._free) == list(range(grower.builder.hist.shape[0]))
        # no more leaves split ahead wait at once than held_histograms counts: the pool,
        # sized by it, never had to grow
        assert grower.builder.hist.shape[0] <= max(grower.held_histograms(2), 4), kw
        ahead, undone = grower.expansion_counters[[ST_AHEAD, ST_UNDONE]]
        assert ahead > 0 and 0 <= undone <= ahead, kw
        undone_any += undone
    assert undone_any > 0


def test_splitting_ahead_is_on_by_default_from_a_thread_bound_and_counted():
    """Leaf-wise growers split ahead by default on AHEAD_MIN_THREADS threads or more, with
    AHEAD_MAX_ROWS, and held_histograms counts the waiting children's 2 (n_threads - 1)
    histograms there (the side-by-side memory rule reads it); depth-wise never."""
    from boostwood._kernels.expand import AHEAD_MAX_ROWS, AHEAD_MIN_THREADS
    d, _ = _data()
    m = d.bin_mapper
    leafwise = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                          GrowerParams(grow_policy="lossguide", max_depth=0, max_leaves=31))
    depthwise = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                           GrowerParams(grow_policy="depthwise", max_depth=6))
    t = AHEAD_MIN_THREADS
    assert leafwise._ahead_rows(t) == AHEAD_MAX_ROWS and leafwise._ahead_rows(t - 1) == 0
    assert depthwise._ahead_rows(16) == 0
    assert leafwise.held_histograms(16) == leafwise.held_histograms(t - 1) + 2 * 15
    assert leafwise.held_histograms(t - 1) == 31 // 2 + 2
    assert depthwise.held_histograms(16) == depthwise.held_histograms(1)
    leafwise.ahead_max_rows = 0
    assert leafwise.held_histograms(16) == 31 // 2 + 2


@pytest.mark.parametrize("waiting,expected", [(0, 3), (4, 2), (5, 1), (6, 0), (8, 0)])
def test_leaves_split_ahead_wait_at_most_twice_the_extra_threads(waiting, expected):
    """A small best leaf takes n_threads - 1 leaves ahead with it, but no more than
    2 (n_threads - 1) leaves split ahead wait for their turn at once (the histograms
    held_histograms counts for them): on 4 threads, with 4 waiting it takes 2, with 6
    or more none."""
    from boostwood._kernels.expand import (F_AHEAD, LOSSGUIDE, N_COUNTERS, ST_LEAVES,
                                           ST_OPEN, _leafwise_batch)
    from boostwood._kernels.nodes import N_NODE_INTS, ND_COUNT
    cap, n_open = 32, 14
    ints = np.zeros((N_NODE_INTS, cap), dtype=np.int64)
    ints[ND_COUNT] = 100  # every leaf small
    gain = np.zeros((cap,))
    open_ids = np.zeros(cap, dtype=np.int64)
    open_ids[:n_open] = np.arange(1, n_open + 1)
    gain[1:n_open + 1] = np.arange(n_open, 0, -1)  # leaf 1 is the best
    flags = np.zeros(cap, dtype=np.uint8)
    flags[n_open + 1 - waiting:n_open + 1] = F_AHEAD  # the lowest gains wait
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ST_OPEN], counters[ST_LEAVES] = n_open, n_open
    policy = (LOSSGUIDE, 0, 255, 1, 0.0, 1.0, 16384)
    state = (np.zeros(cap, dtype=np.int64), np.zeros(4, dtype=np.int64), open_ids, counters)
    batch = _leafwise_batch(policy, state, (np.zeros(cap, dtype=np.int64), flags), gain,
                            ints, 4)
    assert batch.tolist() == [1] + list(range(2, 2 + expected))


def _ahead_state(n_open, n_waiting, far_ahead):
    """A leaf-wise state of ``n_open`` open leaves 1..n_open (leaf 1 the best) whose best
    ``n_waiting`` were split ahead of their turn, and, with ``far_ahead``, the worst one
    too: an ahead leaf's slot went to its two children, which wait with slots of their
    own and gains below every open leaf's. Returns (ints, gain, state, flags, its slots)."""
    from boostwood._kernels.expand import F_AHEAD, F_WAITING, N_COUNTERS, ST_LEAVES, ST_OPEN
    from boostwood._kernels.nodes import N_NODE_INTS, ND_COUNT, ND_LEFT, ND_RIGHT
    cap = 64
    ints = np.full((N_NODE_INTS, cap), -1, dtype=np.int64)
    ints[ND_COUNT] = 100  # every leaf small
    gain = np.zeros(cap)
    open_ids = np.zeros(cap, dtype=np.int64)
    open_ids[:n_open] = np.arange(1, n_open + 1)
    gain[1:n_open + 1] = np.arange(n_open, 0, -1) + 1.0
    flags = np.zeros(cap, dtype=np.uint8)
    slot_of = np.full(cap, -1, dtype=np.int64)
    slot_of[1:n_open + 1] = np.arange(n_open)  # the open leaves' own slots
    ahead = list(range(1, n_waiting + 1)) + ([n_open] if far_ahead else [])
    for i, k in enumerate(ahead):
        flags[k] = F_AHEAD
        slot_of[k] = -1
        left = 20 + 2 * i
        ints[ND_LEFT, k], ints[ND_RIGHT, k] = left, left + 1
        flags[left:left + 2] = F_WAITING
        slot_of[left:left + 2] = (30 + 2 * i, 31 + 2 * i)
        gain[left:left + 2] = (0.5, 0.25)  # below every open leaf
    counters = np.zeros(N_COUNTERS, dtype=np.int64)
    counters[ST_OPEN], counters[ST_LEAVES] = n_open, n_open
    state = (slot_of, np.zeros(cap, dtype=np.int64), open_ids, counters)
    return ints, gain, state, flags, set(slot_of[slot_of >= 0].tolist())


@pytest.mark.parametrize("max_leaves, far_ahead, batch", [
    (20, False, [5, 6]), (19, True, [5, 6]), (14, True, [])])
def test_turns_taken_before_a_batch_retire_the_leaves_they_put_out_of_reach(
        max_leaves, far_ahead, batch):
    """Each leaf split ahead that takes its turn before the next batch is chosen uses up
    one leaf of ``max_leaves``: the loop retires again after each turn, so the open
    leaves never pass the leaves left to take, and those that cannot be reached give
    their histograms back, with their waiting children's when they were split ahead
    too (``far_ahead``: the worst open leaf); when the turns use up the budget, every
    slot comes back. Without it, four turns left 14 leaves open against 6 left to take:
    on 16 threads the pool outgrew held_histograms, doubled, and the peak memory of a
    255-leaf fit rose by 28 MiB."""
    from boostwood._kernels.expand import (LOSSGUIDE, ST_FREE, ST_LEAVES, ST_OPEN,
                                           _leafwise_batch)
    n_open, n_waiting = 10, 4
    ints, gain, state, flags, slots = _ahead_state(n_open, n_waiting, far_ahead)
    slot_of, free, open_ids, counters = state
    policy = (LOSSGUIDE, 0, max_leaves, 1, 0.0, 1.0, 16384)
    got = _leafwise_batch(policy, state, (np.full(64, -1, dtype=np.int64), flags), gain,
                          ints, 2)
    assert got.tolist() == batch  # the best leaf not split ahead and one more, or none
    assert counters[ST_LEAVES] == n_open + n_waiting  # the four took their turns
    assert counters[ST_OPEN] <= max_leaves - counters[ST_LEAVES], counters[ST_OPEN]
    held = set(slot_of[slot_of >= 0].tolist())
    released = free[:counters[ST_FREE]].tolist()
    # every slot once: held or given back, never both, never twice
    assert len(released) == len(set(released)) and not held & set(released)
    assert held | set(released) == slots
    open_now = open_ids[:counters[ST_OPEN]]
    assert len(held) == len(open_now) and all(slot_of[k] >= 0 for k in open_now)
    if far_ahead:  # the worst leaf, split ahead, was retired with its waiting children
        assert n_open not in open_now.tolist() and slot_of[[26, 27]].tolist() == [-1, -1]


SIXTEEN_THREADS_FIT = """
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
from bench_higgs import make_higgs_like
import boostwood as bw
from boostwood._kernels.expand import ST_AHEAD
from boostwood.tree import grower, histogram
pools, ahead = [], []
grow, ensure_free = grower.TreeGrower.grow, histogram.HistogramBuilder.ensure_free
def counted_grow(self, *args, **kwargs):
    out = grow(self, *args, **kwargs)
    pools.append((self.builder.hist.shape[0], self.held_histograms()))
    ahead.append(int(self.expansion_counters[ST_AHEAD]))
    return out
def no_growth(self, n_free):
    before = self.hist.shape[0]
    ensure_free(self, n_free)
    assert self.hist.shape[0] == before, ("the pool grew", before, self.hist.shape[0])
grower.TreeGrower.grow = counted_grow
histogram.HistogramBuilder.ensure_free = no_growth
X, y = make_higgs_like(100_000)
params = dict(objective="binary:logistic", grow_policy="lossguide", max_leaves=255,
              max_depth=0, min_child_weight=1e-3, min_data_in_leaf=20, nthread=16)
bw.train(params, bw.Dataset(X, y), 4, verbose_eval=False)
print(min(ahead), max(p for p, _ in pools), min(h for _, h in pools))
"""


def test_a_leafwise_fit_on_16_threads_never_outgrows_its_histogram_pool():
    """On 16 threads (numba's threads, here on however many cores) a 255-leaf fit splits
    leaves ahead of their turn, and its pool, sized by held_histograms(16) (159
    histograms), never has to grow: before the leaves put out of reach were retired
    after each turn (1f6e8c6), this fit doubled the pool from 159 to 318, a copy of
    every slot (on 800k rows a tree held 170 histograms, and the peak rose 28 MiB)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isfile(os.path.join(root, "benchmarks", "bench_higgs.py")):
        pytest.skip("needs the repository's benchmarks/bench_higgs.py (its data)")
    env = dict(os.environ, NUMBA_NUM_THREADS="16")
    done = subprocess.run([sys.executable, "-c", SIXTEEN_THREADS_FIT, root], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    min_ahead, pool, held = (int(v) for v in done.stdout.split()[-3:])
    assert min_ahead > 0  # every tree split leaves ahead: the case is the one meant
    assert pool == held == 255 // 2 + 2 + 2 * 15


def test_without_leaves_split_ahead_the_loop_is_compiled_without_that_code(monkeypatch):
    """Below AHEAD_MIN_THREADS (or with ahead_max_rows 0) the grower passes no order to
    expand_tree, so numba compiles the loop without the splitting-ahead code (the
    first fit's compile is about 2-3 s shorter); the tree is the same."""
    from numba import types
    from boostwood._kernels.expand import expand_tree
    monkeypatch.setattr(TreeGrower, "ahead_max_rows", 0)
    d, gh = _data()
    _assert_twin(d, gh, "lossguide", CONFIGS[0][1])
    order_types = {sig[11] for sig in expand_tree.signatures}
    assert any(isinstance(t, types.NoneType) for t in order_types), order_types


def test_node_features_draws_n_pick_uniformly_from_the_key_alone():
    """colsample_bynode's draw: exactly n_pick features, a function of the node's key
    only, every feature about equally often over many keys, and children's keys differ
    from each other and from their parent's."""
    from boostwood._kernels.expand import child_keys, node_features
    A, n_pick, n_keys = 10, 3, 4000
    counts = np.zeros(A)
    out, again = np.empty(A, np.uint8), np.empty(A, np.uint8)
    for key in range(n_keys):
        node_features(np.uint64(key * 7919 + 1), n_pick, out)
        node_features(np.uint64(key * 7919 + 1), n_pick, again)
        assert out.sum() == n_pick and np.array_equal(out, again)
        counts += out
    expected = n_keys * n_pick / A  # 1200; binomial sd about 29
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected * (1 - n_pick / A)))
    keys = np.zeros(7, dtype=np.uint64)
    keys[0] = 12345
    child_keys(keys, np.array([0]), 1)
    child_keys(keys, np.array([1, 2]), 3)
    assert len(set(keys.tolist())) == 7


@pytest.mark.parametrize("policy,kw", [("lossguide", dict(max_depth=0, max_leaves=255)),
                                       ("lossguide", dict(max_depth=0, max_leaves=15)),
                                       ("depthwise", dict(max_depth=8))])
def test_colsample_bynode_grows_in_the_compiled_loop(policy, kw, monkeypatch):
    """Per-node feature draws are made inside the compiled loop: no Python step per
    node (as many Python calls per tree at 255 leaves as at 15), the same model on 1
    and 2 threads, and each node restricted (one feature per node: the splits spread
    over the features where one feature would win everywhere)."""
    def python_step(*args):
        raise AssertionError("the Python expansion loop ran")

    calls = []
    real = grower_module.expand_tree

    def spy(*args):
        calls.append(1)
        return real(*args)

    X, y = make_classification(6000, 6, seed=3)
    X[:, 0] = y + 0.3 * np.random.default_rng(0).normal(size=len(y))  # wins alone
    params = {"objective": "binary:logistic", "grow_policy": policy, "seed": 4,
              "colsample_bynode": 1 / 6, "min_data_in_leaf": 5, "verbosity": 0, **kw}
    monkeypatch.setattr(grower_module.TreeGrower, "_expand", python_step)
    monkeypatch.setattr(grower_module.TreeGrower, "_scan", python_step)
    monkeypatch.setattr(grower_module, "expand_tree", spy)
    models = [bw.train({**params, "nthread": t}, bw.Dataset(X, y), 3) for t in (1, 2)]
    assert models[0]._to_dict()["trees"] == models[1]._to_dict()["trees"]
    assert len(calls) <= 2 * 3 * 2  # a call per tree, and a stop for room at most
    used = np.concatenate([t.feature[t.feature >= 0] for t in models[0].trees])
    assert len(set(used.tolist())) >= 4 and np.mean(used == 0) < 0.6


@pytest.mark.parametrize("tree_method,policy", [("exact", "lossguide"), ("exact", "depthwise"),
                                                ("approx", "lossguide")])
def test_the_python_loop_takes_its_batches_from_the_compiled_policy(tree_method, policy,
                                                                    monkeypatch):
    """One policy: the growers still stepped from Python (exact, local approx, the
    criterion trees node by node) choose their batches and retire leaves with the
    compiled loop's next_batch and retire_next; tree/ keeps no heap or batch rule."""
    import ast
    import inspect
    calls = {"next_batch": 0, "retire_next": 0}
    for name in calls:
        real = getattr(grower_module, name)

        def spy(*args, _real=real, _name=name):
            calls[_name] += 1
            return _real(*args)
        monkeypatch.setattr(grower_module, name, spy)
    X, y = make_classification(3000, 5, seed=1)
    kw = dict(max_depth=0, max_leaves=12) if policy == "lossguide" else dict(max_depth=4)
    bw.train({"objective": "binary:logistic", "tree_method": tree_method,
              "approx_proposal": "local", "grow_policy": policy, "verbosity": 0, **kw},
             bw.Dataset(X, y), 2)
    assert calls["next_batch"] >= 2 * (11 if policy == "lossguide" else 4)
    assert calls["retire_next"] >= (calls["next_batch"] if policy == "lossguide" else 0)
    source = inspect.getsource(grower_module)
    imported = {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import)
                for a in n.names}
    assert "heapq" not in imported and "_next_batch" not in source


def _grow_masked(d, gh, policy, kw, features, root_mask=None, bynode=1.0, twin=False):
    """The loop's tree; with ``twin``, checked against the naive twin's first."""
    m = d.bin_mapper
    grower = TreeGrower(d.X_binned, m.n_bins, m.n_bins_max,
                        GrowerParams(grow_policy=policy, colsample_bynode=bynode, **kw))
    tree, segments = grower.grow(gh, None, np.asarray(features, dtype=np.int64),
                                 np.random.default_rng(1), root_mask=root_mask)
    if twin:
        leaf_rows = [grower.buf[b, s:s + c].copy() for b, s, c in zip(*segments[:3])]
        assert_twin(grower, tree, leaf_rows,
                    twin_of(grower, rng=np.random.default_rng(1), root_mask=root_mask))
    return tree


@pytest.mark.parametrize("policy,kw", [CONFIGS[0], CONFIGS[3]])
def test_a_root_mask_grows_the_tree_of_the_features_it_allows(policy, kw):
    """The per-node feature mask (the seam of feature constraints): a mask given at the
    root, inherited by every child, grows the tree of the allowed features alone, and
    the naive twin's; unconstrained trees pass None, and numba compiles no mask code."""
    from numba import types
    from boostwood._kernels.expand import expand_tree
    d, gh = _data()
    allowed = [0, 2, 3, 5, 6]
    root_mask = np.isin(np.arange(7), allowed)
    alone = _grow_masked(d, gh, policy, kw, allowed)
    assert alone.n_leaves > 8
    masked = _grow_masked(d, gh, policy, kw, np.arange(7), root_mask, twin=True)
    for f in TREE_FIELDS:
        assert np.array_equal(getattr(masked, f), getattr(alone, f)), f
    assert any(isinstance(sig[15], types.NoneType) for sig in expand_tree.signatures)
    with pytest.raises(ValueError, match="root_mask has shape"):
        _grow_masked(d, gh, policy, kw, np.arange(7), root_mask[:5])


def test_a_root_mask_and_colsample_bynode_allow_what_both_allow():
    """With colsample_bynode, a node splits on the features both its mask and its draw
    allow; the loop grows the naive twin's tree, and it uses no masked feature."""
    d, gh = _data()
    root_mask = np.isin(np.arange(7), [0, 1, 2, 4, 6])
    kw = dict(max_depth=0, max_leaves=40, min_data_in_leaf=5)
    tree = _grow_masked(d, gh, "lossguide", kw, np.arange(7), root_mask, bynode=0.5, twin=True)
    used = set(tree.feature[tree.feature >= 0].tolist())
    assert used <= {0, 1, 2, 4, 6} and len(used) >= 3
    unmasked = _grow_masked(d, gh, "lossguide", kw, np.arange(7), bynode=0.5, twin=True)
    assert not np.array_equal(unmasked.feature, tree.feature)
