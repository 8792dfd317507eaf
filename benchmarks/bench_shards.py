"""Data shards against one process: what the collectives of sharded training cost.

k simulated shards (``boostwood._comm.SimulatedShards``: k threads of one process, each
with its own rows, meeting in the reducer) train with ``nthread=1`` each; one process
trains the same rows with ``nthread=k``. The models are the same to the last byte but
for the recorded ``nthread`` (checked here, and in ``tests/test_shards.py``); only the
time differs. Binning is inside the timer
for both (a sharded Dataset bins from every shard's sample). Leaf-wise trees meet once
per batch of up to ``TreeGrower.shard_ahead_width`` leaves; ``--width`` sets it (1: once
per split).

Each shard must be given its thread count: without ``nthread=1`` every shard's
``train`` sets numba to all cores, and numba's OpenMP pools (one per thread) then
oversubscribe the cores (see docs/guide.md, training from a thread).

JIT warmed first; the two ways alternate ``--repeat`` times; each one's best time and
the ratio of the bests are printed, with the commit and the machine.

Usage::

    python benchmarks/bench_shards.py                      # 100k rows, 30 rounds, 2 shards
    python benchmarks/bench_shards.py --rows 200000 --width 1
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_higgs import make_higgs_like  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood._comm import SimulatedShards  # noqa: E402
from boostwood.tree.grower import TreeGrower  # noqa: E402


def params(policy, threads):
    return dict(objective="binary:logistic", grow_policy=policy, eta=0.1, verbosity=0,
                seed=1, nthread=threads,
                **(dict(max_leaves=255, max_depth=0) if policy == "lossguide"
                   else dict(max_depth=8)))


def single(X, y, policy, k, rounds):
    return bw.train(params(policy, k), bw.Dataset(X, y), rounds)


def sharded(X, y, policy, k, rounds):
    parts = np.array_split(np.arange(len(y)), k)

    def shard(reducer, s):
        idx = parts[s]
        return bw.train(params(policy, 1), bw.Dataset(X[idx], y[idx], row_ids=idx), rounds,
                        reducer=reducer)

    return SimulatedShards(k).run(shard)[0]


def model_trees(booster):
    """The saved model without its parameters (``nthread`` differs between the two)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.json")
        booster.save_model(path)
        with open(path) as f:
            model = json.load(f)
    body = model.get("model", model)  # (the file's checksum covers the parameters too)
    body.pop("params", None)
    return json.dumps(body, sort_keys=True)


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--width", type=int, default=None,
                    help="TreeGrower.shard_ahead_width (default: the library's)")
    args = ap.parse_args()
    if args.width is not None:
        TreeGrower.shard_ahead_width = args.width
    X, y = make_higgs_like(args.rows)
    k = args.shards
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    print(f"# {args.rows} rows x {X.shape[1]} features, {args.rounds} rounds; {k} shards x "
          f"1 thread against 1 process x {k} threads; best of {args.repeat}, alternating; "
          f"shard_ahead_width {TreeGrower.shard_ahead_width}; commit {commit.strip()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores\n")
    print("| trees | one process s | shards s | shards / one process | same model |")
    print("|---|---|---|---|---|")
    for policy in ("lossguide", "depthwise"):
        single(X[:2000], y[:2000], policy, k, 2)  # JIT
        sharded(X[:2000], y[:2000], policy, k, 2)
        one, many, same = [], [], True
        for _ in range(args.repeat):
            t1, b1 = timed(single, X, y, policy, k, args.rounds)
            t2, b2 = timed(sharded, X, y, policy, k, args.rounds)
            one.append(t1)
            many.append(t2)
            same &= model_trees(b1) == model_trees(b2)
        label = "leaf-wise, 255 leaves" if policy == "lossguide" else "depth-wise, depth 8"
        print(f"| {label} | {min(one):.2f} | {min(many):.2f} | "
              f"{min(many) / min(one):.2f}x | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
