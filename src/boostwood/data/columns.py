"""SortedColumns: every feature sorted once, for exact and approximate split finding.

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
    """

    def __init__(self, features):
        n_rows, n_features = features.shape
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
