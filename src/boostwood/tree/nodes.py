"""NodeTable: the one table of a growing tree, shared by every growth path.

Gradient trees (histogram, exact and approx split finding, both growth
policies), criterion trees (CART, random forests, AdaBoost's trees) and the
level-wise path all grow into a :class:`NodeTable`: named rows of an int64 and a
float64 array, plus the node statistics (layout in :mod:`boostwood._kernels.nodes`).
A leaf's split fields hold its candidate split as a splitter found it; expanding
leaves (:meth:`NodeTable.split`) is one kernel call per batch, whatever the growth
path, and :meth:`NodeTable.to_tree` makes the finished :class:`~.tree.Tree`.
"""
import numpy as np

from .._kernels.nodes import (N_NODE_FLOATS, N_NODE_INTS, ND_BIN, ND_CAT_START,
                              ND_COUNT, ND_DEFAULT_LEFT, ND_FEATURE, ND_KIND, ND_LEFT, ND_RIGHT,
                              ND_SIDE, ND_START, NF_RECORDED_GAIN, NF_THRESHOLD, clear_node,
                              split_nodes)
from .._kernels.splits import CATEGORICAL, NO_CATEGORIES
from .tree import Tree


class NodeTable:
    """Growable node arrays of one tree.

    Parameters
    ----------
    width : int, statistics per node (3 for gradient trees, K + 2 for criterion trees)
    dtype : statistics dtype (int64 fixed point, or float64)
    capacity : int, initial number of rows (the table doubles when full)
    const_words : int, 64-bit words per node of a "known constant feature" bitset
        (the level-wise criterion path; 0 = none)
    cat_words : int, 32-bit words per node of a category set (row k's at ``k *
        cat_words`` of ``cat_bits``; 0: no categorical feature)
    """

    def __init__(self, width, dtype, capacity=64, const_words=0, cat_words=0):
        capacity = max(int(capacity), 4)
        self.n = 0
        self.ints = np.zeros((N_NODE_INTS, capacity), dtype=np.int64)
        self.floats = np.zeros((N_NODE_FLOATS, capacity))
        self.stats = np.zeros((capacity, width), dtype=dtype)
        self.cand_left = np.zeros((capacity, width), dtype=dtype)
        self.const = np.zeros((capacity, const_words), dtype=np.uint64)
        self.cat_words = int(cat_words)
        self.cat_bits = np.zeros(capacity * self.cat_words, dtype=np.uint32) \
            if self.cat_words else NO_CATEGORIES  # category words of categorical splits

    # -- growth ------------------------------------------------------------------------
    def reserve(self, m):
        """Room for m more nodes (arrays may be reallocated: re-read them after this)."""
        need = self.n + m
        cap = self.stats.shape[0]
        if need <= cap:
            return
        cap = max(need, 2 * cap)
        self.ints = _grow(self.ints, cap, axis=1)
        self.floats = _grow(self.floats, cap, axis=1)
        self.stats = _grow(self.stats, cap, axis=0)
        self.cand_left = _grow(self.cand_left, cap, axis=0)
        self.const = _grow(self.const, cap, axis=0)
        if self.cat_words:
            self.cat_bits = _grow(self.cat_bits, cap * self.cat_words, axis=0)

    def hold_categories(self, words):
        """Room for a category set of ``words`` 32-bit words per node (before any split)."""
        self.cat_words = int(words)
        self.cat_bits = np.zeros(self.stats.shape[0] * self.cat_words, dtype=np.uint32)

    def add_root(self, stats, count):
        """The root: a leaf holding ``count`` rows at the start of buffer 0."""
        self.reserve(1)
        self.n = 1
        clear_node(self.ints, self.floats, 0)
        self.ints[ND_COUNT, 0] = count
        self.stats[0] = stats
        return 0

    @property
    def record(self):
        """(ints, floats, stats, cand_left, cat_bits): the table as kernels take it (read it
        again after :meth:`reserve`)."""
        return self.ints, self.floats, self.stats, self.cand_left, self.cat_bits

    def split(self, nodes, n_left):
        """Expand ``nodes`` (int64 array) by their candidates; node ``nodes[i]`` gets
        children ``first + 2i`` (left) and ``first + 2i + 1``. Returns ``first``."""
        first = self.grow(2 * nodes.shape[0])
        split_nodes(self.ints, self.floats, self.stats, self.cand_left, nodes, n_left, first)
        return first

    def grow(self, m):
        """Add m rows (for a kernel to fill); returns the first one's id."""
        self.reserve(m)
        first = self.n
        self.n += m
        return first

    # -- reading -----------------------------------------------------------------------
    def segments(self, nodes):
        """(starts, counts, sides) of ``nodes``, int64 arrays."""
        seg = self.ints[[ND_START, ND_COUNT, ND_SIDE]][:, nodes]
        return seg[0].copy(), seg[1].copy(), seg[2].copy()

    def to_tree(self, value, weight, count):
        """The finished :class:`Tree`; leaves keep no split fields. ``value``, ``weight``,
        ``count`` are per node."""
        n = self.n
        ints, floats = self.ints[:, :n], self.floats[:, :n]
        is_split = ints[ND_LEFT] >= 0
        feature = np.where(is_split, ints[ND_FEATURE], -1).astype(np.int32)
        threshold = np.where(is_split, floats[NF_THRESHOLD], 0.0)
        threshold = np.where(np.isnan(threshold), 0.0, threshold)
        tree = Tree(feature, threshold, ints[ND_LEFT], ints[ND_RIGHT],
                    np.where(is_split, ints[ND_DEFAULT_LEFT], 0),
                    value, np.where(is_split, floats[NF_RECORDED_GAIN], 0.0), weight, count,
                    threshold_bin=np.where(is_split, ints[ND_BIN], -1))
        cat = np.nonzero(is_split & (ints[ND_KIND] == CATEGORICAL))[0]
        if cat.size:
            self._sets_to(tree, cat)
        return tree

    def _sets_to(self, tree, nodes):
        """Give ``tree`` the category sets of ``nodes``: each node's words, without the
        zero words after its last category, one after the other."""
        W = self.cat_words
        words = self.cat_bits.reshape(-1, W)[self.ints[ND_CAT_START, nodes] // W]
        nonzero = words != 0
        lengths = W - np.argmax(nonzero[:, ::-1], axis=1)
        if not np.all(nonzero.any(axis=1)):
            raise AssertionError("a categorical split with an empty set")
        keep = np.arange(W)[None, :] < lengths[:, None]
        tree.cat_bits = words[keep].astype(np.uint32)
        tree.cat_len[nodes] = lengths
        tree.cat_start[nodes] = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        tree.split_kind[nodes] = CATEGORICAL
        tree.threshold[nodes] = 0.0

    def leaf_segments(self):
        """(sides, starts, counts) of the leaves, in node order."""
        n = self.n
        leaves = np.nonzero(self.ints[ND_LEFT, :n] < 0)[0]
        return (self.ints[ND_SIDE, leaves].copy(), self.ints[ND_START, leaves].copy(),
                self.ints[ND_COUNT, leaves].copy()), leaves


def _grow(a, cap, axis):
    shape = list(a.shape)
    shape[axis] = cap
    out = np.zeros(shape, dtype=a.dtype)
    if axis == 0:
        out[:a.shape[0]] = a
    else:
        out[:, :a.shape[1]] = a
    return out
