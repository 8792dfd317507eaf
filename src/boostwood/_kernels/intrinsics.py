"""Low-level helpers for kernels: a software prefetch, a paired add, a bit scan, a
bitcast, two int64-to-float64 conversions that vectorize (any int64, and a shorter one
for magnitudes below 2**51), a cycle counter.

Rows of a deep node are scattered over the training matrix, so the histogram
and partition loops stall on memory unless the rows a few iterations ahead are
requested early. ``prefetch(arr, i)`` emits LLVM's ``llvm.prefetch`` for the
address of ``arr[i]`` (read, high locality). It changes timing only, never a
result.

Caveat: numba's on-disk cache of a kernel is invalidated when the kernel's own
source file changes, not when this module changes. After editing this file,
clear the caches (delete the ``__pycache__`` folders of ``_kernels``).
"""
import numpy as np
from llvmlite import binding as _llvm
from numba import njit, types
from numba.core import cgutils, config
from numba.extending import intrinsic, overload

from .._config import lock_cache_writes

_ir = cgutils.ir
# opaque pointers (LLVM >= 15) name the intrinsic by address space only
_NAME = "llvm.prefetch.p0" if _llvm.llvm_version_info[0] >= 15 else "llvm.prefetch.p0i8"

#: How many rows ahead the histogram and partition loops prefetch.
PREFETCH_DISTANCE = 32


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the CPU to load the cache line of ``arr[idx]`` (1-D index)."""
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        i8p = builder.bitcast(ptr, _ir.IntType(8).as_pointer())
        i32 = _ir.IntType(32)
        fnty = _ir.FunctionType(_ir.VoidType(), [i8p.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _NAME)
        # (address, rw = read, locality = 3 (keep in all caches), cache type = data)
        builder.call(fn, [i8p, _ir.Constant(i32, 0), _ir.Constant(i32, 3), _ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def add_pair(typingctx, arr, idx, a, b):
    """``arr[idx] += a; arr[idx + 1] += b`` as one 2-wide vector load, add and store.

    ``arr`` is a 1-D contiguous float64 or int64 array, ``a`` and ``b`` of its
    type. The histogram loop adds a row's gradient and hessian to two adjacent
    cells; LLVM does not fuse the two scalar read-modify-writes by itself, and one
    vector pair is ~15-20% faster per update. Each lane is an ordinary addition
    (IEEE or two's complement), so results are unchanged.
    """
    integer = isinstance(arr.dtype, types.Integer)
    if integer and arr.dtype.bitwidth != 64 or not integer and arr.dtype != types.float64:
        return None
    sig = types.void(arr, idx, a, b)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        lane = _ir.IntType(64) if integer else _ir.DoubleType()
        vec = _ir.VectorType(lane, 2)
        vptr = builder.bitcast(ptr, vec.as_pointer())
        old = builder.load(vptr, align=8)
        new = _ir.Constant(vec, None)
        i32 = _ir.IntType(32)
        a_val = context.cast(builder, args[2], signature.args[2], aryty.dtype)
        b_val = context.cast(builder, args[3], signature.args[3], aryty.dtype)
        new = builder.insert_element(new, a_val, _ir.Constant(i32, 0))
        new = builder.insert_element(new, b_val, _ir.Constant(i32, 1))
        total = builder.add(old, new) if integer else builder.fadd(old, new)
        builder.store(total, vptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Number of trailing zero bits of the uint64 ``x`` (``x`` must not be 0): LLVM's
    ``cttz``, one instruction, so walking the set bits of a bitmask costs one step per
    set bit."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        i64, i1 = _ir.IntType(64), _ir.IntType(1)
        fn = cgutils.get_or_insert_function(builder.module, _ir.FunctionType(i64, [i64, i1]),
                                            "llvm.cttz.i64")
        return builder.call(fn, [args[0], _ir.Constant(i1, 1)])  # (0 input undefined)

    return sig, codegen


@intrinsic
def float_of_bits(typingctx, x):
    """The float64 whose IEEE-754 bits are the int64 ``x`` (a bitcast, no conversion):
    the inverse of reading a float64 array through an int64 view. Positive doubles order
    as their bits do, so a maximum taken over the bits (integer code, which the compiler
    turns into vector instructions) is the maximum of the values."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _ir.DoubleType())

    return sig, codegen


@intrinsic
def bits_of_float(typingctx, x):
    """The int64 IEEE-754 bits of the float64 ``x`` (a bitcast): the inverse of
    :func:`float_of_bits`."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], _ir.IntType(64))

    return sig, codegen


@intrinsic
def cycle_count(typingctx):
    """The CPU's time-stamp counter (``llvm.readcyclecounter``) as an int64: a clock
    for profiling compiled loops, read in a few cycles (no call out of compiled code).
    Its rate is the machine's; :mod:`boostwood._kernels.expand`'s profile converts by
    timing it against the wall clock. Never part of a result."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i64 = _ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, _ir.FunctionType(i64, []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


def _native_int64_to_float():
    """Does the compile target turn a vector of int64 into float64 in one instruction?
    64-bit ARM does (``scvtf``), x86-64 only with AVX-512DQ (``vcvtqq2pd``). The target
    is the host, or numba's ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` where set (a
    cache compiled for other machines). numba keys its cache by the same CPU name and
    features, so a cached kernel never meets a host this answer was not made for."""
    if _llvm.get_process_triple().split("-")[0] in ("aarch64", "arm64"):
        return True
    features = (config.CPU_FEATURES or "") if config.CPU_NAME else \
        _llvm.get_host_cpu_features().flatten()
    return "+avx512dq" in features.split(",")


#: Whether :func:`as_float` of an int64 is the plain conversion (else two exact halves).
NATIVE_INT64_TO_FLOAT = _native_int64_to_float()

_TWO_52 = 4503599627370496.0  # 2**52, bits 0x4330000000000000
_THREE_2_51 = 6755399441055744.0  # 1.5 * 2**52, bits 0x4338000000000000


def as_float(x):
    """``float(x)``: in compiled code, the same value by a route that vectorizes (an
    integer ``x`` through :func:`float_of_halves` where the target has no vector
    conversion, :data:`NATIVE_INT64_TO_FLOAT`)."""
    return float(x)


@overload(as_float, inline="always")
def _as_float(x):
    if isinstance(x, types.Integer) and not NATIVE_INT64_TO_FLOAT:
        return lambda x: float_of_halves(np.int64(x))
    return lambda x: np.float64(x)


#: Integers of magnitude below this bound convert exactly in :func:`as_float_small`.
SMALL_INT_BOUND = 1 << 51


def as_float_small(x):
    """``float(x)`` of an integer with ``|x| < SMALL_INT_BOUND`` (2**51), exact: the
    caller guarantees the bound (a float passes through). In compiled code, one
    integer add, a bitcast and a float subtract, vector code on AVX2 too, where
    :func:`float_of_halves` takes about three times the operations; the plain
    conversion where the target has a vector one (:data:`NATIVE_INT64_TO_FLOAT`)."""
    return float(x)


@overload(as_float_small, inline="always")
def _as_float_small(x):
    if isinstance(x, types.Integer) and not NATIVE_INT64_TO_FLOAT:
        # x + bits(1.5 * 2**52) is the double 1.5 * 2**52 + x while -2**51 <= x < 2**51
        # (the sum stays in [2**52, 2**53), whose doubles are the integers)
        return lambda x: float_of_bits(np.int64(x) + 0x4338000000000000) - _THREE_2_51
    return lambda x: np.float64(x)


@njit(cache=True, nogil=True, inline="always")
def float_of_halves(x):
    """The float64 nearest the int64 ``x`` (ties to even), as ``float(x)`` gives it, from
    integer adds, bitcasts and float adds only, so that a loop over many ``x`` becomes
    vector code on AVX2 (which converts int64 to float64 one value at a time: four of
    those a boundary were half of the split scan's time on a Zen 3).

    ``x = hi * 2**32 + lo`` with ``hi = x >> 32`` (signed, ``|hi| < 2**31``) and ``lo``
    the low 32 bits (unsigned). Each half is exact as a double: placed in the mantissa
    of 1.5 * 2**52 (resp. 2**52) by an integer add (resp. or) and the constant
    subtracted back. ``hi * 2**32`` is exact too, so the last addition is the only
    rounding: the correctly rounded value of ``x``, which is what the hardware
    conversion returns in the default rounding mode."""
    hi = x >> 32
    lo = x & 0xFFFFFFFF
    d_hi = float_of_bits(hi + 0x4338000000000000) - _THREE_2_51
    d_lo = float_of_bits(lo | 0x4330000000000000) - _TWO_52
    return d_hi * 4294967296.0 + d_lo


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
