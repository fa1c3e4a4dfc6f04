"""Where a round of the disjoint (per-arm) problem goes, against ``linear`` at the same d and K.

Each disjoint agent on ``disjoint-linear`` and its shared-theta counterpart on ``linear`` (one
fixed arm set per run) play ``--runs`` runs of T rounds through ``jb.simulate`` (the default
``block_runs``, compile excluded: each case is compiled by a first call, then timed
``--repeats`` times); the best CPU time (``time.process_time``, all threads) and the best wall
clock per seed-step (one run's round) are printed, with the disjoint / linear ratio of each
pair, the acceptance line of both ("within 2x of ``linear``").

The parts (``--parts``, the default): ``random`` on each environment is the runner and the
environment alone; each agent's share is its total less that. The environment's context draw
(``observe`` and the K mean rewards) and each agent's ``update`` (run ``r`` of arm ``(t + r)
mod K``, a fixed context) are also timed alone, in a loop of T rounds vmapped over the runs of
one block; its ``act`` is a loop of whole rounds (draw, act, reward, update) less those two::

    python -m benchmarks.disjoint_rate                       # 256 runs, T = 1,000, d = 10, K = 20
    python -m benchmarks.disjoint_rate --no-parts --cpu-devices 0   # totals, one device per core
    python -m benchmarks.disjoint_rate --quick               # a smoke test
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import jax
import jax.numpy as jnp

import jaxbandits as jb
from benchmarks.timing import header_line, load_line, print_table

PAIRS = (("disjoint-lin-ucb", "lin-ucb"), ("disjoint-lin-ts", "lin-ts"),
         ("disjoint-epsilon-greedy", "epsilon-greedy"))


def _best(call, repeats: int) -> tuple[float, float]:
    """``(cpu seconds, wall seconds)``: the least of ``repeats`` timed calls of ``call()``
    (each call returns once its result is ready), after one untimed call (the compile)."""
    call()
    cpu = wall = float("inf")
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        call()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    return cpu, wall


def total(env, agent, horizon: int, runs: int, repeats: int) -> tuple[float, float]:
    """ns per seed-step of ``jb.simulate`` (CPU, wall), compile excluded."""
    def call():
        jax.block_until_ready(jb.simulate(env, agent, 0, horizon, runs,
                                          progress=False).cumulative_regret)
    cpu, wall = _best(call, repeats)
    return 1e9 * cpu / (runs * horizon), 1e9 * wall / (runs * horizon)


def _block_loop(body, horizon: int, block: int):
    """A jitted ``vmap`` over ``block`` runs of a ``fori_loop`` of ``horizon`` rounds of
    ``carry = body(key_t, t, carry)``, ``key_t`` the round's key of the run."""
    def one(key, carry):
        return jax.lax.fori_loop(
            0, horizon, lambda t, c: body(jax.random.fold_in(key, t), t, c), carry)
    return jax.jit(jax.vmap(one))


