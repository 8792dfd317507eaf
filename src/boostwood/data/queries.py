"""Query groups: which rows of a data set rank against each other (learning to rank).

Rows come in any order. A query's rows need not be contiguous: ``Queries.order`` lists
the row ids grouped by query (a stable sort by query id, so each query keeps its rows
in input order) and ``Queries.ptr`` the boundaries, query q being the rows
``order[ptr[q]:ptr[q + 1]]``. Nothing is copied or reordered: the rows stay where the
caller put them, and so do predictions. (XGBoost needs ``qid`` sorted; LightGBM takes
group sizes of contiguous rows; both forms are read here, and interleaved ids form one
query each, never several.)
"""
import hashlib
from dataclasses import dataclass, replace

import numpy as np

#: Largest display position: the position biases are estimated per position.
MAX_POSITION = 4095


@dataclass(frozen=True)
class Queries:
    """The query groups of a set of rows.

    Attributes
    ----------
    ptr : ndarray of shape (n_queries + 1,), int64; query boundaries in ``order``
    order : ndarray of shape (n_rows,), int64; row ids grouped by query, in input order
        within a query
    ids : ndarray of shape (n_queries,); each query's id (the ``qid`` values, sorted; for
        group sizes, 0..n_queries-1)
    weight : ndarray of shape (n_queries,), float64, or None; per-query weights
        (XGBoost's group weights: every row of the query counts that much)
    keys : ndarray of shape (n_queries,), int64; each query's key, a function of its id's
        value alone (what random draws per query are keyed by, and what tells queries
        apart across shards, so that a query draws the same on any shard)
    position : ndarray of shape (n_rows,), int64, or None; each row's display position
        (0 = shown first), for position-bias estimation
    from_sizes : bool; the queries came as group sizes (their ids are their indices
        here, which name nothing across data shards)
    """

    ptr: np.ndarray
    order: np.ndarray
    ids: np.ndarray
    weight: np.ndarray = None
    keys: np.ndarray = None
    position: np.ndarray = None
    from_sizes: bool = False

    @property
    def n_queries(self):
        return self.ptr.shape[0] - 1

    def sizes(self):
        """Rows per query, in query order (LightGBM's ``group``)."""
        return np.diff(self.ptr)

    def query_of_rows(self, n_rows):
        """Each row's query index (int64, -1 for a row of no query)."""
        out = np.full(n_rows, -1, dtype=np.int64)
        out[self.order] = np.repeat(np.arange(self.n_queries), self.sizes())
        return out

    def subset(self, rows, n_rows):
        """The queries of ``rows`` (row ids of this set of ``n_rows`` rows, each query's
        rows all in or all out), their rows renumbered as positions in ``rows``."""
        rows = np.asarray(rows, dtype=np.int64)
        which = self.query_of_rows(n_rows)
        kept, counts = np.unique(which[rows], return_counts=True)
        if kept.size and (kept[0] < 0 or np.any(counts != self.sizes()[kept])):
            raise ValueError("a subset of the rows of ranking data must hold whole "
                             "queries: some query would be cut in two")
        keep = np.zeros(self.n_queries, dtype=bool)
        keep[kept] = True
        local = np.full(n_rows, -1, dtype=np.int64)
        local[rows] = np.arange(rows.size)
        order = local[self.order[keep[which[self.order]]]]
        ptr = np.concatenate([[0], np.cumsum(self.sizes()[kept])]).astype(np.int64)
        weight = None if self.weight is None else self.weight[kept]
        position = None if self.position is None else self.position[rows]
        return Queries(ptr, order, self.ids[kept], weight, self.keys[kept], position,
                       self.from_sizes)


def check_whole_queries(queries, reducer, what="the training data"):
    """A ValueError unless every query of ``queries`` lies on one shard of ``reducer``
    (ranking gradients need a query's rows together), naming a query that does not; on
    shards the queries must come as ``qid`` (group sizes name no query across shards)."""
    if reducer is None or reducer.n_shards == 1:
        return
    keys = np.zeros(0, np.int64) if queries is None else queries.keys
    sizes = queries is not None and queries.from_sizes
    if any(reducer.allgather(sizes)):
        raise ValueError(f"{what} is on several shards: give its queries as qid= (ids "
                         "that name a query on every shard), not group= sizes")
    every = reducer.allgather(keys)
    shard_of = {}
    for shard, part in enumerate(every):
        for key in part.tolist():
            if key in shard_of:
                where = np.flatnonzero(queries.keys == key) if queries is not None else []
                name = queries.ids[where[0]] if len(where) else key
                name = name.item() if isinstance(name, np.generic) else name
                raise ValueError(f"query {name!r} of {what} has rows on shards "
                                 f"{shard_of[key]} and {shard}: a query must lie wholly on "
                                 "one shard")
            shard_of[key] = shard


