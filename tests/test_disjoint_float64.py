"""float64 checks of the per-arm ("disjoint") agents against a NumPy reference of Li et al.
(2010), Alg. 1, on one shared history (contexts, actions and rewards given, not chosen):

* ``disjoint-lin-ucb``: every arm's score ``x^T theta_a + alpha sqrt(x^T A_a^{-1} x)`` to 1e-12;
* ``disjoint-lin-ts``: each arm's posterior ``N(theta_a, v^2 A_a^{-1})`` to 1e-12, and the
  scores' mean and variance over draws within Monte Carlo error;
* ``disjoint-epsilon-greedy``: the estimates to 1e-12, the exact ``log_prob``, and the rate of
  non-greedy plays ``epsilon (K - 1) / K`` within 4 standard errors;
* ``lin-ucb`` with ``radius="constant"``: Li et al.'s score on the shared ridge model.

The per-arm agents read a shared context once (one ``(K d, d) @ x`` product) and per-arm rows
one by one: both are checked (``shared``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.core import Feedback
from jaxbandits.envs import shared_context
from jaxbandits.linalg import disjoint_covariance

pytestmark = pytest.mark.usefixtures("x64")

T, K, D, REG = 40, 4, 3, 0.7


def history(seed=0):
    rng = np.random.default_rng(seed)
    contexts = rng.normal(size=(T, D))
    actions = rng.integers(0, K, size=T)
    rewards = rng.normal(size=T)
    probe = rng.normal(size=D)
    return contexts, actions, rewards, probe


def reference(contexts, actions, rewards, reg):
    """Li et al. 2010, Alg. 1 (lines 5-6 and 12-13): ``A_a``, ``b_a`` per arm, as NumPy does."""
    A = np.stack([reg * np.eye(D) for _ in range(K)])
    b = np.zeros((K, D))
    for x, a, r in zip(contexts, actions, rewards, strict=True):
        A[a] += np.outer(x, x)
        b[a] += r * x
    A_inv = np.linalg.inv(A)
    theta = np.einsum("kij,kj->ki", A_inv, b)
    return theta, A_inv


def round_context(x, shared=True):
    """Round context of ``x`` ``(d,)``: a :class:`SharedContext`, or with ``shared=False`` the
    same rows as per-arm features (a plain :class:`Context`)."""
    context = shared_context(x, K)
    return context if shared else jb.Context(arms=context.arms)


def fitted(agent, contexts, actions, rewards, shared=True):
    """The agent's state after ``update`` on the shared history (one scan)."""
    spec = jb.core.Spec(dim=D, num_arms=K)

    def body(state, row):
        x, a, r = row
        fb = Feedback(reward=r, regret=jnp.zeros(()))
        return agent.update(state, jax.random.key(0), round_context(x, shared), a, fb), None

    state = agent.init(jax.random.key(0), spec)
    rows = (jnp.asarray(contexts), jnp.asarray(actions, jnp.int32), jnp.asarray(rewards))
    return jax.lax.scan(body, state, rows)[0]


FORMS = pytest.mark.parametrize("shared", [True, False], ids=["shared", "per-arm"])


@FORMS
def test_disjoint_lin_ucb_scores_match_li_et_al(shared):
    contexts, actions, rewards, x = history()
    alpha = 0.8
    agent = jb.make_agent("disjoint-lin-ucb", alpha=alpha, reg=REG)
    state = jax.jit(lambda: fitted(agent, contexts, actions, rewards, shared))()
    theta, A_inv = reference(contexts, actions, rewards, REG)
    want = theta @ x + alpha * np.sqrt(np.einsum("i,kij,j->k", x, A_inv, x))
    got = agent.scores(state, jax.random.key(1), round_context(jnp.asarray(x), shared))
    assert got.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(state.count), np.bincount(actions, minlength=K))


