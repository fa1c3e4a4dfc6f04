"""Pathwise gradients through relaxed rollouts, for agents that play ``argmax_k scores_k``."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxbandits.agents.select import greedy_index
from jaxbandits.core import Agent, Env, float_dtype
from jaxbandits.differentiable.common import (
    GradientEstimate,
    check_args,
    check_chunk,
    check_temperature,
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
    "RelaxedRollout",
    "relaxed_gradient",
    "relaxed_rollout",
]

PyTree = Any


# ------------------------------------------------------------------------------------------------
# Pathwise gradients through relaxed rollouts.

#: the stream (folded into the round's act key) of the Gumbel noise of ``relaxation="gumbel"``.
_GUMBEL_STREAM = 7919


class RelaxedRollout(NamedTuple):
    """Per-run results of a relaxed rollout.

    Attributes:
      reward: ``(num_runs,)`` the expected cumulative reward of the soft actions,
        ``sum_t w_t @ mu_t`` (the differentiable objective).
      regret: ``(num_runs,)`` their cumulative regret, ``sum_t max(mu_t) - w_t @ mu_t``.
    """

    reward: jax.Array
    regret: jax.Array


def relaxed_rollout(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    horizon: int,
    num_runs: int,
    *,
    temperature: float | jax.Array = 0.1,
    relaxation: str = "softmax",
    chunk_size: int | None = None,
) -> RelaxedRollout:
    """Plays ``num_runs`` relaxed runs of ``agent`` on ``env``: a differentiable function of the
    agent's float leaves (and of ``temperature``), for ``jax.grad`` / ``jax.jit`` by the user.

    Each round ``w = softmax(scores / temperature)`` (``"softmax"``) is played, or forward the
    one-hot hard arm with ``w``'s gradient backward (``"straight-through"``: the agent's argmax;
    ``"gumbel"``: ``argmax(scores / temperature + g)`` with Gumbel noise ``g`` and ``w`` the
    softmax of the noisy logits): the agent updates on the features ``w @ arms`` and the reward
    ``w @ mu + (y - mu_a)`` (``y`` the hard arm ``a``'s reward; forward exactly ``y`` in the
    straight-through modes).

    Args:
      env: an environment with ``mean_rewards`` (``linear``, ``bernoulli``, ...).
      agent: an agent with ``scores`` whose update takes relaxed actions (``relaxed_updates``:
        greedy, lin-ucb, lin-ts, lin-es, lin-phe, ensemble-pp, ucb1, bernoulli-ts, ...).
      key, horizon, num_runs: as :func:`jaxbandits.simulate` (the same instances and noise).
      temperature: > 0; as it goes to 0 the ``"softmax"`` rollout becomes the hard one.
      relaxation: ``"softmax"``, ``"straight-through"`` or ``"gumbel"``.
      chunk_size: rounds per rematerialised chunk (default about ``sqrt(T)``).

    Example::

        env, agent = jb.make_env("linear", dim=5, num_arms=10), jb.make_agent("lin-ucb")

        def objective(scale):
            out = jb.relaxed_rollout(env, agent.replace(explore_scale=scale), 0, 200, 32)
            return out.reward.mean()

        jax.grad(objective)(1.0)
    """
    what = "relaxed_rollout"
    horizon, num_runs = check_args(env, agent, horizon, num_runs, what, "scores",
                               validate=not _traced(agent))
    chunk_size = check_chunk(chunk_size, what)
    check_temperature(temperature, relaxation, what)
    env_keys, agent_keys, keys = run_streams(as_key(key), num_runs, 1)
    run = functools.partial(_relaxed_run, env, agent.for_gradients(), horizon=horizon,
                            relaxation=relaxation, chunk_size=chunk_size)
    rewards, regrets = jax.vmap(run, (0, 0, 0, None))(env_keys, agent_keys, keys, temperature)
    return RelaxedRollout(reward=rewards, regret=regrets)


def relaxed_gradient(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    horizon: int,
    num_runs: int,
    *,
    temperature: float = 0.1,
    relaxation: str = "softmax",
    wrt: str | Sequence[str] | None = None,
    chunk_size: int | None = None,
) -> GradientEstimate:
    """The pathwise gradient of the relaxed expected cumulative reward (:func:`relaxed_rollout`)
    with respect to ``agent``'s learnable leaves: one jitted program, per-run gradients by
    reverse mode through the whole rollout, their mean and standard error.

    Example::

        g = jb.relaxed_gradient(jb.make_env("linear"), jb.make_agent("lin-ucb"), 0, 500, 64,
                                wrt="explore_scale")
    """
    what = "relaxed_gradient"
    horizon, num_runs = check_args(env, agent, horizon, num_runs, what, "scores")
    chunk_size = check_chunk(chunk_size, what)
    check_temperature(temperature, relaxation, what)
    names = tuple(learnable_leaves(agent, wrt))
    grads, values, regrets = _relaxed_program(
        as_arrays(env), as_arrays(agent.for_gradients()), leaf_values(agent, names), as_key(key),
        jnp.asarray(temperature, float_dtype()), names=names, horizon=horizon,
        num_runs=num_runs, relaxation=relaxation, chunk_size=chunk_size)
    return mean_estimate(agent, names, grads, values, regrets)


@functools.partial(jax.jit, static_argnames=("names", "horizon", "num_runs", "relaxation",
                                             "chunk_size"))
def _relaxed_program(env, agent, params, key, temperature, *, names, horizon, num_runs,
                     relaxation, chunk_size):
    env_keys, agent_keys, keys = run_streams(key, num_runs, 1)

    def per_run(params, env_key, agent_key, keys):
        run = _relaxed_run(env, combine(agent, names, params), env_key, agent_key, keys,
                           temperature, horizon=horizon, relaxation=relaxation,
                           chunk_size=chunk_size)
        return run[0], run

    value_and_grad = jax.value_and_grad(per_run, has_aux=True)
    (_, (rewards, regrets)), grads = jax.vmap(value_and_grad, (None, 0, 0, 0))(
        params, env_keys, agent_keys, keys)
    return grads, rewards, regrets


def _relaxed_run(env, agent, env_key, agent_key, keys, temperature, *, horizon, relaxation,
                 chunk_size):
    """``(reward, regret)`` of one relaxed run."""
    spec = env.spec()
    dtype = float_dtype()
    env_state = env.init(env_key)

    def body(carry, t):
        state, reward_sum, regret_sum = carry
        k = keys.at(t)
        context = env.observe(k.env_observe, env_state, t)
        scores = agent.scores(state, k.agent_act, context)
        _, acted = agent.act(state, k.agent_act, context)  # what acting leaves in the state
        means = jnp.asarray(env.mean_rewards(env_state, context), dtype)
        logits = scores.astype(dtype) / temperature
        if relaxation == "softmax":
            hard = greedy_index(scores)
            weights = jax.nn.softmax(logits)
        elif relaxation == "straight-through":
            hard = greedy_index(jax.lax.stop_gradient(scores))
            soft = jax.nn.softmax(logits)
            weights = jax.nn.one_hot(hard, spec.num_arms, dtype=dtype) + soft \
                - jax.lax.stop_gradient(soft)
        else:
            gumbel = jax.random.gumbel(jax.random.fold_in(k.agent_act, _GUMBEL_STREAM),
                                       logits.shape, dtype)
            soft = jax.nn.softmax(logits + gumbel)
            hard = greedy_index(jax.lax.stop_gradient(logits + gumbel))
            weights = jax.nn.one_hot(hard, spec.num_arms, dtype=dtype) + soft \
                - jax.lax.stop_gradient(soft)
        hard = jax.lax.stop_gradient(hard)
        feedback = env.feedback(k.env_feedback, env_state, context, hard)
        expected = weights @ means
        observed = (jnp.asarray(feedback.reward, dtype) - jax.lax.stop_gradient(means[hard])
                    + expected)
        state = agent.update(acted, k.agent_update, context, weights,
                             feedback.replace(reward=observed))
        return state, reward_sum + expected, regret_sum + jnp.max(means) - expected

    zero = jnp.zeros((), dtype)
    carry = (agent.init(agent_key, spec), zero, zero)
    _, reward, regret = remat_rollout(body, carry, horizon, chunk_size)
    return reward, regret


def _traced(tree: PyTree) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(tree))
