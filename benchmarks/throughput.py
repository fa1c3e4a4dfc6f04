"""Throughput of the engine against NumPy, looped and batched, in seed-steps per second.

For every agent and run count: the seed-steps (runs x rounds) per second ``jb.simulate`` plays
(compile time apart), beside two NumPy yardsticks of the same algorithm and the ratio to each:
the **NumPy loop** (one seed at a time, a Python loop per step, float64, as the papers' code
runs; its rate per seed-step does not depend on the runs) and **batched NumPy** (the linear
agents: all R runs as a leading axis, one ``(R, ...)`` draw a round, float32, at the engine's
cost per round: no factorisation, no O(K d^2) widths; measured at every run count). The
references live in ``tests/references/numpy_linear.py``; each one's mean final regret is checked
against the engine's (``consistent`` or ``MISMATCH``). Targets, printed at 1,000 runs, never
asserted: >= 100x the loop and >= 10x batched NumPy (>= 30x the loop for ``glm-es``).

Roofline: the engine's GFLOP/s at the top run count, from approximate FLOP counts of its forms
(:data:`FLOPS_PER_STEP`; a multiply-add is 2 FLOP), against ``--peak-gflops`` (142: the 2-core
reference machine's f32 matmul peak). ``glm-es`` (its NumPy reference refits every member on the
whole history, so its cost grows with t) is timed over ``--numpy-horizon`` on both sides, and a
"flat in t" section shows the engine's rate over growing horizons. Neural agents in ``--agents``
go to ``throughput_neural`` (PyTorch references). Timing: the best of ``--repeats`` trials, each
repeating a call for ``--min-time`` seconds::

    python -m benchmarks.throughput                      # the full benchmark (long on a laptop)
    python -m benchmarks.throughput --quick              # a smoke test (about a minute)
    python -m benchmarks.throughput --agents lin-ts,ensemble-pp:ensemble_size=16 --markdown
    python -m benchmarks.throughput --no-reference --runs 1000,1000000 --block-runs all  # a GPU

An agent is ``name[:field=value...]`` (the overrides of ``jb.make_agent``, read as ``jaxbandits
run --set`` reads them). Adding one: a reference class with ``@numpy_reference`` (and
``@numpy_batched_reference``) in ``tests/references/numpy_linear.py``, a FLOP count here.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks import throughput_neural
from benchmarks.timing import (
    fmt_rate,
    header_line,
    int_list,
    load_line,
    parse_agent_spec,
    parse_options,
    print_table,
    time_jax,
)
from tests.references.numpy_linear import (
    NUMPY_BATCHED,
    NUMPY_REFERENCES,
    NumpyRun,
    numpy_batched_run,
    numpy_run,
)
from tests.references.parity import regret_agreement
from tests.references.torch_neural import TORCH_REFERENCES

TARGET_RUNS = 1000  # the run count the targets are set at
TARGET_RATIO = 30.0  # against the NumPy loop, for agents with no batched reference
LOOP_TARGET, BATCHED_TARGET = 100.0, 10.0  # agents with a batched reference
DEFAULT_AGENTS = ("lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,"
                  "ensemble-pp:ensemble_size=32,glm-es")
# quick: a 50-round warm-up, so that glm-es's gradient steps run within the short horizon
QUICK_AGENTS = DEFAULT_AGENTS.replace("glm-es", "glm-es:warmup=50")
LABEL_ALIASES = {"ensemble_size": "M"}  # how an override is written in a row label


# FLOP per seed-step of the engine's forms (random draws, argmax, the environment and the
# bookkeeping not counted). Every ridge agent's update is the Potter square-root step of
# ``linalg.ridge_update``: S^T x, S s and the rank-one downdate of S (2d^2 each), O(d) besides.
def _ridge_update_flops(d: int) -> int:
    return 6 * d * d + 7 * d


def _lin_ts_flops(agent, d: int, k: int) -> int:  # S z, mean + S z, arms @ theta; update
    return 2 * d * d + 2 * d + 2 * k * d + _ridge_update_flops(d)


def _lin_ucb_flops(agent, d: int, k: int) -> int:  # scores and bonus; update; widths downdate
    return 4 * k * d + 6 * k + _ridge_update_flops(d)


def _lin_es_flops(agent, d: int, k: int) -> int:  # member, scores; update; x^T A, A += ...
    m = int(agent.ensemble_size)
    return 2 * d + 2 * k * d + _ridge_update_flops(d) + 4 * d * m + m


def _ensemble_pp_flops(agent, d: int, k: int) -> int:  # A zeta, scores; update; sigma z, A += ...
    m = int(agent.ensemble_size)
    return 3 * d + 2 * k * d + _ridge_update_flops(d) + 6 * d * m + 2 * m


FLOPS_PER_STEP: dict[str, Callable[[Any, int, int], int]] = {
    "lin-ts": _lin_ts_flops,  # 8d^2 + 2Kd + O(d): 5,380 at d = 20, K = 50
    "lin-ucb": _lin_ucb_flops,  # 6d^2 + 4Kd + O(K + d): 6,840
    "lin-es": _lin_es_flops,  # 6d^2 + 4dm + 2Kd + O(d + m): 6,605 at m = 25
    "ensemble-pp": _ensemble_pp_flops,  # 6d^2 + 6dM + 2Kd + O(d + M): 5,576 (M=8), 8,504 (M=32)
}


@dataclasses.dataclass(frozen=True)
class BenchEntry:
    """One benchmarked configuration, parsed from ``name[:field=value...]``."""

    label: str
    name: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def reference(self):
        return NUMPY_REFERENCES[self.name]

    def make(self, dim: int, num_arms: int):
        """``(env, agent)``: the reference's environment and the configured JAX agent."""
        import jaxbandits as jb

        env = jb.make_env(self.reference.env_name, dim=dim, num_arms=num_arms)
        return env, jb.make_agent(self.name, **dict(self.overrides))


