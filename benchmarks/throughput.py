"""Throughput of the linear and GLM agents against NumPy, looped and batched, in seed-steps/s.

Targets at 1,000 runs, printed, never asserted: >= 100x the NumPy loop and >= 10x batched NumPy
(>= 30x the loop without a batched reference); neural agents go to ``throughput_neural``.
docs/benchmarks.md explains the columns and has the figures::

    python -m benchmarks.throughput --quick              # a smoke test (about a minute)
    python -m benchmarks.throughput --no-reference --runs 1000,1000000 --block-runs all  # a GPU
"""

from __future__ import annotations

import dataclasses
import sys
import time
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


#: FLOP per seed-step, ``(agent, d, K) -> FLOP`` (a multiply-add is 2; the random draws,
#: argmax, environment and bookkeeping not counted)
FLOPS_PER_STEP = {  # S z, mean + S z, arms @ theta; update
    "lin-ts": lambda agent, d, k: 2 * d * d + 2 * d + 2 * k * d + _ridge(d),
    # scores and bonus; update; widths downdate
    "lin-ucb": lambda agent, d, k: 4 * k * d + 6 * k + _ridge(d),
    # member, scores; update; x^T A, A += ...
    "lin-es": lambda agent, d, k: (2 * d + 2 * k * d + _ridge(d) + 4 * d * agent.ensemble_size
                                   + agent.ensemble_size),
    # A zeta, scores; update; sigma z, A += ...
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


def time_batched(env, agent, name: str, *, horizon: int, runs: int, repeats: int,
                 min_time: float, seed: int, dtype) -> dict:
    """Best-of-``repeats`` seed-steps/s of the batched reference at ``runs`` runs, a trial
    playing fresh batches of <= ``horizon`` rounds for ``min_time`` seconds: ``{"rate",
    "steps", "seconds"}`` of the best trial."""
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


def step_time_windows(runs, num_windows: int = 4) -> list[tuple]:
    """Median over seeds of the mean seconds per step in ``(first, last, seconds)`` windows:
    the warm-up (if any), then the rest of the run cut into ``num_windows`` equal parts."""
    horizon = len(runs[0].step_seconds)
    edges = [0] + ([min(runs[0].warmup_steps, horizon)] if runs[0].warmup_steps else [])
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
        horizon=(5000, "JAX rounds per simulate call"),
        numpy_horizon=(2000, "NumPy steps per seed, the regret check's T (and the JAX "
                       "horizon of an agent whose NumPy cost grows with t)"),
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
        no_reference=(False, "JAX numbers only; a run count that does not fit the device is "
                      "printed as such (GPU sweeps)"))
    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not specs:
        args.error("--agents is empty")
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


def time_row(args, entry: BenchEntry, env, agent, horizon: int, runs: int,
             compiled: float = 0.0) -> dict:
    """The engine's best rate at ``runs`` (``compiled`` seconds paid elsewhere added)."""
    m = T.time_jax(env, agent, horizon, runs, repeats=args.repeats, min_time=args.min_time,
                   max_time=args.max_time, chunk_size=args.chunk_size, seed=args.seed,
                   block_runs=args.block_runs)
    m["compile"] += compiled
    print(T.jax_line(entry.label, runs, m), flush=True)
    return {"agent": entry.label, "env": env.name, "runs": runs, "horizon": horizon, **m}


def jax_only(args, entry: BenchEntry, env, agent) -> tuple[list[dict], list[str]]:
    """``--no-reference``: the rows of one agent up to the first run count that does not fit
    the device (printed as such), and the line of the best."""
    rows = []
    for runs in args.runs:
        try:
            rows.append(time_row(args, entry, env, agent, args.horizon, runs))
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


