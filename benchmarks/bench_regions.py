"""What a numba parallel region costs by team size, on this machine.

Two loops of empty-ish parallel regions (64 iterations each), every region timed as
the mean of many:

* a fixed team: all regions on ``t`` threads, for t = 1, 2, 4, ... up to numba's
  threads;
* alternating teams: regions on ``t`` and ``t / 2`` threads by turns (the thread
  count set in compiled code before each region);
* regions on all threads after serial work of 0 to 500 us each, as a kernel loop
  runs them (the region's cost beyond the serial work: it grows if idle threads
  fall asleep between regions).

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

from boostwood._kernels.intrinsics import cycle_count


@njit(parallel=True, nogil=True)
def _region(a):
    for i in prange(a.shape[0]):
        a[i] += 1.0


@njit(nogil=True)
def _spin(cycles):
    """Serial work: busy until the cycle counter has advanced ``cycles``."""
    end = cycle_count() + cycles
    n = 0
    while cycle_count() < end:
        n += 1
    return n


@njit(nogil=True)
def _gapped(a, reps, gap_cycles, with_region):
    """reps times: serial work of ``gap_cycles``, then (if ``with_region``) a region."""
    for _ in range(reps):
        _spin(gap_cycles)
        if with_region:
            _region(a)


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
    # a kernel loop runs serial code between regions: do idle threads fall asleep?
    c0, t0 = cycle_count_py(), time.perf_counter()
    time.sleep(0.1)
    rate = (cycle_count_py() - c0) / (time.perf_counter() - t0)
    t = numba.config.NUMBA_NUM_THREADS
    print(f"\n| serial work between regions ({t} threads), us | us per region |")
    print("|---|---|")
    reps = max(args.reps // 10, 100)
    for gap_us in (0, 5, 20, 100, 500):
        gap = int(gap_us * 1e-6 * rate)
        secs = []
        for with_region in (False, True):
            _gapped(a, 10, gap, with_region)
            start = time.perf_counter()
            _gapped(a, reps, gap, with_region)
            secs.append(time.perf_counter() - start)
        print(f"| {gap_us} | {(secs[1] - secs[0]) / reps * 1e6:.2f} |")


@njit(nogil=True)
def _now():
    return cycle_count()


def cycle_count_py():
    return _now()


if __name__ == "__main__":
    main()
