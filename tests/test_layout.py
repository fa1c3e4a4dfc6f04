"""Layout independence: run r's numbers are a function of (key, r, env, agent,
block_runs) only, the same bits for any num_runs, chunk size, device count, grid and position of
the wave. Before the block design, lin-ucb on the default ``linear`` problem diverged from the
first recorded step between 4 and 8 runs on one device (``g / ||g||`` differed by 1 ulp with the
batch size). Every registered environment is played in a subprocess with 4 forced CPU devices.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.simulate import ACCELERATOR_BLOCK_FACTOR, _Plan

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, numpy as np, jaxbandits as jb
    from jaxbandits.registry import ENVS
    assert len(jax.devices()) == 4, jax.devices()
    devs = jax.devices()
    small = {
        "classification": None, "digits": None,  # sklearn-sized data: covered by shuttle/magic
        "shuttle": dict(pool_size=40), "magic": dict(pool_size=40),
        "linear": {}, "linear-sphere": dict(dim=5), "russo": dict(dim=6, num_arms=30),
        "freq-russo": dict(dim=6, num_arms=30), "linear-varying": dict(dim=6, num_arms=7),
        "logistic": dict(dim=6, num_arms=9), "logistic-bernoulli": dict(dim=6, num_arms=9),
        "distance": dict(dim=6, num_arms=9), "quadratic": dict(dim=6, num_arms=9),
        "random-mlp": dict(dim=6, num_arms=9), "obd-replay": {},
        "neurallog-synthetic": dict(dim=4, num_arms=3, pool_size=20),
        "dueling-square": dict(dim=3, num_arms=4),
        "dueling-synthetic": None, "dueling-cosine": None, "dueling-quadratic": None,  # = square
        # the UCI dueling tasks: shuttle's pool sampling with dueling-square's pair path
        "dueling-shuttle": None, "dueling-magic": None, "dueling-statlog": None,
        "dueling-covertype": None,
        # Ensemble++'s nonlinear tasks: the pool path once (the Bernoulli task shares it,
        # vector-quadratic is quadratic's path with fresh arms, the -epp data sets shuttle's)
        "quadratic-pool": dict(dim=6, num_arms=9, pool_size=30),
        "random-mlp-bernoulli": None, "vector-quadratic": None, "shuttle-epp": None,
        "mushroom-epp": None,
        "text-moderation": None,  # token rows: a data row per round, read by text agents only
        "bernoulli": dict(num_arms=5),
        # linear's path with the round's instance redrawn from the run's key and the shared t
        "drifting-linear": dict(dim=6, num_arms=9, period=8),
        # the per-arm model: a shared context repeated over the arms (the classification
        # conversion is the classification path; arrays need the user's arrays)
        "disjoint-linear": dict(dim=4, num_arms=5),
        "disjoint-classification": None, "arrays": None,
    }
    missing = sorted(set(ENVS) - set(small))
    assert not missing, f"add a small setting for {missing}"
    T, checked, PART = 24, [], int(sys.argv[1])
    for index, (name, overrides) in enumerate(small.items()):
        if overrides is None or index % 2 != PART:
            continue
        try:
            env = jb.make_env(name, **overrides)
        except FileNotFoundError as err:  # a data file that this machine lacks
            print("skipped", name, err)
            continue
        kind = env.spec().action_kind
        agents = ["lin-ts"] if kind == "vector" or len(checked) % 2 else ["lin-ucb"]
        agents = ["maxpair-ucb"] if kind == "pair" else agents
        for agent_name in agents:
            agent = jb.make_agent(agent_name)
            kw = dict(record="all", progress=False, block_runs=4)
            ref = jb.simulate(env, agent, 5, T, 33, chunk_size=T, devices=devs, **kw)
            # one and four devices (two devices: the linear checks below)
            for n, d in [(1, 1), (4, 4), (7, 1), (16, 4), (33, 1)]:
                r = jb.simulate(env, agent, 5, T, n, chunk_size=T, devices=devs[:d], **kw)
                for metric in ("cumulative_regret", "cumulative_reward"):
                    a, b = getattr(r, metric), getattr(ref, metric)[:n]
                    assert np.array_equal(a, b), (name, agent_name, n, d, metric)
                for metric, values in r.metrics.items():  # e.g. dueling's weak regret
                    assert np.array_equal(values, ref.metrics[metric][:n]), (name, n, metric)
            checked.append((name, agent_name))
    if PART == 1:
        print("layout ok", len(checked), "env/agent pairs")
        sys.exit(0)
    # chunking, the default block size, and a sweep's grid points on the issue's instance
    env, agent = jb.make_env("linear"), jb.make_agent("lin-ucb")
    kw = dict(record="all", progress=False)
    ref = jb.simulate(env, agent, 0, 60, 130, devices=devs, **kw)  # 2 blocks of 128
    for n, d, chunk in [(1, 1, 60), (4, 1, 25), (3, 2, 60), (8, 2, 60), (129, 4, 60)]:
        r = jb.simulate(env, agent, 0, 60, n, devices=devs[:d], chunk_size=chunk, **kw)
        assert np.array_equal(r.cumulative_regret, ref.cumulative_regret[:n]), (n, d, chunk)
    grid = jb.sweep(env, agent, 0, {"explore_scale": [0.5, agent.explore_scale]}, 60, 7,
                    devices=devs[:2], **kw)
    last = grid[f"explore_scale={agent.explore_scale}"]
    assert np.array_equal(last.cumulative_regret, ref.cumulative_regret[:7])
    # a neural agent (training loops whose trip count differs by run)
    env = jb.make_env("neurallog-synthetic", dim=3, num_arms=3, pool_size=12)
    agent = jb.make_agent("neurallog-ucb-2", width=4, update_every=5, num_grad_steps=3,
                          buffer_size=16, explore_scale=0.1)
    ref = jb.simulate(env, agent, 3, 30, 9, devices=devs, block_runs=2, **kw)
    for n, d in [(1, 1), (5, 2), (9, 1)]:
        r = jb.simulate(env, agent, 3, 30, n, devices=devs[:d], block_runs=2, **kw)
        assert np.array_equal(r.cumulative_regret, ref.cumulative_regret[:n]), (n, d)
    print("layout ok", len(checked), "env/agent pairs")
    """
)


