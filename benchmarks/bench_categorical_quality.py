"""Quality with real string columns: boostwood's categorical splits against its ordinal
codes, LightGBM, XGBoost and CatBoost, 5-fold cross-validation ([Q2] item 5).

Data (``../shared/data``): adult, bank_marketing (without ``duration``, which leaks the
target), ames_housing (log sale price), taxis (tip; pickup and dropoff times dropped),
titanic (without ``PassengerId`` and ``Name``), penguins (3 species) and fremtpl2 (claim
frequency, Poisson, exposure as weight; ``--fremtpl2-rows`` rows drawn at random, 100k by
default). String columns are pandas ``category`` columns, the same for every library:
boostwood and LightGBM read the dtype, XGBoost with ``enable_categorical=True``,
CatBoost with ``cat_features`` (missing values as the string "nan", which it needs);
"boostwood ordinal" trains on the category codes as numbers.

Every library: the same folds (shuffled, seed 0; stratified for classification), the same
rounds (``--rounds``), learning rate 0.1, depth 6 (LightGBM: 63 leaves and max_depth 6;
CatBoost's trees are symmetric), L2 penalty 1, 2 threads, each with its own categorical
defaults. The metric (lower is better): log loss (binary), multiclass log loss, RMSE,
mean Poisson deviance (weighted by exposure). Printed per data set: each library's mean
and standard deviation over the folds, and whether boostwood native is within one
standard deviation of the best.

Usage::

    python benchmarks/bench_categorical_quality.py                 # every data set
    python benchmarks/bench_categorical_quality.py --sets adult,titanic --rounds 100
"""
import argparse
import os
import subprocess
import time

import numpy as np
import pandas as pd

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data")


def _categories(df):
    for c in df.columns:
        if df[c].dtype == object or str(df[c].dtype) in ("str", "string"):
            df[c] = df[c].astype("category")
    return df


def adult():
    names = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
             "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
             "hours_per_week", "native_country", "income"]
    df = pd.read_csv(f"{DATA}/adult/adult.data", names=names, na_values="?",
                     skipinitialspace=True)
    y = (df.pop("income").str.strip() == ">50K").astype(float).to_numpy()
    return _categories(df), y, "binary", None


def bank_marketing():
    df = pd.read_csv(f"{DATA}/bank_marketing/bank-additional-full.csv", sep=";")
    y = (df.pop("y") == "yes").astype(float).to_numpy()
    return _categories(df.drop(columns=["duration"])), y, "binary", None


def ames_housing():
    df = pd.read_csv(f"{DATA}/ames_housing/AmesHousing.csv", keep_default_na=False,
                     na_values=[""])
    y = np.log(df.pop("SalePrice").to_numpy(dtype=float))
    df = df.drop(columns=["Order", "PID"])
    for c in df.columns:  # "NA" means "absent" in the text columns, a number is a number
        if df[c].dtype == object:
            num = pd.to_numeric(df[c], errors="coerce")
            if num.notna().sum() == df[c].ne("NA").sum():
                df[c] = num
    return _categories(df), y, "regression", None


def taxis():
    df = pd.read_csv(f"{DATA}/taxis/taxis.csv")
    y = df.pop("tip").to_numpy(dtype=float)
    return _categories(df.drop(columns=["total", "pickup", "dropoff"])), y, "regression", None


def titanic():
    df = pd.read_csv(f"{DATA}/titanic/train.csv")
    y = df.pop("Survived").to_numpy(dtype=float)
    return _categories(df.drop(columns=["PassengerId", "Name"])), y, "binary", None


def penguins():
    df = pd.read_csv(f"{DATA}/penguins/penguins.csv")
    y = df.pop("species").astype("category").cat.codes.to_numpy(dtype=float)
    return _categories(df), y, "multiclass", None


def fremtpl2(rows):
    df = pd.read_csv(f"{DATA}/fremtpl2/freMTPL2freq.csv.gz")
    df = df.sample(n=min(rows, len(df)), random_state=0).reset_index(drop=True)
    exposure = df["Exposure"].clip(upper=1.0).to_numpy(dtype=float)
    y = df["ClaimNb"].clip(upper=4).to_numpy(dtype=float) / exposure
    return _categories(df.drop(columns=["IDpol", "ClaimNb", "Exposure"])), y, "poisson", exposure


def metric(task, y, p, w):
    eps = 1e-15
    if task == "binary":
        p = np.clip(p, eps, 1 - eps)
        return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    if task == "multiclass":
        return float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y.astype(int)], eps, 1))))
    if task == "regression":
        return float(np.sqrt(np.mean((p - y) ** 2)))
    p = np.maximum(p, eps)
    dev = 2 * (np.where(y > 0, y * np.log(np.where(y > 0, y, 1) / p), 0.0) - (y - p))
    return float(np.average(dev, weights=w))


OBJ = {"boostwood": {"binary": "binary:logistic", "multiclass": "multi:softprob",
                     "regression": "reg:squarederror", "poisson": "count:poisson"},
       "lightgbm": {"binary": "binary", "multiclass": "multiclass", "regression": "regression",
                    "poisson": "poisson"},
       "catboost": {"binary": "Logloss", "multiclass": "MultiClass", "regression": "RMSE",
                    "poisson": "Poisson"}}


