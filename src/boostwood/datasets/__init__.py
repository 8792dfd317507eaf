"""Small demo datasets bundled with boostwood (numpy only).

``load_agaricus`` returns the UCI Mushroom data as one-hot encoded in the
XGBoost demo (Schlimmer 1987; 6513 training and 1611 test rows, 126 binary
features, label 1 = poisonous). The files are the LibSVM text of that demo,
gzipped.
"""
import gzip
from importlib import resources

import numpy as np

__all__ = ["load_agaricus", "read_libsvm"]


def read_libsvm(lines, n_features=None, zero_based=False, source="<libsvm>"):
    """Parse LibSVM / SVMlight text into a dense float64 matrix and labels.

    Absent entries are 0. Raises ValueError naming the line of a malformed entry.
    """
    labels, rows = [], []
    for lineno, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        try:
            labels.append(float(parts[0]))
            entries = []
            for item in parts[1:]:
                if item.startswith("qid:"):
                    continue
                key, value = item.split(":", 1)
                entries.append((int(key) - (0 if zero_based else 1), float(value)))
        except ValueError:
            raise ValueError(f"{source}:{lineno}: malformed LibSVM line: {line[:80]!r}") from None
        if any(k < 0 for k, _ in entries):
            raise ValueError(f"{source}:{lineno}: feature index below the first index")
        rows.append(entries)
    width = max((k + 1 for r in rows for k, _ in r), default=0)
    n_features = width if n_features is None else n_features
    if width > n_features:
        raise ValueError(f"{source}: feature index {width} exceeds n_features={n_features}")
    X = np.zeros((len(rows), n_features))
    for i, entries in enumerate(rows):
        for k, v in entries:
            X[i, k] = v
    return X, np.array(labels)


def _read(name):
    with resources.files(__name__).joinpath("data", name + ".gz").open("rb") as raw:
        with gzip.open(raw, "rt", encoding="ascii") as fh:
            return fh.readlines()


def load_agaricus():
    """The mushroom demo data: ``(X_train, y_train, X_test, y_test, feature_names)``.

    X are dense float64 arrays of 0/1 (126 one-hot features); y are 0/1.
    """
    Xtr, ytr = read_libsvm(_read("agaricus.txt.train"), 126, source="agaricus.txt.train")
    Xte, yte = read_libsvm(_read("agaricus.txt.test"), 126, source="agaricus.txt.test")
    names = [line.split("\t")[1] for line in _read("featmap.txt") if line.strip()]
    return Xtr, ytr, Xte, yte, names
