"""A round's class trees grown side by side (boosting/_class_trees.py): the same model
as in turn, and in turn wherever side by side could change it."""
import gc
import threading
import time

import numba
import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting import _side_by_side as _class_trees
from test_grower import _growers
from boostwood.boosting._side_by_side import (MIN_BUDGET_BYTES, ClassTreeWorkers,
                                              threads_per_worker, worker_count)


def _data(n=3000, seed=4):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, 6))
    X[r.random(X.shape) < 0.05] = np.nan
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + r.normal(size=n), [-1, 0, 1]).astype(float)
    return X, y


@pytest.fixture
def runs(monkeypatch):
    """Counts the rounds grown side by side."""
    count = [0]
    run = ClassTreeWorkers.run

    def counted(self, n_trees, grow_one):
        count[0] += 1
        return run(self, n_trees, grow_one)

    monkeypatch.setattr(ClassTreeWorkers, "run", counted)
    return count


def _fit_bytes(params, rounds, tmp_path, name, evals=()):
    log = {}
    X, y = _data()
    dtrain = bw.Dataset(X[:2400], y[:2400])
    sets = [(bw.Dataset(X[2400:], y[2400:]), "valid")] if evals else []
    bw.train(params, dtrain, rounds, evals=sets, evals_result=log, verbose_eval=False) \
        .save_model(tmp_path / name)
    return (tmp_path / name).read_bytes(), log


@pytest.mark.parametrize("nthread", [2, 3])
@pytest.mark.parametrize("extra", [{}, {"use_quantized_grad": True},
                                   {"grow_policy": "lossguide", "max_leaves": 12},
                                   {"colsample_bytree": 0.7, "max_depth": 3},
                                   {"subsample": 0.7},
                                   {"subsample": 0.8, "use_quantized_grad": True,
                                    "grow_policy": "lossguide", "max_leaves": 12}])
def test_side_by_side_gives_the_same_model(extra, nthread, runs, monkeypatch, tmp_path):
    """Every round grown side by side, and the model and evaluation log equal to the
    last bit to those of the trees grown in turn."""
    params = {"objective": "multi:softprob", "num_class": 4, "eta": 0.3, "nthread": nthread,
              **extra}
    together, log_t = _fit_bytes(params, 8, tmp_path, "together.json", evals=True)
    assert runs[0] == 8
    monkeypatch.setattr(ClassTreeWorkers, "enabled", False)
    in_turn, log_i = _fit_bytes(params, 8, tmp_path, "in_turn.json", evals=True)
    assert runs[0] == 8
    assert together == in_turn
    assert log_t == log_i


@pytest.mark.parametrize("extra", [{"nthread": 1}, {"colsample_bynode": 0.5},
                                   {"tree_method": "approx"}, {"tree_method": "exact"},
                                   {"boosting": "gradient"}])
def test_in_turn_where_side_by_side_could_differ(extra, runs, tmp_path):
    """One thread, per-node feature sampling (the round's generator), re-binned or sorted
    data and Friedman's line searches (they read the margins): in turn."""
    params = {"objective": "multi:softprob", "num_class": 4, "nthread": 2, **extra}
    _fit_bytes(params, 2, tmp_path, "m.json")
    assert runs[0] == 0


def test_in_turn_for_outputs_set_by_line_searches(runs, monkeypatch, tmp_path):
    """Quantile levels in one model: each output's leaves come from a line search."""
    X, y = _data()
    bw.train({"objective": "reg:quantileerror", "quantile_alpha": [0.2, 0.5, 0.8],
              "nthread": 2}, bw.Dataset(X, y), 2)
    assert runs[0] == 0


def test_in_turn_on_a_layer_that_is_not_thread_safe(runs, monkeypatch, tmp_path):
    """numba's workqueue layer aborts when two threads start parallel loops at once."""
    monkeypatch.setattr(_class_trees.numba, "threading_layer", lambda: "workqueue")
    _fit_bytes({"objective": "multi:softprob", "num_class": 4, "nthread": 2}, 2, tmp_path,
               "m.json")
    assert runs[0] == 0


def test_a_layer_not_yet_chosen_is_chosen_first(monkeypatch):
    """No parallel loop has run: one tiny kernel chooses the layer, then it is asked."""
    from boostwood._comm import threadsafe_numba
    asked = []

    def layer():
        asked.append(1)
        if len(asked) == 1:
            raise ValueError("Threading layer is not initialized.")
        return "omp"

    monkeypatch.setattr(_class_trees.numba, "threading_layer", layer)
    assert threadsafe_numba() and len(asked) == 2


