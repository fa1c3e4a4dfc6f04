"""float64 identities of the discounted ridge statistic (the forgetting extension) against its
closed form, and the wrapped agents' kept widths."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents.forgetting import Discounted
from jaxbandits.linalg import ridge_covariance, ridge_sq_widths

pytestmark = pytest.mark.usefixtures("x64")


def _play(agent, arms, actions, rewards, spec):
    def body(state, item):
        action, reward = item
        context = jb.Context(arms=arms)
        _, acted = agent.act(state, jax.random.key(0), context)
        return agent.update(acted, jax.random.key(1), context, action,
                            jb.Feedback(reward=reward, regret=jnp.zeros(()))), None

    return jax.jit(lambda a, r: jax.lax.scan(body, agent.init(jax.random.key(2), spec),
                                             (a, r))[0])(actions, rewards)


@pytest.mark.parametrize("name, fixed", [("lin-ts", False), ("lin-ucb", True)])
def test_discounted_statistic_is_the_weighted_ridge_solution(name, fixed):
    """V_T = reg I + sum_t gamma^(T-t) x_t x_t^T, mean_T = V_T^{-1} sum_t gamma^(T-t) x_t y_t,
    log det V_T tracked exactly; LinUCB's kept widths are x_k^T V_T^{-1} x_k."""
    rng = np.random.default_rng(0)
    d, k, n, gamma, reg = 3, 5, 40, 0.9, 0.5
    arms = rng.normal(size=(k, d))
    actions, rewards = rng.integers(0, k, n), rng.normal(size=n)
    spec = jb.Spec(dim=d, num_arms=k, fixed_arms=fixed)
    agent = Discounted(agent=jb.make_agent(name, reg=reg), discount=gamma)
    agent.validate()
    state = _play(agent, jnp.asarray(arms), jnp.asarray(actions), jnp.asarray(rewards), spec)
    ridge = state.ridge if fixed else state
    weights = gamma ** np.arange(n - 1, -1, -1)
    x = arms[actions]
    gram = reg * np.eye(d) + (x * weights[:, None]).T @ x
    np.testing.assert_allclose(ridge_covariance(ridge), np.linalg.inv(gram), rtol=1e-9)
    np.testing.assert_allclose(ridge.mean, np.linalg.solve(gram, x.T @ (weights * rewards)),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ridge.logdet, np.linalg.slogdet(gram)[1], rtol=1e-9)
    assert int(ridge.count) == n
    if fixed:
        np.testing.assert_allclose(state.sq_widths, ridge_sq_widths(ridge, jnp.asarray(arms)),
                                   rtol=1e-9)


def test_discount_must_lie_in_the_open_unit_interval():
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="discount"):
            Discounted(discount=bad).validate()
    with pytest.raises(ValueError, match="ridge agent"):
        Discounted(agent=jb.make_agent("glm-es")).validate()
