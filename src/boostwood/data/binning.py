"""BinMapper: per-feature quantile bin edges, fitted once on (a sample of) the training rows.

Each feature gets at most ``max_bin`` value bins. With few distinct values every
value has its own bin; otherwise the cut points are equal-frequency quantiles
of the distinct values. Bin edges sit half-way between consecutive distinct
values, so a threshold never coincides with a training value. The last edge is
``+inf``; ``-inf`` lands in bin 0 and ``+inf`` in the last bin; NaN gets the
missing bin ``n_bins[f]``. See :mod:`boostwood._kernels.binning` for the
convention that makes raw-value and binned prediction agree.

A categorical feature of k categories (codes 0..k-1, :mod:`.categories`) is binned by
identity when k <= ``max_bin``: category c in bin c (edges c + 1/2), so that a split's
category set is a set of codes and of bins alike. A feature of more categories *pools*
the rare ones: its ``max_bin - 1`` most frequent categories in the binning sample (rows
counted, ties to the lower code) keep bins of their own, in code order, and every other
category shares the last bin (``category_bins``: bin per code). Its bins, and so every
feature's histogram slot, stay within ``max_bin``; a split sends a pooled group one way
(the tree's sets list its categories: :meth:`BinMapper.category_sets`).
"""
import numpy as np

from .._comm import combine
from .._config import X_BINNED_DTYPE, X_BINNED_WIDE_DTYPE
from .._kernels.binning import (MAX_PADDED_FEATURES, PADDED_EDGES, bin_dense, bin_dense_padded,
                               bin_values)
from .._kernels.random import STREAM_BIN_SAMPLE, row_hashes
from .sketch import Summary
from .validation import as_compiled


