"""Fault injection at the runner: kills at every file operation of a checkpointed run,
resumes, concurrent writers, checks before any compute, out-of-range actions and bad arguments.

File-level faults (torn commits, corrupt and foreign checkpoints, tampered result files) are in
``test_faults_files.py``; settings validation in ``test_validation.py``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits import _io
from jaxbandits.checkpoint import Checkpoint, CheckpointError
from jaxbandits.core import Agent
from jaxbandits.simulate import trace_counts

ENV = jb.make_env("linear", dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
# 3 runs in blocks of 2 on one device: two waves, two chunks each (a commit after the first
# chunk of a wave and one after its records are written).
KW = dict(horizon=20, num_runs=3, chunk_size=10, block_runs=2, record="all", progress=False)


def _sim(**kwargs):
    return jb.simulate(ENV, AGENT, 4, **{**KW, **kwargs})


class _Killed(BaseException):
    """A kill: raised at a file operation and at every one after it (nothing cleans up)."""


def _count_file_operations(tmp_path) -> int:
    calls = []
    original = _io.fault_point
    _io.fault_point = lambda name: calls.append(name)
    try:
        _sim(checkpoint_dir=tmp_path / "count")
    finally:
        _io.fault_point = original
    return len(calls)


@pytest.mark.full
def test_a_kill_at_any_file_operation_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    reference = _sim()
    total = _count_file_operations(tmp_path)
    assert total > 30  # records file, four commits of a dozen operations each
    for k in range(1, total + 1):
        calls = []

        def fault(name, k=k, calls=calls):
            calls.append(name)
            if len(calls) >= k:
                raise _Killed(f"killed at operation {k} ({name})")

        directory = tmp_path / f"k{k}"
        monkeypatch.setattr(_io, "fault_point", fault)
        with pytest.raises(_Killed):
            _sim(checkpoint_dir=directory)
        monkeypatch.setattr(_io, "fault_point", lambda name: None)
        resumed = _sim(checkpoint_dir=directory)
        np.testing.assert_array_equal(resumed.cumulative_regret, reference.cumulative_regret,
                                      err_msg=f"kill at file operation {k} of {total}")
        np.testing.assert_array_equal(resumed.cumulative_reward, reference.cumulative_reward)


def test_a_finished_checkpoint_returns_at_once_with_the_same_numbers(tmp_path, monkeypatch):
    runner = importlib.import_module("jaxbandits.simulate")

    first = _sim(checkpoint_dir=tmp_path)
    advances = []
    monkeypatch.setattr(runner._Progress, "advance",
                        lambda self, done, wall: advances.append(done))
    again = _sim(checkpoint_dir=tmp_path, chunk_size=7)  # chunking is not part of the identity
    np.testing.assert_array_equal(first.cumulative_regret, again.cumulative_regret)
    assert advances == [3 * 20]  # it starts complete: nothing was replayed
    assert again.wall_time <= first.wall_time


def test_checkpoint_with_streamed_results(tmp_path):
    reference = _sim()
    result = _sim(checkpoint_dir=tmp_path / "ckpt", save_to=tmp_path / "out" / "lin-ts")
    np.testing.assert_array_equal(np.asarray(result.cumulative_regret),
                                  reference.cumulative_regret)
    loaded = jb.Result.load(tmp_path / "out" / "lin-ts")
    np.testing.assert_array_equal(np.asarray(loaded.cumulative_reward),
                                  reference.cumulative_reward)


def test_a_second_writer_is_refused_before_any_compute(tmp_path):
    held = Checkpoint(tmp_path, "someone else's run")
    try:
        before = trace_counts()
        with pytest.raises(CheckpointError, match="another"):
            _sim(checkpoint_dir=tmp_path, num_runs=5)
        assert trace_counts() == before
    finally:
        held.close()


def test_a_mismatched_checkpoint_names_what_is_there(tmp_path):
    _sim(checkpoint_dir=tmp_path)
    with pytest.raises(CheckpointError, match=r"lin-ts.*overwrite"):
        _sim(checkpoint_dir=tmp_path, horizon=30)
    fresh = _sim(checkpoint_dir=tmp_path, horizon=30, overwrite=True)
    np.testing.assert_array_equal(fresh.cumulative_regret, _sim(horizon=30).cumulative_regret)


def test_unwritable_places_fail_before_any_compute(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    before = trace_counts()
    with pytest.raises(ValueError, match="a-file"):
        _sim(checkpoint_dir=blocker / "ckpt", num_runs=6)
    with pytest.raises(ValueError, match="a-file"):
        _sim(save_to=blocker / "sub" / "result", num_runs=6)
    assert trace_counts() == before


class _LateWildAgent(Agent):
    """Plays arm 999 of 4 from round 5 on (an environment would silently clamp it)."""

    name = "late-wild"

    def init(self, key, spec):
        import jax.numpy as jnp

        return jnp.zeros((), jnp.int32)

    def act(self, state, key, context):
        import jax.numpy as jnp

        return jnp.where(state >= 5, 999, 0).astype(jnp.int32), state

    def update(self, state, key, context, action, feedback):
        return state + 1


def test_an_out_of_range_action_names_the_run_and_step():
    with pytest.raises(ValueError, match=r"'late-wild'.* run 0 at step 5 .*\[0, 4\)"):
        jb.simulate(ENV, _LateWildAgent(), 0, 12, 3, progress=False)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(key=2**64), ValueError, "seed"),
    (dict(key="abc"), ValueError, "key must be"),
    (dict(key=True), ValueError, "key must be"),
    (dict(horizon=2**31), ValueError, "horizon"),
    (dict(horizon=5.0), ValueError, "horizon"),
    (dict(num_runs=0), ValueError, "num_runs"),
    (dict(devices=[]), ValueError, "at least one device"),
    (dict(devices=["cpu"]), ValueError, "jax devices"),
    (dict(record=[1.5, 10]), ValueError, "whole numbers"),
    (dict(record=[3, 2]), ValueError, "increasing"),
    (dict(block_runs=0), ValueError, "block_runs"),
    (dict(max_memory=-1), ValueError, "max_memory"),
    (dict(overwrite="yes"), ValueError, "overwrite"),
])
def test_bad_runner_arguments_fail_before_compiling(kwargs, error, match):
    args = dict(key=0, horizon=10, num_runs=2)
    args.update(kwargs)
    before = trace_counts()
    with pytest.raises(error, match=match):
        jb.simulate(ENV, AGENT, args.pop("key"), args.pop("horizon"), args.pop("num_runs"),
                    progress=False, **args)
    assert trace_counts() == before


def test_bad_compare_and_sweep_arguments():
    with pytest.raises(ValueError, match="mapping"):
        jb.compare(ENV, [AGENT], 0, 10, 2)
    with pytest.raises(ValueError, match="Agent"):
        jb.compare(ENV, {"a": "lin-ts"}, 0, 10, 2)
    with pytest.raises(ValueError, match=r"sequence of values"):
        jb.sweep(ENV, AGENT, 0, {"explore_scale": 0.1}, 10, 2)
    with pytest.raises(ValueError, match="non-empty grid"):
        jb.sweep(ENV, AGENT, 0, {}, 10, 2)
    with pytest.raises(ValueError, match="no values"):
        jb.sweep(ENV, AGENT, 0, {"explore_scale": []}, 10, 2)


@pytest.mark.full
def test_a_killed_cli_run_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    from jaxbandits.cli import main

    args = ["run", "--horizon", "40", "--runs", "3", "--chunk-size", "10", "--no-progress",
            "--agents", "lin-ts,greedy", "--set", "env.dim=3", "--set", "env.num_arms=4",
            "--cpu-devices", "1"]
    assert main(args + ["--out", str(tmp_path / "fresh")]) == 0
    commit, commits = Checkpoint.commit, []

    def commit_then_die(self, meta, arrays):
        commit(self, meta, arrays)
        commits.append(meta)
        if len(commits) == 6:  # lin-ts written to --out, greedy two chunks in
            raise _Killed("kill -9")

    monkeypatch.setattr(Checkpoint, "commit", commit_then_die)
    resumed_args = args + ["--out", str(tmp_path / "resumed"), "--checkpoint",
                           str(tmp_path / "ckpt")]
    with pytest.raises(_Killed):
        main(resumed_args)
    monkeypatch.setattr(Checkpoint, "commit", commit)
    assert main(resumed_args) == 0  # the same command again: --out is still empty
    for name in ("lin-ts", "greedy"):
        fresh = jb.Result.load(tmp_path / "fresh" / name)
        resumed = jb.Result.load(tmp_path / "resumed" / name)
        np.testing.assert_array_equal(np.asarray(resumed.cumulative_regret),
                                      np.asarray(fresh.cumulative_regret))
    # a different experiment on the same checkpoint is refused, and replaced with --overwrite
    other = [a if a != "40" else "30" for a in resumed_args]
    assert main(other[:-4] + ["--out", str(tmp_path / "o1")] + other[-2:]) == 2
    assert main(other[:-4] + ["--out", str(tmp_path / "o2")] + other[-2:] +
                ["--overwrite"]) == 0
