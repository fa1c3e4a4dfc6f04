"""Drifting environments: segments keyed on the round, consistent instances, exact reduction to
the wrapped environment when nothing drifts within the horizon."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.envs import Drifting, drifted

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)

PERIOD = 4


def _env(**kw):
    return jb.make_env("drifting-linear", **{"dim": 3, "num_arms": 4, "noise_std": 0.1,
                                             "period": PERIOD, **kw})


def test_abrupt_segments_jump_at_multiples_of_the_period():
    env = _env()
    state = env.init(jax.random.key(1))
    at = jax.jit(lambda t: env._at(state, t))
    thetas = [np.asarray(at(t).theta) for t in range(3 * PERIOD)]
    for t in range(1, 3 * PERIOD):
        assert np.array_equal(thetas[t], thetas[t - 1]) == (t % PERIOD != 0), t
        s = at(t)
        np.testing.assert_array_equal(s.arms, state.base.arms)       # the arms stay
        np.testing.assert_allclose(s.means, s.arms @ s.theta, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(thetas[t]), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(thetas[0], state.base.theta)        # segment 0: the wrapped


def test_linear_schedule_moves_on_the_line_between_instances():
    env = _env(schedule="linear")
    state = env.init(jax.random.key(2))
    theta = {t: np.asarray(drifted(env.inner(), state, t, "linear", PERIOD, ("theta",)).theta)
             for t in (PERIOD, PERIOD + 1, PERIOD + 2, 2 * PERIOD)}
    np.testing.assert_allclose(theta[PERIOD + 2], (theta[PERIOD] + theta[2 * PERIOD]) / 2,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(theta[PERIOD + 1], 0.75 * theta[PERIOD] + 0.25 * theta[2 * PERIOD],
                               rtol=1e-5, atol=1e-6)


def test_feedback_measures_regret_against_the_rounds_instance():
    env, key = _env(), jax.random.key(3)
    state = env.init(key)
    for t in (1, PERIOD + 1, 2 * PERIOD + 3):
        context = env.observe(key, state, t)
        assert isinstance(context, jb.Context) and int(context.drift_round) == t
        means = np.asarray(env._at(state, t).means)
        for arm in range(4):
            fb = env.feedback(key, state, context, jnp.int32(arm))
            np.testing.assert_allclose(fb.regret, means.max() - means[arm], atol=1e-6)


def test_within_the_first_period_the_wrapped_environment_plays_exactly():
    """Every round of segment 0 shows the wrapped environment's context and feedback, bit for
    bit (the same instance, the same keys)."""
    inner = jb.make_env("linear", dim=3, num_arms=4, noise_std=0.1)
    env = Drifting(inner, period=PERIOD, fields=("theta",))
    key = jax.random.key(4)
    state, inner_state = env.init(key), inner.init(key)
    for t in range(PERIOD):
        k = jax.random.fold_in(key, t)
        c, ci = env.observe(k, state, t), inner.observe(k, inner_state, t)
        np.testing.assert_array_equal(c.arms, ci.arms)
        fb, fbi = env.feedback(k, state, c, jnp.int32(t % 4)), inner.feedback(
            k, inner_state, ci, jnp.int32(t % 4))
        assert float(fb.reward) == float(fbi.reward) and float(fb.regret) == float(fbi.regret)


@pytest.mark.full
def test_simulated_drift_with_a_long_period_equals_the_wrapped_environment():
    base = jb.make_env("linear", dim=3, num_arms=4, noise_std=0.1)
    agent, horizon = jb.make_agent("lin-ucb"), 10
    plain = jb.simulate(base, agent, 0, horizon, 2, record="all", progress=False)
    drift = jb.simulate(Drifting(base, period=horizon, fields=("theta",)), agent, 0, horizon,
                        2, record="all", progress=False)
    np.testing.assert_array_equal(plain.cumulative_regret, drift.cumulative_regret)


def test_bad_settings_are_errors():
    with pytest.raises(ValueError, match="schedule"):
        _env(schedule="sudden")
    with pytest.raises(ValueError, match="period"):
        _env(period=0)
    with pytest.raises(ValueError, match="does not have"):
        Drifting(jb.make_env("linear"), fields=("thetas",)).validate()
    with pytest.raises(ValueError, match="instance_seed"):
        Drifting(jb.make_env("linear", instance_seed=1)).validate()
    assert not Drifting(jb.make_env("linear")).spec().fixed_arms       # every leaf drifts
    assert _env().spec().fixed_arms
