"""Layer 0: the dtypes every layer agrees on, thread resolution, a shorter start-up for
numba (:class:`_LightBlasCheck`), and numba's cache written safely by processes that
compile at once (:func:`lock_cache_writes`).

Each dtype carries the reason it was chosen; change one here and nowhere else.
"""
import contextlib
import errno
import hashlib
import importlib.machinery
import importlib.util
import itertools
import os
import sys
import time

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
# wrong code, silently (``tests/test_cache_lock.py`` shows it with numba's own save).
# (A CI run whose Tweedie fit ran pseudo-Huber's gradients had another cause, the losses'
# row loops sharing one symbol name: ``_kernels.loss._row_loop``.) numba also stamps a
# kernel's cache with its own source file only: a kernel whose callee in another kernel
# file changed (a ``git pull`` on an editable install) loads its old code.
#
# Every kernel module ends with ``lock_cache_writes(globals())``, which gives its cached
# kernels a :class:`LockedCacheFile`:
#
# * each data file carries the key and the stamp it was saved for, and a load whose file
#   names another key or stamp is a miss (the kernel compiles again and is saved anew),
#   however the file came to be there: numba's race, a file of older sources, another
#   numba or processor sharing the folder;
# * the stamp is numba's (the kernel's own file) with a fingerprint of every kernel
#   file and this one (:func:`kernels_fingerprint`), so a changed callee is a miss too;
# * ``save`` holds an exclusive lock on the cache folder from reading the index to
#   writing it (``flock`` on the folder itself, no file of ours in it; a lock file in it
#   where that is refused, as on Windows; on NFS a folder's flock may hold on one host
#   only), given up after :data:`LOCK_SECONDS` (a process that waited that long once waits
#   :data:`LOCK_SECONDS_AFTER_TIMEOUT` from then on), when the save goes on without it:
#   the check on load keeps a mixed-up entry from running, so the cost is a lost entry
#   and a compile more. It writes the data
#   before the index entry that names it, and gives a file that the index names for two
#   keys to one of them only.

#: The lock file's name, where the folder itself cannot be locked.
LOCK_FILE = "boostwood-cache.lock"
#: Longest wait for the cache folder's lock (a save takes milliseconds).
LOCK_SECONDS = 30.0
#: The wait once a wait of this process ran out (the holder may be stuck or gone astray:
#: each later save would pay the whole wait again).
LOCK_SECONDS_AFTER_TIMEOUT = 0.5
_TIMED_OUT = []
#: The first item of each data file of a :class:`LockedCacheFile`.
_ENTRY = "boostwood cache entry"
_FINGERPRINT = []


def kernels_fingerprint(root=None):
    """sha256 of the sources of every kernel module and of this module (of the package
    folder ``root``; this package's by default, read once), or None where they are not
    on disk."""
    if root is None and _FINGERPRINT:
        return _FINGERPRINT[0]
    here = root or os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(here, "_kernels")
    digest = hashlib.sha256()
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
        for path in [os.path.join(here, "_config.py")] + [os.path.join(folder, n)
                                                            for n in names]:
            with open(path, "rb") as f:
                digest.update(os.path.basename(path).encode() + b"\0" + f.read())
        fingerprint = digest.hexdigest()
    except OSError:  # sources not on disk: numba's own stamp alone
        fingerprint = None
    if root is None:
        _FINGERPRINT.append(fingerprint)
    return fingerprint


#: errno values of a lock another process holds (flock's, msvcrt.locking's).
_BUSY = {errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES, getattr(errno, "EDEADLOCK", -1)}


def _lock_fd(fd, deadline):
    """Take an exclusive lock on ``fd`` by ``deadline`` (time.monotonic()): True if taken,
    False if another process held it all that time; OSError where ``fd`` cannot be
    locked at all (a folder on some network file systems)."""
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            elif msvcrt is not None:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            else:
                raise OSError(errno.ENOLCK, "no file locks on this platform")
            return True
        except OSError as exc:
            if exc.errno not in _BUSY:
                raise
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)


def _unlock_and_close(fd):
    """Release the lock, then close: a process forked while the lock was held shares the
    descriptor, and only an explicit unlock lets the others in before it exits."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
        elif msvcrt is not None:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # Windows may release late on close
    except OSError:
        pass
    os.close(fd)


@contextlib.contextmanager
def folder_lock(folder, timeout=None):
    """An exclusive lock between processes on the cache folder ``folder``, held inside
    the ``with``, which gets whether it was taken: ``flock`` on the folder, or on
    :data:`LOCK_FILE` in it where the folder cannot be locked; not taken where neither
    can be, or while another process holds it for ``timeout`` seconds
    (:data:`LOCK_SECONDS` by default)."""
    if timeout is None:
        timeout = LOCK_SECONDS_AFTER_TIMEOUT if _TIMED_OUT else LOCK_SECONDS
    deadline = time.monotonic() + timeout
    fd = None
    for path, flags in ((folder, os.O_RDONLY),
                        (os.path.join(folder, LOCK_FILE), os.O_RDWR | os.O_CREAT)):
        try:
            fd = os.open(path, flags, 0o666)
        except OSError:
            continue
        try:
            taken = _lock_fd(fd, deadline)
        except OSError:
            taken = None  # this object cannot be locked: try the next
        except BaseException:
            os.close(fd)
            raise
        if taken:
            break
        os.close(fd)
        fd = None
        if taken is False:
            _TIMED_OUT.append(True)
            break  # held by another process: not by way of another object
    try:
        yield fd is not None
    finally:
        if fd is not None:
            _unlock_and_close(fd)


class LockedCacheFile(caching.IndexDataCacheFile):
    """numba's index and data files of one kernel (see the comment above): saved under
    :func:`folder_lock`, data before index; each data file holds its key and stamp, and
    a load of a file saved for another is a miss."""

    def save(self, key, data):
        with folder_lock(self._cache_path):
            try:
                overloads = self._load_index()
            except Exception:  # noqa: BLE001  an index that does not unpickle: start anew
                caching._cache_log("[cache] unreadable index %r", self._index_path)
                overloads = {}
            name = overloads.get(key)
            if name is None or sum(n == name for n in overloads.values()) > 1:
                taken = set(overloads.values())
                name = next(n for n in map(self._data_name, itertools.count(1))
                            if n not in taken)
            self._save_data(name, (_ENTRY, self._source_stamp, key, data))
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)

    def load(self, key):
        try:
            entry = super().load(key)
        except Exception:  # noqa: BLE001  a file of another numba that does not unpickle
            caching._cache_log("[cache] unreadable entry in %r", self._index_path)
            return None
        if (isinstance(entry, tuple) and len(entry) == 4 and entry[0] == _ENTRY
                and entry[1] == self._source_stamp and entry[2] == key):
            return entry[3]
        return None  # saved for another key or sources, or not by this class

    def flush(self):
        with folder_lock(self._cache_path):
            super().flush()


def _lock(dispatcher):
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if type(cache_file) is caching.IndexDataCacheFile:
        cache_file.__class__ = LockedCacheFile
        fingerprint = kernels_fingerprint()
        if fingerprint is not None:
            cache_file._source_stamp = (cache_file._source_stamp, fingerprint)


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
