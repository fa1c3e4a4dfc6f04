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


def _load_script():
    """The benchmark script as a module (it imports jax and torch only when it runs)."""
    spec = importlib.util.spec_from_file_location("_throughput_neural_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_script()


def test_arguments_parse():
    args = bench.parse_args(["--quick", "--agents", "neural-es:ensemble_size=4,neural-ucb"])
    assert args.agents == [("neural-es", {"ensemble_size": 4}), ("neural-ucb", {})]
    assert args.runs == [1, 2] and args.flat_horizons == [4, 8]
    assert set(bench.TORCH_REFERENCES) >= {"neural-es", "neural-ucb"}
    with pytest.raises(ValueError, match="field=value"):
        bench.parse_entry("neural-es:ensemble_size")


def test_quick_run_prints_the_tables():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--runs", "1",
         "--agents", "neural-es,no-such-neural-agent"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=SCRIPT.parents[1],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert re.search(r"^agent\s+runs\s+horizon\s+compile s\s+wall s\s+JAX seed-steps/s\s+"
                     r"PyTorch seed-steps/s\s+ratio$", out, re.M), out
    assert re.search(r"^neural-es\s+1\s+2\s+[\d.]+\s+[\d.]+\s+[\d,.]+\s", out, re.M), out
    assert re.search(r"^agent\s+runs\s+horizon\s+JAX seed-steps/s\s+rounds\s+ms per round$",
                     out, re.M), out
    assert "[skip] no-such-neural-agent" in out
    assert re.search(r"^ratio neural-es at 1 runs: ", out, re.M), out
    if importlib.util.find_spec("torch") is None:
        assert "pip install -e '.[bench]'" in out
    else:
        assert re.search(r"\[check\] neural-es: one training round .* -> consistent", out), out
