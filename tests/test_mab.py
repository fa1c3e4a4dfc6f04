"""The K-armed Bernoulli family: the ``bernoulli`` environment, the per-arm statistics and the
agents ``ucb1``, ``bernoulli-ts`` and ``soft-elim`` (Boutilier et al. 2020's setting).

Reference checks are against NumPy float64 recomputations; statistical checks state their
tolerance in standard errors (SE). Shapes are tiny and the jitted functions take the agent as an
argument, so a new hyperparameter value does not recompile.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents.mab import (
    UCB1,
    UNTRIED_SCORE,
    ArmStats,
    BernoulliTS,
    SoftElim,
    arm_stats_init,
    arm_stats_update,
    empirical_means,
)
from jaxbandits.core import Context

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

K = 4
DRAWS = 20_000
CONTEXT = Context(arms=jnp.eye(K))


def _stats(counts, sums) -> ArmStats:
    counts = jnp.asarray(counts, jnp.result_type(float))
    return ArmStats(counts=counts, sums=jnp.asarray(sums, counts.dtype),
                    rounds=jnp.sum(counts))


@functools.partial(jax.jit, static_argnames="horizon")
def _play(env, agent, key, horizon):
    """One run of ``horizon`` rounds: the final agent state, the actions and the rewards."""
    key_env, key_agent, key_run = jax.random.split(key, 3)
    env_state = env.init(key_env)

    def step(state, t):
        key_obs, key_act, key_fb, key_upd = jax.random.split(jax.random.fold_in(key_run, t), 4)
        context = env.observe(key_obs, env_state, t)
        action, acted = agent.act(state, key_act, context)
        feedback = env.feedback(key_fb, env_state, context, action)
        return agent.update(acted, key_upd, context, action, feedback), (action, feedback.reward)

    state = agent.init(key_agent, env.spec())
    final, (actions, rewards) = jax.lax.scan(step, state, jnp.arange(horizon))
    return final, actions, rewards


# ------------------------------------------------------------------------------------------------
# The environment.


def test_env_rewards_and_regret_come_from_mean_rewards():
    env = jb.make_env("bernoulli", num_arms=K)
    spec = env.spec()
    assert (spec.dim, spec.num_arms, spec.action_kind, spec.fixed_arms) == (K, K, "index", True)
    assert env.assumptions().noise_std == 0.5 and env.task == "bernoulli"
    state = env.init(jax.random.key(0))
    context = env.observe(jax.random.key(1), state, jnp.int32(3))
    np.testing.assert_array_equal(context.arms, np.eye(K))
    means = np.asarray(env.mean_rewards(state, context))
    np.testing.assert_array_equal(means, state.means)
    assert means.shape == (K,) and np.all((means >= 0) & (means <= 1))

    keys = jax.random.split(jax.random.key(2), 4000)
    one = lambda key, a: env.feedback(key, state, context, a)  # noqa: E731
    fb = jax.jit(jax.vmap(jax.vmap(one, (None, 0)), (0, None)))(keys, jnp.arange(K))
    # regret is exact: max(means) - means[a], in the environment's own precision
    np.testing.assert_array_equal(fb.regret, np.broadcast_to(means.max() - means, (4000, K)))
    rewards = np.asarray(fb.reward)
    assert set(np.unique(rewards)) <= {0.0, 1.0}
    # the empirical mean of 4,000 rewards of each arm lies within 4 SE of its mean
    se = np.sqrt(means * (1 - means) / 4000)
    assert np.all(np.abs(rewards.mean(axis=0) - means) <= 4 * se + 1e-3), (rewards.mean(0), means)


def test_env_means_follow_the_beta_prior():
    """20,000 arm means (5,000 instances x 4 arms) of Beta(2, 5): mean 2/7 (SE 0.0011, checked
    to 0.0055) and variance 10/392 = 0.0255 (SE 0.00025, checked to 5%)."""
    env = jb.make_env("bernoulli", num_arms=K, prior_alpha=2.0, prior_beta=5.0)
    keys = jax.random.split(jax.random.key(0), 5000)
    means = np.asarray(jax.jit(jax.vmap(env.init))(keys).means, np.float64).ravel()
    a, b = 2.0, 5.0
    np.testing.assert_allclose(means.mean(), a / (a + b), atol=0.0055)
    np.testing.assert_allclose(means.var(), a * b / ((a + b) ** 2 * (a + b + 1)), rtol=0.05)
    assert means.min() >= 0 and means.max() <= 1


def test_env_fixed_means_and_shared_instances():
    fixed = jb.make_env("bernoulli", num_arms=3, means=[0.1, 0.9, 0.5])  # a list becomes a tuple
    assert fixed.means == (0.1, 0.9, 0.5)
    for seed in (0, 1):
        np.testing.assert_allclose(fixed.init(jax.random.key(seed)).means, [0.1, 0.9, 0.5])
    shared = jb.make_env("bernoulli", num_arms=K, instance_seed=7)
    first, second = (shared.init(jax.random.key(s)).means for s in (0, 1))
    np.testing.assert_array_equal(first, second)
    other = jb.make_env("bernoulli", num_arms=K, instance_seed=8).init(jax.random.key(0)).means
    assert not np.array_equal(first, other)
    own = [jb.make_env("bernoulli", num_arms=K).init(jax.random.key(s)).means for s in (0, 1)]
    assert not np.array_equal(*own)  # without a seed, each run draws its own instance


@pytest.mark.parametrize("overrides, field", [
    (dict(prior_alpha=0.0), "prior_alpha"),
    (dict(prior_beta=-1.0), "prior_beta"),
    (dict(num_arms=1), "num_arms"),
    (dict(num_arms=3, means=(0.1, 0.2)), "means"),
    (dict(num_arms=2, means=(0.1, 1.5)), "means"),
    (dict(num_arms=2, means=(0.1, float("nan"))), "means"),
    (dict(num_arms=2, means="0.5"), "means"),
])
def test_env_rejects_bad_settings(overrides, field):
    with pytest.raises(ValueError, match=rf"bernoulli: {field} must"):
        jb.make_env("bernoulli", **overrides)


@pytest.mark.parametrize("name, overrides, field", [
    ("ucb1", dict(explore_scale=-1.0), "explore_scale"),
    ("soft-elim", dict(explore_scale=0.0), "explore_scale"),
    ("bernoulli-ts", dict(prior_alpha=0.0), "prior_alpha"),
    ("bernoulli-ts", dict(prior_beta=-2.0), "prior_beta"),
])
def test_agents_reject_bad_settings(name, overrides, field):
    with pytest.raises(ValueError, match=rf"{name}: {field} must"):
        jb.make_agent(name, **overrides)


def test_agents_need_a_fixed_arm_set():
    fresh = jb.make_env("linear", dim=3, num_arms=4, fresh_arms=True)
    with pytest.raises(ValueError, match="fixed arm set"):
        UCB1().init(jax.random.key(0), fresh.spec())
    names = jb.default_agent_names(jb.make_env("bernoulli"))
    assert {"random", "ucb1", "bernoulli-ts", "soft-elim"} <= set(names)
    assert "lin-ts" not in names


# ------------------------------------------------------------------------------------------------
# Per-arm statistics and relaxed (soft) actions.


def test_arm_stats_count_index_and_relaxed_actions():
    stats = arm_stats_init(3)
    stats = arm_stats_update(stats, jnp.int32(1), 1.0)
    stats = arm_stats_update(stats, jnp.array([0.25, 0.75, 0.0]), 0.5)
    np.testing.assert_allclose(stats.counts, [0.25, 1.75, 0.0])
    np.testing.assert_allclose(stats.sums, [0.125, 1.375, 0.0])
    assert float(stats.rounds) == 2.0
    np.testing.assert_allclose(empirical_means(stats), [0.5, 1.375 / 1.75, 0.0], rtol=1e-6)


def test_scores_and_gradients_stay_finite_with_fractional_counts():
    """A relaxed first round (weights 0, 1e-30, 1e-10, rest) then an index round: every score
    is finite, untried arms (count 0 or below 1e-19) score UNTRIED_SCORE * (2 - i / K), and the
    gradients of
    the scores and logits with respect to the weights (and of TS draws to the prior) are
    finite."""
    def stats_of(w):
        return arm_stats_update(arm_stats_update(arm_stats_init(K), w, 0.7), jnp.int32(3), 1.0)

    w = jnp.array([0.0, 1e-30, 1e-10, 1.0 - 1e-10])
    ucb = UCB1()
    scores = ucb.scores(stats_of(w), None, CONTEXT)
    assert np.all(np.isfinite(scores))
    np.testing.assert_array_equal(scores[:2], [2 * UNTRIED_SCORE, 1.75 * UNTRIED_SCORE])
    assert float(scores[2]) > 1e3  # a tiny count: a huge but finite bonus
    key = jax.random.key(0)
    for f in (lambda w: jnp.sum(jax.nn.softmax(ucb.scores(stats_of(w), None, CONTEXT))),
              lambda w: jnp.sum(empirical_means(stats_of(w))),
              lambda w: jnp.sum(SoftElim().log_prob(stats_of(w), key, CONTEXT, 2)),
              lambda w: jnp.sum(BernoulliTS().scores(stats_of(w), key, CONTEXT))):
        grad = jax.jit(jax.grad(f))(w)
        assert np.all(np.isfinite(grad)), grad
    # Thompson draws are differentiable in the prior (implicit reparameterisation): a larger
    # alpha raises every Beta draw made from the same key
    def draws(alpha):
        return jnp.sum(BernoulliTS(prior_alpha=alpha).scores(stats_of(w), key, CONTEXT))

    grad = jax.jit(jax.grad(draws))(1.0)
    assert np.isfinite(grad) and grad > 0, grad


# ------------------------------------------------------------------------------------------------
# UCB1.


def test_ucb1_relaxed_play_tries_every_arm_in_order():
    """softmax(scores / 0.1) plays the untried arms one at a time, in order (equal untried
    scores would keep every arm's statistics equal for ever), then follows the rewards."""
    agent, stats = UCB1(), arm_stats_init(K)
    for t, reward in enumerate([1.0, 0.0, 0.0, 0.0]):
        weights = jax.nn.softmax(agent.scores(stats, None, CONTEXT) / 0.1)
        np.testing.assert_allclose(weights, np.eye(K)[t], atol=1e-6)
        stats = arm_stats_update(stats, weights, reward)
    np.testing.assert_allclose(stats.counts, 1.0, atol=1e-6)
    weights = jax.nn.softmax(agent.scores(stats, None, CONTEXT) / 0.1)
    assert float(weights[0]) > 0.99  # round K: arm 0, the only one that paid, leads


def test_ucb1_tries_every_arm_then_plays_the_ucb1_index(x64):
    env = jb.make_env("bernoulli", num_arms=K, means=(0.3, 0.5, 0.55, 0.7))
    agent = UCB1(explore_scale=0.7)
    final, actions, rewards = _play(env, agent, jax.random.key(0), 60)
    actions, rewards = np.asarray(actions), np.asarray(rewards)
    np.testing.assert_array_equal(actions[:K], np.arange(K))
    counts, sums = np.zeros(K), np.zeros(K)
    for t, (a, r) in enumerate(zip(actions, rewards, strict=True)):
        if t >= K:
            index = sums / counts + 0.7 * np.sqrt(2.0 * np.log(t) / counts)
            assert a == np.argmax(index), (t, index)
        counts[a] += 1
        sums[a] += r
    assert len(set(actions[K:])) > 1  # the check saw exploration, not one arm
    np.testing.assert_array_equal(final.counts, counts)
    np.testing.assert_allclose(final.sums, sums)
    assert float(final.rounds) == 60


# ------------------------------------------------------------------------------------------------
# Bernoulli Thompson sampling.


def test_bernoulli_ts_posterior_and_draws():
    """History (arm, reward): (0, 1), (0, 0), (1, 1), (2, 1), (0, 0.5), (1, 0); arm 3 unpulled.
    With a Beta(2, 3) prior: alpha = 2 + S, beta = 3 + T - S. The mean of 20,000 draws of each
    arm is within 4 SE (SE = posterior sd / sqrt(20,000) <= 0.0015) of the posterior mean."""
    stats = arm_stats_init(K)
    for a, r in [(0, 1.0), (0, 0.0), (1, 1.0), (2, 1.0), (0, 0.5), (1, 0.0)]:
        stats = arm_stats_update(stats, jnp.int32(a), r)
    agent = BernoulliTS(prior_alpha=2.0, prior_beta=3.0)
    alpha, beta = (np.asarray(p) for p in agent.posterior(stats))
    np.testing.assert_allclose(alpha, 2.0 + np.array([1.5, 1.0, 1.0, 0.0]))
    np.testing.assert_allclose(beta, 3.0 + np.array([1.5, 1.0, 0.0, 0.0]))

    keys = jax.random.split(jax.random.key(0), DRAWS)
    draws = np.asarray(jax.jit(jax.vmap(lambda k: agent.scores(stats, k, CONTEXT)))(keys))
    assert draws.shape == (DRAWS, K) and np.all((draws >= 0) & (draws <= 1))
    mean = alpha / (alpha + beta)
    sd = np.sqrt(alpha * beta / ((alpha + beta) ** 2 * (alpha + beta + 1)))
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 4 * sd / np.sqrt(DRAWS)), draws.mean(0)
    # rewards outside [0, 1] (another environment's) are clipped into 0 <= S_i <= T_i
    alpha, beta = BernoulliTS().posterior(_stats([2.0, 2.0, 1.0, 0.0], [-1.0, 5.0, 0.5, 0.0]))
    np.testing.assert_allclose(alpha, [1.0, 3.0, 1.5, 1.0])
    np.testing.assert_allclose(beta, [3.0, 1.0, 1.5, 1.0])


