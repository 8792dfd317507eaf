"""Tree: one fitted regression tree as flat node arrays, with no training state."""
import numpy as np

from .._config import NODE_DTYPE
from .._kernels.binning import MAX_PADDED_FEATURES
from .._kernels.predict_binned import (LEAF, MAX_CUTS, MAX_FEATURES, NO_RUN, PADDED_CUTS,
                                      STRAGGLER_SHARE, TOP_LEVELS, TOP_LEVELS_SETS)
from .._kernels.predict_masks import MAX_LEAVES, mask_tables
from .._kernels.splits import CATEGORICAL, NUMERIC, bitset_of, categories_of, goes_left_many

_INT_FIELDS = ("feature", "left", "right")
#: Largest category id + 1 a categorical split may hold (a set of 2**20 categories
#: is a 128 KiB bitset per node).
MAX_CATEGORY = 2 ** 20
_FLOAT_FIELDS = ("threshold", "value", "gain", "cover", "count")


class Tree:
    """A binary tree stored as parallel arrays indexed by node id (root = 0).

    Attributes
    ----------
    feature : ndarray of shape (n_nodes,), int32; -1 marks a leaf
    threshold : ndarray, float64; rows with ``x <= threshold`` go left
    threshold_bin : ndarray, int32; the same split on binned data (training only, not saved)
    left, right : ndarray, int32; child node ids (-1 for leaves)
    default_left : ndarray, uint8; where NaN goes
    value : ndarray, float64; node output, learning rate included (used at leaves)
    gain : ndarray, float64; split gain (eq. 7 of Chen & Guestrin), 0 at leaves
    cover : ndarray, float64; sum of hessians of the node's training rows
    count : ndarray, float64; number of training rows of the node
    split_kind : ndarray, uint8; NUMERIC (0) or CATEGORICAL (1) (see
        :mod:`boostwood._kernels.splits`); leaves are NUMERIC
    cat_start, cat_len : ndarray, int32; a categorical node's set is the words
        ``cat_bits[cat_start:cat_start + cat_len]`` (0, 0 for other nodes)
    cat_bits : ndarray, uint32; the category bitsets of this tree's categorical nodes

    Where a row goes is decided by :func:`boostwood._kernels.splits.goes_left` (or
    :meth:`goes_left` from Python) and nowhere else.
    """

    def __init__(self, feature, threshold, left, right, default_left, value,
                 gain, cover, count, threshold_bin=None):
        self.feature = np.asarray(feature, dtype=NODE_DTYPE)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=NODE_DTYPE)
        self.right = np.asarray(right, dtype=NODE_DTYPE)
        self.default_left = np.asarray(default_left, dtype=np.uint8)
        self.value = np.asarray(value, dtype=np.float64)
        self.gain = np.asarray(gain, dtype=np.float64)
        self.cover = np.asarray(cover, dtype=np.float64)
        self.count = np.asarray(count, dtype=np.float64)
        self.threshold_bin = (None if threshold_bin is None
                              else np.asarray(threshold_bin, dtype=NODE_DTYPE))
        n = self.feature.shape[0]
        self.split_kind = np.full(n, NUMERIC, dtype=np.uint8)
        self.cat_start = np.zeros(n, dtype=np.int32)
        self.cat_len = np.zeros(n, dtype=np.int32)
        self.cat_bits = np.zeros(0, dtype=np.uint32)

    def set_categorical(self, node, categories):
        """Make split ``node`` categorical: rows whose value is one of ``categories``
        (non-negative integers) go left, other values go right, NaN by ``default_left``."""
        cats = np.asarray(categories)
        if cats.size == 0 or not np.all(cats == np.round(cats)) or cats.min() < 0 \
                or cats.max() >= MAX_CATEGORY:
            raise ValueError(f"a categorical split needs categories in [0, {MAX_CATEGORY}), "
                             f"got {cats.tolist()[:5]}")
        words = bitset_of(cats.astype(np.int64))
        self.split_kind[node] = CATEGORICAL
        self.cat_start[node] = self.cat_bits.size
        self.cat_len[node] = words.size
        self.cat_bits = np.concatenate([self.cat_bits, words])
        self.threshold[node] = 0.0

    def categories(self, node):
        """The category set of a categorical node (ascending ints)."""
        s, n = int(self.cat_start[node]), int(self.cat_len[node])
        return categories_of(self.cat_bits[s:s + n])

    def goes_left(self, node, values):
        """Bool array: which of the raw ``values`` of node's feature go left (the one rule)."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        out = np.empty(values.shape[0], dtype=np.bool_)
        goes_left_many(values, int(node), self.split_kind, self.threshold, self.default_left,
                       self.cat_start, self.cat_len, self.cat_bits, out)
        return out

    def nodes(self):
        """The node arrays traversal kernels take, as one tuple (see ``_kernels/splits.py``)."""
        return (self.feature, self.threshold, self.left, self.right, self.default_left,
                self.split_kind, self.cat_start, self.cat_len, self.cat_bits)

    @property
    def n_nodes(self):
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.feature < 0))

    def is_leaf(self):
        return self.feature < 0

    def depth(self):
        """Depth of the deepest leaf (a single leaf has depth 0)."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes):  # children always have larger ids
            if self.feature[node] >= 0:
                depth[self.left[node]] = depth[node] + 1
                depth[self.right[node]] = depth[node] + 1
        return int(depth.max())

    def to_dict(self):
        """JSON-ready dict of the node arrays (see docs/model-format.md, version 2)."""
        d = {k: getattr(self, k).tolist() for k in _INT_FIELDS + _FLOAT_FIELDS}
        d["default_left"] = self.default_left.astype(int).tolist()
        d["split_kind"] = self.split_kind.astype(int).tolist()
        cat_nodes = np.nonzero(self.split_kind == CATEGORICAL)[0]
        if cat_nodes.size:
            d["cat_nodes"] = cat_nodes.tolist()
            d["cat_sets"] = [self.categories(k).tolist() for k in cat_nodes]
        return d

    @classmethod
    def from_dict(cls, d, n_features):
        """Rebuild a tree from :meth:`to_dict` output, checking that it is a valid tree.

        Raises ValueError on missing fields, mismatched lengths, child ids out of
        range, nodes reached twice or never (cycles, shared subtrees), features
        out of range, or non-finite thresholds and values.
        """
        try:
            arrays = {k: np.asarray(d[k], dtype=np.float64) for k in
                      _INT_FIELDS + _FLOAT_FIELDS + ("default_left",)}
        except KeyError as exc:
            raise ValueError(f"tree is missing the field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"tree has a malformed array: {exc}") from None
        n = arrays["feature"].shape
        if len(n) != 1 or n[0] == 0 or any(a.shape != n for a in arrays.values()):
            raise ValueError("tree arrays must be non-empty, 1-D and of equal length")
        for k in _INT_FIELDS + ("default_left",):
            a = arrays[k]
            if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
                raise ValueError(f"tree field {k!r} must hold integers")
        tree = cls(*(arrays[k] for k in ("feature", "threshold", "left", "right",
                                          "default_left", "value", "gain", "cover", "count")))
        tree._categorical_from_dict(d)
        tree.validate(n_features)
        return tree

    def _categorical_from_dict(self, d):
        """Split kinds and category sets of a format-v2 tree (v1 trees are all numeric)."""
        kinds = d.get("split_kind")
        if kinds is None:
            if "cat_nodes" in d or "cat_sets" in d:
                raise ValueError("tree has category sets but no split_kind")
            return
        try:
            kinds = np.asarray(kinds, dtype=np.float64)
            nodes = np.asarray(d.get("cat_nodes", []), dtype=np.float64)
            sets = d.get("cat_sets", [])
        except (TypeError, ValueError) as exc:
            raise ValueError(f"tree has malformed split kinds: {exc}") from None
        if kinds.shape != self.feature.shape or not np.all(np.isin(kinds, (NUMERIC, CATEGORICAL))):
            raise ValueError("tree field 'split_kind' must hold 0 or 1 per node")
        expect = np.nonzero(kinds == CATEGORICAL)[0]
        if nodes.ndim != 1 or not isinstance(sets, list) or len(sets) != nodes.size \
                or not np.array_equal(nodes, expect):
            raise ValueError("tree's cat_nodes must list its categorical nodes in order, "
                             "with one set each")
        for node, cats in zip(expect, sets):
            if self.feature[node] < 0:
                raise ValueError("a leaf cannot be a categorical split")
            try:
                values = np.asarray(cats, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError("a category set must be a list of integers") from None
            if values.ndim != 1:
                raise ValueError("a category set must be a list of integers")
            self.set_categorical(int(node), values)

    def validate(self, n_features):
        n = self.n_nodes
        split = self.feature >= 0
        if np.any(self.feature >= n_features) or np.any(self.feature < -1):
            raise ValueError("tree has a split on a feature out of range")
        if not np.all(np.isfinite(self.value)):
            raise ValueError("tree has non-finite leaf values")
        if np.any(np.isnan(self.threshold[split])):
            raise ValueError("tree has NaN thresholds")
        stats = (self.gain, self.cover, self.count)
        if not all(np.all(np.isfinite(a)) for a in stats) or np.any(self.cover < 0) \
                or np.any(self.count < 0):
            raise ValueError("tree has non-finite or negative gains, covers or counts")
        if np.any(self.default_left > 1):
            raise ValueError("tree field 'default_left' must be 0 or 1")
        cat = self.split_kind == CATEGORICAL
        if np.any(cat & ~split) or np.any(self.cat_len[cat] <= 0) \
                or np.any(self.cat_start[cat] + self.cat_len[cat] > self.cat_bits.size):
            raise ValueError("tree has inconsistent category sets")
        kids = np.concatenate([self.left[split], self.right[split]])
        if np.any(kids <= 0) or np.any(kids >= n):
            raise ValueError("tree has child ids out of range")
        seen = np.zeros(n, dtype=np.int64)
        np.add.at(seen, kids, 1)
        if seen[0] != 0 or np.any(seen[1:] != 1):
            raise ValueError("tree is not a tree: some node is reached twice or never")
        # children must come after their parent, which also rules out cycles
        if np.any(self.left[split] <= np.nonzero(split)[0]) or \
                np.any(self.right[split] <= np.nonzero(split)[0]):
            raise ValueError("tree nodes are not in parent-before-child order")
        # SHAP and the expected value weigh the children by cover: they must add up
        parent = self.cover[split]
        both = self.cover[self.left[split]] + self.cover[self.right[split]]
        if np.any(np.abs(both - parent) > 1e-6 * np.maximum(np.abs(parent), 1e-12)):
            raise ValueError("tree covers do not add up: a split's children must cover "
                             "what it covers")


def pack_trees(trees, n_groups=1, walks=True, coded=False):
    """The node arrays of ``trees`` concatenated for the traversal kernels.

    Returns a dict: ``nodes`` (the node tuple of :meth:`Tree.nodes`, child ids relative
    to each tree's first node, category words offset into one flat array), ``binned``
    (:func:`binned_nodes`, with ``binned_sets``: None for a numeric forest; ``coded``
    as there) and ``levels`` (:func:`level_nodes`, with ``level_sets``: None for a
    numeric forest), each None where the forest does not allow it (or ``walks`` is
    False: only the node tuple is needed),
    ``value``, ``cover``, ``offsets`` (first node of each tree) and ``group`` (tree i
    adds to output i mod n_groups).
    """
    sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
    offsets = np.zeros(len(trees), dtype=np.int64)
    if len(trees):
        offsets[1:] = np.cumsum(sizes)[:-1]

    def cat(name, dtype):
        if not trees:
            return np.zeros(0, dtype=dtype)
        return np.concatenate([getattr(t, name) for t in trees]).astype(dtype)

    words = [t.cat_bits.size for t in trees]
    word_base = np.repeat(np.cumsum([0] + words[:-1]), sizes).astype(np.int32) if trees \
        else np.zeros(0, dtype=np.int32)
    cat_start = cat("cat_start", np.int32) + word_base
    nodes = (cat("feature", np.int32), cat("threshold", np.float64), cat("left", np.int32),
             cat("right", np.int32), cat("default_left", np.uint8), cat("split_kind", np.uint8),
             cat_start, cat("cat_len", np.int32), cat("cat_bits", np.uint32))
    cover = cat("cover", np.float64)
    shape = walk_shape(nodes, offsets, cover) if walks else None
    binned = binned_nodes(nodes, offsets, cover, shape, coded) if shape else None
    value = cat("value", np.float64)
    return dict(nodes=nodes, feature=nodes[0],
                binned=binned and binned[0], binned_sets=binned and binned[1],
                masks=mask_nodes(nodes, value, offsets, *binned[0][:2])
                if binned and binned[1] is not None else None,
                levels=level_nodes(nodes, offsets, cover, shape) if shape else None,
                level_sets=level_sets(nodes),
                value=value, cover=cover, offsets=offsets,
                group=np.arange(len(trees), dtype=np.int64) % max(n_groups, 1))


#: The level-by-level walk (:func:`boostwood._kernels.predict.predict_levels`) takes a
#: tree's full depth for every row; it is used when no tree is deeper than this many
#: times the average depth of a row (leaf depths weighted by cover), i.e. on balanced
#: trees. 255-leaf leaf-wise trees (depth ~22, rows at ~9) fail it; depth-8 trees pass.
LEVEL_WALK_MAX_RATIO = 1.5


def walk_shape(nodes, offsets, cover):
    """What the branch-free walks need to know of a forest's shape, computed once:
    ``(tree of each node, deepest leaf of each tree, balanced, steps)`` -- balanced when
    no leaf is deeper than ``LEVEL_WALK_MAX_RATIO`` times the tree's mean leaf depth
    weighted by cover; ``steps`` the lock-step steps of the binned walk (see
    :func:`lock_steps`) -- or None (empty forest, or a split whose right child is not
    its left child + 1). Categorical splits are allowed here (the level walk takes
    them; the binned walk does not)."""
    feature, left, right = nodes[0], nodes[2], nodes[3]
    split = feature >= 0
    n, n_trees = feature.shape[0], offsets.shape[0]
    if n_trees == 0 or np.any(right[split] != left[split] + 1):
        return None
    tree_of = np.repeat(np.arange(n_trees), np.diff(np.append(offsets, n)))
    parents = np.nonzero(split)[0]
    children = offsets[tree_of[parents]] + left[parents].astype(np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for _ in range(n):  # one pass per level: a node's depth is its parent's + 1
        new = depth.copy()
        new[children] = new[children + 1] = depth[parents] + 1
        if np.array_equal(new, depth):
            break
        depth = new
    leaf = ~split
    max_depth = np.zeros(n_trees, dtype=np.int64)
    np.maximum.at(max_depth, tree_of[leaf], depth[leaf])
    w = np.maximum(cover[leaf], 0.0)
    mean = np.bincount(tree_of[leaf], w * depth[leaf], n_trees) / np.maximum(
        np.bincount(tree_of[leaf], w, n_trees), 1e-300)
    return (tree_of, max_depth, max_depth <= LEVEL_WALK_MAX_RATIO * np.maximum(mean, 1.0),
            lock_steps(tree_of[leaf], depth[leaf], w, max_depth))


def lock_steps(tree_of, depth, weight, max_depth):
    """Per tree, the least depth d whose leaves at depth <= d hold at least
    ``1 - STRAGGLER_SHARE`` of the tree's leaf weight (cover; one per leaf where a
    tree's cover sums to 0): the steps every row takes in lock-step in
    :func:`boostwood._kernels.predict_binned.predict_binned`, never above
    ``max_depth``. ``tree_of``, ``depth`` and ``weight`` are per leaf."""
    n_trees = max_depth.shape[0]
    weight = np.where(np.isfinite(weight), weight, 0.0)  # an inf or NaN cover counts for none
    total = np.bincount(tree_of, weight, n_trees)
    weight = np.where(total[tree_of] > 0, weight, 1.0)
    share = weight / np.bincount(tree_of, weight, n_trees)[tree_of]  # sums to 1 per tree
    order = np.lexsort((depth, tree_of))
    t, d, cum = tree_of[order], depth[order], np.cumsum(share[order])
    before = np.zeros(n_trees)
    before[1:] = np.cumsum(np.bincount(t, share[order], n_trees))[:-1]
    reached = cum - before[t] >= 1.0 - STRAGGLER_SHARE
    steps = max_depth.copy()
    np.minimum.at(steps, t[reached], d[reached])
    return steps


def level_nodes(nodes, offsets, cover, shape=None):
    """The node tuple of :func:`boostwood._kernels.predict.predict_levels`, or None when
    :func:`walk_shape` (``shape``, computed here when not given) says no, or a tree is
    too lopsided for the level walk (see ``LEVEL_WALK_MAX_RATIO``).

    Leaves point at themselves (``left`` = own id, threshold +inf, NaN goes left), so
    a step taken at a leaf stays there.
    """
    shape = shape or walk_shape(nodes, offsets, cover)
    if shape is None or not np.all(shape[2]):
        return None
    feature, threshold, left, default_left = nodes[0], nodes[1], nodes[2], nodes[4]
    split, n = feature >= 0, feature.shape[0]
    tree_of, max_depth = shape[:2]
    local = np.arange(n) - offsets[tree_of]
    return (np.where(split, feature, 0).astype(np.int32),
            np.where(split, threshold, np.inf),
            np.where(split, left, local).astype(np.int32),
            np.where(split, 1 - default_left, 0).astype(np.uint8), max_depth)


def level_sets(nodes):
    """The ``sets`` of :func:`boostwood._kernels.predict.predict_levels` (kind, cat_start,
    cat_len, cat_bits of every node, leaves numeric), or None for a numeric forest."""
    split, kind = nodes[0] >= 0, nodes[5]
    if not np.any(kind[split] != NUMERIC):
        return None
    return (np.where(split, kind, NUMERIC).astype(np.uint8),) + tuple(nodes[6:])


def binned_nodes(nodes, offsets, cover, shape=None, coded=False):
    """``(cuts, cut_start, nodes, steps, depth, top_slot, top_thr, top_node)`` and the
    ``sets`` of :func:`boostwood._kernels.predict_binned.predict_binned` (None for a
    numeric forest), or None when :func:`walk_shape` (``shape``, computed here when not
    given) says no, or the forest has a NaN threshold, more than ``MAX_CUTS`` distinct
    thresholds on one feature, a feature id of ``MAX_FEATURES`` or more, or a
    categorical split while ``coded`` is False.

    Each feature's cuts are its distinct split thresholds, sorted; a split's word holds
    the index of its threshold among them and the slot of its feature that sorts NaN to
    the ``default_left`` side, and ``nodes`` holds each node's word and, in the high 32
    bits, its left child (see the kernel's module for the layout).
    Each feature's cuts are followed by +inf to ``PADDED_CUTS`` entries where it has
    fewer (unless the forest uses more than ``MAX_PADDED_FEATURES`` features), by one
    +inf where it has more or as many: a segment of exactly ``PADDED_CUTS`` entries is
    always a padded one, as the kernel takes it. ``steps`` is each tree's lock-step
    steps (:func:`lock_steps`), ``depth`` its deepest leaf.

    ``coded`` says that every categorical feature of the input will hold category codes
    (0, 1, ...) or NaN, as a model's dictionaries code it (``Booster`` recodes every
    input); a categorical feature's cuts are then :func:`_set_bins`', and its nodes go
    by :func:`_set_runs`.
    """
    shape = shape or walk_shape(nodes, offsets, cover)
    if shape is None:
        return None
    feature, threshold, left, default_left, kind = nodes[0], nodes[1], nodes[2], nodes[4], \
        nodes[5]
    split, n = feature >= 0, feature.shape[0]
    is_set = split & (kind != NUMERIC)
    if np.any(is_set) and not coded:
        return None
    numeric = split & ~is_set
    f, th = feature[numeric].astype(np.int64), threshold[numeric]
    bound_f, bound_c, members = _set_bins(nodes, is_set) if np.any(is_set) else \
        (np.zeros(0, np.int64), np.zeros(0, np.int64), None)
    if np.any(np.isnan(th)) or (feature.size and feature.max() >= MAX_FEATURES) \
            or np.intersect1d(f, bound_f).size:
        return None
    fa, ta = np.concatenate([f, bound_f]), np.concatenate([th, bound_c - 0.5])
    order = np.lexsort((ta, fa))
    fs, ts = fa[order], ta[order]
    first = np.ones(fs.size, dtype=bool)  # the first of each distinct (feature, threshold)
    first[1:] = (fs[1:] != fs[:-1]) | (ts[1:] != ts[:-1])
    counts = np.bincount(fs[first], minlength=int(fa.max()) + 1 if fa.size else 0)
    if counts.size and counts.max() > MAX_CUTS:
        return None
    cut_start = np.zeros(counts.size + 1, dtype=np.int64)
    cut_start[1:] = np.cumsum(counts)
    index = np.empty(fs.size, dtype=np.int64)
    index[order] = np.cumsum(first) - 1 - cut_start[fs]  # the threshold's rank among its cuts
    cuts, cut_start = _padded_cuts(ts[first].astype(np.float64), cut_start,
                                   counts.size <= MAX_PADDED_FEATURES)
    words = np.full(n, LEAF, dtype=np.uint32)
    words[numeric] = index[:f.size] | ((2 * f + (default_left[numeric] == 0)) << 17)
    tree_of, max_depth, _, steps = shape
    children = np.where(split, left, np.arange(n) - offsets[tree_of]).astype(np.uint64)
    bins = np.uint8 if counts.size == 0 or counts.max() <= np.iinfo(np.uint8).max \
        else np.uint16  # bins 0..cuts; NaN as 0 or the largest (see the kernel's module)
    if not np.any(is_set):
        entries = (children << np.uint64(32)) | words.astype(np.uint64)
        return (cuts, cut_start, entries, steps, max_depth) + top_levels(
            entries, offsets, bins, TOP_LEVELS), None
    if children.max() > 0x7FFF:  # the child shares its half with z and lo
        return None
    lo, z, aux, set_words = _set_runs(nodes, is_set, members, counts, words,
                                      (int(np.iinfo(bins).max) >> 5) + 1)
    entries = (children << np.uint64(32)) | words.astype(np.uint64)
    top = top_levels(entries, offsets, bins, TOP_LEVELS_SETS)
    at = offsets[:, None] + top[2][:, :top[0].shape[1]].astype(np.int64)
    entries |= (lo.astype(np.uint64) << np.uint64(48)) | (z.astype(np.uint64) << np.uint64(47))
    top_lo = np.where(lo[at] == NO_RUN, 0, lo[at]).astype(bins)
    return (cuts, cut_start, entries, steps, max_depth) + top, \
        (aux, set_words, aux[at], top_lo, z[at].astype(bins))


#: Most bytes the leaf-mask walk's tables of one forest may take (else the binned walk):
#: 100 trees on 7 features of 256 to 342 bins take 1.0 MiB at depth 6 (one word per
#: entry) and 1.3-1.8 MiB, index included, at 255 leaves (four words, runs of equal
#: entries once). (The build's upper bound of the four-word rows is what is checked.)
MAX_MASK_BYTES = 64 << 20


def mask_nodes(nodes, value, offsets, cuts, cut_start):
    """``(cuts, cut_start, n_cuts, pair_start, pair_feature, table_start, tables, index,
    row_start, leaf_value)`` of :func:`boostwood._kernels.predict_masks.predict_masks`
    (after ``X``) over the binned walk's ``cuts`` (:func:`binned_nodes`), or None when a
    tree has more than ``MAX_LEAVES`` leaves or the tables would take more than
    ``MAX_MASK_BYTES``.

    One table per tree and feature it splits on (by tree, then feature), one entry per
    bin of the feature, NaN last: in the tables' build, a numeric feature's bins take the
    values of its cuts below +inf (a value equal to a cut is in the cut's bin) and +inf
    for the last bin; a categorical feature's (its cuts lie half-way between codes) the
    code just above each cut, and -1 for bin 0, which no code is in."""
    feature, kind = nodes[0], nodes[5]
    split, n, n_trees = feature >= 0, feature.shape[0], offsets.shape[0]
    tree_of = np.repeat(np.arange(n_trees), np.diff(np.append(offsets, n)))
    leaves = np.bincount(tree_of[~split], minlength=n_trees).max() if n_trees else 0
    if n_trees == 0 or leaves > MAX_LEAVES:
        return None
    words = 1 if leaves <= 64 else 4  # (the kernel's two cases)
    # a feature's cuts but the +inf padding (a threshold of +inf needs no bin of its own:
    # every value is at most it; -inf is a cut)
    below = np.concatenate([[0], np.cumsum(cuts < np.inf)])
    n_cuts = below[cut_start[1:]] - below[cut_start[:-1]]
    n_used = n_cuts.shape[0]
    pairs, pair_of_split = np.unique(tree_of[split] * n_used + feature[split],
                                     return_inverse=True)
    pair_feature = pairs % n_used
    sizes = n_cuts[pair_feature] + 2
    table_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    pair_start = np.searchsorted(pairs // n_used, np.arange(n_trees + 1)).astype(np.int64)
    pair_of = np.full(n, -1, dtype=np.int64)
    pair_of[split] = pair_of_split
    categorical = np.zeros(n_used, dtype=bool)
    categorical[feature[split & (kind != NUMERIC)]] = True
    if words == 1:  # a row per entry
        rows, index = sizes, np.zeros(0, dtype=np.uint16)
    else:  # a row per run of equal entries: at most a threshold's 2 more than it has
        held = np.bincount(pair_of_split, minlength=pairs.size)
        rows = np.where(categorical[pair_feature], sizes, np.minimum(sizes, held + 2))
        index = np.zeros(int(sizes.sum()), dtype=np.uint16)  # (n_cuts + 2 <= 2**16)
    if 8 * words * (int(rows.sum()) + 64 * n_trees) + index.nbytes > MAX_MASK_BYTES:
        return None  # (the tables, the leaf values and the index)
    reps = []
    for f in range(n_used):
        c = cuts[cut_start[f]:cut_start[f] + n_cuts[f]]
        reps += [np.concatenate([c[:1] - 0.5, c + 0.5]) if categorical[f] and c.size
                 else np.append(c, np.inf), [np.nan]]
    rep_start = np.zeros(n_used + 1, dtype=np.int64)
    rep_start[1:] = np.cumsum(n_cuts + 2)
    tables = np.empty((int(rows.sum()), words), dtype=np.uint64)
    leaf_value = np.zeros((n_trees, 64 * words))
    row_start = np.zeros(pairs.size, dtype=np.int64)
    filled = mask_tables(*nodes, value, offsets.astype(np.int64), pair_start, pair_of,
                         table_start, np.concatenate(reps).astype(np.float64), rep_start,
                         tables, index, row_start, leaf_value)
    return (cuts, cut_start, n_cuts.astype(np.int64), pair_start,
            pair_feature.astype(np.int64), table_start,
            tables if words == 1 else tables[:filled].copy(), index, row_start, leaf_value)


def _set_bins(nodes, is_set):
    """The bins of the categorical features of a forest's set splits, for the binned
    walk: their codes cut where some set of the feature starts or ends a run of
    consecutive codes, and at code 0 -- so every bin's codes are in the same sets, the
    codes no set holds between two runs share one bin, and a 1,000-level feature whose
    sets name 100 categories takes about 200 bins, not 1,001. Code c is in bin
    ``#{cuts <= c}`` (NaN: bin 0, in the low slot).

    Returns the cuts as (feature, code) pairs sorted by feature then code, and, per
    member of a set, ``(set index among is_set's nodes, code, bin)``."""
    at = np.nonzero(is_set)[0]
    node, cats = _set_members(nodes[6][at], nodes[7][at], nodes[8])
    fid = nodes[0][at].astype(np.int64)
    after = np.zeros(node.size, dtype=bool)  # the member follows its set's previous code
    after[1:] = (node[1:] == node[:-1]) & (cats[1:] == cats[:-1] + 1)
    before = np.zeros(node.size, dtype=bool)  # ... is followed by its set's next code
    before[:-1] = after[1:]
    key = np.unique(np.concatenate([fid * _KEY, fid[node[~after]] * _KEY + cats[~after],
                                    fid[node[~before]] * _KEY + cats[~before] + 1]))
    mine = fid[node] * _KEY
    bin_of = np.searchsorted(key, mine + cats, side="right") - np.searchsorted(key, mine)
    return key // _KEY, key % _KEY, (node, cats, bin_of)


#: Codes per feature in :func:`_set_bins`' (feature, code) keys (above any code + 1).
_KEY = 2 * MAX_CATEGORY


def _set_members(start, length, bits):
    """(set index, category) of every member of the sets ``bits[start:start + length]``,
    by set, categories ascending."""
    length = length.astype(np.int64)
    rank = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length)
    words = bits[np.repeat(start.astype(np.int64), length) + rank].astype("<u4")
    where = np.nonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))[0]
    return np.repeat(np.arange(length.size), length)[where >> 5], rank[where >> 5] * 32 + \
        (where & 31)


def _set_runs(nodes, is_set, members, n_cuts, words, dummy):
    """The category-set nodes of the binned walk (see its kernel's module), over the
    bins of :func:`_set_bins` (``members``; ``n_cuts`` per feature): a set of
    consecutive codes is a run of bins ``lo .. lo + span`` (``words`` gets span and the
    low slot of the node's feature, where NaN is bin 0), with ``z`` = 1 where missing
    values go left; any other set gets ``lo = NO_RUN`` and an offset (uint32, per node)
    into the set words: ``dummy`` zero words first (where other nodes point), then per
    such node the bits of its feature's bins that go right -- bin 0 (missing) unless
    ``default_left``, the bins of the set's codes never, any other bin always. Returns
    (lo per node, uint16; z, uint8; the offsets; the words)."""
    feature, default_left = nodes[0], nodes[4]
    at = np.nonzero(is_set)[0]
    node, cats, bin_of = members
    first_cat = np.full(at.size, np.iinfo(np.int64).max)
    np.minimum.at(first_cat, node, cats)
    last_cat = np.full(at.size, -1)
    np.maximum.at(last_cat, node, cats)
    run = last_cat - first_cat + 1 == np.bincount(node, minlength=at.size)
    first_bin = np.zeros(at.size, dtype=np.int64)
    last_bin = np.zeros(at.size, dtype=np.int64)
    np.maximum.at(last_bin, node, bin_of)
    first_bin[node[::-1]] = bin_of[::-1]  # (the first member's: categories ascend)
    lo = np.zeros(feature.shape[0], dtype=np.uint16)
    lo[at] = np.where(run, first_bin, NO_RUN)
    z = np.zeros(feature.shape[0], dtype=np.uint8)
    z[at] = run & (default_left[at] != 0)
    words[at] = np.where(run, last_bin - first_bin, 0xFFFF) | \
        (2 * feature[at].astype(np.int64) << 17)  # the low slot: NaN in bin 0
    keep = ~run[node]
    flagged, index = at[~run], np.cumsum(~run) - 1
    n_bits = (n_cuts[feature[flagged]] + 1 + 31) // 32 * 32  # bins 0 .. n_cuts
    first = dummy * 32 + np.cumsum(n_bits) - n_bits
    right = np.ones(dummy * 32 + int(n_bits.sum()), dtype=bool)
    right[:dummy * 32] = False
    right[first] = default_left[flagged] == 0
    right[first[index[node[keep]]] + bin_of[keep]] = False
    aux = np.zeros(feature.shape[0], dtype=np.uint32)
    aux[flagged] = first // 32
    return lo, z, aux, np.packbits(right, bitorder="little").view("<u4").astype(np.uint32)


def top_levels(entries, offsets, bins, levels=TOP_LEVELS):
    """Each tree's top ``levels`` levels as a complete tree, for the level-at-a-time
    phase of :func:`boostwood._kernels.predict_binned.predict_binned`, positions
    numbered level by level (the root, then the two below it, ...): ``top_slot`` and
    ``top_thr`` (n_trees, 2**levels - 1), the slot and threshold bin of the split at each
    position of the top levels, and ``top_node`` (n_trees, 2**(levels + 1) - 1), uint64,
    the node (id within the tree) at each position of them and of the level below. A leaf
    fills every position below it: slot 0 and the largest bin of ``bins`` (the bins'
    type, which ``top_thr`` takes), which no bin exceeds, so rows go left and stay on
    it. ``entries`` are :func:`binned_nodes`' node entries."""
    n_trees = offsets.shape[0]
    at = offsets.astype(np.uint64)[:, None]
    positions = (1 << levels) - 1
    node = np.zeros((n_trees, 2 * positions + 1), dtype=np.uint64)
    for d in range(levels):
        level = node[:, (1 << d) - 1:(2 << d) - 1]
        e = entries[at + level]
        leaf = (e & np.uint64(LEAF & ~0xFFFF)) != 0
        left = np.where(leaf, level, e >> np.uint64(32))
        right = np.where(leaf, level, left + np.uint64(1))
        node[:, (2 << d) - 1:(4 << d) - 1] = np.stack([left, right], axis=2).reshape(n_trees, -1)
    word = entries[at + node[:, :positions]] & np.uint64(0xFFFFFFFF)
    thr = np.minimum(word & np.uint64(0xFFFF), np.iinfo(bins).max).astype(bins)
    return (word >> np.uint64(17)).astype(np.uint16), thr, node


def _padded_cuts(cuts, cut_start, pad):
    """Each feature's cuts followed by +inf: to ``PADDED_CUTS`` entries where it has fewer
    cuts and ``pad``; one +inf where it has ``PADDED_CUTS`` or more."""
    counts = np.diff(cut_start)
    sizes = np.where(counts < PADDED_CUTS, PADDED_CUTS if pad else counts, counts + 1)
    start = np.zeros(counts.size + 1, dtype=np.int64)
    start[1:] = np.cumsum(sizes)
    out = np.full(start[-1], np.inf)
    rank = np.arange(cuts.size) - np.repeat(cut_start[:-1], counts)
    out[np.repeat(start[:-1], counts) + rank] = cuts
    return out, start


IMPORTANCE_TYPES = ("split", "gain", "cover", "total_gain", "total_cover")


def feature_importance(trees, n_features, importance_type="gain"):
    """Importance of each feature over ``trees``, shape (n_features,).

    ``split``: number of splits on the feature; ``total_gain`` / ``total_cover``: sum
    over those splits of the split's gain / of the node's cover (hessian sum, or
    weight for decision trees); ``gain`` / ``cover``: the same per split.
    """
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type must be one of {IMPORTANCE_TYPES}, "
                         f"got {importance_type!r}")
    splits, gain, cover = np.zeros(n_features), np.zeros(n_features), np.zeros(n_features)
    for t in trees:
        s = t.feature >= 0
        np.add.at(splits, t.feature[s], 1.0)
        np.add.at(gain, t.feature[s], t.gain[s])
        np.add.at(cover, t.feature[s], t.cover[s])
    with np.errstate(invalid="ignore", divide="ignore"):
        per_split = {"gain": gain / splits, "cover": cover / splits}
    table = {"split": splits, "total_gain": gain, "total_cover": cover, **per_split}
    return np.nan_to_num(table[importance_type], nan=0.0)
