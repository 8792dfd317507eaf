"""SortedColumns: every feature sorted once, for exact and approximate split finding;
BinnedColumns: histogram bins presented the same way, for the criterion trees.

For each feature f:

* ``values[f]``: its distinct non-NaN values, ascending (float64);
* ``codes[f, row]``: the rank of the row's value among them (NaN -> ``n_values[f]``),
  so "value <= values[f][c]" is "code <= c";
* its non-missing rows in ascending order of value (stable: ties keep row
  order), and its rows with a missing value.

Absent entries of sparse input are zeros, as everywhere in boostwood.
"""
import numpy as np

from .._config import INDEX_DTYPE
from .binning import _midpoints


class SortedColumns:
    """Rank codes and sort orders of a :class:`~boostwood.data.validation.FeatureMatrix`.

    Attributes
    ----------
    values : list of ndarray, float64
    n_values : ndarray of shape (n_features,), int64
    codes : ndarray of shape (n_features, n_rows), uint32 (feature-major)
    order, order_offsets : int32 rows and int64 offsets (feature f's sorted rows are
        ``order[order_offsets[f]:order_offsets[f + 1]]``)
    missing_rows, missing_offsets : likewise, the rows whose value is NaN
    is_categorical : (n_features,) uint8, 1 for a categorical feature (its values are
        category codes, so its codes are the categories present, ascending)
    """

    def __init__(self, features):
        n_rows, n_features = features.shape
        self.is_categorical = np.zeros(n_features, dtype=np.uint8)
        self.is_categorical[list(features.categories)] = 1
        self.values, orders, missing = [], [], []
        # uint32 codes whatever the data: one compiled variant of the kernels
        self.codes = np.empty((n_features, n_rows), dtype=np.uint32)
        for f in range(n_features):
            col = _column(features, f)
            order = np.argsort(col, kind="stable")  # one sort per feature; NaN sorts last
            n_present = n_rows - int(np.isnan(col).sum())
            present = order[:n_present]
            ordered = col[present]
            new_value = np.empty(n_present, dtype=bool)
            new_value[:1] = True
            np.not_equal(ordered[1:], ordered[:-1], out=new_value[1:])
            rank = np.cumsum(new_value) - 1
            self.values.append(ordered[new_value])
            self.codes[f, present] = rank
            self.codes[f, order[n_present:]] = self.values[-1].size
            orders.append(present.astype(INDEX_DTYPE))
            missing.append(np.sort(order[n_present:]).astype(INDEX_DTYPE))
        self.n_values = np.array([v.size for v in self.values], dtype=np.int64)
        self.order, self.order_offsets = _flatten(orders)
        self.missing_rows, self.missing_offsets = _flatten(missing)

    def codes_are_categories(self, f):
        """Is code c category c for categorical feature f (every category present)?"""
        v = self.values[f]
        return v.size == 0 or v[-1] == v.size - 1

    def code_per_category(self, f):
        """Categorical feature f: the code of each category (by category code; -1 for a
        category no row holds)."""
        v = self.values[f].astype(np.int64)
        out = np.full(int(v[-1]) + 1 if v.size else 0, -1, dtype=np.int64)
        out[v] = np.arange(v.size)
        return out

    @property
    def lists(self):
        """(order, order_offsets, missing_rows, missing_offsets), as the scan kernels take
        them."""
        return self.order, self.order_offsets, self.missing_rows, self.missing_offsets

    def thresholds(self, features, codes, next_codes):
        """Raw thresholds of splits "code <= c": half-way to the node's next value,
        or the value itself when no value follows (``next_codes`` -1). Midpoints
        follow the bin-edge rule of :func:`boostwood.data.binning._midpoints`, so
        ``x <= threshold`` always separates the two values."""
        if getattr(self, "_flat", None) is None:
            self._flat = np.concatenate(self.values) if self.values else np.zeros(0)
            self._flat_offsets = np.concatenate([[0], np.cumsum(self.n_values)]).astype(np.int64)
        base = self._flat_offsets[np.asarray(features, dtype=np.int64)]
        codes = np.asarray(codes, dtype=np.int64)
        next_codes = np.asarray(next_codes, dtype=np.int64)
        lo = self._flat[base + codes] if codes.size else np.zeros(0)
        hi = np.where(next_codes >= 0, self._flat[base + np.maximum(next_codes, 0)], lo) \
            if codes.size else np.zeros(0)
        return _midpoints(lo, hi)  # hi == lo (no next value) gives lo



