"""The NTK network (structure, init, gradient features), design matrices, NTK diagnostics and
the training schedule (float32; the exact identities are in test_nets_float64.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from jaxbandits.nets import (
    MLP,
    Network,
    design_init,
    design_update,
    design_widths,
    effective_dimension,
    ntk_gram,
    ntk_limit,
    training_round,
)


def unit_vectors(key, num, dim):
    x = jax.random.normal(key, (num, dim))
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


def kernels(params):
    return [np.asarray(k) for k in jax.tree.leaves(params)]


@pytest.mark.parametrize(
    "dim, width, depth, double, expected",
    [
        (20, 20, 3, False, 820),  # m d + m^2 (L - 2) + m, not Sun et al. 2025's printed 1220
        (20, 20, 2, True, 820),  # Bae & Lee 2025: d' = 40 (doubled), L = 2
        (20, 20, 3, True, 1220),
        (50, 20, 3, False, 1420),
        (3, 4, 2, False, 20),  # odd d, symmetric init: padded to d' = 4
    ],
)
def test_parameter_count(dim, width, depth, double, expected):
    net = Network(in_features=dim, width=width, depth=depth, double_input=double)
    assert net.num_params == expected
    assert sum(k.size for k in kernels(net.init(jax.random.key(0)))) == expected


def test_symmetric_init_has_zero_output_with_doubled_input_only():
    x = unit_vectors(jax.random.key(1), 6, 4)
    doubled = Network(in_features=4, width=16, depth=3, double_input=True)
    plain = Network(in_features=4, width=16, depth=3)
    for seed in range(3):
        key = jax.random.key(seed)
        # exact in exact arithmetic; float32 rounding of the two halves leaves ~1e-8
        assert float(jnp.max(jnp.abs(doubled.apply(doubled.init(key), x)))) < 1e-5
        assert float(jnp.max(jnp.abs(plain.apply(plain.init(key), x)))) > 1e-3


def test_symmetric_init_block_structure():
    width, half = 8, 4
    net = Network(in_features=6, width=width, depth=4)
    w1, w2, w3, out = kernels(net.init(jax.random.key(2)))
    assert w1.shape == (width, 6) and w2.shape == w3.shape == (width, width)
    for w, cols in ((w1, 3), (w2, half), (w3, half)):
        np.testing.assert_array_equal(w[:half, :cols], w[half:, cols:])  # blockdiag(W, W)
        assert not w[:half, cols:].any() and not w[half:, :cols].any()
        assert np.all(w[:half, :cols] != 0)
    np.testing.assert_array_equal(out[0, :half], -out[0, half:])  # [w, -w]
    # entry variances: 4 / m in the blocks, 2 / m in the output (loose: few entries)
    blocks = np.concatenate([w[:half, :c].ravel() for w, c in ((w1, 3), (w2, half), (w3, half))])
    assert 0.5 * 4 / width < blocks.var() < 1.5 * 4 / width


def test_other_inits_are_dense_and_invalid_settings_raise():
    for scheme in ("gaussian", "torch"):
        net = Network(in_features=3, width=5, depth=3, init_scheme=scheme)  # odd sizes fine
        assert net.num_params == 5 * 3 + 25 + 5
        assert all(np.all(k != 0) for k in kernels(net.init(jax.random.key(0))))
    with pytest.raises(ValueError, match="width"):
        MLP(4, 5, 3, init="symmetric", rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="depth"):
        MLP(4, 4, 1, rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="init"):
        MLP(4, 4, 2, init="xavier", rngs=nnx.Rngs(0))


@pytest.mark.parametrize("depth", [2, 3])
def test_ntk_feature_scale_is_depth(depth):
    """Bae & Lee 2025, Sec. 2: E ||g(x; theta_0) / sqrt m||^2 = L for unit x, doubled input.

    400 inits x 8 unit inputs at width 16; the per-draw std is about 1.2 (L = 2) and 2.8
    (L = 3), so the Monte-Carlo standard error is about 3% and 5% of L: tolerance 10% of L.
    """
    width = 16
    net = Network(in_features=5, width=width, depth=depth, double_input=True)
    x = unit_vectors(jax.random.key(3), 8, 5)
    keys = jax.random.split(jax.random.key(4), 400)
    sq = jax.vmap(lambda k: jnp.sum(net.features(net.init(k), x)[1] ** 2, -1) / width)(keys)
    assert abs(float(sq.mean()) - depth) < 0.1 * depth


def test_ntk_gram_matches_the_infinite_width_limit():
    """The mean empirical NTK over inits equals the analytic recursion (diag = L ||x||^2)."""
    x = unit_vectors(jax.random.key(5), 4, 3)
    limit = ntk_limit(x, 3)
    np.testing.assert_allclose(jnp.diag(limit), 3.0, rtol=1e-5)
    net = Network(in_features=3, width=16, depth=3, double_input=True)
    keys = jax.random.split(jax.random.key(6), 400)
    gram = jax.vmap(lambda k: ntk_gram(net, net.init(k), x))(keys).mean(0)
    np.testing.assert_allclose(gram, limit, atol=0.3)
    # doubling the input or not does not change the kernel's limit
    plain = Network(in_features=3, width=16, depth=3, init_scheme="gaussian")
    gram = jax.vmap(lambda k: ntk_gram(plain, plain.init(k), x))(keys).mean(0)
    np.testing.assert_allclose(gram, limit, atol=0.3)


def test_effective_dimension():
    # H = I: d~ = K log(1 + T / reg) / log(1 + T K / reg)
    num_arms, horizon, reg = 5, 100, 1.0
    value = effective_dimension(jnp.eye(num_arms), reg, horizon)
    expected = num_arms * np.log1p(horizon / reg) / np.log1p(horizon * num_arms / reg)
    np.testing.assert_allclose(value, expected, rtol=1e-5)
    # a rank-one Gram matrix has a smaller effective dimension
    ones = jnp.ones((num_arms, num_arms))
    assert float(effective_dimension(ones, reg, horizon)) < float(value)


def test_diagonal_and_full_design_agree_on_axis_aligned_features():
    """One-hot gradients make the diagonal approximation exact."""
    p = 6
    diag, full = design_init(p, 2.0, "diag"), design_init(p, 2.0, "full")
    for j, scale in ((0, 1.0), (3, 2.0), (0, 0.5), (5, 3.0)):
        g = scale * jax.nn.one_hot(j, p)
        diag, full = design_update(diag, g), design_update(full, g)
    probes = jax.random.normal(jax.random.key(7), (4, p)) * jnp.eye(p)[jnp.array([0, 1, 3, 5])]
    np.testing.assert_allclose(design_widths(diag, probes), design_widths(full, probes),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="design"):
        design_init(p, 1.0, "block")


def test_training_round_schedule():
    t = jnp.arange(0, 201)
    every_50 = np.flatnonzero(training_round(t, 0, 50))
    np.testing.assert_array_equal(every_50, [50, 100, 150, 200])
    with_warmup = np.flatnonzero(training_round(t, 5, 50))
    np.testing.assert_array_equal(with_warmup, [5, 50, 100, 150, 200])
    every_round = np.flatnonzero(training_round(t, 5, 1))
    np.testing.assert_array_equal(every_round, np.arange(5, 201))


def test_one_mlp_serves_the_scalar_network_and_the_feature_map():
    # FeatureMLP is the MLP with a vector output; the scalar network is its D = 1 case, scaled
    from jaxbandits.nets import FeatureMLP, FeatureNetwork

    x = unit_vectors(jax.random.key(1), 4, 3)
    scalar = MLP(3, 6, 3, init="torch", rngs=nnx.Rngs(0))
    vector = FeatureMLP(3, 6, 3, 1, scale_output=True, rngs=nnx.Rngs(0))
    assert isinstance(vector, MLP)
    np.testing.assert_array_equal(scalar(x), vector(x)[:, 0])
    # the symmetric feature map pads an odd input (as the scalar network always did)
    net = FeatureNetwork(in_features=3, width=8, out_features=3, init_scheme="symmetric",
                         scale_output=True, final_relu=True)
    params = net.init(jax.random.key(0))
    assert net.apply(params, x).shape == (4, 3)
    grad = jax.grad(lambda p: jnp.sum(net.apply(p, x)))(params)
    assert np.all(np.asarray(kernels(grad)[0])[:, -1] == 0)  # the padded column is never used
    with pytest.raises(ValueError, match="init must be one of"):
        FeatureMLP(3, 6, 3, 2, init="gaussian", rngs=nnx.Rngs(0))
