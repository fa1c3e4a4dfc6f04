"""Linear contextual dueling agents: maxinp, maxpair-ucb, colstim, vacdb, and random pairs
(the linear baselines of Oh et al. 2026, Sec. 6).

* the contract (jitted, no retrace, the state's tree kept, valid pairs) for every agent and
  preset, and learning on a well-specified linear-BTL task (``u = theta^T x``, a subclass of the
  dueling synthetic environment): R(T) well below uniform random pairs;
* float64 identities (``x64`` fixture) against slow NumPy / SciPy references: the Gram inverse,
  the regularised MLE on a fixed buffer (also after the ring buffer wraps), rcdp-public's online
  Newton step, CoLSTIM's rule on the same random draws, MaxInP / MaxPairUCB as the shared rules
  on ``(X theta, X, V^{-1})``, and VACDB's layer statistics, weights and selection;
* validation and the ``make_agent(..., horizon=T)`` mapping.
"""

from __future__ import annotations

import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

import jaxbandits as jb
from jaxbandits.agents import CoLSTIM, MaxInP, MaxPairUCB
from jaxbandits.agents.duel_select import select_pair
from jaxbandits.envs.dueling import DuelingSyntheticEnv
from jaxbandits.linalg import ridge_covariance

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

DIM, ARMS = 3, 4


class LinearDuelEnv(DuelingSyntheticEnv):
    """The dueling synthetic task with a linear utility ``u(x) = scale theta^T x / ||theta||``
    (unit-norm contexts, BTL feedback, average regret): every agent here is well specified."""

    name = ""
    scale: float = 3.0

    def utilities(self, env_state, arms):
        theta = env_state.theta
        return self.scale * (arms @ theta) / jnp.linalg.norm(theta)


ENV = LinearDuelEnv(dim=DIM, num_arms=ARMS)
CONFIGS = {  # label: (name, overrides)
    "maxinp": ("maxinp", {}),
    "maxinp-rcdp": ("maxinp", {"preset": "rcdp"}),
    "maxpair-ucb": ("maxpair-ucb", {}),
    "maxpair-ucb-rcdp": ("maxpair-ucb", {"preset": "rcdp"}),
    "colstim": ("colstim", {}),
    "colstim-rcdp": ("colstim", {"preset": "rcdp"}),
    "vacdb": ("vacdb", {}),
}
NO_SELF_DUELS = {"maxinp-rcdp", "colstim-rcdp"}


def _agent(label, horizon=100, **extra):
    name, overrides = CONFIGS[label]
    return jb.make_agent(name, env=ENV, horizon=horizon, **overrides, **extra)


# ------------------------------------------------------------------------------------------------
# Contract and learning.


@pytest.mark.parametrize("label", list(CONFIGS))
def test_contract_jitted_step_keeps_state_and_plays_valid_pairs(label):
    agent = _agent(label)
    spec = ENV.spec()
    env_state = ENV.init(jax.random.key(0))
    state = agent.init(jax.random.key(1), spec)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def step(state, key):
        key_obs, key_act, key_fb, key_upd = jax.random.split(key, 4)
        context = ENV.observe(key_obs, env_state, jnp.int32(0))
        action, acted = agent.act(state, key_act, context)
        feedback = ENV.feedback(key_fb, env_state, context, action)
        return action, agent.update(acted, key_upd, context, action, feedback)

    chex.clear_trace_counter()
    for i in range(4):
        action, new_state = step(state, jax.random.key(10 + i))
        chex.assert_trees_all_equal_shapes_and_dtypes(new_state, state)
        assert jax.tree.structure(new_state) == jax.tree.structure(state)
        state = new_state
        assert action.shape == (2,) and action.dtype == jnp.int32
        assert np.all((np.asarray(action) >= 0) & (np.asarray(action) < ARMS))
        if label in NO_SELF_DUELS:
            assert action[0] != action[1]
    assert all(np.all(np.isfinite(leaf)) for leaf in jax.tree.leaves(state)
               if jnp.issubdtype(leaf.dtype, jnp.floating))


