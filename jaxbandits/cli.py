"""The ``jaxbandits`` command line: ``run`` an experiment, ``list`` what is registered.

``jaxbandits run`` with no arguments runs the built-in default experiment: the ``linear``
environment (d = 20, K = 50), T = 10,000, 200 runs, every registered linear agent, and writes the
saved results, ``summary.md`` and ``regret.png`` to a results folder. For a replay environment
(logged data such as ``obd-replay``) the table and the plot (``ctr.png``) show the final
click-through rate over accepted rounds instead of regret.

The results folder is prepared before anything is computed: a new ``results/<env>-<time>``
(``-2``, ``-3``, ... when two runs start in the same second), or ``--out``, which must be a
creatable, writable folder and, unless ``--overwrite`` is given, empty (with ``--overwrite`` the
files of an earlier run, ``*.npz``, ``*.json``, ``*.npy``, ``*.png`` and ``summary.md``, are
removed first, so a folder never mixes two runs).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["main", "parse_settings"]

DEFAULT_ENV = "linear"
DEFAULT_HORIZON = 10_000
DEFAULT_RUNS = 200
RESUME_MARKER = ".jaxbandits-run"  # a checkpointed run's command, for its resume
RESULT_FILES = ("*.npz", "*.json", "*.npy", "*.png", "summary.md")  # what a run writes
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


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
    run.add_argument("--out", default=None,
                     help="results folder, new or empty (default: results/<env>-<time>)")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the results in --out and the checkpoint in --checkpoint")
    run.add_argument("--checkpoint", default=None, metavar="DIR",
                     help="checkpoint every chunk to DIR; the same command resumes a killed run")
    run.add_argument("--set", action="append", default=[], metavar="TARGET.FIELD=VALUE",
                     help="override a hyperparameter: env.noise_std=1, agent.reg=0.5 (every "
                          "agent that has the field) or lin-ucb.explore_scale=0.2; booleans "
                          "take true/false, 1/0 or yes/no; repeatable")
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
    ``jaxbandits run`` reads each value by the kind of its field instead (:func:`_read_value`).
    """
    return {target: {field: _json_or_text(raw) for field, raw in fields.items()}
            for target, fields in _raw_settings(items).items()}


def _raw_settings(items: list[str]) -> dict[str, dict[str, str]]:
    """``--set`` items as ``{target: {field: the value's text}}``."""
    settings: dict[str, dict[str, str]] = {}
    for item in items:
        target_field, sep, raw = item.partition("=")
        target, dot, field = target_field.rpartition(".")
        if not sep or not dot or not target or not field:
            raise ValueError(f"--set expects TARGET.FIELD=VALUE (e.g. env.noise_std=1), got "
                             f"{item!r}")
        settings.setdefault(target, {})[field] = raw
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


def _run(args: argparse.Namespace) -> int:
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import AGENTS, ENVS, agent_names

    jb.use_cpu_cores(args.cpu_devices)

    settings = _raw_settings(args.set)
    env = jb.make_env(args.env, **_read_values(ENVS.get(args.env), "env",
                                                settings.pop("env", {})))
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
        agents[name] = jb.make_agent(name, **_read_values(cls, "agent", own),
                                     **_read_values(cls, name, settings.get(name, {})))
        if env.spec().action_kind not in agents[name].action_kinds:
            raise ValueError(f"agent {name!r} cannot act on environment {args.env!r} "
                             f"({env.spec().action_kind!r} actions)")

    signature = json.dumps({k: v for k, v in sorted(vars(args).items())
                            if k not in ("handler", "overwrite", "no_progress", "cpu_devices")},
                           default=str)
    out, created = _prepare_out(args.out, args.env, args.overwrite, args.checkpoint, signature)
    print(f"jaxbandits: {args.env} ({_describe(env)}), T = {args.horizon:,}, "
          f"{args.runs} runs, {len(jax.devices())} {jax.default_backend()} device(s)")
    progress = False if args.no_progress else None
    # Results stream into the folder block by block (host memory flat whatever --runs).
    options: dict[str, Any] = {"save_to": out}
    if args.checkpoint is not None:
        options["checkpoint_dir"] = args.checkpoint
    if args.overwrite:
        options["overwrite"] = True
    try:
        results = jb.compare(env, agents, jax.random.key(args.seed), args.horizon, args.runs,
                             chunk_size=args.chunk_size, progress=progress, **options)
    except BaseException:
        if created and not any(out.iterdir()):
            out.rmdir()  # leave no empty folder behind
        raise
    replay = env.spec().replay
    plot_name = "ctr.png" if replay else "regret.png"
    jb.plot_regret(results, out / plot_name, log_x=args.log_x,
                   title=f"{args.env}: T = {args.horizon:,}, {args.runs} runs")
    table = _table(results)
    (out / "summary.md").write_text(
        f"# {args.env}, T = {args.horizon}, {args.runs} runs, seed {args.seed}\n\n{table}\n")
    _print_table(results)
    print(f"results written to {out}/ (summary.md, {plot_name}, <agent>.json/.npy)")
    return 0


def _has_field(cls, field: str) -> bool:
    from jaxbandits.core import field_kinds

    return cls is not None and field in field_kinds(cls)


def _prepare_out(out: str | None, env_name: str, overwrite: bool,
                 checkpoint: str | None, signature: str = "") -> tuple[Path, bool]:
    """The results folder, ready before anything is computed; returns it and whether it was
    created here.

    The default is a new ``results/<env>-<time>`` folder, made with an exclusive ``mkdir`` and
    suffixed ``-2``, ``-3``, ... when another run took the name in the same second. ``--out`` must
    be a folder that can be created and written; an existing one must be empty (a checkpoint
    folder inside it aside) unless ``overwrite``, which removes an earlier run's files first. With
    a checkpoint, the folder keeps ``signature`` (the command's experiment) in
    ``.jaxbandits-run``, so that the same command, killed and started again, resumes into it.
    """
    try:
        if out is None:
            return _new_folder(Path("results") / f"{env_name}-{_stamp()}"), True
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {out} is an existing file, not a folder")
        created = False
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created = True
        ckpt = None if checkpoint is None else Path(checkpoint).resolve()
        stale = [p for p in path.iterdir() if p.resolve() != ckpt]
        marker = path / RESUME_MARKER
        if stale and ckpt is not None and marker.is_file() and marker.read_text() == signature:
            return path, created  # the same checkpointed command again: it resumes here
        if stale and not overwrite:
            raise ValueError(f"--out {out} is not empty ({len(stale)} entries); pass --overwrite "
                             "to replace the results there, or choose a new folder")
        if stale:
            for pattern in RESULT_FILES:
                for old in path.glob(pattern):
                    if old.is_file() or old.is_symlink():
                        old.unlink()
        _check_writable(path)
        if ckpt is not None:
            marker.write_text(signature)
        return path, created
    except OSError as err:
        raise ValueError(f"--out {out or 'results/'}: cannot use it as the results folder "
                         f"({err})") from err


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