def _check_line(tag: str, label: str, env, horizon: int, ref: str, a: dict, ref_size: str,
                jax_size: str) -> str:
    """A regret check's line: the reference's and the engine's mean final regret and verdict."""
    verdict = "consistent" if a["consistent"] else f"MISMATCH: check the {ref} reference"
    return (f"[{tag}] {label} on {env.name}: final regret at T={horizon}: {ref} "
            f"{a['np_regret']:.1f} +- {a['np_half']:.1f} ({ref_size}), JAX {a['jax_regret']:.1f}"
            f" +- {a['jax_half']:.1f}{jax_size} -> {verdict}; ")


def with_references(args, entry: BenchEntry, env, agent, jb, dtype) -> tuple[list[dict], list]:
    """The NumPy checks and rates of one agent, then its rows with both yardsticks; and the
    NumPy loop's runs (for the flat-in-t section)."""
    horizon, seeds = args.numpy_horizon, args.check_seeds
    np_runs = [N.numpy_run(env, agent, entry.name, horizon, seed=10_000 + s)
               for s in range(seeds)]
    rates = [horizon / r.seconds for r in np_runs]
    result = jb.simulate(env, agent, args.seed, horizon, args.check_runs, progress=False,
                         chunk_size=args.chunk_size)
    check = regret_agreement([r.regret for r in np_runs], *result.final("regret"),
                             args.check_runs)
    print(_check_line("check", entry.label, env, horizon, "NumPy", check, f"{seeds} seeds",
                      f" ({args.check_runs} runs)") + f"NumPy {T.fmt_rate(max(rates))} "
          f"seed-steps/s (best), {T.fmt_rate(float(np.median(rates)))} (median)", flush=True)
    batched = entry.name in N.NUMPY_BATCHED
    if batched:
        run = N.numpy_batched_run(env, agent, entry.name, horizon, args.check_runs, 20_000,
                                  dtype=dtype)
        b = regret_agreement(run.regrets, check["jax_regret"], check["jax_half"],
                             args.check_runs)
        print(_check_line("batched", entry.label, env, horizon, "batched NumPy", b,
                          f"{args.check_runs} runs, {args.batched_dtype}", "")
              + f"{T.fmt_rate(args.check_runs * run.steps / run.seconds)} seed-steps/s at "
              f"{args.check_runs} runs", flush=True)
    timed = horizon if entry.reference.grows_with_t else args.horizon
    chunk = jb.default_chunk_size(agent, timed) if args.chunk_size is None else args.chunk_size
    rows = []
    for runs in args.runs:
        batched_rate = None
        if batched:
            b = time_batched(env, agent, entry.name, horizon=horizon, runs=runs,
                             repeats=args.repeats, min_time=args.min_time, seed=30_000,
                             dtype=dtype)
            batched_rate = b["rate"]
            print(f"[batched] {entry.label} runs={runs}: {T.fmt_rate(b['rate'])} seed-steps/s "
                  f"(best trial: {b['steps']} rounds in {b['seconds']:.2f} s)")
        # the regret check compiled the program of (check_runs, horizon's chunk): reused
        same = (runs, chunk) == (args.check_runs, result.extras["chunk_size"])
        row = time_row(args, entry, env, agent, timed, runs, result.compile_time if same else 0)
        rows.append({**row, "np_rate": max(rates), "ratio": row["rate"] / max(rates),
                     "batched_rate": batched_rate, "batched_ratio":
                     None if batched_rate is None else row["rate"] / batched_rate})
    return rows, np_runs