def query_keys(ids):
    """int64 keys of query ids, a function of the id's value alone, so that the same
    query has the same key on every shard whatever the id's dtype there: an integer id,
    or a float id of an integer value (1.0 as 1), is its own key; another float id, or
    any other id (a string), the first 8 bytes of the BLAKE2b hash of its text."""
    ids = np.asarray(ids)
    if ids.dtype.kind in "iub":
        return ids.astype(np.int64)
    if ids.dtype.kind == "f":
        values = ids.astype(np.float64)
        whole = (values == np.floor(values)) & (np.abs(values) < 2.0 ** 63)
        keys = np.zeros(values.shape[0], np.int64)
        keys[whole] = values[whole].astype(np.int64)
        keys[~whole] = _hashed([repr(float(v)) for v in values[~whole]])
        return keys
    return _hashed([str(v) for v in ids])


def _hashed(texts):
    """int64 keys of strings: the first 8 bytes of each one's BLAKE2b hash."""
    if not texts:
        return np.zeros(0, np.int64)
    return np.array([int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(),
                                    "little") for t in texts], dtype=np.uint64).view(np.int64)


def queries_from(n_rows, group=None, qid=None, group_weight=None, position=None):
    """The :class:`Queries` of ``n_rows`` rows from LightGBM's group sizes (contiguous
    rows, in order) or XGBoost's per-row query ids (any order); None without either.
    ``position``: each row's display position (integers from 0), for
    ``lambdarank_unbiased``.

    Raises
    ------
    ValueError : both or neither of group / qid with group_weight, sizes that do not add
        up to the rows, ids that are not one finite value per row, group weights not one
        per query or not finite and non-negative
    TypeError : group sizes that are not integers
    """
    if group is None and qid is None:
        for name, value in (("group_weight", group_weight), ("position", position)):
            if value is not None:
                raise ValueError(f"{name} needs the queries: give group= or qid= too")
        return None
    if group is not None and qid is not None:
        raise ValueError("give the queries once: group= (sizes of contiguous queries) or "
                         "qid= (one query id per row), not both")
    if group is not None:
        sizes = _vector(group, "group")
        if not np.issubdtype(sizes.dtype, np.integer) and not (
                np.issubdtype(sizes.dtype, np.floating) and np.all(sizes == np.round(sizes))):
            raise TypeError(f"group must hold integer query sizes, got dtype {sizes.dtype}")
        sizes = sizes.astype(np.int64)
        if np.any(sizes < 1) or sizes.sum() != n_rows:
            raise ValueError(f"group must hold positive query sizes that add up to the "
                             f"{n_rows} rows; they add up to {int(sizes.sum())}"
                             + (" and include a size below 1" if np.any(sizes < 1) else ""))
        ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        ids = np.arange(sizes.size, dtype=np.int64)
        queries = Queries(ptr, np.arange(n_rows, dtype=np.int64), ids, None, ids,
                          from_sizes=True)
    else:
        ids = _vector(qid, "qid")
        if ids.shape[0] != n_rows:
            raise ValueError(f"qid has {ids.shape[0]} entries but the data has {n_rows} rows")
        if ids.dtype.kind == "O":
            ids = _object_ids(ids)
        if ids.dtype.kind == "f" and not np.all(np.isfinite(ids)):
            raise ValueError("qid contains NaN or infinite values")
        if ids.dtype.kind not in "iufUS":
            raise TypeError(f"qid must hold numbers or strings, got dtype {ids.dtype}")
        order = np.argsort(ids, kind="stable").astype(np.int64)
        values, counts = np.unique(ids[order], return_counts=True)
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        queries = Queries(ptr, order, values, None, query_keys(values))
    if position is not None:
        pos = _vector(position, "position")
        if pos.shape[0] != n_rows:
            raise ValueError(f"position has {pos.shape[0]} entries but the data has {n_rows} "
                             "rows")
        if pos.dtype.kind not in "iuf" or (pos.dtype.kind == "f" and not np.all(
                np.isfinite(pos) & (pos == np.round(pos)))) or np.any(pos < 0) \
                or np.any(pos > MAX_POSITION):
            raise ValueError(f"position must hold each row's display rank, integers "
                             f"0..{MAX_POSITION} (0: shown first)")
        queries = replace(queries, position=pos.astype(np.int64))
    if group_weight is not None:
        try:
            gw = np.asarray(group_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("group_weight must hold numbers (one weight per query)") from None
        if gw.ndim != 1 or gw.shape[0] != queries.n_queries:
            raise ValueError(f"group_weight must hold one weight per query ({queries.n_queries}"
                             f" queries), got shape {gw.shape}")
        if not np.all(np.isfinite(gw)) or np.any(gw < 0) or not np.any(gw > 0):
            raise ValueError("group_weight must be finite, non-negative and not all zero")
        queries = replace(queries, weight=gw)
    return queries


def _object_ids(ids):
    """An object array of query ids as strings (all strings) or numbers (all numbers)."""
    if all(isinstance(v, str) for v in ids):
        return ids.astype(str)
    try:
        return ids.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError("qid must hold numbers or strings, not a mix of them or other "
                        "objects") from None


def _vector(values, name):
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    return arr