class BinnedColumns:
    """Histogram bins presented as sorted columns, so a criterion grower
    (:func:`boostwood.tree.criterion.criterion_grower`) searches bin boundaries (``max_bin`` candidates per feature) instead of every value.

    Parameters
    ----------
    X_binned : ndarray of shape (n_rows, n_features), bin ids (missing = ``n_bins[f]``)
    n_bins : ndarray of shape (n_features,), value bins per feature
    bin_thresholds : callable (features, bins) -> raw thresholds of "bin <= b"
    is_categorical : (n_features,) uint8, 1 for a categorical feature, optional
    category_bins : dict, categorical feature -> its bin per category code, for the
        features whose bins pool several categories (the others' bin c is category c;
        :attr:`~boostwood.data.binning.BinMapper.category_bins`)
    """

    def __init__(self, X_binned, n_bins, bin_thresholds, is_categorical=None,
                 category_bins=None):
        self.rows = np.ascontiguousarray(X_binned)  # row-major, for the level-wise scan
        self.codes = np.ascontiguousarray(X_binned.T)  # feature-major, for the partition
        self.n_values = np.asarray(n_bins, dtype=np.int64)
        self._bin_thresholds = bin_thresholds
        self._lists = None
        self.is_categorical = np.zeros(self.codes.shape[0], dtype=np.uint8) \
            if is_categorical is None else np.asarray(is_categorical, dtype=np.uint8)
        self._category_bins = dict(category_bins or {})

    def codes_are_categories(self, f):
        """Is bin c category c for categorical feature f (not pooled)?"""
        return f not in self._category_bins

    def code_per_category(self, f):
        """Categorical feature f: the bin of each category (by category code)."""
        table = self._category_bins.get(f)
        return np.arange(self.n_values[f]) if table is None else np.asarray(table, np.int64)

    def _sorted_lists(self):
        """Per feature its rows by ascending bin, and its missing rows (built on first use:
        the level-wise path scans bins node by node and never needs them)."""
        if self._lists is None:
            orders, missing = [], []
            for f in range(self.codes.shape[0]):
                col = self.codes[f]
                present = col < self.n_values[f]
                order = np.argsort(col, kind="stable")
                orders.append(order[:int(present.sum())].astype(INDEX_DTYPE))
                missing.append(np.nonzero(~present)[0].astype(INDEX_DTYPE))
            self._lists = _flatten(orders) + _flatten(missing)
        return self._lists

    order = property(lambda self: self._sorted_lists()[0])
    order_offsets = property(lambda self: self._sorted_lists()[1])
    missing_rows = property(lambda self: self._sorted_lists()[2])
    missing_offsets = property(lambda self: self._sorted_lists()[3])

    def thresholds(self, features, codes, next_codes):
        """"bin <= c" as a raw threshold: the upper edge of bin c."""
        if len(features) == 0:
            return np.zeros(0)
        return np.asarray(self._bin_thresholds(np.asarray(features), np.asarray(codes)),
                          dtype=np.float64)


def _column(features, f):
    if features.dense is not None:
        return np.asarray(features.dense[:, f], dtype=np.float64)
    csc = features.csc
    col = np.zeros(features.shape[0])
    s, e = csc.indptr[f], csc.indptr[f + 1]
    col[csc.indices[s:e]] = csc.data[s:e]
    return col


def _flatten(parts):
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([p.size for p in parts])
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=INDEX_DTYPE)
    return flat.astype(INDEX_DTYPE, copy=False), offsets
