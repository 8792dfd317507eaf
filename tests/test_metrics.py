"""Metrics against scikit-learn's, and their additivity across blocks of rows."""
import numpy as np
import pytest

from boostwood.boosting.metrics import get_metric, roc_auc

skm = pytest.importorskip("sklearn.metrics")


@pytest.fixture
def data():
    r = np.random.default_rng(0)
    n = 500
    y_bin = r.integers(0, 2, n).astype(float)
    p_bin = np.clip(0.3 * y_bin + 0.7 * r.random(n), 1e-6, 1 - 1e-6)
    y_mc = r.integers(0, 4, n).astype(float)
    p_mc = r.dirichlet(np.ones(4), n)
    y_reg = r.normal(size=n)
    p_reg = y_reg + r.normal(size=n) * 0.3
    w = r.uniform(0.1, 2.0, n)
    return y_bin, p_bin, y_mc, p_mc, y_reg, p_reg, w


def test_metrics_match_sklearn(data):
    y_bin, p_bin, y_mc, p_mc, y_reg, p_reg, w = data
    cases = [
        ("rmse", y_reg, p_reg, np.sqrt(skm.mean_squared_error(y_reg, p_reg, sample_weight=w))),
        ("mae", y_reg, p_reg, skm.mean_absolute_error(y_reg, p_reg, sample_weight=w)),
        ("logloss", y_bin, p_bin, skm.log_loss(y_bin, p_bin, sample_weight=w)),
        ("error", y_bin, p_bin, 1 - skm.accuracy_score(y_bin, p_bin > 0.5, sample_weight=w)),
        ("auc", y_bin, p_bin, skm.roc_auc_score(y_bin, p_bin, sample_weight=w)),
        ("mlogloss", y_mc, p_mc, skm.log_loss(y_mc, p_mc, sample_weight=w, labels=[0, 1, 2, 3])),
        ("merror", y_mc, p_mc, 1 - skm.accuracy_score(y_mc, p_mc.argmax(1), sample_weight=w)),
    ]
    for name, y, p, expected in cases:
        assert get_metric(name)(y, p, w) == pytest.approx(expected, rel=1e-10), name


def test_auc_counts_ties_as_one_half():
    y = np.array([0, 1, 0, 1])
    s = np.array([0.5, 0.5, 0.1, 0.9])
    assert roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s))
    assert np.isnan(roc_auc(np.ones(3), np.arange(3.0)))


@pytest.mark.parametrize("name", ["rmse", "mae", "logloss", "error"])
def test_additive_metrics_add_up_over_blocks(data, name):
    y_bin, p_bin, _, _, y_reg, p_reg, w = data
    y, p = (y_reg, p_reg) if name in ("rmse", "mae") else (y_bin, p_bin)
    m = get_metric(name)
    parts = [m.partial(y[s], p[s], w[s]) for s in (slice(0, 123), slice(123, 400), slice(400, None))]
    total = (sum(a for a, _ in parts), sum(b for _, b in parts))
    assert m.finalize(*total) == pytest.approx(m(y, p, w), rel=1e-12)
