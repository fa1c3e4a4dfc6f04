"""Tools around results: no plotting import from results, readable plots, tidy
DataFrames, paired comparisons under common random numbers, the run record (``run_info``),
progress lines and the warm-up warning."""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
import warnings

import jax
import numpy as np
import pytest
from scipy import stats

import jaxbandits as jb
from jaxbandits.results import (
    Result,
    ResultWriter,
    common_random_numbers,
    environment_info,
    paired_difference,
)
from jaxbandits.simulate import trace_counts

runner = importlib.import_module("jaxbandits.simulate")  # the module, not the function

ENV = jb.make_env("linear", dim=4, num_arms=6)  # the shapes of tests/test_runner.py
LINTS = jb.make_agent("lin-ts")
T, RUNS = 40, 4


def _result(seed: int = 0, runs: int = 3, replay: bool = False, name: str = "r") -> Result:
    rng = np.random.default_rng(seed)
    steps = np.asarray([1, 3, 10, 30])
    regret = np.cumsum(rng.random((runs, 4)), axis=1).astype(np.float32)
    accepted = np.cumsum(rng.integers(0, 3, (runs, 4)), axis=1).astype(np.float32)
    return Result(steps=steps, cumulative_regret=regret, cumulative_reward=regret[:, ::-1].copy(),
                  accepted=accepted if replay else None, name=name,
                  env_config={"name": "linear", "dim": 4}, extras={"key": [0, 0]})


@pytest.fixture(scope="module")
def simulated():
    """One tiny simulation shared by the run-record tests."""
    return jb.simulate(ENV, LINTS, 0, T, RUNS, progress=False, run_info={"command": "test"})


# ------------------------------------------------------------------------------------------------
# 1. Plotting depends on results, never the reverse.


@pytest.mark.full
def test_importing_results_imports_neither_plotting_nor_matplotlib():
    code = ("import sys, jaxbandits.results, jaxbandits\n"
            "bad = [m for m in ('jaxbandits.plotting', 'matplotlib') if m in sys.modules]\n"
            "assert not bad, bad\n"
            "assert callable(jaxbandits.plot_regret)\n"
            "assert 'jaxbandits.plotting' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert not hasattr(Result, "plot")  # users call jb.plot_regret(result, path)


# ------------------------------------------------------------------------------------------------
# 2. Plots people can read.


def test_identical_curves_stay_visible_and_bands_are_explained(tmp_path):
    import matplotlib.pyplot as plt

    same = _result()
    png = tmp_path / "regret.png"
    fig = jb.plot_regret({"a": same, "b": same}, png, title="linear", note="agent.reg=2")
    try:
        ax = fig.axes[0]
        styles = [line.get_linestyle() for line in ax.lines]
        colours = [line.get_color() for line in ax.lines]
        assert len(ax.lines) == 2 and styles[0] != styles[1] and colours[0] != colours[1]
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), ax.lines[1].get_ydata())
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert sum("95%" in t for t in legend) == 1, legend
        assert ax.get_title() == "linear\nagent.reg=2"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        plt.close(fig)
    fig = jb.plot_regret(same, note="only a note", band=False)  # no band: no band entry
    try:
        assert fig.axes[0].get_title() == "only a note"
        assert not any("95%" in t.get_text() for t in fig.axes[0].get_legend().get_texts())
    finally:
        plt.close(fig)


# ------------------------------------------------------------------------------------------------
# 3. Tidy DataFrames.


def test_to_dataframe_is_tidy_and_exact():
    pytest.importorskip("pandas")
    result = _result(runs=3)
    df = result.to_dataframe()
    assert list(df.columns) == ["run", "step", "metric", "value"]
    assert len(df) == 3 * 4 * 2
    for metric, array in (("regret", result.cumulative_regret),
                          ("reward", result.cumulative_reward)):
        part = df[df.metric == metric]
        table = part.pivot(index="run", columns="step", values="value")
        assert list(table.columns) == result.steps.tolist()
        np.testing.assert_array_equal(table.to_numpy(), array.astype(np.float64))
    replay = _result(runs=2, replay=True)
    df = replay.to_dataframe()
    assert list(df.metric.cat.categories) == ["ctr", "reward", "accepted"]
    assert len(df) == 2 * 4 * 3
    ctr = df[df.metric == "ctr"].value.to_numpy().reshape(2, 4)
    np.testing.assert_array_equal(ctr, replay._metric("ctr"))
    assert len(replay.to_dataframe("accepted")) == 2 * 4
    with pytest.raises(ValueError, match="metric must be"):
        result.to_dataframe(["regret", "clicks"])
    with pytest.raises(ValueError, match="needs a replay result"):
        result.to_dataframe("ctr")


