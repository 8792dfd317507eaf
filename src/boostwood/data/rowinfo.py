"""RowInfo: what objectives and metrics know about the rows, in one record."""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RowInfo:
    """Per-row information of one (shard of a) data set.

    Attributes
    ----------
    label : ndarray of shape (n_rows,), float64, or None (unlabelled data)
    weight : ndarray of shape (n_rows,), float64; when the data has no weights, ones
        that take no memory (:func:`unit_weights`, read-only)
    queries : :class:`~boostwood.data.queries.Queries` or None; the query groups of
        ranking data (query q is the rows ``order[ptr[q]:ptr[q + 1]]``, with its weight)
    base_margin : ndarray of shape (n_rows,) or (n_rows, n_outputs), or None
    row_ids : ndarray of shape (n_rows,), int64, or None; global ids of the rows (a
        shard's own slice of the whole in distributed training; None: 0..n-1, a single
        process, without holding them). Per-row randomness and exact reductions that
        need all rows are keyed by them: read them through :meth:`ids`.
    """

    label: np.ndarray
    weight: np.ndarray
    queries: object = None
    base_margin: np.ndarray = None
    row_ids: np.ndarray = None

    @classmethod
    def of(cls, label, weight=None, base_margin=None, row_ids=None, queries=None):
        """A RowInfo from plain arrays (weights default to ones, ids to 0..n-1)."""
        label = None if label is None else np.asarray(label, dtype=np.float64)
        n = label.shape[0] if weight is None else np.asarray(weight).shape[0]
        weight = unit_weights(n) if weight is None else np.asarray(weight, dtype=np.float64)
        row_ids = np.arange(n, dtype=np.int64) if row_ids is None else \
            np.asarray(row_ids, dtype=np.int64)
        return cls(label, weight, queries, base_margin, row_ids)

    def ids(self):
        """The global row ids (``row_ids``, or 0..n-1 made now when that is None)."""
        if self.row_ids is not None:
            return self.row_ids
        return np.arange(self.weight.shape[0], dtype=np.int64)


def gather_rows(info, reducer, *arrays):
    """Every shard's ``arrays`` (per-row, aligned with ``info``), concatenated in global
    row order: what a single process holding all rows would see. One shard: as given."""
    if reducer is None or reducer.n_shards == 1:
        return arrays
    parts = reducer.allgather((info.ids(),) + tuple(arrays))
    ids = np.concatenate([p[0] for p in parts])
    order = np.argsort(ids, kind="stable")
    return tuple(np.concatenate([p[j + 1] for p in parts])[order] for j in range(len(arrays)))


def unit_weights(n_rows):
    """The weights of unweighted data: ``n_rows`` ones as a read-only view of a single
    one (stride 0), so that they take no memory -- 8 bytes a row that a materialised
    array held through training (32 MiB on 4M rows)."""
    return np.broadcast_to(np.float64(1.0), (n_rows,))