def test_in_turn_when_a_second_worker_passes_the_memory_budget(runs, monkeypatch, tmp_path):
    """Here the class state is 4 x 2,400 x 24 bytes (230 KB) and a worker's histograms
    alone take more: with no floor under the budget, the trees grow in turn."""
    params = {"objective": "multi:softprob", "num_class": 4, "nthread": 2}
    _fit_bytes(params, 2, tmp_path, "m.json")
    assert runs[0] == 2
    monkeypatch.setattr(_class_trees, "MIN_BUDGET_BYTES", 0)
    _fit_bytes(params, 2, tmp_path, "m.json")
    assert runs[0] == 2


@pytest.mark.parametrize("n_trees, nthread, worker, budget, expected", [
    (10, 2, 24e6, 38e6, 2),  # the 10-class benchmark: budget floored at MIN_BUDGET_BYTES
    (10, 16, 24e6, 38e6, 3),  # two extra workers fit in 64 MiB
    (10, 64, 400e6, 38e6, 1),  # wide histograms: in turn
    (100, 64, 35e6, 2.4e9, 64),  # many classes of many rows: one worker per thread
    (3, 16, 1e6, 0, 3)])
def test_worker_count(n_trees, nthread, worker, budget, expected):
    assert MIN_BUDGET_BYTES == 64 << 20
    assert worker_count(n_trees, nthread, lambda t: worker, budget) == expected


def test_worker_count_counts_the_threads_of_fewer_workers():
    """Fewer workers have more threads each, so more partial histograms: 10e6 + 5e6 per
    thread, 16 threads, 100e6 to share: 10 to 5 workers pass it (9 x 20e6 ... 4 x 30e6),
    4 workers of 4 threads take 3 x 30e6."""
    assert worker_count(10, 16, lambda t: 10e6 + 5e6 * t, 100e6) == 4


