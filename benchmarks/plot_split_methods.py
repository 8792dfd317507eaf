"""Why approximate split finding exists: training time and test AUC against rows.

The notes (001, "Basic Exact Greedy Algorithm ... quite computationally
demanding ... better to have an approximation") claim that exact greedy costs
more as data grows and that percentile candidates (approx, global or local) and
buckets (hist) fix it at little loss of accuracy. This script measures it on
the HIGGS-like data of ``bench_higgs.py`` for 10k to 1M rows and writes a
two-panel PNG and a markdown table.

Needs matplotlib (``pip install matplotlib``, or the ``bench`` extra).

Usage::

    python benchmarks/plot_split_methods.py            # 10k .. 1M rows, 50 rounds
    python benchmarks/plot_split_methods.py --max-rows 100000 --rounds 20 --out /tmp/x.png
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_exact import in_subprocess, make_data  # noqa: E402

SERIES = ["boostwood exact", "boostwood approx local", "boostwood approx global",
          "boostwood hist"]
STYLE = {"boostwood exact": ("exact", "o-"), "boostwood approx local": ("approx, local", "s-"),
         "boostwood approx global": ("approx, global", "^-"), "boostwood hist": ("hist", "d-")}


def measure(rows_list, rounds, threads, depth):
    results = {name: [] for name in SERIES}
    with tempfile.TemporaryDirectory() as tmp:
        for rows in rows_list:
            Xtr, ytr, Xte, yte = make_data(rows)
            path = os.path.join(tmp, f"d{rows}.npz")
            np.savez(path, Xtr=Xtr, ytr=ytr, Xte=Xte, yte=yte)
            for name in SERIES:
                r = in_subprocess(name, path, rounds, threads, depth)
                results[name].append(r)
                print(f"# {rows} rows, {name}: {r['seconds']:.2f} s, AUC {r['auc']:.4f}",
                      flush=True)
    return results


def plot(rows_list, results, rounds, depth, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax_t, ax_a) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in SERIES:
        label, style = STYLE[name]
        ax_t.plot(rows_list, [r["seconds"] for r in results[name]], style, label=label)
        ax_a.plot(rows_list, [r["auc"] for r in results[name]], style, label=label)
    ax_t.set(xscale="log", yscale="log", xlabel="training rows (80% of the data)",
             ylabel="training time (s)", title=f"Training time, {rounds} trees of depth {depth}")
    ax_a.set(xscale="log", xlabel="training rows (80% of the data)", ylabel="test AUC",
             title="Test AUC")
    for ax in (ax_t, ax_a):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.suptitle("Split finding on HIGGS-like data: exact greedy vs percentile candidates vs buckets")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"# wrote {out}")


def table(rows_list, results):
    lines = ["| rows | " + " | ".join(STYLE[n][0] + " s (AUC)" for n in SERIES) + " |",
             "|---|" + "---|" * len(SERIES)]
    for i, rows in enumerate(rows_list):
        cells = [f"{results[n][i]['seconds']:.2f} ({results[n][i]['auc']:.4f})" for n in SERIES]
        lines.append(f"| {rows} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "results", "split_methods.png"))
    args = ap.parse_args()
    rows_list = [r for r in (10_000, 30_000, 100_000, 300_000, 1_000_000) if r <= args.max_rows]
    results = measure(rows_list, args.rounds, args.threads, args.depth)
    plot([int(0.8 * r) for r in rows_list], results, args.rounds, args.depth, args.out)
    md = table(rows_list, results)
    print(md)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as fh:
        fh.write(f"# plot_split_methods.py: {args.rounds} trees of depth {args.depth}, "
                 f"{args.threads} threads; total rows (80% train), training seconds (test AUC)\n\n")
        fh.write(md + "\n")


if __name__ == "__main__":
    main()
