"""Score-function gradients (Boutilier et al. 2020, Eq. 5) for agents that draw their arm from an
explicit distribution."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

from jaxbandits.core import Agent, Env, float_dtype
from jaxbandits.differentiable.common import (
    BASELINES,
    GradientEstimate,
    check_args,
    check_chunk,
    combine,
    leaf_values,
    learnable_leaves,
    mean_estimate,
    remat_rollout,
    run_streams,
)
from jaxbandits.runner import (
    as_arrays,
    as_key,
)

__all__ = [
    "policy_gradient",
]

PyTree = Any


# ------------------------------------------------------------------------------------------------
# Score-function gradients.


def policy_gradient(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    horizon: int,
    num_runs: int,
    *,
    baseline: str = "self-play",
    wrt: str | Sequence[str] | None = None,
    chunk_size: int | None = None,
) -> GradientEstimate:
    """The score-function gradient of the expected cumulative reward, ``E[sum_t r_t]``, with
    respect to ``agent``'s learnable leaves (Boutilier et al. 2020, Eq. 5).

    One jitted program plays ``num_runs`` runs (twice each under ``"self-play"``) and returns
    the mean of the per-run gradients ``sum_t (r_t - b_t) grad L_t`` with their standard error.

    Args:
      env: a simulated environment with a finite arm set (``"index"`` actions).
      agent: an agent with ``log_prob`` (``soft-elim``, ``softmax``, ``neural-policy``, or any
        agent written with :class:`~jaxbandits.agents.select.SoftmaxPolicy`).
      key: a JAX key or int seed; run ``r`` meets ``jb.simulate``'s instance ``r``.
      horizon: T.
      num_runs: instances averaged over (at least 2 for ``"mean"``).
      baseline: ``"self-play"`` (the same policy played again on the same instance, with its
        own action and reward noise: the paper's), ``"mean"`` (the round's mean reward over the
        other runs) or ``"none"``. None changes the mean; the baselines reduce the variance.
      wrt: leaf names (dotted for wrapped agents) to differentiate; default all float leaves.
      chunk_size: rounds per rematerialised chunk (default about ``sqrt(T)``).

    Returns:
      A :class:`GradientEstimate`.

    Example::

        env = jb.make_env("bernoulli", num_arms=2)
        g = jb.policy_gradient(env, jb.make_agent("soft-elim"), 0, 100, 1000)
        g.grad.explore_scale, g.grad_se.explore_scale
    """
    what = "policy_gradient"
    horizon, num_runs = check_args(env, agent, horizon, num_runs, what, "log_prob")
    chunk_size = check_chunk(chunk_size, what)
    if baseline not in BASELINES:
        raise ValueError(f"{what}: baseline must be one of {BASELINES}, got {baseline!r}")
    if baseline == "mean" and num_runs < 2:
        raise ValueError(f"{what}: the 'mean' baseline needs num_runs >= 2")
    names = tuple(learnable_leaves(agent, wrt))
    grads, values, regrets = _score_program(
        as_arrays(env), as_arrays(agent.for_gradients()), leaf_values(agent, names),
        as_key(key), names=names, horizon=horizon, num_runs=num_runs, baseline=baseline,
        chunk_size=chunk_size)
    return mean_estimate(agent, names, grads, values, regrets)


@functools.partial(jax.jit, static_argnames=("names", "horizon", "num_runs", "baseline",
                                             "chunk_size"))
def _score_program(env, agent, params, key, *, names, horizon, num_runs, baseline, chunk_size):
    """Per-run gradients (over instances), cumulative rewards and regrets."""
    twins = 2 if baseline == "self-play" else 1
    size = num_runs * twins
    env_keys, agent_keys, keys = run_streams(key, num_runs, twins)
    spec = env.spec()
    dtype = float_dtype()

    def play(agent, env_state, state, keys, t):
        k = keys.at(t)
        context = env.observe(k.env_observe, env_state, t)
        action, acted = agent.act(state, k.agent_act, context)
        action = jax.lax.stop_gradient(action)
        log_prob = agent.log_prob(state, k.agent_act, context, action)
        feedback = env.feedback(k.env_feedback, env_state, context, action)
        state = agent.update(acted, k.agent_update, context, action, feedback)
        reward = jax.lax.stop_gradient(jnp.asarray(feedback.reward, dtype))
        return state, log_prob.astype(dtype), reward, jnp.asarray(feedback.regret, dtype)

    def total(tiled):
        # every run has its own copy of the parameters, so the gradient of the sum of the runs'
        # surrogates holds the per-run gradients (the baselines are constants)
        agents = jax.vmap(lambda p: combine(agent, names, p))(tiled)
        env_states = jax.vmap(env.init)(env_keys)
        states = jax.vmap(lambda a, k: a.init(k, spec))(agents, agent_keys)
        zero = jnp.zeros((size,), dtype)

        def body(carry, t):
            states, cum_log, surrogate, rewards, regrets = carry
            states, log_prob, reward, regret = jax.vmap(play, (0, 0, 0, 0, None))(
                agents, env_states, states, keys, t)
            cum_log = cum_log + log_prob
            surrogate = surrogate + (reward - _baseline(reward, baseline)) * cum_log
            return states, cum_log, surrogate, rewards + reward, regrets + regret

        carry = (states, zero, zero, zero, zero)
        _, _, surrogate, rewards, regrets = remat_rollout(body, carry, horizon, chunk_size)
        return jnp.sum(surrogate), (rewards, regrets)

    tiled = [jnp.broadcast_to(p, (size,) + p.shape) for p in params]
    grads, (rewards, regrets) = jax.grad(total, has_aux=True)(tiled)
    if twins == 2:  # one sample per instance: the mean of its two plays
        def per_instance(x):
            return jnp.mean(x.reshape((num_runs, 2) + x.shape[1:]), axis=1)

        grads = [per_instance(g) for g in grads]
        rewards, regrets = per_instance(rewards), per_instance(regrets)
    return grads, rewards, regrets


def _baseline(reward: jax.Array, baseline: str) -> jax.Array:
    """The baseline of round ``t`` for every run, from the round's rewards ``(R,)``."""
    if baseline == "none":
        return jnp.zeros_like(reward)
    if baseline == "mean":  # leave-one-out: independent of the run's own actions
        n = reward.shape[0]
        return (jnp.sum(reward) - reward) / (n - 1)
    return reward.reshape(-1, 2)[:, ::-1].reshape(-1)  # self-play: the twin's reward
