"""The finite-arm feedback rule and the pool observation, written once for every environment.

A finite-arm environment knows each round's expected rewards ``means`` ``(K,)``; playing arm
``a`` returns the reward ``y ~ P(means[a])`` (Gaussian noise around the mean, or a Bernoulli
draw) and the regret ``max_k means[k] - means[a]`` (:func:`finite_arm_feedback`). A pool
environment shows each round K distinct arms of a fixed pool of N, drawn uniformly without
replacement, and remembers their pool indices (:func:`pool_context`, a :class:`VaryingContext`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.core import Context, Feedback, distinct_indices

__all__ = [
    "REWARD_KINDS",
    "VaryingContext",
    "finite_arm_feedback",
    "noisy_reward",
    "pool_context",
]

#: the observation models of :func:`noisy_reward`
REWARD_KINDS: tuple[str, ...] = ("gaussian", "bernoulli")


@struct.dataclass
class VaryingContext(Context):
    """A round of a pool environment: ``arms`` ``(K, d)`` and their pool indices ``arm_ids``."""

    arm_ids: jax.Array | None = None


def noisy_reward(key: jax.Array, mean: jax.Array, reward_kind: str = "gaussian",
                 noise_std=1.0) -> jax.Array:
    """``()`` a reward with mean ``mean``: ``mean + noise_std N(0, 1)`` (``"gaussian"``) or
    ``Bernoulli(mean)`` (``"bernoulli"``, ``mean`` in [0, 1]), in ``mean``'s dtype."""
    if reward_kind == "bernoulli":
        return jax.random.bernoulli(key, mean).astype(mean.dtype)
    return mean + noise_std * jax.random.normal(key, (), mean.dtype)


def finite_arm_feedback(
    key: jax.Array,
    means: jax.Array,
    action: jax.Array,
    reward_kind: str = "gaussian",
    noise_std=1.0,
    *,
    draw_reward: Callable[[jax.Array, jax.Array], jax.Array] | None = None,
) -> Feedback:
    """One round's :class:`~jaxbandits.Feedback` on a finite arm set.

    Args:
      key: the feedback key (the reward's draw).
      means: ``(K,)`` the expected reward of every arm this round.
      action: ``()`` int, the arm played.
      reward_kind, noise_std: the observation model (:func:`noisy_reward`).
      draw_reward: ``draw_reward(key, mean)``, a reward draw of the environment's own in place
        of ``reward_kind``'s.

    Returns:
      ``Feedback(reward=y, regret=max(means) - means[action])``.

    Example::

        feedback = finite_arm_feedback(key, arms @ theta, action, noise_std=0.1)
    """
    mean = means[action]
    if draw_reward is None:
        reward = noisy_reward(key, mean, reward_kind, noise_std)
    else:
        reward = draw_reward(key, mean)
    return Feedback(reward=reward, regret=jnp.max(means) - mean)


def pool_context(key: jax.Array, pool: jax.Array, num_arms: int) -> VaryingContext:
    """``num_arms`` distinct rows of ``pool`` ``(N, d)``, uniformly without replacement: the
    round's ``arms`` ``(K, d)`` with their pool indices ``arm_ids`` ``(K,)``."""
    arm_ids = distinct_indices(key, pool.shape[0], num_arms)
    return VaryingContext(arms=pool[arm_ids], arm_ids=arm_ids)