def parse_entry(spec: str) -> BenchEntry:
    """``"ensemble-pp:ensemble_size=8"`` -> the entry labelled ``ensemble-pp[M=8]``."""
    name, overrides = parse_agent_spec(spec)
    if name not in NUMPY_REFERENCES:
        raise ValueError(f"no NumPy reference for {name!r} (have: {', '.join(NUMPY_REFERENCES)})"
                         "; add one with @numpy_reference")
    fields = ",".join(f"{LABEL_ALIASES.get(k, k)}={v}" for k, v in overrides)
    return BenchEntry(f"{name}[{fields}]" if fields else name, name, tuple(overrides))


def check_numpy(env, agent, name: str, *, horizon: int, seeds: int, jax_runs: int,
                chunk_size: int | None, seed: int) -> dict:
    """NumPy seed-steps/s (best seed) and final regret against the JAX agent's mean regret."""
    import jaxbandits as jb

    runs = [numpy_run(env, agent, name, horizon, seed=10_000 + s) for s in range(seeds)]
    rates = [horizon / r.seconds for r in runs]
    result = jb.simulate(env, agent, seed, horizon, jax_runs, progress=False,
                         chunk_size=chunk_size)
    # the program this call compiled: (runs, rounds per chunk), reused by a timing of that shape
    compiled = {(jax_runs, result.extras["chunk_size"]): result.compile_time}
    return {"rate": max(rates), "rate_median": float(np.median(rates)), "numpy_runs": runs,
            **regret_agreement([r.regret for r in runs], *result.final("regret"), jax_runs),
            "compiled": compiled}


def time_batched(env, agent, name: str, *, horizon: int, runs: int, repeats: int,
                 min_time: float, seed: int, dtype) -> dict:
    """Best-of-``repeats`` seed-steps/s of the batched reference at ``runs`` runs: a trial plays
    fresh batches (``horizon`` rounds, the last cut short: the cost is flat in t) for
    ``min_time`` seconds. ``{"rate", "steps", "seconds"}`` of the best trial."""
    best = {"rate": 0.0, "steps": 0, "seconds": 0.0}
    for trial in range(repeats):
        steps, seconds, play = 0, 0.0, 0
        while seconds < min_time:
            run = numpy_batched_run(env, agent, name, horizon, runs,
                                    seed + 1_000 * trial + play, dtype=dtype,
                                    time_budget=min_time - seconds)
            steps, seconds, play = steps + run.steps, seconds + run.seconds, play + 1
        if runs * steps / seconds > best["rate"]:
            best = {"rate": runs * steps / seconds, "steps": steps, "seconds": seconds}
    return best


