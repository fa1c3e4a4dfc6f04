"""G-optimal design and its rounding (Sun et al. 2025, Algs. 2-3, App. B.6)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxbandits.envs import draw_vectors
from jaxbandits.linalg import (
    design_variance,
    g_optimal_design,
    round_design,
    rounding_threshold,
)

SHAPES = [(10, 5), (8, 3), (5, 5)]  # (K, d)
SEEDS = 8


def _instances(num_arms: int, dim: int) -> jax.Array:
    keys = jax.random.split(jax.random.key(num_arms * 100 + dim), SEEDS)
    return jax.vmap(lambda k: draw_vectors(k, (num_arms, dim), "sphere", 1.0))(keys)


@pytest.mark.parametrize("num_arms, dim", SHAPES)
def test_design_is_on_the_simplex_and_kiefer_wolfowitz_optimal(num_arms, dim):
    """Alg. 2: sum = 1, weights >= 0, and max_k x_k^T V(w)^{-1} x_k in [d, d (1 + 1e-3)]."""
    arms = _instances(num_arms, dim)
    weights = jax.jit(jax.vmap(g_optimal_design))(arms)
    g_max = jax.vmap(lambda a, w: design_variance(a, w).max())(arms, weights)
    assert np.all(np.asarray(weights) >= 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-6)
    # sum_k w_k g_k = d for any design, so max g >= d; float32 round-off allows 1e-5 below.
    assert np.all(np.asarray(g_max) >= dim * (1 - 1e-5))
    assert np.all(np.asarray(g_max) <= dim * (1 + 1e-3)), np.asarray(g_max) / dim


def test_design_unjitted_matches_jitted_and_zero_budget_is_uniform():
    arms = _instances(8, 3)[0]
    np.testing.assert_allclose(g_optimal_design(arms), jax.jit(g_optimal_design)(arms),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(g_optimal_design(arms, num_iters=0), np.full(8, 1 / 8), rtol=1e-6)


def test_design_of_a_basis_is_uniform_on_it():
    """The design of {e_1, ..., e_d, and a spare arm} puts 1/d on each basis vector."""
    arms = jnp.concatenate([jnp.eye(4), jnp.full((1, 4), 0.5)])
    weights = g_optimal_design(arms)
    np.testing.assert_allclose(weights, [0.25, 0.25, 0.25, 0.25, 0.0], atol=1e-4)


@pytest.mark.parametrize("increment", ["ratio", "literal"])
def test_rounding_sums_exactly_to_n(increment):
    """Alg. 3: N_i >= 0 integers, sum N = n for every n (n < p/2 included), |N_i - n w_i| <= p."""
    arms = _instances(10, 5)
    weights = jax.vmap(g_optimal_design)(arms)
    ns = jnp.asarray([0, 1, 3, 7, 10, 32, 57, 100, 500, 1001])
    counts = jax.jit(jax.vmap(jax.vmap(lambda w, n: round_design(w, n, increment=increment),
                                       (None, 0)), (0, None)))(weights, ns)
    counts, weights = np.asarray(counts), np.asarray(weights)
    assert counts.dtype == np.int32 and np.all(counts >= 0)
    np.testing.assert_array_equal(counts.sum(-1), np.broadcast_to(ns, counts.shape[:2]))
    support = (weights > 0).sum(-1)
    deviation = np.abs(counts - np.asarray(ns)[None, :, None] * weights[:, None, :]).max(-1)
    assert np.all(deviation <= support[:, None])
    assert np.all(counts[weights[:, None, :].repeat(len(ns), 1) == 0] == 0)  # off the support


def test_rounded_design_satisfies_lemma_b5():
    """Alg. 3 (Lemma B.5): for n >= r(eps), max_k x_k^T (sum_i N_i x_i x_i^T)^{-1} x_k <= (1 + eps)
    d / n."""
    dim, eps = 5, 0.5
    r = rounding_threshold(dim, eps)
    assert r == 32.0
    arms = _instances(10, dim)
    weights = jax.vmap(g_optimal_design)(arms)
    for n in (32, 45, 100, 500):
        counts = jax.vmap(lambda w, n=n: round_design(w, n))(weights)
        worst = jax.vmap(lambda a, c: design_variance(a, c).max())(arms, counts)
        assert np.all(np.asarray(worst) * n / dim <= 1 + eps), (n, np.asarray(worst) * n / dim)


def test_min_count_rule_is_off_by_default_and_raises_counts_when_on():
    arms = _instances(10, 5)[0]
    weights = g_optimal_design(arms)
    support = int((weights > 0).sum())
    plain = round_design(weights, 40)
    lifted = round_design(weights, 40, enforce_min_count=True, dim=5, eps=0.5)
    floor = int(np.ceil(rounding_threshold(5, 0.5) / support))
    assert int(plain.sum()) == 40
    assert np.all(np.asarray(lifted)[np.asarray(weights) > 0] >= floor)
    assert np.all(np.asarray(lifted) >= np.asarray(plain)) and int(lifted.sum()) >= 40


def test_rounding_rejects_bad_arguments():
    weights = jnp.full((4,), 0.25)
    with pytest.raises(ValueError, match="increment"):
        round_design(weights, 10, increment="nearest")
    with pytest.raises(ValueError, match="dim"):
        round_design(weights, 10, enforce_min_count=True)
    with pytest.raises(ValueError, match="arms"):
        g_optimal_design(jnp.ones(4))