def print_flat(args, np_runs: dict) -> None:
    """The flat-in-t section: the engine's rate over growing horizons, NumPy's ms per step."""
    entry = args.flat
    env, agent = entry.make(args.dim, args.num_arms)
    rows = T.flatness(env, agent, sorted(args.flat_horizons), args.flat_runs, seed=args.seed,
                      chunk_size=min(min(args.flat_horizons), 1000))
    runs = np_runs.get(entry.label) or [N.numpy_run(env, agent, entry.name,
                                                    args.numpy_horizon, 10_000)]
    print(f"flat in t: {entry.label}, JAX seed-steps/s at {args.flat_runs} run(s) over growing "
          "horizons; 'marginal' is the rate of the rounds a horizon adds to the previous one")
    T.print_table(["agent", "horizon", "wall s", "JAX seed-steps/s", "rounds",
                   "marginal seed-steps/s"],
                  [[entry.label, r["horizon"], f"{r['wall']:.2f}", T.fmt_rate(r["rate"]),
                    "{}-{}".format(*r["window"]), T.fmt_rate(r["marginal"])] for r in rows],
                  args.markdown)
    warm = runs[0].warmup_steps
    parts = [f"{lo}-{hi}{' (warm-up)' if warm and hi <= warm else ''}: {1e3 * s:.3f}"
             for lo, hi, s in step_time_windows(runs)]
    print(f"NumPy reference of {entry.label}, ms per step (median of {len(runs)} "
          f"seed(s)) by rounds: {' | '.join(parts)}")


def run_neural(args) -> None:
    """The neural agents of ``--agents``, handed to ``throughput_neural`` (PyTorch)."""
    if args.no_reference:
        print(f"(neural agents {', '.join(args.neural)}: run "
              "python -m benchmarks.throughput_neural --no-torch for them)")
        return
    neural_args = ["--agents", ",".join(args.neural)] + (
        ["--runs", ",".join(map(str, args.neural_runs))] if args.neural_runs else []) + (
        ["--quick"] if args.quick else []) + (["--markdown"] if args.markdown else [])
    print(f"\nneural agents ({', '.join(args.neural)}): against PyTorch, as "
          f"`python -m benchmarks.throughput_neural {' '.join(neural_args)}`", flush=True)
    throughput_neural.main(neural_args)
    print()


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    jb = T.start(args.cpu_devices)
    print(T.header_line("jaxbandits throughput benchmark", f"numpy {np.__version__}"))
    sizes = f"envs d={args.dim}, K={args.num_arms}; JAX horizon {args.horizon}"
    trials = f"best of {args.repeats} trial(s) of >= {args.min_time:g} s"
    print(f"{sizes}, {trials}; JAX only (--no-reference)" if args.no_reference else
          f"{sizes}, {trials}; NumPy loop {args.numpy_horizon} steps x {args.check_seeds} "
          f"seed(s), best seed; batched NumPy ({args.batched_dtype}) {trials} in plays of <= "
          f"{args.numpy_horizon} rounds{'; quick mode' if args.quick else ''}", flush=True)
    if args.neural:
        run_neural(args)
        if not args.agents and args.flat is None:
            return 0
    rows, np_runs, lines = [], {}, []
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        if args.no_reference:
            mine, best = jax_only(args, entry, env, agent)
            lines += best
            top = max(mine, key=lambda r: r["rate"]) if mine else None
        else:
            mine, np_runs[entry.label] = with_references(args, entry, env, agent, jb,
                                                         np.dtype(args.batched_dtype).type)
            top = mine[args.runs.index(max(args.runs))]
            lines.append(summary_line(entry.label, top, top["runs"]))
        rows += mine
        if top is not None and entry.name in FLOPS_PER_STEP:
            flops = FLOPS_PER_STEP[entry.name](agent, env.dim, env.num_arms)
            lines.append(roofline_line(entry.label, top, top["runs"], flops, args.peak_gflops))
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
    print("\n" + "\n".join(sorted(lines, key=lambda line: not line.startswith("ratio"))))
    grows = [e.label for e in args.agents if e.reference.grows_with_t]
    if grows and not args.no_reference:
        print(f"({', '.join(grows)}: the NumPy reference's per-step cost grows with t, so its "
              f"rows compare both sides over the same {args.numpy_horizon} rounds)")
    if args.flat is not None:
        print()
        print_flat(args, np_runs)
    print(T.end_line(t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
