"""Categorical features at the boundary: each categorical column's dictionary, and codes
looked up by value.

A categorical column enters training as float codes ``0 .. k-1`` (NaN: missing) under
its *dictionary*: the distinct values the training rows hold (strings, or numbers),
sorted. Sorting makes the dictionary, hence the model, independent of the order in which
a frame declares its categories or lists its rows, and categories a dtype declares but
no row holds are left out. The model stores the dictionaries (category values, never
codes), and every later frame -- evaluation sets, prediction, a reloaded model -- is
coded by looking its *values* up in them (:func:`recode`), after its columns were
matched by name: a frame whose categories are declared in another order, or that lacks
some, codes the same rows the same way.

Missing values (NaN, None, ``pd.NA``, nulls) are missing, in every container. A value
the dictionary does not hold is *unseen*: with ``unseen_category="missing"`` (the
default) it is coded as missing, so it follows each split's learned missing direction,
in binned evaluation and in ``predict`` alike; ``"error"`` raises a ``ValueError`` naming
the column and the values. Booleans are numbers here (numeric features), as before.
"""
import sys

import numpy as np

#: Most categories of one feature: binned codes are uint16, the missing bin included.
MAX_CATEGORIES = 65535


def _pandas():
    return sys.modules.get("pandas")


def is_category_like(dtype):
    """Is a pandas column of this dtype categorical by its type (``category``, strings,
    objects)? Numbers and booleans are numeric features."""
    if isinstance(dtype, np.dtype):  # (numpy's own dtypes without pandas' slower checks)
        return dtype.kind in "OUS"
    pd = _pandas()
    if isinstance(dtype, pd.CategoricalDtype) or isinstance(dtype, pd.StringDtype):
        return True
    return dtype == object or getattr(dtype, "kind", "") in ("O", "U", "S")


def _python_value(v, column):
    """A category value as JSON holds it: str, int or float (numpy scalars unwrapped)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise TypeError(f"column {column!r}: category values must be strings or numbers, got "
                        f"{v!r} ({type(v).__name__}); convert the column first")
    if isinstance(v, float) and not np.isfinite(v):
        raise ValueError(f"column {column!r}: {v!r} cannot be a category value")
    return v


def _kind(values):
    """'str', 'number', or 'mixed' (or None for no values)."""
    kinds = {isinstance(v, str) for v in values}
    if not kinds:
        return None
    return "mixed" if len(kinds) == 2 else ("str" if kinds == {True} else "number")


def _factorize(values):
    """(codes int64, -1 for a missing value, and the distinct values as a list) of a 1-D
    array; pandas' factorize when pandas is there, else a dictionary of Python values."""
    pd = _pandas()
    if pd is not None:
        codes, uniques = pd.factorize(pd.Series(values, copy=False), use_na_sentinel=True)
        return np.asarray(codes, dtype=np.int64), list(np.asarray(uniques, dtype=object))
    index, uniques = {}, []
    codes = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and v != v):
            codes[i] = -1
            continue
        c = index.get(v)
        if c is None:
            c = index[v] = len(uniques)
            uniques.append(v)
        codes[i] = c
    return codes, uniques


def _coded(codes, uniques, column):
    """Float codes under the sorted dictionary of ``uniques``, and the dictionary."""
    values = [_python_value(v, column) for v in uniques]
    if _kind(values) == "mixed":
        some = sorted({type(v).__name__ for v in values})
        raise TypeError(f"column {column!r} mixes strings and numbers as categories "
                        f"({', '.join(some)}); give it one type")
    order = sorted(range(len(values)), key=values.__getitem__)
    dictionary = [values[i] for i in order]
    if len(set(dictionary)) != len(dictionary):  # 1 and 1.0 are one category
        raise ValueError(f"column {column!r} holds one category under two values (e.g. 1 "
                         "and 1.0); give it one type")
    _check_count(len(dictionary), column)
    rank = np.empty(len(values), dtype=np.float64)
    rank[order] = np.arange(len(values))
    out = np.full(codes.shape[0], np.nan)
    seen = codes >= 0
    out[seen] = rank[codes[seen]]
    return out, dictionary


def _check_count(n, column):
    if n > MAX_CATEGORIES:
        raise ValueError(f"column {column!r} has {n} categories; at most {MAX_CATEGORIES} "
                         "are supported")