@pytest.mark.full
@pytest.mark.parametrize("part", [0, 1])  # two halves of the registry, for two workers
def test_runs_do_not_depend_on_the_layout(part):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(part)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "layout ok" in proc.stdout
    checked = int(proc.stdout.split("layout ok")[1].split()[0])
    assert checked >= 6, proc.stdout  # most environments ran (data files may be missing)


@pytest.mark.parametrize("num_points,num_runs,block_runs,num_devices",
                         [(1, 1, 8, 1), (1, 33, 4, 1), (1, 33, 4, 4), (3, 7, 4, 2),
                          (2, 128, 128, 4), (5, 9, 2, 3)])
def test_plan_places_every_run_once(num_points, num_runs, block_runs, num_devices):
    plan = _Plan(num_points, num_runs, block_runs, num_devices)
    seen = np.zeros((num_points, num_runs), int)
    for w in range(plan.num_waves):
        wave = plan.wave(w)
        assert len(wave) == num_devices  # padded: every wave has one block per device
        assert plan.runs_before(w) == seen.sum()
        for g, start, real in wave:
            assert start % block_runs == 0  # run r sits at position r % block_runs
            seen[g, start: start + real] += 1
    assert plan.runs_before(plan.num_waves) == num_points * num_runs
    np.testing.assert_array_equal(seen, 1)


def test_default_blocks_are_wide_on_accelerators_and_recorded():
    lin, neural = jb.make_agent("lin-ts"), jb.make_agent("neural-ucb")
    own = jb.make_agent("neural-ensemble-pp")  # runs_per_block = 8
    assert [jb.default_block_runs(a, "cpu") for a in (lin, neural, own)] == [128, 8, 8]
    for platform in ("gpu", "tpu"):
        assert [jb.default_block_runs(a, platform) for a in (lin, neural, own)] == [
            128 * ACCELERATOR_BLOCK_FACTOR, 8 * ACCELERATOR_BLOCK_FACTOR,
            8 * ACCELERATOR_BLOCK_FACTOR]
    assert jb.default_block_runs(lin) == 128  # the tests' backend is the CPU
    result = jb.simulate(jb.make_env("linear", dim=3, num_arms=4), lin, 0, 5, 3, progress=False)
    assert result.extras["block_runs"] == 128  # part of the configuration: recorded


def test_default_chunks_are_shorter_for_agents_with_costly_rounds():
    lin, neural, lmc = (jb.make_agent(n) for n in ("lin-ts", "neural-ucb", "lmc-ts"))
    assert [jb.default_chunk_size(a, 10_000) for a in (lin, neural, lmc)] == [1000, 250, 250]
    assert [jb.default_chunk_size(a, 40) for a in (lin, neural)] == [40, 40]
    result = jb.simulate(jb.make_env("linear", dim=3, num_arms=4), lin, 0, 1200, 2,
                         progress=False)
    assert result.extras["chunk_size"] == 1000


