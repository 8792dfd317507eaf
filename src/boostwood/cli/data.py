"""Reading training and prediction files for the command line.

Formats (chosen by ``format`` or the file extension):

* CSV / TSV (``.csv``, ``.tsv``, ``.txt``): with or without a header; the label
  is a column name or index; ``ignore`` drops columns; cells equal to one of the
  ``missing`` markers (default: empty, ``NA``, ``NaN``, ``?``) are missing. A feature
  column holding text (a cell that is not a number), or named in ``categorical``, is a
  categorical feature: its values are category values (numbers where every one is a
  number), coded as :mod:`boostwood.data.categories` codes a frame's.
* LibSVM / SVMlight (``.libsvm``, ``.svm``, ``.svmlight``): ``label [qid:q]
  index:value ...``, indices 0- or 1-based (``zero_based``; default: guessed,
  1-based unless an index 0 occurs).
* Parquet (``.parquet``, needs pyarrow): string and dictionary columns, and those
  named in ``categorical``, are categorical features.

LightGBM-style side files next to the data are read when present:
``<file>.weight`` (one weight per row), ``<file>.init`` (one initial margin per
row, or one per row and class) and ``<file>.query`` (rows per query group).

A malformed line raises :class:`DataError` naming the file and line number.
"""
import csv
import os
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..data import default_feature_names
from ..data.categories import encode_numbers, encode_values, is_arrow_categorical
from ..data.validation import FeatureMatrix, as_feature_matrix, check_memory

MISSING = ("", "NA", "NaN", "nan", "N/A", "?", "null", "NULL")


class DataError(ValueError):
    """A data file that cannot be read (the message names the file and line)."""


@dataclass
class DataSpec:
    """How to read a file: see the module docstring."""

    path: str
    format: str = None
    label: object = None  # column name or index; required for CSV/TSV/Parquet (libsvm: the
    #                       first field, by the format)
    header: object = None  # True / False / None = guess
    ignore: list = field(default_factory=list)
    missing: tuple = MISSING
    zero_based: object = None
    has_label: bool = True
    categorical: list = field(default_factory=list)  # feature columns that are categories
    #   (text columns of CSV/TSV and string columns of Parquet are, without being named)


@dataclass
class Table:
    X: object  # ndarray (n, F) float64, or scipy CSR
    y: object = None
    weight: object = None
    init: object = None
    query: object = None  # rows per query (a .query side file), or None
    qid: object = None  # a query id per row (LibSVM's qid:), or None
    feature_names: list = None
    categories: dict = field(default_factory=dict)  # column of X -> category dictionary

    def features(self):
        """X as a :class:`~boostwood.data.validation.FeatureMatrix`, with its names and
        category dictionaries."""
        return FeatureMatrix(dense=self.X, feature_names=self.feature_names,
                             categories=self.categories) if self.categories else self.X


def file_format(spec):
    if spec.format:
        fmt = spec.format.lower()
    else:
        ext = os.path.splitext(spec.path.removesuffix(".gz"))[1].lower()
        fmt = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".libsvm": "libsvm",
               ".svm": "libsvm", ".svmlight": "libsvm", ".parquet": "parquet"}.get(ext, "csv")
    if fmt not in ("csv", "tsv", "libsvm", "parquet"):
        raise DataError(f"{spec.path}: unknown format {fmt!r} (csv, tsv, libsvm, parquet)")
    return fmt


