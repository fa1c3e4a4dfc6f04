"""The runner's input checks: sizes, keys, record steps, devices, grids, run information, and that
an environment and an agent fit (by abstract evaluation, before anything compiles)."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import Agent, Env, check_inputs, float_dtype
from jaxbandits.results import check_metric_names, environment_info

__all__ = [
    "as_arrays",
    "as_key",
    "as_size",
    "check_agents",
    "check_devices",
    "check_grid",
    "check_grid_values",
    "check_pair",
    "check_run_info",
    "check_sizes",
    "host_array",
    "host_stack",
    "label_of",
    "log_spaced_steps",
    "record_steps",
    "safe_name",
    "stack_values",
    "warn_long_warmups",
]

PyTree = Any


def log_spaced_steps(horizon: int, num: int) -> np.ndarray:
    """About ``num`` distinct log-spaced steps in ``[1, horizon]``, always ending at ``horizon``."""
    steps = np.unique(np.round(np.geomspace(1, horizon, max(num, 2))).astype(np.int64))
    return np.unique(np.append(steps, horizon)).astype(np.int32)


# ------------------------------------------------------------------------------------------------
# Implementation.


def check_devices(devices) -> list:
    if devices is None:
        return list(jax.devices())
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence | np.ndarray):
        raise ValueError(f"devices must be a sequence of jax devices, got {devices!r}")
    devices = list(devices)
    if not devices:
        raise ValueError("devices must name at least one device (got an empty sequence)")
    for d in devices:
        if not isinstance(d, jax.Device):
            raise ValueError(f"devices must be jax devices (jax.devices()), got {d!r}")
    if len(set(devices)) != len(devices):
        raise ValueError("devices must not repeat a device")
    if len({d.platform for d in devices}) != 1:
        raise ValueError("devices must all be of one platform")
    return devices


def check_agents(agents) -> None:
    if not isinstance(agents, Mapping):
        raise ValueError("compare takes agents as a mapping {name: agent}, e.g. "
                         "{'lin-ts': jb.make_agent('lin-ts')}; got "
                         f"{type(agents).__name__}")
    if not agents:
        raise ValueError("compare needs at least one agent")
    for label, agent in agents.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"compare: agent names must be non-empty strings, got {label!r}")
        if not isinstance(agent, Agent):
            raise ValueError(f"compare: {label!r} is not a jaxbandits Agent "
                             f"({type(agent).__name__})")
    safe = [safe_name(label) for label in agents]
    if len(set(safe)) != len(safe):
        raise ValueError("compare: agent names must stay distinct as file names")


def check_grid(grid) -> tuple[list[str], list[list[Any]]]:
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError("sweep needs a non-empty grid {field: [values, ...]}")
    names, values = [], []
    for name, v in grid.items():
        if not isinstance(name, str):
            raise ValueError(f"sweep: grid fields must be names, got {name!r}")
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence | np.ndarray):
            raise ValueError(f"sweep: grid field {name!r} needs a sequence of values, e.g. "
                             f"{{{name!r}: [{v!r}]}}; got {v!r}")
        v = list(v)
        if not v:
            raise ValueError(f"sweep: grid field {name!r} has no values")
        names.append(name)
        values.append(v)
    return names, values


def check_grid_values(env: Env, agent: Agent, names: list[str], values: list[list]) -> None:
    """Each grid field's values fit the field (an array is refused for a scalar field) and are
    distinct as the engine holds them (``[1, 1.0]`` is one float32 value, played twice)."""
    for name, vals in zip(names, values, strict=True):
        owner, field = (env, name[4:]) if name.startswith("env.") else (agent, name)
        current = getattr(owner, field, None)
        scalar = isinstance(current, (int, float, np.number)) or (
            isinstance(current, (np.ndarray, jax.Array)) and np.ndim(current) == 0)
        for i, v in enumerate(vals):
            if scalar and isinstance(v, (np.ndarray, jax.Array, list)) and np.ndim(v) > 0:
                raise ValueError(f"sweep: grid field {name!r} is a scalar field, but value #{i} "
                                 f"is an array of shape {np.shape(v)}; give a flat list of "
                                 f"scalars, e.g. {{{name!r}: [0.1, 0.3]}}")
        held = None
        try:
            held = np.asarray(stack_values(vals))
            keys = [held[i].tobytes() for i in range(len(vals))] if held.ndim == 1 else None
        except (TypeError, ValueError):
            keys = None
        if keys is None:
            keys = [repr(v) for v in vals]
        seen: dict[Any, int] = {}
        for i, k in enumerate(keys):
            if k in seen:
                j = seen[k]
                raise ValueError(f"sweep: grid field {name!r} repeats a value: {vals[j]!r} and "
                                 f"{vals[i]!r} are the same "
                                 f"{'value' if held is None else held.dtype} once converted, "
                                 "so that point would be played twice")
            seen[k] = i


def label_of(agent: Agent) -> str:
    return getattr(agent, "name", "") or type(agent).__name__


def safe_name(label: str) -> str:
    """``label`` as a file name: other characters become ``_``, and ``.`` / ``..`` are refused
    (they would name the folder or its parent)."""
    if label in (".", ".."):
        raise ValueError(f"a label cannot be {label!r}: it names a folder, not a result file")
    return "".join(c if c.isalnum() or c in "-_.=," else "_" for c in label)


def check_sizes(**sizes: int) -> None:
    for field, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"{field} must be a positive integer, got {value!r}")


def as_size(value):
    """A NumPy integer as a Python int (``horizon=np.int64(10)``); anything else unchanged,
    for :func:`check_sizes` to judge."""
    return int(value) if isinstance(value, np.integer) else value


_RUN_INFO_KEYS = ("horizon", "num_runs", "block_runs", "chunk_size", "key")


def check_run_info(run_info) -> dict[str, Any]:
    """The caller's ``run_info`` entries as a plain JSON dict (a copy); ``{}`` for None."""
    if run_info is None:
        return {}
    if not isinstance(run_info, Mapping):
        raise ValueError(f"run_info must be a dict, got {type(run_info).__name__}")
    reserved = set(environment_info([])) | set(_RUN_INFO_KEYS)
    for k in run_info:
        if not isinstance(k, str):
            raise ValueError(f"run_info keys must be strings, got {k!r}")
        if k in reserved:
            raise ValueError(f"run_info key {k!r} is recorded by the runner; the runner fills "
                             f"{sorted(reserved)}")
    try:
        return json.loads(json.dumps(dict(run_info), allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ValueError(f"run_info values must be JSON-serialisable (str, int, float, bool, "
                         f"None, lists and dicts of them): {err}") from err


def warn_long_warmups(envs, agents, labels, horizon: int) -> None:
    """Warns for each agent whose forced exploration lasts longer than the horizon."""
    for env, agent, label in zip(envs, agents, labels, strict=True):
        warmup = agent.warmup_rounds(env.spec())
        if warmup > horizon:
            warnings.warn(
                f"agent {label!r} has {warmup:,} warm-up rounds, more than the horizon "
                f"{horizon:,}: it only explores and never acts on its own rule. Pass a smaller "
                f"warmup= (e.g. make_agent(..., warmup={max(1, horizon // 10)})) or a longer "
                "horizon.", UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside jaxbandits."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1  # the function that warns is level 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def record_steps(record, horizon: int, num_records: int) -> np.ndarray:
    if isinstance(record, str):
        if record == "log":
            return log_spaced_steps(horizon, num_records)
        if record == "all":
            return np.arange(1, horizon + 1, dtype=np.int32)
        raise ValueError(f"record must be 'log', 'all' or a sequence of steps, got {record!r}")
    raw = np.asarray(record)
    whole = np.issubdtype(raw.dtype, np.integer) or (
        np.issubdtype(raw.dtype, np.floating) and bool(np.all(raw == np.round(raw))))
    if raw.dtype == bool or not whole:
        raise ValueError(f"record steps must be whole numbers of rounds, got {record!r}")
    steps = raw.astype(np.int64)
    if steps.ndim != 1 or steps.size == 0 or np.any(np.diff(steps) <= 0):
        raise ValueError("record steps must be a non-empty, strictly increasing sequence")
    if steps[0] < 1 or steps[-1] > horizon:
        raise ValueError(f"record steps must lie in [1, horizon={horizon}]")
    return steps.astype(np.int32)


def as_key(key) -> jax.Array:
    """``key`` as a single typed JAX key: an int seed becomes ``jax.random.key(seed)``, a raw
    ``(2,)`` uint32 PRNGKey is wrapped, a typed key is kept.

    Raises:
      ValueError: anything else (a bool, a batch of keys, a seed outside int64).
    """
    if isinstance(key, bool):
        raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")
    if isinstance(key, (int, np.integer)):
        if not -(2**63) <= int(key) < 2**63:
            raise ValueError(f"an int seed must lie in [-2**63, 2**63), got {key}")
        return jax.random.key(int(key))
    if not isinstance(key, (jax.Array, np.ndarray)):
        raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.shape != ():
            raise ValueError(f"key must be a single key, got shape {key.shape}")
        return key
    if key.dtype == jnp.uint32 and key.shape == (2,):
        return jax.random.wrap_key_data(key)
    raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")


def as_arrays(obj: PyTree) -> PyTree:
    """Numeric leaves as arrays of the default dtypes, so compiled programs are reused."""

    def convert(x):
        return jnp.asarray(host_array(x) if isinstance(x, (bool, int, float)) else x)

    return jax.tree.map(convert, obj)


def host_array(x: Any) -> np.ndarray:
    """A Python number or NumPy value as the NumPy array that :func:`as_arrays` puts on a device
    (a bool as bool, an int as int32, a float in the default float dtype, a NumPy value in its
    dtype as JAX holds it)."""
    if isinstance(x, bool):
        return np.asarray(x)
    if isinstance(x, int):
        return np.asarray(x, np.int32)
    if isinstance(x, float):
        return np.asarray(x, float_dtype())
    x = np.asarray(x)
    return x.astype(jax.dtypes.canonicalize_dtype(x.dtype), copy=False)


def host_stack(values: Sequence[Any]) -> np.ndarray | None:
    """``values`` as :func:`host_array` holds each, stacked on a new leading axis in the dtype
    ``jnp.stack`` would give them (JAX's type promotion, not NumPy's: an int32 beside a float32
    makes float32), or None when one is not a Python number or NumPy value (a JAX array:
    stacked with JAX instead)."""
    if not all(isinstance(v, (bool, int, float, np.ndarray, np.generic)) for v in values):
        return None
    arrays = [host_array(v) for v in values]
    dtype = jnp.result_type(*arrays)
    return np.stack([a.astype(dtype, copy=False) for a in arrays])


def stack_values(values: Sequence[Any]) -> np.ndarray | jax.Array:
    """``values`` (as :func:`as_arrays` holds each) stacked on a new leading axis: on the host by
    :func:`host_stack` (nothing compiled) when it can, else with JAX."""
    stacked = host_stack(values)
    return jnp.stack([as_arrays(v) for v in values]) if stacked is None else stacked


def check_pair(env: Env, agent: Agent) -> None:
    """Validates both and checks, by abstract evaluation (no compilation), that they fit."""
    if not isinstance(env, Env):
        raise ValueError(f"env must be a jaxbandits Env, got {type(env).__name__}")
    if not isinstance(agent, Agent):
        raise ValueError(f"agent must be a jaxbandits Agent, got {type(agent).__name__}")
    env.validate()
    agent.validate()
    spec = env.spec()
    env_name, agent_name = label_of(env), label_of(agent)
    metric_names = check_metric_names(spec.metrics, f"environment {env_name!r}: Spec.metrics")
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(
            f"agent {agent_name!r} cannot act on environment {env_name!r}: it plays "
            f"{'/'.join(agent.action_kinds)} actions, the environment needs "
            f"{spec.action_kind!r} actions"
        )
    check_inputs(spec, agent, env_name, agent_name)
    # abstract inputs: making a concrete key or round would compile small programs first
    key = jax.eval_shape(lambda: jax.random.key(0))
    t = jax.ShapeDtypeStruct((), jnp.int32)
    try:
        env_state = jax.eval_shape(env.init, key)
        context = jax.eval_shape(env.observe, key, env_state, t)
    except Exception as err:  # noqa: BLE001 - re-raised with context
        raise ValueError(f"environment {env_name!r} fails to produce a context: {err}") from err
    arms = getattr(context, "arms", None)
    if spec.action_kind in ("index", "pair"):
        if arms is None or arms.shape != (spec.num_arms, spec.dim):
            raise ValueError(
                f"dimension mismatch: environment {env_name!r} declares (num_arms, dim) = "
                f"({spec.num_arms}, {spec.dim}) but its context arms have shape "
                f"{None if arms is None else arms.shape}"
            )
    try:
        state = jax.eval_shape(lambda k: agent.init(k, spec), key)
        action, acted = jax.eval_shape(agent.act, state, key, context)
    except Exception as err:  # noqa: BLE001
        raise ValueError(
            f"dimension mismatch: agent {agent_name!r} cannot act on environment {env_name!r} "
            f"(dim={spec.dim}, num_arms={spec.num_arms}): {err}"
        ) from err
    expected = {"index": (), "pair": (2,), "vector": (spec.dim,)}[spec.action_kind]
    if action.shape != expected:
        raise ValueError(
            f"dimension mismatch: agent {agent_name!r} returned an action of shape "
            f"{action.shape}, environment {env_name!r} expects {expected} "
            f"({spec.action_kind!r} actions)"
        )
    try:
        feedback = jax.eval_shape(env.feedback, key, env_state, context, action)
        updated = jax.eval_shape(agent.update, acted, key, context, action, feedback)
    except Exception as err:  # noqa: BLE001
        raise ValueError(f"agent {agent_name!r} and environment {env_name!r} do not fit: "
                         f"{err}") from err
    _check_feedback_metrics(feedback, metric_names, env_name)
    if jax.tree.structure(updated) != jax.tree.structure(state) or any(
        (a.shape, a.dtype) != (b.shape, b.dtype)
        for a, b in zip(jax.tree.leaves(updated), jax.tree.leaves(state), strict=True)
    ):
        raise ValueError(f"agent {agent_name!r}: update must keep the state's tree, shapes and "
                         "dtypes")


def _check_feedback_metrics(feedback, names: tuple[str, ...], env_name: str) -> None:
    """The (abstract) feedback's ``metrics`` are exactly the spec's names, each a real scalar."""
    metrics = getattr(feedback, "metrics", {})
    if not isinstance(metrics, Mapping):
        raise ValueError(f"environment {env_name!r}: Feedback.metrics must be a dict "
                         f"{{name: ()}}, got {type(metrics).__name__}")
    if set(metrics) != set(names):
        raise ValueError(
            f"environment {env_name!r}: Feedback.metrics has keys {sorted(metrics)} but "
            f"Spec.metrics names {list(names)}; they must be the same names")
    for name in names:
        value = metrics[name]
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        real = dtype is not None and (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(
            dtype, jnp.integer) or dtype == jnp.bool_)
        if shape != () or not real:
            raise ValueError(f"environment {env_name!r}: Feedback.metrics[{name!r}] must be a "
                             f"real scalar (shape ()), got {dtype} of shape {shape}")
