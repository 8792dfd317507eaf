"""Split kinds and the one rule that sends a row left.

A split node is either

* ``NUMERIC``: the row goes left when ``x <= threshold`` (binned: ``bin <= threshold_bin``);
* ``CATEGORICAL``: the row goes left when ``x`` is a category of the node's set: a
  non-negative integer ``c`` whose bit ``c`` is set in the node's bitset (binned: the
  bin id's bit). Values that are not such a category (unseen categories, negative or
  fractional values) go right.

In both kinds a missing value (NaN, or the missing bin) follows ``default_left``.

A node's category set is ``cat_len`` 32-bit words of a flat ``cat_bits`` array starting
at ``cat_start``: bit ``c`` of the set is bit ``c % 32`` of word ``cat_start + c // 32``.
Binned traversal reads a categorical node's set as a set of bin ids: categorical
features are to be binned by identity (category c in bin c), so that one bitset
serves raw and binned rows alike.

Every traversal -- partition, prediction, SHAP, partial dependence -- calls
:func:`goes_left` or :func:`goes_left_binned`; Python code (dumps, plots, reports)
calls :func:`goes_left_many`, so there is one definition of where a row goes.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes

NUMERIC = 0
CATEGORICAL = 1
#: Named rows of a packed batch of splits (int64 array of shape (N_SPLIT_FIELDS, n_nodes),
#: field-major, so a grower can hand over rows of an array it built anyway), as the
#: partition kernel takes them.
SP_FEATURE, SP_BIN, SP_DEFAULT_LEFT, SP_KIND, SP_CAT_START, SP_CAT_LEN = range(6)
N_SPLIT_FIELDS = 6
#: Named planes of the ``pick`` array every scan kernel fills, (N_PICK, n_nodes, n_active)
#: int64: the last bin (or rank code) sent left, the node's next code after it (-1: none;
#: sorted scans only), and where missing values go.
P_BIN, P_NEXT, P_DEFAULT_LEFT = range(3)
N_PICK = 3


@njit(cache=True, nogil=True, inline="always")
def in_category_set(x, cat_bits, start, n_words):
    """Whether ``x`` is a non-negative integer category whose bit is set."""
    if not (x >= 0) or x >= n_words * 32:
        return False
    c = np.int64(x)
    if c != x:
        return False
    return (cat_bits[start + (c >> 5)] >> np.uint32(c & 31)) & np.uint32(1) != 0


@njit(cache=True, nogil=True, inline="always")
def goes_left(x, j, kind, threshold, default_left, cat_start, cat_len, cat_bits):
    """Does a row whose split feature has raw value ``x`` go left at node ``j``?"""
    if np.isnan(x):
        return default_left[j] != 0
    if kind[j] == NUMERIC:
        return x <= threshold[j]
    return in_category_set(x, cat_bits, cat_start[j], cat_len[j])


@njit(cache=True, nogil=True, inline="always")
def goes_right_numeric(x, threshold, nan_right):
    """:func:`goes_left` negated, for a numeric split, without branches: 1 when the row
    goes right (``x > threshold``, or ``x`` is NaN and ``nan_right`` = 1 - default_left),
    else 0. The same rule, as an integer a traversal can add to a child id."""
    return np.int64(x > threshold) | (np.int64(x != x) & np.int64(nan_right))


@njit(cache=True, nogil=True, inline="always")
def goes_left_binned(b, missing_bin, kind, threshold_bin, default_left, cat_bits, start,
                     n_words):
    """Does a row whose split feature is in bin ``b`` go left (sets over bin ids)?"""
    if b == missing_bin:
        return default_left != 0
    if kind == NUMERIC:
        return b <= threshold_bin
    return in_category_set(b, cat_bits, start, n_words)


@njit(parallel=True, cache=True, nogil=True)
def goes_left_many(values, j, kind, threshold, default_left, cat_start, cat_len, cat_bits,
                   out):
    """out[i] = goes_left(values[i], j, ...) for Python callers (dumps, plots, PDP).

    values : ndarray of shape (n,), float64   # IN
    out : ndarray of shape (n,), bool   # OUT
    """
    for i in prange(values.shape[0]):
        out[i] = goes_left(values[i], j, kind, threshold, default_left, cat_start, cat_len,
                           cat_bits)


#: The category words of a batch without categorical splits.
NO_CATEGORIES = np.zeros(0, dtype=np.uint32)


def bitset_of(categories):
    """32-bit words whose bits are the given non-negative integer categories."""
    cats = np.asarray(categories, dtype=np.int64)
    if cats.size == 0:
        return np.zeros(0, dtype=np.uint32)
    bits = np.zeros((int(cats.max()) // 32 + 1) * 32, dtype=bool)
    bits[cats] = True  # bit c of word c // 32: little-endian bits of little-endian words
    return np.packbits(bits, bitorder="little").view("<u4").astype(np.uint32)


def categories_of(words):
    """The categories (ascending) whose bits are set in ``words``."""
    words = np.asarray(words, dtype=np.uint32).astype("<u4")
    return np.nonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))[0].astype(
        np.int64)


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
