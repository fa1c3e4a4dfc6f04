"""The ``jaxbandits`` command line: ``run`` an experiment, ``list`` what is registered.

``jaxbandits run`` with no arguments runs the built-in default experiment: the ``linear``
environment (d = 20, K = 50), T = 10,000, 200 runs, every registered linear agent, and writes the
saved results, ``summary.md`` and ``regret.png`` to a results folder. For a replay environment
(logged data such as ``obd-replay``) the table and the plot (``ctr.png``) show the final
click-through rate over accepted rounds instead of regret.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "parse_settings"]

DEFAULT_ENV = "linear"
DEFAULT_HORIZON = 10_000
DEFAULT_RUNS = 200


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.handler(args)
    except ValueError as err:
        print(f"jaxbandits: error: {err}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxbandits", description="JAX-vectorised contextual-bandit simulations."
    )
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run an experiment (default: linear, all linear agents)")
    run.add_argument("--env", default=DEFAULT_ENV, help="environment name (default: linear)")
    run.add_argument("--agents", default=None,
                     help="comma-separated agent names (default: every linear agent)")
    run.add_argument("--horizon", type=int, default=DEFAULT_HORIZON, help="rounds T")
    run.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="independent runs (seeds)")
    run.add_argument("--seed", type=int, default=0, help="the experiment's seed")
    run.add_argument("--out", default=None, help="results folder (default: results/<time>)")
    run.add_argument("--set", action="append", default=[], metavar="TARGET.FIELD=VALUE",
                     help="override a hyperparameter: env.noise_std=1, agent.reg=0.5 (every "
                          "agent that has the field) or lin-ucb.explore_scale=0.2; repeatable")
    run.add_argument("--chunk-size", type=int, default=None, help="rounds per compiled chunk")
    run.add_argument("--cpu-devices", type=int, default=None,
                     help="split the CPU into this many devices, the runs sharded over them "
                          "(default: one per core; 1 for XLA's single CPU device)")
    run.add_argument("--log-x", action="store_true", help="logarithmic round axis in the plot")
    run.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    run.set_defaults(handler=_run)

    lst = sub.add_parser("list", help="list environments and agents with their papers")
    lst.set_defaults(handler=_list)
    return parser


def parse_settings(items: list[str]) -> dict[str, dict[str, Any]]:
    """Parses ``--set TARGET.FIELD=VALUE`` items into ``{target: {field: value}}``.

    Values are read as JSON when they parse (numbers, true/false, null, lists), else as strings.
    """
    settings: dict[str, dict[str, Any]] = {}
    for item in items:
        target_field, sep, raw = item.partition("=")
        target, dot, field = target_field.rpartition(".")
        if not sep or not dot or not target or not field:
            raise ValueError(f"--set expects TARGET.FIELD=VALUE (e.g. env.noise_std=1), got "
                             f"{item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        settings.setdefault(target, {})[field] = value
    return settings


def _run(args: argparse.Namespace) -> int:
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import AGENTS, agent_names

    jb.use_cpu_cores(args.cpu_devices)

    settings = parse_settings(args.set)
    env = jb.make_env(args.env, **settings.pop("env", {}))
    names = agent_names("linear") if args.agents is None else [
        n.strip() for n in args.agents.split(",") if n.strip()]
    if not names:
        raise ValueError("--agents names no agent")
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
        own = {f: v for f, v in common.items() if _has_field(cls, f)}
        agents[name] = jb.make_agent(name, **own, **settings.get(name, {}))
        if env.spec().action_kind not in agents[name].action_kinds:
            raise ValueError(f"agent {name!r} cannot act on environment {args.env!r} "
                             f"({env.spec().action_kind!r} actions)")

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("results") / f"{args.env}-{stamp}"
    print(f"jaxbandits: {args.env} ({_describe(env)}), T = {args.horizon:,}, "
          f"{args.runs} runs, {len(jax.devices())} {jax.default_backend()} device(s)")
    progress = False if args.no_progress else None
    results = jb.compare(env, agents, jax.random.key(args.seed), args.horizon, args.runs,
                         chunk_size=args.chunk_size, progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    for name, result in results.items():
        result.save(out / name)
    replay = env.spec().replay
    plot_name = "ctr.png" if replay else "regret.png"
    jb.plot_regret(results, out / plot_name, log_x=args.log_x,
                   title=f"{args.env}: T = {args.horizon:,}, {args.runs} runs")
    table = _table(results)
    (out / "summary.md").write_text(
        f"# {args.env}, T = {args.horizon}, {args.runs} runs, seed {args.seed}\n\n{table}\n")
    _print_table(results)
    print(f"results written to {out}/ (summary.md, {plot_name}, <agent>.npz/.json)")
    return 0


def _has_field(cls, field: str) -> bool:
    return cls is not None and field in {f.name for f in dataclasses.fields(cls)}


def _describe(env) -> str:
    spec = env.spec()
    parts = [f"d = {spec.dim}"] + ([f"K = {spec.num_arms}"] if spec.num_arms else [])
    return ", ".join(parts)


def _replay(results) -> bool:
    return any(r.replay for r in results.values())


def _headline(r) -> str:
    """The final metric with its 95% half-width: regret, or for replay results the CTR and the
    mean number of accepted rounds."""
    mean, half = r.final()
    if r.replay:
        return f"{mean:.4f} ± {half:.4f} ({r.final('accepted')[0]:,.0f} accepted)"
    return f"{mean:,.2f} ± {half:,.2f}"


def _table(results) -> str:
    what = "final CTR (mean ± 95% CI)" if _replay(results) else "final regret (mean ± 95% CI)"
    lines = [f"| agent | {what} | wall time (s) | compile (s) | seed-steps/s |",
             "|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {_headline(r)} | {r.wall_time:.2f} | "
                     f"{r.compile_time:.2f} | {r.seed_steps_per_second:,.0f} |")
    return "\n".join(lines)


def _print_table(results) -> None:
    from rich.console import Console
    from rich.table import Table

    replay = _replay(results)
    table = Table(title="final click-through rate (replay)" if replay
                  else "final cumulative regret")
    columns = ["agent", "CTR (mean ± 95% CI)", "accepted"] if replay else [
        "agent", "regret (mean ± 95% CI)"]
    for column in columns + ["wall (s)", "compile (s)", "seed-steps/s"]:
        table.add_column(column, justify="left" if column == "agent" else "right", no_wrap=True)
    for name, r in results.items():
        mean, half = r.final()
        cells = [f"{mean:.4f} ± {half:.4f}", f"{r.final('accepted')[0]:,.0f}"] if r.replay \
            else [f"{mean:,.2f} ± {half:,.2f}"]
        table.add_row(name, *cells, f"{r.wall_time:.2f}", f"{r.compile_time:.2f}",
                      f"{r.seed_steps_per_second:,.0f}")
    Console().print(table)


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    import jaxbandits  # noqa: F401 - registers everything
    from jaxbandits.registry import AGENTS, ENVS

    console = Console()
    for title, table_items in (("environments", ENVS), ("agents", AGENTS)):
        table = Table(title=title)
        for column in ("name", "description", "paper"):
            table.add_column(column)
        for name, cls in table_items.items():
            table.add_row(name, cls.description, cls.paper)
        console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
