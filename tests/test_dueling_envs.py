"""Contextual dueling environments (Oh et al. 2026, Sec. 6, App. E.1).

The synthetic tasks always run; the UCI conversions read the shared shuttle and magic files when
present (skipped otherwise) and covertype from a tiny file written here. Identities (regret
relations, the vector quadratic = square / 10) run in float64 through the ``x64`` fixture;
Monte Carlo checks state their tolerance. The environment functions are tested directly; one
``jb.simulate`` smoke test needs the runner's extra metrics (skipped until ``Result.metrics``
exists).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.envs import DataNotFoundError, dueling
from jaxbandits.envs.dueling import dueling_regrets, dueling_utility, link_function

SYNTHETIC = ["dueling-synthetic", "dueling-cosine", "dueling-square", "dueling-quadratic"]
SHARED_UCI = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "uci"
SHUTTLE = SHARED_UCI / "shuttle.trn"
needs_shuttle = pytest.mark.skipif(not SHUTTLE.is_file(),
                                   reason=f"shuttle.trn not found in {SHARED_UCI}")
needs_magic = pytest.mark.skipif(not (SHARED_UCI / "magic04.data").is_file(),
                                 reason=f"magic04.data not found in {SHARED_UCI}")


@functools.partial(jax.jit, static_argnums=1)
def _apply(env, method, *args):
    """``env.<method>(*args)``, jitted with the environment as an argument (a pytree: one
    compilation per static configuration, not one per call)."""
    return getattr(env, method)(*args)


@functools.partial(jax.jit, static_argnums=1)
def _vmap_init(env, num_runs, key):
    """``(num_runs, ...)`` instances, one per run key."""
    return jax.vmap(env.init)(jax.random.split(key, num_runs))


@jax.jit
def _vmap_observe(env, state, keys, ts):
    """Contexts of one instance for a batch of round keys and rounds."""
    return jax.vmap(env.observe, (0, None, 0))(keys, state, ts)


def _round(env, seed=0, t=0):
    """One round's (state, context) with explicit keys."""
    key_init, key_observe = jax.random.split(jax.random.key(seed))
    state = _apply(env, "init", key_init)
    return state, _apply(env, "observe", key_observe, state, jnp.int32(t))


@functools.partial(jax.jit, static_argnums=4)
def _many(env, state, context, actions, n, key):
    """Feedbacks of each pair of ``actions`` ``(A, 2)``, ``n`` draws each: leaves ``(A, n)``."""
    keys = jax.random.split(key, n)
    per_key = jax.vmap(env.feedback, (0, None, None, None))
    return jax.vmap(per_key, (None, None, None, 0))(keys, state, context, actions)


def _feedbacks(env, state, context, action, n, seed=1):
    """``n`` feedbacks of one pair in one round, one per key."""
    action = jnp.asarray(action, jnp.int32)[None]
    fb = _many(env, state, context, action, n, jax.random.key(seed))
    return jax.tree.map(lambda v: v[0], fb)


def _all_pairs(num_arms):
    return jnp.asarray([(i, j) for i in range(num_arms) for j in range(num_arms)], jnp.int32)


# ------------------------------------------------------------------------------------------------
# Synthetic tasks.


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_spec_shapes_dtypes_and_unit_contexts(name):
    env = jb.make_env(name, dim=4, num_arms=3)
    spec = env.spec()
    assert (spec.dim, spec.num_arms, spec.action_kind, spec.feedback_kind) == (4, 3, "pair",
                                                                                 "preference")
    assert spec.metrics == ("weak_regret", "strong_regret") and not spec.fixed_arms
    assert env.agent_families == ("baseline", "dueling")
    assert env.assumptions() == jb.Assumptions()
    state, context = _round(env)
    assert context.arms.shape == (3, 4) and context.arms.dtype == jnp.float32
    np.testing.assert_allclose(np.linalg.norm(context.arms, axis=1), 1.0, rtol=1e-6)
    fb = _apply(env, "feedback", jax.random.key(2), state, context,
                jnp.asarray([0, 2], jnp.int32))
    assert fb.reward.shape == () and fb.reward.dtype == jnp.float32
    assert float(fb.reward) in (0.0, 1.0)
    assert fb.regret.shape == () and fb.regret.dtype == jnp.float32
    assert set(fb.metrics) == set(spec.metrics)
    assert all(v.shape == () and v.dtype == jnp.float32 for v in fb.metrics.values())


