"""Validation at the boundary: everything that enters boostwood passes here once.

Accepted feature containers: numpy arrays of any real or integer dtype (C or
F order), pandas DataFrames with numeric / boolean columns, Arrow tables
(pyarrow ``Table`` / ``RecordBatch``) and polars DataFrames of integer, floating,
decimal, boolean or null columns (nulls are missing values, as NaN), and scipy sparse
CSR / CSC matrices (absent entries are zeros, as in scipy and LightGBM). Category,
string and object columns of frames and tables are categorical features
(:mod:`.categories`).
"""
import os
import sys

import numpy as np

from .._config import MAX_ROWS


def _is_pandas_frame(obj):
    pd = sys.modules.get("pandas")  # not imported: obj cannot be one
    return pd is not None and isinstance(obj, pd.DataFrame)


def _is_arrow_table(obj):
    """A pyarrow Table or RecordBatch, or a polars DataFrame (which converts to one)."""
    module = type(obj).__module__ or ""
    return ((module.startswith("pyarrow") and hasattr(obj, "schema")
             and hasattr(obj, "column_names"))
            or (module.startswith("polars") and hasattr(obj, "to_arrow")
                and hasattr(obj, "columns")))


def _arrow_to_array(table, name, categorical=None):
    """Float64 column-major copy of an Arrow table's (or polars frame's) columns; nulls
    become NaN; string and dictionary columns (polars ``Categorical`` / ``Enum`` /
    ``String``), and the columns ``categorical`` names, become category codes
    (:mod:`.categories`). Other column types (dates, lists, ...) are an error."""
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError(f"{name}: reading an Arrow table or a polars DataFrame needs "
                          "pyarrow (pip install boostwood[arrow])") from None
    from .categories import encode_arrow, encode_numbers, is_arrow_categorical, \
        resolve_categorical
    if (type(table).__module__ or "").startswith("polars"):
        table = table.to_arrow()
    names = [str(n) for n in table.column_names]
    declared = set(resolve_categorical(categorical, names, table.num_columns))
    numeric = (pa.types.is_integer, pa.types.is_floating, pa.types.is_boolean,
               pa.types.is_null, pa.types.is_decimal)
    bad = [f"{f.name} ({f.type})" for f in table.schema
           if not any(t(f.type) for t in numeric) and not is_arrow_categorical(f.type)]
    if bad:
        raise TypeError(f"{name}: columns of these types are not supported: {bad[:10]}; "
                        "encode them as numbers or strings first")
    out = np.empty((table.num_rows, table.num_columns), dtype=np.float64, order="F")
    categories = {}
    for j, field in enumerate(table.schema):
        if is_arrow_categorical(field.type):
            out[:, j], categories[j] = encode_arrow(table.column(j), names[j])
        elif j in declared:
            out[:, j], categories[j] = encode_numbers(_arrow_vector(table.column(j), name),
                                                      names[j])
        else:
            out[:, j] = _arrow_vector(table.column(j), name)
    return out, names, categories


