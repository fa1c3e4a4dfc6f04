"""Neural agents (Neural-ES, NeuralUCB, NeuralTS) and the nonlinear environments.

Tiny networks and horizons; each distinct agent configuration is one compilation. The orderings
on ``quadratic`` and the anytime wrapper are marked slow; the throughput at the paper's sizes is
``benchmarks/throughput_neural.py``'s.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents import NeuralES, NeuralTS, NeuralUCB

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

TINY_NET = dict(width=8, depth=2, num_grad_steps=5)
ENV = jb.make_env("quadratic", dim=3, num_arms=4, scale=0.1)


def play(env, agent, key, horizon, probe):
    """One run of ``horizon`` rounds; returns the final agent state and ``probe(state_before,
    context, action, state_after)`` for every round (stacked)."""
    key_env, key_agent, key_obs, key_act, key_fb, key_upd = jax.random.split(key, 6)
    env_state = env.init(key_env)

    def body(state, t):
        context = env.observe(jax.random.fold_in(key_obs, t), env_state, t)
        action, acted = agent.act(state, jax.random.fold_in(key_act, t), context)
        feedback = env.feedback(jax.random.fold_in(key_fb, t), env_state, context, action)
        new = agent.update(acted, jax.random.fold_in(key_upd, t), context, action, feedback)
        return new, probe(state, context, action, new)

    state = agent.init(key_agent, env.spec())
    return jax.lax.scan(body, state, jnp.arange(horizon, dtype=jnp.int32))


def changed(before, after) -> jax.Array:
    return jnp.any(jnp.stack([jnp.any(a != b) for a, b in
                              zip(jax.tree.leaves(before), jax.tree.leaves(after), strict=True)]))


# ------------------------------------------------------------------------------------------------
# Neural-ES.


def test_neural_es_members_coincide_without_perturbation():
    """sigma_R = 0 makes every member the same network (and the agent greedy);
    the warm-up pulls each arm once."""
    agent = NeuralES(perturb_std=0.0, ensemble_size=3, **TINY_NET)
    horizon = 16

    @jax.jit
    def run(key):
        return play(ENV, agent, key, horizon, lambda s, c, a, n: a)

    state, actions = run(jax.random.key(0))
    num_arms = ENV.num_arms
    np.testing.assert_array_equal(np.sort(actions[:num_arms]), np.arange(num_arms))
    for leaf in jax.tree.leaves(state.params):
        assert leaf.shape[0] == 3
        np.testing.assert_array_equal(leaf, jnp.broadcast_to(leaf[0], leaf.shape))
    assert changed(state.anchor, jax.tree.map(lambda p: p[0], state.params))  # it trained
    assert int(state.data.num_obs) == horizon

    # with sigma_R > 0 the members start equal and then differ only through their Z
    agent = agent.replace(perturb_std=0.5)
    state, _ = jax.jit(lambda k: play(ENV, agent, k, horizon, lambda s, c, a, n: a))(
        jax.random.key(0))
    leaf = jax.tree.leaves(state.params)[0]
    assert float(jnp.max(jnp.abs(leaf[1] - leaf[0]))) > 0
    np.testing.assert_array_equal(state.perturb_sums.sum(-1) != 0, True)


# ------------------------------------------------------------------------------------------------
# NeuralUCB and NeuralTS.


@pytest.mark.parametrize("cls", [NeuralUCB, NeuralTS])
def test_zero_exploration_is_greedy(cls):
    """With nu = 0 the index is the network's prediction."""
    agent = cls(explore_scale=0.0, **TINY_NET)
    network = agent.network(ENV.dim)

    def probe(state, context, action, new):
        return action, jnp.argmax(network.apply(state.params, context.arms))

    _, (actions, greedy) = jax.jit(lambda k: play(ENV, agent, k, 16, probe))(jax.random.key(1))
    num_arms = ENV.num_arms
    np.testing.assert_array_equal(np.sort(actions[:num_arms]), np.arange(num_arms))
    np.testing.assert_array_equal(actions[num_arms:], greedy[num_arms:])


def test_training_schedule_under_vmap_over_runs():
    """``update_every = 50`` trains exactly at t = 50, 100, 150, in every run of a batch."""
    agent = NeuralUCB(update_every=50, warmup=0, width=8, depth=2, num_grad_steps=2)

    def probe(state, context, action, new):
        return changed(state.params, new.params), changed(state.design, new.design)

    run = jax.jit(jax.vmap(lambda k: play(ENV, agent, k, 160, probe)[1]))
    trained, design_moved = run(jax.random.split(jax.random.key(2), 3))
    t = np.arange(1, 161)  # the observation count after round t
    np.testing.assert_array_equal(trained, np.broadcast_to((t % 50) == 0, (3, 160)))
    # the design matrix moves every round, though theta trains every 50
    assert bool(np.all(design_moved))


