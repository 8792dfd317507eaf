"""Tree methods: what differs between ``hist``, ``approx`` and ``exact``, in one object each.

A boosting round asks its tree method to grow a tree from fixed-point gradients
and to add that tree to the margins of rows the partition did not place (rows
outside the bag); it never branches on ``tree_method`` itself. What differs:

* ``hist``: bins fitted once (the Dataset's BinMapper); raw thresholds are bin edges.
* ``approx`` (global proposals): bins re-proposed before every tree from the hessians
  (weighted quantile sketch, :class:`~boostwood.tree.approx.GlobalProposal`); raw
  thresholds are the proposed candidates.
* ``exact`` and ``approx`` with local proposals: sorted columns scanned per node
  (:func:`~boostwood.tree.exact.exact_grower`), which sets raw thresholds itself;
  rows outside the bag are placed by walking the tree on raw values. Rows of zero
  weight take no part in growing (their values would otherwise place thresholds).
"""
import numpy as np

from .._config import GQ_DTYPE, GQ_LOW_DTYPE
from .._kernels.histogram import partials_bound
from .._kernels.predict import (add_numeric_tree_binned, add_tree_binned, binned_walk,
                                predict_raw)
from .._kernels.splits import NUMERIC, bitset_of
from ..data.categories import recode
from .approx import GlobalProposal
from .exact import exact_grower
from .grower import TreeGrower


class HistMethod:
    """``tree_method="hist"``: one binning, histograms."""

    #: rows of weight 0 are left out of growing
    drops_zero_weight = False
    #: :meth:`worker` gives a second method that grows trees while this one does
    grows_side_by_side = True

    def __init__(self, dataset, params, reducer):
        m = dataset.bin_mapper
        self.mapper = m
        self.categories = dataset.categories  # the dictionaries other data is coded by
        self.grower = TreeGrower(dataset.X_binned, m.n_bins, m.n_bins_max, params, reducer,
                                 categorical=getattr(m, "categorical", None))

    @property
    def stats(self):
        """The fixed-point statistics of the trees (units, quantized gradients)."""
        return self.grower.stats

    def _binned(self):
        return self.grower.X_binned, self.mapper.missing_bins

    def worker(self):
        """Another HistMethod on the same bins and data (no copy of them), with buffers,
        histograms and statistics of its own: it grows trees while this one does."""
        other = object.__new__(HistMethod)
        other.mapper, g = self.mapper, self.grower
        other.categories = self.categories
        other.grower = TreeGrower(g.X_binned, g.n_bins, self.mapper.n_bins_max, g.params,
                                  g.reducer, X_columns=g.X_columns,
                                  categorical=getattr(self.mapper, "categorical", None))
        other.grower.stats.low_bits = g.stats.low_bits
        return other

    def worker_bytes(self, n_threads):
        """About the memory a :meth:`worker` of ``n_threads`` threads holds while it grows
        a tree: its index buffers and staging ids, its fixed-point gradients, the histograms
        one tree holds at once (:meth:`TreeGrower.held_histograms`) and its partial
        histograms (:func:`~boostwood._kernels.histogram.partials_bound`)."""
        g = self.grower
        n = g.X_binned.shape[0]
        hist = g.builder.hist
        slot = int(np.prod(hist.shape[1:])) * hist.itemsize
        gq = n * 2 * np.dtype(GQ_LOW_DTYPE if g.stats.low_bits is not None else GQ_DTYPE).itemsize
        n_hist = g.held_histograms(n_threads) + partials_bound(n, n_threads)
        return g.buf.nbytes + g.staging.nbytes + gq + n_hist * slot

    def grow(self, gh, rows, features, rng):
        """Grow one tree from fixed-point ``gh`` (see :meth:`TreeGrower.grow`); its raw
        thresholds are set. Returns (tree, leaf segments)."""
        tree, segments = self.grower.grow(gh, rows, features, rng)
        split = (tree.feature >= 0) & (tree.split_kind == NUMERIC)  # sets need no threshold
        tree.threshold[split] = self._thresholds(tree.feature[split], tree.threshold_bin[split])
        pooled = getattr(getattr(self, "mapper", None), "category_bins", None)
        if pooled and np.any(tree.split_kind):
            _sets_of_categories(tree, self.mapper)
        return tree, segments

    def _thresholds(self, features, bins):
        return self.mapper.bin_thresholds(features, bins)

    def add_to_margins(self, tree, raw, group, dataset, rows=None):
        """``raw[:, group] += tree(x)`` for every training row, or for ``rows`` only, by
        the bins it was grown on."""
        X_binned, missing_bins = self._binned()
        _add_binned(X_binned, missing_bins, tree, raw, group, rows)

    def margin_adder(self, dataset):
        """``add(tree, raw, group)``: ``raw[:, group] += tree(x)`` for the rows of another
        Dataset (an evaluation set): by its bins when it shares the training bins (it was
        made with ``reference=``), else by its values, checked unchanged once, here."""
        if type(self) is HistMethod and dataset.bin_mapper is self.mapper:
            X_binned, missing_bins = dataset.X_binned, self.mapper.missing_bins
            return lambda tree, raw, group: _add_binned(X_binned, missing_bins, tree, raw,
                                                        group)
        features = dataset.features
        if self.categories or features.categories:  # coded by value, as predict does
            features = recode(features, self.categories)
        return _raw_adder(features)


