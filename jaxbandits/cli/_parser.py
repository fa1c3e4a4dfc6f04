"""The command line's parser: its commands, options and defaults."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from jaxbandits.metrics import BUILTIN

DEFAULT_ENV = "linear"
DEFAULT_HORIZON = 10_000
DEFAULT_RUNS = 200
#: The built-in experiment of ``jaxbandits run`` (no ``--env``, no ``--agents``): the linear
#: bandit of Sun et al. 2025, Sec. 7.1, with the agents of the linear papers, each well
#: specified for it, and the exploration scales tuned on this problem where the theory's scale
#: over-explores (stated in the output and in ``summary.md``).
DEFAULT_EXPERIMENT: dict[str, Any] = {
    "env": DEFAULT_ENV,
    "agents": ["greedy", "lin-ucb", "lin-ts", "lin-phe", "lin-es", "ensemble-sampling",
               "ensemble-pp"],
    "tuned": {"lin-ucb": {"explore_scale": 0.3}},
    "log_y": True,  # greedy's linear regret would flatten the others' curves
    # its 200 runs as two blocks of 100 (one per core of a 2-core machine) instead of two of
    # 128 with 56 runs of padding: the same bits for these agents (tests/test_cli.py)
    "block_runs": 100,
}
#: The built-in metrics; ``plot`` / ``compare --metric`` also take the extra metrics the loaded
#: results record (``Result.metrics``, such as a dueling environment's ``weak_regret``).
METRICS: tuple[str, ...] = tuple(BUILTIN)


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


def build_parser() -> argparse.ArgumentParser:
    """The ``jaxbandits`` parser; each command's handler is ``args.handler(args) -> exit code``."""
    from jaxbandits.cli._commands import run as _run
    from jaxbandits.cli._commands import sweep as _sweep
    from jaxbandits.cli._reports import compare as _compare
    from jaxbandits.cli._reports import list_registered as _list
    from jaxbandits.cli._reports import plot as _plot

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
    p.add_argument("--feedback-delay", default="0", metavar="N|LOW,HIGH",
                   help="rounds until a round's reward reaches the agents: N, or LOW,HIGH for a "
                        "delay drawn uniformly from those integers per round and run, the same "
                        "for every agent; regret is still counted at the round played "
                        "(jb.simulate's feedback_delay)")
    p.add_argument("--update-every", type=int, default=1, metavar="B",
                   help="update the agents in batches: at the end of every B-th round, with "
                        "every reward arrived by then (jb.simulate's update_every; not a neural "
                        "agent's training schedule, which is --set agent.update_every=N)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="rounds per compiled chunk (default: min(T, 1000); min(T, 250) for "
                        "agents with costly rounds, jb.default_chunk_size)")
    p.add_argument("--block-runs", type=int, default=None, metavar="N",
                   help="runs per compiled block (default: jb.default_block_runs, 128 on a CPU "
                        "and 8 for neural agents; the built-in experiment's 200 runs: 100). "
                        "Results depend on it: the same N gives the same numbers")
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


