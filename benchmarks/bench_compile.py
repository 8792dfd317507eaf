"""How long ``boostwood compile`` takes on an empty numba cache, in one process and in two.

The build hook (``setup.py``) runs ``boostwood compile`` while pip builds the package, so
this is the time an install spends compiling. Each run gets an empty ``NUMBA_CACHE_DIR``
of its own; runs of one and two jobs alternate. After each, a fresh process runs
``boostwood compile --jobs 1`` on the same cache and the number of kernels it still had to
compile is reported (0: the cache holds every kernel of the common paths).

Usage::

    python benchmarks/bench_compile.py              # jobs 1 and 2, once each
    python benchmarks/bench_compile.py --repeat 2
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def compile_once(jobs, cache):
    """Seconds of ``boostwood compile --jobs jobs`` on an empty cache, then the
    compilations a fresh process still makes on that cache."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "boostwood", "compile", "--quiet", "--jobs",
                    str(jobs)], env=env, check=True)
    seconds = time.perf_counter() - t
    out = subprocess.run([sys.executable, "-m", "boostwood", "compile", "--jobs", "1"],
                         env=env, check=True, capture_output=True, text=True).stdout
    left = sum(int(n) for n in re.findall(r", (\d+) compilations", out))
    return seconds, left


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs", default="1,2")
    args = ap.parse_args()
    import numba
    print(f"# boostwood compile on an empty cache; numba {numba.__version__}, "
          f"{len(os.sched_getaffinity(0))} cores")
    print("| run | jobs | seconds | compilations left for a fresh process |")
    print("|---|---|---|---|")
    for r in range(args.repeat):
        for jobs in [int(j) for j in args.jobs.split(",")]:
            cache = tempfile.mkdtemp(prefix="bw_compile_")
            try:
                seconds, left = compile_once(jobs, cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            print(f"| {r + 1} | {jobs} | {seconds:.1f} | {left} |", flush=True)


if __name__ == "__main__":
    main()
