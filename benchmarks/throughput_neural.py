"""Throughput of the neural agents against a PyTorch loop, in seed-steps per second.

For each neural agent and run count: the seed-steps per second ``jb.simulate`` plays once
training is under way (compile time apart), beside a PyTorch implementation of the same algorithm
(``tests/references/torch_neural.py``; on the CPU, or ``--torch-device cuda``) that plays one
seed at a time with a Python loop per step, as the papers' code does: the same network and
initialisation, the same full-batch gradient steps on the same loss and retraining schedule.
Each reference is checked: **pathwise**, one training round from identical inputs must land on
the engine's parameters (the dueling, Ensemble++ and LMC-TS ones against the agent's own
``update`` in float64, fed its random draws), and **statistically**, its mean final regret over
a few seeds must be in the range of the engine's. It also shows the engine's cost per round over
t (**flat in t** for per-arm statistics; growing while a ring buffer fills, then flat; growing
throughout for LMC-TS's full history).

What is timed: **JAX**, ``jb.simulate`` with ``warmup=0`` over ``--horizon`` rounds (agents on
per-arm statistics), or over the PyTorch reference's whole horizon (agents on a buffer or a
history, whose rounds get dearer with t; neural-ensemble-pp with ``update_start=1``); the best of
``--repeats`` trials of ``--min-time`` seconds, one compiled program per run count shared by the
timing, flatness and regret runs. **PyTorch**: the rounds after the warm-up of the regret-check
seeds, the best seed, on the full history (``--torch-data history``, the papers' code) or the
per-arm statistics (``stats``); the ratio is against the faster one measured. One torch thread
(the ops are tiny). PyTorch is an optional dependency (``pip install -e '.[bench]'``); without it
the script prints the JAX numbers::

    python -m benchmarks.throughput_neural                   # the full benchmark (~15 min)
    python -m benchmarks.throughput_neural --quick           # a smoke test
    python -m benchmarks.throughput_neural --agents nvldb-ucb-asym,ndb-ucb   # dueling (~15 min)
    python -m benchmarks.throughput_neural --agents neural-ensemble-pp,lmc-ts --runs 1,10,100
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from benchmarks.timing import (
    fmt_rate,
    header_line,
    int_list,
    load_line,
    matmul_gflops,
    parse_agent_spec,
    parse_options,
    print_table,
    time_jax,
)
from tests.references.parity import regret_agreement
from tests.references.torch_neural import (
    REFERENCE_ENVS,
    TORCH_REFERENCES,
    check_training,
    import_torch,
    torch_run,
)

TARGET_RATIO, TARGET_RUNS = 20.0, 100  # the goal at 100 runs, against the PyTorch loop
DEFAULT_AGENTS = "neural-es,neural-ucb,neurallog-ucb-2"
INSTALL_HINT = ("pip install -e '.[bench]'   (the CPU build torch==2.13.0; on this project's "
                "machines it installs under Python 3.11)")


def flatness(env, agent, horizons: list[int], runs: int, *, repeats: int, chunk_size: int,
             seed: int, max_time: float = math.inf) -> list:
    """One simulate call per horizon (the best of ``repeats``, none once ``max_time`` seconds
    went into a horizon); the per-round time of each window between consecutive horizons."""
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
        rows.append({"horizon": h, "rate": runs * h / wall, "window": (prev_h + 1, h),
                     "ms_per_round": 1e3 * (wall - prev_wall) / (h - prev_h)})
        prev_h, prev_wall = h, wall
    return rows


def parse_entry(text: str) -> tuple[str, dict]:
    """``name[:field=value...]`` -> ``(name, overrides)``."""
    name, overrides = parse_agent_spec(text)
    return name, dict(overrides)


def parse_args(argv=None) -> argparse.Namespace:
    integer = {"type": int}
    p, args = parse_options(__doc__, {
        "--agents": ({}, "comma-separated agents, each name[:field=value...] (PyTorch "
                     f"references: {', '.join(TORCH_REFERENCES)}); an agent jaxbandits does not "
                     "have is skipped with a note", DEFAULT_AGENTS, DEFAULT_AGENTS),
        "--runs": ({"type": int_list}, "comma-separated run counts", [1, 10, 100], [1, 2]),
        "--horizon": (integer, "JAX rounds per timed call, rounded up to a multiple of "
                      "update_every (neural-ensemble-pp: 100)", 20, 2),
        "--chunk-size": (integer, "simulate's chunk_size for every JAX call", 10, 2),
        "--flat-horizons": ({"type": int_list}, "horizons of the flatness runs (a ring buffer "
                            "of B rows: B/2,B,2B; lmc-ts: T/2,T,2T)", [50, 200, 800], [4, 8]),
        "--flat-runs": (integer, "runs of the flatness runs", 1, 1),
        "--torch-horizon": (integer, "rounds per PyTorch seed, the regret check's T (default: "
                            "the reference's own T, else the warm-up plus 60)", None, None),
        "--torch-data": ({"choices": ("history", "stats", "both")}, "the PyTorch reference's "
                         "training data", "both", "history"),
        "--torch-threads": (integer, "torch.set_num_threads", 1, 1),
        "--torch-device": ({}, "device of the PyTorch reference (cpu, cuda)", "cpu", "cpu"),
        "--check-seeds": (integer, "PyTorch seeds, timed and regret-checked", 3, 1),
        "--check-runs": (integer, "JAX runs of the regret check", 100, 2),
        "--repeats": (integer, "timing trials per JAX measurement, the best reported", 2, 1),
        "--min-time": ({"type": float}, "seconds of JAX wall time per trial", 1.0, 0.01),
        "--no-torch": ({"action": "store_true"}, "JAX numbers only", False, False)}, argv)
    args.horizon_set = "--horizon" in args.given  # else a reference's steady_horizon may apply
    # not given: a ring buffer of B rows picks B/2, B, 2B (quick: the defaults)
    args.flat_horizons_set = args.flat_horizons if args.quick or "--flat-horizons" in \
        args.given else None
    try:
        args.agents = [parse_entry(a) for a in args.agents.split(",") if a.strip()]
    except ValueError as error:
        p.error(str(error))
    if sorted(args.flat_horizons) != args.flat_horizons:
        p.error("--flat-horizons must increase")
    return args


def _setting(agent, field: str, default):
    """An agent's value of ``field`` once its preset is applied, ``default`` without it."""
    if hasattr(agent, "resolved"):
        agent = agent.resolved()
    if hasattr(agent, "setting") and hasattr(agent, field):
        return agent.setting(field)
    value = getattr(agent, field, default)
    return default if value is None else value


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def _warmup(agent, env, name: str) -> int:
    """Rounds before the agent's rule (or its training, if the reference says so) starts: the
    rounds the PyTorch rate leaves out."""
    reference = TORCH_REFERENCES.get(name)
    if hasattr(reference, "warmup_rounds"):
        return reference.warmup_rounds(agent)
    return agent.warmup_rounds(env.spec())


