"""numba's on-disk cache written by several processes at once (`_config.lock_cache_writes`)."""
import ast
import contextlib
import errno
import importlib
import os
import pickle
import pkgutil
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from numba.core import caching

import boostwood._config as config
import boostwood._kernels as kernels
from boostwood._config import LockedCacheFile, folder_lock

PKG = os.path.dirname(config.__file__)


def _cache(folder, stamp=b"stamp", cls=LockedCacheFile):
    return cls(str(folder), "kernel-1.py311", stamp)


def _save_at_once(folder, cls):
    """Two threads save two keys of one kernel, each going on only once both have read
    the (empty) index, or after 2 s: numba's unlocked saves then take the same data file
    (numba issue #4807); under the lock the second reads the index after the first
    wrote it. (flock locks an open file description, so two threads exclude each other
    as two processes do.)"""
    met = threading.Barrier(2, timeout=2.0)

    class Racing(cls):
        def _load_index(self):
            overloads = super()._load_index()
            try:
                met.wait()
            except threading.BrokenBarrierError:
                pass
            return overloads

    errors = []

    def save(name):
        try:
            _cache(folder, cls=Racing).save(("key", name), "code of " + name)
        except Exception as exc:  # noqa: BLE001  reported below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(n,)) for n in ("tweedie", "gamma")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    reader = _cache(folder, cls=cls)
    return {n: reader.load(("key", n)) for n in ("tweedie", "gamma")}


def test_saves_at_once_keep_each_version_its_own_code(tmp_path):
    """numba's own save, two versions at once, loses an entry or names the other's file
    (checked first: the race the lock is for); the locked save keeps both."""
    (tmp_path / "numba").mkdir()
    mixed = _save_at_once(tmp_path / "numba", caching.IndexDataCacheFile)
    assert mixed != {"tweedie": "code of tweedie", "gamma": "code of gamma"}
    (tmp_path / "locked").mkdir()
    assert _save_at_once(tmp_path / "locked", LockedCacheFile) == {
        "tweedie": "code of tweedie", "gamma": "code of gamma"}


_HOLD = textwrap.dedent("""
    import sys
    from boostwood._config import folder_lock
    with folder_lock(sys.argv[1]) as locked:
        print("held" if locked else "not held", flush=True)
        sys.stdin.readline()  # until told
""")


@contextlib.contextmanager
def _held_by_another_process(folder):
    """Another process holds ``folder``'s lock inside the ``with``, and lets it go and
    exits at its end."""
    p = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        yield
    finally:
        p.stdin.close()
        assert p.wait(timeout=60) == 0


def test_the_lock_excludes_another_process(tmp_path, monkeypatch):
    """While another process holds the folder's lock this one cannot take it; once that
    process lets it go, it can."""
    monkeypatch.setattr(config, "_TIMED_OUT", [])  # this process's waits stay as they are
    with _held_by_another_process(tmp_path):
        with folder_lock(str(tmp_path), timeout=0.3) as locked:
            assert not locked
    with folder_lock(str(tmp_path), timeout=10) as locked:
        assert locked
    if sys.platform.startswith("linux"):
        assert os.listdir(tmp_path) == []  # the folder itself was locked: no file of ours


def test_a_folder_that_cannot_be_opened_is_not_locked(tmp_path):
    with folder_lock(str(tmp_path / "missing"), timeout=0.1) as locked:
        assert not locked


def test_every_cached_kernel_saves_under_the_lock():
    """Each kernel module ends with lock_cache_writes(globals()): every kernel defined
    with cache=True in a kernel module has the locked cache file."""
    decorated = set()
    for module in pkgutil.iter_modules(kernels.__path__):
        mod = importlib.import_module(f"{kernels.__name__}.{module.name}")
        tree = ast.parse(open(mod.__file__).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and any(k.arg == "cache" and getattr(
                        k.value, "value", None) is True for k in d.keywords)
                    for d in node.decorator_list):
                decorated.add((module.name, node.name))
    locked = set()
    for module in pkgutil.iter_modules(kernels.__path__):
        mod = importlib.import_module(f"{kernels.__name__}.{module.name}")
        for d in config.cached_kernels(vars(mod)):
            assert type(d._cache._cache_file) is LockedCacheFile, d.py_func.__qualname__
            locked.add((d.py_func.__module__.rsplit(".", 1)[1], d.py_func.__name__))
    assert len(decorated) > 100 and decorated <= locked


