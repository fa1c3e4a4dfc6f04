"""What the timing scripts share: command lines, agent specs, JAX timing, machine lines, tables."""

from __future__ import annotations

import argparse
import functools
import math
import os
import platform
import time
from typing import Any

from jaxbandits.cli._settings import _read_value
from jaxbandits.tables import render_table

CPU_DEVICES_HELP = ("split the CPU into this many XLA devices, the runs sharded over them "
                    "(jb.use_cpu_cores; default: one per core, as `jaxbandits run` does; 1: "
                    "XLA's single CPU device)")
BLOCK_RUNS_HELP = ("simulate's runs per block: a number, 'all' (one block of all the runs of "
                   "a row: one wave, what a GPU wants) or the engine's default "
                   "(jb.default_block_runs: on a CPU 8 neural, 128 otherwise; 128x on a GPU)")


def int_list(text: str) -> list[int]:
    """``"1,10,100"`` -> ``[1, 10, 100]`` (positive integers; an argparse type)."""
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def cli(doc: str, argv=None, quick_defaults: dict | None = None, **flags) -> argparse.Namespace:
    """A script's command line: ``--name-with-dashes`` for each ``name=spec`` of ``flags``, a
    spec being ``default``, ``(default, help)`` or ``(type or argparse keywords, default,
    help)``; the type follows the default (a bool: a switch, a list: :func:`int_list`). With
    ``quick_defaults`` ``{name: default}``, ``--quick`` takes those; ``args.given``: the flags
    given. ``args.error``: the parser's ``error``."""
    parser = argparse.ArgumentParser(description=doc.strip().split("\n\n")[0])
    defaults, quick = {}, quick_defaults
    for name, spec in flags.items():
        spec = spec if isinstance(spec, tuple) else (spec,)
        kind, default, text = spec if len(spec) == 3 else (None, spec[0], spec[1:] and spec[1])
        keywords = dict(kind) if isinstance(kind, dict) else {"type": kind} if kind else (
            {"action": "store_true"} if isinstance(default, bool) else
            {"type": int_list} if isinstance(default, list) else
            {"type": type(default)} if default is not None else {})
        defaults[name] = default
        if quick is not None and name in quick and quick[name] != default:
            value = quick[name]
            shown = ",".join(map(str, value)) if isinstance(value, list) else value
            text = f"{text or ''} (quick: {shown})"
        parser.add_argument("--" + name.replace("_", "-"), help=text or None, **keywords,
                            default=default if quick is None else None)
    if quick is not None:
        parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    args = parser.parse_args(argv)
    args.error = parser.error
    if quick is not None:
        args.given = {"--" + n.replace("_", "-") for n in flags if getattr(args, n) is not None}
        for name, default in defaults.items():
            if getattr(args, name) is None:
                setattr(args, name, quick.get(name, default) if args.quick else default)
    return args


def parse_agent_spec(spec: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    """``"name[:field=value...]"`` -> ``(name, ((field, value), ...))``, each value read by the
    kind of the agent's field as ``jaxbandits run --set agent.FIELD=VALUE`` reads it."""
    from jaxbandits.registry import AGENTS

    name, *fields = [part.strip() for part in spec.split(":")]
    overrides = []
    for field in fields:
        key, sep, value = field.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"bad override {field!r} in {spec!r}: expected field=value")
        overrides.append((key.strip(), _read_value(AGENTS.get(name), name, key.strip(),
                                                   value.strip())))
    return name, tuple(overrides)


def make_agent(spec: str):
    """The registry agent of ``name[:field=value...]``."""
    import jaxbandits as jb

    name, overrides = parse_agent_spec(spec)
    return jb.make_agent(name, **dict(overrides))


def block_runs_option(value: str) -> int | str | None:
    """``--block-runs``: ``None`` (the engine's default), ``"all"`` or a positive number."""
    if value in ("", "default"):
        return None
    if value == "all":
        return value
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'all', got {value!r}")
    return int(value)


#: the options every throughput script takes
COMMON = {"dim": (20, "d of the environment"), "num_arms": (50, "K of the environment"),
          "seed": (0, "the key of the runs"), "cpu_devices": (int, None, CPU_DEVICES_HELP),
          "block_runs": ({"type": block_runs_option}, None, BLOCK_RUNS_HELP),
          "markdown": (False, "print the tables as markdown")}


def start(cpu_devices: int | None):
    """The devices (``jb.use_cpu_cores``) and the persistent compilation cache (compile times
    are reported apart; the cache shortens reruns); returns ``jaxbandits``."""
    import jaxbandits as jb

    jb.use_cpu_cores(cpu_devices)
    jb.use_compilation_cache()
    return jb


