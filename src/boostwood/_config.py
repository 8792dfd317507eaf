"""Layer 0: the dtypes every layer agrees on, thread resolution, a shorter start-up for
numba (:class:`_LightBlasCheck`), and numba's cache written safely by processes that
compile at once (:func:`lock_cache_writes`).

Each dtype carries the reason it was chosen; change one here and nowhere else.
"""
import contextlib
import importlib.machinery
import importlib.util
import itertools
import os
import sys

import numba
import numpy as np
from numba.core import caching
from numba.core.registry import CPUDispatcher

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import msvcrt
except ImportError:  # POSIX
    msvcrt = None

#: Binned feature values. 255 value bins plus one missing bin fit a byte, which
#: keeps a 1M x 28 training matrix at 28 MB and the histogram loop cache-friendly.
X_BINNED_DTYPE = np.uint8
#: Used when ``max_bin`` > 255: two bytes per value, up to 65535 value bins.
X_BINNED_WIDE_DTYPE = np.uint16
#: Per-row gradients and hessians as the objective returns them. float32 halves
#: the memory of the (n_outputs, n_rows, 2) gradient array; the grower turns them
#: into fixed-point integers (GQ_DTYPE) before it sums anything.
G_H_DTYPE = np.float32
#: Per-row gradients and hessians in fixed point: integer multiples of a per-tree
#: power-of-two unit (see :mod:`boostwood.tree.stats`). int32 per row (the unit keeps
#: every row below 2**31, 8 bytes a row as float32 pairs were, so the histogram loop
#: reads no more memory); every *sum* is int64 (HIST_DTYPE), so the sum of any set of
#: rows is exact, the same in every order, on any number of threads or data shards,
#: and histogram subtraction (parent - child) is exact.
GQ_DTYPE = np.int32
#: The same with ``use_quantized_grad``: a few levels per row (at most 127 for a
#: gradient, 254 for a hessian), so that a histogram cell packs gradient, hessian and
#: count into one int64 (see :mod:`boostwood._kernels.histogram`); half the memory too.
GQ_LOW_DTYPE = np.int16
#: Histogram cells and node sums (fixed-point gradient, fixed-point hessian, row
#: count): int64 sums of GQ_DTYPE values, which the chosen unit keeps below 2**62
#: in magnitude. Converted to float64 only to score a split or set a leaf.
HIST_DTYPE = np.int64
#: Raw margins (the additive model F(x)) and leaf values: float64 so that
#: hundreds of small shrunken steps accumulate without drift.
RAW_DTYPE = np.float64
#: Split thresholds on raw feature values: float64 holds every float32 and
#: float64 input exactly, so prediction compares like training did.
THRESHOLD_DTYPE = np.float64
#: Row indices inside the partition array: int32 halves the memory of int64
#: and limits one Dataset to 2**31 - 1 rows (checked at the boundary).
INDEX_DTYPE = np.int32
MAX_ROWS = np.iinfo(np.int32).max
#: Node ids, feature ids and bin ids in trees.
NODE_DTYPE = np.int32

#: Number of channels of one histogram cell: sum of g, sum of h, row count.
HIST_CHANNELS = 3


def resolve_nthreads(nthread):
    """Number of threads to use: ``None``, 0 or negative mean all cores numba sees.

    Parameters
    ----------
    nthread : int or None

    Returns
    -------
    int, at least 1 and at most ``numba.config.NUMBA_NUM_THREADS``.
    """
    available = numba.config.NUMBA_NUM_THREADS
    if nthread is None or nthread <= 0:
        return available
    return int(min(nthread, available))


def set_threads(nthread):
    """Resolve ``nthread`` and make numba's parallel loops use that many threads (this
    thread's setting: numba keeps one per thread)."""
    n = resolve_nthreads(nthread)
    if numba.get_num_threads() != n:  # setting it costs about 1 us a call
        numba.set_num_threads(n)
    return n