def test_shortcuts_only_change_the_default_utility():
    assert jb.make_env("dueling-synthetic").utility == "square"
    for name, utility in [("dueling-cosine", "cosine"), ("dueling-square", "square"),
                          ("dueling-quadratic", "quadratic")]:
        env = jb.make_env(name)
        assert (env.utility, env.dim, env.num_arms, env.link) == (utility, 5, 5, "btl")
        assert env.quadratic_form == "matrix"
    assert jb.make_env("dueling-cosine", utility="square").utility == "square"


def test_pair_floor_pays_the_best_distinct_pair_whatever_is_played():
    """``jb.envs.DuelingPairFloorEnv``: the same instance and contexts as ``dueling-synthetic``,
    regret ``(u_(1) - u_(2)) / 2`` (strong ``u_(1) - u_(2)``, weak 0) for every pair played."""
    floor = jb.envs.DuelingPairFloorEnv(utility="cosine", dim=3, num_arms=4)
    plain = jb.make_env("dueling-synthetic", utility="cosine", dim=3, num_arms=4)
    state, context = _round(floor, t=0)
    same_state, same_context = _round(plain, t=0)
    np.testing.assert_array_equal(context.arms, same_context.arms)
    top = np.sort(np.asarray(floor.utilities(state, context.arms), np.float64))[-2:]
    for pair in ([0, 1], [2, 2], [3, 0]):
        fb = _apply(floor, "feedback", jax.random.key(1), state, context,
                    jnp.asarray(pair, jnp.int32))
        np.testing.assert_allclose(float(fb.regret), (top[1] - top[0]) / 2, rtol=1e-5)
        np.testing.assert_allclose(float(fb.metrics["strong_regret"]), top[1] - top[0],
                                   rtol=1e-5)
        assert float(fb.metrics["weak_regret"]) == 0.0 and float(fb.reward) == 0.0


def test_contexts_are_fresh_each_round_and_uniform_before_normalising():
    env = jb.make_env("dueling-cosine", dim=3, num_arms=4)
    state, first = _round(env, t=0)
    second = _apply(env, "observe", jax.random.key(7), state, jnp.int32(1))
    assert not np.allclose(first.arms, second.arms)
    # Unit rows of U[-1, 1]^d: by symmetry each coordinate has mean 0 and E[x_j^2] = 1/d.
    keys = jax.random.split(jax.random.key(3), 4000)
    arms = _vmap_observe(env, state, keys, jnp.zeros(4000, jnp.int32)).arms.reshape(-1, 3)
    assert np.all(np.abs(np.mean(arms, 0)) < 0.02)  # std of a mean: about 0.58/sqrt(16000)
    np.testing.assert_allclose(np.mean(arms**2, 0), 1 / 3, atol=0.01)


def test_theta_not_normalised_and_within_the_cube():
    env = jb.make_env("dueling-quadratic", dim=5)
    states = _vmap_init(env, 200, jax.random.key(0))
    for leaf in (states.theta, states.matrix):
        assert np.all(np.abs(leaf) <= 1.0)
    norms = np.linalg.norm(states.theta, axis=1)
    assert norms.max() > 1.5 and norms.min() < 1.0  # ||theta|| ranges over (0, sqrt(5))
    np.testing.assert_allclose(np.mean(states.theta**2), 1 / 3, atol=0.03)  # U[-1, 1]: 1/3
    assert states.matrix.shape == (200, 5, 5)
    assert jb.make_env("dueling-square").init(jax.random.key(0)).matrix is None
    vector = jb.make_env("dueling-quadratic", quadratic_form="vector")
    assert vector.init(jax.random.key(0)).matrix is None


