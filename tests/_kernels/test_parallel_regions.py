"""A parallel kernel opens a parallel region only where its source says ``prange``.

In a ``parallel=True`` function numba also turns array expressions (``a + b``,
``a.sum()``, ``np.zeros``, ``acc += part``) outside any ``prange`` into parallel loops of
their own: each is one more fork and join of the thread pool per call (about 2 us of a
2,000-row partition on 2 threads). These tests compile each kernel afresh (the numba
cache keeps no diagnostics) and count its parallel loops (numba's list, nested ones
included) against the ``prange`` calls of its source.
"""
import inspect

import numba
import numpy as np
import pytest
from numba import njit

from boostwood._kernels.criterion import compact_rows
from boostwood._kernels.exact_sum import N_CELLS, accumulate
from boostwood._kernels.fixed import max_abs_gh
from boostwood._kernels.histogram import build_histograms
from boostwood._kernels.nodes import node_records
from boostwood._kernels.partition import partition_nodes
from boostwood._kernels.splits import NO_CATEGORIES
from boostwood.tree.histogram import HistogramBuilder


def _regions(kernel):
    """(top-level parallel loops of a fresh compile, ``prange`` loops in the source)."""
    sig = kernel.signatures[0]
    fresh = njit(parallel=kernel.targetoptions["parallel"], nogil=True)(kernel.py_func)
    fresh.compile(sig)
    found = fresh.get_metadata(sig)["parfor_diagnostics"].get_parfors()
    return len(found), inspect.getsource(kernel.py_func).count("prange(")


def _call_partition():
    r = np.random.default_rng(0)
    n = 6000
    Xc = r.integers(0, 6, size=(2, n)).astype(np.uint8)
    buf = np.stack([r.permutation(n).astype(np.int32), np.zeros(n, np.int32)])
    partition_nodes(Xc, buf, np.empty(n, np.int32),
                    *node_records([0, 3000], [3000, 3000], [0, 0], [0, 1], [2, 3], [0, 1]),
                    NO_CATEGORIES, np.full(2, 5, np.int32), 1024, 2, np.empty(2, np.int64))


def _call_histograms():
    r = np.random.default_rng(1)
    X = r.integers(0, 8, size=(5000, 3)).astype(np.uint8)
    gh = r.integers(-9, 9, size=(5000, 2)).astype(np.int32)
    HistogramBuilder(X, 8).build(gh, np.arange(5000, dtype=np.int32)[None, :],
                                 np.zeros(1, np.int64), np.array([0]), np.array([5000]),
                                 np.array([0]), np.arange(3, dtype=np.int64))


def _call_max_abs():
    max_abs_gh(np.ones((10, 2), np.float32), np.empty(2))


def _call_accumulate():
    accumulate(np.ones((10, 2)), np.zeros((2, 2, N_CELLS), np.int64), np.zeros(3))


def _call_compact():
    rows = np.arange(6, dtype=np.int32)
    compact_rows(rows, np.array([0, 3, 6]), np.array([0, -1, 0, 1, -1, 0]),
                 np.empty(6, np.int32), np.empty(3, np.int64))


@pytest.mark.parametrize("kernel, call", [
    (partition_nodes, _call_partition), (build_histograms, _call_histograms),
    (max_abs_gh, _call_max_abs), (accumulate, _call_accumulate),
    (compact_rows, _call_compact)], ids=lambda v: getattr(v, "__name__", ""))
def test_parallel_regions_only_at_prange(kernel, call):
    if numba.config.DISABLE_JIT:
        pytest.skip("numba's JIT is disabled: no parallel loops to count")
    call()  # compiles (or loads) the kernel for the types the engine passes
    regions, pranges = _regions(kernel)
    assert regions == pranges
