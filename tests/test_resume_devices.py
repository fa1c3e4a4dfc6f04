"""A checkpoint counts progress by blocks of runs, not by waves of one block per device: a run
killed on one device count and resumed on another gives exactly the arrays of an uninterrupted
run, at a wave boundary and mid-wave, in both directions; a version-1 checkpoint (waves) read on
more devices than wrote it is a clear error naming both counts, never zeroed runs.

One subprocess with 2 forced CPU devices (``devices=`` picks 1 or 2 of them). The version-1
checkpoint ``tests/data/legacy/killed-midwave`` was written by the runner before this format
(7 runs in blocks of 2, one device, killed after the first chunk of its second wave).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numbers_kept_cases import same_streams

pytestmark = pytest.mark.full  # a subprocess with forced CPU devices

SCRIPT = textwrap.dedent(
    """
    import shutil, sys
    from pathlib import Path
    import jax, numpy as np, jaxbandits as jb
    from jaxbandits import checkpoint
    from jaxbandits.checkpoint import CheckpointError

    assert len(jax.devices()) == 2, jax.devices()
    tmp, legacy = Path(sys.argv[1]), Path(sys.argv[2])
    env = jb.make_env("linear", dim=3, num_arms=4)
    agent = jb.make_agent("lin-ts")
    # 7 runs in 4 blocks of 2 (the last one real run), two chunks per block
    kw = dict(horizon=20, num_runs=7, chunk_size=10, block_runs=2, record="all",
              progress=False)
    one, two = jax.devices()[:1], jax.devices()

    class Killed(BaseException):
        pass

    def run(devices, directory=None, stop=None):
        real = checkpoint.Checkpoint.commit

        def commit(self, meta, arrays):
            real(self, meta, arrays)
            if stop is not None and stop(meta):
                raise Killed(meta)

        checkpoint.Checkpoint.commit = commit
        try:
            return jb.simulate(env, agent, 3, checkpoint_dir=directory, devices=devices, **kw)
        finally:
            checkpoint.Checkpoint.commit = real

    reference = run(one)
    assert np.array_equal(run(two).cumulative_regret, reference.cumulative_regret)
    cases = {  # (written on, resumed on, where the first process dies)
        "1->2 boundary": (one, two, lambda m: m["blocks_done"] == 1 and m["partial"] == 0),
        "1->2 mid-wave": (one, two, lambda m: m["blocks_done"] == 1 and m["partial"] == 1),
        "2->1 boundary": (two, one, lambda m: m["blocks_done"] == 2 and m["partial"] == 0),
        "2->1 mid-wave": (two, one, lambda m: m["blocks_done"] == 2 and m["partial"] == 2),
        "2->1 first wave": (two, one, lambda m: m["blocks_done"] == 0 and m["partial"] == 2),
    }
    for name, (before, after, stop) in cases.items():
        directory = tmp / name.replace(" ", "_").replace(">", "")
        try:
            run(before, directory, stop)
        except Killed as killed:
            print(name, "killed at", killed.args[0])
        else:
            raise AssertionError(f"{name}: never stopped")
        resumed = run(after, directory)
        for metric in ("cumulative_regret", "cumulative_reward"):
            assert np.array_equal(getattr(resumed, metric), getattr(reference, metric)), name
        assert np.all(resumed.cumulative_reward[:, -1] != 0), name  # no zeroed run

    # jaxbandits <= 0.2 (version 1): killed after its first wave on one device (3 runs, 2
    # blocks); on 2 devices its wave would claim both blocks, the second never played
    old = tmp / "legacy"
    shutil.copytree(legacy / "killed", old)
    try:
        jb.simulate(env, agent, 4, horizon=20, num_runs=3, chunk_size=10, block_runs=2,
                    record="all", progress=False, checkpoint_dir=old, devices=two)
    except CheckpointError as err:
        assert "2 device(s)" in str(err) and "fewer than 2 devices" in str(err), err
        assert "runs 2..2" in str(err), err
    else:
        raise AssertionError("a version-1 checkpoint resumed on more devices than wrote it")
    # version 1 killed mid-wave (its second wave's first chunk, on one device): the device count
    # that wrote it is its carry's size, so it resumes on one device or two
    if sys.argv[3] == "same-streams":
        for devices in (one, two):
            directory = tmp / f"midwave-{len(devices)}"
            shutil.copytree(legacy / "killed-midwave", directory)
            resumed = run(devices, directory)
            assert np.array_equal(resumed.cumulative_regret, reference.cumulative_regret)
            assert np.array_equal(resumed.cumulative_reward, reference.cumulative_reward)
    print("resume across device counts ok")
    """
)


def test_resume_across_device_counts_gives_the_uninterrupted_arrays(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    legacy = root / "tests" / "data" / "legacy"
    recorded = json.loads((legacy.parent / "numbers_kept.json").read_text())
    streams = "same-streams" if same_streams(recorded) else "other-streams"
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), str(legacy), streams],
                         env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "resume across device counts ok" in out.stdout
