"""No silently wrong numbers from the runner: every byte a resume reads is hashed, one writer
per checkpoint directory (also after its ``lock`` file is deleted), diverged agents and
overflowing rewards are errors naming the run, step and state leaf, fingerprints describe values
rather than addresses, a sweep grid never plays one point twice, NumPy integers are sizes, and
the runner's compiled programs can be dropped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import jax
import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.checkpoint import Checkpoint, CheckpointError
from jaxbandits.nets.backbone import MLPTrunk
from jaxbandits.runner.fingerprint import fingerprint
from jaxbandits.simulate import clear_compiled, trace_counts

runner = sys.modules["jaxbandits.simulate"]
ENV = jb.make_env("linear", dim=3, num_arms=4)
DUEL = jb.make_env("dueling-square", dim=3, num_arms=4)
AGENT = jb.make_agent("lin-ts")
KW = dict(horizon=20, num_runs=3, chunk_size=10, block_runs=2, record="all", progress=False)


def _sim(key=4, **kwargs):
    return jb.simulate(ENV, AGENT, key, **{**KW, **kwargs})


class _Stop(BaseException):
    pass


@pytest.fixture
def stopped(tmp_path, monkeypatch):
    """A checkpoint of ``_sim`` stopped after its first block's records were committed (block 1
    mid-way), and the uninterrupted run's result."""
    reference = _sim()
    commit = Checkpoint.commit

    def commit_then_stop(self, meta, arrays):
        commit(self, meta, arrays)
        if meta["blocks_done"] == 1 and meta["partial"] == 1:
            raise _Stop

    monkeypatch.setattr(Checkpoint, "commit", commit_then_stop)
    with pytest.raises(_Stop):
        _sim(checkpoint_dir=tmp_path / "ckpt")
    monkeypatch.setattr(Checkpoint, "commit", commit)
    return tmp_path / "ckpt", reference


# ------------------------------------------------------------------------------------------------
# Every byte a resume reads is hashed.


def _edit_records(directory, edit) -> None:
    records = np.load(directory / "records.npy")
    edit(records)
    np.save(directory / "records.npy", records)


def test_the_stopped_checkpoint_resumes_to_the_same_numbers(stopped):
    directory, reference = stopped
    manifest = json.loads((directory / "checkpoint.json").read_text())
    assert manifest["records_sha256"][0][:2] == [0, 2]  # block 0's two runs, hashed
    np.testing.assert_array_equal(_sim(checkpoint_dir=directory).cumulative_regret,
                                  reference.cumulative_regret)


@pytest.mark.parametrize("edit", [
    "bit flip", "swapped rows", "another experiment's records"])
def test_altered_records_are_refused_naming_the_file(stopped, edit, tmp_path):
    directory, _ = stopped
    if edit == "bit flip":
        raw = bytearray((directory / "records.npy").read_bytes())
        raw[-1 - 2 * 20 * 3 * 4] ^= 1  # row 0's last byte (rows 1 and 2: 20 x 3 float32s each)
        (directory / "records.npy").write_bytes(bytes(raw))
    elif edit == "swapped rows":
        _edit_records(directory, lambda r: r.__setitem__(slice(0, 2), r[1::-1].copy()))
    else:
        other = _sim(key=5, checkpoint_dir=tmp_path / "other")  # same shapes, other numbers
        assert other.cumulative_regret.shape == (3, 20)
        (directory / "records.npy").write_bytes((tmp_path / "other" / "records.npy")
                                                .read_bytes())
    before = trace_counts()
    with pytest.raises(CheckpointError, match=r"rows 0\.\.1 of records\.npy do not match"):
        _sim(checkpoint_dir=directory)
    assert trace_counts() == before  # refused before any compute


