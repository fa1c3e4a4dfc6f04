"""Throughput of the engine against NumPy, looped and batched, in seed-steps per second.

Per agent and run count: ``jb.simulate``'s seed-steps/s (compile apart) beside the NumPy loop
(one seed at a time, float64, as the papers' code runs) and batched NumPy (all runs as a leading
axis, float32), whose regret is checked against the engine's (``tests/references/
numpy_linear.py``); the roofline from :data:`FLOPS_PER_STEP` against ``--peak-gflops``; for
``glm-es`` (its NumPy refit grows with t) the engine's rate over growing horizons. Targets,
printed at 1,000 runs, never asserted: >= 100x the loop and >= 10x batched NumPy (>= 30x the
loop without a batched reference). Neural agents go to ``throughput_neural``::

    python -m benchmarks.throughput --quick              # a smoke test (about a minute)
    python -m benchmarks.throughput --agents lin-ts,ensemble-pp:ensemble_size=16 --markdown
    python -m benchmarks.throughput --no-reference --runs 1000,1000000 --block-runs all  # a GPU
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks import throughput_neural
from benchmarks import timing as T
from tests.references import numpy_linear as N
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


def _ridge(d: int) -> int:  # the Potter step of linalg.ridge_update: S^T x, S s, S downdate
    return 6 * d * d + 7 * d


#: FLOP per seed-step of the engine's forms, ``(agent, d, K) -> FLOP`` (a multiply-add is 2;
#: random draws, argmax, the environment and the bookkeeping not counted)
FLOPS_PER_STEP = {  # S z, mean + S z, arms @ theta; update: 8d^2 + 2Kd + O(d)
    "lin-ts": lambda agent, d, k: 2 * d * d + 2 * d + 2 * k * d + _ridge(d),
    # scores and bonus; update; widths downdate: 6d^2 + 4Kd + O(K + d)
    "lin-ucb": lambda agent, d, k: 4 * k * d + 6 * k + _ridge(d),
    # member, scores; update; x^T A, A += ...: 6d^2 + 4dm + 2Kd + O(d + m)
    "lin-es": lambda agent, d, k: (2 * d + 2 * k * d + _ridge(d) + 4 * d * agent.ensemble_size
                                   + agent.ensemble_size),
    # A zeta, scores; update; sigma z, A += ...: 6d^2 + 6dM + 2Kd + O(d + M)
    "ensemble-pp": lambda agent, d, k: (3 * d + 2 * k * d + _ridge(d)
                                        + 6 * d * agent.ensemble_size + 2 * agent.ensemble_size),
}


@dataclasses.dataclass(frozen=True)
class BenchEntry:
    """One benchmarked configuration, parsed from ``name[:field=value...]``."""

    label: str
    name: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def reference(self):
        return N.NUMPY_REFERENCES[self.name]

    def make(self, dim: int, num_arms: int):
        """``(env, agent)``: the reference's environment and the configured JAX agent."""
        import jaxbandits as jb

        env = jb.make_env(self.reference.env_name, dim=dim, num_arms=num_arms)
        return env, jb.make_agent(self.name, **dict(self.overrides))


def parse_entry(spec: str) -> BenchEntry:
    """``"ensemble-pp:ensemble_size=8"`` -> the entry labelled ``ensemble-pp[M=8]``."""
    name, overrides = T.parse_agent_spec(spec)
    if name not in N.NUMPY_REFERENCES:
        raise ValueError(f"no NumPy reference for {name!r} (have: {', '.join(N.NUMPY_REFERENCES)})"
                         "; add one with @numpy_reference")
    fields = ",".join(f"{LABEL_ALIASES.get(k, k)}={v}" for k, v in overrides)
    return BenchEntry(f"{name}[{fields}]" if fields else name, name, tuple(overrides))


def check_numpy(env, agent, name: str, *, horizon: int, seeds: int, jax_runs: int,
                chunk_size: int | None, seed: int) -> dict:
    """NumPy seed-steps/s (best seed) and final regret against the JAX agent's mean regret."""
    import jaxbandits as jb

    runs = [N.numpy_run(env, agent, name, horizon, seed=10_000 + s) for s in range(seeds)]
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
            run = N.numpy_batched_run(env, agent, name, horizon, runs,
                                    seed + 1_000 * trial + play, dtype=dtype,
                                    time_budget=min_time - seconds)
            steps, seconds, play = steps + run.steps, seconds + run.seconds, play + 1
        if runs * steps / seconds > best["rate"]:
            best = {"rate": runs * steps / seconds, "steps": steps, "seconds": seconds}
    return best


