import numpy as np
import pytest

import boostwood as bw
from boostwood.boosting.callback import TrainingCallback

from conftest import make_classification


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(3000, 6, seed=1)
    dtr = bw.Dataset(X[:2000], y[:2000])
    dva = bw.Dataset(X[2000:], y[2000:], reference=dtr)
    return dtr, dva


def test_early_stopping_finds_the_best_round(data):
    dtr, dva = data
    log = {}
    params = {"objective": "binary:logistic", "eta": 0.5, "max_depth": 6,
              "eval_metric": ["auc", "logloss"]}
    b = bw.train(params, dtr, 500, evals=[(dtr, "train"), (dva, "valid")],
                 early_stopping_rounds=5, verbose_eval=False, evals_result=log)
    curve = log["valid"]["logloss"]  # the last metric on the last set drives stopping
    assert b.best_iteration == int(np.argmin(curve))
    assert len(curve) == b.best_iteration + 6 and b.num_boosted_rounds() == len(curve)
    assert b.best_score == pytest.approx(min(curve))
    # predict() uses the best iteration by default
    full = b.predict(dva, iteration_range=(0, b.best_iteration + 1))
    assert np.array_equal(b.predict(dva), full)


def test_early_stopping_on_a_chosen_metric_with_save_best(data):
    dtr, dva = data
    es = bw.EarlyStopping(rounds=3, metric_name="auc", data_name="valid", save_best=True)
    log = {}
    b = bw.train({"objective": "binary:logistic", "eta": 0.5, "eval_metric": ["auc", "logloss"]},
                 dtr, 300, evals=[(dva, "valid")], callbacks=[es], verbose_eval=False,
                 evals_result=log)
    auc = log["valid"]["auc"]
    assert b.best_iteration == int(np.argmax(auc))  # AUC: higher is better
    assert b.num_boosted_rounds() == b.best_iteration + 1  # truncated
    with pytest.raises(ValueError, match="rounds"):
        bw.EarlyStopping(0)


def test_evaluation_monitor_prints_every_period(data, capsys):
    dtr, dva = data
    bw.train({"objective": "binary:logistic"}, dtr, 7, evals=[(dva, "valid")], verbose_eval=3)
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[3]", "[6]"]
    assert lines[0].startswith("[0]\tvalid-logloss:")


