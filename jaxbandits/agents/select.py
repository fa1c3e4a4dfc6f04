"""Arm-selection rules shared by every agent: one place for argmax, projections and features."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbandits.core import Context, distinct_indices

__all__ = [
    "best_action",
    "chosen_features",
    "greedy_index",
    "num_active_members",
    "uniform_action",
]


def greedy_index(scores: jax.Array) -> jax.Array:
    """``argmax_k scores_k`` as int32 (first maximiser; a NaN counts as the maximum, as in
    ``jnp.argmax``); ``scores`` of shape ``(K,)``.

    Computed as the first index attaining ``max(scores)``: two plain reductions, which XLA on CPU
    handles far better than ``jnp.argmax``'s (value, index) reduction under ``vmap`` (whole
    lin-ts / ensemble-pp runs at 1,000 runs measured 1.3-1.9x faster).
    """
    best = jnp.max(scores, axis=-1, keepdims=True)
    hits = (scores == best) | jnp.isnan(scores)
    index = jnp.arange(scores.shape[-1], dtype=jnp.int32)
    return jnp.min(jnp.where(hits, index, scores.shape[-1]), axis=-1)


def num_active_members(active_members, ensemble_size: int) -> jax.Array:
    """How many of the ``ensemble_size`` members ``j_t`` is drawn from: ``active_members``
    clipped to ``ensemble_size``, or all of them when it is 0 (the anytime wrapper sets it per
    epoch); int32, traceable."""
    active = jnp.asarray(active_members, jnp.int32)
    return jnp.where(active > 0, jnp.minimum(active, ensemble_size), ensemble_size)


def best_action(context: Context, theta: jax.Array) -> jax.Array:
    """The action maximising ``<x, theta>``: an arm index, or ``theta / ||theta||`` (sphere)."""
    if context.arms is None:  # ties (theta = 0) go to the first basis vector, as argmax does
        norm = jnp.linalg.norm(theta)
        first = jnp.zeros_like(theta).at[0].set(1.0)
        return jnp.where(norm > 0, theta / jnp.where(norm > 0, norm, 1.0), first)
    return greedy_index(context.arms @ theta)


def uniform_action(key: jax.Array, context: Context, dim: int, *, pair: bool = False) -> jax.Array:
    """A uniformly random action: a uniform direction on the unit sphere when the context has no
    arms, else an arm index ``()`` int32, or with ``pair`` (static; dueling, ``"pair"`` actions)
    an ordered pair ``(2,)`` int32 of two distinct arms, uniform over the ``K (K - 1)`` pairs."""
    if context.arms is None:
        g = jax.random.normal(key, (dim,))
        return g / jnp.linalg.norm(g)
    if pair:
        return distinct_indices(key, context.arms.shape[0], 2)
    return jax.random.randint(key, (), 0, context.arms.shape[0], jnp.int32)


def chosen_features(context: Context, action: jax.Array) -> jax.Array:
    """The feature vector ``(d,)`` of the played action."""
    if context.arms is None:
        return action
    return context.arms[action]