LEARNERS = ["maxinp", "maxpair-ucb", "colstim", "colstim-rcdp", "vacdb"]


@pytest.fixture(scope="module")
def uniform_regret():
    """R(300) of uniformly random pairs, 16 runs (common random numbers with the agents)."""
    result = jb.simulate(ENV, jb.make_agent("random"), 0, horizon=300, num_runs=16,
                         progress=False)
    return np.asarray(result.cumulative_regret)[:, -1]


@pytest.mark.full
@pytest.mark.parametrize("label", LEARNERS)
def test_beats_uniform_random_pairs_on_a_linear_task(label, uniform_regret):
    """Well specified (linear utility, BTL), T = 300, 16 runs: the mean R(T) is below half the
    uniform one (uniform: about 550, the agents 70-200; the run-to-run std is below 30, so the
    mean's standard error is below 8)."""
    result = jb.simulate(ENV, _agent(label, horizon=300), 0, horizon=300, num_runs=16,
                         progress=False)
    regret = np.asarray(result.cumulative_regret)[:, -1]
    assert np.all(np.isfinite(regret))
    assert regret.mean() < 0.5 * uniform_regret.mean(), (regret.mean(), uniform_regret.mean())


def test_random_plays_uniform_pairs_of_distinct_arms():
    agent = jb.make_agent("random")
    state = agent.init(jax.random.key(0), ENV.spec())
    context = ENV.observe(jax.random.key(1), ENV.init(jax.random.key(2)), jnp.int32(0))
    keys = jax.random.split(jax.random.key(3), 24_000)
    pairs = np.asarray(jax.jit(jax.vmap(lambda k: agent.act(state, k, context)[0]))(keys))
    assert pairs.shape == (24_000, 2) and pairs.dtype == np.int32
    assert np.all(pairs[:, 0] != pairs[:, 1])
    freq = np.zeros((ARMS, ARMS))
    np.add.at(freq, (pairs[:, 0], pairs[:, 1]), 1.0 / len(pairs))
    # 12 pairs of probability 1/12; standard error sqrt(p (1 - p) / n) = 0.0018, tolerance 4 x
    expected = (1.0 - np.eye(ARMS)) / (ARMS * (ARMS - 1))
    np.testing.assert_allclose(freq, expected, atol=0.008)
    assert "pair" in agent.action_kinds


# ------------------------------------------------------------------------------------------------
# float64 identities of the linear-BTL core.


def _history(steps, seed=0, num_arms=ARMS, dim=DIM):
    """Fixed unit-norm contexts ``(T, K, d)``, pairs ``(T, 2)`` (self-duels included) and bits."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(steps, num_arms, dim))
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    pairs = rng.integers(0, num_arms, size=(steps, 2))
    pairs[::7, 1] = pairs[::7, 0]
    theta = rng.normal(size=dim)
    z = x[np.arange(steps), pairs[:, 0]] - x[np.arange(steps), pairs[:, 1]]
    bits = (rng.random(steps) < 1 / (1 + np.exp(-2 * z @ theta))).astype(float)
    return x, pairs.astype(np.int32), bits, z


def _feed(agent, state, contexts, pairs, bits, act=False):
    """``agent.update`` on the given rounds (``act`` first when asked: VACDB needs it), jitted."""

    def body(state, step):
        arms, pair, bit = step
        context = jb.Context(arms=arms)
        if act:
            _, state = agent.act(state, jax.random.key(0), context)
        feedback = jb.Feedback(reward=bit, regret=jnp.zeros_like(bit))
        return agent.update(state, jax.random.key(1), context, pair, feedback), None

    run = jax.jit(lambda s, c, p, b: jax.lax.scan(body, s, (c, p, b))[0])
    return run(state, jnp.asarray(contexts), jnp.asarray(pairs), jnp.asarray(bits))


def _reference_mle(z, o, penalty, weights=None):
    """``argmin penalty ||theta||^2 + sum_i w_i [log(1 + e^{z_i theta}) - o_i z_i theta]`` by
    SciPy's exact trust-region Newton, to 1e-12."""
    w = np.ones(len(z)) if weights is None else weights

    def loss(t):
        s = z @ t
        return penalty * t @ t + np.sum(w * (np.logaddexp(0.0, s) - o * s))

    def grad(t):
        return 2 * penalty * t + z.T @ (w * (1 / (1 + np.exp(-z @ t)) - o))

    def hess(t):
        p = 1 / (1 + np.exp(-z @ t))
        return 2 * penalty * np.eye(z.shape[1]) + (z.T * (w * p * (1 - p))) @ z

    res = minimize(loss, np.zeros(z.shape[1]), jac=grad, hess=hess, method="trust-exact",
                   options={"gtol": 1e-12})
    return res.x


