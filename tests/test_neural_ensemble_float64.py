"""Neural Ensemble++ identities in float64 (Li et al. 2024, Sec. 3.3, Alg. 1): the
coordinate-index loss is the canonical per-head loss, stop-gradient, the frozen prior, the
linear-network equivalence with linear Ensemble++, the parameter counts, minibatch Adam with
coupled L2, and vmap over runs = a loop over runs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx
from jax.flatten_util import ravel_pytree

import jaxbandits as jb
from jaxbandits.agents.neural_ensemble import index_loss
from jaxbandits.core import Context, Feedback, Spec
from jaxbandits.linalg import ensemble_init, ensemble_update, update_index_set
from jaxbandits.linalg.perturb import perturbation_sample, reference_sample
from jaxbandits.nets import (
    IndexNetwork,
    MLPBackbone,
    minibatch_adam,
    paper_param_count,
    replay_add,
    replay_init,
)

pytestmark = pytest.mark.usefixtures("x64")

DIM, SIZE, ROWS, C = 3, 4, 12, 0.3
SMALL = MLPBackbone(hidden=(6,))


class Identity(nnx.Module):
    """h(x) = x: the linear special case (Li et al. 2024, Sec. 3.1)."""

    def __init__(self, in_features, *, rngs):
        del in_features, rngs

    def __call__(self, x):
        return x


def batch(seed=0):
    kx, ky, kz = jax.random.split(jax.random.key(seed), 3)
    return {"x": jax.random.normal(kx, (ROWS, DIM)), "y": jax.random.normal(ky, (ROWS,)),
            "z": jax.vmap(lambda k: perturbation_sample(k, "sphere", SIZE))(
                jax.random.split(kz, ROWS))}


def test_coordinate_loss_is_the_canonical_loss_and_isotropic_indices_agree_in_mean():
    net = IndexNetwork("ensemble++", DIM, SMALL, ensemble_size=SIZE)
    params, frozen = net.init(jax.random.key(1))
    rows, post, prior = batch(), 0.7, 1.9
    module = nnx.merge(nnx.split(net.create(nnx.Rngs(params=0)))[0], params, frozen)
    h = module.backbone(rows["x"])                                             # (N, D)
    base = h @ params["base"]["kernel"][...][:, 0]
    u = h @ (post * params["factor"][...] + prior * frozen["prior"][...])      # (N, M)
    canonical = jnp.mean((rows["y"] - base) ** 2 + jnp.sum((C * rows["z"] - u) ** 2, -1))
    kw = dict(perturb_std=C, posterior_scale=post, prior_scale=prior)
    coordinate = index_loss(net, params, frozen, rows, update_index_set("coordinate", SIZE), **kw)
    np.testing.assert_allclose(coordinate, canonical, rtol=1e-12)
    # Cube's 2^M vertices are exact too; Gaussian draws agree in expectation (Monte Carlo).
    cube = index_loss(net, params, frozen, rows, update_index_set("cube", SIZE), **kw)
    np.testing.assert_allclose(cube, canonical, rtol=1e-12)
    draws = jax.vmap(lambda k: reference_sample(k, "gaussian", SIZE))(
        jax.random.split(jax.random.key(2), 20_000))
    per_draw = jax.vmap(lambda xi: index_loss(net, params, frozen, rows, xi[None], **kw))(draws)
    stderr = np.std(per_draw) / np.sqrt(per_draw.size)
    assert abs(np.mean(per_draw) - canonical) < 4 * stderr


def test_stop_gradient_and_the_frozen_prior():
    """The backbone learns from the base term only (perturbing W or W0 leaves its gradient
    unchanged up to rounding: with the symmetric coordinate set the head residuals cancel in
    the base term's gradient), and training never moves W0."""
    net = IndexNetwork("ensemble++", DIM, SMALL, ensemble_size=SIZE)
    params, frozen = net.init(jax.random.key(3))
    rows, xi = batch(4), update_index_set("coordinate", SIZE)

    def trunk_grad(p, f):
        g = jax.grad(lambda q: index_loss(net, q, f, rows, xi, perturb_std=C,
                                          posterior_scale=1.0, prior_scale=1.0))(p)
        return g["backbone"], g["factor"]

    g_trunk, g_factor = trunk_grad(params, frozen)
    moved = jax.tree.map(lambda a: a, params)
    moved["factor"] = nnx.Param(params["factor"][...] + 5.0)
    frozen2 = jax.tree.map(lambda a: a - 3.0, frozen)
    for p, f in ((moved, frozen), (params, frozen2)):
        g2, g2_factor = trunk_grad(p, f)
        jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14),
                     g2, g_trunk)
        assert not np.allclose(g2_factor[...], g_factor[...])
    # An agent's updates train the parameters and leave the prior bit for bit.
    agent = jb.make_agent("neural-ensemble-pp", backbone=SMALL, ensemble_size=SIZE,
                          update_start=2, batch_size=4, buffer_size=8, num_grad_steps=3)
    spec = Spec(dim=DIM, num_arms=5)
    state = agent.init(jax.random.key(5), spec)
    arms = jax.random.normal(jax.random.key(6), (5, DIM))
    step = jax.jit(lambda s, k: agent.update(s, k, Context(arms=arms), jnp.int32(1),
                                             Feedback(reward=jnp.float64(0.5), regret=0.0)))
    new = state
    for i in range(4):
        new = step(new, jax.random.key(10 + i))
    jax.tree.map(np.testing.assert_array_equal, new.frozen, state.frozen)
    assert not np.allclose(ravel_pytree(new.params)[0], ravel_pytree(state.params)[0])


