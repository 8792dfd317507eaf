"""The node table every grower fills, and the two kernels that write it.

A growing tree is one table (:class:`boostwood.tree.nodes.NodeTable`), the same for
gradient trees (histogram, exact, approx), criterion trees (CART, forests,
AdaBoost) and the level-wise path:

* ``ints`` : int64 array (N_NODE_INTS, capacity), one named row per field. The
  first N_SPLIT_FIELDS rows are the split record of :mod:`.splits` (feature,
  bin, default_left, kind, category words), so the columns of a batch of nodes
  *are* the record the partition kernel takes. While a node is a leaf
  (``ND_LEFT`` = -1) those rows hold its *candidate* split (feature -1: none);
  expanding the node only adds its children.
* ``floats`` : float64 array (N_NODE_FLOATS, capacity): raw threshold, the gain
  candidates are ranked by, and the gain the tree records (an impurity decrease
  for criterion trees, the ranking gain otherwise).
* ``stats`` : (capacity, W) node statistics (fixed-point (G, H, count) int64 for
  gradient trees; (channels..., weight, count) float64 for criterion trees), and
  ``cand_left`` : the same for the left child of each leaf's candidate split.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes
from .split import pick_best_features
from .splits import (N_PICK, N_SPLIT_FIELDS, NUMERIC, P_BIN,  # noqa: F401 (re-exported)
                     P_DEFAULT_LEFT, P_NEXT)

ND_FEATURE, ND_BIN, ND_DEFAULT_LEFT, ND_KIND, ND_CAT_START, ND_CAT_LEN = range(N_SPLIT_FIELDS)
ND_LEFT, ND_RIGHT, ND_DEPTH, ND_START, ND_COUNT, ND_SIDE, ND_NEXT = range(N_SPLIT_FIELDS,
                                                                         N_SPLIT_FIELDS + 7)
N_NODE_INTS = N_SPLIT_FIELDS + 7
NF_THRESHOLD, NF_GAIN, NF_RECORDED_GAIN = range(3)
N_NODE_FLOATS = 3



@njit(cache=True, nogil=True, inline="always")
def clear_node(ints, floats, k):
    """Node k as a fresh leaf with no candidate split."""
    for f in range(N_NODE_INTS):
        ints[f, k] = 0
    ints[ND_FEATURE, k] = -1
    ints[ND_BIN, k] = -1
    ints[ND_LEFT, k] = -1
    ints[ND_RIGHT, k] = -1
    ints[ND_NEXT, k] = -1
    for f in range(N_NODE_FLOATS):
        floats[f, k] = 0.0


@njit(cache=True, nogil=True)
def split_nodes(ints, floats, stats, cand_left, nodes, n_left, first):
    """Expand every node of ``nodes`` by its candidate split.

    Node ``nodes[i]`` gets children ``first + 2i`` (left: the first ``n_left[i]``
    rows of its segment) and ``first + 2i + 1`` (the rest), on the other partition
    buffer; the left child's statistics are the candidate's, the right child's the
    parent's minus them (exact for fixed-point statistics).

    ints, floats, stats, cand_left : the node table (see the module docstring)   # IN/OUT
    nodes : ndarray of shape (m,), int64   # IN
    n_left : ndarray of shape (m,), int64   # IN, rows that went left
    first : int, id of the first new node (the table has room for 2 m more)
    """
    W = stats.shape[1]
    for i in range(nodes.shape[0]):
        p = nodes[i]
        lk = first + 2 * i
        rk = lk + 1
        ints[ND_LEFT, p] = lk
        ints[ND_RIGHT, p] = rk
        for kid in (lk, rk):
            clear_node(ints, floats, kid)
            ints[ND_DEPTH, kid] = ints[ND_DEPTH, p] + 1
            ints[ND_SIDE, kid] = 1 - ints[ND_SIDE, p]
        ints[ND_START, lk] = ints[ND_START, p]
        ints[ND_COUNT, lk] = n_left[i]
        ints[ND_START, rk] = ints[ND_START, p] + n_left[i]
        ints[ND_COUNT, rk] = ints[ND_COUNT, p] - n_left[i]
        for c in range(W):
            stats[lk, c] = cand_left[p, c]
            stats[rk, c] = stats[p, c] - cand_left[p, c]


@njit(cache=True, nogil=True)
def choose_gradient(gain, pick, left, nodes, features, ints, floats, cand_left):
    """Record each node's candidate from a scan of a batch: its best feature (the first of
    the highest gain, up to ties), kept when the gain is positive; feature -1 otherwise.

    gain : (n_nodes, n_active) float64; pick : (N_PICK, n_nodes, n_active) int64;
    left : (n_nodes, n_active, W) -- a scan kernel's outputs   # IN
    nodes : (n_nodes,) int64, the table rows scanned; features : (n_active,) int64   # IN
    ints, floats, cand_left : the node table   # OUT, candidate fields of ``nodes``
    Returns the nodes that have a candidate, in batch order.
    """
    B = nodes.shape[0]
    best = np.empty(B, dtype=np.int64)
    pick_best_features(gain, best)
    found = np.empty(B, dtype=np.int64)
    n = 0
    for r in range(B):
        k = nodes[r]
        a = best[r]
        if a < 0 or not gain[r, a] > 0.0:
            ints[ND_FEATURE, k] = -1
            continue
        set_candidate(ints, floats, cand_left, k, features[a], pick[P_BIN, r, a],
                      pick[P_NEXT, r, a], pick[P_DEFAULT_LEFT, r, a], gain[r, a], gain[r, a],
                      left[r, a])
        found[n] = k
        n += 1
    return found[:n]


@njit(cache=True, nogil=True, inline="always")
def set_candidate(ints, floats, cand_left, k, feature, bin_, next_code, default_left, gain,
                  recorded_gain, left):
    """Node k's candidate: a numeric split (categorical scans come with their own)."""
    ints[ND_FEATURE, k] = feature
    ints[ND_BIN, k] = bin_
    ints[ND_NEXT, k] = next_code
    ints[ND_DEFAULT_LEFT, k] = default_left
    ints[ND_KIND, k] = NUMERIC
    ints[ND_CAT_START, k] = 0
    ints[ND_CAT_LEN, k] = 0
    floats[NF_THRESHOLD, k] = np.nan  # raw threshold: set by the caller when known
    floats[NF_GAIN, k] = gain
    floats[NF_RECORDED_GAIN, k] = recorded_gain
    for c in range(cand_left.shape[1]):
        cand_left[k, c] = left[c]


def node_records(starts, counts, sides, features, bins, default_left, kinds=None,
                 cat_start=None, cat_len=None):
    """A node table's ``ints`` for a batch of leaves given field by field, and the ids of
    its rows (``arange``): what the partition kernel reads, for callers and tests that
    hold a batch as separate arrays. Kinds default to NUMERIC."""
    starts = np.asarray(starts, dtype=np.int64)
    n = starts.shape[0]
    ints = np.zeros((N_NODE_INTS, n), dtype=np.int64)
    ints[ND_START], ints[ND_COUNT], ints[ND_SIDE] = starts, counts, sides
    ints[ND_FEATURE], ints[ND_BIN], ints[ND_DEFAULT_LEFT] = features, bins, default_left
    ints[ND_LEFT], ints[ND_RIGHT], ints[ND_NEXT] = -1, -1, -1
    if kinds is not None:
        ints[ND_KIND], ints[ND_CAT_START], ints[ND_CAT_LEN] = kinds, cat_start, cat_len
    return ints, np.arange(n, dtype=np.int64)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
