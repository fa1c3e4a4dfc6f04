"""The ``jaxbandits`` command line: ``run`` and ``sweep`` experiments, ``plot`` and ``compare``
saved results, ``list`` what is registered.

``jaxbandits run`` with no arguments runs the built-in default experiment
(:data:`DEFAULT_EXPERIMENT`: the ``linear`` environment, T = 10,000, 200 runs, the linear agents
with lin-ucb's exploration scale tuned) and writes the saved results, ``summary.md`` (with the
run record: command, overrides, versions, devices) and ``regret.png`` to a results folder. For
a replay environment (logged data such as ``obd-replay``) the table and the plot (``ctr.png``)
show the final click-through rate over accepted rounds instead of regret.

Agents are **well specified** by default: every field the environment's assumptions determine
(noise scale, prior precision, parameter bound, a horizon-sized buffer on changing arm sets) is
set from the environment unless ``--set`` gives it (``jb.make_agent(name, env=env)``); the
command prints the values it took. ``--misspecified`` keeps the agents' bare defaults.

The results folder is prepared before anything is computed: a new ``results/<env>-<time>``
(``-2``, ``-3``, ... when two runs start in the same second), or ``--out``, which must be a
creatable, writable folder and, unless ``--overwrite`` is given, empty. One command at a time
writes a folder: it holds a lock on the folder itself from before compiling to its last file, so a
second command into the same ``--out`` is refused. Every run records the files it writes in
``.jaxbandits-files``, and ``--overwrite`` removes exactly those (a folder without that record,
from an older jaxbandits, loses its ``*.npz``, ``*.json``, ``*.npy``, ``*.png`` and
``summary.md``); files jaxbandits did not write, such as a user's ``config.json``, stay.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import itertools
import json
import math
import os
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_EXPERIMENT", "main", "parse_settings"]

DEFAULT_ENV = "linear"
DEFAULT_HORIZON = 10_000
DEFAULT_RUNS = 200
#: The built-in experiment of ``jaxbandits run`` (no ``--env``, no ``--agents``): the anytime
#: paper's E-LIN problem with the agents of the linear papers, each well specified for it, and
#: the exploration scales tuned on this problem where the theory's scale over-explores (stated
#: in the output and in ``summary.md``).
DEFAULT_EXPERIMENT: dict[str, Any] = {
    "env": DEFAULT_ENV,
    "agents": ["greedy", "lin-ucb", "lin-ts", "lin-phe", "lin-es", "ensemble-sampling",
               "ensemble-pp"],
    "tuned": {"lin-ucb": {"explore_scale": 0.3}},
    "log_y": True,  # greedy's linear regret would flatten the others' curves
}
RESUME_MARKER = ".jaxbandits-run"  # a checkpointed run's command, for its resume
FILES_RECORD = ".jaxbandits-files"  # the files a run wrote into its folder (for --overwrite)
#: What a run writes, for folders without a FILES_RECORD (written by an older jaxbandits).
RESULT_FILES = ("*.npz", "*.json", "*.npy", "*.png", "summary.md")
#: The built-in metrics; ``plot`` / ``compare --metric`` also take the extra metrics the loaded
#: results record (``Result.metrics``, such as a dueling environment's ``weak_regret``).
METRICS = ("regret", "reward", "ctr", "accepted")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.handler(args)
    except (ValueError, OSError) as err:  # OSError: a file named by the user, disk full ...
        print(f"jaxbandits: error: {err}", file=sys.stderr)
        return 2


# ------------------------------------------------------------------------------------------------
# The parser.


class _Help(argparse.RawDescriptionHelpFormatter):
    """Shows every option's default (unless its help already says it, or it is a switch that
    is off) and keeps the epilogs' line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if "default" in text or default is None or default is False or default == [] \
                or default == argparse.SUPPRESS:
            return text
        return f"{text} (default: {action.default})"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jaxbandits", description="JAX-vectorised contextual-bandit simulations.",
        formatter_class=_Help)
    parser.add_argument("--version", action="version", version=_version_line())
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser(
        "run", formatter_class=_Help,
        help="run an experiment (default: the built-in linear experiment)",
        description="Run agents on an environment with common random numbers. Without --env "
                    "and --agents: the built-in default experiment (linear, d = 20, K = 50, the "
                    "linear agents, lin-ucb's exploration scale tuned).",
        epilog="examples:\n  jaxbandits run\n  jaxbandits run --env russo --horizon 1000\n"
               "  jaxbandits run --env shuttle --horizon 2000 --runs 20\n"
               "  jaxbandits run --env dueling-square --agents random,colstim,nvldb-ucb-asym "
               "--set agent.width=32\n"
               "  jaxbandits run --agents lin-ts,lin-ucb --set lin-ucb.explore_scale=0.5")
    run.add_argument("--env", default=None,
                     help=f"environment name (see `jaxbandits list`; default: {DEFAULT_ENV})")
    run.add_argument("--agents", default=None,
                     help="comma-separated agent names (default: the agents that can act on the "
                          "environment and model it; for the default experiment "
                          f"{','.join(DEFAULT_EXPERIMENT['agents'])})")
    _add_experiment_options(run)
    run.set_defaults(handler=_run)

    sweep = sub.add_parser(
        "sweep", formatter_class=_Help,
        help="run one agent over a grid of settings (one compilation per static structure)",
        description="Run one agent over the product of --grid values with common random "
                    "numbers; writes one result per grid point, summary.md, regret.png and "
                    "final.png (final regret against the swept value).",
        epilog="examples:\n  jaxbandits sweep --agent lin-ucb --grid agent.explore_scale="
               "0.05,0.1,0.2,0.5,1\n  jaxbandits sweep --agent ensemble-pp --grid "
               "agent.ensemble_size=2,8,32 --grid env.noise_std=0.5,1 --horizon 2000")
    sweep.add_argument("--env", default=DEFAULT_ENV, help="environment name")
    sweep.add_argument("--agent", default="lin-ucb", help="the agent swept")
    sweep.add_argument("--grid", action="append", default=[], metavar="TARGET.FIELD=V1,V2,...",
                       required=True,
                       help="values of one field: agent.explore_scale=0.1,0.5 or "
                            "env.noise_std=0.5,1; repeat for a product grid")
    _add_experiment_options(sweep)
    sweep.set_defaults(handler=_sweep)

    plot = sub.add_parser("plot", formatter_class=_Help,
                          help="plot saved results (folders or result files) in one figure")
    plot.add_argument("paths", nargs="+", metavar="DIR",
                      help="results folders (every result in them) or result files")
    plot.add_argument("--out", default=None,
                      help="the PNG to write (default: DIR/<metric>.png for one folder, else "
                           "./<metric>.png)")
    plot.add_argument("--metric", default=None,
                      help=f"what to plot: {', '.join(METRICS)} or an extra metric the results "
                           "record (default: regret, or CTR for replay results)")
    plot.add_argument("--log-x", action="store_true", help="logarithmic round axis")
    plot.add_argument("--log-y", action="store_true", help="logarithmic value axis")
    plot.add_argument("--title", default=None, help="the figure's title")
    plot.set_defaults(handler=_plot)

    compare = sub.add_parser(
        "compare", formatter_class=_Help,
        help="table of saved results, with paired differences under common random numbers")
    compare.add_argument("paths", nargs="+", metavar="DIR",
                         help="results folders (every result in them) or result files")
    compare.add_argument("--metric", default=None,
                         help=f"what to compare: {', '.join(METRICS)} or an extra metric the "
                              "results record (default: regret, or CTR for replay results)")
    compare.add_argument("--baseline", default=None,
                         help="the result the others are compared with (default: the first)")
    compare.set_defaults(handler=_compare)

    lst = sub.add_parser("list", help="list environments and agents with their papers")
    lst.set_defaults(handler=_list)
    return parser