def test_the_data_file_is_written_before_the_index_names_it(tmp_path):
    """A reader while the data file is written finds no entry. numba writes the index
    first, and a reader then loads the file the entry names, which may still hold a
    file of older sources (the index is numbered anew when the stamp changes)."""
    _cache(tmp_path, b"old", caching.IndexDataCacheFile).save("k", "old code")
    seen = []
    reader = _cache(tmp_path, cls=caching.IndexDataCacheFile)

    class Watched(LockedCacheFile):
        def _save_data(self, name, data):
            seen.append(reader.load("k"))  # what a reader finds as the data is written
            super()._save_data(name, data)

    _cache(tmp_path, cls=Watched).save("k", "new code")
    assert seen == [None] and _cache(tmp_path).load("k") == "new code"


def test_a_file_saved_for_another_key_or_sources_loads_as_a_miss(tmp_path):
    """Index entries that name another key's file (numba's race), or a file of other
    sources, load nothing: the kernel compiles again rather than run that code. Saving
    the key then gives it a file of its own."""
    cache = _cache(tmp_path)
    cache.save("a", "code of a")
    cache._save_index({"a": cache._data_name(1), "b": cache._data_name(1)})  # the race
    assert cache.load("a") == "code of a" and cache.load("b") is None
    cache.save("b", "code of b")
    assert cache.load("a") == "code of a" and cache.load("b") == "code of b"
    assert cache._load_index()["a"] != cache._load_index()["b"]
    _cache(tmp_path, b"other").save("c", "code of c, other sources")
    entries = _cache(tmp_path, b"other")._load_index()
    cache._save_index({"c": entries["c"]})
    assert cache.load("c") is None
    _cache(tmp_path, cls=caching.IndexDataCacheFile).save("d", "saved by numba alone")
    assert cache.load("d") is None


def test_the_stamp_covers_every_kernel_file(tmp_path):
    """A kernel's cache stamp carries a fingerprint of every kernel file and _config.py:
    a changed callee in another file is a miss, which numba's own stamp (its file only)
    would load as it was."""
    shutil.copytree(os.path.join(PKG, "_kernels"), tmp_path / "_kernels",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(PKG, "_config.py"), tmp_path / "_config.py")
    assert config.kernels_fingerprint(str(tmp_path)) == config.kernels_fingerprint()
    with open(tmp_path / "_kernels" / "gain.py", "a") as f:
        f.write("\n")
    assert config.kernels_fingerprint(str(tmp_path)) != config.kernels_fingerprint()
    from boostwood._kernels.loss import pointwise_grad
    stamp = pointwise_grad._cache._cache_file._source_stamp
    assert stamp[1] == config.kernels_fingerprint()


_GRADIENTS = textwrap.dedent("""
    import sys
    import numpy as np
    from boostwood._kernels import loss as K

    y, F = np.array([5.0, 1e3, 0.5]), np.array([[1.0], [2.0], [-1.0]])
    for kind in map(int, sys.argv[1:]):
        gh = np.empty((1, 3, 2), np.float32)
        K.pointwise_grad(kind, y, F, np.ones(1), 1.5, gh)
        loaded = any(getattr(s[0], "literal_value", None) == kind
                     for s in K.pointwise_grad.stats.cache_hits)
        print(kind, loaded, gh[0].tolist())
""")