def test_instances_differ_per_run_and_instance_seed_shares_them():
    env = jb.make_env("dueling-quadratic", dim=3)
    own = _vmap_init(env, 3, jax.random.key(0))
    assert not np.allclose(own.theta[0], own.theta[1])
    assert not np.allclose(own.matrix[0], own.matrix[2])
    shared = _vmap_init(env.replace(instance_seed=11), 3, jax.random.key(0))
    for leaf in (shared.theta, shared.matrix):
        np.testing.assert_array_equal(leaf[0], leaf[1])
        np.testing.assert_array_equal(leaf[0], leaf[2])
    # contexts stay per round: the round key, not the instance
    keys = jax.random.split(jax.random.key(1), 3)
    ctx = jax.jit(jax.vmap(env.observe, (0, 0, None)))(keys, shared, jnp.int32(0))
    assert not np.allclose(ctx.arms[0], ctx.arms[1])


@pytest.mark.usefixtures("x64")
def test_utilities_match_their_formulas():
    rng = np.random.default_rng(0)
    d = 4
    x, theta, matrix = rng.uniform(-1, 1, (6, d)), rng.uniform(-1, 1, d), rng.uniform(-1, 1, (d, d))
    inner = x @ theta
    cases = {("cosine", "matrix"): np.cos(3 * inner), ("square", "matrix"): 10 * inner**2,
             ("quadratic", "matrix"): np.array([xi @ matrix @ matrix.T @ xi for xi in x]),
             ("quadratic", "vector"): np.array([xi @ np.outer(theta, theta) @ xi for xi in x])}
    for (utility, form), want in cases.items():
        got = dueling_utility(utility, jnp.asarray(x), jnp.asarray(theta), jnp.asarray(matrix),
                              form)
        assert got.dtype == jnp.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.usefixtures("x64")
def test_vector_quadratic_equals_square_over_ten():
    vector = jb.make_env("dueling-quadratic", dim=5, quadratic_form="vector", instance_seed=3)
    square = jb.make_env("dueling-square", dim=5, instance_seed=3)
    state_v, context = _round(vector, seed=4)
    state_s, _ = _round(square, seed=4)
    np.testing.assert_array_equal(state_v.theta, state_s.theta)
    u_v = vector.utilities(state_v, context.arms)
    u_s = square.utilities(state_s, context.arms)
    assert u_v.dtype == jnp.float64
    np.testing.assert_allclose(u_v, u_s / 10, rtol=1e-12, atol=1e-15)


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("name", SYNTHETIC)
def test_regret_relations_for_every_pair(name):
    """0 <= r_w <= r_a <= r_s, r_a = (r_w + r_s) / 2, all 0 iff both arms are optimal."""
    env = jb.make_env(name, dim=3, num_arms=4)
    for seed in range(3):
        state, context = _round(env, seed=seed)
        u = np.asarray(env.utilities(state, context.arms))
        pairs = _all_pairs(4)
        fbs = jax.tree.map(lambda v: v[:, 0], _many(env, state, context, pairs, 1,
                                                     jax.random.key(0)))
        r_a, r_w, r_s = (np.asarray(v) for v in (fbs.regret, fbs.metrics["weak_regret"],
                                                 fbs.metrics["strong_regret"]))
        assert r_a.dtype == np.float64
        assert np.all(r_w >= 0) and np.all(r_w <= r_a) and np.all(r_a <= r_s)
        np.testing.assert_allclose(r_a, (r_w + r_s) / 2, rtol=1e-14, atol=1e-14)
        u1, u2 = u[pairs[:, 0]], u[pairs[:, 1]]
        np.testing.assert_allclose(r_a, (2 * u.max() - u1 - u2) / 2, rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(r_w, u.max() - np.maximum(u1, u2), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(r_s, u.max() - np.minimum(u1, u2), rtol=1e-14, atol=1e-14)
        best = int(np.argmax(u))
        both_best = (pairs[:, 0] == best) & (pairs[:, 1] == best)
        assert np.all((r_a == 0) == both_best)  # a continuous draw: a unique best arm
        assert np.all(r_w[(pairs[:, 0] == best) | (pairs[:, 1] == best)] == 0)


@pytest.mark.usefixtures("x64")
def test_dueling_regrets_with_ties():
    u = jnp.asarray([1.0, 0.0, 1.0, 0.0])
    for pair, want in [((0, 2), (0, 0, 0)), ((2, 2), (0, 0, 0)), ((0, 1), (0.5, 0, 1)),
                       ((3, 1), (1, 1, 1)), ((1, 0), (0.5, 0, 1))]:
        got = dueling_regrets(u, jnp.asarray(pair))
        np.testing.assert_array_equal(np.asarray(got), want)


def test_link_functions():
    z = np.linspace(-4, 4, 17)
    np.testing.assert_allclose(link_function("btl", jnp.asarray(z)), 1 / (1 + np.exp(-z)),
                               rtol=1e-6)
    phi = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in z])
    np.testing.assert_allclose(link_function("probit", jnp.asarray(z)), phi, rtol=1e-5,
                               atol=1e-7)
    with pytest.raises(ValueError, match="link must be one of"):
        link_function("logit", jnp.asarray(z))


