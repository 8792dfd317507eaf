"""A fingerprint of an array's bytes: detects that a caller changed data boostwood
holds by reference (not a cryptographic hash; it guards against accidents).

The fingerprint of 32-bit words ``w[0..n)`` is ``sum_i mix(w[i] + 2**32 * i) mod 2**64``
with ``mix`` the SplitMix64 finaliser. A sum modulo 2**64 does not depend on the
order of its terms, so the parallel result is the same on any number of threads,
and the position ``i`` inside each term makes moved values count as changes.
"""
import numpy as np
from numba import njit, prange

from .._config import lock_cache_writes

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(parallel=True, cache=True, nogil=True)
def fingerprint_words(words):
    """Fingerprint of a 1-D array of uint32 words (see the module docstring).

    words : ndarray of shape (n,), uint32   # IN
    Returns a uint64.
    """
    h = np.uint64(0)
    for i in prange(words.shape[0]):
        h += _mix(np.uint64(words[i]) | (np.uint64(i) << np.uint64(32)))
    return h


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
