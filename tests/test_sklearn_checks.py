"""scikit-learn's own estimator checks, run on both estimators."""
import pytest

pytest.importorskip("sklearn")
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from boostwood.sklearn import (AdaBoostClassifier, AdaBoostRegressor,  # noqa: E402
                               DecisionTreeClassifier, DecisionTreeRegressor,
                               ExtraTreesClassifier, ExtraTreesRegressor, GBDTClassifier,
                               GBDTRegressor, LeafEncoder, RandomForestClassifier,
                               RandomForestRegressor)

# Checks we knowingly fail, with the reason. Keep this list short and honest.
EXPECTED_FAILED = {}
# Forests draw random numbers per node of each level and (random forests) bootstrap n
# rows: a row repeated k times changes n and which nodes are scanned, so the draws and
# hence the trees differ from a row of weight k. scikit-learn's own forests list the
# same two checks as expected failures.
FOREST_FAILED = {
    "check_sample_weight_equivalence_on_dense_data":
        "random draws depend on the number of rows, not only on their weights",
    "check_sample_weight_equivalence_on_sparse_data":
        "random draws depend on the number of rows, not only on their weights",
}


def _expected(estimator):
    if isinstance(estimator, (RandomForestClassifier, RandomForestRegressor)):
        return FOREST_FAILED
    return EXPECTED_FAILED


@parametrize_with_checks([GBDTRegressor(n_estimators=10), GBDTClassifier(n_estimators=10),
                          GBDTRegressor(n_estimators=5, tree_method="exact"),
                          GBDTClassifier(n_estimators=5, tree_method="approx", sketch_eps=0.1),
                          GBDTRegressor(n_estimators=20, learning_rate=0.3, boosting="gradient",
                                        objective="reg:absoluteerror"),
                          GBDTClassifier(n_estimators=5, boosting="gradient",
                                         line_search="global"),
                          LeafEncoder(GBDTClassifier(n_estimators=5, max_depth=3)),
                          DecisionTreeClassifier(), DecisionTreeRegressor(),
                          DecisionTreeClassifier(criterion="gain_ratio", splitter="hist"),
                          DecisionTreeRegressor(ccp_alpha=0.01, max_features="sqrt",
                                                random_state=0),
                          RandomForestClassifier(10, oob_score=True, random_state=0),
                          RandomForestRegressor(10, random_state=0, splitter="best"),
                          ExtraTreesClassifier(10, random_state=0),
                          ExtraTreesRegressor(10, random_state=0),
                          AdaBoostClassifier(n_estimators=10), AdaBoostRegressor(n_estimators=10)],
                         expected_failed_checks=_expected)
def test_sklearn_compatible(estimator, check):
    check(estimator)
