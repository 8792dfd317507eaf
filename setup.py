"""Build hook: compile boostwood's numba kernels while pip builds the package.

numba compiles a kernel on its first call and keeps the machine code in ``__pycache__``
beside the kernel's source file (its in-tree cache). From numba 0.68 on, that cache is
keyed by the source file's content, the numba version, the Python version and the
processor it was compiled for, not by the file's modification time, so it survives
being packed into a wheel and installed elsewhere. Running ``boostwood compile`` on
the freshly built package puts those files into the wheel (or, for ``pip install -e``,
into ``src/``), so the first fit after ``pip install .`` loads its kernels in about a
second instead of compiling them for a minute and a half.

numba does not notice when a kernel's callees or constants in *other* files change, so
the hook first deletes every cache file of the built tree (whether or not it compiles
again; of ``src/`` only when it compiles there): a reused ``build/`` folder never ships
kernels compiled from older sources.

Where the files cannot serve, numba compiles on the first fit as it always did: another
kind of processor than the one that built the wheel, another numba version (pip's
isolated build takes the newest numba; ``pip install --no-build-isolation``, or a pip
constraint file, builds with the installed one), a package folder the user cannot write
to, or ``NUMBA_CACHE_DIR`` set when fitting. With numba older than 0.68 the step is
skipped (an installed cache would never load). ``BOOSTWOOD_COMPILE_ON_INSTALL=0`` skips
it, and then the build does not need numba at all (``_build/backend.py``): use it for
release builds of wheels meant for other machines. If the step fails, the build goes on
with a warning.
"""
import os
import subprocess
import sys
from importlib import metadata

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_build"))
from backend import compile_on_install  # noqa: E402

#: numba variables that would send the cache elsewhere or turn compiling off.
_UNSET = ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")
#: The first numba whose cache is keyed by the source's content, not its mtime.
CONTENT_KEYED_NUMBA = (0, 68)


def _numba_version():
    try:
        return tuple(int(p) for p in metadata.version("numba").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return None


def clear_caches(package):
    """Delete numba's cache files (``*.nbi``, ``*.nbc``) under ``package``, and the lock
    file of their writes where one was made (``boostwood._config.lock_cache_writes``)."""
    for folder, _, files in os.walk(package):
        for name in files:
            if name.endswith((".nbi", ".nbc")) or name == "boostwood-cache.lock":
                os.remove(os.path.join(folder, name))


def compile_kernels(root, editable=False):
    """Run ``python -m boostwood compile`` on the package in ``root``; True if it ran.
    A built tree (not ``editable``) loses its old cache files whether or not it is
    compiled again: a reused ``build/`` folder ships none."""
    if not editable:
        clear_caches(os.path.join(root, "boostwood"))
    if not compile_on_install():
        print("boostwood: BOOSTWOOD_COMPILE_ON_INSTALL=0: the kernels compile on the "
              "first fit")
        return False
    version = _numba_version()
    if not editable and version is not None and version < CONTENT_KEYED_NUMBA:
        print(f"boostwood: numba {'.'.join(map(str, version))} keys its cache by file "
              f"times, which an install does not keep: the kernels compile on the first fit")
        return False
    if editable:
        clear_caches(os.path.join(root, "boostwood"))
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no .pyc files into the wheel
    print("boostwood: compiling the kernels into the package (under a minute on 2 cores, "
          "about 80 s on one; BOOSTWOOD_COMPILE_ON_INSTALL=0 skips this)", flush=True)
    try:
        done = subprocess.run([sys.executable, "-m", "boostwood", "compile"], cwd=root,
                              env=env, timeout=1800)
        failed = f"exit status {done.returncode}" if done.returncode else None
    except (OSError, subprocess.SubprocessError) as exc:
        failed = str(exc)
    if failed:
        print(f"boostwood: WARNING: compiling the kernels failed ({failed}); they will "
              f"compile on the first fit", file=sys.stderr)
    return not failed


class BuildPyCompilingKernels(build_py):
    """``build_py`` followed by :func:`compile_kernels` on what it built."""

    def run(self):
        super().run()
        editable = bool(getattr(self, "editable_mode", False))
        compile_kernels(os.path.join(HERE, "src") if editable
                        else os.path.abspath(self.build_lib), editable)


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import it
    setup(cmdclass={"build_py": BuildPyCompilingKernels})
