"""Start-up: the first fit does not import scipy.linalg (boostwood._config's import hook
for numba's BLAS check), numba's check still refuses a scipy built for another integer
width, and numba code that does use BLAS behaves as without the hook.

Each test runs a fresh process: the hook acts once, on numba's first load of its
array-math registry, so only a new interpreter shows what it does.
"""
import subprocess
import sys
import textwrap

import pytest

FIT = """
import sys
import numpy as np
import boostwood as bw
rng = np.random.default_rng(0)
X = rng.normal(size=(500, 4)); y = (X[:, 0] > 0) * 1.0
bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 3, verbose_eval=False).predict(X)
import numba.np.arraymath as arraymath, numba.np.linalg as linalg
"""


def _run(code):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_first_fit_does_not_import_scipy_linalg():
    pytest.importorskip("scipy")
    out = _run(FIT + """
hooks = [f for f in sys.meta_path if type(f).__name__ == "_LightBlasCheck"]
print("scipy.linalg" in sys.modules, arraymath._HAVE_BLAS, [h.done for h in hooks],
      linalg.ensure_blas.__qualname__, hasattr(arraymath, "_check_blas"))
""")
    if out[-1] == "False":
        pytest.skip("this numba's arraymath does not check BLAS itself (0.61 redirects it)")
    out = out[:-1]
    # scipy's BLAS found: numba still counts BLAS as there; the hook has acted once and
    # numba.np.linalg has its own function back
    assert out == ["False", "True", "[True]", "ensure_blas"]


def test_numba_code_that_calls_blas_gets_numba_s_full_check():
    pytest.importorskip("scipy")
    out = _run(FIT + """
import numba
@numba.njit
def products(a, b):
    return np.dot(a, b), np.cov(a)
a = np.arange(6.0).reshape(2, 3) ** 1.5
got = products(a, a.T)
ok = np.allclose(got[0], a @ a.T) and np.allclose(got[1], np.cov(a))
print(ok, "scipy.linalg.cython_blas" in sys.modules)
""")
    assert out == ["True", "True"]


def test_a_first_call_from_elsewhere_runs_the_full_check():
    pytest.importorskip("scipy")
    # numba's own call order loads numba.np.linalg before the array-math registry; a
    # caller of ensure_blas other than that registry's check gets numba's check in full
    out = _run("""
import sys
import boostwood._config
import numba.np.linalg as linalg
hook = next(f for f in sys.meta_path if type(f).__name__ == "_LightBlasCheck")
hook.find_spec("numba.np.arraymath")
linalg.ensure_blas()
print("scipy.linalg.cython_blas" in sys.modules, linalg.ensure_blas.__qualname__)
""")
    assert out == ["True", "ensure_blas"]


def test_without_scipy_numba_counts_no_blas_as_before():
    out = _run("""
import sys
sys.modules["scipy"] = None  # as if scipy were not installed
""" + FIT + """
print(arraymath._HAVE_BLAS)
""")
    assert out == ["False"]


def test_a_scipy_of_the_other_integer_width_is_still_refused():
    pytest.importorskip("scipy")
    # numba 0.68.1 refuses, on the first call of any compiled function, a scipy whose
    # BLAS takes other integers than numba was built for: the hook's short check keeps
    # that refusal (here numba is told it was built for the width scipy does not use)
    out = _run("""
import numba.np.linalg as linalg
if not hasattr(linalg, "_check_lapack_int_width"):
    print("no-check")
    raise SystemExit
linalg._LAPACK_BUILD_ILP64 = not linalg._lapack_runtime_is_ilp64()
import numpy as np
import boostwood as bw
X = np.random.default_rng(0).normal(size=(100, 3)); y = (X[:, 0] > 0) * 1.0
try:
    bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 2, verbose_eval=False)
except RuntimeError as e:
    print("refused" if "BLAS/LAPACK" in str(e) else e)
""")
    if out == ["no-check"]:
        pytest.skip("this numba has no integer-width check")
    assert out == ["refused"]


@pytest.mark.parametrize("how", ["no BLAS file", "stand-in scipy"])
def test_where_the_hook_cannot_tell_numba_checks_in_full(how):
    pytest.importorskip("scipy")
    # no compiled cython_blas file found (no extension suffix matches), or a scipy
    # module without a spec: numba's own check decides, as without the hook
    before = {"no BLAS file": "import importlib.machinery\n"
                              "importlib.machinery.EXTENSION_SUFFIXES[:] = []\n",
              "stand-in scipy": "import numba, types\n"
                                "sys.modules['scipy'] = types.ModuleType('scipy')\n"}[how]
    out = _run("import sys\n" + before + FIT + """
print("scipy.linalg" in sys.modules, arraymath._HAVE_BLAS)
""")
    assert out == (["True", "True"] if how == "no BLAS file" else ["False", "False"])
