"""How evenly the parallel loops share a tree's rows among threads: a proxy for
many-core scaling that needs no many-core machine.

numba's ``prange`` hands each thread an equal number of iterations, so where the
iterations are unequal work, every thread waits for the one with most. This benchmark
trains ``bench_higgs``'s models on two threads, takes the batches each tree's growth
works on (depth-wise: each level's split nodes and the smaller children built from them;
leaf-wise: one split at a time, as without splitting ahead), and computes, for each
thread count, the rows the busiest thread gets over the mean rows a thread gets, per
kernel plan, summed over the batches (1.00 is an even share). No timing: the plans are
the engine's own functions, run on the batches' row counts.

* ``build``: the histogram build's runs (:func:`boostwood._kernels.histogram._plan_runs`),
  and their feature ranges where runs are fewer than threads (rows times the share of
  the features);
* ``partition``: the partition's blocks, statically shared
  (:func:`boostwood._kernels.partition.partition_block_size`, each node cut into
  near-equal blocks of at most that size);
* ``rows``: the passes over every row in tasks of ``FIXED_BLOCK`` (gradients, their
  fixed-point copy).

Usage::

    python benchmarks/bench_balance.py --rows 1000000 --rounds 20 --threads 2,4,8,16
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import TASK, boostwood_params, make_case  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood._kernels.fixed import FIXED_BLOCK  # noqa: E402
from boostwood._kernels.histogram import (SERIAL_MAX_UPDATES, _plan_runs,  # noqa: E402
                                          partials_bound, row_workers)
from boostwood._kernels.partition import partition_block_size  # noqa: E402
from boostwood.tree.grower import PARTITION_BLOCK  # noqa: E402
from boostwood.tree.histogram import HIST_BLOCK  # noqa: E402


def static_share(work, n_threads):
    """Each thread's work when numba hands it an equal count of the iterations, in order."""
    n = len(work)
    bounds = [n * t // n_threads for t in range(n_threads + 1)]
    return np.array([sum(work[bounds[t]:bounds[t + 1]]) for t in range(n_threads)])


def build_share(counts, n_threads, n_features=28):
    """Each thread's rows times the share of the features it sums (a run cut into feature
    ranges where runs are fewer than threads; a node too small to share, one thread)."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if counts.size == 1 and total * n_features < SERIAL_MAX_UPDATES:
        return np.array([total] + [0] * (n_threads - 1), dtype=np.float64)
    n_runs, n_groups = row_workers(total, n_features, n_threads,
                                   partials_bound(total, n_threads))
    k = counts.size
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    plan = _plan_runs(starts, counts, np.arange(k, dtype=np.int64), np.zeros(k, np.int64),
                      HIST_BLOCK, n_runs)
    t_count, run_first = plan[1], plan[6]
    units = [int(t_count[run_first[w]:run_first[w + 1]].sum())
             * (n_features * (g + 1) // n_groups - n_features * g // n_groups) / n_features
             for w in range(n_runs) for g in range(n_groups)]
    return np.array(units + [0.0] * (n_threads - len(units)))


def partition_share(counts, n_threads):
    size = partition_block_size(int(sum(counts)), PARTITION_BLOCK, n_threads)
    blocks = []
    for c in counts:  # ceil(c / size) near-equal blocks (partition._block_rows)
        n_k = -(-c // size)
        blocks += [c * (i + 1) // n_k - c * i // n_k for i in range(n_k)]
    return static_share(blocks, n_threads)


def rows_share(n_rows, n_threads):
    return static_share([min(FIXED_BLOCK, n_rows - s) for s in range(0, n_rows, FIXED_BLOCK)],
                        n_threads)


def batches(tree, policy):
    """(split nodes' rows, built children's rows) of each batch of the tree's growth."""
    kids = {}
    depth = {0: 0}
    for v in range(len(tree.feature)):
        if tree.feature[v] >= 0:
            l, r = int(tree.left[v]), int(tree.right[v])
            depth[l] = depth[r] = depth[v] + 1
            kids[v] = (int(tree.count[l]), int(tree.count[r]))
    if policy == "lossguide":
        return [([a + b], [min(a, b)]) for a, b in kids.values()]
    levels = {}
    for v, (a, b) in kids.items():
        parents, built = levels.setdefault(depth[v], ([], []))
        parents.append(a + b)
        built.append(min(a, b))
    return [levels[d] for d in sorted(levels)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", default="2,4,8,16")
    args = ap.parse_args()
    X, y = make_case("higgs", args.rows)
    n = int(0.8 * args.rows)
    d = bw.Dataset(X[:n], y[:n]).construct()
    threads = [int(t) for t in args.threads.split(",")]
    print(f"# higgs, {n} rows, {args.rounds} rounds: busiest thread's rows / mean rows")
    print("| policy | plan | " + " | ".join(f"{t} threads" for t in threads) + " |")
    print("|---|---|" + "---|" * len(threads))
    for policy in ("depthwise", "lossguide"):
        b = bw.train(boostwood_params(policy, 2, TASK["higgs"]), d, args.rounds,
                     verbose_eval=False)
        work = [batches(t, policy) for t in b.trees]
        shares = {"build": lambda t: [build_share(built, t) for tree in work
                                      for _, built in tree],
                  "partition": lambda t: [partition_share(parents, t) for tree in work
                                          for parents, _ in tree],
                  "rows": lambda t: [rows_share(n, t)]}  # the same every round
        for plan, of in shares.items():
            cells = []
            for t in threads:
                s = of(t)
                cells.append(f"{sum(x.max() for x in s) / sum(x.sum() / t for x in s):.2f}x")
            print(f"| {policy} | {plan} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
