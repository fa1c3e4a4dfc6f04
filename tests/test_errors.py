"""Bad input fails early with a clear error (before any compilation); NaN rewards are caught."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from flax import struct

import jaxbandits as jb
from jaxbandits.envs import LinearEnv
from jaxbandits.simulate import trace_counts

ENV = jb.make_env("linear", dim=3, num_arms=4)


@pytest.fixture
def no_compilation():
    """Asserts the test compiled nothing (the error came before)."""
    before = trace_counts()
    yield
    assert trace_counts() == before


@pytest.mark.parametrize(
    "name, overrides, match",
    [
        ("linear", {"dim": 0}, "dim must be a positive integer"),
        ("linear", {"num_arms": -3}, "num_arms must be a positive integer"),
        ("linear", {"dim": 2.5}, "dim must be an integer"),
        ("linear", {"noise_std": -0.1}, "noise_std must be finite and >= 0"),
        ("linear", {"noise_std": float("nan")}, "noise_std must be finite"),
        ("linear", {"theta_prior": "uniform"}, "theta_prior must be one of"),
        ("linear-sphere", {"dim": 0}, "dim must be a positive integer"),
    ],
)
def test_bad_environment_settings(name, overrides, match, no_compilation):
    with pytest.raises(ValueError, match=match):
        jb.make_env(name, **overrides)


@pytest.mark.parametrize(
    "name, overrides, match",
    [
        ("lin-ts", {"reg": 0.0}, "reg must be a positive finite number"),
        ("lin-ts", {"noise_std": -1.0}, "noise_std must be finite and >= 0"),
        ("lin-ucb", {"explore_scale": -0.5}, "explore_scale must be finite and >= 0"),
        ("lin-ucb", {"delta": 1.5}, r"delta must lie in \(0, 1\)"),
    ],
)
def test_bad_agent_settings(name, overrides, match, no_compilation):
    with pytest.raises(ValueError, match=match):
        jb.make_agent(name, **overrides)


def test_bad_settings_are_caught_by_the_runner_too(no_compilation):
    """Built directly (not through the registry), the runner validates before compiling."""
    with pytest.raises(ValueError, match="noise_std must be finite and >= 0"):
        jb.simulate(LinearEnv(noise_std=-1.0), jb.make_agent("lin-ts"), 0, 10, 2)
    with pytest.raises(ValueError, match="reg must be a positive"):
        jb.simulate(ENV, jb.agents.LinTS(reg=-1.0), 0, 10, 2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"horizon": 0}, "horizon must be a positive integer"),
        ({"horizon": -5}, "horizon must be a positive integer"),
        ({"horizon": 10.5}, "horizon must be a positive integer"),
        ({"num_runs": 0}, "num_runs must be a positive integer"),
        ({"chunk_size": 0}, "chunk_size must be a positive integer"),
        ({"num_records": 0}, "num_records must be a positive integer"),
        ({"record": "every"}, "record must be 'log', 'all'"),
    ],
)
def test_bad_runner_sizes(kwargs, match, no_compilation):
    args = {"horizon": 10, "num_runs": 2, "progress": False} | kwargs
    with pytest.raises(ValueError, match=match):
        jb.simulate(ENV, jb.make_agent("lin-ts"), 0, **args)


def test_unknown_names_list_close_matches(no_compilation):
    with pytest.raises(ValueError, match=r"unknown agent 'lin-tss'; did you mean 'lin-ts'"):
        jb.make_agent("lin-tss")
    with pytest.raises(ValueError, match=r"unknown environment 'linaer'; did you mean 'linear'"):
        jb.make_env("linaer")
    with pytest.raises(ValueError, match=r"'explor_scale'; did you mean 'explore_scale'"):
        jb.make_agent("lin-ts", explor_scale=1.0)


def test_agent_that_cannot_act_on_the_action_kind(no_compilation):
    with pytest.raises(ValueError, match="'lin-ucb' cannot act on environment 'linear-sphere'"):
        jb.simulate(jb.make_env("linear-sphere", dim=3), jb.make_agent("lin-ucb"), 0, 10, 2)


@struct.dataclass
class _ShortContextEnv(LinearEnv):
    """Declares ``dim`` but shows arms with one feature fewer."""

    def observe(self, key, env_state, t):
        return jb.Context(arms=env_state.arms[:, :-1])


def test_dimension_mismatch_between_spec_and_context(no_compilation):
    with pytest.raises(ValueError, match=r"dimension mismatch: .* \(4, 3\) .* \(4, 2\)"):
        jb.simulate(_ShortContextEnv(dim=3, num_arms=4), jb.make_agent("lin-ts"), 0, 10, 2)


class _VectorAgent(jb.agents.RandomAgent):
    """Returns a vector where an arm index is expected."""

    action_kinds = ("index",)

    def act(self, state, key, context):
        return jnp.zeros(3), state


def test_dimension_mismatch_of_the_action(no_compilation):
    with pytest.raises(ValueError, match=r"action of shape \(3,\), environment .* expects \(\)"):
        jb.simulate(ENV, _VectorAgent(), 0, 10, 2)


class _NaNEnv(LinearEnv):
    """Produces a NaN reward in round 37 (0-based), in every run."""

    name = "nan-env"

    def feedback(self, key, env_state, context, action):
        feedback = super().feedback(key, env_state, context, action)
        return feedback.replace(reward=jnp.where(context.round == 37, jnp.nan, feedback.reward))

    def observe(self, key, env_state, t):
        return _RoundContext(arms=env_state.arms, round=t)


@struct.dataclass
class _RoundContext(jb.Context):
    round: jax.Array = 0


def test_non_finite_reward_names_the_run_and_step():
    env = _NaNEnv(dim=3, num_arms=4)
    with pytest.raises(FloatingPointError, match=r"run 0 at step 37 .* 3 run\(s\) affected"):
        jb.simulate(env, jb.make_agent("lin-ts"), 0, 100, 3, chunk_size=30, progress=False)
    # Before the bad round, everything runs.
    jb.simulate(env, jb.make_agent("lin-ts"), 0, 37, 3, chunk_size=30, progress=False)


@pytest.mark.parametrize(
    "name, overrides, match",
    [
        # one arm: every duel is a self-duel, whatever the agent's forbid_self_duel
        ("dueling-square", {"num_arms": 1}, r"dueling-square: num_arms must be at least 2 .*"
                                            r"self-duel.*got 1"),
        ("dueling-synthetic", {"num_arms": 1, "utility": "cosine"}, "num_arms must be at least 2"),
        # the authors' instance exists at their sizes only; other sizes drew another instance
        ("quadratic-pool", {"instance": "authors", "dim": 10},
         r"quadratic-pool: instance='authors' .* \(dim=100, pool_size=1000, num_arms=50\); "
         r"got dim=10.*'authors_recipe'"),
        ("quadratic-pool", {"instance": "authors", "pool_size": 200}, "got pool_size=200"),
        ("random-mlp-bernoulli", {"instance": "authors", "width": 8},
         r"random-mlp-bernoulli: instance='authors' .*depth=2\); got width=8"),
    ],
)
def test_environment_settings_that_break_their_promise(name, overrides, match, no_compilation):
    with pytest.raises(ValueError, match=match):
        jb.make_env(name, **overrides)


def test_a_dueling_data_set_needs_two_classes(no_compilation):
    import dataclasses

    import numpy as np

    table = jb.envs.make_table(np.arange(8.0).reshape(4, 2), np.asarray([0, 1, 0, 1]))
    one_class = type(table)(table.features, table.labels * 0,
                            dataclasses.replace(table.meta, num_classes=1))
    with pytest.raises(ValueError, match="the data's number of classes must be at least 2"):
        jb.envs.DuelingClassificationEnv(data=one_class).validate()
    jb.envs.DuelingClassificationEnv(data=table).validate()  # two classes are fine


def test_the_authors_recipe_at_other_sizes(no_compilation):
    """``instance="authors_recipe"`` shares one instance drawn by the authors' recipe at any
    sizes; at the authors' sizes it is the authors' instance."""
    small = jb.make_env("quadratic-pool", instance="authors_recipe", dim=4, pool_size=9,
                        num_arms=3, authors_rounds=2)
    assert small.shared_instance.pool.shape == (9, 4)
    with pytest.raises(ValueError, match="instance='authors' is the authors' instance"):
        small.replace(instance="authors")
    authors = jb.make_env("quadratic-pool", instance="authors", authors_rounds=2)
    recipe = authors.replace(instance="authors_recipe")
    assert recipe.shared_instance is authors.shared_instance  # the same draws, not redrawn