def _arrow_vector(values, name):
    """An Arrow array of numbers or booleans as float64, nulls as NaN (safe=False:
    integers beyond 2**53 round to the nearest double, as numpy's do)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    try:
        values = pc.cast(values, pa.float64(), safe=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from None
    return values.to_numpy(zero_copy_only=False)


def _is_sparse(obj):
    return hasattr(obj, "tocsc") and hasattr(obj, "nnz") and hasattr(obj, "shape")


class FeatureMatrix:
    """Validated features: a dense float matrix or a CSC sparse matrix, plus names.

    Attributes
    ----------
    dense : ndarray of shape (n_rows, n_features), float32 or float64, or None
    csc : scipy.sparse.csc_matrix of float64, or None
    feature_names : list of str or None

    A dense matrix may also be held as row blocks (:meth:`from_blocks`: a Dask worker's
    partitions): binning and prediction read them block by block, and only what needs
    the whole matrix (``dense``) joins them, once.
    """

    def __init__(self, dense=None, csc=None, feature_names=None, categories=None):
        self._dense, self._blocks = dense, None
        self.csc = csc
        self.feature_names = feature_names
        #: feature index -> the column's category dictionary (its codes are in ``dense``),
        #: for the categorical features (:mod:`.categories`)
        self.categories = {} if categories is None else categories

    @classmethod
    def from_blocks(cls, blocks, feature_names=None):
        """A dense matrix held as its row blocks (2-d float arrays of one width, in row
        order), without joining them."""
        blocks = [b for b in blocks]
        if not blocks or any(b.ndim != 2 or b.dtype not in (np.float32, np.float64)
                             for b in blocks) or len({b.shape[1] for b in blocks}) != 1:
            raise ValueError("row blocks must be 2-d float arrays of one width")
        fm = cls(feature_names=feature_names)
        fm._blocks = blocks
        return fm

    @property
    def dense(self):
        if self._dense is None and self._blocks is not None:  # joined when first needed
            self._dense = self._blocks[0] if len(self._blocks) == 1 else \
                np.concatenate(self._blocks, axis=0)
            self._blocks = None
        return self._dense

    @dense.setter
    def dense(self, value):
        self._dense, self._blocks = value, None

    def joined(self):
        """This matrix with its row blocks joined into a new one (this one keeps its
        blocks); itself when it holds no blocks."""
        if self._blocks is None:
            return self
        return FeatureMatrix(dense=np.concatenate(self._blocks, axis=0),
                             feature_names=self.feature_names, categories=self.categories)

    @property
    def is_dense(self):
        """Dense (one matrix or row blocks), not sparse, without joining blocks."""
        return self._dense is not None or self._blocks is not None

    @property
    def shape(self):
        if self._blocks is not None:
            return (sum(b.shape[0] for b in self._blocks), self._blocks[0].shape[1])
        return self._dense.shape if self._dense is not None else self.csc.shape

    def with_missing(self, value):
        """A copy in which entries equal to ``value`` are NaN (missing); the caller's
        arrays are left as they are. A sparse matrix's absent entries are zeros, so
        ``value`` 0 is refused for one."""
        if self.dense is not None:
            dense = self.dense.copy()
            numeric = np.ones(dense.shape[1], dtype=bool)
            numeric[list(self.categories)] = False  # codes are not values
            block = dense[:, numeric]
            block[block == dense.dtype.type(value)] = np.nan  # float32 data: its float32
            dense[:, numeric] = block
            return FeatureMatrix(dense=dense, feature_names=self.feature_names,
                                 categories=self.categories)
        if value == 0:
            raise ValueError("missing=0 cannot apply to a sparse matrix, whose absent "
                             "entries are zeros; pass the data dense, or store NaN")
        csc = self.csc.copy()
        csc.data[csc.data == value] = np.nan
        return FeatureMatrix(csc=csc, feature_names=self.feature_names)

    def take_rows(self, rows):
        """A FeatureMatrix of the given rows (same names)."""
        if self._blocks is not None:
            rows = np.asarray(rows)
            if rows.dtype == np.bool_ or not np.issubdtype(rows.dtype, np.integer) \
                    or rows.ndim != 1:
                raise IndexError("rows of a matrix held as row blocks are a 1-d array of "
                                 "integer indices")
            n = self.shape[0]
            if rows.size and (rows.min() < -n or rows.max() >= n):
                raise IndexError(f"row index out of range for {n} rows")
            rows = np.where(rows < 0, rows + n, rows).astype(np.int64)
            out = np.empty((rows.shape[0], self.shape[1]),
                           dtype=np.result_type(*[b.dtype for b in self._blocks]))
            for start, block in self.row_chunks():
                here = (rows >= start) & (rows < start + block.shape[0])
                out[here] = block[rows[here] - start]
            return FeatureMatrix(dense=out, feature_names=self.feature_names,
                                 categories=self.categories)
        if self.dense is not None:
            return FeatureMatrix(dense=self.dense[rows], feature_names=self.feature_names,
                                 categories=self.categories)
        return FeatureMatrix(csc=self.csc[rows].tocsc(), feature_names=self.feature_names)

    def take_columns(self, order):
        """A FeatureMatrix of the columns ``order`` (a list of indices), in that order,
        with their names and category dictionaries."""
        order = list(order)
        names = None if self.feature_names is None else [self.feature_names[j] for j in order]
        cats = {i: self.categories[j] for i, j in enumerate(order) if j in self.categories}
        if self.dense is not None:
            return FeatureMatrix(dense=self.dense[:, order], feature_names=names, categories=cats)
        return FeatureMatrix(csc=self.csc[:, order].tocsc(), feature_names=names,
                             categories=cats)

    def row_chunks(self, chunk_rows=65536):
        """Yield (start, dense block), float: the dense matrix itself in one block (row- or
        column-major, as given), its row blocks as held (:meth:`from_blocks`: any
        size), or, for sparse input, row-major blocks of at most ``chunk_rows`` rows and
        64 MiB."""
        n = self.shape[0]
        if self._blocks is not None:
            start = 0
            for block in self._blocks:
                yield start, block
                start += block.shape[0]
            return
        if self.dense is not None:
            yield 0, self.dense
            return
        row_bytes = 8 * self.shape[1]
        check_memory(row_bytes, "a dense row of this sparse matrix")
        chunk_rows = max(1, min(chunk_rows, (64 << 20) // row_bytes))
        csr = self.csc.tocsr()
        for start in range(0, n, chunk_rows):
            yield start, np.ascontiguousarray(csr[start:start + chunk_rows].toarray())


def _frame_to_array(frame, name, categorical=None):
    """(float64 matrix, names, categories) of a pandas DataFrame: numeric and boolean
    columns as numbers; ``category``, string and object columns, and the columns
    ``categorical`` names, as category codes (:mod:`.categories`). The frame is read,
    never changed."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    from .categories import encode_pandas, is_category_like, resolve_categorical
    names = [str(c) for c in frame.columns]
    declared = set(resolve_categorical(categorical, names, len(names)))
    dtypes = list(frame.dtypes)
    kinds = [is_category_like(dt) or j in declared for j, dt in enumerate(dtypes)]
    bad = [str(c) for c, dt, cat in zip(frame.columns, dtypes, kinds)
           if not (cat or (dt.kind in "biufc" if isinstance(dt, np.dtype)  # (numpy's: fast)
                           else is_numeric_dtype(dt) or is_bool_dtype(dt)))]
    if bad:
        raise TypeError(
            f"{name}: DataFrame columns of these types are not supported: {bad[:10]}; "
            "encode them as numbers or strings first")
    if not any(kinds):
        return frame.to_numpy(dtype=np.float64, na_value=np.nan), names, {}
    out = np.empty(frame.shape, dtype=np.float64, order="F")
    categories = {}
    # (items(): the columns by position, as iloc, at about half its cost a column)
    for j, (cat, (_, column)) in enumerate(zip(kinds, frame.items())):
        if cat:
            out[:, j], categories[j] = encode_pandas(column, names[j])
        else:
            out[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
    return out, names, categories


def coded_features(data, names, dictionaries):
    """A FeatureMatrix of ``data`` coded by a model's ``dictionaries`` (feature index ->
    values) in one pass, where ``data`` is a pandas frame, an Arrow table or a polars
    frame whose columns are the model's features ``names``, in order
    (:func:`.categories.coded_frame`, :func:`.categories.coded_arrow`): what
    :func:`as_feature_matrix` and then :func:`.categories.recode` give, to the bit.
    None where that general path must decide (and for a model without categories)."""
    from .categories import coded_arrow, coded_frame
    if not dictionaries:
        return None
    if _is_pandas_frame(data):
        coded = coded_frame
    elif _is_arrow_table(data):
        if (type(data).__module__ or "").startswith("polars"):
            if list(data.columns) != names:  # (checked before the conversion)
                return None
            data = data.to_arrow()
        coded = coded_arrow
    else:
        return None
    if not 0 < len(data) <= MAX_ROWS:
        return None
    dense = coded(data, names, dictionaries)
    if dense is None:
        return None
    fm = FeatureMatrix(dense=dense, feature_names=list(names))
    fm.categories, fm.unseen = dict(dictionaries), {}
    return fm


def _declared_numbers(data, categorical, names, name):
    """A numpy matrix whose columns ``categorical`` names are category codes: a copy
    (the caller's array is never changed), and the dictionaries."""
    from .categories import encode_numbers, resolve_categorical
    declared = resolve_categorical(categorical, names, data.shape[1])
    if not declared:
        return data, {}
    out = np.array(data, dtype=np.float64, order="F")
    categories = {}
    for j in declared:
        out[:, j], categories[j] = encode_numbers(out[:, j], names[j] if names else f"f{j}")
    return out, categories


def as_feature_matrix(data, name="data", feature_names=None, allow_empty_rows=False,
                      categorical_feature=None):
    """Validate a feature container and return a :class:`FeatureMatrix`.

    Categorical columns (pandas ``category``, string and object columns; Arrow and polars
    string and dictionary columns; and the features ``categorical_feature`` names, by
    name or index) become codes under their own sorted dictionaries
    (:attr:`FeatureMatrix.categories`); :func:`.categories.recode` codes them by a
    model's.

    Raises
    ------
    TypeError
        For unsupported containers or non-numeric columns.
    ValueError
        For a wrong number of dimensions or empty data.
    """
    names = None
    categories = {}
    if isinstance(data, FeatureMatrix):  # validated already (a subset's rows)
        fm, names, categories = data, data.feature_names, data.categories
    elif _is_pandas_frame(data):
        arr, names, categories = _frame_to_array(data, name, categorical_feature)
        fm = FeatureMatrix(dense=arr)
    elif _is_arrow_table(data):
        arr, names, categories = _arrow_to_array(data, name, categorical_feature)
        fm = FeatureMatrix(dense=arr)
    elif _is_sparse(data):
        if categorical_feature:
            raise TypeError(f"{name}: categorical features need dense data (a DataFrame, "
                            "an Arrow table or a numpy array), not a sparse matrix")
        if not (np.issubdtype(data.dtype, np.number) or data.dtype == np.bool_) \
                or np.issubdtype(data.dtype, np.complexfloating):
            raise TypeError(f"{name} must have a real numeric dtype, got {data.dtype}")
        # duplicate entries are summed (scipy's meaning, as toarray() reads them), in the
        # matrix's own dtype as toarray() does, before the cast; indices sorted
        csc = data.tocsc(copy=True)
        csc.sum_duplicates()
        fm = FeatureMatrix(csc=csc.astype(np.float64))
    else:
        if isinstance(data, (list, tuple)):
            data = np.asarray(data)
        if not isinstance(data, np.ndarray):
            raise TypeError(
                f"{name} must be a numpy array, a pandas or polars DataFrame, an Arrow "
                f"table or a scipy sparse matrix, got {type(data).__name__}")
        if data.dtype == np.bool_ or np.issubdtype(data.dtype, np.integer):
            data = data.astype(np.float64)
        elif data.dtype not in (np.float32, np.float64):
            if np.issubdtype(data.dtype, np.floating):
                data = data.astype(np.float64)
            else:
                raise TypeError(f"{name} must have a numeric dtype, got {data.dtype}"
                                + ("; string columns can be categorical features: pass a "
                                   "DataFrame" if data.dtype.kind in "OUS" else ""))
        if categorical_feature and data.ndim == 2:
            names = None if feature_names is None else [str(n) for n in feature_names]
            data, categories = _declared_numbers(data, categorical_feature, names, name)
        fm = FeatureMatrix(dense=data)
    fm.categories = categories
    shape = fm.shape
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-dimensional (n_rows, n_features), got shape {shape}")
    if shape[1] == 0:
        raise ValueError(f"{name} has no features (shape {shape})")
    if shape[0] == 0 and not allow_empty_rows:
        raise ValueError(f"{name} has no rows (shape {shape})")
    if shape[0] > MAX_ROWS:
        raise ValueError(f"{name} has {shape[0]} rows; at most {MAX_ROWS} are supported")
    if feature_names is not None:
        names = check_feature_names(feature_names, shape[1])
    elif names is not None:  # a DataFrame's columns: unique, or importances would merge
        names = check_feature_names(names, shape[1])
    fm.feature_names = names
    return fm


def check_feature_names(feature_names, n_features):
    names = [str(n) for n in feature_names]
    if len(names) != n_features:
        raise ValueError(f"feature_names has {len(names)} names for {n_features} features")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"feature_names must be unique; duplicated: {dup[:10]}")
    return names


