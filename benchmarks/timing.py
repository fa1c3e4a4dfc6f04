"""What the throughput scripts share: agent specs, JAX timing, machine lines and tables."""

from __future__ import annotations

import argparse
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


def parse_options(doc: str, options: dict[str, tuple[dict, str, Any, Any]],
                  argv=None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """A benchmark's command line: ``options`` ``{flag: (argparse keywords, help, default, quick
    default)}`` (the help shows both defaults) and the common ``--dim``, ``--num-arms``,
    ``--seed``, ``--cpu-devices``, ``--block-runs``, ``--quick``, ``--markdown``. An option not
    given takes its default (its quick one under ``--quick``); ``args.given`` holds the options
    given."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    options = {**options, "--dim": ({"type": int}, "d of the environment", 20, 20),
               "--num-arms": ({"type": int}, "K of the environment", 50, 50),
               "--seed": ({"type": int}, "the key of the runs", 0, 0),
               "--cpu-devices": ({"type": int}, CPU_DEVICES_HELP, None, None),
               "--block-runs": ({"type": block_runs_option}, BLOCK_RUNS_HELP, None, None)}
    for flag, (keywords, text, full, quick) in options.items():
        shown = "" if full is None else f" (default {_show(full)}" + (
            "" if quick == full else f"; quick: {_show(quick)}") + ")"
        p.add_argument(flag, **keywords, default=None, help=text + shown)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    args = p.parse_args(argv)
    args.given = {flag for flag in options if getattr(args, _dest(flag)) is not None}
    for flag, (_, _, full, quick) in options.items():
        if flag not in args.given:
            setattr(args, _dest(flag), quick if args.quick else full)
    return p, args


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _show(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def block_runs_option(value: str) -> int | str | None:
    """``--block-runs``: ``None`` (the engine's default), ``"all"`` or a positive number."""
    if value in ("", "default"):
        return None
    if value == "all":
        return value
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'all', got {value!r}")
    return int(value)


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
    product = jax.jit(jnp.matmul)
    product(inputs, weights).block_until_ready()
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < min_time or calls < 3:
        product(inputs, weights).block_until_ready()
        calls += 1
    return 2.0 * (runs or 1) * rows * width * width * calls / elapsed / 1e9


def load_line(when: str = "") -> str:
    return f"load average{' ' + when if when else ''} " + " ".join(
        f"{x:.2f}" for x in os.getloadavg())


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


def print_table(header: list[str], body: list[list[str]], markdown: bool) -> None:
    """Prints rows as aligned plain text (first column left, the rest right) or markdown."""
    print(render_table(header, body, format="markdown" if markdown else "text",
                       align="l" + "r" * (len(header) - 1)))
