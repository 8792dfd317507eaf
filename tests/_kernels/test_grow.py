"""The compiled expansion loop loads from numba's cache in a fresh process. (The loop
itself is tested against the naive twin grower in ``tests/test_expand.py``; the kernels
it sequences against their naive twins in this folder.)"""


def test_a_fresh_process_loads_the_cached_loop():
    """A cached serial function calling parallel kernels may crash when loaded from
    numba's cache (numba #8578; the compiled loop is one, see _kernels/expand.py): train
    here (compiles or loads the cache), then again in a new process, which must load it
    and give the same model."""
    import subprocess
    import sys

    code = ("import numpy as np, boostwood as bw\n"
            "r = np.random.default_rng(0); X = r.normal(size=(3000, 5)); y = X[:, 0] + r.normal(size=3000)\n"
            "b = bw.train({'grow_policy': 'lossguide', 'max_leaves': 15, 'max_depth': 0}, bw.Dataset(X, y), 3,"
            " verbose_eval=False)\n"
            "print(repr(float(b.predict(X).sum())))\n")
    exec_ns = {}
    exec(code.replace("print(", "out = ("), exec_ns)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert float(r.stdout.strip()) == float(exec_ns["out"])
