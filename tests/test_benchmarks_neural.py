"""Smoke test of the neural throughput benchmark: it runs and prints its tables, with or without
PyTorch; its speed is not asserted."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "throughput_neural.py"
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _load_script(path: Path = SCRIPT, name: str = "_throughput_neural_benchmark"):
    """A benchmark script as a module (it imports jax and torch only when it runs)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_script()


def test_arguments_parse():
    args = bench.parse_args(["--quick", "--agents", "neural-es:ensemble_size=4,neural-ucb"])
    assert args.agents == [("neural-es", {"ensemble_size": 4}), ("neural-ucb", {})]
    assert args.runs == [1, 2] and args.flat_horizons == [4, 8]
    assert set(bench.TORCH_REFERENCES) >= {"neural-es", "neural-ucb", "nvldb-ucb-asym",
                                           "ndb-ucb"}
    assert bench.REFERENCE_ENVS["nvldb-ucb-asym"] == bench.REFERENCE_ENVS["ndb-ucb"] == \
        "dueling-square"
    with pytest.raises(ValueError, match="field=value"):
        bench.parse_entry("neural-es:ensemble_size")


def test_throughput_script_forwards_the_dueling_agents():
    """``benchmarks/throughput.py --agents ...`` hands agents with a PyTorch reference (the
    dueling ones too) to this script and keeps the others."""
    throughput = _load_script(SCRIPT.parent / "throughput.py", "_throughput_benchmark_neural")
    args = throughput.parse_args(["--agents", "nvldb-ucb-asym,lin-ucb,ndb-ucb:num_grad_steps=5"])
    assert args.neural == ["nvldb-ucb-asym", "ndb-ucb:num_grad_steps=5"]
    assert [entry.name for entry in args.agents] == ["lin-ucb"]


@pytest.fixture(scope="module")
def quick_output() -> str:
    """One quick run over a neural agent, a dueling agent (pair actions, a pair history sized
    to the horizon, no warm-up) and an unknown name; one flatness horizon, the timed one, so
    that a single program per agent is compiled."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--runs", "1", "--flat-horizons", "2",
         "--agents", "neural-es,ndb-ucb,no-such-neural-agent"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=SCRIPT.parents[1],
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