@pytest.mark.parametrize("field, value", [("done", 0), ("blocks_done", 2), ("partial", 0)])
def test_an_edited_manifest_field_is_refused(stopped, field, value):
    directory, _ = stopped
    manifest = json.loads((directory / "checkpoint.json").read_text())
    manifest["meta"][field] = value
    (directory / "checkpoint.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="checkpoint.json does not match its own"):
        _sim(checkpoint_dir=directory)


# ------------------------------------------------------------------------------------------------
# One writer per checkpoint directory, even after its lock file is deleted.

HOLDER = textwrap.dedent(
    """
    import sys
    from jaxbandits.checkpoint import Checkpoint
    ckpt = Checkpoint(sys.argv[1], "someone else's run")
    print("holding", flush=True)
    sys.stdin.readline()
    ckpt.close()
    """
)


@pytest.mark.full  # a second process
def test_a_deleted_lock_file_does_not_let_a_second_writer_in(tmp_path):
    directory = tmp_path / "ckpt"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "JAX_PLATFORMS": "cpu"})
    try:
        assert holder.stdout.readline().strip() == "holding"
        (directory / "lock").unlink()  # under the running writer
        before = trace_counts()
        with pytest.raises(CheckpointError, match="another run .*is writing"):
            Checkpoint(directory, "fp")
        with pytest.raises(CheckpointError, match="another run .*is writing"):
            _sim(checkpoint_dir=directory)
        assert trace_counts() == before
    finally:
        holder.communicate("\n", timeout=60)
    assert holder.returncode == 0
    with Checkpoint(directory, "fp") as ckpt:  # free once the holder is done
        assert ckpt.load() is None


# ------------------------------------------------------------------------------------------------
# Diverged agents and overflowing rewards are errors.


@pytest.mark.parametrize("name, settings, leaf", [
    ("neural-ucb", dict(learning_rate=1e8), r"state\.params"),
    ("glm-es", dict(learning_rate=1e30, warmup=4, num_grad_steps=5), r"state\.theta"),
    # noise scales valid in float32 (below its 3.4e38) whose perturbations overflow the state;
    # settings that float32 cannot hold (reg=1e-45) are refused before running
    ("ensemble-sampling", dict(noise_std=3e38), r"state\.ensemble"),
    ("rrls", dict(noise_std=3e38), r"state\.ensemble"),
    # the other learning families (the K-armed ones' states only sum rewards, which are
    # checked themselves); in the full tier, for their compile times
    pytest.param("glm-es-dt", dict(agent=jb.agents.GLMES(learning_rate=1e30, warmup=4,
                                                         num_grad_steps=5)),
                 r"state\.inner\.theta", marks=pytest.mark.full),
    pytest.param("nvldb-ucb-asym", dict(width=8, learning_rate=1e8, buffer_size=32),
                 r"state\.", marks=pytest.mark.full),
    pytest.param("neural-ensemble-pp", dict(
        backbone=jb.nets.MLPBackbone(hidden=(8, 8)), update_start=2, batch_size=4,
        buffer_size=32, learning_rate=1e8, num_grad_steps=2), r"state\.params",
        marks=pytest.mark.full),
])
def test_a_diverged_agent_is_an_error_naming_run_step_and_leaf(name, settings, leaf):
    agent = jb.make_agent(name, **settings)
    env = DUEL if agent.family == "dueling" else ENV
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warm-up longer than the horizon, if any
        with pytest.raises(FloatingPointError,
                           match=rf"agent '{name}' diverged: its state leaf {leaf}.* non-finite "
                                 r".*after the update of step \d+ .* in run \d"):
            jb.simulate(env, agent, 0, 20, 2, block_runs=2, progress=False)


def _first_flags(env, agent, run, horizon):
    """Run ``run``'s divergence flags with every round checked (the public one-run API)."""
    carry = jb.runner.init(env, agent, jax.random.key(0), run)
    steps = jax.numpy.asarray([horizon], jax.numpy.int32)
    carry, _ = jb.runner.rollout(jb.runner.round_fn(env, agent, steps), carry, horizon)
    return np.asarray(carry.bad_step), np.asarray(carry.bad_state)


