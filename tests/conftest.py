import os
from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_file(*parts):
    """Path of a file in ../shared/data, or skip the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available (../shared is absent)")
    return path


@pytest.fixture(autouse=True)
def _numba_threads_given_back():
    """Every test leaves numba's thread count as it found it: a test that sets it (or a
    fit that did not give it back) would otherwise run the rest of the session on
    another count, and a later test that needs two threads would fail only in the
    whole suite (it did, twice)."""
    import numba
    before = numba.get_num_threads()
    yield
    if numba.get_num_threads() != before:
        numba.set_num_threads(before)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def make_classification(n=2000, f=6, seed=0, missing=0.0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, f))
    y = ((X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * r.normal(size=n)) > 0).astype(float)
    if missing:
        X[r.random(X.shape) < missing] = np.nan
    return X, y


def make_regression(n=2000, f=6, seed=0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, f))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + 0.3 * r.normal(size=n)
    return X, y


os.environ.setdefault("NUMBA_NUM_THREADS", "2")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # two workers of 2 numba threads share the cores: a thread waiting at the end of a
    # parallel region sleeps rather than spinning on a core the other worker needs
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def record_loop_statuses(monkeypatch):
    """Spy on the compiled expansion loop: the list it returns gets the status of every
    ``expand_tree`` call (DONE, or the NEED_* it stopped for) while the patch holds."""
    import boostwood.tree.grower as grower_module
    statuses = []
    real = grower_module.expand_tree

    def spy(*args):
        out = real(*args)
        statuses.append(int(out[0]))
        return out

    monkeypatch.setattr(grower_module, "expand_tree", spy)
    return statuses
