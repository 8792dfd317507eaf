"""The forest loop: bootstrap weights, one criterion tree per seed, trees in parallel.

Bootstrap samples are integer sample weights (how many times each row was
drawn), never copies of rows; out-of-bag rows are those of weight 0. The
columns are sorted (or binned) once and shared by every tree. Trees are grown
in parallel, one per worker thread (when numba's threading layer is OpenMP or
TBB; with its workqueue layer, one after the other with each level parallel
over features). Every tree depends only on its own seed, so the forest is the
same for any number of threads. Needs no scikit-learn
(:mod:`boostwood.sklearn.forest` wraps it).
"""
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from .._comm import threadsafe_numba
from . import cart


@dataclass
class Forest:
    """A grown forest: trees, their node statistics, each tree's in-bag rows, and the
    mean of the trees' normalised impurity importances."""

    trees: list
    node_stats: list
    in_bag: np.ndarray  # (n_trees, n_rows) bool
    importances: np.ndarray


def grow_forest(columns, spec, channel, stat, weight, n_classes, n_features, seeds,
                bootstrap=True, n_bootstrap=None, n_threads=1, random_splits=False):
    """Grow one tree per seed.

    Parameters
    ----------
    columns : what the trees scan (:func:`boostwood.ensemble.cart.search_columns`)
    spec : cart.TreeSpec
    channel, stat, weight : per-row class channel, statistic and sample weight
        (see :func:`boostwood.ensemble.cart.grow`)
    n_classes : int, statistic channels (classes; 1 for regression)
    seeds : ndarray of int, one per tree
    bootstrap : bool; n_bootstrap : rows drawn per tree (default: all)
    n_threads : int, worker threads (trees in parallel)
    random_splits : bool, extra trees' random thresholds

    Returns
    -------
    Forest
    """
    n = weight.shape[0]
    n_boot = n if n_bootstrap is None else n_bootstrap

    def grow_trees(worker, n_workers):
        """Trees worker, worker + n_workers, ... with the worker's own grower."""
        if n_workers > 1:
            numba.set_num_threads(1)  # thread-local: one thread per tree
        grower = cart.make_grower(columns, spec, n_classes, n_features, random_splits)
        out = []
        for i in range(worker, len(seeds), n_workers):
            r = np.random.default_rng(int(seeds[i]))
            counts = _bag_counts(r, n, n_boot, bootstrap)
            wt = weight * counts
            if not np.any(wt > 0):
                wt = weight.copy()
            tree, stats = cart.grow(grower, channel, stat * counts, wt, int(r.integers(2 ** 31)))
            out.append((i, tree, stats, counts > 0))
        return out

    n_workers = min(n_threads, len(seeds)) if threadsafe_numba() else 1
    if n_workers > 1:  # trees in parallel; each tree is the same whoever grows it
        with ThreadPoolExecutor(n_workers) as pool:
            parts = list(pool.map(lambda k: grow_trees(k, n_workers), range(n_workers)))
        grown = sorted((item for part in parts for item in part), key=lambda t: t[0])
    else:
        grown = grow_trees(0, 1)
    trees = [t for _, t, _, _ in grown]
    return Forest(trees, [s for _, _, s, _ in grown],
                  np.array([b for _, _, _, b in grown]).reshape(len(trees), n),
                  forest_importances(trees, n_features))


def _bag_counts(rng, n, n_boot, bootstrap):
    """How many times each of the n rows is drawn into a tree's bag (``n_boot`` draws
    with replacement; all ones without bootstrap): the first draws of the tree's
    generator."""
    if not bootstrap:
        return np.ones(n)
    return np.bincount(rng.integers(0, n, n_boot), minlength=n).astype(np.float64)


def in_bag(seeds, n, n_bootstrap=None, bootstrap=True):
    """(len(seeds), n) bool: the in-bag rows of the trees of ``seeds`` (what
    :func:`grow_forest` drew for them), e.g. for the out-of-bag rows of trees grown by an
    earlier call."""
    n_boot = n if n_bootstrap is None else n_bootstrap
    return np.array([_bag_counts(np.random.default_rng(int(s)), n, n_boot, bootstrap) > 0
                     for s in seeds], dtype=bool).reshape(len(seeds), n)


def forest_importances(trees, n_features):
    """The mean of the trees' normalised impurity importances, normalised (tree order)."""
    imp = np.zeros(n_features)
    for t in trees:
        ti = cart.importances(t, n_features)
        imp += ti / ti.sum() if ti.sum() > 0 else ti
    return imp / imp.sum() if imp.sum() > 0 else imp