def _torch_horizon(args, agent, env, name: str) -> int:
    """``--torch-horizon``, else the reference's own, else the warm-up plus 60 rounds (quick:
    plus one training period)."""
    warmup, every = _warmup(agent, env, name), int(_setting(agent, "update_every", 1))
    if args.torch_horizon:
        return args.torch_horizon
    if args.quick:
        return warmup + max(2, every)
    return getattr(TORCH_REFERENCES.get(name), "horizon", None) or warmup + max(60, every)


def nvldb_flops(agent, dim: int, horizon: int) -> float | None:
    """FLOP per seed-step of an NVLDB / NLDB agent's rounds 1..``horizon`` from an empty buffer
    (None for another agent): round t trains n Adam steps on t pairs (about 3 passes over the 2t
    arms each) and rebuilds V with one more pass: ``2 MACs 2t (3n + 1)``, ``MACs = d m + (L -
    2) m^2 + m D`` per arm, averaged over t, t capped at the buffer's size."""
    from jaxbandits.agents import NVLDB

    if not isinstance(agent, NVLDB):
        return None
    net = agent.network(dim)
    macs = (net.in_features * net.width + (net.depth - 2) * net.width**2
            + net.width * net.out_features)
    rows = np.minimum(np.arange(1, horizon + 1), agent.buffer_size or horizon).mean()  # mean t
    return 2.0 * macs * 2.0 * rows * (3.0 * agent.num_grad_steps / agent.update_every + 1.0)