# ------------------------------------------------------------------------------------------------
# SoftElim.

SOFT_COUNTS, SOFT_SUMS = [3.0, 5.0, 0.0, 2.0], [1.0, 4.0, 0.0, 1.5]  # means 1/3, 0.8, -, 0.75


def _soft_elim_probs(counts, sums, theta) -> np.ndarray:
    """The paper's SoftElim probabilities in NumPy float64."""
    counts, sums = np.asarray(counts, np.float64), np.asarray(sums, np.float64)
    mu = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    logits = -2.0 * counts * (mu.max() - mu) ** 2 / theta
    p = np.exp(logits - logits.max())
    return p / p.sum()


@jax.jit
def _soft_elim_play(agent, stats, keys):
    """Actions of ``act`` for each key, and ``log_prob`` of every arm (the first key's)."""
    actions = jax.vmap(lambda k: agent.act(stats, k, CONTEXT)[0])(keys)
    arms = jnp.arange(K)
    return actions, jax.vmap(lambda a: agent.log_prob(stats, keys[0], CONTEXT, a))(arms)


def test_soft_elim_log_prob_is_the_papers_formula(x64):
    stats = _stats(SOFT_COUNTS, SOFT_SUMS)
    for theta in (0.5, 2.0):
        _, log_probs = _soft_elim_play(SoftElim(explore_scale=theta), stats,
                                       jax.random.split(jax.random.key(0), 2))
        expected = np.log(_soft_elim_probs(SOFT_COUNTS, SOFT_SUMS, theta))
        np.testing.assert_allclose(log_probs, expected, rtol=1e-12, atol=1e-12)


