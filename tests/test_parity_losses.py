"""Poisson, Gamma, Tweedie and quantile regression against LightGBM on real data.

Same data, same parameters (15 leaves grown best-first, learning rate 0.1, 100
rounds, no L2 penalty, 255 bins), 5-fold cross-validation; the metric is the
mean test deviance (pinball loss for quantiles) over the folds. Features are
binned beforehand into at most 255 values, so both libraries choose among the
same thresholds: what is compared is the boosting, not two binning heuristics
(which alone move a 5-fold mean on these small sets by 1-2%).

Tolerance, as in ``test_parity.py`` but at the 1% of the issue: boostwood may
be at most 1% worse than LightGBM, and better by no more than 2% (a larger
lead points at a measurement bug rather than a better algorithm).

Why ``min_data_in_leaf=1`` with ``min_sum_hessian_in_leaf=1`` for the log-link
losses: LightGBM does not count a child's rows, it estimates the count from the
hessian sum (count ~ H * n / H_total). With the very unequal hessians of Gamma
and Tweedie (y e^-F varies by orders of magnitude) that estimate is far off, so
``min_data_in_leaf=20`` accepts and rejects other splits than an exact count
does, and the two libraries grow different trees for that reason alone (up to
23% apart on taxis). A hessian bound is applied exactly by both. The quantile
loss has constant hessians, where LightGBM's estimate is exact, so it keeps
``min_data_in_leaf=20``.
"""
import numpy as np
import pytest

import boostwood as bw

import shared_data

lgb = pytest.importorskip("lightgbm")
metrics = pytest.importorskip("sklearn.metrics")

WORSE_TOL, BETTER_TOL = 0.01, 0.02

LOG_LINK = dict(min_data_in_leaf=1, min_hessian=1.0)
QUANTILE = dict(min_data_in_leaf=20, min_hessian=1e-3)
#: Gamma deviance on heavy-tailed amounts (fares, claim sizes) is dominated by a few
#: rows; with leaves of a few rows both libraries overfit them and a near-tie in one
#: round sends the two ensembles apart (fold-to-fold spread 30-50%). A hessian floor
#: of ~30 rows' worth (h = y e^-F is about 1 per row) keeps the comparison about the
#: algorithm.
GAMMA = dict(min_data_in_leaf=1, min_hessian=30.0)


def _deviance(kind, **kw):
    if kind == "poisson":
        return lambda y, p, w: metrics.mean_poisson_deviance(y, p, sample_weight=w)
    if kind == "gamma":
        return lambda y, p, w: metrics.mean_gamma_deviance(y, p, sample_weight=w)
    if kind == "tweedie":
        return lambda y, p, w: metrics.mean_tweedie_deviance(y, p, sample_weight=w,
                                                             power=kw["power"])
    return lambda y, p, w: metrics.mean_pinball_loss(y, p, alpha=kw["alpha"], sample_weight=w)


def prebin(X, max_bin=255):
    """Columns with more distinct values than ``max_bin`` replaced by quantile-bin codes,
    so both libraries see the same candidate thresholds (one bin per value)."""
    X = X.copy()
    for j in range(X.shape[1]):
        if np.unique(X[:, j]).size > max_bin:
            edges = np.unique(np.quantile(X[:, j], np.linspace(0, 1, max_bin)[1:-1]))
            X[:, j] = np.searchsorted(edges, X[:, j])
    return X