def _add_experiment_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--horizon", type=int, default=None,
                   help=f"rounds T (default: {DEFAULT_HORIZON:,}, or the environment's paper's: "
                        "2,000 on the dueling environments)")
    p.add_argument("--runs", type=int, default=None,
                   help=f"independent runs (seeds) (default: {DEFAULT_RUNS}, or the "
                        "environment's paper's: 20 on the dueling environments)")
    p.add_argument("--seed", type=int, default=0, help="the experiment's seed")
    p.add_argument("--out", default=None,
                   help="results folder, new or empty (default: a new results/<env>-<time>)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the results in --out and the checkpoint in --checkpoint")
    p.add_argument("--checkpoint", default=None, metavar="DIR",
                   help="checkpoint every chunk to DIR; the same command resumes a killed run")
    p.add_argument("--set", action="append", default=[], metavar="TARGET.FIELD=VALUE",
                   help="override a hyperparameter: env.noise_std=1, agent.reg=0.5 (every agent "
                        "that has the field) or lin-ucb.explore_scale=0.2; booleans take "
                        "true/false, 1/0 or yes/no; repeatable")
    p.add_argument("--misspecified", action="store_true",
                   help="keep the agents' bare defaults instead of the values the environment "
                        "implies (noise scale, prior, parameter bound, buffers)")
    p.add_argument("--record", default="log", metavar="log|all|N",
                   help="recorded rounds: about 100 log-spaced ones, every round, or every N-th "
                        "round (T always included)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="rounds per compiled chunk (default: min(T, 1000); min(T, 250) for "
                        "agents with costly rounds, jb.default_chunk_size)")
    p.add_argument("--cpu-devices", type=int, default=None,
                   help="split the CPU into this many devices, the runs sharded over them "
                        "(default: one per core; 1 for XLA's single CPU device)")
    p.add_argument("--compilation-cache", default=None, metavar="DIR|off",
                   help="JAX's persistent compilation cache (default: $JAXBANDITS_COMPILATION_"
                        "CACHE, else ~/.cache/jaxbandits/jax): a second run of the same "
                        "experiment reads its programs from there")
    p.add_argument("--log-x", action="store_true", help="logarithmic round axis in the plot")
    p.add_argument("--log-y", action="store_true", help="logarithmic value axis in the plot")
    p.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                   help="progress display: auto is a bar on a terminal and plain lines "
                        "otherwise (logs)")
    p.add_argument("--no-progress", action="store_true", help="the same as --progress none")


