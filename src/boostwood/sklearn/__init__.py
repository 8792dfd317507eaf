"""scikit-learn estimators (needs scikit-learn: ``pip install boostwood[sklearn]``).

* :mod:`.gbdt`: gradient boosting -- ``GBDTRegressor``, ``GBDTClassifier``, ``LeafEncoder``;
* :mod:`.ranker`: learning to rank -- ``GBDTRanker``;
* :mod:`.trees`: the classic learners on the same tree engine -- decision trees
  (CART, C4.5 gain ratio), random forests, extra trees and AdaBoost.
"""
from .gbdt import GBDTClassifier, GBDTRegressor, LeafEncoder
from .ranker import GBDTRanker
from .adaboost import AdaBoostClassifier, AdaBoostRegressor
from .forest import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                     RandomForestRegressor)
from .trees import DecisionTreeClassifier, DecisionTreeRegressor, export_text

__all__ = ["AdaBoostClassifier", "AdaBoostRegressor", "DecisionTreeClassifier",
           "DecisionTreeRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
           "GBDTClassifier", "GBDTRanker", "GBDTRegressor", "LeafEncoder", "RandomForestClassifier",
           "RandomForestRegressor", "export_text"]
