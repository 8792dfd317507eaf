"""Tree: one fitted regression tree as flat node arrays, with no training state."""
import numpy as np

from .._config import NODE_DTYPE

_INT_FIELDS = ("feature", "left", "right")
_FLOAT_FIELDS = ("threshold", "value", "gain", "cover", "count")


class Tree:
    """A binary tree stored as parallel arrays indexed by node id (root = 0).

    Attributes
    ----------
    feature : ndarray of shape (n_nodes,), int32; -1 marks a leaf
    threshold : ndarray, float64; rows with ``x <= threshold`` go left
    threshold_bin : ndarray, int32; the same split on binned data (training only, not saved)
    left, right : ndarray, int32; child node ids (-1 for leaves)
    default_left : ndarray, uint8; where NaN goes
    value : ndarray, float64; node output, learning rate included (used at leaves)
    gain : ndarray, float64; split gain (eq. 7 of Chen & Guestrin), 0 at leaves
    cover : ndarray, float64; sum of hessians of the node's training rows
    count : ndarray, float64; number of training rows of the node
    """

    def __init__(self, feature, threshold, left, right, default_left, value,
                 gain, cover, count, threshold_bin=None):
        self.feature = np.asarray(feature, dtype=NODE_DTYPE)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=NODE_DTYPE)
        self.right = np.asarray(right, dtype=NODE_DTYPE)
        self.default_left = np.asarray(default_left, dtype=np.uint8)
        self.value = np.asarray(value, dtype=np.float64)
        self.gain = np.asarray(gain, dtype=np.float64)
        self.cover = np.asarray(cover, dtype=np.float64)
        self.count = np.asarray(count, dtype=np.float64)
        self.threshold_bin = (None if threshold_bin is None
                              else np.asarray(threshold_bin, dtype=NODE_DTYPE))

    @property
    def n_nodes(self):
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.feature < 0))

    def is_leaf(self):
        return self.feature < 0

    def depth(self):
        """Depth of the deepest leaf (a single leaf has depth 0)."""
        depth = np.zeros(self.n_nodes, dtype=np.int64)
        for node in range(self.n_nodes):  # children always have larger ids
            if self.feature[node] >= 0:
                depth[self.left[node]] = depth[node] + 1
                depth[self.right[node]] = depth[node] + 1
        return int(depth.max())

    def to_dict(self):
        """JSON-ready dict of the node arrays (see docs/model-format.md)."""
        d = {k: getattr(self, k).tolist() for k in _INT_FIELDS + _FLOAT_FIELDS}
        d["default_left"] = self.default_left.astype(int).tolist()
        return d

    @classmethod
    def from_dict(cls, d, n_features):
        """Rebuild a tree from :meth:`to_dict` output, checking that it is a valid tree.

        Raises ValueError on missing fields, mismatched lengths, child ids out of
        range, nodes reached twice or never (cycles, shared subtrees), features
        out of range, or non-finite thresholds and values.
        """
        try:
            arrays = {k: np.asarray(d[k], dtype=np.float64) for k in
                      _INT_FIELDS + _FLOAT_FIELDS + ("default_left",)}
        except KeyError as exc:
            raise ValueError(f"tree is missing the field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"tree has a malformed array: {exc}") from None
        n = arrays["feature"].shape
        if len(n) != 1 or n[0] == 0 or any(a.shape != n for a in arrays.values()):
            raise ValueError("tree arrays must be non-empty, 1-D and of equal length")
        for k in _INT_FIELDS + ("default_left",):
            a = arrays[k]
            if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
                raise ValueError(f"tree field {k!r} must hold integers")
        tree = cls(*(arrays[k] for k in ("feature", "threshold", "left", "right",
                                          "default_left", "value", "gain", "cover", "count")))
        tree.validate(n_features)
        return tree

    def validate(self, n_features):
        n = self.n_nodes
        split = self.feature >= 0
        if np.any(self.feature >= n_features) or np.any(self.feature < -1):
            raise ValueError("tree has a split on a feature out of range")
        if not np.all(np.isfinite(self.value)):
            raise ValueError("tree has non-finite leaf values")
        if np.any(np.isnan(self.threshold[split])):
            raise ValueError("tree has NaN thresholds")
        kids = np.concatenate([self.left[split], self.right[split]])
        if np.any(kids <= 0) or np.any(kids >= n):
            raise ValueError("tree has child ids out of range")
        seen = np.zeros(n, dtype=np.int64)
        np.add.at(seen, kids, 1)
        if seen[0] != 0 or np.any(seen[1:] != 1):
            raise ValueError("tree is not a tree: some node is reached twice or never")
        # children must come after their parent, which also rules out cycles
        if np.any(self.left[split] <= np.nonzero(split)[0]) or \
                np.any(self.right[split] <= np.nonzero(split)[0]):
            raise ValueError("tree nodes are not in parent-before-child order")


IMPORTANCE_TYPES = ("split", "gain", "cover", "total_gain", "total_cover")


def feature_importance(trees, n_features, importance_type="gain"):
    """Importance of each feature over ``trees``, shape (n_features,).

    ``split``: number of splits on the feature; ``total_gain`` / ``total_cover``: sum
    over those splits of the split's gain / of the node's cover (hessian sum, or
    weight for decision trees); ``gain`` / ``cover``: the same per split.
    """
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type must be one of {IMPORTANCE_TYPES}, "
                         f"got {importance_type!r}")
    splits, gain, cover = np.zeros(n_features), np.zeros(n_features), np.zeros(n_features)
    for t in trees:
        s = t.feature >= 0
        np.add.at(splits, t.feature[s], 1.0)
        np.add.at(gain, t.feature[s], t.gain[s])
        np.add.at(cover, t.feature[s], t.cover[s])
    with np.errstate(invalid="ignore", divide="ignore"):
        per_split = {"gain": gain / splits, "cover": cover / splits}
    table = {"split": splits, "total_gain": gain, "total_cover": cover, **per_split}
    return np.nan_to_num(table[importance_type], nan=0.0)
