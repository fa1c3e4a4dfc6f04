"""Float64 identities of the neural logistic bandits (Bae & Lee 2025, Algs. 1-2, Eqs. 1-3).

No simulation: eager calls of the pure functions and a few agent steps on a tiny network.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import jaxbandits as jb
from jaxbandits.agents.neurallog import neurallog_lambda0, neurallog_schedule
from jaxbandits.core import Feedback
from jaxbandits.nets import design_init, design_logdet, design_update

pytestmark = pytest.mark.usefixtures("x64")


def test_ucb2_closed_form_of_optimism_over_the_ellipsoid():
    """Alg. 2's width: ``max_{sqrt(m) ||theta - theta_c||_W <= nu} g^T (theta - theta_0) =
    g^T (theta_c - theta_0) + nu ||g / sqrt m||_{W^-1}``, attained at ``theta_c + (nu / sqrt m)
    W^-1 g / ||g||_{W^-1}``; random feasible points never exceed it."""
    rng = np.random.default_rng(0)
    p, m, nu = 6, 4, 0.7
    a = rng.normal(size=(p, p))
    w = a @ a.T + 0.5 * np.eye(p)
    g, theta_c, theta_0 = rng.normal(size=p), rng.normal(size=p), rng.normal(size=p)
    w_inv = np.linalg.inv(w)
    norm = math.sqrt(g @ w_inv @ g)
    phi = g / math.sqrt(m)
    closed = g @ (theta_c - theta_0) + nu * math.sqrt(phi @ w_inv @ phi)
    maximiser = theta_c + nu / math.sqrt(m) * w_inv @ g / norm
    np.testing.assert_allclose(math.sqrt(m) * math.sqrt((maximiser - theta_c) @ w @ (
        maximiser - theta_c)), nu, rtol=1e-12)
    np.testing.assert_allclose(g @ (maximiser - theta_0), closed, rtol=1e-12)
    chol = np.linalg.cholesky(w_inv)  # feasible points theta_c + (nu / sqrt m) L z, ||z|| <= 1
    z = rng.normal(size=(2000, p))
    z *= rng.uniform(size=(2000, 1)) ** (1 / p) / np.linalg.norm(z, axis=1, keepdims=True)
    points = theta_c + nu / math.sqrt(m) * z @ chol.T
    assert np.all((points - theta_0) @ g <= closed + 1e-12)


@pytest.mark.parametrize("design", ["full", "diag"])
def test_theory_ucb2_index_is_the_closed_form(design):
    """The theory-mode NeuralLog-UCB-2 index, after a few rounds (with training), equals
    ``g(x; theta_0)^T (theta - theta_0) + nu nu^(2)_t ||g(x; theta_0) / sqrt m||_{W_t^-1}``
    with ``W_t = sum_i mu'(f(x_i; theta_i)) phi_i phi_i^T + lam_t I`` rebuilt from scratch."""
    agent = jb.make_agent("neurallog-ucb-2", mode="theory", design=design, explore_scale=1.0,
                          width=4, num_grad_steps=3, update_every=2, buffer_size=8,
                          learning_rate=0.5)
    env = jb.make_env("neurallog-synthetic", dim=3, num_arms=4, pool_size=20, function="h4")
    key = jax.random.key(0)
    env_state = env.init(key)
    state = agent.init(jax.random.key(1), env.spec())
    network = agent.network(env.dim)
    m = agent.width
    rows, weights = [], []
    for t in range(5):
        context = env.observe(jax.random.fold_in(key, t), env_state, t)
        action, state_acted = agent.act(state, jax.random.key(2), context)
        feedback = Feedback(reward=jnp.asarray(float(t % 2)), regret=jnp.zeros(()))
        state = agent.update(state_acted, jax.random.key(3), context, action, feedback)
        x = context.arms[action]
        rows.append(np.asarray(network.gradient(state.anchor, x)) / math.sqrt(m))
        weights.append(float(jax.nn.sigmoid(network.apply(state.params, x)) * (
            1 - jax.nn.sigmoid(network.apply(state.params, x)))))
    assert not np.allclose(ravel_pytree(state.params)[0], ravel_pytree(state.anchor)[0])

    phi = np.stack(rows)
    gram = (phi.T * np.array(weights)) @ phi
    scale = 1 / (4 * float(neurallog_lambda0(agent.depth, 1.0, 0.05)))  # D_t = logdet(I + G/4lam0)
    if design == "full":
        dlogdet = np.linalg.slogdet(np.eye(len(gram)) + scale * phi.T @ phi)[1]
    else:  # the diagonal approximation of both matrices
        dlogdet, gram = np.sum(np.log1p(scale * np.sum(phi**2, axis=0))), np.diag(np.diag(gram))
    lam, iota = (float(v) for v in neurallog_schedule(dlogdet, 5, agent.depth, 1.0, 0.05))
    w = gram + lam * np.eye(len(gram))
    nu2 = (1 + math.sqrt(2) + 2) * iota + 1
    context = env.observe(jax.random.key(9), env_state, 5)
    _, g0 = network.features(state.anchor, context.arms)
    g0 = np.asarray(g0)
    delta = np.asarray(ravel_pytree(state.params)[0] - ravel_pytree(state.anchor)[0])
    phis = g0 / math.sqrt(m)
    expected = g0 @ delta + nu2 * np.sqrt(np.einsum("kp,pq,kq->k", phis, np.linalg.inv(w), phis))
    np.testing.assert_allclose(agent.scores(state, jax.random.key(4), context), expected,
                               rtol=1e-9)