def _open(path):
    if not os.path.exists(path):
        raise DataError(f"{path}: no such file")
    if path.endswith(".gz"):
        import gzip
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _lines(fh, path):
    """The lines of an open text file; undecodable or corrupt input is a DataError."""
    try:
        yield from fh
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except (EOFError, OSError, zlib.error) as exc:
        raise DataError(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None


def _number(cell, missing, path, line):
    if cell.strip() in missing:
        return np.nan
    try:
        value = float(cell)
    except ValueError:
        raise DataError(f"{path}:{line}: {cell!r} is not a number") from None
    if np.isinf(value) and "inf" not in cell.lower():
        raise DataError(f"{path}:{line}: {cell.strip()!r} is out of the range of a float64")
    return value


def _query_id(text, path, line):
    """A LibSVM ``qid:`` value: an integer read exactly (through a float, ids past 2^53
    would merge, and 3.5 would join query 3), within int64."""
    try:
        value = int(text, 10)
    except ValueError:
        raise DataError(f"{path}:{line}: qid {text!r} is not an integer") from None
    if not -2 ** 63 <= value < 2 ** 63:
        raise DataError(f"{path}:{line}: qid {text!r} is out of the range of an int64")
    return value


def _looks_like_header(row, missing):
    for cell in row:
        if cell.strip() in missing:
            continue
        try:
            float(cell)
        except ValueError:
            return True
    return False


def _column_index(which, names, n_cols, path, what):
    if isinstance(which, str) and not which.lstrip("-").isdigit():
        if names is None or which not in names:
            raise DataError(f"{path}: {what} column {which!r} not found"
                            + ("" if names is None else f" (columns: {names[:10]}...)"))
        return names.index(which)
    i = int(which)
    if not -n_cols <= i < n_cols:
        raise DataError(f"{path}: {what} column {i} is out of range ({n_cols} columns)")
    return i % n_cols


def _label_index(spec, names, n_cols):
    """The label column: named (or numbered) by the user, never guessed."""
    if spec.label is None:
        raise DataError(f"{spec.path}: which column is the label? Set label in the config's "
                        "[data] section or pass --label (boostwood does not guess it)")
    return _column_index(spec.label, names, n_cols, spec.path, "label")


def align_to_model(table, model_names, path):
    """The feature matrix of ``table`` with its columns in the model's order, matched by
    name. Position is used only when neither side has names (a file without a header, or
    LibSVM, for a model trained on unnamed data); a file lacking one of the model's
    columns, with a duplicated column name, or without a header for a model whose
    features are named, is an error."""
    names, X = table.feature_names, table.features()
    unnamed_model = list(model_names) == default_feature_names(len(model_names))
    if names is None:
        if unnamed_model:
            return X
        raise DataError(f"{path}: the file has no header row, so its columns cannot be matched "
                        f"to the model's features {_preview(model_names)}; add a header row")
    seen = set()
    dup = [n for n in names if n in seen or seen.add(n)]
    if dup:
        raise DataError(f"{path}: duplicated column names {_preview(dup)}")
    missing = [n for n in model_names if n not in seen]
    if missing:
        if unnamed_model and len(names) == len(model_names):
            return X  # the model was trained without names: columns are positions
        raise DataError(f"{path}: the model's feature columns {_preview(missing)} are "
                        f"missing (the file has {_preview(names)})")
    index = {n: j for j, n in enumerate(names)}
    order = [index[n] for n in model_names]
    if order == list(range(len(names))):
        return X
    return X.take_columns(order) if isinstance(X, FeatureMatrix) else X[:, order]


def _preview(names, k=8):
    names = list(names)
    return str(names[:k])[:-1] + (", ...]" if len(names) > k else "]")


class _TextColumn(Exception):
    """A feature column that holds text: read the file again with it categorical."""

    def __init__(self, column):
        super().__init__(column)
        self.column = column


def iter_delimited(spec, chunk_rows=None):
    """Yield Tables of at most ``chunk_rows`` rows (None: one Table) from a CSV/TSV file.
    Read whole, a feature column found holding text becomes categorical and the file is
    read again (text columns fail on their first value, so that costs little)."""
    text = set()
    while True:
        try:
            yield from _delimited(spec, chunk_rows, text)
            return
        except _TextColumn as found:
            text.add(found.column)


def _delimited(spec, chunk_rows, text):
    delim = "\t" if file_format(spec) == "tsv" else ","
    missing = set(spec.missing)
    with _open(spec.path) as fh:
        reader = csv.reader(_lines(fh, spec.path), delimiter=delim)
        try:
            first = next(reader)
        except StopIteration:
            raise DataError(f"{spec.path}: the file is empty") from None
        header = spec.header if spec.header is not None else _looks_like_header(first, missing)
        names = [c.strip() for c in first] if header else None
        n_cols = len(first)
        label = _label_index(spec, names, n_cols) if spec.has_label else None
        drop = {_column_index(c, names, n_cols, spec.path, "ignored") for c in spec.ignore}
        keep = [j for j in range(n_cols) if j != label and j not in drop]
        feat_names = [names[j] for j in keep] if names else None
        cats = text | {_column_index(c, names, n_cols, spec.path, "categorical")
                       for c in spec.categorical}
        rows, labels = [], []

        def cell(j, value, line_no):
            if j in cats:
                value = value.strip()
                return None if value in missing else value
            try:
                return _number(value, missing, spec.path, line_no)
            except DataError:
                if chunk_rows is None and j != label:
                    raise _TextColumn(j) from None
                raise

        def parse(line_no, row):
            if len(row) != n_cols:
                raise DataError(f"{spec.path}:{line_no}: {len(row)} fields, expected {n_cols}")
            rows.append([cell(j, row[j], line_no) for j in keep])
            if label is not None:
                labels.append(_number(row[label], missing, spec.path, line_no))

        if not header:  # the first line was data
            parse(1, first)
        positions = [i for i, j in enumerate(keep) if j in cats]
        for row in reader:
            if not row:
                continue
            parse(reader.line_num, row)
            if chunk_rows and len(rows) >= chunk_rows:
                yield _table(rows, labels, label, feat_names, positions)
                rows, labels = [], []
        if rows or not chunk_rows:
            yield _table(rows, labels, label, feat_names, positions)


def _table(rows, labels, label, names, positions=()):
    y = np.array(labels, dtype=np.float64) if label is not None else None
    if not rows:
        return Table(np.zeros((0, len(names) if names else 0)), y, feature_names=names)
    categories = {}
    if positions:
        columns = list(zip(*rows))
        for i in positions:
            column = columns[i]
            codes, categories[i] = _categorical_column(column, names[i] if names else f"f{i}")
            for r, row in enumerate(rows):
                row[i] = codes[r]
    X = np.array(rows, dtype=np.float64).reshape(len(rows), -1)
    return Table(X, y, feature_names=names, categories=categories)


def _categorical_column(values, name):
    """(float codes, dictionary) of a text column: numbers where every value is one."""
    try:
        numbers = np.array([np.nan if v is None else float(v) for v in values])
    except ValueError:
        return encode_values(np.array(values, dtype=object), name)
    return encode_numbers(numbers, name)


#: Largest LibSVM feature index (feature ids are int32 in trees).
_MAX_INDEX = 2**31 - 2


def read_libsvm(spec):
    """A CSR matrix from a LibSVM file, with each line's ``qid`` (any order: the rows of
    one id form one query wherever they are)."""
    from scipy import sparse
    labels, indptr, indices, values, qids = [], [0], [], [], []
    with _open(spec.path) as fh:
        for line_no, raw in enumerate(_lines(fh, spec.path), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            labels.append(_number(parts[0], (), spec.path, line_no))
            seen = set()
            for tok in parts[1:]:
                key, sep, val = tok.partition(":")
                if not sep:
                    raise DataError(f"{spec.path}:{line_no}: {tok!r} is not index:value")
                if key == "qid":
                    qids.append(_query_id(val, spec.path, line_no))
                    continue
                if not key.isdigit() or int(key) > _MAX_INDEX:
                    raise DataError(f"{spec.path}:{line_no}: bad feature index {key!r} (an "
                                    f"integer from 0 to {_MAX_INDEX})")
                if int(key) in seen:
                    raise DataError(f"{spec.path}:{line_no}: feature index {key} appears "
                                    "twice on the line")
                seen.add(int(key))
                indices.append(int(key))
                values.append(_number(val, (), spec.path, line_no))
            indptr.append(len(indices))
    if not labels:
        raise DataError(f"{spec.path}: the file has no rows")
    idx = np.array(indices, dtype=np.int64)
    zero = spec.zero_based if spec.zero_based is not None else bool(idx.size and idx.min() == 0)
    if not zero:
        if idx.size and idx.min() < 1:
            raise DataError(f"{spec.path}: index 0 in a 1-based file (set zero_based)")
        idx = idx - 1
    n_features = int(idx.max()) + 1 if idx.size else 0
    try:  # a column per index up to the largest: its per-feature arrays (a CSC's pointers,
        # the bins) hold about 16 bytes a feature, however few values the file has
        check_memory(16 * n_features, f"{spec.path}'s feature index {n_features - 1}")
    except ValueError as exc:
        raise DataError(str(exc)) from None
    X = sparse.csr_matrix((np.array(values), idx, np.array(indptr)),
                          shape=(len(labels), n_features))
    if qids and len(qids) != len(labels):
        raise DataError(f"{spec.path}: qid given on some lines only")
    return Table(X, np.array(labels) if spec.has_label else None,
                 qid=np.array(qids, dtype=np.int64) if qids else None)


def read_parquet(spec):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{spec.path}: reading Parquet needs pyarrow "
                        "(pip install boostwood[arrow])") from None
    import pyarrow as pa
    try:
        table = pq.read_table(spec.path)
    except (pa.ArrowException, OSError) as exc:
        raise DataError(f"{spec.path}: not a readable Parquet file ({exc})") from None
    names = table.column_names
    label = names[_label_index(spec, names, len(names))] if spec.has_label else None
    drop = {names[_column_index(c, names, len(names), spec.path, "ignored")]
            for c in spec.ignore}
    keep = [n for n in names if n != label and n not in drop]
    if label:
        t = table.schema.field(label).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
                or pa.types.is_decimal(t)):
            raise DataError(f"{spec.path}: label column {label!r} has type {t}, not numbers")
    for n in keep:
        t = table.schema.field(n).type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)
                or pa.types.is_null(t) or pa.types.is_decimal(t) or is_arrow_categorical(t)):
            raise DataError(f"{spec.path}: column {n!r} has type {t}, not numbers or "
                            "categories; --ignore it or encode it")
    if not keep:
        X = Table(np.zeros((table.num_rows, 0)), feature_names=keep)
    else:
        try:
            fm = as_feature_matrix(table.select(keep), spec.path, allow_empty_rows=True,
                                   categorical_feature=list(spec.categorical) or None)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{exc}; --ignore such columns or encode them") from None
        X = Table(fm.dense, feature_names=keep, categories=fm.categories)
    X.y = table.column(label).to_numpy(zero_copy_only=False).astype(np.float64) if label \
        else None
    return X