def step_time_windows(runs: Sequence, num_windows: int = 4) -> list[tuple]:
    """Median over seeds of the mean seconds per step in ``(first, last, seconds)`` windows:
    the warm-up (if any), then the rest of the run cut into ``num_windows`` equal parts."""
    horizon = len(runs[0].step_seconds)
    warmup = min(runs[0].warmup_steps, horizon)
    edges = [0] if warmup == 0 else [0, warmup]
    rest = horizon - edges[-1]
    edges += [edges[-1] + round(rest * (i + 1) / num_windows) for i in range(num_windows)]
    return [(lo + 1, hi, float(np.median([np.mean(r.step_seconds[lo:hi]) for r in runs])))
            for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]


def parse_args(argv=None):
    args = T.cli(__doc__, argv, **T.COMMON, quick_defaults={
        "agents": QUICK_AGENTS, "runs": [10], "horizon": 200, "numpy_horizon": 200,
        "check_seeds": 2, "check_runs": 10, "repeats": 1, "min_time": 0.05,
        "flat": "glm-es:warmup=50", "flat_horizons": [200, 400]},
        agents=(DEFAULT_AGENTS, "agents, each name[:field=value...] (NumPy references: "
                f"{', '.join(N.NUMPY_REFERENCES)}; PyTorch, via throughput_neural.py: "
                f"{', '.join(TORCH_REFERENCES)})"),
        runs=([1, 10, 100, 1000], "run counts"),
        horizon=(5000, "JAX rounds per simulate call (agents whose NumPy cost grows with t: "
                 "--numpy-horizon)"),
        numpy_horizon=(2000, "NumPy steps per seed, the regret check's T"),
        check_seeds=(8, "NumPy seeds, timed and regret-checked"),
        check_runs=(200, "JAX runs of the regret check, also the batched reference's"),
        repeats=(3, "timing trials per measurement, the best reported"),
        min_time=(1.0, "seconds per trial, JAX and batched NumPy"),
        max_time=(60.0, "no further JAX trial once a measurement spent this many seconds"),
        chunk_size=(int, None, "simulate's chunk_size (default: the engine's)"),
        flat=("glm-es", "the flat-in-t section's agent, name[:field=value...]; 'none' skips it"),
        flat_horizons=([1000, 4000, 16000], "its JAX horizons"), flat_runs=(10, "its JAX runs"),
        batched_dtype=({"choices": ("float32", "float64")}, "float32",
                       "the batched NumPy references' float type"),
        peak_gflops=(142.0, "the machine's f32 peak for the roofline line"),
        no_reference=(False, "JAX numbers only (no NumPy, no checks, no flat-in-t section); a "
                      "run count that does not fit the device is printed as such (GPU sweeps)"))
    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not specs:
        args.error("--agents is empty")
    # neural agents are measured against PyTorch by throughput_neural.py (same options)
    args.neural = [a for a in specs if T.parse_agent_spec(a)[0] in TORCH_REFERENCES]
    args.neural_runs = args.runs if "--runs" in args.given else None
    try:
        args.agents = [parse_entry(a) for a in specs if a not in args.neural]
        linear = (bool(args.agents) or "--flat" in args.given) and not args.no_reference
        args.flat = None if args.flat.lower() == "none" or not linear else parse_entry(args.flat)
    except ValueError as err:
        args.error(str(err))
    return args


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


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
            f"{T.fmt_rate(row['rate'])} seed-steps/s = {achieved:.2f} GFLOP/s achieved = "
            f"{100.0 * achieved / peak_gflops:.2f}% of the {peak_gflops:g} GFLOP/s f32 peak")


def time_rows(args, entry: BenchEntry, env, agent, horizon: int, runs_list: Sequence[int],
              compiled: dict[int, float] | None = None, before=None) -> list[dict]:
    """A row per run count: ``before(runs)``'s fields (measured first), then the engine's best
    rate (``time_jax``; ``compiled[runs]`` seconds of compilation paid elsewhere added)."""
    rows = []
    for runs in runs_list:
        extra = before(runs) if before else {}
        m = T.time_jax(env, agent, horizon, runs, repeats=args.repeats, min_time=args.min_time,
                       max_time=args.max_time, chunk_size=args.chunk_size, seed=args.seed,
                       block_runs=args.block_runs)
        m["compile"] += (compiled or {}).get(runs, 0.0)
        rows.append({"agent": entry.label, "env": env.name, "runs": runs, "horizon": horizon,
                     **m, **extra})
        print(T.jax_line(entry.label, runs, m), flush=True)
    return rows