def test_a_divergence_inside_a_chunk_is_named_at_its_own_round():
    # The runner checks the agent's state at the end of each chunk, then replays a flagged
    # block with every round checked: the round named must be the first bad one, not the
    # chunk's last. Ensemble sampling whose perturbations overflow the state, in chunks of 7
    # rounds, so that the divergence falls inside a chunk.
    agent = jb.make_agent("ensemble-sampling", noise_std=3e38)
    first = min((int(_first_flags(ENV, agent, run, 20)[1][0]), run) for run in (0, 1))
    assert first[0] >= 0 and first[0] % 7 != 6, "the case must diverge inside a chunk"
    with pytest.raises(FloatingPointError, match=rf"after the update of step {first[0]} "
                                                 rf"\(0-based round index\) in run {first[1]};"):
        jb.simulate(ENV, agent, 0, 20, 2, block_runs=2, chunk_size=7, progress=False)


def test_an_overflowing_cumulative_reward_is_an_error():
    env = jb.make_env("linear", dim=3, num_arms=4, noise_std=3e37)  # each reward finite
    with pytest.raises(FloatingPointError, match=r"non-finite reward or regret in run \d at "
                                                 r"step \d+ .*overflowed"):
        jb.simulate(env, AGENT, 0, 200, 2, block_runs=2, progress=False)


# ------------------------------------------------------------------------------------------------
# Fingerprints by value.


def _backbone(width):
    return lambda in_features, *, rngs: MLPTrunk(in_features, (width,), rngs=rngs)


def _print_fingerprint(agent) -> str:
    steps = np.arange(1, 11, dtype=np.int32)
    options = jb.runner.RunOptions(key=jb.runner.as_key(0), horizon=10, num_runs=2, steps=steps,
                                   chunk_size=10, block_runs=2, devices=())
    return fingerprint([ENV], [agent], ["x"], options)


def test_a_lambda_backbone_is_fingerprinted_by_value_not_by_address():
    same = [jb.make_agent("lmc-ts", backbone=_backbone(8)) for _ in range(2)]
    assert same[0].backbone is not same[1].backbone  # two objects, two addresses
    assert _print_fingerprint(same[0]) == _print_fingerprint(same[1])
    other = jb.make_agent("lmc-ts", backbone=_backbone(16))  # the closure's value differs
    assert _print_fingerprint(other) != _print_fingerprint(same[0])
    # the registered agents keep the fingerprints of their checkpoints (no address in them)
    assert "0x" not in str(jax.tree.structure(jb.make_agent("lmc-ts")))


def test_an_object_known_only_by_its_address_is_refused_at_the_start(tmp_path):
    class Opaque:  # no value to describe: hashed by its id
        def __call__(self, in_features, *, rngs):  # pragma: no cover
            raise AssertionError

    agent = jb.make_agent("lmc-ts", backbone=Opaque())
    with pytest.raises(ValueError, match="cannot fingerprint .*Opaque object.* for a checkpoint"):
        _print_fingerprint(agent)


# ------------------------------------------------------------------------------------------------
# Sweep grids, NumPy sizes, the compile cache.


@pytest.mark.parametrize("grid, match", [
    ({"explore_scale": [1, 1.0]}, r"repeats a value: 1 and 1\.0 are the same float32"),
    ({"explore_scale": [0.1, 0.1 + 1e-12]}, "repeats a value"),
    ({"explore_scale": np.ones((2, 2))}, r"'explore_scale' is a scalar field, but value #0 is an "
                                         r"array of shape \(2,\)"),
    ({"explore_scale": [np.ones(3)]}, "'explore_scale' is a scalar field"),
])
def test_a_sweep_grid_never_plays_one_point_twice_nor_takes_arrays(grid, match):
    before = trace_counts()
    with pytest.raises(ValueError, match=match):
        jb.sweep(ENV, jb.make_agent("lin-ucb"), 0, grid, 10, 2, progress=False)
    assert trace_counts() == before