def test_many_waves_streamed_to_disk_equal_one_wave(tmp_path):
    env, agent = jb.make_env("linear", dim=3, num_arms=4), jb.make_agent("lin-ts")
    kw = dict(record="all", progress=False, block_runs=2)
    one = jb.simulate(env, agent, 1, 20, 11, **kw)
    streamed = jb.simulate(env, agent, 1, 20, 11, save_to=tmp_path / "r", **kw)
    assert streamed.extras["block_runs"] == 2
    np.testing.assert_array_equal(np.asarray(streamed.cumulative_regret), one.cumulative_regret)
    loaded = jb.Result.load(tmp_path / "r")
    np.testing.assert_array_equal(np.asarray(loaded.cumulative_reward), one.cumulative_reward)
    assert loaded.final() == pytest.approx(one.final())


def test_a_block_that_cannot_fit_is_refused_before_allocating():
    env = jb.make_env("linear", dim=4, num_arms=10**9)
    with pytest.raises(ValueError, match=r"one block of .* needs about .*GiB"):
        jb.simulate(env, jb.make_agent("greedy"), 0, 10, 2)
    with pytest.raises(ValueError, match="max_memory"):
        jb.simulate(jb.make_env("linear", dim=3, num_arms=4), jb.make_agent("greedy"), 0, 10,
                    2, max_memory=1000)
    with pytest.raises(ValueError, match="save_to"):  # 10^9 runs' curves on the host
        jb.simulate(jb.make_env("linear", dim=3, num_arms=4), jb.make_agent("greedy"), 0,
                    1000, 10**9)


def test_a_refused_block_names_the_largest_power_of_two_that_fits():
    env, agent = jb.make_env("linear", dim=3, num_arms=4), jb.make_agent("greedy")
    budget = 40_000  # bytes: a few runs of this problem, not 64
    with pytest.raises(ValueError, match=r"block_runs=\d+ fits") as refused:
        jb.simulate(env, agent, 0, 10, 64, block_runs=64, max_memory=budget, progress=False)
    hinted = int(re.search(r"block_runs=(\d+) fits", str(refused.value)).group(1))
    assert 1 <= hinted < 64 and hinted & (hinted - 1) == 0
    ok = jb.simulate(env, agent, 0, 10, 64, block_runs=hinted, max_memory=budget, progress=False)
    assert ok.extras["block_runs"] == hinted
    with pytest.raises(ValueError, match="needs about"):  # the hint is the largest that fits
        jb.simulate(env, agent, 0, 10, 64, block_runs=2 * hinted, max_memory=budget,
                    progress=False)
    with pytest.raises(ValueError, match="not even one run fits"):
        jb.simulate(env, agent, 0, 10, 4, max_memory=100, progress=False)


def test_sweep_over_static_fields_equals_separate_simulates(tmp_path):
    env = jb.make_env("linear", dim=3, num_arms=5)
    agent = jb.make_agent("ensemble-pp")
    kw = dict(record="all", progress=False, block_runs=4)
    grid = {"ensemble_size": [2, 8], "explore_scale": [0.5, 1.0]}  # static x numeric
    results = jb.sweep(env, agent, 3, grid, 30, 5, **kw)
    assert list(results) == [f"ensemble_size={m},explore_scale={s}"
                             for m in (2, 8) for s in (0.5, 1.0)]  # grid order kept
    for size in (2, 8):
        alone = jb.simulate(env, agent.replace(ensemble_size=size, explore_scale=1.0), 3, 30, 5,
                            **kw)
        np.testing.assert_array_equal(
            results[f"ensemble_size={size},explore_scale=1.0"].cumulative_regret,
            alone.cumulative_regret)
    assert not np.array_equal(results["ensemble_size=2,explore_scale=1.0"].cumulative_regret,
                              results["ensemble_size=8,explore_scale=1.0"].cumulative_regret)
    checkpointed = jb.sweep(env, agent, 3, grid, 30, 5, checkpoint_dir=tmp_path, **kw)
    again = jb.sweep(env, agent, 3, grid, 30, 5, checkpoint_dir=tmp_path, **kw)  # resumed, done
    for name, result in results.items():
        np.testing.assert_array_equal(checkpointed[name].cumulative_regret,
                                      result.cumulative_regret)
        np.testing.assert_array_equal(again[name].cumulative_regret, result.cumulative_regret)
    with pytest.raises(ValueError, match="no field 'ensemble_sise'"):
        jb.sweep(env, agent, 3, {"ensemble_sise": [2]}, 30, 5, **kw)