@pytest.mark.parametrize("link", ["btl", "probit"])
def test_preference_probability_by_monte_carlo(link):
    """Empirical P(o = 1) of 40,000 comparisons of each of 3 pairs within 4.5 standard errors
    (at most 0.011) of g(u_k1 - u_k2); the cosine task keeps |du| <= 2, away from 0 and 1."""
    env = jb.make_env("dueling-cosine", dim=3, num_arms=4, link=link)
    state, context = _round(env, seed=5)
    u = np.asarray(env.utilities(state, context.arms), dtype=np.float64)
    order = np.argsort(u)
    n = 40_000
    for pair in [(order[-1], order[0]), (order[0], order[-1]), (order[1], order[2])]:
        gap = u[pair[0]] - u[pair[1]]
        p = 1 / (1 + math.exp(-gap)) if link == "btl" else 0.5 * (1 + math.erf(gap / 2**0.5))
        outcomes = np.asarray(_feedbacks(env, state, context, pair, n, seed=int(pair[0])).reward)
        assert set(np.unique(outcomes)) <= {0.0, 1.0}
        se = math.sqrt(p * (1 - p) / n)
        assert abs(outcomes.mean() - p) < 4.5 * se, (pair, gap, outcomes.mean(), p)
    # a self-duel is a fair coin
    self_duel = np.asarray(_feedbacks(env, state, context, (1, 1), n).reward)
    assert abs(self_duel.mean() - 0.5) < 4.5 * math.sqrt(0.25 / n)


def test_links_differ_at_the_same_gap():
    btl = jb.make_env("dueling-cosine", dim=3, num_arms=3, instance_seed=0)
    probit = btl.replace(link="probit")
    state, context = _round(btl)
    u = np.asarray(btl.utilities(state, context.arms))
    pair = (int(np.argmax(u)), int(np.argmin(u)))
    n = 40_000
    m_btl = np.asarray(_feedbacks(btl, state, context, pair, n).reward).mean()
    m_probit = np.asarray(_feedbacks(probit, state, context, pair, n).reward).mean()
    # Phi(z) > sigmoid(z) for z > 0 (by about 0.12 at z = 1)
    assert m_probit > m_btl


def test_square_task_is_nearly_deterministic_with_raw_utilities():
    """Raw utilities (Listing 1): no clipping, so a pair with a large gap almost always returns
    1."""
    env = jb.make_env("dueling-square", instance_seed=2)
    state, context = _round(env, seed=2)
    u = np.asarray(env.utilities(state, context.arms))
    pair = (int(np.argmax(u)), int(np.argmin(u)))
    outcomes = np.asarray(_feedbacks(env, state, context, pair, 2000).reward)
    assert u.max() - u.min() > 3.0  # the draw with this seed
    assert outcomes.mean() > 0.9