def _midpoints(lo, hi):
    """Edges strictly between ``lo`` and ``hi`` where possible, else ``lo``.

    ``lo + (hi - lo) / 2`` can round up to ``hi`` for adjacent floats and is not
    finite next to an infinity; both fall back to ``lo`` (``x <= lo`` still
    separates the two values).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        mid = lo + (hi - lo) / 2.0
    bad = ~np.isfinite(mid) | (mid >= hi) | (mid < lo)
    mid[bad] = lo[bad]
    return mid


def edges_from_counts(distinct, counts, max_bin):
    """Upper bin edges of one feature from its sorted distinct values and their counts.

    Parameters
    ----------
    distinct : ndarray of shape (n_distinct,), float64, ascending, no NaN
    counts : ndarray of shape (n_distinct,), row count (or weight) of each value
    max_bin : int

    Returns
    -------
    edges : ndarray of shape (n_bins,), float64, ascending, last = +inf
    """
    if distinct.size <= 1:
        return np.array([np.inf])
    if distinct.size <= max_bin:
        cuts = np.arange(distinct.size - 1)
    else:
        cum = np.cumsum(counts, dtype=np.float64)
        targets = cum[-1] * np.arange(1, max_bin) / max_bin
        cuts = np.unique(np.searchsorted(cum, targets, side="left"))
        cuts = cuts[cuts < distinct.size - 1]
    mid = _midpoints(distinct[cuts], distinct[cuts + 1])
    return np.concatenate([np.unique(mid), [np.inf]])


def _value_weights(col, w):
    """Sorted distinct non-NaN values of a column and their row counts (or weight sums)."""
    if w is None:
        col = col[~np.isnan(col)]
        return np.unique(col, return_counts=True)
    summary = Summary.from_points(col, w)  # exact: every distinct value, eps = 0
    return summary.values, summary.wmin


class BinMapper:
    """Maps raw feature values to bin ids.

    Parameters
    ----------
    max_bin : int, default=255
        Maximum number of value bins per feature (the missing bin is extra).
    sample_cnt : int, default=200000
        Bin edges are fitted on at most this many rows: those of smallest hash of
        (``seed``, row id), dense or sparse alike.
    seed : int, default=0

    Attributes
    ----------
    edges : list of ndarray, float64, the upper edges of each feature
    n_bins : ndarray of shape (n_features,), int32, value bins per feature
    missing_bins : ndarray of shape (n_features,), int32, id of the missing bin (= n_bins)
    edges_flat, edge_offsets : all edges concatenated, and where each feature's start
    dtype : numpy dtype of binned values (uint8 up to 256 bins incl. missing, else uint16)
    categorical : ndarray of shape (n_features,), uint8, 1 for a categorical feature
    """

    def __init__(self, max_bin=255, sample_cnt=200000, seed=0):
        self.max_bin = int(max_bin)
        self.sample_cnt = int(sample_cnt)
        self.seed = int(seed)
        self.category_bins = {}  # pooled categorical features (module doc): bin per code

    def fit(self, features, weight=None, row_ids=None, reducer=None):
        """Fit the edges on a :class:`~boostwood.data.validation.FeatureMatrix`.

        Rows of zero ``weight`` are left out: a row that does not count in
        training does not move the bin edges either (so weight 0 is the same as
        removing the row). With unequal weights the cut points are *weighted*
        quantiles, read from a weighted quantile summary
        (:class:`~boostwood.data.sketch.Summary`), so a row of weight k places
        the edges like k copies of it.

        Data with more than ``sample_cnt`` candidate rows is fitted on a
        sample: the ``sample_cnt`` rows of smallest hash of (seed, global row id)
        (``row_ids``, default 0..n-1), so that data split into shards samples the
        very rows a single process would. With a ``reducer`` of several shards,
        the sampled rows of every shard meet where the reducer combines
        (:func:`boostwood._comm.combine`: at most ``sample_cnt`` rows in all); the
        edges are fitted there once, on them in global row order, and every shard
        receives the same edges.
        """
        n_rows = features.shape[0]
        categories = {f: len(d) for f, d in features.categories.items()}
        row_ids = np.arange(n_rows, dtype=np.int64) if row_ids is None else row_ids
        keep = None if weight is None or np.all(weight > 0) else np.nonzero(weight > 0)[0]
        # the same rows, the same edges for dense and sparse input
        rows = self._sample_rows(n_rows, keep, row_ids, reducer)
        if rows is not None:
            features = features.take_rows(rows)
            weight = None if weight is None else weight[rows]
            row_ids = row_ids[rows]
        else:  # (every row a sample row: row blocks are joined for the fit only)
            features = features.joined()
        if reducer is not None and reducer.n_shards > 1:
            # the sampled rows of every shard meet where the reducer combines them (one
            # process fits the edges there); the shards receive the edges only
            block = features.dense if features.dense is not None else features.csc.tocsr()
            bins, edges = combine(reducer, (row_ids, block, weight), lambda parts: (
                self._edges_of(*_rows_in_order(parts), categories)))
            self.category_bins = dict(bins)
        else:
            bins, edges = self._edges_of(features, weight, categories)
        self._set_edges(edges)
        self.categorical = np.zeros(len(edges), dtype=np.uint8)
        self.categorical[list(categories)] = 1
        return self

    def _edges_of(self, features, weight, categories):
        """(the pooled categorical features' bin tables, every feature's edges) of the
        sample ``features`` and its ``weight``."""
        # unequal weights: weighted quantiles (all-equal weights give the same edges as none)
        weighted = None
        if weight is not None and weight.size and np.ptp(weight) > 0:
            weighted = np.asarray(weight, dtype=np.float64)
        self.category_bins = {}
        if features.dense is not None:  # (category c in bin c: edges c + 1/2)
            for f, k in categories.items():
                if k > self.max_bin:
                    self.category_bins[f] = _pooled(features.dense[:, f], k, self.max_bin)
            edges = [np.concatenate([np.arange(max(self._cat_bins(f, categories) - 1, 0)) + 0.5,
                                     [np.inf]])
                     if f in categories else edges_from_counts(*_value_weights(
                         features.dense[:, f].astype(np.float64, copy=False), weighted),
                         self.max_bin) for f in range(features.shape[1])]
        else:  # (sparse data has no categorical features)
            edges = self._sparse_edges(features.csc, weighted)
        return self.category_bins, edges

    def _cat_bins(self, f, categories):
        """Value bins of categorical feature f: one per category, or pooled (module doc)."""
        table = self.category_bins.get(f)
        return categories[f] if table is None else int(table.max()) + 1

    def category_sets(self, f, bins):
        """The categories (codes, ascending) of ``bins`` of categorical feature f: the bins
        themselves, or every category a pooled feature's bins hold."""
        table = self.category_bins.get(f)
        bins = np.asarray(bins, dtype=np.int64)
        if table is None:
            return bins
        member = np.zeros(int(table.max()) + 1, dtype=bool)
        member[bins] = True
        return np.nonzero(member[table])[0]

    def _sample_rows(self, n_rows, keep, row_ids, reducer):
        """Ascending local rows of the binning sample (None: every row)."""
        cand = np.arange(n_rows) if keep is None else keep
        total = cand.size
        if reducer is not None:
            total = int(reducer.allreduce_sum(np.array([cand.size], dtype=np.int64))[0])
        if total <= self.sample_cnt:
            return keep
        h = np.empty(cand.size, dtype=np.uint64)
        row_hashes(self.seed & 0x7FFFFFFFFFFFFFFF, STREAM_BIN_SAMPLE, 0, row_ids[cand], h)
        k = self.sample_cnt
        smallest = np.partition(h, k - 1)[:k] if h.size > k else h
        if reducer is not None and reducer.n_shards > 1:
            smallest = np.concatenate(reducer.allgather(smallest))
        threshold = np.partition(smallest, k - 1)[k - 1]
        return cand[h <= threshold]

    def _sparse_edges(self, csc, weighted):
        """The edges :meth:`fit` finds on the dense equivalent of ``csc``: row counts are
        integers, so the absent zeros are simply counted; weight sums depend on the order
        of the additions, so weighted columns are made dense and go the dense way."""
        n_rows = csc.shape[0]
        edges = []
        for f in range(csc.shape[1]):
            s, e = csc.indptr[f], csc.indptr[f + 1]
            data = csc.data[s:e]
            if weighted is not None:
                col = np.zeros(n_rows)
                col[csc.indices[s:e]] = data
                edges.append(edges_from_counts(*_value_weights(col, weighted), self.max_bin))
                continue
            n_zero = n_rows - data.size
            distinct, counts = _value_weights(data, None)
            if n_zero > 0:
                pos = np.searchsorted(distinct, 0.0)
                if pos < distinct.size and distinct[pos] == 0.0:
                    counts[pos] += n_zero
                else:
                    distinct = np.insert(distinct, pos, 0.0)
                    counts = np.insert(counts, pos, n_zero)
            edges.append(edges_from_counts(distinct, counts, self.max_bin))
        return edges

    def _set_edges(self, edges):
        self.edges = [np.asarray(e, dtype=np.float64) for e in edges]
        self.n_bins = np.array([e.size for e in self.edges], dtype=np.int32)
        self.missing_bins = self.n_bins.copy()
        self.edge_offsets = np.zeros(len(self.edges), dtype=np.int64)
        self.edge_offsets[1:] = np.cumsum(self.n_bins[:-1])
        self.edges_flat = np.concatenate(self.edges)
        n_total = int(self.n_bins.max()) + 1
        self.dtype = np.dtype(X_BINNED_DTYPE if n_total <= 256 else X_BINNED_WIDE_DTYPE)
        self.n_bins_max = n_total

    def transform(self, features):
        """Binned copy of the features, shape (n_rows, n_features), row-major."""
        n_rows, n_features = features.shape
        out = np.empty((n_rows, n_features), dtype=self.dtype)
        if features.is_dense:
            table = self._padded_edges()
            for start, X in features.row_chunks():  # (one matrix, or its row blocks)
                part = out[start:start + X.shape[0]]
                if table is not None:
                    bin_dense_padded(as_compiled(X), table, self.n_bins, part)
                else:
                    bin_dense(as_compiled(X), self.edges_flat, self.edge_offsets, self.n_bins,
                              part)
                for f, pooled in self.category_bins.items():
                    col = X[:, f]
                    seen = ~np.isnan(col)
                    part[:, f] = self.missing_bins[f]
                    part[seen, f] = pooled[col[seen].astype(np.int64)]
            return out
        csc = features.csc
        zero = np.zeros(1)
        zero_bin = np.empty(1, dtype=self.dtype)
        for f in range(n_features):
            lo, nb = self.edge_offsets[f], self.n_bins[f]
            bin_values(zero, self.edges_flat, lo, nb, zero_bin)
            out[:, f] = zero_bin[0]
            s, e = csc.indptr[f], csc.indptr[f + 1]
            vals = np.empty(e - s, dtype=self.dtype)
            bin_values(csc.data[s:e], self.edges_flat, lo, nb, vals)
            out[csc.indices[s:e], f] = vals
        return out

    def _padded_edges(self):
        """Every feature's edges followed by +inf to ``PADDED_EDGES`` entries, flat, for
        :func:`bin_dense_padded`; None where a feature has more bins or there are more
        than ``MAX_PADDED_FEATURES`` features (the table would outgrow the caches)."""
        n = len(self.n_bins)
        if n > MAX_PADDED_FEATURES or (n and int(self.n_bins.max()) > PADDED_EDGES):
            return None
        table = np.full((n, PADDED_EDGES), np.inf)
        for f, e in enumerate(self.edges):
            table[f, :e.size] = e
        return table.reshape(-1)

    def bin_thresholds(self, features, bins):
        """Raw threshold (upper edge) of bin ``bins[i]`` of feature ``features[i]``."""
        return self.edges_flat[self.edge_offsets[features] + bins]


