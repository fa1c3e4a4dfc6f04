"""The runner's public one-run API (``jb.runner``): its keys, carry, ``init``, ``step`` and the
``rollout`` over chunks, against the runner's own batched programs; and a preset agent made
without an environment plays and records its preset's numbers."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb

ENV = jb.make_env("linear", dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
T = 30
STEPS = np.asarray([10, 30], np.int32)


@jax.jit
def _one_run(key, run_id):
    """Run ``run_id`` by the public API: rollout of the runner's round, and one play_chunk."""
    carry = jb.runner.init(ENV, AGENT, key, run_id, num_slots=len(STEPS))
    steps = jnp.asarray(STEPS)
    rounds = jb.runner.round_fn(ENV, AGENT, steps)
    default, _ = jb.runner.rollout(rounds, carry, T)
    chunked, _ = jb.runner.rollout(rounds, carry, T, chunk_size=7)  # a partial last chunk
    chunk = jb.runner.play_chunk(ENV, AGENT, carry, jnp.int32(0), jnp.int32(T), steps, T)
    return default, chunked, chunk


def test_rollout_of_the_runners_round_is_the_runners_run():
    key = jax.random.key(5)
    default, chunked, chunk = _one_run(key, jnp.uint32(1))
    for other in (chunked, chunk):  # chunking and the loop form never change the numbers
        for a, b in zip(jax.tree.leaves(default), jax.tree.leaves(other), strict=True):
            if jnp.issubdtype(a.dtype, jax.dtypes.prng_key):
                a, b = jax.random.key_data(a), jax.random.key_data(b)
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    result = jb.simulate(ENV, AGENT, key, T, 2, record=list(STEPS), block_runs=2, progress=False)
    # run 1 of simulate (batched in a block of 2) against the unbatched rollout
    np.testing.assert_allclose(result.cumulative_regret[1], default.records[:2, 0], rtol=1e-5)
    np.testing.assert_allclose(result.cumulative_reward[1], default.records[:2, 1], rtol=1e-5)
    assert default.cumulative[2] == T  # every round accepted
    assert np.all(np.asarray(default.bad_step) == -1)
    assert np.all(np.asarray(default.bad_state) == -1)


def test_rollout_stacks_outputs_from_start_and_refuses_bad_lengths():
    def count(total, t):
        return total + t, 2 * t

    total, outs = jb.runner.rollout(count, jnp.int32(0), 10, start=5, chunk_size=3)
    np.testing.assert_array_equal(outs, 2 * np.arange(5, 15))
    assert int(total) == sum(range(5, 15))
    for bad in (0, 2.5):
        with pytest.raises(ValueError, match="num_rounds"):
            jb.runner.rollout(count, jnp.int32(0), bad)
    with pytest.raises(ValueError, match="chunk_size"):
        jb.runner.rollout(count, jnp.int32(0), 4, chunk_size=0)


def test_rematerialised_rollout_has_the_closed_form_gradient():
    """x_{t+1} = a x_t + 1 from x_0 = 1 over n rounds: x_n = a^n + (a^n - 1) / (a - 1)."""
    n, a = 9, 1.1

    def final(a, remat):
        carry, _ = jb.runner.rollout(lambda x, t: (a * x + 1.0, None), jnp.float32(1.0), n,
                                     chunk_size=4, remat=remat)
        return carry

    expected = n * a ** (n - 1) + ((n * a ** (n - 1)) * (a - 1) - (a**n - 1)) / (a - 1) ** 2
    for remat in (False, True):
        np.testing.assert_allclose(float(final(a, remat)), a**n + (a**n - 1) / (a - 1),
                                   rtol=1e-5)
        np.testing.assert_allclose(float(jax.grad(final)(a, remat)), expected, rtol=1e-4)


def test_a_preset_agent_made_without_its_dimension_records_the_numbers_that_ran():
    """``colstim``'s exploration scale depends on d: made without ``env=`` it is None until
    the runner merges its preset at the environment's d, before compiling."""
    env = jb.make_env("dueling-synthetic", utility="linear", dim=3, num_arms=4)
    d, hint = env.spec().dim, 500
    bare = jb.make_agent("colstim", horizon_hint=hint)
    assert bare.explore_scale is None
    made = bare.with_preset(d)  # what make_agent(..., env=env) merges
    assert made.explore_scale is not None
    results = jb.compare(env, {"bare": bare, "made": made}, 0, 8, 2, progress=False)
    root = math.sqrt(d * math.log(hint))
    for result in results.values():
        assert result.agent_config["explore_scale"] == pytest.approx(2 * root, rel=1e-6)
        assert result.agent_config["threshold"] == pytest.approx(root, rel=1e-6)
    np.testing.assert_array_equal(results["bare"].cumulative_regret,
                                  results["made"].cumulative_regret)