def jax_only(args, entry: BenchEntry, env, agent) -> tuple[list[dict], list[str]]:
    """``--no-reference``: the rows of one agent, a run count that does not fit the device
    printed as ``does not fit`` (the ones after it skipped); the best run count and its
    roofline."""
    rows = []
    for runs in args.runs:
        try:
            rows += time_rows(args, entry, env, agent, args.horizon, [runs])
        except Exception as err:  # noqa: BLE001 - out of memory, whatever the backend says
            print(f"[jax]   {entry.label} runs={runs}: does not fit ({type(err).__name__}: "
                  f"{str(err).splitlines()[0][:160]}); the run counts after it skipped",
                  flush=True)
            break
    if not rows:
        return rows, []
    best = max(rows, key=lambda r: r["rate"])
    return rows, [f"best {entry.label}: {T.fmt_rate(best['rate'])} seed-steps/s at "
                  f"{best['runs']:,} runs (compile {best['compile']:.2f} s)"]


def with_references(args, entry: BenchEntry, env, agent, jb, dtype) -> tuple[list[dict], dict]:
    """The NumPy checks and rates of one agent, then its rows with both yardsticks."""
    check = check_numpy(env, agent, entry.name, horizon=args.numpy_horizon,
                        seeds=args.check_seeds, jax_runs=args.check_runs,
                        chunk_size=args.chunk_size, seed=args.seed)
    verdict = "consistent" if check["consistent"] else "MISMATCH: check the NumPy reference"
    print(f"[check] {entry.label} on {env.name}: final regret at T={args.numpy_horizon}: "
          f"NumPy {check['np_regret']:.1f} +- {check['np_half']:.1f} ({args.check_seeds} "
          f"seeds), JAX {check['jax_regret']:.1f} +- {check['jax_half']:.1f} "
          f"({args.check_runs} runs) -> {verdict}; NumPy {T.fmt_rate(check['rate'])} "
          f"seed-steps/s (best), {T.fmt_rate(check['rate_median'])} (median)", flush=True)
    batched = entry.name in N.NUMPY_BATCHED
    if batched:
        run = N.numpy_batched_run(env, agent, entry.name, args.numpy_horizon, args.check_runs,
                                20_000, dtype=dtype)
        b = regret_agreement(run.regrets, check["jax_regret"], check["jax_half"],
                             args.check_runs)
        verdict = "consistent" if b["consistent"] else "MISMATCH: check the batched NumPy " \
            "reference"
        print(f"[batched] {entry.label} on {env.name}: final regret at T={args.numpy_horizon}: "
              f"batched NumPy {b['np_regret']:.1f} +- {b['np_half']:.1f} ({args.check_runs} "
              f"runs, {args.batched_dtype}), JAX {b['jax_regret']:.1f} +- {b['jax_half']:.1f} "
              f"-> {verdict}; {T.fmt_rate(args.check_runs * run.steps / run.seconds)} "
              f"seed-steps/s at {args.check_runs} runs", flush=True)

    def batched_rate(runs):
        if not batched:
            return {"batched_rate": None}
        b = time_batched(env, agent, entry.name, horizon=args.numpy_horizon, runs=runs,
                         repeats=args.repeats, min_time=args.min_time, seed=30_000, dtype=dtype)
        print(f"[batched] {entry.label} runs={runs}: {T.fmt_rate(b['rate'])} seed-steps/s "
              f"(best trial: {b['steps']} rounds in {b['seconds']:.2f} s)")
        return {"batched_rate": b["rate"]}

    horizon = args.numpy_horizon if entry.reference.grows_with_t else args.horizon
    chunk = jb.default_chunk_size(agent, horizon) if args.chunk_size is None else args.chunk_size
    compiled = {runs: check["compiled"].get((runs, chunk), 0.0) for runs in args.runs}
    rows = [{**row, "np_rate": check["rate"], "ratio": row["rate"] / check["rate"],
             "batched_ratio": None if row["batched_rate"] is None
             else row["rate"] / row["batched_rate"]}
            for row in time_rows(args, entry, env, agent, horizon, args.runs, compiled,
                                 batched_rate)]
    return rows, check