def _side_file(path, suffix, n_rows, columns=False):
    side = path + suffix
    if not os.path.exists(side):
        return None
    rows = []
    with open(side, encoding="utf-8") as fh:
        for line_no, raw in enumerate(_lines(fh, side), 1):
            if raw.strip():
                rows.append([_number(c, (), side, line_no) for c in raw.replace(",", " ").split()])
    arr = np.array(rows, dtype=np.float64)
    if suffix == ".query":
        arr = arr.ravel().astype(np.int64)
        if arr.sum() != n_rows:
            raise DataError(f"{side}: query sizes add up to {arr.sum()}, the data has {n_rows} rows")
        return arr
    if arr.shape[0] != n_rows:
        raise DataError(f"{side}: {arr.shape[0]} lines, the data has {n_rows} rows")
    return arr if columns and arr.shape[1] > 1 else arr[:, 0]


def read_table(spec):
    """The whole file as one :class:`Table`, with its side files."""
    fmt = file_format(spec)
    if fmt == "libsvm":
        t = read_libsvm(spec)
    elif fmt == "parquet":
        t = read_parquet(spec)
    else:
        t = next(iter_delimited(spec))
    n = t.X.shape[0]
    if n == 0:
        raise DataError(f"{spec.path}: the file has no data rows")
    t.weight = _side_file(spec.path, ".weight", n)
    t.init = _side_file(spec.path, ".init", n, columns=True)
    t.query = _side_file(spec.path, ".query", n)
    if t.query is not None and t.qid is not None:
        raise DataError(f"{spec.path}: its lines have qid: and a {spec.path}.query file gives "
                        "query sizes too; keep one")
    return t


def iter_chunks(spec, chunk_rows):
    """Tables of at most ``chunk_rows`` rows: CSV/TSV is streamed, so a file larger than
    memory can be predicted; LibSVM and Parquet are read whole, then cut."""
    if file_format(spec) in ("csv", "tsv"):
        yield from iter_delimited(spec, chunk_rows)
        return
    t = read_table(spec)
    for s in range(0, t.X.shape[0], chunk_rows):
        yield Table(t.X[s:s + chunk_rows], None if t.y is None else t.y[s:s + chunk_rows],
                    feature_names=t.feature_names, categories=t.categories)