@contextlib.contextmanager
def threads_given_back(nthread=None):
    """Around the part of an entry point that sets numba's threads from its ``nthread``
    (training, prediction, a forest's fit; given ``nthread``, the block sets them itself
    and yields the count, :func:`set_threads`): numba's count is given back as the caller
    had it, so a call's ``nthread`` is that call's own, as XGBoost's is (LightGBM setting
    the process's OpenMP threads is its issue 4705). Before, a fit with ``nthread=1`` left
    every later numba loop in the process, binning a Dataset included, on one thread.
    A ``with`` block, not a decorator: a wrapper's frame would move the warnings that name
    the caller's line (``stacklevel``) into this module."""
    before = numba.get_num_threads()
    try:
        yield None if nthread is None else set_threads(nthread)
    finally:
        if numba.get_num_threads() != before:
            numba.set_num_threads(before)


class _LightBlasCheck:
    """Spare numba's start-up the import of ``scipy.linalg`` (0.25 s of a 1 s warm start).

    On the first call of any compiled function, cached ones included, numba imports
    ``numba.np.arraymath``, whose import checks once whether a BLAS is there by importing
    ``scipy.linalg.cython_blas``: where scipy is installed that import takes about 0.25 s
    on a 2-core Zen 3, for kernels that never call BLAS. This import hook waits for that
    module; just before it loads, it hands ``numba.np.linalg`` an ``ensure_blas`` whose
    first call, made by that check, looks for the file of scipy's BLAS module instead of
    importing it, then runs the rest of numba's check (numba 0.68.1 compares the integer
    width scipy was built for, from ``scipy.__config__``), and puts numba's own function
    back. Wherever it cannot tell (no such file, no module spec for scipy), and for every
    later call (when numba compiles a function that calls BLAS, ``np.dot``), numba's own
    check runs in full. What differs from numba alone: a scipy whose BLAS module is there
    but fails to import now gives an error where numba compiles a BLAS call (for example
    ``np.correlate`` on floats) instead of numba's plain-loop fallback. Where numba is laid
    out otherwise (0.61's arraymath is a redirect), the caller is not the check and numba's
    own check runs.
    """

    MODULE = "numba.np.arraymath"

    def __init__(self):
        self.done = False  # acts once; stays in sys.meta_path (removing it races with
        # other threads that walk the list)

    def find_spec(self, name, path=None, target=None):
        if name != self.MODULE or self.done:
            return None
        self.done = True
        linalg = sys.modules.get("numba.np.linalg")
        full_check = getattr(linalg, "ensure_blas", None)
        if full_check is None:
            return None

        def ensure_blas():
            if linalg.ensure_blas is ensure_blas:
                linalg.ensure_blas = full_check
                if sys._getframe(1).f_globals.get("__name__") == self.MODULE \
                        and _scipy_blas_file_found():
                    width_check = getattr(linalg, "_check_lapack_int_width", None)
                    if width_check is not None:
                        width_check()
                    return
            full_check()

        linalg.ensure_blas = ensure_blas
        return None  # the usual finders load the module


def _scipy_blas_file_found():
    """Is scipy's compiled ``linalg/cython_blas`` module on disk (no import of it)?"""
    try:
        spec = importlib.util.find_spec("scipy")
    except (ImportError, ValueError):  # a stand-in module without a spec
        return False
    for folder in (spec.submodule_search_locations or ()) if spec else ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if os.path.isfile(os.path.join(folder, "linalg", "cython_blas" + suffix)):
                return True
    return False


if "numba.np.arraymath" not in sys.modules:
    sys.meta_path.insert(0, _LightBlasCheck())


