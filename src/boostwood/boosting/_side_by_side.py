"""Independent trees grown side by side, one task per worker thread: a round's class
trees, and the folds of :func:`boostwood.cv`.

Folds (``cv``): every fold trains its own model on its own rows, from its own Dataset,
so ``W = min(nfold, nthread)`` workers train ``W`` folds at once, each with its share
of the threads (the work-size rule below). Each fold's model and evaluation log are
those of its fit on any number of threads. At most ``W`` folds' data and training
state are held at once (XGBoost's and LightGBM's cv hold all ``nfold``). Folds run in
turn when the user passes code that is called during training (a custom objective,
metric or callbacks: it need not be thread-safe), on one thread, and on numba's
workqueue layer.

Class trees:

A round of a K-output objective (softmax, K classes) grows K trees from gradients
computed before any of them: the trees are independent. Grown one after the other,
each tree has every thread to itself, and on the small nodes of a leaf-wise tree
most of them wait (a node of a few thousand rows does not fill 16 threads, nor 2).
Grown side by side, W trees at a time with ``nthread / W`` threads each, the
threads work on the large nodes of W trees instead.

Results do not depend on any of it. Each tree is grown from its own gradients by
the same kernels, which give the same tree on any number of threads (integer
histograms, see :mod:`boostwood._kernels.histogram`); each worker has its own
grower (index buffers, histogram pool, fixed-point statistics) on the shared bins;
each tree writes only its own column: of the round's class columns, added to the
margins after the last tree as when the trees are grown in turn, or, with bagged
rows, of the margins themselves (one addition per element and round, as in turn).
Evaluation sets get their trees after the last one, in class order. Which worker
grows which tree, and when, changes nothing in the model.

Work-size rule (no timing): ``W = min(K, nthread)`` workers, the threads shared
out as evenly as they go (``nthread`` 16, K 10: six workers of 2 threads and four
of 1). A worker takes the next tree not yet taken, so a worker that finishes early
takes more.

Memory rule: each worker past the first holds a grower's buffers, the histograms of
a tree and its partial histograms (``HistMethod.worker_bytes``: 25 MB for 255 leaves
of 28 features on 256 bins, 160k rows and one thread). The extra workers together may
hold the larger of the class state the fit holds anyway (gradients, margins and class
columns: ``K * n_rows * 24`` bytes, 16 with bagged rows) and ``MIN_BUDGET_BYTES``; the
most workers within that are started (fewer workers have more threads each, so more
partial histograms). Wide data on many threads (a 3 MB histogram of 500 features, 64
threads) would otherwise hold dozens of pools at once; there the trees share out
fewer workers, or grow in turn.

Side by side needs a thread-safe threading layer for numba's parallel loops
(:func:`boostwood._comm.threadsafe_numba`): the OpenMP and TBB layers are, the
workqueue layer is not (it aborts when two threads start a parallel loop at once),
and with it the trees are grown in turn.
"""
import itertools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numba

#: Memory the extra workers may always hold together (see the memory rule).
MIN_BUDGET_BYTES = 64 << 20


def worker_count(n_trees, nthread, worker_bytes, budget_bytes):
    """Workers for a round (the module's work-size and memory rules): one per tree, at
    most one per thread, and the most whose extra workers fit in ``budget_bytes``
    (``worker_bytes(t)``: what a worker of ``t`` threads holds)."""
    budget = max(budget_bytes, MIN_BUDGET_BYTES)
    for w in range(min(n_trees, nthread), 1, -1):
        if (w - 1) * worker_bytes(-(-nthread // w)) <= budget:
            return w
    return 1


def threads_per_worker(n_workers, nthread):
    """The thread count of each worker (the module's work-size rule)."""
    w = max(1, min(n_workers, nthread))
    return [nthread // w + (1 if i < nthread % w else 0) for i in range(w)]


class SideBySide:
    """Worker threads that run independent tasks side by side.

    Parameters
    ----------
    contexts : one per worker, passed to its tasks (worker 0 is the calling thread)
    nthread : threads of the run, shared out among the workers (:func:`threads_per_worker`)
    """

    #: False runs every task in turn (to compare the two); the class trees have a
    #: switch of their own.
    enabled = True

    def __init__(self, contexts, nthread):
        self.contexts = list(contexts)
        self.threads = threads_per_worker(len(self.contexts), nthread)
        #: Set once a task has failed (or been interrupted): a long task may poll it
        #: and stop early, its result being discarded.
        self.stop = threading.Event()
        self._pool = None
        if len(self.threads) > 1:
            self._pool = ThreadPoolExecutor(len(self.threads) - 1, "boostwood-worker")
            weakref.finalize(self, self._pool.shutdown, False)  # its threads end with the fit

    def run(self, n_tasks, task):
        """``task(context, k)`` for k in 0..n_tasks-1, side by side; their results in
        order of k. The calling thread is worker 0; every worker runs with its share of
        the threads (``numba.set_num_threads``, per thread in numba), and numba's count
        is given back as the calling thread had it (as training in turn does).

        When tasks fail, no worker takes a new task, :attr:`stop` is set, and once every
        worker has stopped the error raised is the interrupt (KeyboardInterrupt,
        SystemExit) if there was one, else that of the first failed task in task order:
        what running them in turn would have raised."""
        results = [None] * n_tasks
        before = numba.get_num_threads()
        taken = itertools.count()  # next() is atomic under the GIL
        failed = []  # (interrupt first, task, error)
        self.stop.clear()

        def work(w):
            k = -1
            try:
                numba.set_num_threads(self.threads[w])
                for k in iter(lambda: next(taken), None):
                    if k >= n_tasks or self.stop.is_set():
                        return
                    results[k] = task(self.contexts[w], k)
            except BaseException as e:
                failed.append((0 if not isinstance(e, Exception) else 1, k, e))
                self.stop.set()

        futures = [self._pool.submit(work, w) for w in range(1, len(self.threads))]
        try:
            work(0)
        finally:
            try:
                for f in futures:
                    f.result()  # work() keeps its errors in ``failed``
            finally:
                numba.set_num_threads(before)
        if failed:
            error = min(failed, key=lambda f: f[:2])[2]
            failed.clear()  # an error's traceback holds work()'s frame, which holds ``failed``
            try:
                raise error
            finally:
                error = None  # nor may this frame hold it: no cycle keeps the growers alive
        return results


class ClassTreeWorkers(SideBySide):
    """Workers that grow a round's class trees side by side; a task is
    ``grow_one(method, k)``.

    Parameters
    ----------
    method : the run's tree method (worker 0's); the others are made by its
        ``worker()`` on the same bins
    n_workers : workers (see :func:`worker_count`)
    nthread : threads of the run
    """

    #: False grows every round's trees in turn (to compare the two).
    enabled = True

    def __init__(self, method, n_workers, nthread):
        n = len(threads_per_worker(n_workers, nthread))
        super().__init__([method] + [method.worker() for _ in range(n - 1)], nthread)