def _spec(num_arms=ARMS, dim=DIM):
    return jb.Spec(dim=dim, num_arms=num_arms, action_kind="pair", feedback_kind="preference")


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("buffer_size", [None, 8])
def test_mle_and_gram_inverse_match_float64_references(buffer_size):
    steps = 24
    x, pairs, bits, z = _history(steps)
    agent = jb.make_agent("maxinp", buffer_size=buffer_size)  # vacdb preset: reg 0.001, kappa 0.1
    state = _feed(agent, agent.init(jax.random.key(0), _spec()), x, pairs, bits)
    assert state.theta.dtype == jnp.float64
    gram = 0.001 * np.eye(DIM) + z.T @ z
    np.testing.assert_allclose(ridge_covariance(state.gram), np.linalg.inv(gram), rtol=1e-9,
                               atol=1e-9)
    rows = slice(None) if buffer_size is None else slice(steps - buffer_size, None)
    n = steps if buffer_size is None else buffer_size
    # kappa reg ||theta||^2 + (1/n) sum loss, times n
    expected = _reference_mle(z[rows], bits[rows], 0.1 * 0.001 * n)
    np.testing.assert_allclose(state.theta, expected, rtol=1e-7, atol=1e-8)


@pytest.mark.usefixtures("x64")
def test_online_newton_step_matches_rcdp_public():
    x, pairs, bits, z = _history(30, seed=1)
    agent = jb.make_agent("maxpair-ucb", preset="rcdp")
    state = _feed(agent, agent.init(jax.random.key(0), _spec()), x, pairs, bits)
    theta, gram, gram_inv = np.zeros(DIM), np.eye(DIM), np.eye(DIM)  # lambda_reg = 1
    for zt, o in zip(z, bits, strict=True):  # BaselineDuelingGLMLearner.update
        mu = 1 / (1 + np.exp(-theta @ zt))
        gram += np.outer(zt, zt)
        aw = gram_inv @ zt
        gram_inv -= np.outer(aw, aw) / (1 + zt @ aw)
        theta = theta + gram_inv @ (zt * (o - mu))
    np.testing.assert_allclose(state.theta, theta, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ridge_covariance(state.gram), np.linalg.inv(gram), rtol=1e-10)
    assert state.data.features.shape == (0, DIM)  # no buffer for the online fit


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("name", ["maxinp", "maxpair-ucb"])
@pytest.mark.parametrize("preset", ["vacdb", "rcdp"])
def test_maxinp_and_maxpair_are_the_shared_rules_on_the_contexts(name, preset):
    x, pairs, bits, z = _history(40, seed=2)
    agent = jb.make_agent(name, preset=preset)
    state = _feed(agent, agent.init(jax.random.key(0), _spec()), x, pairs, bits)
    rule = "ucb-csym" if name == "maxinp" else "ucb-osym"
    beta = agent.setting("explore_scale", DIM)
    reg = agent.setting("reg", DIM)
    inv_gram = jnp.asarray(np.linalg.inv(reg * np.eye(DIM) + z.T @ z))  # the direct inverse
    act = jax.jit(agent.act)
    rng = np.random.default_rng(3)
    for i in range(12):
        arms = rng.normal(size=(ARMS, DIM))
        arms /= np.linalg.norm(arms, axis=1, keepdims=True)
        key = jax.random.key(i)
        pair, _ = act(state, key, jb.Context(arms=jnp.asarray(arms)))
        expected = select_pair(
            rule, key, jnp.asarray(arms) @ state.theta, jnp.asarray(arms), inv_gram, beta, 41,
            forbid_self_duel=agent.setting("forbid_self_duel", DIM),
            **({"candidates": "ge"} if name == "maxinp" else {}))
        np.testing.assert_array_equal(np.asarray(pair), np.asarray(expected))


