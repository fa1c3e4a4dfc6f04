"""The fixed tiny experiments whose arrays are kept bit for bit (see ``test_numbers_kept.py``).

One case per (registered agent, action kind it plays) and one per registered environment.
Each runs ``HORIZON`` rounds and ``NUM_RUNS`` runs in blocks of ``BLOCK_RUNS`` (so one block
is padded) from the key ``KEY``; only the cumulative regret and reward are kept.

Bits depend on the CPU as well as on the jax version: XLA compiles for the host's vector
instructions, and another vector width sums in another order (the same cases differ in the
last bit on one machine with XLA's ``--xla_cpu_max_isa`` at AVX and at its native AVX2). So
each set of saved arrays names the CPU it was recorded on (:func:`cpu_signature`), and
:func:`saved_set` picks this machine's.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

import jaxbandits as jb
from jaxbandits.registry import AGENTS, ENVS

FILE = "numbers_kept.npz"
META = "numbers_kept.json"
DATA = Path(__file__).resolve().parent / "data"
HORIZON, NUM_RUNS, BLOCK_RUNS, KEY = 24, 3, 2, 7

# Tiny environments, one per action kind, and cheaper agent settings: these cases' and the
# conformance suite's (whose learning check plays these very programs for longer).
TINY_ENVS = {
    "index": lambda: jb.make_env("linear", dim=3, num_arms=5),
    "vector": lambda: jb.make_env("linear-sphere", dim=3),
    "pair": lambda: jb.make_env("dueling-synthetic", utility="linear", dim=3, num_arms=4),
}
# The neural dueling agents learn on the square task (which no linear model fits).
_NEURAL_PAIR = lambda: jb.make_env("dueling-square", dim=3, num_arms=4)  # noqa: E731


def small_settings(name: str) -> dict:
    """Cheaper settings for the costly agents at these tiny sizes (the contract is the same;
    full defaults are exercised in each family's own tests)."""
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


def is_neural_pair(name: str, kind: str) -> bool:
    """Whether ``name`` plays pairs with a network (its tiny task is the square one)."""
    return kind == "pair" and name.startswith(("nvldb", "nldb", "ndb"))


def tiny_case(name: str, kind: str) -> tuple[jb.Env, jb.Agent]:
    """The agent ``name`` (:func:`small_settings`) on the tiny environment of ``kind``."""
    env = _NEURAL_PAIR() if is_neural_pair(name, kind) else TINY_ENVS[kind]()
    return env, jb.make_agent(name, **small_settings(name))


def agent_cases() -> Iterator[tuple[str, Callable]]:
    for name, cls in AGENTS.items():
        for kind in cls.action_kinds:
            if kind in TINY_ENVS:
                yield f"agent:{name}:{kind}", lambda n=name, k=kind: tiny_case(n, k)


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


def cpu_signature() -> str:
    """The CPU as XLA's code generator sees it: architecture, vendor, family, model and the
    widest vector extension, e.g. ``"x86_64-AuthenticAMD-25-1-avx2"``."""
    info: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as lines:
            for line in lines:
                key, _, value = line.partition(":")
                info.setdefault(key.strip(), value.strip())
    except OSError:  # not Linux: the architecture only
        pass
    flags = set(info.get("flags", info.get("Features", "")).split())
    isa = next((f for f in ("avx512f", "avx2", "avx", "sve", "asimd") if f in flags), "")
    parts = (platform.machine(), info.get("vendor_id", ""), info.get("cpu family", ""),
             info.get("model", ""), isa)
    return "-".join(part.replace(" ", "") for part in parts if part)


def set_paths(file: str, meta: str, cpu: str | None = None) -> tuple[Path, Path]:
    """The ``(arrays, metadata)`` paths of the set recorded on ``cpu`` (default: this machine's
    :func:`cpu_signature`): ``<stem>.<cpu>.npz`` and ``.json`` beside ``file`` and ``meta``."""
    cpu = cpu or cpu_signature()
    return DATA / f"{Path(file).stem}.{cpu}.npz", DATA / f"{Path(meta).stem}.{cpu}.json"


def saved_set(file: str, meta: str) -> tuple[Path, dict] | None:
    """``(arrays, metadata)`` of the set recorded on this machine's CPU (:func:`set_paths`);
    where this CPU has none, the first recording ``file``, whose CPU was not noted (the
    development machine of 2026-11-27); None where neither exists."""
    for npz, json_path in (set_paths(file, meta), (DATA / file, DATA / meta)):
        if npz.is_file():
            return npz, json.loads(json_path.read_text())
    return None


def same_streams(meta: dict) -> bool:
    """Whether this machine draws the random streams ``meta``'s set was recorded with (the jax
    version and backend; the CPU is chosen by :func:`saved_set`)."""
    import jax

    return (jax.__version__, jax.default_backend()) == (meta["jax"], meta["backend"])
