"""The binned forest walk (predict_binned): bit-identical to the general kernel and to
the naive walk of each tree, on every kind of tree, input dtype and block size."""
import numpy as np
import pytest

import boostwood as bw
from boostwood._kernels.predict import predict_raw
from boostwood._kernels.predict_binned import (MAX_FEATURES, PADDED_CUTS, count_below,
                                               count_below_padded, predict_binned)
from boostwood._kernels.reference import predict_tree_naive
from boostwood.tree import tree as tree_mod
from boostwood.tree.tree import binned_nodes, pack_trees


def _general(X, packed, start):
    out = np.full((X.shape[0], packed["group"].max() + 1), start, dtype=np.float64)
    predict_raw(X, packed["nodes"], packed["value"], packed["offsets"], packed["group"], out)
    return out


def _binned(X, packed, start):
    out = np.full((X.shape[0], packed["group"].max() + 1), start, dtype=np.float64)
    predict_binned(X, *packed["binned"], packed["value"], packed["offsets"], packed["group"],
                   out)
    return out


def _data(r, n, p):
    X = r.normal(size=(n, p))
    X[r.random(X.shape) < 0.15] = np.nan
    return X


def _hard_rows(r, packed, n, p):
    """Rows with NaN, +-inf and values exactly at, and one ulp around, split thresholds."""
    X = _data(r, n, p) * 2
    X[:5, 0], X[5:10, 1] = np.inf, -np.inf
    feature, threshold = packed["nodes"][:2]
    split = np.nonzero(feature >= 0)[0]
    pick = r.choice(split, size=min(n, 3 * split.size))
    rows = r.integers(10, n, size=pick.size)
    nudge = r.integers(-1, 2, size=pick.size)
    X[rows, feature[pick]] = np.where(nudge == 0, threshold[pick],
                                      np.nextafter(threshold[pick], np.where(nudge > 0, np.inf, -np.inf)))
    return X


@pytest.mark.parametrize("policy,objective", [("depthwise", "reg:squarederror"),
                                              ("lossguide", "reg:squarederror"),
                                              ("lossguide", "multi:softprob")])
def test_binned_walk_equals_the_general_kernel_and_the_naive_walk(policy, objective):
    r = np.random.default_rng(7)
    X = _data(r, 3000, 6)
    y = np.nan_to_num(X[:, 0]) * 2 + np.nan_to_num(X[:, 1]) ** 2 + r.normal(size=3000)
    params = dict(grow_policy=policy, objective=objective, max_depth=5 if policy == "depthwise"
                  else 0, max_leaves=0 if policy == "depthwise" else 40, eta=0.3,
                  min_data_in_leaf=2)
    if objective.startswith("multi"):
        params["num_class"] = 3
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    b = bw.train(params, bw.Dataset(X, y), 12, verbose_eval=False)
    packed = pack_trees(b.trees, b.n_outputs)
    assert packed["binned"] is not None
    steps, depth = packed["binned"][3:5]
    assert np.array_equal(depth, [t.depth() for t in b.trees])
    if policy == "depthwise":  # balanced trees: every row walks in lock-step to a leaf
        assert np.all(steps == depth)
    else:  # deep leaf-wise trees leave stragglers to the second phase
        assert np.any(steps < depth)
    for n in (1, 3, 7, 9, 1001):  # blocks and walks of 8 and 4 rows with leftovers
        Xp = _hard_rows(r, packed, n, 6) if n > 10 else _data(r, n, 6)
        with np.errstate(over="ignore"):  # a threshold of +inf (NaN-only split), one ulp below
            Xp32 = Xp.astype(np.float32)
        for data in (Xp, Xp32):
            general = _general(data, packed, 0.5)
            assert np.array_equal(_binned(data, packed, 0.5), general)
            naive = np.zeros_like(general)
            for i, t in enumerate(b.trees):
                naive[:, i % b.n_outputs] += predict_tree_naive(
                    data.astype(np.float64), t.feature, t.threshold, t.left, t.right,
                    t.default_left, t.value)
            np.testing.assert_allclose(general - 0.5, naive, rtol=1e-12, atol=1e-12)
        raw = b.predict(Xp, output_margin=True)
        assert np.array_equal(raw.reshape(n, -1), _general(Xp, packed, b.base_score[0]))