def test_preset_defaults():
    d, t = 5, 2000
    root = math.sqrt(d * math.log(t))
    for cls in (MaxInP, MaxPairUCB, CoLSTIM):
        agent = cls()
        assert agent.setting("reg", d) == 0.001 and agent.setting("fit", d) == "mle"
        np.testing.assert_allclose(agent.setting("explore_scale", d), 2 * root, rtol=1e-6)
        rcdp = cls(preset="rcdp")
        assert rcdp.setting("reg", d) == 1.0 and rcdp.setting("fit", d) == "online"
    assert MaxInP(preset="rcdp").setting("explore_scale", d) == 0.5
    assert MaxPairUCB(preset="rcdp").setting("explore_scale", d) == math.sqrt(d)
    colstim, rcdp = CoLSTIM(), CoLSTIM(preset="rcdp")
    np.testing.assert_allclose(colstim.setting("threshold", d), root, rtol=1e-6)
    assert colstim.setting("coupling_scale", d) == 1.0 and not colstim.setting(
        "forbid_self_duel", d)
    assert (rcdp.setting("threshold", d), rcdp.setting("coupling_scale", d),
            rcdp.setting("explore_scale", d)) == (5.0, 0.0, 0.5)
    assert rcdp.setting("forbid_self_duel", d)
    assert CoLSTIM(explore_scale=0.3, reg=2.0).setting("explore_scale", d) == 0.3


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("preset", ["vacdb", "rcdp"])
def test_colstim_rule_matches_numpy_on_the_same_draws(preset):
    x, pairs, bits, _ = _history(30, seed=4)
    agent = jb.make_agent("colstim", preset=preset, horizon_hint=50)
    state = _feed(agent, agent.init(jax.random.key(0), _spec()), x, pairs, bits)
    theta = np.asarray(state.theta)
    gram_inv = np.asarray(ridge_covariance(state.gram))
    c1, limit = agent.setting("explore_scale", DIM), agent.setting("threshold", DIM)
    coupling = agent.setting("coupling_scale", DIM)
    t = 31
    act = jax.jit(agent.act)
    rng = np.random.default_rng(5)
    shared_seen = set()
    for i in range(40):
        arms = rng.normal(size=(ARMS, DIM))
        arms /= np.linalg.norm(arms, axis=1, keepdims=True)
        key = jax.random.key(100 + i)
        pair, _ = act(state, key, jb.Context(arms=jnp.asarray(arms)))
        key_share, key_eps = jax.random.split(key)
        gumbel = np.asarray(jax.random.gumbel(key_eps, (ARMS,), jnp.float64))
        draw = float(jax.random.uniform(key_share, (), jnp.float64))
        p_share = min(1.0, coupling * DIM / math.sqrt(t) * math.log(DIM * 50))
        shared = draw < p_share
        shared_seen.add(shared)
        eps = np.clip(np.full(ARMS, gumbel[0]) if shared else gumbel, -limit, limit)
        widths = np.sqrt(np.einsum("kd,de,ke->k", arms, gram_inv, arms))
        first = int(np.argmax(arms @ theta + eps * widths))
        rivals = arms - arms[first]
        scores = rivals @ theta + c1 * np.sqrt(np.einsum("kd,de,ke->k", rivals, gram_inv,
                                                         rivals))
        if preset == "rcdp":
            scores[first] = -np.inf
        assert tuple(np.asarray(pair)) == (first, int(np.argmax(scores))), i
    # vacdb: p_t = min(1, 3 / sqrt(31) log 150) = 1, always shared; rcdp: never shared
    assert shared_seen == ({True} if preset == "vacdb" else {False})