def _sets_of_categories(tree, mapper):
    """The tree's sets over bins become sets over categories (a pooled feature's bin
    stands for several, :meth:`BinMapper.category_sets`); the sets over bins stay, as
    ``tree.binned_sets`` (training only, not saved), for the walks over bins."""
    tree.binned_sets = (tree.cat_start.copy(), tree.cat_len.copy(), tree.cat_bits.copy())
    nodes = np.nonzero(tree.split_kind)[0]
    words = [bitset_of(mapper.category_sets(int(tree.feature[j]), tree.categories(j)))
             if int(tree.feature[j]) in mapper.category_bins else
             tree.cat_bits[tree.cat_start[j]:tree.cat_start[j] + tree.cat_len[j]]
             for j in nodes]  # joined once (set_categorical per node: 0.1 s a 100 trees)
    lengths = np.array([w.size for w in words], dtype=np.int32)
    tree.cat_len[nodes] = lengths
    tree.cat_start[nodes] = np.cumsum(lengths) - lengths
    tree.cat_bits = np.concatenate(words).astype(np.uint32) if words else tree.cat_bits


def _add_binned(X_binned, missing_bins, tree, raw, group, rows=None):
    """``raw[:, group] += tree(x)`` from the bins, for every row or for ``rows``: a tree of
    numeric splits by the branch-free lock-step walk (2.4-3.2x as fast on 255-leaf and
    depth-8 trees), one with category sets node by node."""
    if not np.any(tree.split_kind):  # NUMERIC is 0
        walk, child = binned_walk(tree.feature, tree.threshold_bin, tree.left, tree.right,
                                  tree.default_left, missing_bins)
        some = np.zeros(0, np.int64) if rows is None else rows
        add_numeric_tree_binned(X_binned, some, rows is None, walk, child, tree.value, raw,
                                group)
        return
    nodes = (tree.feature, tree.threshold_bin) + tree.nodes()[2:6] + \
        getattr(tree, "binned_sets", tree.nodes()[6:])  # (sets over bins)
    if rows is None:
        add_tree_binned(X_binned, missing_bins, nodes, tree.value, raw, group)
        return
    tree_of_rows = np.zeros((rows.shape[0], raw.shape[1]))
    add_tree_binned(X_binned[rows], missing_bins, nodes, tree.value, tree_of_rows, group)
    raw[rows, group] += tree_of_rows[:, group]  # the same one addition a row


def _raw_adder(features):
    return lambda tree, raw, group: _add_raw(features, raw, tree, group)