# ------------------------------------------------------------------------------------------------
# Validation.


@pytest.mark.parametrize("name, field, value, hint", [
    ("dueling-synthetic", "utility", "cosin", "'cosine'"),
    ("dueling-cosine", "utility", "quadratik", "'quadratic'"),
    ("dueling-synthetic", "link", "probti", "'probit'"),
    ("dueling-synthetic", "link", "BTL", None),
    ("dueling-quadratic", "quadratic_form", "vectr", "'vector'"),
])
def test_unknown_names_raise_with_close_matches(name, field, value, hint):
    with pytest.raises(ValueError, match=f"{name}: {field} must be one of") as err:
        jb.make_env(name, **{field: value})
    if hint:
        assert f"did you mean {hint}" in str(err.value)


@pytest.mark.parametrize("field, value", [("dim", 0), ("num_arms", -1), ("instance_seed", -2),
                                          ("utility", 3), ("link", None)])
def test_synthetic_bad_values_raise_naming_the_field(field, value):
    with pytest.raises(ValueError, match=f"dueling-synthetic: {field} must"):
        jb.make_env("dueling-synthetic", **{field: value})


# ------------------------------------------------------------------------------------------------
# UCI conversions (reading A "instance", reading B "class").


def _labels(env, rows):
    return np.asarray(env.data.labels)[np.asarray(rows)]


@needs_shuttle
def test_shuttle_instance_reading():
    env = jb.make_env("dueling-shuttle", pool_size=50)
    spec = env.spec()
    assert env.data.meta.dim == 9  # shuttle.trn: 9 attribute columns and the class
    assert (spec.dim, spec.num_arms, spec.action_kind) == (63, 7, "pair")
    assert spec.metrics == ("weak_regret", "strong_regret")
    assert (env.preference, env.deterministic, env.reading) == (0.7, False, "instance")
    state, context = _round(env)
    assert state.pool.shape == (50,) and state.pool.dtype == jnp.int32
    arms = np.asarray(context.arms)
    assert arms.shape == (7, 63) and arms.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(arms, axis=1), 1.0, rtol=1e-5)
    z = arms[0, :9]
    for k in range(7):  # the disjoint encoding e_k (x) z
        np.testing.assert_array_equal(arms[k].reshape(7, 9)[k], z)
        assert np.count_nonzero(np.delete(arms[k].reshape(7, 9), k, axis=0)) == 0
    rows = np.asarray(context.rows)
    assert rows.shape == (7,) and np.all(rows == rows[0])
    # z-scored over the data set, then unit norm
    raw = np.loadtxt(SHUTTLE)[:, :-1]
    zs = (raw - raw.mean(0)) / raw.std(0)
    np.testing.assert_allclose(z, zs[rows[0]] / np.linalg.norm(zs[rows[0]]), rtol=1e-4,
                               atol=1e-6)
    u = np.asarray(env.utilities(context))
    np.testing.assert_array_equal(u, np.eye(7)[_labels(env, rows[0])])


@needs_shuttle
def test_shuttle_sequential_pool_is_without_replacement_and_pool_sampling_with():
    env = jb.make_env("dueling-shuttle", pool_size=30)
    state = _apply(env, "init", jax.random.key(1))
    assert len(set(np.asarray(state.pool).tolist())) == 30
    keys = jax.random.split(jax.random.key(2), 200)
    rows = _vmap_observe(env, state, keys[:30], jnp.arange(30)).rows[:, 0]
    np.testing.assert_array_equal(rows, state.pool)  # round t shows pool row t
    draws = env.replace(sampling="pool")
    rows = _vmap_observe(draws, state, keys, jnp.zeros(200, jnp.int32)).rows[:, 0]
    assert set(np.asarray(rows).tolist()) <= set(np.asarray(state.pool).tolist())
    assert len(set(np.asarray(rows).tolist())) < 200  # with replacement: repeats
    other = _apply(env, "init", jax.random.key(2)).pool
    assert not np.array_equal(other, state.pool)  # per-run pools
    shared = env.replace(instance_seed=5)
    pools = _vmap_init(shared, 2, jax.random.key(1)).pool
    np.testing.assert_array_equal(pools[0], pools[1])


