"""The kernels' low-level helpers: the vectorizable int64-to-float64 conversion."""
import numpy as np
import pytest
from numba import njit

from boostwood._kernels import intrinsics
from boostwood._kernels.intrinsics import (SMALL_INT_BOUND, as_float, as_float_small,
                                           float_of_halves)


@njit
def _halves(a, out):
    for i in range(a.shape[0]):
        out[i] = float_of_halves(a[i])


@njit
def _as_float(a, out):
    for i in range(a.shape[0]):
        out[i] = as_float(a[i])


@njit
def _as_float_small(a, out):
    for i in range(a.shape[0]):
        out[i] = as_float_small(a[i])


def _int64_cases():
    r = np.random.default_rng(7)
    edges = np.array([0, 1, -1, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1, 2 ** 32, -2 ** 32,
                      2 ** 53, 2 ** 53 + 1, 2 ** 53 + 3, -(2 ** 53 + 1), 2 ** 54 + 2,
                      2 ** 54 + 6, 2 ** 62 + 2 ** 9, 2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1],
                     dtype=np.int64)
    # every magnitude, and values with many low bits set (where rounding happens)
    spread = (r.integers(-2 ** 62, 2 ** 62, 4000) >> r.integers(0, 63, 4000))
    full = r.integers(-2 ** 63, 2 ** 63 - 1, 4000, dtype=np.int64)
    return np.concatenate([edges, spread, full, full | 0x7FF, (full >> 8) | 0x5])


def test_float_of_halves_is_the_rounded_conversion_to_the_bit():
    """Ties to even, the extremes, every magnitude: the bits the hardware conversion
    (numpy's astype) gives."""
    a = _int64_cases()
    got = np.empty(a.shape[0])
    _halves(a, got)
    assert np.array_equal(got.view(np.int64), a.astype(np.float64).view(np.int64))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_as_float_gives_float_of_any_number(dtype):
    """Whichever route the host takes (:data:`NATIVE_INT64_TO_FLOAT`), and for the
    float cells of a float scan (the value itself)."""
    a = _int64_cases()
    a = a.astype(dtype) if dtype is not np.int32 else (a >> 33).astype(np.int32)
    got = np.empty(a.shape[0])
    _as_float(a, got)
    assert np.array_equal(got.view(np.int64), a.astype(np.float64).view(np.int64))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_as_float_small_is_exact_below_its_bound(dtype):
    """Every integer of magnitude below 2**51 (both extremes, every magnitude, many low
    bits set) converts to its own value; a float passes through. Just past the bound the
    short route is wrong, which is why callers check it (:func:`split._small_sums`)."""
    r = np.random.default_rng(11)
    bound = SMALL_INT_BOUND
    edges = np.array([0, 1, -1, bound - 1, -bound, -bound + 1, 2 ** 31, -2 ** 31 - 1,
                      2 ** 50 + 2 ** 49 + 7], dtype=np.int64)
    spread = r.integers(-bound, bound, 4000) >> r.integers(0, 52, 4000)
    a = np.concatenate([edges, spread, r.integers(-bound, bound, 4000) | 0xFFF])
    a = a.astype(dtype) if dtype is not np.int32 else (a >> 21).astype(np.int32)
    got = np.empty(a.shape[0])
    _as_float_small(a, got)
    assert np.array_equal(got.view(np.int64), a.astype(np.float64).view(np.int64))
    if dtype is np.int64 and not intrinsics.NATIVE_INT64_TO_FLOAT:  # else the plain one
        _as_float_small(np.array([bound + 1], np.int64), got[:1])
        assert got[0] != float(bound + 1)


def test_native_conversion_rule(monkeypatch):
    """x86-64 converts a vector of int64 only with AVX-512DQ, 64-bit ARM always; a target
    named by NUMBA_CPU_NAME is judged by NUMBA_CPU_FEATURES, not by the host."""
    monkeypatch.setattr(intrinsics._llvm, "get_process_triple", lambda: "x86_64-unknown-linux-gnu")
    monkeypatch.setattr(intrinsics.config, "CPU_NAME", "generic")
    monkeypatch.setattr(intrinsics.config, "CPU_FEATURES", "")
    assert not intrinsics._native_int64_to_float()
    monkeypatch.setattr(intrinsics.config, "CPU_FEATURES", "+avx2,+avx512f,+avx512dq")
    assert intrinsics._native_int64_to_float()
    monkeypatch.setattr(intrinsics.config, "CPU_FEATURES", "+avx2,-avx512dq")
    assert not intrinsics._native_int64_to_float()
    monkeypatch.setattr(intrinsics._llvm, "get_process_triple", lambda: "aarch64-unknown-linux-gnu")
    assert intrinsics._native_int64_to_float()