def test_custom_callback_can_stop_training(data):
    dtr, _ = data

    class StopAt(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            return epoch == 3

    b = bw.train({}, dtr, 100, callbacks=[StopAt()], verbose_eval=False)
    assert b.num_boosted_rounds() == 4
    with pytest.raises(TypeError, match="TrainingCallback"):
        bw.train({}, dtr, 1, callbacks=[object()])


def test_min_delta_requires_a_real_improvement(data):
    dtr, dva = data
    params = {"objective": "binary:logistic", "eta": 0.05, "eval_metric": "logloss"}
    log = {}
    es = bw.EarlyStopping(rounds=2, min_delta=0.01)
    b = bw.train(params, dtr, 300, evals=[(dva, "valid")], callbacks=[es], verbose_eval=False,
                 evals_result=log)
    curve = np.array(log["valid"]["logloss"])
    # every accepted "best" improved on the previous best by more than min_delta ...
    best, bests = curve[0], [0]
    for i, v in enumerate(curve[1:], 1):
        if v < best - 0.01:
            best, bests = v, bests + [i]
    assert b.best_iteration == bests[-1]
    # ... and training stopped 2 rounds after the last such improvement
    assert len(curve) == b.best_iteration + 3
    plain = bw.train(params, dtr, 300, evals=[(dva, "valid")], early_stopping_rounds=2,
                     verbose_eval=False)
    assert plain.num_boosted_rounds() > b.num_boosted_rounds()
    with pytest.raises(ValueError, match="min_delta"):
        bw.EarlyStopping(3, min_delta=-1)


def test_early_stopping_on_a_nan_metric_is_an_error():
    """AUC on a validation set of one class is NaN every round: early stopping compared
    nothing with it, kept round 0 as the best and cut training short without a word
    (XGBoost only warns). Now it is an error, in train and in cv; the log alone may hold
    NaN."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(float)
    d = bw.Dataset(X, y)
    one_class = bw.Dataset(X[y == 1], y[y == 1], reference=d)
    params = {"objective": "binary:logistic", "eval_metric": "auc"}
    with pytest.raises(ValueError, match="v-auc is NaN at round 0"):
        bw.train(params, d, 10, evals=[(one_class, "v")], early_stopping_rounds=3,
                 verbose_eval=False)
    log = {}
    b = bw.train(params, d, 4, evals=[(one_class, "v")], evals_result=log, verbose_eval=False)
    assert b.num_boosted_rounds() == 4 and np.all(np.isnan(log["v"]["auc"]))
    with pytest.raises(ValueError, match="v-m is NaN"):
        bw.train({"objective": "binary:logistic"}, d, 10, evals=[(d, "v")],
                 custom_metric=lambda p, dt: ("m", float("nan")), early_stopping_rounds=2,
                 verbose_eval=False)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    folds = [(np.r_[neg, pos[:50]], pos[50:]), (np.r_[pos, neg[:50]], neg[50:])]
    with pytest.raises(ValueError, match="test-auc-mean is NaN at round 0"):
        bw.cv(params, d, 10, folds=folds, early_stopping_rounds=3)


def test_early_stopping_of_a_continued_model_counts_the_model_s_rounds(data):
    """Continuing a 5-round model with early stopping: ``best_iteration`` counts the
    model's rounds (XGBoost's and LightGBM's convention), so ``predict`` keeps the
    continued trees; it counted this run's epochs, and predict cut the model to
    ``best_iteration + 1`` of the first rounds (found by review). ``save_best`` too."""
    dtr, dva = data
    params = {"objective": "binary:logistic", "eta": 0.1, "max_depth": 4}
    first = bw.train(params, dtr, 5, verbose_eval=False)
    for save_best in (False, True):
        log = {}
        b = bw.train(params, dtr, 200, evals=[(dva, "valid")], verbose_eval=False,
                     evals_result=log, init_model=first,
                     callbacks=[bw.EarlyStopping(3, save_best=save_best)])
        curve = log["valid"]["logloss"]  # this run's rounds: the model's rounds 5, 6, ...
        assert b.best_iteration == 5 + int(np.argmin(curve)) and b.best_iteration > 5
        assert b.best_score == min(curve)
        assert b.num_boosted_rounds() == (b.best_iteration + 1 if save_best else 5 + len(curve))
        np.testing.assert_array_equal(b.predict(dva), b.predict(
            dva, iteration_range=(0, b.best_iteration + 1)))
        margin = b.predict(dva, output_margin=True)
        assert not np.array_equal(margin, first.predict(dva, output_margin=True))


def test_custom_metric_may_return_several_and_not_a_built_in_s_name(data):
    """A custom metric may return a list of (name, value) pairs, as XGBoost's; a name of
    an eval_metric is refused (its values interleaved with the built-in's in one log
    list, which early stopping read: found by review)."""
    dtr, dva = data
    log = {}
    bw.train({"objective": "binary:logistic", "eval_metric": "auc"}, dtr, 3,
             evals=[(dva, "v")], evals_result=log, verbose_eval=False,
             custom_metric=lambda p, d: [("lo", float(p.min())), ("hi", float(p.max()))])
    assert list(log["v"]) == ["auc", "lo", "hi"] and len(log["v"]["hi"]) == 3
    with pytest.raises(ValueError, match=r"names \['auc'\] are eval_metric's too"):
        bw.train({"objective": "binary:logistic", "eval_metric": "auc"}, dtr, 2,
                 evals=[(dva, "v")], verbose_eval=False, custom_metric=lambda p, d: ("auc", 0.5))
    with pytest.raises(TypeError, match="custom_metric must return"):
        bw.train({}, dtr, 2, evals=[(dva, "v")], verbose_eval=False,
                 custom_metric=lambda p, d: 0.5)
    for value in ("0.5", True):
        with pytest.raises(TypeError, match="must be a number"):
            bw.train({}, dtr, 1, evals=[(dva, "v")], verbose_eval=False,
                     custom_metric=lambda p, d, value=value: ("m", value))
    rounds = iter(range(10))

    def growing(p, d):  # a second metric from round 2 on: its list would not line up
        return [("a", 0.0)] + ([("b", 1.0)] if next(rounds) >= 2 else [])

    with pytest.raises(ValueError, match="must name the same ones every round"):
        bw.train({}, dtr, 5, evals=[(dva, "v")], verbose_eval=False, custom_metric=growing)