def _pooled(col, k, max_bin):
    """Bin per code of a categorical feature of ``k > max_bin`` categories (module doc):
    the ``max_bin - 1`` categories most rows of the sample hold (ties: the lower code)
    in bins 0.. in code order, every other category in the last bin."""
    seen = col[~np.isnan(col)].astype(np.int64)
    counts = np.bincount(seen, minlength=k)
    kept = np.sort(np.argsort(-counts, kind="stable")[:max_bin - 1])
    table = np.full(k, kept.size, dtype=np.int64)
    table[kept] = np.arange(kept.size)
    return table


def _rows_in_order(parts):
    """Every shard's (row ids, rows: dense or CSR, weights or None), as one feature matrix
    and its weights in global row order."""
    from .validation import FeatureMatrix
    dense = isinstance(parts[0][1], np.ndarray)
    order = np.argsort(np.concatenate([p[0] for p in parts]), kind="stable")
    if dense:  # each shard's rows straight to their places: one matrix, no temporary
        X = np.empty((order.size, parts[0][1].shape[1]))
        place = np.empty_like(order)
        place[order] = np.arange(order.size)
        start = 0
        for p in parts:
            X[place[start:start + p[1].shape[0]]] = p[1]
            start += p[1].shape[0]
        fm = FeatureMatrix(dense=X)
    else:
        import scipy.sparse as sp
        fm = FeatureMatrix(csc=sp.vstack([p[1] for p in parts]).tocsr()[order].tocsc())
    if any(p[2] is None for p in parts):
        return fm, None
    return fm, np.concatenate([p[2] for p in parts])[order]
