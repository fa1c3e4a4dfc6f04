"""Policies made to be learned by gradient (:mod:`jaxbandits.differentiable`): a softmax
(Boltzmann) policy over any argmax agent's scores, and a small neural policy on per-arm
statistics whose Flax parameters are agent leaves.

Both draw their arm from an explicit distribution (``agents.select.SoftmaxPolicy``), so they have
the ``log_prob`` that score-function gradients need (:func:`jaxbandits.policy_gradient`).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx, struct

from jaxbandits.agents.linear import Greedy
from jaxbandits.agents.mab import ArmStats, MABAgent, empirical_means
from jaxbandits.agents.select import SoftmaxPolicy
from jaxbandits.core import (
    Agent,
    Context,
    Delegating,
    Feedback,
    Scores,
    check_positive,
    float_dtype,
)
from jaxbandits.registry import register_agent

__all__ = ["ARM_FEATURES", "NeuralPolicy", "Softmax", "StatsMLP", "arm_features",
           "neural_policy_network"]


@register_agent
class Softmax(Delegating, SoftmaxPolicy, Agent):
    """Boltzmann exploration over any argmax agent: ``P(k) ∝ exp(scores_k / temperature)``.

    The wrapped agent (default ``greedy``: softmax over the ridge means, the classic Boltzmann
    policy) keeps its state and update; only the arm choice changes, from ``argmax scores`` to a
    draw from ``softmax(scores / temperature)``. Scores that are random themselves (a Thompson
    sample) are conditioned on their draw in ``log_prob``, which stays a valid score function
    (the draw does not depend on the parameters).

    Attributes:
      agent: the wrapped agent; it must declare scores (:class:`~jaxbandits.core.Scores`:
        ``scores(state, key, context)``), else construction raises ``ValueError`` (its numeric
        fields are leaves of this one: ``agent.reg``, ``agent.explore_scale``, ...).
      temperature: > 0; the policy tends to the wrapped agent's argmax as it goes to 0.

    Example::

        agent = jb.agents.Softmax(agent=jb.make_agent("lin-ucb"), temperature=0.05)
    """

    name = "softmax"
    description = "Boltzmann (softmax) policy over any argmax agent's scores"
    paper = "Boutilier et al. 2020; Sutton & Barto 2018"
    family = "differentiable"
    action_kinds = ("index",)

    agent: Agent = struct.field(default_factory=Greedy)
    temperature: float = 0.1

    def __post_init__(self):  # refuse an agent without scores at construction, not in tracing
        if isinstance(self.agent, Agent) and not isinstance(self.agent, Scores):
            raise ValueError(f"softmax: agent {self.agent.name or type(self.agent).__name__!r} "
                             "has no scores(state, key, context) method (it does not act by an "
                             "argmax of scores; jaxbandits.core.Scores)")

    @property
    def relaxed_updates(self) -> bool:  # type: ignore[override]
        return self.agent.relaxed_updates

    def validate(self) -> None:
        if not isinstance(self.agent, Agent):
            raise ValueError(f"softmax: agent must be a jaxbandits Agent, got {self.agent!r}")
        super().validate()
        self.agent.validate()
        check_positive(self, "temperature")

    def logits(self, state, key: jax.Array, context: Context) -> jax.Array:
        return self.agent.scores(state, key, context) / self.temperature

    def act(self, state, key: jax.Array, context: Context):
        action, _ = super().act(state, key, context)
        _, acted = self.agent.act(state, jax.random.split(key)[0], context)
        return action, acted

    def update(self, state, key: jax.Array, context: Context, action: jax.Array,
               feedback: Feedback):
        return self.agent.update(state, key, context, action, feedback)


# ------------------------------------------------------------------------------------------------
# A neural policy on per-arm statistics.

#: the per-arm statistics the neural policy reads (:func:`arm_features`).
ARM_FEATURES = ("mean", "gap", "inv_sqrt_pulls", "ucb_bonus", "pull_share")


def arm_features(stats: ArmStats) -> jax.Array:
    """``(K, 5)`` per-arm statistics of a K-armed history, each O(1) in scale: the empirical
    mean, its gap to the best one, ``1 / sqrt(T_i + 1)``, UCB1's bonus ``sqrt(2 log(t + 1) /
    (T_i + 1))`` and the share of pulls ``T_i / (t + 1)``."""
    means = empirical_means(stats)
    pulls = stats.counts + 1.0
    rounds = stats.rounds + 1.0
    return jnp.stack([
        means,
        jnp.max(means) - means,
        jax.lax.rsqrt(pulls),
        jnp.sqrt(2.0 * jnp.log(rounds) / pulls),
        stats.counts / rounds,
    ], axis=-1)


class StatsMLP(nnx.Module):
    """A per-arm scorer: an MLP (tanh) from :func:`arm_features` ``(K, 5)`` to scores ``(K,)``,
    shared by the arms (so one network serves any K)."""

    def __init__(self, hidden: tuple[int, ...] = (16,), *, rngs: nnx.Rngs):
        sizes = (len(ARM_FEATURES), *hidden, 1)
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs)
                                for a, b in zip(sizes[:-1], sizes[1:], strict=True)])

    def __call__(self, x: jax.Array) -> jax.Array:
        for layer in self.layers[:-1]:
            x = jnp.tanh(layer(x))
        return self.layers[-1](x)[..., 0]


def neural_policy_network(key: jax.Array | int = 0, hidden: tuple[int, ...] = (16,)):
    """``(graphdef, params)`` of a fresh :class:`StatsMLP`, its parameters in float_dtype."""
    seed = int(key) if isinstance(key, int) else int(jax.random.randint(key, (), 0, 2**31 - 1))
    graphdef, params = nnx.split(StatsMLP(tuple(hidden), rngs=nnx.Rngs(seed)))
    params = jax.tree.map(lambda x: jnp.asarray(x, float_dtype()), params)
    return graphdef, params


def _default_network():
    """The default network, built once per float dtype (parameters made with x64 on are
    float64, and a later agent made with it off must not get them)."""
    return _default_network_in(float_dtype())


@functools.cache
def _default_network_in(dtype: jnp.dtype):
    del dtype  # the cache key: neural_policy_network builds in float_dtype(), which it is
    return neural_policy_network(0)


@register_agent
class NeuralPolicy(SoftmaxPolicy, MABAgent):
    """A neural policy on per-arm statistics (Boutilier et al. 2020, Sec. 5's neural
    policies): ``P(i) ∝ exp(f_w(s_i))`` with ``s_i`` the arm's statistics (:func:`arm_features`)
    and ``f_w`` a small shared MLP whose Flax parameters ``params`` are agent leaves, learned by
    :func:`jaxbandits.meta_learn` (score-function or relaxed mode).

    Attributes:
      params: the network's parameters (an ``nnx.State``; a pytree of float leaves).
      network: the network's ``nnx.GraphDef`` (static), from :func:`neural_policy_network`.

    Example::

        graphdef, params = jb.agents.neural_policy_network(key=0, hidden=(32,))
        agent = jb.agents.NeuralPolicy(network=graphdef, params=params)
    """

    name = "neural-policy"
    description = "softmax policy of a small MLP on per-arm statistics (learned by gradient)"
    paper = "Boutilier et al. 2020"
    family = "differentiable"

    network: Any = struct.field(pytree_node=False, default=None)
    params: Any = None

    def __post_init__(self):  # unset: the default network (hidden = (16,), seed 0)
        if self.network is None or self.params is None:
            graphdef, params = _default_network()
            if self.network is None:
                object.__setattr__(self, "network", graphdef)
            if self.params is None:
                object.__setattr__(self, "params", params)

    def validate(self) -> None:
        hint = "(jb.agents.neural_policy_network(key, hidden) makes both)"
        if not isinstance(self.network, nnx.GraphDef):
            raise ValueError(f"{self.name}: network must be an nnx.GraphDef {hint}, got "
                             f"{type(self.network).__name__}")
        leaves = jax.tree.leaves(self.params)
        if not leaves or not all(hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)
                                 for x in leaves):
            raise ValueError(f"{self.name}: params must be the network's float parameters "
                             f"{hint}, got {type(self.params).__name__}")
        super().validate()

    def scores(self, state: ArmStats, key: jax.Array, context: Context) -> jax.Array:
        """``(K,)`` the network's score of every arm (its logits)."""
        model = nnx.merge(self.network, self.params)
        return model(arm_features(state))

    def logits(self, state: ArmStats, key: jax.Array, context: Context) -> jax.Array:
        return self.scores(state, key, context)