def step_time_windows(runs: Sequence[NumpyRun], num_windows: int = 4) -> list[tuple]:
    """Median over seeds of the mean seconds per step in ``(first, last, seconds)`` windows:
    the warm-up (if any), then the rest of the run cut into ``num_windows`` equal parts."""
    horizon = len(runs[0].step_seconds)
    warmup = min(runs[0].warmup_steps, horizon)
    edges = [0] if warmup == 0 else [0, warmup]
    rest = horizon - edges[-1]
    edges += [edges[-1] + round(rest * (i + 1) / num_windows) for i in range(num_windows)]
    return [(lo + 1, hi, float(np.median([np.mean(r.step_seconds[lo:hi]) for r in runs])))
            for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]


def flat_in_t(entry: BenchEntry, env, agent, *, horizons: Sequence[int], runs: int,
              seed: int) -> list[dict]:
    """The engine's seed-steps/s over growing ``horizons`` and the marginal rate of the rounds
    each adds to the previous one (one program: the smallest horizon's chunk)."""
    import jaxbandits as jb

    rows, previous_t, previous_wall = [], 0, 0.0
    for horizon in sorted(horizons):
        wall = jb.simulate(env, agent, seed, horizon, runs, progress=False,
                           chunk_size=min(min(horizons), 1000)).wall_time
        rows.append({"agent": entry.label, "horizon": horizon, "wall": wall,
                     "rate": runs * horizon / wall, "from": previous_t + 1,
                     "marginal": runs * (horizon - previous_t) / max(wall - previous_wall, 1e-9)})
        previous_t, previous_wall = horizon, wall
    return rows


