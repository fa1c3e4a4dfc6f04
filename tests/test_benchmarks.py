"""Smoke test of the throughput benchmark: it runs and reports; its speed is not asserted."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "throughput.py"


def _load_script():
    """The benchmark script as a module (for its parser; it imports jax only in main)."""
    spec = importlib.util.spec_from_file_location("_throughput_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


throughput = _load_script()

# The rows of --quick's default agent list and the environment each is benchmarked on.
QUICK_ROWS = {
    "lin-ts": "linear",
    "lin-ucb": "linear",
    "lin-es": "linear",
    "ensemble-pp[M=8]": "linear",
    "ensemble-pp[M=32]": "linear",
    "glm-es[warmup=50]": "logistic",
}


def test_agent_specs_parse_to_labels_and_overrides():
    entry = throughput.parse_entry("ensemble-pp:ensemble_size=8:reference=sphere")
    assert entry.label == "ensemble-pp[M=8,reference=sphere]"
    assert dict(entry.overrides) == {"ensemble_size": 8, "reference": "sphere"}
    assert throughput.parse_entry("glm-es").reference.env_name == "logistic"
    with pytest.raises(ValueError, match="no NumPy reference"):
        throughput.parse_entry("no-such-agent")
    with pytest.raises(ValueError, match="field=value"):
        throughput.parse_entry("lin-es:ensemble_size")


def test_neural_agents_are_routed_to_the_pytorch_comparison():
    """``throughput.py --agents`` takes the neural agents too: they go to
    ``throughput_neural.py`` (PyTorch references), the rest to the NumPy comparison; with only
    neural agents no linear section (nor its default flat-in-t agent) runs."""
    args = throughput.parse_args(["--agents", "lin-ts,neurallog-ucb-2,neural-es:ensemble_size=4",
                                  "--runs", "1,10,100"])
    assert [e.label for e in args.agents] == ["lin-ts"]
    assert args.neural == ["neurallog-ucb-2", "neural-es:ensemble_size=4"]
    assert args.neural_runs == [1, 10, 100] and args.flat is not None
    only = throughput.parse_args(["--agents", "neurallog-ucb-2"])
    assert only.agents == [] and only.flat is None and only.neural_runs is None
    with pytest.raises(SystemExit):  # an agent with neither reference is still an error
        throughput.parse_args(["--agents", "no-such-agent"])


def test_throughput_quick_runs_and_prints_ratios():
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=SCRIPT.parents[1],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    for label, env in QUICK_ROWS.items():
        name = re.escape(label)
        # A table row per (agent, run count: 10 in quick mode) on its environment, with the
        # ratio last ...
        assert re.search(rf"^{name}\s+{env}\s+10\s+\d+\s.*\d(\.\d)?x\s*$", out, re.M), out
        # ... a summary ratio line, and a regret check that the NumPy reference passed.
        assert re.search(rf"^ratio {name} at \d+ runs: \d+(\.\d+)?x", out, re.M), out
        assert re.search(rf"^\[check\] {name} on {env}: .* -> consistent;", out, re.M), out
    assert out.count("[check]") == len(QUICK_ROWS), out
    # The flat-in-t section: JAX rates over growing horizons, NumPy's time per step by rounds.
    assert re.search(r"^flat in t: glm-es\[warmup=50\]", out, re.M), out
    # (rates below 100 print with a decimal)
    assert re.search(r"^glm-es\[warmup=50\]\s+200\s+.*\s1-200\s+[\d,.]+\s*$", out, re.M), out
    assert re.search(r"^glm-es\[warmup=50\]\s+400\s+.*\s201-400\s+[\d,.]+\s*$", out, re.M), out
    assert re.search(r"^NumPy reference of glm-es\[warmup=50\], ms per step .*"
                     r"1-50 \(warm-up\): [\d.]+ \|.*-200: [\d.]+$", out, re.M), out