def check_vector(values, n_rows, name, allow_2d=False, nonnegative=False):
    """Validate a per-row vector (labels, weights, margins): shape, finiteness, sign.

    Returns a float64 array of shape (n_rows,) or, with ``allow_2d``, (n_rows, k).
    """
    if (type(values).__module__ or "").startswith("pyarrow") and hasattr(values, "to_numpy"):
        values = _arrow_vector(values, name)  # nulls become NaN
    elif _is_pandas_frame(values) or hasattr(values, "to_numpy"):
        values = values.to_numpy()
    if np.iscomplexobj(values):  # numpy would drop the imaginary parts with a warning
        raise TypeError(f"{name} must be real numbers, got complex values")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric: {exc}") from None
    except OverflowError:
        raise ValueError(f"{name} holds a number too large for float64") from None
    if arr.ndim == 2 and arr.shape[1] == 1 and not allow_2d:
        arr = arr[:, 0]
    if arr.ndim not in ((1, 2) if allow_2d else (1,)):
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.shape[0] != n_rows:
        raise ValueError(f"{name} has {arr.shape[0]} entries but the data has {n_rows} rows")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} contains {bad} NaN or infinite values")
    if nonnegative and np.any(arr < 0):
        raise ValueError(f"{name} must be non-negative")
    # writable (a pandas column's values are read-only): one compiled version of each
    # kernel, for writable vectors, as numpy's
    return np.require(arr, requirements=["C", "W"])