# numba's on-disk cache, written safely when several processes compile at once.
#
# numba keeps a kernel's compiled versions (one per signature; one per loss for the
# losses' gradient kernel, whose loss is a compile-time constant) in one index file that
# names a data file per version. Its ``save`` reads the index, takes the first free data
# file number, writes the index, then the data, with no lock between processes (numba
# issue #4807). Two processes compiling two versions of one kernel at the same moment
# (``pytest -n 2``, Dask or joblib workers on a fresh install, ``boostwood compile``'s
# two processes) can both take number N: the index then names one version's key and the
# file holds the other's code, and every later process that loads that key runs the
# wrong code, silently. A CI run met it: its Tweedie fit ran the pseudo-Huber loss's
# gradients (``pointwise_grad``'s index naming the pseudo-Huber file for Tweedie's key
# gives that run's predictions and deviance to the last digit).
#
# Every kernel module ends with ``lock_cache_writes(globals())``: its cached kernels get
# a cache file whose ``save`` holds an exclusive lock on the cache folder from reading
# the index to writing it, and writes the data file before the index entry that names
# it, so a reader never finds a key whose file is missing or another version's. Loading
# is unchanged: an index entry never changes its file once written, so readers need no
# lock. The lock is ``flock`` on the folder itself (no file of ours in it); where that
# is refused (some network file systems, Windows) a lock file in the folder; where
# neither can be had, the data is still written before the index.

#: The lock file's name, where the folder itself cannot be locked.
LOCK_FILE = "boostwood-cache.lock"


def _lock_fd(fd):
    """Take an exclusive lock on ``fd`` (waits); True if taken."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    if msvcrt is not None:
        for _ in range(30):  # LK_LOCK tries for 10 s, then raises: 5 minutes in all
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return True
            except OSError:
                continue
    return False


@contextlib.contextmanager
def folder_lock(folder):
    """An exclusive lock between processes on the cache folder ``folder``, held inside
    the ``with``: ``flock`` on the folder, else on :data:`LOCK_FILE` in it; nothing
    where neither can be opened and locked."""
    fd = None
    for path, flags in ((folder, os.O_RDONLY),
                        (os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT)):
        try:
            fd = os.open(path, flags, 0o666)
        except OSError:
            continue
        try:
            if _lock_fd(fd):
                break
        except OSError:
            pass
        os.close(fd)
        fd = None
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # closing the descriptor releases its lock


class LockedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files of one kernel, saved under :func:`folder_lock`, the
    data before the index entry that names it. A file that the index names for two
    versions (written without the lock) is given up by the version saved next, and a
    loaded file whose signature is not its entry's is a miss: the kernel compiles again,
    not runs another version's code."""

    def save(self, key, data):
        with folder_lock(self._cache_path):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None or sum(n == name for n in overloads.values()) > 1:
                taken = set(overloads.values())
                name = next(n for n in map(self._data_name, itertools.count(1))
                            if n not in taken)
            self._save_data(name, data)
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    def load(self, key):
        data = super().load(key)
        signature = data[3] if isinstance(data, tuple) and len(data) > 3 else None
        args = getattr(signature, "args", None)
        if args is not None and isinstance(key, tuple) and tuple(args) != tuple(key[0]):
            return None  # a compiled result of numba's (_reduce): another version's code
        return data


def _lock(dispatcher):
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if type(cache_file) is caching.IndexDataCacheFile:
        cache_file.__class__ = LockedCacheFile


def cached_kernels(namespace):
    """The compiled functions with numba's cache in ``namespace`` (a module's globals),
    and in the dictionaries there (tables of kernels, as ``loss._ROWS``)."""
    for value in list(namespace.values()):
        values = value.values() if isinstance(value, dict) else (value,)
        for v in values:
            if isinstance(v, CPUDispatcher) and hasattr(getattr(v, "_cache", None),
                                                         "_cache_file"):
                yield v


def lock_cache_writes(namespace):
    """Give each cached kernel of ``namespace`` (a module's ``globals()``; every kernel
    module calls this last) a :class:`LockedCacheFile` (see the comment above)."""
    for dispatcher in cached_kernels(namespace):
        _lock(dispatcher)
