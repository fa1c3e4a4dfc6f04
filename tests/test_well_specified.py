"""Well-specified agents: environments state their assumptions, agents map them onto their
fields, ``make_agent(name, env=env)`` applies them, and changing arm sets get working buffers."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.results import paired_difference

pytestmark = pytest.mark.unoptimized  # checks what programs compute, not bits (conftest.py)


def test_environments_state_their_assumptions():
    linear = jb.make_env("linear", dim=8, noise_std=0.3).assumptions()
    assert (linear.noise_std, linear.prior_var, linear.param_bound) == (0.3, 1 / 8, 1.0)
    russo = jb.make_env("russo", dim=4, num_arms=5).assumptions()
    assert (russo.noise_std, russo.prior_var) == (1.0, 10.0)
    assert russo.param_bound == pytest.approx(math.sqrt(10) * (2 + math.sqrt(2 * math.log(100))))
    logistic = jb.make_env("logistic", dim=4, theta_scale=2.0).assumptions()
    assert (logistic.noise_std, logistic.prior_var, logistic.param_bound) == (0.5, 1.0, 2.0)
    assert jb.make_env("logistic-bernoulli").assumptions().noise_std == 0.5
    assert jb.make_env("neurallog-synthetic").assumptions() == jb.Assumptions(noise_std=0.5)
    assert jb.make_env("quadratic", noise_std=0.2).assumptions() == jb.Assumptions(noise_std=0.2)


def test_sphere_prior_has_the_second_moment_it_states():
    """A unit theta* uniform on the sphere has covariance I/d: the stated prior variance."""
    env = jb.make_env("linear", dim=5, num_arms=3)
    thetas = jax.vmap(lambda k: env.init(k).theta)(jax.random.split(jax.random.key(0), 20_000))
    cov = np.cov(np.asarray(thetas), rowvar=False)
    np.testing.assert_allclose(cov, np.eye(5) * env.assumptions().prior_var, atol=0.01)


def test_make_agent_with_env_sets_the_fields_each_agent_has():
    env = jb.make_env("russo", dim=4, num_arms=6)
    ts = jb.make_agent("lin-ts", env=env)
    assert (ts.noise_std, ts.reg) == (1.0, pytest.approx(0.1))  # exact Bayesian TS
    ucb = jb.make_agent("lin-ucb", env=env)
    assert ucb.param_bound == pytest.approx(env.assumptions().param_bound)
    es = jb.make_agent("lin-es", env=env)
    assert (es.perturb_std, es.reg) == (1.0, pytest.approx(0.1))
    assert jb.make_agent("ensemble-pp", env=env) == jb.make_agent(
        "ensemble-pp", param_bound=env.assumptions().param_bound)
    # what the user sets wins; the rest still comes from the environment
    own = jb.make_agent("lin-ts", env=env, reg=3.0)
    assert (own.reg, own.noise_std) == (3.0, 1.0)
    # wrappers pass the values to what they wrap, except what their schedule sets
    dt = jb.make_agent("lin-es-dt", env=env)
    assert dt.agent.reg == pytest.approx(0.1) and dt.agent.perturb_std == jb.make_agent(
        "lin-es-dt").agent.perturb_std
    assert jb.well_specified(jb.make_agent("lin-ts"), env) == {"noise_std": 1.0,
                                                              "reg": pytest.approx(0.1)}
    assert jb.well_specified(ts, env) == {}


def test_well_specified_ridge_prior_is_the_instance_prior():
    """With ``reg = noise^2 / prior_var`` the ridge prior N(0, noise^2 / reg I) of lin-ts is
    exactly the environment's N(0, prior_var I): LinTS's first sample has the prior's law."""
    env = jb.make_env("russo", dim=3, num_arms=4)
    agent = jb.make_agent("lin-ts", env=env)
    state = agent.init(jax.random.key(0), env.spec())
    cov = agent.noise_std**2 * np.asarray(state.sqrt_cov @ state.sqrt_cov.T)  # sigma^2 V^-1
    np.testing.assert_allclose(cov, env.assumptions().prior_var * np.eye(3), rtol=1e-6)


def test_agents_that_cannot_act_are_refused_and_left_out():
    sphere = jb.make_env("linear-sphere", dim=3)
    with pytest.raises(ValueError, match="cannot act on environment"):
        jb.make_agent("lin-ucb", env=sphere)
    names = jb.default_agent_names(sphere)
    assert "lin-ucb" not in names and "lin-ts" in names
    assert all("vector" in jb.make_agent(n).action_kinds for n in names)
    with pytest.raises(ValueError, match="horizon is used only with env"):
        jb.make_agent("lin-ts", horizon=10)
    with pytest.raises(ValueError, match="horizon must be a positive integer"):
        jb.make_agent("glm-es", env=jb.make_env("linear"), horizon=0)


def test_default_agent_sets_follow_the_model():
    """Logistic-link agents only where rewards lie in [0, 1]; every family on classification."""
    quadratic = set(jb.default_agent_names(jb.make_env("quadratic")))
    assert {"neural-ucb", "neural-es", "lin-ts"} <= quadratic
    assert not quadratic & {"glm-es", "neurallog-ucb-2"}
    synthetic = set(jb.default_agent_names(jb.make_env("neurallog-synthetic")))
    assert {"glm-es", "neurallog-ucb-2", "ncbf-ucb", "neural-ucb"} <= synthetic
    assert "lin-ts" not in synthetic


def test_changing_arm_sets_get_horizon_sized_buffers():
    env = jb.make_env("linear", dim=3, num_arms=4, fresh_arms=True)
    assert jb.make_agent("glm-es", env=env, horizon=300).buffer_size == 300
    assert jb.make_agent("glm-es", env=env, horizon=10**6).buffer_size == jb.core.AUTO_BUFFER
    assert jb.make_agent("glm-es", env=env).buffer_size is None  # its own choice at init
    assert jb.make_agent("glm-es", env=env, horizon=300, buffer_size=7).buffer_size == 7
    fixed = jb.make_env("linear", dim=3, num_arms=4)
    assert jb.make_agent("glm-es", env=fixed, horizon=300).buffer_size is None  # per-arm


@pytest.mark.slow
def test_russo_lin_ts_and_ensemble_pp_agree_when_well_specified():
    """Ensemble++'s Figure 2 setting, reduced (d = 10, K = 100, 200 runs, T = 1,000): with
    ``env=`` LinTS and Ensemble++ (M = 8) agree within noise (paired difference inside twice its
    95% half-width), while the bare LinTS (noise 0.5 and prior variance 0.25 assumed, against 1
    and 10) has many times their regret."""
    env = jb.make_env("russo", dim=10, num_arms=100)
    agents = {"lin-ts": jb.make_agent("lin-ts", env=env),
              "ensemble-pp": jb.make_agent("ensemble-pp", env=env),
              "bare": jb.make_agent("lin-ts")}
    results = jb.compare(env, agents, jax.random.key(0), 1_000, 200)
    diff, half = paired_difference(results["ensemble-pp"], results["lin-ts"])
    assert abs(diff) <= 2 * half, (diff, half)
    assert results["bare"].final()[0] > 5 * results["lin-ts"].final()[0]
