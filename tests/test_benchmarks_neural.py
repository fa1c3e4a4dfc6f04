"""Smoke test of the neural throughput benchmark: it runs and prints its tables, with or without
PyTorch; its speed is not asserted."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import throughput
from benchmarks import throughput_neural as bench
from tests.references import torch_neural as ref

pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[1]
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def test_arguments_parse():
    args = bench.parse_args(["--quick", "--agents", "neural-es:ensemble_size=4,neural-ucb"])
    assert args.agents == [("neural-es", {"ensemble_size": 4}), ("neural-ucb", {})]
    assert args.runs == [1, 2] and args.flat_horizons == [4, 8]
    assert set(ref.TORCH_REFERENCES) >= {"neural-es", "neural-ucb", "nvldb-ucb-asym",
                                           "ndb-ucb", "neural-ensemble-pp", "lmc-ts"}
    assert ref.REFERENCE_ENVS["nvldb-ucb-asym"] == ref.REFERENCE_ENVS["ndb-ucb"] == \
        "dueling-square"
    assert ref.REFERENCE_ENVS["neural-ensemble-pp"] == "quadratic-pool"
    assert ref.REFERENCE_ENVS["lmc-ts"] == "vector-quadratic"
    assert set(ref.REFERENCE_ENVS.values()) <= set(ref.NUMPY_ENVS)
    with pytest.raises(ValueError, match="field=value"):
        bench.parse_entry("neural-es:ensemble_size")


def test_nvldb_flop_count_is_the_closed_form():
    import jaxbandits as jb

    # width 100, depth 3, d = D = 5: 5*100 + 100*100 + 100*5 = 11,000 MACs per arm; rounds
    # 1..100 hold t = 1..100 pairs (mean 50.5); 20 steps of 3 passes and one Gram pass
    agent = jb.make_agent("nvldb-ucb-asym")
    assert bench.nvldb_flops(agent, 5, 100) == pytest.approx(2 * 11_000 * 2 * 50.5 * 61)
    # a ring of 10 pairs caps t: rounds 1..20 hold 1..10, 10, ..., 10 (mean 7.75)
    small = jb.make_agent("nvldb-ucb-asym", width=8, num_grad_steps=4, buffer_size=10)
    macs = 3 * 8 + 8 * 8 + 8 * 3
    assert bench.nvldb_flops(small, 3, 20) == pytest.approx(2 * macs * 2 * 7.75 * 13)
    assert bench.nvldb_flops(jb.make_agent("ndb-ucb"), 5, 100) is None


def test_throughput_script_forwards_the_dueling_agents():
    """``benchmarks/throughput.py --agents ...`` hands agents with a PyTorch reference (the
    dueling ones too) to this script and keeps the others."""
    args = throughput.parse_args(["--agents", "nvldb-ucb-asym,lin-ucb,ndb-ucb:num_grad_steps=5"])
    assert args.neural == ["nvldb-ucb-asym", "ndb-ucb:num_grad_steps=5"]
    assert [entry.name for entry in args.agents] == ["lin-ucb"]
    args = throughput.parse_args(["--agents", "neural-ensemble-pp,ensemble-pp,lmc-ts"])
    assert args.neural == ["neural-ensemble-pp", "lmc-ts"]  # Li et al. 2024's, against PyTorch
    assert [entry.name for entry in args.agents] == ["ensemble-pp"]  # linear: NumPy


def test_numpy_twins_of_the_ensemble_pp_environments():
    """The NumPy twins of ``quadratic-pool`` and ``vector-quadratic`` (the PyTorch loops'
    environments): the authors' shared pool instance and subset sequence exactly as the JAX
    environment holds them, per-run instances of the same law (unit arms, K distinct pool rows,
    nonnegative regret). No compilation: eager JAX on the authors' instance only."""
    import jax

    import jaxbandits as jb

    env = jb.make_env("quadratic-pool", dim=6, pool_size=30, num_arms=4, instance="authors_recipe",
                      authors_rounds=3)
    twin = ref.NUMPY_ENVS["quadratic-pool"](env, np.random.default_rng(0))
    state = env.init(jax.random.key(0))
    np.testing.assert_allclose(twin.pool_means, np.asarray(state.means), rtol=1e-5)
    for t in range(4):  # round t offers subset t mod authors_rounds on both sides
        arms = twin.observe()
        context = env.observe(jax.random.key(t), state, t)
        np.testing.assert_array_equal(twin.ids, np.asarray(context.arm_ids))
        np.testing.assert_allclose(arms, np.asarray(context.arms), rtol=1e-6)
        reward, regret = twin.feedback(1)
        assert regret >= 0.0 and np.isfinite(reward)

    rng = np.random.default_rng(1)
    per_run = ref.NUMPY_ENVS["quadratic-pool"](jb.make_env("quadratic-pool"), rng)
    arms = per_run.observe()
    assert arms.shape == (50, 100) and len(set(per_run.ids.tolist())) == 50
    np.testing.assert_allclose(np.linalg.norm(arms, axis=-1), 1.0, rtol=1e-5)
    vector = ref.NUMPY_ENVS["vector-quadratic"](jb.make_env("vector-quadratic"), rng)
    first, second = vector.observe(), vector.observe()
    assert first.shape == (50, 20) and not np.allclose(first, second)  # fresh every round
    np.testing.assert_allclose(np.linalg.norm(second, axis=-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(vector.means, 10.0 * (second.astype(float) @ vector.theta) ** 2,
                               rtol=1e-5)
    assert vector.feedback(int(np.argmax(vector.means)))[1] == 0.0


@pytest.mark.skipif(not HAVE_TORCH, reason="the PyTorch references need torch (.[bench])")
def test_ensemble_pp_references_match_the_agents_update():
    """The training checks of the neural-ensemble-pp and lmc-ts references (the quick form,
    float64 only): the agent's own ``update`` and the PyTorch reference, fed the agent's random
    draws, land on the same parameters (the full benchmark runs them too; they are tested here
    rather than in the quick run, whose JAX compilations of these agents cost tens of seconds
    on a loaded machine)."""
    import jaxbandits as jb

    ref.import_torch().set_num_threads(1)
    for name in ("neural-ensemble-pp", "lmc-ts"):
        reference = ref.TORCH_REFERENCES[name]
        env = jb.make_env(ref.REFERENCE_ENVS[name])
        agent = jb.make_agent(name, **reference.agent_defaults)
        out = ref.check_training(env, agent, name, quick=True)
        assert out["ok"], (name, out)
        assert max(out["errors"].values()) < 1e-12, (name, out)
        assert out["moved"] > 1e-4, (name, out)  # the rounds did train


def test_torch_device_option_defaults_to_the_cpu():
    assert bench.parse_args(["--quick"]).torch_device == "cpu"
    assert bench.parse_args(["--quick", "--torch-device", "cuda"]).torch_device == "cuda"


@pytest.mark.skipif(not HAVE_TORCH, reason="the PyTorch references need torch (.[bench])")
def test_reference_tensors_follow_the_torch_device():
    """Every NumPy array the references turn into a tensor goes through ``to_torch``, which
    lands on ``torch.set_default_device`` (``--torch-device``; checked with the ``meta`` device,
    which needs no GPU): a CPU tensor among CUDA ones would fail at the first product."""
    torch = ref.import_torch()
    source = Path(ref.__file__).read_text()
    assert "torch.from_numpy(" not in source.replace("return torch.from_numpy(array)", "")
    previous = torch.get_default_device()
    try:
        torch.set_default_device("meta")
        assert ref.to_torch(np.ones((2, 3), np.float32)).device.type == "meta"
        assert torch.zeros(3).device.type == "meta"
    finally:
        torch.set_default_device(previous)
    tensor = ref.to_torch(np.arange(3.0))
    assert tensor.device.type == "cpu" and tensor.dtype == torch.float64


@pytest.fixture(scope="module")
def quick_output() -> str:
    """One quick run over a neural agent, a dueling agent (pair actions, a pair history sized
    to the horizon, no warm-up) and an unknown name; one flatness horizon, the timed one, so
    that a single program per agent is compiled."""
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.throughput_neural", "--quick", "--runs", "1",
         "--flat-horizons", "2", "--agents", "neural-es,ndb-ucb,no-such-neural-agent"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_quick_run_prints_the_tables(quick_output):
    out = quick_output
    assert re.search(r"^agent\s+runs\s+horizon\s+compile s\s+wall s\s+JAX seed-steps/s\s+"
                     r"PyTorch seed-steps/s\s+ratio$", out, re.M), out
    assert re.search(r"^neural-es\s+1\s+2\s+[\d.]+\s+[\d.]+\s+[\d,.]+\s", out, re.M), out
    assert re.search(r"^agent\s+runs\s+horizon\s+JAX seed-steps/s\s+rounds\s+ms per round$",
                     out, re.M), out
    assert "[skip] no-such-neural-agent" in out
    assert re.search(r"^ratio neural-es at 1 runs: ", out, re.M), out
    if not HAVE_TORCH:
        assert "pip install -e '.[bench]'" in out
    else:
        assert re.search(r"\[check\] neural-es: one training round .* -> consistent", out), out


def test_quick_run_covers_a_dueling_agent(quick_output):
    out = quick_output
    assert re.search(r"^== ndb-ucb on dueling-square \(d=5, K=5\).* from an empty buffer of 2 "
                     r"rows", out, re.M), out
    assert re.search(r"^ndb-ucb\s+1\s+2\s+[\d.]+\s+[\d.]+\s+[\d,.]+\s", out, re.M), out
    assert re.search(r"^ratio ndb-ucb at 1 runs: ", out, re.M), out
    if HAVE_TORCH:
        assert re.search(r"\[check\] ndb-ucb: one training round .*float64.* -> consistent",
                         out), out
        assert re.search(r"\[check\] ndb-ucb: final regret at T=2: .* -> consistent", out), out
        assert re.search(r"^\[torch\] ndb-ucb \(history\): ", out, re.M), out
