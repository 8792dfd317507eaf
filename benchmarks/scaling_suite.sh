#!/bin/sh
# The many-core benchmark suite, one command: environment and start-up (numba's cache is
# filled first: on a fresh 16-core VM that took 81-138 s), then the steps named in STEPS,
# in that order, each in the time left:
#   higgs    the HIGGS scaling table (bench_higgs.py --threads THREADS)
#   cases    the 20 % NaN, 50-feature regression, 10-class and 4M-row cases on all cores
#   predict  prediction on 500-tree models (bench_predict.py, all cores and 2)
#   profile  where a tree's time goes on all cores (bench_tree_profile.py)
#   ahead    splitting leaves ahead on and off there (bench_setting_ab.py)
#   one      the HIGGS table at 1 thread
#   onehot   the one-hot case (68 features, 40 binary) on all cores and 2
# Run from the repository root on the machine to measure (LightGBM and XGBoost
# importable); results go to $OUT (default: benchmarks/results/suite) and to stdout.
#
#   sh benchmarks/scaling_suite.sh                        # 1M rows, 200 rounds, 2,4,8,16
#   BUDGET=540 THREADS=16,2 STEPS="higgs predict" sh benchmarks/scaling_suite.sh
#
# Knobs: ROWS, ROUNDS, THREADS (bench_higgs --threads), MROWS (10-class rows), BIG (the
# large case's rows), PROWS (rows bench_predict predicts), MAXT (threads of the cases;
# default all cores), BUDGET (seconds for the whole suite; each step gets what is left),
# STEPS. numba's cache goes to
# $NUMBA_CACHE_DIR (default a fresh folder), so the start-up figures are a cold start.
# results/higgs_1M_200_16cores.md came from this script on a 16-core machine. A step cut
# short by the budget keeps the per-run lines bench_higgs prints as it goes ('# {...}').
ROWS=${ROWS:-1000000}; ROUNDS=${ROUNDS:-200}; MROWS=${MROWS:-200000}; PROWS=${PROWS:-300000}
BIG=${BIG:-4000000}
MAXT=${MAXT:-$(python3 -c "import os; print(len(os.sched_getaffinity(0)))")}
THREADS=${THREADS:-2,4,8,16}; OUT=${OUT:-benchmarks/results/suite}
STEPS=${STEPS:-higgs cases predict profile ahead one onehot}
for s in $STEPS; do  # a misspelt step is refused before any time is spent
    case $s in higgs|cases|predict|profile|ahead|one|onehot) ;;
    *) echo "unknown step $s (higgs, cases, predict, profile, ahead, one, onehot)"; exit 2 ;;
    esac
done
START=$(date +%s); END=$((START + ${BUDGET:-520}))
left() { echo $((END - $(date +%s))); }
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-$(mktemp -d)}
FIT="import time; t=time.perf_counter(); import numpy as np, boostwood as bw; \
X=np.random.default_rng(0).normal(size=(500,5)); y=(X[:,0]>0)*1.0; \
bw.train({'objective':'binary:logistic'}, bw.Dataset(X,y), 5, verbose_eval=False); \
print('%.1f' % (time.perf_counter()-t))"
{
    python3 -c "import sys, os, numpy, numba, lightgbm, xgboost, llvmlite.binding as ll; \
print(sys.version.split()[0], 'numpy', numpy.__version__, 'numba', numba.__version__, \
'lightgbm', lightgbm.__version__, 'xgboost', xgboost.__version__, \
'cores', len(os.sched_getaffinity(0)), 'llvm cpu', ll.get_host_cpu_name())"
    lscpu 2>/dev/null | grep -E "Model name|^CPU\(s\)|Thread|Socket|L2|L3|NUMA node\(s\)"
    echo "cold import + first fit s: $(python3 -c "$FIT")"
    echo "warm import + first fit s: $(python3 -c "$FIT")"
    t=$(date +%s); python3 -m boostwood compile --quiet
    echo "boostwood compile (the other kernels) s: $(($(date +%s) - t))"
    python3 benchmarks/bench_regions.py --reps 5000
} 2>&1 | tee "$OUT/env.txt"
step() {  # file, then a python script and its arguments; skipped when no time is left
    f=$1; shift
    t=$(left)
    if [ "$t" -le 0 ]; then echo "# $f: skipped, no time left" | tee -a "$OUT/$f"; return; fi
    { timeout "$t" python3 "$@"; rc=$?; [ $rc -eq 124 ] && echo "# cut at the budget ($t s)"
      [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "# exit status $rc"; } 2>&1 | tee -a "$OUT/$f"
}
for f in higgs_scaling cases_many predict500 tree_profile ahead_ab higgs_1thread onehot; do
    : > "$OUT/$f.txt"  # this run's results only (steps append: the cases share a file)
done
run() { f=$1; shift; step "$f" benchmarks/bench_higgs.py --no-startup "$@"; }
PT=$MAXT; [ "$MAXT" -gt 2 ] && PT="$MAXT,2"
for s in $STEPS; do
    case $s in
    higgs) run higgs_scaling.txt --rows "$ROWS" --rounds "$ROUNDS" --threads "$THREADS" ;;
    cases)
        run cases_many.txt --case nan --rows "$ROWS" --rounds "$ROUNDS" --threads "$MAXT" \
            --settings lossguide
        run cases_many.txt --case regression50 --rows "$ROWS" --rounds "$ROUNDS" \
            --threads "$MAXT" --settings lossguide
        run cases_many.txt --case multiclass10 --rows "$MROWS" --rounds 50 --threads "$MAXT" \
            --settings lossguide
        run cases_many.txt --rows "$BIG" --rounds 100 --threads "$MAXT" --settings lossguide ;;
    predict) step predict500.txt benchmarks/bench_predict.py --threads "$PT" \
        --predict-rows "$PROWS" ;;
    profile) step tree_profile.txt benchmarks/bench_tree_profile.py --rows "$ROWS" \
        --threads "$MAXT" --rounds 30 ;;
    ahead) step ahead_ab.txt benchmarks/bench_setting_ab.py --rows "$ROWS" --threads "$MAXT" \
        --settings lossguide --set boostwood.tree.grower:TreeGrower.ahead_max_rows=0,16384 \
        --rounds 100 --pairs 2 ;;
    one) run higgs_1thread.txt --rows "$ROWS" --rounds "$ROUNDS" --threads 1 ;;
    onehot) run onehot.txt --case onehot --rows "$ROWS" --rounds "$ROUNDS" --threads "$PT" ;;
    esac
done
echo "suite done in $(($(date +%s) - START)) s"