def test_worker_bytes_counts_a_trees_histograms_and_partials():
    """A worker's estimate for the leaf-wise HIGGS-like shape of the benchmark."""
    from boostwood.tree.methods import make_tree_method
    from boostwood.boosting._state import _grower_params
    from boostwood.boosting.params import resolve_params
    X, y = _data(n=100000)
    d = bw.Dataset(X, y, max_bin=63).construct()
    p = resolve_params({"grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0})
    method = make_tree_method("hist", d, _grower_params(p), None)
    slot = method.grower.builder.hist[0].nbytes
    rows = 100000 * (3 * 4 + 2 * 4)  # two index buffers, the staging ids, int32 g and h
    held = 31 // 2 + 2
    # partials: one per thread after the first (each thread sums a run of the rows; before
    # 4 per thread and one: 9 on 2 threads, 65 on 16)
    assert method.worker_bytes(1) == rows + held * slot
    assert method.worker_bytes(2) == rows + (held + 1) * slot
    assert method.worker_bytes(4) == rows + (held + 3) * slot
    # from AHEAD_MIN_THREADS (16) leaves are split ahead: 2 (16 - 1) waiting histograms more
    assert method.worker_bytes(16) == rows + (held + 2 * 15 + 15) * slot


@pytest.mark.parametrize("n_trees, nthread, expected", [
    (10, 16, [2] * 6 + [1] * 4), (10, 2, [1, 1]), (3, 16, [6, 5, 5]), (2, 8, [4, 4]),
    (4, 1, [1]), (1, 4, [4])])
def test_threads_per_worker(n_trees, nthread, expected):
    got = threads_per_worker(n_trees, nthread)
    assert got == expected
    assert sum(got) == nthread


class _FakeMethod:
    def worker(self):
        return _FakeMethod()


def test_run_returns_in_tree_order_on_every_worker():
    """Results in order of k, whichever worker grew them; each worker's trees see its
    thread count; the caller's count is restored."""
    workers = ClassTreeWorkers(_FakeMethod(), 6, 2)
    assert workers.threads == [1, 1]

    def grow_one(method, k):
        time.sleep(0.02)  # the other worker takes trees meanwhile
        return k, method, threading.get_ident(), numba.get_num_threads()

    numba.set_num_threads(2)
    out = workers.run(6, grow_one)
    assert [o[0] for o in out] == list(range(6))
    assert len({o[2] for o in out}) == 2 and len({id(o[1]) for o in out}) == 2
    assert all(o[3] == 1 for o in out)
    assert numba.get_num_threads() == 2


@pytest.mark.parametrize("bad", [0, 3])
def test_an_error_in_any_tree_is_raised_after_every_worker_stopped(bad):
    workers = ClassTreeWorkers(_FakeMethod(), 8, 2)
    grown = []

    def grow_one(method, k):
        time.sleep(0.01)
        if k == bad:
            raise FloatingPointError(f"tree {k}")
        grown.append(k)
        return k

    numba.set_num_threads(2)
    with pytest.raises(FloatingPointError, match=f"tree {bad}"):
        workers.run(8, grow_one)
    done = len(grown)
    time.sleep(0.05)
    assert len(grown) == done < 8  # nothing runs on after the error, nor to the end
    assert numba.get_num_threads() == 2


@pytest.mark.parametrize("where", ["caller", "worker"])
def test_an_error_in_any_class_tree_reaches_the_caller(where, runs, monkeypatch):
    """Raised in the calling thread or in a pool worker (the first of the second round's
    trees grown there; the other thread waits in its tree until then), it reaches
    train's caller; training stops, and nothing it held
    is left for the cyclic collector (a worker's error held in a future, whose traceback
    holds the frame that holds the futures, would keep every grower alive)."""
    from boostwood.tree.stats import FixedPointStats
    quantize = FixedPointStats.quantize
    main = threading.main_thread()
    reached = threading.Event()

    def failing(self, gh, row_ids=None, counter=0):
        here = "caller" if threading.current_thread() is main else "worker"
        if counter >= 4:
            if here == where:
                reached.set()
                raise ValueError(f"the objective returned a NaN (in the {here})")
            reached.wait(10)  # the other thread takes the next tree meanwhile
        return quantize(self, gh, row_ids, counter)

    monkeypatch.setattr(FixedPointStats, "quantize", failing)
    X, y = _data()
    gc.collect()
    gc.disable()  # and no grower may be left for the cyclic collector, workers' included
    try:
        before = {id(o) for o in _growers()}
        with pytest.raises(ValueError, match=f"NaN \\(in the {where}\\)") as info:
            bw.train({"objective": "multi:softprob", "num_class": 4, "nthread": 2},
                     bw.Dataset(X, y), 3)
        del info  # its traceback holds the training state
        left = [o for o in _growers() if id(o) not in before]
    finally:
        gc.enable()
    assert runs[0] == 2
    assert left == []


def test_the_first_failed_task_in_task_order_is_raised_or_an_interrupt():
    """Tasks 1 and 3 fail, task 3 (on the other worker) first: task 1's error is raised,
    as in turn; an interrupt in any task wins over errors; the stop flag is set."""
    from boostwood.boosting._side_by_side import SideBySide
    workers = SideBySide([None, None], 2)
    third_failed = threading.Event()

    def task(_, k):
        if k == 3:
            third_failed.set()
            raise ValueError("task 3")
        if k == 1:
            third_failed.wait(5)
            raise ValueError("task 1")
        time.sleep(0.01)
        return k

    with pytest.raises(ValueError, match="task 1"):
        workers.run(6, task)
    assert workers.stop.is_set()

    interrupt = threading.Event()

    def interrupted(_, k):
        if k == 1:
            interrupt.set()
            raise KeyboardInterrupt
        if k == 0:
            interrupt.wait(5)
            raise ValueError("task 0")
        return k

    with pytest.raises(KeyboardInterrupt):
        workers.run(4, interrupted)
    assert workers.run(3, lambda _, k: k) == [0, 1, 2] and not workers.stop.is_set()


def test_one_worker_runs_in_the_calling_thread():
    from boostwood.boosting._side_by_side import SideBySide
    main = threading.get_ident()
    assert SideBySide([None], 2).run(3, lambda _, k: (k, threading.get_ident())) == \
        [(0, main), (1, main), (2, main)]


_FOUR_THREADS = r"""
import numpy as np, numba, boostwood as bw
from boostwood.boosting._side_by_side import ClassTreeWorkers, SideBySide
assert numba.config.NUMBA_NUM_THREADS == 4
shares = []
run = SideBySide.run
def spy(self, n, task):
    shares.append((type(self).__name__, list(self.threads)))
    return run(self, n, task)
SideBySide.run = spy
r = np.random.default_rng(5)
X = r.normal(size=(3000, 6))
y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + r.normal(size=3000), [-1, 0, 1]).astype(float)
params = {"objective": "multi:softprob", "num_class": 4, "nthread": 4, "eta": 0.3,
          "grow_policy": "lossguide", "max_leaves": 12}
together = bw.cv(params, bw.Dataset(X, y), 5, nfold=3, return_folds=True)
ClassTreeWorkers.enabled = SideBySide.enabled = False
in_turn = bw.cv(params, bw.Dataset(X, y), 5, nfold=3, return_folds=True)
assert together[1] == in_turn[1]
print(sorted(set((name, tuple(t)) for name, t in shares)))
"""


def test_folds_of_uneven_shares_nest_class_trees_on_four_threads():
    """numba with four threads (a child process; the tests' numba has two): three folds
    on workers of 2, 1 and 1 threads, and the fold of 2 threads grows its class trees
    on two workers of 1 thread inside its fold worker. Every fold's log is the same as
    all in turn."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    r = subprocess.run([sys.executable, "-c", _FOUR_THREADS], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == \
        "[('ClassTreeWorkers', (1, 1)), ('SideBySide', (2, 1, 1))]"