def _gradients(cache, *kinds):
    """{kind: (loaded from the cache, gradients as text)} from a new process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", _GRADIENTS, *map(str, kinds)], env=env,
                         capture_output=True, text=True, timeout=600, check=True).stdout
    rows = [line.split(" ", 2) for line in out.splitlines()]
    return {int(kind): (loaded == "True", gh) for kind, loaded, gh in rows}


def test_a_loss_whose_cache_entry_names_another_loss_computes_its_own_gradients(tmp_path):
    """Tweedie's entry in the losses' gradient kernel's index names the pseudo-Huber
    file (as numba's unlocked race can leave it). A process that looks it up compiles
    Tweedie's gradients again instead of running pseudo-Huber's; an honest index loads
    both."""
    from boostwood._kernels.loss import PSEUDO_HUBER, TWEEDIE
    first = _gradients(tmp_path, TWEEDIE, PSEUDO_HUBER)
    assert first[TWEEDIE][1] != first[PSEUDO_HUBER][1]
    again = _gradients(tmp_path, TWEEDIE, PSEUDO_HUBER)
    assert again == {k: (True, gh) for k, (_, gh) in first.items()}  # cache hits
    index = next(tmp_path.rglob("loss.pointwise_grad-*.nbi"))
    with open(index, "rb") as f:
        pickle.load(f)  # numba's version, then the source stamp and the entries
        stamp, entries = pickle.loads(f.read())
    names = {key[0][0].literal_value: name for key, name in entries.items()}
    entries = {key: names[PSEUDO_HUBER] if key[0][0].literal_value == TWEEDIE else name
               for key, name in entries.items()}
    LockedCacheFile(str(index.parent), index.name[:-4], stamp)._save_index(entries)
    assert _gradients(tmp_path, TWEEDIE) == {TWEEDIE: (False, first[TWEEDIE][1])}


def test_two_losses_compiled_in_two_processes_run_their_own_loops_in_a_third(tmp_path):
    """The CI failure (stop 78), rebuilt: pseudo-Huber's and Tweedie's gradient kernels
    compiled in two processes, then both loaded from the cache by a third. When every
    loss's row loop had one name, both cached kernels held a loop of the same symbol,
    and the third process ran the first-loaded loss's loop for both."""
    from boostwood._kernels.loss import PSEUDO_HUBER, TWEEDIE
    alone = {**_gradients(tmp_path, PSEUDO_HUBER), **_gradients(tmp_path, TWEEDIE)}
    assert alone[TWEEDIE][1] != alone[PSEUDO_HUBER][1]
    both = _gradients(tmp_path, PSEUDO_HUBER, TWEEDIE)
    assert both == {k: (True, gh) for k, (_, gh) in alone.items()}


def test_every_kernel_has_a_name_of_its_own():
    """numba names a compiled function's symbol by its module, qualified name and
    argument types: two kernels of one name and types compiled in two processes can get
    one symbol, and a process that loads both cached callers runs one of them twice."""
    from numba.core.registry import CPUDispatcher
    found = {}
    for module in pkgutil.iter_modules(kernels.__path__):
        mod = importlib.import_module(f"{kernels.__name__}.{module.name}")
        for value in list(vars(mod).values()):
            for v in value.values() if isinstance(value, dict) else (value,):
                if isinstance(v, CPUDispatcher):
                    found[id(v.py_func)] = (v.py_func.__module__, v.py_func.__qualname__)
    names = list(found.values())
    assert len(names) > 100 and len(set(names)) == len(names)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_process_forked_while_the_lock_was_held_does_not_keep_it(tmp_path):
    """The holder unlocks before closing: a child forked inside the lock (sharing its
    descriptor) does not keep other processes out once the holder lets go."""
    with folder_lock(str(tmp_path)) as locked:
        assert locked
        pid = os.fork()
        if pid == 0:  # the child sleeps on the shared descriptor, then leaves
            time.sleep(3)
            os._exit(0)
    try:
        probe = subprocess.run(
            [sys.executable, "-c", "import sys\nfrom boostwood._config import folder_lock\n"
             "with folder_lock(sys.argv[1], timeout=1.0) as locked:\n    print(locked)",
             str(tmp_path)], capture_output=True, text=True, timeout=60)
        assert probe.stdout.strip() == "True"
    finally:
        os.waitpid(pid, 0)


def test_after_one_wait_runs_out_later_waits_are_short(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "_TIMED_OUT", [])
    with _held_by_another_process(tmp_path):
        with folder_lock(str(tmp_path), timeout=0.2) as locked:
            assert not locked
        t0 = time.monotonic()
        with folder_lock(str(tmp_path)) as locked:  # the default wait, now the short one
            assert not locked
        assert time.monotonic() - t0 < config.LOCK_SECONDS / 2


def test_a_folder_that_cannot_be_locked_locks_a_file_in_it(tmp_path, monkeypatch):
    lock_fd = config._lock_fd

    def refuse_folders(fd, deadline):
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EBADF, "no locks on this folder")
        return lock_fd(fd, deadline)

    monkeypatch.setattr(config, "_lock_fd", refuse_folders)
    with folder_lock(str(tmp_path), timeout=1.0) as locked:
        assert locked and os.listdir(tmp_path) == [config.LOCK_FILE]
