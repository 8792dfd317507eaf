"""Where a tree's time goes: the compiled expansion loop's kernels, by node size.

Trains ``bench_higgs``'s model (1M rows by default, 80 % of them) with a profile clock
in the compiled loop (``TreeGrower.profile_clock``: the CPU's cycle counter read
between kernels) and prints, per thread count and growth policy, the milliseconds
per tree of each section of the loop -- subtracting and scanning histograms (one
parallel region), bookkeeping, partitioning rows, building histograms -- split by the
rows of the batch each step splits (under 8k, 32k, 128k, and more), with the calls and
microseconds per call; the rest of a round (gradients, the root histogram, updating the scores) is
the fit's time outside the loop, broken down by function from a second fit, without
the clock, under cProfile.

A many-core machine is where this matters: at 16 threads a small node's kernels are
mostly the cost of starting a parallel region (``bench_regions.py``), and this says
how much of a tree that is.

Usage::

    python benchmarks/bench_tree_profile.py --threads 2,16 --rounds 30
"""
import argparse
import cProfile
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import TASK, boostwood_params, make_case  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood._kernels.expand import CLOCK_ROWS, new_clock  # noqa: E402
from boostwood._kernels.intrinsics import cycle_count  # noqa: E402
from boostwood.tree.grower import TreeGrower  # noqa: E402

SECTIONS = ("subtract and scan", "bookkeeping", "partition", "build")


@njit(nogil=True)
def _cycles():
    return cycle_count()


def cycles_per_second(seconds=0.25):
    """The cycle counter's rate, timed against the wall clock."""
    c0, t0 = _cycles(), time.perf_counter()
    time.sleep(seconds)
    return (_cycles() - c0) / (time.perf_counter() - t0)


def size_labels():
    bounds = [f"<{b // 1024}k" for b in CLOCK_ROWS]
    return bounds + [f">={CLOCK_ROWS[-1] // 1024}k"]


def report(clock, rate, n_trees, seconds, setting, threads):
    """Print one profile: ms per tree by section and size class, calls, us per call."""
    labels = size_labels()
    ms = clock[:, :, 0] / rate * 1e3 / n_trees
    calls = clock[:, :, 1] / n_trees
    inside = ms.sum()
    print(f"\n## {setting}, {threads} threads: {seconds / n_trees * 1e3:.1f} ms per tree, "
          f"{inside:.1f} in the loop ({100 * inside * n_trees / 1e3 / seconds:.0f} %)")
    print("| section | " + " | ".join(labels) + " | all | calls/tree | us/call |")
    print("|---" * (len(labels) + 4) + "|")
    for s, name in enumerate(SECTIONS):
        n = calls[s].sum()
        per = ms[s].sum() / n * 1e3 if n else 0.0
        print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in ms[s])
              + f" | {ms[s].sum():.2f} | {n:.0f} | {per:.1f} |")
    print("| all | " + " | ".join(f"{v:.2f}" for v in ms.sum(axis=0)) + f" | {inside:.2f} | | |")
    steps = calls[SECTIONS.index("partition")]
    print("| steps/tree | " + " | ".join(f"{v:.1f}" for v in steps) + f" | {steps.sum():.1f} | | |")
    return ms


def outside(profiler, n_trees, top=8):
    """The fit's time outside the compiled loop, by function (its own time, compiled
    kernels called from Python included: the root histogram, gradients, quantizing,
    adding leaf values), from the fit without the clock run under cProfile."""
    stats = pstats.Stats(profiler).stats
    rows = sorted(((tt, f"{os.path.basename(file)}:{name}", calls)
                   for (file, _, name), (_, calls, tt, _, _) in stats.items()
                   if name != "expand_tree"), reverse=True)[:top]
    print("outside the loop, ms per tree: " + ", ".join(
        f"{label} {tt / n_trees * 1e3:.2f} ({calls / n_trees:.0f}/tree)"
        for tt, label, calls in rows), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="2", help="comma-separated thread counts")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--settings", default="lossguide,depthwise")
    ap.add_argument("--case", default="higgs", choices=sorted(TASK))
    ap.add_argument("--quantized", action="store_true", help="use_quantized_grad")
    args = ap.parse_args()
    X, y = make_case(args.case, args.rows)
    n = int(0.8 * args.rows)
    d = bw.Dataset(X[:n], y[:n]).construct()
    rate = cycles_per_second()
    print(f"# {args.case}, {n} rows, {args.rounds} rounds; cycle counter {rate / 1e9:.3f} GHz")
    for threads in (int(t) for t in args.threads.split(",")):
        for setting in args.settings.split(","):
            params = boostwood_params(setting, threads, TASK[args.case])
            params["use_quantized_grad"] = args.quantized
            bw.train(params, d, 2, verbose_eval=False)  # compile (or load) and warm both
            TreeGrower.profile_clock = new_clock()
            bw.train(params, d, 2, verbose_eval=False)
            clock = TreeGrower.profile_clock = new_clock()
            t = time.perf_counter()
            booster = bw.train(params, d, args.rounds, verbose_eval=False)
            seconds = time.perf_counter() - t
            TreeGrower.profile_clock = None
            report(clock, rate, booster.num_boosted_rounds(), seconds, setting, threads)
            profiler = cProfile.Profile()
            t = time.perf_counter()
            profiler.enable()
            bw.train(params, d, args.rounds, verbose_eval=False)
            profiler.disable()
            print(f"(the same fit without the clock: {time.perf_counter() - t:.2f} s, "
                  f"with it {seconds:.2f} s)")
            outside(profiler, booster.num_boosted_rounds())


if __name__ == "__main__":
    main()
