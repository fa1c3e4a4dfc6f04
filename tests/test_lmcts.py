"""LMC-TS (Li et al. 2024, App. F.2 and the official code): the Langevin step against its
closed form, the step-size schedule and noise scale, min(t, num_iter) steps per round, the O(t)
history sum, the runner and vmap purity, and validation.

Shapes are tiny and every jitted function takes the agent as an argument (its numbers are leaves),
so the whole module compiles a handful of programs.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

import jaxbandits as jb
from jaxbandits.agents.lmcts import LMCTS_PRESETS, lmcts_learning_rate
from jaxbandits.core import Context, Feedback, Spec
from jaxbandits.nets import MLPBackbone, replay_add
from jaxbandits.nets.train import blocked_grad, blocked_sum

DIM, ARMS, CAP = 3, 4, 64
BACKBONE = MLPBackbone(hidden=(4, 4), activation="leaky_relu")
SPEC = Spec(dim=DIM, num_arms=ARMS)


def tiny(**overrides):
    """A small LMC-TS with every numeric field set (one tree structure for all variants)."""
    fields = dict(backbone=BACKBONE, buffer_size=CAP, num_grad_steps=1, learning_rate=0.01,
                  beta_inv=0.0, horizon_hint=100)
    return jb.make_agent("lmc-ts", **{**fields, **overrides})


@jax.jit
def update(agent, state, key, arms, action, reward):
    feedback = Feedback(reward=reward, regret=jnp.zeros_like(reward))
    return agent.update(state, key, Context(arms=arms), action, feedback)


def history(agent, rows, seed=0):
    """A state holding ``rows`` observations, and the next round's arms, action and reward."""
    key_init, key_x, key_r = jax.random.split(jax.random.key(seed), 3)
    state = agent.init(key_init, SPEC)
    xs = jax.random.normal(key_x, (rows + ARMS, DIM))
    rs = jax.random.normal(key_r, (rows + 1,))
    buffer = state.buffer
    for x, r in zip(xs[:rows], rs[:rows], strict=True):
        buffer = replay_add(buffer, {"x": x, "r": r})
    return state.replace(buffer=buffer), xs[rows:], jnp.int32(2), rs[rows]


def fcn(params, x):
    """The official ``FCN`` written out: LeakyReLU(0.01) hidden layers with biases, then a
    bias-free output (on the plain dict of the parameters)."""
    for layer in params["backbone"]["layers"].values():
        z = x @ layer["kernel"] + layer["bias"]
        x = jnp.where(z > 0, z, 0.01 * z)
    return (x @ params["base"]["kernel"])[..., 0]


def expected_gd_step(params, xs, rs, lr, weight_decay):
    """``theta - lr (grad sum_s (f(x_s) - r_s)^2 + weight_decay theta)``."""
    p = nnx.to_pure_dict(params)
    grads = jax.grad(lambda q: jnp.sum((fcn(q, xs) - rs) ** 2))(p)
    return jax.tree.map(lambda q, g: q - lr * (g + weight_decay * q), p, grads)


def assert_trees_close(got, expected, **tol):
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol)


# ------------------------------------------------------------------------------------------------
# (1), (2) The step and its schedule, float64 closed forms.


@pytest.mark.usefixtures("x64")
def test_step_with_zero_temperature_is_weight_decayed_gd_on_the_history_sum():
    agent = tiny(learning_rate=0.01, weight_decay=2.0, beta_inv=0.0)
    state, arms, action, reward = history(agent, 5)
    new = update(agent, state, jax.random.key(7), arms, action, reward)
    xs = jnp.concatenate([state.buffer.rows["x"][:5], arms[action][None]])
    rs = jnp.append(state.buffer.rows["r"][:5], reward)
    expected = expected_gd_step(state.params, xs, rs, 0.01, 2.0)
    assert_trees_close(nnx.to_pure_dict(new.params), expected, rtol=1e-12, atol=1e-14)
    assert int(new.num_steps) == 1 and int(new.buffer.num_obs) == 6


