"""setup.py's build hook: the kernels compiled while pip builds the package serve the
first fit after installing it, and a hook that cannot compile never breaks the build."""
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / "setup.py").is_file(),
                                reason="not a source checkout (no setup.py)")

#: What a clean copy of the checkout leaves out (as benchmarks/bench_cold_start.py).
NOT_SOURCE = (".git", "build", "__pycache__", "*.egg-info", "*.nbi", "*.nbc", ".whl", ".gl",
              ".pytest_cache", ".hypothesis", ".benchmarks", "tests", "benchmarks", "examples",
              "docs")

#: A fresh process: counts numba compilations during import + first fit + predict and
#: prints them with the predictions' checksum.
FIRST_FIT = """
from numba.core import event
n = [0]
class Count(event.Listener):
    def on_start(self, ev): n[0] += 1
    def on_end(self, ev): pass
event.register("numba:compile", Count())
import numpy as np
import boostwood as bw
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 6)); y = (X[:, 0] + rng.normal(size=2000) > 0) * 1.0
b = bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 10, verbose_eval=False)
total = float(b.predict(X).sum())
try:  # the scikit-learn estimators pass sample weights: their own kernels' types
    from boostwood.sklearn import GBDTClassifier, GBDTRegressor
    GBDTClassifier(n_estimators=5).fit(X, y).predict_proba(X)
    GBDTRegressor(n_estimators=5).fit(X, X[:, 0]).predict(X)
except ImportError:
    pass
try:  # a pandas frame's values are column-major and read-only, its labels read-only
    import pandas as pd
    df, s = pd.DataFrame(X, columns=list("abcdef")), pd.Series(y)
    bw.train({"objective": "binary:logistic"}, bw.Dataset(df, s), 10).predict(df)
    GBDTClassifier(n_estimators=5).fit(df, s).predict_proba(df)
except ImportError:
    pass
print(bw.__file__, n[0], repr(total))
"""