def plan(args, name: str, overrides: dict, jb) -> dict:
    """The environment, the agent (its timed form ``steady``), the timed horizon and the
    flatness horizons of one agent, by how its cost grows with t."""
    env_name = REFERENCE_ENVS.get(name, "quadratic")
    env = jb.make_env(env_name, **({"dim": args.dim, "num_arms": args.num_arms}
                                   if env_name == "quadratic" else {}))
    reference = TORCH_REFERENCES.get(name)
    agent = jb.make_agent(name, **{**getattr(reference, "agent_defaults", {}), **overrides})
    if env.spec().action_kind == "pair" and getattr(agent, "buffer_size", 0) is None:
        # a pair history: the buffer make_agent sizes for the horizon both sides play
        agent = jb.make_agent(name, env=env, horizon=_torch_horizon(args, agent, env, name),
                              **overrides)
    every = int(_setting(agent, "update_every", 1))
    period = math.lcm(every, args.chunk_size)
    buffer = getattr(agent, "buffer_size", None)
    growth = getattr(reference, "growth", None) or ("flat" if buffer is None else "buffer")
    if growth == "flat":  # per-arm statistics or fixed minibatches: every round costs the same
        steady = getattr(reference, "steady_horizon", None)
        if args.horizon_set or args.quick or steady is None:
            steady = args.horizon
        horizon = _round_up(steady, period)
        flat, timed = args.flat_horizons, f"timed horizon {horizon}"
    else:  # a ring buffer or the whole history: time the reference's rounds, both sides alike
        horizon = _round_up(_torch_horizon(args, agent, env, name), period)
        if growth == "history":  # a round costs O(t): every round of the runs kept
            flat = args.flat_horizons_set or [max(1, horizon // 2), horizon, 2 * horizon]
            if buffer is None:
                buffer = max([horizon] + [_round_up(h, period) for h in flat])
                agent = agent.replace(buffer_size=buffer)
            timed = (f"timed horizon {horizon} from an empty history (the PyTorch reference's "
                     f"rounds; {buffer} rows kept)")
        else:  # training covers the filled rows: dearer until the buffer is full
            flat = args.flat_horizons_set or [max(1, buffer // 2), buffer, 2 * buffer]
            timed = (f"timed horizon {horizon} from an empty buffer of {buffer} rows (the "
                     "PyTorch reference's rounds)")
    if hasattr(reference, "steady_agent"):
        steady = reference.steady_agent(agent)
    else:
        steady = agent.replace(warmup=0) if hasattr(agent, "warmup") else agent
    note = ("; JAX timed with update_start=1 (training every round, the cost of a round past "
            "the start)") if steady is not agent and hasattr(steady, "update_start") else ""
    preset = f", preset {agent.preset}" if getattr(agent, "preset", None) else ""
    print(f"\n== {_label(name, overrides)} on {env_name} (d={env.dim}, K={env.num_arms}{preset}); "
          f"trains every {every} round(s), {_setting(agent, 'num_grad_steps', 1)} gradient "
          f"steps; {timed}{note}", flush=True)
    return {"env": env, "agent": agent, "steady": steady, "horizon": horizon, "period": period,
            "flat": sorted({_round_up(h, period) for h in flat}), "every": every,
            "max_time": getattr(reference, "trial_max_time", math.inf)}


def _label(name: str, overrides: dict) -> str:
    return name + ("[" + ",".join(f"{k}={v}" for k, v in overrides.items()) + "]"
                   if overrides else "")


def torch_side(args, name: str, label: str, p: dict, jb) -> dict:
    """The PyTorch reference: the training check, the timed regret-check seeds per data mode,
    and the engine's regret check. ``{"rates": {mode: rate}, "check", "result"}``."""
    env, agent, reference = p["env"], p["agent"], TORCH_REFERENCES[name]
    train = check_training(env, agent, name, seed=args.seed, quick=args.quick)
    errors = ", ".join(f"{v:.1e} ({k})" for k, v in train["errors"].items())
    print(f"[check] {label}: one training round from identical inputs"
          f"{f' ({w})' if (w := train.get('what')) else ''}: max |theta_torch - theta_jax| / "
          f"max |theta| = {errors}; the round moved theta by {train['moved']:.1e}"
          f"{train.get('note', '')} -> "
          + ("consistent" if train["ok"] else "MISMATCH: check the PyTorch reference"))
    warmup, horizon = _warmup(agent, env, name), _torch_horizon(args, agent, env, name)
    asked = ["history", "stats"] if args.torch_data == "both" else [args.torch_data]
    modes = [mode for mode in asked if mode in reference.data_modes]
    if not modes:
        modes = list(reference.data_modes[:1])
        print(f"[note] {label}: the PyTorch reference has no {args.torch_data} mode; using "
              f"{modes[0]}")
    rates, regrets = {}, []
    for mode in modes:  # the papers' data (the first mode) on every seed, the other on one
        timed = []
        for s in range(args.check_seeds if mode == modes[0] else 1):
            out = torch_run(env, agent, name, horizon, 10_000 + s, mode)
            if mode == modes[0]:
                regrets.append(out["regret"])
            times = out["times"][out["warmup"]:]
            if times.size:
                w = max(1, min(max(10, 2 * p["every"]), times.size // 3))
                timed.append((times.size / times.sum(), 1e3 * times[:w].mean(),
                              1e3 * times[-w:].mean()))
        if timed:
            rate, early, late = max(timed)
            rates[mode] = rate
            print(f"[torch] {label} ({mode}): {fmt_rate(rate)} seed-steps/s over rounds "
                  f"{warmup + 1}-{horizon} (best of {len(timed)} seed(s)); {early:.1f} ms per "
                  f"round early, {late:.1f} ms late", flush=True)
    result = jb.simulate(env, agent, args.seed, horizon, args.check_runs, progress=False,
                         chunk_size=args.chunk_size)
    agreement = regret_agreement(regrets, *result.final("regret"), args.check_runs)
    print(f"[check] {label}: final regret at T={horizon}: PyTorch ({modes[0]}) "
          f"{agreement['np_regret']:.2f} +- {agreement['np_half']:.2f} ({len(regrets)} seed(s)),"
          f" JAX {agreement['jax_regret']:.2f} +- {agreement['jax_half']:.2f} "
          f"({args.check_runs} runs) -> " + ("consistent" if agreement["consistent"]
                                             else "MISMATCH: check the PyTorch reference"),
          flush=True)
    # the regret check is also a timing trial when it is the same program, horizon and runs
    same = p["steady"] is agent and horizon == p["horizon"]
    return {"rates": rates, "check": {"train": train, "consistent": agreement["consistent"]},
            "result": result if same else None}


def time_runs(args, p: dict, runs: int, check_result) -> dict:
    """The engine's steady-state rate at ``runs`` (the regret-check call counts as the first
    trial when it was this very call and took long enough)."""
    kw = {"min_time": args.min_time, "chunk_size": args.chunk_size, "seed": args.seed,
          "max_time": p["max_time"], "block_runs": args.block_runs}
    r = check_result
    if r is None or runs != args.check_runs or r.wall_time < min(p["max_time"], args.min_time):
        return time_jax(p["env"], p["steady"], p["horizon"], runs, repeats=args.repeats, **kw)
    m = {"rate": runs * p["horizon"] / r.wall_time, "wall": r.wall_time,
         "compile": r.compile_time, "calls": 1}
    if r.wall_time < p["max_time"]:  # room for the other trials
        more = time_jax(p["env"], p["steady"], p["horizon"], runs, repeats=args.repeats - 1,
                        **kw)
        if more["rate"] > m["rate"]:
            m = {**more, "compile": m["compile"]}
        m["calls"] = 1 + more["calls"]
    return m


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jaxbandits as jb
    from jaxbandits.registry import agent_names

    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # compile times are reported apart; the cache shortens reruns
    torch = None if args.no_torch else import_torch()
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
        torch.set_default_device(args.torch_device)
    print(header_line("jaxbandits neural throughput benchmark",
                      f"torch {torch.__version__} on {args.torch_device} "
                      f"({torch.get_num_threads()} thread(s))" if torch else "torch: not used"))
    print(f"JAX: warmup=0, {args.horizon}+ rounds per call (agents with a ring buffer: the "
          f"PyTorch horizon), chunk {args.chunk_size}, best of {args.repeats} trial(s) of >= "
          f"{args.min_time:g} s; flatness at {args.flat_runs} run(s), horizons "
          f"{','.join(map(str, args.flat_horizons))}{'; quick mode' if args.quick else ''}")
    if torch is None:
        print(f"[note] {'--no-torch' if args.no_torch else 'PyTorch is not installed'}: JAX "
              f"numbers only. The PyTorch reference is an optional benchmark dependency: "
              f"{INSTALL_HINT}")
    sys.stdout.flush()
    known = set(agent_names())
    timing_rows, flat_rows, notes, summary = [], [], [], []
    for name, overrides in args.agents:
        label = _label(name, overrides)
        if name not in known:
            notes.append(f"[skip] {name}: jaxbandits has no agent of this name (yet)")
            print(notes[-1])
            continue
        p = plan(args, name, overrides, jb)
        rates, check, check_result = {}, None, None
        if torch is not None and name not in TORCH_REFERENCES:
            print(f"[note] {label}: no PyTorch reference; JAX numbers only")
        elif torch is not None:
            side = torch_side(args, name, label, p, jb)
            rates, check, check_result = side["rates"], side["check"], side["result"]
        torch_rate = max(rates.values()) if rates else None
        torch_mode = max(rates, key=rates.get) if rates else None
        for runs in args.runs:
            m = time_runs(args, p, runs, check_result)
            timing_rows.append({"agent": label, "runs": runs, "horizon": p["horizon"], **m,
                                "torch": torch_rate, "torch_mode": torch_mode,
                                "ratio": m["rate"] / torch_rate if torch_rate else None})
            print(f"[jax]   {label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, compile "
                  f"{m['compile']:.2f} s, {m['calls']} call(s)", flush=True)
        rows = flatness(p["env"], p["steady"], p["flat"], args.flat_runs, repeats=args.repeats,
                        chunk_size=args.chunk_size, seed=args.seed, max_time=p["max_time"])
        flat_rows += [{"agent": label, "runs": args.flat_runs, **row} for row in rows]
        first, last = rows[0], rows[-1]
        print(f"[flat]  {label}: {first['ms_per_round']:.2f} ms per round in rounds "
              f"{first['window'][0]}-{first['window'][1]}, {last['ms_per_round']:.2f} in rounds "
              f"{last['window'][0]}-{last['window'][1]} (late / early = "
              f"{last['ms_per_round'] / first['ms_per_round']:.2f})", flush=True)
        summary.append((label, check, nvldb_flops(p["steady"], p["env"].spec().dim,
                                                  p["horizon"])))
    print()
    if timing_rows:
        print_table(["agent", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s",
                     "PyTorch seed-steps/s", "ratio"],
                    [[r["agent"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
                      f"{r['wall']:.2f}", fmt_rate(r["rate"]),
                      fmt_rate(r["torch"]) + (f" ({r['torch_mode']})" if r["torch_mode"] else ""),
                      f"{r['ratio']:.1f}x" if r["ratio"] else "-"] for r in timing_rows],
                    args.markdown)
        print()
        print_table(["agent", "runs", "horizon", "JAX seed-steps/s", "rounds", "ms per round"],
                    [[r["agent"], str(r["runs"]), str(r["horizon"]), fmt_rate(r["rate"]),
                      f"{r['window'][0]}-{r['window'][1]}", f"{r['ms_per_round']:.2f}"]
                     for r in flat_rows], args.markdown)
        print()
    for note in notes:
        print(note)
    top = max(args.runs)
    peak = matmul_gflops() if any(flops for *_, flops in summary) else None
    for label, check, flops in summary:
        row = next(r for r in timing_rows if r["agent"] == label and r["runs"] == top)
        if row["ratio"] is None:
            print(f"ratio {label} at {top} runs: - ("
                  f"{'PyTorch not used' if torch is None else 'no PyTorch reference'})")
            continue
        met = "met" if row["ratio"] >= TARGET_RATIO else "NOT met"
        status = (f" (target >= {TARGET_RATIO:g}x at {TARGET_RUNS} runs: {met})"
                  if top >= TARGET_RUNS else "")
        failed = check is not None and not (check["train"]["ok"] and check["consistent"])
        print(f"ratio {label} at {top} runs: {row['ratio']:.1f}x against PyTorch "
              f"({row['torch_mode']}){status}{' [reference check failed]' if failed else ''}")
        if flops:
            need = TARGET_RATIO * row["torch"] * flops / 1e9
            print(f"roofline {label} at {top} runs: about {flops / 1e6:.3g} MFLOP of training "
                  f"per seed-step, so {row['rate'] * flops / 1e9:.3g} GFLOP/s (PyTorch "
                  f"{row['torch'] * flops / 1e9:.3g}); a {TARGET_RATIO:g}x ratio needs "
                  f"{need:.3g} GFLOP/s, {100 * need / peak:.0f}% of the {peak:.3g} GFLOP/s "
                  "of a 2048 x 2048 float32 matmul here")
    if torch is None:
        print(f"PyTorch reference not run; to compare, install it: {INSTALL_HINT}")
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; {load_line('at the end')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