def test_missing_values_follow_default_left_both_ways_and_any_lock_steps_match():
    """A hand-made tree: NaN in x0 goes right, in x1 left; walked with every row in
    lock-step to its leaves (steps = depth) and with every row left to the second phase
    (steps = 0)."""
    from boostwood.tree import Tree
    feature = np.array([0, 1, -1, -1, -1], np.int32)
    left, right = np.array([1, 3, -1, -1, -1], np.int32), np.array([2, 4, -1, -1, -1], np.int32)
    tree = Tree(feature, np.array([0.5, 1.5, 0, 0, 0]), left, right,
                np.array([0, 1, 0, 0, 0], np.uint8), np.array([0, 0, 30.0, 10.0, 20.0]),
                np.zeros(5), np.ones(5), np.ones(5))
    packed = pack_trees([tree])
    X = np.array([[np.nan, 0.0], [0.0, np.nan], [np.nan, np.nan], [0.5, 1.5], [0.6, 1.6],
                  [np.nextafter(0.5, 1), 0.0], [0.0, np.nextafter(1.5, 2)]] * 3)
    expect = np.array([30, 10, 30, 10, 30, 30, 20.0] * 3)
    assert np.array_equal(_binned(X, packed, 0.0)[:, 0], expect)
    cuts, cut_start, nodes, steps, depth, *top = packed["binned"]
    assert np.array_equal(steps, [2]) and np.array_equal(depth, [2])
    out = np.zeros((X.shape[0], 1))
    predict_binned(X, cuts, cut_start, nodes, np.zeros_like(steps), depth, *top,
                   packed["value"], packed["offsets"], packed["group"], out)
    assert np.array_equal(out[:, 0], expect)


@pytest.mark.parametrize("policy", ["lossguide", "depthwise"])
def test_any_lock_steps_from_none_to_the_depth_give_the_same_sums(policy):
    """How far rows walk in lock-step is a speed choice only: random steps per tree
    (0 to the tree's depth, each in its own draw) all give the general kernel's sums."""
    r = np.random.default_rng(12)
    X = _data(r, 4000, 5)
    y = np.nan_to_num(X[:, 0]) * 3 - np.nan_to_num(X[:, 2]) ** 2 + r.normal(size=4000)
    b = bw.train(dict(grow_policy=policy, max_leaves=60 if policy == "lossguide" else 0,
                      max_depth=0 if policy == "lossguide" else 6, min_data_in_leaf=1, eta=0.3),
                 bw.Dataset(X, y), 8, verbose_eval=False)
    packed = pack_trees(b.trees)
    cuts, cut_start, nodes, steps, depth, *top = packed["binned"]
    Xp = _hard_rows(r, packed, 2001, 5)
    general = _general(Xp, packed, 0.0)
    for _ in range(4):
        drawn = r.integers(0, depth + 1)
        out = np.zeros_like(general)
        predict_binned(Xp, cuts, cut_start, nodes, drawn, depth, *top, packed["value"],
                       packed["offsets"], packed["group"], out)
        assert np.array_equal(out, general)


@pytest.mark.parametrize("policy,n_class,rounds", [("lossguide", 1, 19), ("depthwise", 1, 16),
                                                    ("lossguide", 3, 7)])