def test_soft_elim_draws_follow_its_probabilities():
    """Frequencies of 20,000 draws within 4 SE (+ 0.002) of the probabilities; theta = 1e6
    plays uniformly, theta = 1e-4 (every arm pulled) always the empirical best arm."""
    keys = jax.random.split(jax.random.key(0), DRAWS)
    stats = _stats(SOFT_COUNTS, SOFT_SUMS)
    actions, log_probs = _soft_elim_play(SoftElim(explore_scale=0.5), stats, keys)
    probs = _soft_elim_probs(SOFT_COUNTS, SOFT_SUMS, 0.5)
    np.testing.assert_allclose(np.exp(log_probs), probs, rtol=1e-5)
    assert 0.02 < probs.min() and probs.max() < 0.4  # a real spread (0.024 to 0.327)
    freq = np.bincount(np.asarray(actions), minlength=K) / DRAWS
    se = np.sqrt(probs * (1 - probs) / DRAWS)
    assert np.all(np.abs(freq - probs) <= 4 * se + 0.002), (freq, probs)

    actions, log_probs = _soft_elim_play(SoftElim(explore_scale=1e6), stats, keys)
    np.testing.assert_allclose(np.exp(log_probs), 1.0 / K, rtol=1e-4)
    freq = np.bincount(np.asarray(actions), minlength=K) / DRAWS
    assert np.all(np.abs(freq - 1.0 / K) <= 4 * np.sqrt(3 / 16 / DRAWS)), freq

    pulled = _stats([3.0, 5.0, 1.0, 2.0], [1.0, 4.0, 0.0, 1.5])
    actions, log_probs = _soft_elim_play(SoftElim(explore_scale=1e-4), pulled, keys)
    assert np.all(np.asarray(actions) == 1) and float(log_probs[1]) > -1e-6


# ------------------------------------------------------------------------------------------------
# Regret through the public runner.


@pytest.mark.full
def test_regret_ordering_on_bernoulli():
    """K = 5, T = 300, 64 runs, common random numbers: every K-armed agent beats uniform play
    by a wide margin, and Thompson sampling beats UCB1 (measured: random 100, ucb1 36,
    soft-elim 20, bernoulli-ts 11)."""
    env = jb.make_env("bernoulli", num_arms=5)
    names = ("random", "ucb1", "bernoulli-ts", "soft-elim")
    results = jb.compare(env, {n: jb.make_agent(n) for n in names}, 0, horizon=300,
                         num_runs=64, progress=False)
    final = {n: results[n].final()[0] for n in names}
    for name in names[1:]:
        assert final[name] < 0.6 * final["random"], final
    assert final["bernoulli-ts"] < final["ucb1"], final