def test_numpy_integers_are_sizes():
    result = _sim(horizon=np.int64(20), num_runs=np.int32(3), chunk_size=np.int64(10),
                  block_runs=np.uint8(2))
    np.testing.assert_array_equal(result.cumulative_regret, _sim().cumulative_regret)
    assert result.extras["horizon"] == 20 and type(result.extras["horizon"]) is int


def test_clear_compiled_drops_the_runners_programs():
    _sim()
    assert runner._COMPILED
    clear_compiled()
    assert not runner._COMPILED
    before = trace_counts().get("chunk", 0)
    _sim()
    assert trace_counts()["chunk"] == before + 1  # compiled again


def test_the_runner_keeps_a_bounded_number_of_programs(monkeypatch):
    """Past ``MAX_COMPILED`` programs the next run starts by dropping them all, the jitted
    functions holding the executables included (each executable holds memory mappings, of which a
    process has a bounded number); a dropped program compiles again and plays the same numbers."""
    from jaxbandits.runner import programs

    clear_compiled()
    first = _sim()
    kept = len(runner._COMPILED)  # the instances, the carries and a chunk: three programs
    monkeypatch.setattr(programs, "MAX_COMPILED", kept)
    assert _sim().compile_time == 0.0  # at the bound: kept, nothing compiled
    other = jb.simulate(ENV, jb.make_agent("lin-ucb"), 4, **KW)
    assert len(runner._COMPILED) == kept + 2  # its carries and chunk (the instances shared)
    again = _sim()  # starts over the bound: everything dropped first
    assert len(runner._COMPILED) == kept
    assert again.compile_time > 0.0  # dropped: compiled again
    np.testing.assert_array_equal(again.cumulative_regret, first.cumulative_regret)
    assert not np.array_equal(other.cumulative_regret, first.cumulative_regret)


def test_a_comparison_keeps_its_agents_programs_past_the_bound(monkeypatch):
    """Over the bound, a comparison drops what it finds as it starts, then keeps the programs
    it compiles ahead for its later agents: each compiled once."""
    from jaxbandits.runner import programs

    _sim()  # something held
    monkeypatch.setattr(programs, "MAX_COMPILED", 0)
    compiles = []
    compile_into = programs._compile_into
    monkeypatch.setattr(programs, "_compile_into",
                        lambda *args: compiles.append(args[1][1]) or compile_into(*args))
    agents = {"lin-ts": AGENT, "lin-ucb": jb.make_agent("lin-ucb")}
    results = jb.compare(ENV, agents, 4, **KW)
    assert sorted(compiles) == ["chunk", "chunk", "init", "init", "instance"]
    np.testing.assert_array_equal(results["lin-ts"].cumulative_regret,
                                  _sim().cumulative_regret)


@pytest.mark.parametrize("values", [
    [1, 1.0], [16777217, 16777216.0], [True, 2], [np.float64(0.3), 1], [np.uint8(3), 7],
    [np.int64(5), 2.5], [np.float32(0.1), 1], [np.arange(3), np.ones(3)]])
def test_values_stacked_on_the_host_are_the_ones_jax_would_stack(values):
    """The grid's values are stacked on the host (nothing compiled before the programs): the
    same dtype (JAX's promotion, not NumPy's) and the same bytes as stacking them with JAX."""
    from jaxbandits.runner.checks import as_arrays, host_stack

    on_device = np.asarray(jax.numpy.stack([as_arrays(v) for v in values]))
    on_host = host_stack(values)
    assert on_host.dtype == on_device.dtype
    assert on_host.tobytes() == on_device.tobytes()
    assert host_stack([jax.numpy.ones(()), 1.0]) is None  # a JAX array: stacked with JAX