def test_full_design_option_and_validation():
    agent = jb.make_agent("neural-ucb", design="full", **TINY_NET)
    state = agent.init(jax.random.key(3), ENV.spec())
    p = agent.network(ENV.dim).num_params
    assert state.design.sqrt_cov.shape == (p, p)
    with pytest.raises(ValueError, match="width"):
        jb.make_agent("neural-es", width=7)
    with pytest.raises(ValueError, match="design"):
        jb.make_agent("neural-ts", design="banded")
    with pytest.raises(ValueError, match="loss_reduction"):
        jb.make_agent("neural-es", loss_reduction="median")
    with pytest.raises(ValueError, match="perturb_std"):
        jb.make_agent("neural-es", perturb_std=-1.0)


def test_ring_buffer_on_fresh_arms():
    """Changing contexts: a ring buffer of the last B observations with a validity mask."""
    env = jb.make_env("distance", dim=3, num_arms=4, fresh_arms=True)
    agent = NeuralES(ensemble_size=2, buffer_size=8, **TINY_NET)
    state, rewards = jax.jit(lambda k: play(env, agent, k, 12, lambda s, c, a, n: a))(
        jax.random.key(4))
    np.testing.assert_array_equal(state.data.counts, 1.0)  # full after 8 of 12 rounds
    assert state.perturb_sums.shape == (2, 8)
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(state.params))


# ------------------------------------------------------------------------------------------------
# Environments.


def test_nonlinear_environments():
    key = jax.random.key(5)
    dist = jb.make_env("distance", dim=4, num_arms=6)
    state = dist.init(key)
    np.testing.assert_allclose(jnp.linalg.norm(state.arms, axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(state.means, -jnp.linalg.norm(state.arms - state.params, axis=-1))
    # on unit arms the distance is monotone in <x, theta*>: the best arm is the linear one
    assert int(jnp.argmax(state.means)) == int(jnp.argmax(state.arms @ state.params))
    ball = jb.make_env("distance", dim=4, num_arms=200, arm_prior="ball").init(key)
    assert float(jnp.max(jnp.linalg.norm(ball.arms, axis=-1))) <= 1.0 + 1e-6
    assert float(jnp.min(jnp.linalg.norm(ball.arms, axis=-1))) < 0.8

    quad = jb.make_env("quadratic", dim=4, num_arms=6, scale=0.01)
    state = quad.init(key)
    a = state.params
    np.testing.assert_allclose(state.means, 0.01 * jnp.einsum("kd,de,fe,kf->k", state.arms, a, a,
                                                              state.arms), rtol=1e-5)
    feedback = quad.feedback(key, state, quad.observe(key, state, 0), jnp.int32(2))
    np.testing.assert_allclose(feedback.regret, state.means.max() - state.means[2], rtol=1e-6)

    mlp = jb.make_env("random-mlp", dim=4, num_arms=6, width=8)
    state = mlp.init(key)
    assert state.means.shape == (6,) and float(jnp.std(state.means)) > 0
    with pytest.raises(ValueError, match="arm_prior"):
        jb.make_env("quadratic", arm_prior="simplex")


# ------------------------------------------------------------------------------------------------
# Slow: orderings and the anytime wrapper (throughput: benchmarks/throughput_neural.py).


@pytest.mark.slow
def test_neural_agents_beat_random_on_quadratic():
    """Every neural agent, at its defaults (L = 3, m = 20, 100 GD steps at 0.01 every round),
    beats uniform random play by a wide margin on a small ``quadratic`` (4 runs, T = 500)."""
    env = jb.make_env("quadratic", dim=4, num_arms=8, scale=0.1)
    names = ["random", "neural-es", "neural-ucb", "neural-ts"]
    results = jb.compare(env, {n: jb.make_agent(n) for n in names}, 0, horizon=500,
                         num_runs=4, progress=False)
    random_regret = results["random"].final()[0]
    for name in names[1:]:
        assert results[name].final()[0] < 0.4 * random_regret, name


@pytest.mark.slow
def test_neural_es_runs_under_the_doubling_trick():
    """Neural-ES exposes ``active_members``, ``perturb_std`` and ``warmup`` as leaves, so the
    anytime wrapper can restart it per epoch (Sun et al. 2025's Neural-ES-DT, Sec. 7.2)."""
    anytime = pytest.importorskip("jaxbandits.agents.anytime")
    agent = anytime.Anytime(agent=NeuralES(ensemble_size=6, **TINY_NET), first_epoch=10)
    result = jb.simulate(ENV, agent, 0, horizon=40, num_runs=2, progress=False)
    assert np.all(np.isfinite(result.cumulative_regret))