# ------------------------------------------------------------------------------------------------
# VACDB.


def _vacdb_reference_select(theta, sqrt_cov, arms, betas, num_layers):
    """StaAdaCDB.next_action (uclaml/VACDB suplin.py) with the pair norms on this round's arms:
    ``("exploit", pair, next layer)`` or ``("explore", allowed pairs (K, K), layer)``."""
    num_arms = len(arms)
    active = np.ones(num_arms, bool)
    diff = arms[:, None, :] - arms[None, :, :]
    for level in range(1, num_layers + 1):
        inv = sqrt_cov[level - 1] @ sqrt_cov[level - 1].T
        norm = np.sqrt(np.maximum(np.einsum("ijd,de,ije->ij", diff, inv, diff), 0))
        mask = active[:, None] & active[None, :]
        masked = np.where(mask, norm, 0.0)
        u = arms @ theta[level - 1]
        if np.all(masked <= 2.0**-num_layers):
            score = u[:, None] + u[None, :] + betas[level - 1] * norm
            score[~mask] = -np.inf
            pair = np.unravel_index(np.argmax(score), score.shape)
            return "exploit", pair, (level + 1 if level < num_layers else 0)
        if np.all(masked <= 2.0**-level):
            top = np.max(u[active])
            active = active & (u >= top - 2.0**-level * betas[level - 1])
            continue
        return "explore", mask & (norm > 2.0**-level), level
    raise AssertionError("unreachable: alpha = 2^-L makes the last layer decide")


@pytest.mark.usefixtures("x64")
def test_vacdb_statistics_weights_and_mle_match_references():
    num_layers = 3
    agent = jb.make_agent("vacdb", num_layers=num_layers, horizon_hint=100)
    x, pairs, bits, _ = _history(60, seed=6)
    state = _feed(agent, agent.init(jax.random.key(0), _spec()), x, pairs, bits, act=True)
    data = state.data
    rows = int(data.num_obs)
    assert 0 < rows <= 60
    z, w2 = np.asarray(data.features)[:rows], np.asarray(data.counts)[:rows]
    o = np.asarray(data.rewards)[:rows] / np.where(w2 > 0, w2, 1.0)
    layers = np.asarray(state.layers)[:rows]
    assert set(layers) <= set(range(1, num_layers + 1)) and np.all(w2 > 0)
    for level in range(1, num_layers + 1):
        mine = layers == level
        sigma = 2.0 ** (-2 * level) * np.eye(DIM) + (z[mine].T * w2[mine]) @ z[mine]
        layer_gram = state.gram.replace(sqrt_cov=state.gram.sqrt_cov[level - 1])
        np.testing.assert_allclose(ridge_covariance(layer_gram), np.linalg.inv(sigma),
                                   rtol=1e-8, atol=1e-10)
        if mine.any():  # kappa 2^{-2l} ||theta||^2 + sum w^2 loss, kappa = 1
            expected = _reference_mle(z[mine], o[mine], 2.0 ** (-2 * level), w2[mine])
            np.testing.assert_allclose(state.theta[level - 1], expected, rtol=1e-6, atol=1e-8)
        else:
            np.testing.assert_array_equal(state.theta[level - 1], 0.0)

    # one more round: the new row's weight is 2^{-l} / ||z||_{Sigma_l^{-1}} before the update
    arms = jnp.asarray(x[0])
    pair, acted = jax.jit(agent.act)(state, jax.random.key(7), jb.Context(arms=arms))
    level = int(acted.pending_layer)
    feedback = jb.Feedback(reward=jnp.float64(1.0), regret=jnp.float64(0.0))
    new = jax.jit(agent.update)(acted, jax.random.key(8), jb.Context(arms=arms), pair, feedback)
    zt = np.asarray(arms[pair[0]] - arms[pair[1]])
    if level == 0 or not zt.any():
        assert int(new.data.num_obs) == rows
    else:
        root = np.asarray(state.gram.sqrt_cov[level - 1])
        weight = 2.0**-level / np.linalg.norm(root.T @ zt)
        np.testing.assert_allclose(new.data.counts[rows % len(data.counts)], weight**2,
                                   rtol=1e-10)
        assert int(new.layers[rows % len(data.counts)]) == level


