"""Differentiable research: score-function gradients against exact enumeration, pathwise gradients
against finite differences, the zero-temperature limit, bounded memory, and bad input."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jaxbandits as jb
from jaxbandits.differentiable import learnable_leaves
from jaxbandits.differentiable.relaxed import _relaxed_program

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

MEANS = (0.35, 0.75)
HORIZON = 4


# ------------------------------------------------------------------------------------------------
# Exact expectations by enumerating every history (float64), with the policies written anew.


def _soft_elim_logits(theta, counts, sums, reg):
    means = jnp.where(counts > 0, sums / jnp.where(counts > 0, counts, 1.0), 0.0)
    return -2.0 * counts * (jnp.max(means) - means) ** 2 / theta


def _boltzmann_greedy_logits(temperature, counts, sums, reg):
    # greedy ridge on one-hot arms: mean_i = S_i / (T_i + reg)
    return sums / (counts + reg) / temperature


def _exact_value(logits_fn, param, reg, means=MEANS, horizon=HORIZON):
    """E[sum_t r_t] of the policy softmax(logits_fn(param, T, S, reg)) by enumeration."""
    means = jnp.asarray(means)
    k = means.shape[0]

    def value(counts, sums, t):
        if t == horizon:
            return jnp.zeros(())
        probs = jax.nn.softmax(logits_fn(param, counts, sums, reg))
        total = jnp.zeros(())
        for a, r in itertools.product(range(k), (0.0, 1.0)):
            p_r = means[a] if r else 1.0 - means[a]
            step = jnp.zeros(k).at[a].set(1.0)
            future = value(counts + step, sums + r * step, t + 1)
            total = total + probs[a] * p_r * (r + future)
        return total

    return value(jnp.zeros(k), jnp.zeros(k), 0)


@pytest.fixture(scope="module")
def bernoulli():
    return jb.make_env("bernoulli", num_arms=2, means=MEANS)


CASES = {
    "soft-elim": (lambda: jb.make_agent("soft-elim", explore_scale=0.4), ("explore_scale",),
                  _soft_elim_logits),
    "softmax-greedy": (lambda: jb.agents.Softmax(agent=jb.make_agent("greedy", reg=0.5),
                                                 temperature=0.3),
                       ("temperature", "agent.reg"), _boltzmann_greedy_logits),
}


@pytest.mark.parametrize("case", list(CASES))
def test_score_function_gradient_equals_enumeration(x64, bernoulli, case):
    make, wrt, logits_fn = CASES[case]
    agent = make()
    if case == "soft-elim":
        param, reg = agent.explore_scale, 0.0
        exact_grads = [jax.grad(lambda p: _exact_value(logits_fn, p, reg))(param)]
    else:
        param, reg = agent.temperature, agent.agent.reg
        exact_grads = list(jax.grad(lambda p, r: _exact_value(logits_fn, p, r), (0, 1))(
            param, reg))
    exact = float(_exact_value(logits_fn, param, reg))
    ses = {}
    for baseline in jb.differentiable.BASELINES:
        est = jb.policy_gradient(bernoulli, agent, 11, HORIZON, 4000, baseline=baseline, wrt=wrt)
        assert est.value == pytest.approx(exact, abs=3 * est.value_se)
        for name, want in zip(wrt, exact_grads, strict=True):
            got, se = _leaf(est.grad, name), _leaf(est.grad_se, name)
            assert abs(got - float(want)) <= 3 * se, (baseline, name, got, float(want), se)
        ses[baseline] = np.array([_leaf(est.grad_se, n) for n in wrt])
    # the baselines leave the mean alone (above) and reduce the variance
    assert np.all(ses["mean"] < ses["none"]) and np.all(ses["self-play"] < ses["none"]), ses


def _leaf(tree, dotted: str) -> float:
    for part in dotted.split("."):
        tree = getattr(tree, part)
    return float(tree)


def test_gradient_is_shaped_like_the_agent(bernoulli):
    agent = jb.agents.Softmax(agent=jb.make_agent("greedy"), temperature=0.5)
    est = jb.policy_gradient(bernoulli, agent, 0, 5, 8, baseline="none", wrt="temperature")
    assert type(est.grad) is jb.agents.Softmax
    assert float(est.grad.agent.reg) == 0.0 and float(est.grad.temperature) != 0.0
    # optax applies it like any parameter pytree
    params = jax.tree.map(jnp.asarray, agent)
    updates, _ = optax.sgd(0.1).update(est.grad, optax.sgd(0.1).init(params))
    moved = optax.apply_updates(params, updates)
    assert float(moved.agent.reg) == agent.agent.reg
    assert learnable_leaves(agent) == ["agent.reg", "agent.noise_std", "agent.explore_scale",
                                       "temperature"]


# ------------------------------------------------------------------------------------------------
# Pathwise: relaxed rollouts.

TINY_LINEAR = dict(dim=3, num_arms=4, arm_prior="gaussian", theta_prior="gaussian")


@pytest.mark.parametrize("name,field", [("lin-ucb", "explore_scale"), ("lin-ucb", "reg"),
                                        ("lin-es", "perturb_std")])
def test_relaxed_gradient_equals_finite_differences(x64, name, field):
    env = jb.make_env("linear", **TINY_LINEAR)
    agent = jb.make_agent(name)
    value0 = float(getattr(agent, field))

    def objective(v):
        out = jb.relaxed_rollout(env, agent.replace(**{field: v}), 5, 12, 3, temperature=0.3)
        return jnp.mean(out.reward)

    grad = jax.grad(objective)(jnp.asarray(value0))
    h = 1e-5 * max(1.0, value0)
    fd = (objective(value0 + h) - objective(value0 - h)) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-9)
    # relaxed_gradient (per-run reverse mode, one program) agrees
    est = jb.relaxed_gradient(env, agent, 5, 12, 3, temperature=0.3, wrt=field)
    np.testing.assert_allclose(getattr(est.grad, field), grad, rtol=1e-9)
    assert est.value == pytest.approx(float(objective(value0)), rel=1e-12)


def test_relaxed_gradient_reaches_network_parameters(x64):
    env = jb.make_env("bernoulli", num_arms=3, means=(0.2, 0.5, 0.7))
    agent = jb.make_agent("neural-policy")
    names = learnable_leaves(agent)
    assert names and all(n.startswith("params.") for n in names)
    est = jb.relaxed_gradient(env, agent, 0, 6, 2, temperature=1.0)
    leaves = jax.tree.leaves(est.grad.params)
    assert all(np.all(np.isfinite(x)) for x in leaves)
    assert any(np.any(x != 0) for x in leaves)


@pytest.mark.parametrize("name", ["lin-ts", "lin-ucb"])
def test_zero_temperature_limit_is_the_hard_rollout(x64, name):
    env = jb.make_env("linear", **TINY_LINEAR)
    agent = jb.make_agent(name)
    hard = jb.simulate(env, agent, 3, 30, 4, record=[30], progress=False)
    hard = np.asarray(hard.cumulative_regret)[:, -1]
    gaps = []
    for temperature in (1.0, 1e-2, 1e-9):
        out = jb.relaxed_rollout(env, agent, 3, 30, 4, temperature=temperature)
        gaps.append(np.max(np.abs(np.asarray(out.regret) - hard)))
    assert gaps[0] > 1e-2 and gaps[-1] < 1e-8 * max(1.0, np.max(hard)), gaps
    # straight-through plays the hard actions forward at any temperature
    out = jb.relaxed_rollout(env, agent, 3, 30, 4, temperature=1.0,
                             relaxation="straight-through")
    np.testing.assert_allclose(out.regret, hard, rtol=1e-12, atol=1e-12)


def test_relaxed_memory_grows_like_the_square_root_of_the_horizon():
    env = jb.make_env("linear", dim=4, num_arms=6)
    agent = jax.tree.map(jnp.asarray, jb.make_agent("lin-ucb"))
    params = [jnp.asarray(1.0)]

    def temp_bytes(horizon):
        lowered = _relaxed_program.lower(
            env, agent, params, jax.random.key(0), jnp.asarray(0.1), names=("explore_scale",),
            horizon=horizon, num_runs=2, relaxation="softmax", chunk_size=None)
        return lowered.compile().memory_analysis().temp_size_in_bytes

    small, large = temp_bytes(100), temp_bytes(6400)
    # rematerialised per chunk: 64x the rounds, about 8x the memory (without it, 64x)
    assert large < 16 * small, (small, large)


# ------------------------------------------------------------------------------------------------
# Bad input.


def test_policy_gradient_needs_a_log_probability():
    env = jb.make_env("linear", dim=3, num_arms=4)
    with pytest.raises(ValueError, match=r"'lin-ucb'.*log_prob.*relaxed"):
        jb.policy_gradient(env, jb.make_agent("lin-ucb"), 0, 5, 2)


@pytest.mark.parametrize("temperature", [0.0, -1.0, float("nan")])
def test_non_positive_temperature_is_rejected(temperature):
    env = jb.make_env("linear", dim=3, num_arms=4)
    with pytest.raises(ValueError, match="temperature must be positive"):
        jb.relaxed_gradient(env, jb.make_agent("lin-ucb"), 0, 5, 2, temperature=temperature)
    with pytest.raises(ValueError, match="temperature must be positive"):
        jb.relaxed_rollout(env, jb.make_agent("lin-ucb"), 0, 5, 2, temperature=temperature)
    with pytest.raises(ValueError, match="temperature"):
        jb.make_agent("softmax", temperature=temperature)


def test_bad_relaxed_inputs_are_named():
    linear = jb.make_env("linear", dim=3, num_arms=4)
    with pytest.raises(ValueError, match=r"'soft-elim' has no scores.*policy_gradient"):
        jb.relaxed_gradient(jb.make_env("bernoulli", num_arms=2), jb.make_agent("soft-elim"),
                            0, 5, 2)
    with pytest.raises(ValueError, match=r"'logistic'.*mean_rewards"):  # feedback overridden
        jb.relaxed_gradient(jb.make_env("logistic", dim=3, num_arms=4), jb.make_agent("lin-ucb"),
                            0, 5, 2)
    with pytest.raises(ValueError, match="relaxation must be one of"):
        jb.relaxed_gradient(linear, jb.make_agent("lin-ucb"), 0, 5, 2, relaxation="hard")
    with pytest.raises(ValueError, match="has no leaf 'explore'"):
        jb.relaxed_gradient(linear, jb.make_agent("lin-ucb"), 0, 5, 2, wrt="explore")
    with pytest.raises(ValueError, match="baseline must be one of"):
        jb.policy_gradient(linear, jb.make_agent("softmax"), 0, 5, 2, baseline="twin")
    with pytest.raises(ValueError, match="needs num_runs >= 2"):
        jb.policy_gradient(linear, jb.make_agent("softmax"), 0, 5, 1, baseline="mean")
    with pytest.raises(ValueError, match="positive integer"):
        jb.meta_learn(linear, jb.make_agent("lin-ucb"), 0, horizon=5, steps=0)


@pytest.mark.full
def test_relaxed_gradient_reaches_a_neural_agents_learning_rate(x64):
    """Through the Adam steps of every round (the fixed-trip training loop of for_gradients)."""
    env = jb.make_env("linear", **TINY_LINEAR)
    agent = jb.make_agent("neural-greedy", update_start=2, batch_size=4, buffer_size=8,
                          num_grad_steps=2, learning_rate=1e-2)

    @jax.jit
    def objective(lr):
        out = jb.relaxed_rollout(env, agent.replace(learning_rate=lr), 1, 8, 2, temperature=0.3)
        return jnp.mean(out.reward)

    grad = jax.jit(jax.grad(objective))(1e-2)
    fd = (objective(1e-2 + 1e-6) - objective(1e-2 - 1e-6)) / 2e-6
    assert abs(float(grad)) > 1.0
    np.testing.assert_allclose(grad, fd, rtol=1e-5)


def test_fixed_trip_training_plays_the_same_runs(x64):
    env = jb.make_env("linear", **TINY_LINEAR)
    agent = jb.make_agent("neural-greedy", update_start=2, batch_size=4, buffer_size=8,
                          num_grad_steps=2, update_every=3)
    assert agent.for_gradients().fixed_trip_training and not agent.fixed_trip_training
    runs = [jb.simulate(env, a, 2, 12, 2, record="all", progress=False).cumulative_regret
            for a in (agent, agent.for_gradients())]
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("chunk_size", [-3, 0, 2.0, True])
def test_non_positive_chunk_sizes_are_rejected(chunk_size):
    """``chunk_size=-3`` returned a gradient and value of exactly 0.0 (no round was played) and
    ``chunk_size=0`` silently meant the default."""
    bern = jb.make_env("bernoulli", num_arms=2, means=MEANS)
    linear = jb.make_env("linear", dim=2, num_arms=3)
    match = r"chunk_size \(rounds per rematerialised chunk\) must be a positive integer or None"
    with pytest.raises(ValueError, match="policy_gradient: " + match):
        jb.policy_gradient(bern, jb.make_agent("soft-elim"), 0, 5, 2, chunk_size=chunk_size)
    with pytest.raises(ValueError, match="relaxed_gradient: " + match):
        jb.relaxed_gradient(linear, jb.make_agent("lin-ucb"), 0, 5, 2, chunk_size=chunk_size)
    with pytest.raises(ValueError, match="relaxed_rollout: " + match):
        jb.relaxed_rollout(linear, jb.make_agent("lin-ucb"), 0, 5, 2, chunk_size=chunk_size)


@pytest.mark.parametrize("wrt, match", [
    ([], r"wrt is empty: .*SoftElim.*None for every float leaf \(explore_scale\)"),
    ((), "wrt is empty"),
    (42, "wrt must be a leaf name, a list of leaf names or None"),
    (["explore_scale", 3], "wrt must be a leaf name"),
])
def test_bad_wrt_is_named(wrt, match):
    with pytest.raises(ValueError, match=match):
        learnable_leaves(jb.make_agent("soft-elim"), wrt)
    with pytest.raises(ValueError, match=match):
        jb.policy_gradient(jb.make_env("bernoulli", num_arms=2), jb.make_agent("soft-elim"), 0,
                           5, 2, wrt=wrt)


def test_numpy_integer_sizes_are_accepted(bernoulli):
    """``horizon=np.int64(4)`` was refused as "must be a positive integer"."""
    agent = jb.make_agent("soft-elim")
    plain = jb.policy_gradient(bernoulli, agent, 0, HORIZON, 2, chunk_size=2)
    numpy = jb.policy_gradient(bernoulli, agent, 0, np.int64(HORIZON), np.int32(2),
                               chunk_size=np.int64(2))
    assert numpy.value == plain.value and numpy.grad == plain.grad and numpy.num_runs == 2
