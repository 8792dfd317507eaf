"""GBDT + logistic regression (He et al. 2014, the notes' feature combination).

Each tree of a gradient boosted model sends a row to one leaf; the leaf indices,
one-hot encoded by ``boostwood.LeafEncoder``, are learned feature crosses that
a linear model can weigh. As in the paper, the trees are fitted on one half of
the training rows and the logistic regression on the other half, so the linear
model does not learn from leaves that memorised its own rows.

Data: ../shared/data/default_credit_card_clients (30,000 card holders, label:
default next month), 75/25 split. Prints the test AUC of logistic regression on
the raw features, of the GBDT alone, and of GBDT leaves + logistic regression.

Run:  python examples/gbdt_lr.py [path/to/UCI_Credit_Card.csv]
"""
import sys
from pathlib import Path

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import boostwood as bw

DEFAULT = (Path(__file__).resolve().parents[2] / "shared" / "data" / "default_credit_card_clients"
           / "UCI_Credit_Card.csv")


def main(path=DEFAULT):
    df = pd.read_csv(path)
    y = df.pop("fraud").to_numpy()
    X = df.drop(columns=["ID"]).to_numpy(dtype=float)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0,
                                                        stratify=y)
    X_trees, X_lr, y_trees, y_lr = train_test_split(X_train, y_train, test_size=0.5,
                                                    random_state=0, stratify=y_train)

    linear = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    linear.fit(X_train, y_train)

    gbdt = bw.GBDTClassifier(n_estimators=200, max_depth=3, learning_rate=0.1, random_state=0)
    encoder = bw.LeafEncoder(gbdt).fit(X_trees, y_trees)
    combined = LogisticRegression(C=0.1, max_iter=2000)
    combined.fit(encoder.transform(X_lr), y_lr)

    rows = [("logistic regression (raw features)", linear.predict_proba(X_test)[:, 1]),
            ("GBDT alone (fitted on the trees' half)",
             encoder.estimator_.predict_proba(X_test)[:, 1]),
            (f"GBDT leaves ({encoder.n_leaves_.sum()} one-hot columns) + logistic regression",
             combined.predict_proba(encoder.transform(X_test))[:, 1])]
    print(f"default_credit_card_clients: {len(y_train)} training rows, {len(y_test)} test rows")
    for name, p in rows:
        print(f"  test AUC {roc_auc_score(y_test, p):.4f}  {name}")
    return {name: roc_auc_score(y_test, p) for name, p in rows}


if __name__ == "__main__":
    main(*sys.argv[1:])
