"""Build hook: compile boostwood's numba kernels while pip builds the package.

numba compiles a kernel on its first call and keeps the machine code in ``__pycache__``
beside the kernel's source file (its in-tree cache), under a key made of the source
file's content, the numba version and the processor it was compiled for. Running
``boostwood compile`` on the freshly built package puts those files into the wheel (or,
for ``pip install -e``, into ``src/``), so the first fit after ``pip install .`` loads
its kernels in about a second instead of compiling them for a minute.

Where the files cannot serve, numba compiles on the first fit as it always did: another
kind of processor than the one that built the wheel, another numba version, a package
folder the user cannot write to, or ``NUMBA_CACHE_DIR`` set when fitting.
``BOOSTWOOD_COMPILE_ON_INSTALL=0`` skips the step; if it fails, the build goes on
with a warning.
"""
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
#: numba variables that would send the cache elsewhere or turn compiling off.
_UNSET = ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")


def compile_kernels(root):
    """Run ``python -m boostwood compile`` on the package in ``root``; True if it ran."""
    if os.environ.get("BOOSTWOOD_COMPILE_ON_INSTALL", "1").strip().lower() in (
            "0", "false", "no", "off"):
        print("boostwood: BOOSTWOOD_COMPILE_ON_INSTALL=0: the kernels compile on the "
              "first fit")
        return False
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    print("boostwood: compiling the kernels into the package (about a minute on 2 "
          "cores; BOOSTWOOD_COMPILE_ON_INSTALL=0 skips this)", flush=True)
    try:
        done = subprocess.run([sys.executable, "-m", "boostwood", "compile"], cwd=root,
                              env=env, timeout=3600)
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
        editable = getattr(self, "editable_mode", False)
        compile_kernels(os.path.join(HERE, "src") if editable
                        else os.path.abspath(self.build_lib))


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import it
    setup(cmdclass={"build_py": BuildPyCompilingKernels})
