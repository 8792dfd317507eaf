"""Layer 2: input validation, binning and the Dataset."""
from .binning import BinMapper
from .dataset import Dataset, default_feature_names
from .rowinfo import RowInfo
from .validation import as_feature_matrix

__all__ = ["BinMapper", "Dataset", "RowInfo", "as_feature_matrix"]