def test_calls_of_a_few_rows_walk_eight_trees_at_once_with_the_same_sums(policy, n_class,
                                                                          rounds):
    """Blocks of fewer than eight rows (every block of a call of up to 56 rows, the last
    block of some longer ones) walk eight trees at a time per row: every row alone and in
    runs of up to 65 rows gets the general kernel's sums to the bit, on rows at, and one
    ulp around, the thresholds, with NaN and +-inf, for 16 trees (two groups of eight)
    and for 19 and 21 (the last ones one at a time)."""
    r = np.random.default_rng(21)
    X = _data(r, 3000, 5)
    y = np.nan_to_num(X[:, 0]) * 3 - np.nan_to_num(X[:, 2]) ** 2 + r.normal(size=3000)
    params = dict(grow_policy=policy, max_leaves=50 if policy == "lossguide" else 0,
                  max_depth=0 if policy == "lossguide" else 6, min_data_in_leaf=1, eta=0.3)
    if n_class > 1:
        params.update(objective="multi:softprob", num_class=n_class)
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    b = bw.train(params, bw.Dataset(X, y), rounds, verbose_eval=False)
    packed = pack_trees(b.trees, b.n_outputs)
    assert len(b.trees) == rounds * n_class
    Xp = _hard_rows(r, packed, 400, 5)
    general = _general(Xp, packed, 0.25)
    for size in (1, 2, 7, 20, 63, 65):  # 65 rows: blocks of 9 and a last block of 2
        for lo in range(0, 140, size):
            part = Xp[lo:lo + size]
            assert np.array_equal(_binned(part, packed, 0.25), general[lo:lo + len(part)])


def test_lock_steps_follow_the_cover_share():
    """Leaves at depths 3, 1, 2, 2 holding 20, 50, 20, 10 % of a tree's cover: 2 steps
    in lock-step (50 % < 75 % <= 80 %); a tree with no cover counts leaves (depths 1,
    3, 3, 3: 25 % at depth 1, so 3 steps); a lone leaf walks none."""
    tree_of = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2])
    depth = np.array([3, 1, 2, 2, 3, 1, 3, 3, 0])
    weight = np.array([20.0, 50, 20, 10, 0, 0, 0, 0, 0])
    steps = tree_mod.lock_steps(tree_of, depth, weight, np.array([3, 3, 0]))
    assert np.array_equal(steps, [2, 3, 0])
    # an infinite cover counts for none, and does not spoil the trees after it: the
    # first tree keeps 50, 20, 10 at depths 1, 2, 2 (2 steps), the second 80 % at depth 1
    weight = np.array([np.inf, 50, 20, 10, 5, 80, 5, 10, 0])
    depth = np.array([3, 1, 2, 2, 3, 1, 3, 2, 0])
    steps = tree_mod.lock_steps(tree_of, depth, weight, np.array([3, 3, 0]))
    assert np.array_equal(steps, [2, 1, 0])


def test_count_below_is_a_lower_bound():
    r = np.random.default_rng(2)
    for n in (0, 1, 2, 3, 7, 8, 255, 300):
        cuts = np.sort(r.choice(np.arange(-1000, 1000) / 7, size=n, replace=False))
        pool = np.concatenate([cuts, np.nextafter(cuts, np.inf), np.nextafter(cuts, -np.inf),
                               r.uniform(-200, 200, 50), [-np.inf, np.inf]])
        padded = np.concatenate([[9.0, 9.0], cuts])  # cuts that start at an offset
        for x in pool:
            assert count_below(padded, 2, n, x) == np.searchsorted(cuts, x, side="left")


def test_count_below_padded_is_the_lower_bound_of_the_unpadded_cuts():
    r = np.random.default_rng(3)
    for n in (0, 1, 2, 127, 128, 129, PADDED_CUTS - 1):
        cuts = np.sort(r.choice(np.arange(-1000, 1000) / 7, size=n, replace=False))
        segment = np.concatenate([[9.0], cuts, np.full(PADDED_CUTS - n, np.inf)])
        pool = np.concatenate([cuts, np.nextafter(cuts, np.inf), np.nextafter(cuts, -np.inf),
                               r.uniform(-200, 200, 50), [-np.inf, np.inf, 1e308]])
        with np.errstate(over="ignore"):  # 1e308 is +inf in float32
            pool32 = pool.astype(np.float32)
        for x, x32 in zip(pool, pool32):
            assert count_below_padded(segment, 1, x) == np.searchsorted(cuts, x, side="left")
            assert count_below_padded(segment, 1, x32) == np.searchsorted(cuts, x32,
                                                                          side="left")