def encode_pandas(series, column):
    """(float codes, dictionary) of a pandas column (``category``, strings, objects or
    numbers declared categorical)."""
    pd = _pandas()
    if isinstance(series.dtype, pd.CategoricalDtype):
        known = _dtype_order(series.dtype, column)
        if known is not None:  # (the Categorical's own codes: no Series is made)
            return _coded_by(series.array.codes, known, column)
        return _coded(*_held(series.cat.codes, series.cat.categories), column)
    if series.dtype.kind in "fiub":
        return encode_numbers(series.to_numpy(dtype=np.float64, na_value=np.nan), column)
    return encode_values(series.to_numpy(dtype=object, na_value=None), column)


#: id of a pandas category dtype's categories (an Index, immutable) seen lately -> (the
#: Index, its values in sorted order, see :func:`_dtype_order`): prediction in small calls
#: codes the same dtype again and again. Keyed by the Index itself, not by the dtype: two
#: unordered dtypes of the same categories in another order are equal (and hash alike) in
#: pandas, but their codes name different values.
_DTYPE_ORDERS = {}
_DTYPE_ORDERS_KEPT = 32


def _dtype_order(dtype, column):
    """(values as Python scalars, their indices in sorted order, the values as an object
    array) of a pandas category dtype's categories, kept for the dtypes seen lately; None
    for a dtype whose categories :func:`_coded` might refuse (mixed kinds, one value
    twice, values that are no category values): those take the general path, which
    checks only the categories some row holds."""
    categories = dtype.categories
    hit = _DTYPE_ORDERS.get(id(categories))
    if hit is not None and hit[0] is categories:
        return hit[1]
    for kept, known in list(_DTYPE_ORDERS.values()):  # the same categories in the same
        if len(kept) == len(categories) and kept.dtype == categories.dtype \
                and kept.equals(categories):  # order (a frame made again for each call)
            _keep(_DTYPE_ORDERS, id(categories), (categories, known))
            return known
    try:
        values = [_python_value(v, column) for v in np.asarray(categories, dtype=object)]
    except (TypeError, ValueError):
        return None
    if _kind(values) == "mixed" or len(set(values)) != len(values):
        return None
    order = np.array(sorted(range(len(values)), key=values.__getitem__), dtype=np.int64)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    known = (values, order, array)
    _keep(_DTYPE_ORDERS, id(categories), (categories, known))
    return known


def _keep(cache, key, entry):
    """``cache[key] = entry``, first dropping the oldest entry of a full cache (threads
    predicting at once may drop the same one)."""
    while len(cache) >= _DTYPE_ORDERS_KEPT:
        try:
            cache.pop(next(iter(cache)), None)
        except (StopIteration, RuntimeError):
            break
    cache[key] = entry


class _HeldOfDtype(list):
    """A dictionary (a list of values) that :func:`_coded_by` took from a pandas category
    dtype's cached sorted values: it remembers them (``source``: the cached (values,
    order, array) and the positions in ``values`` of its own entries), so that :func:`_lookup`
    codes it by a table made once per dtype and model dictionary, not by a Python lookup
    per category and call. It pickles as the plain list: the source is this process's
    cache, and the dictionaries of data shards travel (:func:`unify`)."""

    __slots__ = ("source",)

    def __reduce__(self):
        return list, (list(self),)


def _coded_by(codes, known, column):
    """:func:`_coded` of a category column whose dtype's sorted order is ``known``: the
    same codes and dictionary (the values some row holds, sorted), without Python work
    per category but the dictionary's list."""
    values, order, array = known
    codes = np.asarray(codes, dtype=np.int64)
    held = np.bincount(codes[codes >= 0], minlength=len(values)) > 0
    ranked = order[held[order]]
    _check_count(ranked.size, column)
    rank = np.full(len(values) + 1, np.nan)  # the last entry: code -1, missing
    rank[ranked] = np.arange(ranked.size)
    dictionary = _HeldOfDtype(array[ranked].tolist())
    dictionary.source = (known, ranked)
    return rank[codes], dictionary


def _held(codes, values):
    """(codes, values) of a dictionary-coded column (codes -1: missing) without the
    values no row holds, renumbered."""
    codes = np.asarray(codes, dtype=np.int64)
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(values)))
    remap = np.full(len(values) + 1, -1, dtype=np.int64)  # the last entry: code -1
    remap[used] = np.arange(used.size)
    return remap[codes], np.asarray(values, dtype=object)[used].tolist()