def fit_boostwood(X, y, w, task, a, Xt, ordinal=False):
    import boostwood as bw
    if ordinal:
        X, Xt = (f.apply(lambda c: c.cat.codes.replace(-1, np.nan).astype(float)
                         if str(c.dtype) == "category" else c) for f in (X, Xt))
    p = dict(objective=OBJ["boostwood"][task], eta=0.1, max_depth=6, reg_lambda=1.0,
             nthread=a.threads, verbosity=0, seed=0)
    if task == "multiclass":
        p["num_class"] = 3
    b = bw.train(p, bw.Dataset(X, label=y, weight=w), a.rounds)
    return b.predict(Xt)


def fit_lightgbm(X, y, w, task, a, Xt):
    import lightgbm as lgb
    p = dict(objective=OBJ["lightgbm"][task], learning_rate=0.1, max_depth=6, num_leaves=63,
             lambda_l2=1.0, num_threads=a.threads, verbose=-1, seed=0)
    if task == "multiclass":
        p["num_class"] = 3
    return lgb.train(p, lgb.Dataset(X, label=y, weight=w), a.rounds).predict(Xt)


def fit_xgboost(X, y, w, task, a, Xt):
    import xgboost as xgb
    obj = {"binary": "binary:logistic", "multiclass": "multi:softprob",
           "regression": "reg:squarederror", "poisson": "count:poisson"}[task]
    p = dict(objective=obj, eta=0.1, max_depth=6, reg_lambda=1.0, tree_method="hist",
             nthread=a.threads, seed=0)
    if task == "multiclass":
        p["num_class"] = 3
    b = xgb.train(p, xgb.DMatrix(X, label=y, weight=w, enable_categorical=True), a.rounds)
    return b.predict(xgb.DMatrix(Xt, enable_categorical=True))


def fit_catboost(X, y, w, task, a, Xt):
    import catboost as cb
    cats = [c for c in X.columns if str(X[c].dtype) == "category"]
    prep = lambda f: f.assign(**{c: f[c].astype(object).fillna("nan").map(str)  # noqa: E731
                                 for c in cats})
    m = cb.CatBoost(dict(loss_function=OBJ["catboost"][task], iterations=a.rounds,
                         learning_rate=0.1, depth=6, l2_leaf_reg=1.0, thread_count=a.threads,
                         verbose=False, random_seed=0, allow_writing_files=False))
    m.fit(cb.Pool(prep(X), y, weight=w, cat_features=cats))
    kind = {"binary": "Probability", "multiclass": "Probability", "regression": "RawFormulaVal",
            "poisson": "Exponent"}[task]
    p = m.predict(cb.Pool(prep(Xt), cat_features=cats), prediction_type=kind)
    return p[:, 1] if task == "binary" else p


LIBS = {"boostwood native": fit_boostwood,
        "boostwood ordinal": lambda *args: fit_boostwood(*args, ordinal=True),
        "lightgbm": fit_lightgbm, "xgboost": fit_xgboost, "catboost": fit_catboost}


def folds(n, y, task, k=5):
    from sklearn.model_selection import KFold, StratifiedKFold
    if task in ("binary", "multiclass"):
        return list(StratifiedKFold(k, shuffle=True, random_state=0).split(np.zeros(n), y))
    return list(KFold(k, shuffle=True, random_state=0).split(np.zeros(n)))


def run_set(name, X, y, task, w, a, libs):
    scores = {lib: [] for lib in libs}
    seconds = {lib: 0.0 for lib in libs}
    for tr, te in folds(len(y), y, task):
        wt = None if w is None else w[tr]
        for lib in libs:
            t = time.perf_counter()
            p = LIBS[lib](X.iloc[tr], y[tr], wt, task, a, X.iloc[te])
            seconds[lib] += time.perf_counter() - t
            scores[lib].append(metric(task, y[te], p, None if w is None else w[te]))
    mean = {lib: float(np.mean(v)) for lib, v in scores.items()}
    std = {lib: float(np.std(v)) for lib, v in scores.items()}
    best = min(mean, key=mean.get)
    ok = mean["boostwood native"] <= mean[best] + std[best] if "boostwood native" in mean \
        else None
    return mean, std, seconds, best, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="adult,bank_marketing,ames_housing,taxis,titanic,"
                                      "penguins,fremtpl2")
    ap.add_argument("--libs", default=",".join(LIBS))
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fremtpl2-rows", type=int, default=100_000)
    a = ap.parse_args()
    libs = a.libs.split(",")
    loaders = {"adult": adult, "bank_marketing": bank_marketing, "ames_housing": ames_housing,
               "taxis": taxis, "titanic": titanic, "penguins": penguins,
               "fremtpl2": lambda: fremtpl2(a.fremtpl2_rows)}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"commit {commit}; {os.cpu_count()} cores; {a.rounds} rounds, lr 0.1, depth 6, "
          f"L2 1, {a.threads} threads, 5 folds; metric lower is better")
    print("| data | " + " | ".join(libs) + " | native within 1 sd of best |")
    print("|---|" + "---|" * (len(libs) + 1))
    for name in a.sets.split(","):
        X, y, task, w = loaders[name]()
        mean, std, seconds, best, ok = run_set(name, X, y, task, w, a, libs)
        cells = [f"{mean[lib]:.4f} ± {std[lib]:.4f}" + (" *" if lib == best else "")
                 for lib in libs]
        print(f"| {name} ({task}, {len(y)} rows) | " + " | ".join(cells) +
              f" | {'yes' if ok else 'no'} |", flush=True)
        print("<!-- seconds: " + ", ".join(f"{lib} {seconds[lib]:.1f}" for lib in libs)
              + " -->", flush=True)


if __name__ == "__main__":
    main()
