"""Plots render to PNG with the Agg backend; the images are real pictures, not blanks."""
import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import boostwood as bw  # noqa: E402
from boostwood import plotting  # noqa: E402

from conftest import make_regression  # noqa: E402


@pytest.fixture(scope="module")
def trained():
    X, y = make_regression(n=800, f=5, seed=1)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    d = bw.Dataset(X, label=y, feature_names=[f"x{j}" for j in range(5)])
    log = {}
    b = bw.train({"max_depth": 3, "eta": 0.3}, d, 20, evals=[(d, "train")], evals_result=log,
                 verbose_eval=False)
    return b, X, log


def _check_png(ax_or_axes, path):
    ax = np.atleast_1d(ax_or_axes)[0]
    fig = ax.figure
    fig.savefig(path, dpi=60)
    plt.close(fig)
    img = plt.imread(path)
    assert img.ndim == 3 and img.shape[0] > 50 and img.shape[1] > 50
    # something was drawn: the picture is not a single flat colour
    assert img[..., :3].std() > 0.02


def test_plot_importance(trained, tmp_path):
    b, _, _ = trained
    ax = plotting.plot_importance(b, importance_type="total_gain", max_num_features=3)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 3 and labels[-1] == max(b.get_score("total_gain"),
                                                  key=b.get_score("total_gain").get)
    _check_png(ax, tmp_path / "imp.png")


def test_plot_metric(trained, tmp_path):
    _, _, log = trained
    ax = plotting.plot_metric(log)
    assert len(ax.get_lines()) == 1 and len(ax.get_lines()[0].get_xdata()) == 20
    _check_png(ax, tmp_path / "metric.png")
    with pytest.raises(ValueError, match="not recorded"):
        plotting.plot_metric(log, metric="auc")


def test_plot_tree_and_graphviz(trained, tmp_path):
    b, _, _ = trained
    ax = plotting.plot_tree(b, tree_index=2)
    texts = [t.get_text() for t in ax.texts]
    assert sum(t.startswith("leaf") for t in texts) == b.trees[2].n_leaves
    _check_png(ax, tmp_path / "tree.png")
    dot = plotting.to_graphviz(b, 2)
    assert dot.startswith("digraph") and dot.count("->") == 2 * (b.trees[2].n_nodes // 2)
    with pytest.raises(ValueError, match="tree_index"):
        plotting.plot_tree(b, tree_index=100)


def test_plot_partial_dependence(trained, tmp_path):
    b, X, _ = trained
    axes = plotting.plot_partial_dependence(b, X, ["x0", 1], grid_resolution=20,
                                            validate_features=False)  # X has no names
    assert len(axes) == 2
    y0 = axes[0].get_lines()[0].get_ydata()
    assert y0[-1] > y0[0]  # y = 2 x0 + ...: increasing
    _check_png(axes, tmp_path / "pd.png")


def test_plots_accept_estimators_and_reject_others(tmp_path):
    X, y = make_regression(n=300)
    reg = bw.GBDTRegressor(n_estimators=5).fit(X, y)
    _check_png(plotting.plot_importance(reg), tmp_path / "a.png")
    with pytest.raises(TypeError, match="Booster"):
        plotting.plot_importance(object())


def test_partial_dependence_plot_checks_its_data_and_arguments(trained):
    """X's columns are matched by name as predict matches them (before, a reordered
    DataFrame drew each curve on another column's grid); bad arguments are clear errors
    (before: IndexError, or features beyond the given Axes dropped without a word)."""
    pd = pytest.importorskip("pandas")
    b, X, _ = trained
    df = pd.DataFrame(X, columns=b.feature_names)
    want = plotting.plot_partial_dependence(b, df, "x1")[0].get_lines()[0].get_xydata()
    got = plotting.plot_partial_dependence(b, X, 1, validate_features=False)
    np.testing.assert_array_equal(got[0].get_lines()[0].get_xydata(), want)
    # (columns in another order are selected by name since [Q2]: other names differ)
    cases = [((df.rename(columns={df.columns[0]: "zz"}), "x1"), {}, ValueError,
              "feature names differ"),
             ((X, "x1"), {}, ValueError, "no feature names"),
             ((df.iloc[:, :3], "x1"), {}, ValueError, "3 features"),
             ((df, 9), {}, ValueError, "feature"),
             ((df, "nope"), {}, ValueError, "unknown feature 'nope'"),
             ((df, []), {}, ValueError, "features is empty"),
             ((df, "x1"), {"grid_resolution": 1}, ValueError, "grid_resolution"),
             ((df, "x1"), {"output": 1}, ValueError, "output"),
             ((df, "x1"), {"percentiles": (0.9, 0.1)}, ValueError, "percentiles"),
             ((df, ["x0", "x1"]), {"ax": plt.subplots()[1]}, ValueError, "1 Axes for 2"),
             ((df.assign(x2=np.nan), "x2"), {}, ValueError, "all missing")]
    for args, kwargs, error, match in cases:
        with pytest.raises(error, match=match):
            plotting.plot_partial_dependence(b, *args, **kwargs)
    grid = plotting.plot_partial_dependence(b, df, ["x0", "x1", "x2", "x3"],
                                            ax=plt.subplots(2, 2)[1])  # a 2 x 2 grid
    assert len(grid) == 4 and all(len(a.get_lines()) == 2 for a in grid)
    reg = bw.GBDTRegressor(n_estimators=3).fit(df, np.nan_to_num(X[:, 0]))
    with pytest.warns(UserWarning, match="feature names"):  # an estimator: scikit-learn's rule
        plotting.plot_partial_dependence(reg, X, 0)
    plt.close("all")
    with pytest.raises(ValueError, match="max_num_features"):
        plotting.plot_importance(b, max_num_features=0)
    with pytest.raises(ValueError, match="no model"):
        plotting.plot_importance(bw.Booster())
