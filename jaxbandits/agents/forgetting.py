"""Forgetting for the ridge agents: a discounted design matrix, for drifting environments.

An **extension**, not an algorithm of the papers this library implements: their linear agents
assume a fixed theta*. :class:`Discounted` wraps a ridge agent (``greedy``, ``lin-ucb``,
``lin-ts``) and discounts its statistic before each update, as D-LinUCB does (Russac, Vernade &
Cappé 2019, "Weighted linear bandits for non-stationary environments", Alg. 1)::

    V_t = discount * V_{t-1} + (1 - discount) * reg * I + x_t x_t^T
    b_t = discount * b_{t-1} + x_t y_t,          mean_t = V_t^{-1} b_t

so ``V_t = reg I + sum_s discount^(t-s) x_s x_s^T``: old observations fade with weight
``discount^age`` while the regulariser stays ``reg I``. In the square-root form of
:mod:`jaxbandits.linalg.ridge`, ``discount * V`` is ``S / sqrt(discount)`` (the mean is
unchanged, as ``V`` and ``b`` scale together) and ``(1 - discount) reg I`` is ``d``
pseudo-observations ``(sqrt((1 - discount) reg) e_i, 0)`` through the shared rank-one update:
O(d^3) per round instead of O(d^2). The wrapped agent's widths and samples then use this
statistic (LinUCB's OFUL radius is not D-LinUCB's weighted bound: the widths are a heuristic
here). ``discount = 1`` forgets nothing; the wrapped agents themselves are unchanged (off by
default, their numbers kept bit for bit).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxbandits.agents.linear import LinTS, LinUCBState, RidgeAgent
from jaxbandits.core import Agent, Context, Delegating, Feedback, check_probability
from jaxbandits.linalg import RidgeState, ridge_sq_widths, ridge_update

__all__ = ["Discounted", "discount_ridge"]


def discount_ridge(state: RidgeState, discount: jax.Array, reg: jax.Array) -> RidgeState:
    """``V <- discount * V + (1 - discount) * reg * I`` and ``b <- discount * b`` on a ridge
    statistic ``(mean, S, logdet, count)``; the observation count is unchanged."""
    dtype = state.mean.dtype
    discount, reg = jnp.asarray(discount, dtype), jnp.asarray(reg, dtype)
    dim = state.mean.shape[-1]
    scaled = state.replace(sqrt_cov=state.sqrt_cov / jnp.sqrt(discount),
                           logdet=state.logdet + dim * jnp.log(discount))
    weight = jnp.sqrt((1 - discount) * reg)
    eye = jnp.eye(dim, dtype=dtype)
    refreshed = jax.lax.fori_loop(
        0, dim, lambda i, s: ridge_update(s, weight * eye[i], jnp.zeros((), dtype)), scaled)
    return refreshed.replace(count=state.count)


class Discounted(Delegating, Agent):
    """A ridge agent with a discounted (forgetting) design matrix, for drifting environments.

    An extension, not a papers' algorithm (module docstring: D-LinUCB's statistic, Russac et
    al. 2019, Alg. 1). Acts as the wrapped agent on the discounted statistic.

    Attributes:
      agent: a ridge agent (``greedy``, ``lin-ucb``, ``lin-ts``); its fields stay leaves.
      discount: gamma in (0, 1): an observation of age a weighs ``gamma^a`` (an effective
        memory of about ``1 / (1 - gamma)`` rounds).

    Example::

        agent = jb.agents.Discounted(agent=jb.make_agent("lin-ucb"), discount=0.99)
    """

    name = "discounted"
    description = "a ridge agent whose design matrix forgets with a discount (extension)"
    paper = "extension: Russac et al. 2019 (D-LinUCB's discounted statistic)"
    family = "linear"
    action_kinds = ("index", "vector")

    agent: Agent = struct.field(default_factory=LinTS)
    discount: float = 0.99

    def validate(self) -> None:
        if not isinstance(self.agent, RidgeAgent):
            raise ValueError(f"discounted: agent must be a ridge agent (greedy, lin-ucb, "
                             f"lin-ts), got {self.agent!r}")
        super().validate()
        self.agent.validate()
        check_probability(self, "discount")

    def act(self, state, key: jax.Array, context: Context):
        return self.agent.act(state, key, context)

    def update(self, state, key: jax.Array, context: Context, action: jax.Array,
               feedback: Feedback):
        if isinstance(state, LinUCBState):  # the kept widths follow the discounted statistic
            ridge = discount_ridge(state.ridge, self.discount, self.agent.reg)
            state = LinUCBState(ridge=ridge, sq_widths=ridge_sq_widths(ridge, context.arms))
        else:
            state = discount_ridge(state, self.discount, self.agent.reg)
        return self.agent.update(state, key, context, action, feedback)
