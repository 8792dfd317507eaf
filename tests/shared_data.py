"""Loaders of the real data sets in ../shared/data used by the parity tests.

Each returns ``(X, y, w)`` as float arrays (``w`` None when the rows are
unweighted); string columns become integer codes, as every library compared
here sees them. A loader skips the calling test when ../shared is absent.
"""
import numpy as np

from conftest import shared_file

pd = None


def _pandas():
    global pd
    if pd is None:
        import pytest
        pd = pytest.importorskip("pandas")
    return pd


def _codes(df):
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category").cat.codes.astype(float)
    return df.to_numpy(dtype=float)


def bikeshare():
    """ISLP Bikeshare: hourly rider counts ``bikers`` (8,645 rows)."""
    _pandas()
    df = pd.read_csv(shared_file("islp_bikeshare", "Bikeshare.csv"))
    y = df.pop("bikers").to_numpy(float)
    return _codes(df.drop(columns=["casual", "registered"])), y, None


def _taxis_frame():
    _pandas()
    df = pd.read_csv(shared_file("taxis", "taxis.csv"))
    start = pd.to_datetime(df.pop("pickup"))
    df["hour"], df["weekday"] = start.dt.hour, start.dt.day_of_week
    df["minutes"] = (pd.to_datetime(df.pop("dropoff")) - start).dt.total_seconds() / 60
    return df


def taxis_tip():
    """NYC taxis: the tip (36% zeros), without the ``total`` that contains it."""
    df = _taxis_frame()
    y = df.pop("tip").to_numpy(float)
    return _codes(df.drop(columns=["total"])), y, None


def taxis_fare():
    """NYC taxis: the (positive) fare, from trip features only."""
    df = _taxis_frame()
    y = df.pop("fare").to_numpy(float)
    X = _codes(df.drop(columns=["total", "tip", "tolls"]))
    return X[y > 0], y[y > 0], None


def fremtpl2_frequency(n_rows=100_000, seed=0):
    """freMTPL2 claim frequency ClaimNb / Exposure with weight Exposure (a sample)."""
    _pandas()
    df = pd.read_csv(shared_file("fremtpl2", "freMTPL2freq.csv.gz"))
    df = df.sample(n=min(n_rows, len(df)), random_state=seed)
    exposure = df.pop("Exposure").to_numpy(float)
    y = df.pop("ClaimNb").to_numpy(float) / exposure
    return _codes(df.drop(columns=["IDpol"])), y, exposure


def fremtpl2_severity():
    """freMTPL2 mean claim amount per policy with a claim, weighted by the claim count."""
    _pandas()
    freq = pd.read_csv(shared_file("fremtpl2", "freMTPL2freq.csv.gz"))
    sev = pd.read_csv(shared_file("fremtpl2", "freMTPL2sev.csv"))
    sev = sev.groupby("IDpol").ClaimAmount.agg(["sum", "count"]).reset_index()
    df = freq.merge(sev, on="IDpol")
    y = (df["sum"] / df["count"]).to_numpy(float)
    w = df["count"].to_numpy(float)
    return _codes(df.drop(columns=["IDpol", "sum", "count", "ClaimNb", "Exposure"])), y, w


def california_housing():
    """California housing: median house value in units of 100k (rows with a blank
    ``total_bedrooms`` dropped, ``ocean_proximity`` as codes)."""
    _pandas()
    df = pd.read_csv(shared_file("california_housing", "housing.csv")).dropna()
    y = df.pop("median_house_value").to_numpy(float) / 1e5
    return _codes(df), y, None


def default_credit():
    """Taiwan credit card default (30,000 rows, label ``fraud``)."""
    _pandas()
    df = pd.read_csv(shared_file("default_credit_card_clients", "UCI_Credit_Card.csv"))
    y = df.pop("fraud").to_numpy(float)
    return _codes(df.drop(columns=["ID"])), y, None


def covertype():
    """Kaggle's balanced covertype subset (15,120 rows, 7 classes as 0..6)."""
    _pandas()
    df = pd.read_csv(shared_file("covertype_kaggle_subset", "train.csv"))
    y = df.pop("Cover_Type").to_numpy(float) - 1
    return _codes(df.drop(columns=["Id"])), y, None


ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
                 "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
                 "hours_per_week", "native_country", "income"]


def adult():
    """UCI Adult, train and test files together (48,842 rows; label: income > 50K;
    string columns as codes, '?' missing)."""
    _pandas()
    frames = [pd.read_csv(shared_file("adult", name), header=None, names=ADULT_COLUMNS,
                          na_values="?", skipinitialspace=True, comment="|")
              for name in ("adult.data", "adult.test")]
    df = pd.concat(frames, ignore_index=True).dropna(subset=["income"])
    y = df.pop("income").str.rstrip(".").eq(">50K").to_numpy(float)
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            codes = df[c].astype("category").cat.codes.astype(float)
            df[c] = codes.where(codes >= 0)  # missing stays NaN
    return df.to_numpy(dtype=float), y, None


def letter_recognition():
    """UCI letter recognition (20,000 rows, 16 integer features, 26 classes as 0..25)."""
    _pandas()
    df = pd.read_csv(shared_file("letter_recognition", "letter.tsv.gz"), sep="\t")
    y = df.pop("target").to_numpy(float)
    return df.to_numpy(dtype=float), y - y.min(), None


def split(X, y, w=None, test_size=0.25, seed=0):
    """A shuffled train/test split: (Xtr, Xte, ytr, yte, wtr, wte)."""
    idx = np.random.default_rng(seed).permutation(len(y))
    cut = int(round(len(y) * (1 - test_size)))
    tr, te = idx[:cut], idx[cut:]
    w = np.ones(len(y)) if w is None else w
    return X[tr], X[te], y[tr], y[te], w[tr], w[te]
