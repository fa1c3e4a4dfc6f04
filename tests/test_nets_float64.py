"""Exact identities of the network and its training, in float64 (Sun et al. 2025,
Sec. 4.3; Bae & Lee 2025, Secs. 2 and 4)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbandits.linalg import glm_data_add, glm_data_init
from jaxbandits.nets import Network, design_init, design_update, design_widths, net_gd, net_loss

pytestmark = pytest.mark.usefixtures("x64")

DIM, NUM_ARMS, WIDTH, DEPTH, STEPS = 4, 5, 8, 3, 40
REG = 1.0 * WIDTH  # the papers' 1/2 lambda m ||theta - theta_0||^2 with lambda = 1


def history(seed=0):
    """A fixed arm set, a pull sequence and rewards; their per-arm statistics and a buffer."""
    key_arms, key_pulls, key_rewards = jax.random.split(jax.random.key(seed), 3)
    arms = jax.random.normal(key_arms, (NUM_ARMS, DIM))
    pulls = jax.random.randint(key_pulls, (STEPS,), 0, NUM_ARMS)
    rewards = jax.random.normal(key_rewards, (STEPS,))

    @jax.jit
    def collect(arms, pulls, rewards):
        def add(data, obs):
            per_arm, buffer = data
            per_arm, _ = glm_data_add(per_arm, arms, *obs, per_arm=True)
            buffer, _ = glm_data_add(buffer, arms, *obs, per_arm=False)
            return (per_arm, buffer), None

        empty = (glm_data_init(NUM_ARMS, DIM), glm_data_init(STEPS + 3, DIM))
        return jax.lax.scan(add, empty, (pulls, rewards))[0]

    return arms, pulls, rewards, *collect(arms, pulls, rewards)


def test_per_arm_statistics_gradient_equals_full_history_gradient():
    arms, pulls, rewards, per_arm, buffer = history()
    net = Network(in_features=DIM, width=WIDTH, depth=DEPTH)
    theta0 = net.init(jax.random.key(1))
    theta = net_gd(net, theta0, theta0, arms, jnp.ones(NUM_ARMS), jnp.ones(NUM_ARMS), REG,
                   learning_rate=0.05, num_steps=3)  # move away from the anchor

    def literal(params):  # 1/2 sum_l (f(X_l) - Y_l)^2 + 1/2 reg ||theta - theta_0||^2
        residual = net.apply(params, arms[pulls]) - rewards
        penalty = sum(jnp.sum((p - a) ** 2) for p, a in
                      zip(jax.tree.leaves(params), jax.tree.leaves(theta0), strict=True))
        return 0.5 * jnp.sum(residual**2) + 0.5 * REG * penalty

    def stats(params, data):
        return net_loss(net, params, theta0, data.features, data.counts, data.rewards, REG)

    expected = jax.grad(literal)(theta)
    for data in (per_arm, buffer):
        got = jax.grad(stats)(theta, data)
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(expected), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    # the losses differ by a theta-independent constant only
    diffs = [literal(p) - stats(p, per_arm) for p in (theta0, theta)]
    np.testing.assert_allclose(diffs[0], diffs[1], rtol=1e-12)


def test_gd_trajectories_coincide_for_per_arm_and_buffer_rows():
    arms, _, _, per_arm, buffer = history(seed=2)
    net = Network(in_features=DIM, width=WIDTH, depth=DEPTH)
    theta0 = net.init(jax.random.key(3))

    def fit(data):
        return net_gd(net, theta0, theta0, data.features, data.counts, data.rewards, REG,
                      learning_rate=0.01, num_steps=25)

    for a, b in zip(jax.tree.leaves(fit(per_arm)), jax.tree.leaves(fit(buffer)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction,link", [("mean", "identity"), ("sum", "identity"),
                                            ("mean_plus_reg", "logistic")])
def test_training_on_the_filled_rows_in_blocks_equals_full_batch_training(reduction, link):
    """``num_rows``: the data gradient summed over blocks of ``block_rows`` rows up to the
    filled prefix of a ring buffer is the full-batch gradient (the empty rows have count 0), also
    under ``vmap`` over buffers filled to different depths (the blocks loop runs to the deepest
    one and leaves the others unchanged)."""
    _, pulls, rewards, _, _ = history(seed=6)
    arms = jax.random.normal(jax.random.key(7), (STEPS, NUM_ARMS, DIM))
    targets = rewards > 0 if link == "logistic" else rewards
    net = Network(in_features=DIM, width=WIDTH, depth=DEPTH)
    theta0 = net.init(jax.random.key(8))
    lr = 0.05 / STEPS if reduction == "sum" else 0.05

    def buffer_after(t):  # a ring buffer of 50 rows holding the first t observations
        data = glm_data_init(50, DIM)
        for s in range(t):
            data, _ = glm_data_add(data, arms[s], pulls[s], targets[s], per_arm=False)
        return data

    def fit(data, num_rows, block_rows):
        return net_gd(net, theta0, theta0, data.features, data.counts, data.rewards, REG,
                      learning_rate=lr, num_steps=20, reduction=reduction, link=link,
                      num_rows=num_rows, block_rows=block_rows)

    depths = (3, 17, STEPS)
    buffers = [buffer_after(t) for t in depths]
    stacked = jax.tree.map(lambda *a: jnp.stack(a), *buffers)
    batched = jax.jit(jax.vmap(lambda d: fit(d, d.num_obs, 8)))(stacked)
    for i, data in enumerate(buffers):
        full = fit(data, None, 8)
        for blocks_of in (8, 7):  # 7 does not divide 50: the last block is zero-padded
            blocked = fit(data, data.num_obs, blocks_of)
            for a, b in zip(jax.tree.leaves(blocked), jax.tree.leaves(full), strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        for a, b in zip(jax.tree.leaves(batched), jax.tree.leaves(full), strict=True):
            np.testing.assert_allclose(a[i], b, rtol=1e-10, atol=1e-12)
    # and it does train: 20 steps move the parameters
    moved = jax.tree.leaves(fit(buffers[-1], STEPS, 8))[0] - jax.tree.leaves(theta0)[0]
    assert float(jnp.max(jnp.abs(moved))) > 1e-4


def test_mean_and_summed_losses_have_the_same_minimiser():
    arms, _, _, per_arm, _ = history(seed=4)
    net = Network(in_features=DIM, width=WIDTH, depth=DEPTH)
    theta0 = net.init(jax.random.key(5))
    rows = (per_arm.features, per_arm.counts, per_arm.rewards)
    n = float(per_arm.counts.sum())

    def fit(params, reduction, lr, steps):
        return net_gd(net, params, theta0, *rows, REG, learning_rate=lr, num_steps=steps,
                      reduction=reduction)

    # step lr on L / n is step lr / n on L: the same trajectory
    mean_path = fit(theta0, "mean", 0.02, 30)
    sum_path = fit(theta0, "sum", 0.02 / n, 30)
    for a, b in zip(jax.tree.leaves(mean_path), jax.tree.leaves(sum_path), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)

    # the mean loss is the summed loss over n everywhere, so they share their minimisers
    # (GD on a ReLU network need not converge to one: its fixed-step iterates end up cycling
    # across activation kinks, so the identity is checked pointwise, with its gradient)
    for seed in range(3):
        params = fit(theta0, "sum", 0.01 / n, 10 * (seed + 1))
        losses = {r: net_loss(net, params, theta0, *rows, REG, reduction=r)
                  for r in ("sum", "mean", "mean_plus_reg")}
        np.testing.assert_allclose(losses["mean"] * n, losses["sum"], rtol=1e-12)
        grads = {r: jax.grad(lambda p, r=r: net_loss(net, p, theta0, *rows, REG, reduction=r))(
            params) for r in ("sum", "mean")}
        for a, b in zip(jax.tree.leaves(grads["mean"]), jax.tree.leaves(grads["sum"]), strict=True):
            np.testing.assert_allclose(a * n, b, rtol=1e-10, atol=1e-12)
    # "mean_plus_reg" (the reference code's weight decay) is a different objective
    assert not np.isclose(losses["mean_plus_reg"] * n, losses["sum"], rtol=1e-3)


def test_zero_output_at_init_is_exact_up_to_rounding():
    net = Network(in_features=3, width=WIDTH, depth=DEPTH, double_input=True)
    x = jax.random.normal(jax.random.key(6), (10, 3))
    for seed in range(3):
        assert float(jnp.max(jnp.abs(net.apply(net.init(jax.random.key(seed)), x)))) < 1e-12


def test_full_design_widths_equal_the_explicit_inverse():
    p, reg = 7, 0.5
    g = jax.random.normal(jax.random.key(7), (12, p))
    design = design_init(p, reg, "full")
    for row in g:
        design = design_update(design, row)
    probes = jax.random.normal(jax.random.key(8), (4, p))
    u_inv = jnp.linalg.inv(reg * jnp.eye(p) + g.T @ g)
    expected = jnp.sqrt(jnp.einsum("kp,pq,kq->k", probes, u_inv, probes))
    np.testing.assert_allclose(design_widths(design, probes), expected, rtol=1e-10)
    diag = design_init(p, reg, "diag")
    for row in g:
        diag = design_update(diag, row)
    np.testing.assert_allclose(diag, reg + jnp.sum(g * g, axis=0), rtol=1e-12)