def test_to_dataframe_without_pandas_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` raises ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        _result().to_dataframe()


# ------------------------------------------------------------------------------------------------
# 4. Paired comparisons.


def test_paired_difference_of_a_result_with_itself_is_zero():
    result = _result(runs=5)
    assert common_random_numbers(result, result)
    assert paired_difference(result, result) == (0.0, 0.0)
    mean, half = paired_difference(_result(runs=1), _result(runs=1, seed=1))
    assert math.isfinite(mean) and math.isnan(half)  # one run: no interval


@pytest.mark.parametrize("change, match", [
    (dict(runs=4), "numbers of runs differ"),
    (dict(extras={"key": [0, 1]}), "keys differ"),
    (dict(extras={}), "does not record its key"),
    (dict(env_config={"name": "linear", "dim": 5}), "environments differ"),
    (dict(steps=np.asarray([1, 3, 10, 31])), "horizons differ"),
    (dict(steps=np.asarray([1, 4, 10, 30])), "recorded steps differ"),
])
def test_paired_difference_refuses_results_without_common_random_numbers(change, match):
    a = _result(runs=3)
    b = _result(runs=change.pop("runs", 3), seed=1)
    for field, value in change.items():
        setattr(b, field, value)
    assert not common_random_numbers(a, b)
    with pytest.raises(ValueError, match=f"common random numbers: .*{match}"):
        paired_difference(a, b)


def test_paired_difference_is_narrower_than_unpaired_on_a_compare(tmp_path):
    results = jb.compare(ENV, {"lin-ts": LINTS, "greedy": jb.make_agent("greedy")}, 0, T, 8,
                         progress=False)
    a, b = results["lin-ts"], results["greedy"]
    assert common_random_numbers(a, b)
    mean, half = paired_difference(a, b)
    diff = a.cumulative_regret[:, -1].astype(np.float64) - b.cumulative_regret[:, -1]
    assert mean == pytest.approx(diff.mean())
    t975 = stats.t.ppf(0.975, 7)  # 2.3646 (the table before scipy said 2.365)
    assert half == pytest.approx(t975 * diff.std(ddof=1) / math.sqrt(8))
    assert half < math.hypot(a.final()[1], b.final()[1])  # the unpaired half-width
    a.save(tmp_path / "a")  # loaded results (lists for tuples) still pair with in-memory ones
    assert paired_difference(Result.load(tmp_path / "a"), b) == pytest.approx((mean, half))
    other = jb.simulate(ENV, jb.make_agent("greedy"), 1, T, 8, progress=False)
    with pytest.raises(ValueError, match="keys differ"):
        paired_difference(a, other)


# ------------------------------------------------------------------------------------------------
# 5. The run record.


def test_run_info_records_versions_devices_and_user_entries(simulated):
    import jaxlib

    info = simulated.run_info
    assert info["jaxbandits"] == jb.__version__ and info["jax"] == jax.__version__
    assert info["jaxlib"] == jaxlib.__version__ and info["numpy"] == np.__version__
    assert info["python"] == sys.version.split()[0] and info["platform"]
    device = jax.devices()[0]
    assert info["devices"] == {"backend": device.platform, "kind": device.device_kind,
                               "count": 1}
    assert info["horizon"] == T and info["num_runs"] == RUNS and info["command"] == "test"
    assert info["block_runs"] == simulated.extras["block_runs"]
    assert info["key"] == simulated.extras["key"] == [0, 0]
    assert environment_info()["devices"]["count"] == len(jax.devices())


def test_run_info_survives_save_load_and_old_files_load_empty(simulated, tmp_path):
    simulated.save(tmp_path / "r")
    assert Result.load(tmp_path / "r").run_info == simulated.run_info
    json_path = tmp_path / "r.json"
    meta = json.loads(json_path.read_text())
    json_path.write_text(json.dumps({**meta, "run_info": {"edited": True}}))
    with pytest.raises(ValueError, match="was edited"):  # version 2 hashes its fields
        Result.load(tmp_path / "r")
    del meta["run_info"], meta["sha256"]  # written before run_info (and the hashes) existed
    meta["version"] = 1
    json_path.write_text(json.dumps(meta))
    assert Result.load(tmp_path / "r").run_info == {}
    meta["run_info"] = ["not", "an", "object"]
    json_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="'run_info' must be dict"):
        Result.load(tmp_path / "r")
    writer = ResultWriter(tmp_path / "w", 1, [1, 2], replay=False)
    writer.write(0, np.zeros((1, 2)), np.ones((1, 2)))
    assert writer.finish(run_info={"a": [1]}).run_info == {"a": [1]}
    assert Result.load(tmp_path / "w").run_info == {"a": [1]}


def test_run_info_is_written_by_save_to_and_changes_no_number(simulated, tmp_path):
    streamed = jb.simulate(ENV, LINTS, 0, T, RUNS, progress=False, save_to=tmp_path / "s",
                           run_info={"command": "test"})
    assert isinstance(streamed.cumulative_regret, np.memmap)
    assert streamed.run_info == simulated.run_info
    assert Result.load(tmp_path / "s").run_info == simulated.run_info
    np.testing.assert_array_equal(streamed.cumulative_regret, simulated.cumulative_regret)
    # not part of the checkpoint's fingerprint: another run_info resumes the same experiment
    ckpt = tmp_path / "ckpt"
    first = jb.simulate(ENV, LINTS, 0, T, RUNS, progress=False, checkpoint_dir=ckpt,
                        run_info={"command": "first"})
    again = jb.simulate(ENV, LINTS, 0, T, RUNS, progress=False, checkpoint_dir=ckpt,
                        run_info={"command": "again"})
    np.testing.assert_array_equal(first.cumulative_regret, simulated.cumulative_regret)
    np.testing.assert_array_equal(again.cumulative_regret, simulated.cumulative_regret)
    assert again.run_info["command"] == "again"


def test_compare_and_sweep_fill_run_info():
    results = jb.compare(ENV, {"a": LINTS, "b": LINTS}, 0, T, 2, progress=False,
                         run_info={"overrides": ["agent.reg=1"]})
    grid = jb.sweep(ENV, LINTS, 0, {"explore_scale": [0.5, 1.0]}, T, 2, progress=False,
                    run_info={"command": "sweep"})
    for result in (*results.values(), *grid.values()):
        assert result.run_info["jax"] == jax.__version__ and result.run_info["num_runs"] == 2
    assert results["a"].run_info["overrides"] == ["agent.reg=1"]
    assert grid["explore_scale=0.5"].run_info["command"] == "sweep"
    assert grid["explore_scale=0.5"].run_info is not grid["explore_scale=1.0"].run_info


@pytest.mark.parametrize("run_info, match", [
    (["command"], "must be a dict"),
    ({1: "x"}, "keys must be strings"),
    ({"when": object()}, "JSON-serialisable"),
    ({"x": float("nan")}, "JSON-serialisable"),
    ({"horizon": 5}, "'horizon' is recorded by the runner"),
])
def test_bad_run_info_is_refused_before_compiling(run_info, match):
    before = trace_counts()
    with pytest.raises(ValueError, match=match):
        jb.simulate(ENV, LINTS, 0, T, RUNS, progress=False, run_info=run_info)
    assert trace_counts() == before


# ------------------------------------------------------------------------------------------------
# 6. Progress lines.


def test_progress_lines_show_compile_chunks_and_the_end(capfd, monkeypatch):
    monkeypatch.setattr(importlib.import_module("jaxbandits.runner.programs"), "_COMPILED",
                        {})  # force a compile phase
    result = jb.simulate(ENV, LINTS, 0, T, 2, chunk_size=5, progress="lines")
    out, err = capfd.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("jaxbandits: ")]
    assert out == ""
    assert lines[0] == "jaxbandits: compiling lin-ts ..."
    assert lines[1].startswith("jaxbandits: lin-ts compiled in ") and lines[1].endswith(" s")
    progress = lines[2:]
    assert progress[0].startswith("jaxbandits: lin-ts   0% 0/80 seed-steps, - seed-steps/s")
    assert progress[-1].startswith("jaxbandits: lin-ts 100% 80/80 seed-steps, ")
    assert progress[-1].endswith("ETA 0:00:00") and "elapsed" in progress[-1]
    assert 3 <= len(progress) <= 12  # every >= 10% (8 chunks of 12.5%), not every chunk
    assert result.cumulative_regret.shape == (2, len(result.steps))
    jb.simulate(ENV, LINTS, 0, T, 2, chunk_size=5, progress="lines")  # compiled: no compile line
    assert "compiling" not in capfd.readouterr().err


@pytest.mark.parametrize("progress", ["yes", 1, "Lines"])
def test_invalid_progress_is_refused_before_compiling(progress):
    before = trace_counts()
    with pytest.raises(ValueError, match="progress must be None, True, False, 'bar' or 'lines'"):
        jb.simulate(ENV, LINTS, 0, T, 2, progress=progress)
    assert trace_counts() == before


def test_default_progress_is_silent_off_a_terminal(capfd):
    jb.simulate(ENV, LINTS, 0, T, 2)
    assert capfd.readouterr() == ("", "")


# ------------------------------------------------------------------------------------------------
# 7. A warm-up longer than the horizon is a warning.


def test_warmup_longer_than_the_horizon_warns():
    env = jb.make_env("logistic", dim=3, num_arms=4)
    with pytest.warns(UserWarning, match=r"'glm-es' has 500 warm-up rounds.*horizon 20.*warmup=")\
            as record:
        jb.simulate(env, jb.make_agent("glm-es"), 0, 20, 2, progress=False)
    assert record[0].filename == __file__  # points at the caller
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*warm-up", category=UserWarning)
        jb.simulate(env, jb.make_agent("glm-es", warmup=5), 0, 20, 2, progress=False)