def _forest_with_cut_counts(counts):
    """Stumps (one per threshold) on feature j with counts[j] distinct thresholds."""
    from boostwood.tree import Tree
    r = np.random.default_rng(11)
    trees = []
    for j, n in enumerate(counts):
        for t in np.sort(r.choice(np.arange(-5000, 5000) / 997, size=n, replace=False)):
            trees.append(Tree(np.array([j, -1, -1], np.int32), np.array([t, 0, 0]),
                              np.array([1, -1, -1], np.int32), np.array([2, -1, -1], np.int32),
                              np.array([r.integers(2), 0, 0], np.uint8),
                              np.array([0, r.normal(), r.normal()]), np.zeros(3),
                              np.ones(3), np.ones(3)))
    return trees


@pytest.mark.parametrize("pad", [True, False])
def test_cut_segments_either_side_of_the_padded_size_bin_exactly(monkeypatch, pad):
    """Features of 255, 256 and 257 thresholds (padded to 256, or one +inf after: never
    a 256-entry segment that is not padded) and of 3; or no padding at all (more features
    than MAX_PADDED_FEATURES): the binned walk equals the general kernel bit for bit."""
    if not pad:
        monkeypatch.setattr(tree_mod, "MAX_PADDED_FEATURES", 0)
    counts = (PADDED_CUTS - 1, PADDED_CUTS, PADDED_CUTS + 1, 3)
    packed = pack_trees(_forest_with_cut_counts(counts))
    cuts, cut_start = packed["binned"][:2]
    sizes = np.diff(cut_start)
    small = np.array([PADDED_CUTS - 1, 3])
    assert np.array_equal(sizes, [PADDED_CUTS if pad else small[0], PADDED_CUTS + 1,
                                  PADDED_CUTS + 2, PADDED_CUTS if pad else small[1]])
    r = np.random.default_rng(4)
    X = _hard_rows(r, packed, 3000, len(counts))
    assert np.array_equal(_binned(X, packed, 0.25), _general(X, packed, 0.25))


def test_forests_the_binned_walk_cannot_read_fall_back_exactly(monkeypatch):
    feature = np.array([0, 1, -1, -1, -1], np.int32)
    nodes = (feature, np.array([0.5, 1.5, 0, 0, 0]), np.array([1, 3, -1, -1, -1], np.int32),
             np.array([2, 4, -1, -1, -1], np.int32), np.array([0, 1, 0, 0, 0], np.uint8),
             np.zeros(5, np.uint8))
    at, cover = np.array([0]), np.ones(5)
    assert binned_nodes(nodes, at, cover) is not None
    categorical = nodes[:5] + (np.array([1, 0, 0, 0, 0], np.uint8),)
    assert binned_nodes(categorical, at, cover) is None
    apart = nodes[:2] + (np.array([2, 3, -1, -1, -1], np.int32),
                         np.array([1, 4, -1, -1, -1], np.int32)) + nodes[4:]
    assert binned_nodes(apart, at, cover) is None
    assert binned_nodes((feature, np.array([np.nan, 1.5, 0, 0, 0])) + nodes[2:], at,
                        cover) is None
    wide = (np.array([MAX_FEATURES, 1, -1, -1, -1], np.int32),) + nodes[1:]
    assert binned_nodes(wide, at, cover) is None
    # more distinct thresholds on one feature than bins can name: the other kernels
    r = np.random.default_rng(5)
    X = r.normal(size=(2000, 3))
    y = X[:, 0] + r.normal(size=2000)
    b = bw.train(dict(max_depth=4, tree_method="exact"), bw.Dataset(X, y), 5,
                 verbose_eval=False)
    assert pack_trees(b.trees)["binned"] is not None
    monkeypatch.setattr(tree_mod, "MAX_CUTS", 3)
    packed = pack_trees(b.trees)
    assert packed["binned"] is None and packed["levels"] is not None
    b._packed = {}
    assert np.array_equal(b.predict(X, output_margin=True),
                          _general(X, packed, b.base_score[0])[:, 0])