@pytest.mark.usefixtures("x64")
@pytest.mark.parametrize("clock, divisor", [("round", 40), ("step", 60)])
def test_learning_rate_decay_clock(clock, divisor):
    # Round t = 40 after 59 earlier Langevin steps: the official clock (rounds) uses lr_0 / 40;
    # the optimiser-step clock's 60th step uses lr_0 / 60.
    agent = tiny(learning_rate=0.5, weight_decay=2.0, lr_decay_clock=clock)
    state, arms, action, reward = history(agent, 39, seed=1)
    state = state.replace(num_steps=jnp.int32(59))
    new = update(agent, state, jax.random.key(3), arms, action, reward)
    xs = jnp.concatenate([state.buffer.rows["x"][:39], arms[action][None]])
    rs = jnp.append(state.buffer.rows["r"][:39], reward)
    expected = expected_gd_step(state.params, xs, rs, 0.5 / divisor, 2.0)
    assert_trees_close(nnx.to_pure_dict(new.params), expected, rtol=1e-12, atol=1e-14)


def test_learning_rate_schedule_matches_the_official_loop():
    base, lr, expected = 1e-3, 1e-3, []
    for step in range(1, 201):  # LMCTS.update_model: if step % decay_step == 0: lr = base / step
        if step % 20 == 0:
            lr = base / step
        expected.append(lr)
    got = lmcts_learning_rate(base, jnp.arange(1, 201), 20)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_noise_is_standard_normal_times_lr_t_sqrt_2_beta_over_lr0():
    # Same key and state with and without noise: the difference is -lr_t temp xi, with
    # temp = -sqrt(2 beta_inv d log T / lr_0) and lr_t = lr_0 / 40 at round 40.
    lr0, beta_inv, horizon = 0.01, 0.05, 100
    noisy, plain = tiny(beta_inv=beta_inv), tiny(beta_inv=0.0)
    temp = -math.sqrt(2.0 * beta_inv * DIM * math.log(horizon) / lr0)
    np.testing.assert_allclose(float(noisy.temperature(DIM)), temp, rtol=1e-6)
    state, arms, action, reward = history(noisy, 39, seed=2)
    keys = jax.random.split(jax.random.key(5), 256)
    run = jax.jit(jax.vmap(update, in_axes=(None, None, 0, None, None, None)))
    diff = jax.tree.map(jnp.subtract, run(noisy, state, keys, arms, action, reward).params,
                        run(plain, state, keys, arms, action, reward).params)
    xi = np.concatenate([np.ravel(d) for d in jax.tree.leaves(diff)]) / (-(lr0 / 40) * temp)
    assert xi.size == 256 * 40
    assert abs(xi.mean()) < 0.04 and abs(xi.std() - 1.0) < 0.04
    # independent across parameters and keys: no sizeable correlation between neighbours
    assert abs(np.corrcoef(xi[:-1], xi[1:])[0, 1]) < 0.05


# ------------------------------------------------------------------------------------------------
# (3), (4) Steps per round and the O(t) history sum.


def test_steps_per_round_are_min_t_num_iter():
    agent = tiny(num_grad_steps=3, beta_inv=0.01)
    state, arms, action, _ = history(agent, 0)
    counts = []
    for t in range(6):
        state = update(agent, state, jax.random.key(t), arms, action, jnp.float32(t % 2))
        counts.append(int(state.num_steps))
    assert counts == list(np.cumsum([min(t, 3) for t in range(1, 7)]))
    assert int(state.buffer.num_obs) == 6
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(state.params))


