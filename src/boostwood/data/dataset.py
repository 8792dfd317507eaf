"""Dataset: validated training or evaluation data, binned on first use."""
import numpy as np

from .._config import HIST_CHANNELS
from .._kernels.binning import missing_features
from .._kernels.checksum import fingerprint_words
from .binning import BinMapper
from .categories import recode, unify
from .columns import SortedColumns
from .queries import queries_from
from .rowinfo import RowInfo, unit_weights
from .checks import Param, check_value
from .validation import as_feature_matrix, check_memory, check_vector, read_only

#: The binning's parameters: the Dataset owns them (``train``'s parameters of these
#: names are these specs, passed on to :meth:`Dataset.set_binning`).
BINNING_PARAMS = {
    "max_bin": Param(255, "int", 2, 65535, aliases=("max_bins",), doc="value bins per feature"),
    "bin_construct_sample_cnt": Param(200000, "int", 1, aliases=("subsample_for_bin",),
                                      doc="rows sampled to fit bin edges")}
#: Dataset's own arguments.
_ARGS = {**BINNING_PARAMS, "seed": Param(0, "int")}


class Dataset:
    """Features, labels and weights, validated once and binned for training.

    Parameters
    ----------
    data : array-like of shape (n_rows, n_features)
        numpy array (any real or integer dtype, C or F order), pandas or polars
        DataFrame or Arrow table (pyarrow ``Table`` / ``RecordBatch``) with numeric or
        boolean columns (named features; a null is a missing value), or scipy sparse
        CSR / CSC matrix (absent entries are zeros). NaN marks a missing value.
    label : array-like of shape (n_rows,), optional
    weight : array-like of shape (n_rows,), optional
        Non-negative sample weights, not all zero.
    base_margin : array-like of shape (n_rows,) or (n_rows, n_outputs), optional
        Initial margin each row starts from, instead of the model's base score.
    feature_names : list of str, optional
        Defaults to the DataFrame's column names, else ``f0, f1, ...``.
    reference : Dataset, optional
        Training Dataset whose bins this one reuses (for validation sets).
    max_bin : int, default=255
        Maximum number of value bins per feature (2 to 65535).
    bin_construct_sample_cnt : int, default=200000
        Rows sampled to fit the bin edges.
    seed : int, default=0
        Seed of that sample.
    row_ids : array-like of shape (n_rows,), int, optional
        Global ids of these rows when they are one shard of a larger data set
        (distributed training); distinct non-negative integers, default 0..n-1. Per-row
        randomness (bagging, the binning sample) is keyed by them, so that a shard
        draws for its rows what a single process holding every row would. A shard
        may be empty.
    group : array-like of int, optional
        Learning to rank: the sizes of the queries, whose rows are contiguous and in
        order (LightGBM's ``group``).
    qid : array-like of shape (n_rows,), optional
        Learning to rank: each row's query id (XGBoost's ``qid``), numbers or strings, in
        any order: rows of one id form one query wherever they are. Give ``group`` or
        ``qid``, not both. Rows and predictions stay in the order given.
    group_weight : array-like of shape (n_queries,), optional
        One weight per query (XGBoost's group weights: every row of the query counts
        that much), in query order: the order of ``group``, or of the sorted ``qid``
        values. ``weight`` stays per row (LightGBM's meaning).
    position : array-like of int of shape (n_rows,), optional
        Learning to rank from clicks: the position each row was shown at in its query
        (0 = first), which ``lambdarank_unbiased`` estimates the position bias from.
    categorical_feature : list of str or int, optional
        Features to treat as categorical (LightGBM's argument), by name or index, beyond
        those categorical by type: pandas ``category``, string and object columns, and
        Arrow / polars string and dictionary columns always are. A categorical feature's
        values (strings or numbers) are coded under a dictionary of the values the rows
        hold, stored in the model; later data is coded by value (see
        :mod:`boostwood.data.categories`). With ``reference``, the reference's
        categorical features and dictionaries apply (a category the reference never saw
        is missing).

    A Dataset never copies a float numpy array it is given, and a later change of
    that array by the caller never changes what the Dataset holds:

    * with a label, the Dataset bins the array at once (with its own ``max_bin``,
      ``bin_construct_sample_cnt`` and ``seed``); training reads only those bins,
      and predicting on the Dataset falls back to them (exactly: bin edges stand
      for the values) if the array changed;
    * every later read of the array itself (binning again because ``train`` asks
      for another ``max_bin``, ``tree_method="exact"``, a model whose thresholds
      are not the bin edges, ``cv``) checks a fingerprint taken at creation and
      raises ``ValueError`` if the caller changed the array.

    Pass the binning parameters to the Dataset rather than only to ``train``: a
    ``train`` call with another ``max_bin`` bins the array a second time. Other
    inputs (DataFrames, sparse matrices, other dtypes, distributed shards) are
    converted or copied, hence owned, and binned at the first :meth:`construct`.
    """

    def __init__(self, data, label=None, weight=None, base_margin=None,
                 feature_names=None, reference=None, max_bin=255,
                 bin_construct_sample_cnt=200000, seed=0, row_ids=None, group=None,
                 qid=None, group_weight=None, position=None, categorical_feature=None):
        self._features = as_feature_matrix(data, "data", feature_names,
                                           allow_empty_rows=row_ids is not None,
                                           categorical_feature=categorical_feature)
        self._print = None  # fingerprint of the caller's array, held by reference
        dense = self._features.dense if isinstance(data, np.ndarray) else None
        if dense is not None and np.shares_memory(dense, data):
            if row_ids is None:
                self._print = fingerprint(dense)
            else:  # a shard is binned with the other shards' help, later: own a copy
                self._features.dense = dense.copy()
        n_rows, n_features = self._features.shape
        self.row_ids = None
        if row_ids is not None:
            ids = np.asarray(row_ids)
            if ids.shape != (n_rows,) or not np.issubdtype(ids.dtype, np.integer) \
                    or (n_rows and ids.min() < 0) or np.unique(ids).size != n_rows:
                raise ValueError("row_ids must hold one distinct non-negative integer per row")
            self.row_ids = ids.astype(np.int64)
        self.label = None if label is None else _own(check_vector(label, n_rows, "label"),
                                                     label)
        self.queries = queries_from(n_rows, group, qid, group_weight, position)
        self.weight = None
        if weight is not None and self.queries is not None \
                and np.shape(weight) == (self.queries.n_queries,) \
                and self.queries.n_queries != n_rows:
            raise ValueError(f"weight has one entry per query ({self.queries.n_queries}), not "
                             f"per row ({n_rows}): pass per-query weights as group_weight "
                             "(XGBoost's meaning), per-row weights as weight (LightGBM's)")
        if weight is not None:
            self.weight = _own(check_vector(weight, n_rows, "weight", nonnegative=True), weight)
            if n_rows and not np.any(self.weight > 0) and row_ids is None:
                raise ValueError("weight must have at least one positive entry")
        self.base_margin = None
        if base_margin is not None:
            self.base_margin = _own(check_vector(base_margin, n_rows, "base_margin",
                                                 allow_2d=True), base_margin)
        if reference is not None:
            if not isinstance(reference, Dataset):
                raise TypeError(f"reference must be a Dataset, got {type(reference).__name__}")
            if reference.num_feature() != n_features:
                raise ValueError(
                    f"data has {n_features} features but the reference Dataset has "
                    f"{reference.num_feature()}")
        self.reference = reference
        if reference is not None and (reference.categories or self._features.categories):
            self._features = recode(self._features, reference.categories)
        self.max_bin = check_value("max_bin", max_bin, _ARGS["max_bin"])
        self.bin_construct_sample_cnt = check_value(
            "bin_construct_sample_cnt", bin_construct_sample_cnt, _ARGS["bin_construct_sample_cnt"])
        self.seed = check_value("seed", seed, _ARGS["seed"])
        self.bin_mapper = None
        self.X_binned = None
        self._pinned = False  # binned by construct(): the binning may no longer change
        if self._print is not None and self.label is not None:
            self._bin()  # now, while the caller's array is as given

    # -- shape and names -------------------------------------------------------------
    def num_row(self):
        return self._features.shape[0]

    def num_feature(self):
        return self._features.shape[1]

    @property
    def feature_names(self):
        if self._features.feature_names is not None:
            return list(self._features.feature_names)
        return default_feature_names(self.num_feature())

    @property
    def categories(self):
        """Feature index -> the category dictionary of each categorical feature (its
        values; code c is entry c); empty when every feature is numeric."""
        return self._features.categories

    @property
    def feature_types(self):
        """"numeric" or "categorical", per feature."""
        return ["categorical" if f in self.categories else "numeric"
                for f in range(self.num_feature())]

    @property
    def features(self):
        """The feature matrix as given (a :class:`FeatureMatrix`).

        Raises
        ------
        ValueError
            If this Dataset holds the caller's numpy array by reference and the caller
            changed it since the Dataset was created.
        """
        if self.source_changed():
            raise ValueError(
                "the numpy array this Dataset was created from has been changed since "
                "(a Dataset holds it by reference, without a copy); create the Dataset "
                "again from the new values, or pass a copy")
        return self._features

    def source_changed(self):
        """Whether the caller changed the numpy array this Dataset holds by reference."""
        return self._print is not None and fingerprint(self._features.dense) != self._print

    def features_for_splits(self, split_features, split_thresholds):
        """A feature matrix on which ``x[f] <= t`` decides every split (``split_features[i]``,
        ``split_thresholds[i]``) as on the data given: the data themselves if unchanged,
        else, when every threshold is a bin edge of this Dataset, each value's bin edge
        (NaN for the missing bin), which decides such splits exactly as the value did.
        ``split_thresholds`` None (splits that are not thresholds) allows only the data.

        Raises ValueError (see :attr:`features`) when neither is possible."""
        if not self.source_changed() or self.X_binned is None or split_thresholds is None:
            return self.features
        m = self.bin_mapper
        f = np.asarray(split_features, dtype=np.int64)
        t = np.asarray(split_thresholds, dtype=np.float64)
        for j in np.unique(f):
            if not np.all(np.isin(t[f == j], m.edges[j])):
                return self.features  # raises: the bins cannot stand in for the values
        from .validation import FeatureMatrix
        decoded = m.edges_flat[m.edge_offsets[None, :] + np.minimum(
            self.X_binned, (m.n_bins - 1)[None, :])]
        decoded[self.X_binned == m.missing_bins[None, :]] = np.nan
        return FeatureMatrix(dense=decoded, feature_names=self._features.feature_names)

    def get_label(self):
        return self.label

    def get_weight(self):
        return self.weight

    # -- binning --------------------------------------------------------------------
    def set_binning(self, max_bin=None, bin_construct_sample_cnt=None, seed=None):
        """Change binning parameters before :meth:`construct`; conflicting later calls raise."""
        new = dict(max_bin=max_bin, bin_construct_sample_cnt=bin_construct_sample_cnt, seed=seed)
        for key, value in new.items():
            if value is None or getattr(self, key) == value:
                continue
            if self._pinned and self.reference is None:
                raise ValueError(
                    f"this Dataset was already binned with {key}={getattr(self, key)}; "
                    f"create a new Dataset to use {key}={value}")
            setattr(self, key, value)
            if self.reference is None:  # binned at creation with other settings: again
                self.bin_mapper = self.X_binned = None
        return self

    def global_row_ids(self):
        """Global ids of the rows (``row_ids``, default 0..n-1), int64."""
        if self.row_ids is not None:
            return self.row_ids
        return np.arange(self.num_row(), dtype=np.int64)

    def row_info(self, label=None):
        """The :class:`RowInfo` of these rows (``label`` replaces the stored labels)."""
        w = unit_weights(self.num_row()) if self.weight is None else self.weight
        return RowInfo(self.label if label is None else label, w, self.queries,
                       self.base_margin, self.row_ids)

    def get_group(self):
        """The rows of each query, in query order (LightGBM's group sizes), or None
        without queries."""
        return None if self.queries is None else self.queries.sizes()

    def subset(self, rows, reference=None):
        """A Dataset of the rows ``rows`` (ascending row ids) of this one: labels,
        weights, base margins, queries (which must be kept whole), names and binning
        settings kept; binned with ``reference``'s bins when given."""
        rows = np.asarray(rows, dtype=np.int64)
        pick = (lambda a: None if a is None else a[rows])  # noqa: E731
        f = self.features.take_rows(rows)
        out = Dataset(f if f.categories else f.dense if f.dense is not None else f.csc,
                      pick(self.label),
                      weight=pick(self.weight), base_margin=pick(self.base_margin),
                      feature_names=self.feature_names, reference=reference,
                      max_bin=self.max_bin, bin_construct_sample_cnt=self.bin_construct_sample_cnt,
                      seed=self.seed)
        if self.queries is not None:
            out.queries = self.queries.subset(rows, self.num_row())
        return out

    def construct(self, reducer=None):
        """Fit the bins (or take the reference's) and bin the features. Idempotent.

        With the ``reducer`` of a distributed run, every shard fits the same bins
        (see :meth:`BinMapper.fit`)."""
        self._bin(reducer)
        self._pinned = True
        return self

    def _bin(self, reducer=None):
        """Bin the features unless binned already with the current settings (and the
        reference's current bins)."""
        if self.X_binned is not None and (
                self.reference is None or self.bin_mapper is self.reference._bin().bin_mapper):
            return self
        features = self.features
        n_rows, n_features = features.shape
        # the binned matrix, and the two histograms a node split needs at the least
        check_memory(n_rows * n_features * (1 if self.max_bin <= 255 else 2)
                     + 2 * n_features * (self.max_bin + 1) * HIST_CHANNELS * 8,
                     f"binning {n_rows} rows x {n_features} features")
        if self.reference is not None:
            self.bin_mapper = self.reference._bin().bin_mapper
        else:
            self._features = features = unify(features, reducer)
            self.bin_mapper = BinMapper(self.max_bin, self.bin_construct_sample_cnt,
                                        self.seed).fit(features, self.weight,
                                                       self.global_row_ids(), reducer)
        self.X_binned = self.bin_mapper.transform(features)
        return self

    def sorted_columns(self):
        """Every feature's distinct values, rank codes and sort order (built once, cached);
        what ``tree_method="exact"`` searches."""
        if getattr(self, "_sorted_columns", None) is None:
            self._sorted_columns = SortedColumns(self.features)
        return self._sorted_columns

    def has_missing(self):
        """Per feature: does any row fall in the missing bin?"""
        self._bin()
        out = np.empty(self.X_binned.shape[1], dtype=np.bool_)
        missing_features(self.X_binned, np.asarray(self.bin_mapper.missing_bins), out)
        return out


def fingerprint(dense):
    """The fingerprint (:mod:`boostwood._kernels.checksum`) of a dense array's bytes."""
    flat = np.ravel(dense, order="K")  # a view for C- and F-ordered arrays
    return int(fingerprint_words(read_only(flat.view(np.uint32))))


def default_feature_names(n):
    """The names of features given without names: f0, f1, ..."""
    return [f"f{i}" for i in range(n)]


def _own(checked, given):
    """``checked`` (a validated array), copied if it is the caller's own memory."""
    if isinstance(given, np.ndarray) and np.shares_memory(checked, given):
        return checked.copy()
    return checked
