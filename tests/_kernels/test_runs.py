import numpy as np
import pytest

from boostwood._kernels.runs import equal_work_runs


@pytest.mark.parametrize("n_workers", [1, 2, 3, 8, 16])
def test_runs_are_consecutive_and_within_one_task_of_an_equal_share(n_workers):
    """Every task in exactly one run, in order; each run's work within the largest task
    of an equal share (equal numbers of tasks are not: a level of full blocks beside
    nodes of a few rows)."""
    rng = np.random.default_rng(3)
    work = np.concatenate([[16384] * 5, rng.integers(1, 300, size=60), [9000, 16384],
                           rng.integers(0, 50, size=40)]).astype(np.int64)
    runs = equal_work_runs(work, n_workers)
    assert runs.shape == (n_workers + 1,) and runs[0] == 0 and runs[-1] == work.size
    assert np.all(np.diff(runs) >= 0)
    shares = [int(work[runs[w]:runs[w + 1]].sum()) for w in range(n_workers)]
    equal = work.sum() / n_workers
    assert max(abs(s - equal) for s in shares) <= work.max()
    if n_workers == 2:  # equal task counts: 5 full blocks and 28 small tasks on one side
        half = work.size // 2
        assert abs(int(work[:half].sum()) - equal) > work.max()


def test_runs_with_no_work_or_one_large_task():
    assert equal_work_runs(np.zeros(5, np.int64), 3).tolist() == [0, 0, 0, 5]
    assert equal_work_runs(np.zeros(0, np.int64), 2).tolist() == [0, 0, 0]
    runs = equal_work_runs(np.array([100, 1, 1, 1], np.int64), 4)
    assert runs[0] == 0 and runs[-1] == 4 and np.all(np.diff(runs) >= 0)
    assert runs.tolist() == [0, 1, 1, 1, 4]  # the big task alone; the rest together