def read_only(a):
    """A read-only view of ``a``. Kernels that only read a matrix get one, so that a
    writable numpy array and pandas' read-only values (copy-on-write) reach the same
    compiled version of them (numba compiles one per flag), the one the install
    compiled: no compile on a user's first fit from a DataFrame."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


#: Most bytes of a matrix :func:`as_compiled` copies rather than pass to a version of
#: a kernel the install did not compile.
COPY_FOR_KERNELS_BYTES = 64 << 20


def as_compiled(X):
    """``X`` as the kernels that read a matrix (binning, prediction) were compiled for
    at the install: a writable row-major matrix as it is (numpy's; a one-row call makes
    no view), a column-major one (a pandas frame's values, a coded frame) as a read-only
    view; any other -- read-only row-major (a one-row frame's values), strided (a frame's
    row slice) -- copied to a writable row-major matrix up to COPY_FOR_KERNELS_BYTES (the
    same values), else a read-only view (whose kernels compile on first use)."""
    if X.flags.c_contiguous and X.flags.writeable:
        return X
    if X.flags.f_contiguous and not X.flags.c_contiguous:
        return read_only(X)
    if X.nbytes <= COPY_FOR_KERNELS_BYTES:
        return np.array(X, order="C")
    return read_only(X)


#: The range of positive row weights: gradients and hessians are float32 (w * g), which
#: loses weights far below 1e-30 to underflow (from about 1e-38 they flush to zero and
#: splits change without a word) and overflows far above 1e30 (the clamp GH_CLAMP).
WEIGHT_RANGE = (1e-30, 1e30)


def check_weight_range(w, name="weight"):
    """Refuse positive weights outside :data:`WEIGHT_RANGE` (zero weights are fine):
    boosting on them would silently lose rows or overflow (``train`` checks the weights
    its gradients are made of; trees grown by a criterion sum float64 weights and take
    any)."""
    positive = w[w > 0]
    if positive.size == 0:
        return w
    lo, hi = float(positive.min()), float(positive.max())
    if lo < WEIGHT_RANGE[0] or hi > WEIGHT_RANGE[1]:
        raise ValueError(
            f"{name} holds positive values from {lo:.3g} to {hi:.3g}; they must lie in "
            f"[{WEIGHT_RANGE[0]:g}, {WEIGHT_RANGE[1]:g}]: weighted gradients are float32 and "
            f"would {'underflow' if lo < WEIGHT_RANGE[0] else 'overflow'}. Scale the weights "
            "(the model is the same for weights times any factor c when lambda, alpha, "
            "gamma and min_child_weight are times c too)")
    return w


def physical_memory():
    """Bytes of physical memory of this machine (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def check_memory(nbytes, what):
    """Refuse work whose arrays alone outgrow this machine's memory: a clear error
    naming the size, instead of a MemoryError deep inside or the OOM killer."""
    total = physical_memory()
    if total and nbytes > total:
        raise ValueError(f"{what} needs about {nbytes / 2**30:.1f} GiB, more than this "
                         f"machine's {total / 2**30:.1f} GiB of memory")
