"""The disjoint model's environments and learning, and arrays as an environment.

* ``ArrayEnv`` reproduces the arrays it is given (shared by all runs, and one slice per run),
  through ``simulate``; it rejects bad arrays with a ``ValueError`` naming the array and index.
* ``disjoint-lin-ucb`` learns the disjoint linear bandit: well below uniform play.
* ``disjoint-linear``'s cheaper context draw gives the Gaussians of ``draw_vectors`` bit for
  bit, and its means are ``x_t^T theta*_a``.
* ``disjoint-classification`` shows the table's row to every arm and pays 1 for the right class.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb

T, K, D, R = 12, 3, 2, 3


def test_array_env_reproduces_shared_and_per_run_arrays():
    rng = np.random.default_rng(0)
    contexts = rng.normal(size=(R, T, K, D))
    # every arm pays the same, so the cumulative reward of any policy is the row sum
    level = rng.normal(size=(R, T, 1))
    rewards = np.repeat(level, K, axis=-1)
    env = jb.envs.ArrayEnv(contexts=contexts, rewards=rewards, seed=5)
    assert env.spec() == jb.core.Spec(dim=D, num_arms=K)
    result = jb.simulate(env, jb.make_agent("random"), 5, horizon=T, num_runs=R, progress=False)
    np.testing.assert_allclose(np.asarray(result.cumulative_reward)[:, -1],
                               level.sum(axis=(1, 2)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(result.cumulative_regret)[:, -1], 0.0, atol=1e-6)
    # shared by all runs, with means: the round's context and the mean's regret, exactly
    shared = rng.normal(size=(T, D)).astype(np.float32)
    means = rng.normal(size=(T, K)).astype(np.float32)
    env = jb.envs.ArrayEnv(shared=shared, means=means)
    state = env.init(jax.random.key(0))
    t = jnp.int32(7)
    context = env.observe(jax.random.key(1), state, t)
    np.testing.assert_array_equal(np.asarray(context.shared), shared[7])
    np.testing.assert_array_equal(np.asarray(context.arms), np.tile(shared[7], (K, 1)))
    feedback = env.feedback(jax.random.key(2), state, context, jnp.int32(1))
    assert float(feedback.reward) == means[7, 1]  # noise_std = 0
    assert float(feedback.regret) == means[7].max() - means[7, 1]


@pytest.mark.parametrize("fields, message", [
    (dict(contexts=np.zeros((T, K, D)), rewards=np.zeros((T, K)).tolist()[:-1]),
     r"arrays: rewards has leading axes \(11,\)"),
    (dict(shared=np.zeros((T, D)), means=np.where(np.eye(T, K) > 0, np.nan, 0.0)),
     r"arrays: means\[0, 0\] is nan"),
    (dict(contexts=np.full((R, T, K, D), np.inf), rewards=np.zeros((R, T, K)), seed=0),
     r"arrays: contexts\[0, 0, 0, 0\] is inf"),
    (dict(contexts=np.zeros((T, K + 1, D)), means=np.zeros((T, K))),
     r"arrays: contexts has 4 arms, means has 3"),
    (dict(contexts=np.zeros((R, T, K, D)), rewards=np.zeros((R, T, K))),
     r"per-run arrays .* need seed="),
    (dict(shared=np.zeros((T,)), means=np.zeros((T, K))),
     r"arrays: shared must have 2 dimensions"),
    (dict(contexts=np.zeros((T, K, D)), shared=np.zeros((T, D)), means=np.zeros((T, K))),
     r"exactly one of contexts="),
    (dict(shared=np.zeros((T, D))), r"give means="),
])
def test_array_env_rejects_bad_arrays(fields, message):
    with pytest.raises(ValueError, match=message):
        jb.envs.ArrayEnv(**fields).validate()


@pytest.mark.parametrize("key, num_runs, horizon, shared_by_runs, message", [
    (1, R, T, False, r"derives from seed=5, and this call's key is not jax.random.key\(5\): "
                     r"pass 5 as the key"),
    (jax.random.key(5, impl="rbg"), R, T, False, r"this call's key is not"),
    (5, R + 1, T, False, r"num_runs 4 is past the R = 3 runs .* pass num_runs <= 3"),
    (5, R, T + 1, False, r"horizon 13 is past the T = 12 rounds .* pass horizon <= 12"),
    (5, R, T + 1, True, r"horizon 13 is past the T = 12 rounds"),
])
def test_array_env_refuses_a_call_it_cannot_serve_before_compiling(key, num_runs, horizon,
                                                                   shared_by_runs, message):
    """Per-run arrays are recognised by the keys the runner derives from seed=: another key, a
    run or a round the arrays do not hold is a ValueError saying what to pass (not NaN rewards
    a compile later); the right key, any R' <= R runs and T' <= T rounds play."""
    lead = () if shared_by_runs else (R,)
    env = jb.envs.ArrayEnv(shared=np.zeros(lead + (T, D)), means=np.zeros(lead + (T, K)),
                           seed=None if shared_by_runs else 5)
    agent = jb.make_agent("random")
    with pytest.raises(ValueError, match=message):
        jb.simulate(env, agent, key, horizon=horizon, num_runs=num_runs, progress=False)
    env.check_call(jax.random.key(5), T, R)  # the call that fits: no error
    env.check_call(jax.random.key(5), T - 1, R - 1)


def test_disjoint_lin_ucb_learns_the_disjoint_model():
    env = jb.make_env("disjoint-linear", dim=3, num_arms=5)
    agents = {"random": jb.make_agent("random"),
              "disjoint": jb.make_agent("disjoint-lin-ucb", alpha=0.5)}
    results = jb.compare(env, agents, 0, horizon=300, num_runs=8, progress=False)
    final = {name: r.final()[0] for name, r in results.items()}
    assert final["disjoint"] < 0.4 * final["random"]


@pytest.mark.parametrize("kind", ["sphere", "gaussian"])
def test_disjoint_linear_context_is_the_plain_draw(kind):
    """The context drawn 16 wide and sliced (8 < d < 16) or as is: the Gaussians of a plain
    ``draw_vectors(key, (d,))`` bit for bit, under vmap as the runner draws them (the sphere's
    normalisation may round differently once compiled: to 1e-6); the means are
    ``theta*_a^T x_t``."""
    keys = jax.random.split(jax.random.key(4), 5)
    for dim in (10, 16):  # drawn 16 wide and sliced; drawn as is
        env = jb.make_env("disjoint-linear", dim=dim, num_arms=4, context_prior=kind)
        state = env.init(jax.random.key(0))
        context = jax.jit(jax.vmap(lambda k, e=env, s=state: e.observe(k, s, jnp.int32(0))))(keys)
        plain = jax.jit(jax.vmap(
            lambda k, d=dim: jb.envs.draw_vectors(k, (d,), kind, 1.0 / jnp.sqrt(d))))
        if kind == "gaussian":
            np.testing.assert_array_equal(np.asarray(context.shared), np.asarray(plain(keys)))
        else:
            np.testing.assert_allclose(np.asarray(context.shared), np.asarray(plain(keys)),
                                       rtol=1e-6, atol=1e-7)
        means = env.mean_rewards(state, jax.tree.map(lambda x: x[0], context))
        np.testing.assert_allclose(np.asarray(means), np.asarray(state.theta)
                                   @ np.asarray(context.shared[0]), rtol=1e-5, atol=1e-6)


def test_disjoint_classification_shares_the_row_and_pays_the_class():
    rng = np.random.default_rng(1)
    features, labels = rng.normal(size=(20, D)), rng.integers(0, K, size=20)
    labels[:K] = np.arange(K)
    env = jb.envs.DisjointClassificationEnv.from_arrays(features, labels, pool_size=None,
                                                        sampling="sequential")
    assert env.spec() == jb.core.Spec(dim=D, num_arms=K)

    @jax.jit
    def round_three(key):
        state = env.init(key)
        context = env.observe(jax.random.key(1), state, jnp.int32(3))
        play = jax.vmap(lambda a: env.feedback(jax.random.key(2), state, context, a))
        return context, play(jnp.arange(K))

    context, feedback = round_three(jax.random.key(0))
    row = int(context.row)
    np.testing.assert_allclose(np.asarray(context.shared), features[row], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(context.arms), np.tile(context.shared, (K, 1)))
    right = (np.arange(K) == labels[row]).astype(float)
    np.testing.assert_array_equal(np.asarray(feedback.reward), right)
    np.testing.assert_array_equal(np.asarray(feedback.regret), 1.0 - right)
    # the per-arm agents read the row once, as a shared context, not its K copies
    np.testing.assert_array_equal(np.asarray(jb.agents.disjoint.features(context)),
                                  np.asarray(context.shared))
