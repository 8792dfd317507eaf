"""Cutting a list of tasks into runs of about equal work, one run per worker.

numba's ``prange`` hands each thread an equal number of iterations. When the tasks
differ in size (the histogram blocks of a depth-wise level: full blocks beside nodes of
a few rows) equal counts are unequal work, and every thread waits for the one with
most. The histogram build runs ``prange`` over workers instead, each taking a run of
consecutive tasks from :func:`equal_work_runs`. Which worker runs which task never
changes a result (integer sums).

The partition's blocks were tried the same way (2 threads, levels of 8-128 nodes of
800k rows): no difference within noise, as its blocks of at most 4,096 rows are nearly
all full; a whole depth-wise fit ran 0.99-1.08x as long. It keeps ``prange`` over blocks.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def equal_work_runs(work, n_workers):
    """The first task of each worker's run of consecutive tasks, and the number of tasks
    at the end (``n_workers + 1`` entries): worker w starts at the first task whose work
    before it reaches ``w / n_workers`` of the total, so a run is within one task of an
    equal share. A run may be empty (a task larger than a share); with no work at all,
    the last worker takes every task."""
    n_tasks = work.shape[0]
    before = np.empty(n_tasks + 1, dtype=np.int64)
    before[0] = 0
    for t in range(n_tasks):
        before[t + 1] = before[t] + work[t]
    total = before[n_tasks]
    run_first = np.empty(n_workers + 1, dtype=np.int64)
    t = 0
    for w in range(n_workers):
        while t < n_tasks and before[t] * n_workers < w * total:
            t += 1
        run_first[w] = t
    run_first[n_workers] = n_tasks
    return run_first