def encode_values(values, column):
    """(float codes, dictionary) of a 1-D array of category values (strings or numbers;
    None and NaN missing)."""
    return _coded(*_factorize(values), column)


def encode_numbers(values, column):
    """(float codes, dictionary) of a numeric column declared categorical."""
    values = np.asarray(values, dtype=np.float64)
    seen = ~np.isnan(values)
    uniques, inverse = np.unique(values[seen], return_inverse=True)
    codes = np.full(values.shape[0], -1, dtype=np.int64)
    codes[seen] = inverse
    return _coded(codes, [float(u) if not float(u).is_integer() else int(u) for u in uniques],
                  column)


def encode_arrow(column_values, column):
    """(float codes, dictionary) of an Arrow column of strings or a dictionary array
    (polars ``Categorical`` / ``Enum`` / ``String`` arrive as these)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if not pa.types.is_dictionary(column_values.type):
        column_values = pc.dictionary_encode(column_values)
    if isinstance(column_values, pa.ChunkedArray):
        column_values = column_values.combine_chunks() if column_values.num_chunks else \
            pa.array([], type=column_values.type)
    codes = pc.fill_null(column_values.indices.cast(pa.int64()), -1).to_numpy(
        zero_copy_only=False)
    return _coded(*_held(codes, column_values.dictionary.to_pylist()), column)


def is_arrow_categorical(arrow_type):
    """Does an Arrow column of this type hold categories (strings, dictionaries)?"""
    import pyarrow as pa
    return (pa.types.is_dictionary(arrow_type) or pa.types.is_string(arrow_type)
            or pa.types.is_large_string(arrow_type)
            or getattr(pa.types, "is_string_view", lambda t: False)(arrow_type))


def resolve_categorical(categorical_feature, names, n_features):
    """The feature indices ``categorical_feature`` names (names or indices, LightGBM's
    argument), sorted; an unknown name or an index out of range is an error."""
    if categorical_feature is None:
        return []
    if isinstance(categorical_feature, (str, int, np.integer)):
        categorical_feature = [categorical_feature]
    out = set()
    for c in categorical_feature:
        if isinstance(c, (bool, np.bool_)):
            raise TypeError("categorical_feature lists feature names or indices, got a bool")
        if isinstance(c, (int, np.integer)):
            if not 0 <= int(c) < n_features:
                raise ValueError(f"categorical_feature index {int(c)} is out of range for "
                                 f"{n_features} features")
            out.add(int(c))
        elif isinstance(c, str):
            if names is None or c not in names:
                raise ValueError(f"categorical_feature names {c!r}, which is not a feature "
                                 "name of the data" + ("" if names is not None else
                                                       " (the data has no names; give indices)"))
            out.add(names.index(c))
        else:
            raise TypeError(f"categorical_feature lists feature names or indices, got {c!r}")
    return sorted(out)


def recode(features, dictionaries, unseen="missing", names=None):
    """``features`` (a FeatureMatrix) coded by ``dictionaries`` (feature index -> list of
    values, a model's or a reference Dataset's), looked up by value: columns that came
    with their own dictionary are mapped code to code, numeric columns value to code.
    Unseen values are missing (``unseen="missing"``) or a ``ValueError``. A column with
    categories where the dictionaries say numeric, or values of the wrong type, is an
    error naming the column. Returns a new FeatureMatrix (the input is not changed)."""
    from .validation import FeatureMatrix
    own = features.categories
    names = names or features.feature_names or [f"f{j}" for j in range(features.shape[1])]
    wrong = sorted(set(own) - set(dictionaries))
    if wrong:
        raise TypeError(f"column {names[wrong[0]]!r} holds categories, but the model's "
                        "feature of that name is numeric")
    if not dictionaries or own == dictionaries:  # (coded by these dictionaries already)
        return features
    if features.dense is None:
        raise TypeError("categorical features need dense data (a DataFrame, an Arrow table "
                        "or a numpy array), not a sparse matrix")
    dense = np.array(features.dense, dtype=np.float64, order="F")
    missed = {}
    for f, dictionary in dictionaries.items():
        col = dense[:, f]
        if f in own:
            table, missed[names[f]] = _lookup(own[f], dictionary, names[f], unseen)
            coded = np.full(col.shape[0], np.nan)
            seen = ~np.isnan(col)
            coded[seen] = table[col[seen].astype(np.int64)]
        else:
            coded, missed[names[f]] = _lookup_numbers(col, dictionary, names[f], unseen)
        dense[:, f] = coded
    out = FeatureMatrix(dense=dense, feature_names=features.feature_names)
    out.categories = {f: list(d) for f, d in dictionaries.items()}
    #: per column, the values coded missing as unseen (``unseen="missing"``), so that a
    #: later check can still refuse them (an evaluation set under unseen_category="error")
    out.unseen = {name: values for name, values in missed.items() if len(values)}
    return out


def check_unseen(features):
    """A ``ValueError`` naming the column and values where :func:`recode` coded unseen
    categories as missing (``features.unseen``)."""
    for column, values in getattr(features, "unseen", {}).items():
        _unseen(column, values, "error")


def _unseen(column, values, unseen):
    if unseen == "error" and len(values):
        some = ", ".join(repr(v) for v in list(values)[:5])
        raise ValueError(f"column {column!r} holds {len(values)} categories not seen in "
                         f"training: {some}{' ...' if len(values) > 5 else ''} "
                         "(unseen_category='error'; 'missing' sends them the missing way)")


def _lookup(theirs, dictionary, column, unseen):
    """Per code of ``theirs``, the code of the same value in ``dictionary`` (NaN: unseen).
    Both are dictionaries of this module's encoders: one kind of value each (so the
    first value's kind is the list's)."""
    index, kind = _index_of(dictionary)
    if theirs and dictionary and _kind(theirs[:1]) != kind:
        raise TypeError(f"column {column!r} holds {_kind(theirs[:1])} categories, but the "
                        f"model learned {kind} ones")
    source = getattr(theirs, "source", None)
    full = None
    if source is not None:  # (a pandas dtype's values: one table per dtype and dictionary,
        (values, _, _), held = source  # made when the rows hold an eighth of them or more)
        full = _dtype_table(values, dictionary, index, build=8 * held.size >= len(values))
    if full is not None:
        table = full[0][held]
        missed = [values[i] for i in held[np.isnan(table)]]
    else:
        table = np.array([index.get(v, np.nan) for v in theirs], dtype=np.float64)
        missed = [v for v in theirs if v not in index]
    _unseen(column, missed, unseen)
    return table, missed


#: (ids of a pandas dtype's cached values and of a model's dictionary) -> (the two, the
#: code in the dictionary of each of the dtype's values (NaN: unseen) and a NaN for code
#: -1, whether some value is unseen): prediction in small calls codes the same dtype by
#: the same dictionary again and again.
_DTYPE_TABLES = {}


def _dtype_table(values, dictionary, index, build=True):
    """(Per entry of ``values`` (a pandas dtype's values, :func:`_dtype_order`), its code
    in ``dictionary`` (``index``: value -> code), NaN where it holds none, then a NaN for
    the missing code -1; whether some entry is unseen). None where it is not kept and
    not ``build``."""
    key = (id(values), id(dictionary))
    hit = _DTYPE_TABLES.get(key)
    if hit is None or hit[0] is not values or hit[1] is not dictionary:
        if not build:
            return None
        table = np.array([index.get(v, np.nan) for v in values] + [np.nan], dtype=np.float64)
        hit = (values, dictionary, table, bool(np.isnan(table[:-1]).any()))
        _keep(_DTYPE_TABLES, key, hit)
    return hit[2], hit[3]


#: id of a model's dictionary -> (the dictionary, value -> code, kind), for the
#: dictionaries coded by lately: a Booster codes every predict call by the same lists.
_INDEXES = {}


def _index_of(dictionary):
    """(value -> code, kind) of a dictionary (a list), kept while the list lives on."""
    hit = _INDEXES.get(id(dictionary))
    if hit is None or hit[0] is not dictionary:
        hit = (dictionary, {v: i for i, v in enumerate(dictionary)}, _kind(dictionary))
        _keep(_INDEXES, id(dictionary), hit)
    return hit[1], hit[2]


def _lookup_numbers(col, dictionary, column, unseen):
    """Numeric values coded by a numeric ``dictionary`` (NaN: missing or unseen)."""
    if dictionary and _kind(dictionary) != "number":
        raise TypeError(f"column {column!r} holds numbers, but the model learned string "
                        "categories for it: give the column's values, not codes")
    keys = np.asarray(dictionary, dtype=np.float64)
    seen = ~np.isnan(col)
    pos = np.searchsorted(keys, col[seen]) if keys.size else np.zeros(int(seen.sum()), np.int64)
    pos = np.minimum(pos, max(keys.size - 1, 0))
    hit = keys[pos] == col[seen] if keys.size else np.zeros(pos.shape[0], dtype=bool)
    missed = np.unique(col[seen][~hit]).tolist()
    _unseen(column, missed, unseen)
    coded = np.full(col.shape[0], np.nan)
    coded[np.nonzero(seen)[0][hit]] = pos[hit]
    return coded, missed


def unify(features, reducer):
    """Data shards: every shard's dictionaries merged (the sorted union of their values),
    and this shard's codes moved to it in place, so that every shard codes a value alike
    and the dictionaries are those a single process holding every row would build."""
    if not features.categories or reducer is None or reducer.n_shards <= 1:
        return features
    parts = reducer.allgather(features.categories)
    merged = {}
    for f in features.categories:
        values = {v for part in parts for v in part.get(f, [])}
        merged[f] = sorted(values)
        if _kind(merged[f]) == "mixed":
            raise TypeError(f"feature {f} holds strings on one shard and numbers on another")
    return recode(features, merged)


def coded_frame(frame, names, dictionaries):
    """The float64 matrix (Fortran order) of a pandas DataFrame whose columns are the
    model's features ``names``, in order, coded by the model's ``dictionaries`` (feature
    index -> values) in one pass: each ``category`` column's own codes mapped through a
    table per (dtype, dictionary), kept across calls (:func:`_dtype_table`), numeric
    columns as numbers. What :func:`~.validation.as_feature_matrix` and then
    :func:`recode` give, to the bit, without coding every column by its own dictionary
    first (on 1,000-row frames with three category columns that pass cost more than the
    numeric columns' whole reading). None wherever the general path must decide: other
    names or order, a dtype other than numpy numbers and ``category``, categories of
    another kind than the model's, or a row's value that the dictionary lacks (unseen)."""
    pd = _pandas()
    if pd is None or not _same_names(frame.columns, names):
        return None
    out = np.empty(frame.shape, dtype=np.float64, order="F")
    for j, column in enumerate(_column_arrays(frame)):
        dictionary = dictionaries.get(j)
        if dictionary is None:
            if not (isinstance(column, np.ndarray) and column.dtype.kind in "biuf"):
                return None
            out[:, j] = column
            continue
        if not isinstance(column, pd.Categorical):
            return None
        known = _dtype_order(column.dtype, names[j])
        if known is None or not dictionary:
            return None
        index, kind = _index_of(dictionary)
        if known[0] and _kind(known[0][:1]) != kind:
            return None
        table, some_unseen = _dtype_table(known[0], dictionary, index)
        codes = np.asarray(column.codes)
        out[:, j] = table[codes]  # (code -1, missing: the table's last entry, NaN)
        if some_unseen and np.isnan(out[:, j][codes >= 0]).any():
            return None  # (a row holds a category the dictionary lacks)
    return out


#: (id of a frame's column Index, id of a model's names) -> (the Index, a copy of the
#: names): the frames of repeated prediction calls share their columns, whose names then
#: need no look at each (pandas 3 iterates a str Index through Arrow), only a list
#: compare with the copy (the model's list may have been changed in place).
_NAMES_SEEN = {}


def _same_names(columns, names):
    """Are a frame's columns (an immutable pandas Index) ``names``, in order?"""
    hit = _NAMES_SEEN.get((id(columns), id(names)))
    if hit is not None and hit[0] is columns and hit[1] == names:
        return True
    if len(columns) != len(names) or any(str(c) != n for c, n in zip(columns, names)):
        return False
    _keep(_NAMES_SEEN, (id(columns), id(names)), (columns, list(names)))
    return True


def _column_arrays(frame):
    """The arrays of a DataFrame's columns, in order: without making a Series of each
    where pandas offers it (``_get_column_array``, a twelfth of the cost on a 7-column
    frame; its absence falls back to the public way)."""
    get = getattr(frame, "_get_column_array", None)
    if get is not None:
        try:
            return [get(j) for j in range(frame.shape[1])]
        except Exception:  # noqa: BLE001 - a private API that changed: the public way
            pass
    return [column.array if not isinstance(column.dtype, np.dtype) else column.to_numpy()
            for _, column in frame.items()]


def coded_arrow(table, names, dictionaries):
    """:func:`coded_frame` for an Arrow table (a polars frame converted): the columns
    must be the model's features ``names``, in order; numbers as numbers, and each
    categorical feature's string or dictionary-of-strings column looked up in the
    model's dictionary by Arrow's own hash lookup (``pyarrow.compute.index_in``: over
    the column's dictionary, not its rows, where it has one). What the general path
    gives, to the bit; None where it must decide (other names or types, a dictionary of
    numbers, a row's value the dictionary lacks)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if list(table.column_names) != names:
        return None
    out = np.empty((table.num_rows, table.num_columns), dtype=np.float64, order="F")
    for j, field in enumerate(table.schema):
        dictionary, kind = dictionaries.get(j), field.type
        if dictionary is None:
            if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                    or pa.types.is_boolean(kind)):
                return None
            column = table.column(j)
            if not pa.types.is_float64(kind):
                column = pc.cast(column, pa.float64(), safe=False)
            out[:, j] = column.to_numpy(zero_copy_only=False)  # (nulls: NaN)
            continue
        coded = _arrow_codes(table.column(j), _arrow_dictionary(dictionary), pa, pc)
        if coded is None:
            return None
        out[:, j] = coded
    return out


def _arrow_codes(column, value_set, pa, pc):
    """A string or dictionary-of-strings Arrow column's codes in the model's dictionary
    (``value_set``, an Arrow array of it), NaN where missing; None where the column is of
    another type or a row holds a value the dictionary lacks."""
    if value_set is None:
        return None
    kind = column.type
    if pa.types.is_dictionary(kind):
        if not (pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type)):
            return None
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        table, some_unseen = _arrow_table(column.dictionary, value_set, pc)
        if table is None:  # (a value twice in the column's dictionary: the general path's
            return None  # error)
        codes, missing = column.indices, len(column.dictionary)  # (the table's last entry)
        if codes.null_count:
            codes = pc.fill_null(codes.cast(pa.int64()), missing)
        codes = codes.to_numpy()
        coded = table[codes]  # (missing: NaN)
        if not some_unseen:
            return coded
        codes = np.where(codes == missing, -1, codes)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        coded = pc.index_in(column, value_set=value_set).to_numpy(
            zero_copy_only=False).astype(np.float64)
        codes = np.where(column.is_null().to_numpy(zero_copy_only=False), -1, 0)
    else:
        return None
    if np.isnan(coded[codes >= 0]).any():
        return None  # (a row holds a value the dictionary lacks: the general path decides)
    return coded


#: id of a model's dictionary -> (the dictionary, it as an Arrow string array, or None
#: for a dictionary of numbers).
_ARROW_DICTIONARIES = {}
#: (id of a model's dictionary as Arrow, the length of a column's dictionary) -> (the
#: two, each of the column's dictionary's values' code in the model's with a NaN
#: appended (None: a value twice), whether some value is unseen): each call converts a
#: frame to Arrow anew, with equal dictionaries (compared in C).
_ARROW_TABLES = {}


def _arrow_table(values, value_set, pc):
    """(Per value of an Arrow dictionary ``values``, its code in the model's dictionary
    ``value_set``, NaN where it has none (unseen), with a NaN appended for code -1;
    whether some value is unseen), kept for dictionaries equal to one seen lately."""
    key = (id(value_set), len(values))
    hit = _ARROW_TABLES.get(key)
    if hit is None or hit[0] is not value_set or not hit[1].equals(values):
        table = pc.index_in(values, value_set=value_set).to_numpy(zero_copy_only=False)
        table = np.asarray(table, dtype=np.float64)
        twice = pc.count_distinct(values, mode="all").as_py() != len(values)
        hit = (value_set, values, None if twice else np.append(table, np.nan),
               bool(np.isnan(table).any()))
        _keep(_ARROW_TABLES, key, hit)
    return hit[2], hit[3]


def _arrow_dictionary(dictionary):
    """A model's dictionary of strings as an Arrow array (kept), None for numbers."""
    hit = _ARROW_DICTIONARIES.get(id(dictionary))
    if hit is None or hit[0] is not dictionary:
        import pyarrow as pa
        arrow = None
        if _index_of(dictionary)[1] == "str":
            try:
                arrow = pa.array(list(dictionary), type=pa.string())
            except (pa.ArrowException, UnicodeError):  # (strings Arrow cannot hold)
                pass
        hit = (dictionary, arrow)
        _keep(_ARROW_DICTIONARIES, id(dictionary), hit)
    return hit[1]
