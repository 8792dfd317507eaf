"""numba's on-disk cache written by several processes at once (`_config.lock_cache_writes`)."""
import gc
import importlib
import os
import pickle
import pkgutil
import subprocess
import sys
import textwrap
import time

import pytest

import boostwood._kernels as kernels
from boostwood._config import LockedCacheFile, folder_lock

# Each process saves its own key into one index, 0.4 s after reading it: with numba's
# unlocked save both read the empty index, take data file 1, and one key's entry names
# the other's data (numba issue #4807).
_SAVER = textwrap.dedent("""
    import sys, time
    from numba.core import caching
    from boostwood._config import LockedCacheFile

    folder, name, start, locked = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    base = LockedCacheFile if locked == "1" else caching.IndexDataCacheFile

    class Slow(base):
        def _load_index(self):
            overloads = super()._load_index()
            time.sleep(0.4)
            return overloads

    cache = Slow(folder, "kernel-1.py311", b"stamp")
    time.sleep(max(0.0, start - time.time()))
    cache.save(("key", name), "code of " + name)
""")


def _save_at_once(folder, names, locked):
    start = time.time() + 1.5  # both processes started and importing by then
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    procs = [subprocess.Popen([sys.executable, "-c", _SAVER, str(folder), name, repr(start),
                               "1" if locked else "0"], env=env) for name in names]
    assert [p.wait(timeout=120) for p in procs] == [0] * len(names)
    reader = LockedCacheFile(str(folder), "kernel-1.py311", b"stamp")
    return {name: reader.load(("key", name)) for name in names}


def test_processes_saving_kernels_at_once_keep_each_its_own_code(tmp_path):
    """Three processes save three versions of one kernel at the same moment: each key
    loads its own code. numba's own save, run the same way, loses keys or names another
    key's code (checked first, so the test shows the race it guards against)."""
    names = ["tweedie", "gamma", "poisson"]
    (tmp_path / "plain").mkdir()
    plain = _save_at_once(tmp_path / "plain", names, locked=False)
    assert plain != {n: "code of " + n for n in names}  # the race, unlocked
    (tmp_path / "locked").mkdir()
    assert _save_at_once(tmp_path / "locked", names, locked=True) == {
        n: "code of " + n for n in names}


def test_the_lock_excludes_another_process(tmp_path):
    """While one process holds the folder's lock, another waits for it."""
    hold = textwrap.dedent("""
        import sys, time
        from boostwood._config import folder_lock
        with folder_lock(sys.argv[1]) as locked:
            assert locked
            print("held", flush=True)
            time.sleep(1.0)
    """)
    p = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path)], stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "held"
    t0 = time.perf_counter()
    with folder_lock(str(tmp_path)) as locked:
        waited = time.perf_counter() - t0
    assert locked and p.wait(timeout=60) == 0
    assert waited > 0.5
    assert os.listdir(tmp_path) == []  # the folder itself was locked: no file of ours


def test_a_folder_that_cannot_be_opened_saves_without_a_lock(tmp_path):
    with folder_lock(str(tmp_path / "missing")) as locked:
        assert not locked


def test_every_cached_kernel_saves_under_the_lock():
    """Each kernel module ends with lock_cache_writes(globals()): every cached kernel of
    the package, wherever it is defined, has the locked cache file."""
    for module in pkgutil.iter_modules(kernels.__path__):
        importlib.import_module(f"{kernels.__name__}.{module.name}")
    from numba.core.registry import CPUDispatcher
    found = [d for d in gc.get_objects() if isinstance(d, CPUDispatcher)
             and d.py_func.__module__.startswith(kernels.__name__)
             and hasattr(getattr(d, "_cache", None), "_cache_file")]
    assert len(found) > 250
    unlocked = [d.py_func.__qualname__ for d in found
                if type(d._cache._cache_file) is not LockedCacheFile]
    assert unlocked == []