def _hook():
    spec = importlib.util.spec_from_file_location("boostwood_setup_hook", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # defines the hook; setup() runs only as __main__
    return module


def _fake_package(root, body):
    (root / "boostwood").mkdir()
    (root / "boostwood" / "__init__.py").write_text("")
    (root / "boostwood" / "__main__.py").write_text(body)


def test_the_hook_runs_boostwood_compile_on_the_built_package(tmp_path, monkeypatch, capsys):
    """The hook runs ``python -m boostwood compile`` with the built tree first on the
    path and without the variables that would move the cache out of the package or
    turn compiling off."""
    _fake_package(tmp_path, "import os, sys\nopen(os.path.join(os.environ['OUT']), 'w')"
                            ".write(repr((sys.argv[1:], os.environ.get('NUMBA_CACHE_DIR'), "
                            "os.environ.get('NUMBA_DISABLE_JIT'), __file__)))\n")
    monkeypatch.setenv("OUT", str(tmp_path / "seen.txt"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    monkeypatch.delenv("BOOSTWOOD_COMPILE_ON_INSTALL", raising=False)
    assert _hook().compile_kernels(str(tmp_path)) is True
    args, cache_dir, no_jit, main = eval((tmp_path / "seen.txt").read_text())
    assert (args, cache_dir, no_jit) == (["compile"], None, None)
    assert Path(main) == tmp_path / "boostwood" / "__main__.py"
    assert "compiling the kernels" in capsys.readouterr().out


def test_a_failing_compile_only_warns(tmp_path, monkeypatch, capsys):
    _fake_package(tmp_path, "raise SystemExit(3)\n")
    monkeypatch.delenv("BOOSTWOOD_COMPILE_ON_INSTALL", raising=False)
    hook = _hook()
    assert hook.compile_kernels(str(tmp_path)) is False
    err = capsys.readouterr().err
    assert "WARNING: compiling the kernels failed (exit status 3)" in err
    monkeypatch.setattr(hook.sys, "executable", str(tmp_path / "no-such-python"))
    assert hook.compile_kernels(str(tmp_path)) is False
    err = capsys.readouterr().err
    assert "WARNING: compiling the kernels failed" in err and "first fit" in err


@pytest.mark.parametrize("value", ["0", "off", "False"])
def test_the_hook_can_be_turned_off(tmp_path, monkeypatch, capsys, value):
    monkeypatch.setenv("BOOSTWOOD_COMPILE_ON_INSTALL", value)
    hook = _hook()
    monkeypatch.setattr(hook.subprocess, "run", lambda *a, **k: pytest.fail("compiled"))
    assert hook.compile_kernels(str(tmp_path)) is False
    assert "compile on the first fit" in capsys.readouterr().out


def test_stale_caches_are_deleted_before_compiling(tmp_path, monkeypatch):
    """numba misses changes in a kernel's callees in other files: a reused build folder's
    cache files must not be shipped, so every one under the package goes first."""
    _fake_package(tmp_path, "import os, sys\nsys.exit(0 if not any(n.endswith(('.nbi', "
                            "'.nbc')) for _, _, f in os.walk(os.path.dirname(__file__)) "
                            "for n in f) else 4)\n")
    cache = tmp_path / "boostwood" / "__pycache__"
    cache.mkdir()
    for name in ("k.f-1.py311.nbi", "k.f-1.py311.1.nbc", "keep.pyc"):
        (cache / name).write_text("old")
    monkeypatch.delenv("BOOSTWOOD_COMPILE_ON_INSTALL", raising=False)
    assert _hook().compile_kernels(str(tmp_path)) is True  # the fake exits 4 if any is left
    assert sorted(p.name for p in cache.iterdir()) == ["keep.pyc"]
    (cache / "k.f-1.py311.nbi").write_text("old")  # not compiling: still none shipped
    monkeypatch.setenv("BOOSTWOOD_COMPILE_ON_INSTALL", "0")
    assert _hook().compile_kernels(str(tmp_path)) is False
    assert sorted(p.name for p in cache.iterdir()) == ["keep.pyc"]


def test_build_py_compiles_the_built_tree_or_src(tmp_path, monkeypatch):
    from setuptools.dist import Distribution
    hook = _hook()
    seen = []
    monkeypatch.setattr(hook.build_py, "run", lambda self: None)
    monkeypatch.setattr(hook, "compile_kernels", lambda root, editable: seen.append(
        (root, editable)))
    cmd = hook.BuildPyCompilingKernels(Distribution())
    cmd.build_lib = os.path.relpath(tmp_path)
    cmd.run()
    cmd.editable_mode = True
    cmd.run()
    assert seen == [(str(tmp_path), False), (str(ROOT / "src"), True)]


def test_numba_before_068_is_not_compiled_for_an_install(tmp_path, monkeypatch, capsys):
    """Before 0.68 numba keyed its cache by file times, which an install does not keep."""
    monkeypatch.delenv("BOOSTWOOD_COMPILE_ON_INSTALL", raising=False)
    hook = _hook()
    monkeypatch.setattr(hook, "_numba_version", lambda: (0, 67))
    monkeypatch.setattr(hook.subprocess, "run", lambda *a, **k: pytest.fail("compiled"))
    assert hook.compile_kernels(str(tmp_path)) is False
    assert "file times" in capsys.readouterr().out


@pytest.mark.parametrize("value, extra", [(None, True), ("1", True), ("0", False),
                                          ("off", False)])
def test_the_build_needs_numba_only_to_compile(monkeypatch, value, extra):
    sys.path.insert(0, str(ROOT / "_build"))
    try:
        import backend
    finally:
        sys.path.remove(str(ROOT / "_build"))
    if value is None:
        monkeypatch.delenv("BOOSTWOOD_COMPILE_ON_INSTALL", raising=False)
    else:
        monkeypatch.setenv("BOOSTWOOD_COMPILE_ON_INSTALL", value)
    for name in ("get_requires_for_build_wheel", "get_requires_for_build_editable"):
        # setuptools' own answer (it would run setup.py here) stands in as "wheel"
        monkeypatch.setattr(backend._setuptools, name, lambda config_settings=None: ["wheel"])
        assert getattr(backend, name)() == ["wheel"] + (backend.COMPILE_REQUIRES if extra
                                                        else [])


@pytest.mark.slow
def test_a_fresh_install_fits_without_compiling(tmp_path):
    """``pip wheel`` runs the hook: the wheel carries numba's cache, and the first fits
    of a fresh process on the installed package (native and scikit-learn API, numpy
    arrays and pandas frames) compile nothing (before the hook: about 150 kernels for a minute) and predict what this
    process does."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.pop("BOOSTWOOD_COMPILE_ON_INSTALL", None)
    source = tmp_path / "source"  # without the checkout's build/ and __pycache__ caches
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    # the isolated build compiles with this environment's numba and numpy (a cache made
    # by another numba is not loaded)
    import numba
    (tmp_path / "pins.txt").write_text(f"numba=={numba.__version__}\n"
                                       f"numpy=={np.__version__}\n")
    env["PIP_CONSTRAINT"] = str(tmp_path / "pins.txt")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path / "wheel"), str(source)], check=True, env=env)
    (wheel,) = (tmp_path / "wheel").glob("boostwood-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("boostwood/_kernels/__pycache__/") and n.endswith(".nbi")
               for n in names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(site), str(wheel)], check=True, env=env)
    out = subprocess.run([sys.executable, "-c", FIRST_FIT], check=True, capture_output=True,
                         text=True, cwd=tmp_path, env={**env, "PYTHONPATH": str(site)})
    where, compilations, total = out.stdout.split()
    assert Path(where).is_relative_to(site) and int(compilations) == 0
    assert not any(n.endswith(".pyc") for n in names)
    import boostwood as bw
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 6))
    y = (X[:, 0] + rng.normal(size=2000) > 0) * 1.0
    b = bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 10, verbose_eval=False)
    assert float(total) == float(b.predict(X).sum())


def test_pandas_values_reach_the_kernel_versions_numpy_arrays_do(monkeypatch):
    """numba compiles a kernel once per array layout and write flag. A pandas frame's
    values (column-major, read-only under copy-on-write; a one-row frame's are read-only
    row-major, a row slice's strided) and labels (read-only) reach binning and prediction
    as the versions the install's workloads compile (numpy arrays, and
    ``warmup._column_major`` and ``warmup._predictions``), so a first fit from a DataFrame
    compiles nothing (the slow test above checks that on a built wheel)."""
    pd = pytest.importorskip("pandas")
    import numba
    import boostwood as bw
    from boostwood import warmup
    from boostwood.boosting import booster as booster_module
    from boostwood.data import binning as binning_module
    seen = {"predict": [], "bin": []}
    for module, name, key in ((booster_module, "predict_binned", "predict"),
                              (binning_module, "bin_dense_padded", "bin"),
                              (binning_module, "bin_dense", "bin")):
        kernel = getattr(module, name)
        monkeypatch.setattr(module, name, lambda X, *a, kernel=kernel, key=key: (
            seen[key].append(numba.typeof(X)), kernel(X, *a))[1])
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    y = (X[:, 0] > 0) * 1.0
    b = bw.train({"objective": "binary:logistic"}, bw.Dataset(X, y), 2)
    warmup._predictions(b, X)
    warmup._column_major(X, y)
    compiled = {k: set(v) for k, v in seen.items()}
    df, s = pd.DataFrame(X, columns=list("abcd")), pd.Series(y)
    for rows in (slice(None), slice(100, 400), [3]):
        d = bw.Dataset(df.iloc[rows], s.iloc[rows])
        assert d.get_label().flags.writeable
        bf = bw.train({"objective": "binary:logistic"}, d, 2)
        for frame in (df, df.iloc[100:400], df.iloc[[3]], df.head(1)):
            np.testing.assert_array_equal(bf.predict(frame), bf.predict(
                frame.to_numpy().copy(), validate_features=False))
    for key, types in seen.items():
        assert set(types) <= compiled[key], (key, set(types) - compiled[key])
