"""Ridge / Bayesian linear regression with rank-one updates in square-root (Potter) form.

The design matrix is ``V_t = reg * I + sum_{s<=t} x_s x_s^T`` and the ridge estimate is
``mean_t = V_t^{-1} sum_s x_s y_s``. Instead of ``V^{-1}`` the state keeps a square root ``S`` with
``S S^T = V^{-1}``. One observation ``(x, y)`` updates it in O(d^2), with no factorisation::

    s = S^T x,  q = s^T s,  r = sqrt(1 + q)
    gain  = S s / (1 + q)                         (= V_new^{-1} x, the Kalman gain)
    mean <- mean + gain * (y - x^T mean)
    S    <- S - (S s) s^T / (r (r + 1))           (so that S_new S_new^T = V_new^{-1})
    logdet V <- logdet V + log(1 + q)

``S S^T`` stays symmetric positive definite by construction (no re-symmetrisation), and a posterior
sample ``mean + scale * S z`` with ``z ~ N(0, I)`` costs one matrix-vector product. As a Bayesian
linear model with prior ``N(0, noise_std^2 / reg * I)`` and noise ``N(0, noise_std^2)``, the
posterior is ``N(mean, noise_std^2 * S S^T)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import float_dtype

__all__ = [
    "RidgeState",
    "ridge_covariance",
    "ridge_fit",
    "ridge_init",
    "ridge_sample",
    "ridge_sq_widths",
    "ridge_sq_widths_update",
    "ridge_update",
    "ridge_widths",
]


class RidgeState(struct.PyTreeNode):
    """Sufficient statistic of ridge regression in square-root form.

    Attributes:
      mean: ``(d,)`` the ridge estimate ``V^{-1} X^T y``.
      sqrt_cov: ``(d, d)`` a square root ``S`` of ``V^{-1}`` (``S S^T = V^{-1}``).
      logdet: ``()`` ``log det V``, for confidence widths.
      count: ``()`` int32, the number of observations.
    """

    mean: jax.Array
    sqrt_cov: jax.Array
    logdet: jax.Array
    count: jax.Array


def ridge_init(dim: int, reg: jax.Array | float, dtype=None) -> RidgeState:
    """The prior state ``V_0 = reg * I`` (``S = I / sqrt(reg)``, ``mean = 0``)."""
    dtype = dtype or float_dtype()
    reg = jnp.asarray(reg, dtype)
    return RidgeState(
        mean=jnp.zeros((dim,), dtype),
        sqrt_cov=jnp.eye(dim, dtype=dtype) / jnp.sqrt(reg),
        logdet=dim * jnp.log(reg),
        count=jnp.zeros((), jnp.int32),
    )


def ridge_update(state: RidgeState, x: jax.Array, y: jax.Array) -> RidgeState:
    """Adds one observation ``(x, y)`` with ``x`` of shape ``(d,)``; O(d^2)."""
    s = state.sqrt_cov.T @ x
    q = s @ s
    r = jnp.sqrt(1.0 + q)
    s_s = state.sqrt_cov @ s  # V^{-1} x
    mean = state.mean + s_s * ((y - x @ state.mean) / (1.0 + q))
    sqrt_cov = state.sqrt_cov - jnp.outer(s_s, s / (r * (r + 1.0)))
    return RidgeState(
        mean=mean,
        sqrt_cov=sqrt_cov,
        logdet=state.logdet + jnp.log1p(q),
        count=state.count + 1,
    )


def ridge_sample(state: RidgeState, key: jax.Array, scale: jax.Array | float = 1.0) -> jax.Array:
    """Draws ``theta ~ N(mean, scale^2 V^{-1})``, shape ``(d,)``; one matrix-vector product."""
    z = jax.random.normal(key, state.mean.shape, state.mean.dtype)
    return state.mean + scale * (state.sqrt_cov @ z)


def ridge_widths(state: RidgeState, arms: jax.Array) -> jax.Array:
    """``||x_k||_{V^{-1}} = sqrt(x_k^T V^{-1} x_k)`` for arms ``(K, d)``; returns ``(K,)``."""
    return jnp.sqrt(ridge_sq_widths(state, arms))


def ridge_sq_widths(state: RidgeState, arms: jax.Array) -> jax.Array:
    """The squared widths ``x_k^T V^{-1} x_k`` for arms ``(K, d)``; ``(K,)``, O(K d^2)."""
    projected = arms @ state.sqrt_cov
    return jnp.sum(projected * projected, axis=-1)


def ridge_sq_widths_update(
    state: RidgeState, sq_widths: jax.Array, arms: jax.Array, x: jax.Array
) -> jax.Array:
    """The squared widths after adding ``x`` to ``state``, from those before; O(K d + d^2).

    For a fixed arm set ``(K, d)``, Sherman-Morrison on ``V^{-1}`` gives, with ``v = V^{-1} x``
    and ``q = x^T v`` (``state`` is the state *before* adding ``x``)::

        w_k <- w_k - (x_k^T v)^2 / (1 + q)

    instead of recomputing ``w_k = x_k^T V^{-1} x_k`` in O(K d^2). ``v`` and ``q`` are the products
    :func:`ridge_update` forms (XLA computes them once when both are called). Rounding can only
    push a width below its true value, which is >= 0: the result is clipped at 0.
    """
    s = state.sqrt_cov.T @ x
    q = s @ s
    u = arms @ (state.sqrt_cov @ s)  # (K,) x_k^T V^{-1} x
    return jnp.maximum(sq_widths - u * u / (1.0 + q), 0.0)


def ridge_covariance(state: RidgeState) -> jax.Array:
    """``V^{-1} = S S^T``, shape ``(d, d)`` (for diagnostics and tests; O(d^3))."""
    return state.sqrt_cov @ state.sqrt_cov.T


def ridge_fit(
    x: jax.Array, y: jax.Array, group: jax.Array, num_groups: int, reg: jax.Array | float
) -> jax.Array:
    """Closed-form ridge estimates of ``num_groups`` separate models, one per group of rows.

    ``theta_g = (reg I + sum_{i: group_i = g} x_i x_i^T)^{-1} sum_{i: group_i = g} x_i y_i``
    for rows ``x`` ``(n, d)``, targets ``y`` ``(n,)`` and group labels ``group`` ``(n,)`` in
    ``[0, num_groups)`` (e.g. one model per action, the disjoint model of Li et al. 2010);
    returns ``(num_groups, d)``. The Gram matrices are segment sums, O(n d^2), and each is
    solved by a Cholesky factorisation, O(G d^3); a group without rows gets ``theta = 0``.
    The same estimate :func:`ridge_update` reaches one row at a time.
    """
    d = x.shape[-1]
    gram = jax.ops.segment_sum(x[:, :, None] * x[:, None, :], group, num_segments=num_groups)
    moment = jax.ops.segment_sum(x * y[:, None], group, num_segments=num_groups)
    eye = jnp.eye(d, dtype=x.dtype)
    gram = gram + jnp.asarray(reg, x.dtype) * eye

    def solve(a, b):
        return jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a, lower=True), b)

    return jax.vmap(solve)(gram, moment)
