"""The agent contract's declarations: traits and capability methods, checked at registration."""

from __future__ import annotations

import jax
import pytest

import jaxbandits as jb
from jaxbandits import core
from jaxbandits.registry import AGENTS, register_agent


def _agent_class(**namespace) -> type:
    """A fresh, unregistered agent class (name ``tmp-agent``) with ``namespace``."""
    return type("TmpAgent", (jb.Agent,), {"name": "tmp-agent", "__module__": __name__,
                                          **namespace})


def test_every_registered_agent_passes_the_class_check():
    for cls in AGENTS.values():
        core.check_agent_class(cls)


def test_a_drifted_capability_signature_fails_at_registration():
    def scores(self, state, key, arms):  # the contract says a context
        return arms @ state

    with pytest.raises(ValueError, match=r"'tmp-agent': scores must take \(state, key, context\)"
                                         r" as the Scores capability says, got \(state, key, "
                                         r"arms\)"):
        register_agent(_agent_class(scores=scores))
    with pytest.raises(ValueError, match="log_prob must take"):
        register_agent(_agent_class(log_prob=lambda self, state, key, context: 0.0))
    assert "tmp-agent" not in AGENTS


@pytest.mark.parametrize("namespace, message", [
    ({"action_kinds": ("arm",)}, "action_kinds must be a non-empty tuple"),
    ({"input_kinds": "arms"}, "input_kinds must be a non-empty tuple"),
    ({"reg_is_prior": 1}, "reg_is_prior must be True or False"),
    ({"runs_per_block": 0}, "runs_per_block must be a positive integer or None"),
    ({"family": None}, "family must be a string"),
])
def test_a_wrong_trait_fails_at_registration(namespace, message):
    with pytest.raises(ValueError, match=message):
        register_agent(_agent_class(**namespace))
    assert "tmp-agent" not in AGENTS


def test_capabilities_are_types():
    lin_ts, softmax = jb.make_agent("lin-ts"), jb.make_agent("softmax")
    assert isinstance(lin_ts, core.Scores) and isinstance(lin_ts, core.Parameter)
    assert not isinstance(lin_ts, core.LogProb) and not isinstance(lin_ts, core.Wrapper)
    assert isinstance(softmax, core.LogProb) and isinstance(softmax, core.Logits)
    assert core.wrapped_agent(softmax) == softmax.agent
    assert core.wrapped_agent(lin_ts) is None
    dt = jb.make_agent("neural-es-dt")
    assert core.wrapped_agent(dt) is dt.agent


def test_runs_per_block_is_a_trait_read_through_wrappers():
    from jaxbandits.simulate import default_block_runs

    assert jb.Agent.runs_per_block is None and AGENTS["lmc-ts"].runs_per_block == 8
    assert default_block_runs(jb.make_agent("lin-ts"), "cpu") == 128
    assert default_block_runs(jb.make_agent("lmc-ts"), "cpu") == 8
    glm = jb.make_agent("glm-es-dt")
    assert default_block_runs(glm, "cpu") == default_block_runs(glm.agent, "cpu")


def test_softmax_of_neural_ucb_uses_its_scores():
    """NeuralUCB's scores take the round's context like every other agent's."""
    env = jb.make_env("linear", dim=2, num_arms=3)
    agent = jb.make_agent("neural-ucb", width=4, num_grad_steps=1)
    state = agent.init(jax.random.key(0), env.spec())
    context = env.observe(jax.random.key(1), env.init(jax.random.key(2)), 0)
    assert agent.scores(state, jax.random.key(3), context).shape == (3,)
