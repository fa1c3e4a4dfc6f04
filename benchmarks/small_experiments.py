"""Small experiments: seed-steps per second, compile included, at 1 to 1,000 runs.

A researcher iterating on an idea runs 1-10 seeds and a paper reports 10-50: there the time to
the first result (compile included) is what counts. This plays ``lin-ucb``, ``lin-ts`` and
``ensemble-pp`` on ``linear`` (d = 10, K = 20, T = 1,000), and the disjoint agents on
``disjoint-linear`` (one shared context, one theta* per arm) when it is registered, each run
count in a fresh compile (the persistent cache off), and prints seed-steps/s = runs x T / (compile
+ play). MABWiser and the Open Bandit Pipeline (OBP) play the disjoint problem as yardsticks
when their Python is given (OBP 0.5.7 needs Python 3.10: a venv of its own); they play runs one
after another, so their rate is measured on a few runs plus their import. Last, the cold-cache
wall time of the default ``jaxbandits run`` (a fresh process and cache folder), then the same
command again on the warm cache::

    python -m benchmarks.small_experiments --quick
    python -m benchmarks.small_experiments --block-runs default,1,8,32,128 --cli skip
    python -m benchmarks.small_experiments --mabwiser-python ~/venvs/mab/bin/python \\
        --obp-python ~/venvs/obp/bin/python --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (engine agents, yardstick algorithms) of each problem; the yardsticks' LinUCB and LinTS are
# per-arm (disjoint) models with one shared context, so they play the disjoint problem only.
PROBLEMS = {
    "linear": (["lin-ucb", "lin-ts", "ensemble-pp"], []),
    "disjoint-linear": (["disjoint-lin-ucb", "disjoint-lin-ts", "disjoint-ensemble-pp"],
                        ["lin-ucb", "lin-ts"]),
}


def _ints(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def _blocks(text: str) -> list[int | None]:
    out: list[int | None] = []
    for v in text.split(","):
        v = v.strip()
        out.append(None if v == "default" else int(v))
    return out


def _rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    return f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def _table(header: list[str], rows: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).rjust(w) for c, w in zip(row, widths, strict=True)))


# ------------------------------------------------------------------------------------------------
# The engine.


def engine_rate(env, agent, horizon: int, num_runs: int, block_runs: int | None) -> dict:
    """One experiment from a cold start (the runner's and JAX's in-memory caches cleared):
    seed-steps/s over compile + play, and the compile and play seconds."""
    import jax

    import jaxbandits as jb

    jb.clear_compiled()
    jax.clear_caches()
    start = time.perf_counter()
    result = jb.simulate(env, agent, 0, horizon, num_runs, block_runs=block_runs,
                         progress=False)
    jax.block_until_ready(result.cumulative_regret)
    total = time.perf_counter() - start
    return {"rate": num_runs * horizon / total, "total": total,
            "compile": result.compile_time, "play": result.wall_time,
            "block_runs": result.extras["block_runs"],
            "regret": result.final()[0]}


# ------------------------------------------------------------------------------------------------
# The yardsticks, in their own Python: a numpy copy of ``disjoint-linear`` (unit theta*_a, unit
# contexts, N(0, 0.5^2) noise), each library's policy played round by round as a user would.

_YARDSTICK = r'''
import json, sys, time, types
t0 = time.perf_counter()
lib, algo, dim, arms, horizon, max_runs, budget = sys.argv[1:8]
dim, arms, horizon, max_runs = int(dim), int(arms), int(horizon), int(max_runs)
budget = float(budget)
import numpy as np
if lib == "mabwiser":
    from mabwiser.mab import MAB, LearningPolicy
else:
    sys.modules.setdefault("seaborn", types.ModuleType("seaborn"))  # obp 0.5.7's plots only
    from obp.policy import LinTS, LinUCB
imported = time.perf_counter() - t0

def unit(rng, shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)

def play(seed):
    rng = np.random.default_rng(seed)
    theta = unit(rng, (arms, dim))
    xs = unit(rng, (horizon, dim))
    noise = 0.5 * rng.standard_normal(horizon)
    regret = 0.0
    if lib == "mabwiser":
        lp = (LearningPolicy.LinUCB(alpha=1.0, l2_lambda=1.0) if algo == "lin-ucb"
              else LearningPolicy.LinTS(alpha=1.0, l2_lambda=1.0))
        mab = MAB(list(range(arms)), lp, seed=seed)
        # MABWiser needs one fit before predicting: one round per arm on the first context
        mab.fit(list(range(arms)), [0.0] * arms, np.repeat(xs[:1], arms, 0))
        for t in range(horizon):
            x = xs[t:t + 1]
            a = int(mab.predict(x))
            means = theta @ xs[t]
            regret += means.max() - means[a]
            mab.partial_fit([a], [means[a] + noise[t]], x)
    else:
        cls = LinUCB if algo == "lin-ucb" else LinTS
        kw = {"epsilon": 1.0} if algo == "lin-ucb" else {}
        pol = cls(dim=dim, n_actions=arms, random_state=seed, **kw)
        for t in range(horizon):
            x = xs[t:t + 1]
            a = int(pol.select_action(x)[0])
            means = theta @ xs[t]
            regret += means.max() - means[a]
            pol.update_params(action=a, reward=float(means[a] + noise[t]), context=x)
    return regret

regrets, start = [], time.perf_counter()
while len(regrets) < max_runs and (not regrets or time.perf_counter() - start < budget):
    regrets.append(play(len(regrets)))
per_run = (time.perf_counter() - start) / len(regrets)
print(json.dumps({"import": imported, "per_run": per_run, "runs": len(regrets),
                  "regret": float(np.mean(regrets))}))
'''


def yardstick(python: str, lib: str, algo: str, dim: int, arms: int, horizon: int,
              max_runs: int, budget: float) -> dict | str:
    """``{"import", "per_run", "runs", "regret"}`` from ``python``, or why it did not run."""
    cmd = [python, "-c", _YARDSTICK, lib, algo, str(dim), str(arms), str(horizon),
           str(max_runs), str(budget)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget * 4 + 300)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{lib} did not run: {err}"
    if out.returncode:
        return f"{lib} did not run: {(out.stderr.strip().splitlines() or ['?'])[-1]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def _has_module(python: str, module: str) -> bool:
    code = (f"import sys, types; sys.modules.setdefault('seaborn', types.ModuleType('seaborn'));"
            f" import {module}")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, timeout=120)
        return out.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# ------------------------------------------------------------------------------------------------
# The command line's default experiment on a cold, then a warm, persistent cache.


def cli_wall(extra: list[str]) -> tuple[float, float, str]:
    """Seconds of ``jaxbandits run`` (``extra`` appended) in a fresh process on an empty cache
    folder, then again on that folder; and the last line it printed."""
    times, last = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "JAXBANDITS_COMPILATION_CACHE": str(Path(tmp) / "cache")}
        for i in range(2):
            cmd = [sys.executable, "-m", "jaxbandits.cli", "run", "--out",
                   str(Path(tmp) / f"out{i}"), "--progress", "none", *extra]
            start = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - start)
            if out.returncode:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
            lines = out.stdout.splitlines()
            last = next((ln for ln in lines if ln.startswith("compile time")), last)
    return times[0], times[1], last


# ------------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="T = 200, runs 1,10,30, linear only, the CLI timed with --horizon 1000 "
                        "--runs 10")
    p.add_argument("--runs", type=_ints, default=None, help="run counts (default 1,10,30,100,1000)")
    p.add_argument("--horizon", type=int, default=None, help="T (default 1000)")
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--num-arms", type=int, default=20)
    p.add_argument("--problems", default=None,
                   help=f"comma-separated, among {', '.join(PROBLEMS)} (default: those registered)")
    p.add_argument("--agents", default=None, help="only these engine agents (comma-separated)")
    p.add_argument("--block-runs", type=_blocks, default=[None],
                   help="block sizes to time, 'default' for the engine's (e.g. default,1,8,128)")
    p.add_argument("--cpu-devices", type=int, default=None,
                   help="split the CPU into this many devices (default: one per core, as "
                        "`jaxbandits run` does)")
    p.add_argument("--mabwiser-python", default=None,
                   help="a Python with mabwiser (default: this one, if it has it)")
    p.add_argument("--obp-python", default=None,
                   help="a Python 3.10 with obp 0.5.7 (default: this one, if it has it)")
    p.add_argument("--yardstick-budget", type=float, default=20.0,
                   help="seconds each yardstick plays runs for (at least one run)")
    p.add_argument("--warm-cache", action="store_true",
                   help="time each experiment on a warm persistent cache (as a script run a "
                        "second time): played once untimed into a fresh cache folder first")
    p.add_argument("--cli", choices=("default", "quick", "skip"), default=None,
                   help="time the default `jaxbandits run` (default), a short one (quick) or not")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    quick = args.quick
    runs = args.runs or ([1, 10, 30] if quick else [1, 10, 30, 100, 1000])
    horizon = args.horizon or (200 if quick else 1000)
    cli = args.cli or ("quick" if quick else "default")

    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)
    # compile included, every time; or read from a warm persistent cache
    cache_dir = tempfile.mkdtemp(prefix="small-experiments-") if args.warm_cache else None
    jb.use_compilation_cache(cache_dir or "off")
    import jax

    from jaxbandits.registry import AGENTS, ENVS

    wanted = (args.problems.split(",") if args.problems else
              ["linear"] if quick else list(PROBLEMS))
    print(f"small experiments: d={args.dim}, K={args.num_arms}, T={horizon}, runs {runs} | "
          f"jax {jax.__version__}, {jax.device_count()} x {jax.devices()[0].device_kind}, "
          f"{os.cpu_count()} cores | {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
          flush=True)
    for problem in wanted:
        if problem not in PROBLEMS:
            raise SystemExit(f"unknown problem {problem!r}: one of {', '.join(PROBLEMS)}")
        if problem not in ENVS:
            print(f"\n{problem}: not registered in this jaxbandits, skipped")
            continue
        env = jb.make_env(problem, dim=args.dim, num_arms=args.num_arms)
        names, algos = PROBLEMS[problem]
        only = args.agents.split(",") if args.agents else names
        names = [n for n in names if n in AGENTS and n in only]
        print(f"\n{problem} (d={args.dim}, K={args.num_arms}, T={horizon}): seed-steps/s, "
              f"compile included ({'warm' if cache_dir else 'no'} persistent cache)", flush=True)
        rows = []
        for name in names:
            agent = jb.make_agent(name)
            for n in runs:
                best = None
                for block in args.block_runs:
                    if cache_dir:
                        engine_rate(env, agent, horizon, n, block)  # fills the cache
                    m = engine_rate(env, agent, horizon, n, block)
                    tag = "default" if block is None else str(block)
                    rows.append([name, str(n), f"{tag} ({m['block_runs']})", f"{m['compile']:.2f}",
                                 f"{m['play']:.2f}", f"{m['total']:.2f}", _rate(m["rate"]),
                                 f"{m['regret']:.1f}"])
                    best = max(best or 0.0, m["rate"])
                    print("  " + " ".join(rows[-1]), flush=True)
        _table(["agent", "runs", "block_runs", "compile s", "play s", "total s", "seed-steps/s",
                "mean regret"], rows, args.markdown)
        if algos:
            _yardsticks(args, algos, horizon, runs)

    if cache_dir:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if cli != "skip":
        extra = ["--horizon", "1000", "--runs", "10"] if cli == "quick" else []
        cold, warm, line = cli_wall(extra)
        print(f"\n`jaxbandits run {' '.join(extra)}`: cold cache {cold:.1f} s, warm cache "
              f"{warm:.1f} s end to end ({line.strip()})")
    return 0


def _yardsticks(args, algos: list[str], horizon: int, runs: list[int]) -> None:
    libs = {"mabwiser": (args.mabwiser_python, "mabwiser"), "obp": (args.obp_python, "obp")}
    rows = []
    for lib, (python, module) in libs.items():
        python = python or sys.executable
        if not _has_module(python, module):
            print(f"  {lib}: not installed for {python} (pass --{lib}-python), skipped")
            continue
        for algo in algos:
            m = yardstick(python, lib, algo, args.dim, args.num_arms, horizon, max(runs),
                          args.yardstick_budget)
            if isinstance(m, str):
                print("  " + m)
                continue
            for n in runs:
                total = m["import"] + n * m["per_run"]
                rows.append([f"{lib} {algo}", str(n), f"{m['import']:.2f}", f"{total:.1f}",
                             _rate(n * horizon / total), f"{m['regret']:.1f} ({m['runs']} runs)"])
    if rows:
        print("yardsticks (import + runs x the measured seconds per run):")
        _table(["library", "runs", "import s", "total s", "seed-steps/s", "mean regret"], rows,
               args.markdown)


if __name__ == "__main__":
    sys.exit(main())
