"""float64 identities of the ridge core and the linear agents against closed forms."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.linalg import ridge_covariance, ridge_init, ridge_sample, ridge_update

pytestmark = pytest.mark.usefixtures("x64")


def _fit(x: np.ndarray, y: np.ndarray, reg: float):
    def body(state, xy):
        return ridge_update(state, *xy), None

    return jax.jit(lambda x, y: jax.lax.scan(body, ridge_init(x.shape[1], reg), (x, y))[0])(x, y)


def test_incremental_ridge_equals_batch_solution():
    rng = np.random.default_rng(0)
    n, d, reg = 500, 6, 0.7
    x, y = rng.normal(size=(n, d)), rng.normal(size=n)
    state = _fit(x, y, reg)
    gram = reg * np.eye(d) + x.T @ x
    assert state.mean.dtype == jnp.float64
    np.testing.assert_allclose(state.mean, np.linalg.solve(gram, x.T @ y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ridge_covariance(state), np.linalg.inv(gram), rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(state.logdet, np.linalg.slogdet(gram)[1], rtol=1e-12)
    assert int(state.count) == n


def test_lints_sampling_covariance_matches_posterior():
    """Monte Carlo: 200,000 draws; each covariance entry within 4 standard errors."""
    rng = np.random.default_rng(1)
    d, scale = 4, 0.5
    state = _fit(rng.normal(size=(30, d)), rng.normal(size=30), 1.0)
    keys = jax.random.split(jax.random.key(0), 200_000)
    draws = np.asarray(jax.jit(jax.vmap(lambda k: ridge_sample(state, k, scale)))(keys))
    cov = scale**2 * np.asarray(ridge_covariance(state))
    assert np.all(np.abs(draws.mean(0) - state.mean) < 4 * np.sqrt(cov.diagonal() / len(draws)))
    # The standard error of a sample covariance entry is sqrt((S_ii S_jj + S_ij^2) / n).
    stderr = np.sqrt((np.outer(cov.diagonal(), cov.diagonal()) + cov**2) / len(draws))
    assert np.all(np.abs(np.cov(draws.T) - cov) < 4 * stderr)


def test_lints_agent_samples_from_the_ridge_posterior():
    """The agent's draw is mean + explore_scale * noise_std * S z, with z from its key."""
    agent = jb.make_agent("lin-ts", explore_scale=0.7, noise_std=0.3)
    env = jb.make_env("linear-sphere", dim=5)
    state = agent.init(jax.random.key(0), env.spec())
    state = ridge_update(state, jnp.ones(5) / jnp.sqrt(5.0), 0.4)
    action, _ = agent.act(state, jax.random.key(3), jb.Context(arms=None))
    theta = ridge_sample(state, jax.random.key(3), 0.7 * 0.3)
    np.testing.assert_allclose(action, theta / np.linalg.norm(theta), rtol=1e-12)


def test_linucb_index_equals_closed_form():
    rng = np.random.default_rng(2)
    d, k, n, reg, noise, delta, bound, alpha = 5, 7, 40, 0.5, 0.4, 0.05, 2.0, 0.3
    x, y = rng.normal(size=(n, d)), rng.normal(size=n)
    arms = rng.normal(size=(k, d))
    agent = jb.make_agent("lin-ucb", reg=reg, noise_std=noise, delta=delta, param_bound=bound,
                          explore_scale=alpha)
    state = _fit(x, y, reg)
    gram = reg * np.eye(d) + x.T @ x
    theta = np.linalg.solve(gram, x.T @ y)
    beta = noise * np.sqrt(2 * np.log(1 / delta) + np.linalg.slogdet(gram)[1] - d * np.log(reg))
    beta += np.sqrt(reg) * bound
    widths = np.sqrt(np.einsum("kd,de,ke->k", arms, np.linalg.inv(gram), arms))
    expected = arms @ theta + alpha * beta * widths
    scores = agent.scores(state, None, jb.Context(arms=jnp.asarray(arms)))
    np.testing.assert_allclose(scores, expected, rtol=1e-10)
    action, _ = agent.act(state, jax.random.key(0), jb.Context(arms=jnp.asarray(arms)))
    assert int(action) == int(np.argmax(expected))


def test_greedy_plays_the_ridge_argmax():
    rng = np.random.default_rng(3)
    state = _fit(rng.normal(size=(20, 3)), rng.normal(size=20), 1.0)
    arms = jnp.asarray(rng.normal(size=(6, 3)))
    action, _ = jb.make_agent("greedy").act(state, jax.random.key(0), jb.Context(arms=arms))
    assert int(action) == int(np.argmax(np.asarray(arms) @ np.asarray(state.mean)))