def parts(env, agent, horizon: int, block: int, repeats: int) -> dict[str, tuple[float, float]]:
    """ns per seed-step (CPU, wall) of the environment's context draw (``observe`` and the
    mean rewards), of ``agent``'s ``update`` alone (run ``r`` updates arm ``(t + r) mod K``, a
    fixed context) and of its ``act`` (a round of draw, act, reward and update, less the draw and
    the update alone), over one block of ``block`` runs."""
    spec = env.spec()
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(1), i))(jnp.arange(block))
    env_states = jax.vmap(env.init)(keys)
    states = jax.vmap(lambda k: agent.init(k, spec))(keys)
    steps = block * horizon

    def timed(fn, *args):
        cpu, wall = _best(lambda: jax.block_until_ready(fn(*args)), repeats)
        return 1e9 * cpu / steps, 1e9 * wall / steps

    def draw(key, t, carry):
        env_state, acc = carry
        context = env.observe(key, env_state, t)
        return env_state, acc + jnp.sum(env.mean_rewards(env_state, context))

    def round_(key, t, carry):
        (env_state, state), acc = carry
        k_obs, k_act, k_reward = jax.random.split(key, 3)
        context = env.observe(k_obs, env_state, t)
        action, acted = agent.act(state, k_act, context)
        means = env.mean_rewards(env_state, context)
        reward = means[action] + jax.random.normal(k_reward)
        feedback = jb.core.Feedback(reward=reward, regret=jnp.zeros_like(reward))
        state = agent.update(acted, key, context, action, feedback)
        return (env_state, state), acc + reward

    def update(key, t, carry):
        (context, state, offset), acc = carry
        action = (t + offset) % spec.num_arms  # each run its own arm, as in a real round
        reward = jax.random.normal(key)
        feedback = jb.core.Feedback(reward=reward, regret=jnp.zeros_like(reward))
        state = agent.update(state, key, context, action, feedback)
        return (context, state, offset), acc + reward

    zero = jnp.zeros((block,))
    contexts = jax.vmap(lambda k, s: env.observe(k, s, 0))(keys, env_states)
    out = {"draw": timed(_block_loop(draw, horizon, block), keys, (env_states, zero))}
    if agent.name == "random":
        return {**out, "act": (0.0, 0.0), "update": (0.0, 0.0)}
    offsets = jnp.arange(block, dtype=jnp.int32)
    out["update"] = timed(_block_loop(update, horizon, block), keys,
                          ((contexts, states, offsets), zero))
    whole = timed(_block_loop(round_, horizon, block), keys, ((env_states, states), zero))
    out["act"] = tuple(w - d - u for w, d, u in zip(whole, out["draw"], out["update"],
                                                     strict=True))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=256)
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--arms", type=int, default=20)
    p.add_argument("--repeats", type=int, default=3, help="timed calls per case (the best)")
    p.add_argument("--parts", action=argparse.BooleanOptionalAction, default=True,
                   help="also time the context draw and each agent's act and update alone")
    p.add_argument("--cpu-devices", type=int, default=1,
                   help="XLA CPU devices (jb.use_cpu_cores; 0: one per core)")
    p.add_argument("--only", default="",
                   help="comma-separated agent names: time only these (and their pairs' rows)")
    p.add_argument("--quick", action="store_true", help="a smoke test (16 runs, T = 50)")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    if args.quick:
        args.runs, args.horizon, args.repeats = 16, 50, 1
    jb.use_cpu_cores(args.cpu_devices or None)
    if args.quick:
        warnings.filterwarnings("ignore", message=".*padding")
    envs = {"disjoint-linear": jb.make_env("disjoint-linear", dim=args.dim, num_arms=args.arms),
            "linear": jb.make_env("linear", dim=args.dim, num_arms=args.arms)}
    print(header_line("disjoint_rate", f"{args.runs} runs, T = {args.horizon}, d = {args.dim}, "
                      f"K = {args.arms}, default blocks, best of {args.repeats}"))
    print(f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}\n")
    rows, totals = [], {}
    for ours, theirs in (("random", "random"), *PAIRS):
        for name, env_name in ((ours, "disjoint-linear"), (theirs, "linear")):
            if args.only and name not in args.only.split(","):
                continue
            agent = jb.make_agent(name)
            totals[name, env_name] = total(envs[env_name], agent, args.horizon, args.runs,
                                           args.repeats)
            cpu, wall = totals[name, env_name]
            base = totals.get(("random", env_name))
            agent_share = ("-" if name == "random" or base is None
                           else f"{cpu - base[0]:,.0f}")
            row = [name, env_name, f"{cpu:,.0f}", f"{wall:,.0f}", agent_share]
            if args.parts:
                block = min(jb.default_block_runs(agent), args.runs)
                part = parts(envs[env_name], agent, args.horizon, block, args.repeats)
                row += [f"{part['draw'][0]:,.0f}", f"{part['act'][0]:,.0f}",
                        f"{part['update'][0]:,.0f}"]
            rows.append(row)
            print("  " + " | ".join(row), flush=True)
    header = ["agent", "environment", "ns/seed-step CPU", "wall", "agent's share (CPU)"]
    if args.parts:
        header += ["draw alone (CPU)", "act alone", "update alone"]
    print()
    print_table(header, rows, args.markdown)
    print()
    ratios = [["agent", "CPU: disjoint / linear", "wall: disjoint / linear"]]
    for ours, theirs in PAIRS:
        if (ours, "disjoint-linear") not in totals or (theirs, "linear") not in totals:
            continue
        (c1, w1), (c2, w2) = totals[ours, "disjoint-linear"], totals[theirs, "linear"]
        ratios.append([f"{ours} / {theirs}", f"{c1 / c2:.2f}", f"{w1 / w2:.2f}"])
    print_table(ratios[0], ratios[1:], args.markdown)
    print(f"\n{load_line('at the end')}")


if __name__ == "__main__":
    main()