def parse_args(argv=None) -> argparse.Namespace:
    integer, integers = {"type": int}, {"type": int_list}
    p, args = parse_options(__doc__, {
        "--agents": ({}, "comma-separated agents, each name[:field=value...] (NumPy references: "
                     f"{', '.join(NUMPY_REFERENCES)}; PyTorch, via throughput_neural.py: "
                     f"{', '.join(TORCH_REFERENCES)})", DEFAULT_AGENTS, QUICK_AGENTS),
        "--runs": (integers, "comma-separated run counts", [1, 10, 100, 1000], [10]),
        "--horizon": (integer, "JAX rounds per simulate call (agents whose NumPy cost grows "
                      "with t: --numpy-horizon)", 5000, 200),
        "--numpy-horizon": (integer, "NumPy steps per seed, the regret check's T", 2000, 200),
        "--check-seeds": (integer, "NumPy seeds, timed and regret-checked", 8, 2),
        "--check-runs": (integer, "JAX runs of the regret check, also the batched "
                         "reference's", 200, 10),
        "--repeats": (integer, "timing trials per measurement, the best reported", 3, 1),
        "--min-time": ({"type": float}, "seconds per trial, JAX and batched NumPy", 1.0, 0.05),
        "--max-time": ({"type": float}, "no further JAX trial once this many seconds went into "
                       "a measurement", 60.0, 60.0),
        "--chunk-size": (integer, "simulate's chunk_size (default: the engine's)", None, None),
        "--flat": ({}, "the flat-in-t section's agent, name[:field=value...]; 'none' skips it",
                   "glm-es", "glm-es:warmup=50"),
        "--flat-horizons": (integers, "its JAX horizons", [1000, 4000, 16000], [200, 400]),
        "--flat-runs": (integer, "its JAX runs", 10, 10),
        "--batched-dtype": ({"choices": ("float32", "float64")}, "the batched NumPy "
                            "references' float type", "float32", "float32"),
        "--peak-gflops": ({"type": float}, "the machine's f32 peak for the roofline line",
                          142.0, 142.0),
        "--no-reference": ({"action": "store_true"}, "JAX numbers only (no NumPy, no checks, "
                           "no flat-in-t section); a run count that does not fit the device is "
                           "printed as such (GPU sweeps)", False, False)}, argv)
    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not specs:
        p.error("--agents is empty")
    # neural agents are measured against PyTorch by throughput_neural.py (same options)
    args.neural = [a for a in specs if parse_agent_spec(a)[0] in TORCH_REFERENCES]
    args.neural_runs = args.runs if "--runs" in args.given else None
    try:
        args.agents = [parse_entry(a) for a in specs if a not in args.neural]
        linear = (bool(args.agents) or "--flat" in args.given) and not args.no_reference
        args.flat = None if args.flat.lower() == "none" or not linear else parse_entry(args.flat)
    except ValueError as err:
        p.error(str(err))
    return args


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def print_throughput(rows: list[dict], markdown: bool, references: bool = True) -> None:
    """The throughput table; without ``references``, the engine's columns alone."""
    header = ["agent", "env", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s"]
    body = [[r["agent"], r["env"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"])] for r in rows]
    if references:
        header += ["NumPy loop seed-steps/s", "ratio", "batched NumPy seed-steps/s",
                   "ratio batched"]
        for line, r in zip(body, rows, strict=True):
            line += [fmt_rate(r["np_rate"]), _ratio(r["ratio"]), fmt_rate(r["batched_rate"]),
                     _ratio(r["batched_ratio"])]
    print_table(header, body, markdown)


def _against(ratio: float, target: float, runs: int) -> str:
    if runs < TARGET_RUNS:
        return f"{ratio:.1f}x"
    return f"{ratio:.1f}x (target >= {target:g}x: {'met' if ratio >= target else 'NOT met'})"


def summary_line(label: str, row: dict, runs: int) -> str:
    """``ratio LABEL at RUNS runs: ...`` against the NumPy loop (and the batched reference), with
    the targets' verdicts at ``TARGET_RUNS`` runs or more (printed, never asserted)."""
    if row["batched_ratio"] is None:
        return f"ratio {label} at {runs} runs: {_against(row['ratio'], TARGET_RATIO, runs)}"
    return (f"ratio {label} at {runs} runs: {_against(row['ratio'], LOOP_TARGET, runs)} vs the "
            f"NumPy loop, {_against(row['batched_ratio'], BATCHED_TARGET, runs)} vs batched "
            "NumPy")


def roofline_line(label: str, row: dict, runs: int, flops: int, peak_gflops: float) -> str:
    """The engine's achieved GFLOP/s (``rate * flops / 1e9``) and its fraction of the peak."""
    achieved = row["rate"] * flops / 1e9
    return (f"roofline {label} at {runs} runs: ~{flops:,} FLOP per seed-step x "
            f"{fmt_rate(row['rate'])} seed-steps/s = {achieved:.2f} GFLOP/s achieved = "
            f"{100.0 * achieved / peak_gflops:.2f}% of the {peak_gflops:g} GFLOP/s f32 peak")


def print_flat(entry: BenchEntry, rows: list[dict], runs: int, numpy_runs: Sequence[NumpyRun],
               markdown: bool) -> None:
    print(f"flat in t: {entry.label}, JAX seed-steps/s at {runs} run(s) over growing horizons; "
          "'marginal' is the rate of the rounds a horizon adds to the previous one")
    print_table(["agent", "horizon", "wall s", "JAX seed-steps/s", "rounds",
                 "marginal seed-steps/s"],
                [[r["agent"], str(r["horizon"]), f"{r['wall']:.2f}", fmt_rate(r["rate"]),
                  f"{r['from']}-{r['horizon']}", fmt_rate(r["marginal"])] for r in rows],
                markdown)
    warm = numpy_runs[0].warmup_steps
    parts = [f"{lo}-{hi}{' (warm-up)' if warm and hi <= warm else ''}: {1e3 * s:.3f}"
             for lo, hi, s in step_time_windows(numpy_runs)]
    print(f"NumPy reference of {entry.label}, ms per step (median of {len(numpy_runs)} "
          f"seed(s)) by rounds: {' | '.join(parts)}")


def time_rows(args, entry: BenchEntry, env, agent, horizon: int, runs_list: Sequence[int],
              compiled: dict[int, float] | None = None, before=None) -> list[dict]:
    """A row per run count: ``before(runs)``'s fields (measured first), then the engine's best
    rate (:func:`time_jax`; ``compiled[runs]`` seconds of compilation paid elsewhere added)."""
    rows = []
    for runs in runs_list:
        extra = before(runs) if before else {}
        m = time_jax(env, agent, horizon, runs, repeats=args.repeats, min_time=args.min_time,
                     max_time=args.max_time, chunk_size=args.chunk_size, seed=args.seed,
                     block_runs=args.block_runs)
        m["compile"] += (compiled or {}).get(runs, 0.0)
        rows.append({"agent": entry.label, "env": env.name, "runs": runs, "horizon": horizon,
                     **m, **extra})
        print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
              f"compile {m['compile']:.2f} s, {m['calls']} call(s)", flush=True)
    return rows


def jax_only(args) -> int:
    """``--no-reference``: the engine's rate and compile time per (agent, run count), the best
    run count per agent and its roofline; a run count that does not fit the device is printed
    as ``does not fit`` and the run counts after it are skipped."""
    if args.neural:
        print(f"(neural agents {', '.join(args.neural)}: run "
              "python -m benchmarks.throughput_neural --no-torch for them)")
    t0, rows, lines = time.perf_counter(), [], []
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        mine = []
        for runs in args.runs:
            try:
                mine += time_rows(args, entry, env, agent, args.horizon, [runs])
            except Exception as err:  # noqa: BLE001 - out of memory, whatever the backend says
                print(f"[jax]   {entry.label} runs={runs}: does not fit ({type(err).__name__}: "
                      f"{str(err).splitlines()[0][:160]}); the run counts after it skipped",
                      flush=True)
                break
        rows += mine
        if mine:
            best = max(mine, key=lambda r: r["rate"])
            lines.append(f"best {entry.label}: {fmt_rate(best['rate'])} seed-steps/s at "
                         f"{best['runs']:,} runs (compile {best['compile']:.2f} s)")
            if entry.name in FLOPS_PER_STEP:
                flops = FLOPS_PER_STEP[entry.name](agent, env.dim, env.num_arms)
                lines.append(roofline_line(entry.label, best, best["runs"], flops,
                                           args.peak_gflops))
    print()
    print_throughput(rows, args.markdown, references=False)
    print("\n" + "\n".join(lines))
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # compile times are reported apart; the cache shortens reruns
    print(header_line("jaxbandits throughput benchmark", f"numpy {np.__version__}"))
    sizes = f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon {args.horizon}"
    trials = f"best of {args.repeats} trial(s) of >= {args.min_time:g} s"
    if args.no_reference:
        print(f"{sizes}, {trials}; JAX only (--no-reference)")
        return jax_only(args)
    grows = "" if args.horizon == args.numpy_horizon else (
        f" ({args.numpy_horizon} for agents whose NumPy cost grows with t)")
    print(f"{sizes}{grows}, {trials}; NumPy loop {args.numpy_horizon} steps x "
          f"{args.check_seeds} seed(s), best seed; batched NumPy ({args.batched_dtype}, one "
          f"process) {trials} in plays of <= {args.numpy_horizon} rounds"
          f"{'; quick mode' if args.quick else ''}", flush=True)
    if args.neural:
        neural_args = ["--agents", ",".join(args.neural)] + (
            ["--runs", ",".join(map(str, args.neural_runs))] if args.neural_runs else []) + (
            ["--quick"] if args.quick else []) + (["--markdown"] if args.markdown else [])
        print(f"\nneural agents ({', '.join(args.neural)}): against PyTorch, as "
              f"`python -m benchmarks.throughput_neural {' '.join(neural_args)}`", flush=True)
        throughput_neural.main(neural_args)
        if not args.agents and args.flat is None:
            return 0
        print()

    dtype = np.dtype(args.batched_dtype).type
    rows, checks = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        checks[entry.label] = check = check_numpy(
            env, agent, entry.name, horizon=args.numpy_horizon, seeds=args.check_seeds,
            jax_runs=args.check_runs, chunk_size=args.chunk_size, seed=args.seed)
        print(f"[check] {entry.label} on {env.name}: final regret at T={args.numpy_horizon}: "
              f"NumPy {check['np_regret']:.1f} +- {check['np_half']:.1f} ({args.check_seeds} "
              f"seeds), JAX {check['jax_regret']:.1f} +- {check['jax_half']:.1f} "
              f"({args.check_runs} runs) -> "
              + ("consistent" if check["consistent"] else "MISMATCH: check the NumPy reference")
              + f"; NumPy {fmt_rate(check['rate'])} seed-steps/s (best), "
              f"{fmt_rate(check['rate_median'])} (median)", flush=True)
        batched = entry.name in NUMPY_BATCHED
        if batched:
            run = numpy_batched_run(env, agent, entry.name, args.numpy_horizon, args.check_runs,
                                    20_000, dtype=dtype)
            b = regret_agreement(run.regrets, check["jax_regret"], check["jax_half"],
                                 args.check_runs)
            print(f"[batched] {entry.label} on {env.name}: final regret at "
                  f"T={args.numpy_horizon}: batched NumPy {b['np_regret']:.1f} +- "
                  f"{b['np_half']:.1f} ({args.check_runs} runs, {args.batched_dtype}), JAX "
                  f"{b['jax_regret']:.1f} +- {b['jax_half']:.1f} -> "
                  + ("consistent" if b["consistent"]
                     else "MISMATCH: check the batched NumPy reference")
                  + f"; {fmt_rate(args.check_runs * run.steps / run.seconds)} seed-steps/s at "
                  f"{args.check_runs} runs", flush=True)

        def batched_rate(runs, env=env, agent=agent, entry=entry, batched=batched):
            if not batched:
                return {"batched_rate": None}
            b = time_batched(env, agent, entry.name, horizon=args.numpy_horizon, runs=runs,
                             repeats=args.repeats, min_time=args.min_time, seed=30_000,
                             dtype=dtype)
            print(f"[batched] {entry.label} runs={runs}: {fmt_rate(b['rate'])} seed-steps/s "
                  f"(best trial: {b['steps']} rounds in {b['seconds']:.2f} s)")
            return {"batched_rate": b["rate"]}

        horizon = args.numpy_horizon if entry.reference.grows_with_t else args.horizon
        chunk = jb.default_chunk_size(agent, horizon) if args.chunk_size is None \
            else args.chunk_size
        compiled = {runs: check["compiled"].get((runs, chunk), 0.0) for runs in args.runs}
        for row in time_rows(args, entry, env, agent, horizon, args.runs, compiled,
                             batched_rate):
            rows.append({**row, "np_rate": check["rate"], "ratio": row["rate"] / check["rate"],
                         "batched_ratio": None if row["batched_rate"] is None
                         else row["rate"] / row["batched_rate"]})
    print()
    print_throughput(rows, args.markdown)
    print()
    top = max(args.runs)
    tops = {r["agent"]: r for r in rows if r["runs"] == top}
    for entry in args.agents:
        print(summary_line(entry.label, tops[entry.label], top))
    for entry in (e for e in args.agents if e.name in FLOPS_PER_STEP):
        env, agent = entry.make(args.dim, args.num_arms)
        print(roofline_line(entry.label, tops[entry.label], top,
                            FLOPS_PER_STEP[entry.name](agent, env.dim, env.num_arms),
                            args.peak_gflops))
    grows = [e.label for e in args.agents if e.reference.grows_with_t]
    if grows:
        print(f"({', '.join(grows)}: the NumPy reference's per-step cost grows with t, so its "
              f"rows compare both sides over the same {args.numpy_horizon} rounds)")
    if args.flat is not None:
        print()
        env, agent = args.flat.make(args.dim, args.num_arms)
        flat_rows = flat_in_t(args.flat, env, agent, horizons=args.flat_horizons,
                              runs=args.flat_runs, seed=args.seed)
        numpy_runs = checks.get(args.flat.label, {}).get("numpy_runs") or [
            numpy_run(env, agent, args.flat.name, args.numpy_horizon, 10_000)]
        print_flat(args.flat, flat_rows, args.flat_runs, numpy_runs, args.markdown)
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; {load_line('at the end')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
