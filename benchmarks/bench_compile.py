"""What an install's compile costs, and what it buys: ``boostwood compile`` on an empty
numba cache, then import and the first fit in a fresh process on that cache.

``pip install`` runs ``boostwood compile`` while it builds the package (``setup.py``), so
the compile's wall time is the install's; the process after it is a user's first. Each
run gets an empty ``NUMBA_CACHE_DIR`` of its own. Reported per run: the compile's wall
seconds (``/usr/bin/time``-style, the whole process), then, in a fresh process on that
cache, the import of boostwood, a first fit and predict (2,000 rows, 10 rounds, binary
logistic) and how many kernels that fit still had to compile (0: the install covers it),
and the same for a scikit-learn ``GBDTClassifier`` fit, then (with pandas) for the same
rows as a DataFrame and for a DataFrame with two category columns.

``--src`` runs another checkout's code (its ``src`` folder first on ``PYTHONPATH``),
e.g. a ``git worktree`` of an older commit, for a before/after table from one machine
and one session. Runs of the given sources alternate.

Usage::

    python benchmarks/bench_compile.py                          # this checkout, jobs 2
    python benchmarks/bench_compile.py --jobs 1,2 --repeat 2
    python benchmarks/bench_compile.py --src /tmp/old/src,src   # before and after
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

#: A user's first process after the install: import, one fit and predict of each API,
#: the numba compilations they made (a listener counts them).
FIRST_FIT = r"""
import json, time
t0 = time.perf_counter()
import numpy as np
import boostwood as bw
t1 = time.perf_counter()
from numba.core import event
class Count(event.Listener):
    n = 0
    def on_start(self, ev): Count.n += 1
    def on_end(self, ev): pass
event.register("numba:compile", Count())
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 6)); y = (X[:, 0] + rng.normal(size=2000) > 0) * 1.0
b = bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 10, verbose_eval=False)
b.predict(X)
t2 = time.perf_counter(); native = Count.n
bw.GBDTClassifier(n_estimators=10).fit(X, y).predict_proba(X)
t3 = time.perf_counter(); sklearn = Count.n
out = dict(import_s=t1 - t0, first_fit_s=t2 - t1, compilations=native,
           sklearn_fit_s=t3 - t2, sklearn_compilations=sklearn - native)
try:  # a pandas frame (read-only, column-major values), then one with category columns
    import pandas as pd
    df = pd.DataFrame(X, columns=list("abcdef"))
    bw.train({"objective": "binary:logistic"}, bw.Dataset(df, pd.Series(y)), 10).predict(df)
    t4 = time.perf_counter(); frame = Count.n
    cat = df.assign(c=pd.Categorical(rng.choice(["a", "b", "c", "d", "e", "f"], 2000)),
                    d=pd.Categorical(rng.choice([f"L{i}" for i in range(40)], 2000)))
    bw.train({"objective": "binary:logistic"}, bw.Dataset(cat, y), 10).predict(cat)
    t5 = time.perf_counter()
    out.update(pandas_fit_s=t4 - t3, pandas_compilations=frame - sklearn,
               categorical_fit_s=t5 - t4, categorical_compilations=Count.n - frame)
except ImportError:
    pass
print(json.dumps(out))
"""


def one_run(src, jobs, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    if src:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(src),
                                                        env.get("PYTHONPATH")) if p)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "boostwood", "compile", "--quiet", "--jobs",
                    str(jobs)], env=env, check=True, cwd=tempfile.gettempdir())
    compile_s = time.perf_counter() - t
    out = subprocess.run([sys.executable, "-c", FIRST_FIT], env=env, check=True,
                         capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
    return dict(compile_s=compile_s, **json.loads(out.strip().splitlines()[-1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--src", default="", help="comma-separated src folders (default: the "
                                             "installed boostwood)")
    args = ap.parse_args()
    import numba
    sources = args.src.split(",") if args.src else [""]
    print(f"# boostwood compile on an empty numba cache, then a fresh process on it; "
          f"numba {numba.__version__}, Python {sys.version.split()[0]}, "
          f"{len(os.sched_getaffinity(0))} cores")
    print("| run | source | jobs | compile s | import s | first fit + predict s | "
          "compilations left | scikit-learn fit s | its compilations | pandas frame fit + "
          "predict s | its compilations | category columns fit + predict s | its "
          "compilations |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in range(args.repeat):
        for src in sources:
            for jobs in [int(j) for j in args.jobs.split(",")]:
                cache = tempfile.mkdtemp(prefix="bw_compile_")
                try:
                    x = one_run(src, jobs, cache)
                finally:
                    shutil.rmtree(cache, ignore_errors=True)
                frames = " | ".join(f"{x[k]:.2f}" if k.endswith("_s") else str(x[k])
                                    for k in ("pandas_fit_s", "pandas_compilations",
                                              "categorical_fit_s", "categorical_compilations")
                                    if k in x) or "- | - | - | -"
                print(f"| {r + 1} | {src or 'installed'} | {jobs} | {x['compile_s']:.1f} | "
                      f"{x['import_s']:.2f} | {x['first_fit_s']:.2f} | {x['compilations']} | "
                      f"{x['sklearn_fit_s']:.2f} | {x['sklearn_compilations']} | {frames} |",
                      flush=True)


if __name__ == "__main__":
    main()
