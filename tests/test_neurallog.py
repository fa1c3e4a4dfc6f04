"""Neural logistic bandits (Bae & Lee 2025): NeuralLog-UCB-1/2, NeuralLog-TS-1/2, NCBF-UCB, and the
synthetic environments of its Sec. 7 and App. J.

Tiny networks and horizons; each agent configuration is one compilation (a sweep puts several
hyperparameter values in one program). The float64 identities are in
``test_neurallog_float64.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.core import Feedback
from jaxbandits.envs.synthetic import FUNCTIONS, latent_reward

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

NEURAL = ["neurallog-ucb-1", "neurallog-ucb-2", "neurallog-ts-1", "neurallog-ts-2", "ncbf-ucb"]
KAPPA_FREE = ["neurallog-ucb-2", "neurallog-ts-2"]  # no kappa anywhere (Alg. 2, Remark I.2)
HORIZON = 60
TINY_NET = dict(width=4, num_grad_steps=5, update_every=10, learning_rate=0.1,
                buffer_size=HORIZON)
TINY_ENV = jb.make_env("neurallog-synthetic", dim=3, num_arms=4, pool_size=30, function="h4")


# ------------------------------------------------------------------------------------------------
# The environment.


def test_synthetic_functions_pool_and_exact_regret():
    """The six latent functions of Sec. 7 and App. J, the per-run pool and Bernoulli feedback with
    the exact pseudo-regret over the offered arms."""
    env = jb.make_env("neurallog-synthetic", dim=4, num_arms=3, pool_size=12)
    key = jax.random.key(0)
    state = env.init(key)
    theta, big = np.asarray(state.theta), np.asarray(state.matrix)
    x = np.asarray(state.pool)
    assert x.shape == (12, 4) and np.all(np.abs(x) <= 1) and np.all(np.abs(big) <= 1)
    u = x @ theta
    expected = {"h1": 0.2 * u**4, "h2": 20 * np.cos(u),
                "h3": 5 * np.einsum("ki,ij,kj->k", x, big, x), "h4": 10 * u**2,
                "h5": np.sum((x @ big.T) ** 2, axis=1), "h6": np.cos(3 * u)}
    for name in FUNCTIONS:
        np.testing.assert_allclose(latent_reward(name, state.theta, state.matrix, state.pool),
                                   expected[name], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(state.means, jax.nn.sigmoid(0.2 * (state.pool @ state.theta) ** 4),
                               rtol=1e-6)

    context = env.observe(jax.random.key(1), state, 0)
    assert len(set(np.asarray(context.arm_ids).tolist())) == 3  # distinct pool vectors
    np.testing.assert_array_equal(context.arms, state.pool[context.arm_ids])
    means = state.means[context.arm_ids]
    rewards = jax.vmap(lambda k: env.feedback(k, state, context, jnp.int32(1)).reward)(
        jax.random.split(key, 2000))
    assert set(np.unique(rewards).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(rewards.mean(), means[1], atol=0.05)
    feedback = env.feedback(key, state, context, jnp.int32(2))
    np.testing.assert_allclose(feedback.regret, means.max() - means[2])

    sphere = jb.make_env("neurallog-synthetic", dim=4, pool_size=12, feature_dist="sphere")
    np.testing.assert_allclose(jnp.linalg.norm(sphere.init(key).pool, axis=-1), 1.0, rtol=1e-5)
    shared = jb.make_env("neurallog-synthetic", dim=4, pool_size=12, instance_seed=3)
    np.testing.assert_array_equal(shared.init(key).pool, shared.init(jax.random.key(9)).pool)
    for field, value in [("function", "h7"), ("feature_dist", "ball"), ("pool_size", 2)]:
        with pytest.raises(ValueError, match=field if field != "pool_size" else "num_arms"):
            jb.make_env("neurallog-synthetic", **{field: value})


# ------------------------------------------------------------------------------------------------
# Structure: greedy limit, kappa invariance, theory mode.


def test_validation_names_the_field():
    for field, value in [("mode", "exact"), ("design", "banded"), ("kappa", 0.0),
                         ("delta", 1.5), ("param_bound", -1.0), ("explore_scale", -0.1)]:
        with pytest.raises(ValueError, match=field):
            jb.make_agent("neurallog-ucb-2", **{field: value})


@pytest.mark.parametrize("name, mode", [("neurallog-ucb-1", "practical"),
                                        ("neurallog-ts-2", "practical"),
                                        ("neurallog-ucb-2", "theory")])
def test_zero_exploration_index_is_the_mean(name, mode):
    """At the level of one index: with ``nu = 0`` the index (a TS draw too) is the mean:
    ``mu(f)`` (UCB-1), ``f`` or, for UCB-2 in theory mode, ``g(x; theta_0)^T (theta -
    theta_0)``, after a few rounds with training."""
    agent = jb.make_agent(name, mode=mode, explore_scale=0.0, **{**TINY_NET, "update_every": 2})
    env_state = TINY_ENV.init(jax.random.key(0))
    state = agent.init(jax.random.key(1), TINY_ENV.spec())
    for t in range(4):
        context = TINY_ENV.observe(jax.random.key(t), env_state, t)
        action, state = agent.act(state, jax.random.key(10 + t), context)
        feedback = Feedback(reward=jnp.asarray(float(t % 2)), regret=jnp.zeros(()))
        state = agent.update(state, jax.random.key(20 + t), context, action, feedback)
    arms = TINY_ENV.observe(jax.random.key(7), env_state, 4).arms
    network = agent.network(TINY_ENV.dim)
    if mode == "theory":
        delta = jax.flatten_util.ravel_pytree(state.params)[0] - jax.flatten_util.ravel_pytree(
            state.anchor)[0]
        mean = network.features(state.anchor, arms)[1] @ delta
    else:
        f = network.apply(state.params, arms)
        mean = jax.nn.sigmoid(f) if name == "neurallog-ucb-1" else f
    scores = agent.scores(state, jax.random.key(3), jb.Context(arms=arms))
    np.testing.assert_allclose(scores, mean, rtol=1e-6)
    assert float(jnp.max(jnp.abs(mean))) > 0  # it trained


@pytest.mark.full
def test_greedy_limit_and_kappa_invariance():
    """Kappa invariance and the greedy limit (practical mode), one compilation per agent: a sweep
    over ``nu`` in {0, 0.01} and ``kappa`` in {10, 1000} with common random numbers.

    * ``nu = 0``: the agents ranking by ``f`` are greedy on the same network and training, so
      their trajectories (per-step regret) coincide, bit for bit, whatever kappa. UCB-1 ranks by
      ``mu(f)``, the same order mathematically but not in float32, where ``mu`` merges values of
      ``f`` closer than about 1e-7 near 0 (the round-off of ``f(x; theta_0) = 0``) and saturates
      above 17, and ties go to the lowest index; its index is checked against ``mu(f)`` above;
    * ``nu > 0``: NeuralLog-UCB-2, NeuralLog-TS-2 and ada-OFU-ECOLog do not depend on kappa (bit
      for bit); NeuralLog-UCB-1, NeuralLog-TS-1 and NCBF-UCB do.
    """
    grid = {"explore_scale": [0.0, 0.01], "kappa": [10.0, 1000.0]}
    agents = {name: jb.make_agent(name, **TINY_NET) for name in NEURAL}
    agents["ada-ofu-ecolog"] = jb.make_agent("ada-ofu-ecolog", update_every=10,
                                             buffer_size=HORIZON)
    regret = {}
    for name, agent in agents.items():
        results = jb.sweep(TINY_ENV, agent, 0, grid, HORIZON, 2, record="all", progress=False)
        regret[name] = {k: r.cumulative_regret for k, r in results.items()}
        assert all(np.all(np.isfinite(r)) for r in regret[name].values()), name
    greedy = regret["neurallog-ucb-2"]["explore_scale=0.0,kappa=10.0"]
    for name in NEURAL:
        reference = regret[name]["explore_scale=0.0,kappa=10.0"] if name == NEURAL[0] else greedy
        for kappa in (10.0, 1000.0):
            np.testing.assert_array_equal(regret[name][f"explore_scale=0.0,kappa={kappa}"],
                                          reference, err_msg=name)
    for name in NEURAL + ["ada-ofu-ecolog"]:
        low = regret[name]["explore_scale=0.01,kappa=10.0"]
        high = regret[name]["explore_scale=0.01,kappa=1000.0"]
        if name in KAPPA_FREE + ["ada-ofu-ecolog"]:
            np.testing.assert_array_equal(low, high, err_msg=name)
        else:
            assert not np.array_equal(low, high), name
        if name in NEURAL:
            assert not np.array_equal(low, greedy), name  # the bonus does act


@pytest.mark.full
def test_theory_mode_runs_and_is_kappa_free_for_the_second_algorithm():
    """Theory mode (NTK features at theta_0, the lam_t schedule, the boxes' widths with
    ``nu = 1``, full matrices) runs for every agent through ``jb.sweep``; NeuralLog-UCB-2 and
    NeuralLog-TS-2 stay kappa-free."""
    grid = {"kappa": [10.0, 1000.0]}
    for name in NEURAL:
        agent = jb.make_agent(name, mode="theory", design="full", explore_scale=1.0, **TINY_NET)
        results = jb.sweep(TINY_ENV, agent, 0, grid, 30, 2, record="all", progress=False)
        low, high = (r.cumulative_regret for r in results.values())
        assert np.all(np.isfinite(low)) and np.all(np.isfinite(high)), name
        if name in KAPPA_FREE:
            np.testing.assert_array_equal(low, high, err_msg=name)


# ------------------------------------------------------------------------------------------------
# Ordering at small scale (Bae & Lee 2025, Sec. 7, Fig. 1).


@pytest.mark.slow
def test_ordering_on_a_small_synthetic_problem():
    """Every agent at its defaults through ``jb.compare`` on h3 (``5 x^T Theta x``) with d = 8,
    K = 5, a pool of 2500, T = 1000, 12 runs (key 0; buffers hold the horizon).

    Measured (final regret, mean +- 95% half-width): random 421 +- 75; NeuralLog-UCB-2 133 +- 30,
    NCBF-UCB 134 +- 31, NeuralLog-UCB-1 134 +- 30, NeuralLog-TS-1 144 +- 34, NeuralLog-TS-2
    146 +- 35; Logistic-UCB-1 354 +- 76, ada-OFU-ECOLog 341 +- 66 (UCB-2 minus NCBF, paired:
    -1.6 +- 3.3 s.e.). With key 1: random 456, UCB-2 196, NCBF 191, UCB-1 193, TS-1 191, TS-2
    192, Logistic-UCB-1 388, ada 377 (paired +5.0 +- 3.5). The paper's ordering
    ``(5) <= (4) < (1) < {(2), (3)}`` holds here only as ``(5) ~ (4) ~ (1) << {(2), (3)}``: at
    this size the neural UCBs tie.

    Tolerances: every neural agent below 0.6 x random; NeuralLog-UCB-2 at most 10% above
    NCBF-UCB and below 0.75 x the better linear baseline.
    """
    horizon = 1000
    env = jb.make_env("neurallog-synthetic", dim=8, num_arms=5, function="h3")
    agents = {"random": jb.make_agent("random")}
    for name in NEURAL + ["logistic-ucb-1", "ada-ofu-ecolog"]:
        agents[name] = jb.make_agent(name, buffer_size=horizon)
    results = jb.compare(env, agents, 0, horizon, 12, progress=False)
    final = {name: r.final()[0] for name, r in results.items()}
    for name in NEURAL:
        assert final[name] < 0.6 * final["random"], final
    assert final["neurallog-ucb-2"] <= 1.1 * final["ncbf-ucb"], final
    linear = min(final["logistic-ucb-1"], final["ada-ofu-ecolog"])
    assert final["neurallog-ucb-2"] < 0.75 * linear, final