def print_flat(args, checks: dict) -> None:
    """The flat-in-t section: the engine's rate over growing horizons, NumPy's ms per step."""
    entry = args.flat
    env, agent = entry.make(args.dim, args.num_arms)
    rows = T.flatness(env, agent, sorted(args.flat_horizons), args.flat_runs, seed=args.seed,
                      chunk_size=min(min(args.flat_horizons), 1000))
    numpy_runs = checks.get(entry.label, {}).get("numpy_runs") or [
        N.numpy_run(env, agent, entry.name, args.numpy_horizon, 10_000)]
    print(f"flat in t: {entry.label}, JAX seed-steps/s at {args.flat_runs} run(s) over growing "
          "horizons; 'marginal' is the rate of the rounds a horizon adds to the previous one")
    T.print_table(["agent", "horizon", "wall s", "JAX seed-steps/s", "rounds",
                   "marginal seed-steps/s"],
                  [[entry.label, r["horizon"], f"{r['wall']:.2f}", T.fmt_rate(r["rate"]),
                    "{}-{}".format(*r["window"]), T.fmt_rate(r["marginal"])] for r in rows],
                  args.markdown)
    warm = numpy_runs[0].warmup_steps
    parts = [f"{lo}-{hi}{' (warm-up)' if warm and hi <= warm else ''}: {1e3 * s:.3f}"
             for lo, hi, s in step_time_windows(numpy_runs)]
    print(f"NumPy reference of {entry.label}, ms per step (median of {len(numpy_runs)} "
          f"seed(s)) by rounds: {' | '.join(parts)}")


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    jb = T.start(args.cpu_devices)
    print(T.header_line("jaxbandits throughput benchmark", f"numpy {np.__version__}"))
    sizes = f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon {args.horizon}"
    trials = f"best of {args.repeats} trial(s) of >= {args.min_time:g} s"
    grows = "" if args.horizon == args.numpy_horizon else (
        f" ({args.numpy_horizon} for agents whose NumPy cost grows with t)")
    print(f"{sizes}, {trials}; JAX only (--no-reference)" if args.no_reference else
          f"{sizes}{grows}, {trials}; NumPy loop {args.numpy_horizon} steps x {args.check_seeds} "
          f"seed(s), best seed; batched NumPy ({args.batched_dtype}, one process) {trials} in "
          f"plays of <= {args.numpy_horizon} rounds{'; quick mode' if args.quick else ''}",
          flush=True)
    if args.neural and args.no_reference:
        print(f"(neural agents {', '.join(args.neural)}: run "
              "python -m benchmarks.throughput_neural --no-torch for them)")
    elif args.neural:
        neural_args = ["--agents", ",".join(args.neural)] + (
            ["--runs", ",".join(map(str, args.neural_runs))] if args.neural_runs else []) + (
            ["--quick"] if args.quick else []) + (["--markdown"] if args.markdown else [])
        print(f"\nneural agents ({', '.join(args.neural)}): against PyTorch, as "
              f"`python -m benchmarks.throughput_neural {' '.join(neural_args)}`", flush=True)
        throughput_neural.main(neural_args)
        if not args.agents and args.flat is None:
            return 0
        print()
    rows, checks, lines = [], {}, []
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        if args.no_reference:
            mine, best = jax_only(args, entry, env, agent)
            rows, lines = rows + mine, lines + best
            top = max(mine, key=lambda r: r["rate"]) if mine else None
        else:
            mine, checks[entry.label] = with_references(args, entry, env, agent, jb,
                                                        np.dtype(args.batched_dtype).type)
            rows += mine
            top = next(r for r in mine if r["runs"] == max(args.runs))
        if top is not None and entry.name in FLOPS_PER_STEP:
            lines.append((entry.label, top, FLOPS_PER_STEP[entry.name](agent, env.dim,
                                                                        env.num_arms)))
    header = ["agent", "env", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s"]
    body = [[r["agent"], r["env"], r["runs"], r["horizon"], f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", T.fmt_rate(r["rate"])] for r in rows]
    if not args.no_reference:
        header += ["NumPy loop seed-steps/s", "ratio", "batched NumPy seed-steps/s",
                   "ratio batched"]
        body = [line + [T.fmt_rate(r["np_rate"]), _ratio(r["ratio"]),
                        T.fmt_rate(r["batched_rate"]), _ratio(r["batched_ratio"])]
                for line, r in zip(body, rows, strict=True)]
    print()
    T.print_table(header, body, args.markdown)
    print()
    if not args.no_reference:
        tops = {r["agent"]: r for r in rows if r["runs"] == max(args.runs)}
        lines = [summary_line(e.label, tops[e.label], max(args.runs)) for e in args.agents] + \
            lines
    print("\n".join(line if isinstance(line, str) else roofline_line(
        line[0], line[1], line[1]["runs"], line[2], args.peak_gflops) for line in lines))
    grows = [e.label for e in args.agents if e.reference.grows_with_t]
    if grows and not args.no_reference:
        print(f"({', '.join(grows)}: the NumPy reference's per-step cost grows with t, so its "
              f"rows compare both sides over the same {args.numpy_horizon} rounds)")
    if args.flat is not None:
        print()
        print_flat(args, checks)
    print(T.end_line(t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