@needs_shuttle
def test_shuttle_class_reading():
    env = jb.make_env("dueling-shuttle", reading="class", pool_size=20)
    spec = env.spec()
    assert (spec.dim, spec.num_arms) == (9, 7)
    state, context = _round(env)
    assert state.pool.shape == (7, 20)
    for k in range(7):  # class pools hold rows of their class only (classes 6, 7: 6 and 11 rows)
        assert np.all(_labels(env, state.pool[k]) == k)
    np.testing.assert_array_equal(_labels(env, context.rows), np.arange(7))
    assert context.arms.shape == (7, 9)
    np.testing.assert_allclose(np.linalg.norm(context.arms, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(env.utilities(context), np.arange(7.0))
    # class-k rows uniformly: class 6 (index 5) has 6 rows, all drawn in a big pool
    big = _apply(env.replace(pool_size=400), "init", jax.random.key(3)).pool[5]
    assert len(set(np.asarray(big).tolist())) == 6
    for sampling in ("pool", "sequential"):
        ctx = _apply(env.replace(sampling=sampling), "observe", jax.random.key(4), state,
                     jnp.int32(3))
        np.testing.assert_array_equal(_labels(env, ctx.rows), np.arange(7))


@needs_shuttle
@pytest.mark.parametrize("reading", ["instance", "class"])
def test_statlog_feedback_is_deterministic_unless_tied(reading):
    env = jb.make_env("dueling-statlog", reading=reading, pool_size=20)
    assert env.deterministic and env.dataset == "shuttle"
    state, context = _round(env, seed=1)
    u = np.asarray(env.utilities(context))
    pairs = _all_pairs(7)
    n = 2000  # draws of each of the 49 pairs
    outcomes = np.asarray(_many(env, state, context, pairs, n, jax.random.key(2)).reward)
    u1, u2 = u[pairs[:, 0]], u[pairs[:, 1]]
    strict = u1 != u2
    assert strict.any() and (~strict).any()
    np.testing.assert_array_equal(outcomes[strict],
                                  np.repeat((u1 > u2)[strict, None], n, 1).astype(np.float32))
    # ties are fair coins: over all tied pairs together
    tied = outcomes[~strict]
    n = tied.size
    outcomes = tied
    assert abs(outcomes.mean() - 0.5) < 4.5 * math.sqrt(0.25 / n)


@needs_shuttle
def test_shuttle_preference_by_monte_carlo_and_regrets():
    """P(better arm wins) = 0.7 within 4.5 standard errors of 40,000 comparisons (0.010); the
    kappa = 1 option (preference sigmoid(1)) likewise."""
    env = jb.make_env("dueling-shuttle", reading="class", pool_size=20)
    state, context = _round(env)
    n = 40_000
    for preference in (0.7, 1 / (1 + math.exp(-1.0))):
        e = env.replace(preference=preference)
        for pair, p in [((6, 2), preference), ((0, 3), 1 - preference), ((4, 4), 0.5)]:
            mean = np.asarray(_feedbacks(e, state, context, pair, n).reward).mean()
            assert abs(mean - p) < 4.5 * math.sqrt(p * (1 - p) / n), (pair, mean, p)
    fb = _apply(env, "feedback", jax.random.key(0), state, context, jnp.asarray([6, 2], jnp.int32))
    # u = k: u* = 6, r_a = (12 - 6 - 2) / 2 = 2, r_w = 0, r_s = 4
    assert (float(fb.regret), float(fb.metrics["weak_regret"]),
            float(fb.metrics["strong_regret"])) == (2.0, 0.0, 4.0)


@needs_shuttle
def test_instance_reading_regrets_and_preference():
    env = jb.make_env("dueling-shuttle", pool_size=20)
    state, context = _round(env, seed=3)
    c = int(_labels(env, context.rows[0]))
    other = (c + 1) % 7
    cases = {(c, c): (0, 0, 0), (c, other): (0.5, 0, 1), (other, c): (0.5, 0, 1),
             (other, other): (1, 1, 1)}
    for pair, want in cases.items():
        fb = _apply(env, "feedback", jax.random.key(0), state, context,
                    jnp.asarray(pair, jnp.int32))
        got = (fb.regret, fb.metrics["weak_regret"], fb.metrics["strong_regret"])
        np.testing.assert_array_equal(np.asarray(got), want)
    n = 40_000
    mean = np.asarray(_feedbacks(env, state, context, (c, other), n).reward).mean()
    assert abs(mean - 0.7) < 4.5 * math.sqrt(0.21 / n)


@needs_magic
@pytest.mark.parametrize("reading, dim", [("instance", 20), ("class", 10)])
def test_magic_dims_and_utilities(reading, dim):
    env = jb.make_env("dueling-magic", reading=reading, pool_size=16)
    spec = env.spec()
    assert (spec.dim, spec.num_arms) == (dim, 2)
    state, context = _round(env)
    assert context.arms.shape == (2, dim)
    np.testing.assert_allclose(np.linalg.norm(context.arms, axis=1), 1.0, rtol=1e-5)
    u = np.asarray(env.utilities(context))
    want = np.eye(2)[_labels(env, context.rows[0])] if reading == "instance" else np.arange(2.0)
    np.testing.assert_array_equal(u, want)


# ------------------------------------------------------------------------------------------------
# Covertype from a file written here; missing files; validation of the UCI fields.


def _write_covertype(folder: Path, rows_per_class: int = 3) -> Path:
    rng = np.random.default_rng(0)
    lines = []
    for c in range(1, 8):
        for _ in range(rows_per_class):
            values = list(rng.integers(0, 3000, 10)) + list(rng.integers(0, 2, 44)) + [c]
            lines.append(",".join(str(int(v)) for v in values))
    file = folder / "covtype.data"
    file.write_text("\n".join(lines) + "\n")
    return file


def test_covertype_from_a_user_file(tmp_path):
    file = _write_covertype(tmp_path)
    env = jb.make_env("dueling-covertype", path=str(file), pool_size=10)
    assert env.data.meta.dim == 54 and env.num_rows == 21
    assert (env.spec().dim, env.spec().num_arms) == (378, 7)
    state, context = _round(env)
    assert context.arms.shape == (7, 378)
    np.testing.assert_allclose(np.linalg.norm(context.arms, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(env.utilities(context),
                                  np.eye(7)[_labels(env, context.rows[0])])
    by_folder = jb.make_env("dueling-covertype", path=str(tmp_path), reading="class",
                            pool_size=4)
    assert (by_folder.spec().dim, by_folder.spec().num_arms) == (54, 7)
    state, context = _round(by_folder)
    np.testing.assert_array_equal(_labels(by_folder, context.rows), np.arange(7))


def test_missing_file_raises_data_not_found(tmp_path):
    with pytest.raises(DataNotFoundError, match="covertype: data file not found"):
        jb.make_env("dueling-covertype", path=str(tmp_path))


def test_class_reading_needs_every_class():
    table = jb.envs.make_table(np.arange(12.0).reshape(6, 2), np.asarray([0, 0, 1, 1, 1, 0]),
                               num_classes=3)
    with pytest.raises(ValueError, match="reading='class' needs a row of every class"):
        jb.envs.DuelingClassificationEnv(data=table, reading="class").validate()
    jb.envs.DuelingClassificationEnv(data=table).validate()  # reading A is fine


def test_custom_table_both_readings():
    x = np.random.default_rng(0).normal(size=(12, 3))
    table = jb.envs.make_table(x, np.arange(12) % 3, normalize="zscore")
    env = jb.envs.DuelingClassificationEnv(data=table, pool_size=None, reading="class")
    env.validate()
    assert env.num_pool == 12 and (env.spec().dim, env.spec().num_arms) == (3, 3)
    state, context = _round(env)
    np.testing.assert_array_equal(_labels(env, context.rows), np.arange(3))


@pytest.mark.parametrize("overrides, match", [
    (dict(reading="instanse"), "reading must be one of .*did you mean 'instance'"),
    (dict(sampling="sequentail"), "sampling must be one of .*did you mean 'sequential'"),
    (dict(normalize="zscor"), "normalize must be one of .*did you mean 'zscore'"),
    (dict(preference=0.5), "preference must lie in"),
    (dict(preference=1.2), "preference must lie in"),
    (dict(pool_size=0), "pool_size must be"),
    (dict(dataset="magic"), "dataset is fixed to 'covertype'"),
    (dict(dataset="covtype"), "dataset must be one of .*did you mean 'covertype'"),
])
def test_uci_bad_settings_raise_before_loading(overrides, match, tmp_path):
    path = str(_write_covertype(tmp_path))
    with pytest.raises(ValueError, match=match):
        jb.make_env("dueling-covertype", path=path, **overrides)


def test_preference_one_is_allowed_and_sweepable(tmp_path):
    env = jb.make_env("dueling-covertype", path=str(_write_covertype(tmp_path)), preference=1.0)
    env.replace(preference=np.asarray([0.6, 0.9])).validate()
    with pytest.raises(ValueError, match="preference must lie in"):
        env.replace(preference=np.asarray([0.6, 0.4])).validate()


def test_registered_names():
    names = {"dueling-synthetic", "dueling-cosine", "dueling-square", "dueling-quadratic",
             "dueling-shuttle", "dueling-magic", "dueling-covertype", "dueling-statlog"}
    assert names <= set(jb.env_names())
    assert jb.envs.DuelingStatlogEnv.__dataclass_fields__["deterministic"].default is True
    assert jb.envs.DuelingShuttleEnv.__dataclass_fields__["deterministic"].default is False
    assert dueling.DUELING_METRICS == ("weak_regret", "strong_regret")


# ------------------------------------------------------------------------------------------------
# The runner (needs its extra-metrics support).


class UniformPair(jb.Agent):
    """Plays a uniformly random ordered pair (self-duels included)."""

    name = "uniform-pair-test"
    action_kinds = ("pair",)

    def init(self, key, spec):
        return jnp.zeros((), jnp.int32)

    def act(self, state, key, context):
        num_arms = context.arms.shape[0]
        return jax.random.randint(key, (2,), 0, num_arms, jnp.int32), state

    def update(self, state, key, context, action, feedback):
        return state + 1


@pytest.mark.skipif("metrics" not in {f.name for f in dataclasses.fields(jb.Result)},
                    reason="the runner does not record Spec.metrics yet (Result.metrics)")
def test_simulate_records_the_dueling_metrics():
    env = jb.make_env("dueling-cosine", dim=3, num_arms=4)
    result = jb.simulate(env, UniformPair(), 0, 20, 3, record="all", progress=False)
    regret = np.asarray(result.cumulative_regret)
    weak = np.asarray(result.metrics["weak_regret"])
    strong = np.asarray(result.metrics["strong_regret"])
    assert regret.shape == weak.shape == strong.shape == (3, 20)
    tol = 1e-5 * (1 + np.abs(strong))
    assert np.all(weak <= regret + tol) and np.all(regret <= strong + tol)
    np.testing.assert_allclose(regret, (weak + strong) / 2, rtol=1e-5, atol=1e-5)
    assert np.all(np.diff(weak, axis=1) >= -1e-6)
