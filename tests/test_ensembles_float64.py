"""float64 identities of the closed-form ensemble agents against batch formulas.

* ``lin-es``: every member equals its perturbed ridge solution ``V^{-1}(W^j + sum x (y + Z^j))``.
* Lee & Oh 2024, Proposition 2, pathwise: ``lin-es`` with ``m = T`` and round robin is ``lin-phe``.
* Ensemble++: the Kalman-form factor after 500 adaptive updates equals the batch form
  ``A_t = Sigma_t (Sigma_0^{-1} A_0 + sum_s x_s z_s^T / sigma)``, and on one-hot features it is
  the scalar per-arm recursion of Li et al. 2024, Example 1.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import jaxbandits as jb
from jaxbandits.agents import chosen_features, member_prior_noise, member_reward_noise
from jaxbandits.linalg import perturbation_sample

pytestmark = pytest.mark.usefixtures("x64")


def drive(env, agent, key, horizon, probe=None):
    """Plays run 0 as the runner does (its keys, ``jb.runner.rollout``) and returns
    ``(final_state, trace)``.

    ``trace`` holds, per round, the played features ``(T, d)``, rewards, actions, the update key
    and ``probe(state, context)`` evaluated before acting. The agent's init key is
    ``jb.runner.run_keys(key, 0)[1]``.
    """
    env_key, agent_key, keys = jb.runner.run_keys(key, 0)

    @jax.jit
    def run():
        env_state = env.init(env_key)

        def one_round(state, t):
            k = keys.at(t)
            context = env.observe(k.env_observe, env_state, t)
            probed = probe(state, context) if probe is not None else jnp.zeros(())
            action, state = agent.act(state, k.agent_act, context)
            feedback = env.feedback(k.env_feedback, env_state, context, action)
            state = agent.update(state, k.agent_update, context, action, feedback)
            features = chosen_features(context, action)
            return state, (features, feedback.reward, action, k.agent_update, probed)

        return jb.runner.rollout(one_round, agent.init(agent_key, env.spec()), horizon)

    state, (x, y, actions, update_keys, probed) = run()
    return state, dict(x=np.asarray(x), y=np.asarray(y), actions=np.asarray(actions),
                       update_keys=update_keys, probed=np.asarray(probed))


def test_lin_es_members_equal_their_perturbed_ridge_solutions():
    env = jb.make_env("linear", dim=4, num_arms=8, noise_std=0.3)
    agent = jb.make_agent("lin-es", ensemble_size=6, reg=1.5, perturb_std=0.4, prior_scale=0.7)
    key = jax.random.key(0)
    state, trace = drive(env, agent, key, 300)
    assert state.ensemble.factor.dtype == jnp.float64
    x, y = trace["x"], trace["y"]
    d, m, steps = 4, 6, len(y)
    # The agent's perturbation table (its init key in `drive`).
    noise_key = jb.runner.run_keys(key, 0)[1]
    xi = np.stack([member_prior_noise(noise_key, j, d) for j in range(m)])  # (m, d)
    z = np.asarray(jax.vmap(jax.vmap(lambda j, s: member_reward_noise(noise_key, j, s),
                                     (0, None)), (None, 0))(jnp.arange(m), jnp.arange(steps)))
    w = np.sqrt(1.5) * 0.7 * 0.4 * xi  # W^j ~ N(0, reg (prior_scale sigma_R)^2 I)
    gram = 1.5 * np.eye(d) + x.T @ x
    for j in range(m):
        expected = np.linalg.solve(gram, w[j] + x.T @ (y + 0.4 * z[:, j]))
        np.testing.assert_allclose(agent.estimate(state, j), expected, rtol=1e-9, atol=1e-11)
    # The augmented least-squares form of eq. (1): rows sqrt(reg) I with targets W / sqrt(reg).
    rows = np.concatenate([np.sqrt(1.5) * np.eye(d), x])
    targets = np.concatenate([w[2] / np.sqrt(1.5), y + 0.4 * z[:, 2]])
    lstsq = np.linalg.lstsq(rows, targets, rcond=None)[0]
    np.testing.assert_allclose(agent.estimate(state, 2), lstsq, rtol=1e-9, atol=1e-11)


def test_lin_es_without_perturbations_is_greedy_ridge():
    """Lee & Oh 2024, Alg. 1 unperturbed: sigma_R = 0 and W = 0 make every member the ridge
    estimate."""
    env = jb.make_env("linear", dim=3, num_arms=5)
    agent = jb.make_agent("lin-es", ensemble_size=3, perturb_std=0.0, init_perturbation=False)
    state, trace = drive(env, agent, jax.random.key(1), 50)
    x, y = trace["x"], trace["y"]
    ridge = np.linalg.solve(np.eye(3) + x.T @ x, x.T @ y)
    for j in range(3):
        np.testing.assert_allclose(agent.estimate(state, j), ridge, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("action_kind", ["index", "vector"])
def test_proposition_2_lin_es_round_robin_with_m_equal_T_is_lin_phe(action_kind):
    """Lee & Oh 2024, Prop. 2, pathwise: same actions and estimates (to 1e-9) for all T rounds.

    Both agents get the same init key, so ``lin-es`` member t and ``lin-phe``'s round t read the
    same ``W^t`` and ``Z_s^t``; ``lin-phe`` keeps its history in a buffer of capacity T.
    """
    horizon = 120
    if action_kind == "index":
        env = jb.make_env("linear", dim=4, num_arms=10, noise_std=0.5)
    else:
        env = jb.make_env("linear-sphere", dim=4, noise_std=0.5)
    es = jb.make_agent("lin-es", ensemble_size=horizon, selection="round_robin", perturb_std=0.5)
    phe = jb.make_agent("lin-phe", buffer_size=horizon, perturb_std=0.5)
    key = jax.random.key(2)
    _, es_trace = drive(env, es, key, horizon,
                        probe=lambda s, c: es.estimate(s, s.ensemble.ridge.count % horizon))
    _, phe_trace = drive(env, phe, key, horizon, probe=phe.estimate)
    np.testing.assert_allclose(es_trace["probed"], phe_trace["probed"], rtol=1e-9, atol=1e-9)
    if action_kind == "index":
        np.testing.assert_array_equal(es_trace["actions"], phe_trace["actions"])
        assert len(np.unique(es_trace["actions"])) > 1
    else:
        np.testing.assert_allclose(es_trace["actions"], phe_trace["actions"], atol=1e-9)

    # Negative control: a member reused (round robin with m < T) is not LinPHE.
    reuse = es.replace(ensemble_size=horizon // 4)
    _, reuse_trace = drive(env, reuse, key, horizon,
                           probe=lambda s, c: reuse.estimate(s, s.ensemble.ridge.count % 30))
    assert np.max(np.abs(reuse_trace["probed"] - phe_trace["probed"])) > 1e-3


def test_proposition_2_through_the_runner():
    """``compare`` gives every agent of a run the same init key: identical regret curves."""
    env = jb.make_env("linear", dim=3, num_arms=6, noise_std=0.5)
    horizon = 60
    results = jb.compare(env, {
        "es": jb.make_agent("lin-es", ensemble_size=horizon, selection="round_robin"),
        "phe": jb.make_agent("lin-phe", buffer_size=horizon),
    }, jax.random.key(3), horizon, 3, progress=False, record="all")
    np.testing.assert_allclose(results["es"].cumulative_regret,
                               results["phe"].cumulative_regret, rtol=1e-9)
    assert results["es"].cumulative_regret[:, -1].min() > 0


def _ensemble_pp_batch(agent, init_key, x, y, z):
    """The closed forms of Li et al. 2024, Sec. 3.1, Eqs. 2-4, in the paper's notation (Sigma, not
    V)."""
    dim = x.shape[1]
    sigma, lam = agent.noise_std, agent.reg
    a0 = np.asarray(agent.init(init_key, jb.Spec(dim=dim, num_arms=0)).factor)
    sigma0_inv = lam / sigma**2 * np.eye(dim)
    sigma_t = np.linalg.inv(sigma0_inv + x.T @ x / sigma**2)
    mu_t = sigma_t @ (x.T @ y / sigma**2)
    a_t = sigma_t @ (sigma0_inv @ a0 + x.T @ z / sigma)
    return mu_t, a_t, sigma_t


@pytest.mark.parametrize("config", [
    {},  # Gaussian reference, Sphere perturbation, the paper's A_0
    {"reference": "sparse", "perturbation": "cube", "factor_init": "code", "noise_std": 0.7},
])
def test_ensemble_pp_factor_equals_batch_form(config):
    env = jb.make_env("russo", dim=6, num_arms=15)
    agent = jb.make_agent("ensemble-pp", ensemble_size=5, **config)
    key = jax.random.key(4)
    state, trace = drive(env, agent, key, 500)
    z = np.asarray(jax.vmap(lambda k: perturbation_sample(k, agent.perturbation, 5))(
        trace["update_keys"]))
    mu_t, a_t, sigma_t = _ensemble_pp_batch(agent, jb.runner.run_keys(key, 0)[1], trace["x"],
                                            trace["y"], z)
    assert len(np.unique(trace["actions"])) > 1  # adaptive, not a fixed design
    np.testing.assert_allclose(state.factor, a_t, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(state.ridge.mean, mu_t, rtol=1e-8, atol=1e-10)
    cov = agent.noise_std**2 * np.asarray(jb.linalg.ridge_covariance(state.ridge))
    np.testing.assert_allclose(cov, sigma_t, rtol=1e-8, atol=1e-12)


class OneHotEnv(jb.Env):
    """K independent Gaussian arms as one-hot features (Li et al. 2024, Example 1)."""

    name = ""
    num_arms: int = struct.field(pytree_node=False, default=4)
    noise_std: float = 1.0

    def spec(self):
        return jb.Spec(dim=self.num_arms, num_arms=self.num_arms)

    def init(self, key):
        return jax.random.normal(key, (self.num_arms,))

    def observe(self, key, env_state, t):
        return jb.Context(arms=jnp.eye(self.num_arms))

    def feedback(self, key, env_state, context, action):
        mean = env_state[action]
        reward = mean + self.noise_std * jax.random.normal(key, ())
        return jb.Feedback(reward=reward, regret=jnp.max(env_state) - mean)


def test_ensemble_pp_multi_armed_case_matches_the_scalar_recursion():
    """Per arm: 1/s_t^2 = 1/s_{t-1}^2 + 1[X_t = e_i] / sigma^2 and
    m_t / s_t^2 = m_{t-1} / s_{t-1}^2 + 1[X_t = e_i] z_t / sigma, m_0 = s_0 z_0 (code init)."""
    arms, size, sigma, lam = 4, 6, 0.8, 0.2
    env = OneHotEnv(num_arms=arms, noise_std=sigma)
    agent = jb.make_agent("ensemble-pp", ensemble_size=size, noise_std=sigma, reg=lam,
                          factor_init="code")
    key = jax.random.key(5)
    state, trace = drive(env, agent, key, 300)
    z = np.asarray(jax.vmap(lambda k: perturbation_sample(k, "sphere", size))(
        trace["update_keys"]))
    m = np.array(agent.init(jb.runner.run_keys(key, 0)[1], env.spec()).factor)  # m_0^i
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), sigma / np.sqrt(lam), rtol=1e-12)
    precision = np.full(arms, lam / sigma**2)
    mean = np.zeros(arms)
    for a, y, z_t in zip(trace["actions"], trace["y"], z, strict=True):
        new_precision = precision[a] + 1.0 / sigma**2
        m[a] = (precision[a] * m[a] + z_t / sigma) / new_precision
        mean[a] = (precision[a] * mean[a] + y / sigma**2) / new_precision
        precision[a] = new_precision
    assert np.all(np.bincount(trace["actions"], minlength=arms) > 0)
    np.testing.assert_allclose(state.factor, m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(state.ridge.mean, mean, rtol=1e-9, atol=1e-12)