def _version_line() -> str:
    from importlib import metadata

    versions = []
    for package in ("jaxbandits", "jax", "jaxlib"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} (not installed)")
    return f"{versions[0]} ({', '.join(versions[1:])}, Python {sys.version.split()[0]})"


# ------------------------------------------------------------------------------------------------
# --set values.


def parse_settings(items: list[str]) -> dict[str, dict[str, Any]]:
    """Parses ``--set TARGET.FIELD=VALUE`` items into ``{target: {field: value}}``.

    Values are read as JSON when they parse (numbers, true/false, null, lists), else as strings.
    ``jaxbandits run`` reads each value by the kind of its field instead (:func:`_read_value`).
    """
    return {target: {field: _json_or_text(raw) for field, raw in fields.items()}
            for target, fields in _raw_settings(items).items()}


def _raw_settings(items: list[str], option: str = "--set") -> dict[str, dict[str, str]]:
    """``--set`` items as ``{target: {field: the value's text}}``."""
    settings: dict[str, dict[str, str]] = {}
    for item in items:
        target_field, sep, raw = item.partition("=")
        target, dot, field = target_field.rpartition(".")
        if not sep or not dot or not target or not field:
            raise ValueError(f"{option} expects TARGET.FIELD=VALUE (e.g. env.noise_std=1), got "
                             f"{item!r}")
        fields = settings.setdefault(target, {})
        if option == "--grid" and field in fields:
            raise ValueError(f"--grid {target}.{field} is given twice ({fields[field]!r} and "
                             f"{raw!r}): give all its values in one --grid, comma-separated")
        fields[field] = raw
    return settings


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw


def _read_value(cls: type | None, target: str, field: str, raw: str) -> Any:
    """The value of ``--set target.field=raw`` for a field of ``cls``, read by the field's kind
    (:func:`jaxbandits.core.field_kinds`, the kinds ``validate`` checks): a boolean takes exactly
    true/false, 1/0 or yes/no (any case); a string switch takes the text as is; an optional field
    takes null/none; anything else is read as JSON, so ``"0.1"`` is a number and a word given to
    a numeric field fails the type check naming the field."""
    from jaxbandits.core import field_kinds

    kind = field_kinds(cls).get(field) if cls is not None else None
    if kind is None:  # unknown field: make_env / make_agent say so, with close matches
        return _json_or_text(raw)
    word = raw.strip().lower()
    if kind.optional and word in ("null", "none"):
        return None
    if kind.kind == "bool":
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ValueError(f"--set {target}.{field}: {field} is a boolean, give true/false, 1/0 or "
                         f"yes/no, got {raw!r}")
    if kind.kind in ("str", "path"):
        value = _json_or_text(raw)
        return value if isinstance(value, str) else raw
    return _json_or_text(raw)


def _read_values(cls: type | None, target: str, fields: dict[str, str]) -> dict[str, Any]:
    return {field: _read_value(cls, target, field, raw) for field, raw in fields.items()}


def _has_field(cls, field: str) -> bool:
    from jaxbandits.core import field_kinds

    return cls is not None and field in field_kinds(cls)


# ------------------------------------------------------------------------------------------------
# run and sweep.