@FORMS
def test_disjoint_lin_ts_posterior_and_draws(shared):
    contexts, actions, rewards, x = history(1)
    v = 0.6
    agent = jb.make_agent("disjoint-lin-ts", v=v, reg=REG)
    state = jax.jit(lambda: fitted(agent, contexts, actions, rewards, shared))()
    theta, A_inv = reference(contexts, actions, rewards, REG)
    np.testing.assert_allclose(np.asarray(state.mean), theta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(disjoint_covariance(state), A_inv, rtol=1e-12, atol=1e-12)
    # the scores' law: N(x^T theta_a, v^2 x^T A_a^{-1} x), independent across arms
    n = 4000
    context = round_context(jnp.asarray(x), shared)
    draws = np.asarray(jax.jit(jax.vmap(lambda k: agent.scores(state, k, context)))(
        jax.random.split(jax.random.key(2), n)))
    mean, var = theta @ x, v**2 * np.einsum("i,kij,j->k", x, A_inv, x)
    se_mean = np.sqrt(var / n)
    assert np.all(np.abs(draws.mean(0) - mean) < 4 * se_mean)
    se_var = var * np.sqrt(2.0 / (n - 1))  # Gaussian sample variance
    assert np.all(np.abs(draws.var(0, ddof=1) - var) < 4 * se_var)


@FORMS
def test_disjoint_epsilon_greedy_estimates_log_prob_and_rate(shared):
    contexts, actions, rewards, x = history(2)
    epsilon = 0.3
    agent = jb.make_agent("disjoint-epsilon-greedy", epsilon=epsilon, reg=REG)
    state = jax.jit(lambda: fitted(agent, contexts, actions, rewards, shared))()
    theta, _ = reference(contexts, actions, rewards, REG)
    context = round_context(jnp.asarray(x), shared)
    np.testing.assert_allclose(np.asarray(agent.estimates(state, context)), theta @ x,
                               rtol=1e-12, atol=1e-12)
    greedy = int(np.argmax(theta @ x))
    log_probs = jax.jit(jax.vmap(lambda a: agent.log_prob(state, jax.random.key(0), context, a)))
    probs = np.exp(np.asarray(log_probs(jnp.arange(K))))
    want = np.full(K, epsilon / K)
    want[greedy] += 1.0 - epsilon
    np.testing.assert_allclose(probs, want, rtol=1e-12)
    # exploration at rate epsilon: a non-greedy arm with probability epsilon (K - 1) / K
    n = 20_000
    played = np.asarray(jax.jit(jax.vmap(lambda k: agent.act(state, k, context)[0]))(
        jax.random.split(jax.random.key(3), n)))
    rate, p = np.mean(played != greedy), epsilon * (K - 1) / K
    assert abs(rate - p) < 4 * np.sqrt(p * (1 - p) / n)
    counts = np.bincount(played, minlength=K) / n  # and uniform over the arms it explores
    assert np.all(np.abs(counts - want) < 4 * np.sqrt(want * (1 - want) / n))


def test_lin_ucb_constant_radius_is_li_et_al_shared_model():
    contexts, actions, rewards, _ = history(3)
    rng = np.random.default_rng(4)
    arms = rng.normal(size=(K, D))
    alpha = 1.3
    agent = jb.make_agent("lin-ucb", radius="constant", alpha=alpha, reg=REG)
    spec = jb.core.Spec(dim=D, num_arms=K)

    def body(state, row):  # the history as one-arm rounds, on the shared model
        x, r = row
        fb = Feedback(reward=r, regret=jnp.zeros(()))
        return agent.update(state, jax.random.key(0), jb.Context(arms=x[None]), jnp.int32(0),
                            fb), None

    state = agent.init(jax.random.key(0), spec)  # a RidgeState (arms not fixed)
    state = jax.jit(lambda s: jax.lax.scan(body, s, (jnp.asarray(contexts),
                                                     jnp.asarray(rewards)))[0])(state)
    A = REG * np.eye(D) + contexts.T @ contexts
    theta = np.linalg.solve(A, contexts.T @ rewards)
    want = arms @ theta + alpha * np.sqrt(np.einsum("ki,ij,kj->k", arms, np.linalg.inv(A), arms))
    got = agent.scores(state, jax.random.key(0), jb.Context(arms=jnp.asarray(arms)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_disjoint_ensemble_pp_is_ensemble_pp_on_block_features():
    """Per arm, Ensemble++'s factor and ridge split into the blocks of ``e_a (x) x``: the
    disjoint agent started from the blocks of the block agent's prior factor plays the same
    scores after the same history, updates and reference draws."""
    from jaxbandits.envs import block_features
    from jaxbandits.linalg import EnsembleState, ridge_init

    contexts, actions, rewards, x = history(5)
    m = 4
    block = jb.make_agent("ensemble-pp", ensemble_size=m, reg=REG, noise_std=0.8)
    ours = jb.make_agent("disjoint-ensemble-pp", ensemble_size=m, reg=REG, noise_std=0.8)
    block_state = block.init(jax.random.key(0), jb.core.Spec(dim=K * D, num_arms=K))
    prior = jax.tree.map(lambda leaf: jnp.broadcast_to(leaf, (K, *leaf.shape)), ridge_init(D, REG))
    our_state = EnsembleState(ridge=prior,
                              factor=block_state.factor.reshape(K, D, m))

    @jax.jit
    def play(block_state, our_state):
        def body(states, row):
            b, o = states
            xt, a, r, t = row
            fb = Feedback(reward=r, regret=jnp.zeros(()))
            key = jax.random.fold_in(jax.random.key(1), t)
            b = block.update(b, key, jb.Context(arms=block_features(xt, K)), a, fb)
            o = ours.update(o, key, shared_context(xt, K), a, fb)
            return (b, o), None

        rows = (jnp.asarray(contexts), jnp.asarray(actions, jnp.int32), jnp.asarray(rewards),
                jnp.arange(T))
        b, o = jax.lax.scan(body, (block_state, our_state), rows)[0]
        key = jax.random.key(2)
        xb = jnp.asarray(x)
        return block.scores(b, key, jb.Context(arms=block_features(xb, K))), \
            ours.scores(o, key, shared_context(xb, K))

    want, got = play(block_state, our_state)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-11, atol=1e-12)
