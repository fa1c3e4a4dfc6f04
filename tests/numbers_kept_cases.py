"""The fixed tiny experiments whose arrays are kept bit for bit (see ``test_numbers_kept.py``).

One case per (registered agent, action kind it plays) and one per registered environment.
Each runs ``HORIZON`` rounds and ``NUM_RUNS`` runs in blocks of ``BLOCK_RUNS`` (so one block
is padded) from the key ``KEY``; only the cumulative regret and reward are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

import jaxbandits as jb
from jaxbandits.registry import AGENTS, ENVS

FILE = "numbers_kept.npz"
META = "numbers_kept.json"
HORIZON, NUM_RUNS, BLOCK_RUNS, KEY = 24, 3, 2, 7

# The conformance suite's tiny environments and cheaper agent settings.
_TINY = {
    "index": lambda: jb.make_env("linear", dim=3, num_arms=5),
    "vector": lambda: jb.make_env("linear-sphere", dim=3),
    "pair": lambda: jb.make_env("dueling-synthetic", utility="linear", dim=3, num_arms=4),
}
_NEURAL_PAIR = lambda: jb.make_env("dueling-square", dim=3, num_arms=4)  # noqa: E731


def _small(name: str) -> dict:
    cls = AGENTS[name]
    if name in ("neural-es",):
        return dict(ensemble_size=5, num_grad_steps=10)
    if name in ("neural-ucb", "neural-ts"):
        return dict(num_grad_steps=20)
    if name in ("glm-es", "ucb-glm", "glm-tsl"):
        return dict(warmup=10)  # the defaults' warm-ups exceed HORIZON
    if name == "glm-es-dt":
        return dict(agent=jb.agents.GLMES(ensemble_size=20, warmup=10))
    if name == "neural-es-dt":
        return dict(agent=jb.agents.NeuralES(ensemble_size=5, num_grad_steps=10))
    if cls.family == "dueling" and name.startswith(("nvldb", "nldb")):
        return dict(width=8, learning_rate=0.01, buffer_size=64)
    if name in ("ndb-ucb", "ndb-ts"):
        return dict(width=8, buffer_size=64, learning_rate=0.01, num_grad_steps=20)
    if name in ("neural-ensemble-pp", "ensemble-plus", "epinet", "neural-greedy"):
        return dict(backbone=jb.nets.MLPBackbone(hidden=(8, 8)), update_start=8, batch_size=8,
                    buffer_size=64, learning_rate=0.01, num_grad_steps=2)
    if name == "lmc-ts":
        return dict(backbone=jb.nets.MLPBackbone(hidden=(8, 8), activation="leaky_relu"),
                    num_grad_steps=5, buffer_size=64)
    return {}


def agent_cases() -> Iterator[tuple[str, Callable]]:
    for name, cls in AGENTS.items():
        for kind in cls.action_kinds:
            if kind not in _TINY:
                continue
            neural_pair = kind == "pair" and name.startswith(("nvldb", "nldb", "ndb"))
            make_env = _NEURAL_PAIR if neural_pair else _TINY[kind]
            yield (f"agent:{name}:{kind}",
                   lambda n=name, e=make_env: (e(), jb.make_agent(n, **_small(n))))


def env_cases() -> Iterator[tuple[str, Callable]]:
    for name in ENVS:
        def make(n=name):
            env = jb.make_env(n)
            kind = env.spec().action_kind
            agent = jb.make_agent("random") if kind != "vector" else jb.make_agent("lin-ts")
            return env, agent
        yield f"env:{name}", make


def play(env, agent) -> tuple[np.ndarray, np.ndarray]:
    """The case's ``(NUM_RUNS, S)`` cumulative regret and reward as NumPy arrays."""
    result = jb.simulate(env, agent, KEY, HORIZON, NUM_RUNS, block_runs=BLOCK_RUNS,
                         progress=False)
    return np.asarray(result.cumulative_regret), np.asarray(result.cumulative_reward)