class _Experiment:
    """What ``run`` and ``sweep`` share: the environment, the settings, the record of the run."""

    def __init__(self, args: argparse.Namespace, env_name: str):
        import jaxbandits as jb
        from jaxbandits.registry import ENVS

        _check_options(args)
        jb.use_cpu_cores(args.cpu_devices)
        try:
            self.cache = jb.use_compilation_cache(args.compilation_cache)
        except OSError as err:
            raise ValueError(f"--compilation-cache {args.compilation_cache}: cannot use it as "
                             f"the cache folder ({err.strerror or err})") from err
        self.args, self.env_name = args, env_name
        self.settings = _raw_settings(args.set)
        self.env = jb.make_env(env_name, **_read_values(ENVS.get(env_name), "env",
                                                        self.settings.pop("env", {})))
        if args.horizon is None:  # the environment's paper's size, else the command's
            args.horizon = self.env.default_horizon or DEFAULT_HORIZON
        if args.runs is None:
            args.runs = self.env.default_runs or DEFAULT_RUNS
        _check_sizes(args)
        self.assumed: dict[str, dict[str, Any]] = {}
        self.tuned: dict[str, dict[str, Any]] = {}
        self.log_y = args.log_y

    def agent(self, name: str, own: dict[str, Any]):
        """Agent ``name`` with the user's fields ``own``, well specified unless --misspecified,
        and the default experiment's tuned values where the user set nothing else."""
        import jaxbandits as jb

        tuned = {f: v for f, v in self.tuned.get(name, {}).items() if f not in own}
        fields = {**tuned, **own}
        if self.args.misspecified:
            agent = jb.make_agent(name, **fields)
            if self.env.spec().action_kind not in agent.action_kinds:
                raise ValueError(f"agent {name!r} cannot act on environment {self.env_name!r} "
                                 f"({self.env.spec().action_kind!r} actions)")
            return agent
        bare = jb.make_agent(name, **fields)
        agent = jb.make_agent(name, env=self.env, horizon=self.args.horizon, **fields)
        taken = _changes(bare, agent)
        if taken:
            self.assumed[name] = taken
        return agent

    def out(self) -> tuple[Path, bool]:
        """The results folder, prepared and locked (see :func:`_prepare_out`)."""
        a = self.args
        out, created, self.lock = _prepare_out(a.out, self.env_name, a.overwrite,
                                               a.checkpoint, self.resume_record())
        return out, created

    def resume_record(self) -> dict[str, Any]:
        """Everything that fixes a checkpointed run's numbers: every option but those that only
        change how it is shown, cached or spread over devices (a checkpoint resumes on any
        device count), and the backend and precision in effect."""
        import jax

        from jaxbandits.results import _package_version

        a = self.args
        options = {k: v for k, v in sorted(vars(a).items()) if k not in (
            "handler", "argv", "overwrite", "no_progress", "progress", "cpu_devices",
            "compilation_cache", "log_x", "log_y", "title")}
        return {"options": _jsonable(options), "backend": jax.devices()[0].platform,
                "x64": bool(jax.config.jax_enable_x64), "jaxbandits": _package_version()}

    def finish(self, out: Path) -> None:
        """Records the files this run wrote and releases the folder."""
        _record_files(out)
        self.lock.release()

    def options(self, out: Path) -> dict[str, Any]:
        a = self.args
        options: dict[str, Any] = {"save_to": out, "chunk_size": a.chunk_size,
                                   "progress": _progress(a), "record": _record(a.record,
                                                                               a.horizon),
                                   "run_info": self.run_info()}
        if a.checkpoint is not None:
            options["checkpoint_dir"] = a.checkpoint
        if a.overwrite:
            options["overwrite"] = True
        return options

    def run_info(self) -> dict[str, Any]:
        """The part of the run record the command adds to every result's ``run_info``."""
        a = self.args
        return {"command": "jaxbandits " + shlex.join(a.argv), "overrides": list(a.set),
                "well_specified": not a.misspecified, "assumed": _jsonable(self.assumed),
                "tuned": _jsonable(self.tuned), "seed": a.seed}

    def announce(self) -> None:
        import jax

        a, spec = self.args, self.env.spec()
        print(f"jaxbandits: {self.env_name} ({_describe(spec)}), T = {a.horizon:,}, "
              f"{a.runs} runs, seed {a.seed}, {len(jax.devices())} {jax.default_backend()} "
              f"device(s)")
        if a.misspecified:
            print("agents: bare defaults (--misspecified)")
        elif self.assumed:
            print(f"well specified for {self.env_name} ({_describe_assumptions(self.env)}); "
                  f"values taken (--misspecified keeps the defaults):")
            for name, values in self.assumed.items():
                print(f"  {name}: {_fields_text(values)}")
        for name, values in self.tuned.items():
            print(f"tuned on this experiment: {name}: {_fields_text(values)}")

    def print_compile_time(self, results) -> None:
        total = sum(r.compile_time for r in results.values())
        where = f"persistent cache {self.cache}" if self.cache else "no persistent cache"
        print(f"compile time: {total:.2f} s in all ({where})")

    def summary(self, results, out: Path, plot_name: str, extra: str = "") -> None:
        from jaxbandits.results import environment_info

        a = self.args
        info = next(iter(results.values())).run_info if results else {}
        software = info.get("software") or info or environment_info()
        lines = [f"# {self.env_name}, T = {a.horizon:,}, {a.runs} runs, seed {a.seed}", "",
                 _table_markdown(results), "", f"![{plot_name}]({plot_name})", ""]
        if extra:
            lines += [extra, ""]
        lines += ["## Run record", "", f"- command: `{self.run_info()['command']}`",
                  f"- overrides: {', '.join(f'`{s}`' for s in a.set) or 'none'}",
                  "- agents: " + ("bare defaults (--misspecified)" if a.misspecified
                                  else "well specified for the environment")]
        for name, values in self.assumed.items():
            lines.append(f"  - {name}: {_fields_text(values)} (from the environment)")
        for name, values in self.tuned.items():
            lines.append(f"  - {name}: {_fields_text(values)} (tuned on this experiment)")
        lines.append(f"- environment: `{json.dumps(_jsonable(_config(self.env)))}`")
        lines.append(f"- seed: {a.seed}, runs: {a.runs}, horizon: {a.horizon}")
        versions = ", ".join(f"{k} {software[k]}" for k in
                             ("jaxbandits", "jax", "jaxlib", "numpy", "python") if k in software)
        lines.append(f"- versions: {versions}")
        devices = software.get("devices") or {}
        if devices:
            lines.append(f"- devices: {devices.get('count')} x {devices.get('kind')} "
                         f"({devices.get('backend')})")
        if "platform" in software:
            lines.append(f"- platform: {software['platform']}")
        (out / "summary.md").write_text("\n".join(lines) + "\n")


