"""Name registries: ``make_env`` / ``make_agent`` build environments and agents by kebab-case name.

A class registers itself with :func:`register_env` / :func:`register_agent`; its ``name``,
``description`` and ``paper`` class attributes feed ``jaxbandits list``. A configuration of a
class registers under a name of its own with :func:`register_alias` (the class and the field
values that make it: ``nvldb-ts-osym`` is NVLDB with ``rule="ts-osym"``).

Presets are data (``Agent.presets``): ``make_agent`` merges them into concrete field values, so a
made agent (and the configuration a result saves) holds the numbers that run. The rule: a field
the caller sets wins; then an environment's assumptions (``env=``); then the agent's preset
fills every field left at None. A preset value that depends on the context dimension d (a
:class:`~jaxbandits.core.PerDim`, e.g. ``2 sqrt(d log T)``) is filled when ``env=`` gives d;
without an environment it stays None and is computed from the spec's d while tracing.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
from collections.abc import Mapping
from typing import Any, TypeVar

import numpy as np

from jaxbandits.core import Agent, Env, check_agent_class, check_inputs

__all__ = [
    "AGENTS",
    "ALIASES",
    "AgentAlias",
    "ENVS",
    "agent_names",
    "default_agent_names",
    "describe_agent",
    "env_names",
    "make_agent",
    "make_env",
    "register_agent",
    "register_alias",
    "register_env",
    "well_specified",
]

ENVS: dict[str, type[Env]] = {}
AGENTS: dict[str, type[Agent]] = {}
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class AgentAlias:
    """A registered name for a configuration of an agent class.

    Attributes:
      name: the registered name (``AGENTS[name]`` is ``cls``).
      cls: the agent class.
      fields: the field values that make the configuration (a caller's overrides win).
      description, paper: what ``jaxbandits list`` shows.
    """

    name: str
    cls: type[Agent]
    fields: Mapping[str, Any]
    description: str
    paper: str


ALIASES: dict[str, AgentAlias] = {}


def register_env(cls: type[Env]) -> type[Env]:
    """Class decorator: registers an environment under ``cls.name``."""
    return _register(ENVS, cls, "environment")


def register_agent(cls: type[Agent]) -> type[Agent]:
    """Class decorator: registers an agent under ``cls.name``, after checking its traits and
    the signatures of its capability methods (:func:`~jaxbandits.core.check_agent_class`)."""
    check_agent_class(cls)
    return _register(AGENTS, cls, "agent")


def register_alias(name: str, cls: type[Agent], fields: Mapping[str, Any], *,
                   description: str, paper: str | None = None) -> AgentAlias:
    """Registers ``name`` as ``cls`` with the field values ``fields`` (no new class): ``make_agent
    (name, **overrides)`` builds ``cls(**{**fields, **overrides})``.

    Example::

        register_alias("nvldb-ts-osym", NVLDB, {"rule": "ts-osym", "variance": "aware"},
                       description="NVLDB-TS-OSYM: ...")
    """
    check_agent_class(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    for field in fields:
        if field not in known:
            raise _unknown(field, sorted(known), f"field of agent {cls.__name__} (alias {name!r}):")
    alias = AgentAlias(name, cls, types.MappingProxyType(dict(fields)), description,
                       cls.paper if paper is None else paper)
    if not name or (name in AGENTS and ALIASES.get(name) != alias):
        raise ValueError(f"an agent named {name!r} is already registered ({AGENTS.get(name)})")
    AGENTS[name], ALIASES[name] = cls, alias
    return alias


def describe_agent(name: str) -> tuple[str, str]:
    """``(description, paper)`` of the agent registered as ``name`` (a class or an alias)."""
    alias = ALIASES.get(name)
    return (alias.description, alias.paper) if alias else (AGENTS[name].description,
                                                           AGENTS[name].paper)


def make_env(name: str, **overrides: Any) -> Env:
    """Builds the environment registered as ``name`` with field ``overrides``; validates it.

    Example::

        env = jb.make_env("linear", dim=10, num_arms=100, noise_std=1.0)
    """
    return _make(ENVS, name, "environment", overrides)


def make_agent(name: str, *, env: Env | None = None, horizon: int | None = None,
               **overrides: Any) -> Agent:
    """Builds the agent registered as ``name`` with field ``overrides``; validates it.

    Sizes come from the environment's spec at ``init``, so no dimensions are needed::

        agent = jb.make_agent("lin-ts", explore_scale=0.5)

    With ``env``, the agent is made **well specified** for it: every field the environment's
    :meth:`~jaxbandits.Env.assumptions` determine (the noise scale, the prior's precision
    ``reg = noise_std^2 / prior_var``, the parameter-norm bound, a horizon-sized ring buffer on
    changing arm sets when ``horizon`` is given; see :meth:`~jaxbandits.Agent.assume`) takes the
    environment's value unless ``overrides`` sets it; an agent that cannot act on ``env`` raises
    ``ValueError``. :func:`well_specified` shows the values taken::

        env = jb.make_env("russo")                         # noise 1, theta* ~ N(0, 10 I)
        agent = jb.make_agent("lin-ts", env=env)           # noise_std=1.0, reg=0.1
    """
    if env is None:
        if horizon is not None:
            raise ValueError("make_agent: horizon is used only with env= (it sizes buffers)")
        return _with_preset(_make(AGENTS, name, "agent", overrides))
    agent = _make(AGENTS, name, "agent", overrides)
    if not isinstance(env, Env):
        raise ValueError(f"make_agent: env must be a jaxbandits Env (e.g. "
                         f"jb.make_env('linear')), got {env!r}")
    spec = env.spec()
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(f"agent {name!r} cannot act on environment {env.name!r} "
                         f"({spec.action_kind!r} actions; it plays {agent.action_kinds})")
    check_inputs(spec, agent, env.name, name)
    assumed = {f: v for f, v in well_specified(agent, env, horizon).items() if f not in overrides}
    if assumed:
        agent = agent.replace(**assumed)
        agent.validate()
    return _with_preset(agent, spec.dim)


def well_specified(agent: Agent, env: Env, horizon: int | None = None) -> dict[str, Any]:
    """``{field: value}`` that make ``agent`` well specified for ``env`` (over ``horizon``
    rounds, if given): the environment's assumptions mapped onto the fields the agent has
    (:meth:`~jaxbandits.Agent.assume`), only where they differ from the agent's values.

    Example::

        jb.well_specified(jb.make_agent("lin-ts"), jb.make_env("russo"))
        # {'noise_std': 1.0, 'reg': 0.1}
    """
    if horizon is not None and (isinstance(horizon, (bool, np.bool_))
                                or not isinstance(horizon, (int, np.integer)) or horizon < 1):
        raise ValueError(f"horizon must be a positive integer, got {horizon!r}")
    if not isinstance(env, Env):
        raise ValueError(f"env must be a jaxbandits Env (e.g. jb.make_env('linear')), got "
                         f"{env!r}")
    horizon = None if horizon is None else int(horizon)
    assumptions = dataclasses.replace(env.assumptions(), task=env.task)
    values = agent.assume(assumptions, env.spec(), horizon)
    return {f: v for f, v in values.items() if not _same(getattr(agent, f), v)}


def default_agent_names(env: Env) -> list[str]:
    """The registered agents that ``jaxbandits run`` plays on ``env`` by default: those whose
    model family (:attr:`~jaxbandits.Agent.model_family`) is among the environment's
    ``agent_families`` and that can act on its action set, in registration order."""
    spec, families = env.spec(), env.agent_families
    names = []
    for name, cls in AGENTS.items():
        agent = cls()
        if (agent.model_family in families and spec.action_kind in agent.action_kinds
                and spec.inputs in agent.input_kinds):
            names.append(name)
    return names


def env_names() -> list[str]:
    """Registered environment names, sorted."""
    return sorted(ENVS)


def agent_names(family: str | None = None) -> list[str]:
    """Registered agent names (of one ``family`` if given), in registration order."""
    return [n for n, c in AGENTS.items() if family is None or c.family == family]


def _same(current: Any, value: Any) -> bool:
    if isinstance(current, Agent) or isinstance(value, Agent):
        return current == value
    try:
        return bool(current == value)
    except (TypeError, ValueError):  # arrays (a swept leaf)
        return False


def _register(table: dict[str, type], cls: type[T], what: str) -> type[T]:
    name = getattr(cls, "name", "")
    if not name:
        raise ValueError(f"{cls.__name__} has no `name` to register the {what} under")
    if name in table and table[name] is not cls:
        raise ValueError(f"an {what} named {name!r} is already registered ({table[name]})")
    table[name] = cls
    return cls


def _unknown(name: str, choices: list[str], what: str) -> ValueError:
    close = difflib.get_close_matches(name, choices, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return ValueError(f"unknown {what} {name!r}{hint} (known: {', '.join(sorted(choices))})")


def _with_preset(agent: Agent, dim: int | None = None) -> Agent:
    """``agent`` with its preset merged into the fields left at None, validated if changed."""
    filled = agent.with_preset(dim)
    if filled is not agent:
        filled.validate()
    return filled


def _preset_fields(cls: type[Agent], name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The constructor's fields: the alias's, a ``preset=`` of a class without a ``preset``
    field (its values, under the overrides), and the caller's ``overrides``."""
    alias = ALIASES.get(name)
    fields = {**(alias.fields if alias else {}), **overrides}
    if "preset" in fields and cls.presets and not any(
            f.name == "preset" for f in dataclasses.fields(cls)):
        preset = fields.pop("preset")
        if preset not in cls.presets:
            raise _unknown(str(preset), [str(p) for p in cls.presets], f"preset of agent {name!r}:")
        fields = {**cls.presets[preset], **fields}
    return fields


def _make(table: dict[str, type], name: str, what: str, overrides: dict[str, Any]):
    if not isinstance(name, str):
        maker = "make_env" if what == "environment" else "make_agent"
        raise ValueError(f"{maker}: the {what} name must be a string such as "
                         f"{next(iter(table), 'linear')!r}, got {name!r} (known: "
                         f"{', '.join(sorted(table))})")
    if name not in table:
        raise _unknown(name, list(table), what)
    cls = table[name]
    if table is AGENTS:
        overrides = _preset_fields(cls, name, overrides)
    fields = {f.name for f in dataclasses.fields(cls)}
    for field in overrides:
        if field not in fields:
            raise _unknown(field, sorted(fields), f"field of {what} {name!r}:")
    obj = cls(**overrides)
    try:
        obj.validate()
    except ValueError as err:  # an alias's instance may describe itself by other fields
        if table is not AGENTS or name not in ALIASES or name in str(err):
            raise
        raise ValueError(f"agent {name!r}: {err}") from err
    return obj