def _check_vacdb_selection(agent, state, seed, rounds=20):
    """The agent's pair and pending layer against the NumPy reference on random contexts;
    returns the branches seen."""
    betas = agent.explore_scale * 2.0 ** -np.arange(1, agent.num_layers + 1) * math.sqrt(
        math.log(agent.horizon_hint))
    act = jax.jit(agent.act)
    rng = np.random.default_rng(seed)
    seen = set()
    for i in range(rounds):
        arms = rng.normal(size=(ARMS, DIM))
        arms /= np.linalg.norm(arms, axis=1, keepdims=True)
        pair, acted = act(state, jax.random.key(i), jb.Context(arms=jnp.asarray(arms)))
        pair, level = tuple(np.asarray(pair)), int(acted.pending_layer)
        kind, what, expected_level = _vacdb_reference_select(
            np.asarray(state.theta), np.asarray(state.gram.sqrt_cov), arms, betas,
            agent.num_layers)
        seen.add((kind, expected_level))
        assert level == expected_level, (i, kind)
        if kind == "exploit":
            assert pair == tuple(int(k) for k in what), i
        else:
            assert what[pair], (i, pair)
    return seen


@pytest.mark.usefixtures("x64")
def test_vacdb_selection_matches_the_reference_on_crafted_and_learned_states():
    agent = jb.make_agent("vacdb", num_layers=3, horizon_hint=100)
    state = agent.init(jax.random.key(0), _spec())
    # fresh: e_1 = 2 ||x_i - x_j|| is wide, a random wide pair of layer 1
    assert _check_vacdb_selection(agent, state, 0, rounds=5) == {("explore", 1)}
    # layer 1 narrow (e_1 <= 0.4 <= 1/2, not all <= 1/8): eliminate with theta_1; layer 2 wide
    # (or, when one arm survives, its self-duel at layer 2, the sample for layer 3)
    theta = jnp.asarray(np.random.default_rng(1).normal(size=(3, DIM)))
    roots = jnp.stack([0.2 * jnp.eye(DIM), 10.0 * jnp.eye(DIM), jnp.eye(DIM)])
    crafted = state.replace(theta=theta, gram=state.gram.replace(sqrt_cov=roots))
    seen = _check_vacdb_selection(agent, crafted, 1)
    assert ("explore", 2) in seen and seen <= {("explore", 2), ("exploit", 3)}
    # every layer narrow: exploit at layer 1 (UCB-OSYM), the sample goes to layer 2
    tiny = state.replace(theta=theta, gram=state.gram.replace(sqrt_cov=roots * 0.01))
    assert _check_vacdb_selection(agent, tiny, 2) == {("exploit", 2)}
    # a learned state, after 150 rounds on the linear task
    x, pairs, bits, _ = _history(150, seed=8)
    learned = _feed(agent, state, x, pairs, bits, act=True)
    _check_vacdb_selection(agent, learned, 3)


# ------------------------------------------------------------------------------------------------
# Validation and assumptions.


@pytest.mark.parametrize("name, overrides, match", [
    ("maxinp", {"preset": "vacbd"}, "did you mean 'vacdb'"),
    ("colstim", {"preset": "rcpd"}, "did you mean 'rcdp'"),
    ("maxpair-ucb", {"fit": "onlin"}, "did you mean 'online'"),
    ("maxinp", {"candidates": "strcit"}, "did you mean 'strict'"),
    ("maxinp", {"explore_scale": -1.0}, "explore_scale"),
    ("colstim", {"explore_scale": -0.5}, "explore_scale"),
    ("vacdb", {"explore_scale": -1.0}, "explore_scale"),
    ("maxinp", {"reg": 0.0}, "reg"),
    ("colstim", {"reg": -1.0}, "reg"),
    ("maxpair-ucb", {"kappa": 0.0}, "kappa"),
    ("colstim", {"threshold": -1.0}, "threshold"),
    ("colstim", {"coupling_scale": -0.1}, "coupling_scale"),
    ("colstim", {"horizon_hint": 0}, "horizon_hint"),
    ("vacdb", {"num_layers": 0}, "num_layers"),
    ("vacdb", {"kappa": -1.0}, "kappa"),
    ("maxinp", {"buffer_size": 0}, "buffer_size"),
])
def test_bad_settings_raise_value_errors(name, overrides, match):
    with pytest.raises(ValueError, match=match):
        jb.make_agent(name, **overrides)


