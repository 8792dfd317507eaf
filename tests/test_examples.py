"""The examples run end to end and produce what they promise."""
import importlib.util
from pathlib import Path

import pytest

from conftest import shared_file

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mushroom_study_writes_its_pictures_and_table(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    paths = _load("mushroom_study").main(["--quick", "--repeat", "1", "--out", str(tmp_path)])
    assert set(paths) == {"trees", "rows", "depth", "error"}
    for p in paths.values():
        img = plt.imread(p)
        assert img.shape[0] > 100 and img[..., :3].std() > 0.02
    table = (tmp_path / "mushroom_study.md").read_text()
    assert "| trees | training s |" in table and "| round | train error | test error |" in table


def test_gbdt_lr_example_prints_the_three_aucs(capsys):
    pytest.importorskip("pandas")
    path = shared_file("default_credit_card_clients", "UCI_Credit_Card.csv")
    aucs = _load("gbdt_lr").main(path)
    out = capsys.readouterr().out
    assert out.count("test AUC") == 3
    linear, gbdt, combined = aucs.values()
    assert combined > linear + 0.03  # the leaves are far better features than the raw ones
    assert combined > 0.75 and gbdt > 0.75
