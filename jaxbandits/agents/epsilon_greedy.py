"""Epsilon-greedy on a ridge model: the rule, written once, and the shared-theta agent.

With probability ``epsilon`` a uniformly random arm, otherwise the arm of highest estimated
reward (the first on ties). The policy is an explicit distribution,

    P(a) = (1 - epsilon) 1[a = argmax_k mu_k] + epsilon / K,

so the agents here have the exact ``log_prob`` (:class:`~jaxbandits.core.LogProb`) that
off-policy evaluation and score-function gradients read. ``epsilon-greedy`` estimates one shared
parameter (``mu_k = <x_k, theta_hat>``, the ridge mean); ``disjoint-epsilon-greedy``
(:mod:`jaxbandits.agents.disjoint`) one per arm, as Li et al. (2010, Sec. 5.2) run it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbandits.agents.linear import RidgeAgent
from jaxbandits.agents.select import greedy_index
from jaxbandits.core import Context, check_nonnegative
from jaxbandits.linalg import RidgeState
from jaxbandits.registry import register_agent

__all__ = ["EpsilonGreedy", "epsilon_greedy_action", "epsilon_greedy_log_prob"]


def epsilon_greedy_action(key: jax.Array, estimates: jax.Array, epsilon) -> jax.Array:
    """``()`` int32: a uniform arm with probability ``epsilon``, else ``argmax estimates``
    (``estimates`` ``(K,)``; the first maximiser on ties)."""
    key_explore, key_arm = jax.random.split(key)
    explore = jax.random.uniform(key_explore, (), estimates.dtype) < epsilon
    uniform = jax.random.randint(key_arm, (), 0, estimates.shape[-1], jnp.int32)
    return jnp.where(explore, uniform, greedy_index(estimates))


def epsilon_greedy_log_prob(estimates: jax.Array, epsilon, action: jax.Array) -> jax.Array:
    """``()`` ``log P(action)`` under :func:`epsilon_greedy_action`:
    ``log((1 - epsilon) 1[action = argmax] + epsilon / K)``."""
    num_arms = estimates.shape[-1]
    greedy = (action == greedy_index(estimates)).astype(estimates.dtype)
    return jnp.log((1.0 - epsilon) * greedy + epsilon / num_arms)


def _check_epsilon(agent) -> None:
    check_nonnegative(agent, "epsilon")
    for value in jnp.ravel(jnp.asarray(agent.epsilon, float)):
        if float(value) > 1.0:
            raise ValueError(f"{agent.name}: epsilon must lie in [0, 1], got {agent.epsilon!r}")


@register_agent
class EpsilonGreedy(RidgeAgent):
    """Epsilon-greedy on the shared-parameter ridge model: a uniform arm with probability
    ``epsilon``, else ``argmax_k <x_k, mean_t>`` (``mean_t`` the ridge estimate, ``V_0 = reg I``).

    Attributes:
      epsilon: the exploration probability, in [0, 1] (MABWiser's and OBP's ``epsilon``).
      reg: lambda, the ridge regulariser.

    Example::

        agent = jb.make_agent("epsilon-greedy", epsilon=0.05)
    """

    name = "epsilon-greedy"
    description = "epsilon-greedy on the ridge estimate (shared parameter)"
    paper = "Sutton & Barto 2018, Sec. 2.2; Li et al. 2010, Sec. 5.2"
    family = "linear"
    action_kinds = ("index",)

    epsilon: float = 0.1

    def validate(self) -> None:
        super().validate()
        _check_epsilon(self)

    def estimates(self, state: RidgeState, context: Context) -> jax.Array:
        """``(K,)`` the estimated rewards ``<x_k, mean_t>`` (the greedy arm is their argmax; not
        :class:`~jaxbandits.core.Scores`, since ``act`` does not always play it)."""
        return context.arms @ state.mean

    def act(self, state: RidgeState, key: jax.Array, context: Context):
        return epsilon_greedy_action(key, self.estimates(state, context), self.epsilon), state

    def log_prob(self, state: RidgeState, key: jax.Array, context: Context,
                 action: jax.Array) -> jax.Array:
        return epsilon_greedy_log_prob(self.estimates(state, context), self.epsilon, action)