def test_theory_schedule_identities():
    """Eq. 3 and its magnitude (Bae & Lee 2025, Secs. 4-5): ``lam_0 ~ 70.1`` (S = 1, L = 2,
    C1 = 1, delta = 0.05); ``lam_t`` non-decreasing and at least ``lam_0``; wherever the clamp
    is inactive, ``2 S sqrt(lam_t) <= iota_t <= 2 sqrt(2) S sqrt(lam_t)``; ``nu_t >= 1``."""
    np.testing.assert_allclose(neurallog_lambda0(2, 1.0, 0.05), 70.1, atol=0.05)
    for s in (0.5, 1.0, 3.0):
        logdet = jnp.cumsum(jnp.linspace(0.0, 2.0, 200))  # a growing D_t
        t = jnp.arange(200)
        lam, iota = neurallog_schedule(logdet, t, 2, s, 0.05)
        assert np.all(np.diff(lam) >= 0) and np.all(lam >= neurallog_lambda0(2, s, 0.05))
        free = lam > neurallog_lambda0(2, s, 0.05) * (1 + 1e-9)
        assert free.sum() > 100
        assert np.all(iota[free] >= 2 * s * np.sqrt(lam[free]) * (1 - 1e-12))
        assert np.all(iota[free] <= 2 * math.sqrt(2) * s * np.sqrt(lam[free]) * (1 + 1e-12))
        nu = (1 + math.sqrt(2) * s + 2 * s * s) * iota + 1
        assert np.all(nu >= 1)


def test_incremental_logdet_and_hadamard():
    """The rank-one ``log det`` equals a fresh ``slogdet``; the diagonal one bounds it
    from above (Hadamard)."""
    rng = np.random.default_rng(1)
    p, c = 7, 0.25
    full, diag = design_init(p, 1 / c, "full"), design_init(p, 1 / c, "diag")
    us = rng.normal(size=(30, p))
    for u in us:
        full, diag = design_update(full, jnp.asarray(u)), design_update(diag, jnp.asarray(u))
    exact = np.linalg.slogdet(np.eye(p) + c * us.T @ us)[1]
    shift = p * math.log(1 / c)
    np.testing.assert_allclose(design_logdet(full) - shift, exact, rtol=1e-10)
    assert float(design_logdet(diag) - shift) >= exact