@pytest.mark.parametrize("stale", [False, True])
def test_the_data_file_is_written_before_the_index_names_it(tmp_path, stale):
    """A reader while the data file is written finds no entry: numba writes the index
    first, and a reader then loads the file the entry names, which may still hold
    another version's code (``stale``: a file of an index from older sources)."""
    cache = LockedCacheFile(str(tmp_path), "kernel-1.py311", b"stamp")
    if stale:
        LockedCacheFile(str(tmp_path), "kernel-1.py311", b"old").save("old", "old code")
    seen = []

    class Watched(LockedCacheFile):
        def _save_data(self, name, data):
            seen.append(cache.load("new"))  # what a reader finds as the data is written
            super()._save_data(name, data)

    Watched(str(tmp_path), "kernel-1.py311", b"stamp").save("new", "new code")
    assert seen == [None] and cache.load("new") == "new code"


class _Signature:  # what numba's compiled result holds at [3]: the argument types
    def __init__(self, args):
        self.args = args


def _compiled(args):
    """The shape of a compiled result as numba saves it (CompileResult._reduce)."""
    return ("object code", "fndesc", "environment", _Signature(args), False, (), "", None, ())


def test_a_file_named_for_two_versions_loads_as_a_miss_and_is_saved_apart(tmp_path):
    """An index written without the lock may name one file for two versions: the version
    whose signature the file does not hold loads nothing (it compiles again rather than
    run the other's code), and saving it gives it a file of its own."""
    cache = LockedCacheFile(str(tmp_path), "kernel-1.py311", b"stamp")
    a, b = (("int 6",), "cpu", "h"), (("int 2",), "cpu", "h")
    cache.save(a, _compiled(a[0]))
    cache._save_index({a: cache._data_name(1), b: cache._data_name(1)})  # numba's race
    assert cache.load(a)[3].args == a[0] and cache.load(b) is None
    cache.save(b, _compiled(b[0]))
    assert cache.load(a)[3].args == a[0] and cache.load(b)[3].args == b[0]
    assert cache._load_index()[b] != cache._load_index()[a]


_GRADIENTS = textwrap.dedent("""
    import sys
    import numpy as np
    from boostwood._kernels import loss as K

    y, F = np.array([5.0, 1e3, 0.5]), np.array([[1.0], [2.0], [-1.0]])
    for kind in map(int, sys.argv[1:]):
        gh = np.empty((1, 3, 2), np.float32)
        K.pointwise_grad(kind, y, F, np.ones(1), 1.5, gh)
        print(kind, gh[0].tolist())
""")


def _gradients(cache, *kinds):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _GRADIENTS, *map(str, kinds)], env=env,
                         capture_output=True, text=True, timeout=600, check=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


def test_a_loss_whose_cache_entry_names_another_loss_computes_its_own_gradients(tmp_path):
    """The CI failure, rebuilt: Tweedie's entry in the losses' gradient kernel's index
    names the pseudo-Huber file (as numba's unlocked race left it). A process that
    loads it computes Tweedie's gradients, not pseudo-Huber's."""
    from boostwood._kernels.loss import PSEUDO_HUBER, TWEEDIE
    honest = _gradients(tmp_path, TWEEDIE, PSEUDO_HUBER)
    assert honest[str(TWEEDIE)] != honest[str(PSEUDO_HUBER)]
    index = next(tmp_path.rglob("loss.pointwise_grad-*.nbi"))
    cache = LockedCacheFile(str(index.parent), index.name[:-4], None)
    with open(index, "rb") as f:
        pickle.load(f)  # numba's version, then the source stamp and the entries
        cache._source_stamp, entries = pickle.loads(f.read())
    names = {key[0][0].literal_value: name for key, name in entries.items()}
    entries = {key: names[PSEUDO_HUBER] if key[0][0].literal_value == TWEEDIE else name
               for key, name in entries.items()}
    cache._save_index(entries)
    assert _gradients(tmp_path, TWEEDIE)[str(TWEEDIE)] == honest[str(TWEEDIE)]
