"""float64 identities of the GLM core and GLM-ES (Sun et al. 2025, Sec. 4.2, Alg. 1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents import member_reward_noise
from jaxbandits.linalg import (
    g_optimal_design,
    glm_gd,
    glm_grad,
    glm_hessian,
    glm_loss,
    glm_newton,
    link_mean,
    round_design,
)

pytestmark = pytest.mark.usefixtures("x64")

DIM, ARMS, STEPS = 4, 6, 40


def _history(seed: int = 0):
    """A fixed arm set and a played sequence: arms (K, d), actions (T,), rewards (T,)."""
    rng = np.random.default_rng(seed)
    arms = rng.normal(size=(ARMS, DIM))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    actions = rng.integers(0, ARMS, size=STEPS)
    rewards = 1 / (1 + np.exp(-arms[actions] @ rng.normal(size=DIM))) + 0.5 * rng.normal(size=STEPS)
    return arms, actions.astype(np.int32), rewards


def _feed(agent, state, arms, actions, rewards):
    """Runs ``agent.update`` on the given sequence (no acting), jitted; returns the state."""
    context = jb.Context(arms=jnp.asarray(arms))

    def body(state, step):
        action, reward = step
        feedback = jb.Feedback(reward=reward, regret=jnp.zeros_like(reward))
        return agent.update(state, jax.random.key(0), context, action, feedback), None

    run = jax.jit(lambda s, a, r: jax.lax.scan(body, s, (a, r))[0])
    return run(state, jnp.asarray(actions), jnp.asarray(rewards))


def _perturbations(key, members: int, scale: float) -> np.ndarray:
    """``Z_l^j`` of the shared perturbation table, ``(m, T)``."""
    table = jax.vmap(lambda j: jax.vmap(lambda s: member_reward_noise(key, j, s))(
        jnp.arange(STEPS)))(jnp.arange(members))
    return scale * np.asarray(table)


def test_glm_es_identity_link_newton_equals_lin_es_and_perturbed_ridge():
    """Identity link + exact solver = Lin-ES without initial perturbation, to 1e-10."""
    arms, actions, rewards = _history()
    reg, sigma, m = 0.7, 0.3, 5
    glm = jb.make_agent("glm-es", link="identity", solver="newton", newton_steps=2, warmup=0,
                        reg=reg, perturb_std=sigma, ensemble_size=m)
    lin = jb.make_agent("lin-es", init_perturbation=False, reg=reg, perturb_std=sigma,
                        ensemble_size=m)
    spec = jb.make_env("linear", dim=DIM, num_arms=ARMS).spec()
    key = jax.random.key(7)
    glm_state = _feed(glm, glm.init(key, spec), arms, actions, rewards)
    lin_state = _feed(lin, lin.init(key, spec), arms, actions, rewards)
    assert glm_state.theta.dtype == jnp.float64
    lin_members = np.stack([np.asarray(lin.estimate(lin_state, j)) for j in range(m)])
    np.testing.assert_allclose(glm_state.theta, lin_members, rtol=1e-10, atol=1e-12)
    # and the closed form (reg I + X^T X)^{-1} X^T (Y + Z^j) computed in numpy
    x = arms[actions]
    z = _perturbations(key, m, sigma)
    closed = np.linalg.solve(reg * np.eye(DIM) + x.T @ x, x.T @ (rewards[None] + z).T).T
    np.testing.assert_allclose(glm_state.theta, closed, rtol=1e-10, atol=1e-12)


def test_newton_first_order_condition_and_perturbation_identity():
    """||grad L^j(theta^j)|| < 1e-8, and f(theta^j) - f(theta_bar) = sum_l Z_l^j X_l."""
    arms, actions, rewards = _history(1)
    reg, sigma, m = 1.0, 0.5, 4
    agent = jb.make_agent("glm-es", solver="newton", newton_steps=30, warmup=0, reg=reg,
                          perturb_std=sigma, ensemble_size=m)
    key = jax.random.key(3)
    spec = jb.Spec(dim=DIM, num_arms=ARMS, fixed_arms=True)
    state = _feed(agent, agent.init(key, spec), arms, actions, rewards)
    data = state.data
    for j in range(m):
        sums = data.rewards + state.perturb_sums[j]
        grad = glm_grad(state.theta[j], data.features, data.counts, sums, reg, "logistic")
        assert np.linalg.norm(grad) < 1e-8
    theta_bar = glm_newton(jnp.zeros(DIM), data.features, data.counts, data.rewards, reg,
                           "logistic", num_steps=30)

    def f(theta):  # f_t(theta) = sum_l mu(X_l^T theta) X_l + reg theta
        return data.features.T @ (data.counts * link_mean(data.features @ theta, "logistic")) + (
            reg * theta)

    x = arms[actions]
    z = _perturbations(key, m, sigma)
    for j in range(m):
        np.testing.assert_allclose(f(state.theta[j]) - f(theta_bar), x.T @ z[j], atol=1e-9)


def test_per_arm_statistics_equal_the_full_history():
    """The per-arm loss, gradient and Hessian equal the full-history ones."""
    arms, actions, rewards = _history(2)
    theta = np.random.default_rng(5).normal(size=DIM)
    counts = np.bincount(actions, minlength=ARMS).astype(float)
    sums = np.bincount(actions, weights=rewards, minlength=ARMS)
    rows, ones = arms[actions], np.ones(STEPS)
    for fn, per_arm, full in [
        (glm_loss, (arms, counts, sums), (rows, ones, rewards)),
        (glm_grad, (arms, counts, sums), (rows, ones, rewards)),
        (glm_hessian, (arms, counts), (rows, ones)),
    ]:
        np.testing.assert_allclose(fn(theta, *per_arm, 0.8, "logistic"),
                                   fn(theta, *full, 0.8, "logistic"), rtol=1e-12, atol=1e-12)


def test_per_arm_and_buffer_gd_trajectories_coincide():
    """GLM-ES with per-arm statistics and with a full-history buffer agree."""
    arms, actions, rewards = _history(3)
    common = dict(warmup=0, ensemble_size=3, perturb_std=0.2, num_grad_steps=20,
                  learning_rate=0.5)
    spec = jb.Spec(dim=DIM, num_arms=ARMS, fixed_arms=True)
    key = jax.random.key(1)
    per_arm = jb.make_agent("glm-es", **common)
    buffered = jb.make_agent("glm-es", buffer_size=STEPS, **common)
    a = _feed(per_arm, per_arm.init(key, spec), arms, actions, rewards)
    b = _feed(buffered, buffered.init(key, spec), arms, actions, rewards)
    assert float(jnp.abs(a.theta).max()) > 0.05  # the fit moved
    np.testing.assert_allclose(a.theta, b.theta, rtol=1e-10, atol=1e-12)


def test_mean_loss_gd_converges_to_the_newton_minimiser():
    arms, actions, rewards = _history(4)
    counts = jnp.asarray(np.bincount(actions, minlength=ARMS), jnp.float64)
    sums = jnp.asarray(np.bincount(actions, weights=rewards, minlength=ARMS))
    args = (jnp.zeros(DIM), jnp.asarray(arms), counts, sums, 1.0, "logistic")
    exact = glm_newton(*args, num_steps=20)
    gd = jax.jit(lambda: glm_gd(*args, learning_rate=1.0, num_steps=3000))()
    np.testing.assert_allclose(gd, exact, atol=1e-8)


def test_warmup_regret_equals_design_counts_times_gaps():
    """The warm-up's cumulative regret is sum_i N_i Delta_i exactly, in every run."""
    env = jb.make_env("logistic", dim=DIM, num_arms=ARMS + 2, instance_seed=11)
    tau = 30
    agent = jb.make_agent("glm-es", warmup=tau, ensemble_size=2)
    result = jb.simulate(env, agent, 0, horizon=tau, num_runs=3, record=[tau], progress=False)
    instance = env.init(jax.random.key(0))  # the shared instance (instance_seed)
    counts = round_design(g_optimal_design(instance.arms), tau)
    assert int(counts.sum()) == tau
    gaps = np.max(instance.means) - np.asarray(instance.means)
    np.testing.assert_allclose(result.cumulative_regret[:, -1], np.dot(counts, gaps), rtol=1e-10)