def _cv(data, lgb_objective, bw_params, limits, metric, rounds=100, k=5, seed=0):
    """Per-fold test metrics of LightGBM and boostwood, as two arrays."""
    X, y, w = data
    X = prebin(X)
    w = np.ones(len(y)) if w is None else w
    folds = np.random.default_rng(seed).permutation(len(y)) % k
    lp = dict(objective=lgb_objective, num_leaves=15, learning_rate=0.1, lambda_l2=0.0,
              max_bin=255, min_data_in_bin=1, verbose=-1, num_threads=2, deterministic=True,
              min_data_in_leaf=limits["min_data_in_leaf"],
              min_sum_hessian_in_leaf=limits["min_hessian"])
    bp = dict(grow_policy="lossguide", max_leaves=15, max_depth=0, eta=0.1, reg_lambda=0.0,
              min_data_in_leaf=limits["min_data_in_leaf"], min_child_weight=limits["min_hessian"])
    if "poisson_max_delta_step" in bw_params:  # both: hessians e^(F + this), default 0.7
        lp["poisson_max_delta_step"] = max(bw_params["poisson_max_delta_step"], 1e-12)
    if lgb_objective == "tweedie":
        lp["tweedie_variance_power"] = bw_params["tweedie_variance_power"]
    if lgb_objective == "quantile":
        lp["alpha"] = bw_params["quantile_alpha"]
    out = np.empty((2, 2, k))  # [lightgbm, boostwood] x [train, test] x fold
    for f in range(k):
        tr, te = folds != f, folds == f
        ref = lgb.train(lp, lgb.Dataset(X[tr], y[tr], weight=w[tr]), rounds)
        ours = bw.train({**bp, **bw_params}, bw.Dataset(X[tr], label=y[tr], weight=w[tr]), rounds,
                        verbose_eval=False)
        for i, model in enumerate((ref, ours)):
            for j, rows in enumerate((tr, te)):
                out[i, j, f] = metric(y[rows], model.predict(X[rows]), w[rows])
    return out


CASES = {
    "bikeshare-poisson": (shared_data.bikeshare, "poisson", {"objective": "count:poisson"},
                          LOG_LINK, _deviance("poisson")),
    "bikeshare-poisson-newton": (shared_data.bikeshare, "poisson",  # plain Newton steps
                                 {"objective": "count:poisson", "poisson_max_delta_step": 0.0},
                                 LOG_LINK, _deviance("poisson")),
    "bikeshare-tweedie": (shared_data.bikeshare, "tweedie",
                          {"objective": "reg:tweedie", "tweedie_variance_power": 1.5},
                          LOG_LINK, _deviance("tweedie", power=1.5)),
    "bikeshare-quantile0.9": (shared_data.bikeshare, "quantile",
                              {"objective": "reg:quantileerror", "quantile_alpha": 0.9},
                              QUANTILE, _deviance("quantile", alpha=0.9)),
    "fremtpl2-poisson-exposure": (shared_data.fremtpl2_frequency, "poisson",
                                  {"objective": "count:poisson"}, LOG_LINK, _deviance("poisson")),
    "fremtpl2-tweedie-exposure": (shared_data.fremtpl2_frequency, "tweedie",
                                  {"objective": "reg:tweedie", "tweedie_variance_power": 1.5},
                                  LOG_LINK, _deviance("tweedie", power=1.5)),
    "fremtpl2-severity-gamma": (shared_data.fremtpl2_severity, "gamma",
                                {"objective": "reg:gamma"}, GAMMA, _deviance("gamma")),
    "taxis-fare-gamma": (shared_data.taxis_fare, "gamma", {"objective": "reg:gamma"}, GAMMA,
                         _deviance("gamma")),
    "taxis-tip-tweedie": (shared_data.taxis_tip, "tweedie",
                          {"objective": "reg:tweedie", "tweedie_variance_power": 1.5},
                          GAMMA, _deviance("tweedie", power=1.5)),
    "taxis-tip-quantile0.5": (shared_data.taxis_tip, "quantile",
                              {"objective": "reg:quantileerror", "quantile_alpha": 0.5},
                              QUANTILE, _deviance("quantile", alpha=0.5)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_lightgbm(case, seed=0):
    """The 5-fold mean of the test metric, and of the training metric, within tolerance."""
    loader, lgb_objective, bw_params, limits, metric = CASES[case]
    scores = _cv(loader(), lgb_objective, bw_params, limits, metric, seed=seed).mean(axis=2)
    for name, (ref, ours) in zip(("train", "test"), scores.T):
        rel = ours / ref - 1
        assert -BETTER_TOL <= rel <= WORSE_TOL, (case, name, ref, ours, rel)
