"""Differentiable bandit research: gradients of the expected cumulative reward with respect to an
agent's float leaves, and meta-learning by gradient (Boutilier et al., "Differentiable
Meta-Learning of Bandit Policies", NeurIPS 2020).

Two estimators, both one jitted program over runs (``lax.scan`` over rounds, rematerialised per
chunk of rounds so memory grows with ``sqrt(T)``, not ``T``):

* **Score function** (:func:`policy_gradient`), for agents that draw their arm from an explicit
  distribution (the ``log_prob`` method of the agent protocol; ``soft-elim``, ``softmax``,
  ``neural-policy``). Unbiased for the hard policy: with ``L_t = sum_{s<=t} log pi(a_s | H_s)``
  and rewards ``r_t``, the gradient of ``E[sum_t r_t]`` is
  ``E[sum_t (r_t - b_t) grad L_t]`` for any baseline ``b_t`` independent of the actions from
  round ``t`` on: ``"none"``; ``"mean"``, the round's mean reward over the other runs; or
  ``"self-play"`` (the paper's), the rewards of the same policy run again on the same instance.

* **Pathwise through a relaxed rollout** (:func:`relaxed_rollout`, :func:`relaxed_gradient`),
  for agents that play ``argmax_k scores_k`` (the ``scores`` method; the ridge, ensemble and
  K-armed agents). Each round plays the soft action ``w = softmax(scores / temperature)``
  (``relaxation="softmax"``), or forward the hard arm with ``w``'s gradient backward
  (``"straight-through"``: the agent's own argmax, so the forward pass *is* the hard rollout;
  ``"gumbel"``: a Gumbel-max sample ``argmax(scores / temperature + g)``); the agent learns
  from the features ``w @ arms`` and the reward ``w @ mu + noise`` (the hard arm's noise), and
  the objective is the expected reward ``sum_t w_t @ mu_t``. ``jax.grad`` then flows through
  the whole rollout to ``explore_scale``, ``reg``, ``perturb_std``, prior scales and network
  parameters. As the temperature goes to 0 the softmax rollout becomes the hard one (up to
  exact ties of scores, which a soft action shares between the tied arms).

  Limits: the rollout is a chaotic map of the parameters over long horizons; at low
  temperatures the pathwise gradient of optimistic agents (LinUCB) explodes with T (measured:
  per-run gradients of 1e6-1e15 at T = 500 and temperature <= 0.03), while larger temperatures
  bias the optimum (the soft action explores by itself). Sampling agents (LinTS, ensembles) and
  short horizons are well behaved; for LinUCB prefer the score function on
  ``Softmax(agent=lin-ucb)``.

Key streams are the runner's: run ``r`` of :func:`policy_gradient` or :func:`relaxed_rollout`
meets the same instance, contexts and noise as run ``r`` of ``jb.simulate`` with the same key.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxbandits.agents.select import greedy_index
from jaxbandits.core import Agent, Env, LogProb, Scores, float_dtype
from jaxbandits.runner import (
    Progress,
    as_arrays,
    as_key,
    progress_mode,
    rollout,
    run_keys,
    simulate,
)

__all__ = [
    "BASELINES",
    "GradientEstimate",
    "MetaLearnResult",
    "OPTIMIZERS",
    "RELAXATIONS",
    "learnable_leaves",
    "meta_learn",
    "policy_gradient",
    "relaxed_gradient",
    "relaxed_rollout",
]

BASELINES = ("none", "mean", "self-play")
RELAXATIONS = ("softmax", "straight-through", "gumbel")
#: fields that must stay positive: :func:`meta_learn` learns their logarithm.
POSITIVE_FIELDS = frozenset({
    "reg", "kappa", "noise_std", "explore_scale", "perturb_std", "prior_scale", "learning_rate",
    "param_bound", "temperature", "prior_alpha", "prior_beta", "posterior_scale",
})
PyTree = Any
#: the stream (folded into the key) of the self-play twins' own draws.
_TWIN_STREAM = 2**31 - 1


class GradientEstimate(NamedTuple):
    """A Monte-Carlo gradient of the expected cumulative reward over ``num_runs`` runs.

    Attributes:
      grad: the mean gradient, an agent-shaped pytree: each learnable leaf holds its gradient
        and every other leaf zero (so ``optax.apply_updates`` and ``jax.tree.map`` apply).
      grad_se: the standard error of each gradient entry (same structure; over instances: the
        two plays of an instance count as one under the self-play baseline).
      value: the objective's mean: the cumulative reward (score function) or the relaxed
        expected cumulative reward (pathwise).
      value_se: its standard error.
      regret: the mean cumulative (pseudo-)regret of the same rollouts (relaxed: of the
        actions played forward, the soft actions in ``"softmax"`` mode, the hard arms in the
        straight-through modes).
      num_runs: runs the mean is over (instances).
    """

    grad: PyTree
    grad_se: PyTree
    value: float
    value_se: float
    regret: float
    num_runs: int


# ------------------------------------------------------------------------------------------------
# Learnable leaves.


def _is_float(x) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return True
    return hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)


def _leaf_names(tree: PyTree) -> list[str]:
    return [jax.tree_util.keystr(path, simple=True, separator=".")
            for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]]


def learnable_leaves(agent: Agent, wrt: str | Sequence[str] | None = None) -> list[str]:
    """The dotted names of ``agent``'s leaves that gradients are taken with respect to: its
    float leaves, or those under the names (or dotted prefixes) in ``wrt``.

    Example::

        learnable_leaves(jb.make_agent("lin-ucb"), "explore_scale")   # ['explore_scale']
    """
    names = _leaf_names(agent)
    floats = _float_names(agent)
    if wrt is None:
        chosen = floats
    else:
        wanted = _wanted(agent, wrt)
        chosen = []
        for prefix in wanted:
            hits = [n for n in names if n == prefix or n.startswith(prefix + ".")]
            if not hits:
                raise ValueError(f"wrt: {type(agent).__name__} has no leaf {prefix!r} (its "
                                 f"leaves: {', '.join(names) or 'none'})")
            bad = [n for n in hits if n not in floats]
            if bad:
                raise ValueError(f"wrt: {', '.join(bad)} of {type(agent).__name__} is not a "
                                 f"float leaf (only float leaves have gradients)")
            chosen += [n for n in hits if n not in chosen]
    if not chosen:
        raise ValueError(f"{type(agent).__name__} has no float leaf to differentiate")
    return chosen


def _wanted(agent: Agent, wrt) -> tuple[str, ...]:
    """``wrt`` as a non-empty tuple of leaf names; ``ValueError`` for anything else."""
    if isinstance(wrt, str):
        return (wrt,)
    owner = type(agent).__name__
    wanted = tuple(wrt) if isinstance(wrt, (list, tuple)) else None
    if wanted is None or not all(isinstance(n, str) for n in wanted):
        raise ValueError(f"wrt must be a leaf name, a list of leaf names or None (every float "
                         f"leaf of {owner}), got {wrt!r}")
    if not wanted:
        raise ValueError(f"wrt is empty: name the leaves of {owner} to differentiate, or pass "
                         f"None for every float leaf ({', '.join(_float_names(agent)) or 'none'})")
    return wanted


def _float_names(agent: Agent) -> list[str]:
    leaves = jax.tree.leaves(agent)
    return [n for n, x in zip(_leaf_names(agent), leaves, strict=True) if _is_float(x)]


def _combine(agent: Agent, names: Sequence[str], values: Sequence) -> Agent:
    """``agent`` with the leaves ``names`` replaced by ``values`` (traceable)."""
    all_names = _leaf_names(agent)
    leaves, treedef = jax.tree.flatten(agent)
    for name, value in zip(names, values, strict=True):
        leaves[all_names.index(name)] = value
    return jax.tree.unflatten(treedef, leaves)


def _params(agent: Agent, names: Sequence[str]) -> list[jax.Array]:
    """The leaves ``names`` of ``agent`` as float arrays."""
    all_names = _leaf_names(agent)
    leaves = jax.tree.leaves(agent)
    return [jnp.asarray(leaves[all_names.index(n)], float_dtype()) for n in names]


def _as_agent_tree(agent: Agent, names: Sequence[str], values: Sequence) -> PyTree:
    """An agent-shaped pytree with ``values`` at ``names`` and zeros elsewhere."""
    zeros = jax.tree.map(lambda x: jnp.zeros_like(jnp.asarray(x)), agent)
    return _combine(zeros, names, values)


# ------------------------------------------------------------------------------------------------
# Rollouts: the runner's public rollout, rematerialised per chunk.


def _rollout(body: Callable, carry, horizon: int, chunk_size: int | None):
    """``carry`` after ``body(carry, t)`` for ``t < horizon``: :func:`jaxbandits.runner.rollout`
    with each chunk rematerialised, so reverse mode keeps one carry per chunk and one chunk of
    residuals (about ``2 sqrt(T)`` rounds' worth with the default chunk)."""
    carry, _ = rollout(lambda c, t: (body(c, t), None), carry, horizon, chunk_size=chunk_size,
                       remat=True)
    return carry


def _check(env: Env, agent: Agent, horizon, num_runs, what: str, need: str,
           validate: bool = True) -> tuple[int, int]:
    """Checks the arguments every gradient tool shares; returns ``(horizon, num_runs)`` as
    Python ints (static arguments of the jitted programs)."""
    if validate:
        env.validate()
        agent.validate()
    spec = env.spec()
    name = agent.name or type(agent).__name__
    if spec.action_kind != "index" or spec.replay:
        raise ValueError(f"{what}: environment {env.name!r} has {spec.action_kind!r} actions"
                         f"{' and replays logged data' if spec.replay else ''}; gradients are "
                         f"implemented for finite arm sets of simulated environments")
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(f"{what}: agent {name!r} cannot act on environment {env.name!r}")
    for label, value in (("horizon", horizon), ("num_runs", num_runs)):
        _check_count(value, label, what)
    if need == "log_prob" and not isinstance(agent, LogProb):
        raise ValueError(
            f"{what}: agent {name!r} has no log_prob: it does not draw its arm from an explicit "
            f"distribution, so score-function gradients do not apply. Use the relaxed mode, "
            f"jb.relaxed_gradient(env, agent, ...) (it plays softmax(scores / temperature)), or "
            f"wrap it: jb.agents.Softmax(agent=agent, temperature=...)")
    if need == "scores":
        if not isinstance(agent, Scores):
            raise ValueError(
                f"{what}: agent {name!r} has no scores method (it does not act by an argmax of "
                f"scores), so it has no relaxed mode"
                + ("; it draws from an explicit distribution: use jb.policy_gradient"
                   if isinstance(agent, LogProb) else ""))
        if not agent.relaxed_updates:
            raise ValueError(f"{what}: agent {name!r} cannot learn from a relaxed action (its "
                             f"update reads the played arm by index; relaxed_updates is False)")
        owner_feedback = _owner(type(env), "feedback")
        owner_means = _owner(type(env), "mean_rewards")
        if owner_means is None or not issubclass(owner_means, owner_feedback):
            raise ValueError(f"{what}: environment {env.name!r} does not state its arms' "
                             f"expected rewards (no mean_rewards method written with its "
                             f"feedback), which the relaxed objective needs")
    return int(horizon), int(num_runs)


def _check_count(value, label: str, what: str, alternative: str = "") -> None:
    """Raises ``ValueError`` unless ``value`` is a positive integer (Python or NumPy)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1:
        raise ValueError(f"{what}: {label} must be a positive integer{alternative}, got "
                         f"{value!r}")


def _check_chunk(chunk_size, what: str) -> int | None:
    """``chunk_size`` as a Python int (None: the default); ``ValueError`` unless positive."""
    if chunk_size is None:
        return None
    _check_count(chunk_size, "chunk_size (rounds per rematerialised chunk)", what,
                 " or None (about sqrt(horizon))")
    return int(chunk_size)


def _owner(cls: type, method: str) -> type | None:
    """The class of ``cls``'s MRO that defines ``method`` (None if none does)."""
    for klass in cls.__mro__:
        if method in vars(klass):
            return klass
    return None


def _check_temperature(temperature, relaxation: str, what: str) -> None:
    if relaxation not in RELAXATIONS:
        raise ValueError(f"{what}: relaxation must be one of {RELAXATIONS}, got {relaxation!r}")
    if isinstance(temperature, jax.core.Tracer):  # a traced temperature is the caller's to keep
        return
    try:
        ok = bool(np.all(np.asarray(temperature, float) > 0))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{what}: temperature must be positive, got {temperature!r}")


def _mean_se(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Mean and standard error over the leading axis."""
    n = x.shape[0]
    mean = jnp.mean(x, axis=0)
    se = jnp.std(x, axis=0, ddof=1) / math.sqrt(n) if n > 1 else jnp.zeros_like(mean)
    return mean, se


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
    horizon, num_runs = _check(env, agent, horizon, num_runs, what, "log_prob")
    chunk_size = _check_chunk(chunk_size, what)
    if baseline not in BASELINES:
        raise ValueError(f"{what}: baseline must be one of {BASELINES}, got {baseline!r}")
    if baseline == "mean" and num_runs < 2:
        raise ValueError(f"{what}: the 'mean' baseline needs num_runs >= 2")
    names = tuple(learnable_leaves(agent, wrt))
    grads, values, regrets = _score_program(
        as_arrays(env), as_arrays(agent.for_gradients()), _params(agent, names),
        as_key(key), names=names, horizon=horizon, num_runs=num_runs, baseline=baseline,
        chunk_size=chunk_size)
    return _estimate(agent, names, grads, values, regrets)


def _estimate(agent, names, grads, values, regrets) -> GradientEstimate:
    means, ses = zip(*(_mean_se(g) for g in grads), strict=True)
    value, value_se = _mean_se(values)
    return GradientEstimate(
        grad=_as_agent_tree(agent, names, list(means)),
        grad_se=_as_agent_tree(agent, names, list(ses)),
        value=float(value), value_se=float(value_se), regret=float(jnp.mean(regrets)),
        num_runs=int(values.shape[0]))


def _run_streams(key: jax.Array, num_runs: int, twins: int):
    """``(env_keys, agent_keys, keys)`` of ``num_runs * twins`` runs, twins adjacent: twin 0 of
    run ``r`` is ``jb.simulate``'s run ``r``; twin 1 meets the same instance and contexts with
    its own agent, action and reward draws."""
    runs = jnp.arange(num_runs, dtype=jnp.int32)

    def streams(r, twin):
        env_key, agent_key, keys = run_keys(key, r)
        if twin:
            _, agent_key, other = run_keys(jax.random.fold_in(key, _TWIN_STREAM), r)
            keys = keys.replace(agent_act=other.agent_act, agent_update=other.agent_update,
                                env_feedback=other.env_feedback)
        return env_key, agent_key, keys

    copies = [jax.vmap(lambda r, c=c: streams(r, c))(runs) for c in range(twins)]
    return jax.tree.map(
        lambda *x: jnp.stack(x, 1).reshape((num_runs * twins,) + x[0].shape[1:]), *copies)


@functools.partial(jax.jit, static_argnames=("names", "horizon", "num_runs", "baseline",
                                             "chunk_size"))
def _score_program(env, agent, params, key, *, names, horizon, num_runs, baseline, chunk_size):
    """Per-run gradients (over instances), cumulative rewards and regrets."""
    twins = 2 if baseline == "self-play" else 1
    size = num_runs * twins
    env_keys, agent_keys, keys = _run_streams(key, num_runs, twins)
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
        agents = jax.vmap(lambda p: _combine(agent, names, p))(tiled)
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
        _, _, surrogate, rewards, regrets = _rollout(body, carry, horizon, chunk_size)
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
    horizon, num_runs = _check(env, agent, horizon, num_runs, what, "scores",
                               validate=not _traced(agent))
    chunk_size = _check_chunk(chunk_size, what)
    _check_temperature(temperature, relaxation, what)
    env_keys, agent_keys, keys = _run_streams(as_key(key), num_runs, 1)
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
    horizon, num_runs = _check(env, agent, horizon, num_runs, what, "scores")
    chunk_size = _check_chunk(chunk_size, what)
    _check_temperature(temperature, relaxation, what)
    names = tuple(learnable_leaves(agent, wrt))
    grads, values, regrets = _relaxed_program(
        as_arrays(env), as_arrays(agent.for_gradients()), _params(agent, names), as_key(key),
        jnp.asarray(temperature, float_dtype()), names=names, horizon=horizon,
        num_runs=num_runs, relaxation=relaxation, chunk_size=chunk_size)
    return _estimate(agent, names, grads, values, regrets)


@functools.partial(jax.jit, static_argnames=("names", "horizon", "num_runs", "relaxation",
                                             "chunk_size"))
def _relaxed_program(env, agent, params, key, temperature, *, names, horizon, num_runs,
                     relaxation, chunk_size):
    env_keys, agent_keys, keys = _run_streams(key, num_runs, 1)

    def per_run(params, env_key, agent_key, keys):
        run = _relaxed_run(env, _combine(agent, names, params), env_key, agent_key, keys,
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
    _, reward, regret = _rollout(body, carry, horizon, chunk_size)
    return reward, regret


def _traced(tree: PyTree) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(tree))


# ------------------------------------------------------------------------------------------------
# Meta-learning.

MODES = ("score", "relaxed")
#: optax optimisers :func:`meta_learn` builds by name, ``getattr(optax, name)(learning_rate)``.
OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop", "adagrad")


@dataclasses.dataclass(frozen=True)
class MetaLearnResult:
    """The learning curve of :func:`meta_learn`.

    Attributes:
      agent: the learned agent (its learnable leaves after the last step).
      objective / objective_se: ``(steps,)`` the training objective of each step's fresh
        instances (mean cumulative reward; relaxed in ``"relaxed"`` mode) and its standard error.
      leaves: ``{name: (steps + 1, ...)}`` every learnable leaf before each step and at the end.
      eval_steps: ``(E,)`` the steps after which the agent was evaluated (0: before learning).
      eval_regret / eval_regret_se: ``(E,)`` the hard policy's mean cumulative regret at
        ``horizon`` on the held-out instances (``jb.simulate``), and its standard error.
      mode, horizon, num_runs, eval_runs: the settings.
    """

    agent: Agent
    objective: np.ndarray
    objective_se: np.ndarray
    leaves: dict[str, np.ndarray]
    eval_steps: np.ndarray
    eval_regret: np.ndarray
    eval_regret_se: np.ndarray
    mode: str
    horizon: int
    num_runs: int
    eval_runs: int

    def to_dataframe(self):
        """One row per step: objective, its s.e., the scalar leaves, and the held-out regret
        where evaluated (pandas)."""
        import pandas as pd

        frame = pd.DataFrame({"step": np.arange(len(self.objective)),
                              "objective": self.objective, "objective_se": self.objective_se})
        for name, values in self.leaves.items():
            if values[0].size == 1:
                frame[name] = np.ravel(values[:-1])
        held_out = pd.DataFrame({"step": self.eval_steps, "eval_regret": self.eval_regret,
                                 "eval_regret_se": self.eval_regret_se})
        return frame.merge(held_out, on="step", how="outer")

    def plot(self, path=None):
        """Two panels: the training objective by step, and the held-out regret at the evaluated
        steps (95% intervals). Writes a PNG to ``path`` if given; returns the figure."""
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
        steps = np.arange(len(self.objective))
        left.plot(steps, self.objective)
        left.fill_between(steps, self.objective - 1.96 * self.objective_se,
                          self.objective + 1.96 * self.objective_se, alpha=0.25)
        left.set(xlabel="step", title=f"training objective ({self.mode})",
                 ylabel="relaxed expected reward" if self.mode == "relaxed" else "reward")
        right.errorbar(self.eval_steps, self.eval_regret, yerr=1.96 * self.eval_regret_se,
                       marker="o", capsize=3)
        right.set(xlabel="step", ylabel=f"cumulative regret at T = {self.horizon}",
                  title=f"held-out instances ({self.eval_runs} runs)")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig


def _optimizer(optimizer, learning_rate, what: str) -> optax.GradientTransformation:
    """The optax transformation of :func:`meta_learn`'s ``optimizer`` argument: itself, one of
    :data:`OPTIMIZERS` by name at ``learning_rate``, or (None) ``optax.adam(learning_rate)``."""
    if not callable(learning_rate):  # a number, or an optax schedule of the step
        ok = not isinstance(learning_rate, (bool, np.bool_)) and isinstance(
            learning_rate, (int, float, np.integer, np.floating)) and 0 < learning_rate < math.inf
        if not ok:
            raise ValueError(f"{what}: learning_rate must be a positive finite number or an "
                             f"optax schedule (the step size of gradient ascent on the "
                             f"objective), got {learning_rate!r}")
    if optimizer is None:
        optimizer = "adam"
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"{what}: optimizer must be an optax GradientTransformation or one "
                             f"of the names {OPTIMIZERS}, got {optimizer!r}")
        return getattr(optax, optimizer)(learning_rate)
    if not isinstance(optimizer, optax.GradientTransformation):
        raise ValueError(f"{what}: optimizer must be an optax GradientTransformation (e.g. "
                         f"optax.adam(0.05)) or one of the names {OPTIMIZERS}, got "
                         f"{optimizer!r}")
    return optimizer


def meta_learn(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    *,
    horizon: int,
    num_runs: int = 64,
    steps: int = 100,
    learning_rate: float | optax.Schedule = 0.05,
    optimizer: optax.GradientTransformation | str | None = None,
    mode: str | None = None,
    baseline: str = "self-play",
    temperature: float = 0.1,
    relaxation: str = "softmax",
    wrt: str | Sequence[str] | None = None,
    eval_runs: int = 256,
    eval_every: int = 10,
    progress: bool | str | None = None,
) -> MetaLearnResult:
    """Learns ``agent``'s leaves by gradient ascent on the expected cumulative reward over the
    environment's instance distribution (Boutilier et al. 2020, Algorithm 1, "GradBand").

    Every step draws ``num_runs`` fresh instances (``fold_in(key, step)``), estimates the
    gradient (:func:`policy_gradient` in ``"score"`` mode, :func:`relaxed_gradient` in
    ``"relaxed"`` mode) and applies one optax update. Leaves that must stay positive
    (``explore_scale``, ``reg``, ``temperature``, ...) are learned in log space. Every
    ``eval_every`` steps, and before and after learning, the hard policy is played on
    ``eval_runs`` held-out instances (another key) with ``jb.simulate``.

    Args:
      env, agent, key, horizon, num_runs: the instance distribution, the policy, the seed, T,
        and the instances per step.
      steps: optimisation steps.
      learning_rate: > 0 (or an optax schedule): the step size of the optimiser named by
        ``optimizer`` (ignored with an optax transformation, but still checked).
      optimizer: any optax transformation (it minimises the negated objective), or the name of
        one of :data:`OPTIMIZERS` (``"adam"``, ``"sgd"``, ...) built at ``learning_rate``;
        default ``"adam"``.
      mode: ``"score"`` (needs ``log_prob``), ``"relaxed"`` (needs ``scores``); default: score
        when the agent has ``log_prob``, else relaxed.
      baseline: of the score mode; temperature, relaxation: of the relaxed mode.
      wrt: the leaves to learn (default: every float leaf).
      eval_runs, eval_every: the held-out evaluation.
      progress: as :func:`jaxbandits.simulate` (a bar on a terminal, ``"lines"`` for logs).

    Example::

        env = jb.make_env("bernoulli", num_arms=2)
        out = jb.meta_learn(env, jb.make_agent("soft-elim"), 0, horizon=200, steps=50)
        out.agent.explore_scale, out.plot("soft_elim.png")
    """
    what = "meta_learn"
    if mode is None:
        mode = "score" if isinstance(agent, LogProb) else "relaxed"
    if mode not in MODES:
        raise ValueError(f"{what}: mode must be one of {MODES}, got {mode!r}")
    for label, value in (("steps", steps), ("eval_runs", eval_runs), ("eval_every", eval_every)):
        _check_count(value, label, what)
    horizon, num_runs = _check(env, agent, horizon, num_runs, what,
                               "log_prob" if mode == "score" else "scores")
    if mode == "relaxed":
        _check_temperature(temperature, relaxation, what)
    names = tuple(learnable_leaves(agent, wrt))
    positive = [n.rsplit(".", 1)[-1] in POSITIVE_FIELDS for n in names]
    key = as_key(key)
    train_key, eval_key = jax.random.fold_in(key, 0), jax.random.fold_in(key, 1)
    optimizer = _optimizer(optimizer, learning_rate, what)

    def to_free(values):
        return [jnp.log(v) if p else v for v, p in zip(values, positive, strict=True)]

    def from_free(free):
        return [jnp.exp(u) if p else u for u, p in zip(free, positive, strict=True)]

    def estimate(agent, step_key):
        if mode == "score":
            return policy_gradient(env, agent, step_key, horizon, num_runs, baseline=baseline,
                                   wrt=names)
        return relaxed_gradient(env, agent, step_key, horizon, num_runs,
                                temperature=temperature, relaxation=relaxation, wrt=names)

    def evaluate(agent):
        result = simulate(env, agent, eval_key, horizon, eval_runs, record=[horizon],
                          progress=False, name=f"{agent.name or 'agent'} (meta-learning)")
        final = np.asarray(result.cumulative_regret)[:, -1]
        return float(final.mean()), float(final.std(ddof=1) / math.sqrt(final.size))

    free = to_free(_params(agent, names))
    opt_state = optimizer.init(free)
    history = {n: [] for n in names}
    objective, objective_se, evals = [], [], []
    seed_steps = num_runs * horizon * (2 if mode == "score" and baseline == "self-play" else 1)
    label = f"meta-learning {agent.name or type(agent).__name__}"
    with Progress(progress_mode(progress), label, steps * seed_steps, num_runs) as bar:
        evals.append((0, *evaluate(agent)))
        start = time.perf_counter()
        for step in range(steps):
            values = from_free(free)
            for n, v in zip(names, values, strict=True):
                history[n].append(np.asarray(v))
            current = _combine(agent, names, values)
            if step == 0:
                bar.compiling()
            out = estimate(current, jax.random.fold_in(train_key, step))
            if step == 0:
                bar.compiled(time.perf_counter() - start)
                start = time.perf_counter()
            objective.append(out.value)
            objective_se.append(out.value_se)
            grads = _params(out.grad, names)
            # ascent on the objective; d/du exp(u) = exp(u) for the log-space leaves
            free_grads = [-(g * v if p else g)
                          for g, v, p in zip(grads, values, positive, strict=True)]
            updates, opt_state = optimizer.update(free_grads, opt_state, free)
            free = optax.apply_updates(free, updates)
            bar.advance((step + 1) * seed_steps, time.perf_counter() - start)
            if (step + 1) % eval_every == 0 or step + 1 == steps:
                evals.append((step + 1, *evaluate(_combine(agent, names, from_free(free)))))
    values = from_free(free)
    for n, v in zip(names, values, strict=True):
        history[n].append(np.asarray(v))
    learned = _combine(agent, names, [np.asarray(v) for v in values])
    learned = jax.tree.map(lambda x: x.item() if isinstance(x, np.ndarray) and x.ndim == 0
                           else x, learned)
    eval_steps, eval_regret, eval_se = (np.asarray(c) for c in zip(*evals, strict=True))
    return MetaLearnResult(
        agent=learned, objective=np.asarray(objective), objective_se=np.asarray(objective_se),
        leaves={n: np.stack(v) for n, v in history.items()}, eval_steps=eval_steps.astype(int),
        eval_regret=eval_regret, eval_regret_se=eval_se, mode=mode, horizon=horizon,
        num_runs=num_runs, eval_runs=eval_runs)
