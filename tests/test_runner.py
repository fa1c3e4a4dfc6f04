"""The runner: determinism, common random numbers, recording, checkpoints, sweeps, results."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from scipy import stats

import jaxbandits as jb
from jaxbandits.simulate import trace_counts

runner = importlib.import_module("jaxbandits.simulate")  # the module, not the function

ENV = jb.make_env("linear", dim=4, num_arms=6)
LINTS = jb.make_agent("lin-ts")


def _sim(agent=LINTS, env=ENV, horizon=120, num_runs=4, **kwargs):
    kwargs.setdefault("progress", False)
    return jb.simulate(env, agent, 0, horizon, num_runs, **kwargs)


def test_run_curves_do_not_depend_on_num_runs_or_chunking():
    base = _sim(num_runs=4, record="all", chunk_size=120)
    more = _sim(num_runs=8, record="all", chunk_size=120)
    chunked = _sim(num_runs=4, record="all", chunk_size=50)  # 50 does not divide 120
    alone = _sim(num_runs=1, record="all", chunk_size=120)
    np.testing.assert_array_equal(base.cumulative_regret, more.cumulative_regret[:4])
    np.testing.assert_array_equal(base.cumulative_reward, more.cumulative_reward[:4])
    np.testing.assert_array_equal(base.cumulative_regret, chunked.cumulative_regret)
    np.testing.assert_array_equal(base.cumulative_regret[:1], alone.cumulative_regret)
    assert not np.array_equal(base.cumulative_regret[0], base.cumulative_regret[1])


def test_identical_agents_in_compare_give_identical_curves():
    results = jb.compare(ENV, {"a": LINTS, "b": jb.make_agent("lin-ts")}, 3, 100, 3,
                         progress=False)
    np.testing.assert_array_equal(results["a"].cumulative_regret, results["b"].cumulative_regret)
    assert list(results) == ["a", "b"] and results["a"].name == "a"


def test_compare_uses_common_random_numbers():
    """Run r of every agent sees the same instance and reward noise: two greedy agents with
    different ridge penalties both play arm 0 first (zero prior mean), so their first rewards
    and regrets agree run by run, and later curves differ."""
    results = jb.compare(ENV, {"a": jb.make_agent("greedy", reg=1.0),
                               "b": jb.make_agent("greedy", reg=20.0)}, 5, 40, 6, record="all",
                         progress=False)
    a, b = results["a"], results["b"]
    np.testing.assert_array_equal(a.cumulative_regret[:, 0], b.cumulative_regret[:, 0])
    np.testing.assert_array_equal(a.cumulative_reward[:, 0], b.cumulative_reward[:, 0])
    assert len(set(a.cumulative_regret[:, 0])) == 6  # each run has its own instance
    assert not np.array_equal(a.cumulative_regret, b.cumulative_regret)


def test_sweep_compiles_once_and_matches_simulate():
    before = trace_counts().get("chunk", 0)
    results = jb.sweep(ENV, jb.make_agent("lin-ucb"), 0, {"explore_scale": [0.05, 0.3, 1.0]},
                       horizon=100, num_runs=4, progress=False)
    assert trace_counts()["chunk"] - before == 1
    assert list(results) == ["explore_scale=0.05", "explore_scale=0.3", "explore_scale=1.0"]
    assert results["explore_scale=0.3"].agent_config["explore_scale"] == 0.3
    single = _sim(jb.make_agent("lin-ucb", explore_scale=0.3), horizon=100)
    np.testing.assert_allclose(results["explore_scale=0.3"].cumulative_regret,
                               single.cumulative_regret, rtol=1e-5, atol=1e-4)
    finals = [r.final()[0] for r in results.values()]
    assert len(set(finals)) == 3  # the grid values really differ


def test_sweep_over_environment_and_agent_fields_is_a_product():
    results = jb.sweep(ENV, LINTS, 0, {"env.noise_std": [0.1, 1.0], "explore_scale": [0.5, 1.0]},
                       horizon=20, num_runs=2, progress=False)
    assert len(results) == 4
    assert results["env.noise_std=1.0,explore_scale=0.5"].env_config["noise_std"] == 1.0


def test_recording_log_spaced_steps_end_at_horizon():
    result = _sim(horizon=1000, num_runs=2, num_records=30)
    assert result.steps[0] == 1 and result.steps[-1] == 1000
    assert np.all(np.diff(result.steps) > 0) and len(result.steps) <= 31
    full = _sim(horizon=1000, num_runs=2, record="all")
    idx = result.steps - 1
    np.testing.assert_array_equal(result.cumulative_regret, full.cumulative_regret[:, idx])
    assert np.all(np.diff(full.cumulative_regret, axis=1) >= -1e-6)  # regret never negative


def test_explicit_record_steps():
    result = _sim(horizon=50, record=[10, 25, 50])
    np.testing.assert_array_equal(result.steps, [10, 25, 50])
    with pytest.raises(ValueError, match="increasing"):
        _sim(horizon=50, record=[10, 5])
    with pytest.raises(ValueError, match=r"\[1, horizon=50\]"):
        _sim(horizon=50, record=[10, 60])


class _Interrupt(Exception):
    pass


def test_checkpoint_resume_gives_identical_arrays(tmp_path, monkeypatch):
    from jaxbandits.checkpoint import Checkpoint

    kwargs = dict(horizon=250, num_runs=3, chunk_size=60, record="all")
    reference = _sim(**kwargs)
    commit = Checkpoint.commit
    calls = []

    def commit_then_die(self, meta, arrays):
        commit(self, meta, arrays)
        calls.append(meta["done"])
        if len(calls) == 2:
            raise _Interrupt  # killed right after the second chunk's checkpoint

    monkeypatch.setattr(Checkpoint, "commit", commit_then_die)
    with pytest.raises(_Interrupt):
        _sim(checkpoint_dir=tmp_path, **kwargs)
    monkeypatch.setattr(Checkpoint, "commit", commit)

    chunks = []
    original = runner._Progress.advance
    monkeypatch.setattr(runner._Progress, "advance",
                        lambda self, done, wall: (chunks.append(done), original(self, done, wall)))
    resumed = _sim(checkpoint_dir=tmp_path, **kwargs)
    assert chunks == [3 * r for r in (120, 180, 240, 250)]  # resumed after round 120
    np.testing.assert_array_equal(resumed.cumulative_regret, reference.cumulative_regret)
    np.testing.assert_array_equal(resumed.cumulative_reward, reference.cumulative_reward)


def test_checkpoint_of_another_experiment_is_refused_unless_overwritten(tmp_path):
    from jaxbandits.checkpoint import CheckpointError

    _sim(horizon=60, checkpoint_dir=tmp_path)
    before = trace_counts()
    with pytest.raises(CheckpointError, match="overwrite"):
        _sim(horizon=60, checkpoint_dir=tmp_path, agent=jb.make_agent("greedy"))
    assert trace_counts() == before  # refused before compiling anything
    other = _sim(horizon=60, checkpoint_dir=tmp_path, agent=jb.make_agent("greedy"),
                 overwrite=True)
    fresh = _sim(horizon=60, agent=jb.make_agent("greedy"))
    np.testing.assert_array_equal(other.cumulative_regret, fresh.cumulative_regret)


def test_result_statistics_save_load_and_plot(tmp_path):
    result = _sim(horizon=200, num_runs=5)
    mean, half = result.final()
    assert mean == pytest.approx(result.cumulative_regret[:, -1].mean())
    sd = result.cumulative_regret[:, -1].std(ddof=1)
    assert half == pytest.approx(stats.t.ppf(0.975, 4) * sd / np.sqrt(5), rel=1e-4)
    lower, upper = result.confidence_band()
    assert np.all(lower <= result.mean() + 1e-9) and np.all(result.mean() <= upper + 1e-9)
    assert result.wall_time > 0 and result.compile_time >= 0
    assert result.env_config["name"] == "linear" and result.agent_config["name"] == "lin-ts"

    path = result.save(tmp_path / "lints")
    assert path.suffix == ".npz" and (tmp_path / "lints.json").exists()
    loaded = jb.Result.load(tmp_path / "lints")
    np.testing.assert_array_equal(loaded.cumulative_regret, result.cumulative_regret)
    np.testing.assert_array_equal(loaded.steps, result.steps)
    assert loaded.agent_config == result.agent_config and loaded.accepted is None

    png = tmp_path / "regret.png"
    jb.plot_regret({"lin-ts": result, "again": loaded}, png, log_x=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_key_forms_are_equivalent():
    import jax

    by_int = _sim(horizon=30)
    by_key = jb.simulate(ENV, LINTS, jax.random.key(0), 30, 4, progress=False)
    by_raw = jb.simulate(ENV, LINTS, jax.random.PRNGKey(0), 30, 4, progress=False)
    np.testing.assert_array_equal(by_int.cumulative_regret, by_key.cumulative_regret)
    np.testing.assert_array_equal(by_int.cumulative_regret, by_raw.cumulative_regret)


def test_progress_bar_renders(capsys):
    _sim(horizon=30, progress=True)  # rich writes to the terminal; it must not crash
