"""Throughput of the neural agents against a PyTorch per-seed loop, in seed-steps per second.

The PyTorch references (``tests/references/torch_neural.py``, optional: ``pip install -e
'.[bench]'``) are checked on one training round and on the mean regret; docs/benchmarks.md has
the figures and commands::

    python -m benchmarks.throughput_neural --quick           # a smoke test
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from benchmarks import timing as T
from tests.references import torch_neural as R
from tests.references.parity import regret_agreement

TARGET_RATIO, TARGET_RUNS = 20.0, 100  # the goal at 100 runs, against the PyTorch loop
DEFAULT_AGENTS = "neural-es,neural-ucb,neurallog-ucb-2"
INSTALL_HINT = ("pip install -e '.[bench]'   (the CPU build torch==2.13.0; on this project's "
                "machines it installs under Python 3.11)")


def parse_entry(text: str) -> tuple[str, dict]:
    """``name[:field=value...]`` -> ``(name, overrides)``."""
    name, overrides = T.parse_agent_spec(text)
    return name, dict(overrides)


def parse_args(argv=None) -> argparse.Namespace:
    args = T.cli(__doc__, argv, **T.COMMON, quick_defaults={
        "runs": [1, 2], "horizon": 2, "chunk_size": 2, "flat_horizons": [4, 8],
        "torch_data": "history", "check_seeds": 1, "check_runs": 2, "repeats": 1,
        "min_time": 0.01},
        agents=(DEFAULT_AGENTS, "agents, each name[:field=value...] (PyTorch references: "
                f"{', '.join(R.TORCH_REFERENCES)})"),
        runs=([1, 10, 100], "run counts"),
        horizon=(20, "JAX rounds per timed call, rounded up to a multiple of update_every "
                 "(neural-ensemble-pp: 100)"),
        chunk_size=(10, "simulate's chunk_size for every JAX call"),
        flat_horizons=([50, 200, 800], "horizons of the flatness runs (a ring buffer of B rows: "
                       "B/2,B,2B; lmc-ts: T/2,T,2T)"),
        flat_runs=(1, "runs of the flatness runs"),
        torch_horizon=(int, None, "rounds per PyTorch seed, the regret check's T (default: the "
                       "reference's own T, else the warm-up plus 60)"),
        torch_data=({"choices": ("history", "stats", "both")}, "both",
                    "the PyTorch reference's training data"),
        torch_threads=(1, "torch.set_num_threads"),
        torch_device=("cpu", "device of the PyTorch reference (cpu, cuda)"),
        check_seeds=(3, "PyTorch seeds, timed and regret-checked"),
        check_runs=(100, "JAX runs of the regret check"),
        repeats=(2, "timing trials per JAX measurement, the best reported"),
        min_time=(1.0, "seconds of JAX wall time per trial"),
        no_torch=(False, "JAX numbers only"))
    args.horizon_set = "--horizon" in args.given  # else a reference's steady_horizon may apply
    # not given: a ring buffer of B rows picks B/2, B, 2B (quick: the defaults)
    given = args.quick or "--flat-horizons" in args.given
    args.flat_horizons_set = args.flat_horizons if given else None
    try:
        args.agents = [parse_entry(a) for a in args.agents.split(",") if a.strip()]
    except ValueError as error:
        args.error(str(error))
    if sorted(args.flat_horizons) != args.flat_horizons:
        args.error("--flat-horizons must increase")
    return args


def _setting(agent, field: str, default):
    """An agent's value of ``field`` once its preset is applied, ``default`` without it."""
    agent = agent.resolved() if hasattr(agent, "resolved") else agent
    if hasattr(agent, "setting") and hasattr(agent, field):
        return agent.setting(field)
    value = getattr(agent, field, default)
    return default if value is None else value


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def _warmup(agent, env, name: str) -> int:
    """Rounds before the agent's rule (or its training, if the reference says so) starts: the
    rounds the PyTorch rate leaves out."""
    reference = R.TORCH_REFERENCES.get(name)
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
    return getattr(R.TORCH_REFERENCES.get(name), "horizon", None) or warmup + max(60, every)


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
    env_name = R.REFERENCE_ENVS.get(name, "quadratic")
    env = jb.make_env(env_name, **({"dim": args.dim, "num_arms": args.num_arms}
                                   if env_name == "quadratic" else {}))
    reference = R.TORCH_REFERENCES.get(name)
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
    env, agent, reference = p["env"], p["agent"], R.TORCH_REFERENCES[name]
    train = R.check_training(env, agent, name, seed=args.seed, quick=args.quick)
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
            out = R.torch_run(env, agent, name, horizon, 10_000 + s, mode)
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
            print(f"[torch] {label} ({mode}): {T.fmt_rate(rate)} seed-steps/s over rounds "
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
        return T.time_jax(p["env"], p["steady"], p["horizon"], runs, repeats=args.repeats, **kw)
    m = {"rate": runs * p["horizon"] / r.wall_time, "wall": r.wall_time,
         "compile": r.compile_time, "calls": 1}
    if r.wall_time < p["max_time"]:  # room for the other trials
        more = T.time_jax(p["env"], p["steady"], p["horizon"], runs, repeats=args.repeats - 1,
                        **kw)
        if more["rate"] > m["rate"]:
            m = {**more, "compile": m["compile"]}
        m["calls"] = 1 + more["calls"]
    return m


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    jb = T.start(args.cpu_devices)
    from jaxbandits.registry import agent_names

    torch = None if args.no_torch else R.import_torch()
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
        torch.set_default_device(args.torch_device)
    print(T.header_line("jaxbandits neural throughput benchmark",
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
    timing_rows, flat_rows, notes, summary = [], [], [], []
    for name, overrides in args.agents:
        label = _label(name, overrides)
        if name not in agent_names():
            notes.append(f"[skip] {name}: jaxbandits has no agent of this name (yet)")
            print(notes[-1])
            continue
        p = plan(args, name, overrides, jb)
        rates, check, check_result = {}, None, None
        if torch is not None and name not in R.TORCH_REFERENCES:
            print(f"[note] {label}: no PyTorch reference; JAX numbers only")
        elif torch is not None:
            side = torch_side(args, name, label, p, jb)
            rates, check, check_result = side["rates"], side["check"], side["result"]
        mode = max(rates, key=rates.get) if rates else None
        for runs in args.runs:
            m = time_runs(args, p, runs, check_result)
            timing_rows.append({"agent": label, "runs": runs, "horizon": p["horizon"], **m,
                                "torch": rates.get(mode), "torch_mode": mode,
                                "ratio": m["rate"] / rates[mode] if rates else None})
            print(T.jax_line(label, runs, m), flush=True)
        rows = T.flatness(p["env"], p["steady"], p["flat"], args.flat_runs, repeats=args.repeats,
                          chunk_size=args.chunk_size, seed=args.seed, max_time=p["max_time"])
        flat_rows += [{"agent": label, "runs": args.flat_runs, **row} for row in rows]
        (a0, a1), (b0, b1) = rows[0]["window"], rows[-1]["window"]
        early, late = rows[0]["ms_per_round"], rows[-1]["ms_per_round"]
        print(f"[flat]  {label}: {early:.2f} ms per round in rounds {a0}-{a1}, {late:.2f} in "
              f"rounds {b0}-{b1} (late / early = {late / early:.2f})", flush=True)
        summary.append((label, check, nvldb_flops(p["steady"], p["env"].spec().dim,
                                                  p["horizon"])))
    print()
    if timing_rows:
        T.print_table(["agent", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s",
                       "PyTorch seed-steps/s", "ratio"],
                      [[r["agent"], r["runs"], r["horizon"], f"{r['compile']:.2f}",
                        f"{r['wall']:.2f}", T.fmt_rate(r["rate"]), T.fmt_rate(r["torch"])
                        + (f" ({r['torch_mode']})" if r["torch_mode"] else ""),
                        f"{r['ratio']:.1f}x" if r["ratio"] else "-"] for r in timing_rows],
                      args.markdown)
        print()
        T.print_table(["agent", "runs", "horizon", "JAX seed-steps/s", "rounds", "ms per round"],
                      [[r["agent"], r["runs"], r["horizon"], T.fmt_rate(r["rate"]),
                        "{}-{}".format(*r["window"]), f"{r['ms_per_round']:.2f}"]
                       for r in flat_rows], args.markdown)
        print()
    for line in notes + [summary_line(args, label, check, flops, timing_rows, torch)
                         for label, check, flops in summary]:
        print(line)
    if torch is None:
        print(f"PyTorch reference not run; to compare, install it: {INSTALL_HINT}")
    print(T.end_line(t0))
    return 0


def summary_line(args, label: str, check, flops, timing_rows, torch) -> str:
    """The ratio at the top run count against the target (and the roofline of an NVLDB
    agent's training, against a 2048 x 2048 float32 matmul here)."""
    top = max(args.runs)
    row = next(r for r in timing_rows if r["agent"] == label and r["runs"] == top)
    if row["ratio"] is None:
        return (f"ratio {label} at {top} runs: - ("
                f"{'PyTorch not used' if torch is None else 'no PyTorch reference'})")
    met = "met" if row["ratio"] >= TARGET_RATIO else "NOT met"
    status = f" (target >= {TARGET_RATIO:g}x at {TARGET_RUNS} runs: {met})" \
        if top >= TARGET_RUNS else ""
    failed = check is not None and not (check["train"]["ok"] and check["consistent"])
    line = (f"ratio {label} at {top} runs: {row['ratio']:.1f}x against PyTorch "
            f"({row['torch_mode']}){status}{' [reference check failed]' if failed else ''}")
    if flops:
        need, peak = TARGET_RATIO * row["torch"] * flops / 1e9, T.matmul_gflops()
        line += (f"\nroofline {label} at {top} runs: about {flops / 1e6:.3g} MFLOP of training "
                 f"per seed-step, so {row['rate'] * flops / 1e9:.3g} GFLOP/s (PyTorch "
                 f"{row['torch'] * flops / 1e9:.3g}); a {TARGET_RATIO:g}x ratio needs "
                 f"{need:.3g} GFLOP/s, {100 * need / peak:.0f}% of the {peak:.3g} GFLOP/s "
                 "of a 2048 x 2048 float32 matmul here")
    return line


if __name__ == "__main__":
    sys.exit(main())
