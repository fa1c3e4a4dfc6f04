"""Per-arm ("disjoint") ridge models: one :class:`~jaxbandits.linalg.RidgeState` per arm.

The disjoint linear model of Li et al. (2010, Sec. 3.1) gives arm ``a`` its own parameter,
``E[r_{t,a} | x_{t,a}] = x_{t,a}^T theta*_a``, and each arm its own ridge statistic
``A_a = reg I + sum_{s: a_s = a} x_s x_s^T``, ``b_a = sum_{s: a_s = a} r_s x_s``. Here the K
statistics are one :class:`~jaxbandits.linalg.RidgeState` whose leaves carry a leading arm axis
(``mean`` ``(K, d)``, ``sqrt_cov`` ``(K, d, d)`` with ``S_a S_a^T = A_a^{-1}``, ``logdet`` and
``count`` ``(K,)``), so every per-arm quantity is the single-model function ``vmap``-ed over arms:

* scores and widths read all K models, O(K d^2) per round;
* an observation updates only the played arm's model by the rank-one square-root update
  (:func:`~jaxbandits.linalg.ridge_update`, O(d^2)): gathered, updated and scattered back.

This is ridge regression on the block features ``e_a (x) x`` in R^{K d} (the Gram matrix is then
block diagonal, one block per arm) at O(K d^2) memory and time instead of O((K d)^2).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbandits.linalg.ridge import RidgeState, ridge_init, ridge_sq_widths, ridge_update

__all__ = [
    "disjoint_init",
    "disjoint_means",
    "disjoint_sample",
    "disjoint_sq_widths",
    "disjoint_update",
]


def disjoint_init(num_arms: int, dim: int, reg: jax.Array | float, dtype=None) -> RidgeState:
    """K prior states ``A_a = reg I`` stacked on a leading arm axis (``mean`` ``(K, d)``)."""
    one = ridge_init(dim, reg, dtype)
    return jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (num_arms, *leaf.shape)), one)


def disjoint_update(state: RidgeState, arm: jax.Array, x: jax.Array, y: jax.Array) -> RidgeState:
    """Adds ``(x, y)`` (``x`` ``(d,)``) to arm ``arm``'s model only; O(d^2)."""
    one = jax.tree.map(lambda leaf: leaf[arm], state)
    new = ridge_update(one, x, y)
    return jax.tree.map(lambda leaf, value: leaf.at[arm].set(value), state, new)


def disjoint_means(theta: jax.Array, arms: jax.Array) -> jax.Array:
    """``(K,)`` the per-arm values ``x_a^T theta_a`` of arms ``(K, d)`` (row ``a`` is ``x_{t,a}``)
    for parameters ``theta`` ``(K, d)`` (the ridge means ``state.mean`` or posterior draws)."""
    return jnp.sum(arms * theta, axis=-1)


def disjoint_sq_widths(state: RidgeState, arms: jax.Array) -> jax.Array:
    """``(K,)`` the squared widths ``x_a^T A_a^{-1} x_a``; O(K d^2)."""
    return jax.vmap(lambda s, x: ridge_sq_widths(s, x[None])[0])(state, arms)


def disjoint_sample(state: RidgeState, key: jax.Array, scale: jax.Array | float = 1.0
                    ) -> jax.Array:
    """``(K, d)`` independent draws ``theta_a ~ N(mean_a, scale^2 A_a^{-1})``."""
    z = jax.random.normal(key, state.mean.shape, state.mean.dtype)
    return state.mean + scale * jnp.einsum("kij,kj->ki", state.sqrt_cov, z)