class ApproxMethod(HistMethod):
    """``tree_method="approx"`` with global proposals: bins re-proposed per tree."""

    drops_zero_weight = True
    grows_side_by_side = False  # its trees re-bin the one shared matrix

    def __init__(self, dataset, params, reducer, eps, sample=(0, 0)):
        self.categories = cats = dataset.categories
        self.proposal = prop = GlobalProposal(dataset.sorted_columns(), eps, reducer,
                                              {f: len(d) for f, d in cats.items()},
                                              sample=(*sample, dataset.row_ids))
        is_cat = np.zeros(dataset.num_feature(), dtype=np.uint8)
        is_cat[list(cats)] = 1
        self.grower = TreeGrower(prop.X_binned, prop.n_bins, prop.n_bins_max, params, reducer,
                                 X_columns=prop.X_columns, categorical=is_cat)

    def _binned(self):
        return self.proposal.X_binned, self.proposal.n_bins

    def grow(self, gh, rows, features, rng):
        self.proposal.propose(gh[:, 1], self.stats.units[1], rows)  # this tree's candidates
        return super().grow(gh, rows, features, rng)

    def _thresholds(self, features, bins):
        return self.proposal.thresholds(features, bins)


class ExactMethod:
    """``tree_method="exact"`` (``local_eps`` = 0) or approx with local proposals."""

    drops_zero_weight = True
    grows_side_by_side = False

    def __init__(self, dataset, params, reducer, local_eps=0.0):
        self.features = dataset.features  # checked unchanged once, here
        self.grower = exact_grower(dataset.sorted_columns(), params, reducer,
                                   local_eps=local_eps)

    @property
    def stats(self):
        return self.grower.stats

    def grow(self, gh, rows, features, rng):
        return self.grower.grow(gh, rows, features, rng)  # raw thresholds set by the scan

    def add_to_margins(self, tree, raw, group, dataset, rows=None):
        """Walk the tree on the raw values of every training row, or of ``rows`` only
        (ascending)."""
        if rows is None:
            _add_raw(self.features, raw, tree, group)
            return
        offsets = np.zeros(1, dtype=np.int64)
        groups = np.zeros(1, dtype=np.int64)
        for s, X in self.features.row_chunks():
            lo, hi = np.searchsorted(rows, [s, s + X.shape[0]])
            if hi > lo:  # these rows' walk into zeros, then one addition each
                some = rows[lo:hi]
                tree_of_rows = np.zeros((some.shape[0], 1))
                predict_raw(np.ascontiguousarray(X[some - s]), tree.nodes(), tree.value,
                            offsets, groups, tree_of_rows)
                raw[some, group] += tree_of_rows[:, 0]

    def margin_adder(self, dataset):
        """See :meth:`HistMethod.margin_adder` (here always by the values)."""
        return _raw_adder(dataset.features)


def add_tree_raw(dataset, raw, tree, group):
    """``raw[:, group] += tree(x)`` for the rows of ``dataset``, from raw feature values."""
    _add_raw(dataset.features, raw, tree, group)


def _add_raw(features, raw, tree, group):
    """``raw[:, group] += tree(x)`` for the rows of a FeatureMatrix, from raw values."""
    offsets = np.zeros(1, dtype=np.int64)
    groups = np.full(1, group, dtype=np.int64)
    for s, X in features.row_chunks():
        predict_raw(X, tree.nodes(), tree.value, offsets, groups, raw[s:s + X.shape[0]])


def make_tree_method(name, dataset, params, reducer=None, approx_proposal="global",
                     sketch_eps=0.03, sketch_sample=(0, 0)):
    """The tree method object for ``tree_method`` ``name`` (a constructed Dataset,
    GrowerParams and the run's reducer; ``sketch_sample``: global approx proposals'
    ``(sketch_sample_cnt, seed)``)."""
    if dataset.categories and (name == "exact" or (name == "approx"
                                                   and approx_proposal == "local")):
        names = [dataset.feature_names[f] for f in sorted(dataset.categories)]
        what = "tree_method='exact'" if name == "exact" else "approx_proposal='local'"
        raise ValueError(f"{what} cannot split categorical features yet ({names[:5]}); use "
                         "tree_method='hist' or 'approx' (global proposals), or encode them "
                         "as numbers")
    if name == "exact":
        return ExactMethod(dataset, params, reducer)
    if name == "approx" and approx_proposal == "local":
        return ExactMethod(dataset, params, reducer, local_eps=sketch_eps)
    if name == "approx":
        return ApproxMethod(dataset, params, reducer, sketch_eps, sketch_sample)
    if name == "hist":
        return HistMethod(dataset, params, reducer)
    raise ValueError(f"unknown tree_method {name!r}")
