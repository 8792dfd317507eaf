"""Minimal cost-complexity pruning (Breiman, Friedman, Olshen & Stone 1984, ch. 3).

The cost of a tree T is R_alpha(T) = R(T) + alpha |leaves(T)|, R(T) the weighted
impurity of its leaves over the total weight. For an internal node t, turning
its subtree T_t into a leaf changes R by R(t) - R(T_t) and removes
|leaves(T_t)| - 1 leaves, so it pays off once alpha exceeds the node's
*effective alpha* g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1). Weakest-link
pruning collapses the node(s) of smallest g(t), recomputes, and repeats until
only the root is left (one node per step, as scikit-learn does, so tied alphas
appear once per pruned node): the non-decreasing alphas and the impurities of the pruned
trees form the pruning path; fitting with ``ccp_alpha`` prunes while the
weakest link's g(t) is at most ``ccp_alpha``.
"""
import numpy as np

from .._kernels.criterion import ENTROPY, GAIN_RATIO, impurity
from .._kernels.splits import CATEGORICAL
from ..tree.criterion import CRITERIA
from ..tree.tree import Tree


def _risks(stats, K, criterion):
    crit = CRITERIA[criterion]
    crit = ENTROPY if crit == GAIN_RATIO else crit
    W = stats[0, K]
    return np.array([impurity(s, K, crit) for s in stats]) / W


def _subtrees(tree, leaf, risk):
    """(R(T_t), |leaves(T_t)|) of every node of the tree cut at ``leaf`` (bool mask)."""
    r_sub = np.zeros(tree.n_nodes)
    n_sub = np.zeros(tree.n_nodes, dtype=np.int64)
    for node in range(tree.n_nodes - 1, -1, -1):  # children come after their parent
        if leaf[node] or tree.feature[node] < 0:
            r_sub[node], n_sub[node] = risk[node], 1
        else:
            lo, hi = tree.left[node], tree.right[node]
            r_sub[node] = r_sub[lo] + r_sub[hi]
            n_sub[node] = n_sub[lo] + n_sub[hi]
    return r_sub, n_sub


def _reachable(tree, leaf):
    keep = np.zeros(tree.n_nodes, dtype=bool)
    keep[0] = True
    for node in range(tree.n_nodes):
        if keep[node] and not leaf[node] and tree.feature[node] >= 0:
            keep[tree.left[node]] = keep[tree.right[node]] = True
    return keep


def pruning_sequence(tree, stats, K, criterion, stop_alpha=np.inf):
    """Weakest-link pruning. Returns (alphas, leaf risks R(T), collapsed-node mask of the
    last tree with alpha <= stop_alpha)."""
    risk = _risks(stats, K, criterion)
    leaf = tree.feature < 0
    r_sub, _ = _subtrees(tree, leaf, risk)
    alphas, risks, final = [0.0], [r_sub[0]], leaf.copy()
    while not leaf[0]:
        r_sub, n_sub = _subtrees(tree, leaf, risk)
        live = _reachable(tree, leaf) & ~leaf
        g = np.full(tree.n_nodes, np.inf)
        g[live] = (risk[live] - r_sub[live]) / (n_sub[live] - 1)
        weakest = int(np.argmin(g))  # one node at a time: equal alphas are listed as often
        alpha = max(float(g[weakest]), 0.0)
        if alpha > stop_alpha:
            break
        leaf = leaf.copy()
        leaf[weakest] = True
        final = leaf.copy()
        r_sub, _ = _subtrees(tree, leaf, risk)
        alphas.append(alpha)
        risks.append(r_sub[0])
    return np.array(alphas), np.array(risks), final


def collapse(tree, stats, leaf):
    """The tree cut at the nodes of ``leaf`` (renumbered, parents before children), and its
    node statistics."""
    keep = _reachable(tree, leaf)
    order = [0]
    new_id = {0: 0}
    i = 0
    while i < len(order):  # breadth-first over the kept nodes
        node = order[i]
        i += 1
        if not leaf[node] and tree.feature[node] >= 0:
            for child in (tree.left[node], tree.right[node]):
                new_id[int(child)] = len(order)
                order.append(int(child))
    order = np.array(order, dtype=np.int64)
    assert keep[order].all()
    is_leaf = leaf[order] | (tree.feature[order] < 0)
    feature = np.where(is_leaf, -1, tree.feature[order])
    left = np.array([-1 if lf else new_id[int(tree.left[n])] for n, lf in zip(order, is_leaf)])
    right = np.array([-1 if lf else new_id[int(tree.right[n])] for n, lf in zip(order, is_leaf)])
    out = Tree(feature, np.where(is_leaf, 0.0, tree.threshold[order]), left, right,
               np.where(is_leaf, 0, tree.default_left[order]), tree.value[order],
               np.where(is_leaf, 0.0, tree.gain[order]), tree.cover[order], tree.count[order])
    for new, old in enumerate(order):  # categorical splits keep their sets
        if not is_leaf[new] and tree.split_kind[old] == CATEGORICAL:
            out.set_categorical(new, tree.categories(old))
    return out, stats[order]
