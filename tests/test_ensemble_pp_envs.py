"""The Ensemble++ paper's nonlinear and UCI environments (Li et al. 2024, Sec. 5.2,
App. F.2, and the authors' code).

``quadratic-pool`` and ``random-mlp-bernoulli`` (K of a fixed pool per round, per-run or the
authors' shared instance), ``vector-quadratic`` (LMC-TS's QuadBandit) and the UCI encodings
``shuttle-epp`` / ``mushroom-epp``. Environment functions are checked eagerly against independent
NumPy computations; only two small runs go through the jitted runner.
"""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.envs import DataNotFoundError, SharedPoolInstance, authors_pool_draws
from jaxbandits.registry import ENVS
from jaxbandits.simulate import _TRACES

SHUTTLE = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "uci" / "shuttle.trn"
ROUNDS = 6  # authors' subsets precomputed in these tests
PER_RUN = dict(dim=6, pool_size=30, num_arms=5)  # one small per-run pool (shared compilations)


def _authors_reference(seed=2022, dim=100, pool=1000, arms=50, rounds=ROUNDS, theta=True):
    """The authors' ``SyntheticNonlinModel`` draws, re-derived step by step with NumPy."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(size=(pool, dim), dtype=np.float32)
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    big_theta = rng.standard_normal(size=(dim, dim), dtype=np.float32) if theta else None
    if not rounds:
        return x, big_theta, None
    action_set = np.arange(pool, dtype=np.int32)
    draws = [rng.choice(action_set, size=arms, replace=False) for _ in range(rounds + 1)]
    return x, big_theta, np.stack(draws[1:])  # round t: draw t + 2 counting from 1


@pytest.fixture(scope="module")
def authors_quadratic():
    return jb.make_env("quadratic-pool", instance="authors", authors_rounds=ROUNDS)


# ------------------------------------------------------------------------------------------------
# quadratic-pool and the authors' instance.


def test_authors_instance_is_the_authors_numpy_draws(authors_quadratic):
    env = authors_quadratic
    shared = env.shared_instance
    pool, theta, subsets = _authors_reference()
    np.testing.assert_array_equal(np.asarray(shared.pool), pool)
    np.testing.assert_array_equal(np.asarray(shared.params), theta)
    assert shared.subsets.dtype == jnp.int16 and shared.subsets.shape == (ROUNDS, 50)
    np.testing.assert_array_equal(np.asarray(shared.subsets), subsets)
    # observe: round t offers draw t (then the sequence cycles); every run sees the same arms
    state = env.init(jax.random.key(0))
    for t in (0, 1, ROUNDS - 1, ROUNDS + 2):
        context = env.observe(jax.random.key(t + 7), state, jnp.int32(t))
        np.testing.assert_array_equal(context.arm_ids, subsets[t % ROUNDS])
        np.testing.assert_array_equal(context.arms, pool[subsets[t % ROUNDS]])
    # drawn once per configuration (cached), and redrawn when a size changes
    hits = authors_pool_draws.cache_info().hits
    again = jb.make_env("quadratic-pool", instance="authors", authors_rounds=ROUNDS)
    assert authors_pool_draws.cache_info().hits == hits + 1
    np.testing.assert_array_equal(again.shared_instance.subsets, shared.subsets)
    small = env.replace(instance="authors_recipe", dim=4, pool_size=9, num_arms=3)
    ref = _authors_reference(dim=4, pool=9, arms=3)
    np.testing.assert_array_equal(np.asarray(small.shared_instance.pool), ref[0])
    np.testing.assert_array_equal(np.asarray(small.shared_instance.subsets), ref[2])
    assert env.replace(instance="per_run").shared_instance is None
    assert "authors_seed=2022" in repr(shared) and "quadratic-pool" in repr(shared)


def test_authors_draws_with_the_whole_pool_offered_consume_no_subset_draws():
    pool, theta, subsets = authors_pool_draws(3, 4, 6, 6, 10, True)
    ref_pool, ref_theta, _ = _authors_reference(seed=3, dim=4, pool=6, arms=6, rounds=0)
    np.testing.assert_array_equal(pool, ref_pool)
    np.testing.assert_array_equal(theta, ref_theta)
    np.testing.assert_array_equal(subsets, np.arange(6)[None])  # their sub_actions == all_actions


def test_quadratic_pool_means_and_regret_are_the_closed_form(authors_quadratic):
    for env in (authors_quadratic, jb.make_env("quadratic-pool", **PER_RUN)):
        state = env.init(jax.random.key(1))
        shared = env.shared_instance
        pool = np.asarray(shared.pool if shared is not None else state.pool, np.float64)
        theta = np.asarray(shared.params if shared is not None else state.params, np.float64)
        gram = theta @ theta.T  # the authors' real_theta
        np.testing.assert_allclose(state.means, 0.01 * np.einsum("pi,ij,pj->p", pool, gram, pool),
                                   rtol=1e-5)
        context = env.observe(jax.random.key(2), state, jnp.int32(0))
        ids = np.asarray(context.arm_ids)
        assert len(set(ids.tolist())) == env.num_arms and ids.min() >= 0
        assert ids.max() < env.pool_size
        np.testing.assert_allclose(context.arms, pool[ids], rtol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(context.arms, axis=1), 1.0, rtol=1e-6)
        means = 0.01 * np.sum((pool[ids] @ theta) ** 2, axis=1)  # x^T Theta Theta^T x
        best = int(np.argmax(means))
        feedback = jax.vmap(env.feedback, (None, None, None, 0))
        regrets = np.asarray(feedback(jax.random.key(3), state, context, jnp.arange(env.num_arms))
                             .regret)
        np.testing.assert_allclose(regrets, means.max() - means, atol=1e-5 * means.max())
        assert regrets[best] == 0.0 and regrets.min() == 0.0
    keys = jax.random.split(jax.random.key(4), 400)
    rewards = jax.vmap(env.feedback, (0, None, None, None))(keys, state, context, jnp.int32(best))
    noise = np.asarray(rewards.reward, np.float64) - means[best]
    # N(0, 0.1^2): Li et al. 2024, App. F.2's "N(0, 0.1)" read as a std
    assert 0.085 < np.std(noise) < 0.115 and abs(np.mean(noise)) < 0.02


def test_per_run_instances_differ_and_subsets_are_fresh():
    env = jb.make_env("quadratic-pool", **PER_RUN)
    a, b = env.init(jax.random.key(0)), env.init(jax.random.key(1))
    assert not np.allclose(a.pool, b.pool) and not np.allclose(a.params, b.params)
    c0 = env.observe(jax.random.key(5), a, jnp.int32(0))
    c1 = env.observe(jax.random.key(6), a, jnp.int32(0))
    assert not np.array_equal(c0.arm_ids, c1.arm_ids)  # fresh subsets every round
    assert env.spec() == jb.Spec(dim=6, num_arms=5, action_kind="index", fixed_arms=False)


# ------------------------------------------------------------------------------------------------
# random-mlp-bernoulli.


def _softmax_p1(params, x, temperature):
    h = np.asarray(x, np.float64)
    layers = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params]
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        h = np.maximum(h, 0.0) if i < len(layers) - 1 else h
    z = h / temperature
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return (z / z.sum(axis=-1, keepdims=True))[:, 1]


def test_random_mlp_bernoulli_probabilities_network_and_rewards():
    env = jb.make_env("random-mlp-bernoulli", instance="authors", authors_rounds=ROUNDS)
    shared = env.shared_instance
    pool, _, subsets = _authors_reference(theta=False)  # the neural task draws no Theta
    np.testing.assert_array_equal(np.asarray(shared.pool), pool)
    np.testing.assert_array_equal(np.asarray(shared.subsets), subsets)
    # d-50-50-2, Xavier-normal weights, biases uniform in +-1/sqrt(fan_in)
    sizes = [(w.shape, b.shape) for w, b in shared.params]
    assert sizes == [((100, 50), (50,)), ((50, 50), (50,)), ((50, 2), (2,))]
    w1, b1 = (np.asarray(a) for a in shared.params[0])
    assert np.std(w1) == pytest.approx(np.sqrt(2 / 150), rel=0.05)
    assert np.abs(b1).max() <= 0.1 and np.abs(b1).max() > 0.08
    state = env.init(jax.random.key(0))
    p = _softmax_p1(shared.params, pool, 0.1)
    np.testing.assert_allclose(state.means, p, atol=1e-5)
    assert 0.0 <= float(state.means.min()) and float(state.means.max()) <= 1.0
    assert p.min() < 0.1 and p.max() > 0.9  # tau = 0.1 sharpens them (tau = 1: about 0.4-0.6)
    context = env.observe(jax.random.key(1), state, jnp.int32(2))
    offered = p[subsets[2]]
    fb = env.feedback(jax.random.key(2), state, context, jnp.int32(0))
    assert float(fb.regret) == pytest.approx(offered.max() - offered[0], abs=1e-5)
    keys = jax.random.split(jax.random.key(3), 2000)
    feedback = jax.vmap(env.feedback, (0, None, None, None))
    rewards = np.asarray(feedback(keys, state, context, jnp.int32(0)).reward)
    assert set(rewards.tolist()) <= {0.0, 1.0}
    assert rewards.mean() == pytest.approx(offered[0], abs=0.04)  # Bernoulli(p)
    assert env.assumptions().noise_std == 0.5
    # the temperature is a leaf: tau = 1 (the authors' code) on the same network
    warm = env.replace(temperature=1.0)
    assert warm.shared_instance is shared
    p_warm = np.asarray(warm.init(jax.random.key(0)).means)
    np.testing.assert_allclose(p_warm, _softmax_p1(shared.params, pool, 1.0), atol=1e-5)
    assert np.ptp(p_warm) < 0.5 * np.ptp(p)
    # per run: each run its own network
    per_run = jb.make_env("random-mlp-bernoulli", dim=3, pool_size=8, num_arms=4, width=5)
    a, b = per_run.init(jax.random.key(0)), per_run.init(jax.random.key(1))
    np.testing.assert_allclose(a.means, _softmax_p1(a.params, a.pool, 0.1), atol=1e-5)
    assert not np.allclose(a.params[0][0], b.params[0][0])


# ------------------------------------------------------------------------------------------------
# vector-quadratic.


def test_vector_quadratic_is_lmcts_quadbandit():
    env = jb.make_env("vector-quadratic")
    assert (env.dim, env.num_arms, env.noise_std, env.fresh_arms) == (20, 50, 1.0, True)
    assert not env.spec().fixed_arms
    state = env.init(jax.random.key(0))
    theta = np.asarray(state.params, np.float64)
    assert np.linalg.norm(theta) == pytest.approx(1.0, rel=1e-6)
    c0 = env.observe(jax.random.key(1), state, jnp.int32(0))
    c1 = env.observe(jax.random.key(2), state, jnp.int32(1))
    assert not np.allclose(c0.arms, c1.arms)  # fresh contexts every round
    np.testing.assert_allclose(np.linalg.norm(c0.arms, axis=1), 1.0, rtol=1e-6)
    means = 10.0 * (np.asarray(c0.arms, np.float64) @ theta) ** 2
    feedback = jax.vmap(env.feedback, (None, None, None, 0))
    regrets = np.asarray(feedback(jax.random.key(3), state, c0, jnp.arange(50)).regret)
    assert regrets.min() >= 0.0 and regrets[np.argmax(means)] == 0.0
    np.testing.assert_allclose(regrets, means.max() - means, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# Bad input: ValueErrors naming the field, before anything is compiled.


@pytest.mark.parametrize("name, fields, match", [
    ("quadratic-pool", dict(num_arms=60, pool_size=50), "num_arms must be at most pool_size"),
    ("quadratic-pool", dict(instance="author"), "did you mean 'authors'"),
    ("quadratic-pool", dict(instance="authors", num_arms=60, pool_size=50), "num_arms must be"),
    ("quadratic-pool", dict(instance="authors", authors_rounds=0), "authors_rounds must be"),
    ("quadratic-pool", dict(authors_seed=-1), "authors_seed must be"),
    ("quadratic-pool", dict(scale=0.0), "scale must be"),
    ("random-mlp-bernoulli", dict(temperature=0.0), "temperature must be"),
    ("random-mlp-bernoulli", dict(temperature=-1.0), "temperature must be"),
    ("random-mlp-bernoulli", dict(instance="per-run"), "did you mean 'per_run'"),
    ("random-mlp-bernoulli", dict(width=0), "width must be"),
    ("vector-quadratic", dict(scale=-1.0), "scale must be"),
    ("quadratic-pool", dict(shared_instance="x"), "shared_instance must be"),
])
def test_bad_settings_raise_before_any_compilation(name, fields, match):
    traces = dict(_TRACES)
    with pytest.raises(ValueError, match=match) as err:
        jb.make_env(name, **fields)
    assert name in str(err.value)
    if "instance" not in fields:  # built directly: the runner's check, before any tracing
        with pytest.raises(ValueError, match=match):
            jb.simulate(ENVS[name](**fields), jb.make_agent("random"), 0, 5, 1, progress=False)
    assert _TRACES == traces  # nothing was traced for the runner


# ------------------------------------------------------------------------------------------------
# Through the jitted runner (two small compilations).


def test_runs_share_the_authors_instance_through_the_runner():
    env = jb.make_env("quadratic-pool", instance="authors_recipe", dim=4, pool_size=10, num_arms=3,
                      authors_rounds=5)
    result = jb.simulate(env, jb.make_agent("random"), 0, 12, 3, record="all", progress=False)
    regret = np.asarray(result.cumulative_regret)
    assert regret.shape == (3, 12) and np.all(np.diff(regret, axis=1) >= -1e-7)
    assert "SharedPoolInstance" in str(result.env_config["shared_instance"])
    # the instance is shared by every run: identical per-run means, identical offered arms
    keys = jax.random.split(jax.random.key(0), 3)
    means = jax.vmap(env.init)(keys).means
    assert np.all(means == means[0])


def test_bernoulli_pool_env_through_the_runner():
    env = jb.make_env("random-mlp-bernoulli", dim=3, pool_size=9, num_arms=4, width=4)
    result = jb.simulate(env, jb.make_agent("random"), 1, 10, 2, record="all", progress=False)
    rewards = np.diff(np.asarray(result.cumulative_reward), axis=1, prepend=0.0)
    assert set(np.round(rewards, 6).ravel().tolist()) <= {0.0, 1.0}
    regret = np.diff(np.asarray(result.cumulative_regret), axis=1, prepend=0.0)
    assert regret.min() >= -1e-7 and regret.max() <= 1.0


# ------------------------------------------------------------------------------------------------
# UCI Shuttle and Mushroom with Ensemble++'s encoding.


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _check_encoding(env, num_classes: int):
    state = env.init(jax.random.key(0))
    d = env.data.meta.dim
    assert sorted(np.asarray(state.pool).tolist()) == list(range(env.num_rows))  # a shuffle
    for t in range(3):
        context = env.observe(jax.random.key(t), state, jnp.int32(t))
        assert int(context.row) == int(state.pool[t])  # walked in order
        x = np.asarray(env.data.features[context.row], np.float64)
        x = x / np.linalg.norm(x)
        arms = np.asarray(context.arms)
        assert arms.shape == (num_classes, num_classes * d)
        for k in range(num_classes):
            block = arms[k].reshape(num_classes, d)
            np.testing.assert_allclose(block[k], x, rtol=1e-6)  # e_k (x) x, unit norm
            assert np.all(np.delete(block, k, axis=0) == 0.0)
        label = int(env.data.labels[context.row])
        for a in range(num_classes):
            fb = env.feedback(jax.random.key(9), state, context, jnp.int32(a))
            assert float(fb.regret) == (0.0 if a == label else 1.0)
    return state


def test_shuttle_epp_encoding_on_a_small_table(tmp_path):
    rng = np.random.default_rng(0)
    lines = ["x0,x1,x2,x3,x4,x5,x6,x7,x8,label"] + [
        ",".join([*(str(v) for v in rng.integers(-50, 100, 9)), str(1 + i % 7)])
        for i in range(14)]
    env = jb.make_env("shuttle-epp", path=str(_write(tmp_path / "shuttle.csv", lines)))
    assert (env.sampling, env.pool_size, env.normalize, env.unit_norm) == (
        "sequential", None, "none", True)
    assert env.noise_std == 0.1 and env.spec().dim == 63 and env.spec().num_arms == 7
    assert (env.default_horizon, env.default_runs) == (10_000, 10)
    _check_encoding(env, 7)
    shared = env.replace(instance_seed=2022)
    np.testing.assert_array_equal(shared.init(jax.random.key(0)).pool,
                                  shared.init(jax.random.key(1)).pool)
    with pytest.raises(ValueError, match="dataset is fixed to 'shuttle'"):
        jb.make_env("shuttle-epp", dataset="magic")


@pytest.mark.skipif(not SHUTTLE.is_file(), reason=f"{SHUTTLE} not found")
def test_shuttle_epp_reads_the_shared_file():
    env = jb.make_env("shuttle-epp")
    assert env.num_pool == env.num_rows == 43_500 and env.spec().dim == 63
    x = env.row_features(env.init(jax.random.key(0)), jnp.int32(5))
    assert float(jnp.linalg.norm(x)) == pytest.approx(1.0, rel=1e-6)


def test_mushroom_epp_one_hot_unit_rows_and_missing_file(tmp_path):
    rng = np.random.default_rng(1)
    letters = list("abcdefgh?")
    lines = [",".join(["e" if i % 3 else "p"] + [letters[v] for v in rng.integers(0, 4, 22)])
             for i in range(12)]
    env = jb.make_env("mushroom-epp", path=str(_write(tmp_path / "agaricus-lepiota.data", lines)))
    assert env.noise_std == 1.0 and env.categorical == "onehot" and env.spec().num_arms == 2
    assert not env.data.categorical and set(np.unique(env.data.features).tolist()) == {0.0, 1.0}
    state = _check_encoding(env, 2)
    x = np.asarray(env.row_features(state, jnp.int32(0)))
    assert np.count_nonzero(x) == 22  # one category per attribute, then unit L2
    np.testing.assert_allclose(x[x != 0], 1 / np.sqrt(22), rtol=1e-6)
    with pytest.raises(DataNotFoundError, match="agaricus-lepiota.data"):
        jb.make_env("mushroom-epp", path=str(tmp_path / "nowhere"))


def test_registry_entries():
    for name in ("quadratic-pool", "random-mlp-bernoulli", "vector-quadratic", "shuttle-epp",
                 "mushroom-epp"):
        cls = ENVS[name]
        assert cls.paper.startswith("Li et al. 2024") and cls.default_horizon == 10_000
        assert cls.default_runs == 10
    assert isinstance(SharedPoolInstance, type)
