"""The ``run`` and ``sweep`` commands."""

from __future__ import annotations

import argparse
import math
from typing import Any

from jaxbandits.cli._experiment import _Experiment
from jaxbandits.cli._parser import DEFAULT_ENV, DEFAULT_EXPERIMENT
from jaxbandits.cli._settings import _has_field, _raw_settings, _read_value, _read_values


def run(args: argparse.Namespace) -> int:
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import AGENTS, default_agent_names

    default = args.env is None and args.agents is None
    if default and args.runs is None and args.block_runs is None:
        args.block_runs = DEFAULT_EXPERIMENT["block_runs"]
    exp = _Experiment(args, DEFAULT_ENV if args.env is None else args.env)
    if default:
        names = list(DEFAULT_EXPERIMENT["agents"])
        exp.tuned = {n: dict(v) for n, v in DEFAULT_EXPERIMENT["tuned"].items()}
        exp.log_y = exp.log_y or DEFAULT_EXPERIMENT["log_y"]
    elif args.agents is None:
        names = default_agent_names(exp.env)
    else:
        names = [n.strip() for n in args.agents.split(",") if n.strip()]
        if not names:
            raise ValueError("--agents names no agent")
    settings = exp.settings
    common = settings.pop("agent", {})
    for target in settings:
        if target not in names:
            raise ValueError(f"--set {target}.…: {target!r} is not among the agents run "
                             f"({', '.join(names)})")
    if common and not any(_has_field(AGENTS.get(n), f) for n in names for f in common):
        raise ValueError(f"--set agent.{next(iter(common))}: no agent run has that field")
    agents = {}
    for name in names:
        cls = AGENTS.get(name)
        own = {**_read_values(cls, "agent", {f: v for f, v in common.items()
                                             if _has_field(cls, f)}),
               **_read_values(cls, name, settings.get(name, {}))}
        agents[name] = exp.agent(name, own)

    title = f"{exp.env_name}: T = {args.horizon:,}, {args.runs} runs"
    return exp.execute(lambda options: jb.compare(exp.env, agents, jax.random.key(args.seed),
                                                  args.horizon, args.runs, **options),
                       title, "<agent>.json/.npy")


def sweep(args: argparse.Namespace) -> int:
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import AGENTS, ENVS

    exp = _Experiment(args, args.env)
    cls = AGENTS.get(args.agent)
    if cls is None:
        jb.make_agent(args.agent)  # raises, naming close matches
    settings = exp.settings
    own = _read_values(cls, "agent", settings.pop("agent", {}))
    own.update(_read_values(cls, args.agent, settings.pop(args.agent, {})))
    if settings:
        raise ValueError(f"--set {next(iter(settings))}.…: a sweep has one agent; use agent.FIELD "
                         f"or {args.agent}.FIELD")
    grid: dict[str, list[Any]] = {}
    for target, fields in _raw_settings(args.grid, "--grid").items():
        if target not in ("agent", "env", args.agent):
            raise ValueError(f"--grid {target}.…: the target is agent (or {args.agent}) or env")
        for field, raw in fields.items():
            owner = ENVS.get(args.env) if target == "env" else cls
            values = [_read_value(owner, "--grid " + target, field, v.strip())
                      for v in raw.split(",") if v.strip()]
            if not values:
                raise ValueError(f"--grid {target}.{field}: give comma-separated values")
            grid[f"env.{field}" if target == "env" else field] = values
    agent = exp.agent(args.agent, own)

    def compute(options):
        print(f"sweep of {args.agent} over " + " x ".join(f"{k} ({len(v)})"
                                                          for k, v in grid.items())
              + f" = {math.prod(len(v) for v in grid.values())} grid points")
        return jb.sweep(exp.env, agent, jax.random.key(args.seed), grid, args.horizon,
                        args.runs, **options)

    title = f"{exp.env_name}, {args.agent}: T = {args.horizon:,}, {args.runs} runs"
    return exp.execute(compute, title, "final.png, <point>.json/.npy", grid=grid)