def _leaf_tree(value):
    from boostwood.tree import Tree
    return Tree(np.array([-1], np.int32), np.zeros(1), np.array([-1], np.int32),
                np.array([-1], np.int32), np.zeros(1, np.uint8), np.array([value]), np.zeros(1),
                np.ones(1), np.ones(1))


def test_top_levels_fill_the_positions_below_a_leaf_with_it():
    """A root whose left child is a leaf and whose right child splits into two leaves:
    as a complete tree of TOP_LEVELS levels and the level below, numbered level by level,
    the leaf (node 1) stands at every position below it, the deeper leaves (3, 4) at
    theirs; a leaf's split never sends a row right (slot 0, the largest bin), and a split
    keeps its slot and threshold bin."""
    from boostwood.tree import Tree
    feature = np.array([0, -1, 1, -1, -1], np.int32)
    tree = Tree(feature, np.array([0.5, 0, 1.5, 0, 0]), np.array([1, -1, 3, -1, -1], np.int32),
                np.array([2, -1, 4, -1, -1], np.int32), np.array([1, 0, 0, 0, 0], np.uint8),
                np.array([0, 1.0, 0, 3.0, 4.0]), np.zeros(5), np.ones(5), np.ones(5))
    packed = pack_trees([_leaf_tree(2.0), tree])
    slot, thr, node = packed["binned"][5:]
    n = (1 << tree_mod.TOP_LEVELS) - 1  # the positions of the top levels
    assert thr.dtype == np.uint8 and slot.shape == (2, n) and node.shape == (2, 2 * n + 1)
    assert np.all(node[0] == 0) and np.all(thr[0] == 255) and np.all(slot[0] == 0)
    children = {0: (1, 2), 2: (3, 4)}  # a leaf stands at both positions below it
    expect, level = [0], [0]
    for _ in range(tree_mod.TOP_LEVELS):  # 1, 2 below the root; 1, 1, 3, 4 below them
        level = [c for k in level for c in children.get(k, (k, k))]
        expect += level
    assert np.array_equal(node[1], expect)
    # root: feature 0, NaN left (slot 0), cut 0; node 2: feature 1, NaN right (slot 3)
    assert (slot[1, 0], thr[1, 0]) == (0, 0) and (slot[1, 2], thr[1, 2]) == (3, 0)
    assert slot[1, 1] == 0 and thr[1, 1] == 255  # the leaf below the root, level 1
    X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 2.0], [np.nan, np.nan], [1.0, np.nan]] * 5)
    expect = 2.0 + np.array([1.0, 3.0, 4.0, 1.0, 4.0] * 5)
    assert np.array_equal(_binned(X, packed, 0.0)[:, 0], expect)


@pytest.mark.parametrize("wide", [False, True])
def test_trees_of_every_depth_above_below_and_at_the_top_levels_walk_exactly(wide):
    """Single leaves, stumps, and trees of depth 2 to 9 (balanced and lop-sided) in one
    forest, so that rows leave the top levels on leaves above their last level, at it
    and below it; one-byte bins, or two-byte (``wide``: 300 more stumps on one feature);
    blocks of 8 to 1001 rows (sixteen-row lock-step with leftovers): the general kernel's
    sums to the bit."""
    r = np.random.default_rng(31)
    X = _data(r, 3000, 4)
    y = np.nan_to_num(X[:, 0]) * 2 - np.abs(np.nan_to_num(X[:, 1])) + r.normal(size=3000)
    trees = [_leaf_tree(0.3)]
    for depth, policy in ((1, "depthwise"), (2, "depthwise"), (4, "depthwise"),
                          (5, "depthwise"), (0, "lossguide")):
        b = bw.train(dict(grow_policy=policy, max_depth=depth,
                          max_leaves=30 if policy == "lossguide" else 0, eta=0.3,
                          min_data_in_leaf=1), bw.Dataset(X, y), 3, verbose_eval=False)
        trees += b.trees
    trees.append(_leaf_tree(-0.1))
    packed = pack_trees(trees + (_forest_with_cut_counts((0, 300)) if wide else []))
    depth = packed["binned"][4]
    assert {0, 1, 2, 4, 5} <= set(depth.tolist()) and depth.max() > tree_mod.TOP_LEVELS + 2
    bins = packed["binned"][6].dtype
    assert bins == (np.uint16 if wide else np.uint8)
    Xp = _hard_rows(r, packed, 1001, 4)
    general = _general(Xp, packed, 0.0)
    assert np.array_equal(_binned(Xp, packed, 0.0), general)
    for n in (8, 15, 16, 17, 33):
        assert np.array_equal(_binned(Xp[:n * 8], packed, 0.0), general[:n * 8])


