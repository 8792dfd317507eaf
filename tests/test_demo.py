"""The README's main job: the mushroom demo on the bundled data, as a user runs it."""
import subprocess
import sys

import numpy as np

from boostwood.datasets import load_agaricus, read_libsvm


def test_demo_runs_and_prints_log_and_test_error():
    out = subprocess.run([sys.executable, "-m", "boostwood.demo", "--rounds", "20", "--period", "5"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[0].startswith("mushroom data: 6513 training rows, 1611 test rows, 126 features")
    assert [line.split("\t")[0] for line in lines[1:-1]] == ["[0]", "[5]", "[10]", "[15]", "[19]"]
    assert "test-error:" in lines[1]
    error = float(lines[-1].split()[2])
    assert lines[-1].startswith("test error:") and 0.0 <= error < 0.05


def test_bundled_agaricus_is_complete():
    Xtr, ytr, Xte, yte, names = load_agaricus()
    assert Xtr.shape == (6513, 126) and Xte.shape == (1611, 126) and len(names) == 126
    assert set(np.unique(ytr)) == {0.0, 1.0} and np.all((Xtr == 0) | (Xtr == 1))
    assert np.all(Xtr.sum(axis=1) == 22)  # 22 one-hot features per mushroom


def test_libsvm_reader_reports_the_bad_line():
    import pytest
    with pytest.raises(ValueError, match="demo.txt:2: malformed"):
        read_libsvm(["1 3:1", "0 x:y"], source="demo.txt")
    X, y = read_libsvm(["1 qid:3 1:0.5 3:2", "0 2:1"], zero_based=False)
    assert X.tolist() == [[0.5, 0, 2], [0, 1, 0]] and y.tolist() == [1, 0]
