"""NVLDB / NLDB and NDB (Oh et al. 2026, Alg. 1, Eqs. 2-6): the exact identities in float64, valid
pairs without self-duels, and learning on a tiny ``dueling-square``."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents import dueling_neural as dn
from jaxbandits.core import Feedback, Spec
from jaxbandits.envs.dueling import DuelingSquareEnv

DIM, NUM_ARMS, WIDTH, HORIZON = 3, 4, 8, 40
SMALL = dict(width=WIDTH, buffer_size=HORIZON)
NAMES = [f"{p}-{k}-{f}" for p in ("nvldb", "nldb") for k in ("ucb", "ts")
         for f in ("asym", "osym", "csym")] + ["ndb-ucb", "ndb-ts"]


class SelfDuelCounting(DuelingSquareEnv):
    """``dueling-square`` (Oh et al. 2026's square task, App. E.1.1: unit-norm contexts, ``u = 10
    (theta^T x)^2``, ``theta ~ U[-1, 1]^d``, BTL, average regret) with the self-duel indicator as
    one more metric, so that the runner counts self-duels."""

    name = "dueling-square-self-duels"

    def spec(self) -> Spec:
        spec = super().spec()
        return spec.replace(metrics=spec.metrics + ("self_duel",))

    def feedback(self, key, env_state, context, action):
        feedback = super().feedback(key, env_state, context, action)
        self_duel = (action[0] == action[1]).astype(feedback.regret.dtype)
        return feedback.replace(metrics={**feedback.metrics, "self_duel": self_duel})


ENV = SelfDuelCounting(dim=DIM, num_arms=NUM_ARMS)


def play(agent, key, horizon=HORIZON, env=ENV):
    """One run of ``agent`` on ``env`` in a jitted ``lax.scan``: the actions ``(T, 2)``, the
    regrets ``(T,)`` and the final state (the runner's shape, for one run)."""

    @jax.jit
    def run(key):
        key_env, key_agent, key_steps = jax.random.split(key, 3)
        env_state = env.init(key_env)

        def step(state, inputs):
            t, key_t = inputs
            key_obs, key_act, key_fb, key_upd = jax.random.split(key_t, 4)
            context = env.observe(key_obs, env_state, t)
            action, state = agent.act(state, key_act, context)
            feedback = env.feedback(key_fb, env_state, context, action)
            state = agent.update(state, key_upd, context, action, feedback)
            return state, (action, feedback.regret)

        inputs = (jnp.arange(horizon), jax.random.split(key_steps, horizon))
        state, (actions, regrets) = jax.lax.scan(step, agent.init(key_agent, env.spec()), inputs)
        return actions, regrets, state

    return run(key)


def tiny_buffer(seed, capacity, filled):
    """A buffer of ``capacity`` rows with ``filled`` random pairs and random weights."""
    k1, k2, k3, k4 = jax.random.split(jax.random.key(seed), 4)
    rows = jnp.arange(capacity) < filled
    x1 = jnp.where(rows[:, None], jax.random.normal(k1, (capacity, DIM)), 0.0)
    x2 = jnp.where(rows[:, None], jax.random.normal(k2, (capacity, DIM)), 0.0)
    outcome = jnp.where(rows, jax.random.bernoulli(k3, 0.5, (capacity,)), 0.0)
    weight = jnp.where(rows, jax.random.uniform(k4, (capacity,), minval=1.0, maxval=100.0), 0.0)
    return dn.DuelBuffer(x1=x1, x2=x2, outcome=outcome.astype(x1.dtype), weight=weight,
                         num_obs=jnp.asarray(filled, jnp.int32))


def net_and_state(**options):
    """A small NVLDB agent, its feature network and an initial state."""
    return _net_and_state(tuple(sorted(options.items())), jax.config.jax_enable_x64)


@functools.cache
def _net_and_state(options, x64):
    # jitted and cached: an eager init costs seconds of op-by-op dispatch
    agent = jb.make_agent("nvldb-ucb-asym", width=WIDTH, **dict(options))
    state = jax.jit(agent.init, static_argnums=1)(jax.random.key(0), ENV.spec())
    return agent, agent.network(DIM), state


# ------------------------------------------------------------------------------------------------
# Float64 identities (Oh et al. 2026, Eqs. 2-6).


@pytest.mark.usefixtures("x64")
def test_f_is_theta_phi_and_its_theta_gradient_is_phi():
    agent, network, state = net_and_state()
    bare = agent.replace(feature_scale=False, final_relu=False).network(DIM)
    x = jax.random.normal(jax.random.key(1), (NUM_ARMS, DIM))

    @jax.jit
    def compute(params, x):
        u, phi = dn.nvldb_utilities(network, params, x)

        def f(theta, xk):
            return dn.nvldb_utilities(network, params.replace(theta=theta), xk[None])[0][0]

        grads = jax.vmap(jax.grad(f), (None, 0))(params.theta, x)
        return u, phi, grads, bare.apply(params.net, x)

    u, phi, grads, phi_bare = compute(state.params, x)
    assert u.dtype == jnp.float64 and phi.shape == (NUM_ARMS, DIM)  # D = d by default
    np.testing.assert_allclose(u, phi @ state.params.theta, rtol=1e-12)
    np.testing.assert_allclose(grads, phi, atol=1e-6, rtol=0)
    # phi = sqrt(m) relu(W_3 relu(W_2 relu(W_1 x))), and without the switches of Eq. 2
    w1, w2, w3 = (np.asarray(k[...]) for k in state.params.net["kernels"].values())
    relu = lambda a: np.maximum(a, 0.0)  # noqa: E731
    pre = w3 @ relu(w2 @ relu(w1 @ np.asarray(x).T))
    np.testing.assert_allclose(phi, np.sqrt(WIDTH) * relu(pre).T, rtol=1e-12)
    np.testing.assert_allclose(phi_bare, pre.T, rtol=1e-12)


@pytest.mark.usefixtures("x64")
def test_loss_is_the_weighted_sum_and_finite_for_large_gaps():
    _, network, state = net_and_state()
    buffer = tiny_buffer(1, capacity=9, filled=6)
    theta0, reg = state.theta0, 0.7

    @jax.jit
    def compute(params):
        def literal(params):
            f1 = dn.nvldb_utilities(network, params, buffer.x1)[0]
            f2 = dn.nvldb_utilities(network, params, buffer.x2)[0]
            s = 2.0 * buffer.outcome - 1.0
            data = jnp.sum(buffer.weight * jnp.log1p(jnp.exp(-s * (f1 - f2))))
            return data + reg / 2 * jnp.sum((params.theta - theta0) ** 2)

        # |delta f| up to 1e3: theta scaled until the largest gap is 1e3
        gaps = (dn.nvldb_utilities(network, params, buffer.x1)[0]
                - dn.nvldb_utilities(network, params, buffer.x2)[0])
        big = params.replace(theta=params.theta * 1e3 / jnp.max(jnp.abs(gaps)))
        large = [jax.value_and_grad(dn.nvldb_loss, argnums=1)(network, big, theta0, buffer, reg,
                                                              link) for link in dn.LINKS]
        return dn.nvldb_loss(network, params, theta0, buffer, reg), literal(params), large

    got, want, large = compute(state.params.replace(theta=theta0 + 0.3))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for loss, grad in large:
        assert np.isfinite(loss) and loss > 100.0  # the wrong-way pairs cost about |delta f|
        assert all(np.all(np.isfinite(g)) for g in jax.tree.leaves(grad))
    z = jnp.array([-1e3, -30.0, 0.0, 30.0, 1e3])
    np.testing.assert_allclose(dn.neg_log_preference(z), jax.nn.softplus(-z), rtol=1e-12)
    assert np.all(np.isfinite(dn.neg_log_preference(z, "probit")))


@pytest.mark.usefixtures("x64")
def test_padded_rows_contribute_exactly_zero_gradient():
    _, network, state = net_and_state()
    buffer = tiny_buffer(2, capacity=11, filled=5)
    garbage = jax.random.normal(jax.random.key(3), (11, DIM)) * 5.0
    filled = jnp.arange(11)[:, None] < 5
    noisy = buffer.replace(x1=jnp.where(filled, buffer.x1, garbage),
                           x2=jnp.where(filled, buffer.x2, -garbage),
                           outcome=jnp.where(filled[:, 0], buffer.outcome, 1.0))
    exact = jax.tree.map(lambda a: a[:5] if a.ndim else a, buffer)

    def data_grad(p, *rows):
        return jax.grad(dn.nvldb_data_loss, argnums=1)(network, p, *rows, "btl")

    @jax.jit
    def compute(params, theta0):
        pad = data_grad(params, noisy.x1[5:], noisy.x2[5:], noisy.outcome[5:], noisy.weight[5:])
        loss_grad = jax.grad(dn.nvldb_loss, argnums=1)
        want = loss_grad(network, params, theta0, exact, 1.0)
        full = loss_grad(network, params, theta0, noisy, 1.0)
        blocked = dn.duel_buffer_sum(lambda *rows: data_grad(params, *rows), noisy,
                                     block_rows=2)
        return pad, want, full, blocked.replace(theta=blocked.theta + params.theta - theta0)

    pad, want, full, blocked = compute(state.params, state.theta0)
    for g in jax.tree.leaves(pad):
        assert np.all(np.asarray(g) == 0.0)
    for a, b, c in zip(jax.tree.leaves(full), jax.tree.leaves(blocked), jax.tree.leaves(want),
                       strict=True):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, c, rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("x64")
def test_variance_aware_with_eps_one_is_nldb_exactly():
    small = dict(SMALL, **{**jb.agents.dueling_preset("appendix"), "width": WIDTH})
    aware = jb.make_agent("nvldb-ts-osym", eps=1.0, **small)
    agnostic = jb.make_agent("nldb-ts-osym", **small)
    acts_a, regrets_a, state_a = play(aware, jax.random.key(5), horizon=12)
    acts_n, regrets_n, state_n = play(agnostic, jax.random.key(5), horizon=12)
    np.testing.assert_array_equal(acts_a, acts_n)
    np.testing.assert_array_equal(regrets_a, regrets_n)
    for a, b in zip(jax.tree.leaves(state_a), jax.tree.leaves(state_n), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(state_a.buffer.weight[:12], 1.0)
    # with the default eps the weights are 1 / max(sigma_hat, 0.1)^2 in [4, 100], not 1
    weights = aware.replace(eps=0.1).pair_weight(jnp.array([0.0, 3.0, 50.0]))
    np.testing.assert_allclose(weights, [4.0, 1 / (jax.nn.sigmoid(3.0) * jax.nn.sigmoid(-3.0)),
                                         100.0], rtol=1e-12)


@pytest.mark.usefixtures("x64")
def test_oracle_variance_weighs_pairs_by_the_true_preference_probability():
    """variance="oracle" (Alg. 1 line 12): zeta = max(sigma, eps) with the environment's true
    sigma^2 = p (1 - p), p = P(k1 > k2) = sigmoid(u_k1 - u_k2) on the square task; the network's
    estimate plays no part. Checked over a jitted run: every stored weight against the true
    utilities of the round it was stored in."""
    agent = jb.make_agent("nvldb-ucb-osym", variance="oracle", **SMALL)
    env, horizon = jb.make_env("dueling-square", dim=DIM, num_arms=NUM_ARMS), 10

    @jax.jit
    def run(key):
        key_env, key_agent, key_steps = jax.random.split(key, 3)
        env_state = env.init(key_env)

        def step(state, key_t):
            key_obs, key_act, key_fb = jax.random.split(key_t, 3)
            context = env.observe(key_obs, env_state, 0)
            action, state = agent.act(state, key_act, context)
            feedback = env.feedback(key_fb, env_state, context, action)
            u = env.utilities(env_state, context.arms)
            true_prob = jax.nn.sigmoid(u[action[0]] - u[action[1]])
            state = agent.update(state, key_t, context, action, feedback)
            return state, (feedback.oracle["preference_prob"], true_prob)

        state = agent.init(key_agent, env.spec())
        return jax.lax.scan(step, state, jax.random.split(key_steps, horizon))

    state, (oracle_prob, true_prob) = run(jax.random.key(8))
    np.testing.assert_allclose(oracle_prob, true_prob, rtol=1e-12)
    sigma = np.sqrt(true_prob * (1 - true_prob))
    np.testing.assert_allclose(state.buffer.weight[:horizon],
                               1 / np.maximum(sigma, agent.eps) ** 2, rtol=1e-10)
    assert np.ptp(np.asarray(state.buffer.weight[:horizon])) > 0  # not a constant weighting
    # an environment without the true probability: a clear error while tracing
    index_feedback = Feedback(reward=jnp.ones(()), regret=jnp.zeros(()))
    with pytest.raises(ValueError, match="variance='oracle' needs an environment"):
        agent.pair_weight(jnp.zeros(()), index_feedback)


@pytest.mark.usefixtures("x64")
def test_theta_refit_reaches_the_minimiser_with_the_features_fixed():
    """theta_refit (Alg. 1 line 10): after the Newton steps theta is stationary for Eq. 4 with W
    fixed (the gradient in theta of nvldb_loss vanishes), while W still trains by Adam. The probit
    link: its curvature is not the logistic's p (1 - p), so the generic path is checked."""
    link = "probit"
    agent = jb.make_agent("nvldb-ucb-asym", theta_refit=25, link=link, **SMALL)
    _, _, state = play(agent, jax.random.key(9), horizon=14)
    network = agent.network(DIM)
    grad = jax.grad(lambda p: dn.nvldb_loss(network, p, state.theta0, state.buffer, agent.reg,
                                            link))(state.params)
    np.testing.assert_allclose(grad.theta, 0.0, atol=1e-9)
    assert float(jnp.max(jnp.abs(jnp.concatenate(
        [jnp.ravel(g) for g in jax.tree.leaves(grad.net)])))) > 1e-6  # W is not refitted
    with pytest.raises(ValueError, match="theta_refit"):
        jb.make_agent("nvldb-ucb-asym", theta_refit=-1)


@pytest.mark.usefixtures("x64")
def test_frozen_network_recompute_gram_equals_incremental_gram():
    agent = jb.make_agent("nvldb-ucb-asym", gram="incremental", learning_rate=0.0, **SMALL)
    _, _, state = play(agent, jax.random.key(6), horizon=15)
    assert state.gram.shape == (DIM, DIM) and state.gram.dtype == jnp.float64
    recomputed = jax.jit(dn.nvldb_gram, static_argnums=0)(
        agent.network(DIM), state.params.net, state.buffer, agent.reg)
    np.testing.assert_allclose(state.gram, recomputed, rtol=1e-10, atol=1e-10)
    assert not np.allclose(state.gram, np.eye(DIM))  # some pairs were informative


# ------------------------------------------------------------------------------------------------
# Pairs, options, validation.


def test_every_name_plays_a_valid_pair_without_self_duel():
    spec = ENV.spec()
    context = ENV.observe(jax.random.key(1), ENV.init(jax.random.key(0)), 0)
    states = {}  # the twelve NVLDB / NLDB names share one state layout, the two NDB another
    for name in NAMES:
        agent = jb.make_agent(name, **SMALL)
        assert agent.family == "dueling" and agent.action_kinds == ("pair",)
        if name.startswith("nldb"):  # NLDB acts as NVLDB does: only the weights differ
            twin = jb.make_agent("nv" + name[1:], **SMALL)
            assert (agent.variance, twin.variance) == ("agnostic", "aware")
            assert dataclasses.replace(twin, variance="agnostic").__dict__ == agent.__dict__
            continue
        base = type(agent)  # the names are aliases of NVLDB and NDB
        if base not in states:
            states[base] = jax.jit(agent.init, static_argnums=1)(jax.random.key(2), spec)
        pair, _ = jax.jit(agent.act)(states[base], jax.random.key(3), context)
        assert pair.shape == (2,) and pair.dtype == jnp.int32, name
        assert 0 <= int(pair[0]) < NUM_ARMS and 0 <= int(pair[1]) < NUM_ARMS, name
        assert int(pair[0]) != int(pair[1]), name


def test_ndb_full_design_has_the_diagonal_design_on_its_diagonal():
    full = jb.make_agent("ndb-ucb", design="full", **SMALL)
    diag = full.replace(design="diag")
    network = full.network(DIM)

    @jax.jit
    def one_round(key):
        key_init, key_obs, key_act = jax.random.split(key, 3)
        context = ENV.observe(key_obs, ENV.init(key_init), 0)
        state = full.init(key_init, ENV.spec())
        action, state = full.act(state, key_act, context)
        feedback = Feedback(reward=jnp.ones(()), regret=jnp.zeros(()))
        state = full.update(state, key_act, context, action, feedback)
        return state, diag._gram(network, state.params, state.buffer)

    state, diagonal = one_round(jax.random.key(4))
    p = network.num_params
    assert state.gram.shape == (p, p) and diagonal.shape == (p,)
    np.testing.assert_allclose(jnp.diag(state.gram), diagonal, rtol=1e-5)
    assert float(jnp.max(diagonal)) > full.reg  # the pair's gradients are in
    np.testing.assert_allclose(state.gram, state.gram.T, rtol=1e-6)
    assert any(not np.array_equal(a, b) for a, b in   # trained away from the reset point
               zip(jax.tree.leaves(state.params), jax.tree.leaves(state.params0), strict=True))


@pytest.mark.parametrize("name", ["nvldb-ucb-osym", "nvldb-ucb-csym", "ndb-ucb"])
def test_ucb_rules_do_not_collapse_into_self_duels(name):
    # nvldb-ucb-asym: in test_nvldb_beats_uniform_random_pairs, through the runner
    agent = jb.make_agent(name, **SMALL)
    actions, regrets, state = play(agent, jax.random.key(7), horizon=HORIZON)
    actions = np.asarray(actions)
    assert np.all((actions >= 0) & (actions < NUM_ARMS))
    last = actions[-HORIZON // 5:]
    assert np.mean(last[:, 0] == last[:, 1]) < 0.5
    assert np.all(np.isfinite(np.asarray(regrets))) and np.all(np.asarray(regrets) >= 0)
    assert int(state.buffer.num_obs) == HORIZON
    assert all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(state.params))


def test_validation_and_presets():
    with pytest.raises(ValueError, match="eps"):
        jb.make_agent("nvldb-ucb-asym", eps=0.0)
    with pytest.raises(ValueError, match="ucb-osym"):
        jb.make_agent("nvldb-ucb-asym", rule="ucb-osim")
    with pytest.raises(ValueError, match="rule"):
        jb.make_agent("ndb-ucb", rule="ucb-osym")
    with pytest.raises(ValueError, match="link must be one of .*did you mean 'btl'"):
        jb.make_agent("nvldb-ts-osym", link="btll")
    with pytest.raises(ValueError, match="width must be a positive integer"):
        jb.make_agent("ndb-ts", width=-4)
    with pytest.raises(ValueError, match="appendix"):
        jb.agents.dueling_preset("apendix")
    assert jb.agents.dueling_preset("appendix") == {"width": 32, "learning_rate": 1e-2}
    main = jb.make_agent("nvldb-ucb-asym")
    assert (main.width, main.learning_rate) == (100, 1e-3)  # the registered defaults: "main"
    assert (main.reg, main.explore_scale, main.num_grad_steps, main.eps) == (1.0, 1.0, 20, 0.1)
    assert jb.make_agent("nldb-ts-csym").variance == "agnostic"
    # a horizon-sized buffer for pair environments through make_agent(env=..., horizon=...)
    assert jb.make_agent("nvldb-ucb-asym", env=ENV, horizon=50).buffer_size == 50
    assert jb.make_agent("ndb-ts", env=ENV, horizon=5000).buffer_size == jb.core.AUTO_BUFFER


@pytest.mark.parametrize("env_name, agent_name", [
    ("linear", "nvldb-ucb-asym"), ("linear", "ndb-ts"), ("dueling-square", "lin-ucb"),
    ("dueling-square", "neural-ucb"), ("dueling-cosine", "greedy")])
def test_action_kind_mismatch_is_an_error_before_anything_compiles(env_name, agent_name,
                                                                   monkeypatch):
    env, agent = jb.make_env(env_name, dim=3, num_arms=4), jb.make_agent(agent_name)

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled before checking the action kinds")

    monkeypatch.setattr(jax, "jit", no_compiling)
    with pytest.raises(ValueError, match=f"cannot act on environment '{env_name}'"):
        jb.simulate(env, agent, 0, 5, 2, progress=False)


def test_symmetric_init_gives_zero_features():
    agent, network, state = net_and_state(net_init="symmetric")
    x = jax.random.normal(jax.random.key(1), (NUM_ARMS, DIM))
    phi = jax.jit(network.apply)(state.params.net, x)
    np.testing.assert_allclose(phi, 0.0, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# Learning (Oh et al. 2026, App. E.2 (our reimplementation of Listings 2-4): relative small-scale
# checks).


def test_nvldb_beats_uniform_random_pairs():
    horizon, runs = 200, 8
    preset = {**jb.agents.dueling_preset("appendix"), "width": WIDTH}
    agent = jb.make_agent("nvldb-ucb-asym", env=ENV, horizon=horizon, **preset)
    assert agent.buffer_size == horizon
    results = jb.compare(ENV, {"random": jb.make_agent("random"), "nvldb": agent}, 0,
                         horizon=horizon, num_runs=runs, record=[horizon * 4 // 5, horizon],
                         progress=False)
    ours, uniform = results["nvldb"].final()[0], results["random"].final()[0]
    assert ours < 0.8 * uniform, (ours, uniform)
    # no self-duel collapse (Oh et al. 2026, App. E.2 (our reimplementation of Listings 2-4)) over
    # the last 20% of the rounds
    self_duels = np.asarray(results["nvldb"].metrics["self_duel"])
    assert np.mean(self_duels[:, -1] - self_duels[:, -2]) / (horizon // 5) < 0.5