def test_linear_network_recovers_linear_ensemble_pp():
    """With h = identity, s_post = s_prior = 1, W0 = A0 and the coupled L2 of
    minibatch Adam (``reg / |D|``), the exact minimiser of the agent's objective on the whole
    buffer is linear Ensemble++ with sigma = c and lambda = reg / 2: b = mu_t, W + W0 = A_t."""
    reg = 0.8
    net = IndexNetwork("ensemble++", DIM, Identity, ensemble_size=SIZE)
    params, frozen = net.init(jax.random.key(7))
    rows, xi = batch(8), update_index_set("coordinate", SIZE)
    flat, unravel = ravel_pytree(params)

    def objective(v):  # what minibatch_adam descends, with the whole buffer as the batch
        loss = index_loss(net, unravel(v), frozen, rows, xi, perturb_std=C,
                          posterior_scale=1.0, prior_scale=1.0)
        return loss + 0.5 * reg / ROWS * jnp.sum(v**2)

    # The objective is quadratic: one Newton step from anywhere is its exact minimiser.
    v = flat - jnp.linalg.solve(jax.hessian(objective)(flat), jax.grad(objective)(flat))
    solved = unravel(v)
    state = ensemble_init(frozen["prior"][...], reg / 2)
    for x, y, z in zip(rows["x"], rows["y"], rows["z"], strict=True):
        state = ensemble_update(state, x, y, C * z)
    np.testing.assert_allclose(solved["base"]["kernel"][...][:, 0], state.ridge.mean,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(solved["factor"][...] + frozen["prior"][...], state.factor,
                               rtol=1e-9, atol=1e-12)


def test_minibatch_adam_is_adam_on_resampled_batches_with_coupled_l2():
    net = IndexNetwork("ensemble++", DIM, SMALL, ensemble_size=SIZE)
    params, frozen = net.init(jax.random.key(9))
    rows = batch(10)
    buffer = replay_init({k: v[0] for k, v in rows.items()}, 16)
    for i in range(5):  # 5 of 16 rows filled: batches draw from those only
        buffer = replay_add(buffer, {k: v[i] for k, v in rows.items()})
    xi, reg, lr, key = update_index_set("coordinate", SIZE), 0.5, 0.01, jax.random.key(11)

    def loss(p, b, _):
        return index_loss(net, p, frozen, b, xi, perturb_std=C, posterior_scale=1.0,
                          prior_scale=1.0)

    opt = optax.adam(lr)
    got, _ = minibatch_adam(loss, params, opt.init(params), buffer, key, num_steps=3,
                            batch_size=7, learning_rate=lr, reg=reg)
    p, state = params, opt.init(params)
    for i in range(3):
        key_batch, _ = jax.random.split(jax.random.fold_in(key, i))
        index = np.asarray(jax.random.randint(key_batch, (7,), 0, 5))
        assert index.max() < 5
        b = {k: v[index] for k, v in rows.items()}
        g = jax.grad(loss)(p, b, None)
        g = jax.tree.map(lambda a, q: a + reg / 5 * q, g, p)
        updates, state = opt.update(g, state, p)
        p = optax.apply_updates(p, updates)
    np.testing.assert_allclose(ravel_pytree(got)[0], ravel_pytree(p)[0], rtol=1e-12)


def test_parameter_counts():
    """Li et al. 2024, App. A.7.1: the paper's counts at d = 100, D = 64, C = 1, M = 8, and the
    code's trainable count of Ensemble++ (11,200 = the trunk's 10,624 + base 64 + factor 512)."""
    assert [paper_param_count(h, 100) for h in ("ensemble++", "epinet", "ensemble+")] == [
        11_713, 17_931, 22_288]
    assert IndexNetwork("ensemble++", 100).num_trainable == 11_200
    assert IndexNetwork("ensemble++", 100).num_frozen == 512
    plus = IndexNetwork("ensemble+", 100)
    assert plus.num_trainable == plus.num_frozen == 10_624 + 8 * 65
    # per extra member: Ensemble++ 2 D C = 128 (paper formula), Ensemble+ 2 (D + 1) C = 130
    assert paper_param_count("ensemble++", 100, ensemble_size=9) - 11_713 == 128
    assert paper_param_count("ensemble+", 100, ensemble_size=9) - 22_288 == 130


@pytest.mark.parametrize("name", ["ensemble-plus", "epinet"])
def test_vmap_over_runs_equals_a_loop(name):
    """Act and update are pure and scan-able; a vmap over runs gives each run's own
    result (EpiNet: per-row index draws; Ensemble+: one-hot indices and a prior network)."""
    agent = jb.make_agent(name, backbone=SMALL, ensemble_size=SIZE, update_start=2,
                          batch_size=4, buffer_size=8, num_grad_steps=2, num_index_samples=3)
    spec = Spec(dim=DIM, num_arms=5)
    arms = jax.random.normal(jax.random.key(12), (5, DIM))

    def run(key):
        def round_(state, t):
            k_act, k_upd = jax.random.split(jax.random.fold_in(key, t))
            action, state = agent.act(state, k_act, Context(arms=arms))
            state = agent.update(state, k_upd, Context(arms=arms), action,
                                 Feedback(reward=arms[action, 0], regret=0.0))
            return state, action

        state, actions = jax.lax.scan(round_, agent.init(key, spec), jnp.arange(4))
        return actions, ravel_pytree(state.params)[0]

    keys = jax.random.split(jax.random.key(13), 3)
    batched = jax.jit(jax.vmap(run))(keys)
    single = jax.jit(run)
    for i, key in enumerate(keys):
        actions, flat = single(key)
        np.testing.assert_array_equal(batched[0][i], actions)
        np.testing.assert_allclose(batched[1][i], flat, rtol=1e-10, atol=1e-12)
