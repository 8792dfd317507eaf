"""What a numba parallel region costs by team size, on this machine.

Two loops of empty-ish parallel regions (64 iterations each), every region timed as
the mean of many:

* a fixed team: all regions on ``t`` threads, for t = 1, 2, 4, ... up to numba's
  threads;
* alternating teams: regions on ``t`` and ``t / 2`` threads by turns (the thread
  count set in compiled code before each region).

On a 16-core machine (2026-11-26) a fixed team cost 1.2 us on 1 thread and 6.5-7.1 us
on 16; giving small kernels fewer threads region by region made leaf-wise training
2-4.6x slower there (``results/higgs_1M_200_16cores.md``), while on 2 cores
alternating teams cost no more than a fixed one. This script is the quick check of
that cost on a new machine.

Usage::

    python benchmarks/bench_regions.py            # 20,000 regions per figure
    python benchmarks/bench_regions.py --reps 5000
"""
import argparse
import time

import numba
import numpy as np
from numba import njit, prange


@njit(parallel=True, nogil=True)
def _region(a):
    for i in prange(a.shape[0]):
        a[i] += 1.0


@njit(nogil=True)
def _regions(a, reps, t1, t2):
    """2 * reps regions, on t1 and t2 threads by turns; the caller's count restored."""
    old = numba.get_num_threads()
    for _ in range(reps):
        numba.set_num_threads(t1)
        _region(a)
        numba.set_num_threads(t2)
        _region(a)
    numba.set_num_threads(old)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10_000, help="pairs of regions per figure")
    args = ap.parse_args()
    a = np.zeros(64)
    _regions(a, 10, 1, 1)  # compile, start the threads
    counts = [1]
    while counts[-1] * 2 <= numba.config.NUMBA_NUM_THREADS:
        counts.append(counts[-1] * 2)
    print(f"# {numba.config.NUMBA_NUM_THREADS} numba threads, layer {numba.threading_layer()}")
    print("| threads | fixed team, us per region | alternating with half, us per region |")
    print("|---|---|---|")
    for t in counts:
        cells = []
        for t2 in (t, max(t // 2, 1)):
            start = time.perf_counter()
            _regions(a, args.reps, t, t2)
            cells.append((time.perf_counter() - start) / (2 * args.reps) * 1e6)
        print(f"| {t} | {cells[0]:.2f} | {cells[1]:.2f} |")


if __name__ == "__main__":
    main()
