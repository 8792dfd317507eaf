"""Newton split gain and leaf weights: the formulas every split scan scores with.

Notation of Chen & Guestrin (2016), "XGBoost: A Scalable Tree Boosting
System": ``G``, ``H`` are sums of first and second derivatives over a node's
rows, ``lambda`` the L2 penalty, ``alpha`` the L1 penalty, ``gamma`` the cost
of one more leaf.
"""
import numpy as np
from numba import njit

from .._config import lock_cache_writes


#: Relative margin by which a candidate split must beat the best one so far.
#: Gains equal up to rounding count as ties and go to the lower feature / bin.
#: Gradients are float32 (relative rounding ~6e-8), so gains closer than ~10
#: float32 ulps are indistinguishable; 1e-6 keeps a model independent of the
#: row order and of weights-versus-repeated-rows.
TIE_RTOL = 1e-6

#: Named positions of the split-settings array that the scan kernels take instead
#: of nine scalar arguments (see :func:`split_settings`).
S_LAMBDA, S_ALPHA, S_MAX_DELTA_STEP, S_GAMMA, S_MIN_CHILD_WEIGHT, S_MIN_DATA_IN_LEAF, \
    S_G_UNIT, S_H_UNIT, S_ROW_MAX = range(9)
N_SETTINGS = 9

def split_settings(reg_lambda, reg_alpha, max_delta_step, gamma, min_child_weight,
                   min_data_in_leaf, units=(1.0, 1.0), row_max=0.0):
    """The float64 settings array of the scan kernels.

    ``units`` are the values of one fixed-point unit of the gradient and of the
    hessian sums (see :mod:`boostwood.tree.stats`); (1, 1) for float statistics.
    ``min_data_in_leaf`` below 1 counts as 1 (a child needs a row). ``row_max`` bounds
    the magnitude of one row's fixed-point gradient and hessian (``2**31`` for int32
    rows), so that a histogram cell of ``c`` rows is at most ``c * row_max``; 0 states
    no bound (see :func:`_small_sums`).
    """
    s = np.empty(N_SETTINGS)
    s[S_LAMBDA], s[S_ALPHA], s[S_MAX_DELTA_STEP] = reg_lambda, reg_alpha, max_delta_step
    s[S_GAMMA], s[S_MIN_CHILD_WEIGHT] = gamma, min_child_weight
    s[S_MIN_DATA_IN_LEAF] = max(min_data_in_leaf, 1)
    s[S_G_UNIT], s[S_H_UNIT] = units[0], units[1]
    s[S_ROW_MAX] = row_max
    return s


@njit(cache=True, nogil=True, inline="always")
def threshold_l1(G, alpha):
    """Soft-thresholding T_alpha(G) = sign(G) max(|G| - alpha, 0) (the L1 penalty's prox)."""
    if G > alpha:
        return G - alpha
    if G < -alpha:
        return G + alpha
    return 0.0


@njit(cache=True, nogil=True)
def leaf_weight(G, H, lam, alpha, max_delta_step):
    """Optimal leaf value w* = -T_alpha(G) / (H + lambda)  (Chen & Guestrin eq. 5).

    With ``max_delta_step > 0`` the step is clipped to [-max_delta_step,
    max_delta_step] (XGBoost's safeguard for very small hessians).
    """
    denom = H + lam
    if denom <= 0.0:
        return 0.0
    w = -threshold_l1(G, alpha) / denom
    if max_delta_step > 0.0:
        if w > max_delta_step:
            w = max_delta_step
        elif w < -max_delta_step:
            w = -max_delta_step
    return w


@njit(cache=True, nogil=True)
def leaf_values(G, H, learning_rate, lam, alpha, max_delta_step):
    """``learning_rate * leaf_weight(G[i], H[i], ...)`` of every node, as one array."""
    out = np.empty(G.shape[0])
    for i in range(G.shape[0]):
        out[i] = learning_rate * leaf_weight(G[i], H[i], lam, alpha, max_delta_step)
    return out


@njit(cache=True, nogil=True)
def leaf_score(G, H, lam, alpha, max_delta_step):
    """Score of a leaf: -2 min_w [G w + (H + lambda) w^2 / 2 + alpha |w|].

    Unclipped this is T_alpha(G)^2 / (H + lambda), the term of eq. 6/7 of
    Chen & Guestrin; with a clipped weight it is evaluated at that weight.
    """
    denom = H + lam
    if denom <= 0.0:
        return 0.0
    if max_delta_step <= 0.0:
        t = threshold_l1(G, alpha)
        return t * t / denom
    w = leaf_weight(G, H, lam, alpha, max_delta_step)
    return -(2.0 * (G * w + alpha * abs(w)) + denom * w * w)


@njit(cache=True, nogil=True)
def split_gain(GL, HL, GR, HR, lam, alpha, max_delta_step, gamma):
    """Gain of a split (Chen & Guestrin eq. 7)::

        gain = 1/2 [ G_L^2/(H_L+lambda) + G_R^2/(H_R+lambda) - (G_L+G_R)^2/(H_L+H_R+lambda) ] - gamma
    """
    return 0.5 * (leaf_score(GL, HL, lam, alpha, max_delta_step)
                  + leaf_score(GR, HR, lam, alpha, max_delta_step)
                  - leaf_score(GL + GR, HL + HR, lam, alpha, max_delta_step)) - gamma


@njit(cache=True, nogil=True, inline="always")
def _children_score(gl, hl, gr, hr, lam, alpha, max_delta_step, plain):
    """leaf_score(left) + leaf_score(right).

    Without L1 and step clipping (``plain``) the two fractions are summed over
    one common denominator, G_L^2/d_L + G_R^2/d_R = (G_L^2 d_R + G_R^2 d_L) / (d_L d_R):
    one division per candidate instead of two, which halves the cost of the scan.
    """
    if plain:
        dl = hl + lam
        dr = hr + lam
        if dl > 0.0 and dr > 0.0:
            return (gl * gl * dr + gr * gr * dl) / (dl * dr)
    return (leaf_score(gl, hl, lam, alpha, max_delta_step)
            + leaf_score(gr, hr, lam, alpha, max_delta_step))


lock_cache_writes(globals())  # numba's cache, safe when processes compile at once
