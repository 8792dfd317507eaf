"""Layer 1: every numba-compiled function of boostwood.

Rules (DESIGN.md section 2): kernels import only numpy, numba and ``_config``;
only arrays and scalars cross the JIT boundary; kernels never allocate their
result (outputs are ``out`` arguments, marked ``# OUT``); every optimised kernel
has a naive twin in :mod:`boostwood._kernels.reference` and a test that they
agree. All kernels compile lazily with ``cache=True`` so a second process loads
them from numba's on-disk cache instead of recompiling.
"""
