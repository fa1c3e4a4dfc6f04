"""Smoke test of the throughput benchmark: it runs and reports; its speed is not asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import linear_floor as floor
from benchmarks import matmul_rates as rates
from benchmarks import throughput
from tests.references import numpy_linear
from tests.references.parity import regret_agreement

pytestmark = pytest.mark.full

ROOT = Path(__file__).resolve().parents[1]

# The rows of --quick's default agent list and the environment each is benchmarked on.
QUICK_ROWS = {
    "lin-ts": "linear",
    "lin-ucb": "linear",
    "lin-es": "linear",
    "ensemble-pp[M=8]": "linear",
    "ensemble-pp[M=32]": "linear",
    "glm-es[warmup=50]": "logistic",
}
# The rows with a batched NumPy reference (and a FLOP count for the roofline line).
BATCHED_ROWS = ("lin-ts", "lin-ucb", "lin-es", "ensemble-pp[M=8]", "ensemble-pp[M=32]")


def test_agent_specs_parse_to_labels_and_overrides():
    entry = throughput.parse_entry("ensemble-pp:ensemble_size=8:reference=sphere")
    assert entry.label == "ensemble-pp[M=8,reference=sphere]"
    assert dict(entry.overrides) == {"ensemble_size": 8, "reference": "sphere"}
    assert throughput.parse_entry("glm-es").reference.env_name == "logistic"
    with pytest.raises(ValueError, match="no NumPy reference"):
        throughput.parse_entry("no-such-agent")
    with pytest.raises(ValueError, match="field=value"):
        throughput.parse_entry("lin-es:ensemble_size")


@pytest.mark.parametrize("kind", ["gaussian", "sphere", "cube", "coordinate", "sparse"])
def test_batched_reference_laws_are_isotropic_draws_per_row(kind):
    """``reference_law`` with a leading batch: one independent draw of ``R^M`` per index,
    of mean square 1 per coordinate (exactly 1 for the sphere, cube, coordinate and sparse)."""
    rng = np.random.default_rng(0)
    zeta = numpy_linear.reference_law(rng, kind, 8, 2, (400, 3), np.float32)
    assert zeta.shape == (400, 3, 8) and zeta.dtype == np.float32
    sq = np.sum(zeta.astype(np.float64) ** 2, axis=-1)
    if kind == "gaussian":
        assert abs(sq.mean() - 8.0) < 0.3
    else:
        np.testing.assert_allclose(sq, 8.0, rtol=1e-5)
    if kind in ("coordinate", "sparse"):
        assert set(np.count_nonzero(zeta, axis=-1).ravel()) == {1 if kind == "coordinate" else 2}
    # the rows are separate draws (coordinate: 16 possible values)
    assert len({tuple(row) for row in zeta.reshape(-1, 8)}) >= 12
    single = numpy_linear.reference_law(rng, kind, 8, 2)
    assert single.shape == (8,) and single.dtype == np.float64


def test_summary_and_roofline_lines():
    """The targets' verdicts print at 1,000 runs (>= 100x the loop and >= 10x batched NumPy for
    the agents with a batched reference, >= 30x the loop otherwise), never below; the roofline
    line is ``rate * FLOP / 1e9`` against the peak."""
    row = {"rate": 2e6, "ratio": 120.0, "batched_ratio": 4.0}
    assert throughput.summary_line("lin-ts", row, 1000) == (
        "ratio lin-ts at 1000 runs: 120.0x (target >= 100x: met) vs the NumPy loop, "
        "4.0x (target >= 10x: NOT met) vs batched NumPy")
    assert throughput.summary_line("lin-ts", row, 100) == (
        "ratio lin-ts at 100 runs: 120.0x vs the NumPy loop, 4.0x vs batched NumPy")
    assert throughput.summary_line("glm-es", {**row, "batched_ratio": None}, 1000) == (
        "ratio glm-es at 1000 runs: 120.0x (target >= 30x: met)")
    flops = throughput.FLOPS_PER_STEP["lin-ts"](None, 20, 50)
    assert flops == 8 * 20**2 + 2 * 50 * 20 + 9 * 20
    line = throughput.roofline_line("lin-ts", row, 1000, flops, 142.0)
    assert line.endswith(" = 10.76 GFLOP/s achieved = 7.58% of the 142 GFLOP/s f32 peak"), line


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
        [sys.executable, "-m", "benchmarks.throughput", "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert re.search(r"^agent\s+env\s+runs\s.*\s+NumPy loop seed-steps/s\s+ratio\s+"
                     r"batched NumPy seed-steps/s\s+ratio batched\s*$", out, re.M), out
    for label, env in QUICK_ROWS.items():
        name = re.escape(label)
        # A table row per (agent, run count: 10 in quick mode) on its environment, ending with
        # the ratio to the NumPy loop, the batched NumPy rate and the ratio to it ('-' without a
        # batched reference) ...
        batched = r"[\d,.]+\s+\d+\.\dx" if label in BATCHED_ROWS else r"-\s+-"
        assert re.search(rf"^{name}\s+{env}\s+10\s+\d+\s.*\s\d+\.\dx\s+{batched}\s*$", out,
                         re.M), out
        # ... a summary ratio line, and a regret check that the NumPy reference passed.
        assert re.search(rf"^ratio {name} at \d+ runs: \d+(\.\d+)?x", out, re.M), out
        assert re.search(rf"^\[check\] {name} on {env}: .* -> consistent;", out, re.M), out
        if label in BATCHED_ROWS:
            # the batched reference: its regret check passed, its rate at 10 runs, both
            # ratios in the summary, and the engine's fraction of the f32 roofline
            assert re.search(rf"^\[batched\] {name} on {env}: final regret at T=200: batched "
                             r"NumPy [\d.]+ \+- [\d.]+ \(10 runs, float32\), JAX .* -> "
                             r"consistent;", out, re.M), out
            assert re.search(rf"^\[batched\] {name} runs=10: [\d,.]+ seed-steps/s", out,
                             re.M), out
            assert re.search(rf"^ratio {name} at 10 runs: \d+\.\dx vs the NumPy loop, "
                             r"\d+\.\dx vs batched NumPy$", out, re.M), out
            assert re.search(rf"^roofline {name} at 10 runs: ~[\d,]+ FLOP per seed-step x "
                             r"[\d,.]+ seed-steps/s = [\d.]+ GFLOP/s achieved = [\d.]+% of the "
                             r"142 GFLOP/s f32 peak$", out, re.M), out
    assert out.count("[check]") == len(QUICK_ROWS), out
    assert "MISMATCH" not in out, out
    assert len(re.findall(r"^roofline ", out, re.M)) == len(BATCHED_ROWS), out
    # The flat-in-t section: JAX rates over growing horizons, NumPy's time per step by rounds.
    assert re.search(r"^flat in t: glm-es\[warmup=50\]", out, re.M), out
    # (rates below 100 print with a decimal)
    assert re.search(r"^glm-es\[warmup=50\]\s+200\s+.*\s1-200\s+[\d,.]+\s*$", out, re.M), out
    assert re.search(r"^glm-es\[warmup=50\]\s+400\s+.*\s201-400\s+[\d,.]+\s*$", out, re.M), out
    assert re.search(r"^NumPy reference of glm-es\[warmup=50\], ms per step .*"
                     r"1-50 \(warm-up\): [\d.]+ \|.*-200: [\d.]+$", out, re.M), out


def test_no_reference_mode_prints_the_engine_alone_and_skips_what_does_not_fit(capsys):
    # The GPU mode (benchmarks/gpu.sh): one block of all the runs, no NumPy yardstick, and a run
    # count whose block cannot be allocated is printed as such instead of ending the benchmark.
    code = throughput.main(["--no-reference", "--agents", "lin-ts,lin-ucb", "--runs",
                            "3,1000000000,5", "--horizon", "4", "--repeats", "1", "--min-time",
                            "0", "--block-runs", "all", "--dim", "3", "--num-arms", "4",
                            "--cpu-devices", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "NumPy" not in out.split("JAX only (--no-reference)", 1)[1], out
    for name in ("lin-ts", "lin-ucb"):
        assert re.search(rf"^\[jax\]\s+{name} runs=3: [\d,.]+ seed-steps/s", out, re.M), out
        assert re.search(rf"^\[jax\]\s+{name} runs=1000000000: does not fit \(ValueError: .*"
                         r"\); the run counts after it skipped$", out, re.M), out
        assert f"{name} runs=5:" not in out  # after the one that did not fit
        assert re.search(rf"^best {name}: [\d,.]+ seed-steps/s at 3 runs \(compile [\d.]+ s\)$",
                         out, re.M), out
        assert re.search(rf"^roofline {name} at 3 runs: ", out, re.M), out


def test_matmul_rates_parses_shapes_and_prints_a_rate_per_shape(capsys):
    assert rates.parse_shapes("25x64x20, 8X64x100") == [(25, 64, 20), (8, 64, 100)]
    for bad in ("2x3", "0x4x4", "ax4x4"):
        with pytest.raises(Exception, match="RUNSxROWSxWIDTH"):
            rates.parse_shapes(bad)
    assert rates.main(["--shapes", "2x3x4,1x5x2", "--min-time", "0"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^2048 x 2048 @ 2048 x 2048: [\d.]+ GFLOP/s$", out, re.M), out
    for runs, rows, width in ((2, 3, 4), (1, 5, 2)):
        assert re.search(rf"^\s*{runs}\s+{rows}\s+{width}\s+[\d.]+\s+[\d.]+%$", out, re.M), out


def test_linear_floor_prints_pieces_and_budgets(capsys):
    assert floor.main(["--quick", "--cores", "2"]) == 0
    out = capsys.readouterr().out
    pieces = {}
    for piece in ("draw", "bits", "sample", "select", "update", "update+widths"):
        match = re.search(rf"^{re.escape(piece)}\s+([\d.]+)$", out, re.M)
        assert match, out
        pieces[piece] = float(match.group(1))
    assert all(ns > 0 for ns in pieces.values()), pieces
    for name in ("lin-ts", "lin-ucb"):
        line = re.search(rf"^{name}: engine ([\d.]+) ns .*\(its pieces: ([\d.]+)\); NumPy loop "
                         r"([\d,]+) and batched NumPy ([\d,]+) seed-steps/s$", out, re.M)
        assert line, out
        loop, batched = (float(line.group(i).replace(",", "")) for i in (3, 4))
        budget = re.search(rf"^{name}: .*\n  100x loop: budget ([\d.]+) ns", out, re.M)
        # 2 cores x 1e9 ns over 100 times the loop's rate (the rate printed rounded)
        assert float(budget.group(1)) == pytest.approx(2e9 / (100 * loop), rel=1e-3, abs=0.06), out
        assert re.search(rf"^{name}: .*\n.*\n  10x batched: budget ([\d.]+) ns", out, re.M), out
        assert batched > 0
    assert "the Gaussian draw alone is" in out


def test_regret_agreement_gives_one_seed_the_spread_of_one_run():
    # 100 JAX runs at 438 +- 39.5 (95% half-width): one run's spread is about +- 395
    one = regret_agreement([213.0], 438.0, 39.5, 100)
    assert one["np_half"] == pytest.approx(395.0) and one["consistent"]
    assert not regret_agreement([213.0], 438.0, 39.5, 1)["consistent"]  # one run: no spread
    many = regret_agreement([400.0, 420.0, 440.0, 460.0], 438.0, 39.5, 100)
    assert many["np_regret"] == pytest.approx(430.0)
    assert many["np_half"] == pytest.approx(1.96 * np.std([400, 420, 440, 460], ddof=1) / 2)
    assert many["consistent"]
    assert not regret_agreement([100.0, 101.0, 99.0], 438.0, 3.0, 100)["consistent"]