def _run(args: argparse.Namespace) -> int:
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import AGENTS, default_agent_names

    default = args.env is None and args.agents is None
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

    out, created = exp.out()
    try:
        exp.announce()
        results = jb.compare(exp.env, agents, jax.random.key(args.seed), args.horizon,
                             args.runs, **exp.options(out))
        plot_name = _write_plot(results, out, exp, f"{exp.env_name}: T = {args.horizon:,}, "
                                                   f"{args.runs} runs")
        exp.summary(results, out, plot_name)
        exp.finish(out)
    except BaseException:
        _release(exp, out, created)
        raise
    _print_table(results)
    exp.print_compile_time(results)
    print(f"results written to {out}/ (summary.md, {plot_name}, <agent>.json/.npy)")
    return 0


def _sweep(args: argparse.Namespace) -> int:
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
    out, created = exp.out()
    try:
        exp.announce()
        print(f"sweep of {args.agent} over " + " x ".join(f"{k} ({len(v)})"
                                                          for k, v in grid.items())
              + f" = {math.prod(len(v) for v in grid.values())} grid points")
        results = jb.sweep(exp.env, agent, jax.random.key(args.seed), grid, args.horizon,
                           args.runs, **exp.options(out))
        title = f"{exp.env_name}, {args.agent}: T = {args.horizon:,}, {args.runs} runs"
        plot_name = _write_plot(results, out, exp, title)
        _plot_final(results, grid, out / "final.png", title)
        exp.summary(results, out, plot_name, extra="![final.png](final.png)")
        exp.finish(out)
    except BaseException:
        _release(exp, out, created)
        raise
    _print_table(results)
    exp.print_compile_time(results)
    print(f"results written to {out}/ (summary.md, {plot_name}, final.png, <point>.json/.npy)")
    return 0


def _check_sizes(args) -> None:
    for option, value in (("--horizon", args.horizon), ("--runs", args.runs)):
        if value < 1:
            raise ValueError(f"{option} must be a positive integer, got {value}")


