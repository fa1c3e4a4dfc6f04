"""The finite-arm feedback rule and the pool observation (``jaxbandits.envs.base``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb
from jaxbandits.envs.base import finite_arm_feedback, noisy_reward, pool_context


def test_feedback_is_the_reward_draw_and_the_gap_to_the_best_arm():
    means = jnp.array([0.2, 0.9, 0.5])
    key = jax.random.key(3)
    gauss = finite_arm_feedback(key, means, jnp.asarray(2), noise_std=0.1)
    assert float(gauss.regret) == float(jnp.float32(0.9) - jnp.float32(0.5))
    assert float(gauss.reward) == float(0.5 + 0.1 * jax.random.normal(key, (), means.dtype))
    coin = finite_arm_feedback(key, means, jnp.asarray(1), "bernoulli")
    assert float(coin.regret) == 0.0 and float(coin.reward) in (0.0, 1.0)
    assert float(coin.reward) == float(noisy_reward(key, means[1], "bernoulli"))
    own = finite_arm_feedback(key, means, jnp.asarray(0), draw_reward=lambda k, m: 2 * m)
    assert float(own.reward) == float(jnp.float32(0.4))


def test_pool_context_offers_distinct_pool_rows_with_their_ids():
    pool = jnp.arange(20.0).reshape(10, 2)
    context = pool_context(jax.random.key(0), pool, 4)
    ids = np.asarray(context.arm_ids)
    assert len(set(ids.tolist())) == 4 and ids.max() < 10
    np.testing.assert_array_equal(context.arms, pool[ids])
    assert jb.envs.VaryingContext is type(context)
