"""Name registries: ``make_env`` / ``make_agent`` build environments and agents by kebab-case name.

A class registers itself with :func:`register_env` / :func:`register_agent`; its ``name``,
``description`` and ``paper`` class attributes feed ``jaxbandits list``.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, TypeVar

from jaxbandits.core import Agent, Env

__all__ = [
    "AGENTS",
    "ENVS",
    "agent_names",
    "env_names",
    "make_agent",
    "make_env",
    "register_agent",
    "register_env",
]

ENVS: dict[str, type[Env]] = {}
AGENTS: dict[str, type[Agent]] = {}
T = TypeVar("T")


def register_env(cls: type[Env]) -> type[Env]:
    """Class decorator: registers an environment under ``cls.name``."""
    return _register(ENVS, cls, "environment")


def register_agent(cls: type[Agent]) -> type[Agent]:
    """Class decorator: registers an agent under ``cls.name``."""
    return _register(AGENTS, cls, "agent")


def make_env(name: str, **overrides: Any) -> Env:
    """Builds the environment registered as ``name`` with field ``overrides``; validates it.

    Example::

        env = jb.make_env("linear", dim=10, num_arms=100, noise_std=1.0)
    """
    return _make(ENVS, name, "environment", overrides)


def make_agent(name: str, **overrides: Any) -> Agent:
    """Builds the agent registered as ``name`` with field ``overrides``; validates it.

    Sizes come from the environment's spec at ``init``, so no dimensions are needed::

        agent = jb.make_agent("lin-ts", explore_scale=0.5)
    """
    return _make(AGENTS, name, "agent", overrides)


def env_names() -> list[str]:
    """Registered environment names, sorted."""
    return sorted(ENVS)


def agent_names(family: str | None = None) -> list[str]:
    """Registered agent names (of one ``family`` if given), in registration order."""
    return [n for n, c in AGENTS.items() if family is None or c.family == family]


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


def _make(table: dict[str, type], name: str, what: str, overrides: dict[str, Any]):
    if name not in table:
        raise _unknown(name, list(table), what)
    cls = table[name]
    fields = {f.name for f in dataclasses.fields(cls)}
    for field in overrides:
        if field not in fields:
            raise _unknown(field, sorted(fields), f"field of {what} {name!r}:")
    obj = cls(**overrides)
    obj.validate()
    return obj