def _check_options(args) -> None:
    """The options checked before JAX starts: each error names its option and range."""
    if not -(2**63) <= args.seed < 2**63:
        raise ValueError(f"--seed must be a 64-bit integer (-2**63 to 2**63 - 1), got "
                         f"{args.seed}")
    if args.cpu_devices is not None and args.cpu_devices < 1:
        raise ValueError(f"--cpu-devices must be a positive integer (the number of CPU devices), "
                         f"got {args.cpu_devices}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ValueError(f"--chunk-size must be a positive integer, got {args.chunk_size}")
    from jaxbandits.cache import _OFF

    cache = args.compilation_cache
    if cache is not None and cache.strip().lower() not in _OFF:
        path = Path(cache).expanduser()
        if path.exists() and not path.is_dir():
            raise ValueError(f"--compilation-cache {cache} is an existing file, not a folder")


def _release(exp: _Experiment, out: Path, created: bool) -> None:
    """After a failed run: releases the folder, removing it if this run created it empty."""
    exp.lock.release()
    if created and not any(p.name != FILES_RECORD for p in out.iterdir()):
        with contextlib.suppress(OSError):
            (out / FILES_RECORD).unlink(missing_ok=True)
            out.rmdir()  # leave no empty folder behind


def _changes(bare, agent) -> dict[str, Any]:
    """The fields of ``agent`` that differ from ``bare`` (nested agents as ``agent.field``)."""
    import dataclasses

    from jaxbandits.core import Agent

    changed = {}
    for f in dataclasses.fields(bare):
        old, new = getattr(bare, f.name), getattr(agent, f.name)
        if isinstance(old, Agent) and isinstance(new, Agent):
            changed.update({f"{f.name}.{k}": v for k, v in _changes(old, new).items()})
        elif old is not new and not _equal(old, new):
            changed[f.name] = new
    return changed


def _equal(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _progress(args) -> str | bool:
    if args.no_progress or args.progress == "none":
        return False
    if args.progress == "auto":
        return "bar" if sys.stderr.isatty() else "lines"
    return args.progress


def _record(text: str, horizon: int) -> str | list[int]:
    word = text.strip().lower()
    if word in ("log", "all"):
        return word
    try:
        every = int(word)
    except ValueError:
        raise ValueError(f"--record takes log, all or a whole number N (every N-th round), got "
                         f"{text!r}") from None
    if every < 1:
        raise ValueError(f"--record N needs N >= 1, got {every}")
    return sorted(set(range(every, horizon + 1, every)) | {horizon})


def _write_plot(results, out: Path, exp: _Experiment, title: str) -> str:
    import jaxbandits as jb

    replay = any(r.replay for r in results.values())
    plot_name = "ctr.png" if replay else "regret.png"
    note = ", ".join(exp.args.set) if exp.args.set else None
    if exp.args.misspecified:
        note = "bare agent defaults" + (f"; {note}" if note else "")
    jb.plot_regret(results, out / plot_name, log_x=exp.args.log_x, log_y=exp.log_y,
                   title=title, note=note)
    return plot_name


def _plot_final(results, grid: dict[str, list[Any]], path: Path, title: str) -> None:
    """Final metric (mean and 95% CI) against the first swept field, one line per combination
    of the others."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(grid)
    first, rest = names[0], names[1:]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in grid[first])
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    items = list(results.values())
    metric = items[0].default_metric if items else "regret"
    for i, combo in enumerate(itertools.product(*(grid[n] for n in rest))):
        xs, means, halves = [], [], []
        for j, value in enumerate(grid[first]):
            point = dict(zip(rest, combo, strict=True)) | {first: value}
            label = ",".join(f"{n}={point[n]}" for n in names)
            mean, half = results[label].final()
            xs.append(value if numeric else j)
            means.append(mean)
            halves.append(0.0 if not math.isfinite(half) else half)
        legend = ", ".join(f"{n}={v}" for n, v in zip(rest, combo, strict=True)) or None
        ax.errorbar(xs, means, yerr=halves, marker="o", capsize=3, label=legend,
                    linestyle=("-", "--", "-.", ":")[i % 4])
    if not numeric:
        ax.set_xticks(range(len(grid[first])), [str(v) for v in grid[first]])
    elif all(v > 0 for v in grid[first]) and max(grid[first]) / min(grid[first]) >= 10:
        ax.set_xscale("log")
    ax.set_xlabel(first)
    ax.set_ylabel(f"final {_METRIC_WORDS.get(metric, metric)} (mean, 95% CI)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if rest:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


_METRIC_WORDS = {"regret": "cumulative regret", "reward": "cumulative reward",
                 "ctr": "click-through rate", "accepted": "accepted rounds"}


# ------------------------------------------------------------------------------------------------
# plot and compare.


def _load_results(paths: list[str]) -> dict:
    """``{label: Result}`` from folders (every result in them) and result files; labels are
    the results' names, prefixed with the folder when names repeat."""
    from jaxbandits.results import Result, is_result_file

    found: list[tuple[str, Any]] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            # every result here, each checked; a JSON that is not a result (a user's config) is
            # skipped by what it holds, a corrupt result is an error
            loaded = [Result.load(file) for file in sorted(path.glob("*.json"))
                      if file.is_file() and is_result_file(file)]
            if not loaded:
                raise ValueError(f"{text}: no saved results in this folder")
            found += [(str(path), r) for r in loaded]
        elif path.suffix == ".npy" and path.exists():
            name = path.name.split(".")[0]
            raise ValueError(f"{text} is one array of a saved result; give the result (its "
                             f"name, such as {str(path.with_name(name))!r}, or its .json)")
        elif path.with_suffix(".json").exists() or path.exists():
            found.append((str(path.parent), Result.load(path)))
        else:
            raise ValueError(f"{text}: no such results folder or result file")
    names = [r.name for _, r in found]
    results = {}
    for folder, r in found:
        label = r.name if names.count(r.name) == 1 else f"{folder}/{r.name}"
        if label in results:
            raise ValueError(f"result {label!r} given twice")
        results[label] = r
    return results


def _plot(args: argparse.Namespace) -> int:
    import jaxbandits as jb

    results = _load_results(args.paths)
    metric = _check_metric(args.metric, results) or _default_metric(results)
    if args.out is not None:
        path = Path(args.out)
    else:
        folder = Path(args.paths[0]) if len(args.paths) == 1 and Path(args.paths[0]).is_dir() \
            else Path(".")
        path = folder / f"{metric}.png"
    jb.plot_regret(results, path, metric=metric, log_x=args.log_x, log_y=args.log_y,
                   title=args.title)
    print(f"wrote {path} ({len(results)} results)")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from jaxbandits.results import _crn_mismatch, paired_difference

    results = _load_results(args.paths)
    metric = _check_metric(args.metric, results) or _default_metric(results)
    baseline = args.baseline or next(iter(results))
    if baseline not in results:
        raise ValueError(f"--baseline {baseline!r} is not among the results "
                         f"({', '.join(results)})")
    base = results[baseline]
    headers = ["result", "runs", "T", f"final {metric} (mean ± 95% CI)",
               f"difference from {baseline} (paired 95% CI)"]
    rows = []
    for label, r in results.items():
        mean, half = r.final(metric)
        if label == baseline:
            diff = "(baseline)"
        else:
            reason = _crn_mismatch(r, base)
            if reason is None:
                d, h = paired_difference(r, base, metric)
                diff = _ci(d, h, r.num_runs, _fmt(metric))
            else:
                diff = f"n/a: not common random numbers ({reason})"
        rows.append([label, str(r.num_runs), f"{r.horizon:,}",
                     _ci(mean, half, r.num_runs, _fmt(metric)), diff])
    _print_rows(f"final {metric}", headers, rows)
    return 0


def _check_metric(metric: str | None, results) -> str | None:
    """``--metric`` as given (None stays None), once every loaded result knows it."""
    if metric is None:
        return None
    lacking = [label for label, r in results.items() if metric not in r.metric_names]
    if lacking:
        common = [m for m in next(iter(results.values())).metric_names
                  if all(m in r.metric_names for r in results.values())]
        raise ValueError(f"--metric {metric!r} is not a metric of {', '.join(lacking)}; the "
                         f"results have {', '.join(common) or 'no metric in common'}")
    return metric


def _default_metric(results) -> str:
    metrics = {r.default_metric for r in results.values()}
    if len(metrics) > 1:
        raise ValueError("replay and non-replay results have different default metrics; pass "
                         "--metric reward to put them together")
    return metrics.pop()


# ------------------------------------------------------------------------------------------------
# Output.


def _fmt(metric: str) -> str:
    return ",.4f" if metric == "ctr" else ",.2f"


def _ci(mean: float, half: float, runs: int, fmt: str = ",.2f") -> str:
    """``mean ± half``, or ``mean ± n/a`` where the interval is undefined (a single run)."""
    if runs < 2 or not math.isfinite(half):
        return f"{mean:{fmt}} ± n/a"
    return f"{mean:{fmt}} ± {half:{fmt}}"


def _table_rows(results) -> tuple[str, list[str], list[list[str]]]:
    replay = any(r.replay for r in results.values())
    what = "final CTR (mean ± 95% CI)" if replay else "final regret (mean ± 95% CI)"
    extra = list(dict.fromkeys(m for r in results.values() for m in r.metrics))
    headers = ["agent", what] + (["accepted"] if replay else []) + [
        f"final {m} (mean ± 95% CI)" for m in extra] + [
        "wall time (s)", "compile (s)", "seed-steps/s"]
    rows = []
    for name, r in results.items():
        mean, half = r.final()
        cells = [name, _ci(mean, half, r.num_runs, ",.4f" if r.replay else ",.2f")]
        if replay:
            cells.append(f"{r.final('accepted')[0]:,.0f}" if r.replay else "")
        for m in extra:  # empty for a result without this metric
            cells.append(_ci(*r.final(m), r.num_runs, _fmt(m)) if m in r.metrics else "")
        cells += [f"{r.wall_time:.2f}", f"{r.compile_time:.2f}",
                  f"{r.seed_steps_per_second:,.0f}"]
        rows.append(cells)
    title = "final click-through rate (replay)" if replay else "final cumulative regret"
    return title, headers, rows


def _table_markdown(results) -> str:
    _, headers, rows = _table_rows(results)
    return _markdown(headers, rows)


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _print_table(results) -> None:
    _print_rows(*_table_rows(results))


def _print_rows(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """A rich table on a terminal (cells wrap, never cut); plain markdown otherwise, whatever
    the width of the log it goes to."""
    if not sys.stdout.isatty():
        print(f"{title}\n\n{_markdown(headers, rows)}")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for column in headers:
        table.add_column(column, justify="left" if column in ("agent", "result") else "right",
                         overflow="fold")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def _describe(spec) -> str:
    parts = [f"d = {spec.dim}"] + ([f"K = {spec.num_arms}"] if spec.num_arms else [])
    return ", ".join(parts)


def _describe_assumptions(env) -> str:
    a = env.assumptions()
    parts = []
    if a.noise_std is not None:
        parts.append(f"noise {a.noise_std:g}")
    if a.prior_var is not None:
        parts.append(f"prior variance {a.prior_var:g}")
    if a.param_bound is not None:
        parts.append(f"||theta*|| <= {a.param_bound:.3g}")
    return ", ".join(parts) or "no stated assumptions"


def _fields_text(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in values.items())


def _config(obj) -> dict[str, Any]:
    from jaxbandits.results import config_of

    return config_of(obj)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.item() if hasattr(v, "item")
                                 else str(v)))


# ------------------------------------------------------------------------------------------------
# The results folder.


def _prepare_out(out: str | None, env_name: str, overwrite: bool, checkpoint: str | None,
                 record: dict[str, Any] | None = None) -> tuple[Path, bool, Any]:
    """The results folder, locked and ready before anything is computed; returns it, whether it
    was created here, and its lock (:class:`jaxbandits._io.WriterLock`, held until the command
    ends: a second command into the same folder is refused).

    The default is a new ``results/<env>-<time>`` folder, made with an exclusive ``mkdir`` and
    suffixed ``-2``, ``-3``, ... when another run took the name in the same second. ``--out`` must
    be a folder that can be created and written; an existing one must be empty (a checkpoint
    folder inside it aside) unless ``overwrite``, which removes the files an earlier run wrote
    (:func:`_remove_written`). With a checkpoint, the folder keeps ``record`` (everything that
    fixes the run's numbers) in ``.jaxbandits-run``: the same command, killed and started again,
    resumes into it; a command that differs in anything recorded is refused, naming what.
    """
    from jaxbandits._io import WriterLock

    record = {} if record is None else record
    try:
        if out is None:
            path = _new_folder(Path("results") / f"{env_name}-{_stamp()}")
            lock = WriterLock(path, f"results folder {str(path)!r}")
            _start_record(path, [])
            return path, True, lock
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {out} is an existing file, not a folder")
        created = False
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created = True
        lock = WriterLock(path, f"--out {out}")
    except OSError as err:
        raise ValueError(f"--out {out or 'results/'}: cannot use it as the results folder "
                         f"({err})") from err
    try:
        _ready(path, out, overwrite, checkpoint, record)
    except BaseException:
        lock.release()
        raise
    return path, created, lock


def _ready(path: Path, out: str, overwrite: bool, checkpoint: str | None,
           record: dict[str, Any]) -> None:
    """Makes the locked ``--out`` folder ready (see :func:`_prepare_out`)."""
    try:
        ckpt = None if checkpoint is None else Path(checkpoint).resolve()
        ours = {FILES_RECORD, RESUME_MARKER}
        stale = [p for p in path.iterdir() if p.resolve() != ckpt and p.name not in ours]
        marker = path / RESUME_MARKER
        if ckpt is not None and marker.is_file() and not overwrite:
            before = _read_json(marker)
            if before == record:
                return  # the same checkpointed command again: it resumes here
            raise ValueError(f"--out {out} holds a checkpointed run of another command "
                             f"({_differences(before, record)}); run the same command to "
                             "resume it, pass --overwrite to replace it, or choose a new folder")
        if stale and not overwrite:
            raise ValueError(f"--out {out} is not empty ({len(stale)} entries); pass --overwrite "
                             "to replace the results there, or choose a new folder")
        if stale or (path / FILES_RECORD).exists():
            _remove_written(path)
        marker.unlink(missing_ok=True)
        _check_writable(path)
        _start_record(path, sorted(p.name for p in path.iterdir()))
        if ckpt is not None:
            marker.write_text(json.dumps(record, indent=1))
    except OSError as err:
        raise ValueError(f"--out {out}: cannot use it as the results folder ({err})") from err


def _remove_written(path: Path) -> None:
    """Removes the files an earlier run wrote into ``path``: those its ``.jaxbandits-files``
    lists (a run that did not finish: every file it found absent when it started), or, in a
    folder from a jaxbandits without that record, the patterns of :data:`RESULT_FILES`. Never a
    folder (a checkpoint inside stays), never a file the run did not write."""
    from jaxbandits._io import temp_target

    record = _read_json(path / FILES_RECORD) if (path / FILES_RECORD).is_file() else None
    if isinstance(record, dict) and isinstance(record.get("written"), list):
        doomed = [path / name for name in record["written"] if isinstance(name, str)]
        doomed += [p for p in path.iterdir() if temp_target(p.name) is not None]
    elif isinstance(record, dict) and isinstance(record.get("before"), list):
        kept = set(record["before"]) | {FILES_RECORD, RESUME_MARKER}
        doomed = [p for p in path.iterdir() if p.name not in kept]
    else:
        doomed = [old for pattern in RESULT_FILES for old in path.glob(pattern)]
    for old in doomed:
        if Path(old.name).name == old.name and (old.is_symlink() or old.is_file()):
            old.unlink()
    (path / FILES_RECORD).unlink(missing_ok=True)


def _start_record(path: Path, before: list[str]) -> None:
    """Starts ``.jaxbandits-files``: the entries present before this run (not its own)."""
    (path / FILES_RECORD).write_text(json.dumps({"before": before, "written": None}))


def _record_files(path: Path) -> None:
    """Completes ``.jaxbandits-files``: every file now in ``path`` that was not there before."""
    record = _read_json(path / FILES_RECORD)
    before = set(record.get("before") or []) if isinstance(record, dict) else set()
    written = sorted(p.name for p in path.iterdir() if p.name not in before | {
        FILES_RECORD, RESUME_MARKER} and (p.is_file() or p.is_symlink()))
    (path / FILES_RECORD).write_text(json.dumps({"before": sorted(before),
                                                 "written": written}))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _differences(before: Any, now: dict[str, Any]) -> str:
    """Which recorded settings differ, in words (``--runs: 200 then 100``)."""
    if not isinstance(before, dict) or "options" not in before:
        return "its record is from an older jaxbandits"
    flat = lambda r: {**{f"--{k.replace('_', '-')}": v for k, v in  # noqa: E731
                         (r.get("options") or {}).items()},
                      **{k: v for k, v in r.items() if k != "options"}}
    a, b = flat(before), flat(now)
    names = {"x64": "float64 (JAX_ENABLE_X64)",
             "backend": "backend", "jaxbandits": "jaxbandits version"}
    diffs = [f"{names.get(k, k)}: {a.get(k)!r} then {b.get(k)!r}"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "; ".join(diffs) or "its record differs"


def _stamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _new_folder(base: Path) -> Path:
    """Creates ``base`` or, when it exists, ``base-2``, ``base-3``, ... (exclusive mkdir)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        _check_writable(path)
        return path


def _check_writable(path: Path) -> None:
    """Raises ``OSError`` unless a file can be created in ``path`` (also for root on a
    read-only file system, where ``os.access`` says yes)."""
    fd, probe = tempfile.mkstemp(dir=path, prefix=".jaxbandits-write-test-")
    os.close(fd)
    os.unlink(probe)


# ------------------------------------------------------------------------------------------------
# list.


def _list(args: argparse.Namespace) -> int:
    import jaxbandits  # noqa: F401 - registers everything
    from jaxbandits.registry import AGENTS, ENVS, describe_agent

    for title, table_items in (("environments", ENVS), ("agents", AGENTS)):
        rows = [[name, *(describe_agent(name) if title == "agents" else (cls.description,
                                                                          cls.paper))]
                for name, cls in table_items.items()]
        _print_rows(title, ["name", "description", "paper"], rows)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
