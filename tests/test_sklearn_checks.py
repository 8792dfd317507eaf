"""scikit-learn's own estimator checks, run on both estimators."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from boostwood.sklearn import GBDTClassifier, GBDTRegressor, LeafEncoder  # noqa: E402

# Checks we knowingly fail, with the reason. Keep this list short and honest.
EXPECTED_FAILED = {}


def _expected(estimator):
    return EXPECTED_FAILED


@parametrize_with_checks([GBDTRegressor(n_estimators=10), GBDTClassifier(n_estimators=10),
                          GBDTRegressor(n_estimators=5, tree_method="exact"),
                          GBDTClassifier(n_estimators=5, tree_method="approx", sketch_eps=0.1),
                          GBDTRegressor(n_estimators=20, learning_rate=0.3, boosting="gradient",
                                        objective="reg:absoluteerror"),
                          GBDTClassifier(n_estimators=5, boosting="gradient",
                                         line_search="global"),
                          LeafEncoder(GBDTClassifier(n_estimators=5, max_depth=3))],
                         expected_failed_checks=_expected)
def test_sklearn_compatible(estimator, check):
    check(estimator)
