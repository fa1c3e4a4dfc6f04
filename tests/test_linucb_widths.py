"""LinUCB's incremental widths on a fixed arm set (Sherman-Morrison on the squared widths).

On a fixed arm set (``spec.fixed_arms``) LinUCB keeps ``w_k = x_k^T V_t^{-1} x_k`` and downdates
it in O(K d + d^2) per round instead of recomputing it in O(K d^2). float64: the kept widths equal
the recomputed ones and the agent plays the same actions as the exact path. float32: the relative
error stays small over 2e4 rounds of adaptive play.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents import LinUCBState
from jaxbandits.envs.linear import LinearEnv
from jaxbandits.linalg import ridge_sq_widths


class _NotFixedLinear(LinearEnv):
    """``linear`` that does not promise a fixed arm set: LinUCB takes its exact path."""

    def spec(self):
        return super().spec().replace(fixed_arms=False)


def _play(env, agent, horizon: int, seed: int = 0):
    """One run of ``agent`` on ``env`` for ``horizon`` rounds: the final state and the arms."""

    def run(key):
        key_env, key_agent, key_noise = jax.random.split(key, 3)
        env_state = env.init(key_env)
        state = agent.init(key_agent, env.spec())

        def body(t, state):
            context = env.observe(key_env, env_state, t)
            action, state = agent.act(state, key_agent, context)
            feedback = env.feedback(jax.random.fold_in(key_noise, t), env_state, context, action)
            return agent.update(state, key_agent, context, action, feedback)

        return jax.lax.fori_loop(0, horizon, body, state), env_state.arms

    return jax.jit(run)(jax.random.key(seed))


def test_fixed_arm_environments_say_so():
    assert jb.make_env("linear").spec().fixed_arms
    assert not jb.make_env("linear", fresh_arms=True).spec().fixed_arms
    assert not jb.make_env("linear-varying").spec().fixed_arms  # K of a pool per round
    for name in ("russo", "freq-russo", "logistic", "distance", "quadratic"):
        assert jb.make_env(name).spec().fixed_arms, name
    assert not jb.make_env("linear-sphere").spec().fixed_arms
    agent = jb.make_agent("lin-ucb")
    assert isinstance(agent.init(jax.random.key(0), jb.make_env("linear").spec()), LinUCBState)
    assert isinstance(agent.init(jax.random.key(0), _NotFixedLinear().spec()), jb.linalg.RidgeState)


@pytest.mark.usefixtures("x64")
def test_incremental_widths_equal_recomputed_float64():
    env = jb.make_env("linear", dim=6, num_arms=9)
    agent = jb.make_agent("lin-ucb", reg=0.7, explore_scale=0.3)
    state, arms = _play(env, agent, 300)
    assert state.sq_widths.dtype == jnp.float64 and int(state.ridge.count) == 300
    np.testing.assert_allclose(state.sq_widths, ridge_sq_widths(state.ridge, arms),
                               rtol=1e-10, atol=1e-14)


@pytest.mark.usefixtures("x64")
def test_simulate_regret_unchanged_by_fixed_arms_float64():
    """Same actions, so the same per-round regret, as the exact path (record every step)."""
    agent = jb.make_agent("lin-ucb", explore_scale=0.5)
    kwargs = dict(horizon=400, num_runs=6, record="all", progress=False)
    fast = jb.simulate(jb.make_env("linear", dim=5, num_arms=8), agent, 0, **kwargs)
    exact = jb.simulate(_NotFixedLinear(dim=5, num_arms=8), agent, 0, **kwargs)
    np.testing.assert_array_equal(np.diff(fast.cumulative_regret, axis=1) > 0,
                                  np.diff(exact.cumulative_regret, axis=1) > 0)
    np.testing.assert_allclose(fast.cumulative_regret, exact.cumulative_regret,
                               rtol=0, atol=1e-9)


def test_incremental_widths_float32_over_2e4_adaptive_rounds():
    """Adaptive play concentrates pulls on a few arms, whose widths shrink to ~1/n: the
    downdate subtracts from O(1) values, so the error is relative to the prior width."""
    env = jb.make_env("linear")  # d = 20, K = 50
    agent = jb.make_agent("lin-ucb", explore_scale=0.3)
    state, arms = _play(env, agent, 20_000, seed=1)
    assert state.sq_widths.dtype == jnp.float32
    kept = np.asarray(state.sq_widths, np.float64)
    sqrt_cov = np.asarray(state.ridge.sqrt_cov, np.float64)  # recomputed in float64
    exact = np.sum((np.asarray(arms, np.float64) @ sqrt_cov) ** 2, axis=-1)
    assert np.all(kept >= 0)
    rel = np.max(np.abs(kept - exact) / exact)
    assert rel < 2e-2, rel  # measured: see the report