def test_blocked_grad_reads_only_the_filled_blocks():
    # 16 rows in blocks of 4, 5 filled: rows 5-7 (same block) must be masked out, rows 8-15
    # (later blocks) never read -- NaN there would poison any sum that touched them.
    w = jnp.array([0.3, -1.2])
    x = jax.random.normal(jax.random.key(0), (16, 2))
    r = jax.random.normal(jax.random.key(1), (16,))
    x = x.at[5:8].set(1e3).at[8:].set(jnp.nan)
    r = r.at[5:8].set(-1e3).at[8:].set(jnp.nan)

    def loss(p, rows, mask):
        residual = rows["x"] @ p - rows["r"]
        return jnp.sum(jnp.where(mask, residual * residual, 0.0))

    rows = {"x": x, "r": r}
    expected = jax.grad(lambda p: jnp.sum((x[:5] @ p - r[:5]) ** 2))(w)
    np.testing.assert_allclose(blocked_grad(loss, w, rows, 5, block_rows=4), expected,
                               rtol=1e-5)
    np.testing.assert_allclose(blocked_grad(loss, w, rows, 0, block_rows=4), 0.0)
    clean = {"x": x.at[5:].set(1.0), "r": r.at[5:].set(0.5)}
    full = jax.grad(lambda p: jnp.sum((clean["x"] @ p - clean["r"]) ** 2))(w)
    for block in (4, 5, 16, 32):  # exact multiple, slid last block, a single block
        np.testing.assert_allclose(blocked_grad(loss, w, clean, 16, block_rows=block), full,
                                   rtol=1e-5)


def test_blocked_sum_counts_every_filled_row_once():
    # every (rows, filled, block) layout: exact multiples, a slid last block, one block, none
    rows = jnp.arange(1.0, 12.0)  # row i holds i + 1

    @jax.jit
    def sums(filled):
        return [blocked_sum(lambda cut, mask: (jnp.sum(mask), jnp.sum(jnp.where(mask, cut, 0.0))),
                            rows, filled, block_rows=b) for b in (1, 3, 4, 11, 16)]

    for filled in (0, 1, 3, 4, 10, 11, 20):
        n = min(filled, 11)
        for count, total in sums(filled):
            assert int(count) == n and float(total) == n * (n + 1) / 2, (filled, count, total)


def test_agent_update_never_reads_history_blocks_past_t():
    # CAP = 64 rows in blocks of 32: with 5 rows filled, block 1 (rows 32-63) is skipped.
    agent = tiny(num_grad_steps=3, beta_inv=0.01)
    state, arms, action, reward = history(agent, 5, seed=3)
    rows = state.buffer.rows
    poisoned = state.replace(buffer=state.buffer.replace(rows={
        "x": rows["x"].at[6:32].set(1e3).at[32:].set(jnp.nan),
        "r": rows["r"].at[6:32].set(1e3).at[32:].set(jnp.nan)}))
    key = jax.random.key(4)
    want = update(agent, state, key, arms, action, reward).params
    got = update(agent, poisoned, key, arms, action, reward).params
    assert_trees_close(got, want, rtol=0, atol=0)


# ------------------------------------------------------------------------------------------------
# (5) The runner, and vmap over runs = a Python loop over runs.

ENV = jb.make_env("quadratic", dim=4, num_arms=5)


def test_runs_under_simulate_with_finite_regret():
    agent = tiny(num_grad_steps=3, beta_inv=0.01)
    result = jb.simulate(ENV, agent, 0, horizon=50, num_runs=2, progress=False)
    final = np.asarray(result.final())
    assert final.shape == (2,) and np.isfinite(final).all() and (final >= 0).all()