def test_pair_agents_refuse_other_action_kinds():
    index_env = jb.make_env("linear", dim=3, num_arms=4)
    for name in ("maxinp", "maxpair-ucb", "colstim", "vacdb"):
        with pytest.raises(ValueError, match="cannot act"):
            jb.make_agent(name, env=index_env)
        with pytest.raises(ValueError, match="pair"):
            jb.make_agent(name).init(jax.random.key(0), index_env.spec())


@pytest.mark.parametrize("name", ["maxinp", "maxpair-ucb", "colstim", "vacdb"])
def test_make_agent_with_a_horizon_sets_the_hint_and_the_buffer(name):
    env = jb.make_env("dueling-cosine")
    assert jb.make_agent(name).horizon_hint == 2000
    assert jb.make_agent(name).buffer_size is None
    short = jb.make_agent(name, env=env, horizon=500)
    assert (short.horizon_hint, short.buffer_size) == (500, 500)
    long = jb.make_agent(name, env=env, horizon=10_000)
    assert (long.horizon_hint, long.buffer_size) == (10_000, 2000)
    mine = jb.make_agent(name, env=env, horizon=500, buffer_size=64, horizon_hint=9)
    assert (mine.horizon_hint, mine.buffer_size) == (9, 64)
    assert jb.make_agent(name, env=env).horizon_hint == 2000


# ------------------------------------------------------------------------------------------------
# Pair actions through the runner's guarantees.


def test_pair_runs_resume_after_a_kill_and_sweep_in_one_program(tmp_path, monkeypatch):
    """A checkpointed dueling run killed mid-way and resumed equals the uninterrupted one, bit
    for bit, average and weak regret alike; a sweep over explore_scale compiles once and its
    default point equals simulate."""
    from jaxbandits import _io
    from jaxbandits.simulate import trace_counts

    env = jb.make_env("dueling-square", dim=DIM, num_arms=ARMS)
    agent = jb.make_agent("maxpair-ucb", env=env, horizon=30)
    kw = dict(record="all", block_runs=2, progress=False, chunk_size=7)
    base = jb.simulate(env, agent, 2, 30, 3, **kw)

    class Killed(BaseException):
        pass

    seen = []  # the file operations of the killed run

    def fault(name):
        seen.append(name)
        if len(seen) == 12:
            raise Killed(name)

    monkeypatch.setattr(_io, "fault_point", fault)
    with pytest.raises(Killed):
        jb.simulate(env, agent, 2, 30, 3, checkpoint_dir=tmp_path, **kw)
    monkeypatch.setattr(_io, "fault_point", lambda name: None)
    resumed = jb.simulate(env, agent, 2, 30, 3, checkpoint_dir=tmp_path, **kw)
    np.testing.assert_array_equal(resumed.cumulative_regret, base.cumulative_regret)
    for name in ("weak_regret", "strong_regret"):
        np.testing.assert_array_equal(resumed.metrics[name], base.metrics[name])

    before = trace_counts()
    grid = jb.sweep(env, agent, 2, {"explore_scale": [agent.explore_scale, 0.1, 3.0]}, 30, 3,
                    **kw)
    traced = {k: v - before.get(k, 0) for k, v in trace_counts().items()}
    assert max(traced.values()) <= 1, traced  # every program traced at most once
    first, *others = grid.values()
    np.testing.assert_array_equal(first.cumulative_regret, base.cumulative_regret)
    assert not np.array_equal(others[1].cumulative_regret, base.cumulative_regret)
