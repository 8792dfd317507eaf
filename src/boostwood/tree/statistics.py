"""What the nodes of a gradient tree sum, when one may split and what a leaf is worth.

A :class:`~boostwood.tree.grower.TreeGrower` composes a splitter (where a node's
candidate splits come from, :mod:`.splitters`) with the statistics of its trees:

* :class:`GradientStatistics` -- boosting: fixed-point sums ``(G, H, count)`` of the
  rows' gradients and hessians (:mod:`.stats`), the compiled policy's ``can_split``,
  Newton leaf values;
* :class:`boostwood.tree.criterion.CriterionStatistics` -- decision trees: per-class
  (or per-target) sums and weights, the impurity rules of the criterion, mean values.

The grower asks its statistics for the per-tree settings, the node table, the root's
totals (when no histogram holds them), whether a node may split and the finished
tree, and never branches on which statistics it has.
"""
import numpy as np

from .._config import HIST_DTYPE
from .._kernels.expand import can_split
from .._kernels.histogram import sum_gradients
from .._kernels.nodes import ND_DEPTH
from .._kernels.split import leaf_values, split_settings
from .nodes import NodeTable
from .stats import FixedPointStats


class GradientStatistics:
    """Fixed-point gradient statistics of ``n_rows`` rows, summed across shards by
    ``reducer`` (:attr:`fixed`: the :class:`~.stats.FixedPointStats` that quantizes)."""

    #: ``colsample_bynode`` draws each node's features from the node's key (shards and
    #: threads draw alike, see :func:`boostwood._kernels.expand.node_features`).
    keyed_node_draws = True

    def __init__(self, n_rows, reducer):
        self.fixed = FixedPointStats(n_rows, reducer)
        self.reducer = reducer

    def begin_tree(self, gh, params):
        """(fixed-point rows, split settings, one hessian unit) of a tree grown on ``gh``:
        float rows are quantized here, integer ones were quantized by :attr:`fixed`."""
        if gh is not None and gh.dtype.kind == "f":
            gh = self.fixed.quantize(gh)
        p, units = params, self.fixed.units
        # a fixed-point row is an int32 (int16 quantized): its magnitude bounds the sums
        # (the scan converts small ones to float by a shorter route)
        row_max = 2.0 ** (8 * gh.itemsize - 1) if gh is not None and gh.dtype.kind == "i" \
            else 0.0
        settings = split_settings(p.reg_lambda, p.reg_alpha, p.max_delta_step, p.gamma,
                                  p.min_child_weight, p.min_data_in_leaf, units, row_max)
        return gh, settings, float(units[1])

    @staticmethod
    def new_table(params, n_rows):
        # a first guess at the size (the table grows when full): never more rows than
        # a tree of the data's rows can have
        p = params
        cap = 2 * p.max_leaves if p.max_leaves > 0 else 2 ** min(max(p.max_depth, 1) + 1, 12)
        return NodeTable(3, HIST_DTYPE, min(cap, 2 * n_rows, 1 << 14))

    def root_totals(self, gh, buf, n):
        """(G, H, count) of the root's ``n`` rows (``buf[0, :n]``), summed across shards."""
        totals = np.empty(3, dtype=HIST_DTYPE)
        sum_gradients(gh, buf[0], 0, n, totals)
        self.reducer.allreduce_sum(totals)
        return totals

    @staticmethod
    def splittable(table, node, policy):
        """May ``node`` be split? The compiled loop's rule (``can_split``)."""
        _, hess, count = table.stats[node].tolist()
        return can_split(policy, int(table.ints[ND_DEPTH, node]), count, hess)

    def finish(self, table, params):
        """(Tree, leaf segments (sides, starts, counts, values)); values include the
        learning rate."""
        p = params
        stats = table.stats[:table.n]
        ug, uh = (float(u) for u in self.fixed.units)
        G = ug * stats[:, 0].astype(np.float64)
        H = uh * stats[:, 1].astype(np.float64)
        value = leaf_values(G, H, float(p.learning_rate), float(p.reg_lambda),
                            float(p.reg_alpha), float(p.max_delta_step))
        # thresholds: raw values where the split finder knows them (exact), else
        # filled in from the bin edges by the caller
        tree = table.to_tree(value, H, stats[:, 2].copy())
        (sides, starts, counts), leaves = table.leaf_segments()
        return tree, (sides, starts, counts, value[leaves])