@pytest.mark.parametrize("n_cuts,bins", [(254, np.uint8), (255, np.uint8), (256, np.uint16)])
def test_bins_take_one_byte_up_to_255_cuts(n_cuts, bins):
    """255 cuts: bins 0..255 fit a byte, NaN sharing 255 with the values above every cut
    where it goes right (and 0 with those below every cut where it goes left); 256 cuts
    need two bytes. Either way, rows above every cut, below every cut, at the cuts and
    NaN get the general kernel's sums."""
    packed = pack_trees(_forest_with_cut_counts((n_cuts, 2)))
    assert packed["binned"][6].dtype == bins
    r = np.random.default_rng(8)
    X = _hard_rows(r, packed, 2000, 2)
    X[:20, 0] = [np.inf, -np.inf, np.nan, 1e9, -1e9] * 4
    assert np.array_equal(_binned(X, packed, 0.25), _general(X, packed, 0.25))


def test_a_forest_without_splits_walks_no_top_level():
    packed = pack_trees([_leaf_tree(1.5), _leaf_tree(-0.25)])
    assert packed["binned"] is not None and packed["binned"][1].shape == (1,)
    X = np.random.default_rng(0).normal(size=(100, 3))
    assert np.array_equal(_binned(X, packed, 0.0)[:, 0], np.full(100, 1.25))


def test_every_block_size_gives_the_general_sums():
    """Every size of the last lock-step group, which runs on into the block's padding
    rows, in blocks with top levels and without, sized for 0, 2, 3 and 16 threads;
    lock-step steps from none to the depth:
    the general kernel's sums."""
    r = np.random.default_rng(21)
    X = _data(r, 3000, 5)
    y = np.nan_to_num(X[:, 0]) * 3 - np.nan_to_num(X[:, 2]) ** 2 + r.normal(size=3000)
    b = bw.train(dict(grow_policy="lossguide", max_leaves=40, max_depth=0, eta=0.3),
                 bw.Dataset(X, y), 6, verbose_eval=False)
    packed = pack_trees(b.trees)
    cuts, cut_start, nodes, steps, depth, *top = packed["binned"]
    Xp = _hard_rows(r, packed, 1200, 5)
    # threads not known (0) and 16 threads: 1-140 rows: blocks of up to 18 rows, without
    # top levels; 512-639 rows: eight blocks of 64-80 rows, with them; 2 and 3 threads:
    # from 128 / 192 rows, one block a thread (a last group of every size from 5 to 16
    # every way); 16 threads and 1031 rows: 16 blocks
    for n in list(range(1, 141)) + list(range(512, 640)) + [1000, 1031]:
        general = _general(Xp[:n], packed, 0.0)
        for drawn, threads in ((steps, 0), (r.integers(0, depth + 1), 0), (steps, 2),
                               (r.integers(0, depth + 1), 3), (steps, 16)):
            out = np.zeros_like(general)
            predict_binned(Xp[:n], cuts, cut_start, nodes, drawn, depth, *top,
                           packed["value"], packed["offsets"], packed["group"], out, None,
                           threads)
            assert np.array_equal(out, general), (n, threads)
