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


@pytest.mark.slow
def test_a_fresh_install_fits_without_compiling(tmp_path):
    """``pip wheel`` runs the hook: the wheel carries numba's cache, and the first fits
    of a fresh process on the installed package (native and scikit-learn API) compile
    nothing (before the hook: about 150 kernels for a minute) and predict what this
    process does."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.pop("BOOSTWOOD_COMPILE_ON_INSTALL", None)
    source = tmp_path / "source"  # without the checkout's build/ and __pycache__ caches
    shutil.copytree(ROOT / "src", source / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
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
    here = {}
    exec(FIRST_FIT.replace("print(", "here['out'] = ("), {"here": here})
    assert float(total) == float(here["out"][2]) and np.isfinite(float(total))