def test_vmap_over_runs_equals_a_loop_of_single_runs():
    agent, spec, horizon = tiny(num_grad_steps=3, beta_inv=0.01), ENV.spec(), 30

    def play(key):
        key_env, key_agent, key_loop = jax.random.split(key, 3)
        env_state = ENV.init(key_env)

        def round_(state, t):
            key_obs, key_act, key_fb, key_upd = jax.random.split(jax.random.fold_in(key_loop, t),
                                                                 4)
            context = ENV.observe(key_obs, env_state, t)
            action, state = agent.act(state, key_act, context)
            feedback = ENV.feedback(key_fb, env_state, context, action)
            return agent.update(state, key_upd, context, action, feedback), feedback.regret

        state, regret = jax.lax.scan(round_, agent.init(key_agent, spec), jnp.arange(horizon))
        return regret, state.params

    keys = jax.random.split(jax.random.key(11), 2)
    batched = jax.jit(jax.vmap(play))(keys)
    single = jax.jit(play)
    for r, key in enumerate(keys):
        regret, params = single(key)
        np.testing.assert_allclose(batched[0][r], regret, rtol=1e-5, atol=1e-6)
        assert_trees_close(jax.tree.map(lambda a, r=r: a[r], batched[1]), params, rtol=1e-4,
                           atol=1e-6)


# ------------------------------------------------------------------------------------------------
# (6) Presets, assumptions and validation.


def test_presets_fill_unset_fields_and_explicit_fields_win():
    quad = jb.make_agent("lmc-ts")
    assert {f: quad.setting(f) for f in LMCTS_PRESETS["quadratic"]} == LMCTS_PRESETS["quadratic"]
    assert quad.setting("backbone") == MLPBackbone(hidden=(20, 20, 20), activation="leaky_relu")
    assert (quad.setting("num_grad_steps"), quad.setting("beta_inv"),
            quad.setting("learning_rate"), quad.weight_decay) == (50, 0.01, 1e-3, 2.0)
    shuttle = jb.make_agent("lmc-ts", preset="shuttle", learning_rate=0.5)
    assert shuttle.setting("backbone").hidden == (50, 50, 50)
    assert (shuttle.setting("num_grad_steps"), shuttle.setting("beta_inv"),
            shuttle.setting("beta_dim"), shuttle.setting("learning_rate")) == (70, 1e-4, 9, 0.5)
    # beta = beta_inv * 9 * log T for Shuttle whatever the (disjoint-encoded) input dimension
    np.testing.assert_allclose(float(shuttle.temperature(63)),
                               -math.sqrt(2 * 1e-4 * 9 * math.log(10_000) / 0.5), rtol=1e-6)
    assert jb.make_agent("lmc-ts", preset="vector-quadratic").setting("num_grad_steps") == 50


def test_make_agent_with_env_sizes_the_history_and_horizon():
    agent = jb.make_agent("lmc-ts", env=ENV, horizon=500)
    assert (agent.horizon_hint, agent.buffer_size) == (500, 500)
    assert jb.make_agent("lmc-ts", env=ENV, horizon=50_000).buffer_size == 2000


@pytest.mark.parametrize("overrides, match", [
    (dict(learning_rate=0.0), "learning_rate"),
    (dict(learning_rate=-1e-3), "learning_rate"),
    (dict(num_grad_steps=0), "num_grad_steps"),
    (dict(beta_inv=-0.1), "beta_inv"),
    (dict(weight_decay=-1.0), "weight_decay"),
    (dict(horizon_hint=0), "horizon_hint"),
    (dict(lr_decay_every=0), "lr_decay_every"),
    (dict(beta_dim=0), "beta_dim"),
    (dict(buffer_size=0), "buffer_size"),
    (dict(lr_decay_clock="rounds"), "lr_decay_clock"),
    (dict(preset="shutle"), "did you mean 'shuttle'"),
    (dict(preset="mushroom"), "unknown preset 'mushroom'"),
    (dict(backbone=42), "backbone"),
    (dict(learning_rate="fast"), "learning_rate"),
])
def test_bad_settings_raise_value_error(overrides, match):
    with pytest.raises(ValueError, match=match):
        jb.make_agent("lmc-ts", **overrides)


def test_only_index_actions():
    with pytest.raises(ValueError, match="index"):
        jb.make_agent("lmc-ts").init(jax.random.key(0), Spec(dim=3, num_arms=0,
                                                             action_kind="vector"))
