"""What ``run`` and ``sweep`` share: :class:`_Experiment` (the environment, the agents well
specified for it, the options of the runner, the run record, ``summary.md``) and the checks of
the experiment options."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

from jaxbandits.cli._folders import FILES_RECORD, _prepare_out, _record_files
from jaxbandits.cli._parser import DEFAULT_HORIZON, DEFAULT_RUNS
from jaxbandits.cli._reports import _print_table, _table_markdown
from jaxbandits.cli._settings import _raw_settings, _read_values
from jaxbandits.results import config_of


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
        self.timing = _check_timing(args)
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

        from jaxbandits.results._provenance import _package_version

        a = self.args
        options = {k: v for k, v in sorted(vars(a).items()) if k not in (
            "handler", "argv", "overwrite", "no_progress", "progress", "cpu_devices",
            "compilation_cache", "log_x", "log_y", "title")}
        return {"options": _jsonable(options), "backend": jax.devices()[0].platform,
                "x64": bool(jax.config.jax_enable_x64), "jaxbandits": _package_version()}

    def execute(self, compute, title: str, files: str,
                grid: dict[str, list[Any]] | None = None) -> int:
        """Runs ``compute(runner options) -> {label: Result}`` into the prepared results folder,
        writes the plot (and for a sweep's ``grid`` ``final.png``) and ``summary.md``, records
        the files, then prints the table; a failure releases the folder (removed if this
        command created it and it is still empty)."""
        out, created = self.out()
        try:
            self.announce()
            _import_plotting_meanwhile()
            results = compute(self.options(out))
            plot_name = _write_plot(results, out, self, title)
            extra = ""
            if grid is not None:
                from jaxbandits.plotting import plot_final

                plot_final(results, grid, out / "final.png", title=title)
                extra = "![final.png](final.png)"
            self.summary(results, out, plot_name, extra=extra)
            self.finish(out)
        except BaseException:
            _release(self, out, created)
            raise
        _print_table(results)
        self.print_compile_time(results)
        print(f"results written to {out}/ (summary.md, {plot_name}, {files})")
        return 0

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
        if a.block_runs is not None:
            options["block_runs"] = a.block_runs
        if not self.timing.immediate:
            options.update(self.timing_options())
        if a.checkpoint is not None:
            options["checkpoint_dir"] = a.checkpoint
        if a.overwrite:
            options["overwrite"] = True
        return options

    def timing_options(self) -> dict[str, Any]:
        """``feedback_delay`` and ``update_every`` for the runner (from --feedback-delay and
        --update-every)."""
        t = self.timing
        return {"feedback_delay": t.low if t.low == t.high else (t.low, t.high),
                "update_every": t.update_every}

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
        if not self.timing.immediate:
            print(f"feedback: {_timing_text(self.timing)}")

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
        lines.append(f"- environment: `{json.dumps(_jsonable(config_of(self.env)))}`")
        lines.append(f"- seed: {a.seed}, runs: {a.runs}, horizon: {a.horizon}")
        lines.append(f"- feedback: {_timing_text(self.timing)}")
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
    if args.block_runs is not None and args.block_runs < 1:
        raise ValueError(f"--block-runs must be a positive integer (runs per compiled block), "
                         f"got {args.block_runs}")
    args.feedback_delay = _feedback_delay(args.feedback_delay)
    if args.update_every < 1:
        raise ValueError(f"--update-every must be a positive integer (rounds per batch of "
                         f"updates), got {args.update_every}")
    from jaxbandits.cache import _OFF

    cache = args.compilation_cache
    if cache is not None and cache.strip().lower() not in _OFF:
        path = Path(cache).expanduser()
        if path.exists() and not path.is_dir():
            raise ValueError(f"--compilation-cache {cache} is an existing file, not a folder")


def _feedback_delay(text: Any) -> int | list[int]:
    """``--feedback-delay``: ``N`` or ``LOW,HIGH`` (nonnegative whole numbers, LOW <= HIGH),
    as an int or a ``[low, high]`` pair (JSON-like, for the run's record)."""
    if isinstance(text, (int, list)):  # already read (a command object run again)
        return text
    parts = [part.strip() for part in str(text).split(",")]
    usage = (f"--feedback-delay takes a whole number of rounds N >= 0 or a pair LOW,HIGH of "
             f"them with LOW <= HIGH, got {text!r}")
    if len(parts) not in (1, 2) or not all(part.isdigit() for part in parts):
        raise ValueError(usage)
    values = [int(part) for part in parts]
    if len(values) == 2 and values[0] > values[1]:
        raise ValueError(usage)
    return values[0] if len(values) == 1 else values


def _check_timing(args):
    """The runner's :class:`~jaxbandits.runner.delay.Timing` of --feedback-delay and
    --update-every at the command's horizon; errors name the options."""
    from jaxbandits.runner.delay import as_timing

    delay = args.feedback_delay
    try:
        return as_timing(tuple(delay) if isinstance(delay, list) else delay, args.update_every,
                         args.horizon)
    except ValueError as err:
        raise ValueError(f"--feedback-delay / --update-every: {err}") from None


def _timing_text(timing) -> str:
    """How rewards reach the agents, in words (summary.md, the announcement)."""
    if timing.immediate:
        return "each reward at the end of its round (no delay, updates every round)"
    fixed = timing.low == timing.high
    delay = (f"{timing.low:,} rounds" if fixed else
             f"uniform on {timing.low:,} to {timing.high:,} rounds")
    every = ("every round" if timing.update_every == 1 else
             f"at the end of every {timing.update_every:,} rounds")
    given = str(timing.low) if fixed else f"{timing.low},{timing.high}"
    return (f"rewards delayed {delay}, agents updated {every} (`--feedback-delay {given} "
            f"--update-every {timing.update_every}`)")


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


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.item() if hasattr(v, "item")
                                 else str(v)))


def _import_plotting_meanwhile() -> None:
    """Imports matplotlib and the interval statistics on a background thread while the agents
    compile and play (about 0.6 s of imports on a 2-core machine that the plot would otherwise
    wait for); a later import of the same modules waits for this one."""

    def load() -> None:
        try:
            import matplotlib.pyplot  # noqa: F401
            import scipy.special  # noqa: F401
        except Exception:  # noqa: BLE001 - the plot's own import reports it
            pass

    threading.Thread(target=load, name="jaxbandits-imports", daemon=True).start()
