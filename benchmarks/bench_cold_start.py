"""Start-up on a fresh install: import plus first fit, with and without the kernels that
setup.py compiles while pip builds the package.

Builds two wheels from a clean copy of this checkout (no ``build/`` and no
``__pycache__``), one with the build hook and one with ``BOOSTWOOD_COMPILE_ON_INSTALL=0``,
installs each into its own folder, and times fresh processes on each: ``import
boostwood``, then the first fit (2,000 rows, 10 rounds) and predict. Also reported:
numba compilations in that process, the build's seconds, and a warm start (the same
process again, its cache now filled), for each wheel. A last row is numba's own floor: a
fresh process that imports numpy and numba and calls one trivial cached parallel kernel
(its cache filled by a run before), which pays numba's first-use costs (its typing and
lowering registries, and scipy.linalg where scipy is installed, which boostwood's start-up
skips) and no boostwood code. The warm rows of the compiled wheel and of the floor are
medians of several processes taken in turn (``--warm``).

Usage::

    python benchmarks/bench_cold_start.py            # pip builds in an isolated environment
    python benchmarks/bench_cold_start.py --no-build-isolation   # where there is no network
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: What a clean copy of the checkout leaves out (tests/test_install.py copies the same way).
NOT_SOURCE = (".git", "build", "__pycache__", "*.egg-info", "*.nbi", "*.nbc", ".whl", ".gl",
              ".pytest_cache", ".hypothesis", ".benchmarks", "tests", "benchmarks", "examples",
              "docs")
PROBE = """
import time
t0 = time.perf_counter()
from numba.core import event
n = [0]
class Count(event.Listener):
    def on_start(self, ev): n[0] += 1
    def on_end(self, ev): pass
event.register("numba:compile", Count())
import numpy as np
import boostwood as bw
t1 = time.perf_counter()
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 6)); y = (X[:, 0] + rng.normal(size=2000) > 0) * 1.0
bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 10, verbose_eval=False).predict(X)
print(t1 - t0, time.perf_counter() - t1, n[0])
"""


FLOOR_KERNEL = """
from numba import njit, prange
@njit(cache=True, parallel=True, nogil=True)
def total(x):
    s = 0.0
    for i in prange(x.shape[0]):
        s += x[i]
    return s
"""
FLOOR = """
import time
t0 = time.perf_counter()
import numpy as np
import numba
t1 = time.perf_counter()
import floor_kernel
floor_kernel.total(np.ones(100))
print(t1 - t0, time.perf_counter() - t1)
"""


def numba_floor(work):
    """Prepare numba's floor: a folder with one cached parallel kernel, its cache filled.

    Returns a function that runs one fresh process on it and gives its import seconds
    and its first call's."""
    folder = work / "floor"
    folder.mkdir()
    (folder / "floor_kernel.py").write_text(FLOOR_KERNEL)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(folder)

    def run():
        out = subprocess.run([sys.executable, "-c", FLOOR], check=True, capture_output=True,
                             text=True, env=env, cwd=folder)
        return [float(v) for v in out.stdout.split()]

    run()  # compiles and caches
    return run


def build(work, hook, isolation):
    source = work / "source"
    if not source.exists():  # the checkout without its build/, caches and tests
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    shutil.rmtree(source / "build", ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["BOOSTWOOD_COMPILE_ON_INSTALL"] = "1" if hook else "0"
    # the isolated build compiles with this environment's numba and numpy (a cache made by
    # another numba version is not loaded: see setup.py)
    import numba
    import numpy
    (work / "pins.txt").write_text(f"numba=={numba.__version__}\nnumpy=={numpy.__version__}\n")
    env["PIP_CONSTRAINT"] = str(work / "pins.txt")
    wheels, site = work / f"wheel_{hook}", work / f"site_{hook}"
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
                    str(source)] + ([] if isolation else ["--no-build-isolation"]),
                   check=True, env=env)
    seconds = time.perf_counter() - t
    (wheel,) = wheels.glob("boostwood-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, env=env)
    return site, seconds, env


def probe(site, env):
    out = subprocess.run([sys.executable, "-c", PROBE], check=True, capture_output=True,
                         text=True, env={**env, "PYTHONPATH": str(site)}, cwd=site.parent)
    imp, fit, n = out.stdout.split()
    return float(imp), float(fit), int(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-build-isolation", action="store_true")
    ap.add_argument("--warm", type=int, default=7,
                    help="warm processes of the compiled wheel and of numba's floor, taken "
                         "in turn; the rows give the median of each (default 7)")
    args = ap.parse_args()
    if args.warm < 1:
        ap.error("--warm takes at least 1")
    print("| wheel | build s | process | import s | first fit + predict s | total s | "
          "numba compilations |\n|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for hook in (True, False):
            site, seconds, env = build(Path(tmp), hook, not args.no_build_isolation)
            if hook:
                compiled = site, env
            label = "compiled at build" if hook else "BOOSTWOOD_COMPILE_ON_INSTALL=0"
            for which in ("first after install", "second"):
                imp, fit, n = probe(site, env)
                print(f"| {label} | {seconds:.1f} | {which} | {imp:.2f} | {fit:.2f} | "
                      f"{imp + fit:.2f} | {n} |", flush=True)
        floor = numba_floor(Path(tmp))
        warm, bare = [], []
        for _ in range(args.warm):  # in turn, so that a drift of the machine hits both
            warm.append(probe(*compiled))
            bare.append(floor() + [0])
        for label, runs in (("compiled at build", warm),
                            ("numba alone: one cached parallel kernel", bare)):
            imp, call = (statistics.median(r[i] for r in runs) for i in (0, 1))
            totals = [r[0] + r[1] for r in runs]  # the median total: not imp + call
            print(f"| {label} | | warm, median of {len(runs)} (total {min(totals):.2f}-"
                  f"{max(totals):.2f}) | {imp:.2f} | {call:.2f} | "
                  f"{statistics.median(totals):.2f} | {sum(r[2] for r in runs)} |", flush=True)


if __name__ == "__main__":
    main()
