"""Several processes: a compare and a sweep played by two jax.distributed processes on localhost
(one CPU device each, the run axis split over both) equal a one-process run bit for bit, also
when process 0 checkpoints them, dies in the middle of a wave, and a new cluster resumes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxbandits as jb

pytestmark = pytest.mark.full

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from child_config import experiment  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _cluster(out: Path, checkpoint: bool, crash_after: int | None = None) -> list[dict] | None:
    """Runs the two processes; with ``crash_after``, process 0 dies after that many commits
    (mid-wave) and the other is stopped."""
    port = str(_free_port())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]),
        "XLA_FLAGS": "", "JAX_PLATFORMS": "cpu"}
    if crash_after is not None:
        env["JB_STOP_AFTER_COMMITS"] = str(crash_after)
    procs = [subprocess.Popen([sys.executable, str(HERE / "distributed_child.py"), str(i), port,
                               str(out), "1" if checkpoint else "0"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    if crash_after is not None:
        log = procs[0].communicate(timeout=600)[0]
        assert procs[0].returncode == 3, log[-3000:]
        procs[1].kill()
        procs[1].communicate()
        return None
    logs = [p.communicate(timeout=600)[0] for p in procs]
    for p, log in zip(procs, logs, strict=True):
        assert p.returncode == 0, log[-3000:]
    return [dict(np.load(out / f"process{i}.npz")) for i in range(2)]


@pytest.fixture(scope="module")
def one_process():
    env, agents, grid, kwargs = experiment()
    results = jb.compare(env, agents, 0, **kwargs)
    swept = jb.sweep(env, agents["lin-ts"], 1, grid, **kwargs)
    arrays = {f"compare/{k}": r.cumulative_regret for k, r in results.items()}
    return arrays | {f"sweep/{k}": r.cumulative_regret for k, r in swept.items()}


@pytest.mark.parametrize("checkpoint", [False, True], ids=["plain", "checkpointed"])
def test_two_processes_equal_one_bit_for_bit(tmp_path, one_process, checkpoint):
    if checkpoint:  # process 0 dies in the middle of a wave; a new cluster resumes
        assert _cluster(tmp_path, checkpoint, crash_after=2) is None
        assert not (tmp_path / "process0.npz").exists()
    got = _cluster(tmp_path, checkpoint)
    info = json.loads((tmp_path / "process1.json").read_text())
    assert info == {"devices": 2, "local": 1, "processes": 2}
    for arrays in got:  # every process returns the whole results
        assert sorted(arrays) == sorted(one_process)
        for name, want in one_process.items():
            np.testing.assert_array_equal(arrays[name], want, err_msg=name)
    if checkpoint:  # the finished checkpoints: a new cluster reads the results from them
        assert (tmp_path / "ckpt").is_dir() and any((tmp_path / "ckpt").iterdir())
        again = _cluster(tmp_path, checkpoint)
        for arrays in again:
            for name, want in one_process.items():
                np.testing.assert_array_equal(arrays[name], want, err_msg=name)
