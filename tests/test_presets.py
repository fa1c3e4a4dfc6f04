"""One preset mechanism: presets are data (``Agent.presets``) that ``make_agent`` merges into
concrete field values, so a made agent and the configuration a result saves hold the numbers
that run (a value that depends on the context dimension: where ``env=`` gives it)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.agents.lmcts import LMCTS_PRESETS
from jaxbandits.agents.neural_ensemble import NEURAL_ENSEMBLE_PRESETS
from jaxbandits.registry import AGENTS, register_agent
from jaxbandits.results import config_of

PRESET_AGENTS = ["neural-ensemble-pp", "ensemble-plus", "epinet", "neural-greedy", "lmc-ts",
                 "maxinp", "maxpair-ucb", "colstim"]


@pytest.mark.parametrize("name", PRESET_AGENTS)
def test_a_made_agent_holds_its_presets_values(name):
    agent = jb.make_agent(name)
    preset = agent.preset_values()
    assert preset, name
    unset = {f.name for f in dataclasses.fields(agent) if f.default is None}
    for field, value in preset.items():
        if field not in unset:  # a subclass's own default (neural-greedy's ensemble_size=1)
            continue
        if isinstance(value, jb.core.PerDim):  # d is not known without an environment
            assert getattr(agent, field) is None
        else:
            assert getattr(agent, field) == value, (name, field)
    assert agent.with_preset() is agent  # nothing left to fill


def test_the_saved_configuration_records_the_values_that_ran():
    config = config_of(jb.make_agent("neural-ensemble-pp", preset="shuttle", learning_rate=0.01))
    shuttle = NEURAL_ENSEMBLE_PRESETS["shuttle"]
    assert (config["reg"], config["num_grad_steps"], config["prior_scale"]) == (
        0.01, shuttle["num_grad_steps"], shuttle["prior_scale"])
    assert config["learning_rate"] == 0.01 and config["preset"] == "shuttle"
    lmc = config_of(jb.make_agent("lmc-ts", preset="shuttle"))
    assert (lmc["learning_rate"], lmc["beta_inv"]) == (LMCTS_PRESETS["shuttle"]["learning_rate"],
                                                       LMCTS_PRESETS["shuttle"]["beta_inv"])
    assert config_of(jb.make_agent("maxinp", preset="rcdp"))["reg"] == 1.0


def test_explicit_fields_win_and_the_environment_chooses_the_preset():
    agent = jb.make_agent("epinet", preset="quadratic", prior_scale=2.0)
    assert (agent.prior_scale, agent.num_grad_steps) == (2.0, 4)
    pool = jb.make_env("quadratic-pool")
    made = jb.make_agent("neural-ensemble-pp", env=pool)  # the task's preset, then merged
    assert (made.preset, made.num_grad_steps, made.prior_scale) == ("quadratic", 4, 5.0)


def test_dimension_dependent_values_are_filled_where_the_environment_gives_d():
    env = jb.make_env("dueling-cosine")
    d, horizon = env.spec().dim, 500
    agent = jb.make_agent("colstim", env=env, horizon=horizon)
    root = math.sqrt(d * math.log(horizon))
    np.testing.assert_allclose(agent.explore_scale, 2 * root, rtol=1e-6)
    np.testing.assert_allclose(agent.threshold, root, rtol=1e-6)
    assert config_of(agent)["explore_scale"] == pytest.approx(2 * root, rel=1e-6)
    assert jb.make_agent("maxpair-ucb", env=env, preset="rcdp").explore_scale == math.sqrt(d)
    # without an environment the same value comes from the spec's d where the agent reads it
    bare = jb.make_agent("colstim", horizon_hint=horizon)
    assert bare.explore_scale is None
    np.testing.assert_allclose(bare.setting("explore_scale", d), agent.explore_scale)


def test_a_class_without_a_preset_field_takes_its_preset_as_values():
    appendix = jb.make_agent("nvldb-ucb-asym", preset="appendix")
    assert (appendix.width, appendix.learning_rate) == (32, 1e-2)
    assert appendix == jb.make_agent("nvldb-ucb-asym", **jb.agents.dueling_preset("appendix"))
    assert jb.make_agent("nldb-ts-csym", preset="appendix", width=16).width == 16
    assert "preset" not in {f.name for f in dataclasses.fields(AGENTS["nvldb-ucb-asym"])}
    with pytest.raises(ValueError, match="unknown preset .*'apendix'.*did you mean 'appendix'"):
        jb.make_agent("nvldb-ucb-asym", preset="apendix")


def test_a_preset_naming_no_field_fails_at_registration():
    class Bad(jb.agents.LinTS):
        name = "bad-preset"
        presets = {None: {"explore": 1.0}}

    with pytest.raises(ValueError, match=r"preset None sets \['explore'\]"):
        register_agent(Bad)
    assert "bad-preset" not in AGENTS