def time_jax(env, agent, horizon: int, runs: int, *, repeats: int, min_time: float,
             chunk_size: int | None, seed: int, max_time: float = math.inf,
             block_runs: int | str | None = None) -> dict:
    """Best-of-``repeats`` seed-steps/s of ``jb.simulate`` (compile excluded): a trial repeats
    the call until its summed wall time reaches ``min_time``; no trial starts once ``max_time``
    seconds were spent. ``block_runs="all"``: ``runs``. ``{"rate", "wall", "compile", "calls"}``."""
    import jaxbandits as jb

    compile_time, best_rate, best_wall, calls, spent = None, 0.0, 0.0, 0, 0.0
    for _ in range(repeats):
        if spent >= max_time:
            break
        wall, seed_steps = 0.0, 0
        while wall < min_time or seed_steps == 0:
            result = jb.simulate(env, agent, seed, horizon, runs, progress=False,
                                 chunk_size=chunk_size,
                                 block_runs=runs if block_runs == "all" else block_runs)
            calls += 1
            compile_time = result.compile_time if compile_time is None else compile_time
            wall, seed_steps = wall + result.wall_time, seed_steps + runs * horizon
        spent += wall
        if seed_steps / wall > best_rate:
            best_rate, best_wall = seed_steps / wall, wall
    return {"rate": best_rate, "wall": best_wall, "compile": compile_time or 0.0, "calls": calls}


def jax_line(label: str, runs, m: dict) -> str:
    """The progress line of one :func:`time_jax` measurement."""
    return (f"[jax]   {label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, compile "
            f"{m['compile']:.2f} s, {m['calls']} call(s)")


def flatness(env, agent, horizons, runs: int, *, chunk_size: int | None, seed: int,
             repeats: int = 1, max_time: float = math.inf) -> list[dict]:
    """One ``jb.simulate`` per increasing horizon (the best of ``repeats``, none once
    ``max_time`` seconds went into a horizon): its rate, and the window of rounds it adds to
    the previous horizon with their marginal rate and ms per round."""
    import jaxbandits as jb

    rows, prev_h, prev_wall = [], 0, 0.0
    for h in horizons:
        walls = []
        for _ in range(repeats):
            if walls and sum(walls) >= max_time:
                break
            walls.append(jb.simulate(env, agent, seed, h, runs, progress=False,
                                     chunk_size=chunk_size).wall_time)
        wall = min(walls)
        rows.append({"horizon": h, "wall": wall, "rate": runs * h / wall, "window": (prev_h + 1, h),
                     "ms_per_round": 1e3 * (wall - prev_wall) / (h - prev_h),
                     "marginal": runs * (h - prev_h) / max(wall - prev_wall, 1e-9)})
        prev_h, prev_wall = h, wall
    return rows


def best_seconds(fn, repeats: int, min_time: float = 0.0, budget: float = math.inf,
                 warmup: bool = False) -> float:
    """The fewest seconds per call of ``fn`` (its result waited for) over up to ``repeats``
    trials that each call it until ``min_time`` seconds (at least once), after an untimed call
    with ``warmup``; no trial starts once ``budget`` seconds were spent."""
    import jax

    if warmup:
        jax.block_until_ready(fn())
    best, spent = math.inf, 0.0
    for _ in range(repeats):
        calls, begin = 0, time.perf_counter()
        while not calls or (elapsed := time.perf_counter() - begin) < min_time:
            jax.block_until_ready(fn())
            calls, elapsed = calls + 1, time.perf_counter() - begin
        best, spent = min(best, elapsed / calls), spent + elapsed
        if spent >= budget:
            break
    return best


def matmul_gflops(rows: int = 2048, width: int = 2048, runs: int | None = None,
                  min_time: float = 1.0) -> float:
    """GFLOP/s of a jitted float32 ``(rows, width) @ (width, width)`` product on JAX's default
    device, or with ``runs`` of ``(runs, rows, width) @ (runs, width, width)`` (one matrix per
    run, as a vmapped neural round multiplies). The default square 2048 product is the
    attainable rate, a yardstick (about 190-200 GFLOP/s on the 2-core development machine)."""
    import jax
    import jax.numpy as jnp

    batch = () if runs is None else (runs,)
    inputs = jnp.ones(batch + (rows, width), jnp.float32)
    weights = jnp.ones(batch + (width, width), jnp.float32)
    product = functools.partial(jax.jit(jnp.matmul), inputs, weights)
    seconds = best_seconds(product, 1, min_time, warmup=True)
    return 2.0 * (runs or 1) * rows * width * width / seconds / 1e9


def load_line(when: str = "") -> str:
    return f"load average{' ' + when if when else ''} " + " ".join(
        f"{x:.2f}" for x in os.getloadavg())


def end_line(start: float) -> str:
    """The last line of a benchmark: its seconds and the load at the end."""
    return f"total benchmark time {time.perf_counter() - start:.1f} s; {load_line('at the end')}"


def header_line(title: str, middle: str) -> str:
    """``title | jax and its devices | middle | python, CPUs and load``."""
    import jax

    return (f"{title} | jax {jax.__version__}, backend {jax.default_backend()}, "
            f"{jax.device_count()} device(s) [{jax.devices()[0].device_kind}] | {middle} | "
            f"python {platform.python_version()} | {os.cpu_count()} CPU(s), {load_line()}")


def fmt_rate(x: float | None) -> str:
    """A rate for a table: thousands separators, more digits below 100, ``-`` for none."""
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" if x >= 1 else f"{x:.3f}"


def print_table(header: list[str], body: list[list], markdown: bool) -> None:
    """Prints rows as aligned plain text (first column left, the rest right) or markdown."""
    print(render_table(header, [[str(c) for c in row] for row in body],
                       format="markdown" if markdown else "text",
                       align="l" + "r" * (len(header) - 1)), flush=True)
