"""Decision trees (CART; C4.5's gain ratio) on boostwood's tree engine.

A fitted tree is a :class:`~boostwood.tree.Tree` plus the statistics of every
node (``stats[node] = (per-class weight..., weight, rows)``; for regression one
channel holding sum w y). Class probabilities of a leaf are its class weights
over its weight; a regression leaf predicts its weighted mean (``Tree.value``).

Split finding: ``"exact"`` searches every midpoint between consecutive distinct
values, as CART does; ``"hist"`` searches the boundaries of at most ``max_bin``
quantile bins per feature (the histogram method of the boosting engine).
"""
from dataclasses import dataclass

import numpy as np

from .._kernels.predict import mean_leaf_rows, predict_leaf_raw
from ..data import Dataset
from ..data.columns import BinnedColumns, SortedColumns
from ..tree import GrowerParams
from ..tree.criterion import criterion_grower, grow_tree
from ..tree.tree import pack_trees


@dataclass
class TreeSpec:
    """Validated settings of one decision tree (all counts already absolute)."""

    criterion: str = "gini"
    max_depth: int = 0  # 0 = unlimited
    max_leaf_nodes: int = 0  # 0 = unlimited; > 0 grows best-first
    min_samples_split: int = 2
    min_samples_leaf: int = 1
    min_weight_leaf: float = 0.0
    min_impurity_decrease: float = 0.0
    max_features: int = 0  # features drawn per node; 0 = all


def search_columns(features, splitter, max_bin=255, seed=0, weight=None):
    """What the grower scans: sorted raw values (``"exact"``, and ``"random"`` thresholds
    drawn between a node's values) or histogram bins (``"hist"``)."""
    if splitter in ("exact", "random"):
        return SortedColumns(features)
    data = features if features.categories else \
        features.dense if features.dense is not None else features.csc
    ds = Dataset(data, weight=weight, max_bin=max_bin, seed=seed)  # weighted quantiles for bins
    ds.construct()
    mapper = ds.bin_mapper
    return BinnedColumns(ds.X_binned, mapper.n_bins, mapper.bin_thresholds,
                         mapper.categorical, mapper.category_bins)


def make_grower(columns, spec, n_channels, n_features, random_splits=False):
    """A :func:`~boostwood.tree.criterion.criterion_grower` for ``spec`` (reused across
    the trees of a forest)."""
    frac = 1.0 if spec.max_features <= 0 else min(1.0, spec.max_features / n_features)
    params = GrowerParams(
        max_depth=spec.max_depth, max_leaves=spec.max_leaf_nodes,
        grow_policy="lossguide" if spec.max_leaf_nodes > 0 else "depthwise",
        reg_lambda=0.0, min_data_in_leaf=spec.min_samples_leaf,
        min_child_weight=spec.min_weight_leaf, colsample_bynode=frac, learning_rate=1.0)
    return criterion_grower(columns, params, n_channels, spec.criterion,
                            spec.min_samples_split, spec.min_impurity_decrease, random_splits)


def grow(grower, y_channel, stat, weight, seed):
    """One tree on the rows of positive weight. Returns (Tree, node statistics)."""
    rows = np.nonzero(weight > 0)[0].astype(np.int32)
    if rows.size == 0:
        raise ValueError("sample weights are all zero: nothing to fit")
    rng = np.random.default_rng(seed)
    n_features = grower.columns.codes.shape[0]
    return grow_tree(grower, stat, y_channel, weight, rows if rows.size < weight.size else None,
                     np.arange(n_features, dtype=np.int64), rng)


def leaf_ids(trees, X):
    """Leaf node id of every row of ``X`` (float array) in every tree: (n_rows, n_trees)."""
    packed = pack_trees(trees, walks=False)
    out = np.zeros((X.shape[0], len(trees)), dtype=np.int32)
    predict_leaf_raw(X, packed["nodes"], packed["offsets"], out)
    return out


def mean_over_trees(leaves, tables):
    """Mean over trees of a per-node row: ``tables[t][leaves[:, t]]`` averaged over t,
    shape (n_rows, K); ``tables[t]`` is (n_nodes of tree t, K)."""
    offsets = np.zeros(len(tables), dtype=np.int64)
    offsets[1:] = np.cumsum([tb.shape[0] for tb in tables])[:-1]
    out = np.empty((leaves.shape[0], tables[0].shape[1]))
    mean_leaf_rows(np.ascontiguousarray(leaves, dtype=np.int32), offsets,
                   np.ascontiguousarray(np.concatenate(tables), dtype=np.float64), out)
    return out


def class_proba(stats, leaves, K):
    """Class probabilities (n_rows, K) of rows in the given leaves of one tree."""
    s = stats[leaves]
    w = s[:, K:K + 1]
    p = np.divide(s[:, :K], w, out=np.full((len(leaves), K), 1.0 / K), where=w > 0)
    # a class's weight and the node's weight are sums in different orders: a pure node's
    # ratio can round to 1 + 2^-52; a probability is never above 1 (means of these are
    # means of numbers <= 1, so they stay <= 1 too)
    return np.clip(p, 0.0, 1.0, out=p)


def importances(tree, n_features):
    """Impurity decrease of the splits on each feature (Breiman's mean decrease in
    impurity), relative to the root's weight."""
    imp = np.zeros(n_features)
    split = tree.feature >= 0
    np.add.at(imp, tree.feature[split], tree.gain[split])
    root = tree.cover[0]
    return imp / root if root > 0 else imp


def node_parents(tree):
    """Each node's parent id (-1 for the root), int64."""
    parent = np.full(tree.n_nodes, -1, dtype=np.int64)
    split = np.nonzero(tree.feature >= 0)[0]
    parent[tree.left[split]] = split
    parent[tree.right[split]] = split
    return parent


def decision_path_nodes(tree):
    """For every node, the node ids from the root down to it (a list of arrays): the
    node-by-node twin of :func:`boostwood.sklearn.trees.path_indicator`."""
    parent = node_parents(tree)
    paths = []
    for node in range(tree.n_nodes):
        chain = [node]
        while parent[chain[-1]] >= 0:
            chain.append(parent[chain[-1]])
        paths.append(np.array(chain[::-1], dtype=np.int64))
    return paths
